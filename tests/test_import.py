"""Importing attnlib (and its plotting / widget modules) changes no global state."""

import subprocess
import sys

SCRIPT = r"""
import numpy as np, matplotlib
before_rc = dict(matplotlib.rcParams)
np.random.seed(12345); before = np.random.random(3); np.random.seed(12345)
import attnlib, attnlib.plots, attnlib.widgets
after = np.random.random(3)
assert (before == after).all(), "numpy's global random state changed on import"
changed = {k for k in before_rc if matplotlib.rcParams[k] != before_rc[k]}
assert not changed, f"rcParams changed on import: {sorted(changed)}"
fig = attnlib.plots.probability_bars([0.5, 0.3, 0.2])
assert fig.axes[0].get_ylabel() == "attention weight (probability)"
changed = {k for k in before_rc if matplotlib.rcParams[k] != before_rc[k]}
assert not changed, f"rcParams changed by a plot: {sorted(changed)}"
print("clean")
"""


def test_import_changes_no_global_state():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env={"MPLBACKEND": "Agg"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "clean"


def test_maths_modules_do_not_import_plotting():
    code = "import sys, attnlib; print('matplotlib' in sys.modules, 'ipywidgets' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]

"""Tests for lesson 09 (check your own attention): log_weight_points against a reference, its
error messages, the scale_fit plot, the self-check answers written in the notebook, the lesson
frame, and that the README and lesson 00 list the lesson."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from notebook_calls import checks_by_kind  # noqa: E402

from attnlib import check_attention, plots, softmax, widgets  # noqa: E402
from attnlib.checker import log_weight_points  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NAME = "09-check-your-attention.ipynb"


@given(L=st.integers(1, 5), S=st.integers(2, 9), d=st.integers(1, 40), c=st.floats(0.01, 2.0),
       seed=st.integers(0, 2**16))
@settings(max_examples=40, deadline=None)
def test_log_weight_points_slope_is_the_scale(L, S, d, c, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((L, d)), rng.standard_normal((S, d))
    x, y, slope = log_weight_points(q, k, softmax(c * (q @ k.T)))
    assert x.shape == y.shape == (L * S,)
    # reference: the centred q·k written out with loops
    ref_x = []
    for i in range(L):
        row = [sum(q[i, t] * k[j, t] for t in range(d)) for j in range(S)]
        ref_x += [z - sum(row) / S for z in row]
    np.testing.assert_allclose(x, ref_x, atol=1e-9)
    if np.abs(x).max() > 1e-6:
        assert slope == pytest.approx(c, rel=1e-6)
        np.testing.assert_allclose(y, c * x, atol=1e-9)


@pytest.mark.parametrize("args, words", [
    ((np.ones((2, 3)), np.ones((4, 5)), np.full((2, 4), 0.25)), "must share d_k"),
    ((np.ones(3), np.ones((4, 3)), np.full((1, 4), 0.25)), "must share d_k"),
    ((np.ones((2, 3)), np.ones((4, 3)), np.full((2, 5), 0.2)), "weights must have shape"),
    ((np.ones((2, 3)), np.ones((4, 3)), np.zeros((2, 4))), "weights must be positive"),
])
def test_log_weight_points_bad_input_is_named(args, words):
    with pytest.raises(ValueError, match=words):
        log_weight_points(*args)


def test_scale_fit_plot():
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((3, 16)), rng.standard_normal((5, 16))
    pts = {"a": log_weight_points(q, k, softmax(q @ k.T / 4)), "b": log_weight_points(q, k, softmax(q @ k.T))}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = plots.scale_fit(pts, title="t")
    ax = fig.axes[0]
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title() == "t"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["a: slope c = 0.25", "b: slope c = 1"]
    plt.close(fig)


NUMERIC = [64**0.5, 1 / math.sqrt(1024)]  # times_sqrt_dk at d_k = 64; 1/√d_model at d_model = 1024
CHOICE = [2]


def test_self_check_answers():
    numeric, choice = checks_by_kind(NAME)
    assert len(numeric) == len(NUMERIC) and len(choice) == len(CHOICE)
    for kw, expected in zip(numeric, NUMERIC, strict=True):
        w = widgets.numeric_check(**kw)
        assert w.check(repr(expected)) is True, (kw["question"], expected)
        assert w.check(repr(expected * 1.2 + 0.01)) is False
    for kw, expected in zip(choice, CHOICE, strict=True):
        assert kw["correct"] == expected and len(kw["feedback"]) == len(kw["options"])


def test_self_check_numbers_agree_with_the_checker():
    # the factors the self-checks ask for are the ones the checker measures
    def times(q, k, v):
        return softmax(q @ np.swapaxes(k, -1, -2) / q.shape[-1] ** -0.5) @ v

    def model_width(q, k, v):  # 16 heads of 64: d_model = 1024
        return softmax(q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-3] * q.shape[-1])) @ v

    assert check_attention(times).scale[64] == pytest.approx(NUMERIC[0], rel=1e-9)
    r = check_attention(model_width, shapes=[(2, 16, 5, 7, 64, 10), (3, 4, 6, 9, 16, 11)])
    assert r.diagnosis == "sqrt_d_model" and r.scale[64] == pytest.approx(NUMERIC[1], rel=1e-9)


def test_lesson_frame_and_ignore_markers():
    nb = json.loads((ROOT / "notebooks" / NAME).read_text(encoding="utf-8"))
    md = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for part in ("# 09 · ", "**What you will learn**", "**What you need**", "> **Instructor notes**",
                 "## Summary", "## Exercises", "<details><summary>Solution</summary>", "## Self-check"):
        assert part in md, part
    assert "the seed" not in md.lower()  # the source is never called "the seed"
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "code":
            assert cell["execution_count"] is not None
            assert not any(o["output_type"] == "error" for o in cell["outputs"])
            assert not any(o.get("name") == "stderr" for o in cell["outputs"]), src[:80]  # no warnings
            if src.startswith("# NBVAL_IGNORE_OUTPUT"):
                assert "widgets." in src and "_check(" in src, src[:80]
            else:
                assert "NBVAL_IGNORE_OUTPUT" not in src


def test_readme_and_start_lesson_list_lesson_09():
    assert f"notebooks/{NAME}" in (ROOT / "README.md").read_text(encoding="utf-8")
    start = json.loads((ROOT / "notebooks" / "00-start-here.ipynb").read_text(encoding="utf-8"))
    assert any(f"]({NAME})" in "".join(c["source"]) for c in start["cells"] if c["cell_type"] == "markdown")

"""Tests for lesson 10 (what today's models do to the logit): its plotting functions and slider views
draw what they say, the self-check answers written in the notebook, the lesson frame, every model row
cited in the lesson, and that the README and lesson 00 list the lesson. The lesson's claims on other
seeds are checked by scripts/check_seeds.py; attnlib.recipes by test_recipes.py and test_recipe_parity.py."""

from __future__ import annotations

import json
import math
import re
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from notebook_calls import checks_by_kind  # noqa: E402

from attnlib import (  # noqa: E402
    LOGIT_RECIPES,
    plots,
    recipe_table,
    softcap,
    softmax,
    softmax_with_sink,
    widgets,
    yarn_mscale,
)

ROOT = Path(__file__).resolve().parent.parent
NAME = "10-todays-models.ipynb"


def no_warnings(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kwargs)


def test_recipe_overview_draws_one_bar_per_model_with_its_ratio():
    rows = recipe_table(n_keys=64, rng=0)
    fig = no_warnings(plots.recipe_overview, rows)
    ax_ent, ax_ratio = fig.axes
    ent_bars, ratio_bars = ax_ent.patches, [p for p in ax_ratio.patches if p.get_width() > 0]
    assert len(ent_bars) == len(rows) == len(LOGIT_RECIPES)
    # top to bottom in table order: the first row is the highest bar
    widths = [b.get_width() for b in sorted(ent_bars, key=lambda b: -b.get_y())]
    np.testing.assert_allclose(widths, [r["entropy"] for r in rows])
    assert [t.get_text() for t in ax_ent.get_yticklabels()] == [r["model"] for r in rows]
    ratios = [b.get_width() for b in sorted(ratio_bars, key=lambda b: -b.get_y())][: len(rows)]
    np.testing.assert_allclose(ratios, [r["scale_ratio"] for r in rows])
    texts = [t.get_text() for t in ax_ratio.texts]
    assert "×1.87" in texts and "×16" in texts and "×0.943" in texts
    # colour says softer / textbook / sharper
    colours = {r["name"]: b.get_facecolor() for r, b in zip(rows, sorted(ent_bars, key=lambda b: -b.get_y()),
                                                             strict=True)}
    assert colours["gpt-2"] != colours["gemma-4"] != colours["gemma-3-27b"] != colours["gpt-2"]
    plt.close(fig)


def gain_data():
    gains = np.round(np.arange(0.25, 2.0 + 1e-9, 0.25), 2)
    entropy = np.linspace(5.5, 1.0, gains.size)
    top = {1.0: np.linspace(0.3, 0.01, 12), 2.0: np.linspace(0.9, 0.0, 12)}
    return gains, entropy, np.full(gains.size, 0.01), math.log(256), top


def test_gain_panel_marks_the_chosen_gain_and_d_to_the_quarter():
    gains, entropy, se, uniform, top = gain_data()
    fig = no_warnings(plots.gain_panel, gains, entropy, se, uniform, top, 2.0, 128)
    ax_bars, ax_curve = fig.axes
    np.testing.assert_allclose([p.get_height() for p in ax_bars.patches], top[2.0])
    assert "top weight 0.90" in ax_bars.get_title()
    marker = [ln for ln in ax_curve.lines if ln.get_label() == "g = 2.00"][0]
    assert marker.get_xdata()[0] == 2.0 and marker.get_ydata()[0] == entropy[-1]
    quarter = [ln for ln in ax_curve.lines if "scale 1" in ln.get_label()][0]
    assert quarter.get_xdata()[0] == pytest.approx(128**0.25)
    plt.close(fig)


def test_softcap_panel_curve_stays_inside_the_cap_and_bars_are_the_softmaxes():
    logits = np.array([36.0, 30.0, 12.0, -6.0])
    fig = no_warnings(plots.softcap_panel, logits, 10.0, span=60.0)
    ax_map, ax_bars = fig.axes
    curve = [ln for ln in ax_map.lines if ln.get_label().startswith("c·tanh")][0]
    assert np.abs(curve.get_ydata()).max() < 10.0
    heights = [p.get_height() for p in ax_bars.patches]
    np.testing.assert_allclose(heights[:4], softmax(logits))
    np.testing.assert_allclose(heights[4:], softmax(softcap(logits, 10.0)))
    plt.close(fig)


def test_sink_panel_shows_the_mass_the_keys_lose():
    logits = np.array([0.5, -1.0, 2.0])
    b_grid = np.arange(-2.0, 4.0 + 1e-9, 1.0)
    fig = no_warnings(plots.sink_panel, logits, 2.0, b_grid, {"n = 3": np.linspace(0, 1, b_grid.size)})
    ax_bars, ax_curve = fig.axes
    w = softmax_with_sink(logits, 2.0)
    heights = [p.get_height() for p in ax_bars.patches]
    np.testing.assert_allclose(heights[:3], w)
    assert heights[3] == pytest.approx(1 - w.sum()) and 0 < heights[3] < 1
    assert f"keys get {w.sum():.2f}" in ax_bars.get_title()
    plt.close(fig)


def test_context_panel_marks_n_on_both_panels():
    positions = np.arange(1, 2**12)
    factors = {"none": np.ones(positions.size), "YaRN": np.full(positions.size, yarn_mscale(32.0) ** 2)}
    n_grid = 2 ** np.arange(8, 13)
    top = {"none": np.linspace(0.9, 0.1, 5), "YaRN": np.linspace(1.0, 0.5, 5)}
    se = {k: np.zeros(5) for k in top}
    fig = no_warnings(plots.context_panel, 2**10, positions, factors, n_grid, top, se, lead=8.0)
    ax_f, ax_top = fig.axes
    assert "$2^{10}$" in ax_f.get_title() and "logit 8" in ax_top.get_title()
    dotted = [ln for ax in fig.axes for ln in ax.lines if ln.get_linestyle() == ":"]
    assert len(dotted) == 2 and all(ln.get_xdata()[0] == 2**10 for ln in dotted)
    plt.close(fig)


def test_states_grid_draws_each_state_in_its_own_row():
    seen = []

    def draw(state, axes):
        seen.append((state, len(axes)))
        axes[0].set_title(f"s = {state}")
        return axes[0].figure

    fig = plots.states_grid(draw, [1, 2, 3], suptitle="x")
    assert seen == [(1, 2), (2, 2), (3, 2)] and len(fig.axes) == 6
    assert [ax.get_title() for ax in fig.axes[::2]] == ["s = 1", "s = 2", "s = 3"]
    assert fig.get_size_inches()[0] <= plots.SHOWN_WIDTH_IN
    plt.close(fig)


def test_slider_views_offer_their_options_and_render_every_state():
    gains, entropy, se, uniform, top = gain_data()
    b_grid = np.arange(-4.0, 4.0 + 1e-9, 0.5)
    n_grid = 2 ** np.arange(8, 13)
    positions = np.arange(1, 2**12)
    views = {
        "gain": (widgets.gain_view(gains, entropy, se, uniform, top, 128, value=1.0), "g", [1.0, 2.0]),
        "cap": (widgets.softcap_view(np.array([20.0, 5.0, 0.0]), [5.0, 50.0], value=50.0), "cap", [5.0, 50.0]),
        "sink": (widgets.sink_view(np.zeros(4), b_grid, {"n": np.linspace(0, 1, b_grid.size)},
                                   options=[-4.0, 0.0, 4.0], value=0.0), "b", [-4.0, 0.0, 4.0]),
        "context": (widgets.context_view(positions, {"none": np.ones(positions.size)}, n_grid,
                                         {"none": np.linspace(1, 0, 5)}, {"none": np.zeros(5)},
                                         options=[2**8, 2**12], value=2**12), "n", [2**8, 2**12]),
    }
    for label, (view, name, expected) in views.items():
        states = view.states()
        assert [s[name] for s in states] == expected, label
        pngs = [no_warnings(view.render, s) for s in states]
        assert len(set(pngs)) == len(pngs), f"{label}: two states gave the same picture"
    assert views["context"][0].controls()[0]["readouts"] == ["2^8", "2^12"]


def test_a_slider_value_off_the_options_is_refused():
    gains, entropy, se, uniform, top = gain_data()
    with pytest.raises(Exception, match="1.5|value"):
        widgets.gain_view(gains, entropy, se, uniform, top, 128, value=1.5)


NUMERIC = [yarn_mscale(40.0) ** 2]
CHOICE = [0]


def test_self_check_answers():
    numeric, choice = checks_by_kind(NAME)
    assert len(numeric) == len(NUMERIC) and len(choice) == len(CHOICE)
    for kw, expected in zip(numeric, NUMERIC, strict=True):
        w = widgets.numeric_check(**kw)
        assert w.check("1.87") is True and w.check(repr(expected)) is True
        assert w.check("1.35") is False  # mscale itself, not its square
    for kw, expected in zip(choice, CHOICE, strict=True):
        assert kw["correct"] == expected and len(kw["feedback"]) == len(kw["options"])


def notebook():
    return json.loads((ROOT / "notebooks" / NAME).read_text(encoding="utf-8"))


def test_lesson_frame_and_ignore_markers():
    nb = notebook()
    md = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for part in ("# 10 · ", "**What you will learn**", "**What you need**", "> **Instructor notes**",
                 "## Summary", "## Exercises", "<details><summary>Solution</summary>", "## Self-check"):
        assert part in md, part
    assert "the seed" not in md.lower()
    sources = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert sum(len(re.findall(r"(?m)^SEED = \d+$", s)) for s in sources) == 1  # one SEED line
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "code":
            assert cell["execution_count"] is not None
            assert not any(o["output_type"] == "error" for o in cell["outputs"])
            assert not any(o.get("name") == "stderr" for o in cell["outputs"]), src[:80]
            if src.startswith("# NBVAL_IGNORE_OUTPUT"):
                assert "widgets." in src, src[:80]
            else:
                assert "NBVAL_IGNORE_OUTPUT" not in src


def test_every_model_row_is_shown_with_the_files_it_was_read_from():
    shown = "\n".join(
        "".join(o.get("data", {}).get("text/markdown", ""))
        for c in notebook()["cells"] if c["cell_type"] == "code" for o in c["outputs"]
    )
    for recipe in LOGIT_RECIPES.values():
        assert f"**{recipe.model}**" in shown, recipe.model
        for source in recipe.source:
            assert source.split(" (")[0] in shown, source


def test_every_slider_view_has_a_static_figure_before_it():
    cells = [c for c in notebook()["cells"] if c["cell_type"] == "code"]
    for i, cell in enumerate(cells):
        if "widgets." in "".join(cell["source"]) and "_view(" in "".join(cell["source"]):
            before = cells[i - 1]
            assert any("image/png" in o.get("data", {}) for o in before["outputs"]), "".join(cell["source"])


def test_readme_and_start_lesson_list_lesson_10():
    assert f"notebooks/{NAME}" in (ROOT / "README.md").read_text(encoding="utf-8")
    start = json.loads((ROOT / "notebooks" / "00-start-here.ipynb").read_text(encoding="utf-8"))
    assert any(f"]({NAME})" in "".join(c["source"]) for c in start["cells"] if c["cell_type"] == "markdown")

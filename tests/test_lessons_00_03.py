"""Tests for lessons 00-03: attnlib.saturation against independent references, the slider
views at their extremes, and the self-check answers stored in the notebooks."""

from __future__ import annotations

import itertools
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
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402
from notebook_calls import self_checks  # noqa: E402

from attnlib import plots, softmax, softmax_jacobian, widgets  # noqa: E402
from attnlib.saturation import (  # noqa: E402
    WORKED_LOGITS,
    WORKED_SQRT_DK,
    at_scale_table,
    jacobian_norm,
    query_gradient_norm,
    row_statistics,
    sample_row_statistics,
    standard_dot_products,
    summarize_rows,
    temperature_sweep,
)

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"

logit_rows = arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 9)),
                    elements=st.floats(-30, 30, allow_nan=False))


# --- reference implementations (loops, finite differences) -----------------------------------

def ref_jacobian(p):
    """J[i][j] = p_i (δ_ij − p_j), with 1 − p_i summed from the other entries (no cancellation)."""
    n = len(p)
    others = [math.fsum(p[m] for m in range(n) if m != i) for i in range(n)]
    return np.array([[p[i] * others[i] if i == j else -p[i] * p[j] for j in range(n)] for i in range(n)])


def ref_query_gradient_norm_direct(p, k, scale):
    """‖∂p/∂q‖_F from rows p_j (k_j − k̄), with k_j − k̄ = Σ_{m≠j} p_m (k_j − k_m) summed term by term."""
    total = 0.0
    for j in range(len(p)):
        v = sum(p[m] * (k[j] - k[m]) for m in range(len(p)) if m != j)
        total += p[j] ** 2 * float(v @ v)
    return scale * math.sqrt(total)


def ref_query_gradient_norm(q, k, scale, h=1e-6):
    """‖∂p/∂q‖_F by central finite differences of softmax(scale · q kᵀ)."""
    cols = []
    for e in np.eye(len(q)):
        cols.append((softmax(scale * (k @ (q + h * e))) - softmax(scale * (k @ (q - h * e)))) / (2 * h))
    return np.linalg.norm(np.stack(cols, axis=1))


# --- maths -------------------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(logit_rows)
def test_jacobian_norm_matches_frobenius_norm_of_explicit_jacobian(z):
    p = softmax(z)
    want = [np.linalg.norm(ref_jacobian(row)) for row in p]
    assert np.allclose(jacobian_norm(p), want, rtol=1e-9, atol=0)  # relative precision even when nearly one-hot
    assert np.allclose(jacobian_norm(p), np.linalg.norm(softmax_jacobian(p), axis=(-2, -1)), rtol=1e-6, atol=1e-12)


def test_jacobian_norm_of_a_nearly_one_hot_row_keeps_relative_precision():
    p = softmax(np.array([40.0, 0.0, -5.0]))  # p_2 ≈ 4e-18: 1 − p_1 is below float64 resolution
    want = np.linalg.norm(ref_jacobian(p))
    assert want > 0 and jacobian_norm(p) == pytest.approx(want, rel=1e-9)


def test_jacobian_norm_reference_values():
    assert jacobian_norm([1.0, 0.0, 0.0]) == 0.0
    for n in (2, 3, 10):
        assert math.isclose(jacobian_norm(np.full(n, 1 / n)), math.sqrt(n - 1) / n, rel_tol=1e-12)
    assert math.isclose(jacobian_norm([0.5, 0.5]), 0.5, rel_tol=1e-12)


@pytest.mark.parametrize("scale", [1.0, 0.125, 0.03])
def test_query_gradient_norm_matches_finite_differences(scale):
    rng = np.random.default_rng(0)
    d, s = 12, 5
    q = rng.standard_normal((3, d))
    k = rng.standard_normal((s, d))
    p = softmax(scale * q @ k.T)
    got = query_gradient_norm(p, k, scale)
    want = [ref_query_gradient_norm(qi, k, scale) for qi in q]
    assert np.allclose(got, want, rtol=1e-5, atol=1e-9)
    # and the explicit product J · (scale K)
    explicit = [np.linalg.norm(softmax_jacobian(pi) @ (scale * k)) for pi in p]
    assert np.allclose(got, explicit, rtol=1e-10, atol=1e-14)
    assert np.allclose(got, [ref_query_gradient_norm_direct(pi, k, scale) for pi in p], rtol=1e-10)


def test_query_gradient_norm_of_saturated_rows_keeps_relative_precision():
    rng = np.random.default_rng(7)
    k = rng.standard_normal((6, 256))
    q = 3.0 * rng.standard_normal((4, 256))
    p = softmax(q @ k.T)  # unscaled with large q: nearly one-hot rows
    assert p.max() > 1 - 1e-12
    want = [ref_query_gradient_norm_direct(pi, k, 1.0) for pi in p]
    assert np.allclose(query_gradient_norm(p, k, 1.0), want, rtol=1e-6, atol=0)


def test_row_statistics_default_scale_and_batch():
    rng = np.random.default_rng(1)
    q = rng.standard_normal((2, 4, 16))
    k = rng.standard_normal((2, 6, 16))
    st_default = row_statistics(q, k)
    st_explicit = row_statistics(q, k, scale=0.25)
    for key in st_default:
        assert st_default[key].shape == (2, 4)
        assert np.allclose(st_default[key], st_explicit[key])
    p = softmax(0.25 * q @ np.swapaxes(k, -1, -2))
    assert np.allclose(st_default["max_prob"], p.max(-1))
    assert np.allclose(st_default["jacobian_norm"], np.linalg.norm(softmax_jacobian(p), axis=(-2, -1)))


def test_summarize_rows_against_numpy():
    stats = {"max_prob": np.array([0.2, 0.995, 0.999, 0.5]),
             "jacobian_norm": np.arange(4.0), "query_grad_norm": np.arange(10.0, 14.0)}
    s = summarize_rows(stats)
    assert s["mean_max_prob"] == pytest.approx(np.mean(stats["max_prob"]))
    assert s["share_saturated"] == 0.5
    assert s["jacobian_norm_median"] == 1.5 and s["query_grad_norm_median"] == 11.5
    assert s["query_grad_norm_p90"] == pytest.approx(12.7)  # linear interpolation: 10 + 0.9 · 3


def test_sample_row_statistics_seeded_and_shapes():
    a = sample_row_statistics(32, 100, n_keys=8, rng=5)
    b = sample_row_statistics(32, 100, n_keys=8, rng=5)
    for x, y in zip(a, b, strict=True):
        for key in x:
            assert x[key].shape == (100,)
            assert np.array_equal(x[key], y[key])


def test_scaled_rows_do_not_depend_on_d_k_but_unscaled_rows_saturate():
    rows, raw = at_scale_table([16, 1024], n_rows=2048, rng=0)
    assert set(raw) == {16, 1024}
    small, large = rows
    assert abs(small["scaled"]["mean_max_prob"] - large["scaled"]["mean_max_prob"]) < 0.02
    assert large["unscaled"]["share_saturated"] > 0.6 > small["unscaled"]["share_saturated"]
    assert large["scaled"]["share_saturated"] == 0.0


def test_temperature_sweep_against_loop_and_identity():
    z = np.array(WORKED_LOGITS)
    temps = np.array([0.5, 1.0, WORKED_SQRT_DK, 100.0])
    probs, ent = temperature_sweep(z, temps)
    for t, p, h in zip(temps, probs, ent, strict=True):
        ref = np.exp(z / t - np.max(z / t))
        ref /= ref.sum()
        assert np.allclose(p, ref, rtol=1e-12)
        assert h == pytest.approx(-sum(x * math.log(x) for x in ref if x > 0), rel=1e-10)
    assert np.allclose(probs[2], softmax(z / WORKED_SQRT_DK))  # ÷√d_k = temperature √d_k
    assert ent[-1] == pytest.approx(math.log(3), abs=0.01)


def test_standard_dot_products_variance():
    out = standard_dot_products([4, 64], 20_000, rng=3)
    for d, x in out.items():
        assert x.shape == (20_000,)
        assert abs(x.var() / d - 1) < 0.05


@pytest.mark.parametrize(
    ("call", "exc", "words"),
    [
        (lambda: jacobian_norm(1.0), ValueError, "p must be"),
        (lambda: jacobian_norm([0.5, np.nan]), ValueError, "NaN"),
        (lambda: query_gradient_norm(np.ones((2, 3)) / 3, np.ones((4, 5)), 1.0), ValueError, "S=3"),
        (lambda: query_gradient_norm(np.ones((2, 3)) / 3, np.ones((3, 5)), -1.0), ValueError, "scale"),
        (lambda: row_statistics(np.ones((2, 4)), np.ones((3, 5))), ValueError, "d_k"),
        (lambda: sample_row_statistics(0, 10), ValueError, "d_k"),
        (lambda: sample_row_statistics(8, 10, rng="seed"), TypeError, "rng"),
        (lambda: summarize_rows({"max_prob": [1]}, threshold=0), ValueError, "threshold"),
        (lambda: temperature_sweep([[1.0, 2.0]], [1.0]), ValueError, "logits"),
        (lambda: temperature_sweep([1.0, 2.0], [1.0, 0.0]), ValueError, "temperatures"),
    ],
)
def test_bad_input_messages(call, exc, words):
    with pytest.raises(exc, match=words):
        call()


# --- plots ---------------------------------------------------------------------------------------

def test_plots_return_figures_and_leave_rcparams_alone():
    before = dict(plt.rcParams)
    samples = standard_dot_products([4, 64], 500, rng=0)
    rows, raw = at_scale_table([16, 64], n_rows=256, rng=0)
    z = np.array(WORKED_LOGITS)
    temps = np.array([1.0, 2.0, 8.0])
    probs, ent = temperature_sweep(z, temps)
    figs = [
        plots.dot_product_histograms(samples),
        plots.variance_vs_dk([1, 2], {"a": [1, 2]}, {"a": [1, 2]}, textbook_claim={"a": [1, 2]}),
        plots.mean_growth([1, 4], [0.2, 0.8], [0.2, 0.8]),
        plots.worked_example_bars(z, softmax(z), softmax(z / 8), 8),
        plots.temperature_small_multiples(z, temps, probs, ent),
        plots.at_scale_summary(rows),
        plots.at_scale_small_multiples(raw, [16, 64]),
    ]
    for fig in figs:
        assert isinstance(fig, matplotlib.figure.Figure)
        assert all(ax.get_xlabel() for ax in fig.axes if ax.get_visible())
        plt.close(fig)
    assert dict(plt.rcParams) == before
    md = plots.markdown_table(["a", "b"], [[1, 2]])
    assert md.data.splitlines() == ["| a | b |", "|---|---|", "| 1 | 2 |"]


def test_textbook_claim_is_drawn_dashed_and_named_for_the_reader():
    """The dashed curves are the common textbook answer: drawn, and labelled so a reader knows what they are."""
    fig = plots.variance_vs_dk([1, 2, 4], {"a": [1, 2, 4]}, {"a": [4, 8, 16]}, textbook_claim={"a": [2, 4, 8]})
    dashed = [ln for ln in fig.axes[0].lines if ln.get_linestyle() == "--"]
    assert len(dashed) == 1 and list(dashed[0].get_ydata()) == [2, 4, 8]
    assert dashed[0].get_label() == "a: textbook answer d_k σ²"
    fig2 = plots.scaled_logit_density(np.random.default_rng(0).standard_normal(400) * 8, 16, 2.0, 2.0)
    labels = [t.get_text() for t in fig2.axes[0].get_legend().get_texts()]
    assert "textbook answer N(0, σ²), std 2.00" in labels and "N(0, σ_q²σ_k²), std 4.00" in labels
    for f in (fig, fig2):
        texts = [t.get_text() for ax in f.axes for t in ax.get_legend().get_texts()]
        assert not any("seed" in t for t in texts)
        plt.close(f)


def test_variance_vs_dk_legend_hides_no_curve():
    """Lesson 02's figure: the legend sits beside the axes (it once covered the σ = 0.5 curves), inside the canvas."""
    d_ks = [1, 4, 16, 64, 256]
    sig = {"σ_q=1, σ_k=1": 1.0, "σ_q=2, σ_k=2": 2.0, "σ_q=0.5, σ_k=0.5": 0.5}
    theory = {lab: [d * s**4 for d in d_ks] for lab, s in sig.items()}
    claim = {lab: [d * s**2 for d in d_ks] for lab, s in sig.items() if s != 1.0}
    fig = plots.variance_vs_dk(d_ks, theory, theory, textbook_claim=claim)
    fig.canvas.draw()
    ax = fig.axes[0]
    legend, axes_box = ax.get_legend().get_window_extent(), ax.get_window_extent()
    canvas = fig.bbox
    assert legend.x0 >= axes_box.x1  # beside the axes, so over no curve
    assert canvas.x0 <= legend.x0 and legend.x1 <= canvas.x1 and canvas.y0 <= legend.y0 and legend.y1 <= canvas.y1
    plt.close(fig)


def test_markdown_table_rows():
    md = plots.markdown_table(["a", "b"], [[1, 2]])
    assert md.data.splitlines() == ["| a | b |", "|---|---|", "| 1 | 2 |"]


# --- slider views at the extremes of every slider ----------------------------------------------

def _extremes(slider):
    return [slider.values[0], slider.values[-1]]


def _drive(view):
    """Set every combination of slider extremes, with warnings as errors; return the figures' titles."""
    titles = []
    names = list(view.sliders)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for combo in itertools.product(*(_extremes(view.sliders[n]) for n in names)):
            view.set(**dict(zip(names, combo, strict=True)))
            fig = view.last_figure
            assert isinstance(fig, matplotlib.figure.Figure)
            titles.append(" ".join(ax.get_title() for ax in fig.axes))
    return titles


@pytest.fixture(scope="module")
def small_data():
    samples = standard_dot_products([1, 4, 64, 1024], 400, rng=0)
    rows, raw = at_scale_table([16, 1024], n_rows=128, rng=0)
    return samples, raw


def test_dot_product_view_extremes(small_data):
    samples, _ = small_data
    rng = np.random.default_rng(0)
    row_logits = {d: rng.standard_normal(d) @ rng.standard_normal((d, 8)) for d in samples}
    view = widgets.dot_product_view(samples, row_logits)
    titles = _drive(view)
    assert "d_k = 1:" in titles[0] and "d_k = 1024:" in titles[1]


def test_sigma_view_extremes(small_data):
    samples, _ = small_data
    view = widgets.sigma_view(samples)
    titles = _drive(view)
    assert len(titles) == 8
    assert "σ_q=0.25, σ_k=0.25" in titles[0] and "σ_q=3, σ_k=3" in titles[-1]
    assert "theory 81" in titles[-1]  # σ_q²σ_k² = 81


def test_temperature_view_extremes():
    z = np.array(WORKED_LOGITS)
    temps = np.arange(0.25, 16.0 + 1e-9, 0.25)
    probs, ent = temperature_sweep(z, temps)
    view = widgets.temperature_view(z, temps, probs, ent)
    titles = _drive(view)
    assert "T = 0.25" in titles[0] and "T = 16" in titles[1]
    assert "max weight 1.000" in titles[0]  # T = 0.25: one-hot
    top = np.exp(1.0) / (np.exp(1.0) + np.exp(0.5) + np.exp(0.25))  # softmax([16, 8, 4] / 16)[0]
    assert f"max weight {top:.3f}" in titles[1]


def test_at_scale_view_extremes(small_data):
    _, raw = small_data
    view = widgets.at_scale_view(raw)
    titles = _drive(view)
    assert "d_k = 16" in titles[0] and "d_k = 1024" in titles[1]


# --- self-check answers in the notebooks ------------------------------------------------------

def _numeric_ok(kwargs, reference):
    return abs(kwargs["answer"] - reference) <= kwargs.get("rel_tol", 0.02) * abs(reference)


def test_self_check_answers_lesson_00():
    (kind, kw), = self_checks("00-start-here.ipynb")
    assert kind == "numeric_check" and _numeric_ok(kw, math.sqrt(64))


def test_self_check_answers_lesson_01():
    (k1, num), (k2, choice) = self_checks("01-intuition.ipynb")
    assert k1 == "numeric_check" and _numeric_ok(num, standard_dot_products([256], 20_000, rng=0)[256].std())
    assert k2 == "choice_check" and "one key" in choice["options"][choice["correct"]]


def test_self_check_answers_lesson_02():
    (k1, num), (k2, choice) = self_checks("02-variance-derivation.ipynb")
    from attnlib import sample_dot_products

    measured = sample_dot_products(64, 40_000, 2.0, 2.0, rng=0).var()
    assert k1 == "numeric_check" and _numeric_ok(num, 64 * 2.0**2 * 2.0**2)
    assert abs(measured / num["answer"] - 1) < 0.03  # the answer agrees with samples too
    assert k2 == "choice_check" and choice["options"][choice["correct"]] == "only when σ = 1"


def test_self_check_answers_lesson_03():
    (k1, num), (k2, choice) = self_checks("03-worked-example.ipynb")
    e = [math.exp(x / WORKED_SQRT_DK) for x in WORKED_LOGITS]
    assert k1 == "numeric_check" and _numeric_ok(num, e[0] / sum(e))
    assert num["sig_figs"] == 3 and abs(num["answer"] - e[0] / sum(e)) < 5e-7  # precise; graded to 3 s.f.
    assert k2 == "choice_check" and choice["options"][choice["correct"]] == "softmax at temperature 8"


# --- wording: the source is "the common textbook answer", never "the seed" -----------------------

# A reader does not know what "the seed" is. Random seeds (SEED, seed=, "seeds") are fine words.
_SOURCE_AS_SEED = re.compile(r"\bseed(?:'s|\s+text|_claim|_logits)|\bthe\s+seed\b", re.IGNORECASE)


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb")), ids=lambda p: p.name[:2])
def test_lessons_name_the_textbook_answer_not_the_seed(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    texts = ["".join(c["source"]) for c in cells]
    texts += ["".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/markdown", ""))
              for c in cells if c["cell_type"] == "code" for o in c["outputs"]]
    bad = [m.group(0) for t in texts for m in _SOURCE_AS_SEED.finditer(t)]
    assert not bad, f"{path.name} calls the source 'the seed': {bad}"


def test_seed_wording_pattern_catches_the_old_phrases():
    for old in ("the seed's example", "The seed text says", "seed's N(0, σ²)", "The seed: \"with", "seed_claim="):
        assert _SOURCE_AS_SEED.search(old), old
    for fine in ("SEED = 3", "rng=np.random.default_rng(SEED + 1)", "same seeds", "seed=st.integers(0, 9)"):
        assert not _SOURCE_AS_SEED.search(fine), fine


def test_scaled_logit_density_follows_the_curve_when_the_axis_clips_and_the_legend_clears_the_peak():
    """Lesson 02's slider: at σ_q = σ_k = 3 (std 9 on a ±12 axis) 18 % of the samples fall off the axis; the histogram
    must not spread them over the visible bins (its peak once sat 1.34x above the curve), and at σ = 0.25 (std 0.0625) it
    must resolve the peak instead of drawing one bar (once 0.31x the curve). The legend sits above every curve."""
    rng = np.random.default_rng(0)
    unit = 4.0 * rng.standard_normal(40_000)  # N(0, 16): raw q·k of unit-variance components at d_k = 16
    for sigma, lim in ((3.0, 12.0), (0.25, 12.0)):
        fig = plots.scaled_logit_density(sigma * sigma * unit, 16, sigma, sigma, lim=lim, bins=96)
        ax = fig.axes[0]
        hist_line = ax.lines[0]  # the histogram's step outline
        heights = np.asarray(hist_line.get_ydata())
        peak_theory = 1 / (sigma**2 * np.sqrt(2 * np.pi))
        assert heights.max() == pytest.approx(peak_theory, rel=0.15), sigma
        fig.canvas.draw()
        legend = ax.get_legend().get_window_extent()
        for line in ax.lines:
            xy = ax.transData.transform(np.column_stack([line.get_xdata(), line.get_ydata()]))
            inside_x = (xy[:, 0] >= legend.x0) & (xy[:, 0] <= legend.x1)
            assert np.all(xy[inside_x, 1] < legend.y0), (sigma, line.get_label())
        plt.close(fig)

"""Tests for lessons 04-06: attnlib.tradeoffs against independent references, the
QK-norm cap, error messages, the slider views at their extremes, and the self-check
answers written in the notebooks."""

from __future__ import annotations

import itertools
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

from attnlib import plots, widgets  # noqa: E402
from attnlib.tradeoffs import (  # noqa: E402
    alpha_scaled_logits,
    l2_normalize,
    layer_norm,
    ln_dot_variance,
    log_n_scaled_softmax,
    projected_logits,
    qk_norm_logits,
    qk_norm_max_weight,
    retrieval_trial,
)

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def ref_softmax(z):
    """Plain-Python softmax of one list, for reference."""
    m = max(z)
    e = [math.exp(v - m) for v in z]
    s = sum(e)
    return [v / s for v in e]


# ---------------------------------------------------------------- maths vs references


@given(d=st.integers(1, 12), l_=st.integers(1, 4), s_=st.integers(1, 4),
       alpha=st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0]), seed=st.integers(0, 2**16))
@settings(max_examples=40, deadline=None)
def test_alpha_scaled_logits_matches_loops(d, l_, s_, alpha, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((l_, d)), rng.standard_normal((s_, d))
    got = alpha_scaled_logits(q, k, alpha)
    for i, j in itertools.product(range(l_), range(s_)):
        ref = sum(q[i, t] * k[j, t] for t in range(d)) / d**alpha
        assert got[i, j] == pytest.approx(ref, rel=1e-12, abs=1e-12)


def test_alpha_half_is_the_standard_scale():
    rng = np.random.default_rng(0)
    q, k = rng.standard_normal((2, 3, 16)), rng.standard_normal((2, 5, 16))
    np.testing.assert_allclose(alpha_scaled_logits(q, k, 0.5), q @ np.swapaxes(k, -1, -2) / 4.0, atol=1e-13)


@given(d=st.integers(2, 20), seed=st.integers(0, 2**16), eps=st.sampled_from([1e-5, 1e-3, 0.1]))
@settings(max_examples=40, deadline=None)
def test_layer_norm_matches_row_formula(d, seed, eps):
    rng = np.random.default_rng(seed)
    x = 3.0 * rng.standard_normal((3, d)) + 2.0
    gain, bias = rng.standard_normal(d), rng.standard_normal(d)
    got = layer_norm(x, gain, bias, eps=eps)
    for r in range(3):
        row = list(x[r])
        mu = sum(row) / d
        var = sum((v - mu) ** 2 for v in row) / d
        ref = [(v - mu) / math.sqrt(var + eps) * g + b for v, g, b in zip(row, gain, bias, strict=True)]
        np.testing.assert_allclose(got[r], ref, rtol=1e-10, atol=1e-10)


def test_layer_norm_without_gain_has_norm_sqrt_d():
    x = np.random.default_rng(1).standard_normal((50, 64)) * 7
    y = layer_norm(x, eps=1e-12)
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), 8.0, rtol=1e-9)


def test_l2_normalize_gives_unit_rows_and_keeps_direction():
    x = np.random.default_rng(2).standard_normal((10, 7))
    y = l2_normalize(x)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(y * np.linalg.norm(x, axis=-1, keepdims=True), x, rtol=1e-12)


@given(d=st.integers(2, 16), gain=st.floats(0.1, 10.0), seed=st.integers(0, 2**16))
@settings(max_examples=40, deadline=None)
def test_qk_norm_l2_is_gain_times_cosine(d, gain, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((3, d)), rng.standard_normal((4, d))
    got = qk_norm_logits(q, k, gain=gain)
    for i, j in itertools.product(range(3), range(4)):
        cos = float(q[i] @ k[j]) / (math.sqrt(float(q[i] @ q[i])) * math.sqrt(float(k[j] @ k[j])))
        assert got[i, j] == pytest.approx(gain * cos, rel=1e-10, abs=1e-12)
    assert np.all(np.abs(got) <= gain * (1 + 1e-12))


def test_qk_norm_layer_matches_manual_and_is_scale_invariant():
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((4, 32)), rng.standard_normal((6, 32))
    ref = layer_norm(q) @ layer_norm(k).T / np.sqrt(32) * 2.0
    np.testing.assert_allclose(qk_norm_logits(q, k, gain=2.0, norm="layer"), ref, atol=1e-12)
    # scaling q, k by 50 changes only the eps term: relative change below eps = 1e-5
    np.testing.assert_allclose(qk_norm_logits(50 * q, 50 * k, norm="layer"), qk_norm_logits(q, k, norm="layer"),
                               rtol=2e-5)


def test_qk_norm_cap_formula_and_it_is_attained():
    # formula written out by hand for a few values
    for n, g in [(2, 1.0), (32, 1.0), (128, 1.0), (1000, 1.0), (64, 2.5)]:
        ref = math.exp(g) / (math.exp(g) + (n - 1) * math.exp(-g))
        assert qk_norm_max_weight(n, gain=g) == pytest.approx(ref, rel=1e-13)
    assert qk_norm_max_weight(32) == pytest.approx(1 / (1 + 31 * math.exp(-2)), rel=1e-13)
    assert qk_norm_max_weight(1) == 1.0
    np.testing.assert_allclose(qk_norm_max_weight(np.array([2, 32])), [qk_norm_max_weight(2), qk_norm_max_weight(32)])
    # the extreme arrangement (one key along q, the others opposite) reaches it exactly
    rng = np.random.default_rng(4)
    q = rng.standard_normal((1, 8))
    for n in (2, 5, 40):
        keys = np.vstack([q, -np.repeat(q, n - 1, axis=0)]) * rng.uniform(0.1, 3.0, (n, 1))
        top = ref_softmax(list(qk_norm_logits(q, keys, gain=1.5)[0]))[0]
        assert top == pytest.approx(qk_norm_max_weight(n, gain=1.5), rel=1e-12)


def test_qk_norm_cap_is_a_true_maximum_for_two_keys():
    # brute force over every pair of cosines on a grid: the best weight is the cap
    c = np.linspace(-1, 1, 401)
    best = max(ref_softmax([a, b])[0] for a in c[::4] for b in c[::4])
    assert best == pytest.approx(qk_norm_max_weight(2), rel=1e-12)


@given(n=st.integers(2, 50), d=st.integers(2, 12), gain=st.floats(0.2, 5.0), seed=st.integers(0, 2**16))
@settings(max_examples=40, deadline=None)
def test_random_qk_norm_heads_never_beat_the_cap(n, d, gain, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((5, d)), rng.standard_normal((n, d))
    z = qk_norm_logits(q, k, gain=gain)
    for row in z:
        assert max(ref_softmax(list(row))) <= qk_norm_max_weight(n, gain=gain) + 1e-12


@given(n=st.integers(2, 40), s=st.floats(0.1, 3.0), seed=st.integers(0, 2**16))
@settings(max_examples=40, deadline=None)
def test_log_n_scaled_softmax_matches_reference(n, s, seed):
    z = np.random.default_rng(seed).standard_normal(n)
    ref = ref_softmax([s * math.log(n) * v for v in z])
    np.testing.assert_allclose(log_n_scaled_softmax(z, s=s), ref, rtol=1e-10, atol=1e-15)
    # the weights are n^(s z_i) normalised
    w = n ** (s * z)
    np.testing.assert_allclose(log_n_scaled_softmax(z, s=s), w / w.sum(), rtol=1e-9)


def test_log_n_scaled_softmax_explicit_n_and_single_key():
    z = np.array([[1.0, 0.0, -1.0]])
    np.testing.assert_allclose(log_n_scaled_softmax(z, n=100), [ref_softmax(list(z[0] * math.log(100)))], rtol=1e-12)
    np.testing.assert_array_equal(log_n_scaled_softmax([[3.0]]), [[1.0]])
    np.testing.assert_allclose(log_n_scaled_softmax([1.0, 5.0, -2.0], n=1), [1 / 3] * 3)  # ln 1 = 0: uniform
    np.testing.assert_allclose(log_n_scaled_softmax([1.0, -np.inf, 0.0], n=1), [0.5, 0.0, 0.5])  # mask kept
    w = log_n_scaled_softmax([2.0, -np.inf, 0.0])
    assert w[1] == 0.0 and w[0] == pytest.approx(ref_softmax([2 * math.log(3), 0.0])[0])


def test_projected_logits_shapes_and_scale():
    r = projected_logits(128, 4, "xavier_normal", tokens=64, rng=0)
    assert r["head_dim"] == 32 and r["q"].shape == (4, 64, 32) and r["raw"].shape == (4, 64, 64)
    np.testing.assert_allclose(r["scaled"], r["raw"] / np.sqrt(32))
    np.testing.assert_allclose(r["raw"], r["q"] @ np.swapaxes(r["k"], -1, -2))
    assert abs(r["scaled"].var() - 1.0) < 0.2  # xavier on square weights: σ² = 1
    p = projected_logits(256, 4, "pytorch", tokens=128, rng=1)
    assert abs(p["scaled"].var() - 1 / 9) < 0.02  # nn.Linear default: (1/3)²


def test_projected_logits_is_seeded():
    a, b = projected_logits(64, 2, "gpt2", tokens=8, rng=7), projected_logits(64, 2, "gpt2", tokens=8, rng=7)
    np.testing.assert_array_equal(a["raw"], b["raw"])


def test_retrieval_trial_shapes_and_matching_key():
    z, q, k = retrieval_trial(16, 5, 1.0, 7, rng=0, return_vectors=True)
    assert z.shape == (7, 5) and q.shape == (7, 16) and k.shape == (7, 5, 16)
    np.testing.assert_allclose(k[:, 0], q)  # rho = 1: the matching key is the query
    np.testing.assert_allclose(z[:, 0], (q * q).sum(-1) / 4.0)
    np.testing.assert_allclose(z, np.einsum("td,tnd->tn", q, k) / 4.0)
    np.testing.assert_allclose(retrieval_trial(16, 5, 1.0, 7, scale=1.0, rng=0), z * 4.0)


def test_retrieval_trial_statistics():
    z = retrieval_trial(64, 4, 0.5, 20000, rng=1)
    assert abs(z[:, 0].mean() - 0.5 * 8) < 0.05  # ρ√d_k
    assert abs(z[:, 1:].std() - 1) < 0.02


def test_ln_dot_variance_formula_and_monte_carlo():
    assert ln_dot_variance(2) == 4.0 and ln_dot_variance(64) == pytest.approx(4096 / 63)
    np.testing.assert_allclose(ln_dot_variance(np.array([8, 16])), [64 / 7, 256 / 15])
    rng = np.random.default_rng(5)
    for d in (4, 32):
        dots = (layer_norm(rng.standard_normal((40000, d)), eps=1e-12)
                * layer_norm(rng.standard_normal((40000, d)), eps=1e-12)).sum(-1)
        assert dots.var() == pytest.approx(ln_dot_variance(d), rel=0.04)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("call, err, words", [
    (lambda: alpha_scaled_logits(np.ones((2, 3)), np.ones((2, 4)), 0.5), ValueError, "share d_k"),
    (lambda: alpha_scaled_logits(np.ones(3), np.ones((2, 3)), 0.5), ValueError, "q must have shape"),
    (lambda: alpha_scaled_logits(np.ones((2, 3)), np.ones((2, 3)), 3.0), ValueError, "alpha must lie"),
    (lambda: alpha_scaled_logits(np.ones((2, 3)), np.ones((2, 3)), "half"), TypeError, "alpha"),
    (lambda: alpha_scaled_logits(np.full((2, 3), np.nan), np.ones((2, 3)), 0.5), ValueError, "q contains NaN"),
    (lambda: layer_norm(3.0), ValueError, "x must have at least one dimension"),
    (lambda: layer_norm(np.ones(3), eps=0), ValueError, "eps"),
    (lambda: layer_norm(np.ones(3), axis=2), ValueError, "axis=2"),
    (lambda: layer_norm(np.ones((2, 3)), gain=np.ones(4)), ValueError, "gain of shape"),
    (lambda: layer_norm(np.ones((2, 3)), bias=np.ones((3, 3))), ValueError, "bias of shape"),
    (lambda: log_n_scaled_softmax([1.0, np.nan]), ValueError, "logits contains NaN"),
    (lambda: l2_normalize(np.array([1.0, np.inf])), ValueError, "x contains inf"),
    (lambda: qk_norm_logits(np.ones((2, 3)), np.ones((2, 3)), gain=0), ValueError, "gain"),
    (lambda: qk_norm_logits(np.ones((2, 3)), np.ones((2, 3)), norm="rms"), ValueError, "norm must be"),
    (lambda: qk_norm_max_weight(0), ValueError, "n must be a whole number"),
    (lambda: qk_norm_max_weight(2.5), ValueError, "n must be a whole number"),
    (lambda: qk_norm_max_weight(4, gain=-1), ValueError, "gain"),
    (lambda: log_n_scaled_softmax(np.ones((2, 0))), ValueError, "logits must have shape"),
    (lambda: log_n_scaled_softmax(np.ones(3), s=0), ValueError, "s must be"),
    (lambda: log_n_scaled_softmax(np.ones(3), n=0), ValueError, "n must be a positive integer"),
    (lambda: projected_logits(64, 3, "xavier_normal"), ValueError, "divisible"),
    (lambda: projected_logits(64, 2, "he"), ValueError, "scheme must be one of"),
    (lambda: projected_logits(64, 2, "gpt2", tokens=0), ValueError, "tokens"),
    (lambda: retrieval_trial(8, 4, 1.5, 10), ValueError, "rho is a correlation"),
    (lambda: retrieval_trial(0, 4, 0.5, 10), ValueError, "d_k"),
    (lambda: retrieval_trial(8, 4, 0.5, 10, rng="x"), TypeError, "rng"),
    (lambda: ln_dot_variance(1), ValueError, "d must be a whole number >= 2"),
    (lambda: ln_dot_variance(True), ValueError, "d must be"),
])
def test_bad_input_is_named(call, err, words):
    with pytest.raises(err, match=words):
        call()


# ---------------------------------------------------------------- plots and slider views


@pytest.fixture
def strict_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield
    plt.close("all")


def small_heads_records():
    from attnlib import attention_entropy, softmax

    records = {}
    for h in (1, 4, 16):
        r = projected_logits(64, h, "xavier_normal", tokens=16, rng=h)
        records[h] = dict(raw=r["raw"], scaled=r["scaled"], head_dim=r["head_dim"], num_heads=h,
                          entropy_raw=attention_entropy(softmax(r["raw"])).mean(-1),
                          entropy_scaled=attention_entropy(softmax(r["scaled"])).mean(-1), max_entropy=np.log(16))
    return records


def drive_extremes(view, name):
    """Move slider ``name`` to its minimum and maximum; return the figures drawn."""
    grid = view.sliders[name].values
    figs = []
    for value in (grid[0], grid[-1]):
        view.set(**{name: value})
        assert view.values()[name] == value
        figs.append(view.last_figure)
    return figs


def test_heads_view_at_min_and_max(strict_warnings):
    records = small_heads_records()
    view = widgets.heads_view(records)
    lo, hi = drive_extremes(view, "num_heads")
    assert lo is not hi
    assert "1 head(s) of d_k = 64" in lo._suptitle.get_text()
    assert "16 head(s) of d_k = 4" in hi._suptitle.get_text()
    assert len(hi.axes[1].patches) == 2 * 16  # one raw and one scaled bar per head


def test_alpha_view_at_min_and_max(strict_warnings):
    d_ks = np.array([4, 16, 64])
    ind = np.vstack([np.random.default_rng(d).standard_normal(200) * np.sqrt(d) for d in d_ks])
    cor = ind + 0.3 * d_ks[:, None]
    view = widgets.alpha_view(d_ks, ind, cor)
    lo, hi = drive_extremes(view, "alpha")
    assert lo.axes[0].get_title() == "α = 0" and hi.axes[0].get_title() == "α = 1"
    y_hi = hi.axes[0].lines[1].get_ydata()  # correlated mean / d_k
    np.testing.assert_allclose(y_hi, (cor / d_ks[:, None]).mean(1))


def test_static_plot_functions_return_figures(strict_warnings):
    rng = np.random.default_rng(0)
    figs = [
        plots.series_plot([1, 2, 4], {"a": {"y": [1, 2, 3], "yerr": [0.1, 0.1, 0.1]}, "b": {"y": [3, 2, 1]}},
                          "x", "y", logx=True, logy=True, hline=1.0, hline_label="ref", title="t"),
        plots.logit_histograms(rng.standard_normal(100) * 8, rng.standard_normal(100)),
        plots.head_entropy_bars([1.0, 2.0], [3.0, 3.0], np.log(32)),
        plots.heads_figure(small_heads_records()[4]),
        plots.init_scheme_bars(["a", "b"], [64, 128], [[1.0, 1.1], [0.1, 0.2]], [[1.0, 1.0], [0.1, 0.2]]),
        plots.alpha_panel([4, 16], rng.standard_normal((2, 50)), rng.standard_normal((2, 50)) + 1, 0.5, ylim=(-3, 3)),
    ]
    for fig in figs:
        assert isinstance(fig, matplotlib.figure.Figure) and fig.axes
        assert all(ax.get_xlabel() for ax in fig.axes if ax.get_visible())


# ---------------------------------------------------------------- self-check answers in the notebooks


# independent computations of each numeric answer, in notebook order
NUMERIC = {
    "04-multi-head-and-init.ipynb": [math.sqrt(64 / 768), (1 / 3) ** 2],
    "05-tradeoffs.ipynb": [1 / (1 + 63 * math.exp(-2)), 16**2 / 15],
    "06-interview-questions.ipynb": [
        math.sqrt(256), ref_softmax([2.0, 1.0, 0.5])[0], math.sqrt(100) / 100, 0.5 * 64 / 8,
        64 * ((1 + 0.5**2) + 0.5**2 + 0.5**2 + 2 * 0.5 * 0.5 * 0.5), 0.5**4,
        32**2 / 31, (1024 / 16) ** -0.5, 0.5 * 0.5, (1024 * 0.02**2) ** 2,
        256**-0.25, (0.1 * math.log(40) + 1) ** 2,  # Q13: the gain that is 1/√d; Q14: MLA's mscale²
    ],
}
CHOICE = {"04-multi-head-and-init.ipynb": [1], "05-tradeoffs.ipynb": [1], "06-interview-questions.ipynb": [1, 1, 0, 1]}


@pytest.mark.parametrize("name", sorted(NUMERIC))
def test_self_check_answers(name):
    numeric, choice = checks_by_kind(name)
    assert len(numeric) == len(NUMERIC[name]) and len(choice) == len(CHOICE[name])
    for kw, expected in zip(numeric, NUMERIC[name], strict=True):
        w = widgets.numeric_check(**kw)
        assert w.check(repr(expected)) is True, (kw["question"], expected)  # the true value is accepted
        assert w.check(repr(expected * 1.2 + 0.01)) is False  # a 20 % error is not
        assert w.check("2*x") is None  # typed text is parsed, never run
    for kw, expected in zip(choice, CHOICE[name], strict=True):
        assert kw["correct"] == expected
        w = widgets.choice_check(**kw)
        assert len(kw["feedback"]) == len(kw["options"]) and all(kw["feedback"])
        for i in range(len(kw["options"])):
            assert w.check(i) is (i == expected)
            assert kw["feedback"][i] in w.feedback.value


def test_lesson05_numeric_answers_are_correctly_rounded():
    # each typed answer is the exact value to at least 4 significant figures (issue 20: 0.1051 for 0.104975)
    numeric = [kw["answer"] for kw in checks_by_kind("05-tradeoffs.ipynb")[0]]
    for answer, exact in zip(numeric, NUMERIC["05-tradeoffs.ipynb"], strict=True):
        half_unit = 0.5 * 10 ** (math.floor(math.log10(abs(exact))) - 3)
        assert abs(answer - exact) <= half_unit, (answer, exact)


@pytest.mark.parametrize("name", sorted(NUMERIC))
def test_lesson_frame_and_ignore_markers(name):
    nb = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    md = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for part in (f"# {name[:2]} · ", "**What you will learn**", "**What you need**", "> **Instructor notes**",
                 "## Summary", "## Exercises", "<details><summary>Solution</summary>"):
        assert part in md, part
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "code":
            assert cell["execution_count"] is not None  # committed executed
            assert not any(o["output_type"] == "error" for o in cell["outputs"])
            if src.startswith("# NBVAL_IGNORE_OUTPUT"):  # only slider views and self-checks
                assert "widgets." in src and ("_view(" in src or "_check(" in src), src[:80]
            else:
                assert "NBVAL_IGNORE_OUTPUT" not in src


# ---------------------------------------------------------------- lesson 06: the corrected claims (issue 11)


def test_lesson_06_means_add_to_the_variance_too():
    from attnlib import dot_product_moments

    d, mu, rho = 64, 0.5, 0.5
    written_out = d * ((1 + rho**2) + mu**2 + mu**2 + 2 * rho * mu * mu)  # σ = 1
    assert dot_product_moments(d, mean_q=mu, mean_k=mu, rho=rho) == (pytest.approx(48.0), pytest.approx(written_out))
    assert written_out == 128 and d * (1 + rho**2) == 80  # the old prose (correlation only) said 80


def test_lesson_06_saturation_gradient_ratios():
    def jac(z):
        p = ref_softmax(z)
        return [[p[i] * ((i == j) - p[j]) for j in range(3)] for i in range(3)]

    def fro(m):
        return math.sqrt(sum(x * x for row in m for x in row))

    jac_ratio = fro(jac([2.0, 1.0, 0.5])) / fro(jac([16.0, 8.0, 4.0]))
    assert round(jac_ratio) == 595  # the Jacobian ratio
    assert round(jac_ratio / 8) == 74  # the gradient reaching q·k: the scaled logit carries 1/√64


def test_lesson_06_torch_multihead_attention_default_logit_variance():
    from attnlib import init_std

    for e in (64, 768, 4096):
        bound_sq = 6.0 / (e + 3 * e)  # xavier_uniform on the packed (3E, E) in_proj_weight: U(±√(6/(fan_in+fan_out)))
        sigma_sq = e * bound_sq / 3  # per q component, unit-variance inputs
        assert sigma_sq == pytest.approx(0.5) and sigma_sq**2 == pytest.approx(0.25)
        assert init_std((3 * e, e), "xavier_uniform") ** 2 == pytest.approx(bound_sq / 3)


def test_lesson_06_multihead_attention_separate_path_logit_variance():
    # kdim ≠ embed_dim: torch draws q_proj_weight (E, E) and k_proj_weight (E, kdim) separately (issue 20)
    from attnlib import init_std

    for e, kdim in ((512, 256), (768, 64), (256, 1024)):
        sigma_q_sq = e * 6.0 / (2 * e) / 3  # U(±√(6/(E+E))), E unit-variance inputs
        sigma_k_sq = kdim * 6.0 / (e + kdim) / 3
        assert sigma_q_sq == pytest.approx(1.0) and sigma_k_sq == pytest.approx(2 * kdim / (e + kdim))
        assert e * init_std((e, e), "xavier_uniform") ** 2 == pytest.approx(sigma_q_sq)
        assert kdim * init_std((e, kdim), "xavier_uniform") ** 2 == pytest.approx(sigma_k_sq)
    assert 2 * 256 / (512 + 256) == pytest.approx(2 / 3)  # the lesson's example, kdim = E/2


def test_lesson_04_init_rules_match_real_torch():
    """Lesson 04's init rows are attnlib's copies of torch's rules. Where torch is installed, check the copies against
    torch's own modules (torch is not a dependency of the course: without it the test is skipped)."""
    torch = pytest.importorskip("torch")
    from attnlib import init_std

    torch.manual_seed(0)
    e, kdim = 256, 128

    def check(weight, shape, scheme):
        w = weight.detach().double().numpy()
        assert w.shape == shape
        # relative standard error of a sample std is at most 1/sqrt(2n) for these (uniform) draws
        assert w.std() == pytest.approx(init_std(shape, scheme), rel=5 / math.sqrt(2 * w.size))

    check(torch.nn.Linear(e, e).weight, (e, e), "pytorch")  # nn.Linear's default
    packed = torch.nn.MultiheadAttention(e, 4)  # kdim = vdim = embed_dim: one packed (3E, E) matrix, σ_q² = ½
    check(packed.in_proj_weight, (3 * e, e), "xavier_uniform")
    separate = torch.nn.MultiheadAttention(e, 4, kdim=kdim, vdim=kdim)  # three matrices: W_q square, σ_q² = 1
    assert separate.in_proj_weight is None
    check(separate.q_proj_weight, (e, e), "xavier_uniform")
    check(separate.k_proj_weight, (e, kdim), "xavier_uniform")

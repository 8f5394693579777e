"""attnlib.recipes: the logit recipes of today's models (lesson 10), against plain formulas."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attnlib as al
from attnlib import recipes as R

finite = st.floats(-50, 50, allow_nan=False)
caps = st.floats(0.5, 100.0)


# ---------------------------------------------------------------- softcap


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.integers(1, 20), elements=finite), caps)
def test_softcap_is_odd_bounded_and_below_cap(x, cap):
    y = R.softcap(x, cap)
    np.testing.assert_array_equal(R.softcap(-x, cap), -y)
    assert np.all(np.abs(y) <= cap)
    inside = np.abs(x) <= 10 * cap  # beyond ~19 cap, tanh rounds to exactly 1 in float64
    assert np.all(np.abs(y[inside]) < cap)
    np.testing.assert_allclose(y, cap * np.tanh(x / cap), rtol=1e-15, atol=0)


@settings(max_examples=60, deadline=None)
@given(st.floats(-5, 5), caps)
def test_softcap_slope_is_sech_squared_and_one_at_zero(u, cap):
    x, h = u * cap, 1e-6 * cap
    slope = (R.softcap(x + h, cap) - R.softcap(x - h, cap)) / (2 * h)
    assert slope == pytest.approx(1.0 / math.cosh(x / cap) ** 2, abs=1e-6)
    at_zero = (R.softcap(h, cap) - R.softcap(-h, cap)) / (2 * h)
    assert at_zero == pytest.approx(1.0, abs=1e-9)


def test_softcap_keeps_float32_and_masks():
    y = R.softcap(np.array([1.0, -np.inf], dtype=np.float32), 50.0)
    assert y.dtype == np.float32 and y[1] == -50.0  # a masked logit stays the most negative one


# ---------------------------------------------------------------- rms_norm


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(2, 16)), elements=st.floats(0.1, 10)),
    st.floats(-5, 5).filter(lambda g: abs(g) > 1e-3),
)
def test_rms_norm_output_rms_is_abs_gain(x, gain):
    y = R.rms_norm(x, gain, eps=0.0)
    np.testing.assert_allclose(np.sqrt(np.mean(y**2, axis=-1)), abs(gain), rtol=1e-12)
    vec = np.linspace(0.5, 2.0, x.shape[-1])
    z = R.rms_norm(x, vec, eps=0.0)
    np.testing.assert_allclose(z / vec, R.rms_norm(x, eps=0.0), rtol=1e-12)


def test_rms_norm_other_axis_and_eps():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6, 3))
    g = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    y = R.rms_norm(x, g, eps=1e-6, axis=1)
    ref = x / np.sqrt(np.mean(x**2, axis=1, keepdims=True) + 1e-6) * g[None, :, None]
    np.testing.assert_allclose(y, ref, rtol=1e-14)
    small = np.full((1, 4), 1e-4)
    assert np.sqrt(np.mean(R.rms_norm(small, eps=1e-6) ** 2)) < 0.1  # eps dominates a tiny input


# ---------------------------------------------------------------- softmax_with_sink


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 8)), elements=st.floats(-10, 10)), st.floats(-10, 10)
)
def test_sink_rows_sum_below_one_and_match_the_formula(s, b):
    p = R.softmax_with_sink(s, b)
    assert np.all(p.sum(-1) < 1.0)
    ref = np.exp(s) / (np.exp(s).sum(-1, keepdims=True) + np.exp(b))
    np.testing.assert_allclose(p, ref, rtol=1e-12)
    full = al.softmax(np.concatenate([s, np.full((s.shape[0], 1), b)], axis=-1))
    np.testing.assert_allclose(p, full[:, :-1], rtol=1e-12)


def test_sink_one_per_head_and_masks():
    rng = np.random.default_rng(1)
    s = rng.standard_normal((2, 3, 4, 5))
    b = np.array([-1.0, 0.0, 2.0])
    p = R.softmax_with_sink(s, b[:, None])
    for h in range(3):
        e = np.exp(s[:, h])
        np.testing.assert_allclose(p[:, h], e / (e.sum(-1, keepdims=True) + np.exp(b[h])), rtol=1e-12)
    masked = s.copy()
    masked[..., 0] = -np.inf
    assert np.all(R.softmax_with_sink(masked, b[:, None])[..., 0] == 0)
    lost = 1 - p.sum(-1)  # mass on the sink grows with the sink logit
    assert np.all(lost[:, 0] < lost[:, 2])


def test_sink_along_another_axis():
    rng = np.random.default_rng(2)
    s = rng.standard_normal((5, 3))
    np.testing.assert_allclose(R.softmax_with_sink(s, 0.5, axis=0), R.softmax_with_sink(s.T, 0.5).T, rtol=1e-14)


# ---------------------------------------------------------------- yarn_mscale, temperatures


def test_yarn_mscale_values():
    assert R.yarn_mscale(40) == pytest.approx(0.1 * math.log(40) + 1, rel=1e-15)
    assert R.yarn_mscale(32, mscale=0.707) == pytest.approx(0.1 * 0.707 * math.log(32) + 1, rel=1e-15)
    assert R.yarn_mscale(1.0) == 1.0 and R.yarn_mscale(0.5) == 1.0
    np.testing.assert_allclose(R.yarn_mscale(np.array([0.5, 1.0, 40.0])), [1.0, 1.0, R.yarn_mscale(40)])


def test_mla_factor_is_mscale_squared_187():
    """DeepSeek-V3: 192^-½ × mscale² against the plain 192^-½: the 1.87× sharper softmax of the issue."""
    r = R.LOGIT_RECIPES["deepseek-v3"]
    plain = 192**-0.5
    assert r.head_dim == 128 + 64
    assert r.softmax_scale == pytest.approx(plain * R.yarn_mscale(40, 1.0) ** 2, rel=1e-14)
    assert r.softmax_scale / plain == pytest.approx(1.87, abs=0.005)
    assert (round(r.softmax_scale, 5), round(plain, 5)) == (0.13523, 0.07217)
    assert R.LOGIT_RECIPES["gpt-oss"].scale_ratio == pytest.approx(R.yarn_mscale(32) ** 2, rel=1e-14)


def test_llama4_temperature_steps_at_floor_scale():
    p = np.array([0, 8190, 8191, 16382, 16383, 10**6])
    t = R.llama4_attn_temperature(p)
    ref = 1 + 0.1 * np.log(np.floor((p + 1) / 8192) + 1)
    np.testing.assert_allclose(t, ref, rtol=1e-15)
    assert t[0] == t[1] == 1.0 and t[2] == pytest.approx(1 + 0.1 * math.log(2))
    assert np.all(np.diff(R.llama4_attn_temperature(np.arange(0, 50000, 97))) >= 0)


def test_logn_scale_is_one_inside_training_length_then_log_base_l():
    t = R.logn_scale(np.arange(0, 5000), 2048)
    assert np.all(t[:2048] == 1.0)
    np.testing.assert_allclose(t[2048:], np.log(np.arange(2049, 5001)) / math.log(2048), rtol=1e-14)
    assert t[4095] == pytest.approx(math.log(4096, 2048))


# ---------------------------------------------------------------- qk_clip


def _max_logits(x, wq, wk):
    return np.array([np.max((x @ wq[h]) @ (x @ wk[h]).T) for h in range(wq.shape[0])])


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.floats(0.0, 1.0), st.floats(5.0, 200.0))
def test_qk_clip_caps_the_max_logit_at_tau_and_leaves_small_heads(seed, alpha, tau):
    rng = np.random.default_rng(seed)
    heads, dm, d = 4, 8, 4
    x = rng.standard_normal((10, dm))
    wq = rng.standard_normal((heads, dm, d)) * np.array([0.1, 1.0, 3.0, 6.0])[:, None, None]
    wk = rng.standard_normal((heads, dm, d)) * np.array([0.1, 1.0, 3.0, 6.0])[:, None, None]
    s = _max_logits(x, wq, wk)
    nq, nk = R.qk_clip(wq, wk, s, tau=tau, alpha=alpha)
    s_new = _max_logits(x, nq, nk)
    assert np.all(s_new <= tau * (1 + 1e-9))
    big = s > tau
    np.testing.assert_allclose(s_new[big], tau, rtol=1e-9)
    np.testing.assert_array_equal(nq[~big], wq[~big])
    np.testing.assert_array_equal(nk[~big], wk[~big])
    gamma = tau / s[big]
    np.testing.assert_allclose(nq[big], wq[big] * (gamma**alpha)[:, None, None], rtol=1e-12)


# ---------------------------------------------------------------- recipes and recipe_attention

NAMED = ["gpt-2", "llama-3", "qwen3", "olmo-2", "gemma-2-9b", "gemma-2-27b", "gemma-3-27b", "gemma-4", "grok-1",
         "gpt-oss", "deepseek-v3"]  # fmt: skip


def test_logit_recipes_cover_the_named_models_and_cite_files():
    assert set(NAMED) <= set(R.LOGIT_RECIPES) and len(R.LOGIT_RECIPES) >= 10
    for name, r in R.LOGIT_RECIPES.items():
        assert r.model and r.head_dim >= 1, name
        assert r.qk_norm in R.QK_NORM_KINDS, name
        assert r.source and all(isinstance(s, str) and ":" in s and "/" in s for s in r.source), name
        assert math.isfinite(r.softmax_scale) and r.softmax_scale > 0, name
        assert r.scale_ratio == pytest.approx(r.softmax_scale * math.sqrt(r.head_dim)), name
        assert (r.cap is None) or r.cap > 0, name
    # the constants as read in the sources
    rec = R.LOGIT_RECIPES
    assert rec["gemma-2-27b"].scale_ratio == pytest.approx(math.sqrt(128 / 144))
    assert rec["gemma-3-27b"].scale_ratio == pytest.approx(math.sqrt(128 / 168))
    assert rec["gemma-4"].softmax_scale == 1.0 and rec["gemma-4"].scale_ratio == pytest.approx(16.0)
    assert (rec["gemma-2-9b"].cap, rec["grok-1"].cap, rec["gemma-3-27b"].cap) == (50.0, 30.0, None)
    assert rec["grok-1"].softmax_scale == pytest.approx(0.08838834764831845, rel=1e-15)


def test_get_recipe_names_and_errors():
    assert R.get_recipe("qwen3") is R.LOGIT_RECIPES["qwen3"]
    with pytest.raises(ValueError, match="recipe 'qwen-3' is not in LOGIT_RECIPES"):
        R.get_recipe("qwen-3")
    with pytest.raises(TypeError, match="recipe must be"):
        R.get_recipe(3)


def test_plain_recipe_matches_core_attention():
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((2, 3, 5, 8)), rng.standard_normal((2, 3, 7, 8)), rng.standard_normal((2, 3, 7, 8))
    _, w = al.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(R.recipe_attention(q, k, "gpt-2"), w, rtol=1e-12, atol=1e-15)
    mask = np.tril(np.ones((5, 7), dtype=bool))
    _, wm = al.scaled_dot_product_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(R.recipe_attention(q, k, "llama-3", mask=mask), wm, rtol=1e-12, atol=1e-15)


def test_per_head_norm_bounds_each_logit_full_width_does_not():
    """Per-head QK-norm: |logit| <= scale·d (each vector has norm √d). Full width: one loud head escapes it."""
    rng = np.random.default_rng(4)
    heads, length, d = 4, 6, 16
    q = rng.standard_normal((heads, length, d))
    k = rng.standard_normal((heads, length, d))
    q[0] *= 10.0
    k[0] *= 10.0  # head 0 carries most of the width's energy
    bound = R.LOGIT_RECIPES["qwen3"].scale_for(d) * d
    per_head = R.recipe_logits(q, k, "qwen3")
    full = R.recipe_logits(q, k, "olmo-2")
    assert np.abs(per_head).max() <= bound * (1 + 1e-12)
    assert np.abs(full[0]).max() > bound


def test_gemma3_gain_convention_is_the_callers():
    rng = np.random.default_rng(5)
    q, k = rng.standard_normal((2, 4, 8)), rng.standard_normal((2, 4, 8))
    w = np.zeros(8)  # Gemma's stored weight at init
    at_init = R.recipe_attention(q, k, "gemma-3-27b", q_gain=1 + w, k_gain=1 + w)
    np.testing.assert_allclose(at_init, R.recipe_attention(q, k, "gemma-3-27b"), rtol=1e-14)
    zero_gain = R.recipe_attention(q, k, "gemma-3-27b", q_gain=w, k_gain=w)  # forgetting the 1: uniform rows
    np.testing.assert_allclose(zero_gain, 0.25)


def test_norm_after_rope_order():
    rng = np.random.default_rng(6)
    q, k = rng.standard_normal((2, 4, 8)), rng.standard_normal((2, 4, 8))

    def stretch(a, b):  # not norm-preserving, so the order shows
        return a * np.arange(1, 9), b * np.arange(1, 9)

    after = R.recipe_logits(q, k, "llama-4", rotate=stretch)  # norm after the "rotation"
    qs, ks = stretch(q, k)
    ref = (R.rms_norm(qs) @ np.swapaxes(R.rms_norm(ks), -1, -2)) / math.sqrt(8)
    np.testing.assert_allclose(after, ref, rtol=1e-12)


def test_recipe_with_sinks_and_cap():
    rng = np.random.default_rng(7)
    q, k = rng.standard_normal((3, 5, 64)), rng.standard_normal((3, 5, 64))
    w = R.recipe_attention(q, k, "gpt-oss", sink=np.array([0.0, 1.0, 2.0]))
    assert np.all(w.sum(-1) < 1)
    q, k = 4 * q, 4 * k
    logits = R.recipe_logits(q, k, "grok-1")
    assert np.abs(logits).max() < 30.0
    np.testing.assert_allclose(logits, 30 * np.tanh(q @ np.swapaxes(k, -1, -2) / math.sqrt(64) / 30), rtol=1e-12)


# ---------------------------------------------------------------- entropy at init


def test_entropy_at_init_scale_one_collapses_gemma4():
    base = R.entropy_at_init("gpt-2", rng=0)
    g4 = R.entropy_at_init("gemma-4", rng=0)
    assert base.mean <= base.uniform
    assert g4.mean + 5 * g4.se < base.mean - 5 * base.se
    assert R.entropy_at_init("gpt-2", rng=np.random.default_rng(0)) == base
    sink = R.entropy_at_init("gpt-oss", rng=1, sink=3.0)
    assert math.isfinite(sink.mean) and sink.se > 0


def test_recipe_table_rows():
    rows = R.recipe_table(n_keys=64, rng=1)
    assert [row["name"] for row in rows] == list(R.LOGIT_RECIPES)
    by = {row["name"]: row for row in rows}
    assert all(math.isfinite(row["entropy"]) and 0 < row["entropy"] <= row["uniform"] for row in rows)
    assert min(rows, key=lambda row: row["entropy"])["name"].startswith("gemma-4")
    assert by["deepseek-v3"]["scale_ratio"] == pytest.approx(R.yarn_mscale(40) ** 2)
    assert all(row["source"] == R.LOGIT_RECIPES[row["name"]].source for row in rows)


def test_recipe_table_passes_heads_and_queries_to_entropy_at_init():
    rows = R.recipe_table(n_keys=32, n_heads=3, n_queries=5, rng=2)
    seeds = np.random.default_rng(2).integers(0, 2**32, size=len(R.LOGIT_RECIPES))
    for row, seed in zip(rows, seeds, strict=True):
        e = R.entropy_at_init(row["name"], n_keys=32, n_queries=5, n_heads=3, rng=int(seed))
        assert (row["entropy"], row["entropy_se"], row["uniform"]) == (e.mean, e.se, e.uniform)
    # the SE comes from the head means: 16x the heads shrinks it about 4-fold
    few, many = (R.recipe_table(n_keys=16, n_heads=h, n_queries=4, rng=3) for h in (16, 256))
    for a, b in zip(few, many, strict=True):
        assert b["entropy_se"] < a["entropy_se"] / 2, a["name"]
    one = R.recipe_table(n_keys=16, n_heads=1, rng=4)
    assert all(math.isnan(row["entropy_se"]) and math.isfinite(row["entropy"]) for row in one)


# ---------------------------------------------------------------- bad input names the argument


@pytest.mark.parametrize(
    ("call", "exc", "word"),
    [
        (lambda: R.softcap([1.0], 0), ValueError, "cap"),
        (lambda: R.softcap([1.0], "50"), TypeError, "cap"),
        (lambda: R.softcap([np.nan], 5), ValueError, "x"),
        (lambda: R.rms_norm(np.ones((2, 3)), gain=np.ones(4)), ValueError, "gain"),
        (lambda: R.rms_norm(np.ones(3), eps=-1), ValueError, "eps"),
        (lambda: R.rms_norm(np.zeros(3), eps=0), ValueError, "all zeros"),
        (lambda: R.softmax_with_sink(np.ones((2, 3)), np.ones(3)), ValueError, "sink"),
        (lambda: R.yarn_mscale(-1.0), ValueError, "factor"),
        (lambda: R.yarn_mscale(40, mscale="1"), TypeError, "mscale"),
        (lambda: R.qk_clip(np.ones((2, 3)), np.ones((3, 3)), [1, 1]), ValueError, "heads"),
        (lambda: R.qk_clip(np.ones((2, 3)), np.ones((2, 3)), [1, 1, 1]), ValueError, "max_logit"),
        (lambda: R.qk_clip(np.ones((2, 3)), np.ones((2, 3)), [1, 1], alpha=2), ValueError, "alpha"),
        (lambda: R.qk_clip(np.ones((2, 3)), np.ones((2, 3)), [1, 1], tau=0), ValueError, "tau"),
        (lambda: R.llama4_attn_temperature([0.5]), TypeError, "positions"),
        (lambda: R.llama4_attn_temperature([-1]), ValueError, "positions"),
        (lambda: R.logn_scale([3], 1), ValueError, "train_len"),
        (lambda: R.recipe_attention(np.ones((2, 3, 4)), np.ones((2, 3, 5)), "qwen3"), ValueError, "share d"),
        (lambda: R.recipe_attention(np.ones((2, 3, 4)), np.ones((2, 3, 4)), "gpt-oss"), ValueError, "sink"),
        (lambda: R.recipe_attention(np.ones((2, 3, 4)), np.ones((2, 3, 4)), "gpt-2", sink=[0, 0]), ValueError, "sink"),
        (lambda: R.recipe_attention(np.ones((2, 3, 4)), np.ones((2, 3, 4)), "gpt-oss", sink=[0]), ValueError, "sink"),
        (lambda: R.recipe_logits(np.ones((2, 3, 4)), np.ones((2, 3, 4)), "gpt-2", q_gain=np.ones(4)), ValueError,
         "q_gain"),
        (lambda: R.recipe_logits(np.ones((2, 3, 4)), np.ones((2, 3, 4)), "olmo-2", q_gain=np.ones(4)), ValueError,
         "q_gain"),
        (lambda: R.recipe_logits(np.ones((2, 3, 4)), np.ones((2, 3, 4)), "gpt-2", rotate=3), TypeError, "rotate"),
        (lambda: R.recipe_attention(np.ones((2, 3, 4)), np.ones((2, 3, 4)), "gpt-2", mask=np.ones(2)), ValueError,
         "mask"),
        (lambda: R.entropy_at_init("gpt-2", rng="x"), TypeError, "rng"),
        (lambda: R.entropy_at_init("gpt-2", n_keys=0), ValueError, "n_keys"),
        (lambda: R.recipe_table(n_heads=0), ValueError, "n_heads"),
        (lambda: R.recipe_table(n_heads=2.5), TypeError, "n_heads"),
        (lambda: R.recipe_table(n_queries=0), ValueError, "n_queries"),
        (lambda: R.recipe_table(n_keys=-1), ValueError, "n_keys"),
        (lambda: R.LogitRecipe(model="m", head_dim=8, source=("a/b:c",), qk_norm="layer"), ValueError, "qk_norm"),
    ],
)  # fmt: skip
def test_bad_input_names_the_argument(call, exc, word):
    with pytest.raises(exc, match=word):
        call()

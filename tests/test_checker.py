"""Tests for attnlib.check_attention (lesson 09): every listed bug is named at several head sizes
and head counts, in several coding styles; correct implementations pass; the recovered scale is
exact; faulty functions give a report, never a traceback; bad arguments are named."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import attnlib
from attnlib import MultiHeadAttention, check_attention, scaled_dot_product_attention
from attnlib.checker import DEFAULT_SHAPES, DIAGNOSES, AttentionReport

# Three probe sets: the default one and two others with different head sizes and head counts.
SHAPE_SETS = {
    "default": DEFAULT_SHAPES,
    "small-heads": ((3, 4, 7, 5, 32, 9), (2, 6, 4, 9, 8, 12), (6, 2, 10, 6, 24, 11)),
    "wide-heads": ((2, 16, 3, 6, 128, 8), (3, 5, 8, 4, 40, 7)),
}


@pytest.fixture(autouse=True)
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # float16 overflow inside the buggy mask functions
        yield


# ------------------------------------------------------------------ buggy versions, style 1: matmul + swapaxes


def sm(x, axis=-1):
    x = x - x.max(axis, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis, keepdims=True)


def kt(k):
    return np.swapaxes(k, -1, -2)


def good(q, k, v):
    w = sm(q @ kt(k) / math.sqrt(q.shape[-1]))
    return w @ v, w


def no_scale(q, k, v):
    w = sm(q @ kt(k))
    return w @ v, w


def times_sqrt_dk(q, k, v):
    w = sm(q @ kt(k) / k.shape[-1] ** -0.5)  # the flipped exponent: divides by 1/√d
    return w @ v, w


def one_over_dk(q, k, v):
    return sm(q @ kt(k) / q.shape[-1]) @ v


def sqrt_d_model(q, k, v):  # q: (B, H, L, d_k); d_model = H·d_k
    return sm(q @ kt(k) / math.sqrt(q.shape[-3] * q.shape[-1])) @ v


D_MODEL = 512


def sqrt_d_model_fixed(q, k, v):  # a global width instead of the head size
    return sm(q @ kt(k) / math.sqrt(D_MODEL)) @ v


def after_softmax(q, k, v):
    w = sm(q @ kt(k)) / math.sqrt(q.shape[-1])
    return w @ v, w


def after_softmax_out_only(q, k, v):
    return (sm(q @ kt(k)) / math.sqrt(q.shape[-1])) @ v


def scaled_values(q, k, v):
    w = sm(q @ kt(k))
    return w @ (v / math.sqrt(q.shape[-1])), w


def scaled_values_out_only(q, k, v):
    return sm(q @ kt(k)) @ (v / math.sqrt(k.shape[-1]))


def wrong_axis_queries(q, k, v):
    return sm(q @ kt(k) / math.sqrt(q.shape[-2])) @ v


def wrong_axis_keys(q, k, v):
    return sm(q @ kt(k) * k.shape[-2] ** -0.5) @ v


def wrong_axis_values(q, k, v):  # d from v's width (d_v ≠ d_k in every probe)
    return sm(q @ kt(k) / math.sqrt(v.shape[-1])) @ v


def two_d_wrong_axis(q, k, v):  # written for (L, d) only; d_k = q.shape[0] is L
    return sm(q @ k.T / math.sqrt(q.shape[0])) @ v


BUGS = [
    (no_scale, "no_scale"), (times_sqrt_dk, "times_sqrt_dk"), (one_over_dk, "one_over_dk"),
    (sqrt_d_model, "sqrt_d_model"), (sqrt_d_model_fixed, "sqrt_d_model"), (after_softmax, "scale_after_softmax"),
    (after_softmax_out_only, "scale_after_softmax"), (scaled_values, "scaled_values"),
    (scaled_values_out_only, "scaled_values"), (wrong_axis_queries, "wrong_axis"), (wrong_axis_keys, "wrong_axis"),
    (wrong_axis_values, "wrong_axis"), (two_d_wrong_axis, "wrong_axis"),
]


@pytest.mark.parametrize("shapes", SHAPE_SETS.values(), ids=SHAPE_SETS.keys())
@pytest.mark.parametrize("fn, expected", BUGS, ids=[f.__name__ for f, _ in BUGS])
def test_each_bug_is_named(fn, expected, shapes):
    if fn is sqrt_d_model_fixed and D_MODEL not in {s[1] * s[4] for s in shapes}:
        expected = "fixed_scale"  # 1/√512 is d_model only when a probe used that width
    report = check_attention(fn, shapes=shapes)
    assert report.diagnosis == expected, report
    assert not report.ok


@pytest.mark.parametrize("shapes", SHAPE_SETS.values(), ids=SHAPE_SETS.keys())
def test_measured_scale_of_each_bug(shapes):
    """The reported factor is the one each bug really uses, at every probed head size."""
    heads = {s[4]: s[1] for s in shapes}
    expect = {
        no_scale: lambda d: 1.0, times_sqrt_dk: lambda d: d**0.5, one_over_dk: lambda d: 1.0 / d,
        sqrt_d_model: lambda d: (heads[d] * d) ** -0.5, sqrt_d_model_fixed: lambda d: D_MODEL**-0.5,
        good: lambda d: d**-0.5, after_softmax: lambda d: 1.0, scaled_values: lambda d: 1.0,
    }
    for fn, factor in expect.items():
        report = check_attention(fn, shapes=shapes)
        assert set(report.scale) == set(heads)
        for d, c in report.scale.items():
            assert c == pytest.approx(factor(d), rel=1e-9), (fn.__name__, d)


def test_message_states_the_measured_numbers():
    report = check_attention(sqrt_d_model)
    assert report.diagnosis == "sqrt_d_model"
    assert "0.04419 = 1/√512 at d_k = 64 (8 heads)" in repr(report)
    assert "divided by √d_model" in report.message
    times = check_attention(times_sqrt_dk)
    assert "8 = √64 at d_k = 64" in times.message
    axis = check_attention(wrong_axis_queries)
    assert "1/√5" in axis.message and "queries L = 5" in axis.message
    md = check_attention(good)._repr_markdown_()
    assert md.startswith("✓ **ok**") and "| 64 | 8 | 5 | 7 | 0.125 | 0.125 |" in md


# ------------------------------------------------------------------ buggy versions, style 2: einsum, classes, closures


def einsum_times(q, k, v):
    d = q.shape[-1]
    logits = np.einsum("...id,...jd->...ij", q, k) * d**0.5
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    return np.einsum("...ij,...jd->...id", w, v)


class Attention:
    """A callable object with a configurable scale rule (not a layer)."""

    def __init__(self, rule):
        self.rule = rule

    def __call__(self, query, key, value):
        logits = np.matmul(query, np.moveaxis(key, -1, -2)) * self.rule(query, key)
        return np.matmul(attnlib.softmax(logits), value)


def make_fixed_scale(width):
    scale = 1.0 / np.sqrt(width)
    return lambda q, k, v: attnlib.softmax(np.einsum("...ld,...sd->...ls", q, k) * scale) @ v


def loop_no_scale(q, k, v):
    """2-D only, plain Python loops."""
    out = np.zeros((q.shape[0], v.shape[1]))
    for i in range(q.shape[0]):
        logits = [sum(q[i, t] * k[j, t] for t in range(q.shape[1])) for j in range(k.shape[0])]
        m = max(logits)
        e = [math.exp(z - m) for z in logits]
        for j in range(k.shape[0]):
            out[i] += e[j] / sum(e) * v[j]
    return out


def batched_heads_after_softmax(q, k, v):
    """Batched with a head axis, scale applied to the probabilities, weights returned before scaling."""
    w = attnlib.softmax(np.einsum("bhld,bhsd->bhls", q, k))
    return np.einsum("bhls,bhsd->bhld", w * q.shape[-1] ** -0.5, v), w


class NumpyMHA:
    """A learner's multi-head layer in nn.MultiheadAttention's layout; ``rule`` picks the scale."""

    rule = "head"

    def __init__(self, num_heads, in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias):
        self.num_heads = num_heads
        self.in_proj_weight, self.in_proj_bias = in_proj_weight, in_proj_bias
        self.out_proj_weight, self.out_proj_bias = out_proj_weight, out_proj_bias
        self.embed_dim = in_proj_weight.shape[1]

    def __call__(self, query, key, value):
        E, H = self.embed_dim, self.num_heads
        w_q, w_k, w_v = np.split(self.in_proj_weight, 3)
        b_q, b_k, b_v = np.split(self.in_proj_bias, 3)

        def heads(x, w, b):
            y = x @ w.T + b
            return y.reshape(*y.shape[:-1], H, E // H).swapaxes(-2, -3)

        q, k, v = heads(query, w_q, b_q), heads(key, w_k, b_k), heads(value, w_v, b_v)
        scale = {"head": (E // H) ** -0.5, "model": E**-0.5, "none": 1.0}[self.rule]
        w = attnlib.softmax(q @ k.swapaxes(-1, -2) * scale)
        out = (w @ v).swapaxes(-2, -3).reshape(*query.shape[:-1], E)
        return out @ self.out_proj_weight.T + self.out_proj_bias, w


class NumpyMHAModelWidth(NumpyMHA):
    rule = "model"


class NumpyMHANoScale(NumpyMHA):
    rule = "none"


STYLE_2 = [
    (einsum_times, "times_sqrt_dk"),
    (Attention(lambda q, k: 1.0 / q.shape[-1]), "one_over_dk"),
    (Attention(lambda q, k: 1.0 / np.sqrt(q.shape[-2])), "wrong_axis"),
    (Attention(lambda q, k: 1.0 / np.sqrt(k.shape[-1])), "ok"),
    (make_fixed_scale(768), "fixed_scale"),  # 768 is no width the probes used
    (make_fixed_scale(512), "sqrt_d_model"),  # 512 = 8 heads × 64: the first probe's d_model
    (loop_no_scale, "no_scale"),
    (batched_heads_after_softmax, "scale_after_softmax"),
    (NumpyMHA, "ok"),
    (NumpyMHAModelWidth, "sqrt_d_model"),
    (NumpyMHANoScale, "no_scale"),
]


@pytest.mark.parametrize("fn, expected", STYLE_2, ids=[str(i) for i in range(len(STYLE_2))])
def test_other_coding_styles(fn, expected):
    report = check_attention(fn)
    assert report.diagnosis == expected, report


def test_layer_instance_is_probed_and_restored():
    ref = MultiHeadAttention.init(96, 8, rng=3)
    params = (ref.in_proj_weight, ref.in_proj_bias, ref.out_proj_weight, ref.out_proj_bias)
    layer = NumpyMHAModelWidth(8, *(p.copy() for p in params))
    report = check_attention(layer)
    assert report.diagnosis == "sqrt_d_model" and report.candidates == ()
    assert report.scale[12] == pytest.approx(96**-0.5, rel=1e-9)  # the instance: E = 96, 8 heads
    assert report.probes[0]["E"] == 96 and len(report.probes) == 6  # then its class at three other sizes
    assert any("new NumpyMHAModelWidth layers" in n for n in report.notes)
    for name, p in zip(["in_proj_weight", "in_proj_bias", "out_proj_weight", "out_proj_bias"], params, strict=True):
        np.testing.assert_array_equal(getattr(layer, name), p)  # parameters given back


class FixedLayer(NumpyMHA):
    """A layer whose class cannot be rebuilt at other sizes (its constructor takes one dict)."""

    rule = "model"

    def __init__(self, params):
        NumpyMHA.__init__(self, *params)


def test_instance_where_two_bugs_coincide_says_so():
    # E = 64, 8 heads: d_k = 8, and 1/√d_model = 1/√64 = 1/d_k; one size cannot tell them apart
    params = (8, np.vstack([np.eye(64)] * 3), np.zeros(192), np.eye(64), np.zeros(64))
    report = check_attention(FixedLayer(params))
    assert report.diagnosis == "sqrt_d_model"  # the likelier bug in a multi-head layer comes first
    assert {"one_over_dk", "sqrt_d_model"} <= set(report.candidates)  # and 1/H: H = d_k = 8 too
    assert any("also equals" in n for n in report.notes) and any("building its class" in n for n in report.notes)
    report = check_attention(NumpyMHAModelWidth(*params))  # a class that can be rebuilt: no ambiguity left
    assert report.diagnosis == "sqrt_d_model" and report.candidates == ()


# ------------------------------------------------------------------ correct implementations


def plain_loop_attention(q, k, v):
    """Reference written with loops, 2-D inputs: softmax(q·kᵀ/√d_k) v, returns (out, weights)."""
    L, d = q.shape
    S = k.shape[0]
    weights = np.zeros((L, S))
    for i in range(L):
        logits = [sum(q[i, t] * k[j, t] for t in range(d)) / math.sqrt(d) for j in range(S)]
        m = max(logits)
        e = [math.exp(z - m) for z in logits]
        weights[i] = [x / sum(e) for x in e]
    return weights @ v, weights


@pytest.mark.parametrize("fn", [
    scaled_dot_product_attention,
    lambda q, k, v: scaled_dot_product_attention(q, k, v)[0],
    lambda q, k, v, mask=None: scaled_dot_product_attention(q, k, v, mask=mask, need_weights=False)[0],
    plain_loop_attention, good, MultiHeadAttention, MultiHeadAttention.init(96, 3, rng=0),
], ids=["attnlib", "attnlib-out", "attnlib-mask-out", "loops", "good", "mha-class", "mha-instance"])
def test_correct_implementations_are_ok(fn):
    report = check_attention(fn)
    assert report.ok, report
    assert report.diagnosis == "ok" and "1/√d_k" in report.message


def test_attnlib_with_mask_is_checked_in_float16():
    report = check_attention(scaled_dot_product_attention)
    assert report.ok
    assert any("float16" in n for n in report.notes)


# ------------------------------------------------------------------ masks


def _masked_logits(q, k, mask):
    return np.where(mask, q @ kt(k) / math.sqrt(q.shape[-1]), -np.inf)


def mask_neg_inf(q, k, v, mask):  # correct; a fully masked row gives NaN, as torch.softmax does
    return sm(_masked_logits(q, k, mask)) @ v


def mask_fill_1e9(q, k, v, mask):
    s = q @ kt(k) / math.sqrt(q.shape[-1])
    return sm(np.where(mask, s, -1e9)) @ v  # -1e9 is -inf in float16


def mask_add_finfo_min(q, k, v, mask=None):
    s = q @ kt(k) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s + np.where(mask, 0, np.finfo(s.dtype).min).astype(s.dtype)  # -65504 + (-20) = -inf in float16
    return sm(s) @ v


def mask_blocked_convention(q, k, v, mask):  # True = blocked, as nn.MultiheadAttention
    s = np.where(mask, -np.inf, q @ kt(k) / math.sqrt(q.shape[-1]))
    return sm(s) @ v


def mask_ignored(q, k, v, mask=None):
    return sm(q @ kt(k) / math.sqrt(q.shape[-1])) @ v


def mask_too_weak(q, k, v, mask):
    s = q @ kt(k) / math.sqrt(q.shape[-1])
    return sm(np.where(mask, s, s - 2.0)) @ v


def test_mask_bugs_are_named():
    for fn in (mask_fill_1e9, mask_add_finfo_min, mask_ignored, mask_too_weak):
        assert check_attention(fn).diagnosis == "mask_overflow", fn.__name__
    r = check_attention(mask_fill_1e9)
    assert "NaN weights in float16 but uniform in float32" in r.message
    r = check_attention(mask_add_finfo_min)
    assert "finfo(float16).min" in r.message


def test_correct_masks_pass_and_say_what_was_seen():
    r = check_attention(mask_neg_inf)
    assert r.ok and any("gets NaN" in n for n in r.notes)
    r = check_attention(mask_blocked_convention)  # a plain `mask` read as True = blocked: lesson 09's is inverted
    assert r.diagnosis == "mask_inverted" and "np.where(mask, logits, -np.inf)" in r.message


# ------------------------------------------------------------------ scale recovery: property


@given(
    dims=st.lists(st.tuples(st.integers(1, 4), st.integers(1, 5), st.integers(1, 9), st.integers(2, 9),
                            st.integers(1, 48), st.integers(1, 6)), min_size=1, max_size=3),
    scale=st.floats(0.02, 4.0),
    seed=st.integers(0, 2**16),
)
@settings(max_examples=40, deadline=None)
def test_recovered_scale_matches_the_true_one(dims, scale, seed):
    shapes = [(b, h, L, S, d, S + extra) for b, h, L, S, d, extra in dims]
    report = check_attention(lambda q, k, v: scaled_dot_product_attention(q, k, v, scale=scale), shapes=shapes, rng=seed)
    assert report.diagnosis != "error", report
    for p in report.probes:
        assert p["c"] == pytest.approx(scale, rel=1e-6)


@given(dims=st.tuples(st.integers(2, 4), st.integers(2, 5), st.integers(2, 9), st.integers(2, 9), st.integers(2, 48)),
       seed=st.integers(0, 2**16))
@settings(max_examples=20, deadline=None)
def test_true_scale_is_ok_at_random_shapes(dims, seed):
    b, h, L, S, d = dims
    report = check_attention(scaled_dot_product_attention, shapes=[(b, h, L, S, d, S + 1)], rng=seed)
    assert report.ok, report


# ------------------------------------------------------------------ faulty functions: a report, never a crash


def _raises(q, k, v):
    raise ZeroDivisionError("my bug")


@pytest.mark.parametrize("fn, words", [
    (_raises, "raised ZeroDivisionError: my bug"),
    (lambda q, k, v: q, "output of shape"),
    (lambda q, k, v: np.full(q.shape[:-1] + v.shape[-1:], np.nan), "NaN"),
    (lambda q, k, v: "attention", "string"),
    (lambda q, k, v: None, "None"),
    (lambda q, k, v: (v, v, v), "3 values"),
    (lambda q, k, v: object(), "not a real-valued numeric array"),
    (lambda q, k, v: (good(q, k, v)[0], q), "weights of shape"),
    (lambda q: q, "raised TypeError"),
])
def test_bad_functions_give_an_error_report(fn, words):
    report = check_attention(fn)
    assert isinstance(report, AttentionReport)
    assert report.diagnosis == "error" and not report.ok
    assert words in report.message, report.message


def test_not_attention_cases():
    def softmax_over_queries(q, k, v):
        return sm(q @ kt(k) / math.sqrt(q.shape[-1]), axis=-2) @ v

    def squared_logits(q, k, v):
        return sm((q @ kt(k)) ** 2 / q.shape[-1]) @ v

    def relu_weights(q, k, v):
        w = np.maximum(q @ kt(k), 0) + 1e-3
        return (w / w.sum(-1, keepdims=True)) @ v

    assert "queries axis" in check_attention(softmax_over_queries).message
    for fn in (softmax_over_queries, squared_logits, relu_weights):
        assert check_attention(fn).diagnosis == "not_attention", fn.__name__


def test_layer_without_heads_is_an_error_report():
    class NoHeads:
        in_proj_weight = np.zeros((12, 4))

        def __call__(self, q, k, v):
            return q

    report = check_attention(NoHeads())
    assert report.diagnosis == "error" and "num_heads" in report.message


def test_diagnosis_codes_are_documented():
    doc = attnlib.checker.__doc__
    for code in DIAGNOSES:
        assert f"``{code}``" in doc, code


# ------------------------------------------------------------------ bad arguments to the checker


@pytest.mark.parametrize("kwargs, err, words", [
    (dict(fn=3), TypeError, "fn must be a callable"),
    (dict(fn=good, backend="jax"), ValueError, "backend must be"),
    (dict(fn=good, shapes="big"), TypeError, "shapes must be a sequence"),
    (dict(fn=good, shapes=[(1, 2, 3)]), ValueError, "shapes entries must be"),
    (dict(fn=good, shapes=[(1, 2, 3, 4, 5, 2)]), ValueError, "d_v > S"),
    (dict(fn=good, shapes=[(1, 2, 3, 1, 5, 6)]), ValueError, "S >= 2"),
    (dict(fn=good, shapes=[(0, 2, 3, 4, 5, 6)]), ValueError, "positive integers"),
    (dict(fn=good, shapes=[]), ValueError, "at least one probe"),
    (dict(fn=good, rng="x"), TypeError, "rng"),
])
def test_bad_arguments_name_the_argument(kwargs, err, words):
    fn = kwargs.pop("fn")
    with pytest.raises(err, match=words):
        check_attention(fn, **kwargs)


# ------------------------------------------------------------------ torch (optional)


def test_torch_implementations():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional

    def t_sqrt_d_model(q, k, v):
        B, H, L, d = q.shape
        return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(H * d), dim=-1) @ v

    def t_mask_1e9(q, k, v, mask=None):
        s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        if mask is not None:
            s = s.masked_fill(mask == 0, -1e9)
        return torch.softmax(s, dim=-1) @ v

    def t_values(q, k, v):
        return torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ (v / math.sqrt(k.size(-1)))

    assert check_attention(F.scaled_dot_product_attention).ok
    assert check_attention(t_sqrt_d_model).diagnosis == "sqrt_d_model"
    assert check_attention(t_mask_1e9).diagnosis == "mask_overflow"

    def t_mask_numbers(q, k, v, mask):  # 1 = attend, 0 = pad (a bool tensor cannot be subtracted in torch)
        s = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        return torch.softmax(s + (1.0 - mask) * -1e9, dim=-1) @ v

    r = check_attention(t_mask_numbers)
    assert r.diagnosis == "mask_overflow" and any("1 = may attend" in n for n in r.notes), r
    def t_after(q, k, v):
        return torch.softmax(q @ k.transpose(-2, -1), dim=-1) / math.sqrt(k.size(-1)) @ v

    def t_values_hidden(q, k, v):
        v = v + 0.0  # a new tensor: the checker can no longer watch v
        return torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ (v / math.sqrt(k.size(-1)))

    # output only: told apart by watching v (a tracking tensor subclass)
    assert check_attention(t_values).diagnosis == "scaled_values"
    assert check_attention(t_after).diagnosis == "scale_after_softmax"
    r = check_attention(t_values_hidden)  # the two placements cannot be told apart any more
    assert r.diagnosis in ("scaled_values", "scale_after_softmax")
    assert set(r.candidates) == {"scaled_values", "scale_after_softmax"} and "both fit" in r.message
    for layer in (torch.nn.MultiheadAttention(64, 8, batch_first=True), torch.nn.MultiheadAttention(48, 4),
                  torch.nn.MultiheadAttention):
        before = None if isinstance(layer, type) else layer.in_proj_weight.detach().clone()
        assert check_attention(layer).ok
        if before is not None:
            assert torch.equal(before, layer.in_proj_weight.detach())


def mask_numbers_1e9(q, k, v, mask):  # (1 - mask) * -1e9 added in the logits' dtype: 0 * -inf = NaN in float16
    s = q @ kt(k) / math.sqrt(q.shape[-1])
    return sm(s + (1 - mask.astype(s.dtype)) * -1e9) @ v


def mask_additive(q, k, v, attn_bias=None):  # a float bias added to the logits, as torch SDPA's float masks
    s = q @ kt(k) / math.sqrt(q.shape[-1])
    return sm(s if attn_bias is None else s + attn_bias) @ v


def test_other_mask_conventions():
    r = check_attention(mask_numbers_1e9)
    assert r.diagnosis == "mask_overflow" and "open keys turn NaN" in r.message
    r = check_attention(mask_additive)
    assert r.ok and any("added to the logits" in n for n in r.notes)


def test_a_function_that_scales_its_inputs_in_place_is_measured_right():
    def in_place(q, k, v):
        q /= math.sqrt(q.shape[-1])  # edits the caller's array
        return sm(q @ kt(k)) @ v

    def in_place_bug(q, k, v):
        k *= 1.0  # touches k, no scale at all
        return sm(q @ kt(k)) @ v

    assert check_attention(in_place).ok
    assert check_attention(in_place_bug).diagnosis == "no_scale"


class SeqFirstMHA(NumpyMHA):
    """Sequence first, (L, N, E), like nn.MultiheadAttention's default, and no batch_first attribute."""

    def __call__(self, query, key, value):
        out, w = NumpyMHA.__call__(self, *(np.swapaxes(x, 0, 1) for x in (query, key, value)))
        return np.swapaxes(out, 0, 1), w


def test_sequence_first_layer_without_batch_first_attribute():
    assert check_attention(SeqFirstMHA).ok


def test_torch_style_classes():
    torch = pytest.importorskip("torch")

    class TorchMHA(torch.nn.Module):
        """A learner's module in nn.MultiheadAttention's layout; forward(query, key, value, mask=None)."""

        def __init__(self, embed_dim, num_heads, wrong_width=False):
            super().__init__()
            self.embed_dim, self.num_heads, self.wrong_width = embed_dim, num_heads, wrong_width
            self.in_proj_weight = torch.nn.Parameter(torch.randn(3 * embed_dim, embed_dim) * 0.1)
            self.in_proj_bias = torch.nn.Parameter(torch.zeros(3 * embed_dim))
            self.out_proj = torch.nn.Linear(embed_dim, embed_dim)
            self.batch_first = True

        def forward(self, query, key, value, mask=None):
            E, H = self.embed_dim, self.num_heads
            q, k, v = (torch.nn.functional.linear(x, w, b).unflatten(-1, (H, E // H)).transpose(1, 2)
                       for x, w, b in zip((query, key, value), self.in_proj_weight.chunk(3),
                                          self.in_proj_bias.chunk(3), strict=True))
            scale = E**-0.5 if self.wrong_width else (E // H) ** -0.5
            w = torch.softmax(q @ k.transpose(-2, -1) * scale, dim=-1)
            return self.out_proj((w @ v).transpose(1, 2).flatten(-2)), w

    class TorchMHAWide(TorchMHA):
        def __init__(self, embed_dim, num_heads):
            super().__init__(embed_dim, num_heads, wrong_width=True)

    class SingleHead(torch.nn.Module):  # a module that is a plain attention function
        def forward(self, q, k, v, mask=None):
            s = q @ k.transpose(-2, -1) / q.size(-1)
            if mask is not None:
                s = s.masked_fill(~mask, float("-inf"))
            return torch.softmax(s, -1) @ v

    assert check_attention(TorchMHA).ok
    assert check_attention(TorchMHA(96, 8)).ok
    r = check_attention(TorchMHAWide)
    assert r.diagnosis == "sqrt_d_model", r
    r = check_attention(SingleHead())
    assert r.diagnosis == "one_over_dk" and not any("takes no mask" in n for n in r.notes)


def test_torch_stays_optional_and_lazy(monkeypatch):
    import subprocess
    import sys

    code = ("import sys, numpy as np, attnlib\n"
            "r = attnlib.check_attention(attnlib.scaled_dot_product_attention)\n"
            "print(r.ok, 'torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False"]  # a numpy function never imports torch
    monkeypatch.setattr(attnlib.checker.callers, "torch_installed", lambda: False)
    with pytest.raises(ValueError, match="backend='torch' needs torch"):
        check_attention(good, backend="torch")
    report = check_attention(lambda q, k, v: q.size(-1))  # numpy fails and there is no torch to try
    assert report.diagnosis == "error" and "TypeError" in report.message


def test_layer_with_other_projections_gets_a_clear_report():
    class SeparateProjections:  # q_proj / k_proj / v_proj, as many codebases write it
        num_heads = 2

        def __init__(self):
            self.out_proj = object()

        def __call__(self, query, key, value):
            return query

    report = check_attention(SeparateProjections())
    assert report.diagnosis == "error" and "in_proj_weight (3E, E)" in report.message


def test_function_that_wants_a_two_d_mask():
    def mask_2d_only(q, k, v, mask):
        L, S = mask.shape  # (L, S), shared by every batch and head
        s = q @ kt(k) / math.sqrt(q.shape[-1])
        return sm(np.where(mask.reshape(1, 1, L, S), s, -1e9)) @ v

    def mask_2d_ok(q, k, v, mask=None):
        s = q @ kt(k) / math.sqrt(q.shape[-1])
        if mask is not None:
            s = np.where(mask.reshape((1,) * (s.ndim - 2) + mask.shape), s, -np.inf)
        return scaled_dot_product_attention(q, k, v, mask=np.isfinite(s))[0]

    assert check_attention(mask_2d_only).diagnosis == "mask_overflow"
    assert check_attention(mask_2d_ok).ok


def test_fully_masked_row_gives_zeros_like_torch_sdpa():
    """Lesson 09 says attnlib and PyTorch's SDPA give a fully masked row zeros (checked with torch 2.13.0)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((1, 3, 4)), rng.standard_normal((1, 5, 4)), rng.standard_normal((1, 5, 4))
    mask = np.ones((3, 5), dtype=bool)
    mask[1] = False  # query 1 may attend to no key
    mask[2, :3] = False  # query 2: partly masked
    for dtype, tdtype, tol in ((np.float64, torch.float64, 1e-12), (np.float32, torch.float32, 1e-5)):
        out, weights = scaled_dot_product_attention(q.astype(dtype), k.astype(dtype), v.astype(dtype), mask=mask)
        ref = torch.nn.functional.scaled_dot_product_attention(
            *(torch.from_numpy(x.astype(dtype)).to(tdtype) for x in (q, k, v)), attn_mask=torch.from_numpy(mask)
        ).numpy()
        assert np.all(weights[0, 1] == 0) and np.all(out[0, 1] == 0)
        assert np.all(ref[0, 1] == 0)  # torch's SDPA: zeros, not NaN, for the fully masked row
        assert np.allclose(out, ref, atol=tol)
    assert torch.isnan(torch.softmax(torch.full((4,), float("-inf")), -1)).all()  # plain softmax: NaN


# ------------------------------------------------------------------ issue 21: today's models and the new verdict classes


def _sdpa(q, k, v, logits_fn):
    return sm(logits_fn(q @ kt(k) / math.sqrt(q.shape[-1]), q, k)) @ v


def qk_norm_l2(gain):
    def fn(q, k, v):
        qn, kn = (x / np.linalg.norm(x, axis=-1, keepdims=True) for x in (q, k))
        return sm(gain * qn @ kt(kn)) @ v
    return fn


def qk_norm_rms(q, k, v):  # Qwen3 / Gemma 3: RMS norm per head, then the usual 1/√d_k
    qn, kn = (x / np.sqrt((x**2).mean(-1, keepdims=True) + 1e-6) for x in (q, k))
    return sm(qn @ kt(kn) / math.sqrt(q.shape[-1])) @ v


def qk_norm_whole(q, k, v):  # OLMo 2: RMS over the whole projection (every head of a position together)
    qn, kn = (x / np.sqrt((x**2).mean((-3, -1), keepdims=True)) for x in (q, k))
    return sm(qn @ kt(kn) / math.sqrt(q.shape[-1])) @ v


def soft_capped(cap):
    return lambda q, k, v: _sdpa(q, k, v, lambda s, q, k: cap * np.tanh(s / cap))


def sink_per_head(q, k, v):  # gpt-oss: one learned logit per head in the denominator, its column dropped
    sinks = np.linspace(-1.0, 2.0, q.shape[-3])[:, None, None]
    s = q @ kt(k) / math.sqrt(q.shape[-1])
    m = np.maximum(s.max(-1, keepdims=True), sinks)
    e = np.exp(s - m)
    w = e / (e.sum(-1, keepdims=True) + np.exp(sinks - m))
    return w @ v, w


def alibi(q, k, v):
    H, L, S = q.shape[-3], q.shape[-2], k.shape[-2]
    slopes = 2.0 ** (-8 * np.arange(1, H + 1) / H)[:, None, None]
    return _sdpa(q, k, v, lambda s, q, k: s - slopes * np.abs(np.arange(L)[:, None] - np.arange(S)))


def fixed(factor):
    return lambda q, k, v: sm(q @ kt(k) * factor) @ v


def mscale_squared(q, k, v):  # YaRN / DeepSeek-V3 MLA: softmax_scale = mscale² / √d_k
    m = 0.1 * math.log(40.0) + 1.0
    return sm(q @ kt(k) * m * m / math.sqrt(q.shape[-1])) @ v


@pytest.mark.parametrize("fn, code, number", [
    (qk_norm_l2(10.0), "qk_norm", ("g", {64: 10.0, 16: 10.0, 12: 10.0})),
    (qk_norm_rms, "qk_norm", ("g", {64: 8.0, 16: 4.0, 12: 12**0.5})),  # RMS: g = √d_k·(d_k cos)/d_k
    (qk_norm_whole, "qk_norm", None),
    (soft_capped(50.0), "soft_cap", ("cap", 50.0)),
    (soft_capped(5.0), "soft_cap", ("cap", 5.0)),
    (sink_per_head, "attention_sink", None),
    (alibi, "position_bias", None),
    (fixed(64**-0.5), "fixed_scale", None),
    (fixed(144**-0.5), "fixed_scale", None),  # Gemma's query_pre_attn_scalar = 144
    (fixed(0.2), "fixed_scale", None),
    (fixed(0.03), "fixed_scale", None),
    (mscale_squared, "constant_multiple", ("m", (0.1 * math.log(40.0) + 1.0) ** 2)),
    (lambda q, k, v: sm(q @ kt(k) / q.shape[-1] ** 0.25) @ v, "wrong_scale", None),
], ids=["qk-l2", "qk-rms", "qk-whole", "cap50", "cap5", "sink", "alibi", "fixed64", "gemma", "fixed0.2",
        "fixed0.03", "mscale", "quarter-power"])
def test_modern_variants_and_new_scale_codes(fn, code, number):
    report = check_attention(fn)
    assert report.diagnosis == code, report
    assert report.ok == (code in attnlib.checker.OK_CODES)
    if number is not None:
        key, value = number
        got = report.measured[key]
        if isinstance(value, dict):
            assert got == pytest.approx(value, rel=1e-5)  # the RMS norm's 1e-6 inside the root
        else:
            assert got == pytest.approx(value, rel=1e-4)


def test_new_verdicts_report_their_numbers():
    r = check_attention(qk_norm_l2(10.0))
    assert "g = 10 at d_k = 64" in r.message and "|logit| ≤ g" in r.message
    r = check_attention(soft_capped(30.0))
    assert "c = 30" in r.message and "0.125 = 1/√64" in r.message
    r = check_attention(sink_per_head)
    lo, hi = r.measured["sink_mass"]
    assert 0 < lo < hi < 1 and "sink mass" in r.message
    assert r.measured["sink_logit"][:3] == pytest.approx(list(np.linspace(-1.0, 2.0, 8))[:3], rel=1e-6)
    r = check_attention(alibi)
    assert "ALiBi" in r.message and "0.5, 0.25, 0.125" in r.message
    r = check_attention(fixed(64**-0.5))
    assert "a fixed head size of 64: your scale does not follow d_k" in r.message
    r = check_attention(fixed(144**-0.5))
    assert "query_pre_attn_scalar" in r.message and "on purpose" in r.message
    r = check_attention(fixed(0.2))
    assert "0.2 at every head size" in r.message and "√25" not in r.message
    r = check_attention(mscale_squared)
    assert "m = 1.874" in r.message and "YaRN" in r.message and "bug" in r.message
    r = check_attention(lambda q, k, v: sm(q @ kt(k) / q.shape[-1] ** 0.25) @ v)
    assert "it would suit d_k = 8" in r.message  # 64**-0.25 = 1/√8


def qk_norm_l2_kept_scale(q, k, v):  # unit q̂, k̂ and still ÷√d_k: |logit| ≤ 1/√d_k
    qn, kn = (x / np.linalg.norm(x, axis=-1, keepdims=True) for x in (q, k))
    return sm(qn @ kt(kn) / math.sqrt(q.shape[-1])) @ v


def test_qk_norm_messages_name_the_gain_rule():
    """OLMo 2's whole-projection norm is not g·cos per head; an L2 norm still divided by √d_k is named."""
    r = check_attention(qk_norm_whole)
    assert "g·q̂_h·k̂_h" in r.message and "g·cos(q, k)" not in r.message and "H·√d_k" in r.message
    assert r.measured["g"] == pytest.approx({64: 64.0, 16: 12.0, 12: 2 * 12**0.5}, rel=1e-6)  # H·√d_k
    r = check_attention(qk_norm_l2_kept_scale)
    assert r.diagnosis == "qk_norm_small_gain" and not r.ok, r
    assert r.measured["g"] == pytest.approx({64: 1 / 8, 16: 1 / 4, 12: 12**-0.5}, rel=1e-6)
    assert "shrinks with d_k" in r.message and "any fixed gain is fine" not in r.message


def test_rms_qk_norm_never_divided_by_sqrt_dk_is_no_scale():
    """RMS-normalised q, k with no 1/√d_k: q̂·k̂ = d_k·cos has std √d_k, the no_scale bug behind a norm."""
    def rms_unscaled(q, k, v):
        qn, kn = (x / np.sqrt((x**2).mean(-1, keepdims=True)) for x in (q, k))
        return sm(qn @ kt(kn)) @ v
    r = check_attention(rms_unscaled)
    assert r.diagnosis == "no_scale" and not r.ok, r
    assert r.measured["g"] == pytest.approx({64: 64.0, 16: 16.0, 12: 12.0}, rel=1e-6)
    assert "g = 1·d_k" in r.message and "divide by √d_k after the norm" in r.message


@given(gain=st.floats(1.5, 30.0), seed=st.integers(0, 2**16))
@settings(max_examples=15, deadline=None)
def test_qk_norm_gain_is_recovered(gain, seed):
    report = check_attention(qk_norm_l2(gain), rng=seed)
    assert report.diagnosis == "qk_norm", report
    assert all(g == pytest.approx(gain, rel=1e-6) for g in report.measured["g"].values())


# ------------------------------------------------------------------ QK-norm whose gain g ≤ 1: the head cannot attend


def qk_norm_rms_per_head(q, k, v):  # Qwen3 / Gemma 3 with no epsilon: RMS per head, then 1/√d_k, so g = √d_k
    qn, kn = (x / np.sqrt((x**2).mean(-1, keepdims=True)) for x in (q, k))
    return sm(qn @ kt(kn) / math.sqrt(q.shape[-1])) @ v


SMALL_GAIN = [
    (qk_norm_l2_kept_scale, "qk_norm_small_gain", {64: 1 / 8, 16: 1 / 4, 12: 12**-0.5}),  # g = 1/√d_k
    (qk_norm_l2(1.0), "qk_norm_small_gain", {64: 1.0, 16: 1.0, 12: 1.0}),  # plain q̂·k̂: g = 1
    (qk_norm_l2(10.0), "qk_norm", {64: 10.0, 16: 10.0, 12: 10.0}),
    (qk_norm_rms_per_head, "qk_norm", {64: 8.0, 16: 4.0, 12: 12**0.5}),  # g = √d_k
]


@pytest.mark.parametrize("fn, code, gains", SMALL_GAIN, ids=["l2-over-sqrt-dk", "l2-plain", "l2-g10", "rms-per-head"])
def test_qk_norm_small_gain_is_named_on_20_seeds(fn, code, gains):
    for seed in range(20):
        r = check_attention(fn, rng=seed)
        assert r.diagnosis == code and r.ok == (code == "qk_norm"), (seed, r)
        assert r.measured["g"] == pytest.approx(gains, rel=1e-6), seed


def test_qk_norm_small_gain_message_gives_g_the_bound_and_the_fix():
    r = check_attention(qk_norm_l2_kept_scale)
    assert "g = 0.125 at d_k = 64; g = 0.25 at d_k = 16; g = 0.2887 at d_k = 12" in r.message
    assert "e^(2g) = 1.284 at d_k = 64; 1.649 at d_k = 16; 1.781 at d_k = 12 (7.389 at g = 1)" in r.message
    assert "the head cannot attend" in r.message and "learned or large gain and drop the 1/√d_k" in r.message
    assert "length √d_k, so g = √d_k" in r.message and "Henry et al. 2020" in r.message
    r = check_attention(qk_norm_l2(1.0))
    assert "e^(2g) = 7.389 at d_k = 64" in r.message and "drop the 1/√d_k" not in r.message
    r = check_attention(qk_norm_l2(10.0))
    assert "with a gain above 1" in r.message and "e^(2g) = 4.852e+08" in r.message


def test_qk_norm_gain_shrinking_past_1_at_one_size_only():
    """g = 6/√d_k: 0.75 at d_k = 64 (cannot attend), above 1 at 16 and 12; g = 40/√d_k stays above 1 (ok, warned)."""
    def l2_gain_over_sqrt_dk(m):
        def fn(q, k, v):
            qn, kn = (x / np.linalg.norm(x, axis=-1, keepdims=True) for x in (q, k))
            return sm(m * qn @ kt(kn) / math.sqrt(q.shape[-1])) @ v
        return fn

    r = check_attention(l2_gain_over_sqrt_dk(6.0))
    assert r.diagnosis == "qk_norm_small_gain" and "at d_k = 64, where g ≤ 1" in r.message, r
    r = check_attention(l2_gain_over_sqrt_dk(40.0))
    assert r.diagnosis == "qk_norm" and "reaches 1 at d_k = m² = 1600" in r.message, r


@given(gain=st.floats(0.05, 3.0), seed=st.integers(0, 2**16))
@example(gain=1.0, seed=0).via("g = 1 exactly: plain q̂·k̂")
@example(gain=1.01, seed=0).via("just above 1")
@example(gain=0.99, seed=0).via("just below 1")
@settings(max_examples=25, deadline=None)
def test_qk_norm_gain_boundary_sits_at_1(gain, seed):
    """g ≤ 1 -> qk_norm_small_gain, g > 1 -> qk_norm; within the checker's relative tolerance (1e-3 in float64) of 1
    either is allowed (the measured g of plain q̂·k̂ is 1 ± 1e-15)."""
    report = check_attention(qk_norm_l2(gain), rng=seed)
    assert all(g == pytest.approx(gain, rel=1e-6) for g in report.measured["g"].values())
    if gain <= 1:
        assert report.diagnosis == "qk_norm_small_gain" and not report.ok, report
    elif gain > 1.002:
        assert report.diagnosis == "qk_norm" and report.ok, report
    else:
        assert report.diagnosis in ("qk_norm", "qk_norm_small_gain"), report


# ------------------------------------------------------------------ review 09, findings 8-10: messages


def test_a_mask_filled_with_0_says_the_fill_is_too_small():
    def fill_0(q, k, v, mask):
        return sm(np.where(mask, q @ kt(k) / math.sqrt(q.shape[-1]), 0.0)) @ v

    def times_mask(q, k, v, mask):
        return sm(q @ kt(k) / math.sqrt(q.shape[-1]) * mask) @ v

    for fn in (fill_0, times_mask):
        r = check_attention(fn)
        assert r.diagnosis == "mask_overflow", r
        assert "The fill value is too small" in r.message and "Nothing overflows here" in r.message
        assert "np.where(mask, logits, -np.inf)" in r.message


def causal_inside(q, k, v):
    z = q @ kt(k) / math.sqrt(q.shape[-1])
    return sm(np.where(np.tril(np.ones(z.shape[-2:], dtype=bool)), z, -np.inf)) @ v


def causal_bottom_right(q, k, v):  # flash-attn's causal=True: query i sees keys j <= i + S - L
    z = q @ kt(k) / math.sqrt(q.shape[-1])
    L, S = z.shape[-2:]
    return attnlib.softmax(np.where(np.tril(np.ones((L, S), dtype=bool), k=S - L), z, -np.inf)) @ v


def window_inside(q, k, v):  # keys within one position of the query
    z = q @ kt(k) / math.sqrt(q.shape[-1])
    L, S = z.shape[-2:]
    near = np.abs(np.arange(L)[:, None] - np.arange(S)) <= 1
    return attnlib.softmax(np.where(near, z, -np.inf)) @ v  # zeros on a row with no key


@pytest.mark.parametrize("fn, words", [
    (causal_inside, "keys after the query (key j > query i) get weight 0 in every probe: a causal mask"),
    (causal_bottom_right, "keys j > i + S − L get weight 0"),
    (window_inside, "some keys get weight 0 at the same places in every batch and head: a mask inside"),
    (good, None),
], ids=["causal", "bottom-right", "window", "no-mask"])
def test_a_mask_built_into_fn_is_named_not_unchecked(fn, words):
    r = check_attention(fn)
    assert r.diagnosis == "ok", r
    if words is None:
        assert "your function takes no mask, so masking was not checked" in r.notes
    else:
        assert any(words in n for n in r.notes), r.notes
        assert not any("masking was not checked" in n for n in r.notes), r.notes


def test_torch_is_causal_is_named():
    torch = pytest.importorskip("torch")

    def sdpa_causal(q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)

    r = check_attention(sdpa_causal)
    assert r.diagnosis == "ok" and any("a causal mask inside your function" in n for n in r.notes), r


def test_alibi_without_scale_names_the_one_size_probed():
    def alibi_unscaled(q, k, v):
        H, L, S = q.shape[-3], q.shape[-2], k.shape[-2]
        slopes = 2.0 ** (-8 * np.arange(1, H + 1) / H)[:, None, None]
        return sm(q @ kt(k) - slopes * np.abs(np.arange(L)[:, None] - np.arange(S))) @ v

    r = check_attention(alibi_unscaled)
    assert r.diagnosis == "no_scale", r
    assert "at the one head size probed (d_k = 64)" in r.message and "every head size" not in r.message
    assert "at every head size probed (d_k = 64, 16, 12)" in check_attention(no_scale).message


@given(cap=st.floats(3.0, 60.0), seed=st.integers(0, 2**16))
@settings(max_examples=15, deadline=None)
def test_soft_cap_is_recovered(cap, seed):
    report = check_attention(soft_capped(cap), rng=seed)
    assert report.diagnosis == "soft_cap", report
    assert report.measured["cap"] == pytest.approx(cap, rel=1e-3)


@given(factor=st.floats(0.01, 0.5), seed=st.integers(0, 2**16))
@settings(max_examples=20, deadline=None)
def test_any_fixed_factor_is_fixed_scale_unless_a_probe_width(factor, seed):
    widths = {s[1] * s[4] for s in DEFAULT_SHAPES}
    if any(abs(factor * math.sqrt(w) - 1) < 1e-3 for w in widths | {64, 16, 12}):
        return  # 1/√width is d_model; 1/√d_k of one probe is not a fixed factor at the others either way
    report = check_attention(fixed(factor), rng=seed)
    assert report.diagnosis == "fixed_scale", report
    assert f"{factor:.4g}" in report.message


# ------------------------------------------------------------------ issue 21: masks applied wrongly


def mask_multiplied(q, k, v, mask=None):  # softmax(z) * mask, no renormalising
    w = sm(q @ kt(k) / math.sqrt(q.shape[-1]))
    return (w if mask is None else w * mask) @ v


def mask_added(q, k, v, mask=None):  # a boolean mask added to the logits
    s = q @ kt(k) / math.sqrt(q.shape[-1])
    return sm(s if mask is None else s + mask) @ v


def mask_added_before_scale(q, k, v, mask=None):
    s = q @ kt(k)
    return sm((s if mask is None else s + mask) / math.sqrt(q.shape[-1])) @ v


def key_padding(q, k, v, key_padding_mask=None):  # nn.MultiheadAttention's convention: True = blocked
    s = q @ kt(k) / math.sqrt(q.shape[-1])
    return sm(s if key_padding_mask is None else np.where(key_padding_mask, -np.inf, s)) @ v


@pytest.mark.parametrize("fn, code", [
    (mask_multiplied, "mask_not_renormalised"), (mask_added, "mask_added_boolean"),
    (mask_added_before_scale, "mask_added_boolean"), (mask_blocked_convention, "mask_inverted"),
    (mask_too_weak, "mask_overflow"), (key_padding, "ok"),
])
def test_wrong_masks_have_their_own_codes(fn, code):
    report = check_attention(fn)
    assert report.diagnosis == code, report


def test_mask_messages_show_the_numbers_and_the_fix():
    r = check_attention(mask_multiplied)
    assert "sum to as little as" in r.message and "softmax(z) * mask" in r.message
    r = check_attention(mask_added)
    assert "e^1 = 2.718" in r.message and "-np.inf" in r.message
    r = check_attention(mask_blocked_convention)
    assert "True = may attend" in r.message and "np.where(mask, logits, -np.inf)" in r.message
    r = check_attention(key_padding)
    assert any("True = blocked" in n for n in r.notes)


@pytest.mark.parametrize("name", ["tau", "temp", "temperature", "scale", "heads", "dropout_p", "is_causal"])
def test_a_fourth_parameter_that_is_not_a_mask_keeps_its_default(name):
    default = {"tau": 1.0, "temp": 1.0, "temperature": 1.0, "scale": None, "heads": 1, "dropout_p": 0.0,
               "is_causal": False}[name]
    ns = {"sm": sm, "kt": kt, "math": math}
    exec(f"def fn(q, k, v, {name}={default!r}):\n    return sm(q @ kt(k) / math.sqrt(q.shape[-1])) @ v", ns)
    report = check_attention(ns["fn"])
    assert report.ok and report.diagnosis == "ok", report
    assert any("takes no mask" in n for n in report.notes)


def test_mask_by_keyword_only_name():
    def fn(q, k, v, *, attn_mask=None):
        s = q @ kt(k) / math.sqrt(q.shape[-1])
        return sm(s if attn_mask is None else np.where(attn_mask, s, -np.inf)) @ v

    r = check_attention(fn)
    assert r.ok and any("float16" in n for n in r.notes)


# ------------------------------------------------------------------ issue 21: half precision, layouts, notes


def in_float16(q, k, v, mask=None):
    q, k, v = (x.astype(np.float16) for x in (q, k, v))
    s = q @ kt(k) / np.float16(math.sqrt(q.shape[-1]))
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(m), m, 0))
    w = e / np.maximum(e.sum(-1, keepdims=True), np.float16(1e-4))
    return w @ v


@pytest.mark.parametrize("seed", range(20))
def test_half_precision_never_changes_a_verdict(seed):
    assert check_attention(in_float16, rng=seed).diagnosis == "ok"
    assert check_attention(lambda q, k, v: in_float16(q, k, v).astype(np.float64), rng=seed).diagnosis == "ok"
    unscaled = check_attention(lambda q, k, v: in_float16(q * math.sqrt(q.shape[-1]), k, v), rng=seed)
    assert unscaled.diagnosis == "no_scale"  # and a bug is still named in float16


def test_torch_half_and_bfloat16_are_ok():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional

    def half(q, k, v):
        return F.scaled_dot_product_attention(q.half(), k.half(), v.half())

    def bf16(q, k, v, attn_mask=None):
        return F.scaled_dot_product_attention(q.bfloat16(), k.bfloat16(), v.bfloat16(), attn_mask=attn_mask)

    def qk(q, k, v):
        return F.scaled_dot_product_attention(F.normalize(q, dim=-1), F.normalize(k, dim=-1), v, scale=10.0)

    assert check_attention(half).ok and check_attention(bf16).diagnosis == "ok"
    r = check_attention(qk)
    assert r.diagnosis == "qk_norm" and r.measured["g"][64] == pytest.approx(10.0, rel=1e-6)


def blhd(q, k, v):  # written for (B, L, H, d)
    s = np.einsum("blhd,bshd->bhls", q, k) / math.sqrt(q.shape[-1])
    return np.einsum("bhls,bshd->blhd", sm(s), v)


def merged_heads(q, k, v):
    out = sm(q @ kt(k) / math.sqrt(q.shape[-1])) @ v
    return np.swapaxes(out, -3, -2).reshape(*out.shape[:-3], out.shape[-2], -1)


@pytest.mark.parametrize("fn", [blhd, merged_heads])
def test_layout_errors_name_the_layout_and_a_wrapper_that_works(fn):
    report = check_attention(fn)
    assert report.diagnosis == "error" and "(…, H, L, d" in report.message
    assert "Traceback" not in report.message and "torch" not in report.message
    wrapper = report.message.split("one-line wrapper: ", 1)[1]
    assert check_attention(eval(wrapper.removeprefix("check_attention(")[:-1], {"my_attention": fn})).ok


def test_no_unactionable_notes_on_correct_layers():
    for layer in (MultiHeadAttention, MultiHeadAttention.init(96, 3, rng=0)):
        report = check_attention(layer)
        assert report.ok and not any("also equals" in n for n in report.notes), report


def test_diagnoses_table_and_public_names():
    from attnlib import DIAGNOSES as top_level
    from attnlib import AttentionReport as top_report

    assert top_level is DIAGNOSES and top_report is AttentionReport
    assert set(attnlib.checker.OK_CODES) == {"ok", "qk_norm", "soft_cap", "attention_sink", "position_bias"}
    for code in DIAGNOSES:
        assert AttentionReport(code, "").ok == (code in attnlib.checker.OK_CODES)


STABLE = [(qk_norm_l2(10.0), "qk_norm"), (qk_norm_rms, "qk_norm"), (soft_capped(50.0), "soft_cap"),
          (sink_per_head, "attention_sink"), (alibi, "position_bias"), (fixed(0.2), "fixed_scale"),
          (mscale_squared, "constant_multiple"), (mask_multiplied, "mask_not_renormalised"),
          (mask_added, "mask_added_boolean"), (mask_blocked_convention, "mask_inverted"), (blhd, "error")]


@pytest.mark.parametrize("fn, code", STABLE, ids=[c for _, c in STABLE])
def test_new_verdicts_are_stable_over_20_seeds(fn, code):
    assert [check_attention(fn, rng=seed).diagnosis for seed in range(20)] == [code] * 20

"""Classic scale bugs, fixed factors, other non-attention and unusable functions, in numpy.

Each function differs from correct attention by the one thing its comment names; the expected code is that
thing's meaning in the lead's table. Fixed factors are constants that do not follow d_k (`fixed_scale`), never
a width the probe could use: a hard-coded 1/√512 (512 = 8 heads × 64, a width the default probe uses) would be
both `fixed_scale` and `sqrt_d_model` at that probe, so it is left out.

Cannot be told apart, so left out: ``w = softmax(z); return (w @ v) / t, w`` (the output scaled: `scaled_values`)
is the same function as ``w = softmax(z); return (w / t) @ v, w`` (the weights scaled after the softmax, the
unscaled ones returned: `scale_after_softmax`); in both, v enters the product unscaled and the returned weights
sum to 1. Only scaling v itself before the product (which a checker can watch) is kept as `scaled_values`.
"""

from __future__ import annotations

import math

import numpy as np

from ._common import LAYOUT_WORDS, Entry, kt, softmax


def _attend(z, v):
    w = softmax(z)
    return w @ v, w


def no_scale(q, k, v):
    return _attend(q @ kt(k), v)


def no_scale_float16(q, k, v):
    q, k, v = (np.asarray(a, dtype=np.float16) for a in (q, k, v))
    return _attend(q @ kt(k), v)


def one_over_dk(q, k, v):
    return _attend(q @ kt(k) / q.shape[-1], v)


def times_sqrt_dk(q, k, v):
    return _attend(q @ kt(k) / k.shape[-1] ** -0.5, v)  # the flipped exponent


def sqrt_d_model_4d(q, k, v):
    """q: (batch, heads, L, d_k): d_model = heads · d_k."""
    B, H, L, d_k = q.shape
    return _attend(np.einsum("bhld,bhsd->bhls", q, k) / math.sqrt(H * d_k), v)


def sqrt_d_model_merged_width(q, k, v):
    d_model = q.shape[1] * q.shape[3]  # (B, H, L, d_k)
    if q.ndim != 4:
        raise ValueError("expects (batch, heads, L, d_k)")
    return softmax(q @ kt(k) * d_model**-0.5) @ v


def axis_L(q, k, v):
    return _attend(q @ kt(k) / math.sqrt(q.shape[-2]), v)  # q.shape[-2] is L


def axis_S(q, k, v):
    return _attend(q @ kt(k) / math.sqrt(k.shape[-2]), v)  # k.shape[-2] is S


def axis_dv(q, k, v):
    return _attend(q @ kt(k) / math.sqrt(v.shape[-1]), v)  # v.shape[-1] is d_v


def axis_heads(q, k, v):
    B, H, L, d = q.shape
    return _attend(q @ kt(k) / math.sqrt(H), v)  # the head count, not d


def axis_batch(q, k, v):
    B, H, L, d = q.shape
    return _attend(q @ kt(k) / math.sqrt(B), v)  # the batch size, not d


def fixed_0_2(q, k, v):
    return _attend(q @ kt(k) * 0.2, v)


def fixed_0_03(q, k, v):
    return _attend(q @ kt(k) * 0.03, v)


def fixed_64(q, k, v):
    return _attend(q @ kt(k) * 64**-0.5, v)  # hard-coded head size 64


def fixed_128(q, k, v):
    return _attend(q @ kt(k) / math.sqrt(128), v)  # hard-coded head size 128


def scale_default_0125(q, k, v, scale=0.125):
    """scale: not a mask; its default is a hard-coded 1/√64."""
    return _attend(q @ kt(k) * scale, v)


QUERY_PRE_ATTN_SCALAR = 144  # Gemma 2 27B: d_model / num_heads = 4608 / 32, while its head_dim is 128


def gemma_query_pre_attn_scalar(q, k, v):
    q = q * QUERY_PRE_ATTN_SCALAR**-0.5
    return _attend(q @ kt(k), v)


YARN_MSCALE = 0.1 * math.log(32) + 1.0  # YaRN with factor 32 (gpt-oss): 1.3466; the logits carry mscale²


def yarn_mscale(q, k, v):
    return _attend(q @ kt(k) * (YARN_MSCALE**2 / math.sqrt(q.shape[-1])), v)


def tau_default_2(q, k, v, tau=2.0):
    """tau: a temperature, not a mask; its default 2.0 halves every logit."""
    return _attend(q @ kt(k) / (tau * math.sqrt(q.shape[-1])), v)


def quarter_power(q, k, v):
    return _attend(q @ kt(k) / q.shape[-1] ** 0.25, v)


def over_log_dk(q, k, v):
    return _attend(q @ kt(k) / math.log(q.shape[-1]), v)


def scale_after_softmax(q, k, v):
    w = softmax(q @ kt(k)) / math.sqrt(q.shape[-1])
    return w @ v, w


def scaled_values(q, k, v):
    w = softmax(q @ kt(k))
    return w @ (v / math.sqrt(q.shape[-1])), w



def softmax_over_queries(q, k, v):
    w = softmax(q @ kt(k) / math.sqrt(q.shape[-1]), axis=-2)
    return w @ v, w


def softmax_whole_matrix(q, k, v):
    """One softmax over every (query, key) pair of a head, not over each query's keys."""
    z = q @ kt(k) / math.sqrt(q.shape[-1])
    e = np.exp(z - z.max(axis=(-2, -1), keepdims=True))
    w = e / e.sum(axis=(-2, -1), keepdims=True)
    return w @ v, w


def squared_logits(q, k, v):
    w = softmax((q @ kt(k) / math.sqrt(q.shape[-1])) ** 2)
    return w @ v, w


def relu_normalised(q, k, v):
    r = np.maximum(q @ kt(k) / math.sqrt(q.shape[-1]), 0) + 1e-6
    w = r / r.sum(-1, keepdims=True)
    return w @ v, w


def sigmoid_attention(q, k, v):
    w = 1 / (1 + np.exp(-(q @ kt(k) / math.sqrt(q.shape[-1]))))
    return w @ v, w


def sqrt_d_model_masked(q, k, v, mask=None):
    """q: (batch, heads, L, d_k); mask True = may attend (lesson 09's exercise with its mask fixed)."""
    batch, heads, L, d_k = q.shape
    z = np.einsum("bhld,bhsd->bhls", q, k) / math.sqrt(heads * d_k)
    if mask is not None:
        z = np.where(mask, z, -np.inf)
    w = softmax(z)
    return np.einsum("bhls,bhsd->bhld", w, v), w


def linear_attention(q, k, v):
    """Kernelised "linear attention": elu(x)+1 features, normalised, no softmax."""
    def phi(x):
        return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0)))

    a = phi(q) @ kt(phi(k))
    w = a / a.sum(-1, keepdims=True)
    return w @ v, w


def raises(q, k, v):
    raise RuntimeError("not implemented yet")


def returns_none(q, k, v):
    softmax(q @ kt(k) / math.sqrt(q.shape[-1])) @ v  # noqa: B018 (forgot the return)


def returns_string(q, k, v):
    return "softmax(q k^T / sqrt(d)) v"


def returns_nan(q, k, v):
    return np.full(q.shape[:-1] + (v.shape[-1],), np.nan)


def returns_transposed(q, k, v):
    out = softmax(q @ kt(k) / math.sqrt(q.shape[-1])) @ v
    return np.swapaxes(out, -1, -2)  # (..., d_v, L)


def blhd_layout(q, k, v):
    """q, k, v: (batch, L, heads, d): the HF / flash-attn layout."""
    w = softmax(np.einsum("blhd,bshd->bhls", q, k) / math.sqrt(q.shape[-1]))
    return np.einsum("bhls,bshd->blhd", w, v)


def head_first_merged(q, k, v):
    """q, k, v: (batch, heads, L, d); returns the heads merged: (batch, L, heads·d_v)."""
    B, H, L, d = q.shape
    out = softmax(q @ kt(k) / math.sqrt(d)) @ v
    return out.transpose(0, 2, 1, 3).reshape(B, L, H * v.shape[-1])


F = "numpy_bugs"
H16 = 3e-2  # relative tolerance on a number measured from float16 weights
ENTRIES = [
    # proof: softmax(q·kᵀ), factor 1 at every d_k.
    Entry("np_no_scale", no_scale, "no_scale", F, full=True),
    # proof: the same in float16 (half precision does not change a verdict).
    Entry("np_no_scale_float16", no_scale_float16, "no_scale", F),
    # proof: z / q.shape[-1] = z / d_k.
    Entry("np_one_over_dk", one_over_dk, "one_over_dk", F, full=True),
    # proof: z / d_k^-½ = z · √d_k.
    Entry("np_times_sqrt_dk", times_sqrt_dk, "times_sqrt_dk", F),
    # proof: 4-D only, z / √(H·d_k): the model width at the probe.
    Entry("np_sqrt_d_model", sqrt_d_model_4d, "sqrt_d_model", F, full=True),
    # proof: z · (H·d_k)^-½ from shape[1]·shape[3] of (B, H, L, d_k); raises on anything but 4-D.
    Entry("np_sqrt_d_model_width", sqrt_d_model_merged_width, "sqrt_d_model", F),
    # proof: 4-D, z / √(H·d_k), mask taken correctly (where -inf, safe softmax): the scale is the only bug.
    Entry("np_sqrt_d_model_masked", sqrt_d_model_masked, "sqrt_d_model", F),
    # proof: z / √L (q.shape[-2] is the query count).
    Entry("np_axis_L", axis_L, "wrong_axis", F, full=True),
    # proof: z / √S (k.shape[-2] is the key count).
    Entry("np_axis_S", axis_S, "wrong_axis", F),
    # proof: z / √d_v (v.shape[-1]).
    Entry("np_axis_dv", axis_dv, "wrong_axis", F),
    # proof: 4-D only, z / √H.
    Entry("np_axis_heads", axis_heads, "wrong_axis", F),
    # proof: 4-D only, z / √B.
    Entry("np_axis_batch", axis_batch, "wrong_axis", F),
    # proof: factor 0.2 at every d_k and head count.
    Entry("np_fixed_0_2", fixed_0_2, "fixed_scale", F, measure=(("factor or head size", (0.2, 25.0), 1e-2),), full=True),
    # proof: factor 0.03 at every d_k (1/0.03² = 1111.1 is no width).
    Entry("np_fixed_0_03", fixed_0_03, "fixed_scale", F, measure=(("factor or head size", (0.03, 1111.1), 1e-2),)),
    # proof: factor 64^-½ = 0.125 at every d_k: a fixed head size of 64.
    Entry("np_fixed_64", fixed_64, "fixed_scale", F, measure=(("head size or factor", (64.0, 0.125), 1e-2),), full=True),
    # proof: factor 128^-½ at every d_k.
    Entry("np_fixed_128", fixed_128, "fixed_scale", F, measure=(("head size or factor", (128.0, 128**-0.5), 1e-2),)),
    # proof: scale (not a mask) left at its default 0.125 = 64^-½ at every d_k: a fixed head size of 64.
    Entry("np_scale_default_0125", scale_default_0125, "fixed_scale", F,
          measure=(("head size or factor", (64.0, 0.125), 1e-2),)),
    # proof: q · 144^-½ (a config constant), factor 1/12 at every d_k.
    Entry("np_gemma_query_pre_attn_scalar", gemma_query_pre_attn_scalar, "fixed_scale", F,
          measure=(("head size or factor", (144.0, 1 / 12), 1e-2),)),
    # proof: factor m/√d_k with m = YaRN mscale² = 1.8133 at every d_k.
    Entry("np_yarn_mscale", yarn_mscale, "constant_multiple", F, measure=(("m", (YARN_MSCALE**2,), 1e-2),), full=True),
    # proof: tau (not a mask) left at its default 2.0: factor 0.5/√d_k, a fixed multiple m = 0.5.
    Entry("np_tau_default_2", tau_default_2, "constant_multiple", F, measure=(("m", (0.5,), 1e-2),)),
    # proof: factor d_k^-¼: follows d_k, but as no power or multiple in the table.
    Entry("np_quarter_power", quarter_power, "wrong_scale", F, full=True),
    # proof: factor 1/ln d_k: follows d_k, matches no code in the table.
    Entry("np_over_log_dk", over_log_dk, "wrong_scale", F),
    # proof: softmax(z) / √d_k returned as the weights: rows sum to d_k^-½ ≠ 1.
    Entry("np_scale_after_softmax", scale_after_softmax, "scale_after_softmax", F, full=True),
    # proof: weights = softmax(z) (rows sum to 1) returned, output = weights @ (v/√d_k).
    Entry("np_scaled_values", scaled_values, "scaled_values", F, full=True),
    # proof: softmax over axis -2 (the queries): columns sum to 1, not rows.
    Entry("np_softmax_over_queries", softmax_over_queries, "not_attention", F, full=True),
    # proof: one softmax over the whole (L, S) matrix: each row sums to its share, not to 1.
    Entry("np_softmax_whole_matrix", softmax_whole_matrix, "not_attention", F),
    # proof: softmax of (z/√d)²: log-weights are quadratic in q·k, not linear.
    Entry("np_squared_logits", squared_logits, "not_attention", F),
    # proof: relu(z)/sum: weights are not exp of anything linear in q·k.
    Entry("np_relu_normalised", relu_normalised, "not_attention", F),
    # proof: sigmoid(z) without normalisation: rows do not sum to a constant.
    Entry("np_sigmoid", sigmoid_attention, "not_attention", F),
    # proof: weights = φ(q)·φ(k)ᵀ normalised, φ = elu + 1: no exponential of q·k at all.
    Entry("np_linear_attention", linear_attention, "not_attention", F),
    # proof: raises on every call.
    Entry("np_raises", raises, "error", F),
    # proof: returns None on every call.
    Entry("np_returns_none", returns_none, "error", F),
    # proof: returns a string.
    Entry("np_returns_string", returns_string, "error", F),
    # proof: returns NaN everywhere on plain float64 input.
    Entry("np_returns_nan", returns_nan, "error", F),
    # proof: returns (..., d_v, L), never (..., L, d_v) (L ≠ d_v in any probe that keeps d_v > S).
    Entry("np_returns_transposed", returns_transposed, "error", F),
    # proof: einsum over (B, L, H, d): given (B, H, L, d) with L ≠ S the "h" axes (L vs S) cannot broadcast, and
    # fewer than 4 axes do not fit the subscripts: it raises on every probe layout (a layout error).
    Entry("np_blhd_layout", blhd_layout, "error", F, words=LAYOUT_WORDS, full=True),
    # proof: 4-D only (unpacks B, H, L, d) and returns (B, L, H·d_v), never (..., L, d_v) (a layout error).
    Entry("np_head_first_merged", head_first_merged, "error", F, words=LAYOUT_WORDS),
]

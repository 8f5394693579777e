"""Correct numpy attention in many styles: every entry computes softmax(q·kᵀ/√d_k) over the keys, then @ v, with
d_k = q.shape[-1], and takes a mask only where a parameter is named or documented as one (True = may attend).
Each is `ok` by construction, whatever its dtype (the table: half precision never changes a verdict) and whatever
extra parameter it has at its default (tau, temp, heads, scale, dropout_p, is_causal are not masks)."""

from __future__ import annotations

import math

import numpy as np

from ._common import Entry, kt, softmax


def matmul_swapaxes(q, k, v):
    w = softmax(q @ kt(k) / math.sqrt(q.shape[-1]))
    return w @ v, w


def einsum_4d(q, k, v):
    """(B, H, L, d) only; returns the output alone."""
    b, h, L, d = q.shape
    w = softmax(np.einsum("bhld,bhsd->bhls", q, k) / np.sqrt(d))
    return np.einsum("bhls,bhsd->bhld", w, v)


def three_d_only(q, k, v):
    """(batch, L, d) arrays only."""
    w = softmax(np.einsum("bld,bsd->bls", q, k) / math.sqrt(q.shape[2]))
    return np.einsum("bls,bsd->bld", w, v)


def two_d_only(q, k, v):
    """(L, d) arrays only: q @ k.T."""
    w = softmax(q @ k.T / np.sqrt(k.shape[1]))
    return w @ v


def matmul_scale_q_first(q, k, v):
    q = q * q.shape[-1] ** -0.5  # the scale folded into q before the product: the same logits
    return np.matmul(softmax(np.matmul(q, kt(k))), v)


def scale_split_over_q_and_k(q, k, v):
    d = q.shape[-1]
    z = (q / d**0.25) @ kt(k / d**0.25)  # d^-1/4 on each side: (q·k)/√d
    return softmax(z) @ v


def logsumexp_weights(q, k, v):
    z = q @ kt(k) / np.sqrt(q.shape[-1])
    m = z.max(-1, keepdims=True)
    lse = m + np.log(np.exp(z - m).sum(-1, keepdims=True))
    w = np.exp(z - lse)
    return w @ v, w


def float32_inside(q, k, v):
    q, k, v = (np.asarray(a, dtype=np.float32) for a in (q, k, v))
    w = softmax(q @ kt(k) / np.float32(math.sqrt(q.shape[-1])))
    return w @ v, w


def float16_inside(q, k, v):
    """The whole computation in numpy float16 (returns float16)."""
    q, k, v = (np.asarray(a, dtype=np.float16) for a in (q, k, v))
    w = softmax(q @ kt(k) / np.float16(math.sqrt(q.shape[-1])))
    return w @ v, w


def float16_out_only(q, k, v):
    q16, k16, v16 = (np.asarray(a, dtype=np.float16) for a in (q, k, v))
    w = softmax((q16 * np.float16(q.shape[-1] ** -0.5)) @ kt(k16))
    return (w @ v16).astype(np.float64)


class CallableObject:
    """A plain callable object (not a layer: no projections)."""

    def __call__(self, q, k, v):
        d_k = k.shape[-1]
        w = softmax(q @ kt(k) / math.sqrt(d_k))
        return w @ v


def mask_where_inf(q, k, v, mask=None):
    """mask: True = may attend."""
    z = q @ kt(k) / math.sqrt(q.shape[-1])
    if mask is not None:
        z = np.where(mask, z, -np.inf)
    w = softmax(z)  # a fully masked row gets zeros
    return w @ v, w


def mask_required_positional(q, k, v, mask):
    """mask (required): True = may attend."""
    z = np.where(mask, q @ kt(k) / math.sqrt(q.shape[-1]), -np.inf)
    return softmax(z) @ v


def mask_eq_zero(q, k, v, mask=None):
    """mask: 1/True = may attend, 0/False = blocked."""
    z = q @ kt(k) / math.sqrt(q.shape[-1])
    if mask is not None:
        z = np.where(np.asarray(mask) == 0, -np.inf, z)
    return softmax(z) @ v


def mask_float32_fill_1e9(q, k, v, mask=None):
    """mask: True = may attend. Computed in float32, where -1e9 is finite: exp(-1e9 - max) is exactly 0."""
    q, k, v = (np.asarray(a, dtype=np.float32) for a in (q, k, v))
    z = q @ kt(k) / np.float32(math.sqrt(q.shape[-1]))
    if mask is not None:
        z = np.where(mask, z, np.float32(-1e9))
    e = np.exp(z - z.max(-1, keepdims=True))
    w = e / e.sum(-1, keepdims=True)
    return w @ v, w


def mask_float16_inf(q, k, v, mask=None):
    """mask: True = may attend. In float16 throughout, with -inf (exact in float16) and a guarded softmax."""
    q, k, v = (np.asarray(a, dtype=np.float16) for a in (q, k, v))
    z = q @ kt(k) / np.float16(math.sqrt(q.shape[-1]))
    if mask is not None:
        z = np.where(mask, z, np.float16(-np.inf))
    w = softmax(z)
    return w @ v, w


def mask_fill_1e4(q, k, v, mask=None):
    """mask: True = may attend. -1e4 is finite in float16 (max 65504) and exp(-1e4 - max) is exactly 0."""
    z = q @ kt(k) / math.sqrt(q.shape[-1])
    if mask is not None:
        z = np.where(mask, z, -1e4)
    e = np.exp(z - z.max(-1, keepdims=True))
    w = e / e.sum(-1, keepdims=True)
    return w @ v, w


def mask_2d_only(q, k, v, mask=None):
    """mask: (L, S) only, True = may attend."""
    z = q @ kt(k) / math.sqrt(q.shape[-1])
    if mask is not None:
        if mask.ndim != 2:
            raise ValueError("mask must be (L, S)")
        z = np.where(mask, z, -np.inf)
    return softmax(z) @ v


def flash_style(q, k, v, softmax_scale=None, causal=False):
    """flash-attn's argument names: softmax_scale (None = 1/√d), causal."""
    if softmax_scale is None:
        softmax_scale = q.shape[-1] ** -0.5
    z = q @ kt(k) * softmax_scale
    if causal:
        z = np.where(np.tril(np.ones(z.shape[-2:], dtype=bool)), z, -np.inf)
    return softmax(z) @ v


def keyword_attn_mask(q, k, v, *, attn_mask=None):
    """attn_mask (keyword only): True = may attend."""
    z = q @ kt(k) / math.sqrt(q.shape[-1])
    if attn_mask is not None:
        z = np.where(attn_mask, z, -np.inf)
    return softmax(z) @ v


def tau_param(q, k, v, tau=1.0):
    """tau: a temperature (1.0 = plain attention), not a mask."""
    return softmax(q @ kt(k) / (tau * math.sqrt(q.shape[-1]))) @ v


def temp_param(q, k, v, temp=1.0):
    return softmax(q @ kt(k) / math.sqrt(q.shape[-1]) / temp) @ v


def heads_param(q, k, v, heads=1):
    """q, k, v with the heads merged in the last axis (..., L, heads·d); heads=1 is plain attention."""
    def split(x):
        return np.swapaxes(x.reshape(x.shape[:-1] + (heads, x.shape[-1] // heads)), -2, -3)

    qh, kh, vh = split(q), split(k), split(v)
    w = softmax(qh @ kt(kh) / math.sqrt(qh.shape[-1]))
    out = np.swapaxes(w @ vh, -2, -3)
    return out.reshape(out.shape[:-2] + (-1,))


def scale_param(q, k, v, scale=None):
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    return softmax(q @ kt(k) * scale) @ v


def dropout_p_param(q, k, v, dropout_p=0.0):
    w = softmax(q @ kt(k) / math.sqrt(q.shape[-1]))
    if dropout_p > 0:
        keep = np.random.default_rng(0).random(w.shape) >= dropout_p
        w = w * keep / (1 - dropout_p)
    return w @ v


def is_causal_param(q, k, v, is_causal=False):
    z = q @ kt(k) / math.sqrt(q.shape[-1])
    if is_causal:
        L, S = z.shape[-2:]
        z = np.where(np.tril(np.ones((L, S), dtype=bool)), z, -np.inf)
    return softmax(z) @ v


F = "numpy_correct"
# proof, every entry: logits = (q·kᵀ)·d_k^-1/2 with d_k = q.shape[-1] (= k.shape[-1]), softmax over the last
# (key) axis, weights @ v, output unscaled; masks (where taken) put -inf (or an exact-zero weight) on the False
# keys only and leave each open row summing to 1. So the code's meaning is `ok`.
ENTRIES = [
    Entry("np_matmul_swapaxes", matmul_swapaxes, "ok", F, full=True),
    Entry("np_einsum_4d", einsum_4d, "ok", F),  # 4-D only: B, H, L, d = q.shape; /√d
    Entry("np_three_d_only", three_d_only, "ok", F),  # (B, L, d) einsum, q.shape[2] is d_k there
    Entry("np_two_d_only", two_d_only, "ok", F),  # q @ k.T / √(k.shape[1]); 2-D so k.shape[1] is d_k
    Entry("np_scale_q_first", matmul_scale_q_first, "ok", F),  # (q·d^-½)·kᵀ = q·kᵀ/√d
    Entry("np_scale_split_q_k", scale_split_over_q_and_k, "ok", F),  # (q d^-¼)·(k d^-¼)ᵀ = q·kᵀ/√d
    Entry("np_logsumexp", logsumexp_weights, "ok", F),  # exp(z - logsumexp z) is softmax(z)
    Entry("np_float32", float32_inside, "ok", F),  # same formula in float32
    Entry("np_float16", float16_inside, "ok", F, full=True),  # same formula in float16 (half never changes a verdict)
    Entry("np_float16_out_only", float16_out_only, "ok", F),  # float16, output cast back to float64
    Entry("np_callable_object", CallableObject(), "ok", F),  # __call__ with the same formula
    Entry("np_mask_where_inf", mask_where_inf, "ok", F, full=True),  # where(mask, z, -inf): True keys kept
    Entry("np_mask_required", mask_required_positional, "ok", F),  # mask without a default, same where
    Entry("np_mask_eq_zero", mask_eq_zero, "ok", F),  # where(mask == 0, -inf, z): True = attend
    Entry("np_mask_f32_fill_1e9", mask_float32_fill_1e9, "ok", F),  # -1e9 in float32: masked weight exactly 0
    Entry("np_mask_float16_inf", mask_float16_inf, "ok", F),  # float16 where(-inf) + guarded softmax
    Entry("np_mask_fill_1e4", mask_fill_1e4, "ok", F),  # -1e4 fits float16; blocked weight exactly 0 in every dtype
    Entry("np_mask_2d_only", mask_2d_only, "ok", F),  # accepts only an (L, S) mask, same where
    Entry("np_flash_style", flash_style, "ok", F),  # softmax_scale=None → d^-½, causal=False
    Entry("np_kw_attn_mask", keyword_attn_mask, "ok", F),  # attn_mask named a mask, True = attend
    Entry("np_tau", tau_param, "ok", F, full=True),  # tau=1.0 left at default: z/(1·√d)
    Entry("np_temp", temp_param, "ok", F),  # temp=1.0 at default
    Entry("np_heads", heads_param, "ok", F),  # heads=1 at default: one head of the whole last axis
    Entry("np_scale_none", scale_param, "ok", F),  # scale=None means d^-½
    Entry("np_dropout_p", dropout_p_param, "ok", F),  # dropout_p=0.0: no dropout
    Entry("np_is_causal", is_causal_param, "ok", F),  # is_causal=False: no mask
]

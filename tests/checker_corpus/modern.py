"""What 2024-2026 models do, in numpy: QK-norm, logit soft-capping, attention sinks, position biases. Each is a
recognised variant (ok=True) with the measurement the table asks for where it is a fixed number of the code (the
gain g, the cap c). A sink's mass and a bias depend on the probe's q and k, so for those the message must only
name what it measured (the words "sink", "bias").

QK-norm with RMS norm is written as Qwen3 / Gemma 3 do: RMSNorm (weight 1) on each head's q and k, then the usual
1/√d_k. Its gain on the unit vectors is √d_k (logits = √d_k·q̂·k̂), so no single g is asserted for it.
Left out: QK-norm with a per-channel norm weight that is not uniform (the logits are then Σ γᵢ² q̂ᵢ k̂ᵢ, not
g·q̂·k̂), soft-capping on top of a fixed scale (Gemma 2 with query_pre_attn_scalar: two codes at once).

Left out as marginal: Gemma 2's cap of 50 computed in float16. The cap bends a logit s by s - 50·tanh(s/50),
about 0.07 at s = 8 and 0.4 at s = 15, while float16 weights underflow once a key is about 16 nats below the row's
largest, so the bend must be read from a few hundredths in float16 log-weights; bfloat16 (float32's range) is kept.

Cannot be told apart, so left out: a bias that depends on the query position only (b_i added to row i): a
softmax is unchanged by adding a constant to a row, so it is the same function as no bias (`ok`), not
`position_bias`.
"""

from __future__ import annotations

import math

import numpy as np

from ._common import Entry, kt, softmax


def _l2(x, eps=1e-12):
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), eps)


def _rms(x, eps=1e-6):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)


def qk_l2_gain_10(q, k, v):
    """Cosine-similarity attention: unit q, k per head, a fixed gain of 10."""
    w = softmax(10.0 * _l2(q) @ kt(_l2(k)))
    return w @ v, w


def qk_l2_kept_sqrt_dk(q, k, v):
    """QK-norm added to standard attention, the 1/√d_k left in: logits q̂·k̂/√d_k, so |logit| ≤ 1/√d_k."""
    w = softmax(_l2(q) @ kt(_l2(k)) / np.sqrt(q.shape[-1]))
    return w @ v, w


def qk_l2_no_gain(q, k, v):
    """Cosine similarity used as the logit, no gain at all: |logit| ≤ 1."""
    return softmax(_l2(q) @ kt(_l2(k))) @ v


def qk_l2_gain_4_out_only(q, k, v):
    return softmax(4.0 * (_l2(q) @ kt(_l2(k)))) @ v


def qk_rms_per_head(q, k, v):
    """Qwen3 / Gemma 3: RMSNorm on each head's q and k (weight 1), then 1/√d_k."""
    q, k = _rms(q), _rms(k)
    w = softmax(q @ kt(k) / math.sqrt(q.shape[-1]))
    return w @ v, w


def qk_rms_gain(q, k, v):
    """RMSNorm with a uniform learned weight γ = 2.5 on q and k, then 1/√d_k: logits = γ²·q̂·k̂/√d_k."""
    q, k = 2.5 * _rms(q), 2.5 * _rms(k)
    return softmax(q @ kt(k) / math.sqrt(q.shape[-1])) @ v


def qk_l2_float16(q, k, v):
    """Cosine attention, gain 10, in float16."""
    q, k, v = (np.asarray(a, dtype=np.float16) for a in (q, k, v))
    w = softmax(np.float16(10.0) * (_l2(q, eps=1e-4) @ kt(_l2(k, eps=1e-4))))
    return w @ v, w


def soft_cap(cap):
    def fn(q, k, v):
        s = q @ kt(k) / math.sqrt(q.shape[-1])
        w = softmax(cap * np.tanh(s / cap))
        return w @ v, w

    fn.__name__ = f"soft_cap_{cap:g}"
    return fn


def soft_cap_masked(q, k, v, mask=None):
    """Cap 30, then mask: True = may attend."""
    s = 30.0 * np.tanh(q @ kt(k) / math.sqrt(q.shape[-1]) / 30.0)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = softmax(s)
    return w @ v, w


def gpt_oss_sink_masked(q, k, v, mask=None):
    """One sink logit (1.0) per row's softmax; mask True = may attend (a fully masked row gives all to the sink)."""
    z = q @ kt(k) / math.sqrt(q.shape[-1])
    if mask is not None:
        z = np.where(mask, z, -np.inf)
    sink = np.full(z.shape[:-1] + (1,), 1.0)
    w = softmax(np.concatenate([z, sink], axis=-1))[..., :-1]
    return w @ v, w


def soft_cap_5_float16(q, k, v):
    """A tight cap (5) computed in numpy float16."""
    q, k, v = (np.asarray(a, dtype=np.float16) for a in (q, k, v))
    s = q @ kt(k) / np.float16(math.sqrt(q.shape[-1]))
    w = softmax(np.float16(5.0) * np.tanh(s / np.float16(5.0)))
    return w @ v, w


def gpt_oss_sink(q, k, v):
    """q, k, v: (B, H, L, d). One learned sink logit per head joins each row's softmax, then is dropped."""
    B, H, L, d = q.shape
    sinks = np.linspace(-1.0, 1.5, H)  # the learned per-head parameters, fixed here
    z = q @ kt(k) / math.sqrt(d)
    sink_col = np.broadcast_to(sinks[:, None, None], (B, H, L, 1))
    w = softmax(np.concatenate([z, sink_col], axis=-1))[..., :-1]  # rows now sum below 1
    return w @ v, w


def gpt_oss_sink_shared_out_only(q, k, v):
    """One sink logit (0.5) for every head, written with an explicit denominator; output only."""
    z = q @ kt(k) / math.sqrt(q.shape[-1])
    m = np.maximum(z.max(-1, keepdims=True), 0.5)
    e = np.exp(z - m)
    return (e / (e.sum(-1, keepdims=True) + np.exp(0.5 - m))) @ v


def softmax_one(q, k, v):
    """"softmax1" / quiet attention: exp(z) / (1 + Σ exp(z)), z = q·kᵀ/√d_k (a sink logit of 0)."""
    z = q @ kt(k) / math.sqrt(q.shape[-1])
    m = np.maximum(z.max(-1, keepdims=True), 0.0)
    e = np.exp(z - m)
    w = e / (np.exp(-m) + e.sum(-1, keepdims=True))
    return w @ v, w


def alibi(q, k, v):
    """q, k, v: (B, H, L, d). Symmetric ALiBi: head h adds -m_h·|i - j|, m_h = 2^(-8h/H)."""
    B, H, L, d = q.shape
    S = k.shape[-2]
    slopes = 2.0 ** (-8.0 * np.arange(1, H + 1) / H)
    dist = np.abs(np.arange(L)[:, None] - np.arange(S)[None, :])
    z = q @ kt(k) / math.sqrt(d) - slopes[:, None, None] * dist
    w = softmax(z)
    return w @ v, w


_REL_TABLE = np.random.default_rng(1234).normal(0.0, 1.0, 17)  # a learned relative-position table, fixed


def key_position_bias(q, k, v):
    """A learned bias per key position (here -0.3·j): the same for every query and head."""
    S = k.shape[-2]
    w = softmax(q @ kt(k) / math.sqrt(q.shape[-1]) - 0.3 * np.arange(S))
    return w @ v, w


def relative_bias(q, k, v):
    """A learned bias per clipped offset j - i in [-8, 8], shared by the heads."""
    L, S = q.shape[-2], k.shape[-2]
    offset = np.clip(np.arange(S)[None, :] - np.arange(L)[:, None], -8, 8) + 8
    w = softmax(q @ kt(k) / math.sqrt(q.shape[-1]) + _REL_TABLE[offset])
    return w @ v, w


F = "modern"
ENTRIES = [
    # proof: logits = 10·q̂·k̂ with q̂, k̂ unit per row (L2 over d_k): qk_norm with g = 10.
    Entry("np_qk_l2_g10", qk_l2_gain_10, "qk_norm", F, measure=(("g", (10.0,), 1e-2),), full=True),
    # proof: logits = q̂·k̂/√d_k: gain 1/√d_k ≤ 1 at every d_k, no weight can exceed another by e^(2/√d_k).
    Entry("np_qk_l2_kept_sqrt_dk", qk_l2_kept_sqrt_dk, "qk_norm_small_gain", F, full=True),
    # proof: logits = q̂·k̂ (cosine), gain exactly 1: qk_norm_small_gain (the boundary case g ≤ 1).
    Entry("np_qk_l2_no_gain", qk_l2_no_gain, "qk_norm_small_gain", F),
    # proof: logits = 4·q̂·k̂, output only: qk_norm with g = 4.
    Entry("np_qk_l2_g4_out", qk_l2_gain_4_out_only, "qk_norm", F, measure=(("g", (4.0,), 1e-2),)),
    # proof: q, k RMS-normalised per row over d_k, then the standard 1/√d_k: qk_norm (Qwen3 style).
    Entry("np_qk_rms_per_head", qk_rms_per_head, "qk_norm", F, full=True),
    # proof: q, k RMS-normalised over d_k with a uniform weight 2.5, then 1/√d_k: qk_norm (fixed gain).
    Entry("np_qk_rms_gain_2_5", qk_rms_gain, "qk_norm", F),
    # proof: 10·q̂·k̂ in float16: qk_norm g = 10 (half precision does not change a verdict).
    Entry("np_qk_l2_float16", qk_l2_float16, "qk_norm", F, measure=(("g", (10.0,), 3e-2),)),
    # proof: s = q·kᵀ/√d_k, then 50·tanh(s/50) before the softmax (Gemma 2's cap).
    Entry("np_soft_cap_50", soft_cap(50.0), "soft_cap", F, measure=(("cap", (50.0,), 2e-2),)),
    # proof: the same with c = 30 (Grok-1's cap).
    Entry("np_soft_cap_30", soft_cap(30.0), "soft_cap", F, measure=(("cap", (30.0,), 2e-2),), full=True),
    # proof: the same with c = 5 (a tight cap).
    Entry("np_soft_cap_5", soft_cap(5.0), "soft_cap", F, measure=(("cap", (5.0,), 2e-2),)),
    # proof: 5·tanh(s/5) in float16 (half precision does not change a verdict; the bend shows at |s| ≈ 2-4).
    Entry("np_soft_cap_5_float16", soft_cap_5_float16, "soft_cap", F, measure=(("cap", (5.0,), 5e-2),)),
    # proof: 30·tanh(s/30), then where(mask, ·, -inf) with True = may attend: soft_cap, masking correct.
    Entry("np_soft_cap_masked", soft_cap_masked, "soft_cap", F, measure=(("cap", (30.0,), 2e-2),)),
    # proof: softmax over [where(mask, q·kᵀ/√d_k, -inf), 1.0], sink dropped: a sink, masking correct (the open
    # entries sum to 1 minus the sink's share, as in an unmasked row).
    Entry("np_sink_masked", gpt_oss_sink_masked, "attention_sink", F, words=("sink",), full=True),
    # proof: softmax over [q·kᵀ/√d_k, sink_h], sink column dropped: rows sum below 1 by the sink's share.
    Entry("np_sink_per_head", gpt_oss_sink, "attention_sink", F, words=("sink",), full=True),
    # proof: e^z / (Σe^z + e^0.5), z = q·kᵀ/√d_k: one sink logit 0.5 in the denominator.
    Entry("np_sink_shared_out", gpt_oss_sink_shared_out_only, "attention_sink", F, words=("sink",)),
    # proof: e^z / (1 + Σe^z), z = q·kᵀ/√d_k: a sink logit of 0 in the denominator.
    Entry("np_softmax_one", softmax_one, "attention_sink", F, words=("sink",)),
    # proof: q·kᵀ/√d_k − 0.3·j: an additive bias from the key position only.
    Entry("np_key_position_bias", key_position_bias, "position_bias", F, words=("bias",)),
    # proof: q·kᵀ/√d_k − m_h·|i−j|: an additive bias that depends on positions and head only.
    Entry("np_alibi", alibi, "position_bias", F, words=("bias",), full=True),
    # proof: q·kᵀ/√d_k + T[clip(j−i)]: a bias from positions only.
    Entry("np_relative_bias", relative_bias, "position_bias", F, words=("bias",)),
]

"""Attention written in torch (functions on tensors q (..., L, d_k), k (..., S, d_k), v (..., S, d_v)). torch is
imported inside each function, so this module imports without torch; the test skips these entries then.

Correct code in half precision (.half(), .bfloat16()) is `ok` (the table: half precision never changes a verdict).
Left out: a -inf masked_fill followed by plain torch.softmax (a fully masked row is NaN in every precision: whether
that is "masking correct" the table does not say).
"""

from __future__ import annotations

import math

from ._common import LAYOUT_WORDS, Entry


def _torch():
    import torch
    import torch.nn.functional as F

    return torch, F


def _kt(k):
    return k.transpose(-2, -1)


# ------------------------------------------------------------------ correct


def matmul(q, k, v):
    torch, _ = _torch()
    w = torch.softmax(q @ _kt(k) / math.sqrt(q.size(-1)), dim=-1)
    return w @ v, w


def einsum(q, k, v):
    torch, _ = _torch()
    w = torch.einsum("...ld,...sd->...ls", q, k).mul(q.shape[-1] ** -0.5).softmax(-1)
    return torch.einsum("...ls,...sd->...ld", w, v)


def two_d_only(q, k, v):
    """(L, d) tensors only: q @ k.T."""
    torch, _ = _torch()
    return torch.softmax(q @ k.T / math.sqrt(k.shape[1]), dim=1) @ v


def bmm_3d(q, k, v):
    """(batch, L, d) tensors only: torch.bmm."""
    torch, _ = _torch()
    w = torch.softmax(torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.size(2)), dim=2)
    return torch.bmm(w, v), w


def bf16_softmax_in_float32(q, k, v):
    """bfloat16 matmuls, softmax upcast to float32 (as most LLM code does), weights cast back to bfloat16."""
    torch, _ = _torch()
    q, k, v = q.bfloat16(), k.bfloat16(), v.bfloat16()
    w = torch.softmax((q @ _kt(k)) * q.size(-1) ** -0.5, dim=-1, dtype=torch.float32).to(q.dtype)
    return w @ v, w


def baddbmm_3d(q, k, v):
    """(batch, L, d) only: the scale as baddbmm's alpha (as in Hugging Face's older attention code)."""
    torch, _ = _torch()
    B, L, d = q.shape
    z = torch.baddbmm(torch.empty(B, L, k.size(1), dtype=q.dtype), q, k.transpose(1, 2), beta=0.0, alpha=d**-0.5)
    return torch.softmax(z, dim=-1) @ v


def sdpa(q, k, v):
    _, F = _torch()
    return F.scaled_dot_product_attention(q, k, v)


def sdpa_mask(q, k, v, mask=None):
    """mask: True = may attend (SDPA's boolean convention)."""
    _, F = _torch()
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def masked_fill_inf_safe(q, k, v, mask=None):
    """mask: True = may attend."""
    torch, _ = _torch()
    z = q @ _kt(k) / math.sqrt(q.size(-1))
    if mask is not None:
        z = z.masked_fill(~mask, float("-inf"))
    w = torch.softmax(z, dim=-1).nan_to_num(0.0)  # a fully masked row: zeros
    return w @ v, w


def masked_fill_finfo_min(q, k, v, mask=None):
    """mask: True = may attend. Hugging Face style: blocked logits REPLACED by finfo(dtype).min."""
    torch, _ = _torch()
    z = q @ _kt(k) / math.sqrt(q.size(-1))
    if mask is not None:
        z = z.masked_fill(~mask, torch.finfo(z.dtype).min)
    w = torch.softmax(z, dim=-1)
    return w @ v, w


def half(q, k, v):
    torch, _ = _torch()
    q, k, v = q.half(), k.half(), v.half()
    w = torch.softmax(q @ _kt(k) / math.sqrt(q.size(-1)), dim=-1)
    return w @ v, w


def bfloat16(q, k, v):
    torch, _ = _torch()
    q, k, v = q.bfloat16(), k.bfloat16(), v.bfloat16()
    w = torch.softmax(q @ _kt(k) / math.sqrt(q.size(-1)), dim=-1)
    return w @ v, w


def sdpa_half_cast_back(q, k, v):
    _, F = _torch()
    return F.scaled_dot_product_attention(q.half(), k.half(), v.half()).to(q.dtype)


def sdpa_mask_half(q, k, v, mask=None):
    """SDPA in float16 with a boolean mask (True = may attend), output cast back."""
    _, F = _torch()
    return F.scaled_dot_product_attention(q.half(), k.half(), v.half(), attn_mask=mask).to(q.dtype)


def sdpa_bfloat16(q, k, v):
    _, F = _torch()
    return F.scaled_dot_product_attention(q.bfloat16(), k.bfloat16(), v.bfloat16())


def float32(q, k, v):
    torch, _ = _torch()
    q, k, v = q.float(), k.float(), v.float()
    w = torch.softmax(q @ _kt(k) * q.size(-1) ** -0.5, dim=-1)
    return w @ v, w


def dropout_p_param(q, k, v, dropout_p=0.0):
    _, F = _torch()
    return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p)


def is_causal_param(q, k, v, is_causal=False):
    _, F = _torch()
    return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)


def temperature_param(q, k, v, temperature=1.0):
    torch, _ = _torch()
    return torch.softmax(q @ _kt(k) / (math.sqrt(q.size(-1)) * temperature), dim=-1) @ v


# ------------------------------------------------------------------ scale bugs


def no_scale(q, k, v):
    torch, _ = _torch()
    w = torch.softmax(q @ _kt(k), dim=-1)
    return w @ v, w


def times_sqrt_dk(q, k, v):
    torch, _ = _torch()
    w = torch.softmax(q @ _kt(k) / k.size(-1) ** -0.5, dim=-1)
    return w @ v, w


def one_over_dk(q, k, v):
    torch, _ = _torch()
    return torch.softmax(q @ _kt(k) / q.size(-1), dim=-1) @ v


def one_over_dk_half(q, k, v):
    torch, _ = _torch()
    q, k, v = q.half(), k.half(), v.half()
    w = torch.softmax(q @ _kt(k) / q.size(-1), dim=-1)
    return w @ v, w


def sqrt_d_model(q, k, v):
    """q: (batch, heads, L, d_k)."""
    torch, _ = _torch()
    b, h, L, d = q.shape
    w = torch.softmax(q @ _kt(k) / math.sqrt(h * d), dim=-1)
    return w @ v, w


def sqrt_d_model_bf16(q, k, v):
    """q: (batch, heads, L, d_k), computed in bfloat16."""
    _, F = _torch()
    b, h, L, d = q.shape
    return F.scaled_dot_product_attention(q.bfloat16(), k.bfloat16(), v.bfloat16(), scale=(h * d) ** -0.5).double()


def axis_dv(q, k, v):
    torch, _ = _torch()
    w = torch.softmax(q @ _kt(k) / math.sqrt(v.size(-1)), dim=-1)
    return w @ v, w


def gpt2_value_size(q, k, v):
    """Hugging Face GPT-2's line: attn_weights / torch.full([], value.size(-1) ** 0.5)."""
    torch, _ = _torch()
    z = torch.matmul(q, k.transpose(-1, -2))
    z = z / torch.full([], v.size(-1) ** 0.5, dtype=z.dtype)
    w = torch.nn.functional.softmax(z, dim=-1)
    return torch.matmul(w, v), w


def axis_L_sdpa(q, k, v):
    _, F = _torch()
    return F.scaled_dot_product_attention(q, k, v, scale=q.size(-2) ** -0.5)


def scale_after_softmax(q, k, v):
    torch, _ = _torch()
    w = torch.softmax(q @ _kt(k), dim=-1) / math.sqrt(q.size(-1))
    return w @ v, w


def scaled_values(q, k, v):
    torch, _ = _torch()
    w = torch.softmax(q @ _kt(k), dim=-1)
    return w @ (v / math.sqrt(q.size(-1))), w


def softmax_dim_minus_2(q, k, v):
    torch, _ = _torch()
    w = torch.softmax(q @ _kt(k) / math.sqrt(q.size(-1)), dim=-2)
    return w @ v, w


def sqrt_dk_plus_one(q, k, v):
    _, F = _torch()
    return F.scaled_dot_product_attention(q, k, v, scale=1.0 / (math.sqrt(q.size(-1)) + 1.0))


def fixed_128_sdpa(q, k, v):
    _, F = _torch()
    return F.scaled_dot_product_attention(q, k, v, scale=128**-0.5)


DEEPSEEK_MSCALE = 0.1 * math.log(40) + 1.0  # YaRN factor 40 (DeepSeek-V3): 1.3689; softmax_scale *= mscale²


def deepseek_mscale_sdpa(q, k, v):
    _, F = _torch()
    return F.scaled_dot_product_attention(q, k, v, scale=q.size(-1) ** -0.5 * DEEPSEEK_MSCALE**2)


# ------------------------------------------------------------------ masks


def masked_fill_1e9(q, k, v, mask=None):
    """mask: True = may attend. masked_fill(-1e9) in the input's dtype: torch refuses it on a half tensor."""
    torch, _ = _torch()
    z = q @ _kt(k) / math.sqrt(q.size(-1))
    if mask is not None:
        z = z.masked_fill(~mask, -1e9)
    return torch.softmax(z, dim=-1) @ v


def where_1e9(q, k, v, mask=None):
    """mask: True = may attend. torch.where with -1e9 in the input dtype: -inf in float16, silently."""
    torch, _ = _torch()
    z = q @ _kt(k) / math.sqrt(q.size(-1))
    if mask is not None:
        z = torch.where(mask, z, -1e9)
    return torch.softmax(z, dim=-1) @ v


def sdpa_mask_as_float(q, k, v, mask=None):
    """mask: True = may attend (handed to SDPA as numbers, which SDPA ADDS to the logits)."""
    _, F = _torch()
    return F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else mask.to(q.dtype))


def not_renormalised(q, k, v, mask=None):
    """mask: True = may attend."""
    torch, _ = _torch()
    w = torch.softmax(q @ _kt(k) / math.sqrt(q.size(-1)), dim=-1)
    if mask is not None:
        w = w * mask
    return w @ v, w


def sdpa_mask_inverted(q, k, v, mask=None):
    """Scaled dot-product attention. mask: True = may attend."""
    _, F = _torch()
    return F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else ~mask)


def masked_fill_inverted(q, k, v, mask=None):
    """mask: True = may attend."""
    torch, _ = _torch()
    z = q @ _kt(k) / math.sqrt(q.size(-1))
    if mask is not None:
        z = z.masked_fill(mask, float("-inf"))
    w = torch.softmax(z, dim=-1).nan_to_num(0.0)
    return w @ v, w


# ------------------------------------------------------------------ modern


def qk_normalize_sdpa_10(q, k, v):
    """The issue's example: F.normalize on q and k, SDPA with a fixed scale of 10."""
    _, F = _torch()
    return F.scaled_dot_product_attention(F.normalize(q, dim=-1), F.normalize(k, dim=-1), v, scale=10.0)


def qk_normalize_masked(q, k, v, mask=None):
    """F.normalize q and k, SDPA with scale 10 and a boolean mask (True = may attend)."""
    _, F = _torch()
    return F.scaled_dot_product_attention(F.normalize(q, dim=-1), F.normalize(k, dim=-1), v, attn_mask=mask,
                                          scale=10.0)


def qk_rms_norm(q, k, v):
    """Qwen3: RMSNorm (weight 1) on each head's q and k, then SDPA's 1/√d_k."""
    _, F = _torch()
    d = q.size(-1)
    return F.scaled_dot_product_attention(F.rms_norm(q, (d,), eps=1e-6), F.rms_norm(k, (d,), eps=1e-6), v)


def qk_l2_half(q, k, v):
    """Cosine attention with gain 10 in float16."""
    torch, F = _torch()
    q, k, v = F.normalize(q.half(), dim=-1), F.normalize(k.half(), dim=-1), v.half()
    w = torch.softmax(10.0 * (q @ _kt(k)), dim=-1)
    return w @ v, w


def soft_cap(cap):
    def fn(q, k, v):
        torch, _ = _torch()
        s = q @ _kt(k) / math.sqrt(q.size(-1))
        w = torch.softmax(torch.tanh(s / cap) * cap, dim=-1)
        return w @ v, w

    fn.__name__ = f"torch_soft_cap_{cap:g}"
    return fn


def soft_cap_bf16(q, k, v):
    """Gemma 2's cap (50) with bfloat16 matmuls and a float32 softmax."""
    torch, _ = _torch()
    q, k, v = q.bfloat16(), k.bfloat16(), v.bfloat16()
    s = (q @ _kt(k)).float() * q.size(-1) ** -0.5
    w = torch.softmax(50.0 * torch.tanh(s / 50.0), dim=-1).to(q.dtype)
    return w @ v


def gpt_oss_sink(q, k, v):
    """gpt-oss's sdpa: q, k, v (B, H, L, d); a learned sink logit per head joins the softmax, then is dropped."""
    torch, _ = _torch()
    B, H, L, d = q.shape
    sinks = torch.linspace(-0.5, 2.0, H, dtype=q.dtype)
    z = q @ _kt(k) * d**-0.5
    z = torch.cat([z, sinks.reshape(1, H, 1, 1).expand(B, H, L, 1)], dim=-1)
    z = z - z.max(dim=-1, keepdim=True).values
    w = torch.softmax(z, dim=-1)[..., :-1]
    return w @ v


def gpt_oss_sink_bf16(q, k, v):
    """The same sink attention in bfloat16 (gpt-oss runs in bfloat16), weights returned."""
    torch, _ = _torch()
    q, k, v = q.bfloat16(), k.bfloat16(), v.bfloat16()
    B, H, L, d = q.shape
    sinks = torch.linspace(-0.5, 2.0, H).to(q.dtype)
    z = torch.cat([q @ _kt(k) * d**-0.5, sinks.reshape(1, H, 1, 1).expand(B, H, L, 1)], dim=-1)
    w = torch.softmax(z.float(), dim=-1)[..., :-1].to(q.dtype)
    return w @ v, w


def alibi_sdpa(q, k, v):
    """ALiBi as a float attn_mask (SDPA adds it): q, k, v (B, H, L, d)."""
    torch, F = _torch()
    B, H, L, d = q.shape
    S = k.size(-2)
    slopes = 2.0 ** (-8.0 * torch.arange(1, H + 1, dtype=q.dtype) / H)
    dist = (torch.arange(L)[:, None] - torch.arange(S)[None, :]).abs().to(q.dtype)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=-slopes[:, None, None] * dist)


# ------------------------------------------------------------------ layouts


def blhd_layout(q, k, v):
    """q, k, v: (batch, L, heads, d), as Hugging Face hands them to flash attention."""
    _, F = _torch()
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
    return out.transpose(1, 2)


def blhd_einsum(q, k, v):
    """q, k, v: (batch, L, heads, d)."""
    torch, _ = _torch()
    w = torch.einsum("blhd,bshd->bhls", q, k).div(q.size(-1) ** 0.5).softmax(-1)
    return torch.einsum("bhls,bshd->blhd", w, v)


def head_first_merged(q, k, v):
    """q, k, v: (batch, heads, L, d); returns (batch, L, heads·d_v) with the heads merged."""
    _, F = _torch()
    B, H, L, d = q.shape
    out = F.scaled_dot_product_attention(q, k, v)
    return out.transpose(1, 2).reshape(B, L, H * v.size(-1))


def _sdpa_builtin():
    _, F = _torch()
    return F.scaled_dot_product_attention


F_ = "torch_impls"


def T(name, obj, code, **kw):
    return Entry(name, obj, code, F_, torch=True, **kw)


H16 = 3e-2
ENTRIES = [
    # proof (ok entries): softmax over the last axis of q·kᵀ·d_k^-½ (SDPA's default scale is d_k^-½), @ v;
    # masks (where taken) are True = may attend and give blocked keys weight exactly 0.
    T("torch_matmul", matmul, "ok", full=True),
    T("torch_einsum", einsum, "ok"),
    T("torch_sdpa", sdpa, "ok"),
    T("torch_baddbmm_3d", baddbmm_3d, "ok"),  # alpha = d^-½ with beta = 0: q·kᵀ/√d_k
    T("torch_two_d_only", two_d_only, "ok"),  # (L, d) only: k.T is kᵀ there; / √(k.shape[1]) = √d_k
    T("torch_bmm_3d", bmm_3d, "ok"),  # (B, L, d) only: q.size(2) is d_k there
    T("torch_bf16_softmax_f32", bf16_softmax_in_float32, "ok"),  # bfloat16 + float32 softmax, same formula
    T("torch_sdpa_builtin", _sdpa_builtin, "ok", make=True),  # F.scaled_dot_product_attention itself
    T("torch_sdpa_mask", sdpa_mask, "ok", full=True),  # boolean attn_mask: True takes part
    T("torch_masked_fill_inf_safe", masked_fill_inf_safe, "ok"),  # -inf on ~mask, NaN rows → 0
    T("torch_masked_fill_finfo_min", masked_fill_finfo_min, "ok"),  # finfo.min REPLACES (no sum): exact 0 weight
    T("torch_half", half, "ok", full=True),  # the same formula in float16
    T("torch_bfloat16", bfloat16, "ok", full=True),  # the same formula in bfloat16
    T("torch_sdpa_half_cast_back", sdpa_half_cast_back, "ok", full=True),  # SDPA in float16, output cast back
    T("torch_sdpa_bfloat16", sdpa_bfloat16, "ok"),
    T("torch_sdpa_mask_half", sdpa_mask_half, "ok"),  # SDPA in float16 with the boolean mask  # SDPA in bfloat16
    T("torch_float32", float32, "ok"),
    T("torch_dropout_p", dropout_p_param, "ok"),  # dropout_p=0.0 left at default: no dropout
    T("torch_is_causal", is_causal_param, "ok"),  # is_causal=False left at default: no mask
    T("torch_temperature", temperature_param, "ok"),  # temperature=1.0 left at default
    # proof: factor 1.
    T("torch_no_scale", no_scale, "no_scale"),
    # proof: / d_k^-½ = × √d_k.
    T("torch_times_sqrt_dk", times_sqrt_dk, "times_sqrt_dk", full=True),
    # proof: / d_k.
    T("torch_one_over_dk", one_over_dk, "one_over_dk"),
    # proof: / d_k in float16 (half does not change the verdict).
    T("torch_one_over_dk_half", one_over_dk_half, "one_over_dk"),
    # proof: 4-D, / √(H·d_k).
    T("torch_sqrt_d_model", sqrt_d_model, "sqrt_d_model", full=True),
    # proof: 4-D, SDPA scale (H·d_k)^-½ in bfloat16.
    T("torch_sqrt_d_model_bf16", sqrt_d_model_bf16, "sqrt_d_model"),
    # proof: / √d_v.
    T("torch_axis_dv", axis_dv, "wrong_axis"),
    # proof: / √(value.size(-1)) = √d_v (harmless in GPT-2 where d_v = d_k; here d_v ≠ d_k).
    T("torch_gpt2_value_size", gpt2_value_size, "wrong_axis"),
    # proof: SDPA scale L^-½ (q.size(-2) is the query count).
    T("torch_axis_L_sdpa", axis_L_sdpa, "wrong_axis"),
    # proof: softmax(z)/√d_k returned as the weights: rows sum to d_k^-½.
    T("torch_scale_after_softmax", scale_after_softmax, "scale_after_softmax"),
    # proof: weights softmax(z) returned (rows sum to 1), output = weights @ (v/√d_k).
    T("torch_scaled_values", scaled_values, "scaled_values"),
    # proof: softmax over dim -2 (queries).
    T("torch_softmax_dim_-2", softmax_dim_minus_2, "not_attention"),
    # proof: SDPA scale 1/(√d_k + 1): follows d_k, matches no code of the table.
    T("torch_sqrt_dk_plus_one", sqrt_dk_plus_one, "wrong_scale"),
    # proof: SDPA scale 128^-½ at every d_k: a fixed head size.
    T("torch_fixed_128", fixed_128_sdpa, "fixed_scale", measure=(("head size or factor", (128.0, 128**-0.5), 1e-2),)),
    # proof: SDPA scale m·d_k^-½, m = mscale² = 1.8739 fixed.
    T("torch_deepseek_mscale", deepseek_mscale_sdpa, "constant_multiple",
      measure=(("m", (DEEPSEEK_MSCALE**2,), 1e-2),)),
    # proof: masked_fill(~mask, -1e9) in the input dtype: fine in float32/64, torch raises "value cannot be
    # converted to type at::Half without overflow" on float16: the finite fill overflows in half precision.
    T("torch_masked_fill_1e9", masked_fill_1e9, "mask_overflow", full=True),
    # proof: torch.where(mask, z, -1e9) in the input dtype: -1e9 is -inf in float16, so a fully masked row is
    # NaN there while float32/64 give uniform weights: the finite fill overflows.
    T("torch_where_1e9", where_1e9, "mask_overflow"),
    # proof: SDPA with a float attn_mask ADDS it: +1 on open keys, +0 on blocked ones.
    T("torch_sdpa_mask_as_float", sdpa_mask_as_float, "mask_added_boolean", full=True),
    # proof: softmax(z) * mask, not renormalised.
    T("torch_not_renormalised", not_renormalised, "mask_not_renormalised"),
    # proof: attn_mask=~mask under "True = may attend": SDPA blocks the True keys.
    T("torch_sdpa_mask_inverted", sdpa_mask_inverted, "mask_inverted"),
    # proof: masked_fill(mask, -inf) under "True = may attend": blocks the True keys.
    T("torch_masked_fill_inverted", masked_fill_inverted, "mask_inverted"),
    # proof: logits = 10·q̂·k̂ (F.normalize is L2 over d_k): qk_norm g = 10.
    T("torch_qk_normalize_sdpa_10", qk_normalize_sdpa_10, "qk_norm", measure=(("g", (10.0,), 1e-2),), full=True),
    # proof: 10·q̂·k̂ with a boolean mask taken as SDPA does (True = may attend): qk_norm g = 10.
    T("torch_qk_normalize_masked", qk_normalize_masked, "qk_norm", measure=(("g", (10.0,), 1e-2),)),
    # proof: RMS-normalised q, k per head, then d_k^-½: qk_norm.
    T("torch_qk_rms_norm", qk_rms_norm, "qk_norm"),
    # proof: 10·q̂·k̂ in float16: qk_norm g = 10.
    T("torch_qk_l2_half", qk_l2_half, "qk_norm", measure=(("g", (10.0,), H16),)),
    # proof: 50·tanh((q·kᵀ/√d_k)/50) (Gemma 2).
    T("torch_soft_cap_50", soft_cap(50.0), "soft_cap", measure=(("cap", (50.0,), 2e-2),), full=True),
    # proof: 30·tanh(s/30) (Grok-1).
    T("torch_soft_cap_30", soft_cap(30.0), "soft_cap", measure=(("cap", (30.0,), 2e-2),)),
    # proof: 50·tanh((q·kᵀ/√d_k)/50) with bfloat16 inputs (half precision does not change a verdict).
    T("torch_soft_cap_50_bf16", soft_cap_bf16, "soft_cap", measure=(("cap", (50.0,), 5e-2),)),
    # proof: the gpt-oss sink in bfloat16.
    T("torch_sink_bf16", gpt_oss_sink_bf16, "attention_sink", words=("sink",)),
    # proof: a per-head sink logit in the softmax's denominator, column dropped; q·kᵀ·d^-½.
    T("torch_sink", gpt_oss_sink, "attention_sink", words=("sink",), full=True),
    # proof: q·kᵀ/√d_k − m_h·|i−j| (SDPA adds the float mask).
    T("torch_alibi_sdpa", alibi_sdpa, "position_bias", words=("bias",)),
    # proof: expects (B, L, H, d): on (B, H, L, d) probes the transposed batch axes (L vs S) cannot broadcast,
    # and 3-D / 2-D inputs fail the same way or have no axis 2: raises on every probe (a layout error).
    T("torch_blhd_layout", blhd_layout, "error", words=LAYOUT_WORDS),
    # proof: einsum over (B, L, H, d): on (B, H, L, d) probes L ≠ S clash on the "h" axis; other ranks do not
    # fit the subscripts: raises on every probe (a layout error).
    T("torch_blhd_einsum", blhd_einsum, "error", words=LAYOUT_WORDS),
    # proof: 4-D only, returns (B, L, H·d_v) (a layout error).
    T("torch_head_first_merged", head_first_merged, "error", words=LAYOUT_WORDS),
]

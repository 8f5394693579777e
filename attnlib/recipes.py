"""What today's models do to the attention logit, as numpy functions and data.

Introduced in lesson 10. The course explains the 1/√d_k; the models of 2024–2026 add
QK-norm, soft-capping, a scale that is not 1/√head_dim, learned sinks, YaRN's mscale,
length-dependent temperatures and an optimiser-side clip. Each is a short function here,
and ``LOGIT_RECIPES`` records, per named model, which ones it uses and the file each
constant was read from. ``recipe_attention`` applies a recipe to q and k;
tests/test_recipe_parity.py checks it against the models' own code in ``transformers``.

Pure numpy; d is always taken from the arrays.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import NamedTuple

import numpy as np

from ._check import as_float_array, axis_index, check_finite, positive_int, positive_scalar, real_scalar, rng_from
from .core import attention_entropy, softmax

__all__ = [
    "softcap",
    "rms_norm",
    "softmax_with_sink",
    "yarn_mscale",
    "qk_clip",
    "llama4_attn_temperature",
    "logn_scale",
    "LogitRecipe",
    "LOGIT_RECIPES",
    "QK_NORM_KINDS",
    "get_recipe",
    "recipe_logits",
    "recipe_attention",
    "InitEntropy",
    "entropy_at_init",
    "recipe_table",
]

QK_NORM_KINDS = ("none", "per_head_rms", "full_width_rms", "weightless_rms")


def softcap(x, cap) -> np.ndarray:
    """Soft-capping ``cap · tanh(x / cap)`` (Gemma 2, Grok-1), introduced in lesson 10.

    x : (...) logits (already scaled). Lists and ints become float64; float32 stays float32.
    cap : float > 0. Near 0 the map is the identity (slope 1); |output| < cap always;
        its derivative is sech²(x / cap).
    Returns an array of x's shape.
    """
    arr = as_float_array(x, "x")
    cap = positive_scalar(cap, "cap")
    check_finite(arr, "x", allow_neg_inf=True)
    c = arr.dtype.type(cap)
    return c * np.tanh(arr / c)


def rms_norm(x, gain=None, eps=1e-6, axis=-1) -> np.ndarray:
    """RMS normalisation ``x / sqrt(mean(x², axis) + eps) · gain``, introduced in lesson 10.

    x : (..., n, ...) array; the mean runs over ``axis`` (length n).
    gain : None (no gain, as Llama 4's weightless QK-norm), a scalar, or an (n,) array
        multiplied in plainly. Gemma stores w and multiplies by (1 + w): pass ``1 + w``
        yourself; this function does not add the 1.
    eps : float >= 0 added to the mean square (the models use 1e-6 or 1e-5).
    Returns an array of x's shape; with eps = 0 each slice has RMS |gain|.
    """
    arr = as_float_array(x, "x")
    if arr.ndim == 0:
        raise ValueError("x must have at least one dimension; got a scalar")
    ax = axis_index(axis, arr.ndim)
    eps = real_scalar(eps, "eps")
    if eps < 0:
        raise ValueError(f"eps must be >= 0; got {eps}")
    check_finite(arr, "x")
    ms = np.mean(np.square(arr), axis=ax, keepdims=True) + arr.dtype.type(eps)
    if (ms == 0).any():
        raise ValueError("x has a slice of all zeros along axis and eps = 0: its RMS is 0, cannot normalise")
    out = arr / np.sqrt(ms)
    if gain is None:
        return out
    g = as_float_array(gain, "gain")
    check_finite(g, "gain")
    if g.ndim == 0:
        return out * g.astype(out.dtype, copy=False)
    if g.shape != (arr.shape[ax],):
        raise ValueError(
            f"gain must be a scalar or have shape ({arr.shape[ax]},) (x's length along axis {axis}); got {g.shape}"
        )
    shape = [1] * arr.ndim
    shape[ax] = g.shape[0]
    return out * g.astype(out.dtype, copy=False).reshape(shape)


def softmax_with_sink(logits, sink, axis=-1) -> np.ndarray:
    """Softmax with a learned sink logit whose column is dropped (gpt-oss), lesson 10.

    p_j = e^{s_j} / (Σ_k e^{s_k} + e^{b}): the same as a softmax over [s, b] without its last
    entry, so each row sums to 1 − p_sink < 1 and the query can attend to "nothing".

    logits : (..., L_q, L_k) scaled logits (any float; -inf = masked). Softmax runs along ``axis``.
    sink : scalar or array broadcastable to logits' shape without ``axis``, e.g. one logit
        per head b_h of shape (H,) becomes ``sink[:, None]`` for logits (B, H, L_q, L_k).
    Returns p : logits' shape; rows sum below 1.
    """
    arr = as_float_array(logits, "logits")
    if arr.ndim == 0:
        raise ValueError("logits must have at least one dimension; got a scalar")
    ax = axis_index(axis, arr.ndim)
    b = as_float_array(sink, "sink")
    check_finite(b, "sink")
    moved = np.moveaxis(arr, ax, -1)
    try:
        b = np.broadcast_to(b, moved.shape[:-1])
    except ValueError:
        raise ValueError(
            f"sink of shape {b.shape} does not broadcast to the logits' shape without axis {axis}: "
            f"{moved.shape[:-1]} (for one sink per head use sink[:, None])"
        ) from None
    dtype = np.result_type(arr.dtype, b.dtype)
    both = np.concatenate([moved.astype(dtype, copy=False), b[..., None].astype(dtype, copy=False)], axis=-1)
    p = softmax(both, axis=-1)[..., :-1]
    return np.moveaxis(p, -1, ax)


def yarn_mscale(factor, mscale=1.0):
    """YaRN's attention factor ``0.1 · mscale · ln(factor) + 1`` for factor > 1, else 1 (lesson 10).

    YaRN multiplies RoPE's cos and sin by it (openai/gpt-oss gpt_oss/torch/model.py, its
    "concentration"), which multiplies q·k by its square; DeepSeek-V3 puts the square into the
    softmax scale instead (deepseek-ai/DeepSeek-V3 inference/model.py).
    factor : float > 0 or array of them, the context-extension factor (gpt-oss 32, DeepSeek-V3 40).
    mscale : real number (DeepSeek-V3's ``mscale_all_dim`` = 1.0).
    Returns a float (or an array of factor's shape).
    """
    mscale = real_scalar(mscale, "mscale")
    if isinstance(factor, numbers.Real) and not isinstance(factor, bool):
        f = positive_scalar(factor, "factor")
        return 0.1 * mscale * math.log(f) + 1.0 if f > 1 else 1.0
    f = as_float_array(factor, "factor")
    check_finite(f, "factor")
    if (f <= 0).any():
        raise ValueError(f"factor must be > 0; found {f.min()}")
    return np.where(f > 1, 0.1 * mscale * np.log(np.maximum(f, 1.0)) + 1.0, 1.0)


def qk_clip(w_q, w_k, max_logit, tau=100.0, alpha=0.5):
    """MuonClip's QK-clip, per head, applied after an optimiser step (Kimi K2), lesson 10.

    For each head h with largest logit S_h > tau: γ_h = tau / S_h, W_q[h] × γ_h^alpha and
    W_k[h] × γ_h^(1 − alpha), so every logit of that head shrinks by γ_h and the largest
    becomes tau. Heads with S_h <= tau are left unchanged.

    w_q, w_k : (H, ...) one slice per head (e.g. (H, d_model, d)); the same H.
    max_logit : (H,) the largest logit each head produced (S_h).
    tau : float > 0, the threshold.   alpha : float in [0, 1], the share of the shrink put on W_q.
        The defaults (100, 0.5) are the values the issue reported from a reference
        implementation; Kimi K2's own tau was not confirmed in code.
    Returns (new_w_q, new_w_k), arrays of the input shapes.
    """
    wq = as_float_array(w_q, "w_q")
    wk = as_float_array(w_k, "w_k")
    s = as_float_array(max_logit, "max_logit")
    tau = positive_scalar(tau, "tau")
    alpha = real_scalar(alpha, "alpha")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must lie in [0, 1]; got {alpha}")
    if wq.ndim == 0 or wk.ndim == 0:
        raise ValueError("w_q and w_k must have a leading head axis (H, ...); got a scalar")
    if wq.shape[0] != wk.shape[0]:
        raise ValueError(
            f"w_q and w_k must have the same number of heads H (axis 0); got {wq.shape[0]} and {wk.shape[0]}"
        )
    if s.shape != (wq.shape[0],):
        raise ValueError(f"max_logit must have shape (H,) = ({wq.shape[0]},), one value per head; got {s.shape}")
    check_finite(s, "max_logit")
    gamma = np.where(s > tau, tau / np.where(s > tau, s, 1.0), 1.0)
    shape = (-1,) + (1,) * (wq.ndim - 1)
    new_q = wq * (gamma**alpha).reshape(shape).astype(wq.dtype)
    new_k = wk * (gamma ** (1.0 - alpha)).reshape((-1,) + (1,) * (wk.ndim - 1)).astype(wk.dtype)
    return new_q, new_k


def _positions(positions) -> np.ndarray:
    p = np.asarray(positions)
    if p.dtype.kind not in "iu":
        raise TypeError(f"positions must be integers (token positions 0, 1, 2, ...); got dtype {p.dtype}")
    if (p < 0).any():
        raise ValueError(f"positions must be >= 0; found {p.min()}")
    return p


def llama4_attn_temperature(positions, floor_scale=8192, attn_scale=0.1) -> np.ndarray:
    """Llama 4's query multiplier in its NoPE layers: 1 + attn_scale · ln(⌊(p + 1)/floor_scale⌋ + 1).

    Introduced in lesson 10. It stays 1 for the first floor_scale − 1 positions, then grows by
    steps like ln of the position. Source: huggingface/transformers
    src/transformers/models/llama4/modeling_llama4.py (attn_scales, NoPE layers only).
    positions : (...) integer token positions p >= 0.
    floor_scale : int >= 1.   attn_scale : real number.
    Returns float64 array of positions' shape (q is multiplied by it, so logits are too).
    """
    p = _positions(positions)
    floor_scale = positive_int(floor_scale, "floor_scale")
    attn_scale = real_scalar(attn_scale, "attn_scale")
    return 1.0 + attn_scale * np.log1p(np.floor((p + 1.0) / floor_scale))


def logn_scale(positions, train_len) -> np.ndarray:
    """Qwen-1's "logn" query multiplier at inference: log_{train_len}(p + 1) beyond train_len, else 1.

    Introduced in lesson 10. A query at 0-based position p (the (p + 1)-th token) is multiplied by
    ln(p + 1) / ln(train_len) once p + 1 > train_len, keeping the softmax's entropy roughly
    level as the context grows past the training length. Source: Qwen-1's modeling_qwen.py
    (``logn_list = [math.log(i, seq_length) if i > seq_length else 1 ...]``, query ×
    ``logn_tensor[:, seq_start:seq_end]``), a Hugging Face Hub file seen in copies, not in a repo.
    positions : (...) integer token positions p >= 0.   train_len : int >= 2.
    Returns float64 array of positions' shape.
    """
    p = _positions(positions)
    train_len = positive_int(train_len, "train_len")
    if train_len < 2:
        raise ValueError(f"train_len must be >= 2 (log base); got {train_len}")
    n = p + 1.0
    return np.where(n > train_len, np.log(np.maximum(n, 1.0)) / math.log(train_len), 1.0)


@dataclasses.dataclass(frozen=True)
class LogitRecipe:
    """How one model turns q and k into attention weights (one row of ``LOGIT_RECIPES``), lesson 10.

    model : display name.   head_dim : the model's q·k dimension per head.
    qk_norm : one of QK_NORM_KINDS. ``gain_convention`` says how the model stores the norm's
        gain ("w": multiply by w, starts at 1; "1+w": Gemma, w starts at 0; "" without gain).
    norm_after_rope : True when the norm comes after RoPE (Llama 4), else before.
    query_pre_attn_scalar : Q when the scale is Q^-½ instead of head_dim^-½ (Gemma).
    fixed_scale : the scale when the model sets a number (Gemma 4: 1.0); wins over the rest.
    yarn_factor, yarn_mscale : YaRN factor f and mscale; the logits gain yarn_mscale(f, m)².
    cap : the soft-cap on the scaled logits, or None.   sinks : one learned sink logit per head.
    source : the files each value was read in ("repo:path (what)").
    notes : what else matters.   unconfirmed : names of fields no source was found for.
    """

    model: str
    head_dim: int
    source: tuple
    qk_norm: str = "none"
    gain_convention: str = ""
    norm_after_rope: bool = False
    query_pre_attn_scalar: float | None = None
    fixed_scale: float | None = None
    yarn_factor: float | None = None
    yarn_mscale: float = 1.0
    cap: float | None = None
    sinks: bool = False
    notes: str = ""
    unconfirmed: tuple = ()

    def __post_init__(self):
        if self.qk_norm not in QK_NORM_KINDS:
            raise ValueError(f"qk_norm must be one of {QK_NORM_KINDS}; got {self.qk_norm!r}")
        positive_int(self.head_dim, "head_dim")
        if self.cap is not None:
            positive_scalar(self.cap, "cap")

    def scale_for(self, d: int) -> float:
        """The softmax scale multiplying q·k when q and k have d dimensions per head."""
        d = positive_int(d, "d")
        if self.fixed_scale is not None:
            return float(self.fixed_scale)
        base = (self.query_pre_attn_scalar if self.query_pre_attn_scalar is not None else d) ** -0.5
        if self.yarn_factor is not None:
            base *= yarn_mscale(self.yarn_factor, self.yarn_mscale) ** 2
        return float(base)

    @property
    def softmax_scale(self) -> float:
        """The effective scale at the model's own head_dim."""
        return self.scale_for(self.head_dim)

    @property
    def scale_ratio(self) -> float:
        """softmax_scale ÷ (1/√head_dim): 1 for the textbook scale."""
        return self.softmax_scale * math.sqrt(self.head_dim)


_TF = "huggingface/transformers:src/transformers/models/"
_GEMMA = "google-deepmind/gemma:gemma/transformer.py"

LOGIT_RECIPES: dict[str, LogitRecipe] = {
    "gpt-2": LogitRecipe(
        model="GPT-2 / BERT (baseline)",
        head_dim=64,
        source=(
            _TF + "gpt2/modeling_gpt2.py (attn_weights / value.size(-1) ** 0.5)",
            _TF + "gpt2/configuration_gpt2.py (n_embd=768, n_head=12 → 64)",
        ),
        notes="the textbook 1/√d_k, nothing else",
    ),
    "llama-3": LogitRecipe(
        model="Llama 3 8B",
        head_dim=128,
        source=(
            "meta-llama/llama3:llama/model.py (ModelArgs dim=4096, n_heads=32; head_dim = dim // n_heads; "
            "scores / math.sqrt(self.head_dim))",
            _TF + "llama/modeling_llama.py (self.scaling = self.head_dim**-0.5)",
        ),
        notes="1/√d_k; RoPE; no norm or cap on the logits",
    ),
    "qwen3": LogitRecipe(
        model="Qwen3",
        head_dim=128,
        qk_norm="per_head_rms",
        gain_convention="w",
        source=(
            _TF + "qwen3/modeling_qwen3.py (q_norm/k_norm = Qwen3RMSNorm(head_dim); scaling = head_dim**-0.5)",
            _TF + "qwen3/configuration_qwen3.py (head_dim=128)",
        ),
        notes="RMSNorm on each head's q and k before RoPE, gain starts at 1; scale kept",
    ),
    "olmo-2": LogitRecipe(
        model="OLMo 2 7B",
        head_dim=128,
        qk_norm="full_width_rms",
        gain_convention="w",
        source=(
            _TF + "olmo2/modeling_olmo2.py (q_norm = Olmo2RMSNorm(num_attention_heads * head_dim))",
            _TF + "olmo2/configuration_olmo2.py (hidden_size=4096, num_attention_heads=32 → 128)",
        ),
        notes="one RMSNorm over all heads' q (H·d wide) before the split; scale kept",
    ),
    "gemma-2-9b": LogitRecipe(
        model="Gemma 2 9B",
        head_dim=256,
        query_pre_attn_scalar=256,
        cap=50.0,
        source=(
            _GEMMA + " (gemma2_9b: head_dim=256, BY_ONE_OVER_SQRT_HEAD_DIM, attn_logits_soft_cap=50.0)",
            _TF + "gemma2/modeling_gemma2.py (scaling = query_pre_attn_scalar**-0.5; softcap after scaling)",
        ),
        notes="final-logit cap 30 too (not on attention)",
    ),
    "gemma-2-27b": LogitRecipe(
        model="Gemma 2 27B",
        head_dim=128,
        query_pre_attn_scalar=144,
        cap=50.0,
        source=(
            _GEMMA + " (gemma2_27b: embed_dim=4608, num_heads=32, head_dim=128, "
            "BY_ONE_OVER_SQRT_EMBED_DIM_DIV_NUM_HEADS → 144, attn_logits_soft_cap=50.0)",
            _TF + "gemma2/modeling_gemma2.py (scaling = query_pre_attn_scalar**-0.5)",
        ),
        notes="scale 144^-½ although head_dim is 128: logits × √(128/144)",
    ),
    "gemma-3-27b": LogitRecipe(
        model="Gemma 3 27B",
        head_dim=128,
        qk_norm="per_head_rms",
        gain_convention="1+w",
        query_pre_attn_scalar=168,
        source=(
            _GEMMA + " (gemma3_27b: embed_dim=5376, num_heads=32, head_dim=128, "
            "BY_ONE_OVER_SQRT_EMBED_DIM_DIV_NUM_HEADS → 168, use_qk_norm=True, attn_logits_soft_cap=None)",
            _TF + "gemma3/modeling_gemma3.py (Gemma3RMSNorm: × (1 + weight), weight starts at 0)",
        ),
        notes="QK-norm replaces Gemma 2's cap",
    ),
    "gemma-4": LogitRecipe(
        model="Gemma 4 (local layers)",
        head_dim=256,
        qk_norm="per_head_rms",
        gain_convention="w",
        fixed_scale=1.0,
        source=(
            _TF + "gemma4/modeling_gemma4.py (Gemma4TextAttention: self.scaling = 1.0; q_norm, k_norm)",
            _TF + "gemma4/configuration_gemma4.py (head_dim=256, global_head_dim=512)",
        ),
        notes="no 1/√d at all: QK-norm bounds each logit by d·gain²; head_dim 256/512 are "
        "Gemma4TextConfig's defaults (checkpoint google/gemma-4-e2b-it), other sizes not checked",
    ),
    "gemma-4-global": LogitRecipe(
        model="Gemma 4 (global layers)",
        head_dim=512,
        qk_norm="per_head_rms",
        gain_convention="w",
        fixed_scale=1.0,
        source=(
            _TF + "gemma4/modeling_gemma4.py (self.scaling = 1.0)",
            _TF + "gemma4/configuration_gemma4.py (global_head_dim=512)",
        ),
        notes="as the local layers, with head_dim 512",
    ),
    "grok-1": LogitRecipe(
        model="Grok-1",
        head_dim=128,
        cap=30.0,
        source=(
            "xai-org/grok-1:run.py (key_size=128, attn_output_multiplier=0.08838834764831845 = 1/√128)",
            "xai-org/grok-1:model.py (MultiHeadAttention: max_attn_val = 30.0, tanh cap after the multiplier)",
        ),
        notes="1/√128, then a cap of 30",
    ),
    "gpt-oss": LogitRecipe(
        model="gpt-oss",
        head_dim=64,
        yarn_factor=32.0,
        sinks=True,
        source=(
            "openai/gpt-oss:gpt_oss/torch/model.py (head_dim=64, sm_scale = 1/sqrt(head_dim), "
            "sinks per head, rope_scaling_factor=32.0, concentration = 0.1·ln(factor) + 1 on cos and sin)",
            _TF + "gpt_oss/modeling_gpt_oss.py (eager_attention_forward: sink column concatenated, then dropped)",
        ),
        notes="YaRN's factor on cos and sin: logits × 1.347² at every length",
    ),
    "deepseek-v3": LogitRecipe(
        model="DeepSeek-V3 (MLA)",
        head_dim=192,
        yarn_factor=40.0,
        yarn_mscale=1.0,
        source=(
            "deepseek-ai/DeepSeek-V3:inference/model.py (MLA: qk_head_dim = 128 + 64, softmax_scale = "
            "qk_head_dim**-0.5 × mscale², mscale = 0.1·mscale·ln(rope_factor) + 1, rope_factor=40, mscale=1.0)",
            _TF + "deepseek_v3/modeling_deepseek_v3.py (yarn_apply_mscale with mscale_all_dim)",
        ),
        notes="q·k over 128 + 64 dims; scale 192^-½ × mscale² (1.87× the plain 192^-½)",
    ),
    "llama-4": LogitRecipe(
        model="Llama 4 Scout (RoPE layers)",
        head_dim=128,
        qk_norm="weightless_rms",
        norm_after_rope=True,
        source=(
            _TF + "llama4/modeling_llama4.py (Llama4TextL2Norm without weight, after RoPE, "
            "in RoPE layers when use_qk_norm; attn_scales in NoPE layers)",
            _TF + "llama4/configuration_llama4.py (head_dim=128, floor_scale=8192, attn_scale=0.1)",
        ),
        notes="NoPE layers: no norm, q × llama4_attn_temperature(p) instead",
    ),
}


def get_recipe(recipe) -> LogitRecipe:
    """Return a LogitRecipe given one or the name of a row of LOGIT_RECIPES (lesson 10)."""
    if isinstance(recipe, LogitRecipe):
        return recipe
    if isinstance(recipe, str):
        try:
            return LOGIT_RECIPES[recipe]
        except KeyError:
            raise ValueError(f"recipe {recipe!r} is not in LOGIT_RECIPES; known: {', '.join(LOGIT_RECIPES)}") from None
    raise TypeError(f"recipe must be a LogitRecipe or a name in LOGIT_RECIPES; got {type(recipe).__name__}")


def _qk_norm(x, kind, gain, name, eps):
    """Apply a recipe's QK-norm to x of shape (..., H, L, d)."""
    if kind == "none":
        if gain is not None:
            raise ValueError(f"{name}_gain was given but the recipe has no QK-norm")
        return x
    if kind == "weightless_rms":
        if gain is not None:
            raise ValueError(f"{name}_gain was given but the recipe's QK-norm has no weight")
        return rms_norm(x, eps=eps)
    if kind == "per_head_rms":
        return rms_norm(x, gain, eps=eps)
    if x.ndim < 3:
        raise ValueError(f"{name} must have shape (..., H, L, d) for a full-width QK-norm; got {x.shape}")
    h, length, d = x.shape[-3:]
    wide = np.moveaxis(x, -3, -2).reshape(*x.shape[:-3], length, h * d)
    if gain is not None:
        g = as_float_array(gain, f"{name}_gain")
        if g.ndim != 0 and g.size != h * d:
            raise ValueError(f"{name}_gain must have H·d = {h * d} entries for a full-width norm; got shape {g.shape}")
        gain = g.reshape(h * d) if g.ndim else g
    wide = rms_norm(wide, gain, eps=eps)
    return np.moveaxis(wide.reshape(*x.shape[:-3], length, h, d), -2, -3)


def recipe_logits(q, k, recipe, *, q_gain=None, k_gain=None, rotate=None, norm_eps=1e-6):
    """The scaled (and capped) logits a recipe gives, before any mask or softmax (lesson 10).

    q : (..., H, L_q, d) and k : (..., H, L_k, d) — the projections before QK-norm and RoPE
        (repeat grouped k heads yourself). d is taken from the arrays.
    recipe : a LogitRecipe or a name in LOGIT_RECIPES.
    q_gain, k_gain : the QK-norm's gain (plain multiply): (d,) per head, (H·d,) full width,
        or None (gain 1). Gemma's (1 + w) convention: pass 1 + w.
    rotate : None or a callable (q, k) -> (q, k) applied where the model applies RoPE
        (after the norm, or before it when recipe.norm_after_rope).
    norm_eps : the QK-norm's eps (a model's ``rms_norm_eps``; it matters when q or k is small).
    Returns logits : (..., H, L_q, L_k).
    """
    r = get_recipe(recipe)
    q = as_float_array(q, "q")
    k = as_float_array(k, "k")
    for name, arr in (("q", q), ("k", k)):
        if arr.ndim < 2:
            raise ValueError(f"{name} must have shape (..., H, L, d); got {arr.shape}")
        check_finite(arr, name)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share d (their last dimension); got q {q.shape}, k {k.shape}")
    if rotate is not None and not callable(rotate):
        raise TypeError(f"rotate must be None or a callable (q, k) -> (q, k); got {type(rotate).__name__}")
    if r.norm_after_rope and rotate is not None:
        q, k = rotate(q, k)
    q = _qk_norm(q, r.qk_norm, q_gain, "q", norm_eps)
    k = _qk_norm(k, r.qk_norm, k_gain, "k", norm_eps)
    if not r.norm_after_rope and rotate is not None:
        q, k = rotate(q, k)
    d = q.shape[-1]
    logits = np.matmul(q, np.swapaxes(k, -1, -2)) * q.dtype.type(r.scale_for(d))
    if r.cap is not None:
        logits = softcap(logits, r.cap)
    return logits


def recipe_attention(q, k, recipe, *, q_gain=None, k_gain=None, sink=None, mask=None, rotate=None, norm_eps=1e-6):
    """Attention weights under a named model's logit recipe (lesson 10).

    Order, as in the models: QK-norm → RoPE (``rotate``) → × scale → soft-cap → mask →
    softmax (with the sink column when the recipe has sinks).
    q, k, q_gain, k_gain, rotate, norm_eps : as in ``recipe_logits``: q (..., H, L_q, d), k (..., H, L_k, d).
    sink : (H,) one sink logit per head; required exactly when ``recipe.sinks``.
    mask : None, or broadcastable to (..., H, L_q, L_k): boolean True = may attend, or float added.
    Returns weights : (..., H, L_q, L_k); rows sum to 1 (below 1 with sinks).
    """
    r = get_recipe(recipe)
    logits = recipe_logits(q, k, r, q_gain=q_gain, k_gain=k_gain, rotate=rotate, norm_eps=norm_eps)
    if mask is not None:
        m = np.asarray(mask)
        try:
            np.broadcast_shapes(m.shape, logits.shape)
        except ValueError:
            raise ValueError(
                f"mask of shape {m.shape} does not broadcast to the logits' shape {logits.shape}"
            ) from None
        if m.dtype.kind == "b":
            logits = np.where(m, logits, -np.inf)
        elif m.dtype.kind == "f":
            check_finite(m, "mask", allow_neg_inf=True)
            logits = logits + m.astype(logits.dtype, copy=False)
        else:
            raise TypeError(f"mask must be boolean (True = may attend) or float (added); got dtype {m.dtype}")
    if r.sinks:
        if sink is None:
            raise ValueError(f"recipe {r.model!r} has learned sinks: pass sink, one logit per head, shape (H,)")
        b = as_float_array(sink, "sink")
        h = logits.shape[-3] if logits.ndim >= 3 else None
        if b.shape != (h,):
            raise ValueError(f"sink must have shape (H,) = ({h},), one logit per head; got {b.shape}")
        return softmax_with_sink(logits, b.astype(logits.dtype, copy=False)[:, None])
    if sink is not None:
        raise ValueError(f"sink was given but recipe {r.model!r} has no sinks")
    return softmax(logits, axis=-1)


class InitEntropy(NamedTuple):
    """Mean attention entropy (nats) over random queries, its standard error, and ln(n_keys)."""

    mean: float
    se: float
    uniform: float


def entropy_at_init(recipe, n_keys=256, n_queries=16, n_heads=16, sink=0.0, rng=None) -> InitEntropy:
    """Softmax entropy at initialisation for unit-RMS random q and k under a recipe (lesson 10).

    q and k have independent N(0, 1) entries (RMS 1 per coordinate) of the recipe's head_dim;
    QK-norm gains are 1 (Gemma's w = 0), no RoPE, no position-dependent temperature. With
    sinks, each head's sink logit is ``sink`` and the entropy counts the sink as one more
    outcome (the row [p, p_sink] sums to 1).
    n_keys, n_queries, n_heads : ints >= 1; each head draws its own keys.   rng : Generator, int seed or None.
    Returns InitEntropy(mean, se, uniform): the mean over all rows, and its standard error from
    the spread of the n_heads independent head means (rows of one head share keys); NaN for one head.
    """
    r = get_recipe(recipe)
    n_keys = positive_int(n_keys, "n_keys")
    n_queries = positive_int(n_queries, "n_queries")
    n_heads = positive_int(n_heads, "n_heads")
    sink = real_scalar(sink, "sink")
    gen = rng_from(rng)
    q = gen.standard_normal((n_heads, n_queries, r.head_dim))
    k = gen.standard_normal((n_heads, n_keys, r.head_dim))
    if r.sinks:
        w = recipe_attention(q, k, r, sink=np.full(n_heads, sink))
        w = np.concatenate([w, np.clip(1.0 - w.sum(axis=-1, keepdims=True), 0.0, None)], axis=-1)
    else:
        w = recipe_attention(q, k, r)
    per_head = attention_entropy(w).mean(axis=-1)
    se = float(per_head.std(ddof=1) / math.sqrt(n_heads)) if n_heads > 1 else float("nan")
    return InitEntropy(float(per_head.mean()), se, math.log(n_keys))


def recipe_table(n_keys=256, n_heads=16, n_queries=16, rng=None) -> list[dict]:
    """One dict per row of LOGIT_RECIPES, for lesson 10's table and figure.

    n_keys, n_heads, n_queries : ints >= 1, passed to ``entropy_at_init`` for every row: each
        row draws q of shape (n_heads, n_queries, head_dim) and k of shape (n_heads, n_keys,
        head_dim), n_heads · n_queries · n_keys logits. The entropy's standard error shrinks
        like 1/√n_heads; more queries per head shrink it too, down to the spread that a
        head's own keys leave.
    rng : Generator, int seed or None; each row gets its own seed drawn from it.
    Keys: name, model, head_dim, softmax_scale, scale_ratio (÷ 1/√head_dim), cap, qk_norm,
    sinks, yarn_factor, entropy and entropy_se (the mean over the n_heads · n_queries rows
    and its SE from the n_heads head means; NaN for one head), uniform (ln n_keys),
    source (tuple of "repo:path (what)").
    """
    n_keys = positive_int(n_keys, "n_keys")
    n_heads = positive_int(n_heads, "n_heads")
    n_queries = positive_int(n_queries, "n_queries")
    seeds = rng_from(rng).integers(0, 2**32, size=len(LOGIT_RECIPES))
    rows = []
    for (name, r), seed in zip(LOGIT_RECIPES.items(), seeds, strict=True):
        e = entropy_at_init(r, n_keys=n_keys, n_queries=n_queries, n_heads=n_heads, rng=int(seed))
        rows.append(
            {
                "name": name,
                "model": r.model,
                "head_dim": r.head_dim,
                "softmax_scale": r.softmax_scale,
                "scale_ratio": r.scale_ratio,
                "cap": r.cap,
                "qk_norm": r.qk_norm,
                "sinks": r.sinks,
                "yarn_factor": r.yarn_factor,
                "entropy": e.mean,
                "entropy_se": e.se,
                "uniform": e.uniform,
                "source": r.source,
            }
        )
    return rows

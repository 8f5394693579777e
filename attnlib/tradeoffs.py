"""Variants of the attention scale and what they do (lessons 04-06).

Pure maths: numpy in, numpy out. Lesson 04 measures logits through real projections
(``projected_logits``); lesson 05 compares the scale 1/d_k^α, layer norm, QK-norm
(Henry et al. 2020), the QK-norm weight cap, and log-n scaling (Chiang & Cholak 2022;
in the form of "Scalable-Softmax", Nakanishi 2025); lesson 06 reuses all of them to answer
interview questions.
"""

from __future__ import annotations

import numpy as np

from ._check import (
    as_float_array,
    axis_index,
    check_finite,
    need_ndim,
    positive_int,
    positive_scalar,
    real_scalar,
    rng_from,
)
from .core import softmax
from .mha import MultiHeadAttention

__all__ = [
    "alpha_scaled_logits",
    "layer_norm",
    "l2_normalize",
    "qk_norm_logits",
    "qk_norm_max_weight",
    "log_n_scaled_softmax",
    "projected_logits",
    "retrieval_trial",
    "ln_dot_variance",
]


def _qk(q, k):
    """Check q (..., L, d_k) and k (..., S, d_k) share d_k; return float arrays."""
    q = as_float_array(q, "q")
    k = as_float_array(k, "k")
    need_ndim(q, "q", 2, "(..., L, d_k)")
    need_ndim(k, "k", 2, "(..., S, d_k)")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must share d_k (their last dimension); got q {q.shape} and k {k.shape}"
        )
    if q.shape[-1] == 0:
        raise ValueError(f"d_k must be positive; q has shape {q.shape}")
    check_finite(q, "q")
    check_finite(k, "k")
    return q, k


def alpha_scaled_logits(q, k, alpha):
    """Logits q kᵀ / d_k^alpha (lesson 05): alpha = 0 raw, ½ the Transformer, 1 muP.

    q : (..., L, d_k), k : (..., S, d_k), alpha : real number in [0, 2].
    Returns logits : (..., L, S).
    """
    q, k = _qk(q, k)
    alpha = real_scalar(alpha, "alpha")
    if not 0.0 <= alpha <= 2.0:
        raise ValueError(f"alpha must lie in [0, 2]; got {alpha}")
    return np.matmul(q, np.swapaxes(k, -1, -2)) / q.shape[-1] ** alpha


def _features(x, axis, eps):
    """Check a (..., d) feature array, its axis and eps; returns (x, axis index, eps)."""
    x = as_float_array(x, "x")
    if x.ndim == 0:
        raise ValueError("x must have at least one dimension (features); got a scalar")
    ax = axis_index(axis, x.ndim)
    eps = positive_scalar(eps, "eps")
    check_finite(x, "x")
    return x, ax, eps


def layer_norm(x, gain=None, bias=None, eps=1e-5, axis=-1):
    """Layer normalisation (lessons 05, 06): (x − mean) / sqrt(var + eps) · gain + bias.

    x : (..., d) array; mean and (biased) variance are taken along ``axis``.
    gain, bias : None or broadcastable to x (learned per feature in a real model).
    Returns an array of x's shape; without gain/bias each slice has mean 0 and
    variance var/(var + eps) ≈ 1, so its squared norm is ≈ d.
    """
    x, ax, eps = _features(x, axis, eps)
    centred = x - x.mean(axis=ax, keepdims=True)
    out = centred / np.sqrt((centred**2).mean(axis=ax, keepdims=True) + eps)
    for name, value in (("gain", gain), ("bias", bias)):
        if value is None:
            continue
        arr = as_float_array(value, name)
        try:
            ok = np.broadcast_shapes(arr.shape, x.shape) == x.shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"{name} of shape {arr.shape} does not broadcast to x's shape {x.shape}")
        out = out * arr if name == "gain" else out + arr
    return out


def l2_normalize(x, eps=1e-12, axis=-1):
    """x / max(‖x‖₂, eps) along ``axis`` (lesson 05): every slice becomes a unit vector.

    x : (..., d). Returns an array of x's shape.
    """
    x, ax, eps = _features(x, axis, eps)
    return x / np.maximum(np.linalg.norm(x, axis=ax, keepdims=True), eps)


def qk_norm_logits(q, k, gain=1.0, norm="l2"):
    """QK-norm logits (lesson 05).

    norm="l2": gain · q̂·k̂ with q̂, k̂ unit vectors (Henry et al. 2020, "Query-Key
        Normalization for Transformers"); each logit lies in [−gain, gain], whatever d_k.
    norm="layer": layer_norm(q)·layer_norm(k) · gain / √d_k (the QK layer-norm of
        Dehghani et al. 2023 and Wortsman et al. 2023, which keeps the 1/√d_k).

    q : (..., L, d_k), k : (..., S, d_k), gain : float > 0 (a learned scalar in a model).
    Returns logits : (..., L, S).
    """
    q, k = _qk(q, k)
    gain = positive_scalar(gain, "gain")
    if norm == "l2":
        qn, kn, scale = l2_normalize(q), l2_normalize(k), gain
    elif norm == "layer":
        qn, kn, scale = layer_norm(q), layer_norm(k), gain / np.sqrt(q.shape[-1])
    else:
        raise ValueError(f"norm must be 'l2' or 'layer'; got {norm!r}")
    return np.matmul(qn, np.swapaxes(kn, -1, -2)) * scale


def qk_norm_max_weight(n, gain=1.0):
    """Largest attention weight any one key can get under L2 QK-norm (lesson 05).

    The logits gain·cos θ lie in [−g, g]; the best case puts one key at +g and the
    other n − 1 at −g, giving e^g / (e^g + (n−1) e^{−g}) = 1 / (1 + (n−1) e^{−2g}).
    With g = 1 this is 1 / (1 + (n−1) e^{−2}).

    n : int >= 1 (number of keys), or an integer array of them.  gain : float > 0.
    Returns a float (or an array shaped like n).
    """
    gain = positive_scalar(gain, "gain")
    arr = np.asarray(n)
    if arr.dtype.kind not in "iu" or (arr < 1).any():
        raise ValueError(f"n must be a whole number of keys >= 1 (or an array of them); got {n!r}")
    out = 1.0 / (1.0 + (arr - 1) * np.exp(-2.0 * gain))
    return float(out) if out.ndim == 0 else out


def log_n_scaled_softmax(logits, s=1.0, n=None):
    """Scalable-Softmax (Nakanishi 2025, lesson 05): softmax(s · ln n · z) along the last axis.

    logits : (..., n) scaled logits z. s : float > 0 (learned per head in the paper).
    n : number of keys used in ln n; default the length of the last axis. Multiplying
        by ln n keeps the top weight from fading as n grows while s times the gap between
        the top logit and the *largest* other logit stays above 1; with random logits that
        gap shrinks as n grows, and the top weight still fades (lesson 05, section 7).
    Returns weights : (..., n).
    """
    z = as_float_array(logits, "logits")
    if z.ndim == 0 or z.shape[-1] == 0:
        raise ValueError(f"logits must have shape (..., n) with n >= 1; got {z.shape}")
    s = positive_scalar(s, "s")
    n = z.shape[-1] if n is None else positive_int(n, "n")
    check_finite(z, "logits", allow_neg_inf=True)
    # ln 1 = 0 would turn a masked -inf into NaN (0 · -inf): keep masked entries at -inf
    masked = np.isneginf(z)
    return softmax(np.where(masked, -np.inf, np.where(masked, 0.0, z) * (s * np.log(n))))


def projected_logits(embed_dim, num_heads, scheme, tokens=128, rng=None):
    """Logits of a freshly initialised MultiHeadAttention on unit-variance inputs (lesson 04).

    Draws x ~ N(0, 1) of shape (tokens, E), W_q/W_k with ``scheme`` (see INIT_SCHEMES)
    and projects: q, k = mha.project(x, x) per head.

    Returns a dict with
      q, k     : (H, tokens, d_k) per-head queries and keys,
      raw      : (H, tokens, tokens) q kᵀ,
      scaled   : (H, tokens, tokens) q kᵀ / √d_k,
      head_dim : d_k = E / H.
    """
    tokens = positive_int(tokens, "tokens")
    gen = rng_from(rng)
    mha = MultiHeadAttention.init(embed_dim, num_heads, scheme, gen)
    x = gen.standard_normal((tokens, mha.embed_dim))
    q, k = mha.project(x, x)
    raw = np.matmul(q, np.swapaxes(k, -1, -2))
    return {"q": q, "k": k, "raw": raw, "scaled": raw / np.sqrt(mha.head_dim), "head_dim": mha.head_dim}


def retrieval_trial(d_k, n_keys, rho, trials, scale=None, rng=None, return_vectors=False):
    """One query, one matching key, n_keys − 1 distractors (lessons 05, 06).

    Components are N(0, 1); the matching key has correlation ``rho`` with the query in
    each component, distractors are independent. Logits are q·k · scale
    (default 1/√d_k); key 0 is the matching one.

    d_k, n_keys, trials : positive ints; rho : in [−1, 1].
    Returns logits : (trials, n_keys); with return_vectors=True also
    q : (trials, d_k) and k : (trials, n_keys, d_k).
    """
    d_k = positive_int(d_k, "d_k")
    n_keys = positive_int(n_keys, "n_keys")
    trials = positive_int(trials, "trials")
    rho = real_scalar(rho, "rho")
    if not -1.0 <= rho <= 1.0:
        raise ValueError(f"rho is a correlation and must lie in [-1, 1]; got {rho}")
    scale = 1.0 / np.sqrt(d_k) if scale is None else positive_scalar(scale, "scale")
    gen = rng_from(rng)
    q = gen.standard_normal((trials, d_k))
    k = gen.standard_normal((trials, n_keys, d_k))
    k[:, 0] = rho * q + np.sqrt(1.0 - rho**2) * k[:, 0]
    logits = np.einsum("td,tnd->tn", q, k) * scale
    return (logits, q, k) if return_vectors else logits


def ln_dot_variance(d):
    """Var(LN(q)·LN(k)) for independent isotropic Gaussian q, k in d dimensions (lesson 05).

    Layer norm (eps → 0) centres each vector, leaving it in a (d−1)-dimensional
    subspace, and fixes its norm at √d. The cosine of two independent directions in
    m dimensions has variance 1/m, so the dot product has variance d² / (d − 1):
    it still grows linearly in d.

    d : int >= 2 (or an integer array). Returns float (or array).
    """
    arr = np.asarray(d)
    if isinstance(d, (bool, np.bool_)) or arr.dtype.kind not in "iu" or (arr < 2).any():
        raise ValueError(f"d must be a whole number >= 2 (layer norm of a 1-vector is 0); got {d!r}")
    out = arr.astype(float) ** 2 / (arr - 1)
    return float(out) if out.ndim == 0 else out

"""How large logits saturate softmax and starve gradients (lessons 01-03).

Pure numpy, built on ``attnlib.core``. Every sampling function takes an ``rng``
(numpy Generator or int seed). The quantities:

* max-probability of an attention row: how close the row is to one-hot;
* ``jacobian_norm``: the Frobenius norm of the softmax Jacobian J = diag(p) − p pᵀ, i.e.
  how strongly the row's probabilities respond to its logits (the gradient that can
  reach the keys);
* ``query_gradient_norm``: the Frobenius norm of ∂p/∂q = J · (scale · K), how strongly
  the row responds to its query vector (what training actually updates).
"""

from __future__ import annotations

import numpy as np

from ._check import as_float_array, check_finite, need_ndim, positive_int, positive_scalar, rng_from
from .core import softmax

__all__ = [
    "WORKED_LOGITS",
    "WORKED_SQRT_DK",
    "jacobian_norm",
    "query_gradient_norm",
    "row_statistics",
    "summarize_rows",
    "sample_row_statistics",
    "at_scale_table",
    "temperature_sweep",
    "standard_dot_products",
]

WORKED_LOGITS = (16.0, 8.0, 4.0)  # the raw scores of the worked example (lesson 03)
WORKED_SQRT_DK = 8.0  # √d_k of the worked example, so d_k = 64


def _sum_of_others(x: np.ndarray) -> np.ndarray:
    """Σ_{j≠i} x_j for non-negative x, without cancellation.

    For every entry but the largest, sum − x_i loses at most a factor 2 (the largest entry is
    in the sum); for the largest it is summed from the rest, which stays accurate even when
    it is 1e-16 of the whole.
    """
    out = x.sum(axis=-1, keepdims=True) - x
    top = np.argmax(x, axis=-1)[..., None]
    rest = x.copy()
    np.put_along_axis(rest, top, 0.0, axis=-1)
    np.put_along_axis(out, top, rest.sum(axis=-1, keepdims=True), axis=-1)
    return out


def jacobian_norm(p) -> np.ndarray:
    """Frobenius norm of the softmax Jacobian diag(p) − p pᵀ for each row (lesson 03).

    p : (..., n) probabilities, each row summing to 1.
    Returns (...,) norms: sqrt(Σ_i (p_i (1 − p_i))² + Σ_{i≠j} p_i² p_j²), with 1 − p_i summed
    from the other entries so that nearly one-hot rows keep full relative precision.
    The norm is 0 for a one-hot row and √(n − 1)/n for a uniform row over n keys.
    """
    p = as_float_array(p, "p")
    if p.ndim == 0:
        raise ValueError("p must be a probability vector of shape (..., n); got a scalar")
    check_finite(p, "p")
    diag = p * _sum_of_others(p)  # p_i (1 − p_i)
    sq = p * p
    off = sq * _sum_of_others(sq)  # Σ_{j≠i} p_i² p_j² for each i
    return np.sqrt(np.sum(diag * diag + off, axis=-1))


def query_gradient_norm(p, k, scale) -> np.ndarray:
    """Frobenius norm of ∂p/∂q for attention rows p = softmax(scale · q Kᵀ) (lesson 03).

    p : (..., L, S) attention weights.   k : (..., S, d_k) keys.   scale : float > 0.
    Row j of J·K is p_j (k_j − k̄) with k̄ = Σ_j p_j k_j, so
    ‖∂p/∂q‖_F = scale · sqrt(Σ_j p_j² ‖k_j − k̄‖²).
    Returns (..., L) norms.
    """
    p = as_float_array(p, "p")
    k = as_float_array(k, "k")
    need_ndim(p, "p", 2, "(..., L, S)")
    need_ndim(k, "k", 2, "(..., S, d_k)")
    if p.shape[-1] != k.shape[-2]:
        raise ValueError(f"p has S={p.shape[-1]} keys per row but k has S={k.shape[-2]} keys (shape {k.shape})")
    scale = positive_scalar(scale, "scale")
    return _query_gradient_norm_gram(p, k @ np.swapaxes(k, -1, -2), scale)


def _query_gradient_norm_gram(p: np.ndarray, gram: np.ndarray, scale: float) -> np.ndarray:
    """‖∂p/∂q‖_F from the keys' Gram matrix G = K Kᵀ (..., S, S): only S×S work per row.

    For most keys ‖k_j − k̄‖² = G_jj − 2 (pG)_j + pᵀGp is accurate. For the top key of a nearly
    one-hot row that difference cancels, so it is recomputed from k_t − k̄ = a k_t − Σ_{m≠t} p_m k_m
    with a = Σ_{m≠t} p_m:  ‖·‖² = a² G_tt − 2a (wG)_t + wᵀGw, w = p with entry t zeroed.
    """
    k_sq = np.diagonal(gram, axis1=-2, axis2=-1)[..., None, :]  # ‖k_j‖², (..., 1, S)
    cross = p @ gram  # k̄ · k_j, (..., L, S)
    kbar_sq = np.sum(cross * p, axis=-1, keepdims=True)  # ‖k̄‖² = pᵀ G p
    dist_sq = np.maximum(k_sq - 2.0 * cross + kbar_sq, 0.0)
    top = np.argmax(p, axis=-1)[..., None]  # (..., L, 1)
    w = p.copy()
    np.put_along_axis(w, top, 0.0, axis=-1)
    a = np.sum(w, axis=-1, keepdims=True)
    wg = w @ gram
    g_tt = np.take_along_axis(np.broadcast_to(k_sq, p.shape), top, axis=-1)
    top_sq = a * a * g_tt - 2.0 * a * np.take_along_axis(wg, top, axis=-1) + np.sum(wg * w, -1, keepdims=True)
    np.put_along_axis(dist_sq, top, np.maximum(top_sq, 0.0), axis=-1)
    return scale * np.sqrt(np.sum(p * p * dist_sq, axis=-1))


def _stats_from_logits(raw: np.ndarray, gram: np.ndarray, scale: float) -> dict:
    p = softmax(raw * scale, axis=-1)
    return {
        "max_prob": p.max(axis=-1),
        "jacobian_norm": jacobian_norm(p),
        "query_grad_norm": _query_gradient_norm_gram(p, gram, scale),
    }


def row_statistics(q, k, scale=None) -> dict:
    """Per-row saturation statistics of attention softmax(scale · q kᵀ) (lesson 03).

    q : (..., L, d_k) queries.   k : (..., S, d_k) keys.
    scale : float > 0; default 1/√d_k. Pass 1.0 for unscaled logits.
    Returns a dict of (..., L) arrays: "max_prob", "jacobian_norm", "query_grad_norm".
    """
    q = as_float_array(q, "q")
    k = as_float_array(k, "k")
    need_ndim(q, "q", 2, "(..., L, d_k)")
    need_ndim(k, "k", 2, "(..., S, d_k)")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share d_k: q has shape {q.shape}, k has shape {k.shape}")
    check_finite(q, "q")
    check_finite(k, "k")
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else positive_scalar(scale, "scale")
    kt = np.swapaxes(k, -1, -2)
    return _stats_from_logits(q @ kt, k @ kt, scale)


def summarize_rows(stats: dict, threshold=0.99) -> dict:
    """Summary numbers from ``row_statistics`` output (lesson 03).

    Returns floats: mean max-probability, share of rows with max-probability > threshold,
    and the median and 90th percentile of the Jacobian norm and the query-gradient norm.
    """
    threshold = positive_scalar(threshold, "threshold")
    out = {
        "mean_max_prob": float(np.mean(stats["max_prob"])),
        "share_saturated": float(np.mean(stats["max_prob"] > threshold)),
    }
    for key in ("jacobian_norm", "query_grad_norm"):
        out[f"{key}_median"] = float(np.median(stats[key]))
        out[f"{key}_p90"] = float(np.percentile(stats[key], 90))
    return out


def sample_row_statistics(d_k, n_rows, n_keys=32, sigma=1.0, rng=None) -> tuple[dict, dict]:
    """Row statistics for random q, k with i.i.d. N(0, σ²) components, unscaled and scaled (lesson 03).

    Draws n_rows queries, in groups of n_keys sharing one set of n_keys keys.
    Returns (unscaled, scaled): two ``row_statistics`` dicts of (n_rows,) arrays,
    computed on the same q and k with scale 1 and 1/√d_k.
    """
    d_k = positive_int(d_k, "d_k")
    n_rows = positive_int(n_rows, "n_rows")
    n_keys = positive_int(n_keys, "n_keys")
    sigma = positive_scalar(sigma, "sigma")
    gen = rng_from(rng)
    groups = -(-n_rows // n_keys)
    q = sigma * gen.standard_normal((groups, n_keys, d_k))
    k = sigma * gen.standard_normal((groups, n_keys, d_k))
    kt = np.swapaxes(k, -1, -2)
    raw, gram = q @ kt, k @ kt  # computed once, shared by both scales
    out = []
    for scale in (1.0, 1.0 / np.sqrt(d_k)):
        stats = _stats_from_logits(raw, gram, scale)
        out.append({key: val.reshape(-1)[:n_rows] for key, val in stats.items()})
    return out[0], out[1]


def at_scale_table(d_ks, n_rows=4096, n_keys=32, rng=None) -> tuple[list, dict]:
    """For each d_k: unscaled and scaled row statistics and their summaries (lesson 03).

    d_ks : sequence of positive ints.   rng : Generator or int seed (one stream for all d_k).
    Returns (rows, raw): rows is a list of dicts {"d_k", "unscaled": summary, "scaled": summary};
    raw maps d_k to the (unscaled, scaled) per-row dicts, for histograms.
    """
    gen = rng_from(rng)
    rows, raw = [], {}
    for d_k in d_ks:
        un, sc = sample_row_statistics(d_k, n_rows, n_keys, rng=gen)
        raw[int(d_k)] = (un, sc)
        rows.append({"d_k": int(d_k), "unscaled": summarize_rows(un), "scaled": summarize_rows(sc)})
    return rows, raw


def temperature_sweep(logits, temperatures) -> tuple[np.ndarray, np.ndarray]:
    """softmax(logits / T) and its entropy for each temperature T (lesson 03).

    logits : (n,) scores.   temperatures : (m,) positive values.
    Returns (probs (m, n), entropy (m,) in nats).
    """
    z = as_float_array(logits, "logits")
    if z.ndim != 1:
        raise ValueError(f"logits must be a vector of shape (n,); got shape {z.shape}")
    temps = as_float_array(temperatures, "temperatures").reshape(-1)
    if temps.size == 0 or not np.all(np.isfinite(temps)) or np.any(temps <= 0):
        raise ValueError("temperatures must be a non-empty array of finite values > 0")
    probs = softmax(z[None, :] / temps[:, None], axis=-1)
    with np.errstate(divide="ignore"):
        logp = np.where(probs > 0, np.log(np.where(probs > 0, probs, 1.0)), 0.0)
    return probs, -np.sum(probs * logp, axis=-1)


def standard_dot_products(d_ks, n, rng=None) -> dict:
    """n samples of a·b for a, b with i.i.d. N(0, 1) components, for each d_k (lessons 01-02).

    With zero means and independence, q·k for σ_q, σ_k is exactly σ_q σ_k · (a·b), so a
    slider can rescale these samples instead of drawing new ones.
    Returns {d_k: (n,) array}.
    """
    from .stats import sample_dot_products

    gen = rng_from(rng)
    return {int(d): sample_dot_products(int(d), n, rng=gen) for d in d_ks}

"""Fitting the weights a function used to the models of attention it might be.

Every fit works on row-centred logs: for weights ``w = softmax(f)`` over a row, ``log w − mean(log w)``
equals ``f − mean(f)``, whatever the normaliser. Entries at or below ``tiny`` (underflowed) are left out.
Shapes: ``z``, ``x``, ``w`` are (..., L, S) arrays over the same rows (keys last).
"""

from __future__ import annotations

import math

import numpy as np


def _centred(x, w, tiny):
    """Row-centred x and log w over the kept entries (w > tiny); rows with < 2 kept entries zeroed.

    x, w : (..., S). Returns xc, yc (same shape, 0 where not kept) and the number of usable rows.
    """
    keep = w > tiny
    n = keep.sum(-1, keepdims=True)
    keep &= n >= 2
    n = np.maximum(keep.sum(-1, keepdims=True), 1)
    lw = np.log(np.where(keep, w, 1.0))
    xc = np.where(keep, x - (np.where(keep, x, 0.0).sum(-1, keepdims=True) / n), 0.0)
    yc = np.where(keep, lw - lw.sum(-1, keepdims=True) / n, 0.0)
    return xc, yc, int(keep.any(-1).sum())


def fit_linear(x, w, tiny):
    """Least-squares g in log w = g·x + row constant: (g, relative residual, usable rows); (None, None, 0) if none.

    x : (..., L, S) feature (q·k, or the cosine of q and k); w : (..., L, S) weights.
    """
    xc, yc, rows = _centred(np.asarray(x, float), np.asarray(w, float), tiny)
    den = float((xc * xc).sum())
    if rows == 0 or den == 0.0:
        return None, None, 0
    g = float((xc * yc).sum()) / den
    tot = float((yc * yc).sum())
    rel = math.sqrt(float(((yc - g * xc) ** 2).sum()) / tot) if tot > 0 else 0.0
    return g, rel, rows


def cosines(q, k, whole=False):
    """q̂·k̂ (..., L, S): cosines of q (..., L, d_k) and k (..., S, d_k), normalised over d_k per head, or with
    ``whole`` over every head's slice together (q, k (B, H, L, d_k): one norm per position, as OLMo 2)."""
    axes = (-3, -1) if whole else (-1,)
    qn = q / np.sqrt((q * q).sum(axes, keepdims=True))
    kn = k / np.sqrt((k * k).sum(axes, keepdims=True))
    return qn @ np.swapaxes(kn, -1, -2)


def fit_soft_cap(z, w, tiny, cap=None):
    """Fit log w = a·tanh(b·z) + row constant: (cap a, b, relative residual). The small-logit slope is a·b.

    z : (..., L, S) q·k; w : (..., L, S) weights (a probe with logits large enough to bend tanh).
    cap : a known a (only b is fitted then).
    """
    z, w = np.asarray(z, float), np.asarray(w, float)
    spread = float(np.abs(z).max()) or 1.0

    def residual(b):
        t, yc, rows = _centred(np.tanh(b * z), w, tiny)
        den = float((t * t).sum())
        if rows == 0 or den == 0.0:
            return math.inf, 0.0
        a = float((t * yc).sum()) / den if cap is None else cap
        tot = float((yc * yc).sum()) or 1.0
        return math.sqrt(float(((yc - a * t) ** 2).sum()) / tot), a

    grid = np.geomspace(1e-3, 30.0, 80) / spread
    best = min(grid, key=lambda b: residual(b)[0])
    for width in (1.3, 1.03, 1.003, 1.0003, 1.00003, 1.000003):  # refine around the best point, narrower each time
        grid = np.geomspace(best / width, best * width, 21)
        best = min(grid, key=lambda b: residual(b)[0])
    rel, a = residual(best)
    return a, float(best), rel


def sink_logits(z, w, c):
    """The sink logit σ each row implies if w = exp(c·z) / (Σ exp(c·z) + exp(σ)): (..., L) array.

    z, w : (..., L, S); rows whose weights sum to 1 (no sink) give -inf.
    """
    r = w.sum(-1)
    m = (c * z).max(-1)
    lse = m + np.log(np.exp(c * z - m[..., None]).sum(-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return lse + np.log1p(-r) - np.log(r)


def fit_bias(z, w, tiny):
    """Fit log w = c·z + B + row constant with B (..., L, S) the same in every draw: (c, residual, B).

    z, w : (R, ..., L, S), R independent draws of q and k at the same sizes. B is returned row-centred
    (NaN where a key was never kept).
    """
    keep = np.all(w > tiny, axis=0, keepdims=True) & np.ones(w.shape, bool)
    ww = np.where(keep, w, 0.0)
    xc, yc, rows = _centred(z, np.where(keep, ww, 0.0), tiny)
    if rows == 0:
        return None, None, None
    xd, yd = xc - xc.mean(0), yc - yc.mean(0)
    den = float((xd * xd).sum())
    if den == 0.0:
        return None, None, None
    c = float((xd * yd).sum()) / den
    tot = float((yd * yd).sum())
    rel = math.sqrt(float(((yd - c * xd) ** 2).sum()) / tot) if tot > 0 else 0.0
    bias = np.where(keep[0], (yc - c * xc).mean(0), np.nan)
    return c, rel, bias


def alibi_slopes(bias):
    """Per-head slopes m (..., H) if bias (..., H, L, S) is −m·|i − j| up to a row constant (queries at
    positions 0..L-1, or L-S.. when they are the last L of the keys), else None."""
    L, S = bias.shape[-2:]
    known = ~np.isnan(bias)
    b = np.where(known, bias, 0.0)
    for offset in (0, S - L):
        f = -np.abs(np.arange(L)[:, None] + offset - np.arange(S)[None, :]).astype(float)
        f = np.where(known, f, 0.0)
        f = np.where(known, f - f.sum(-1, keepdims=True) / np.maximum(known.sum(-1, keepdims=True), 1), 0.0)
        m = (f * b).sum((-1, -2)) / np.maximum((f * f).sum((-1, -2)), 1e-300)
        if np.abs(b - m[..., None, None] * f).max() <= 1e-3 * max(1.0, np.abs(b).max()):
            return m
    return None


def log_weight_points(q, k, weights):
    """Row-centred (q·k, log weight) pairs and their least-squares slope c (lesson 09).

    q : (..., L, d_k), k : (..., S, d_k), weights : (..., L, S) with positive entries.
    For weights = softmax(c·q·kᵀ) the points lie on the line y = c·x; the slope is the
    factor ``check_attention`` reports. Returns (x (n,), y (n,), c).
    """
    q, k, w = (np.asarray(a, dtype=np.float64) for a in (q, k, weights))
    if q.ndim < 2 or k.ndim < 2 or q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q (..., L, d_k) and k (..., S, d_k) must share d_k; got q {q.shape}, k {k.shape}")
    z = q @ np.swapaxes(k, -1, -2)
    if w.shape != z.shape:
        raise ValueError(f"weights must have shape (..., L, S) = {z.shape}; got {w.shape}")
    if not np.all(w > 0):
        raise ValueError("weights must be positive (a log is taken); got zeros or negative entries")
    lw = np.log(w)
    x = (z - z.mean(-1, keepdims=True)).ravel()
    y = (lw - lw.mean(-1, keepdims=True)).ravel()
    return x, y, float(x @ y / (x @ x))

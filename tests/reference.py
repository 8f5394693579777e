"""Plain-loop reference implementations, written independently of attnlib for its tests."""

from __future__ import annotations

import math

import numpy as np


def softmax_ref(row, temperature=1.0):
    """Softmax of a 1-D list with Python floats; all -inf gives zeros."""
    finite = [x for x in row if x != -math.inf]
    if not finite:
        return [0.0] * len(row)
    m = max(finite)
    e = [0.0 if x == -math.inf else math.exp((x - m) / temperature) for x in row]
    s = math.fsum(e)
    return [x / s for x in e]


def sdpa_ref(q, k, v, mask=None, scale=None, temperature=1.0):
    """Loops over every leading index, query and key. q (..., L, d), k (..., S, d), v (..., S, dv)."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    L, S, d, dv = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    scale = 1 / math.sqrt(d) if scale is None else scale
    if mask is not None:
        mask = np.broadcast_to(np.asarray(mask), (*batch, L, S))
    qb, kb, vb = (np.broadcast_to(a, (*batch, *a.shape[-2:])) for a in (q, k, v))
    out = np.zeros((*batch, L, dv))
    weights = np.zeros((*batch, L, S))
    for idx in np.ndindex(*batch):
        for i in range(L):
            row = []
            for j in range(S):
                s = math.fsum(qb[idx][i, c] * kb[idx][j, c] for c in range(d)) * scale
                if mask is not None:
                    mv = mask[idx][i, j]
                    if mask.dtype == bool:
                        s = s if mv else -math.inf
                    else:
                        s = s + float(mv)
                row.append(s)
            p = softmax_ref(row, temperature)
            weights[idx][i] = p
            for c in range(dv):
                out[idx][i, c] = math.fsum(p[j] * vb[idx][j, c] for j in range(S))
    return out, weights


def mha_ref(x_q, x_k, x_v, num_heads, w_in, b_in, w_out, b_out):
    """Multi-head attention for unbatched (L, E) inputs, one head at a time with explicit slices."""
    e = w_in.shape[1]
    dk = e // num_heads
    wq, wk, wv = w_in[:e], w_in[e : 2 * e], w_in[2 * e :]
    bq, bk, bv = b_in[:e], b_in[e : 2 * e], b_in[2 * e :]
    q, k, v = x_q @ wq.T + bq, x_k @ wk.T + bk, x_v @ wv.T + bv
    heads, weights = [], []
    for h in range(num_heads):
        sl = slice(h * dk, (h + 1) * dk)
        o, w = sdpa_ref(q[:, sl], k[:, sl], v[:, sl])
        heads.append(o)
        weights.append(w)
    return np.concatenate(heads, axis=-1) @ w_out.T + b_out, np.stack(weights)

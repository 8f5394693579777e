"""Softmax and scaled dot-product attention in numpy.

Pure maths: numpy arrays in, numpy arrays out. Introduced in lesson 01 (softmax) and
used by every lesson after it.
"""

from __future__ import annotations

import math

import numpy as np

from ._check import (
    as_float_array,
    axis_index,
    check_finite,
    need_ndim,
    positive_scalar,
)

__all__ = ["softmax", "scaled_dot_product_attention", "softmax_jacobian", "attention_entropy"]


def _exp_shifted(z: np.ndarray, axis: int, temperature: float, zmax: np.ndarray, out=None) -> np.ndarray:
    """Write exp((z − zmax) / temperature) into ``out`` (default: z itself); return its sums along ``axis``.

    ``zmax`` is ``z.max(axis, keepdims=True)``; it and ``z`` are overwritten. Rows that are
    entirely -inf (fully masked) become all zeros, and their sum is returned as 1 so that
    dividing by it gives zeros instead of NaN.
    """
    dead = np.isneginf(zmax)
    any_dead = bool(dead.any())
    if any_dead:
        zmax[dead] = 0.0
    z -= zmax  # the largest entry becomes 0: exp never overflows
    if temperature != 1.0:
        with np.errstate(over="ignore"):  # a tiny temperature sends far logits to -inf: exp gives 0
            z /= temperature
    out = z if out is None else out
    np.exp(z, out=out)
    sums = out.sum(axis=axis, keepdims=True)
    if any_dead:
        sums[dead] = 1.0
    return sums


def _softmax_inplace(z: np.ndarray, axis: int, temperature: float) -> np.ndarray:
    """Overwrite float array ``z`` with softmax(z / temperature) along ``axis``; fully -inf rows give 0."""
    z /= _exp_shifted(z, axis, temperature, z.max(axis=axis, keepdims=True))
    return z


def softmax(x, axis=-1, temperature=1.0) -> np.ndarray:
    """Numerically stable softmax(x / temperature) along ``axis`` (lesson 01).

    x : (..., n) array-like of logits. Lists and integer arrays become float64;
        float32 stays float32. ``-inf`` means "masked": probability 0. A slice that
        is entirely ``-inf`` gets all zeros (never NaN). NaN or +inf is an error.
    temperature : float > 0. Above 1 flattens the distribution, below 1 sharpens it.

    Returns p : same shape and float dtype as x, each slice along ``axis`` sums to 1.
    """
    arr = as_float_array(x, "x")
    if arr.ndim == 0:
        raise ValueError("x must have at least one dimension (a vector of logits); got a scalar")
    ax = axis_index(axis, arr.ndim)
    temperature = positive_scalar(temperature, "temperature")
    if arr.shape[ax] == 0:
        raise ValueError(f"x has length 0 along axis {axis}; softmax needs at least one logit")
    check_finite(arr, "x (logits)", allow_neg_inf=True)
    return _softmax_inplace(arr.copy(), ax, temperature)


def _check_mask(mask, logits_shape: tuple) -> np.ndarray:
    """Validate an attention mask against logits of shape (..., L, S)."""
    m = np.asarray(mask)
    if m.dtype.kind == "b":
        pass
    elif m.dtype.kind == "f":
        check_finite(m, "mask (float, added to the logits)", allow_neg_inf=True)
    else:
        raise TypeError(
            "mask must be boolean (True = may attend) or float (added to the logits); "
            f"got dtype {m.dtype}"
        )
    try:
        ok = np.broadcast_shapes(m.shape, logits_shape) == tuple(logits_shape)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"mask of shape {m.shape} does not broadcast to the attention logits' shape "
            f"(..., L, S) = {tuple(logits_shape)}"
        )
    return m


def _attention_inputs(q, k, v):
    """Convert and check q, k, v; return them with the broadcast batch shape."""
    q = as_float_array(q, "q")
    k = as_float_array(k, "k")
    v = as_float_array(v, "v")
    need_ndim(q, "q", 2, "(..., L, d_k)")
    need_ndim(k, "k", 2, "(..., S, d_k)")
    need_ndim(v, "v", 2, "(..., S, d_v)")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must share d_k (their last dimension): q has shape {q.shape} (d_k={q.shape[-1]}), "
            f"k has shape {k.shape} (d_k={k.shape[-1]})"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must have the same number of keys S (second-to-last dimension): "
            f"k has shape {k.shape} (S={k.shape[-2]}), v has shape {v.shape} (S={v.shape[-2]})"
        )
    if q.shape[-1] == 0:
        raise ValueError(f"d_k must be positive; q has shape {q.shape}")
    if k.shape[-2] == 0:
        raise ValueError(f"there must be at least one key; k has shape {k.shape}")
    try:
        batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(
            f"leading (batch/head) dimensions of q {q.shape[:-2]}, k {k.shape[:-2]} and "
            f"v {v.shape[:-2]} do not broadcast together"
        ) from None
    for name, arr in (("q", q), ("k", k), ("v", v)):
        check_finite(arr, name)
    dtype = np.result_type(q, k, v)
    return q.astype(dtype, copy=False), k.astype(dtype, copy=False), v.astype(dtype, copy=False), batch


# Logits are processed in blocks of about this many elements (1 MiB of float32), so that
# each block's softmax passes and its second matmul run while the block is still in cache.
_BLOCK_ELEMENTS = 1 << 18


def _blocks(lead: tuple, row: int):
    """Yield index tuples that cut an array of shape (*lead, row) into cache-sized blocks.

    Each block spans whole trailing axes of ``lead`` and a slice of one axis, so that it
    holds about ``_BLOCK_ELEMENTS`` elements (one row of ``row`` elements at the least).
    """
    inner, axis = row, len(lead)
    while axis > 0 and inner * lead[axis - 1] <= _BLOCK_ELEMENTS:
        inner *= lead[axis - 1]
        axis -= 1
    if axis == 0:
        yield ()
        return
    step = max(1, _BLOCK_ELEMENTS // inner)
    for outer in np.ndindex(*lead[: axis - 1]):
        for start in range(0, lead[axis - 1], step):
            yield (*outer, slice(start, start + step))


def _raise_if_overflowed(bad: bool) -> None:
    if bad:
        raise ValueError("the logits q·kᵀ·scale overflowed to ±inf; q or k has values too large for its dtype")


def _exp_logits_block(w, q, kt, mask, temperature: float, out) -> np.ndarray:
    """Write exp((q kᵀ + mask − row max) / temperature) into ``out``; return its row sums.

    w : (..., l, S) scratch for the logits (overwritten; may be ``out`` itself).
    q : (..., l, d_k), already scaled.   kt : (..., d_k, S).   out : (..., l, S).
    mask : None, or (..., l, S) boolean (True = may attend) or float (added).
    Returns sums : (..., l, 1); a fully masked row has out = 0 and sum 1.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        np.matmul(q, kt, out=w)
    # Finite inputs give -inf or NaN here only by overflow (min propagates NaN); check
    # before the mask adds its legitimate -inf.
    _raise_if_overflowed(not np.isfinite(w.min()))
    if mask is not None:
        if mask.dtype.kind == "b":
            np.copyto(w, -np.inf, where=~mask)
        else:
            with np.errstate(invalid="ignore"):  # +inf logit + -inf mask = NaN: caught just below
                w += mask
    row_max = w.max(axis=-1, keepdims=True)
    # +inf, or NaN from an overflowed +inf meeting a -inf mask entry, shows in the row maxima
    _raise_if_overflowed(not (row_max < np.inf).all())
    return _exp_shifted(w, -1, temperature, row_max, out=out)


def scaled_dot_product_attention(q, k, v, mask=None, scale=None, temperature=1.0, need_weights=True):
    """Attention weights softmax((q kᵀ · scale + mask) / temperature) and their average of v.

    Introduced in lesson 01; the scaling is the subject of the whole course.

    q : (..., L, d_k) queries.   k : (..., S, d_k) keys.   v : (..., S, d_v) values.
        Leading dimensions broadcast; float32 inputs stay float32.
    mask : None, or broadcastable to (..., L, S). Boolean: True = may attend
        (PyTorch's SDPA convention). Float: added to the logits (-inf blocks).
    scale : float > 0, default 1/sqrt(d_k) with d_k = q.shape[-1].
    temperature : float > 0 dividing the scaled logits.
    need_weights : bool. False skips building the (..., L, S) weights array (returns None
        for it), like PyTorch's ``need_weights`` and its SDPA: faster, far less memory.

    Returns (output, weights): output (..., L, d_v), weights (..., L, S) or None.
    A query whose keys are all masked gets weights 0 and output 0 (never NaN).
    """
    if not isinstance(need_weights, (bool, np.bool_)):
        raise TypeError(f"need_weights must be True or False; got {type(need_weights).__name__}")
    q, k, v, batch = _attention_inputs(q, k, v)
    L, d_k, S, d_v = q.shape[-2], q.shape[-1], k.shape[-2], v.shape[-1]
    scale = 1.0 / np.sqrt(d_k) if scale is None else positive_scalar(scale, "scale")
    temperature = positive_scalar(temperature, "temperature")
    logits_shape = (*batch, L, S)
    m = None if mask is None else _check_mask(mask, logits_shape)
    if m is None or m.dtype.kind == "b":
        # fold scale and temperature into the (small) q before the big matmul
        q = q * q.dtype.type(scale / temperature)
        t = 1.0
    else:
        q = q * q.dtype.type(scale)
        m = m.astype(q.dtype, copy=False)
        t = temperature
    output = np.empty((*batch, L, d_v), dtype=q.dtype)
    weights = np.empty(logits_shape, dtype=q.dtype) if need_weights else None
    if math.prod(logits_shape) == 0:  # no queries (S > 0 is checked): output is empty too
        return output, weights
    # Broadcast views (no copies); each block below is a view into them.
    qb = np.broadcast_to(q, (*batch, L, d_k))
    ktb = np.broadcast_to(np.swapaxes(k, -1, -2), (*batch, d_k, S))
    vb = np.broadcast_to(v, (*batch, S, d_v))
    mb = None if m is None else np.broadcast_to(m, logits_shape)
    nb = len(batch)
    # Each block's logits live in one reused, cache-sized scratch buffer; with weights, exp
    # copies the block out into the weights array as it goes (no extra pass).
    scratch = np.empty(min(math.prod(logits_shape), max(_BLOCK_ELEMENTS, S)), q.dtype)
    for idx in _blocks((*batch, L), S):
        q_blk = qb[idx]
        shape = (*q_blk.shape[:-1], S)
        z = scratch[: math.prod(shape)].reshape(shape)
        e = weights[idx] if need_weights else z
        sums = _exp_logits_block(z, q_blk, ktb[idx[:nb]], None if mb is None else mb[idx], t, out=e)
        out = output[idx]
        np.matmul(e, vb[idx[:nb]], out=out)
        out /= sums  # normalise the small (rows, d_v) output, not the big block
        if need_weights:
            e /= sums
    return output, weights


def _check_probabilities(p, name: str, allow_zero_rows: bool) -> np.ndarray:
    """Check ``p`` holds probability vectors along its last axis."""
    arr = as_float_array(p, name)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be a probability vector of shape (..., n); got a scalar")
    check_finite(arr, name)
    if (arr < 0).any():
        raise ValueError(f"{name} must be non-negative (probabilities); found a value of {arr.min()}")
    sums = arr.sum(axis=-1)
    tol = 1e-4 if arr.dtype.itemsize < 8 else 1e-8
    ok = np.abs(sums - 1.0) <= tol
    if allow_zero_rows:
        ok |= sums == 0
    if not ok.all():
        bad = sums[~ok].flat[0]
        raise ValueError(f"{name} must sum to 1 along its last axis; found a row summing to {bad}")
    return arr


def softmax_jacobian(p) -> np.ndarray:
    """Jacobian of softmax at probabilities p: J = diag(p) − p pᵀ (lesson 03).

    p : (..., n) probabilities, each row summing to 1.
    Returns J : (..., n, n), J[..., i, j] = ∂p_i/∂z_j.
    """
    arr = _check_probabilities(p, "p", allow_zero_rows=False)
    jac = -arr[..., :, None] * arr[..., None, :]
    idx = np.arange(arr.shape[-1])
    jac[..., idx, idx] += arr
    return jac


def attention_entropy(p, axis=-1) -> np.ndarray:
    """Shannon entropy −Σ p log p in nats along ``axis`` (lesson 03), with 0·log 0 = 0.

    p : (..., n) probabilities (rows of attention weights). A row of all zeros (a
        fully masked query) has entropy 0. Uniform over n keys gives log n.
    Returns H : p's shape without ``axis``.
    """
    arr = as_float_array(p, "p")
    if arr.ndim == 0:
        raise ValueError("p must be a probability vector of shape (..., n); got a scalar")
    ax = axis_index(axis, arr.ndim)
    arr = _check_probabilities(np.moveaxis(arr, ax, -1), "p", allow_zero_rows=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(arr > 0, arr * np.log(np.where(arr > 0, arr, 1.0)), 0.0)
    return -terms.sum(axis=-1)

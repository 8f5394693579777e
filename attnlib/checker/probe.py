"""Probing: the inputs the checker builds, the calls it makes, and what it reads back from each call.

A probe draws unit-variance q, k at sizes (B, H, L, S, d_k, d_v) that all differ, and values
``v = [I_S | R]`` (one-hot over the keys, then random columns), so the first S output columns ARE
the weights the function used. ``analyse`` turns one call into a dict of measurements; arrays the
fits need are kept under keys starting with "_" (dropped from the report).
"""

from __future__ import annotations

import numpy as np

from .callers import TRACK_LOG, FunctionCaller, ModuleCaller, Unusable, build_layer
from .fit import fit_linear

# (B, H, L, S, d_k, d_v): every size differs from the others inside a probe, d_model = H·d_k
# too, and no two hypotheses give the same factors across the probes.
DEFAULT_SHAPES = ((2, 8, 5, 7, 64, 10), (5, 3, 6, 11, 16, 13), (4, 2, 9, 3, 12, 7))
LAYER_SIZES = ((2, 96, 8, 5, 7), (4, 48, 3, 6, 11), (5, 36, 2, 9, 4))  # (B, E, H, L, S) for a layer class
INSTANCE_SIZES = ((2, 5, 7), (4, 6, 11), (3, 9, 4))  # (B, L, S) for a layer instance


def tiny_for(eps: float) -> float:
    """The smallest weight a fit trusts in a given working precision (below it: underflow or subnormals).
    bfloat16 keeps float32's range; float16 goes subnormal below 6e-5."""
    return 1e-250 if eps < 1e-15 else 1e-4 if eps == 2.0**-10 else 1e-30


def probe_arrays(rng, shape: tuple, ndim: int):
    """q (*lead, L, d_k), k (*lead, S, d_k), v (*lead, S, d_v) = [I_S | R], lead = (B, H), (B,) or ()."""
    B, H, L, S, d_k, d_v = shape
    lead = {4: (B, H), 3: (B,), 2: ()}[ndim]
    q = rng.standard_normal((*lead, L, d_k))
    k = rng.standard_normal((*lead, S, d_k))
    extra = rng.standard_normal((*lead, S, d_v - S))
    v = np.concatenate([np.broadcast_to(np.eye(S), (*lead, S, S)), extra], axis=-1)
    return q, k, v


def analyse(q, k, v, out, weights, S, eps):
    """One call's measurements: linearity in v, row sums, output factor t, scale c and its misfit.

    q (..., L, d_k), k (..., S, d_k), v (..., S, d_v), out (..., L, d_v), weights (..., L, S) or None;
    ``eps`` is the precision fn computed in: every tolerance is a multiple of it.
    """
    tol = max(1e-5, 30 * eps)
    out = out.astype(np.float64)
    weights = None if weights is None else weights.astype(np.float64)
    if not np.all(np.isfinite(out)):
        raise Unusable("your function returned NaN or inf on plain float64 inputs of unit variance", ran=True)
    if weights is not None and not np.all(np.isfinite(weights)):
        raise Unusable("your function returned weights with NaN or inf on plain float64 inputs", ran=True)
    w_out = out[..., :S]  # v starts with the identity over keys: these columns are the weights used
    lin = out[..., S:] - w_out @ v[..., S:]
    info = {"linear": bool(np.abs(lin).max(initial=0.0) <= tol * max(1.0, np.abs(out).max()))}
    z = q @ np.swapaxes(k, -1, -2)
    w_src = weights if weights is not None else w_out
    sums = w_src.sum(-1)
    live = np.abs(w_src).max(-1) > 0  # a row with no key at all (masked inside fn) gives zeros: not a sum to read
    sums = sums[live] if live.any() else sums
    info["row_sum"] = float(np.median(sums))
    sum_tol = max(1e-4, 10 * eps * S)
    info["rows_constant"] = bool(np.all(np.abs(sums - info["row_sum"]) <= sum_tol * max(abs(info["row_sum"]), 1e-12)))
    info["cols_one"] = bool(np.allclose(w_src.sum(-2), 1.0, rtol=sum_tol, atol=1e-6)) and not info["rows_constant"]
    if weights is not None:  # output factor t: out[..., :S] = t · weights
        denom = float((weights * weights).sum())
        t = float((w_out * weights).sum()) / denom if denom > 0 else float("nan")
        info["out_factor"] = t
        info["out_consistent"] = bool(np.allclose(w_out, t * weights, rtol=sum_tol, atol=tol * max(1.0, abs(t))))
    else:
        info["out_factor"] = info["row_sum"] if info["rows_constant"] else 1.0
        info["out_consistent"] = True
    scale_w = w_src / info["row_sum"] if info["rows_constant"] and info["row_sum"] > 0 else w_src
    c, resid, used = fit_linear(z, scale_w, tiny_for(eps))
    info.update(c=c, residual=resid, rows_used=used, min_weight=float(w_src.min()), eps=eps)
    info.update(_q=q, _k=k, _z=z, _w=w_src)
    return info


def measure(caller, q, k, v, out, w, S):
    """Analyse one probe; if it overflowed or saturated completely, retry with q shrunk by 8, 64, 512."""
    error = None
    for shrink in (1.0, 1 / 8, 1 / 64, 1 / 512):
        if shrink != 1.0:
            out, w = caller.call(q * shrink, k, v)
        try:
            info = analyse(q * shrink, k, v, out, w, S, caller.eps)
        except Unusable as err:
            error = err
            continue
        if info["c"] is not None:
            info["q_shrunk"] = shrink
            return info
    raise error or Unusable("every probe row put all its weight on one key even with q shrunk 512-fold: "
                            "the scale is too large to measure")


def probe_function(caller: FunctionCaller, shapes, gen, first):
    """One measurement dict per probe shape (the first call's result is reused)."""
    probes = []
    for i, shape in enumerate(shapes):
        if i == 0:
            q, k, v, (out, w) = first
        else:
            q, k, v = probe_arrays(gen, shape, caller.ndim)
            out, w = caller.call(q, k, v)
        info = measure(caller, q, k, v, out, w, shape[3])
        B, H, L, S, d_k, d_v = shape
        info.update(B=B if caller.ndim >= 3 else None, H=H if caller.ndim == 4 else None,
                    L=L, S=S, d_k=d_k, d_v=d_v, returned_weights=w is not None)
        probes.append(info)
    return probes


def stretched_weights(caller, probe, target=25.0):
    """Weights at the probe's q scaled so the measured logits c·q·k reach a std of ``target``:
    (q (..., L, d_k), weights (..., L, S)), or None. Large logits bend a soft cap; a softmax stays linear."""
    c, z = probe["c"], probe["_z"]
    spread = abs(c) * float(z.std())
    if not spread or tiny_for(caller.eps) > 1e-30:  # float16: the small weights a fit needs are subnormal
        return None
    a = target / spread
    q, k = probe["_q"] * a, probe["_k"]
    v = np.concatenate([np.broadcast_to(np.eye(probe["S"]), (*k.shape[:-1], probe["S"])),
                        np.zeros((*k.shape[:-1], probe["d_v"] - probe["S"]))], -1)
    try:
        out, w = caller.call(q, k, v)
    except Unusable:
        return None
    w = out[..., :probe["S"]] if w is None else w
    return (q, w) if np.all(np.isfinite(w)) else None


def redrawn(caller, shape, gen, draws=4):
    """``draws`` independent q, k at one shape (same v): z and weights stacked as (draws, ..., L, S), or None."""
    zs, ws = [], []
    for _ in range(draws):
        q, k, v = probe_arrays(gen, shape, caller.ndim)
        try:
            out, w = caller.call(q, k, v)
        except Unusable:
            return None
        zs.append(q @ np.swapaxes(k, -1, -2))
        ws.append(out[..., :shape[3]] if w is None else w)
    return np.stack(zs), np.stack(ws)


def track_values(caller, probes):
    """Re-run a function with v as a tracking array (numpy) or tensor (torch): 'scaled', 'product' or None."""
    if not isinstance(caller, FunctionCaller):
        return None
    p = probes[0]
    shape = (p["B"] or 2, p["H"] or 2, p["L"], p["S"], p["d_k"], p["d_v"])
    q, k, v = probe_arrays(np.random.default_rng(0), shape, caller.ndim)
    TRACK_LOG.clear()
    try:
        caller.call(q, k, v, track=True)
    except Unusable:
        return None
    log = list(TRACK_LOG)
    TRACK_LOG.clear()
    if not log:
        return None
    return "scaled" if log[0] == "scaled" else "product"


# ------------------------------------------------------------------ layers


def split_heads(x, heads):
    """(B, T, E) -> (B, H, T, E / H)."""
    B, T, E = x.shape
    return np.swapaxes(x.reshape(B, T, heads, E // heads), 1, 2)


def probe_layer(obj, owned, B, L, S, gen, want=None):
    """One probe of a layer: its weights read back through identity projections and one-hot values."""
    with ModuleCaller(obj, owned) as mc:
        E, H, d = mc.E, mc.H, mc.d_k
        if want is not None and (E, H) != want:
            raise Unusable(f"built with embed_dim={want[0]}, num_heads={want[1]}, the layer has E={E}, {H} heads")
        query, key = gen.standard_normal((B, L, E)), gen.standard_normal((B, S, E))
        w_read = np.empty((B, H, L, S))
        # one-hot values over a chunk of at most d_k keys in every head's slice: the output reads back
        # the weights of that chunk (the projections are identities)
        for start in range(0, S, d):
            stop = min(S, start + d)
            value = gen.standard_normal((B, S, E))
            for h in range(H):
                value[:, :, h * d:(h + 1) * d] = 0.0
                value[:, np.arange(start, stop), h * d + np.arange(stop - start)] = 1.0
            out, weights = mc.call(query, key, value)
            heads_out = np.swapaxes(out.reshape(B, L, H, d), 1, 2)  # (B, H, L, d_k)
            w_read[..., start:stop] = heads_out[..., : stop - start]
        # a last call with random values checks that the output is linear in v
        value = gen.standard_normal((B, S, E))
        out, weights = mc.call(query, key, value)
    qh, kh, vh = (split_heads(x, H) for x in (query, key, value))
    fake_v = np.concatenate([np.broadcast_to(np.eye(S), (B, H, S, S)), vh], -1)
    fake_out = np.concatenate([w_read, split_heads(out, H)], -1)
    info = analyse(qh, kh, fake_v, fake_out, weights, S, mc.eps)
    info.update(B=B, H=H, L=L, S=S, d_k=d, d_v=d, E=E, returned_weights=weights is not None)
    return info


def probe_layers(layer, gen, notes):
    """Probes of a layer class at LAYER_SIZES, or of an instance as given and then its class at LAYER_SIZES."""
    if isinstance(layer, type):
        return [probe_layer(build_layer(layer, E, H), True, B, L, S, gen, want=(E, H))
                for B, E, H, L, S in LAYER_SIZES]
    probes = [probe_layer(layer, False, B, L, S, gen) for B, L, S in INSTANCE_SIZES]
    try:  # the same class at other sizes, to vary d_k and the number of heads
        more = [probe_layer(build_layer(type(layer), E, H), True, B, L, S, gen, want=(E, H))
                for B, E, H, L, S in LAYER_SIZES]
    except Unusable as err:
        notes.append(f"an instance has one head size, so d_k was not varied: building its class at other sizes "
                     f"failed ({err}); pass the class to vary it")
    else:
        probes += more
        notes.append(f"your layer was probed as given and as new {type(layer).__name__} layers of other sizes")
    return probes

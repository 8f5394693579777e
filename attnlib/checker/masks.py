"""Masking: which convention a function reads, whether it blocks, renormalises and survives float16.

Lesson 09 asks for a boolean mask with **True = may attend**. A function is first called with that;
other conventions are tried only to name what the function does (True = blocked, 1/0 numbers, 0/-inf
added). Masks are (..., L, S) arrays, ``allow`` always means "may attend".
"""

from __future__ import annotations

import numpy as np

from .callers import Unusable
from .fit import fit_linear
from .messages import mask_messages as say
from .report import AttentionReport

MASK_FORMS = {
    "bool": "booleans, True = may attend",
    "bool_blocked": "booleans with True = blocked (nn.MultiheadAttention's convention)",
    "float01": "numbers, 1 = may attend and 0 = blocked",
    "additive": "numbers added to the logits (0 = may attend, -inf = blocked)",
}
_ORDER = {"mask": ("bool", "bool_blocked", "float01", "additive"),
          "padding": ("bool_blocked", "bool", "float01", "additive"),
          "bias": ("additive", "bool", "bool_blocked", "float01")}


def mask_in_form(allow, form, dtype):
    """allow (..., L, S) bool (True = may attend) written in one of MASK_FORMS, in dtype for number forms."""
    if form == "bool":
        return allow
    if form == "bool_blocked":
        return ~allow
    if form == "float01":
        return allow.astype(dtype)
    return np.where(allow, 0.0, -np.inf).astype(dtype)


def _weights(caller, q, k, v, mask, S, t):
    """The weights (..., L, S) fn used under ``mask``: returned ones, else the output's one-hot columns / t."""
    out, w = caller.call(q, k, v, mask)
    if w is not None:
        return np.asarray(w, dtype=np.float64)
    return np.asarray(out[..., :S], dtype=np.float64) / t


def _row_kind(row) -> str:
    """What a fully masked row (S,) holds: NaN, zeros, uniform or other."""
    if not np.all(np.isfinite(row)):
        return "NaN"
    if np.allclose(row, 0.0, atol=1e-3):
        return "zeros"
    if np.allclose(row, row.mean(), rtol=2e-2, atol=1e-3) and abs(row.sum() - 1) < 2e-2:
        return "uniform"
    return "other"


def mask_probe(gen, shape, lead, c):
    """q, k, v for a mask check (float16-representable) and ``allow`` (..., L, S), ``partial`` (L,).

    Rows 0 and 1 point along one direction u and the keys spread along it so that c·q·k runs from
    -40 to +4. Row 0: every other key blocked (the largest open); row 1: every key blocked;
    even rows from 2: causal-like.
    """
    B, H, L, S, d_k, d_v = shape
    u = np.where(gen.random(d_k) < 0.5, -1.0, 1.0)
    q = gen.standard_normal((*lead, L, d_k))
    q -= (q @ u)[..., None] * u / d_k  # other queries orthogonal to u: small logits
    q[..., 0, :] = u
    q[..., 1, :] = u
    targets = np.linspace(-40.0, 4.0, S)
    noise = gen.standard_normal((*lead, S, d_k)) * 0.25
    noise -= (noise @ u)[..., None] * u / d_k  # orthogonal to u
    k = (targets / (c * d_k))[:, None] * u + noise
    q, k = q.astype(np.float16).astype(np.float64), k.astype(np.float16).astype(np.float64)
    v = np.concatenate([np.broadcast_to(np.eye(S), (*lead, S, S)),
                        gen.standard_normal((*lead, S, d_v - S)).astype(np.float16).astype(np.float64)], -1)
    allow = np.ones((*lead, L, S), dtype=bool)
    allow[..., 0, 1::2] = False
    allow[..., 0, S - 1] = True
    allow[..., 1, :] = False
    for i in range(2, L, 2):
        allow[..., i, i % (S - 1) + 1:] = False
    partial = np.ones(L, dtype=bool)
    partial[1] = False
    return q, k, v, allow, partial


def added_mask_offset(w, z, allow, partial, c, eps):
    """If blocked keys kept weight because the mask was ADDED (True → +1): the offset a (1, or c when added
    before the scale), else None (another offset is a fill that is too small: mask_overflow).

    w, z, allow : (..., L, S). Fits log w − c·z = a·allow + row constant on the rows with a key blocked.
    """
    rows = partial & np.any(~allow, axis=tuple(range(allow.ndim - 2)) + (-1,))
    if not rows.any() or not np.all(np.isfinite(w)) or np.any(w <= 0):
        return None
    resid = np.log(w[..., rows, :]) - c * z[..., rows, :]
    a, rel, _ = fit_linear(allow[..., rows, :].astype(float), np.exp(resid), 0.0)
    if a is None or rel > max(1e-3, 100 * eps):
        return None
    return a if any(abs(a - x) <= 1e-2 * x for x in (1.0, c)) else None  # True became +1 (before or after scaling)


def _first_blocking_form(caller, qkv32, allow, partial, S, t):
    """Call fn in float32 with each mask form in its parameter's order until one blocks the masked keys.

    Returns (that form or None, {form tried: (weights (..., L, S), largest masked weight)}, error texts).
    """
    tried, errors = {}, []
    for form in _ORDER[caller.mask.kind]:
        try:
            w = _weights(caller, *qkv32, mask_in_form(allow, form, np.float32), S, t)
        except Unusable as err:
            errors.append(str(err))
            continue
        tried[form] = (w, float(np.where(allow, 0.0, np.nan_to_num(w, nan=1.0))[..., partial, :].max()))
        if tried[form][1] <= 1e-3:
            return form, tried, errors
    return None, tried, errors


def check_mask(caller, shape, probe, sink, gen, notes):
    """Float32 then float16 calls with a partly masked row, a fully masked row and open rows.

    probe : the measurement at ``shape`` (its c and output factor t); sink : whether unmasked rows
    sum below 1 (then a masked row may too). Returns a report when masking is wrong, else None.
    """
    B, H, L, S, d_k, d_v = shape
    lead = {4: (B, H), 3: (B,), 2: ()}[caller.ndim]
    c = probe["c"] if probe["c"] and probe["c"] > 0 else d_k**-0.5
    t = probe["out_factor"] if probe["rows_constant"] else 1.0
    q, k, v, allow, partial = mask_probe(gen, shape, lead, c)
    q32, k32, v32 = (a.astype(np.float32) for a in (q, k, v))
    z = q @ np.swapaxes(k, -1, -2)
    kind, first = caller.mask.kind, _ORDER[caller.mask.kind][0]
    form, tried, errors = _first_blocking_form(caller, (q32, k32, v32), allow, partial, S, t)
    if not tried:
        notes.append(f"calling your function with a mask failed ({errors[0]}); masking was not checked")
        return None
    if form != first and first in tried:  # the documented form leaks: was it added to the logits?
        a = added_mask_offset(tried[first][0], z, allow, partial, c, caller.eps)
        if a is not None and kind != "bias":
            return _report("mask_added_boolean", say("added", a=a, name=caller.mask.name), probe, notes)
    if form is None:
        return _report("mask_overflow", say("leak", leak=min(leak for _, leak in tried.values())), probe, notes)
    if form == "bool_blocked" and kind == "mask":
        return _report("mask_inverted", say("inverted", name=caller.mask.name), probe, notes)
    if form != first or kind != "mask":
        notes.append(f"your function reads the mask as {MASK_FORMS[form]}; it was checked with that convention")
    w32 = tried[form][0]
    open_sum = np.where(allow, w32, 0.0).sum(-1)[..., partial]
    tol = max(2e-3, 8 * caller.eps)
    if not sink and np.abs(open_sum - probe["row_sum"]).max() > tol:
        return _report("mask_not_renormalised", say("renorm", lo=float(open_sum.min()), hi=float(open_sum.max()),
                                                    t=probe["row_sum"]), probe, notes)
    return _check_float16(caller, q, k, v, allow, partial, form, w32, S, t, lead, probe, notes)


def _check_float16(caller, q, k, v, allow, partial, form, w32, S, t, lead, probe, notes):
    """The same masked call in float16: fills that overflow, rows that turn NaN, weights that drift."""
    full_rows = [i for i in range(q.shape[-2]) if not partial[i]]
    kind32 = {_row_kind(w32[(0,) * len(lead) + (i,)]) for i in full_rows}
    f16 = tuple(a.astype(np.float16) for a in (q, k, v))
    try:
        w16 = _weights(caller, *f16, mask_in_form(allow, form, np.float16), S, t)
    except Unusable as err:
        text = str(err)
        if "not implemented for 'Half'" in text:
            notes.append("your framework has no float16 kernel for this on the CPU: float16 masking not checked")
            return None
        return _report("mask_overflow", say("raised16", text=text), probe, notes)
    sel = (Ellipsis, partial, slice(None))
    w16p, w32p = w16[sel], w32[sel]
    if not np.all(np.isfinite(w16p)):
        return _report("mask_overflow", say("nan16"), probe, notes)
    leak16 = float(np.where(allow[sel], 0.0, w16p).max())
    err16 = float(np.abs(w16p - w32p).max())
    if leak16 > 2e-2 or err16 > max(5e-2, 30 * caller.eps):
        return _report("mask_overflow", say("drift16", leak=leak16, err=err16), probe, notes)
    kind16 = {_row_kind(w16[(0,) * len(lead) + (i,)]) for i in full_rows}
    if full_rows and kind16 != kind32:
        return _report("mask_overflow", say("full16", got16="/".join(sorted(kind16)), got32="/".join(sorted(kind32)),
                                            uniform=kind32 == {"uniform"} and kind16 <= {"NaN", "zeros"}),
                       probe, notes)
    if kind32 == {"NaN"}:
        notes.append("a query whose keys are all masked gets NaN (in float32 and float16 alike): that is a softmax "
                     "over -inf logits, as torch.softmax gives; attnlib and torch SDPA return 0 there")
    notes.append("masking checked in float32 and float16 (a partly masked row, a fully masked row, logits -40 to +4)")
    return None


def _report(code, message, probe, notes):
    """A mask verdict (check_function gives it the probes' scale and table)."""
    return AttentionReport(code, message, {probe["d_k"]: probe["c"]}, [], list(notes))


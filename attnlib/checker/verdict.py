"""From measurements to a verdict: which model of attention fits, then which rule the factor follows.

Order of decisions (each step's first failure is the verdict):
1. structure: output linear in v, softmax over keys (not queries)      -> not_attention
2. model: softmax(c·q·k) | QK-norm g·cos(q, k) | c·q·k + bias           -> qk_norm, qk_norm_small_gain (g ≤ 1),
                                                                          no_scale (g ∝ d_k), position_bias,
                                                                          not_attention
3. rows: constant sum | below 1 with one sink logit per head           -> attention_sink, not_attention
4. large logits: still linear, or c·tanh(s/c)                          -> soft_cap, not_attention
5. where the scale sits: weights' rows / output factor                 -> scale_after_softmax, scaled_values
6. the factor's rule: 1/√d_k, 1, √d_k, 1/d_k, √d_model, an axis, fixed, m/√d_k, other
"""

from __future__ import annotations

import math

import numpy as np

from . import messages as say
from .fit import alibi_slopes, cosines, fit_bias, fit_linear, fit_soft_cap, sink_logits
from .probe import stretched_weights, tiny_for, track_values
from .report import AttentionReport, fmt


def tolerances(probes):
    """(fit misfit allowed, relative factor match) from the working precision of the function."""
    eps = max(p.get("eps", 2.0**-52) for p in probes)
    return max(1e-3, 30 * eps), max(1e-4, 4 * eps)


def hypotheses(p):
    """(diagnosis, label, factor) candidates for one probe p, in order of preference."""
    d = p["d_k"]
    yield "ok", "1/√d_k", d**-0.5
    yield "no_scale", "1 (no scaling)", 1.0
    yield "times_sqrt_dk", "√d_k", d**0.5
    if p.get("H") and p["H"] > 1:  # before 1/d_k: they coincide only when heads = d_k (E = 64, 8 heads)
        yield "sqrt_d_model", "1/√d_model", (p["H"] * d) ** -0.5
    yield "one_over_dk", "1/d_k", 1.0 / d
    if p.get("H") and p["H"] > 1:
        yield "sqrt_d_model", "1/d_model", 1.0 / (p["H"] * d)
    for axis in say.AXIS_WORDS:
        n = p.get(axis)
        if n and n > 1 and not (axis == "d_v" and p["d_v"] == d):  # d_v = d_k (a layer): not a separate rule
            yield "wrong_axis", f"1/√{axis}", n**-0.5
            yield "wrong_axis", f"1/{axis}", 1.0 / n


def match_scale(probes, widths, rel):
    """(diagnosis, label, other fits) for the factors c measured at every probe.

    widths : the model widths (heads × d_k) the probes used; a fixed 1/√width is sqrt_d_model.
    """
    tables = [{label: factor for _, label, factor in hypotheses(p)} for p in probes]
    fits = [(diag, label) for diag, label, _ in hypotheses(probes[0])
            if all(label in t and say.close(p["c"], t[label], rel) for p, t in zip(probes, tables, strict=True))]
    if fits:
        return fits[0][0], fits[0][1], [f for f in fits[1:] if f[0] != fits[0][0]]
    cs = np.array([p["c"] for p in probes])
    if len({p["d_k"] for p in probes}) < 2:
        return "wrong_scale", None, []
    if say.close(cs, cs[0], rel):
        for w in sorted(widths):
            if say.close(cs[0], w**-0.5, rel):
                return "sqrt_d_model", f"1/√{w}", []
        return "fixed_scale", None, []
    ms = cs * np.sqrt([p["d_k"] for p in probes])
    if say.close(ms, ms[0], rel):
        return "constant_multiple", None, []
    return "wrong_scale", None, []


def _report(code, message, probes, notes, **kw):
    """An AttentionReport with scale {d_k: c} and the probes' public (non-array) entries."""
    scale = {}
    for p in probes:
        scale.setdefault(p["d_k"], p["c"])
    public = [{k: v for k, v in p.items() if not k.startswith("_")} for p in probes]
    return AttentionReport(code, message, scale, public, notes, **kw)


def masked_inside(probes):
    """For a function that takes no mask: "causal" (key j > query i gets weight 0), "causal_bottom_right"
    (j > i + S − L, flash-attn's alignment), "fixed" (other keys at weight 0, the same in every batch and head)
    or None (no key is ever at weight 0). Weights (..., L, S) at or below the precision's tiny are zeros."""
    kinds = set()
    for p in probes:
        w = p["_w"]
        zero = w <= tiny_for(p["eps"])
        if not zero.any():
            return None
        flat = zero.reshape(-1, *zero.shape[-2:])
        if not np.all(flat == flat[0]):  # zeros that move with q and k: underflow, not a mask
            return None
        L, S = flat.shape[-2:]
        after = np.arange(S)[None, :] - np.arange(L)[:, None]
        kinds.add("causal" if np.array_equal(flat[0], after > 0) else
                  "causal_bottom_right" if np.array_equal(flat[0], after > S - L) else "fixed")
    return kinds.pop() if len(kinds) == 1 else "fixed"


def _structure(probes):
    """Why the output is not a weighted average over keys at all, or None."""
    for p in probes:
        if not p["linear"]:
            return "the output is not linear in v (not a weighted average of the values)"
        if p["cols_one"]:
            return "the weights' columns sum to 1, not their rows: the softmax runs over the queries axis, not the keys"
    return None


def _qk_norm(probes, ftol, rel):
    """(g per probe, whole-projection?, rule words, rule) when log-weights are linear in cos(q, k), else None.
    rule: "fixed" (one g), "rms" (m·√d_k), "unscaled" (g = m·d_k per head: RMS-normalised q, k never divided by
    √d_k, logits of std √d_k: no_scale), "shrinking" (m/√d_k), "whole" (m·H·√d_k) or "" (none of them)."""
    variants = [False] + ([True] if all(p["_q"].ndim == 4 for p in probes) else [])
    for whole in variants:
        fits = [fit_linear(cosines(p["_q"], p["_k"], whole), p["_w"], tiny_for(p["eps"])) for p in probes]
        if all(g is not None and g > 0 and r <= ftol for g, r, _ in fits):
            gs = np.array([g for g, _, _ in fits])
            ds = np.array([p["d_k"] for p in probes], float)
            hs = np.array([p["H"] for p in probes], float)
            words, rule = "", ""
            if len(set(ds)) > 1:
                if say.close(gs, gs[0], rel * 10):
                    words, rule = f" (one g = {fmt(gs[0])} at every d_k: L2-normalised q̂·k̂ times a fixed gain)", "fixed"
                elif say.close(gs / np.sqrt(ds), gs[0] / math.sqrt(ds[0]), rel * 10):
                    words = (f" (g = {fmt(gs[0] / math.sqrt(ds[0]))}·√d_k: RMS-normalised q and k, whose product is "
                             "d_k·cos, divided by √d_k)")
                    rule = "rms"
                elif say.close(gs / ds, gs[0] / ds[0], rel * 10):
                    words = f" (g = {fmt(gs[0] / ds[0])}·d_k: RMS-normalised q and k, not divided by √d_k)"
                    rule = "" if whole else "unscaled"
                elif say.close(gs * np.sqrt(ds), gs[0] * math.sqrt(ds[0]), rel * 10):
                    words, rule = say.qk_norm_shrinking_gain(gs[0] * math.sqrt(ds[0])), "shrinking"
                elif whole and say.close(gs / (hs * np.sqrt(ds)), gs[0] / (hs[0] * math.sqrt(ds[0])), rel * 10):
                    words = (f" (g = {fmt(gs[0] / (hs[0] * math.sqrt(ds[0])))}·H·√d_k: RMS-normalised over the "
                             "whole projection of H·d_k, then divided by √d_k)")
                    rule = "whole"
            return list(gs), whole, words, rule
    return None


def _sink(probes, rel):
    """((min, max) sink mass, the first probe's sink logit per head) when every live row sums below 1 and one
    sink logit per head explains all of them, else None. Weights (..., H, L, S) are grouped by head."""
    masses, first = [], None
    for p in probes:
        sums = p["_w"].sum(-1)
        live = sums > 0  # rows with no open key (masked inside fn) say nothing about a sink
        if not np.all(sums[live] < 1):
            return None
        sigma = np.where(live, sink_logits(p["_z"], p["_w"], p["c"]), np.nan)
        heads = sigma.shape[1] if sigma.ndim >= 3 else 1
        per_head = np.moveaxis(sigma.reshape(-1, heads, sigma.shape[-1]), 1, 0).reshape(heads, -1)  # (H, B·L)
        centre = np.nanmean(per_head, -1, keepdims=True)
        if np.nanmax(np.abs(per_head - centre)) > max(1e-6, 10 * rel):
            return None
        masses += [float(1 - sums[live].max()), float(1 - sums[live].min())]
        first = centre[:, 0] if first is None else first
    return (min(masses), max(masses)), list(first)


def decide(probes, notes, caller=None, widths=(), draws=None) -> AttentionReport:
    """The verdict for a list of probe measurements (see the module docstring for the order).

    caller : the function's caller (None for a layer): used for large-logit and v-tracking calls.
    widths : model widths the probes used; draws : (z, w) stacked over redraws at one shape, or None.
    """
    ftol, rel = tolerances(probes)
    why = _structure(probes)
    if why:
        return _report("not_attention", why, probes, notes)
    cap, report = _logit_model(probes, notes, caller, draws, ftol, rel)
    if report is not None:
        return report
    bad = next((p for p in probes if p["c"] <= 0), None)
    if bad:
        return _report("not_attention", f"the weights fall as q·k rises (measured factor {fmt(bad['c'])})",
                       probes, notes)
    logit_diag, label, also = match_scale(probes, widths, rel)
    measured = {}
    if not all(p["rows_constant"] for p in probes):
        sink = _sink(probes, rel)
        if sink is None:
            return _report("not_attention", "the weights' rows do not sum to one common value, and not to 1 minus "
                           "one sink per head: not a softmax over the keys", probes, notes)
        (lo, hi), logits = sink
        measured.update(sink_mass=(lo, hi), sink_logit=logits)
        if logit_diag == "ok":
            return _report("attention_sink", say.sink_message((lo, hi), logits, probes), probes, notes,
                           measured=measured)
        notes.append(f"rows sum below 1: a sink takes {fmt(lo)}–{fmt(hi)} of each row")
    if cap is not None:
        measured["cap"] = cap
        if logit_diag == "ok":
            return _report("soft_cap", say.soft_cap_message(cap, probes), probes, notes, measured=measured)
        notes.append(f"the logits are soft-capped at c = {fmt(cap)}")
    return _placement(probes, notes, caller, logit_diag, label, also, measured, rel)


def _logit_model(probes, notes, caller, draws, ftol, rel):
    """(soft cap or None, report or None): which function of q and k the log-weights follow.

    softmax(c·q·k) (then large logits decide whether a cap bends it), else a soft cap, QK-norm's g·cos(q, k),
    or c·q·k plus a fixed bias; none of them -> a not_attention report.
    """
    linear = all(p["residual"] is not None and p["residual"] <= ftol for p in probes)
    cap = _stretched_cap(probes, caller, ftol) if linear else _base_cap(probes, ftol)
    if cap is not None and not _refit_capped(probes, cap, ftol):
        return None, _report("not_attention", "at large logits the weights bend away from softmax(c·q·k) and fit "
                             "no soft cap c·tanh(s/c)", probes, notes)
    if linear or cap is not None:
        return cap, None
    qk = _qk_norm(probes, ftol, rel)
    if qk is not None:
        gs, whole, words, rule = qk
        per_dk = {p["d_k"]: g for p, g in zip(probes, gs, strict=True)}
        measured = {"g": per_dk, "bound": "|logit| ≤ g"}
        if min(gs) <= 1 + rel * 10:  # |logit| ≤ g ≤ 1: no weight exceeds another by more than e^(2g) ≤ e^2
            return None, _report("qk_norm_small_gain", say.qk_norm_small_gain_message(list(per_dk.items()), whole,
                                                                                       words, rule, rel * 10),
                                 probes, notes, measured=measured)
        if rule == "unscaled":  # q̂·k̂ of RMS-normalised q, k is d_k·cos, std √d_k: the no_scale bug behind a norm
            return None, _report("no_scale", say.qk_norm_unscaled_message(list(per_dk.items())), probes, notes,
                                 measured=measured)
        return None, _report("qk_norm", say.qk_norm_message(list(per_dk.items()), whole, words, rule), probes, notes,
                             measured=measured)
    biased = _bias(probes, draws, ftol, rel, notes)
    if biased is not None:
        return None, biased
    worst = max(probes, key=lambda p: p["residual"] or 0)
    if worst["residual"] is None:
        return None, _report("not_attention", "every row put all its weight on one key: not a softmax of scaled q·k",
                             probes, notes)
    return None, _report("not_attention", f"log-weights are not a linear function of q·k (relative misfit "
                         f"{fmt(worst['residual'])} at d_k = {worst['d_k']}), nor of cos(q, k) (QK-norm), nor a "
                         "soft cap of it, nor q·k plus a fixed position bias: not softmax(c·q·kᵀ)", probes, notes)


def _stretched_cap(probes, caller, ftol):
    """The cap c when logits stretched large bend as c·tanh(s/c) (a softmax stays linear), else None."""
    if caller is None:
        return None
    stretched = stretched_weights(caller, probes[0])
    if stretched is None:
        return None
    q, w = stretched
    z = q @ np.swapaxes(probes[0]["_k"], -1, -2)
    tiny = tiny_for(probes[0]["eps"])
    _, r, _ = fit_linear(z, w, tiny)
    if r is None or r <= 1e-3:
        return None
    cap, _, rc = fit_soft_cap(z, w, tiny)
    if rc > r / 4:  # tanh explains no more than a line does: rounding noise (half precision), not a cap
        return None if r <= ftol else math.nan
    return cap if rc <= ftol else math.nan


def _base_cap(probes, ftol):
    """The cap c when every (non-linear) probe fits c·tanh(b·q·k) with one c, else None."""
    fits = [fit_soft_cap(p["_z"], p["_w"], tiny_for(p["eps"])) for p in probes]
    caps = [a for a, _, r in fits if r <= ftol and a > 0]
    if len(caps) < len(probes) or not say.close(caps, np.median(caps), 1e-2):
        return None
    return float(np.median(caps))


def _refit_capped(probes, cap, ftol):
    """Set each probe's c to the small-logit slope of cap·tanh(b·q·k); False when that does not fit."""
    if math.isnan(cap):
        return False
    for p in probes:
        _, b, r = fit_soft_cap(p["_z"], p["_w"], tiny_for(p["eps"]), cap=cap)
        if r > ftol:
            return False
        p["c"] = cap * b
    return True


def _bias(probes, draws, ftol, rel, notes):
    """A position_bias (or scale-bug) report when log w = c·q·k + a fixed bias fits the redraws, else None."""
    if draws is None:
        return None
    z, w = draws
    c, r, bias = fit_bias(z, w, tiny_for(probes[0]["eps"]))
    if c is None or r > ftol or c <= 0:
        return None
    p = dict(probes[0], c=c)
    shown = [p]
    slopes = alibi_slopes(bias) if bias.ndim >= 3 else None
    flat = None if slopes is None else np.asarray(slopes).reshape(-1, slopes.shape[-1])[0]
    measured = {"bias": bias, "c": c}
    diag, label, _ = match_scale(shown, (), rel)
    if diag != "ok":
        notes.append(f"the logits also carry an additive position bias (scale measured at d_k = {p['d_k']} only)")
        return _report(diag, say.scale_bug_message(diag, label, shown), shown, notes, measured=measured)
    rng = (float(np.nanmin(bias)), float(np.nanmax(bias)))
    notes.append(f"the scale was measured with the bias removed, at d_k = {p['d_k']}")
    return _report("position_bias", say.bias_message(shown, rng, flat), shown, notes, measured=measured)


def _placement(probes, notes, caller, logit_diag, label, also, measured, rel):
    """Where the scale sits (inside the softmax, after it, on v) and the final code."""
    if also:
        notes.append("at these sizes the measured factor also equals " + " and ".join(
            f"{lab} ({diag})" for diag, lab in also) + ": probe more sizes (pass a layer's class, or other shapes) "
            "to tell them apart")
    logit_words = say.logit_words(logit_diag, label, probes)
    row_sums = [p["row_sum"] for p in probes]
    out_factors = [p["out_factor"] for p in probes]
    if not say.close(row_sums, 1.0, rel * 10) and all(p["returned_weights"] for p in probes) \
            and all(p["rows_constant"] for p in probes):
        post = say.post_text(probes, "row_sum")
        msg = (f"your weights' rows sum to {post} instead of 1: the scale is applied after the softmax. "
               f"Inside the softmax the logits are scaled by {logit_words}.")
        return _report("scale_after_softmax", msg, probes, notes)
    if not say.close(out_factors, 1.0, rel * 10):
        post = say.post_text(probes, "out_factor")
        returned = all(p["returned_weights"] for p in probes)
        tracked = track_values(caller, probes) if caller is not None else None
        both = ("scaled_values", "scale_after_softmax")
        if tracked == "scaled":
            diag, how = "scaled_values", "v itself was multiplied or divided by a scalar before the product with " \
                                         "the weights"
        elif tracked == "product":
            diag = "scale_after_softmax"
            how = ("v entered the product unscaled, so the scale was applied to the weights (or the output) after "
                   "the softmax")
        else:
            diag = "scaled_values" if returned else "scale_after_softmax"
            how = ("from the output alone, scaling the weights after the softmax and scaling the values are the same "
                   "function; both fit")
        msg = (f"your output is t × (weights @ v) with t = {post}, and weights that sum to 1: the scale was put "
               f"outside the softmax ({how}). Inside the softmax the logits are scaled by {logit_words}.")
        return _report(diag, msg, probes, notes, candidates=both if tracked is None else (diag,))
    if logit_diag == "ok":
        return _report("ok", say.ok_message(probes), probes, notes, measured=measured)
    if logit_diag == "constant_multiple":
        measured["m"] = probes[0]["c"] * math.sqrt(probes[0]["d_k"])
    return _report(logit_diag, say.scale_bug_message(logit_diag, label, probes), probes, notes,
                   candidates=(logit_diag, *(d for d, _ in also)) if also else (), measured=measured)

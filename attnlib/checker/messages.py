"""Every sentence a report says: built from the measured numbers, one function per kind of verdict."""

from __future__ import annotations

import math

import numpy as np

from .report import fmt

AXIS_WORDS = {"L": "the number of queries L", "S": "the number of keys S", "d_v": "the value width d_v",
              "B": "the batch size B", "H": "the number of heads H"}
HEAD_SIZES = {16, 32, 48, 64, 80, 96, 112, 128, 160, 192, 256}  # head sizes people hard-code


def close(a, b, rel) -> bool:
    """All of a within a relative ``rel`` of b (arrays broadcast)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return bool(np.all(np.abs(a - b) <= rel * np.abs(b)))


def formula(p, value, rel=1e-3) -> str:
    """The factor ``value`` written from probe p's sizes ('1/√64', '√64', '1/5', ...), or ''."""
    d, h = p["d_k"], p.get("H")
    forms = [("1", 1.0), (f"1/√{d}", d**-0.5), (f"√{d}", d**0.5), (f"1/{d}", 1.0 / d)]
    if h and h > 1:
        forms += [(f"1/√{h * d}", (h * d) ** -0.5), (f"1/{h * d}", 1.0 / (h * d))]
    for axis in AXIS_WORDS:
        n = p.get(axis)
        if n and n > 1:
            forms += [(f"1/√{n}", n**-0.5), (f"1/{n}", 1.0 / n)]
    return next((text for text, f in forms if value is not None and close(value, f, rel)), "")


def scale_text(p, key="c") -> str:
    """'0.125 = 1/√64 at d_k = 64 (8 heads)'."""
    value = p[key]
    form = formula(p, value)
    where = f"d_k = {p['d_k']}" + (f" ({p['H']} heads)" if p.get("H") else "")
    return f"{fmt(value)}{' = ' + form if form and form != fmt(value) else ''} at {where}"


def unique_dk(probes):
    """The first probe at each head size."""
    seen, out = set(), []
    for p in probes:
        if p["d_k"] not in seen:
            seen.add(p["d_k"])
            out.append(p)
    return out


def all_scales(probes) -> str:
    """The measured factor at each head size, joined by '; '."""
    return "; ".join(scale_text(p) for p in unique_dk(probes))


def logit_words(diag, label, probes) -> str:
    """How the logits inside the softmax are scaled, in words (for the scale-outside-softmax messages)."""
    if diag == "ok":
        return f"1/√d_k, which is right ({all_scales(probes)})"
    if diag == "no_scale":
        return "1: not at all"
    if diag in ("wrong_scale", "fixed_scale", "constant_multiple"):
        return f"a factor that is {diag} ({all_scales(probes)})"
    return f"{label} ({all_scales(probes)}), which is {diag}"


def post_text(probes, key) -> str:
    """A row sum or output factor: one number if it is the same everywhere, else per head size."""
    vals = [p[key] for p in probes]
    if close(vals, vals[0], 1e-3) and not formula(probes[0], vals[0]).startswith(("1/√", "√")):
        return fmt(vals[0])
    return "; ".join(scale_text(p, key) for p in unique_dk(probes))


def ok_message(probes) -> str:
    """The message of an ok verdict."""
    return (f"your logits are scaled by 1/√d_k (measured {all_scales(probes)}), the weights' rows sum to 1 and "
            "the output is weights @ v.")


def scale_bug_message(diag, label, probes) -> str:
    """The message for a softmax whose factor follows a wrong rule (no_scale ... wrong_scale)."""
    ex = max(probes, key=lambda p: (p.get("H") or 0, p["d_k"]))
    c, d = ex["c"], ex["d_k"]
    at, ratio = scale_text(ex), c * math.sqrt(d)
    sizes = unique_dk(probes)
    every = ", ".join(str(p["d_k"]) for p in sizes)
    at_all = "at every head size probed" if len(sizes) > 1 else "at the one head size probed"
    if diag == "no_scale":
        return (f"your scale is 1 {at_all} (d_k = {every}): you do not scale the logits at all. "
                f"Raw q·k has std √d_k (√{d} = {fmt(math.sqrt(d))} at d_k = {d}), so softmax saturates as d_k grows "
                f"(lessons 01 and 03).")
    if diag == "times_sqrt_dk":
        return (f"your scale is {at}: you multiplied by √d_k instead of dividing (a flipped exponent, "
                f"`/ d**-0.5`). The logits are d_k = {d} times their intended size and softmax saturates.")
    if diag == "one_over_dk":
        return (f"your scale is {at}: you divided by d_k, not √d_k. The logits are {fmt(ratio)} = 1/√{d} times "
                f"their intended size, flatter the larger d_k (1/d is muP's choice, made together with its init; "
                f"lesson 05).")
    if diag == "sqrt_d_model":
        if ex.get("H") and label in ("1/√d_model", "1/d_model"):
            root = "√" if "√" in label else ""
            return (f"your scale is {at}: you divided by {root}d_model (heads × d_k = {ex['H']} × {d} = "
                    f"{ex['H'] * d}) instead of √d_k. Each head's logits are {fmt(ratio)} times their intended size, "
                    f"and the factor changes with the number of heads (lesson 04).")
        return (f"your scale is {fmt(c)} = {label} {at_all} (d_k = {every}): a fixed model width "
                f"(one of the probe's d_model = heads × d_k), not d_k taken from the arrays (lesson 04).")
    if diag == "wrong_axis":
        axis = label.split("1/", 1)[1].lstrip("√")
        return (f"your scale is {at}: that is {label} with {AXIS_WORDS[axis]} = {ex[axis]}, so d was taken from "
                f"the wrong axis, not from d_k = q.shape[-1]. The factor changes with the sequence, batch or head "
                f"count, not with the head size.")
    if diag == "fixed_scale":
        n = c**-2
        named = round(n) if abs(n - round(n)) <= 1e-3 * n and round(n) in HEAD_SIZES else None
        what = f" = 1/√{named}, a fixed head size of {named}" if named else ", a fixed number"
        return (f"your scale is {fmt(c)} {at_all} (d_k = {every}){what}: your scale does not "
                f"follow d_k (take d_k = q.shape[-1]). If you are porting Gemma, this is on purpose: Gemma scales "
                f"by query_pre_attn_scalar ** -0.5, a number from its config, not by the head size.")
    if diag == "constant_multiple":
        m = ratio
        return (f"your scale is m/√d_k with m = {fmt(m)} {at_all} ({all_scales(probes)}): the "
                f"logits are {fmt(m)} times their intended size. In a YaRN or MLA port (DeepSeek-V3, gpt-oss) this "
                f"is intended: the softmax scale there is mscale²/√d_k, with mscale = 0.1·ln(factor) + 1. "
                f"Anywhere else it is a bug.")
    cs = "; ".join(scale_text(p) + f" (1/√d_k = {fmt(p['d_k'] ** -0.5)}; it would suit d_k = {fmt(p['c'] ** -2)})"
                   for p in unique_dk(probes))
    return f"your weights are a softmax of c·q·kᵀ, but c = {cs}, which matches no known rule."


def _qk_what(whole) -> str:
    """What the logits of a QK-norm are, per head or over the whole projection."""
    if whole:  # per head the logit is g·q̂_h·k̂_h with q̂ a unit vector over all heads, not g·cos(q_h, k_h)
        return ("q and k are normalised over the whole projection (every head together) before the product: the "
                "logits are g·q̂_h·k̂_h (q̂, k̂: each position's projection over all heads, scaled to unit length)")
    return "q and k are normalised per head (over d_k) before the product: the logits are g·cos(q, k)"


def qk_norm_message(per_probe, whole, words, rule) -> str:
    """per_probe : [(d_k, g)], g > 1 the factor on the cosine of q and k (|logit| ≤ g); words, rule : how g follows
    d_k (verdict._qk_norm)."""
    gs = "; ".join(f"g = {fmt(g)} at d_k = {d}" for d, g in per_probe)
    d_min, g_min = min(per_probe, key=lambda dg: dg[1])
    at = "" if close([g for _, g in per_probe], g_min, 1e-3) else f" at d_k = {d_min}, where g is smallest"
    text = (f"{_qk_what(whole)} with {gs}, so every logit is bounded, |logit| ≤ g{words}. That is QK-norm (Qwen3, "
            f"Gemma 3, OLMo 2) with a gain above 1: one key's weight can be up to e^(2g) = {fmt(math.exp(2 * g_min))} "
            f"times another's{at}.")
    if rule == "shrinking":
        m2 = (g_min * math.sqrt(d_min)) ** 2
        text += (f" But g = m/√d_k shrinks as d_k grows and reaches 1 at d_k = m² = {fmt(m2)}, where the head can no "
                 "longer attend (qk_norm_small_gain): give the norm a gain that does not shrink with d_k.")
    return text


def qk_norm_small_gain_message(per_probe, whole, words, rule, tol) -> str:
    """per_probe : [(d_k, g)] with g ≤ 1 (within a relative tol) at some d_k: |logit| ≤ g, so no weight exceeds
    another's by more than e^(2g) and the head cannot attend there."""
    gs = "; ".join(f"g = {fmt(g)} at d_k = {d}" for d, g in per_probe)
    ratios = "; ".join(f"{fmt(math.exp(2 * g))} at d_k = {d}" for d, g in per_probe)
    small = [d for d, g in per_probe if g <= 1 + tol]
    where = ("at every head size probed" if len(small) == len(per_probe)
             else f"at d_k = {', '.join(str(d) for d in small)}, where g ≤ 1")
    drop = " and drop the 1/√d_k" if rule == "shrinking" else ""
    return (f"{_qk_what(whole)} with {gs}, so |logit| ≤ g{words}. The gain is too small: with |logit| ≤ g, no "
            "key's weight can exceed another's by more than e^(2g), however well q and k align: e^(2g) = "
            f"{ratios} (7.389 at g = 1). So {where} the head cannot attend: its weights stay within that factor of "
            "each other. The gain must be learned or large: Qwen3 and Gemma 3 keep the 1/√d_k after their RMS norm "
            "because RMS-normalised q and k have length √d_k, so g = √d_k; Henry et al. 2020's QK-norm (L2) learns "
            f"g as a parameter. Fix: after an L2 norm, multiply q̂·k̂ by a learned or large gain{drop}; or "
            "RMS-normalise q and k and then divide by √d_k.")


def qk_norm_unscaled_message(per_probe) -> str:
    """per_probe : [(d_k, g)] with g = d_k: RMS-normalised q and k whose product is never divided by √d_k."""
    gs = "; ".join(f"g = {fmt(g)} at d_k = {d}" for d, g in per_probe)
    m = per_probe[0][1] / per_probe[0][0]
    return (f"q and k are RMS-normalised per head, but their product is not scaled: the logits are g·cos(q, k) with "
            f"{gs}: g = {fmt(m)}·d_k. RMS-normalised q and k have entries of unit size, so q·k has std √d_k, as "
            "unscaled raw q·k does, and softmax saturates as d_k grows (lessons 01 and 03). QK-norm models "
            "(Qwen3, Gemma 3, OLMo 2) still divide by √d_k after the norm.")


def qk_norm_shrinking_gain(m) -> str:
    """The rule words when g = m/√d_k: unit q̂, k̂ still divided by √d_k, so the bound shrinks as d_k grows."""
    return f" (g = {fmt(m)}/√d_k: L2-normalised q̂·k̂ still divided by √d_k, so the bound shrinks with d_k)"


def soft_cap_message(cap, probes) -> str:
    """cap : the measured c of c·tanh(s/c)."""
    return (f"your logits are q·kᵀ/√d_k ({all_scales(probes)}), soft-capped as c·tanh(s/c) with c = {fmt(cap)} "
            f"before the softmax (Gemma 2, Grok-1): |logit| < {fmt(cap)}.")


def sink_message(mass, logits, probes) -> str:
    """mass : (min, max) share of a row the sink took; logits : the sink logit of each head."""
    lo, hi = min(mass), max(mass)
    return (f"your logits are scaled by 1/√d_k ({all_scales(probes)}) and a sink logit takes part of each row's "
            f"mass in the denominator (as gpt-oss's learned sinks): rows sum to {fmt(1 - hi)}–{fmt(1 - lo)}, a sink "
            f"mass of {fmt(lo)}–{fmt(hi)} (sink logits {', '.join(fmt(s) for s in logits[:8])}).")


def bias_message(probes, bias, slopes) -> str:
    """bias : (min, max) of the row-centred bias; slopes : ALiBi slopes per head, or None."""
    what = (f"ALiBi-like (−m·|i − j|, slopes m = {', '.join(fmt(m) for m in slopes[:8])})" if slopes is not None
            else f"a fixed matrix ranging over {fmt(bias[0])} … {fmt(bias[1])} (row-centred)")
    return (f"your logits are q·kᵀ/√d_k ({all_scales(probes)}) plus an additive position bias that does not depend "
            f"on q or k: {what}.")


def no_mask_note(inside) -> str:
    """The note for a function that takes no mask; inside : verdict.masked_inside's kind, or None."""
    if inside is None:
        return "your function takes no mask, so masking was not checked"
    seen = {"causal": "keys after the query (key j > query i) get weight 0 in every probe: a causal mask inside "
                      "your function",
            "causal_bottom_right": "keys j > i + S − L get weight 0 in every probe (query i, L queries, S keys): a "
                                   "causal mask inside your function, aligned to the last key as flash-attn's "
                                   "causal=True is",
            "fixed": "some keys get weight 0 at the same places in every batch and head: a mask inside your "
                     "function"}[inside]
    return (f"your function takes no mask parameter, but {seen}; the scale was measured on the open keys (a mask "
            "passed in, and float16 masking, were not checked)")


def mask_messages(kind, **n) -> str:
    """The message of each mask verdict, from the numbers the mask check measured."""
    if kind == "added":
        return (f"your mask is ADDED to the logits: a key you block keeps weight, just e^{fmt(n['a'])} = "
                f"{fmt(math.exp(n['a']))} times less than if open (True/1 became +{fmt(n['a'])}). Blocked keys need "
                f"-inf: `logits = np.where({n['name']}, logits, -np.inf)` (torch: "
                f"`logits.masked_fill(~{n['name']}, float('-inf'))`).")
    if kind == "inverted":
        return (f"your masking works with the opposite convention: it blocks the keys where {n['name']} is True. "
                f"Lesson 09 (like attnlib and torch SDPA) means True = may attend. The one-line fix: "
                f"`logits = np.where({n['name']}, logits, -np.inf)` (or pass `~{n['name']}` where you call it).")
    if kind == "leak":
        return (f"masked keys keep weight (at least {fmt(n['leak'])}) in float32 whichever mask convention is passed "
                "(boolean True = may attend or True = blocked, 1/0 numbers, or 0/-inf added): your mask does not "
                "block them. The fill value is too small: a blocked logit set to 0 (`np.where(mask, z, 0)`, "
                "`z * mask`) or to any finite number a logit can outweigh keeps weight (so does a mask that is never "
                "applied). Nothing overflows here: mask_overflow is the code for every fill that fails to block a "
                "key, too small as here or a large negative that overflows in float16. Fill with -inf: "
                "`logits = np.where(mask, logits, -np.inf)`.")
    if kind == "renorm":
        return (f"the open weights of a masked row sum to as little as {fmt(n['lo'])}, not {fmt(n['t'])}: the mask "
                "was applied after the softmax (softmax(z) * mask) without renormalising. Mask the logits "
                "with -inf before the softmax, or divide each row by its new sum.")
    if kind == "raised16":
        text = n["text"]
        return (f"in float16 {text[0].lower() + text[1:]} (it works in float32): a finite large negative fill such "
                "as -1e9 does not fit in float16 (max 65504)")
    if kind == "nan16":
        return ("in float16 rows that still have open keys turn NaN or inf (float32 is fine): the logits or the mask "
                "fill overflow float16's range (max 65504)")
    if kind == "drift16":
        return (f"in float16 the masked rows go wrong (masked keys keep weight up to {fmt(n['leak'])}, weights "
                f"differ from float32 by up to {fmt(n['err'])})")
    if n["uniform"]:
        how = ("-1e9 (or any finite fill below -65504, float16's largest negative) becomes -inf in float16, and "
               "a softmax over a row of -inf is NaN (or zeros if your softmax guards it)")
    else:
        how = ("finfo(float16).min plus a logit below -16 overflows to -inf, so the row's weight lands on the "
               "few keys whose sum stayed finite")
    return (f"a query whose keys are all masked gets {n['got16']} weights in float16 but {n['got32']} in float32: "
            f"{how}. Mask with -inf (or a boolean where) and give fully masked rows zeros, or compute the softmax "
            "in float32.")

"""The one table of verdict codes: ``DIAGNOSES`` (code -> what is true of the function) and which are ok."""

from __future__ import annotations

# (code, ok, meaning). report.ok is True exactly for the rows marked True.
_TABLE = (
    ("ok", True, "logits scaled by 1/√d_k, softmax over the keys, output = weights @ v; masking (if taken) correct"),
    ("qk_norm", True, "q and k normalised per row (L2 or RMS) before the product: logits = g·q̂·k̂ with a gain "
                      "g > 1 at every head size, so |logit| ≤ g"),
    ("soft_cap", True, "logits s = q·kᵀ/√d_k soft-capped as c·tanh(s/c) before the softmax"),
    ("attention_sink", True, "softmax with a learned sink logit per head in the denominator (rows sum below 1), "
                             "q·k scaled by 1/√d_k"),
    ("position_bias", True, "q·kᵀ/√d_k plus an additive bias that does not depend on q or k (ALiBi, relative bias)"),
    ("qk_norm_small_gain", False, "q and k normalised (L2 or RMS) but the logits' gain g ≤ 1 at some head size: "
                                  "|logit| ≤ g, so no weight can exceed another by more than e^(2g) (≤ 7.39): "
                                  "the head cannot attend (an L2 norm still divided by √d_k: g = 1/√d_k)"),
    ("no_scale", False, "logits not scaled (factor 1)"),
    ("one_over_dk", False, "divided by d_k instead of √d_k"),
    ("times_sqrt_dk", False, "multiplied by √d_k instead of dividing (exponent sign flipped)"),
    ("sqrt_d_model", False, "divided by √d_model (heads × d_k at the probe, or a width a probe used), not √d_k"),
    ("fixed_scale", False, "a constant factor that does not follow d_k (a hard-coded head size such as 64 ** -0.5; "
                           "Gemma's query_pre_attn_scalar on purpose)"),
    ("constant_multiple", False, "m/√d_k with a fixed m ≠ 1 (intended in YaRN/MLA ports as mscale², a bug otherwise)"),
    ("wrong_axis", False, "d taken from the wrong axis (sequence length, d_v, batch or heads)"),
    ("wrong_scale", False, "a softmax of scaled q·kᵀ, but with a factor that matches no known rule"),
    ("scale_after_softmax", False, "scale applied to the weights after the softmax"),
    ("scaled_values", False, "scale applied to the values or the output instead of the logits"),
    ("mask_overflow", False, "masking breaks in float16 (a finite large negative overflows) or lets masked keys "
                             "through (fill too small)"),
    ("mask_not_renormalised", False, "softmax(z) * mask without renormalising: a masked row's open weights sum "
                                     "below 1"),
    ("mask_added_boolean", False, "a boolean / 0-1 mask added to the logits instead of -inf for blocked keys"),
    ("mask_inverted", False, "masking works with the opposite convention (True = blocked); lesson 09 asks "
                             "True = may attend"),
    ("not_attention", False, "the weights are not a softmax over keys of a (normalised, capped or biased) scaled q·kᵀ"),
    ("error", False, "the function raised or returned something unusable"),
)

DIAGNOSES = {code: meaning for code, _, meaning in _TABLE}
OK_CODES = frozenset(code for code, ok, _ in _TABLE if ok)

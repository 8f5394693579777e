"""The corpus entry type and the small numpy helpers every family shares (no attnlib)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# report.ok is True exactly for these codes (the lead's table); every other code is ok=False.
OK_CODES = frozenset({"ok", "qk_norm", "soft_cap", "attention_sink", "position_bias"})
CODES = OK_CODES | frozenset({
    "qk_norm_small_gain", "no_scale", "one_over_dk", "times_sqrt_dk", "sqrt_d_model", "fixed_scale", "constant_multiple", "wrong_axis",
    "wrong_scale", "scale_after_softmax", "scaled_values", "mask_overflow", "mask_not_renormalised",
    "mask_added_boolean", "mask_inverted", "not_attention", "error"})

# The message of a layout error must name the expected layout (..., H, L, d_k) (d_v for an output) and show a
# one-line transpose wrapper.
LAYOUT_WORDS = (r"H,\s*L,\s*d_[kv]", r"transpose|swapaxes|permute|moveaxis")


@dataclass(frozen=True)
class Entry:
    """One implementation and the verdict that is true of it by construction.

    obj : the function, layer instance or layer class handed to check_attention; with ``make=True`` a zero-argument
        factory that builds it (torch entries: torch is imported only when the entry is built).
    code : the expected ``report.diagnosis``; ``report.ok`` must be ``code in OK_CODES``.
    measure : ``(label, candidates, rel_tol)`` triples: some number the report carries (in its message, notes or
        any attribute, e.g. ``report.scale``) must be within rel_tol of one of the candidates.
    words : regular expressions the report's message must match (case-insensitive).
    full : in the subset checked on all 20 seeds (the rest on 3).
    """

    name: str
    obj: object
    code: str
    family: str
    torch: bool = False
    make: bool = False
    measure: tuple = ()
    words: tuple = ()
    full: bool = False

    def build(self):
        return self.obj() if self.make else self.obj

    @property
    def ok(self) -> bool:
        return self.code in OK_CODES


def kt(k):
    """k with its last two axes swapped (kᵀ for any number of leading axes)."""
    return np.swapaxes(k, -1, -2)


def softmax(x, axis=-1):
    """Softmax over ``axis`` in x's own dtype; a row whose every entry is -inf gets zeros, not NaN."""
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return e / np.where(s == 0, 1, s)


def plain_softmax(x, axis=-1):
    """The softmax most people write: no guard for a row that is all -inf (that row becomes NaN)."""
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

"""Masks applied wrongly (and one half-precision fill), in numpy. Every function here takes a parameter named
``mask`` (lesson 09's fourth positional parameter) and its docstring says True = may attend. Away from the mask,
each computes correct attention, softmax(q·kᵀ/√d_k) @ v, so the code is the mask bug alone.

Left out (ambiguous under the table): a fill of ``finfo(float16).min`` *added* to the logits (it overflows to -inf
only for logits below about -16, and then a fully masked row puts its weight on a few keys: whether that is
"breaks" depends on the probe's logits); an additive float parameter named ``bias`` (fed a boolean it behaves as
`mask_added_boolean`, but the code is correct for the additive mask it documents); a custom function whose
``key_padding_mask`` is True = blocked (the table exempts nn.MultiheadAttention's own API only).

Cannot be told apart, so left out: a port that always computes in float16 with the -1e9 fill is the same function
as float16 code with a -inf fill and a plain softmax (float16(-1e9) IS -inf): both give NaN for a fully masked row
in every input precision, so no probe can say whether the fill "overflowed". The entry kept below computes in the
input's dtype, so its float32 result (uniform weights) differs from its float16 one (NaN): that difference is the
overflow.
"""

from __future__ import annotations

import math

import numpy as np

from ._common import Entry, kt, plain_softmax, softmax


def _logits(q, k):
    return q @ kt(k) / math.sqrt(q.shape[-1])


def fill_1e9_plain_softmax(q, k, v, mask=None):
    """mask: True = may attend. In the input's dtype: in float16, -1e9 becomes -inf and a fully masked row NaN."""
    z = _logits(q, k)
    if mask is not None:
        with np.errstate(over="ignore"):
            z = np.where(mask, z, -1e9)
    return plain_softmax(z) @ v



def fill_too_small(q, k, v, mask=None):
    """mask: True = may attend. Blocked keys get the logit -5: they keep about e^-5 of an open key's weight."""
    z = _logits(q, k)
    if mask is not None:
        z = np.where(mask, z, -5.0)
    w = plain_softmax(z)
    return w @ v, w


def multiply_not_renormalised(q, k, v, mask=None):
    """mask: True = may attend."""
    w = softmax(_logits(q, k))
    if mask is not None:
        w = w * mask  # the blocked keys' weight is dropped, the rest is not renormalised
    return w @ v, w


def multiply_not_renormalised_out_only(q, k, v, mask=None):
    """mask: True = may attend."""
    w = softmax(_logits(q, k))
    if mask is not None:
        w = np.where(mask, w, 0.0)
    return w @ v


def added_boolean(q, k, v, mask=None):
    """mask: True = may attend."""
    z = _logits(q, k)
    if mask is not None:
        z = z + mask  # adds 1 to open keys, 0 to blocked ones: nothing is blocked
    w = softmax(z)
    return w @ v, w


def added_zero_one_float(q, k, v, mask=None):
    """mask: True (1) = may attend."""
    z = _logits(q, k)
    if mask is not None:
        z = z + np.asarray(mask, dtype=z.dtype)
    return softmax(z) @ v


def inverted_where(q, k, v, mask=None):
    """softmax(q·kᵀ/√d_k) v. mask: True = may attend."""
    z = _logits(q, k)
    if mask is not None:
        z = np.where(mask, -np.inf, z)  # blocks the True keys: the opposite of the docstring
    w = softmax(z)
    return w @ v, w


def inverted_required(q, k, v, mask):
    """mask (required): True = may attend."""
    z = _logits(q, k)
    z = np.where(np.logical_not(mask), z, -np.inf)  # keeps the False keys
    return softmax(z) @ v


F = "masks"
ENTRIES = [
    # proof: where(mask, z, -1e9) in the input dtype + plain softmax: float16(-1e9) = -inf, so a fully masked row
    # is exp(-inf - (-inf)) = NaN in float16 while float32/64 give uniform weights: the finite fill overflows.
    Entry("np_mask_fill_1e9", fill_1e9_plain_softmax, "mask_overflow", F, full=True),
    # proof: blocked keys get the finite logit -5: with logits near 0 they keep weight e^-5/Σ ≈ 0.7 % each.
    Entry("np_mask_fill_too_small", fill_too_small, "mask_overflow", F),
    # proof: softmax(z) * mask: a partly masked row's open entries sum to 1 minus the blocked keys' weight.
    Entry("np_mask_not_renormalised", multiply_not_renormalised, "mask_not_renormalised", F, full=True),
    # proof: where(mask, softmax(z), 0) @ v: the same, output only.
    Entry("np_mask_not_renormalised_out", multiply_not_renormalised_out_only, "mask_not_renormalised", F),
    # proof: z + mask (bool): +1 on open keys, +0 on blocked ones, no -inf anywhere.
    Entry("np_mask_added_boolean", added_boolean, "mask_added_boolean", F, full=True),
    # proof: z + float(mask): the 0/1 mask added to the logits.
    Entry("np_mask_added_01", added_zero_one_float, "mask_added_boolean", F),
    # proof: where(mask, -inf, z) under a docstring that says True = may attend: the True keys are blocked.
    Entry("np_mask_inverted", inverted_where, "mask_inverted", F, full=True),
    # proof: keeps where not(mask), blocks the True keys; documented True = may attend.
    Entry("np_mask_inverted_required", inverted_required, "mask_inverted", F),
]

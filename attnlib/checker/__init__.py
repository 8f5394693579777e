"""Check a learner's own attention code (lesson 09): measure what it computes and name the bug.

``check_attention(fn)`` calls ``fn`` on probe inputs it builds, measures the factor ``c`` in
``softmax(c · q·kᵀ)`` that ``fn`` really uses (or the gain of a QK-norm, the cap of a soft cap, the
mass of a sink, a position bias), and returns an :class:`AttentionReport` whose repr is a
plain-words verdict with the measured numbers.

Where a verdict comes from (one module per step)
------------------------------------------------
- ``callers``  calling fn: numpy/torch functions, nn.MultiheadAttention-layout layers, the mask parameter.
- ``probe``    the inputs built and what each call gives back (weights read through one-hot values).
- ``fit``      fitting the weights: softmax of c·q·k, of g·cos(q, k), of c·tanh(s/c), plus a bias, a sink.
- ``masks``    the mask checks (convention, blocking, renormalising, float16).
- ``verdict``  the order of decisions, from measurements to a code.
- ``messages`` every sentence of a report.
- ``codes``    ``DIAGNOSES``: the one table of codes and what each means.

What can be checked
-------------------
``fn`` may be
- a function ``fn(q, k, v)`` or ``fn(q, k, v, mask)`` on numpy arrays ``q (..., H, L, d_k)``,
  ``k (..., H, S, d_k)``, ``v (..., H, S, d_v)``, returning ``out (..., H, L, d_v)`` or
  ``(out, weights)`` with ``weights (..., H, L, S)``. Functions written for 2-D arrays only
  (``q @ k.T``) are probed in 2-D; batched ones also with a batch and a head axis. A function
  written for ``(B, L, H, d)`` or returning merged heads ``(B, L, H·d_v)`` gets an ``error`` report
  that shows a one-line wrapper.
- The mask: a parameter whose name says so (mask, attn_mask, key_padding_mask, bias, attn_bias...)
  or the 4th positional one (lesson 09's place) unless its name or default says it is something
  else (tau, temperature, scale, heads, dropout, is_causal, a number default...). It is passed a
  boolean ``(..., L, S)`` array with **True = may attend** (attnlib's, torch SDPA's and lesson 09's
  convention); a name with "bias" gets 0/-inf numbers, a ``key_padding_mask`` True = blocked (that
  API's documented convention). Other conventions are tried only to name what the function does.
- a torch function (when torch is installed): tried when numpy input fails, or chosen with
  ``backend="torch"``. Tensors are float64 on the CPU; torch is imported lazily.
- a multi-head layer with ``torch.nn.MultiheadAttention``'s parameter layout (an instance, whose
  projections are set to identities for the probe and restored, or a class built at three sizes).

Half precision (numpy float16, torch half or bfloat16 inside fn) does not change the verdict of
correct code: every tolerance is a multiple of the machine epsilon of the dtype fn returns.

Diagnoses (``AttentionReport.diagnosis``); ``report.ok`` is True for the first five
------------------------------------------------------------------------------------
- ``ok``: c = 1/√d_k at every probe, rows sum to 1, output = weights @ v, masking works.
- ``qk_norm``: log-weights are linear in cos(q, k) (q and k normalised per head, or over the whole
  projection) with a gain g > 1 at every head size: reported with the bound |logit| ≤ g it implies.
- ``soft_cap``: at large logits (q stretched) the weights follow c·tanh(s/c) with s = q·k/√d_k:
  the cap c is reported.
- ``attention_sink``: rows sum below 1, with one sink logit per head in the denominator; the sink
  mass and logits are reported; q·k scaled by 1/√d_k.
- ``position_bias``: log-weights are c·q·k plus a bias that does not depend on q or k (fitted over
  redraws of q and k at one size); ALiBi slopes are named when the bias is −m·|i − j|.
- ``qk_norm_small_gain``: QK-norm as above but g ≤ 1 at some head size (an L2 norm still divided by
  √d_k: g = 1/√d_k; plain q̂·k̂: g = 1). With |logit| ≤ g no weight exceeds another by more than
  e^(2g) ≤ 7.39, so the head cannot attend; the message gives g per d_k and the fix (a learned or
  large gain; RMS norm then 1/√d_k gives g = √d_k).
- ``no_scale``: c = 1 at every probe (also RMS-normalised q, k never divided by √d_k: g = d_k).
- ``one_over_dk``: c = 1/d_k (muP's choice; a bug unless the init is muP's).
- ``times_sqrt_dk``: c = √d_k (the sign of the exponent flipped: ``/ d**-0.5``).
- ``sqrt_d_model``: c = 1/√(H·d_k), the model width at the probe, or a fixed 1/√N where N is a width
  a probe used (also 1/(H·d_k)).
- ``fixed_scale``: one constant c at every head size, not a width of the probe (``64 ** -0.5``
  hard-coded; Gemma's query_pre_attn_scalar, on purpose there).
- ``constant_multiple``: c = m/√d_k with one m ≠ 1 (YaRN/MLA's mscale², on purpose there).
- ``wrong_axis``: c = 1/√n (or 1/n) with n the length of another axis: L, S, d_v, batch or heads.
- ``wrong_scale``: a consistent softmax scale that matches none of the above (with the d_k it would suit).
- ``scale_after_softmax``: the returned weights' rows sum to a constant ≠ 1, or (output only) v was
  seen entering the product unscaled.
- ``scaled_values``: weights sum to 1 but the output is ``t · weights @ v`` with t ≠ 1 and v itself
  was scaled (watched by passing v as a tracking array). When neither can be seen, both are listed
  in ``candidates``: from the output alone they are the same function.
- ``mask_overflow``: a finite fill overflows in float16 (-1e9, finfo.min plus a logit), rows turn NaN,
  or masked keys keep weight in every convention (the fill is too small).
- ``mask_not_renormalised``: masked keys get 0 but the open weights of a masked row sum below 1
  (softmax(z) * mask).
- ``mask_added_boolean``: a boolean or 0/1 mask added to the logits: blocked keys keep weight,
  e^a times less than open ones (a = 1 when True became +1).
- ``mask_inverted``: masking works only with True = blocked while the parameter is a plain mask
  (lesson 09 asks True = may attend); the message shows the one-line fix.
- ``not_attention``: the weights are not a softmax over keys of a (normalised, capped or biased)
  scaled q·kᵀ: softmax over queries, output not linear in v, log-weights that fit no model.
- ``error``: fn raised or returned something unusable (wrong shape, NaN, not an array); layout
  problems name the expected layout (…, H, L, d_k) and show a one-line transpose wrapper.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._check import rng_from
from . import callers
from .callers import FunctionCaller, Unusable, describe_exception, is_layer
from .codes import DIAGNOSES, OK_CODES
from .fit import log_weight_points
from .masks import MASK_FORMS, check_mask
from .messages import no_mask_note
from .probe import DEFAULT_SHAPES, LAYER_SIZES, probe_arrays, probe_function, probe_layers, redrawn
from .report import AttentionReport
from .verdict import decide, masked_inside

__all__ = ["check_attention", "AttentionReport", "DIAGNOSES", "OK_CODES", "DEFAULT_SHAPES", "log_weight_points"]

_SCALE_CODES = {"ok", "qk_norm", "soft_cap", "attention_sink", "position_bias", "qk_norm_small_gain", "no_scale",
                "times_sqrt_dk", "one_over_dk", "sqrt_d_model", "fixed_scale", "constant_multiple", "wrong_axis",
                "wrong_scale"}


def check_attention(fn, *, shapes=None, backend="auto", rng=0) -> AttentionReport:
    """Measure what a learner's attention code computes and name its bug (lesson 09).

    fn : a function ``fn(q, k, v)`` / ``fn(q, k, v, mask)`` on ``q (..., L, d_k)``,
        ``k (..., S, d_k)``, ``v (..., S, d_v)`` returning ``out (..., L, d_v)`` or
        ``(out, weights (..., L, S))``; a boolean mask is True where a query may attend.
        Or a multi-head layer (instance or class) with ``nn.MultiheadAttention``'s parameter
        layout. See the package docstring for every convention and the diagnosis codes.
    shapes : probe sizes, a sequence of ``(B, H, L, S, d_k, d_v)`` tuples with ``d_v > S``
        (default ``DEFAULT_SHAPES``: d_k = 64, 16, 12 with 8, 3, 2 heads).
    backend : "auto" (numpy first, torch if numpy input fails and torch is installed),
        "numpy" or "torch".
    rng : numpy Generator or int seed for the probe inputs.

    Returns an :class:`AttentionReport`; never raises for a faulty ``fn`` (that is the
    ``error`` diagnosis). Bad arguments to the checker itself raise naming the argument.
    """
    if not callable(fn):
        raise TypeError(f"fn must be a callable (your attention function or layer); got {type(fn).__name__}")
    if backend not in ("auto", "numpy", "torch"):
        raise ValueError(f"backend must be 'auto', 'numpy' or 'torch'; got {backend!r}")
    if backend == "torch" and not callers.torch_installed():
        raise ValueError("backend='torch' needs torch installed (pip install torch==2.13.0)")
    shapes = _check_shapes(shapes)
    gen = rng_from(rng)
    try:
        if is_layer(fn):
            notes = []
            probes = probe_layers(fn, gen, notes)
            if probes[0]["H"] == 1:
                notes.append("with one head d_k = d_model, so dividing by √d_model cannot be told from √d_k")
            return decide(probes, notes, None, widths={E for _, E, _, _, _ in LAYER_SIZES} | {probes[0]["E"]})
        return _check_function(fn, shapes, backend, gen)
    except Unusable as err:
        return AttentionReport("error", str(err))
    except Exception as err:  # noqa: BLE001 (a layout the checker did not foresee: still a report, not a traceback)
        return AttentionReport("error", f"the checker could not drive your code ({describe_exception(err)}); "
                               "see attnlib.checker's docstring for the calling conventions it supports")


def _check_shapes(shapes):
    """The probe shapes, validated: a tuple of (B, H, L, S, d_k, d_v) with S >= 2 and d_v > S."""
    if shapes is None:
        return DEFAULT_SHAPES
    if isinstance(shapes, (str, bytes)) or not hasattr(shapes, "__iter__"):
        raise TypeError(f"shapes must be a sequence of (B, H, L, S, d_k, d_v) tuples; got {type(shapes).__name__}")
    out = []
    for s in shapes:
        if not isinstance(s, (tuple, list)) or len(s) != 6:
            raise ValueError(f"shapes entries must be (B, H, L, S, d_k, d_v) tuples of 6 integers; got {s!r}")
        if not all(isinstance(x, numbers.Integral) and not isinstance(x, bool) and x >= 1 for x in s):
            raise ValueError(f"shapes entries must hold positive integers; got {s!r}")
        if s[3] < 2:
            raise ValueError(f"shapes: each probe needs S >= 2 keys; got {s!r}")
        if s[5] <= s[3]:
            raise ValueError(f"shapes: each probe needs d_v > S (the first S value columns are one-hot); got {s!r}")
        out.append(tuple(int(x) for x in s))
    if not out:
        raise ValueError("shapes must hold at least one probe")
    return tuple(out)


_LAYOUTS = {4: "(B, H, L, d)", 3: "(B, L, d)", 2: "(L, d)"}


def _first_working_call(fn, shapes, backend, gen):
    """Pick backend and the largest ndim (4, 3, 2) at which fn runs; return caller + first probe."""
    backends = ["numpy", "torch"] if backend == "auto" else [backend]
    if backend == "auto" and not callers.torch_installed():
        backends = ["numpy"]
    errors = {}  # backend -> {message: [layouts]}
    ran = {}  # backend -> a message from a call that ran and returned something wrong
    state = gen.bit_generator.state
    for name in backends:
        if name == "torch" and callers.get_torch() is None:  # found but cannot be imported
            continue
        caller = FunctionCaller(fn, name)
        for ndim in (4, 3, 2):
            gen.bit_generator.state = state
            q, k, v = probe_arrays(gen, shapes[0], ndim)
            result = None
            for form in MASK_FORMS if caller.needs_mask else ["bool"]:
                caller.open_form = form
                try:
                    result = caller.call(q, k, v)
                except Unusable as err:
                    errors.setdefault(name, {}).setdefault(str(err), []).append(f"{name} {_LAYOUTS[ndim]}")
                    if err.ran and ndim == 4:
                        ran.setdefault(name, str(err))
                    result = None
                    continue
                if not caller.needs_mask or not _looks_blocked(result, k.shape[-2]):
                    break
            if result is None:
                continue
            caller.ndim = ndim
            return caller, (q, k, v, result)
    raise Unusable(_failure_message(fn, errors, ran, shapes[0], backends))


def _failure_message(fn, errors, ran, shape, backends):
    """What to tell a learner whose function ran on no layout: the backend it is written for, and its layout."""
    if ran:  # it ran and returned a wrong shape (merged heads, (B, L, H, d)): that message names the fix
        return next(iter(ran.values()))
    if _swapped_layout_runs(fn, shape, backends):
        return ("your function raised on (…, H, L, d_k) arrays but runs on (B, L, H, d_k): the checker uses "
                f"the head-first layout (…, H, L, d_k). Check it with a one-line wrapper: {callers.TRANSPOSE_WRAPPER}")
    name = "torch" if "torch" in errors and _mentions_torch(fn) else "numpy" if "numpy" in errors else "torch"
    found = errors.get(name) or next(iter(errors.values()))
    if len(found) == 1:
        return next(iter(found))
    return "; ".join(f"on {' and '.join(dict.fromkeys(where))} arrays {msg}" for msg, where in found.items())


def _mentions_torch(fn) -> bool:
    """Whether fn's code names torch (then its torch errors are the ones to report)."""
    code = getattr(getattr(callers.signature_target(fn), "__func__", callers.signature_target(fn)), "__code__", None)
    names = set(code.co_names) if code else set()
    return bool(names & {"torch", "F", "nn"}) or type(fn).__module__.startswith("torch")


def _swapped_layout_runs(fn, shape, backends):
    """Whether fn runs on (B, L, H, d) arrays (the layout of many codebases)."""
    B, H, L, S, d_k, d_v = shape
    gen = np.random.default_rng(0)
    q, k, v = gen.standard_normal((B, L, H, d_k)), gen.standard_normal((B, S, H, d_k)), gen.standard_normal(
        (B, S, H, d_v))
    for name in backends:
        caller = FunctionCaller(fn, name)
        try:
            with callers.quiet():
                result = fn(*(caller._convert(a) for a in (q, k, v)))
            out = callers.to_numpy(result[0] if isinstance(result, (tuple, list)) else result, "out")
        except Exception:  # noqa: BLE001
            continue
        if out.shape == (B, L, H, d_v):
            return True
    return False


def _looks_blocked(result, S) -> bool:
    """Output of a call whose every key was masked: NaN, zeros, or exactly uniform weights."""
    out = result[0][..., :S]
    return bool(not np.all(np.isfinite(out)) or np.allclose(out, 0.0) or np.allclose(out, 1.0 / S, rtol=1e-9))


def _check_function(fn, shapes, backend, gen) -> AttentionReport:
    """Probe a function at every shape, decide, then check its mask when it takes one."""
    caller, first = _first_working_call(fn, shapes, backend, gen)
    notes = []
    if caller.backend == "torch":
        notes.append("called with torch float64 tensors (numpy input failed)")
    if caller.ndim < 4:
        lead = {3: "(B, L, d) arrays", 2: "2-D (L, d) arrays"}[caller.ndim]
        notes.append(f"your function runs on {lead} only, so it was probed without a head axis"
                     + (": a √d_model bug could only show as a fixed width" if caller.ndim == 2 else ""))
    probes = probe_function(caller, shapes, gen, first)
    draws = None
    if not all(p["residual"] is not None and p["residual"] <= 1e-3 for p in probes):
        draws = redrawn(caller, shapes[0], gen)
    report = decide(probes, notes, caller, widths={s[1] * s[4] for s in shapes}, draws=draws)
    if report.diagnosis in _SCALE_CODES and caller.takes_mask:
        i = 1 if len(shapes) > 1 else 0
        sink = report.diagnosis == "attention_sink"
        mask_report = check_mask(caller, shapes[i], probes[i], sink, gen, report.notes)
        if mask_report is not None:
            if report.ok:
                mask_report.scale, mask_report.probes = report.scale, report.probes
                mask_report.notes = report.notes
                return mask_report
            report.notes.append(f"the mask has a bug too ({mask_report.diagnosis}): {mask_report.message}")
    elif not caller.takes_mask and report.diagnosis in _SCALE_CODES:
        report.notes.append(no_mask_note(masked_inside(probes)))
    return report

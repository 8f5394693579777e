"""Check a learner's own attention code for scale bugs (lesson 09).

``check_attention(fn)`` calls ``fn`` on probe inputs it builds, measures the factor ``c``
in ``softmax(c · q·kᵀ)`` that ``fn`` really uses, and returns an :class:`AttentionReport`
whose repr is a plain-words verdict with the measured numbers.

What can be checked
-------------------
``fn`` may be
- a function ``fn(q, k, v)`` or ``fn(q, k, v, mask)`` on numpy arrays ``q (..., L, d_k)``,
  ``k (..., S, d_k)``, ``v (..., S, d_v)``, returning ``out (..., L, d_v)`` or
  ``(out, weights)`` with ``weights (..., L, S)``. Functions written for 2-D arrays only
  (``q @ k.T``) are probed in 2-D; batched ones also with a batch and a head axis.
  A boolean ``mask`` broadcastable to ``(..., L, S)`` is passed with **True = may attend**
  (attnlib's and torch SDPA's convention); a function that reads True as "blocked"
  (``nn.MultiheadAttention``'s convention) is detected and checked with the mask inverted; so
  are 1/0 number masks and masks added to the logits (0 / -inf). A function that accepts only a
  ``(L, S)`` mask is given one.
- a torch function (when torch is installed): tried when numpy input fails, or chosen with
  ``backend="torch"``. Tensors are float64 on the CPU; torch is imported lazily.
- a multi-head layer with ``torch.nn.MultiheadAttention``'s parameter layout (as
  ``attnlib.MultiHeadAttention``): an instance (its ``in_proj_weight (3E, E)``,
  ``in_proj_bias``, ``out_proj_weight``/``out_proj.weight (E, E)`` and ``out_proj_bias`` are set
  to identity projections for the probe and restored afterwards), or a class, built as
  ``cls(num_heads, in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias)`` when its
  signature names ``in_proj_weight``, else with keywords (``embed_dim``/``d_model``/... and
  ``num_heads``/``n_heads``/...) when it names them, else as ``cls(embed_dim, num_heads)``. An
  instance's class is also built at three other sizes when that works, so that d_k and the head
  count vary. Heads are read from ``num_heads`` (or ``n_heads``, ``heads``, ``n_head``). Called as
  ``layer(query, key, value)`` batch first; sequence first when ``batch_first`` is False, or
  when there is no ``batch_first`` attribute and batch first fails. The returned weights are
  used when they are per head ``(B, H, L, S)``; otherwise the output is read (one-hot values in
  each head's slice, in chunks of d_k keys).

How the scale is measured
-------------------------
Probes draw unit-variance q, k (seeded, ``rng``) at several head sizes and head counts, with
L, S, d_k, d_v (and batch B, heads H, d_model = H·d_k) all different inside a probe, so that
a scale taken from the wrong axis shows. The values are ``v = [I_S | R]``: one-hot over the
keys, then unit-variance columns, so the first S output columns ARE the weights the function
used, whether or not it returns them. With ``W`` the weights (returned ones when available)
and ``z = q·kᵀ``, the row-centred logs satisfy ``log W − mean = c (z − mean)`` for a softmax;
``c`` is their least-squares slope, and the relative residual says whether ``W`` is a softmax
of a scaled q·kᵀ at all. Entries that underflowed (below 1e-250) are left out of the fit; a
probe that saturates completely or overflows is retried with q shrunk by 1/8 (the slope is
measured against the q actually passed, so it is unchanged).

Diagnoses (``AttentionReport.diagnosis``), in the order they are decided
-----------------------------------------------------------------------
- ``error``: ``fn`` raised, or returned something unusable (not an array, a string, None, the
  wrong shape, NaN or inf on plain float64 probes). The message says which and where.
- ``not_attention``: the weights are not a softmax over the keys of any scaled q·kᵀ (rows do
  not sum to one constant, e.g. softmax over the query axis; log-weights not linear in q·k;
  a negative scale; output not linear in v; a mask that is ignored).
- ``scale_after_softmax``: the returned weights' rows sum to a constant ≠ 1 (the scale was
  applied to the softmax's output).
- ``scaled_values``: weights sum to 1 but the output is ``t · weights @ v`` with t ≠ 1 (the
  values, or the output, carry the scale).
  *What can and cannot be told apart:* from the output alone the two are the same function:
  ``(softmax(z)·t) @ v == softmax(z) @ (t·v)``. When the weights are not returned (or are
  returned before the scaling), the checker re-runs the function with ``v`` as a tracking
  array (a numpy subclass, or a torch.Tensor subclass) and looks at whether ``v`` itself was
  multiplied or divided by a scalar before the product: yes -> ``scaled_values``; v entered
  the product unscaled -> ``scale_after_softmax``. When that cannot be seen (``np.asarray(v)``
  or a copy inside), the report says both fit (``candidates`` lists both) and names
  ``scaled_values`` if the returned weights sum to 1, else ``scale_after_softmax``.
- ``mask_overflow``: the function takes a mask and masking fails in float16 although it works
  in float32: a finite "large negative" fill such as -1e9 becomes -inf in float16 (max 65504),
  so a fully masked row turns to NaN (and torch refuses to fill it), or
  ``finfo(float16).min`` plus a logit below -16 overflows to -inf and a fully masked row puts
  its weight on a few keys; or masked keys keep weight / rows turn NaN in float16. Also used
  when masked keys keep weight in float32 (a fill that is too small). A row with every key
  masked is allowed to give zeros (attnlib, torch SDPA), uniform weights (a finite fill) or
  NaN in every precision (``-inf`` fill with a plain softmax, as ``torch.softmax``); that last
  case is reported as a note, not a bug.
- ``no_scale``: c = 1 at every probe.
- ``times_sqrt_dk``: c = √d_k (the sign of the exponent flipped: ``/ d**-0.5``).
- ``sqrt_d_model``: c = 1/√(H·d_k), the model width, or one fixed 1/√N at every head size
  (also 1/(H·d_k)). Tried before 1/d_k: the two coincide only when H = d_k, and then the
  report lists both in ``candidates`` and says so in a note.
- ``one_over_dk``: c = 1/d_k (muP's choice; a bug unless the init is muP's).
- ``wrong_axis``: c = 1/√n (or 1/n) with n the length of another axis: L, S, d_v, the batch or
  the number of heads.
- ``wrong_scale``: a consistent softmax scale that matches none of the above (measured numbers
  in the report).
- ``ok``: c = 1/√d_k at every probe, rows sum to 1, output = weights @ v, masking works.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import numbers
import sys
import warnings
from dataclasses import dataclass, field

import numpy as np

from ._check import rng_from

__all__ = ["check_attention", "AttentionReport", "DIAGNOSES", "log_weight_points"]

DIAGNOSES = {
    "ok": "logits scaled by 1/√d_k, weights sum to 1, output = weights @ v",
    "no_scale": "logits not scaled (factor 1)",
    "sqrt_d_model": "divided by √d_model (heads × d_k, or a fixed width) instead of √d_k",
    "times_sqrt_dk": "multiplied by √d_k instead of dividing (exponent sign flipped)",
    "one_over_dk": "divided by d_k instead of √d_k",
    "scale_after_softmax": "scale applied to the weights after the softmax (rows do not sum to 1)",
    "scaled_values": "scale applied to the values or the output instead of the logits",
    "wrong_axis": "d taken from the wrong axis (sequence length, d_v, batch or heads)",
    "mask_overflow": "masking breaks in float16 (a finite large negative overflows) or lets masked keys through",
    "wrong_scale": "a softmax of scaled q·kᵀ, but with a factor that matches no known bug",
    "not_attention": "the weights are not a softmax over keys of any scaled q·kᵀ",
    "error": "the function raised or returned something unusable",
}

# (B, H, L, S, d_k, d_v): every size differs from the others inside a probe, d_model = H·d_k
# too, and no two hypotheses give the same factors across the probes.
DEFAULT_SHAPES = ((2, 8, 5, 7, 64, 10), (5, 3, 6, 11, 16, 13), (4, 2, 9, 3, 12, 7))
_LAYER_SIZES = ((2, 96, 8, 5, 7), (4, 48, 3, 6, 11), (5, 36, 2, 9, 4))  # (B, E, H, L, S) for a layer class
_INSTANCE_SIZES = ((2, 5, 7), (4, 6, 11), (3, 9, 4))  # (B, L, S) for a layer instance
_REL = 1e-4  # two factors "match" within this relative difference (float32 inside fn is fine)
_TINY = 1e-250


class _Unusable(Exception):
    """fn did something the checker cannot use; the text is the report's message."""


@dataclass
class AttentionReport:
    """The checker's verdict. ``repr`` (and the notebook view) is the plain-words message.

    diagnosis : one code of ``DIAGNOSES``.   ok : diagnosis == "ok".
    scale : {d_k: measured factor c in softmax(c·q·kᵀ)} (first probe at each d_k).
    probes : one dict per probe (sizes, c, row sums, output factor).
    notes : what was and was not checked (mask convention, 2-D only, ...).
    """

    diagnosis: str
    message: str
    scale: dict = field(default_factory=dict)
    probes: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    candidates: tuple = ()

    @property
    def ok(self) -> bool:
        return self.diagnosis == "ok"

    def __repr__(self) -> str:
        head = "✓ ok" if self.ok else f"✗ {self.diagnosis}"
        lines = [f"{head}: {self.message}"]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        head = "✓ **ok**" if self.ok else f"✗ **{self.diagnosis}**"
        text = f"{head}: {self.message}"
        rows = [p for p in self.probes if p.get("c") is not None]
        if rows:
            text += "\n\n| d_k | heads | L | S | measured c | 1/√d_k |\n|---:|---:|---:|---:|---:|---:|\n"
            text += "\n".join(
                f"| {p['d_k']} | {p.get('H') or '-'} | {p['L']} | {p['S']} | {_fmt(p['c'])} "
                f"| {_fmt(p['d_k'] ** -0.5)} |"
                for p in rows)
        if self.notes:
            text += "\n\n" + "\n".join(f"- {n}" for n in self.notes)
        return text


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _close(a, b, rel=_REL) -> bool:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return bool(np.all(np.abs(a - b) <= rel * np.abs(b)))


# ------------------------------------------------------------------ conversions at the boundary


def _torch_installed() -> bool:
    """Whether torch could be imported, without importing it (that takes seconds)."""
    import importlib.util  # noqa: PLC0415

    return "torch" in sys.modules or importlib.util.find_spec("torch") is not None


def _torch():
    try:
        import torch  # noqa: PLC0415 (optional, imported only when needed)
    except ImportError:
        return None
    return torch


def _is_torch_tensor(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "detach")


def _to_numpy(x, what: str) -> np.ndarray:
    if x is None:
        raise _Unusable(f"{what} is None")
    if _is_torch_tensor(x):
        x = x.detach().cpu()
        if str(x.dtype) in ("torch.bfloat16",):
            x = x.float()
        x = x.numpy()
    if isinstance(x, (str, bytes)):
        raise _Unusable(f"{what} is a string ({x[:40]!r}), not an array")
    try:
        arr = np.asarray(x)
    except Exception as err:  # noqa: BLE001
        raise _Unusable(f"{what} ({type(x).__name__}) cannot be read as an array: {err}") from None
    if arr.dtype.kind not in "fiu":
        raise _Unusable(f"{what} is not a real-valued numeric array (got {type(x).__name__} of dtype {arr.dtype})")
    return arr.astype(np.float64) if arr.dtype.kind in "iu" else arr


@contextlib.contextmanager
def _quiet():
    """Silence warnings raised inside the learner's code (float16 overflow, ...): the report says what matters."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def _describe_exception(err: BaseException) -> str:
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return f"{type(err).__name__}: {text[:200]}" if text else type(err).__name__


# ------------------------------------------------------------------ tracking v (scaled_values vs scale_after_softmax)

_TRACK_LOG: list = []


class _TrackedValues(np.ndarray):
    """A view of v that records whether v itself is multiplied/divided by a scalar before a product."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [np.asarray(x) if isinstance(x, _TrackedValues) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(np.asarray(o) if isinstance(o, _TrackedValues) else o for o in kwargs["out"])
        if method == "__call__":
            others = [x for x, orig in zip(plain, inputs, strict=True) if not isinstance(orig, _TrackedValues)]
            if ufunc in (np.multiply, np.true_divide, np.divide) and others and all(np.size(o) == 1 for o in others):
                _TRACK_LOG.append("scaled")
            elif ufunc is np.matmul:
                _TRACK_LOG.append("product")
        return getattr(ufunc, method)(*plain, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if func in (np.einsum, np.dot, np.tensordot, np.inner, np.matmul):
            _TRACK_LOG.append("product")
            args = tuple(np.asarray(a) if isinstance(a, _TrackedValues) else a for a in args)
            return func(*args, **kwargs)
        return super().__array_function__(func, types, args, kwargs)


_TORCH_SCALE_OPS = {"mul", "div", "__mul__", "__rmul__", "__truediv__", "__imul__", "__itruediv__", "mul_", "div_",
                    "true_divide", "multiply", "divide"}
_TORCH_PRODUCT_OPS = {"matmul", "__matmul__", "__rmatmul__", "bmm", "mm", "einsum", "baddbmm", "tensordot",
                      "scaled_dot_product_attention"}
_TORCH_VIEW_OPS = {"transpose", "permute", "view", "reshape", "contiguous", "unsqueeze", "squeeze", "unflatten",
                   "flatten", "to", "double", "float", "__getitem__", "expand", "clone", "mT", "T", "swapaxes"}
_TRACKED_TENSOR = None


def _tracked_tensor_class():
    """A torch.Tensor subclass that logs whether v itself is scaled by a scalar before a product."""
    global _TRACKED_TENSOR
    if _TRACKED_TENSOR is not None:
        return _TRACKED_TENSOR
    torch = _torch()

    def is_tracked(a):
        return isinstance(a, _TRACKED_TENSOR) or (isinstance(a, (list, tuple)) and any(map(is_tracked, a)))

    class TrackedTensor(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = getattr(func, "__name__", "")
            tracked = any(map(is_tracked, args))
            if tracked and name in _TORCH_SCALE_OPS:
                others = [a for a in args if not is_tracked(a)]
                if others and all(isinstance(o, numbers.Number) or (hasattr(o, "numel") and o.numel() == 1)
                                  for o in others):
                    _TRACK_LOG.append("scaled")
            elif tracked and name in _TORCH_PRODUCT_OPS:
                _TRACK_LOG.append("product")
            with torch._C.DisableTorchFunctionSubclass():
                out = func(*args, **kwargs)
            if tracked and name in _TORCH_VIEW_OPS and isinstance(out, torch.Tensor):
                out = out.as_subclass(cls)
            return out

    _TRACKED_TENSOR = TrackedTensor
    return _TRACKED_TENSOR


# ------------------------------------------------------------------ callers: one interface for every convention


class _FunctionCaller:
    """Calls fn(q, k, v[, mask]) with numpy or torch arrays; returns (out, weights or None)."""

    def __init__(self, fn, backend: str):
        self.fn = fn
        self.backend = backend  # "numpy" or "torch"
        self.takes_mask = _takes_mask(fn)
        self.needs_mask = self.takes_mask and _mask_required(fn)
        self.open_form = "bool"  # how an all-open mask is written for a function that requires one
        self.mask_2d = False  # True for a function that only accepts a (L, S) mask
        self.ndim = None  # decided by the first successful call

    def _convert(self, arr):
        """A fresh copy for every call, so a function that edits its inputs in place cannot move the probe."""
        if arr is None:
            return None
        if self.backend == "numpy":
            return np.array(arr, copy=True)
        return _torch().from_numpy(np.array(arr, copy=True))

    def call(self, q, k, v, mask=None, track=False):
        args = [self._convert(q), self._convert(k), self._convert(v)]
        if track and self.backend == "numpy":
            args[2] = np.array(v, copy=True).view(_TrackedValues)
        elif track:
            args[2] = args[2].as_subclass(_tracked_tensor_class())
        if mask is None and self.needs_mask:  # a required mask: every key open
            mask = _mask_in_form(np.ones(q.shape[:-1] + (k.shape[-2],), dtype=bool), self.open_form, q.dtype)
        if mask is not None and self.mask_2d:
            mask = mask[(0,) * (mask.ndim - 2)]  # the probes' masks are the same for every batch and head
        if mask is not None:
            args.append(self._convert(mask))
        shapes = q.shape[:-1] + (v.shape[-1],), q.shape[:-1] + (k.shape[-2],)
        try:
            with _quiet():
                return _split_result(self.fn(*args), *shapes)
        except _Unusable:
            if mask is None or mask.ndim == 2 or self.mask_2d:
                raise
        except Exception as err:  # noqa: BLE001 (any failure of the learner's code becomes a report)
            if mask is None or mask.ndim == 2 or self.mask_2d:
                raise _Unusable(f"your function raised {_describe_exception(err)}") from None
        # a function that wants a (L, S) mask: try once more with one
        self.mask_2d = True
        try:
            return self.call(q, k, v, mask, track)
        except _Unusable:
            self.mask_2d = False
            raise


def _signature_target(fn):
    """What to read the parameters from: a torch-style module's ``forward``, else fn itself."""
    forward = getattr(fn, "forward", None)
    return forward if callable(forward) and not isinstance(fn, type) else fn


def _takes_mask(fn) -> bool:
    """True when the 4th positional parameter is a mask (by name), or a 4th one exists unnamed."""
    fn = _signature_target(fn)
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin (torch SDPA): read its documented signature
        first = (getattr(fn, "__doc__", None) or "").strip().split("\n")[0]
        args = first[first.find("(") + 1:].split(",") if "(" in first else []
        return len(args) >= 4 and "mask" in args[3]
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return any("mask" in p.name for p in params)
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if isinstance(fn, type) or (positional and positional[0].name == "self"):
        positional = positional[1:]
    if len(positional) < 4:
        return False
    name = positional[3].name.lower()
    return "mask" in name or name not in ("scale", "temperature", "dropout", "dropout_p", "causal", "is_causal",
                                          "training", "need_weights", "eps", "softmax_scale")


def _mask_required(fn) -> bool:
    fn = _signature_target(fn)
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return False
    if params and params[0].name == "self":
        params = params[1:]
    return len(params) >= 4 and params[3].default is inspect.Parameter.empty


def _split_result(result, out_shape: tuple, w_shape: tuple):
    """(out, weights or None) from whatever fn returned; raise _Unusable with a clear reason."""
    weights = None
    if isinstance(result, (tuple, list)) and not isinstance(result, str):
        if len(result) == 0:
            raise _Unusable("your function returned an empty tuple")
        if len(result) > 2:
            raise _Unusable(f"your function returned {len(result)} values; expected out or (out, weights)")
        out = _to_numpy(result[0], "the output (first returned value)")
        if len(result) == 2 and result[1] is not None:
            weights = _to_numpy(result[1], "the weights (second returned value)")
            if out.shape == w_shape and weights.shape == out_shape and w_shape != out_shape:
                out, weights = weights, out  # (weights, out): accept the other order
    else:
        out = _to_numpy(result, "the returned value")
    if out.shape != out_shape:
        raise _Unusable(f"your function returned an output of shape {out.shape}; expected {out_shape} (..., L, d_v)")
    if weights is not None and weights.shape != w_shape:
        raise _Unusable(f"your function returned weights of shape {weights.shape}; expected {w_shape} (..., L, S)")
    return out, weights


class _ModuleCaller:
    """Drives a layer with nn.MultiheadAttention's parameter layout, identity projections."""

    def __init__(self, layer, owned: bool):
        self.layer = layer
        self.owned = owned  # built by the checker (no need to restore parameters)
        w = _param(layer, "in_proj_weight")
        if w is None or not hasattr(w, "shape"):
            raise _Unusable("the layer has no in_proj_weight (3E, E): the checker drives layers with "
                            "nn.MultiheadAttention's parameter layout only (separate q/k/v projections are not read)")
        self.torch = _is_torch_tensor(w)
        shape = tuple(w.shape)
        if len(shape) != 2 or shape[0] != 3 * shape[1]:
            raise _Unusable(f"in_proj_weight has shape {shape}; expected (3E, E) as in nn.MultiheadAttention")
        self.E = int(shape[1])
        names = ("num_heads", "n_heads", "heads", "n_head")
        heads = next((getattr(layer, n) for n in names if hasattr(layer, n)), None)
        if not isinstance(heads, numbers.Integral) or heads < 1 or self.E % heads:
            raise _Unusable(f"the layer has no usable num_heads attribute (got {heads!r}) for E = {self.E}")
        self.H = int(heads)
        self.d_k = self.E // self.H
        self.batch_first = bool(getattr(layer, "batch_first", True))
        self.layout_known = hasattr(layer, "batch_first")  # else batch first, then sequence first
        self.saved = None

    def __enter__(self):
        names = ["in_proj_weight", "in_proj_bias", "out_proj_weight", "out_proj_bias"]
        self.saved = {n: _copy(_param(self.layer, n)) for n in names if _param(self.layer, n) is not None}
        E = self.E
        values = {"in_proj_weight": np.vstack([np.eye(E)] * 3), "in_proj_bias": np.zeros(3 * E),
                  "out_proj_weight": np.eye(E), "out_proj_bias": np.zeros(E)}
        for n in self.saved:
            _set_param(self.layer, n, values[n])
        return self

    def __exit__(self, *exc):
        if not self.owned and self.saved:
            for n, value in self.saved.items():
                _set_param(self.layer, n, value)
        return False

    def call(self, query, key, value):
        try:
            return self._call(query, key, value)
        except _Unusable:
            if self.layout_known:
                raise
            self.batch_first = not self.batch_first  # try the other layout once; keep it if it works
            try:
                return self._call(query, key, value)
            except _Unusable:
                self.batch_first = not self.batch_first
                raise

    def _call(self, query, key, value):
        torch = _torch() if self.torch else None
        args = [np.array(query, copy=True), np.array(key, copy=True), np.array(value, copy=True)]
        if not self.batch_first:
            args = [np.swapaxes(a, 0, 1) for a in args]
        if torch is not None:
            dtype = _param(self.layer, "in_proj_weight").dtype
            args = [torch.from_numpy(np.ascontiguousarray(a)).to(dtype) for a in args]
        kwargs = {}
        if torch is not None and isinstance(self.layer, torch.nn.MultiheadAttention):
            kwargs = {"need_weights": True, "average_attn_weights": False}
        try:
            with _quiet():
                if torch is not None:
                    with torch.no_grad():
                        result = self.layer(*args, **kwargs)
                else:
                    result = self.layer(*args, **kwargs)
        except Exception as err:  # noqa: BLE001
            raise _Unusable(f"your layer raised {_describe_exception(err)}") from None
        B, L, S = query.shape[0], query.shape[1], key.shape[1]
        out_shape = (B, L, self.E) if self.batch_first else (L, B, self.E)
        if isinstance(result, (tuple, list)) and len(result) == 2:
            out = _to_numpy(result[0], "the layer's output")
            w = None if result[1] is None else _to_numpy(result[1], "the layer's weights")
        else:
            out, w = _to_numpy(result, "the layer's output"), None
        if out.shape != out_shape:
            raise _Unusable(f"your layer returned an output of shape {out.shape}; expected {out_shape}")
        if not self.batch_first:
            out = np.swapaxes(out, 0, 1)
        if w is not None and w.shape != (B, self.H, L, S):
            w = None  # averaged over heads (or another layout): use the output instead
        return out.astype(np.float64), None if w is None else w.astype(np.float64)


def _param(layer, name):
    if name.startswith("out_proj_") and not hasattr(layer, name) and hasattr(layer, "out_proj"):
        return getattr(layer.out_proj, name.split("_")[-1], None)
    return getattr(layer, name, None)


def _copy(x):
    return x.detach().clone() if _is_torch_tensor(x) else np.array(x, copy=True)


def _set_param(layer, name, value):
    current = _param(layer, name)
    if _is_torch_tensor(current):
        torch = _torch()
        with torch.no_grad():
            current.copy_(torch.as_tensor(np.asarray(value) if not _is_torch_tensor(value) else value))
    elif name.startswith("out_proj_") and not hasattr(layer, name):
        setattr(layer.out_proj, name.split("_")[-1], np.array(value, dtype=float))
    else:
        setattr(layer, name, np.array(value, dtype=float))


def _build_layer(cls, E: int, H: int):
    try:
        names = set(inspect.signature(cls).parameters)
    except (TypeError, ValueError):
        names = set()
    e_names = ("embed_dim", "d_model", "embed_size", "dim", "n_embd", "hidden_size")
    h_names = ("num_heads", "n_heads", "heads", "n_head", "num_attention_heads")
    e_name = next((n for n in e_names if n in names), None)
    h_name = next((n for n in h_names if n in names), None)
    try:
        if "in_proj_weight" in names:
            return cls(H, np.vstack([np.eye(E)] * 3), np.zeros(3 * E), np.eye(E), np.zeros(E))
        if e_name and h_name:
            return cls(**{e_name: E, h_name: H})
        return cls(E, H)
    except Exception as err:  # noqa: BLE001
        raise _Unusable(f"building your layer class as {cls.__name__}(embed_dim={E}, num_heads={H}) raised "
                        f"{_describe_exception(err)}") from None


# ------------------------------------------------------------------ measuring


def _fit_scale(z: np.ndarray, w: np.ndarray, tiny: float = _TINY):
    """Least-squares c in log w = c z + row constant; returns (c, relative residual, usable rows)."""
    z = z.reshape(-1, z.shape[-1])
    w = w.reshape(-1, w.shape[-1])
    num = den = 0.0
    rows = []
    for zr, wr in zip(z, w, strict=True):
        keep = wr > tiny
        if keep.sum() < 2:
            continue
        lw = np.log(wr[keep])
        zc, lc = zr[keep] - zr[keep].mean(), lw - lw.mean()
        rows.append((zc, lc))
        num += float(zc @ lc)
        den += float(zc @ zc)
    if not rows or den == 0.0:
        return None, None, 0
    c = num / den
    res = sum(float(((lc - c * zc) ** 2).sum()) for zc, lc in rows)
    tot = sum(float((lc**2).sum()) for _, lc in rows)
    rel = math.sqrt(res / tot) if tot > 0 else 0.0
    return c, rel, len(rows)


def log_weight_points(q, k, weights):
    """Row-centred (q·k, log weight) pairs and their least-squares slope c (lesson 09).

    q : (..., L, d_k), k : (..., S, d_k), weights : (..., L, S) with positive entries.
    For weights = softmax(c·q·kᵀ) the points lie on the line y = c·x; the slope is the
    factor ``check_attention`` reports. Returns (x (n,), y (n,), c).
    """
    q, k, w = (np.asarray(a, dtype=np.float64) for a in (q, k, weights))
    if q.ndim < 2 or k.ndim < 2 or q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q (..., L, d_k) and k (..., S, d_k) must share d_k; got q {q.shape}, k {k.shape}")
    z = q @ np.swapaxes(k, -1, -2)
    if w.shape != z.shape:
        raise ValueError(f"weights must have shape (..., L, S) = {z.shape}; got {w.shape}")
    if not np.all(w > 0):
        raise ValueError("weights must be positive (a log is taken); got zeros or negative entries")
    lw = np.log(w)
    x = (z - z.mean(-1, keepdims=True)).ravel()
    y = (lw - lw.mean(-1, keepdims=True)).ravel()
    return x, y, float(x @ y / (x @ x))


def _probe_arrays(rng, shape: tuple, ndim: int):
    B, H, L, S, d_k, d_v = shape
    lead = {4: (B, H), 3: (B,), 2: ()}[ndim]
    q = rng.standard_normal((*lead, L, d_k))
    k = rng.standard_normal((*lead, S, d_k))
    extra = rng.standard_normal((*lead, S, d_v - S))
    v = np.concatenate([np.broadcast_to(np.eye(S), (*lead, S, S)), extra], axis=-1)
    return q, k, v


def _analyse(q, k, v, out, weights, S):
    """Weights, row sums and output factor of one probe; raises _Unusable on NaN."""
    src = weights if weights is not None else out
    tiny = {8: _TINY, 4: 1e-30, 2: 1e-4}.get(src.dtype.itemsize, _TINY)
    out = out.astype(np.float64)
    weights = None if weights is None else weights.astype(np.float64)
    if not np.all(np.isfinite(out)):
        raise _Unusable("your function returned NaN or inf on plain float64 inputs of unit variance")
    if weights is not None and not np.all(np.isfinite(weights)):
        raise _Unusable("your function returned weights with NaN or inf on plain float64 inputs")
    w_out = out[..., :S]  # v starts with the identity over keys: these columns are the weights used
    lin = out[..., S:] - w_out @ v[..., S:]
    linear = bool(np.abs(lin).max(initial=0.0) <= 1e-5 * max(1.0, np.abs(out).max()))
    z = q @ np.swapaxes(k, -1, -2)
    info = {"linear": linear}
    w_src = weights if weights is not None else w_out
    sums = w_src.sum(-1)
    info["row_sum"] = float(np.median(sums))
    info["rows_constant"] = bool(np.all(np.abs(sums - info["row_sum"]) <= 1e-4 * max(abs(info["row_sum"]), 1e-12)))
    info["cols_one"] = bool(np.allclose(w_src.sum(-2), 1.0, rtol=1e-4, atol=1e-6)) and not info["rows_constant"]
    if weights is not None:
        # output factor t: out[..., :S] = t · weights
        denom = float((weights * weights).sum())
        t = float((w_out * weights).sum()) / denom if denom > 0 else float("nan")
        info["out_factor"] = t
        info["out_consistent"] = bool(np.allclose(w_out, t * weights, rtol=1e-4, atol=1e-8 * max(1.0, abs(t))))
    else:
        info["out_factor"] = info["row_sum"]
        info["out_consistent"] = True
    scale_w = w_src / info["row_sum"] if info["row_sum"] > 0 else w_src
    c, resid, used = _fit_scale(z, scale_w, tiny)
    info.update(c=c, residual=resid, rows_used=used, min_weight=float(w_src.min()))
    return info


# ------------------------------------------------------------------ public entry point


def check_attention(fn, *, shapes=None, backend="auto", rng=0) -> AttentionReport:
    """Measure the logit scale a learner's attention code uses and name its bug (lesson 09).

    fn : a function ``fn(q, k, v)`` / ``fn(q, k, v, mask)`` on ``q (..., L, d_k)``,
        ``k (..., S, d_k)``, ``v (..., S, d_v)`` returning ``out (..., L, d_v)`` or
        ``(out, weights (..., L, S))``; a boolean mask is True where a query may attend.
        Or a multi-head layer (instance or class) with ``nn.MultiheadAttention``'s parameter
        layout. See the module docstring for every convention and the diagnosis codes.
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
    if backend == "torch" and not _torch_installed():
        raise ValueError("backend='torch' needs torch installed (pip install torch==2.13.0)")
    shapes = _check_shapes(shapes)
    gen = rng_from(rng)
    try:
        if _is_layer(fn):
            return _check_layer(fn, gen)
        return _check_function(fn, shapes, backend, gen)
    except _Unusable as err:
        return AttentionReport("error", str(err))
    except Exception as err:  # noqa: BLE001 (a layout the checker did not foresee: still a report, not a traceback)
        return AttentionReport("error", f"the checker could not drive your code ({_describe_exception(err)}); "
                               "see attnlib.checker's docstring for the calling conventions it supports")


def _check_shapes(shapes):
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
        if s[1] < 1 or s[3] < 2:
            raise ValueError(f"shapes: each probe needs S >= 2 keys; got {s!r}")
        if s[5] <= s[3]:
            raise ValueError(f"shapes: each probe needs d_v > S (the first S value columns are one-hot); got {s!r}")
        out.append(tuple(int(x) for x in s))
    if not out:
        raise ValueError("shapes must hold at least one probe")
    return tuple(out)


def _is_layer(fn) -> bool:
    if isinstance(fn, type):
        return True
    return hasattr(fn, "in_proj_weight") or (hasattr(fn, "out_proj") and hasattr(fn, "num_heads"))


# ------------------------------------------------------------------ functions


def _first_working_call(fn, shapes, backend, gen):
    """Pick backend and the largest ndim (4, 3, 2) at which fn runs; return caller + first probe."""
    backends = ["numpy", "torch"] if backend == "auto" else [backend]
    if backend == "auto" and not _torch_installed():
        backends = ["numpy"]
    errors = {}  # message -> the array layouts that gave it
    state = gen.bit_generator.state
    for name in backends:
        if name == "torch" and _torch() is None:  # found but cannot be imported
            continue
        caller = _FunctionCaller(fn, name)
        for ndim in (4, 3, 2):
            gen.bit_generator.state = state
            q, k, v = _probe_arrays(gen, shapes[0], ndim)
            result = None
            for form in _MASK_FORMS if caller.needs_mask else ["bool"]:
                caller.open_form = form
                try:
                    result = caller.call(q, k, v)
                except _Unusable as err:
                    layout = f"{name} {'(B, H, L, d)' if ndim == 4 else '(B, L, d)' if ndim == 3 else '(L, d)'}"
                    errors.setdefault(str(err), []).append(layout)
                    result = None
                    continue
                if not caller.needs_mask or not _looks_blocked(result, k.shape[-2]):
                    break
            if result is None:
                continue
            caller.ndim = ndim
            return caller, (q, k, v, result)
    if len(errors) == 1:
        raise _Unusable(next(iter(errors)))
    raise _Unusable("; ".join(f"on {' and '.join(dict.fromkeys(where))} arrays {msg}" for msg, where in errors.items()))


def _looks_blocked(result, S) -> bool:
    """Output of a call whose every key was masked: NaN, zeros, or exactly uniform weights."""
    out = result[0][..., :S]
    return bool(not np.all(np.isfinite(out)) or np.allclose(out, 0.0) or np.allclose(out, 1.0 / S, rtol=1e-9))


def _check_function(fn, shapes, backend, gen) -> AttentionReport:
    caller, first = _first_working_call(fn, shapes, backend, gen)
    notes = []
    if caller.backend == "torch":
        notes.append("called with torch float64 tensors (numpy input failed)")
    if caller.ndim < 4:
        lead = {3: "(B, L, d) arrays", 2: "2-D (L, d) arrays"}[caller.ndim]
        notes.append(f"your function runs on {lead} only, so it was probed without a head axis"
                     + (": a √d_model bug could only show as a fixed width" if caller.ndim == 2 else ""))
    probes = []
    for i, shape in enumerate(shapes):
        if i == 0:
            q, k, v, (out, w) = first
        else:
            q, k, v = _probe_arrays(gen, shape, caller.ndim)
            out, w = caller.call(q, k, v)
        info = _measure_with_retry(caller, q, k, v, out, w, shape[3])
        B, H, L, S, d_k, d_v = shape
        info.update(B=B if caller.ndim >= 3 else None, H=H if caller.ndim == 4 else None,
                    L=L, S=S, d_k=d_k, d_v=d_v, returned_weights=w is not None)
        probes.append(info)
    report = _verdict(probes, notes, caller)
    if report.diagnosis in ("ok", "no_scale", "times_sqrt_dk", "one_over_dk", "sqrt_d_model", "wrong_axis",
                            "wrong_scale") and caller.takes_mask:
        mask_report = _check_mask(caller, shapes[1] if len(shapes) > 1 else shapes[0], probes, gen, notes)
        if mask_report is not None and report.ok:
            return mask_report
        if mask_report is not None:
            notes.append(f"the mask has a bug too ({mask_report.diagnosis}): {mask_report.message}")
    elif not caller.takes_mask:
        notes.append("your function takes no mask, so masking was not checked")
    return report


def _measure_with_retry(caller, q, k, v, out, w, S):
    """Analyse one probe; if it overflowed or saturated completely, retry with q shrunk by 8, 64, 512."""
    error = None
    for shrink in (1.0, 1 / 8, 1 / 64, 1 / 512):
        if shrink != 1.0:
            out, w = caller.call(q * shrink, k, v)
        try:
            info = _analyse(q * shrink, k, v, out, w, S)
        except _Unusable as err:
            error = err
            continue
        if info["c"] is not None:
            info["q_shrunk"] = shrink
            return info
    raise error or _Unusable("every probe row put all its weight on one key even with q shrunk 512-fold: "
                             "the scale is too large to measure")


def _hypotheses(p):
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
    for axis in _AXIS_WORDS:
        n = p.get(axis)
        if n and n > 1:
            yield "wrong_axis", f"1/√{axis}", n**-0.5
            yield "wrong_axis", f"1/{axis}", 1.0 / n


_AXIS_WORDS = {"L": "the number of queries L", "S": "the number of keys S", "d_v": "the value width d_v",
               "B": "the batch size B", "H": "the number of heads H"}


def _match_scale(probes):
    """The diagnosis whose factor fits every probe's measured c, with its label."""
    tables = [{label: factor for _, label, factor in _hypotheses(p)} for p in probes]
    fits = [(diag, label) for diag, label, _ in _hypotheses(probes[0])
            if all(label in t and _close(p["c"], t[label]) for p, t in zip(probes, tables, strict=True))]
    if fits:
        return fits[0][0], fits[0][1], [f for f in fits[1:] if f[0] != fits[0][0]]
    cs = [p["c"] for p in probes]
    if _close(cs, cs[0]) and len({p["d_k"] for p in probes}) > 1:
        n = cs[0] ** -2
        if n >= 2 and abs(n - round(n)) <= 1e-3 * n:
            return "sqrt_d_model", f"1/√{round(n)} at every head size", []
    return "wrong_scale", None, []


def _formula(p, value) -> str:
    """The factor ``value`` written from probe p's sizes ('1/√64', '√64', '1/5', ...), or ''."""
    d, h = p["d_k"], p.get("H")
    forms = [("1", 1.0), (f"1/√{d}", d**-0.5), (f"√{d}", d**0.5), (f"1/{d}", 1.0 / d)]
    if h and h > 1:
        forms += [(f"1/√{h * d}", (h * d) ** -0.5), (f"1/{h * d}", 1.0 / (h * d))]
    for axis in ("L", "S", "d_v", "B", "H"):
        n = p.get(axis)
        if n and n > 1:
            forms += [(f"1/√{n}", n**-0.5), (f"1/{n}", 1.0 / n)]
    return next((text for text, f in forms if value is not None and _close(value, f)), "")


def _scale_text(p, key="c") -> str:
    value = p[key]
    form = _formula(p, value)
    where = f"d_k = {p['d_k']}" + (f" ({p['H']} heads)" if p.get("H") else "")
    return f"{_fmt(value)}{' = ' + form if form and form != _fmt(value) else ''} at {where}"


def _verdict(probes, notes, caller) -> AttentionReport:
    scale = {}
    for p in probes:
        scale.setdefault(p["d_k"], p["c"])
    # 1. is it a softmax over keys of a scaled q·kᵀ at all?
    for p in probes:
        why = None
        if not p["linear"]:
            why = "the output is not linear in v (not a weighted average of the values)"
        elif p["cols_one"]:
            why = "the weights' columns sum to 1, not their rows: the softmax runs over the queries axis, not the keys"
        elif not p["rows_constant"]:
            why = "the weights' rows do not sum to one common value: not a softmax over the keys"
        elif p["residual"] is not None and p["residual"] > 1e-3:
            why = (f"log-weights are not a linear function of q·k (relative misfit {_fmt(p['residual'])} at "
                   f"d_k = {p['d_k']}): not softmax(c·q·kᵀ)")
        elif p["c"] is not None and p["c"] <= 0:
            why = f"the weights fall as q·k rises (measured factor {_fmt(p['c'])})"
        if why:
            return AttentionReport("not_attention", why, scale, probes, notes)
    # 2. where the scale sits
    logit_diag, label, also = _match_scale(probes)
    if also:
        notes.append("at these sizes the measured factor also equals " + " and ".join(
            f"{lab} ({diag})" for diag, lab in also) + ": probe more sizes (pass a layer's class, or other shapes) "
            "to tell them apart")
    logit_words = _logit_words(logit_diag, label, probes)
    row_sums = [p["row_sum"] for p in probes]
    out_factors = [p["out_factor"] for p in probes]
    if not _close(row_sums, 1.0) and all(p["returned_weights"] for p in probes):
        post = _post_text(probes, "row_sum")
        msg = (f"your weights' rows sum to {post} instead of 1: the scale is applied after the softmax. "
               f"Inside the softmax the logits are scaled by {logit_words}.")
        return AttentionReport("scale_after_softmax", msg, scale, probes, notes)
    if not _close(out_factors, 1.0):
        post = _post_text(probes, "out_factor")
        returned = all(p["returned_weights"] for p in probes)
        tracked = _track_values(caller, probes) if caller is not None else None
        both = ("scaled_values", "scale_after_softmax")
        if tracked == "scaled":
            diag = "scaled_values"
            how = "v itself was multiplied or divided by a scalar before the product with the weights"
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
        return AttentionReport(diag, msg, scale, probes, notes, candidates=both if tracked is None else (diag,))
    if logit_diag == "ok":
        msg = ("your logits are scaled by 1/√d_k (measured " + "; ".join(_scale_text(p) for p in _unique_dk(probes))
               + "), the weights' rows sum to 1 and the output is weights @ v.")
        return AttentionReport("ok", msg, scale, probes, notes)
    msg = _bug_message(logit_diag, label, probes)
    return AttentionReport(logit_diag, msg, scale, probes, notes,
                           candidates=(logit_diag, *(d for d, _ in also)) if also else ())


def _unique_dk(probes):
    seen, out = set(), []
    for p in probes:
        if p["d_k"] not in seen:
            seen.add(p["d_k"])
            out.append(p)
    return out


def _post_text(probes, key) -> str:
    vals = [p[key] for p in probes]
    if _close(vals, vals[0]) and not _formula(probes[0], vals[0]).startswith(("1/√", "√")):
        return _fmt(vals[0])
    return "; ".join(_scale_text(p, key) for p in _unique_dk(probes))


def _logit_words(diag, label, probes) -> str:
    cs = "; ".join(_scale_text(p) for p in _unique_dk(probes))
    if diag == "ok":
        return f"1/√d_k, which is right ({cs})"
    if diag == "no_scale":
        return "1: not at all"
    if diag == "wrong_scale":
        return f"a factor that matches no known bug ({cs})"
    return f"{label} ({cs}), which is {diag}"


def _bug_message(diag, label, probes) -> str:
    ex = max(probes, key=lambda p: (p.get("H") or 0, p["d_k"]))
    c, d = ex["c"], ex["d_k"]
    at = _scale_text(ex)
    ratio = c * math.sqrt(d)
    every = ", ".join(str(p["d_k"]) for p in _unique_dk(probes))
    if diag == "no_scale":
        return (f"your scale is 1 at every head size probed (d_k = {every}): you do not scale the logits at all. "
                f"Raw q·k has std √d_k (√{d} = {_fmt(math.sqrt(d))} at d_k = {d}), so softmax saturates as d_k grows "
                f"(lessons 01 and 03).")
    if diag == "times_sqrt_dk":
        return (f"your scale is {at}: you multiplied by √d_k instead of dividing (a flipped exponent, "
                f"`/ d**-0.5`). The logits are d_k = {d} times their intended size and softmax saturates.")
    if diag == "one_over_dk":
        return (f"your scale is {at}: you divided by d_k, not √d_k. The logits are {_fmt(ratio)} = 1/√{d} times "
                f"their intended size, flatter the larger d_k (1/d is muP's choice, made together with its init; "
                f"lesson 05).")
    if diag == "sqrt_d_model":
        if ex.get("H") and label and "d_model" in label:
            root = "√" if "√" in label else ""
            return (f"your scale is {at}: you divided by {root}d_model (heads × d_k = {ex['H']} × {d} = "
                    f"{ex['H'] * d}) instead of √d_k. Each head's logits are {_fmt(ratio)} times their intended size, "
                    f"and the factor changes with the number of heads (lesson 04).")
        return (f"your scale is {_fmt(c)} = {label.split(' at')[0]} at every head size probed (d_k = {every}): a fixed "
                f"width such as d_model, not d_k taken from the arrays (lesson 04).")
    if diag == "wrong_axis":
        axis = label.split("1/", 1)[1].lstrip("√")
        return (f"your scale is {at}: that is {label} with {_AXIS_WORDS[axis]} = {ex[axis]}, so d was taken from "
                f"the wrong axis, not from d_k = q.shape[-1]. The factor changes with the sequence, batch or head "
                f"count, not with the head size.")
    cs = "; ".join(_scale_text(p) + f" (1/√d_k = {_fmt(p['d_k'] ** -0.5)})" for p in _unique_dk(probes))
    return f"your weights are a softmax of c·q·kᵀ, but c = {cs}, which matches none of the known bugs."


def _track_values(caller, probes):
    """Re-run a function with v as a tracking array (numpy) or tensor (torch): 'scaled', 'product' or None."""
    if not isinstance(caller, _FunctionCaller):
        return None
    p = probes[0]
    shape = (p["B"] or 2, p["H"] or 2, p["L"], p["S"], p["d_k"], p["d_v"])
    q, k, v = _probe_arrays(np.random.default_rng(0), shape, caller.ndim)
    _TRACK_LOG.clear()
    try:
        caller.call(q, k, v, track=True)
    except _Unusable:
        return None
    log = list(_TRACK_LOG)
    _TRACK_LOG.clear()
    if not log:
        return None
    return "scaled" if log[0] == "scaled" else "product"


# ------------------------------------------------------------------ masks in float32 and float16


def _mask_weights(caller, q, k, v, mask, S, t):
    out, w = caller.call(q, k, v, mask)
    if w is not None:
        return np.asarray(w, dtype=np.float64)
    return np.asarray(out[..., :S], dtype=np.float64) / t


def _row_kind(row) -> str:
    if not np.all(np.isfinite(row)):
        return "NaN"
    if np.allclose(row, 0.0, atol=1e-3):
        return "zeros"
    if np.allclose(row, row.mean(), rtol=2e-2, atol=1e-3) and abs(row.sum() - 1) < 2e-2:
        return "uniform"
    return "other"


_MASK_FORMS = {
    "bool": "booleans, True = may attend",
    "bool_blocked": "booleans with True = blocked (nn.MultiheadAttention's convention)",
    "float01": "numbers, 1 = may attend and 0 = blocked",
    "additive": "numbers added to the logits (0 = may attend, -inf = blocked)",
}


def _mask_in_form(allow, form, dtype):
    if form == "bool":
        return allow
    if form == "bool_blocked":
        return ~allow
    if form == "float01":
        return allow.astype(dtype)
    return np.where(allow, 0.0, -np.inf).astype(dtype)


def _check_mask(caller, shape, probes, gen, notes):
    """Float32 then float16 calls with a partly masked row, a fully masked row and open rows."""
    B, H, L, S, d_k, d_v = shape
    lead = {4: (B, H), 3: (B,), 2: ()}[caller.ndim]
    p = next(pp for pp in probes if pp["d_k"] == d_k)
    c, t = p["c"], p["out_factor"]
    # q rows 0 and 1 along one direction u; keys spread along u so that c·q·k runs from -40 to +4
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
    allow[..., 0, 1::2] = False  # row 0: every other key masked (the largest logit stays open)
    allow[..., 0, S - 1] = True
    allow[..., 1, :] = False  # row 1: every key masked
    for i in range(2, L, 2):
        allow[..., i, i % (S - 1) + 1:] = False  # causal-like rows (key 0 always open)
    partial = np.ones(L, dtype=bool)
    partial[1] = False
    # Try the mask conventions in turn (allow stays "may attend"); keep the first that blocks in float32.
    q32, k32, v32 = (a.astype(np.float32) for a in (q, k, v))
    leaks, errors, form, w32 = [], [], None, None
    for candidate in _MASK_FORMS:
        try:
            w = _mask_weights(caller, q32, k32, v32, _mask_in_form(allow, candidate, np.float32), S, t)
        except _Unusable as err:
            errors.append(str(err))
            continue
        leak = float(np.where(allow, 0.0, np.nan_to_num(w, nan=1.0))[..., partial, :].max())
        leaks.append(leak)
        if leak <= 1e-3:
            form, w32 = candidate, w
            break
    if form is None and not leaks:
        notes.append(f"calling your function with a mask failed ({errors[0]}); masking was not checked")
        return None
    if form is None:
        return AttentionReport(
            "mask_overflow", f"masked keys keep weight (at least {_fmt(min(leaks))}) in float32 whichever mask "
            "convention is passed (boolean True = may attend or True = blocked, 1/0 numbers, or 0/-inf added): "
            "the mask is not applied, or its fill value is too small to block a key",
            _scale_dict(probes), probes, notes)
    if form != "bool":
        notes.append(f"your function reads the mask as {_MASK_FORMS[form]}; it was checked with that convention")
    full_rows = [i for i in range(L) if not partial[i]]
    kind32 = {_row_kind(w32[(0,) * len(lead) + (i,)]) for i in full_rows}
    f16 = tuple(a.astype(np.float16) for a in (q, k, v))
    try:
        w16 = _mask_weights(caller, *f16, _mask_in_form(allow, form, np.float16), S, t)
    except _Unusable as err:
        text = str(err)
        if "not implemented for 'Half'" in text:
            notes.append("your framework has no float16 kernel for this on the CPU: float16 masking not checked")
            return None
        return AttentionReport("mask_overflow", f"in float16 {text[0].lower() + text[1:]} (it works in float32): "
                               "a finite large negative fill such as -1e9 does not fit in float16 (max 65504)",
                               _scale_dict(probes), probes, notes)
    sel = (Ellipsis, partial, slice(None))
    w16p, w32p = w16[sel], w32[sel]
    if not np.all(np.isfinite(w16p)):
        return AttentionReport("mask_overflow", "in float16 rows that still have open keys turn NaN or inf (float32 is "
                               "fine): the logits or the mask fill overflow float16's range (max 65504)",
                               _scale_dict(probes), probes, notes)
    leak16 = float(np.where(allow[sel], 0.0, w16p).max())
    err16 = float(np.abs(w16p - w32p).max())
    if leak16 > 2e-2 or err16 > 5e-2:
        return AttentionReport("mask_overflow", f"in float16 the masked rows go wrong (masked keys keep weight up to "
                               f"{_fmt(leak16)}, weights differ from float32 by up to {_fmt(err16)})",
                               _scale_dict(probes), probes, notes)
    kind16 = {_row_kind(w16[(0,) * len(lead) + (i,)]) for i in full_rows}
    if full_rows and kind16 != kind32:
        got16, got32 = "/".join(sorted(kind16)), "/".join(sorted(kind32))
        if kind32 == {"uniform"} and kind16 <= {"NaN", "zeros"}:
            how = ("-1e9 (or any finite fill below -65504, float16's largest negative) becomes -inf in float16, and "
                   "a softmax over a row of -inf is NaN (or zeros if your softmax guards it)")
        else:
            how = ("finfo(float16).min plus a logit below -16 overflows to -inf, so the row's weight lands on the "
                   "few keys whose sum stayed finite")
        return AttentionReport("mask_overflow", f"a query whose keys are all masked gets {got16} weights in float16 "
                               f"but {got32} in float32: {how}. Mask with -inf (or a boolean where) and give fully "
                               "masked rows zeros, or compute the softmax in float32.",
                               _scale_dict(probes), probes, notes)
    if kind32 == {"NaN"}:
        notes.append("a query whose keys are all masked gets NaN (in float32 and float16 alike): that is a softmax "
                     "over -inf logits, as torch.softmax gives; attnlib and torch SDPA return 0 there")
    notes.append("masking checked in float32 and float16 (a partly masked row, a fully masked row, logits -40 to +4)")
    return None


def _scale_dict(probes):
    scale = {}
    for p in probes:
        scale.setdefault(p["d_k"], p["c"])
    return scale


# ------------------------------------------------------------------ layers


def _split_heads(x, heads):
    """(B, T, E) -> (B, H, T, E / H)."""
    B, T, E = x.shape
    return np.swapaxes(x.reshape(B, T, heads, E // heads), 1, 2)


def _probe_layer(obj, owned, B, L, S, gen, want=None):
    """One probe of a layer: its weights read back through identity projections and one-hot values."""
    with _ModuleCaller(obj, owned) as mc:
        E, H, d = mc.E, mc.H, mc.d_k
        if want is not None and (E, H) != want:
            raise _Unusable(f"built with embed_dim={want[0]}, num_heads={want[1]}, the layer has E={E}, {H} heads")
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
    qh, kh, vh = (_split_heads(x, H) for x in (query, key, value))
    fake_v = np.concatenate([np.broadcast_to(np.eye(S), (B, H, S, S)), vh], -1)
    fake_out = np.concatenate([w_read, _split_heads(out, H)], -1)
    info = _analyse(qh, kh, fake_v, fake_out, weights, S)
    info.update(B=B, H=H, L=L, S=S, d_k=d, d_v=d, E=E, returned_weights=weights is not None)
    return info


def _check_layer(layer, gen) -> AttentionReport:
    notes = []
    if isinstance(layer, type):
        probes = [_probe_layer(_build_layer(layer, E, H), True, B, L, S, gen, want=(E, H))
                  for B, E, H, L, S in _LAYER_SIZES]
    else:
        probes = [_probe_layer(layer, False, B, L, S, gen) for B, L, S in _INSTANCE_SIZES]
        try:  # the same class at other sizes, to vary d_k and the number of heads
            more = [_probe_layer(_build_layer(type(layer), E, H), True, B, L, S, gen, want=(E, H))
                    for B, E, H, L, S in _LAYER_SIZES]
        except _Unusable as err:
            notes.append(f"an instance has one head size, so d_k was not varied: building its class at other sizes "
                         f"failed ({err}); pass the class to vary it")
        else:
            probes += more
            notes.append(f"your layer was probed as given and as new {type(layer).__name__} layers of other sizes")
    if probes[0]["H"] == 1:
        notes.append("with one head d_k = d_model, so dividing by √d_model cannot be told from √d_k")
    return _verdict(probes, notes, None)

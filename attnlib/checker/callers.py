"""Calling the learner's code: numpy or torch functions, multi-head layers, the mask parameter.

Everything the learner's code returns passes through here and leaves as float64 numpy arrays, with
the precision it was computed in (``eps`` of the returned dtype) recorded on the caller.
"""

from __future__ import annotations

import contextlib
import inspect
import numbers
import sys
import warnings
from dataclasses import dataclass

import numpy as np


class Unusable(Exception):
    """fn did something the checker cannot use; the text is the report's message."""

    def __init__(self, text: str, ran: bool = False):
        super().__init__(text)
        self.ran = ran  # True when fn ran and returned something wrong (a shape, NaN): more telling than a raise


# ------------------------------------------------------------------ conversions at the boundary


def torch_installed() -> bool:
    """Whether torch could be imported, without importing it (that takes seconds)."""
    import importlib.util  # noqa: PLC0415

    return "torch" in sys.modules or importlib.util.find_spec("torch") is not None


def get_torch():
    """The torch module, or None when it cannot be imported."""
    try:
        import torch  # noqa: PLC0415 (optional, imported only when needed)
    except ImportError:
        return None
    return torch


def is_torch_tensor(x) -> bool:
    """A torch tensor, told without importing torch."""
    return type(x).__module__.startswith("torch") and hasattr(x, "detach")


def eps_of(x) -> float:
    """Machine epsilon of the dtype x was computed in (torch bfloat16 included); 2⁻⁵² for non-floats."""
    name = str(getattr(x, "dtype", "float64")).replace("torch.", "")
    table = {"bfloat16": 2.0**-7, "float16": 2.0**-10, "half": 2.0**-10, "float32": 2.0**-23, "float": 2.0**-23}
    return table.get(name, 2.0**-52)


def stored_precision(arr: np.ndarray) -> float:
    """The eps of the coarsest float format every value of arr fits exactly (bfloat16, float16, float32):
    code that computes in half precision and casts back to float64 keeps half precision's digits."""
    a = np.asarray(arr, dtype=np.float64)
    a = a[np.isfinite(a)]
    if a.size == 0:
        return 2.0**-52
    bits = a.astype(np.float32).view(np.uint32)
    bf16 = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).view(np.float32)
    with np.errstate(over="ignore"):
        for eps, rounded in ((2.0**-7, bf16), (2.0**-10, a.astype(np.float16)), (2.0**-23, a.astype(np.float32))):
            if np.array_equal(rounded.astype(np.float64), a):
                return eps
    return 2.0**-52


def to_numpy(x, what: str) -> np.ndarray:
    """x (a numpy array, torch tensor or array-like) as a float numpy array; Unusable if it is not one."""
    if x is None:
        raise Unusable(f"{what} is None")
    if is_torch_tensor(x):
        x = x.detach().cpu()
        if str(x.dtype) in ("torch.bfloat16",):
            x = x.float()
        x = x.numpy()
    if isinstance(x, (str, bytes)):
        raise Unusable(f"{what} is a string ({x[:40]!r}), not an array")
    try:
        arr = np.asarray(x)
    except Exception as err:  # noqa: BLE001
        raise Unusable(f"{what} ({type(x).__name__}) cannot be read as an array: {err}") from None
    if arr.dtype.kind not in "fiu":
        raise Unusable(f"{what} is not a real-valued numeric array (got {type(x).__name__} of dtype {arr.dtype})")
    return arr.astype(np.float64) if arr.dtype.kind in "iu" else arr


@contextlib.contextmanager
def quiet():
    """Silence warnings raised inside the learner's code (float16 overflow, ...): the report says what matters."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def describe_exception(err: BaseException) -> str:
    """'TypeError: first line of the message' (at most 200 characters)."""
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return f"{type(err).__name__}: {text[:200]}" if text else type(err).__name__


# ------------------------------------------------------------------ tracking v (scaled_values vs scale_after_softmax)

TRACK_LOG: list = []


class TrackedValues(np.ndarray):
    """A view of v that records whether v itself is multiplied/divided by a scalar before a product."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [np.asarray(x) if isinstance(x, TrackedValues) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(np.asarray(o) if isinstance(o, TrackedValues) else o for o in kwargs["out"])
        if method == "__call__":
            others = [x for x, orig in zip(plain, inputs, strict=True) if not isinstance(orig, TrackedValues)]
            if ufunc in (np.multiply, np.true_divide, np.divide) and others and all(np.size(o) == 1 for o in others):
                TRACK_LOG.append("scaled")
            elif ufunc is np.matmul:
                TRACK_LOG.append("product")
        return getattr(ufunc, method)(*plain, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        if func in (np.einsum, np.dot, np.tensordot, np.inner, np.matmul):
            TRACK_LOG.append("product")
            args = tuple(np.asarray(a) if isinstance(a, TrackedValues) else a for a in args)
            return func(*args, **kwargs)
        return super().__array_function__(func, types, args, kwargs)


_TORCH_SCALE_OPS = {"mul", "div", "__mul__", "__rmul__", "__truediv__", "__imul__", "__itruediv__", "mul_", "div_",
                    "true_divide", "multiply", "divide"}
_TORCH_PRODUCT_OPS = {"matmul", "__matmul__", "__rmatmul__", "bmm", "mm", "einsum", "baddbmm", "tensordot",
                      "scaled_dot_product_attention"}
_TORCH_VIEW_OPS = {"transpose", "permute", "view", "reshape", "contiguous", "unsqueeze", "squeeze", "unflatten",
                   "flatten", "to", "double", "float", "__getitem__", "expand", "clone", "mT", "T", "swapaxes"}
_TRACKED_TENSOR = None


def tracked_tensor_class():
    """A torch.Tensor subclass that logs whether v itself is scaled by a scalar before a product."""
    global _TRACKED_TENSOR
    if _TRACKED_TENSOR is not None:
        return _TRACKED_TENSOR
    torch = get_torch()

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
                    TRACK_LOG.append("scaled")
            elif tracked and name in _TORCH_PRODUCT_OPS:
                TRACK_LOG.append("product")
            with torch._C.DisableTorchFunctionSubclass():
                out = func(*args, **kwargs)
            if tracked and name in _TORCH_VIEW_OPS and isinstance(out, torch.Tensor):
                out = out.as_subclass(cls)
            return out

    _TRACKED_TENSOR = TrackedTensor
    return _TRACKED_TENSOR




# ------------------------------------------------------------------ the mask parameter: by name or 4th place

_MASK_WORDS = ("mask", "bias")
_NOT_MASK = {"tau", "temp", "temperature", "scale", "softmax_scale", "sm_scale", "scaling", "heads", "n_heads",
             "num_heads", "n_head", "dropout", "dropout_p", "p", "causal", "is_causal", "training", "train",
             "need_weights", "eps", "epsilon", "beta", "alpha", "gain", "g", "cap", "softcap", "soft_cap",
             "logit_cap", "sink", "sinks", "window", "return_weights", "return_attn", "dim", "axis", "d_k", "d",
             "head_dim", "rng", "seed", "verbose", "dtype", "device", "average_attn_weights"}


@dataclass
class MaskParam:
    """How a function takes its mask: by position (index 3) or by keyword ``name``; ``kind`` is
    "mask" (lesson 09: True = may attend), "padding" (key_padding_mask: True = blocked, documented)
    or "bias" (a number added to the logits); ``required`` when it has no default."""

    name: str
    positional: bool
    kind: str
    required: bool


def signature_target(fn):
    """What to read the parameters from: a torch-style module's ``forward``, else fn itself."""
    forward = getattr(fn, "forward", None)
    return forward if callable(forward) and not isinstance(fn, type) else fn


def mask_param(fn) -> MaskParam | None:
    """The parameter fn takes its mask in, or None. A name with mask/bias in it is one; so is the 4th
    positional parameter (lesson 09's place) unless its name or default says it is something else."""
    target = signature_target(fn)
    try:
        params = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):  # a builtin (torch SDPA): read its documented signature
        first = (getattr(target, "__doc__", None) or "").strip().split("\n")[0]
        args = first[first.find("(") + 1:].split(",") if "(" in first else []
        if len(args) >= 4 and "mask" in args[3]:
            return MaskParam(args[3].split("=")[0].strip(), True, "mask", False)
        return None
    if params and params[0].name in ("self", "cls"):
        params = params[1:]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for p in params[3:]:
        low = p.name.lower()
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or not any(w in low for w in _MASK_WORDS):
            continue
        kind = "padding" if "padding" in low else "bias" if "bias" in low and "mask" not in low else "mask"
        is_4th = len(positional) > 3 and positional[3] is p
        return MaskParam(p.name, is_4th and p.kind is not p.KEYWORD_ONLY, kind, p.default is p.empty)
    if len(positional) < 4:
        return None
    p = positional[3]
    default_is_number = isinstance(p.default, numbers.Number) and p.default is not p.empty
    if p.name.lower() in _NOT_MASK or default_is_number or isinstance(p.default, (str, bool)):
        return None
    return MaskParam(p.name, True, "mask", p.default is p.empty)


# ------------------------------------------------------------------ callers: one interface for every convention


class FunctionCaller:
    """Calls fn(q, k, v[, mask]) with numpy or torch arrays; returns (out, weights or None).

    ``eps`` is the largest machine epsilon among the dtypes fn returned (its working precision).
    """

    def __init__(self, fn, backend: str):
        self.fn = fn
        self.backend = backend  # "numpy" or "torch"
        self.mask = mask_param(fn)
        self.takes_mask = self.mask is not None
        self.needs_mask = self.takes_mask and self.mask.required
        self.open_form = "bool"  # how an all-open mask is written for a function that requires one
        self.mask_2d = False  # True for a function that only accepts a (L, S) mask
        self.ndim = None  # decided by the first successful call
        self.eps = 2.0**-52

    def _convert(self, arr):
        """A fresh copy for every call, so a function that edits its inputs in place cannot move the probe."""
        if arr is None:
            return None
        if self.backend == "numpy":
            return np.array(arr, copy=True)
        return get_torch().from_numpy(np.array(arr, copy=True))

    def call(self, q, k, v, mask=None, track=False):
        """q (..., L, d_k), k (..., S, d_k), v (..., S, d_v), mask (..., L, S) -> (out (..., L, d_v), w or None)."""
        from .masks import mask_in_form  # noqa: PLC0415 (masks imports this module)

        args = [self._convert(q), self._convert(k), self._convert(v)]
        if track and self.backend == "numpy":
            args[2] = np.array(v, copy=True).view(TrackedValues)
        elif track:
            args[2] = args[2].as_subclass(tracked_tensor_class())
        if mask is None and self.needs_mask:  # a required mask: every key open
            mask = mask_in_form(np.ones(q.shape[:-1] + (k.shape[-2],), dtype=bool), self.open_form, q.dtype)
        if mask is not None and self.mask_2d:
            mask = mask[(0,) * (mask.ndim - 2)]  # the probes' masks are the same for every batch and head
        kwargs = {}
        if mask is not None and self.mask.positional:
            args.append(self._convert(mask))
        elif mask is not None:
            kwargs[self.mask.name] = self._convert(mask)
        shapes = q.shape[:-1] + (v.shape[-1],), q.shape[:-1] + (k.shape[-2],)
        try:
            with quiet():
                result = self.fn(*args, **kwargs)
            out, w, eps = split_result(result, *shapes)
            self.eps = max(self.eps, eps)
            return out, w
        except Unusable:
            if mask is None or mask.ndim == 2 or self.mask_2d:
                raise
        except Exception as err:  # noqa: BLE001 (any failure of the learner's code becomes a report)
            if mask is None or mask.ndim == 2 or self.mask_2d:
                raise Unusable(f"your function raised {describe_exception(err)}") from None
        # a function that wants a (L, S) mask: try once more with one
        self.mask_2d = True
        try:
            return self.call(q, k, v, mask, track)
        except Unusable:
            self.mask_2d = False
            raise


def split_result(result, out_shape: tuple, w_shape: tuple):
    """(out, weights or None, eps) from whatever fn returned; raise Unusable with a clear reason."""
    weights = None
    eps = eps_of(result[0] if isinstance(result, (tuple, list)) and result else result)
    if isinstance(result, (tuple, list)) and not isinstance(result, str):
        if len(result) == 0:
            raise Unusable("your function returned an empty tuple", ran=True)
        if len(result) > 2:
            raise Unusable(f"your function returned {len(result)} values; expected out or (out, weights)", ran=True)
        out = to_numpy(result[0], "the output (first returned value)")
        if len(result) == 2 and result[1] is not None:
            eps = max(eps, eps_of(result[1]))
            weights = to_numpy(result[1], "the weights (second returned value)")
            if out.shape == w_shape and weights.shape == out_shape and w_shape != out_shape:
                out, weights = weights, out  # (weights, out): accept the other order
    else:
        out = to_numpy(result, "the returned value")
    if out.shape != out_shape:
        raise Unusable(layout_message(out.shape, out_shape), ran=True)
    eps = max(eps, stored_precision(out))
    if weights is not None and weights.shape != w_shape:
        raise Unusable(f"your function returned weights of shape {weights.shape}; expected {w_shape} (..., L, S)",
                       ran=True)
    return out, weights, eps


TRANSPOSE_WRAPPER = ("check_attention(lambda q, k, v: my_attention(q.swapaxes(-3, -2), k.swapaxes(-3, -2), "
                     "v.swapaxes(-3, -2)).swapaxes(-3, -2))")
MERGE_WRAPPER = ("check_attention(lambda q, k, v: my_attention(q, k, v).reshape(*q.shape[:-3], q.shape[-2], "
                 "q.shape[-3], -1).swapaxes(-3, -2))")


def layout_message(got: tuple, want: tuple) -> str:
    """Why an output of shape ``got`` is not ``want`` (..., H, L, d_v), with a one-line wrapper when it is a layout."""
    text = f"your function returned an output of shape {got}; expected {want} (..., H, L, d_v)"
    if len(want) == 4 and len(got) == 3 and got == (want[0], want[2], want[1] * want[3]):
        return (text + ": it merged the heads into (B, L, H·d_v). The checker needs each head's output, in the "
                f"layout (…, H, L, d_v). Check it with a one-line wrapper: {MERGE_WRAPPER}")
    if len(want) == 4 and got == (want[0], want[2], want[1], want[3]):
        return (text + ": that is the (B, L, H, d) layout. The checker uses (…, H, L, d_k). Check it with a "
                f"one-line wrapper: {TRANSPOSE_WRAPPER}")
    return text


class ModuleCaller:
    """Drives a layer with nn.MultiheadAttention's parameter layout, identity projections."""

    def __init__(self, layer, owned: bool):
        self.layer = layer
        self.owned = owned  # built by the checker (no need to restore parameters)
        self.eps = 2.0**-52
        w = param(layer, "in_proj_weight")
        if w is None or not hasattr(w, "shape"):
            raise Unusable("the layer has no in_proj_weight (3E, E): the checker drives layers with "
                           "nn.MultiheadAttention's parameter layout only (separate q/k/v projections are not read)")
        self.torch = is_torch_tensor(w)
        shape = tuple(w.shape)
        if len(shape) != 2 or shape[0] != 3 * shape[1]:
            raise Unusable(f"in_proj_weight has shape {shape}; expected (3E, E) as in nn.MultiheadAttention")
        self.E = int(shape[1])
        names = ("num_heads", "n_heads", "heads", "n_head")
        heads = next((getattr(layer, n) for n in names if hasattr(layer, n)), None)
        if not isinstance(heads, numbers.Integral) or heads < 1 or self.E % heads:
            raise Unusable(f"the layer has no usable num_heads attribute (got {heads!r}) for E = {self.E}")
        self.H = int(heads)
        self.d_k = self.E // self.H
        self.batch_first = bool(getattr(layer, "batch_first", True))
        self.layout_known = hasattr(layer, "batch_first")  # else batch first, then sequence first
        self.saved = None

    def __enter__(self):
        names = ["in_proj_weight", "in_proj_bias", "out_proj_weight", "out_proj_bias"]
        self.saved = {n: copy_param(param(self.layer, n)) for n in names if param(self.layer, n) is not None}
        E = self.E
        values = {"in_proj_weight": np.vstack([np.eye(E)] * 3), "in_proj_bias": np.zeros(3 * E),
                  "out_proj_weight": np.eye(E), "out_proj_bias": np.zeros(E)}
        for n in self.saved:
            set_param(self.layer, n, values[n])
        return self

    def __exit__(self, *exc):
        if not self.owned and self.saved:
            for n, value in self.saved.items():
                set_param(self.layer, n, value)
        return False

    def call(self, query, key, value):
        """query (B, L, E), key and value (B, S, E) -> (out (B, L, E), weights (B, H, L, S) or None)."""
        try:
            return self._call(query, key, value)
        except Unusable:
            if self.layout_known:
                raise
            self.batch_first = not self.batch_first  # try the other layout once; keep it if it works
            try:
                return self._call(query, key, value)
            except Unusable:
                self.batch_first = not self.batch_first
                raise

    def _call(self, query, key, value):
        torch = get_torch() if self.torch else None
        args = [np.array(query, copy=True), np.array(key, copy=True), np.array(value, copy=True)]
        if not self.batch_first:
            args = [np.swapaxes(a, 0, 1) for a in args]
        if torch is not None:
            dtype = param(self.layer, "in_proj_weight").dtype
            args = [torch.from_numpy(np.ascontiguousarray(a)).to(dtype) for a in args]
        kwargs = {}
        if torch is not None and isinstance(self.layer, torch.nn.MultiheadAttention):
            kwargs = {"need_weights": True, "average_attn_weights": False}
        try:
            with quiet():
                if torch is not None:
                    with torch.no_grad():
                        result = self.layer(*args, **kwargs)
                else:
                    result = self.layer(*args, **kwargs)
        except Exception as err:  # noqa: BLE001
            raise Unusable(f"your layer raised {describe_exception(err)}") from None
        B, L, S = query.shape[0], query.shape[1], key.shape[1]
        out_shape = (B, L, self.E) if self.batch_first else (L, B, self.E)
        if isinstance(result, (tuple, list)) and len(result) == 2:
            self.eps = max(self.eps, eps_of(result[0]))
            out = to_numpy(result[0], "the layer's output")
            self.eps = max(self.eps, stored_precision(out))
            w = None if result[1] is None else to_numpy(result[1], "the layer's weights")
        else:
            self.eps = max(self.eps, eps_of(result))
            out, w = to_numpy(result, "the layer's output"), None
            self.eps = max(self.eps, stored_precision(out))
        if out.shape != out_shape:
            raise Unusable(f"your layer returned an output of shape {out.shape}; expected {out_shape}", ran=True)
        if not self.batch_first:
            out = np.swapaxes(out, 0, 1)
        if w is not None and w.shape != (B, self.H, L, S):
            w = None  # averaged over heads (or another layout): use the output instead
        return out.astype(np.float64), None if w is None else w.astype(np.float64)


def param(layer, name):
    """A layer's parameter by nn.MultiheadAttention's name (out_proj_weight may live in out_proj.weight)."""
    if name.startswith("out_proj_") and not hasattr(layer, name) and hasattr(layer, "out_proj"):
        return getattr(layer.out_proj, name.split("_")[-1], None)
    return getattr(layer, name, None)


def copy_param(x):
    """A copy of a parameter (torch tensor or numpy array) to restore it after the probe."""
    return x.detach().clone() if is_torch_tensor(x) else np.array(x, copy=True)


def set_param(layer, name, value):
    """Write value into a layer's parameter in place (torch) or as a numpy attribute."""
    current = param(layer, name)
    if is_torch_tensor(current):
        torch = get_torch()
        with torch.no_grad():
            current.copy_(torch.as_tensor(np.asarray(value) if not is_torch_tensor(value) else value))
    elif name.startswith("out_proj_") and not hasattr(layer, name):
        setattr(layer.out_proj, name.split("_")[-1], np.array(value, dtype=float))
    else:
        setattr(layer, name, np.array(value, dtype=float))


def build_layer(cls, E: int, H: int):
    """An instance of a layer class at width E with H heads (nn.MultiheadAttention's or common keyword names)."""
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
        raise Unusable(f"building your layer class as {cls.__name__}(embed_dim={E}, num_heads={H}) raised "
                       f"{describe_exception(err)}") from None


def is_layer(fn) -> bool:
    """A class, or an object with nn.MultiheadAttention's parameters."""
    if isinstance(fn, type):
        return True
    return hasattr(fn, "in_proj_weight") or (hasattr(fn, "out_proj") and hasattr(fn, "num_heads"))

"""Argument checks shared by attnlib's public functions.

Every check raises ``TypeError`` or ``ValueError`` with a message that names the
argument and says what was expected, so a learner never meets a bare numpy
broadcasting error.
"""

from __future__ import annotations

import numbers

import numpy as np


def as_float_array(x, name: str) -> np.ndarray:
    """Return ``x`` as a float ndarray: floats keep their dtype, ints/lists become float64."""
    if isinstance(x, np.ndarray):
        arr = x
    else:
        try:
            arr = np.asarray(x)
        except (ValueError, TypeError) as err:  # ragged lists
            raise TypeError(f"{name} must be a numeric array-like; got {type(x).__name__} ({err})") from None
    kind = arr.dtype.kind
    if kind == "f":
        return arr
    if kind in "iu":
        return arr.astype(np.float64)
    if kind == "c":
        raise TypeError(f"{name} must be real-valued; got complex dtype {arr.dtype}")
    if kind == "b":
        raise TypeError(f"{name} must be a real-valued float array; got boolean dtype")
    raise TypeError(f"{name} must be a numeric array of real numbers; got dtype {arr.dtype}")


def check_finite(arr: np.ndarray, name: str, allow_neg_inf: bool = False) -> None:
    """Raise ValueError if ``arr`` holds NaN, +inf (or -inf unless allowed)."""
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN; attention logits must be real numbers")
    if allow_neg_inf:
        if np.isposinf(arr).any():
            raise ValueError(f"{name} contains +inf; only -inf (meaning 'masked out') is allowed")
    elif np.isinf(arr).any():
        raise ValueError(f"{name} contains inf; expected finite values")


def positive_scalar(x, name: str) -> float:
    """Return ``x`` as a float after checking it is a finite real number > 0."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number > 0; got {type(x).__name__}")
    x = float(x)
    if not np.isfinite(x) or x <= 0:
        raise ValueError(f"{name} must be a finite number > 0; got {x}")
    return x


def real_scalar(x, name: str) -> float:
    """Return ``x`` as a float after checking it is a finite real number."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {type(x).__name__}")
    x = float(x)
    if not np.isfinite(x):
        raise ValueError(f"{name} must be finite; got {x}")
    return x


def positive_int(x, name: str) -> int:
    """Return ``x`` as an int after checking it is a whole number >= 1."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral):
        raise TypeError(f"{name} must be a positive integer; got {type(x).__name__}")
    if x < 1:
        raise ValueError(f"{name} must be a positive integer (>= 1); got {x}")
    return int(x)


def axis_index(axis, ndim: int, name: str = "axis") -> int:
    """Return a normalised axis index, or raise naming ``axis`` and the array's ndim."""
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {type(axis).__name__}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}={axis} is out of range for an array with {ndim} dimension(s)")
    return int(axis) % ndim


def rng_from(rng) -> np.random.Generator:
    """Accept a numpy Generator or an int seed; None gives a fresh unseeded Generator."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, numbers.Integral) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    raise TypeError(f"rng must be a numpy.random.Generator, an int seed or None; got {type(rng).__name__}")


def need_ndim(arr: np.ndarray, name: str, ndim: int, shape_doc: str) -> None:
    """Raise ValueError unless ``arr`` has at least ``ndim`` dimensions."""
    if arr.ndim < ndim:
        raise ValueError(f"{name} must have shape {shape_doc}; got shape {arr.shape}")

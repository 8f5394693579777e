"""Multi-head attention and weight initialisation (lesson 04).

Parameters follow ``torch.nn.MultiheadAttention``'s layout so weights can be moved
between the two: in_proj_weight (3E, E) = [W_q; W_k; W_v], out_proj_weight (E, E),
and a Linear layer computes x @ Wᵀ + b.
"""

from __future__ import annotations

import numpy as np

from ._check import as_float_array, check_finite, positive_int, positive_scalar, rng_from
from .core import scaled_dot_product_attention

__all__ = ["INIT_SCHEMES", "init_std", "init_weight", "MultiHeadAttention"]

INIT_SCHEMES = ("pytorch", "gpt2", "xavier_uniform", "xavier_normal")
"""pytorch: nn.Linear's default, U(±1/√fan_in) (kaiming_uniform with a=√5).
gpt2: N(0, 0.02²). xavier_uniform: U(±√(6/(fan_in+fan_out))). xavier_normal: N(0, 2/(fan_in+fan_out))."""


def _fans(shape) -> tuple[int, int]:
    if not isinstance(shape, (tuple, list)) or len(shape) != 2:
        raise ValueError(f"shape must be a 2-tuple (fan_out, fan_in) as in a torch Linear weight; got {shape!r}")
    fan_out, fan_in = (positive_int(s, "shape entries") for s in shape)
    return fan_out, fan_in


def init_std(shape, scheme) -> float:
    """Standard deviation of each entry of a (fan_out, fan_in) weight under ``scheme`` (lesson 04)."""
    fan_out, fan_in = _fans(shape)
    if scheme == "pytorch":
        return 1.0 / np.sqrt(3.0 * fan_in)  # U(-b, b) has std b/√3, b = 1/√fan_in
    if scheme == "gpt2":
        return 0.02
    if scheme in ("xavier_uniform", "xavier_normal"):
        return float(np.sqrt(2.0 / (fan_in + fan_out)))
    raise ValueError(f"scheme must be one of {INIT_SCHEMES}; got {scheme!r}")


def init_weight(shape, scheme, rng) -> np.ndarray:
    """Draw a (fan_out, fan_in) float64 weight with ``scheme`` from INIT_SCHEMES (lesson 04).

    rng : numpy Generator or int seed.
    """
    std = init_std(shape, scheme)
    gen = rng_from(rng)
    shape = tuple(int(s) for s in shape)
    if scheme in ("pytorch", "xavier_uniform"):
        bound = std * np.sqrt(3.0)
        return gen.uniform(-bound, bound, size=shape)
    return gen.normal(0.0, std, size=shape)


class MultiHeadAttention:
    """Multi-head attention with torch.nn.MultiheadAttention's parameter layout (lesson 04).

    in_proj_weight : (3E, E) = [W_q; W_k; W_v]     in_proj_bias : (3E,)
    out_proj_weight : (E, E)                        out_proj_bias : (E,)
    Each head gets d_k = E / num_heads columns of the projected q, k and v.
    """

    def __init__(self, num_heads, in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias):
        self.num_heads = positive_int(num_heads, "num_heads")
        w_in = as_float_array(in_proj_weight, "in_proj_weight")
        if w_in.ndim != 2 or w_in.shape[0] != 3 * w_in.shape[1]:
            raise ValueError(f"in_proj_weight must have shape (3E, E); got {w_in.shape}")
        e = w_in.shape[1]
        if e % self.num_heads:
            raise ValueError(
                f"embed_dim E={e} must be divisible by num_heads={self.num_heads} "
                f"(each head gets d_k = E / num_heads)"
            )
        params = {"in_proj_weight": (w_in, (3 * e, e))}
        for name, value, shape in (
            ("in_proj_bias", in_proj_bias, (3 * e,)),
            ("out_proj_weight", out_proj_weight, (e, e)),
            ("out_proj_bias", out_proj_bias, (e,)),
        ):
            arr = as_float_array(value, name)
            if arr.shape != shape:
                raise ValueError(f"{name} must have shape {shape} for E={e}; got {arr.shape}")
            params[name] = (arr, shape)
        for name, (arr, _) in params.items():
            check_finite(arr, name)
            setattr(self, name, arr)
        self.embed_dim = e
        self.head_dim = e // self.num_heads

    @classmethod
    def init(cls, embed_dim, num_heads, scheme="xavier_uniform", rng=None):
        """A fresh layer: each of W_q, W_k, W_v, W_out drawn (E, E) with ``scheme``, zero biases.

        (torch applies xavier_uniform to the packed (3E, E) matrix instead, which gives a
        slightly smaller std, √(2/4E) rather than √(2/2E).)
        """
        e = positive_int(embed_dim, "embed_dim")
        h = positive_int(num_heads, "num_heads")
        if e % h:
            raise ValueError(f"embed_dim={e} must be divisible by num_heads={h}")
        gen = rng_from(rng)
        w_in = np.concatenate([init_weight((e, e), scheme, gen) for _ in range(3)])
        return cls(h, w_in, np.zeros(3 * e), init_weight((e, e), scheme, gen), np.zeros(e))

    @staticmethod
    def _linear(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
        """x @ wᵀ + b over the last axis, as one 2-D matmul (stacked matmuls are far slower)."""
        return (x.reshape(-1, x.shape[-1]) @ w.T + b).reshape(*x.shape[:-1], w.shape[0])

    def _split(self, x: np.ndarray) -> np.ndarray:
        """(..., T, E) -> (..., H, T, d_k)."""
        *lead, t, _ = x.shape
        return np.swapaxes(x.reshape(*lead, t, self.num_heads, self.head_dim), -2, -3)

    def _input(self, x, name: str, doc: str) -> np.ndarray:
        arr = as_float_array(x, name)
        if arr.ndim < 2 or arr.shape[-1] != self.embed_dim:
            raise ValueError(f"{name} must have shape {doc} with E={self.embed_dim}; got {arr.shape}")
        check_finite(arr, name)
        return arr

    def project(self, query, key, value=None):
        """Per-head projections: q (..., H, L, d_k), k (..., H, S, d_k)[, v (..., H, S, d_k)].

        query : (..., L, E), key : (..., S, E), value : (..., S, E) or None.
        Lessons use q and k to measure logits head by head.
        """
        e = self.embed_dim
        query = self._input(query, "query", "(..., L, E)")
        key = self._input(key, "key", "(..., S, E)")
        w, b = self.in_proj_weight, self.in_proj_bias
        q = self._split(self._linear(query, w[:e], b[:e]))
        k = self._split(self._linear(key, w[e : 2 * e], b[e : 2 * e]))
        if value is None:
            return q, k
        value = self._input(value, "value", "(..., S, E)")
        if value.shape[-2] != key.shape[-2]:
            raise ValueError(f"key and value must have the same length S; got key {key.shape}, value {value.shape}")
        return q, k, self._split(self._linear(value, w[2 * e :], b[2 * e :]))

    def __call__(self, query, key, value, mask=None, scale=None, temperature=1.0):
        """Attend: returns (output (..., L, E), weights (..., H, L, S)).

        query : (..., L, E), key : (..., S, E), value : (..., S, E), batch first.
        mask : broadcastable to (..., L, S), shared by all heads; boolean True = may
            attend, float = added to the logits (as in ``scaled_dot_product_attention``).
        scale : default 1/√d_k with d_k = E / num_heads (the head size, not E).
        """
        q, k, v = self.project(query, key, value)
        if mask is not None:
            mask = np.asarray(mask)
            if mask.ndim >= 2:
                mask = mask[..., None, :, :]  # one mask for every head
        if scale is not None:
            scale = positive_scalar(scale, "scale")
        out, weights = scaled_dot_product_attention(q, k, v, mask=mask, scale=scale, temperature=temperature)
        out = np.swapaxes(out, -2, -3)  # (..., L, H, d_k)
        out = out.reshape(*out.shape[:-2], self.embed_dim)
        return self._linear(out, self.out_proj_weight, self.out_proj_bias), weights

"""Theory and Monte Carlo for the statistics of q·k (lesson 02).

Model: the d_k component pairs (q_i, k_i) are independent and identically distributed;
within a pair, q_i ~ N(mean_q, sigma_q²), k_i ~ N(mean_k, sigma_k²) with correlation rho.
"""

from __future__ import annotations

import numpy as np

from ._check import positive_int, positive_scalar, real_scalar, rng_from

__all__ = ["dot_product_variance", "dot_product_moments", "sample_dot_products"]

_CHUNK = 2_000_000  # numbers drawn per block, to bound memory for large n * d_k


def _check_sigmas(sigma_q, sigma_k):
    return positive_scalar(sigma_q, "sigma_q"), positive_scalar(sigma_k, "sigma_k")


def _check_rho(rho) -> float:
    rho = real_scalar(rho, "rho")
    if not -1.0 <= rho <= 1.0:
        raise ValueError(f"rho is a correlation and must lie in [-1, 1]; got {rho}")
    return rho


def dot_product_variance(d_k, sigma_q=1.0, sigma_k=1.0) -> float:
    """Var(q·k) = d_k · sigma_q² · sigma_k² for independent zero-mean components (lesson 02).

    Holds for any component distribution, not only Gaussian. With sigma_q = sigma_k = σ
    it is d_k σ⁴ (the common shorthand "d_k σ²" is only right when σ = 1).
    """
    d_k = positive_int(d_k, "d_k")
    sigma_q, sigma_k = _check_sigmas(sigma_q, sigma_k)
    return d_k * sigma_q**2 * sigma_k**2


def dot_product_moments(d_k, sigma_q=1.0, sigma_k=1.0, mean_q=0.0, mean_k=0.0, rho=0.0):
    """Mean and variance of q·k under the module's Gaussian model (lesson 02).

    Per component pair, with a = (q_i − μ_q)/σ_q and b = (k_i − μ_k)/σ_k:
      E[q_i k_i]   = μ_q μ_k + ρ σ_q σ_k
      Var(q_i k_i) = σ_q² σ_k² (1 + ρ²) + μ_q² σ_k² + μ_k² σ_q² + 2 ρ μ_q μ_k σ_q σ_k
    (the 1 + ρ² uses Gaussian fourth moments; at ρ = 0 the formula holds for any distribution
    with q_i independent of k_i, not merely uncorrelated). Summing d_k independent pairs multiplies both by d_k.

    Returns (mean, variance) as floats.
    """
    d_k = positive_int(d_k, "d_k")
    sq, sk = _check_sigmas(sigma_q, sigma_k)
    mq, mk = real_scalar(mean_q, "mean_q"), real_scalar(mean_k, "mean_k")
    rho = _check_rho(rho)
    mean = mq * mk + rho * sq * sk
    var = sq**2 * sk**2 * (1 + rho**2) + mq**2 * sk**2 + mk**2 * sq**2 + 2 * rho * mq * mk * sq * sk
    return d_k * mean, d_k * var


def sample_dot_products(d_k, n, sigma_q=1.0, sigma_k=1.0, mean_q=0.0, mean_k=0.0, rho=0.0, rng=None):
    """Draw n values of q·k for random d_k-dimensional q and k (lesson 02).

    Components follow the model of ``dot_product_moments``: pairs (q_i, k_i) are
    independent across i, Gaussian, with correlation ``rho`` inside a pair.
    rng : numpy Generator or int seed (None: unseeded).

    Returns dots : (n,) float64.
    """
    d_k = positive_int(d_k, "d_k")
    n = positive_int(n, "n")
    sq, sk = _check_sigmas(sigma_q, sigma_k)
    mq, mk = real_scalar(mean_q, "mean_q"), real_scalar(mean_k, "mean_k")
    rho = _check_rho(rho)
    gen = rng_from(rng)
    out = np.empty(n)
    rows = max(1, _CHUNK // d_k)
    for start in range(0, n, rows):
        m = min(rows, n - start)
        a = gen.standard_normal((m, d_k))
        b = gen.standard_normal((m, d_k))
        if rho != 0.0:
            b *= np.sqrt(1.0 - rho**2)
            b += rho * a
        q = mq + sq * a
        k = mk + sk * b
        out[start : start + m] = np.einsum("ij,ij->i", q, k)
    return out

"""Theory and Monte Carlo for the statistics of q·k (lesson 02), and the standard error of a ratio of
two measured means (lesson 05).

Model of the q·k functions: the d_k component pairs (q_i, k_i) are independent and identically distributed;
within a pair, q_i ~ N(mean_q, sigma_q²), k_i ~ N(mean_k, sigma_k²) with correlation rho.
"""

from __future__ import annotations

import numpy as np

from ._check import as_float_array, axis_index, positive_int, positive_scalar, real_scalar, rng_from

__all__ = ["dot_product_variance", "dot_product_moments", "sample_dot_products", "ratio_of_means"]

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


def ratio_of_means(a, b, axis=0):
    """mean(a) / mean(b) and its standard error by the delta method, for paired draws (lesson 05).

    a, b : (n, ...) arrays of the same shape; a[i] and b[i] are measured on the same draw i (the same
    trial, weights or head), and the n draws are independent. ``axis`` (default 0) is the draw axis.

    Returns (ratio, se): floats for 1-D input, else arrays of the input's shape without ``axis``.

    With r = mean(a)/mean(b) and sample variances and covariance (ddof = 1),

        se² = (r²/n) · (var(a)/mean(a)² + var(b)/mean(b)² − 2 cov(a, b)/(mean(a)·mean(b)))
            = var(a − r·b) / (n · mean(b)²)

    (the second form is what is computed: it needs no division by mean(a)). The covariance term
    matters: a and b measured on the same draws are often strongly correlated, and dropping it can
    overstate the SE several times over (positive correlation) or understate it (negative).

    Valid when mean(b) is far from 0 relative to its own standard error (say more than ~10 SE;
    the ratio's sampling distribution is then close to normal and its bias, of order 1/n, is small
    against se). Near mean(b) = 0 the ratio is heavy-tailed and no standard error describes it.
    It is the SE of the ratio of means, not of a mean of per-draw ratios a[i]/b[i] (a different,
    biased estimator).
    """
    a = as_float_array(a, "a")
    b = as_float_array(b, "b")
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape (paired draws); got {a.shape} and {b.shape}")
    if a.ndim == 0:
        raise ValueError("a and b must have at least one dimension (the draws); got scalars")
    ax = axis_index(axis, a.ndim)
    n = a.shape[ax]
    if n < 2:
        raise ValueError(f"a and b need at least 2 draws along axis={axis} for a standard error; got {n}")
    for arr, name in ((a, "a"), (b, "b")):
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} contains NaN or inf; expected finite values")
    mean_a, mean_b = a.mean(axis=ax), b.mean(axis=ax)
    if np.any(mean_b == 0):
        raise ValueError(f"mean(b) is 0 (along axis={axis}); the ratio mean(a)/mean(b) is undefined")
    ratio = mean_a / mean_b
    resid = a - np.expand_dims(ratio, ax) * b
    se = np.std(resid, axis=ax, ddof=1) / (np.sqrt(n) * np.abs(mean_b))
    if np.ndim(ratio) == 0:
        return float(ratio), float(se)
    return ratio, se

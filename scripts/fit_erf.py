#!/usr/bin/env python3
"""Fit the coefficients of ``attnlib.minilm.erf`` and check them (lesson 08's GELU).

The vectorised erf splits |x| into regions and evaluates, with scalar coefficients only:

    |x| < 1          erf(x) = x · P(x²)                    P of degree 12
    1 ≤ |x| < 6      erf(x) = ±(1 − exp(−x²) · Q_j(|x| − c_j))   three pieces j, centres c_j
    |x| ≥ 6          erf(x) = ±1        (erfc(6) ≈ 2.2e-17 is below half an ulp of 1)

How the coefficients are made. The reference is erf's Taylor series summed in ``decimal``
arithmetic with 90 significant digits (at |x| = 6 the largest term is ~1e15, so ~70 digits
survive). Each polynomial interpolates its target function at Chebyshev nodes of its interval
(nodes rounded to float64, the cosines also summed in ``decimal`` so no libm enters), solving
the Vandermonde system in ``decimal`` too; only the final coefficients are rounded to float64.
Interpolation at Chebyshev nodes is within a small factor of the best (minimax) polynomial.
The targets are erf(x)/x as a function of t = x² (the region near 0 keeps its relative
accuracy), and erfc(x)·exp(x²) in the pieces, a smooth, slowly varying function where erfc
itself would underflow and lose relative precision.

    python scripts/fit_erf.py            # print the coefficient block for attnlib/minilm.py
    python scripts/fit_erf.py --check    # compare with attnlib.minilm's, and measure its error

tests/test_lesson_08.py re-runs ``fit()`` and asserts that attnlib.minilm holds exactly
these numbers.
"""

from __future__ import annotations

import argparse
import math
import sys
from decimal import Decimal, localcontext

PREC = 90  # significant decimal digits for the reference and the solves
SMALL = (1.0, 12)  # |x| < 1.0: degree 12 in t = x²
PIECES = ((1.0, 2.0, 14), (2.0, 3.5, 13), (3.5, 6.0, 10))  # (lo, hi, degree) of Q_j on [lo, hi)


def _pi() -> Decimal:
    """π to the current precision (the series recipe of the ``decimal`` documentation)."""
    lasts, t, s, n, na, d, da = 0, Decimal(3), Decimal(3), 1, 0, 0, 24
    while s != lasts:
        lasts = s
        n, na = n + na, na + 8
        d, da = d + da, da + 32
        t = (t * n) / d
        s += t
    return s


def _cos(theta: Decimal) -> Decimal:
    """cos θ by its Taylor series, for 0 ≤ θ ≤ π."""
    term, total, k, eps = Decimal(1), Decimal(1), 0, Decimal(10) ** -(PREC - 5)
    while abs(term) > eps:
        k += 2
        term = -term * theta * theta / (k * (k - 1))
        total += term
    return total


def erf_decimal(x: float) -> Decimal:
    """erf of the float64 value x (taken exactly) by 2/√π · Σ (−1)ⁿ x^(2n+1) / (n! (2n+1))."""
    with localcontext() as ctx:
        ctx.prec = PREC
        big_x = Decimal(x)
        x2, term, total, n, eps = big_x * big_x, big_x, big_x, 0, Decimal(10) ** -(PREC - 5)
        while True:
            n += 1
            term = -term * x2 / n
            add = term / (2 * n + 1)
            total += add
            if abs(add) < eps:
                return 2 * total / _pi().sqrt()


def _nodes(lo: float, hi: float, n: int) -> list[float]:
    """n Chebyshev nodes of [lo, hi], rounded to float64."""
    with localcontext() as ctx:
        ctx.prec = PREC
        pi = _pi()
        mid, half = (Decimal(lo) + Decimal(hi)) / 2, (Decimal(hi) - Decimal(lo)) / 2
        return [float(mid + half * _cos(pi * (2 * k + 1) / (2 * n))) for k in range(n)]


def _interpolate(points: list[Decimal], values: list[Decimal]) -> tuple[float, ...]:
    """Monomial coefficients c_0..c_n of the polynomial through (points, values), rounded to float64."""
    n = len(points)
    with localcontext() as ctx:
        ctx.prec = PREC
        rows = [[p**k if k else Decimal(1) for k in range(n)] + [v] for p, v in zip(points, values, strict=True)]
        for i in range(n):  # Gaussian elimination with partial pivoting
            pivot = max(range(i, n), key=lambda r: abs(rows[r][i]))
            rows[i], rows[pivot] = rows[pivot], rows[i]
            for r in range(i + 1, n):
                f = rows[r][i] / rows[i][i]
                rows[r] = [a - f * b for a, b in zip(rows[r], rows[i], strict=True)]
        coef = [Decimal(0)] * n
        for i in reversed(range(n)):
            coef[i] = (rows[i][n] - sum(rows[i][c] * coef[c] for c in range(i + 1, n))) / rows[i][i]
    return tuple(float(c) for c in coef)


def fit_small() -> tuple[float, ...]:
    """P with erf(x) = x·P(x²) on |x| < SMALL[0]: interpolates erf(x)/x at nodes in t = x²."""
    edge, deg = SMALL
    xs = [math.sqrt(t) for t in _nodes(0.0, edge * edge, deg + 1)]
    with localcontext() as ctx:
        ctx.prec = PREC
        return _interpolate([Decimal(x) * Decimal(x) for x in xs], [erf_decimal(x) / Decimal(x) for x in xs])


def fit_piece(lo: float, hi: float, deg: int) -> tuple[float, float, float, tuple[float, ...]]:
    """(lo, hi, centre, Q) with erfc(x)·exp(x²) = Q(x − centre) on [lo, hi)."""
    centre = (lo + hi) / 2
    xs = _nodes(lo, hi, deg + 1)
    with localcontext() as ctx:
        ctx.prec = PREC
        values = [(1 - erf_decimal(x)) * (Decimal(x) * Decimal(x)).exp() for x in xs]
        return lo, hi, centre, _interpolate([Decimal(x) - Decimal(centre) for x in xs], values)


def fit() -> dict:
    """{"small": P's coefficients, "pieces": ((lo, hi, centre, Q's coefficients), ...)}."""
    return {"small": fit_small(), "pieces": tuple(fit_piece(*p) for p in PIECES)}


def source(coefs: dict) -> str:
    """The coefficient block as it appears in attnlib/minilm.py."""
    def tup(c, indent):
        body = "".join(f"{indent}    {v!r},\n" for v in c)
        return f"(\n{body}{indent})"

    lines = ["_ERF_SMALL = " + tup(coefs["small"], "") + "", "_ERFC_PIECES = ("]
    for lo, hi, centre, c in coefs["pieces"]:
        lines.append(f"    ({lo!r}, {hi!r}, {centre!r}, {tup(c, '    ')}),")
    lines.append(")")
    return "\n".join(lines)


def check() -> int:
    """Compare attnlib.minilm's coefficients with a fresh fit; measure erf against math.erf and decimal."""
    import numpy as np

    from attnlib import minilm

    fresh = fit()
    same = fresh["small"] == minilm._ERF_SMALL and fresh["pieces"] == minilm._ERFC_PIECES
    print(f"coefficients in attnlib.minilm {'match' if same else 'DIFFER FROM'} a fresh fit")
    rng = np.random.default_rng(0)
    x = np.concatenate([np.linspace(-7, 7, 280_001), rng.uniform(-7, 7, 200_000), 10.0 ** rng.uniform(-300, 0, 20_000)])
    got = minilm.erf(x)
    err = np.abs(got - np.array([math.erf(v) for v in x]))
    print(f"max |erf - math.erf| over {x.size} points in [-7, 7] and tiny |x|: {err.max():.2e}")
    sample = rng.choice(x, 3000, replace=False)
    exact = np.array([float(erf_decimal(v)) for v in sample])
    print(f"max |erf - exact| on 3000 of them (90-digit decimal reference): "
          f"{np.abs(minilm.erf(sample) - exact).max():.2e}; math.erf's own: "
          f"{np.abs(np.array([math.erf(v) for v in sample]) - exact).max():.2e}")
    return 0 if same else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="check attnlib.minilm instead of printing")
    args = parser.parse_args(argv)
    if args.check:
        return check()
    print(source(fit()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

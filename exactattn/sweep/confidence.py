"""Exact binomial tails and Clopper–Pearson intervals with integers and Fractions (no float
on the decision path), for failure rates measured by a sweep (P2 probability one: the
measured rate against the Schwartz–Zippel bound D/|S|; docs/sweeps.md).

For p = a/b, P[X = i] = C(n, i) aⁱ (b − a)ⁿ⁻ⁱ / bⁿ: every term is an integer over bⁿ, and
consecutive terms differ by the exact integer ratio (n − i)·a / ((i + 1)(b − a)), so a tail is
an exact integer sum, compared with a level by one integer comparison.  Clopper–Pearson
endpoints are points of a decimal grid of three significant digits, rounded outwards and
certified by an exact tail, so the interval contains the exact Clopper–Pearson interval
(coverage ≥ the stated confidence).  Floats appear only in the starting guess of the search."""

from __future__ import annotations

import math
from fractions import Fraction
from statistics import NormalDist

__all__ = ["binomial_cdf", "binomial_sf", "clopper_pearson", "exceeds_bound"]


def _check(k, n, p) -> Fraction:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1 or isinstance(k, bool) \
            or not isinstance(k, int):
        raise ValueError(f"need integers n ≥ 1 and k, got k={k!r}, n={n!r}")
    p = Fraction(p)
    if not 0 <= p <= 1:
        raise ValueError(f"p must lie in [0, 1], got {p}")
    return p


def _lower_sum(k, n, a, b) -> int:
    """Σ_{i=0}^{k} C(n,i) aⁱ (b−a)ⁿ⁻ⁱ for 0 < a < b (exact integers)."""
    c = b - a
    term = c ** n
    total = term
    for i in range(k):
        term = term * (n - i) * a // ((i + 1) * c)
        total += term
    return total


def _upper_sum(j, n, a, b) -> int:
    """Σ_{i=j}^{n} C(n,i) aⁱ (b−a)ⁿ⁻ⁱ for 0 < a < b."""
    c = b - a
    term = a ** n
    total = term
    for i in range(n, j, -1):
        term = term * i * c // ((n - i + 1) * a)
        total += term
    return total


def _cdf_parts(k, n, p):
    """P[X ≤ k] as an unreduced integer pair (numerator, denominator): reducing numbers of
    n·log₂ b bits costs more than the sum itself."""
    if k < 0:
        return 0, 1
    if k >= n or p == 0:
        return 1, 1
    if p == 1:
        return 0, 1
    a, b = p.numerator, p.denominator
    if k <= n // 2:
        return _lower_sum(k, n, a, b), b ** n
    bn = b ** n
    return bn - _upper_sum(k + 1, n, a, b), bn


def binomial_cdf(k: int, n: int, p) -> Fraction:
    """P[X ≤ k] for X ~ Bin(n, p), exactly."""
    num, den = _cdf_parts(k, n, _check(k, n, p))
    return Fraction(num, den)


def binomial_sf(k: int, n: int, p) -> Fraction:
    """P[X ≥ k] for X ~ Bin(n, p), exactly."""
    return 1 - binomial_cdf(k - 1, n, p)


def _cdf_at_most(k, n, p, level: Fraction) -> bool:
    """P_p[X ≤ k] ≤ level, by one integer comparison."""
    num, den = _cdf_parts(k, n, p)
    return num * level.denominator <= level.numerator * den


def _sf_at_most(k, n, p, level: Fraction) -> bool:
    """P_p[X ≥ k] = 1 − P_p[X ≤ k − 1] ≤ level, by one integer comparison."""
    num, den = _cdf_parts(k - 1, n, p)
    return (den - num) * level.denominator <= level.numerator * den


def _wilson(k: int, n: int, z: float, sign: int) -> float:
    """Starting guess of the exact search (the Wilson score endpoint; not a result)."""
    ph, z2 = k / n, z * z
    centre = ph + z2 / (2 * n)
    spread = z * math.sqrt(ph * (1 - ph) / n + z2 / (4 * n * n))
    return min(1.0, max(0.0, (centre + sign * spread) / (1 + z2 / n)))


def _grid(guess: float):
    """(step, top, start index) of the three-significant-digit grid around ``guess``."""
    guess = min(max(guess, 1e-12), 1.0)
    step = Fraction(10) ** (math.floor(math.log10(guess)) - 2)
    top = int(1 / step)
    return step, top, max(1, min(top - 1, round(Fraction(guess) / step)))


def _smallest(ok, guess: float):
    """(j, step): j·step is the smallest grid point where ``ok`` holds, for ``ok`` true from a
    threshold upwards (ok(1) must hold)."""
    step, top, g = _grid(guess)
    i, j = g, g          # invariant after the brackets: ok(j·step) true, ok(i·step) false
    while not ok(j * step):
        i, j = j, min(top, 2 * j)
    if i == j:           # ok held at the guess: step down until it fails
        i = j // 2
        while i > 0 and ok(i * step):
            j, i = i, i // 2
        if i == 0 and ok(Fraction(0)):
            return 0, step
    while j - i > 1:
        m = (i + j) // 2
        if ok(m * step):
            j = m
        else:
            i = m
    return j, step


def clopper_pearson(k: int, n: int, confidence=Fraction(99, 100)) -> tuple:
    """Two-sided Clopper–Pearson interval (lo, hi) for k events in n trials at the given
    confidence, as Fractions on a three-significant-digit grid, widened outwards and
    certified exactly: P_hi[X ≤ k] ≤ α/2 and P_lo[X ≥ k] ≤ α/2 with α = 1 − confidence, so
    [lo, hi] contains the exact Clopper–Pearson interval."""
    _check(k, n, 0)
    if not 0 <= k <= n:
        raise ValueError(f"need 0 ≤ k ≤ n, got k={k}, n={n}")
    confidence = Fraction(confidence)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    half = (1 - confidence) / 2
    z = NormalDist().inv_cdf(1 - float(half))
    hi, lo = Fraction(1), Fraction(0)
    if k < n:
        hi = _refined(lambda p: _cdf_at_most(k, n, p, half), _wilson(k, n, z, +1), 0)
    if k > 0:  # P_p[X ≥ k] grows with p: lo is the grid point below the first one above α/2
        lo = _refined(lambda p: not _sf_at_most(k, n, p, half), _wilson(k, n, z, -1), -1)
    return lo, hi


def _refined(ok, guess: float, offset: int) -> Fraction:
    """(j + offset)·step from :func:`_smallest`, searched again on the grid of the result's
    own decade until it has three significant digits."""
    for _ in range(6):
        j, step = _smallest(ok, guess)
        x = (j + offset) * step
        if x == 0 or step * 100 <= x:
            return x
        guess = float(x)
    return x


def exceeds_bound(k: int, n: int, bound, alpha) -> bool:
    """Exact one-sided binomial test of H₀: p ≤ bound: True when k events in n trials are
    significant at level α, i.e. P_bound[X ≥ k] ≤ α (the rate exceeds the bound beyond
    sampling fluctuation).  A bound ≥ 1 is never exceeded."""
    bound, alpha = Fraction(bound), Fraction(alpha)
    if bound >= 1:
        return False
    _check(k, n, bound)
    return _sf_at_most(k, n, bound, alpha)

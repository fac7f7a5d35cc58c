"""Exact binomial tails with integers only, for the Monte Carlo confidence statements
(Clopper–Pearson; P2 probability one).

For X ~ Bin(n, b) with b = p/q: P[X = i] = C(n, i) pⁱ (q − p)ⁿ⁻ⁱ / qⁿ; the terms are
integers T_i = C(n, i) pⁱ (q − p)ⁿ⁻ⁱ with T_{i+1} = T_i (n − i) p / ((i + 1)(q − p)) exactly.
"""

from __future__ import annotations

from fractions import Fraction

MAX_TRIALS = 100_000


def lower_tail(n: int, k: int, b: Fraction) -> Fraction:
    """P[X ≤ k] for X ~ Bin(n, b), exactly (k + 1 integer terms)."""
    if k < 0:
        return Fraction(0)
    if k >= n or b == 0:
        return Fraction(1)
    if b == 1:
        return Fraction(0)
    p, q = b.numerator, b.denominator
    r = q - p
    T = r ** n
    total = T
    for i in range(k):
        T = T * (n - i) * p // ((i + 1) * r)
        total += T
    return Fraction(total, q ** n)


def upper_tail(n: int, k: int, b: Fraction) -> Fraction:
    """P[X ≥ k] = 1 − P[X ≤ k − 1]."""
    return 1 - lower_tail(n, k - 1, b)


def consistent_with_bound(n: int, k: int, bound: Fraction, level: Fraction) -> bool:
    """The one-sided exact binomial test of "success probability ≤ bound" at `level` does
    not reject: P_bound[X ≥ k] > level."""
    return bound >= 1 or upper_tail(n, k, bound) > level


def is_upper_limit(n: int, k: int, limit: Fraction, level: Fraction) -> bool:
    """`limit` is a valid Clopper–Pearson upper confidence limit at 1 − level for k
    successes in n: P_limit[X ≤ k] ≤ level."""
    return 0 <= limit <= 1 and (limit == 1 or lower_tail(n, k, limit) <= level)


#: Clopper–Pearson limits are stated on the grid of multiples of 2^−LIMIT_BITS
LIMIT_BITS = 24


def is_least_upper_limit(n: int, k: int, limit: Fraction, level: Fraction) -> bool:
    """`limit` is the least multiple of 2^−LIMIT_BITS that is a Clopper–Pearson upper limit at
    1 − level (so the stated value is re-derived, not merely a valid bound)."""
    step = Fraction(1, 2 ** LIMIT_BITS)
    return ((limit / step).denominator == 1 and is_upper_limit(n, k, limit, level) and
            (limit == 0 or not is_upper_limit(n, k, limit - step, level)))

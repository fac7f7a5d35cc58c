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


# ------------------------------------------------------------ power (what a test can detect)
#: the power at which the smallest detectable rate is stated
POWER, POWER_TEXT = Fraction(9, 10), "0.9"
#: the detectable rate is stated on the grid of multiples of 2^−POWER_BITS (display)
POWER_BITS = 16


def critical_count(n: int, bound: Fraction, level: Fraction):
    """The least k with P_bound[X ≥ k] ≤ level — the test of "rate ≤ bound" rejects exactly
    from k failures on — or None when no count up to n is rejected (bound ≥ 1 included)."""
    if bound >= 1:
        return None
    if bound <= 0:
        return 1
    p, q = bound.numerator, bound.denominator
    r, qn = q - p, q ** n
    # P[X ≤ k − 1] ≥ 1 − level ⇔ total · level.den ≥ qⁿ (level.den − level.num)
    need = qn * (level.denominator - level.numerator)
    T = r ** n
    total = T
    for i in range(n):
        if total * level.denominator >= need:
            return i + 1
        T = T * (n - i) * p // ((i + 1) * r)
        total += T
    return None


def detectable_rate(n: int, bound: Fraction, level: Fraction, power: Fraction = POWER,
                    bits: int = POWER_BITS):
    """The least multiple of 2^−bits that the test of "rate ≤ bound" at `level` (n trials)
    rejects with probability ≥ `power`: P_rate[X ≥ k*] ≥ power, k* = :func:`critical_count`
    (exact bisection; the power is increasing in the rate).  None when the test never
    rejects."""
    k = critical_count(n, bound, level)
    if k is None or k > n:
        return None
    # power(lo) < power ≤ power(hi) = 1; at the bound itself the power is ≤ level < power
    lo, hi = max(0, (bound.numerator << bits) // bound.denominator), 2 ** bits
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if upper_tail(n, k, Fraction(mid, 2 ** bits)) >= power:
            hi = mid
        else:
            lo = mid
    return Fraction(hi, 2 ** bits)


def decimal(q: Fraction, digits: int = 3) -> str:
    """q in scientific notation with `digits` significant digits, rounded up (display of an
    exact rational, no float): 0.002113… → '2.12e-3'."""
    if q == 0:
        return "0"
    e = 0
    while q * Fraction(10) ** (digits - 1 - e) < Fraction(10) ** (digits - 1):
        e -= 1
    while q * Fraction(10) ** (digits - 1 - e) >= Fraction(10) ** digits:
        e += 1
    m = -(-(q * Fraction(10) ** (digits - 1 - e)).numerator //
          (q * Fraction(10) ** (digits - 1 - e)).denominator)
    if m == 10 ** digits:
        m, e = 10 ** (digits - 1), e + 1
    s = str(m)
    return f"{s[0]}.{s[1:]}e{e}" if digits > 1 else f"{s}e{e}"


def power_sentence(n: int, bound: Fraction, level: Fraction, what: str = "failure") -> str:
    """"would reject a failure rate ≥ 2.12e-3 with power 0.9 (rejects from k of n)"."""
    k = critical_count(n, bound, level)
    rate = detectable_rate(n, bound, level)
    if rate is None:
        return f"could not reject at any {what} rate ({n} trials)"
    return (f"would reject a {what} rate ≥ {decimal(rate)} with power {POWER_TEXT} "
            f"(it rejects from {k} of {n})")


def caught_rate(n: int, power: Fraction = POWER, bits: int = POWER_BITS) -> Fraction:
    """The least multiple of 2^−bits such that a learner failing *outside* the bad set at
    that rate shows at least one such failure in n draws with probability ≥ `power`:
    1 − (1 − r)ⁿ ≥ power (exact bisection)."""
    lo, hi = 0, 2 ** bits
    while hi - lo > 1:
        mid = (lo + hi) // 2
        # 1 − (1 − mid/2^b)^n ≥ power ⇔ (2^b − mid)^n ≤ (1 − power)·2^(b n)
        if (2 ** bits - mid) ** n * power.denominator <= \
                (power.denominator - power.numerator) * 2 ** (bits * n):
            hi = mid
        else:
            lo = mid
    return Fraction(hi, 2 ** bits)


def caught_sentence(n: int) -> str:
    """"a learner failing outside the bad set at a rate ≥ 2.31e-3 is caught with power 0.9"."""
    return (f"a learner failing outside the bad set at a rate ≥ {decimal(caught_rate(n))} is "
            f"caught with power {POWER_TEXT} ({n} draws)")

"""Rational interval arithmetic with outward rounding (standard library only: ``fractions``).

An interval [lo, hi] has rational endpoints; every operation returns an interval that
contains every result of the operation on members of its operands, its endpoints rounded
*outward* (lo down, hi up) to a fixed number of significant bits, so that sizes stay bounded
however long the computation.  exp and log are enclosed by Taylor / atanh series summed in
integer fixed point with every truncation rounded outward and an explicit bound on the
series' remainder:

* e^y, y ≥ 0: y = n·ln 2 + r with |r| ≤ 0.35 (ln 2 itself an interval), e^r = Σ r^k/k! — the
  partial sum (floors) is a lower bound, the partial sum (ceilings) plus the last term plus
  one unit an upper bound (the remainder after term N is ≤ term N since r ≤ 1/2); e^{−y} =
  1/e^{y}, reciprocals rounded outward.
* log x, x > 0: x = 2^k·m with m ∈ [2/3, 4/3], log m = 2·atanh((m−1)/(m+1)) =
  2 Σ z^{2j+1}/(2j+1), |z| ≤ 1/5 (remainder ≤ 2·|z|^{2N+3}), ln 2 = 2·atanh(1/3).

Both are increasing, so an interval argument takes the lower bound at lo and the upper bound
at hi.  A sign is *certified* when the interval excludes 0; :func:`laurent_sign` decides the
sign of Σ c_k e^{k/L} (an element of Q(t), t = e^{1/L}) exactly for 0 and by intervals at
doubling precision otherwise.

Nothing here uses floats; the module shares no code with exactattn.
"""

from __future__ import annotations

from fractions import Fraction

from .parse import Rejected, require

#: default significant bits of an interval endpoint
BITS = 256
#: largest precision :func:`laurent_sign` doubles to before it gives up
MAX_BITS = 1 << 14


# ---------------------------------------------------------------------- rounding
def _round(x: Fraction, bits: int, upward: bool) -> Fraction:
    """x rounded to `bits` significant bits, towards +∞ (upward) or −∞."""
    n, d = x.numerator, x.denominator
    if n == 0:
        return x
    if d & (d - 1) == 0 and abs(n).bit_length() <= bits:
        return x                                   # already a short dyadic
    s = bits - (abs(n).bit_length() - d.bit_length())
    if s >= 0:
        q, r = divmod(n << s, d)
    else:
        q, r = divmod(n, d << -s)
    if r and upward:
        q += 1
    return Fraction(q, 1 << s) if s >= 0 else Fraction(q << -s)


def down(x, bits=BITS) -> Fraction:
    return _round(Fraction(x), bits, False)


def up(x, bits=BITS) -> Fraction:
    return _round(Fraction(x), bits, True)


# ---------------------------------------------------------------------- fixed-point series
def _fixed(x: Fraction, w: int, upward: bool) -> int:
    """floor (or ceil) of x·2^w."""
    q, r = divmod(x.numerator << w, x.denominator)
    return q + 1 if (r and upward) else q


def _atanh_fixed(num: int, den: int, w: int, upward: bool) -> int:
    """A lower (upper) bound of atanh(num/den)·2^w, 0 ≤ num/den ≤ 1/3, as an integer."""
    if num == 0:
        return 0
    z = Fraction(num, den)
    z2 = z * z
    p = _fixed(z, w, upward)               # z^{2j+1}·2^w, rounded the chosen way
    total, j = p, 0
    step = (z2.numerator, z2.denominator)
    while True:
        j += 1
        q, r = divmod(p * step[0], step[1])
        p = q + 1 if (r and upward) else q
        q, r = divmod(p, 2 * j + 1)
        term = q + 1 if (r and upward) else q
        if term == 0 and not upward:
            return total
        total += term
        if term <= 1 and upward:
            # remainder after this term ≤ z^{2j+3}/((2j+3)(1−z²)) ≤ the term (z ≤ 1/3)
            return total + term + 1
        if j > 10 * w:                      # cannot happen for z ≤ 1/3; guard anyway
            raise Rejected("interval: atanh series did not converge")


_LN2 = {}


def ln2(bits=BITS):
    """An interval [lo, hi] ∋ ln 2 = 2·atanh(1/3), endpoints with about `bits` bits."""
    if bits not in _LN2:
        w = bits + 8
        lo = Fraction(2 * _atanh_fixed(1, 3, w, False), 1 << w)
        hi = Fraction(2 * _atanh_fixed(1, 3, w, True), 1 << w)
        _LN2[bits] = (down(lo, bits), up(hi, bits))
    return _LN2[bits]


def _exp_small(r: Fraction, w: int, upward: bool) -> int:
    """A lower (upper) bound of e^r·2^w for 0 ≤ r ≤ 1/2."""
    R = _fixed(r, w, upward)
    one = 1 << w
    term, total, k = one, one, 0
    while True:
        k += 1
        t = term * R
        term = (t >> w) if not upward else -((-t) >> w)
        term = term // k if not upward else -((-term) // k)
        if term == 0 and not upward:
            return total
        total += term
        if upward and term <= 1:
            return total + term + 1          # remainder ≤ the last term, plus one unit
        if k > 10 * w:
            raise Rejected("interval: exp series did not converge")


_EXP_CACHE = {}


def exp_bounds(y, bits=BITS):
    """(lo, hi) with lo ≤ e^y ≤ hi, for a rational y."""
    y = Fraction(y)
    key = (y, bits)
    hit = _EXP_CACHE.get(key)
    if hit is not None:
        return hit
    if y == 0:
        out = (Fraction(1), Fraction(1))
    elif y < 0:
        lo, hi = exp_bounds(-y, bits + 4)
        out = (down(1 / hi, bits), up(1 / lo, bits))
    else:
        # y = n·ln2 + r, n the integer nearest y/ln 2, r enclosed through ln 2's interval
        n = round(y / ln2(64)[0])
        w = bits + 16
        l_lo, l_hi = ln2(bits + n.bit_length() + 16)
        r_lo, r_hi = y - n * l_hi, y - n * l_lo
        require(-Fraction(1, 2) <= r_lo and r_hi <= Fraction(1, 2),
                "interval: exp argument reduction out of range")
        lo = _exp_signed(r_lo, w, False)
        hi = _exp_signed(r_hi, w, True)
        scale = Fraction(2) ** n
        out = (down(lo * scale, bits), up(hi * scale, bits))
    if len(_EXP_CACHE) > 200_000:
        _EXP_CACHE.clear()
    _EXP_CACHE[key] = out
    return out


def _exp_signed(r: Fraction, w: int, upward: bool) -> Fraction:
    """A bound of e^r, |r| ≤ 1/2 (negative r through 1/e^{−r}, rounded the chosen way)."""
    if r >= 0:
        return Fraction(_exp_small(r, w, upward), 1 << w)
    e = Fraction(_exp_small(-r, w, not upward), 1 << w)
    return down(1 / e, w) if not upward else up(1 / e, w)


def log_bounds(x, bits=BITS):
    """(lo, hi) with lo ≤ log x ≤ hi, for a rational x > 0."""
    x = Fraction(x)
    require(x > 0, "interval: log of a number that is not positive")
    if x == 1:
        return Fraction(0), Fraction(0)
    # x = 2^k m, m ∈ [2/3, 4/3]
    k = x.numerator.bit_length() - x.denominator.bit_length()
    m = x / Fraction(2) ** k
    while m > Fraction(4, 3):
        m, k = m / 2, k + 1
    while m < Fraction(2, 3):
        m, k = m * 2, k - 1
    w = bits + 16
    z = (m - 1) / (m + 1)                          # |z| ≤ 1/5
    neg = z < 0
    a = abs(z)
    low = Fraction(2 * _atanh_fixed(a.numerator, a.denominator, w, False), 1 << w)
    high = Fraction(2 * _atanh_fixed(a.numerator, a.denominator, w, True), 1 << w)
    lo_f, hi_f = (-high, -low) if neg else (low, high)
    l_lo, l_hi = ln2(bits + abs(k).bit_length() + 16)
    lo = lo_f + (k * l_lo if k >= 0 else k * l_hi)
    hi = hi_f + (k * l_hi if k >= 0 else k * l_lo)
    return down(lo, bits), up(hi, bits)


# ---------------------------------------------------------------------- intervals
class Iv:
    """A closed interval [lo, hi] of rationals; operations round outward to ``bits``."""

    __slots__ = ("lo", "hi", "bits")

    def __init__(self, lo, hi=None, bits=BITS):
        lo = Fraction(lo)
        hi = lo if hi is None else Fraction(hi)
        if lo > hi:
            raise Rejected("interval: lower end above the upper end")
        self.lo, self.hi, self.bits = lo, hi, bits

    @classmethod
    def point(cls, x, bits=BITS):
        """The exact rational x (no rounding)."""
        return cls(x, x, bits)

    @classmethod
    def around(cls, x, radius, bits=BITS):
        return cls(down(Fraction(x) - radius, bits), up(Fraction(x) + radius, bits), bits)

    def _make(self, lo, hi, bits):
        return Iv(down(lo, bits), up(hi, bits), bits)

    def _other(self, o):
        return o if isinstance(o, Iv) else Iv(o, o, self.bits)

    # arithmetic
    def __add__(self, o):
        o = self._other(o)
        b = max(self.bits, o.bits)
        return self._make(self.lo + o.lo, self.hi + o.hi, b)

    __radd__ = __add__

    def __neg__(self):
        return Iv(-self.hi, -self.lo, self.bits)

    def __sub__(self, o):
        return self + (-self._other(o))

    def __rsub__(self, o):
        return self._other(o) - self

    def __mul__(self, o):
        o = self._other(o)
        b = max(self.bits, o.bits)
        if o.lo == o.hi and self.lo == self.hi:
            p = self.lo * o.lo
            return self._make(p, p, b)
        ps = (self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi)
        return self._make(min(ps), max(ps), b)

    __rmul__ = __mul__

    def inverse(self):
        require(self.lo > 0 or self.hi < 0, "interval: division by an interval containing 0")
        return self._make(1 / self.hi, 1 / self.lo, self.bits)

    def __truediv__(self, o):
        o = self._other(o)
        if o.lo == o.hi:
            require(o.lo != 0, "interval: division by 0")
            q = (self.lo / o.lo, self.hi / o.lo)
            return self._make(min(q), max(q), max(self.bits, o.bits))
        return self * o.inverse()

    def __rtruediv__(self, o):
        return self._other(o) / self

    def square(self):
        if self.lo >= 0:
            return self._make(self.lo * self.lo, self.hi * self.hi, self.bits)
        if self.hi <= 0:
            return self._make(self.hi * self.hi, self.lo * self.lo, self.bits)
        return self._make(0, max(self.lo * self.lo, self.hi * self.hi), self.bits)

    def __abs__(self):
        if self.lo >= 0:
            return self
        if self.hi <= 0:
            return -self
        return Iv(0, max(-self.lo, self.hi), self.bits)

    # functions
    def exp(self):
        return Iv(exp_bounds(self.lo, self.bits)[0], exp_bounds(self.hi, self.bits)[1],
                  self.bits)

    def log(self):
        require(self.lo > 0, "interval: log of an interval that is not certainly positive")
        return Iv(log_bounds(self.lo, self.bits)[0], log_bounds(self.hi, self.bits)[1],
                  self.bits)

    # queries
    def sign(self):
        """+1 or −1 when certain, None when the interval contains 0 (and is not {0}), 0 for {0}."""
        if self.lo > 0:
            return 1
        if self.hi < 0:
            return -1
        return 0 if self.lo == self.hi == 0 else None

    def contains(self, x) -> bool:
        return self.lo <= x <= self.hi

    def overlaps(self, o) -> bool:
        return self.lo <= o.hi and o.lo <= self.hi

    def mid(self) -> Fraction:
        return (self.lo + self.hi) / 2

    def width(self) -> Fraction:
        return self.hi - self.lo

    def upper_abs(self) -> Fraction:
        return max(-self.lo, self.hi)

    def lower_abs(self) -> Fraction:
        return Fraction(0) if self.lo <= 0 <= self.hi else min(abs(self.lo), abs(self.hi))

    def hull(self, o):
        return Iv(min(self.lo, o.lo), max(self.hi, o.hi), max(self.bits, o.bits))

    def __repr__(self):
        return f"[{float(self.lo):.6g}, {float(self.hi):.6g}]"


def point(x, bits=BITS) -> Iv:
    return Iv.point(x, bits)


def isum(xs, bits=BITS) -> Iv:
    out = Iv.point(0, bits)
    for x in xs:
        out = out + x
    return out


def softmax_average(scores, values, bits=BITS) -> Iv:
    """Σ_i e^{s_i} a_i / Σ_i e^{s_i} for rational scores and values, enclosed: the weights
    e^{s_i − max s} ∈ (0, 1] by :func:`exp_bounds`, then interval sums and one division."""
    top = max(scores)
    num, den = Iv.point(0, bits), Iv.point(0, bits)
    for s, a in zip(scores, values):
        lo, hi = exp_bounds(s - top, bits)
        e = Iv(lo, hi, bits)
        den = den + e
        if a:
            num = num + e * a
    return num / den


def laurent_value(p, L, bits=BITS, shift=None) -> Iv:
    """Σ_k c_k e^{(k − shift)/L} enclosed (shift defaults to the largest exponent: the terms
    more than ``bits`` + 64 below it are bounded together by Σ|c_k|·2^{−bits−64}, since
    e^{−x} < 2^{−x} for x > 0, without a series)."""
    if not p:
        return Iv.point(0, bits)
    top = max(p) if shift is None else shift
    total = Iv.point(0, bits)
    cut = bits + 64
    far = Fraction(0)
    for k, c in p.items():
        x = Fraction(k - top, L)
        if x < -cut:
            far += abs(c)
        else:
            lo, hi = exp_bounds(x, bits)
            total = total + Iv(lo, hi, bits) * c
    if far:
        bound = up(far / Fraction(2) ** cut, bits)
        total = total + Iv(-bound, bound, bits)
    return total


def laurent_sign(p, L, bits=BITS) -> int:
    """The certified sign of Σ_k c_k t^k at t = e^{1/L} (p = {k: c}): 0 exactly for the zero
    polynomial (t is transcendental), otherwise by intervals at doubling precision."""
    p = {k: c for k, c in p.items() if c}
    if not p:
        return 0
    while bits <= MAX_BITS:
        s = laurent_value(p, L, bits).sign()
        if s:
            return s
        bits *= 2
    raise Rejected(f"interval: the sign of a non-zero element of Q(t) is undecided at "
                   f"{MAX_BITS} bits")

"""The exponential field Q(e^{1/L}) ≅ Q(t) (DESIGN §2, "exact").

If every attention score is a rational number whose denominator divides L, then
exp(score) = t^k with t = e^{1/L} and k an integer.  e^{1/L} is transcendental
(Lindemann–Weierstrass), so evaluation t ↦ e^{1/L} is an isomorphism from the
rational-function field Q(t) onto Q(e^{1/L}); every softmax output of a model with
rational parameters on rational tokens is therefore an exact element of Q(t), and
equality is decided by polynomial arithmetic.

An :class:`ExpElement` is ``num(t)/den(t)`` with python-flint ``fmpq_poly``
numerator and denominator and the integer ``L``.  Elements with different ``L``
are lifted to the least common multiple (t_old = t_new^(L_new/L_old)).

Arithmetic results are *reduced* (gcd removed, monic denominator, smallest L), which
is a canonical form.  The fast evaluation path of the models builds unreduced
elements (a gcd of degree-4000 polynomials costs ~20 ms); equality never depends on
reduction because it cross-multiplies.  Order and sign are decided by certified ball
arithmetic (arb) at t = e^{1/L}: a nonzero element is nonzero at a transcendental t,
so raising the precision always terminates.  No floating-point number is used to
decide anything here.
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd

import flint
from flint import fmpq, fmpq_poly, fmpz

__all__ = ["ExpElement", "as_fmpq", "exp_rational"]

_X = fmpq_poly([0, 1])


def as_fmpq(q) -> fmpq:
    """Exact conversion of int / Fraction / fmpq / fmpz to fmpq (no floats accepted)."""
    if isinstance(q, fmpq):
        return q
    if isinstance(q, bool):
        raise TypeError("a bool is not a number here")
    if isinstance(q, (int, fmpz)):
        return fmpq(q)
    if isinstance(q, Fraction):
        return fmpq(q.numerator, q.denominator)
    raise TypeError(f"expected an exact rational, got {type(q).__name__} {q!r}")


def _lcm(a: int, b: int) -> int:
    return a // gcd(a, b) * b


def _monomial(k: int) -> fmpq_poly:
    return _X ** k if k > 0 else fmpq_poly([1])


def _inflate(p: fmpq_poly, m: int) -> fmpq_poly:
    """p(t) ↦ p(t^m)."""
    if m == 1 or p.degree() <= 0:
        return p
    return fmpq_poly(p.numer().inflate(m), p.denom())


def _low_degree(p: fmpq_poly) -> int:
    """Exponent of the largest power of t dividing p (p ≠ 0)."""
    for i, c in enumerate(p.coeffs()):
        if c != 0:
            return i
    raise ZeroDivisionError("zero polynomial")


class ExpElement:
    """An exact element num(t)/den(t) of Q(t), t = e^{1/L} (DESIGN §2, exact backend)."""

    __slots__ = ("num", "den", "L", "_reduced")

    def __init__(self, num, den=None, L: int = 1, reduced: bool = False):
        if not isinstance(num, fmpq_poly):
            num = fmpq_poly([as_fmpq(num)])
        if den is None:
            den = fmpq_poly([1])
        elif not isinstance(den, fmpq_poly):
            den = fmpq_poly([as_fmpq(den)])
        if den.is_zero():
            raise ZeroDivisionError("ExpElement with zero denominator")
        if not isinstance(L, int) or L < 1:
            raise ValueError(f"L must be a positive integer, got {L!r}")
        self.num, self.den, self.L = num, den, L
        self._reduced = reduced
        if not reduced and num.is_zero():
            self.den, self.L, self._reduced = fmpq_poly([1]), 1, True

    # ----------------------------------------------------------------- constructors
    @classmethod
    def from_rational(cls, q) -> "ExpElement":
        return cls(fmpq_poly([as_fmpq(q)]), fmpq_poly([1]), 1, reduced=True)

    @classmethod
    def t_power(cls, k: int, L: int) -> "ExpElement":
        """t^k = e^{k/L}."""
        return cls(_monomial(k), _monomial(-k), L).reduce()

    @classmethod
    def from_laurent(cls, num_terms, den_terms, L: int) -> "ExpElement":
        """(Σ a_k t^k)/(Σ b_k t^k) from dicts exponent → rational (exponents may be < 0)."""
        low = min(min(num_terms, default=0), min(den_terms))
        num = [0] * (max(num_terms, default=low) - low + 1)
        den = [0] * (max(den_terms) - low + 1)
        for k, a in num_terms.items():
            num[k - low] += a
        for k, b in den_terms.items():
            den[k - low] += b
        return cls(fmpq_poly(num), fmpq_poly(den), L)

    # ----------------------------------------------------------------- normal form
    def reduce(self) -> "ExpElement":
        """Canonical form: coprime, monic denominator, smallest L.  Mutates and returns self."""
        if self._reduced:
            return self
        num, den = self.num, self.den
        g = num.gcd(den)
        if not g.is_one():
            num, den = num / g, den / g  # exact division in Q[t]
        lc = den.leading_coefficient()
        if lc != 1:
            num, den = num / lc, den / lc
        L = self.L
        if L > 1:
            # smallest L: deflate when every exponent is a multiple of g
            step = gcd(num.deflation()[1] if num.degree() > 0 else 0,
                       den.deflation()[1] if den.degree() > 0 else 0)
            step = gcd(step, L) if step else L
            if step > 1:
                num = fmpq_poly(num.numer().deflate(step), num.denom()) if num.degree() > 0 else num
                den = fmpq_poly(den.numer().deflate(step), den.denom()) if den.degree() > 0 else den
                L //= step
        self.num, self.den, self.L, self._reduced = num, den, L, True
        return self

    def lift(self, L: int) -> "ExpElement":
        """The same element written over t' = e^{1/L}, L a multiple of self.L."""
        if L == self.L:
            return self
        m, r = divmod(L, self.L)
        if r:
            raise ValueError(f"cannot lift from L={self.L} to L={L}: not a multiple")
        return ExpElement(_inflate(self.num, m), _inflate(self.den, m), L)

    @staticmethod
    def common(a: "ExpElement", b: "ExpElement"):
        if a.L == b.L:
            return a, b, a.L
        L = _lcm(a.L, b.L)
        return a.lift(L), b.lift(L), L

    # ----------------------------------------------------------------- arithmetic
    @staticmethod
    def _coerce(other) -> "ExpElement":
        if isinstance(other, ExpElement):
            return other
        try:
            return ExpElement.from_rational(other)
        except TypeError:
            return NotImplemented

    def __add__(self, other):
        other = self._coerce(other)
        if other is NotImplemented:
            return other
        a, b, L = self.common(self, other)
        if a.den == b.den:
            return ExpElement(a.num + b.num, a.den, L).reduce()
        return ExpElement(a.num * b.den + b.num * a.den, a.den * b.den, L).reduce()

    __radd__ = __add__

    def __neg__(self):
        return ExpElement(-self.num, self.den, self.L, reduced=self._reduced)

    def __sub__(self, other):
        other = self._coerce(other)
        if other is NotImplemented:
            return other
        return self + (-other)

    def __rsub__(self, other):
        other = self._coerce(other)
        if other is NotImplemented:
            return other
        return other + (-self)

    def __mul__(self, other):
        other = self._coerce(other)
        if other is NotImplemented:
            return other
        a, b, L = self.common(self, other)
        return ExpElement(a.num * b.num, a.den * b.den, L).reduce()

    __rmul__ = __mul__

    def inverse(self) -> "ExpElement":
        if self.num.is_zero():
            raise ZeroDivisionError("division by zero in Q(t)")
        return ExpElement(self.den, self.num, self.L).reduce()

    def __truediv__(self, other):
        other = self._coerce(other)
        if other is NotImplemented:
            return other
        return self * other.inverse()

    def __rtruediv__(self, other):
        other = self._coerce(other)
        if other is NotImplemented:
            return other
        return other * self.inverse()

    def __pow__(self, n: int):
        if not isinstance(n, int):
            raise TypeError("only integer powers are exact in Q(t)")
        if n < 0:
            return self.inverse() ** (-n)
        r = ExpElement(self.num ** n, self.den ** n, self.L).reduce()
        return r

    # ----------------------------------------------------------------- predicates
    def is_zero(self) -> bool:
        return self.num.is_zero()

    def __bool__(self):
        return not self.is_zero()

    def __eq__(self, other):
        other = self._coerce(other)
        if other is NotImplemented:
            return False
        a, b, _ = self.common(self, other)
        if a.den == b.den:
            return a.num == b.num
        return a.num * b.den == b.num * a.den

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        if self.is_rational():
            return hash(self.as_rational())
        r = self.reduce()
        return hash((str(r.num), str(r.den), r.L))

    def is_rational(self) -> bool:
        """True when the element lies in Q (no t-dependence)."""
        r = self.reduce()
        return r.num.degree() <= 0 and r.den.degree() == 0

    def as_rational(self) -> Fraction:
        if not self.is_rational():
            raise ValueError(f"{self} is not a rational number")
        c = self.num[0] if self.num.degree() == 0 else fmpq(0)
        c = c / self.den[0]
        return Fraction(int(c.p), int(c.q))

    def monomial(self):
        """(c, k) with self = c·t^k, or None when self is not a monomial."""
        r = self.reduce()
        if r.num.is_zero():
            return None
        if not (_is_monomial(r.den) and _is_monomial(r.num)):
            return None
        c = r.num.leading_coefficient()
        return Fraction(int(c.p), int(c.q)), r.num.degree() - r.den.degree()

    # ----------------------------------------------------------------- exp / log
    def log(self):
        """Exact log of c·t^k: k/L + log c (P2 §4.3: z_h = t^k gives the score k/L).

        Returns a Fraction when c = 1; a sympy expression k/L + log(c) when c > 0;
        raises ValueError for elements that are not positive monomials c·t^k.
        """
        mono = self.monomial()
        if mono is None:
            raise ValueError(f"log is exact only for monomials c·t^k; {self} is not one")
        c, k = mono
        if c <= 0:
            raise ValueError(f"log of a non-positive element {self}")
        score = Fraction(k, self.reduce().L)
        if c == 1:
            return score
        import sympy
        return sympy.Rational(score.numerator, score.denominator) + sympy.log(
            sympy.Rational(c.numerator, c.denominator))

    # ----------------------------------------------------------------- certified numerics
    def ball(self, prec: int = 64):
        """An arb ball containing the value at t = e^{1/L}, computed at `prec` bits."""
        old = flint.ctx.prec
        try:
            flint.ctx.prec = prec
            t = (flint.arb(1) / self.L).exp()
            n = flint.arb_poly([flint.arb(c) for c in self.num.coeffs()])(t)
            d = flint.arb_poly([flint.arb(c) for c in self.den.coeffs()])(t)
            return n / d
        finally:
            flint.ctx.prec = old

    def sign(self) -> int:
        """Certified sign at t = e^{1/L}: −1, 0 or 1 (ball arithmetic, never float rounding)."""
        if self.num.is_zero():
            return 0
        prec = 64
        while True:
            b = self.ball(prec)
            if b > 0:
                return 1
            if b < 0:
                return -1
            prec *= 2
            if prec > 1 << 20:  # cannot happen for a nonzero element; guard anyway
                raise ArithmeticError("sign undecided at 2^20 bits")

    def __lt__(self, other):
        return (self - other).sign() < 0

    def __le__(self, other):
        return (self - other).sign() <= 0

    def __gt__(self, other):
        return (self - other).sign() > 0

    def __ge__(self, other):
        return (self - other).sign() >= 0

    def to_mpf(self, dps: int = 30):
        """mpmath value correct to about `dps` digits (display only)."""
        import mpmath
        prec = int(dps * 3.33) + 20
        while True:
            b = self.ball(prec)
            if b.rad() == 0 or b.is_zero() or (abs(b.mid()) > 0 and b.rad() < abs(b.mid()) * flint.arb(2) ** (-(int(dps * 3.33) + 4))):
                with mpmath.workdps(dps + 5):
                    return mpmath.mpf(b.mid().str(dps + 5, radius=False))
            prec *= 2

    def __float__(self):
        return float(self.to_mpf(20))

    # ----------------------------------------------------------------- display
    def __repr__(self):
        return f"ExpElement({self})"

    def __str__(self):
        r = self.reduce()
        var = "t" if r.L > 1 else "e"
        num = str(r.num).replace("x", var)
        if r.den.is_one():
            body = num
        else:
            body = f"({num})/({str(r.den).replace('x', var)})"
        return body + (f" [t=e^(1/{r.L})]" if r.L > 1 else "")


def _is_monomial(p: fmpq_poly) -> bool:
    if p.is_zero():
        return False
    return sum(1 for c in p.coeffs() if c != 0) == 1


def exp_rational(score) -> ExpElement:
    """exp(score) for a rational score p/q: t^p with t = e^{1/q} (DESIGN §2)."""
    s = as_fmpq(score)
    return ExpElement.t_power(int(s.p), int(s.q))

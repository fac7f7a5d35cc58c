"""The exponential field Q(e^{1/L}) ≅ Q(t) (docs/design.md §2, "exact").

If every attention score is a rational number whose denominator divides L, then
exp(score) = t^k with t = e^{1/L} and k an integer.  e^{1/L} is transcendental
(Lindemann–Weierstrass), so evaluation t ↦ e^{1/L} is an isomorphism from the
rational-function field Q(t) onto Q(e^{1/L}); every softmax output of a model with
rational parameters on rational tokens is therefore an exact element of Q(t), and
equality is decided by polynomial arithmetic.

An :class:`ExpElement` is ``num(t)/den(t)`` with *sparse* python-flint polynomials
(``fmpq_mpoly`` in one variable) and the integer ``L``: attention outputs have few terms but
exponents that grow with the query entries, so a dense representation would not scale.  Elements with different ``L``
are lifted to the least common multiple (t_old = t_new^(L_new/L_old)).

Small arithmetic results are *reduced* (gcd removed, monic denominator, smallest L), a
canonical form; large ones (more than SMALL_TERMS terms, or exponents spanning more than
REDUCE_SPAN) and the models' fast evaluation
path stay unreduced, since a gcd of large sparse polynomials can cost seconds — and beyond
REDUCE_SPAN python-flint's gcd allocates densely (an abort of the process) or overflows (a
zero gcd), so no gcd is ever computed there: :meth:`ExpElement.reduce` then only
normalises (t-powers stripped, monic denominator, L lowered by the exponents' gcd) and the
element stays unreduced.  Equality never depends on reduction: it compares numerators over
equal denominators or cross-multiplies.  No product whose size bound exceeds MAX_TERMS
terms is handed to FLINT (it would abort the process on a failed allocation):
:class:`TooLarge` is raised instead.  Order and sign are decided by certified ball
arithmetic (arb) at t = e^{1/L}: a nonzero element is nonzero at a transcendental t,
so raising the precision always terminates.  No floating-point number is used to
decide anything here.
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd

import flint
from flint import fmpq, fmpq_mpoly_ctx, fmpq_poly, fmpz

from ..errors import ExactAttnError

__all__ = ["ExpElement", "as_fmpq", "exp_rational", "R", "TooLarge", "MAX_TERMS",
           "check_product"]

#: Q[t] as *sparse* polynomials (python-flint fmpq_mpoly in one variable): attention outputs
#: have few terms but exponents k = L·score that can reach 10^12 for large query boxes.
R = fmpq_mpoly_ctx.get(("t",))
_T = R.gens()[0]
_ONE = R.from_dict({(0,): 1})
_ZERO = R.from_dict({})

#: elements whose numerator and denominator have at most this many terms are reduced
#: (gcd) after every operation; larger ones stay unreduced (equality cross-multiplies).
SMALL_TERMS = 48
#: ... and whose exponent span is at most this: the gcd cost grows with the degree, not only
#: with the number of terms (two 4-term elements with exponents ~10^10 take ~1 s, ~10^12 hang).
REDUCE_SPAN = 1 << 16
#: the largest polynomial (in terms) handed to FLINT: about 4 GB of exponents and coefficients.
MAX_TERMS = 1 << 27


class TooLarge(ExactAttnError, MemoryError):
    """An exact computation in Q(t) would exceed MAX_TERMS terms (docs/design.md §2): refused
    before FLINT is called, since a failed allocation there aborts the process."""


def term_limit() -> int:
    """MAX_TERMS (docs/design.md §2.1, TooLarge), read when called (tests lower it)."""
    return MAX_TERMS


def check_product(*sizes, span=None, what="a product"):
    """Raise TooLarge when a product of polynomials with these numbers of terms may exceed
    MAX_TERMS terms; ``span`` (the product's exponent span) caps the count for dense ones."""
    bound = 1
    for n in sizes:
        bound *= max(1, n)
    if span is not None:
        bound = min(bound, span + 1)
    if bound > MAX_TERMS:
        raise TooLarge(f"{what} in Q(t) would have up to {bound:.3g} terms (limit "
                       f"{MAX_TERMS:.3g}); use the mp backend for such sizes")
    return bound


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


def poly(terms) -> "flint.fmpq_mpoly":
    """Sparse polynomial from {exponent: coefficient} (exponents ≥ 0)."""
    return R.from_dict({(int(k),): c for k, c in terms.items() if c != 0})


def _as_poly(p):
    if isinstance(p, fmpq_poly):
        return poly({i: c for i, c in enumerate(p.coeffs())})
    if isinstance(p, flint.fmpq_mpoly):
        return p
    return R.from_dict({(0,): as_fmpq(p)}) if as_fmpq(p) != 0 else _ZERO


def terms(p):
    """[(exponent, coefficient)] of a sparse polynomial."""
    return [(int(m[0]), c) for m, c in zip(p.monoms(), p.coeffs())]


def _low(p) -> int:
    return int(p.monomial(len(p) - 1)[0])  # terms are stored by decreasing exponent


def _high(p) -> int:
    return int(p.degrees()[0])


def _gcd(p, q):
    """The one place a polynomial gcd is computed (only below REDUCE_SPAN, see reduce)."""
    return p.gcd(q)


def _guard(p, q):
    """TooLarge before FLINT multiplies p·q when the product could exceed MAX_TERMS."""
    if len(p) * len(q) > MAX_TERMS and not p.is_zero() and not q.is_zero():
        check_product(len(p), len(q), span=_high(p) - _low(p) + _high(q) - _low(q))


def _monomial(k: int):
    return _T ** k if k > 0 else _ONE


class ExpElement:
    """An exact element num(t)/den(t) of Q(t), t = e^{1/L} (docs/design.md §2, exact backend)."""

    __slots__ = ("num", "den", "L", "_reduced")

    def __init__(self, num, den=None, L: int = 1, reduced: bool = False):
        num = _as_poly(num)
        den = _ONE if den is None else _as_poly(den)
        if den.is_zero():
            raise ZeroDivisionError("ExpElement with zero denominator")
        if not isinstance(L, int) or isinstance(L, bool) or L < 1:
            raise ValueError(f"L must be a positive integer, got {L!r}")
        self.num, self.den, self.L = num, den, L
        self._reduced = reduced
        if num.is_zero():
            self.den, self.L, self._reduced = _ONE, 1, True

    # ----------------------------------------------------------------- constructors
    @classmethod
    def from_rational(cls, q) -> "ExpElement":
        q = as_fmpq(q)
        return cls(R.from_dict({(0,): q}) if q != 0 else _ZERO, _ONE, 1, reduced=True)

    @classmethod
    def t_power(cls, k: int, L: int) -> "ExpElement":
        """t^k = e^{k/L}."""
        return cls(_monomial(k), _monomial(-k), L).reduce()

    @classmethod
    def from_laurent(cls, num_terms, den_terms, L: int) -> "ExpElement":
        """(Σ a_k t^k)/(Σ b_k t^k) from dicts exponent → rational (exponents may be < 0)."""
        low = min(min(num_terms, default=0), min(den_terms))
        num = poly({k - low: as_fmpq(a) for k, a in num_terms.items()})
        den = poly({k - low: as_fmpq(b) for k, b in den_terms.items()})
        return cls(num, den, L)._settle()

    # ----------------------------------------------------------------- normal form
    def _settle(self) -> "ExpElement":
        """After an operation: reduce small elements fully, strip t-powers from large ones."""
        if self._reduced:
            return self
        if len(self.num) <= SMALL_TERMS and len(self.den) <= SMALL_TERMS \
                and self.exponent_span() <= REDUCE_SPAN:
            return self.reduce()
        k = min(_low(self.num), _low(self.den))
        if k:
            self.num = poly({e - k: c for e, c in terms(self.num)})
            self.den = poly({e - k: c for e, c in terms(self.den)})
        return self

    def reducible(self) -> bool:
        """True when the gcd of numerator and denominator is affordable and safe to compute
        (exponent span ≤ REDUCE_SPAN)."""
        return self._reduced or self.exponent_span() <= REDUCE_SPAN

    @property
    def is_reduced(self) -> bool:
        return self._reduced

    def reduce(self) -> "ExpElement":
        """Canonical form: coprime, monic denominator, smallest L — when :meth:`reducible`;
        otherwise only normalised (no gcd: t-powers stripped, monic denominator, L lowered
        by the exponents' gcd), and the element stays unreduced (``is_reduced`` False).
        Mutates and returns self."""
        if self._reduced:
            return self
        num, den = self.num, self.den
        full = self.reducible()
        if full:
            g = _gcd(num, den)
            if g.is_zero():  # cannot happen below REDUCE_SPAN; never divide by it
                full = False
            elif not g.is_one():
                num, den = num / g, den / g  # exact division in Q[t]
        k = min(_low(num), _low(den))
        if k:
            num = poly({e - k: c for e, c in terms(num)})
            den = poly({e - k: c for e, c in terms(den)})
        lc = den.leading_coefficient()
        if lc != 1:
            num, den = num / lc, den / lc
        L = self.L
        step = 0
        for p in (num, den):
            for e, _ in terms(p):
                step = gcd(step, e)
        step = gcd(step, L) if step else L
        if step > 1:
            num = poly({e // step: c for e, c in terms(num)})
            den = poly({e // step: c for e, c in terms(den)})
            L //= step
        self.num, self.den, self.L, self._reduced = num, den, L, full
        return self

    def lift(self, L: int) -> "ExpElement":
        """The same element written over t' = e^{1/L}, L a multiple of self.L."""
        if L == self.L:
            return self
        m, r = divmod(L, self.L)
        if r:
            raise ValueError(f"cannot lift from L={self.L} to L={L}: not a multiple")
        return ExpElement(self.num.inflate([m]), self.den.inflate([m]), L)

    @staticmethod
    def common(a: "ExpElement", b: "ExpElement"):
        if a.L == b.L:
            return a, b, a.L
        L = _lcm(a.L, b.L)
        return a.lift(L), b.lift(L), L

    def terms(self):
        """([(k, a_k)], [(k, b_k)]): numerator and denominator terms (exponents of t)."""
        return terms(self.num), terms(self.den)

    def __reduce__(self):
        """Pickled (and deep-copied) as its terms: python-flint polynomials do not pickle."""
        num, den = self.terms()
        return (_from_terms, ([(k, int(c.p), int(c.q)) for k, c in num],
                              [(k, int(c.p), int(c.q)) for k, c in den], self.L, self._reduced))

    def exponent_span(self) -> int:
        """Largest exponent minus smallest over numerator and denominator (0 for constants)."""
        polys = [p for p in (self.num, self.den) if not p.is_zero()]
        return max(_high(p) for p in polys) - min(_low(p) for p in polys)

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
            return ExpElement(a.num + b.num, a.den, L)._settle()
        _guard(a.num, b.den)
        _guard(b.num, a.den)
        _guard(a.den, b.den)
        return ExpElement(a.num * b.den + b.num * a.den, a.den * b.den, L)._settle()

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
        _guard(a.num, b.num)
        _guard(a.den, b.den)
        return ExpElement(a.num * b.num, a.den * b.den, L)._settle()

    __rmul__ = __mul__

    def _normal_sign(self) -> "ExpElement":
        """Keep a reduced element's denominator monic after swapping num and den."""
        if self._reduced:
            lc = self.den.leading_coefficient()
            if lc != 1:
                self.num, self.den = self.num / lc, self.den / lc
        return self

    def inverse(self) -> "ExpElement":
        if self.num.is_zero():
            raise ZeroDivisionError("division by zero in Q(t)")
        return ExpElement(self.den, self.num, self.L, reduced=self._reduced)._normal_sign()

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
        for p in (self.num, self.den):
            if len(p) > 1:
                check_product(*([len(p)] * n), span=n * (_high(p) - _low(p)), what="a power")
        return ExpElement(self.num ** n, self.den ** n, self.L)._settle()

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
        _guard(a.num, b.den)
        _guard(b.num, a.den)
        return a.num * b.den == b.num * a.den

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        """Invariants of the element, unchanged by a common factor of num and den and by
        lifting: the orders at t = 0 and t = ∞ (as rationals k/L) and the ratios of the
        lowest and of the highest coefficients.  No gcd, so any size hashes cheaply."""
        if self.is_rational():
            return hash(self.as_rational())
        n, d = self.num, self.den
        low = Fraction(_low(n) - _low(d), self.L)
        high = Fraction(_high(n) - _high(d), self.L)
        lead = n.leading_coefficient() / d.leading_coefficient()
        trail = n.coefficient(len(n) - 1) / d.coefficient(len(d) - 1)
        return hash((low, high, str(lead), str(trail)))

    def is_rational(self) -> bool:
        """True when the element lies in Q (no t-dependence): num = c·den with
        c = lc(num)/lc(den).  No gcd, so it is cheap even for huge exponents."""
        if self.num.is_zero():
            return True
        return self.num * self.den.leading_coefficient() == \
            self.den * self.num.leading_coefficient()

    def as_rational(self) -> Fraction:
        if not self.is_rational():
            raise ValueError(f"{self} is not a rational number")
        if self.num.is_zero():
            return Fraction(0)
        c = self.num.leading_coefficient() / self.den.leading_coefficient()
        return Fraction(int(c.p), int(c.q))

    def _monomial_raw(self):
        """(c, k) with self = c·t^k over self.L (not reduced), or None; no gcd.

        With num = t^a·n', den = t^b·d' (t ∤ n', d'), self is a monomial iff n' = c·d'."""
        if self.num.is_zero():
            return None
        a, b = _low(self.num), _low(self.den)
        n = poly({e - a: c for e, c in terms(self.num)}) if a else self.num
        d = poly({e - b: c for e, c in terms(self.den)}) if b else self.den
        c = n.leading_coefficient() / d.leading_coefficient()
        if len(n) != len(d) or n != d * c:
            return None
        return Fraction(int(c.p), int(c.q)), a - b

    def monomial(self):
        """(c, k) with self = c·t^k, t = e^{1/L} for the reduced L (``self.reduce().L``),
        or None when self is not a monomial.  Decided without a gcd."""
        raw = self._monomial_raw()
        if raw is None:
            return None
        c, k = raw
        g = gcd(k, self.L)  # the reduced form of c·t^k over L is c·t^(k/g) over L/g
        return c, k // g

    # ----------------------------------------------------------------- exp / log
    def logit(self):
        """log(σ/(1−σ)) = k/L for σ = self when the odds σ/(1−σ) are exactly t^k (the
        sigmoid inversion of P1 Thm 4.1: a two-token softmax weight), None when they are not
        a power of t; ZeroDivisionError when σ = 1.  With σ = num/den the odds are
        num/(den − num): no product of polynomials and no gcd."""
        rest = self.den - self.num
        if rest.is_zero():
            raise ZeroDivisionError("σ = 1: the odds σ/(1−σ) are infinite")
        raw = ExpElement(self.num, rest, self.L)._monomial_raw()
        if raw is None or raw[0] != 1:
            return None
        return Fraction(raw[1], self.L)

    def log(self):
        """Exact log of c·t^k: k/L + log c (P2 §4.3: z_h = t^k gives the score k/L).

        Returns a Fraction when c = 1; a sympy expression k/L + log(c) when c > 0;
        raises ValueError for elements that are not positive monomials c·t^k.
        """
        mono = self._monomial_raw()
        if mono is None:
            raise ValueError(f"log is exact only for monomials c·t^k; {self} is not one")
        c, k = mono
        if c <= 0:
            raise ValueError(f"log of a non-positive element {self}")
        score = Fraction(k, self.L)
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
            # factor out t^top so that huge exponents do not overflow: Σ c e^{(k−top)/L}
            top = max(_high(self.num) if not self.num.is_zero() else 0, _high(self.den))
            def value(p):
                return sum((flint.arb(c) * (flint.arb(k - top) / self.L).exp()
                            for k, c in terms(p)), flint.arb(0))
            return value(self.num) / value(self.den)
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
        """The reduced form when it is not longer (a gcd can expand a sparse element),
        otherwise the stored one; display never changes the stored representation."""
        r = self
        if not self._reduced and len(self.num) + len(self.den) <= 4 * SMALL_TERMS \
                and self.exponent_span() <= REDUCE_SPAN:
            red = ExpElement(self.num, self.den, self.L).reduce()
            if len(red.num) + len(red.den) <= len(self.num) + len(self.den):
                r = red
        var = "t" if r.L > 1 else "e"
        num = _show(r.num, var)
        body = num if r.den.is_one() else f"({num})/({_show(r.den, var)})"
        return body + (f" [t=e^(1/{r.L})]" if r.L > 1 else "")


def _from_terms(num, den, L: int, reduced: bool) -> ExpElement:
    """The ExpElement of :meth:`ExpElement.__reduce__`'s terms (exponent, p, q)."""
    return ExpElement(poly({k: fmpq(p, q) for k, p, q in num}),
                      poly({k: fmpq(p, q) for k, p, q in den}), L, reduced=reduced)


def _show(p, var: str) -> str:
    if p.is_zero():
        return "0"
    parts = []
    for k, c in sorted(terms(p), reverse=True):
        mono = "" if k == 0 else (var if k == 1 else f"{var}^{k}")
        coef = str(c)
        if mono and c == 1:
            parts.append(mono)
        elif mono and c == -1:
            parts.append("-" + mono)
        else:
            parts.append(coef + ("*" + mono if mono else ""))
    return " + ".join(parts).replace("+ -", "- ")


def _is_monomial(p) -> bool:
    return len(p) == 1


def exp_rational(score) -> ExpElement:
    """exp(score) for a rational score p/q: t^p with t = e^{1/q} (docs/design.md §2)."""
    s = as_fmpq(score)
    return ExpElement.t_power(int(s.p), int(s.q))

"""SymPy expressions into the exponential field Q(e^{1/L}) ≅ Q(t) (docs/design.md §2, exact;
§9 foreign models).

An exact model written in SymPy — rationals, ``exp`` of rationals, ``+ − × ÷`` and integer
powers — is an element of Q(t) with t = e^{1/L}.  :func:`from_sympy` converts it by one walk
over the expression tree (each distinct subexpression once), building sparse
polynomials in t through :func:`~exactattn.arith.exp_rational`: it never expands or
simplifies in SymPy (``sympy.Poly`` of a softmax at query entries ~1000 has exponents ~10^6
and exhausts memory).  Anything else — symbols, floats, √2, log, exp of an irrational — is a
ValueError that names the offending subexpression.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sympy

from fractions import Fraction

from .expfield import ExpElement, exp_rational

__all__ = ["from_sympy"]


def from_sympy(expr: sympy.Expr) -> ExpElement:
    """The exact element of Q(e^{1/L}) that a SymPy expression denotes (docs/design.md §2).

    Accepted: sympy Integer / Rational (and Python int / Fraction), ``exp(q)`` and ``E**q``
    for rational q, sums, products, quotients and integer powers of accepted expressions,
    and ``exp(q)**r`` for rational r.  Raises ValueError (naming the part that is not of this
    form) for anything else, TypeError for something that is not a SymPy expression."""
    import sympy
    if isinstance(expr, ExpElement):
        return expr
    if isinstance(expr, (int, Fraction)) and not isinstance(expr, bool):
        return ExpElement.from_rational(Fraction(expr))
    if not isinstance(expr, sympy.Basic):
        raise TypeError(f"from_sympy: expected a SymPy expression, got {type(expr).__name__} "
                        f"{expr!r}")
    return _Walk(sympy).value(expr)


class _Walk:
    """One conversion: a memo of the subexpressions already converted."""

    def __init__(self, sympy):
        self.sp = sympy
        self.memo = {}

    def value(self, e) -> ExpElement:
        hit = self.memo.get(e)
        if hit is None:
            hit = self.memo[e] = self._convert(e)
        return hit

    def _convert(self, e) -> ExpElement:
        sp = self.sp
        if e.is_Rational:
            return ExpElement.from_rational(Fraction(int(e.p), int(e.q)))
        if e is sp.E:
            return exp_rational(1)
        if isinstance(e, sp.exp):
            return exp_rational(self._rational(e.args[0], e))
        if e.is_Add:
            return _sum([self.value(a) for a in e.args])
        if e.is_Mul:
            out = ExpElement.from_rational(1)
            for a in e.args:
                out = out * self.value(a)
            return out
        if e.is_Pow:
            base, power = e.args
            if isinstance(base, sp.exp) or base is sp.E:
                q = 1 if base is sp.E else self._rational(base.args[0], e)
                return exp_rational(q * self._rational(power, e))
            if power.is_Integer:
                b = self.value(base)
                if b.is_zero() and power < 0:
                    raise ValueError(f"from_sympy: division by zero in {e}")
                return b ** int(power)
            raise ValueError(f"from_sympy: {e} is a non-integer power; only exp(q)**r and "
                             f"integer powers stay in Q(e^(1/L))")
        raise ValueError(_refusal(sp, e))

    def _rational(self, a, where) -> Fraction:
        if a.is_Rational:
            return Fraction(int(a.p), int(a.q))
        raise ValueError(f"from_sympy: {where} has the exponent {a}, which is not a rational "
                         f"number; the exact field Q(e^(1/L)) holds exp of rationals only "
                         f"(use the mp backend for real values)")


def _refusal(sp, e) -> str:
    if e.is_Float:
        return (f"from_sympy: {e} is a SymPy Float, not exact; write sympy.Rational(p, q) "
                f"(or nsimplify) for an exact model, or use the mp backend")
    if e.free_symbols:
        return (f"from_sympy: {e} has free symbols {sorted(map(str, e.free_symbols))}; "
                f"substitute rational values first (expr.subs(...))")
    return (f"from_sympy: {e} is not rational arithmetic over exp of rationals, so it is not "
            f"in the exact field Q(e^(1/L)); use the mp backend (sympy.N) for real values")


def _sum(items):
    """Σ items in Q(t) (an empty sum is 0)."""
    out = ExpElement.from_rational(0)
    for x in items:
        out = out + x
    return out

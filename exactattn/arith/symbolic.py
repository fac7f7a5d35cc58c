"""Symbolic backend on sympy (docs/design.md §2 "symbolic"): parameters and tokens may be symbols,
outputs are sympy expressions, used to prove identities for all parameter values."""

from __future__ import annotations

from fractions import Fraction

import sympy

from ..errors import SingularSystem
from .base import Backend

__all__ = ["SymbolicBackend"]


class SymbolicBackend(Backend):
    """sympy expressions; zero test by simplification (docs/design.md §2 symbolic)."""

    name = "symbolic"
    exact = True

    def scalar(self, x, where: str = "value"):
        if isinstance(x, sympy.Basic):
            return x
        if isinstance(x, Fraction):
            return sympy.Rational(x.numerator, x.denominator)
        if isinstance(x, float):
            raise TypeError(f"{where}: {x!r} is a float; the symbolic backend needs exact values")
        try:
            return sympy.sympify(x, strict=True)
        except (sympy.SympifyError, TypeError):
            raise TypeError(f"{where}: {x!r} is not a number or sympy expression") from None

    def exp(self, score):
        return sympy.exp(score)

    def is_zero(self, a) -> bool:
        return sympy.simplify(a) == 0

    def log(self, a):
        return sympy.log(a)

    def to_mpf(self, a, dps: int = 30):
        import mpmath
        return mpmath.mpf(str(sympy.N(a, dps)))

    def solve(self, A, B):
        M = sympy.Matrix(A)
        if M.det() == 0:
            raise SingularSystem("singular symbolic system")
        return (M.LUsolve(sympy.Matrix(B))).tolist()

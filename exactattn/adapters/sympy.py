"""SymPy expressions (rationals, exp of rationals, + − × ÷) into the exact field Q(e^{1/L})
(docs/design.md §2, §9)."""

from ..oracles.adapters.sympy import from_sympy

__all__ = ["from_sympy"]

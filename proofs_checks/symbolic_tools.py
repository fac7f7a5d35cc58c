"""Small sympy helpers shared by the symbolic proofs (P1 Prop 7.1, P2 copy-count family).

Attention outputs contain exp(score) with polynomial scores.  To decide an identity exactly we
expand every exponent and split exp of a sum into a product of exps of monomials; the
remaining exps are independent atoms, so the difference is a rational function in them and
in the other symbols, and ``cancel`` decides whether it is zero.
"""

from __future__ import annotations

import sympy

from exactattn.arith import get_backend

__all__ = ["exp_atoms", "is_identically_zero", "symbolic_head", "symbolic_attention", "dot"]


def exp_atoms(expr):
    """Rewrite exp(a + b) as exp(a)·exp(b) after expanding every exponent."""
    expr = expr.replace(lambda e: isinstance(e, sympy.exp),
                        lambda e: sympy.exp(sympy.expand(e.args[0])))
    return sympy.expand_power_exp(expr)


def is_identically_zero(expr) -> bool:
    """Exact decision that `expr` is 0 for all values of its symbols (rational function in
    the exp atoms and the symbols)."""
    return sympy.cancel(sympy.together(exp_atoms(expr))) == 0


def symbolic_head(name: str, dim: int, v=None):
    """(W, v) with symbol entries W{name}_{ij}, v{name}_{i} (or the given v)."""
    W = [[sympy.Symbol(f"W{name}_{i + 1}{j + 1}") for j in range(dim)] for i in range(dim)]
    if v is None:
        v = [sympy.Symbol(f"v{name}_{i + 1}") for i in range(dim)]
    return W, list(v)


def symbolic_attention(heads, tokens):
    """F(X) on the symbolic backend: the library's own attention code (docs/design.md §2 symbolic)."""
    be = get_backend("symbolic")
    return be.attention(be.prepare_tokens(tokens), [be.prepare_head(W, v) for W, v in heads])


def dot(a, b):
    return sum((x * y for x, y in zip(a, b)), sympy.Integer(0))

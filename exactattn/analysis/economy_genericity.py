"""Genericity of the economy schedule (docs/design.md §10): the polynomials whose non-vanishing
gives the generic run — exact recovery with exactly the block structure's count — on the dual
path (H ≤ d, independent v_h).

Random entries: the bases U, X (uniform in {−box…box}) and the pair coefficients α_ag, β_ag
(uniform in {1…box}); the single-visible directions b_a are functions of the model (and of the
learner's mixing draw, conditioned on here).  Conditions, each a polynomial in those entries:

* det U, det X;
* column 1: separated poles u_iᵀ(W_a − W_b)x1 and visible heads v_a·u_i;
* one-query matching of row i ≥ 2: e_ab = u1ᵀW_a x1 + u_iᵀW_b x1 with e_ab ≠ 0,
  e_ab − e_ce ≠ 0 and e_ab + e_ce ≠ 0 for (a, b) ≠ (c, e), and C_ab = v_a·u1 + v_b·u_i ≠ 0
  (otherwise the row falls back to a matching family: correct, but more queries);
* pair families at x_j, j ≥ 2: separated poles (α b_a + β b_g)ᵀ(W_a − W_g)x_j and distinct
  residues α v_a·b_a − β v_g·b_g.

Each is non-zero as a polynomial for a canonical model with independent v_h and directions
with v_a·b_a ≠ 0 (a witness shows it), so for independent uniform entries Schwartz–Zippel gives
Pr[some condition fails] ≤ D / min|S| with D the total degree of the product of the distinct
irreducible factors.  The learner detects each failure (a named failure or a fallback block).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import sympy

from .genericity import BadPolynomial, _rat, _score, basis_variables

__all__ = ["economy_variables", "economy_bad_set_polynomials", "economy_point"]


def _dot(v, u):
    return sum((_rat(a) * b for a, b in zip(v, u)), sympy.Integer(0))


def economy_variables(dim: int, H: int):
    """U, X rows (as in :func:`.genericity.basis_variables`), the pair symbols {(a, g): (α, β)}
    and the flat variable list (U, X, then α, β pair by pair)."""
    U, X, gens = basis_variables(dim)
    coef = {}
    for a, g in itertools.combinations(range(H), 2):
        coef[(a, g)] = (sympy.Symbol(f"al{a + 1}{g + 1}"), sympy.Symbol(f"be{a + 1}{g + 1}"))
        gens = gens + list(coef[(a, g)])
    return U, X, coef, gens


def economy_point(U, X, coefficients, H):
    """The random entries of one run in the order of :func:`economy_variables`."""
    pt = [Fraction(a) for r in U for a in r] + [Fraction(a) for r in X for a in r]
    for a, g in itertools.combinations(range(H), 2):
        pt += [Fraction(x) for x in coefficients[(a, g)]]
    return pt


def economy_bad_set_polynomials(heads, dim: int, b_first):
    """The conditions of the module docstring for canonical ``heads`` [(W, v)] and the heads'
    first single-visible directions ``b_first`` (same order).  Raises ValueError when one is
    identically zero (not canonical, dependent v_h, or a direction that does not see its head)."""
    H = len(heads)
    U, X, coef, gens = economy_variables(dim, H)
    out = []

    def add(name, condition, expr):
        p = sympy.Poly(sympy.expand(expr), *gens, domain="QQ")
        if p.is_zero:
            raise ValueError(f"{name} is identically zero: the model is not canonical with "
                             f"independent v_h, or a direction is invalid")
        out.append(BadPolynomial(name, condition, p))

    add("det U", "singular basis U", sympy.Matrix(U).det(method="berkowitz"))
    add("det X", "singular basis X", sympy.Matrix(X).det(method="berkowitz"))
    x1 = X[0]
    for i in range(dim):
        for a, b in itertools.combinations(range(H), 2):
            add(f"poles I(u{i + 1},x1) heads {a + 1},{b + 1}", "colliding poles",
                _score(heads[a][0], U[i], x1) - _score(heads[b][0], U[i], x1))
        for a in range(H):
            add(f"visible head {a + 1} at u{i + 1}", "invisible head", _dot(heads[a][1], U[i]))
    for i in range(1, dim):
        if H < 2:
            break
        e = {(a, b): _score(heads[a][0], U[0], x1) + _score(heads[b][0], U[i], x1)
             for a in range(H) for b in range(H)}
        for (a, b), val in e.items():
            add(f"one-query u{i + 1}: e{a + 1}{b + 1}", "matching fallback", val)
            add(f"one-query u{i + 1}: C{a + 1}{b + 1}", "matching fallback",
                _dot(heads[a][1], U[0]) + _dot(heads[b][1], U[i]))
        for (p, q) in itertools.combinations(sorted(e), 2):
            add(f"one-query u{i + 1}: e{p} - e{q}", "matching fallback", e[p] - e[q])
            add(f"one-query u{i + 1}: e{p} + e{q}", "matching fallback", e[p] + e[q])
    for j in range(1, dim):
        for (a, g), (al, be) in coef.items():
            u = [al * _rat(x) + be * _rat(y) for x, y in zip(b_first[a], b_first[g])]
            add(f"pair ({a + 1},{g + 1}) at x{j + 1}: poles", "colliding poles",
                _score(heads[a][0], u, X[j]) - _score(heads[g][0], u, X[j]))
    for (a, g), (al, be) in coef.items():
        add(f"pair ({a + 1},{g + 1}): residues", "equal residues (redrawn before asking)",
            al * _dot(heads[a][1], b_first[a]) - be * _dot(heads[g][1], b_first[g]))
    return out

"""Genericity of the multi-head schedule: the probability-one claim of P2 as polynomials
(docs/design.md §4.3, "Genericity").

For a canonical model {(W_h, v_h)} the schedule with random bases U = (u_1…u_d),
X = (x_1…x_d) can only fail when one of finitely many polynomials in the 2d² random entries
u_{i,k}, x_{j,k} vanishes:

* ``det U``, ``det X`` — singular bases;
* pole separation ``uᵀ(W_a − W_b)x`` for every family I(u, x) and heads a < b;
* visibility ``v_a·u`` for every u the schedule uses (the residue of head a is −v_a·u);
* unique matching ``s1_a + s2_b − s1_c − s2_c`` for (a, b) ≠ (c, c), where a matching family's
  poles are the products z_c(family 1)·z_c(family 2), i.e. its scores s1_c + s2_c.

Each polynomial is nonzero for a canonical model (distinct W, nonzero v), so the bad set has
measure zero; for entries drawn uniformly from a finite set S, Schwartz–Zippel bounds the
failure probability by D/|S| where D is the total degree of the product of the distinct
irreducible factors.  This module builds the polynomials (sympy, exact over Q), finds exact
witnesses, and computes D, the bound and, for small boxes, the exact bad-set probability.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from fractions import Fraction

import sympy

__all__ = ["Family", "BadPolynomial", "basis_variables", "schedule_families",
           "bad_set_polynomials", "distinct_factors", "total_degree", "schwartz_zippel_bound",
           "point_from_bases", "evaluate", "in_bad_set", "find_witness",
           "exact_bad_probability", "IntPoly"]


@dataclass(frozen=True)
class Family:
    """Copy-count family I(u, x) of the schedule (docs/design.md §4.3): ``u`` and ``x`` are 0-based index
    tuples, (i,) for u_{i+1} and (0, i) for u_1 + u_{i+1}; ``matches`` names the two families whose
    heads a matching family pairs, or None."""

    u: tuple
    x: tuple
    matches: tuple | None = None

    @property
    def name(self) -> str:
        return f"I({_combo('u', self.u)},{_combo('x', self.x)})"


def _combo(letter, idx):
    return "+".join(f"{letter}{i + 1}" for i in idx)


@dataclass
class BadPolynomial:
    """One genericity condition: the schedule may fail where ``poly`` vanishes (P2 prob. one)."""

    name: str
    condition: str
    poly: sympy.Poly

    @property
    def degree(self) -> int:
        return int(self.poly.total_degree())


def basis_variables(dim: int):
    """Symbols u{i}_{k} (entry k of u_i) and x{j}_{k}: (U rows, X rows, flat variable list)."""
    U = [[sympy.Symbol(f"u{i}_{k}") for k in range(1, dim + 1)] for i in range(1, dim + 1)]
    X = [[sympy.Symbol(f"x{j}_{k}") for k in range(1, dim + 1)] for j in range(1, dim + 1)]
    return U, X, [s for r in U for s in r] + [s for r in X for s in r]


def schedule_families(dim: int) -> list:
    """The 2d² − 1 families of the schedule in order, read from the Schedule's own
    declarative structure (docs/design.md §4.3 steps 2 and 4)."""
    from ..learners.p2.schedule import expand_structure
    return [Family(u, x, m) for u, x, m in expand_structure(dim)]


def _vec(rows, idx):
    return [sum((rows[i][k] for i in idx), sympy.Integer(0)) for k in range(len(rows[0]))]


def _rat(q):
    q = Fraction(q)
    return sympy.Rational(q.numerator, q.denominator)


def _score(W, u, x):
    """uᵀ W x."""
    return sum((u[i] * _rat(W[i][j]) * x[j] for i in range(len(u)) for j in range(len(x))),
               sympy.Integer(0))


def bad_set_polynomials(heads, dim: int) -> list:
    """The genericity polynomials of docs/design.md §4.3 for canonical `heads` [(W, v)] with rational
    entries, in the 2d² entries of U and X (P2 probability one).  Raises ValueError for a model
    that is not canonical (then some polynomial is identically zero)."""
    U, X, gens = basis_variables(dim)
    H = len(heads)
    out = []

    def add(name, condition, expr):
        p = sympy.Poly(sympy.expand(expr), *gens, domain="QQ")
        if p.is_zero:
            raise ValueError(f"{name} is identically zero: the model is not canonical "
                             "(repeated W or a zero v); take model.canonical() first")
        out.append(BadPolynomial(name, condition, p))

    add("det U", "singular basis U", sympy.Matrix(U).det(method="berkowitz"))
    add("det X", "singular basis X", sympy.Matrix(X).det(method="berkowitz"))
    seen_u = []
    for fam in schedule_families(dim):
        u, x = _vec(U, fam.u), _vec(X, fam.x)
        for a, b in itertools.combinations(range(H), 2):
            add(f"poles {fam.name} heads {a + 1},{b + 1}", "colliding poles",
                _score(heads[a][0], u, x) - _score(heads[b][0], u, x))
        if fam.u not in seen_u:
            seen_u.append(fam.u)
            for a in range(H):
                add(f"visible head {a + 1} at {_combo('u', fam.u)}", "invisible head",
                    sum((_rat(heads[a][1][k]) * u[k] for k in range(dim)), sympy.Integer(0)))
        if fam.matches:
            (u1, x1), (u2, x2) = fam.matches
            U1, X1, U2, X2 = _vec(U, u1), _vec(X, x1), _vec(U, u2), _vec(X, x2)
            for a, b, c in itertools.product(range(H), repeat=3):
                if (a, b) == (c, c):
                    continue
                add(f"matching {fam.name} ({a + 1},{b + 1})~{c + 1}", "ambiguous matching",
                    _score(heads[a][0], U1, X1) + _score(heads[b][0], U2, X2)
                    - _score(heads[c][0], U1, X1) - _score(heads[c][0], U2, X2))
    return out


def _normal(p: sympy.Poly) -> sympy.Poly:
    """Monic in the lexicographically largest monomial (matches the checker's normalisation)."""
    terms = dict(p.terms())
    lead = terms[max(terms)]
    return p.quo_ground(lead)


def distinct_factors(polys):
    """Distinct irreducible factors over Q of all polynomials, and for each polynomial its
    factorisation (constant, [(factor index, multiplicity)]) with p = constant·Π f^m."""
    factors, keys, factorisations = [], {}, []
    for bp in polys:
        const, flist = bp.poly.factor_list()
        const = Fraction(int(const.p), int(const.q)) if hasattr(const, "p") else Fraction(const)
        parts = []
        for f, mult in flist:
            f = sympy.Poly(f, *bp.poly.gens, domain="QQ")
            g = _normal(f)
            const *= _leading(f) ** mult
            key = tuple(sorted(g.terms()))
            if key not in keys:
                keys[key] = len(factors)
                factors.append(g)
            parts.append((keys[key], int(mult)))
        factorisations.append((const, parts))
    return factors, factorisations


def _leading(p: sympy.Poly) -> Fraction:
    terms = dict(p.terms())
    c = terms[max(terms)]
    return Fraction(int(c.p), int(c.q))


def total_degree(factors) -> int:
    """D = deg Π (distinct factors): the bad set is the zero set of that product."""
    return sum(int(f.total_degree()) for f in factors)


def schwartz_zippel_bound(D: int, box: int) -> Fraction:
    """Pr[a nonzero polynomial of degree D vanishes] ≤ D/|S|, S = {−box..box} (P2 prob. one)."""
    return Fraction(D, 2 * box + 1)


def point_from_bases(U, X) -> list:
    """The random entries (u_{1,1}, …, u_{d,d}, x_{1,1}, …, x_{d,d}) of bases U, X."""
    return [Fraction(a) for r in U for a in r] + [Fraction(a) for r in X for a in r]


def evaluate(poly: sympy.Poly, point) -> Fraction:
    """Exact value of a polynomial at a rational point."""
    val = poly.eval(dict(zip(poly.gens, [_rat(q) for q in point])))
    return Fraction(int(val.p), int(val.q))


class IntPoly:
    """A polynomial with integer coefficients for fast exact zero tests (enumeration)."""

    def __init__(self, poly: sympy.Poly):
        _, prim = poly.clear_denoms()
        self.terms = [(int(c), e) for e, c in prim.terms()]

    def vanishes(self, point) -> bool:
        total = 0
        for c, e in self.terms:
            t = c
            for x, k in zip(point, e):
                if k:
                    t *= x ** k
            total += t
        return total == 0


def in_bad_set(factors, point) -> bool:
    """Whether an integer point lies in the bad set (some factor vanishes; P2 prob. one)."""
    ints = [f if isinstance(f, IntPoly) else IntPoly(f) for f in factors]
    return any(f.vanishes(point) for f in ints)


def find_witness(polys, preferred=None, box: int = 3, seed: int = 0, tries: int = 1000):
    """An exact point where every polynomial is nonzero: `preferred` (e.g. the learner's actual
    draw) if it works, else a seeded search in {−box..box} (P2 prob. one: the polynomials are
    nonzero, so a witness exists)."""
    ints = [IntPoly(p.poly if isinstance(p, BadPolynomial) else p) for p in polys]
    n = len((polys[0].poly if isinstance(polys[0], BadPolynomial) else polys[0]).gens)
    if preferred is not None:
        pt = [Fraction(x) for x in preferred]
        plist = [p.poly if isinstance(p, BadPolynomial) else p for p in polys]
        if all(evaluate(p, pt) != 0 for p in plist):
            return pt
    rng = random.Random(seed)
    for _ in range(tries):
        pt = [rng.randint(-box, box) for _ in range(n)]
        if not any(f.vanishes(pt) for f in ints):
            return [Fraction(x) for x in pt]
    raise ArithmeticError(f"no witness found in {tries} tries; widen the box")


def exact_bad_probability(factors, box: int, limit: int = 200_000) -> Fraction | None:
    """Pr[the uniform point of {−box..box}^n lies in the bad set], by enumeration; None when
    there are more than `limit` points."""
    n = len(factors[0].gens) if factors else 0
    size = (2 * box + 1) ** n
    if not factors:
        return Fraction(0)
    if size > limit:
        return None
    ints = [IntPoly(f) for f in factors]
    bad = sum(1 for pt in itertools.product(range(-box, box + 1), repeat=n)
              if any(f.vanishes(pt) for f in ints))
    return Fraction(bad, size)

"""Softmax attention in Q(t), t = e^{1/L}: Laurent polynomials with rational coefficients,
field elements (num, den, L), exact equality, and the canonical form of a model (P2)."""

from __future__ import annotations

import math
from fractions import Fraction

from .parse import integer, rat, require, vector
from .poly import padd


# A Laurent polynomial in t is a dict {exponent: Fraction}; a field element is (num, den, L)
# meaning num(t)/den(t) with t = e^{1/L}.
def lmul(p, q):
    out = {}
    for a, x in p.items():
        for b, y in q.items():
            s = out.get(a + b, 0) + x * y
            if s:
                out[a + b] = s
            else:
                out.pop(a + b)
    return out


def lift(p, m):
    """p(t) -> p(t^m): rewrite over t' = e^{1/(mL)}."""
    return {k * m: c for k, c in p.items()}


def dot(a, b):
    return sum((x * y for x, y in zip(a, b)), Fraction(0))


def _integral_vector(vec):
    """(X, e): a rational vector as X/e, X integers and e the least common denominator."""
    e = 1
    for x in vec:
        e = e * x.denominator // math.gcd(e, x.denominator)
    return [x.numerator * (e // x.denominator) for x in vec], e


def _idot(a, b):
    return sum(x * y for x, y in zip(a, b))


def attention(model, tokens):
    """F(X) = Σ_h Σ_i softmax(X W_h x_N)_i v_h·x_i as (num, den, L) in Q(t) (docs/design.md §1).
    Every dot product and the expansion run over integers: each vector is scaled by its
    least common denominator, every value v_h·x_i by the common denominator D of them all,
    and num is divided by D at the end."""
    seen = {}
    toks = [seen.get(key) or seen.setdefault(key, _integral_vector(key))
            for key in map(tuple, tokens)]
    XN, eN = toks[-1]
    parts = []
    for W, v in model:
        Wx = _integral_vector([Fraction(_idot(R, XN), e * eN)
                               for R, e in map(_integral_vector, W)])
        V = _integral_vector(v)
        scores = [Fraction(_idot(X, Wx[0]), e * Wx[1]) for X, e in toks]
        values = [Fraction(_idot(X, V[0]), e * V[1]) for X, e in toks]
        parts.append((scores, values))
    L = D = 1
    for scores, values in parts:
        for s in scores:
            L = L * s.denominator // math.gcd(L, s.denominator)
        for a in values:
            D = D * a.denominator // math.gcd(D, a.denominator)
    num, den = {}, {0: 1}
    for scores, values in parts:
        n_h, d_h = {}, {}
        for s, a in zip(scores, values):
            k = int(s * L)
            d_h[k] = d_h.get(k, 0) + 1
            n_h[k] = n_h.get(k, 0) + int(a * D)
        num = padd(lmul(num, d_h), lmul({k: c for k, c in n_h.items() if c}, den))
        den = lmul(den, d_h)
    return {k: Fraction(c, D) for k, c in num.items()}, {k: Fraction(c) for k, c in den.items()}, L


def element(data, where):
    """A Q(t) element (num, den, L) from its certificate form, written over the smallest L."""
    require(isinstance(data, dict) and set(data) == {"L", "num", "den"},
            f"{where}: an element is {{L, num, den}}")
    L = integer(data["L"], f"{where}.L")
    require(L >= 1, f"{where}: L must be ≥ 1")
    out = []
    for part in ("num", "den"):
        terms = data[part]
        require(isinstance(terms, list), f"{where}.{part}: expected [[exponent, coeff], ...]")
        p = {}
        for k, term in enumerate(terms):
            require(isinstance(term, list) and len(term) == 2, f"{where}.{part}[{k}]: [k, c]")
            e = integer(term[0], f"{where}.{part}[{k}]")
            require(e not in p, f"{where}.{part}: repeated exponent {e}")
            p[e] = rat(term[1], f"{where}.{part}[{k}]")
        out.append({e: c for e, c in p.items() if c})
    require(out[1], f"{where}: zero denominator")
    g = L
    for e in list(out[0]) + list(out[1]):
        g = math.gcd(g, e)
    require(g == 1, f"{where}: not written over the smallest L (gcd of L and the exponents is {g})")
    return out[0], out[1], L


def _integral(p):
    """(P, e): a Laurent polynomial with rational coefficients as P/e, P with integer
    coefficients and e the least common denominator."""
    e = 1
    for c in p.values():
        e = e * c.denominator // math.gcd(e, c.denominator)
    return {k: int(c * e) for k, c in p.items()}, e


def same_element(a, b) -> bool:
    """Exact equality in Q(t): lift to a common L and cross-multiply, n1·d2 = n2·d1, over
    the integers (each polynomial times its least common denominator, the products times
    the other side's)."""
    (n1, d1, L1), (n2, d2, L2) = a, b
    L = L1 * L2 // math.gcd(L1, L2)
    (N1, e1), (D1, f1) = _integral(lift(n1, L // L1)), _integral(lift(d1, L // L1))
    (N2, e2), (D2, f2) = _integral(lift(n2, L // L2)), _integral(lift(d2, L // L2))
    left, right = e2 * f1, e1 * f2
    return {k: c * left for k, c in lmul(N1, D2).items()} == \
        {k: c * right for k, c in lmul(N2, D1).items()}


def tokens_of(q, dim, where):
    require(isinstance(q, list) and q, f"{where}: a query is a non-empty list of tokens")
    toks = [vector(t, f"{where}[{n}]") for n, t in enumerate(q)]
    require(all(len(t) == dim for t in toks), f"{where}: tokens must have {dim} entries")
    return toks


# ============================================================ canonical form (P2)
def canonical(model):
    """Group heads with equal W, sum v, drop zero sums: a set of (W, v) pairs (docs/design.md §1)."""
    groups = {}
    for W, v in model:
        groups[W] = tuple(a + b for a, b in zip(groups[W], v)) if W in groups else v
    return frozenset((W, v) for W, v in groups.items() if any(groups[W]))

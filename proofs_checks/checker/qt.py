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


def attention(model, tokens):
    """F(X) = Σ_h Σ_i softmax(X W_h x_N)_i v_h·x_i as (num, den, L) in Q(t) (docs/design.md §1)."""
    xN = tokens[-1]
    parts = []
    for W, v in model:
        Wx = [dot(row, xN) for row in W]
        scores = [dot(tok, Wx) for tok in tokens]
        values = [dot(tok, v) for tok in tokens]
        parts.append((scores, values))
    L = 1
    for scores, _ in parts:
        for s in scores:
            L = L * s.denominator // math.gcd(L, s.denominator)
    num, den = {}, {0: Fraction(1)}
    for scores, values in parts:
        n_h, d_h = {}, {}
        for s, a in zip(scores, values):
            k = int(s * L)
            d_h = padd(d_h, {k: Fraction(1)})
            if a:
                n_h = padd(n_h, {k: a})
        num = padd(lmul(num, d_h), lmul(n_h, den))
        den = lmul(den, d_h)
    return num, den, L


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


def same_element(a, b) -> bool:
    """Exact equality in Q(t): lift to a common L and cross-multiply."""
    (n1, d1, L1), (n2, d2, L2) = a, b
    L = L1 * L2 // math.gcd(L1, L2)
    n1, d1, n2, d2 = lift(n1, L // L1), lift(d1, L // L1), lift(n2, L // L2), lift(d2, L // L2)
    return lmul(n1, d2) == lmul(n2, d1)


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

"""Softmax attention in Q(t), t = e^{1/L}: Laurent polynomials with rational coefficients,
field elements (num, den, L), exact equality, and the canonical form of a model (P2).

Cost bounds: a query, a model or an element comes from the certificate, and multiplying
Laurent polynomials is quadratic (a product of H of them, exponential in H).  Before any
product, the work it will take is computed from the exponent sets alone and refused above
:data:`MAX_TERM_WORK` term products; common denominators are refused above
:data:`MAX_DENOMINATOR_BITS` bits of distinct denominators.  Every genuine certificate stays
far below both (docs/evidence.md §7)."""

from __future__ import annotations

import math
from fractions import Fraction

from .parse import heads, integer, multiset, rat, require, vector
from .poly import padd

#: the most term products one exact evaluation or comparison in Q(t) may cost
MAX_TERM_WORK = 1 << 20
#: the most bits of distinct denominators one common denominator may gather
MAX_DENOMINATOR_BITS = 1 << 16


def common_denominator(values, what) -> int:
    """The least common multiple of the denominators of `values`, refused (before any lcm)
    when their distinct denominators total more than MAX_DENOMINATOR_BITS bits."""
    dens = {q.denominator for q in values}
    bits = sum(q.bit_length() for q in dens)
    require(bits <= MAX_DENOMINATOR_BITS, f"{what}: the denominators total {bits} bits (at most "
            f"{MAX_DENOMINATOR_BITS}): too large to evaluate exactly, refused")
    L = 1
    for q in dens:
        L = L * q // math.gcd(L, q)
    return L


def product_work(supports, what, factor=1) -> int:
    """Refuse, before expanding it, a product of Laurent polynomials with these exponent sets
    whose term products (Σ_h 2·|support so far|·|support h|, times `factor`) exceed
    MAX_TERM_WORK; the supports are combined on exponents alone, each step checked first."""
    support, work = {0}, 0
    for E in supports:
        work += 2 * factor * len(support) * len(E)
        require(work <= MAX_TERM_WORK, f"{what}: exact evaluation would cost over "
                f"{MAX_TERM_WORK} term products (a query or model too large), refused")
        support = {a + b for a in support for b in E}
    return work


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


def attention(model, tokens, slopes=None):
    """F(X) = Σ_h Σ_i softmax(X W_h x_N)_i v_h·x_i as (num, den, L) in Q(t) (docs/design.md §1).
    Every dot product and the expansion run over integers: each vector is scaled by its
    least common denominator, every value v_h·x_i by the common denominator D of them all,
    and num is divided by D at the end.  ``slopes`` (docs/decoders.md, ALiBi): head h's
    score of token i is lowered by slopes[h]·(N − i)."""
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
        if slopes is not None:
            n = len(toks) - 1
            scores = [s - slopes[len(parts)] * (n - i) for i, s in enumerate(scores)]
        values = [Fraction(_idot(X, V[0]), e * V[1]) for X, e in toks]
        parts.append((scores, values))
    L = common_denominator([s for scores, _ in parts for s in scores], "attention")
    D = common_denominator([a for _, values in parts for a in values], "attention")
    product_work([{int(s * L) for s in scores} for scores, _ in parts], "attention")
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
    e = common_denominator(p.values(), "an element of Q(t)")
    return {k: int(c * e) for k, c in p.items()}, e


def _proportional(n1, d1, n2, d2) -> bool:
    """(n1, d1) = λ·(n2, d2) for one rational λ ≠ 0 (same L): equal as elements, decided in
    linear time (a sufficient test; the cross-multiplication decides the rest)."""
    if n1.keys() != n2.keys() or d1.keys() != d2.keys() or not d1:
        return False
    k = next(iter(d1))
    if not d2[k]:                       # a zero kept as a term: leave it to the general test
        return False
    lam = d1[k] / d2[k]
    return all(d1[e] == lam * c for e, c in d2.items()) and \
        all(n1[e] == lam * c for e, c in n2.items())


def same_element(a, b) -> bool:
    """Exact equality in Q(t): lift to a common L; equal at once when the two are proportional
    term by term (linear); otherwise cross-multiply, n1·d2 = n2·d1, over the integers (each
    polynomial times its least common denominator, the products times the other side's) —
    refused beforehand when that would cost more than MAX_TERM_WORK term products."""
    (n1, d1, L1), (n2, d2, L2) = a, b
    L = L1 * L2 // math.gcd(L1, L2)
    if L1 == L2 and _proportional(n1, d1, n2, d2):
        return True
    work = len(n1) * len(d2) + len(n2) * len(d1)
    require(work <= MAX_TERM_WORK, f"comparing elements of Q(t) with {len(n1)}/{len(d1)} and "
            f"{len(n2)}/{len(d2)} terms would cost {work} term products (at most "
            f"{MAX_TERM_WORK}), refused")
    (N1, e1), (D1, f1) = _integral(lift(n1, L // L1)), _integral(lift(d1, L // L1))
    (N2, e2), (D2, f2) = _integral(lift(n2, L // L2)), _integral(lift(d2, L // L2))
    left, right = e2 * f1, e1 * f2
    return {k: c * left for k, c in lmul(N1, D2).items()} == \
        {k: c * right for k, c in lmul(N2, D1).items()}


def tokens_of(q, dim, where):
    require(isinstance(q, list) and q, f"{where}: a query is a non-empty list of tokens")
    toks = [vector(t, f"{where}[{n}]", dim) for n, t in enumerate(q)]
    return toks


# ============================================================ canonical form (P2)
def canonical(model):
    """Group heads with equal W, sum v, drop zero sums: a set of (W, v) pairs (docs/design.md §1)."""
    groups = {}
    for W, v in model:
        groups[W] = tuple(a + b for a, b in zip(groups[W], v)) if W in groups else v
    return frozenset((W, v) for W, v in groups.items() if any(groups[W]))


def canonical_form(model) -> tuple:
    """The one form in which the checker compares, counts and matches models (P2 canonical
    heads, docs/design.md §1): the canonical heads as a sorted tuple.  Every rule that counts
    a model's heads, compares two models or ties a model of one record to another's is stated
    on this form, so a head split in two (same W, v in halves), a zero head added or heads
    reordered change nothing."""
    return multiset(canonical(model))


def is_canonical(model) -> bool:
    """The model is its own canonical form: distinct W, no zero v (what a learner returns)."""
    return canonical_form(model) == multiset(model)


def read_canonical(data, dim, where, max_heads=64) -> tuple:
    """The canonical form (:func:`canonical_form`) of a model read from certificate text."""
    return canonical_form(heads(data, dim, where, max_heads))

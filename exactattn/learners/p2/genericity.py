"""Genericity of a P2 run at the recovered model (P2, probability one; docs/design.md §4.3,
§8): the conditions under which the P2 learner, fed the recovered model M's answers on the
schedule, returns M — det U, det X ≠ 0, separated poles, visible heads, unique matching —
evaluated exactly at the run's draw (:func:`draw_violations`), the degree bound D of their
product for every model with ≤ H₀ heads (:func:`degree_bound`, for Schwartz–Zippel), and the
exact P2 statement of ``result.proves`` (:func:`statement`).
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb, lcm

from flint import fmpq, fmpq_mat

from ...arith.expfield import as_fmpq

__all__ = ["draw_violations", "degree_bound", "statement"]


def _mat(rows) -> "fmpq_mat":
    return fmpq_mat(len(rows), len(rows[0]), [as_fmpq(x) for r in rows for x in r])


def _visible(v, u) -> bool:
    """v·u ≠ 0, exactly."""
    return sum((as_fmpq(a) * as_fmpq(b) for a, b in zip(v, u)), fmpq(0)) != 0


def _score_matrices(heads, U, X):
    """S_h = U W_h Xᵀ (S_h[i][j] = u_iᵀ W_h x_j) for every head, exactly (python-flint
    fmpq_mat), as integers over one common denominator (the conditions below are equalities
    of sums of these entries, unchanged by a common scale): every score a family of the
    schedule reads is a sum of these entries, since its u and x are u_i or u₁ + u_i and x_j
    or x₁ + x_j (docs/design.md §4.3)."""
    d = len(U)
    Um, Xt = _mat(U), _mat(X).transpose()
    parts = [(Um * _mat(W) * Xt).numer_denom() for W, _ in heads]
    D = lcm(*(int(den) for _, den in parts)) if parts else 1
    return [[[int(num[i, j]) * (D // int(den)) for j in range(d)] for i in range(d)]
            for num, den in parts]


def _family_scores(S, fam):
    """[u ᵀW_h x for each head] (times the common denominator) for the family's
    u = Σ_{i ∈ u_key} u_i, x = Σ_{j ∈ x_key} x_j."""
    return [sum(Sh[i][j] for i in fam.u_key for j in fam.x_key) for Sh in S]


def _matches(fam, by_key):
    """The two families a matching family pairs (docs/design.md §4.3): I(u₁+u_i, x) pairs
    I(u₁, x) and I(u_i, x); I(u, x₁+x_j) pairs I(u, x₁) and I(u, x_j); None otherwise."""
    if len(fam.u_key) == 2:
        return by_key[((fam.u_key[0],), fam.x_key)], by_key[((fam.u_key[1],), fam.x_key)]
    if len(fam.x_key) == 2:
        return by_key[(fam.u_key, (fam.x_key[0],))], by_key[(fam.u_key, (fam.x_key[1],))]
    return None


def _ambiguous(s1, s2):
    """The (a, b, c) with (a, b) ≠ (c, c) and s1_a + s2_b = s1_c + s2_c: each head c's pole
    in the matching family must be hit by its own pair only (docs/design.md §4.3)."""
    H = len(s1)
    pairs = {}
    for a in range(H):
        for b in range(H):
            pairs.setdefault(s1[a] + s2[b], []).append((a, b))
    return [(a, b, c) for c in range(H) for a, b in pairs[s1[c] + s2[c]] if (a, b) != (c, c)]


def draw_violations(heads, schedule) -> list:
    """Every genericity condition of docs/design.md §4.3 that fails at the schedule's bases for
    the canonical rational ``heads`` ((W, v) pairs), exactly: [] when the draw is generic."""
    H = len(heads)
    out = []
    for name, M in (("U", schedule.U), ("X", schedule.X)):
        if _mat(M).det() == 0:
            out.append(f"det {name} = 0")
    S = _score_matrices(heads, schedule.U, schedule.X)
    by_key = {(f.u_key, f.x_key): f for f in schedule.families}
    seen_u = set()
    for fam in schedule.families:
        s = _family_scores(S, fam)
        for a, b in itertools.combinations(range(H), 2):
            if s[a] == s[b]:
                out.append(f"poles of heads {a + 1}, {b + 1} collide in {_name(fam)}")
        if fam.u_key not in seen_u:
            seen_u.add(fam.u_key)
            for a, (_, v) in enumerate(heads):
                if not _visible(v, fam.u):
                    out.append(f"head {a + 1} is invisible at {_combo('u', fam.u_key)}")
        pair = _matches(fam, by_key)
        if pair:
            s1, s2 = _family_scores(S, pair[0]), _family_scores(S, pair[1])
            for a, b, c in _ambiguous(s1, s2):
                out.append(f"matching in {_name(fam)} is not unique ({a + 1},{b + 1})~{c + 1}")
    return out


def _combo(letter, key) -> str:
    return "+".join(f"{letter}{i + 1}" for i in key)


def _name(fam) -> str:
    return f"I({_combo('u', fam.u_key)},{_combo('x', fam.x_key)})"


def degree_bound(d: int, H0: int) -> int:
    """An upper bound of the total degree D of the product of the genericity polynomials of
    any model with ≤ H₀ canonical heads on the P2 schedule (docs/design.md §4.3): det U, det X
    (degree d each); per family (2d² − 1 of them) C(H₀, 2) separations of degree 2; per u used
    (2d − 1) H₀ visibilities of degree 1; per matching family (d² − 1) H₀(H₀² − 1) matching
    polynomials of degree 2.  The product of the distinct irreducible factors divides it, so
    Schwartz–Zippel holds with this D."""
    families, us, matching = 2 * d * d - 1, 2 * d - 1, d * d - 1
    return 2 * d + 2 * comb(H0, 2) * families + H0 * us + 2 * H0 * (H0 * H0 - 1) * matching


def statement(result, schedule, box) -> str:
    """The exact P2 ``proves`` text of a run (module docstring)."""
    d, H0, N = result.dim, schedule.H0, result.queries
    heads = [(h.W, h.v) for h in result.heads]
    bad = draw_violations(heads, schedule)
    head = (f"the recovered model reproduces all {N} schedule answers exactly in Q(t)")
    if bad:
        shown = "; ".join(bad[:3]) + (" …" if len(bad) > 3 else "")
        return (f"{head}, but the draw (U, X) is not generic for it ({shown}): the learner "
                f"maps these answers to it, and other models with ≤ {H0} heads may give "
                f"the same answers")
    D, size = degree_bound(d, H0), 2 * box + 1
    bound = Fraction(D, size)
    prob = (f"for a fixed oracle chosen independently of the draw, that has probability "
            f"≤ D/|S| = {D}/{size} ≈ {float(bound):.2g} over a draw uniform on "
            f"S = {{−{box}…{box}}} (D ≤ {D}, Schwartz–Zippel), 0 for continuous draws"
            if bound < 1 else
            f"the Schwartz–Zippel bound D/|S| = {D}/{size} ≥ 1 says nothing at this box")
    generic = (f"{head} and the draw (U, X) is generic for it (det U ≠ 0, det X ≠ 0, "
               f"separated poles, visible heads, unique matching)")
    if len(heads) == H0:
        return (f"every model with ≤ {H0} heads (real parameters) that gives these {N} answers "
                f"is this model (Lemma B of docs/evidence.md) — no probability involved: "
                f"{generic}, so {H0} separated visible poles in every family fix the heads and "
                f"score additivity ties the matchings")
    return (f"{generic}: the learner maps these answers to this model, so any oracle with "
            f"≤ {H0} heads giving the same answers is this model or has this draw in its own "
            f"bad set (Theorem 1 of docs/evidence.md, a proof sketch, assumed); with fewer "
            f"heads than H0 a twin can give the same answers at every draw (claim "
            f"P2-nonunique), and certify (Theorem A) decides whether the oracle is this "
            f"model; {prob}")

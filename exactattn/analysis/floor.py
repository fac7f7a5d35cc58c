"""The dimension floor, certified (docs/design.md §10, "The floor"): the Jacobian of a schedule's
answers with respect to the H(d² + d) canonical parameters, exactly, through modular images.

**Floor (argued, not certified; docs/beyond.md).**  The canonical parameters (W_h, v_h) of H
heads form an open subset of R^{H(d²+d)} (up to the finite permutation of heads).  Hypotheses:
the learner is exactly correct on an open set of models, each query depends continuously on
the earlier answers, and each answer is one real number.  Such a learner defines an injective
continuous map from that open set into R^N (N answers); by invariance of domain
N ≥ H(d² + d).  The argument does not cover the exact oracle of this library, whose one answer
in Q(t) carries several rationals.  What this module certifies is the rank statement below: a
schedule's answers reach full rank H(d² + d) *by* answer k.

**Jacobian.**  For a query X = (x_1 … x_N) and head h, with scores s_i = x_iᵀW_h x_N,
α = softmax(s), f_i = v_h·x_i, f̄ = Σ α_i f_i and x̄ = Σ α_i x_i:

    ∂F/∂v_h[k]   = x̄[k],
    ∂F/∂W_h[p][q] = x_N[q] · (Σ_i α_i f_i x_i[p] − f̄ · x̄[p])      (a softmax covariance).

At a rational model on rational queries every score is k/L for an integer k, so
α_i = t^{k_i} / Σ_j t^{k_j} with t = e^{1/L}: every entry lies in Q(t).

**Certificate (why a non-zero minor modulo p proves full rank over Q(t)).**  Let D_{X,h}(t) =
Σ_j t^{k_j − min k} (one per query and head), a non-zero polynomial.  Every Jacobian entry lies
in the ring R = Z_(p)[t][1/Π D_{X,h}] (Z_(p): rationals whose denominators are prime to p).
Reduction φ: R → F_p, t ↦ τ, is a ring homomorphism as soon as every rational denominator is
prime to p and every φ(D_{X,h}) ≠ 0 — both are checked.  A ring map commutes with
determinants: φ(det J_S) = det φ(J_S) for any square submatrix J_S.  So det φ(J_S) ≠ 0 implies
det J_S ≠ 0 in R ⊂ Q(t), and since e^{1/L} is transcendental (Lindemann), evaluation at
t = e^{1/L} is injective on Q(t): the real Jacobian at this model has a non-zero P × P minor,
P = H(d² + d), i.e. full rank.  The answers then determine the parameters locally (the answer
map is an immersion at this model, for these queries).  A zero image proves nothing (an unlucky
τ), so the learner-side search retries with another (p, τ).

**Low rank.**  Heads with rank W_h = r lie on a manifold of dimension r(2d − r) + d per head
(W = Q Kᵀ with Q, K of size d × r, modulo the r² of GL(r)), so H(r(2d − r) + d) is the floor
there.  The Jacobian with respect to (Q_h, K_h, v_h) is J·T (chain rule: ∂F/∂Q[a][c] =
Σ_b ∂F/∂W[a][b] K[b][c] = cov[a]·(Kᵀx_N)[c], ∂F/∂K[b][c] = x_N[b]·(Qᵀcov)[c]); its rank is at
most that dimension, and a non-zero minor of that size (rows: the greedy pivot rows; columns:
the greedy pivot columns, independent on those rows since every row is a combination of
them) certifies equality: the answers determine the rank-r model locally.

**Rank curve.**  The greedy pivot rows r_1 < r_2 < … (the first row independent of the rows
before it, and so on) come from one row reduction of Jᵀ; rank(first k answers) = #{r_j ≤ k}.
The certified part is the lower bound: the pivot rows are the minor's rows, so any of them are
independent and rank(first k) ≥ #{r_j ≤ k}; the upper bound rank ≤ min(k, P) is trivial.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from math import lcm

from flint import fmpz, nmod_mat

__all__ = ["dimension_floor", "parameter_names", "score_denominator", "jacobian_mod_p",
           "RankProfile", "rank_profile", "certify_full_rank", "random_prime_63",
           "UnluckyReduction", "rank_factors", "factored_row", "certify_low_rank"]


class UnluckyReduction(ArithmeticError):
    """A denominator vanishes modulo p at t ↦ τ: choose another (p, τ)."""


def dimension_floor(d: int, H: int) -> int:
    """H(d² + d): the dimension of the canonical parameters of H heads (docs/design.md §10)."""
    return H * (d * d + d)


def parameter_names(d: int, H: int) -> list:
    """Column order of the Jacobian: head by head, W_h row-major, then v_h."""
    out = []
    for h in range(1, H + 1):
        out += [f"W{h}[{p}][{q}]" for p in range(d) for q in range(d)]
        out += [f"v{h}[{k}]" for k in range(d)]
    return out


def _heads(model):
    return [(tuple(tuple(Fraction(x) for x in r) for r in h.W), tuple(Fraction(x) for x in h.v))
            for h in model.heads]


def _scores(W, toks):
    """x_iᵀ W x_N for every token (W x_N formed once)."""
    xn = toks[-1]
    Wx = [sum((r[q] * xn[q] for q in range(len(xn)) if xn[q]), Fraction(0)) for r in W]
    return [sum((a * b for a, b in zip(t, Wx) if a), Fraction(0)) for t in toks]


def score_denominator(model, queries) -> int:
    """The least L with L·(x_iᵀ W_h x_N) an integer for every token, head and query."""
    L = 1
    for W, _ in _heads(model):
        for q in queries:
            for s in _scores(W, [[Fraction(x) for x in t] for t in q]):
                L = lcm(L, s.denominator)
    return L


def _mod(q: Fraction, p: int) -> int:
    if q.denominator % p == 0:
        raise UnluckyReduction(f"a rational denominator is divisible by p = {p}")
    return q.numerator * pow(q.denominator, -1, p) % p


def jacobian_row(heads, tokens, p: int, tau: int, L: int) -> list:
    """One row of φ(J): the derivatives of F(tokens) modulo p at t = e^{1/L} ↦ τ."""
    toks = [[Fraction(x) for x in t] for t in tokens]
    d = len(toks[-1])
    xm = [[_mod(x, p) for x in t] for t in toks]
    row = []
    for W, v in heads:
        ks = []
        for s in _scores(W, toks):
            if (s * L).denominator != 1:
                raise ValueError(f"L = {L} does not clear the score {s}")
            ks.append(int(s * L))
        low = min(ks)
        e = [pow(tau, k - low, p) for k in ks]
        D = sum(e) % p
        if D == 0:
            raise UnluckyReduction("a softmax denominator vanishes modulo p")
        inv = pow(D, -1, p)
        alpha = [x * inv % p for x in e]
        vm = [_mod(x, p) for x in v]
        f = [sum(a * b for a, b in zip(vm, t)) % p for t in xm]
        fbar = sum(a * b for a, b in zip(alpha, f)) % p
        xbar = [sum(alpha[i] * xm[i][k] for i in range(len(toks))) % p for k in range(d)]
        cov = [(sum(alpha[i] * f[i] * xm[i][k] for i in range(len(toks))) - fbar * xbar[k]) % p
               for k in range(d)]
        xN = xm[-1]
        row += [cov[a] * xN[b] % p for a in range(d) for b in range(d)]
        row += xbar
    return row


def jacobian_mod_p(model, queries, p: int, tau: int, L: int | None = None) -> list:
    """φ(J) for the answers to ``queries`` at ``model`` (rows = queries, columns =
    :func:`parameter_names`), docs/design.md §10.  Raises UnluckyReduction when (p, τ) is
    unlucky for these data."""
    L = score_denominator(model, queries) if L is None else L
    heads = _heads(model)
    return [jacobian_row(heads, q, p, tau, L) for q in queries]


@dataclass
class RankProfile:
    """Rank of φ(J): the greedy pivot rows and the curve rank(first k answers), k = 1 … N."""

    rank: int
    pivot_rows: list
    curve: list
    columns: int

    def rank_of_first(self, k: int) -> int:
        return self.curve[k - 1] if k else 0

    def first_full(self):
        """The least k with rank(first k) = number of columns, or None."""
        return self.first_reaching(self.columns)

    def first_reaching(self, rank: int):
        """The least k with rank(first k) = ``rank``, or None."""
        for k, r in enumerate(self.curve, 1):
            if r == rank:
                return k
        return None


def rank_profile(rows, p: int) -> RankProfile:
    """Greedy pivot rows of a matrix over F_p from one row reduction of its transpose (the pivot
    columns of rref(Jᵀ) are the lexicographically first independent rows of J)."""
    n = len(rows)
    m = len(rows[0]) if rows else 0
    if not n or not m:
        return RankProfile(0, [], [0] * n, m)
    T = nmod_mat(m, n, [rows[i][j] for j in range(m) for i in range(n)], p)
    R, rank = T.rref()
    pivots = []
    for r in range(rank):
        for c in range(n):
            if int(R[r, c]) != 0:
                pivots.append(c)
                break
    curve, k = [], 0
    piv = set(pivots)
    for i in range(n):
        k += i in piv
        curve.append(k)
    return RankProfile(rank, pivots, curve, m)


def random_prime_63(rng: random.Random) -> int:
    """A random prime in [2^62, 2^63) (fits flint's word-size modular matrices)."""
    while True:
        c = rng.randrange(1 << 62, 1 << 63) | 1
        if fmpz(c).is_prime():
            return c


def certify_full_rank(model, queries, rng: random.Random, tries: int = 4):
    """Find (p, τ) with φ(J) of full column rank: returns (p, τ, L, RankProfile, minor_rows).
    When the rank is below the number of columns at every try, returns the last profile (the
    caller reports the deficit: no certificate of full rank exists then, or τ was unlucky)."""
    p, tau, L, _, prof = _search(model, queries, rng, tries)
    return p, tau, L, prof, prof.pivot_rows


def _search(model, queries, rng: random.Random, tries: int, target=None, transform=None):
    """(p, τ, L, rows, RankProfile) of the first of ``tries`` random (p, τ) at which φ(J) —
    each row passed through ``transform(row, p)`` when given — reaches rank ``target``
    (default: its number of columns), else of the last lucky one; UnluckyReduction when
    every (p, τ) was unlucky."""
    L = score_denominator(model, queries)
    last = None
    for _ in range(tries):
        p = random_prime_63(rng)
        tau = rng.randrange(2, p - 1)
        try:
            rows = jacobian_mod_p(model, queries, p, tau, L)
            if transform is not None:
                rows = [transform(x, p) for x in rows]
        except UnluckyReduction:
            continue
        prof = rank_profile(rows, p)
        last = (p, tau, L, rows, prof)
        if prof.rank == (prof.columns if target is None else target):
            return last
    if last is None:
        raise UnluckyReduction(f"every (p, τ) of {tries} tries was unlucky")
    return last


# ---------------------------------------------------------------------- low rank
def rank_factors(W, r: int):
    """(Q, K) with W = Q Kᵀ exactly, Q = the first r independent columns of W (d × r) and K
    their coefficients (d × r); ValueError when rank W ≠ r."""
    d = len(W)
    A = [[Fraction(x) for x in row] for row in W]
    # reduced row echelon form of W: its pivot columns are W's first independent columns
    R, pivots, row = [list(x) for x in A], [], 0
    for c in range(d):
        piv = next((i for i in range(row, d) if R[i][c] != 0), None)
        if piv is None:
            continue
        R[row], R[piv] = R[piv], R[row]
        inv = 1 / R[row][c]
        R[row] = [x * inv for x in R[row]]
        for i in range(d):
            if i != row and R[i][c] != 0:
                f = R[i][c]
                R[i] = [a - f * b for a, b in zip(R[i], R[row])]
        pivots.append(c)
        row += 1
    if len(pivots) != r:
        raise ValueError(f"rank W = {len(pivots)}, not {r}")
    Q = [[A[a][c] for c in pivots] for a in range(d)]
    K = [[R[c][b] for c in range(r)] for b in range(d)]      # Kᵀ = the first r rows of rref
    return Q, K


def factored_row(row, factors, d: int, p: int) -> list:
    """A row of φ(J) over (W_h, v_h) turned into one over (Q_h, K_h, v_h) by the chain rule
    (module docstring, "Low rank"); columns head by head: Q row-major, K row-major, v."""
    out, width = [], d * d + d
    for h, (Q, K) in enumerate(factors):
        G = row[h * width: h * width + d * d]
        v = row[h * width + d * d: (h + 1) * width]
        r = len(Q[0])
        Qm = [[_mod(x, p) for x in q] for q in Q]
        Km = [[_mod(x, p) for x in k] for k in K]
        out += [sum(G[a * d + b] * Km[b][c] for b in range(d)) % p
                for a in range(d) for c in range(r)]
        out += [sum(G[a * d + b] * Qm[a][c] for a in range(d)) % p
                for b in range(d) for c in range(r)]
        out += v
    return out


def certify_low_rank(model, r: int, queries, rng: random.Random, tries: int = 4):
    """Find (p, τ) with rank φ(J·T) = H(r(2d − r) + d) for heads of rank r: returns
    (p, τ, L, factors, RankProfile of the rows, minor rows, minor columns); the last attempt
    when the rank stays below (module docstring, "Low rank")."""
    d = len(model.heads[0].W)
    factors = [rank_factors(h.W, r) for h in model.heads]
    p, tau, L, rows, prof = _search(model, queries, rng, tries,
                                    target=len(model.heads) * (r * (2 * d - r) + d),
                                    transform=lambda x, q: factored_row(x, factors, d, q))
    cols = rank_profile([list(c) for c in zip(*rows)], p).pivot_rows
    return p, tau, L, factors, prof, prof.pivot_rows, cols

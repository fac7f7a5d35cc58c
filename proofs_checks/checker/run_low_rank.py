"""``run`` records of the exact low-rank skeleton learner (docs/design.md §4.2; measurements by
P1 Thm 4.1's sigmoid inversion): [e_i] for v, then [(a_k + b_l), b_l] for the entries of
M = AᵀWB in the order the learner asks them, re-derived here from A, B and the recovered W
(with the rank revealed, the learner's decisions — where the pivot vanishes, the spot
checks — are replayed on that M; a single head's answer to [(a+b), b] determines aᵀWb when
a·v ≠ 0, so these are the measured entries)."""

from __future__ import annotations

from fractions import Fraction

from .linalg import det, rank, solve_unique
from .parse import boolean, integer, matrix, require
from .run_single_head import unit

NAME = "low-rank"
PARAMS = ("rank", "rank_given", "rank_bound")
VECTORS = ("A", "B")
PROVES = ("any single head of rank ≤ r giving these answers is this head (M = C U⁻¹ R on the "
          "measured rows and columns); a head of higher rank has this draw in its own bad set")


def read(dim, params, vectors):
    r = integer(params["rank"], "run.params.rank", 0, dim)
    given = boolean(params["rank_given"], "run.params.rank_given")
    bound = params["rank_bound"]
    if bound is not None:
        integer(bound, "run.params.rank_bound", 0, dim)
        require(not given, "run.params: rank_bound applies when the rank is revealed")
    A = matrix(vectors["A"], "run.vectors.A", dim, dim)
    B = matrix(vectors["B"], "run.vectors.B", dim, dim)
    return {"dim": dim, "rank": r, "given": given, "bound": bound, "A": A, "B": B,
            "max_heads": 1}


class _Access:
    """M_kl = a_kᵀ W b_l computed on demand; records the order of first access."""

    def __init__(self, A, W, B):
        self.A, self.W, self.B = A, W, B
        self.order, self.M = [], {}

    def __call__(self, k, j):
        if (k, j) not in self.M:
            a, b = self.A[k], self.B[j]
            self.M[(k, j)] = sum((a[p] * self.W[p][q] * b[q] for p in range(len(a))
                                  for q in range(len(b))), Fraction(0))
            self.order.append((k, j))
        return self.M[(k, j)]


def _schur(M, r, i, j):
    """M_ij − M[i, :r] U⁻¹ M[:r, j], accessing entries in the learner's order."""
    if r == 0:
        return M(i, j)
    U = [[M(a, b) for b in range(r)] for a in range(r)]
    col = [M(a, j) for a in range(r)]
    y = solve_unique(U, col)
    require(y is not None, "run: a leading block of AᵀWB is singular")
    mij = M(i, j)
    return mij - sum((M(i, a) * y[a] for a in range(r)), Fraction(0))


def _replay(run, W):
    """The learner's accesses and decisions on M = AᵀWB; returns (order, revealed rank, spot)."""
    d, r = run["dim"], run["rank"]
    M = _Access(run["A"], W, run["B"])
    if not run["given"]:
        cap = d if run["bound"] is None else min(d, run["bound"])
        found = d
        for k in range(d):
            if _schur(M, k, k, k) == 0:
                found = k
                break
            require(k + 1 <= cap, "run: the rank exceeds rank_bound (the learner would refuse)")
        require(found == r, f"run: the learner reveals rank {found} on this M, not {r}")
    if r:
        for k in range(d):
            for j in range(r):
                M(k, j)
        for k in range(r):
            for j in range(d):
                M(k, j)
    spots = 0
    if not run["given"] and r < d:
        for i in range(1, min(r, d - 1 - r) + 1):
            for a, b in ((r, r + i), (r + i, r)):
                require(_schur(M, r, a, b) == 0, "run: a spot check does not vanish")
                spots += 1
    return M, spots


def schedule(run, recovered):
    d = run["dim"]
    require(len(recovered) == 1, "run: a low-rank run recovers exactly one head")
    W, v = recovered[0]
    M, _ = _replay(run, W)
    out = [[unit(d, i)] for i in range(d)]
    for k, j in M.order:
        a, b = run["A"][k], run["B"][j]
        out.append([[p + q for p, q in zip(a, b)], list(b)])
    return out


def describe(run):
    return f"rank {run['rank']} {'given' if run['given'] else 'revealed'}"


def genericity(run, recovered):
    W, v = recovered[0]
    A, B, r = run["A"], run["B"], run["rank"]
    require(any(v), "run: v = 0")
    require(det(A) != 0 and det(B) != 0, "run: a basis A or B is singular")
    require(all(sum((p * q for p, q in zip(a, v)), Fraction(0)) != 0 for a in A),
            "run: some a_k·v = 0 (that measurement would not see W)")
    require(rank(W) == r, f"run: the recovered W has rank {rank(W)}, not {r}")
    M, spots = _replay(run, W)
    Mfull = [[M(k, j) for j in range(run["dim"])] for k in range(run["dim"])]
    sizes = [r] if run["given"] else list(range(1, r + 1))
    for k in sizes:
        if k:
            require(det([row[:k] for row in Mfull[:k]]) != 0,
                    f"run: the leading {k}×{k} minor of AᵀWB vanishes")
    out = ["v ≠ 0", "det A ≠ 0", "det B ≠ 0", "a_k·v ≠ 0", f"rank W = {r}"]
    if r:
        out.append("leading r×r minor of AᵀWB ≠ 0" if run["given"]
                   else "leading minors 1…r of AᵀWB ≠ 0")
    if spots:
        out.append(f"{spots} spot checks vanish")
    return out

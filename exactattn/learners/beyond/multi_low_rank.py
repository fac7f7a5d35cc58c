"""Multi-head low rank (docs/design.md §10, beyond P2; the multi-head form of the single-head
skeleton of docs/design.md §4.2): heads with rank W_h ≤ r learned exactly from
O(H·r·d) value queries.

Y_h = W_h Xᵀ (column j = W_h x_j) has rank r_h = rank W_h for a basis X.  The economy
schedule measures every column of Y_h; here only its skeleton is measured:

1. column 1 as in the economy schedule (P2 families I(u_i, x1), one-query matching): v_h and
   y_h1 = W_h x1;
2. full columns j = 2 … r (the economy's single-visible probes and pair families), so that
   C_h = [y_h1 … y_hr] spans the column space of Y_h; when the rank is not given, full columns
   are measured until one adds no rank to any head (one extra full column reveals r_h —
   for a generic X the first k columns of Y_h have rank min(k, r_h));
3. every later column only through its first r_h single-visible functionals F_h (the rows
   b with v_g·b = 0, g ≠ h): s = F_h y_hj, one query each, and y_hj = C_h (F_h C_h)⁻¹ s;
4. W_h = Y_h X⁻ᵀ; the model must reproduce every transcript answer exactly in Q(t).

Count (rank r given, H ≥ 2, every r_h = r ≤ d − H + 1): 1 + 2Hd + (d − 1) +
(r − 1)(Hd + H(H−1)/2) + (d − r)·H·r — O(Hrd) beside the rank-r floor H(r(2d − r) + d).
A given rank is a promise: entries outside the skeleton are not measured, so a true rank
above r is not seen (leave ``rank`` out to have it revealed).  F_h C_h singular is a named
failure (SingularBasis): a non-generic X for this model.
"""

from __future__ import annotations

from fractions import Fraction

from flint import fmpq, fmpq_mat

from ...errors import SingularBasis, SingularSystem
from .economy import (_Asker, _residue_columns, ask_dual_column, assemble, certify_run,
                      column_one, dual_directions, dual_rows, head_order, recover_dual_columns)
from .economy_structure import economy_count
from ..result import LearnResult

__all__ = ["run_multi_low_rank", "low_rank_count", "low_rank_floor"]


def low_rank_floor(d: int, H: int, r: int) -> int:
    """H(r(2d − r) + d): the dimension of H heads with rank-r W (docs/design.md §4.2, §10)."""
    return H * (r * (2 * d - r) + d)


def low_rank_count(d: int, H: int, r: int, revealed: bool = False) -> int:
    """Queries of the skeleton schedule for H ≥ 2 heads of rank r ≤ d − H + 1 (module docstring);
    revealing the rank measures one more full column when r < d."""
    full = H * d + H * (H - 1) // 2
    n = 1 + 2 * H * d + (d - 1) + (r - 1) * full + (d - r) * H * r
    return n + (full - H * r if revealed and r < d else 0)


def _mat(cols):
    d, k = len(cols[0]), len(cols)
    return fmpq_mat(d, k, [fmpq(Fraction(cols[j][i]).numerator, Fraction(cols[j][i]).denominator)
                           for i in range(d) for j in range(k)])


def _independent(cols):
    """The indices of a maximal independent prefix-greedy subset of the columns."""
    if not cols:
        return []
    R, rank = _mat(cols).rref()
    out = []
    for r in range(rank):
        for c in range(len(cols)):
            if R[r, c] != 0:
                out.append(c)
                break
    return out


def run_multi_low_rank(orc, U, X, H0, known, be, rng, certify, progress, box, rank=None):
    """One run of the multi-head skeleton schedule (module docstring); ``rank`` None reveals it."""
    if be.name != "exact":
        raise ValueError("the multi-head low-rank schedule runs on the exact backend")
    d = len(U)
    first = len(orc.transcript)
    ask = _Asker(orc, progress, economy_count(d, H0, H0))
    one = column_one(ask, U, X, H0, known, be, rng)
    H, vs = one["H_star"], one["vs"]
    Y = [[one["y1"][a]] for a in range(H)]
    coefficients = {}
    dirs = dual_directions(vs, rng, box, coefficients) if H else None
    recorded = None
    ranks = [1] * H
    j = 1
    take = None
    notes = []
    if H and d > 1 and dirs is None:
        # no single-head-visible probes (H > d or dependent v_h): the economy's residue path
        notes.append("H > d or dependent v_h: no skeleton saving, every column measured on "
                     "the economy's residue path")
        S = _residue_columns(ask, U, X, one["col"], vs, H, rng)
        for a in range(H):
            Y[a] += be.solve_columns(U, [[S[(a, i, jj)] for i in range(d)]
                                         for jj in range(1, d)])
        ranks = [len(_independent(Y[a])) for a in range(H)]
    elif H and d > 1:
        singles, pairs = dirs
        recorded = {"singles": singles, "pairs": pairs, "coefficients": coefficients}
        rows = {a: dual_rows(singles, pairs, a) for a in range(H)}

        def full_column(j):
            col = ask_dual_column(ask, X[j], singles, pairs)
            sc = recover_dual_columns({j: col}, vs, singles, pairs, rng)
            for a in range(H):
                Y[a] += be.solve_columns(rows[a], [sc[(a, j)]])

        if rank is None:        # grow until a full column adds no rank to any head
            while j < d:
                full_column(j)
                j += 1
                new = [len(_independent(Y[a])) for a in range(H)]
                grew = new != ranks
                ranks = new
                if not grew:
                    break
        else:
            while j < min(rank, d):
                full_column(j)
                j += 1
            ranks = [len(_independent(Y[a])) for a in range(H)]
        if j < d:
            take = _skeleton_columns(ask, be, X, Y, vs, singles, pairs, ranks, j, rng)
    model = assemble(be, X, Y, vs)
    transcript, cert = certify_run(orc, first, model, be, progress, certify)
    r = max(ranks, default=0)
    result = LearnResult(
        algorithm="multi-head-low-rank", dim=d, backend=be.name,
        heads=[(h.W, h.v) for h in model.heads], queries=len(ask.answers),
        max_length=max((len(q) for q, _ in transcript), default=0) if transcript else 0,
        expected_queries=low_rank_count(d, H, r, rank is None) if H >= 2 and
        all(x == r for x in ranks) and r <= d - H + 1 and not _fallbacks(ask) and not notes
        else None,
        transcript=transcript or [], certificate=cert,
        extra={"U": U, "X": X, "H0": H0, "H_star": H, "ranks": ranks, "rank_given": rank,
               "blocks": ask.per_block(), "matching": one["methods"],
               "floor": low_rank_floor(d, H, r), "directions": recorded,
               "path": "residue" if notes else "dual",
               "head_order": head_order(one, Y, X, be, model), "full_columns": j,
               "skeleton_take": take}, notes=notes)
    return result


def _fallbacks(ask):
    return "matching-family" in ask.per_block()


def _skeleton_columns(ask, be, X, Y, vs, singles, pairs, ranks, start, rng):
    """Columns start … d−1 through r_h single-visible functionals per head (step 3); returns
    the number of functionals taken per head (None: every column measured in full)."""
    d, H = len(X), len(vs)
    if any(ranks[a] > len(singles[a]) for a in range(H)):
        take = None   # more functionals than single-visible directions: full columns
    else:
        take = ranks
    basis = [[Y[a][c] for c in _independent(Y[a])] for a in range(H)]
    cols = {j: ask_dual_column(ask, X[j], singles, pairs, take, "skeleton-row")
            for j in range(start, d)}
    scores = recover_dual_columns(cols, vs, singles, pairs, rng)
    for a in range(H):
        if take is None:
            rows = dual_rows(singles, pairs, a)
            Y[a] += be.solve_columns(rows, [scores[(a, j)] for j in range(start, d)])
            continue
        if ranks[a] == 0:                              # W_h x_j = 0 for every j
            Y[a] += [[Fraction(0)] * d for _ in range(start, d)]
            continue
        C = basis[a]                                   # r_h columns spanning Y_h
        F = singles[a][: ranks[a]]
        FC = [[sum((Fraction(f[i]) * c[i] for i in range(d)), Fraction(0)) for c in C] for f in F]
        try:
            gs = be.solve_columns(FC, [scores[(a, j)] for j in range(start, d)])
        except SingularSystem as e:
            raise SingularBasis(f"the skeleton block F_h C_h of head {a + 1} is singular: the "
                                f"basis X is not generic for this model", head=a + 1) from e
        for g in gs:
            Y[a].append([sum((C[k][i] * g[k] for k in range(len(C))), Fraction(0))
                         for i in range(d)])
    return take

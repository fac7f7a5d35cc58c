"""``run`` records of the multi-head low-rank schedule (beyond the papers; docs/design.md §10,
the multi-head form of the skeleton of §4.2): the schedule rebuilt from U, X, H₀ = H, the
recorded directions and the recovered model, and its genericity conditions at that model.

Column 1 and the matching across u are the economy schedule's (:mod:`.run_economy`).  Then,
with Y_h = [W_h x_1 … W_h x_d] read off the recovered model:

* residue path (H > d or dependent v_h): every column, as in the economy schedule;
* dual path: full columns j = 2, 3, … (single-visible probes and pair families) — with the
  rank given, j < min(r, d); revealed, until a full column adds no rank to any head's
  measured columns (the learner's rule, replayed on Y_h); the later columns only through the
  first r_h single-visible directions of each head (``skeleton-row``), r_h the rank of its
  measured columns — or in full when some r_h exceeds the number of single-visible
  directions.
"""

from __future__ import annotations

from .linalg import det, rank
from .parse import integer, require
from .run_economy import (Queries, column_one, column_one_conditions, directions, dual_column,
                          dual_conditions, dual_path, internal, no_directions, read_common,
                          residue_columns, residue_conditions)
from .run_multi_head import ASSUMED, dot

NAME = "multi-head-low-rank"
PARAMS = ("H0", "head_order", "rank")
VECTORS = ("U", "X", "singles", "coefficients")
PROVES = ("the learner maps these answers to this model; any oracle with ≤ H0 heads giving "
          "the same answers (each head of rank ≤ r when the rank r is given: the entries "
          "outside the skeleton are a promise) is this model or has this draw (U, X, the "
          "directions and, when a pair family is asked, α, β) in its own bad set" + ASSUMED)


def read(dim, params, vectors):
    run = read_common(dim, params, vectors)
    r = params["rank"]
    run["rank"] = None if r is None else integer(r, "run.params.rank", 1, dim)
    return run


def heads_within_rank(run, model, what):
    """Every W_h of `model` has rank ≤ r (exact, over Q) when the rank r is given."""
    r = run["rank"]
    if r is None:
        return
    for h, (W, _) in enumerate(model):
        rk = rank(W)                    # once: the message is built before require runs
        require(rk <= r, f"run: head {h + 1} of the {what} has rank {rk} > the given rank {r}")


def _mv(W, x):
    return [dot(row, x) for row in W]


def pivots(cols):
    """The prefix-greedy independent columns (those not in the span of the earlier ones)."""
    out, k = [], 0
    for c in range(len(cols)):
        n = rank(cols[: c + 1])
        if n > k:
            out.append(c)
            k = n
    return out


def schedule(run, recovered):
    d, H0, U, X, r = run["dim"], run["H0"], run["U"], run["X"], run["rank"]
    heads = internal(run, recovered)
    H = len(heads)
    q = Queries()
    run["methods"] = column_one(q, U, X, H0, True, heads)
    Y = [[_mv(W, X[0])] for W, _ in heads]
    run.update(path=None, full=1, take=None, heads=heads, Y=Y, q=q)
    if not (H and d > 1 and dual_path(heads, d)):
        no_directions(run)
        if H and d > 1:
            residue_columns(q, U, X, heads)
            run["path"] = "residue"
        return q.queries
    singles, pairs = directions(run, heads)
    run["path"], run["dual"] = "dual", (singles, pairs)

    def full(j):
        dual_column(q, X[j], singles, pairs)
        for a, (W, _) in enumerate(heads):
            Y[a].append(_mv(W, X[j]))

    ranks, j = [1] * H, 1
    if r is None:              # grow until a full column adds no rank to any head
        while j < d:
            full(j)
            j += 1
            new = [rank(Y[a]) for a in range(H)]
            grew, ranks = new != ranks, new
            if not grew:
                break
    else:
        while j < min(r, d):
            full(j)
            j += 1
        ranks = [rank(Y[a]) for a in range(H)]
    run.update(full=j, ranks=ranks)
    if j < d:
        take = None if any(ranks[a] > len(singles[a]) for a in range(H)) else ranks
        run["take"] = take
        for jj in range(j, d):
            dual_column(q, X[jj], singles, pairs, take, "skeleton-row")
    return q.queries


def genericity(run, recovered):
    """The schedule's genericity conditions at the recovered model, then its heads within the
    given rank."""
    out = _conditions(run)
    heads_within_rank(run, run["heads"], "recovered model")
    return out


def _conditions(run):
    heads, d = run["heads"], run["dim"]
    out = column_one_conditions(run, heads)
    if run["path"] == "residue":
        return out + residue_conditions(run, heads)
    if run["path"] is None:
        return out
    j, take = run["full"], run["take"]
    pair_columns = list(range(1, j)) + (list(range(j, d)) if take is None else [])
    out += dual_conditions(run, heads, pair_columns)
    if take is None or j >= d:        # every column measured in full
        return out
    ranks, singles = run["ranks"], run["dual"][0]
    for a, (W, _) in enumerate(heads):
        rW = rank(W)
        require(ranks[a] == rW, f"run: head {a + 1} has rank {rW} but its {j} measured columns "
                f"have rank {ranks[a]} (they do not span its column space)")
        if ranks[a]:
            C = [run["Y"][a][c] for c in pivots(run["Y"][a])]
            F = singles[a][: ranks[a]]
            require(det([[dot(f, c) for c in C] for f in F]) != 0,
                    f"run: the skeleton block F_h C_h of head {a + 1} is singular")
    return out + [f"ranks {ranks} = rank W_h spanned by {j} measured columns",
                  f"F_h C_h invertible for {d - j} skeleton columns"]


def true_model(run, model):
    """The true model's heads are within the given rank too (the promise the claim needs)."""
    heads_within_rank(run, model, "true model")


def describe(run):
    r = run["rank"]
    unused = (run["path"] == "dual" and run["full"] <= 1 and run["take"] is not None and
              run["full"] < run["dim"])
    return (f"H0={run['H0']} rank {'revealed' if r is None else f'{r} given'} "
            f"({run['path'] or 'column 1 only'} path"
            f"{'; no pair family asked: α, β recorded, unused' if unused else ''})")

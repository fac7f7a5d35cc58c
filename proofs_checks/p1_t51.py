"""P1-T5.1: low-rank heads (P1 Thm 5.1; docs/design.md §4.2).

* Exact skeleton (ours): with the rank r given, exactly d + r(2d − r) value queries of length
  ≤ 2 — d for v plus r(2d − r) bilinear measurements, the dimension of the rank-r matrices —
  and W recovered exactly; with the rank unknown it is revealed with at most 2r + 1 extra
  queries.  Certified: the certificate carries the transcript for the checker to replay.
* P1 Thm 5.1 baseline: m = 5·r·d random rank-one projections and nuclear-norm minimisation
  (float, cvxpy) recover W to relative error < 1e-6 on a seeded Gaussian instance.  Not
  certified (a solver's answer); run only when cvxpy is importable, otherwise noted as
  skipped.
"""

from __future__ import annotations

from exactattn.oracles.oracle import Oracle

from .certificates import new_certificate
from .common import count_check, recovery_check, same_canonical
from .registry import Claim, Verdict, register

__all__ = ["CLAIM", "skeleton_count", "revealing_bound", "cs_measurements"]


def skeleton_count(d: int, r: int) -> int:
    """d + r(2d − r) value queries with the rank given (docs/design.md §4.2)."""
    return d + r * (2 * d - r)


def revealing_bound(r: int) -> int:
    """At most 2r + 1 extra queries to reveal an unknown rank (docs/design.md §4.2)."""
    return 2 * r + 1


def cs_measurements(d: int, r: int) -> int:
    """Rank-one projections given to the P1 Thm 5.1 baseline: 5·r·d (a constant times r·d)."""
    return 5 * r * d


def _exact_skeleton(verdict, cert, d, r, seed):
    from exactattn.learners.low_rank import learn_low_rank, random_low_rank_head
    head = random_low_rank_head(d, r, seed=seed)
    oracle = Oracle(head)
    res = learn_low_rank(oracle, d, rank=r, seed=seed)
    q, ml = oracle.queries, oracle.max_length
    verdict.expect(q == skeleton_count(d, r) and ml == 2 and same_canonical([head], res.heads),
                   f"d={d} r={r}: {q} queries = d+r(2d−r), length {ml}, W exact",
                   f"d={d} r={r}: {q} queries (published {skeleton_count(d, r)}), length {ml}, "
                   f"recovered {'exactly' if same_canonical([head], res.heads) else 'WRONG'}")
    cert["checks"].append(recovery_check(d, [head], res.heads, oracle.transcript))
    cert["checks"].append(count_check("low-rank-skeleton", {"d": d, "r": r}, q, ml,
                                      run=len(cert["checks"]) - 1))
    oracle2 = Oracle(head)
    res2 = learn_low_rank(oracle2, d, seed=seed)
    extra = oracle2.queries - skeleton_count(d, r)
    verdict.expect(0 <= extra <= revealing_bound(r) and same_canonical([head], res2.heads),
                   f"d={d} r={r} unknown: rank revealed with {extra} ≤ 2r+1 extra queries",
                   f"d={d} r={r} unknown: {extra} extra queries (bound {revealing_bound(r)})")
    cert["checks"].append(recovery_check(d, [head], res2.heads, oracle2.transcript))
    cert["checks"].append(count_check("low-rank-revealing", {"d": d, "r": r},
                                      oracle2.queries, oracle2.max_length,
                                      run=len(cert["checks"]) - 1))


def _cs_baseline(verdict, d, r, seed):
    try:
        from exactattn.learners.cs_baseline import learn_low_rank_cs, require_cvxpy
        require_cvxpy()
    except ImportError:
        verdict.notes.append("compressed-sensing baseline skipped: cvxpy is not installed "
                             "(pip install exactattn[cvx])")
        return
    import numpy as np
    from exactattn.learners.low_rank import random_low_rank_head
    head = random_low_rank_head(d, r, seed=seed, kind="real")
    m = cs_measurements(d, r)
    res = learn_low_rank_cs(Oracle(head, backend="float"), d, m, seed=seed)
    W = np.array(res.heads[0].W, dtype=float)
    Wt = np.array([[float(x) for x in row] for row in head.W])
    err = float(np.linalg.norm(W - Wt) / np.linalg.norm(Wt))
    verdict.expect(err < 1e-6, f"P1 baseline d={d} r={r}: m=5rd={m} projections, nuclear norm, "
                   f"relative error {err:.1e} (float, not certified)",
                   f"P1 baseline d={d} r={r}: relative error {err:.1e} ≥ 1e-6 with m={m}")


def run(params) -> Verdict:
    """Exact skeleton counts and recovery on the grid; the P1 baseline if cvxpy is present."""
    verdict = Verdict(True)
    cert = new_certificate(CLAIM, params)
    for d in params["d"]:
        for r in params["r"]:
            if r <= d:
                _exact_skeleton(verdict, cert, d, r, params["seed"] + d + r)
    for r in params["cs_r"]:
        _cs_baseline(verdict, params["cs_d"], r, params["seed"])
    verdict.certificate = cert
    return verdict


CLAIM = register(Claim(
    id="P1-T5.1",
    reference="P1 Thm 5.1",
    statement="low rank: exact skeleton with d+r(2d−r) queries (rank revealed with ≤ 2r+1 more); "
              "P1's nuclear-norm baseline from 5rd projections",
    sizes={"quick": {"d": [3, 4], "r": [1, 2], "cs_d": 6, "cs_r": [2], "seed": 0},
           "full": {"d": [4, 8], "r": [1, 2, 3], "cs_d": 8, "cs_r": [1, 2], "seed": 0}},
    run=run,
    needs=("exactattn.learners.low_rank",)))

"""P2-count: the multi-head learner asks exactly 4Hd² − 2H + 1 value queries of length ≤ 2H + 1,
with H₀ in place of H when only a bound H₀ ≥ H is known (P2, abstract; docs/design.md §4.3).

1. Measured: for every (d, H) of the grid, with H known and with the bound H₀ = H + 1, a seeded
   random rational model is learned through a counting oracle; the oracle's count and
   maximum length must equal 4H₀d² − 2H₀ + 1 and 2H₀ + 1, and the recovered heads must equal
   the canonical form exactly.
2. Symbolic: the count polynomial of degree ≤ 2 in d and in H₀ is fitted to the measurements
   by exact interpolation (sympy, rational arithmetic); it must be unique and equal
   4H₀d² − 2H₀ + 1 identically (likewise degree ≤ 1 fits of the length give 2H₀ + 1).  The
   schedule's own sum 1 + 2H₀[(2d − 1) + 2d(d − 1)] is expanded to the same polynomial.

Caveat, stated in the output: a fit over a finite grid is a consistency check of the
measurements with the formula; the identity for all d, H₀ is the schedule sum of step 2.
"""

from __future__ import annotations

import sympy

from exactattn.errors import LearningFailure
from exactattn.models.attention import random_multi_head
from exactattn.oracles.oracle import Oracle

from .certificates import new_certificate, rational
from .common import count_check, recovery_check, same_canonical
from .registry import Claim, Verdict, register

__all__ = ["CLAIM", "published_count", "published_max_length", "schedule_sum", "fit_polynomial",
           "measure"]

d_sym, H0_sym = sympy.symbols("d H0", integer=True, positive=True)


def published_count(d, H0):
    """P2: 4H₀d² − 2H₀ + 1 value queries (H₀ = H when H is known)."""
    return 4 * H0 * d * d - 2 * H0 + 1


def published_max_length(H0):
    """P2: queries of length at most 2H₀ + 1."""
    return 2 * H0 + 1


def schedule_sum():
    """The schedule of docs/design.md §4.3 counted family by family: one query F([x₁]), then 2H₀ per
    family over (2d − 1) + 2d(d − 1) families."""
    return 1 + 2 * H0_sym * ((2 * d_sym - 1) + 2 * d_sym * (d_sym - 1))


def fit_polynomial(points, degrees):
    """The unique polynomial Σ a_ij d^i H₀^j (i ≤ degrees[0], j ≤ degrees[1]) through the points
    (d, H₀, value), by exact linear algebra; None when the points do not determine it or are
    inconsistent with every such polynomial."""
    monos = [(i, j) for i in range(degrees[0] + 1) for j in range(degrees[1] + 1)]
    A = sympy.Matrix([[sympy.Integer(d) ** i * sympy.Integer(H0) ** j for i, j in monos]
                      for d, H0, _ in points])
    b = sympy.Matrix([value for _, _, value in points])
    if A.rank() < len(monos):
        return None, None
    sol = (A.T * A).LUsolve(A.T * b)
    if A * sol != b:
        return None, None
    coeffs = {m: c for m, c in zip(monos, sol) if c != 0}
    return sum((c * d_sym ** i * H0_sym ** j for (i, j), c in coeffs.items()), sympy.Integer(0)), coeffs


def measure(d, H, H0, seed, tries=5):
    """Learn a random (d, H) model told H (H0 == H) or the bound H0; returns the oracle, the
    model, the result and the number of seeds skipped after a detected failure."""
    from exactattn.learners.multi_head import learn_multi_head
    model = random_multi_head(d, H, seed=seed)
    for skipped in range(tries):
        oracle = Oracle(model)
        try:
            res = learn_multi_head(oracle, d, heads=H if H0 == H else None,
                                   heads_bound=H0 if H0 != H else None, seed=seed + 1000 * skipped)
            return oracle, model, res, skipped
        except LearningFailure:
            continue
    raise LearningFailure(f"d={d} H={H} H0={H0}: {tries} draws failed")


def run(params) -> Verdict:
    """Measure the grid, compare with P2's formulas, fit the count polynomial exactly."""
    verdict = Verdict(True)
    cert = new_certificate(CLAIM, params)
    points, lengths, skipped_total, bad = [], [], 0, []
    largest = max((d, H) for d in params["d"] for H in params["H"])
    for d in params["d"]:
        for H in params["H"]:
            for H0 in (H, H + 1):
                oracle, model, res, skipped = measure(d, H, H0, seed=100 * d + 10 * H)
                skipped_total += skipped
                q, ml = oracle.queries, oracle.max_length
                ok = (q == published_count(d, H0) and ml == published_max_length(H0)
                      and res.queries == q and same_canonical(model, res.heads))
                if not ok:
                    bad.append(f"d={d} H={H} H0={H0}: {q} queries (published "
                               f"{published_count(d, H0)}), length {ml} (published "
                               f"{published_max_length(H0)}), canonical heads "
                               f"{'exact' if same_canonical(model, res.heads) else 'WRONG'}")
                points.append((d, H0, q))
                lengths.append((d, H0, ml))
                keep = (d, H) == largest and H0 == H
                cert["checks"].append(recovery_check(d, model, res.heads,
                                                     oracle.transcript if keep else None))
                cert["checks"].append(count_check("multi-head", {"d": d, "H0": H0}, q, ml,
                                                  run=len(cert["checks"]) - 1 if keep else None))
    grid = f"d={','.join(map(str, params['d']))} × H={','.join(map(str, params['H']))}"
    more = f"; … and {len(bad) - 3} more" if len(bad) > 3 else ""
    verdict.expect(not bad, f"{len(points)} runs on {grid} (H known and H0=H+1): queries = "
                   f"4H0d²−2H0+1, length = 2H0+1, canonical heads exact",
                   "; ".join(bad[:3]) + more)
    if skipped_total:
        verdict.notes.append(f"{skipped_total} random draws failed detectably and were redrawn")
    _fit(verdict, cert, points, lengths)
    verdict.certificate = cert
    return verdict


def _fit(verdict, cert, points, lengths):
    fit, coeffs = fit_polynomial(points, (2, 2))
    target = published_count(d_sym, H0_sym)
    verdict.expect(fit is not None and sympy.expand(fit - target) == 0,
                   f"exact fit of the measured counts (degree ≤ 2 in d and H0): {fit} "
                   f"≡ 4·H0·d² − 2·H0 + 1",
                   f"the fitted count polynomial {fit} differs from the published {target}")
    lfit, lcoeffs = fit_polynomial(lengths, (1, 1))
    verdict.expect(lfit is not None and sympy.expand(lfit - published_max_length(H0_sym)) == 0,
                   f"exact fit of the measured lengths (degree ≤ 1): {lfit} ≡ 2·H0 + 1",
                   f"the fitted length polynomial {lfit} differs from the published "
                   f"{published_max_length(H0_sym)}")
    verdict.expect(sympy.expand(schedule_sum() - target) == 0,
                   "schedule sum 1 + 2H0[(2d−1) + 2d(d−1)] ≡ 4H0d² − 2H0 + 1 for all d, H0",
                   f"the schedule sum {sympy.expand(schedule_sum())} differs from the published {target}")
    for quantity, pts, cf, deg in (("queries", points, coeffs, [2, 2]),
                                   ("max_length", lengths, lcoeffs, [1, 1])):
        cert["checks"].append({"kind": "count-fit", "formula": "multi-head", "quantity": quantity,
                               "variables": ["d", "H0"], "degrees": deg,
                               "points": [list(p) for p in sorted(set(pts))],
                               "coefficients": [[i, j, rational(c)] for (i, j), c in
                                                sorted((cf or {}).items())]})
    cert["symbolic"].append({"count_fit_equals_formula": fit is not None and
                             sympy.expand(fit - target) == 0,
                             "schedule_sum_equals_formula": sympy.expand(schedule_sum() - target) == 0})


CLAIM = register(Claim(
    id="P2-count",
    reference="P2 query count",
    statement="multi-head learning uses exactly 4Hd²−2H+1 queries of length ≤ 2H+1 "
              "(H0 for a bound H0 ≥ H)",
    sizes={"quick": {"d": [1, 2, 3], "H": [1, 2]}, "full": {"d": [1, 2, 3, 4, 5], "H": [1, 2, 3, 4]}},
    run=run,
    needs=("exactattn.learners.multi_head",)))

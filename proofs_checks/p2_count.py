"""P2-count: the multi-head learner asks exactly 4Hd² − 2H + 1 value queries of length ≤ 2H + 1,
with H₀ in place of H when only a bound H₀ ≥ H is known (P2, abstract; docs/design.md §4.3).

1. Proved (for all d ≥ 1, H₀ ≥ 1): the count and the maximum length are read off the
   Schedule's own declarative structure (:data:`exactattn.learners.p2.schedule.STRUCTURE`, from
   which the learner's queries are generated) as polynomials in d and H₀ — initial queries,
   then per block (families) × Π(loop lengths) × 2H₀ samples of length m + 1 — and must equal
   4H₀d² − 2H₀ + 1 and 2H₀ + 1 identically (sympy; the checker re-derives both with its own
   polynomial arithmetic from the recorded structure, which must be the one it rebuilds every
   multi-head transcript from).
2. Measured (sampled, a second and independent check): for every (d, H) of the grid, with H
   known and with the bound H₀ = H + 1, a seeded random rational model is learned through a
   counting oracle; the oracle's count and maximum length must equal the formulas, the
   recovered heads the canonical form exactly, and every run is recorded as an
   identifiability certificate (its whole transcript).  The count polynomial of degree ≤ 2 in
   d and H₀ is also fitted to the measurements by exact interpolation.
"""

from __future__ import annotations

import sympy

from exactattn.errors import LearningFailure
from exactattn.models.attention import random_multi_head
from exactattn.oracles.oracle import Oracle

from .certificates import new_certificate, rational
from .common import count_check, run_record, same_canonical
from .registry import Claim, Verdict, register

__all__ = ["CLAIM", "published_count", "published_max_length", "derived_count", "fit_polynomial",
           "measure"]

d_sym, H0_sym = sympy.symbols("d H0", integer=True, positive=True)


def published_count(d, H0):
    """P2: 4H₀d² − 2H₀ + 1 value queries (H₀ = H when H is known)."""
    return 4 * H0 * d * d - 2 * H0 + 1


def published_max_length(H0):
    """P2: queries of length at most 2H₀ + 1."""
    return 2 * H0 + 1


def _bound(b):
    return d_sym if b == "d" else sympy.Integer(b)


def derived_count(structure=None):
    """(count, maximum length) of the schedule, read off its declarative structure as
    polynomials in d and H₀ (docs/design.md §4.3): the initial queries plus, per block,
    (families per loop point) × Π (hi − lo + 1) × 2H₀ samples, sample m of length m + 1."""
    from exactattn.learners.p2.schedule import STRUCTURE
    st = STRUCTURE if structure is None else structure
    families = sum((len(b["families"]) * sympy.Mul(*[_bound(hi) - _bound(lo) + 1
                                                     for _, lo, hi in b["loops"]])
                    for b in st["blocks"]), sympy.Integer(0))
    lo, hi = st["samples"]["m"]
    samples = {"2*H0": 2 * H0_sym}[hi] if isinstance(hi, str) else sympy.Integer(hi)
    count = sympy.expand(len(st["initial"]) + families * (samples - lo + 1))
    return count, sympy.expand(samples + 1)


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
                cert["checks"].append(run_record(res, model))
                cert["checks"].append(count_check("multi-head", {"d": d, "H0": H0}, q, ml,
                                                  run=len(cert["checks"]) - 1))
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
                   f"sampled: exact fit of the measured counts on the grid (degree ≤ 2 in d and "
                   f"H0): {fit} ≡ 4·H0·d² − 2·H0 + 1",
                   f"the fitted count polynomial {fit} differs from the published {target}")
    lfit, lcoeffs = fit_polynomial(lengths, (1, 1))
    verdict.expect(lfit is not None and sympy.expand(lfit - published_max_length(H0_sym)) == 0,
                   f"exact fit of the measured lengths (degree ≤ 1): {lfit} ≡ 2·H0 + 1",
                   f"the fitted length polynomial {lfit} differs from the published "
                   f"{published_max_length(H0_sym)}")
    count, length = derived_count()
    derived_ok = sympy.expand(count - target) == 0 and \
        sympy.expand(length - published_max_length(H0_sym)) == 0
    verdict.expect(derived_ok,
                   f"proved for all d ≥ 1, H0 ≥ 1: the count read off the Schedule's own structure "
                   f"is {count} ≡ 4·H0·d² − 2·H0 + 1 and its longest query {length} ≡ 2·H0 + 1 "
                   f"(polynomial identity)",
                   f"the Schedule's structure gives {count} queries of length ≤ {length}, not "
                   f"{target} and 2·H0 + 1")
    from exactattn.learners.p2.schedule import STRUCTURE
    cert["checks"].append({"kind": "count-derivation", "formula": "multi-head",
                           "structure": STRUCTURE, "count": _terms(count),
                           "max_length": _terms(length)})
    for quantity, pts, cf, deg in (("queries", points, coeffs, [2, 2]),
                                   ("max_length", lengths, lcoeffs, [1, 1])):
        cert["checks"].append({"kind": "count-fit", "formula": "multi-head", "quantity": quantity,
                               "variables": ["d", "H0"], "degrees": deg,
                               "points": [list(p) for p in sorted(set(pts))],
                               "coefficients": [[i, j, rational(c)] for (i, j), c in
                                                sorted((cf or {}).items())]})
    cert["symbolic"].append({"count_fit_equals_formula": fit is not None and
                             sympy.expand(fit - target) == 0,
                             "derived_count_equals_formula": derived_ok})


def _terms(p):
    """A polynomial in (d, H0) as [[i, j, "c"]] (exponents of d and H0)."""
    poly = sympy.Poly(p, d_sym, H0_sym)
    return [[int(i), int(j), rational(c)] for (i, j), c in sorted(poly.terms())]


CLAIM = register(Claim(
    id="P2-count",
    reference="P2 query count",
    statement="multi-head learning uses exactly 4Hd²−2H+1 queries of length ≤ 2H+1 "
              "(H0 for a bound H0 ≥ H)",
    sizes={"quick": {"d": [1, 2, 3], "H": [1, 2]}, "full": {"d": [1, 2, 3, 4, 5], "H": [1, 2, 3, 4]}},
    run=run,
    needs=("exactattn.learners.multi_head",)))

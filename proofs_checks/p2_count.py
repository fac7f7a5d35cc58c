"""P2-count: the multi-head learner asks exactly 4Hd² − 2H + 1 value queries of length ≤ 2H + 1,
with H₀ in place of H when only a bound H₀ ≥ H is known (P2, abstract; docs/design.md §4.3).

What is proved and what is sampled (docs/claims.md):

1. The schedule, for all d ≥ 1, H₀ ≥ 1 (an identity read off the structure): the count and
   the maximum length of the Schedule's declarative structure
   (:data:`exactattn.learners.p2.schedule.STRUCTURE`, from which the learner's queries are
   generated) as polynomials in d and H₀ — initial queries, then per block (families) ×
   Π(loop lengths) × 2H₀ samples of length m + 1 — equal 4H₀d² − 2H₀ + 1 and 2H₀ + 1
   identically (sympy; the checker re-derives both with its own polynomial arithmetic from the
   recorded structure, which must be the one it rebuilds every multi-head transcript from).
2. The Schedule object itself, enumerated (no oracle): for every d ≤ D, H₀ ≤ K
   (``enumerated d,H0`` = [D, K]) the queries :class:`Schedule` generates are counted and their
   longest measured; both must equal the formulas.  The table is recorded and the checker
   re-derives every entry from its own copy of the structure.
3. The learner, sampled: for every (d, H) of the grid and of ``d,H extra`` (larger d, one
   head), with H known and with the bound H₀ = H + 1, a seeded random rational model is
   learned through a counting oracle; the run's transcript must be exactly the Schedule's
   queries for the run's (U, X, H₀), the oracle's count and maximum length the formulas, the
   recovered heads the canonical form exactly; every run is recorded as a consistency-and-genericity
   certificate (its whole transcript).  That the learner asks only the schedule is sampled, not
   proved: a learner that asked otherwise at some d outside the grid would not be seen.
4. Sampled, an independent check: the count polynomial of degree ≤ 2 in d and H₀ fitted to the
   measured counts by exact interpolation — with more measured points than monomials at every
   size, so that a wrong count can make the fit fail.
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
           "measure", "enumerate_schedules"]

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


def enumerate_schedules(max_d, max_H0):
    """The Schedule object's own queries, counted, for every d ≤ max_d and H₀ ≤ max_H0 (no
    oracle: the schedule is non-adaptive, its count does not depend on U, X, so the unit
    basis is used): [[d, H0, count, max_length], ...]."""
    from exactattn.learners.p2.schedule import Schedule
    out = []
    for d in range(1, max_d + 1):
        E = [[int(i == j) for j in range(d)] for i in range(d)]
        for H0 in range(1, max_H0 + 1):
            n = longest = 0
            for q in Schedule(E, E, H0).queries():
                n += 1
                longest = max(longest, len(q))
            out.append([d, H0, n, longest])
    return out


def _grid(params):
    """(d, H, H0) of every certified run: the grid d × H and the extra (d, H), each with H
    known (H0 = H) and with the bound H0 = H + 1."""
    pairs = [(d, H) for d in params["d"] for H in params["H"]]
    pairs += [tuple(x) for x in params.get("d,H extra", [])]
    return [(d, H, H0) for d, H in pairs for H0 in (H, H + 1)]


def _is_the_schedule(res, oracle):
    """The oracle's transcript is exactly the Schedule's queries for the run's U, X, H0."""
    from exactattn.learners.p2.schedule import Schedule
    ex = res.extra
    asked = [[list(t) for t in q] for q, _ in oracle.transcript]
    want = [[list(t) for t in q] for q in Schedule(ex["U"], ex["X"], int(ex["H0"])).queries()]
    return asked == want


def run(params) -> Verdict:
    """Enumerate the Schedule, measure the learner on the grid, compare with P2's formulas, fit
    the count polynomial exactly."""
    verdict = Verdict(True)
    cert = new_certificate(CLAIM, params)
    points, lengths, skipped_total, bad = [], [], 0, []
    for d, H, H0 in _grid(params):
        oracle, model, res, skipped = measure(d, H, H0, seed=100 * d + 10 * H)
        skipped_total += skipped
        q, ml = oracle.queries, oracle.max_length
        same = _is_the_schedule(res, oracle)
        ok = (same and q == published_count(d, H0) and ml == published_max_length(H0)
              and res.queries == q and same_canonical(model, res.heads))
        if not ok:
            bad.append(f"d={d} H={H} H0={H0}: {q} queries (published "
                       f"{published_count(d, H0)}), length {ml} (published "
                       f"{published_max_length(H0)}), transcript "
                       f"{'=' if same else '≠'} the Schedule's queries, canonical heads "
                       f"{'exact' if same_canonical(model, res.heads) else 'WRONG'}")
        points.append((d, H0, q))
        lengths.append((d, H0, ml))
        cert["checks"].append(run_record(res, model))
        cert["checks"].append(count_check("multi-head", {"d": d, "H0": H0}, q, ml,
                                          run=len(cert["checks"]) - 1))
    grid = (f"d={','.join(map(str, params['d']))} × H={','.join(map(str, params['H']))}"
            f" and (d, H) = {', '.join(f'({d}, {H})' for d, H in params.get('d,H extra', []))}")
    more = f"; … and {len(bad) - 3} more" if len(bad) > 3 else ""
    verdict.expect(not bad, f"sampled: {len(points)} learner runs on {grid} (H known and "
                   f"H0=H+1): transcript = the Schedule's queries, queries = 4H0d²−2H0+1, "
                   f"length = 2H0+1, canonical heads exact", "; ".join(bad[:3]) + more)
    if skipped_total:
        verdict.notes.append(f"{skipped_total} random draws failed detectably and were redrawn")
    max_d, max_H0 = params["enumerated d,H0"]
    table = enumerate_schedules(max_d, max_H0)
    wrong = [e for e in table if e[2:] != [published_count(e[0], e[1]),
                                           published_max_length(e[1])]]
    verdict.expect(not wrong, f"the Schedule object enumerated for every d ≤ {max_d}, H0 ≤ "
                   f"{max_H0} ({len(table)} schedules, {sum(e[2] for e in table)} queries, no "
                   f"oracle): count = 4H0d²−2H0+1 and longest query = 2H0+1 each time",
                   "the Schedule object does not have the published count or length at "
                   + ", ".join(f"d={e[0]} H0={e[1]} ({e[2]} queries, length {e[3]})"
                               for e in wrong[:3]))
    _fit(verdict, cert, points, lengths, {"d": max_d, "H0": max_H0, "counts": table})
    verdict.certificate = cert
    return verdict


def _fit(verdict, cert, points, lengths, enumerated):
    for what, pts, deg in (("counts", points, (2, 2)), ("lengths", lengths, (1, 1))):
        n, monos = len(set(pts)), (deg[0] + 1) * (deg[1] + 1)
        verdict.expect(n > monos, f"the fit of the {what} has {n} points for {monos} monomials "
                       f"(over-determined: it can fail)",
                       f"the fit of the {what} has {n} points for {monos} monomials: it "
                       f"cannot fail, so it is no evidence")
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
                   f"proved for the schedule, all d ≥ 1, H0 ≥ 1: the count read off the "
                   f"Schedule's own structure is {count} ≡ 4·H0·d² − 2·H0 + 1 and its longest "
                   f"query {length} ≡ 2·H0 + 1 (an identity of the structure; that the learner "
                   f"asks exactly this schedule is sampled on the grid)",
                   f"the Schedule's structure gives {count} queries of length ≤ {length}, not "
                   f"{target} and 2·H0 + 1")
    from exactattn.learners.p2.schedule import STRUCTURE
    cert["checks"].append({"kind": "count-derivation", "formula": "multi-head",
                           "structure": STRUCTURE, "count": _terms(count),
                           "max_length": _terms(length), "enumerated": enumerated})
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
    sizes={"quick": {"d": [1, 2, 3], "H": [1, 2], "d,H extra": [[6, 1]],
                     "enumerated d,H0": [40, 3]},
           "full": {"d": [1, 2, 3, 4, 5], "H": [1, 2, 3, 4],
                    "d,H extra": [[6, 1], [8, 1], [10, 1]], "enumerated d,H0": [40, 10]}},
    run=run,
    needs=("exactattn.learners.multi_head",)))

"""floor (beyond the papers): H(d² + d) value queries is the floor for learners whose queries
depend smoothly on earlier answers, and every exact schedule here reaches it: the Jacobian of its
answers with respect to the H(d² + d) canonical parameters has full rank (docs/design.md §10).

For every (d, H) and schedule (P1 for H = 1, P2, economy, adaptive with H0 = H + 1), a seeded
random rational model is learned through a counting oracle (certified exactly), and the
Jacobian of the answers to the queries asked is formed modulo a random 63-bit prime at
t = e^{1/L} ↦ τ (:mod:`exactattn.analysis.floor`, whose docstring has the argument: a
non-zero minor modulo p is a non-zero minor in Q(t), hence at t = e^{1/L}).  The verdict
holds when the rank is H(d² + d) (which needs at least that many answers: the floor) and the
learner recovered the model; the rank curve rank(first k answers) is printed at a few k.  The
certificate records the minor's rows, p, τ, L, the model and the queries; the stdlib checker
recomputes the rows modulo p and the determinant itself.

Multi-head low rank (``low-rank d,H,r``): a seeded model with heads of rank r is learned by the
low-rank schedule told r; the floor there is H(r(2d − r) + d), the dimension of such heads,
and the Jacobian with respect to (Q_h, K_h, v_h), W_h = Q_h K_hᵀ, must reach that rank (a
non-zero minor on recorded rows and columns; the checker re-derives the factorisation's
product and the chain rule).
"""

from __future__ import annotations

import random

from exactattn.analysis.floor import certify_full_rank, certify_low_rank, dimension_floor
from exactattn.models.attention import random_multi_head
from exactattn.oracles.oracle import Oracle

from .certificates import heads_json, new_certificate, vector_json
from .registry import Claim, Verdict, register

__all__ = ["CLAIM", "run_schedule", "SCHEDULES"]

SCHEDULES = ("P1", "P2", "economy", "adaptive")


def run_schedule(name, d, H, seed):
    """Learn a seeded (d, H) model with one schedule: (model, result, queries)."""
    from exactattn.learners.multi_head import learn_multi_head
    from exactattn.learners.p1.single_head import learn_single_head
    model = random_multi_head(d, H, seed=seed)
    oracle = Oracle(model)
    if name == "P1":
        res = learn_single_head(oracle, d)
    elif name == "P2":
        res = learn_multi_head(oracle, d, heads=H, seed=seed, resample=True)
    elif name == "economy":
        res = learn_multi_head(oracle, d, heads=H, seed=seed, schedule="economy", resample=True)
    else:
        res = learn_multi_head(oracle, d, heads_bound=H + 1, seed=seed, schedule="adaptive",
                               resample=True)
    return model, res, [q for q, _ in oracle.transcript]


def _curve_text(prof, n):
    marks = sorted({max(1, n * k // 8) for k in range(1, 9)})
    return ", ".join(f"{k}:{prof.rank_of_first(k)}" for k in marks)


def run(params) -> Verdict:
    verdict = Verdict(True)
    cert = new_certificate(CLAIM, params)
    rng = random.Random(params.get("seed", 0))
    for d, H in params["d,H"]:
        P = dimension_floor(d, H)
        for name in params["schedules"]:
            if name == "P1" and H != 1:
                continue
            model, res, queries = run_schedule(name, d, H, seed=10 * d + H)
            recovered = res.model.head_set() == model.canonical().head_set()
            p, tau, L, prof, rows = certify_full_rank(model, queries, rng)
            tag = f"{name} d={d} H={H}"
            verdict.expect(
                recovered and prof.rank == P,
                f"{tag}: {len(queries)} answers ({len(queries) / P:.3f}× the floor "
                f"H(d²+d) = {P}), Jacobian rank {prof.rank} = H(d²+d), reached at answer "
                f"{prof.first_full()}; rank curve k:rank {_curve_text(prof, len(queries))}",
                f"{tag}: Jacobian rank {prof.rank} < {P} or the model was not recovered")
            if prof.rank == P:
                cert["checks"].append({
                    "kind": "floor", "schedule": name, "dim": d, "model": heads_json(model.heads),
                    "queries": [[vector_json(t) for t in q] for q in queries],
                    "p": p, "tau": tau, "L": L, "parameters": P, "rows": rows,
                    "curve": prof.curve, "first_full": prof.first_full()})
    for d, H, r in params.get("low-rank d,H,r", []):
        _low_rank(verdict, cert, d, H, r, rng)
    verdict.notes.append("the floor H(d²+d) is a lower bound by invariance of domain for "
                         "learners whose queries depend smoothly on earlier answers; the "
                         "certified part is the rank (a non-zero minor modulo p), the curve's "
                         "lower bound and the answer at which full rank is reached")
    verdict.certificate = cert
    return verdict


def _low_rank(verdict, cert, d, H, r, rng):
    """One multi-head low-rank run against its own floor H(r(2d − r) + d)."""
    from exactattn.analysis.beyond import low_rank_model
    from exactattn.learners.multi_head import learn_multi_head
    from exactattn.learners.beyond.multi_low_rank import low_rank_floor
    model = low_rank_model(d, H, r, seed=10 * d + H + 100 * r)
    oracle = Oracle(model)
    res = learn_multi_head(oracle, d, heads=H, rank=r, seed=0)
    queries = [q for q, _ in oracle.transcript]
    recovered = res.model.head_set() == model.canonical().head_set()
    p, tau, L, factors, prof, rows, cols = certify_low_rank(model, r, queries, rng)
    P = low_rank_floor(d, H, r)
    first = prof.first_reaching(P)
    tag = f"low-rank d={d} H={H} r={r}"
    verdict.expect(
        recovered and prof.rank == P,
        f"{tag}: {len(queries)} answers ({len(queries) / P:.3f}× the rank-r floor "
        f"H(r(2d−r)+d) = {P}), Jacobian rank over (Q, K, v) {prof.rank} = the floor, reached at "
        f"answer {first}; rank curve k:rank {_curve_text(prof, len(queries))}",
        f"{tag}: Jacobian rank {prof.rank} < {P} or the model was not recovered")
    if prof.rank == P:
        cert["checks"].append({
            "kind": "floor", "schedule": "low-rank", "dim": d, "rank": r,
            "model": heads_json(model.heads),
            "factors": [{"Q": [vector_json(x) for x in Q], "K": [vector_json(x) for x in K]}
                        for Q, K in factors],
            "queries": [[vector_json(t) for t in q] for q in queries],
            "p": p, "tau": tau, "L": L, "parameters": P, "rows": rows, "columns": cols,
            "curve": prof.curve, "first_full": first})


CLAIM = register(Claim(
    id="floor",
    reference="beyond the papers: dimension floor",
    statement="H(d²+d) answers are necessary (invariance of domain); the answers of every "
              "exact schedule here have a Jacobian of full rank H(d²+d), certified modulo p "
              "(multi-head low rank: rank H(r(2d−r)+d) over the factors Q, K, v)",
    sizes={"quick": {"d,H": [[2, 1], [2, 2], [3, 2]], "schedules": list(SCHEDULES),
                     "low-rank d,H,r": [[3, 2, 1]], "seed": 0},
           "full": {"d,H": [[2, 1], [3, 1], [2, 2], [3, 2], [4, 3], [8, 4]],
                    "schedules": list(SCHEDULES),
                    "low-rank d,H,r": [[4, 2, 1], [4, 3, 2], [6, 3, 2]], "seed": 0}},
    run=run,
    needs=("exactattn.learners.multi_head",)))

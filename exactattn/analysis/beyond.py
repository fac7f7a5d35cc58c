"""Measured query counts of every exact schedule beside the floor (docs/design.md §10), shared by
``exactattn counts --beyond``, benchmarks/bench_beyond.py and examples/beyond_counts.py.

Each entry is measured by running the learner through a counting oracle on a seeded random
rational model; a count is reported only for a run whose recovered model equals the canonical
form exactly (and is certified exactly in Q(t) by the learner); otherwise the entry carries
the failure's name.
"""

from __future__ import annotations

import time

__all__ = ["SCHEMES", "measure_schemes", "low_rank_model"]

#: column order of the side-by-side table
SCHEMES = ("P1", "P2", "economy", "adaptive", "low-rank", "design")


def low_rank_model(d: int, H: int, r: int, seed: int):
    """H seeded random heads of rank r (exact rationals)."""
    from ..learners.p1.low_rank import random_low_rank_head
    from ..models.attention import MultiHeadAttention
    return MultiHeadAttention([random_low_rank_head(d, r, seed=seed + 17 * h) for h in range(H)])


def _run(fn, model):
    from ..errors import LearningFailure
    from ..oracles.oracle import Oracle
    oracle = Oracle(model)
    start = time.perf_counter()
    try:
        res = fn(oracle)
    except LearningFailure as e:
        return {"queries": None, "error": e.reason}
    ok = res.model.head_set() == model.canonical().head_set()
    return {"queries": oracle.queries if ok else None, "max_length": oracle.max_length,
            "recovered": ok, "certified": bool(res.certificate) and
            res.certificate.get("certified", True) is not False,
            "seconds": round(time.perf_counter() - start, 3),
            **({} if ok else {"error": "WRONG"})}


def measure_schemes(d: int, H: int, H0: int | None = None, rank: int = 1, seed: int = 0) -> dict:
    """One (d, H) row: the floor H(d²+d), and the measured counts of P1 (H = 1), P2, economy,
    adaptive (told only H0, default 2H), multi-head low rank (heads of rank ``rank``,
    given; its own floor H(r(2d−r)+d)) and the design learner (told H; no random draw,
    certified by Theorem A), each with its ratio to its floor; ``design_formula`` and
    ``design_max_length`` are the design learner's count d + (2H−1)((2H−1)(d²−1)+d) and
    length 2H (:func:`~exactattn.learners.beyond.design_learner.design_learner_count`)."""
    from .floor import dimension_floor
    from ..learners.beyond.design_learner import design_learner_count, family_samples
    from ..learners.multi_head import learn_multi_head
    from ..learners.beyond.multi_low_rank import low_rank_floor
    from ..learners.p1.single_head import learn_single_head
    from ..models.attention import random_multi_head
    H0 = 2 * H if H0 is None else H0
    model = random_multi_head(d, H, seed=seed * 1000 + 31 * d + H)
    row = {"dim": d, "heads": H, "heads_bound": H0, "rank": rank,
           "floor": dimension_floor(d, H), "low_rank_floor": low_rank_floor(d, H, rank)}
    row["P1"] = _run(lambda o: learn_single_head(o, d), model) if H == 1 else None
    row["P2"] = _run(lambda o: learn_multi_head(o, d, heads=H, seed=seed), model)
    row["economy"] = _run(lambda o: learn_multi_head(o, d, heads=H, seed=seed,
                                                     schedule="economy"), model)
    row["adaptive"] = _run(lambda o: learn_multi_head(o, d, heads_bound=H0, seed=seed,
                                                      schedule="adaptive"), model)
    lr = low_rank_model(d, H, min(rank, d), seed * 1000 + 7 * d + H)
    row["low-rank"] = _run(lambda o: learn_multi_head(o, d, heads=H, rank=min(rank, d),
                                                      seed=seed), lr)
    row["design"] = _run(lambda o: learn_multi_head(o, d, heads=H, schedule="design"), model)
    row["design_formula"] = design_learner_count(d, H, H, told=True)
    row["design_max_length"] = family_samples(H, H) + 1
    for name in SCHEMES:
        entry = row[name]
        if entry and entry.get("queries"):
            base = row["low_rank_floor"] if name == "low-rank" else row["floor"]
            entry["ratio"] = round(entry["queries"] / base, 3)
    return row

"""`exactattn counts --dims A-B --heads A-B [--bound-offset K] [--json]`: run the multi-head
learner on seeded random exact models over a grid and print the measured query counts and
maximum lengths beside P2's formulas 4Hd²−2H+1 and 2H+1 (DESIGN §7).  With
``--bound-offset K`` the learner is told only H₀ = H + K, and the formulas use H₀."""

from __future__ import annotations

import json
import time

from ._common import int_range


def register(sub):
    p = sub.add_parser("counts", help="measured query counts beside the published formulas")
    p.add_argument("--dims", type=int_range, default=range(1, 4), help="range of d, e.g. 1-4")
    p.add_argument("--heads", type=int_range, default=range(1, 3), help="range of H, e.g. 1-3")
    p.add_argument("--bound-offset", type=int, default=0,
                   help="tell the learner only H0 = H + K (default 0: H known)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def measure(d: int, H: int, offset: int = 0, seed: int = 0) -> dict:
    """One grid point: learn a random exact model with H heads through a counting oracle
    (P2 count claim; DESIGN §4.3 schedule)."""
    from ..errors import LearningFailure
    from ..learners.multi_head import learn_multi_head
    from ..learners.schedule import published_count, published_max_length
    from ..models import random_multi_head
    from ..oracle import Oracle
    H0 = H + offset
    model = random_multi_head(d, H, seed=seed * 1000 + 31 * d + H)
    oracle = Oracle(model, backend="exact")
    start = time.perf_counter()
    row = {"dim": d, "heads": H, "heads_bound": H0 if offset else None,
           "formula_queries": published_count(d, H0),
           "formula_max_length": published_max_length(H0),
           "p1_single_head": d * d + d, "dimension_floor": H * (d * d + d)}
    try:
        res = learn_multi_head(oracle, d, heads=None if offset else H,
                               heads_bound=H0 if offset else None, seed=seed)
        row.update(queries=res.queries, max_length=res.max_length,
                   recovered=res.model().head_set() == model.head_set())
    except LearningFailure as e:
        row.update(queries=oracle.queries, max_length=oracle.max_length, recovered=False,
                   error=e.reason)
    row["seconds"] = round(time.perf_counter() - start, 4)
    row["match"] = (row["queries"] == row["formula_queries"]
                    and row["max_length"] == row["formula_max_length"] and row["recovered"])
    return row


def run(args):
    if args.bound_offset < 0:
        raise ValueError(f"--bound-offset must be ≥ 0, got {args.bound_offset}")
    rows = [measure(d, H, args.bound_offset, args.seed) for d in args.dims for H in args.heads]
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        head = (f"{'d':>3} {'H':>3} {'H0':>3} {'queries':>8} {'4H0d²-2H0+1':>12} "
                f"{'length':>6} {'2H0+1':>6} {'d²+d':>6} {'H(d²+d)':>8}  ok")
        print(head)
        for r in rows:
            h0 = r["heads_bound"] or r["heads"]
            print(f"{r['dim']:>3} {r['heads']:>3} {h0:>3} {r['queries']:>8} "
                  f"{r['formula_queries']:>12} {r['max_length']:>6} "
                  f"{r['formula_max_length']:>6} {r['p1_single_head']:>6} "
                  f"{r['dimension_floor']:>8}  {'ok' if r['match'] else 'MISMATCH ' + r.get('error', '')}")
    return 0 if all(r["match"] for r in rows) else 1

"""`exactattn counts --causal`: for every (d, H) of the grid, P2's learner and the causal
learner (docs/decoders.md) run on the same seeded random model — P2's oracle answering the
last position, the causal oracle every position — with the measured counts beside the
formulas 4Hd² − 2H + 1, 2d² − 1 (P2's families) and d² + d − 1 (residue matching), length
2H + 1, the outputs read, and whether each run
recovered the model's canonical form exactly (certified in Q(t))."""

from __future__ import annotations

import json

__all__ = ["run_causal_counts", "measure_causal"]


def measure_causal(d, H, seed):
    """One row: both learners on random_multi_head(d, H, seed) (heads as given)."""
    from ..learners.decoder import causal_count, learn_causal
    from ..learners.multi_head import learn_multi_head
    from ..learners.p2.schedule import published_count
    from ..models.attention import random_multi_head
    from ..models.decoder import CausalAttention
    from ..oracles.oracle import Oracle
    mh = random_multi_head(d, H, seed=seed)
    p2 = learn_multi_head(Oracle(mh), d, heads=H, seed=seed, validate=0)
    causal_model = CausalAttention(mh.heads, dim=d)
    c = learn_causal(Oracle(causal_model), d, heads=H, seed=seed, validate=0)
    e = learn_causal(Oracle(causal_model), d, heads=H, seed=seed, validate=0,
                     matching="residue")
    q, n, outs = causal_count(d, H)
    return {"dim": d, "heads": H, "p2_queries": p2.queries, "p2_formula": published_count(d, H),
            "p2_max_length": p2.max_length,
            "p2_recovered": p2.model.head_set() == mh.head_set() and bool(p2.certificate),
            "causal_queries": c.queries, "causal_formula": q, "causal_max_length": c.max_length,
            "causal_outputs": c.extra["outputs_read"],
            "causal_recovered": c.model.head_set() == causal_model.head_set()
            and bool(c.certificate),
            "residue_queries": e.queries, "residue_formula": causal_count(d, H, "residue")[0],
            "residue_recovered": e.model.head_set() == causal_model.head_set()
            and bool(e.certificate),
            "match": p2.queries == published_count(d, H) and (c.queries, c.max_length,
                                                               c.extra["outputs_read"]) ==
            (q, n, outs) and e.queries == causal_count(d, H, "residue")[0]}


def run_causal_counts(args):
    from ..presentation.progress import track
    grid = [(d, H) for d in args.dims for H in args.heads]
    rows = [measure_causal(d, H, args.seed)
            for d, H in track(grid, "counts", quiet=args.quiet, json=args.json,
                              describe=lambda p: f"d={p[0]} H={p[1]}")]
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print(f"{'d':>3} {'H':>3} {'P2':>6} {'4Hd²-2H+1':>10} {'causal':>7} {'2d²-1':>6} "
              f"{'residue':>8} {'d²+d-1':>7} {'length':>6} {'outputs':>8} {'P2/causal':>9}  "
              f"recovered")
        for r in rows:
            print(f"{r['dim']:>3} {r['heads']:>3} {r['p2_queries']:>6} {r['p2_formula']:>10} "
                  f"{r['causal_queries']:>7} {r['causal_formula']:>6} "
                  f"{r['residue_queries']:>8} {r['residue_formula']:>7} "
                  f"{r['causal_max_length']:>6} {r['causal_outputs']:>8} "
                  f"{r['p2_queries'] / r['causal_queries']:>8.1f}×  "
                  f"{'all exact, certified' if _ok(r) else 'MISMATCH'}")
        print("the same seeded model per row: P2's oracle answers the last position of each "
              "query, the causal oracle every position of one forward pass (one query)")
    return 0 if all(_ok(r) for r in rows) else 1


def _ok(r) -> bool:
    return r["p2_recovered"] and r["causal_recovered"] and r["residue_recovered"] and r["match"]

"""`exactattn counts --dims A-B --heads A-B [--bound-offset K] [--json]`: run the multi-head
learner on seeded random exact models over a grid and print the measured query counts and
maximum lengths beside P2's formulas 4Hd²−2H+1 and 2H+1 (docs/design.md §7).  With
``--bound-offset K`` the learner is told only H₀ = H + K, and the formulas use H₀."""

from __future__ import annotations

import json

from ..analysis.experiments import measure_counts as measure  # noqa: F401  (also this module's API)
from ..presentation.progress import track
from ._common import int_range


def register(sub):
    p = sub.add_parser("counts", help="measured query counts beside the published formulas")
    p.add_argument("--dims", type=int_range, default=range(1, 4), help="range of d, e.g. 1-4")
    p.add_argument("--heads", type=int_range, default=range(1, 3), help="range of H, e.g. 1-3")
    p.add_argument("--bound-offset", type=int, default=0,
                   help="tell the learner only H0 = H + K (default 0: H known)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    p.set_defaults(func=run)


def run(args):
    if args.bound_offset < 0:
        raise ValueError(f"--bound-offset must be ≥ 0, got {args.bound_offset}")
    grid = [(d, H) for d in args.dims for H in args.heads]
    rows = [measure(d, H, args.bound_offset, args.seed)
            for d, H in track(grid, "counts", quiet=args.quiet, json=args.json,
                              describe=lambda p: f"d={p[0]} H={p[1]}")]
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

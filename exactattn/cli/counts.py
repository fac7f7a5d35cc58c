"""`exactattn counts --dims A-B --heads A-B [--bound-offset K] [--json]`: run the multi-head
learner on seeded random exact models over a grid and print the measured query counts and
maximum lengths beside P2's formulas 4Hd²−2H+1 and 2H+1 (docs/design.md §7).  With
``--bound-offset K`` the learner is told only H₀ = H + K, and the formulas use H₀.

``--beyond`` prints instead, side by side for every (d, H), the floor H(d²+d) and the measured
counts of P1 (H = 1), P2, economy, adaptive (told H₀ = H + K, default K = H), multi-head
low rank (heads of rank ``--rank``, beside its own floor H(r(2d−r)+d)) and the design learner
(told H; no random draw, Theorem A), with ratios to the floor (docs/design.md §10, §12), and
the design learner's formulas d + (2H−1)((2H−1)(d²−1)+d) queries of length 2H; every count
comes from a run whose recovered model is the exact canonical form, certified in Q(t)."""

from __future__ import annotations

import json

from ._common import MAX_DIM, MAX_HEADS, check_work, int_in, int_range, p2_work, seed_int


def measure(*args, **kwargs):
    """:func:`exactattn.analysis.experiments.measure_counts` (imported on first use)."""
    from ..analysis.experiments import measure_counts
    return measure_counts(*args, **kwargs)


def track(*args, **kwargs):
    from ..presentation.progress import track as _track
    return _track(*args, **kwargs)


def register(sub):
    p = sub.add_parser("counts", help="measured query counts beside the published formulas")
    p.add_argument("--dims", type=int_range, default=range(1, 4), help="range of d, e.g. 1-4")
    p.add_argument("--heads", type=int_range, default=range(1, 3), help="range of H, e.g. 1-3")
    p.add_argument("--bound-offset", type=int_in(0, MAX_HEADS), default=0,
                   help="tell the learner only H0 = H + K (default 0: H known)")
    p.add_argument("--beyond", action="store_true",
                   help="the floor beside P1, P2, economy, adaptive and low-rank counts")
    p.add_argument("--rank", type=int_in(1, MAX_DIM), default=1, help="with --beyond: rank of the low-rank heads")
    p.add_argument("--causal", action="store_true",
                   help="the causal learner (one query read at every position, "
                        "docs/decoders.md) beside P2 on the same model")
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument("--force", action="store_true",
                   help="run even when the cost estimate is above the limit")
    p.add_argument("--json", action="store_true")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    p.set_defaults(func=run)


def run(args):
    if args.bound_offset < 0:
        raise ValueError(f"--bound-offset must be ≥ 0, got {args.bound_offset}")
    check_work(f"counts over d={_span(args.dims)}, H={_span(args.heads)}"
               f"{' --beyond' if args.beyond else ''}", _work(args), args.force)
    if args.beyond:
        return run_beyond(args)
    if args.causal:
        from .counts_causal import run_causal_counts
        return run_causal_counts(args)
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


def _span(r) -> str:
    return f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0])


def _work(args) -> int:
    """The grid's estimated CPU microseconds (:func:`._common.p2_work`): one run per cell,
    five schedules and H₀ = 2H for the adaptive one with --beyond."""
    total = 0
    for d in args.dims:
        for H in args.heads:
            if args.beyond:
                # P1, P2, economy, low rank, the design learner (about 2H times P2's
                # answers), and the adaptive schedule at its bound
                total += (4 + 2 * H) * p2_work(d, H) + \
                    p2_work(d, H, H + (args.bound_offset or H))
            else:
                total += p2_work(d, H, H + args.bound_offset)
    return total


def _cell(entry):
    if entry is None:
        return "—"
    if entry.get("queries") is None:
        return entry.get("error", "failed")
    return f"{entry['queries']} ({entry['ratio']:.2f}×)"


def run_beyond(args):
    """The side-by-side table of ``--beyond`` (docs/design.md §10)."""
    from ..analysis.beyond import SCHEMES, measure_schemes
    if args.rank < 1:
        raise ValueError(f"--rank must be ≥ 1, got {args.rank}")
    grid = [(d, H) for d in args.dims for H in args.heads]
    rows = [measure_schemes(d, H, H + (args.bound_offset or H), args.rank, args.seed)
            for d, H in track(grid, "counts", quiet=args.quiet, json=args.json,
                              describe=lambda p: f"d={p[0]} H={p[1]}")]
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        w = 16
        print(f"{'d':>3} {'H':>3} {'floor':>6} " + " ".join(
            f"{(n + ('(H0)' if n == 'adaptive' else '') + (f'(r={args.rank})' if n == 'low-rank' else '')):>{w}}"
            for n in SCHEMES) + f" {'rank-r floor':>12} {'design formula':>14} {'2H':>3}")
        for r in rows:
            print(f"{r['dim']:>3} {r['heads']:>3} {r['floor']:>6} " +
                  " ".join(f"{_cell(r[n]):>{w}}" for n in SCHEMES) + f" {r['low_rank_floor']:>12}"
                  f" {r['design_formula']:>14} {r['design_max_length']:>3}")
        print("counts measured by running each learner (exact canonical recovery, certified in "
              "Q(t)); ratio to the floor H(d²+d) (low rank: to H(r(2d−r)+d)); adaptive told "
              "H0 = H + " + (str(args.bound_offset) if args.bound_offset else "H") + "; design "
              "told H: formula d + (2H−1)((2H−1)(d²−1)+d) queries of length 2H")
    bad = [r for r in rows for n in SCHEMES if r[n] is not None and r[n].get("error") == "WRONG"]
    return 1 if bad else 0

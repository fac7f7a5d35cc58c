"""Cost of one oracle answer: evaluating a random multi-head model on one copy-count query
(docs/design.md §2 exact backend, §4.3 query family).

For each (d, H) the query is [(x+u) repeated 2H times, x] (length 2H+1, the longest query the
P2 learner asks) with integer entries of x and u in [−3, 3], on a random rational model
(``random_multi_head``).  The exact answer is an element of Q(e^{1/L}); it is compared with
the mp(dps=50) and float64 answers (digits of agreement) and timed on all three backends.
Target: exact evaluation at (d, H) = (16, 8) under 5 ms per query.

    python benchmarks/bench_eval.py [--sizes 4x3,8x4,16x8] [--queries 20] [--repeat 5] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import mpmath

import exactattn as ea
from exactattn.arith import get_backend

from _sizes import parse_sizes   # benchmarks/_sizes.py (this directory)

TARGET_SIZE = (16, 8)
TARGET_MS = 5.0


def copy_count_query(rng: random.Random, d: int, H: int):
    x = [rng.randint(-3, 3) for _ in range(d)]
    u = [rng.randint(-3, 3) for _ in range(d)]
    return [[a + b for a, b in zip(x, u)] for _ in range(2 * H)] + [x]


def per_query_ms(model, queries, backend, repeat: int) -> float:
    """Median over `repeat` runs of the mean time per query, in milliseconds."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for q in queries:
            model(q, backend)
        runs.append((time.perf_counter() - start) / len(queries) * 1e3)
    return statistics.median(runs)


def agreement_digits(exact_value, approx) -> float:
    """−log10 of the relative difference (capped at 60)."""
    with mpmath.workdps(70):
        ref = exact_value.to_mpf(65)
        diff = abs(ref - mpmath.mpf(approx))
        if diff == 0:
            return 60.0
        return float(min(60, -mpmath.log10(diff / max(abs(ref), mpmath.mpf(1)))))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=parse_sizes, default=[(4, 3), (8, 4), (16, 8)],
                   help="comma-separated dxH pairs (default 4x3,8x4,16x8)")
    p.add_argument("--queries", type=int, default=20, help="random queries per size")
    p.add_argument("--repeat", type=int, default=5, help="timing runs (median reported)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    exact, mp, fl = get_backend("exact"), get_backend("mp", dps=50), get_backend("float")
    print("one copy-count query [(x+u)×2H, x], entries in [−3, 3], random rational model")
    print(f"{'d':>3} {'H':>3} {'len':>4} {'exact ms':>9} {'mp50 ms':>9} {'float ms':>9} "
          f"{'exact/mp':>9} {'mp digits':>10} {'float digits':>13}")
    results = {}
    for d, H in args.sizes:
        model = ea.random_multi_head(d, H, seed=args.seed + 1000 * d + H)
        rng = random.Random(args.seed + d * 31 + H)
        queries = [copy_count_query(rng, d, H) for _ in range(args.queries)]
        for be in (exact, mp, fl):  # warm the per-backend parameter caches
            model(queries[0], be)
        t_exact = per_query_ms(model, queries, exact, args.repeat)
        t_mp = per_query_ms(model, queries, mp, args.repeat)
        t_fl = per_query_ms(model, queries, fl, args.repeat)
        mp_digits = min(agreement_digits(model(q, exact), model(q, mp)) for q in queries)
        fl_digits = min(agreement_digits(model(q, exact), model(q, fl)) for q in queries)
        results[(d, H)] = t_exact
        print(f"{d:>3} {H:>3} {2 * H + 1:>4} {t_exact:>9.3f} {t_mp:>9.3f} {t_fl:>9.3f} "
              f"{t_exact / t_mp:>9.2f} {mp_digits:>10.1f} {fl_digits:>13.1f}")
    if TARGET_SIZE in results:
        t = results[TARGET_SIZE]
        verdict = "PASS" if t < TARGET_MS else "MISS"
        print(f"target: exact evaluation at (d, H) = {TARGET_SIZE} under {TARGET_MS:g} ms per "
              f"query: {t:.3f} ms -> {verdict}")
    else:
        print(f"target size {TARGET_SIZE} not in --sizes; no verdict")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

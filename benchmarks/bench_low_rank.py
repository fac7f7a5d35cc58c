"""Low-rank heads: the compressed-sensing baseline of P1 Thm 5.1 against the exact skeleton
(docs/design.md §4.2).

Prints, for d = 16 and r = 2, the success rate (relative Frobenius error < 1e-6) of random
rank-one projections + nuclear-norm minimisation against the number m of measurements, next
to the exact skeleton's fixed count d + r(2d − r) (v plus r(2d − r) bilinear measurements) and
its timing on the exact, mp and float backends.  The baseline needs cvxpy
(``pip install ".[cvx]"`` from a clone); without it only the skeleton rows are
printed.

    python benchmarks/bench_low_rank.py [--dim 16] [--rank 2] [--trials 5] [--ms 40,60,...]
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

import mpmath

import numpy as np

import exactattn as ea
from exactattn.learners.p1.low_rank import learn_low_rank, random_low_rank_head, skeleton_queries

THRESHOLD = 1e-6


def relative_error(head, W) -> float:
    """‖Ŵ − W‖_F / ‖W‖_F, computed in mpmath at 60 digits (so mp results are not rounded)."""
    with mpmath.workdps(60):
        def num(x):
            return mpmath.mpf(x.numerator) / x.denominator if isinstance(x, Fraction) \
                else mpmath.mpf(x)
        diff = sum((num(a) - num(b)) ** 2 for ra, rb in zip(W, head.W) for a, b in zip(ra, rb))
        norm = sum(num(b) ** 2 for rb in head.W for b in rb)
        if not mpmath.isfinite(diff):
            return float("inf")
        return float(mpmath.sqrt(diff / norm))


def skeleton_rows(d, r, trials):
    print(f"exact skeleton (docs/design.md §4.2): d + r(2d−r) = {skeleton_queries(d, r)} queries, "
          f"{r * (2 * d - r)} of them measurements")
    print(f"{'backend':>8} {'queries':>8} {'success':>8} {'max rel. error':>15} {'seconds':>9}")
    for backend in ("exact", "mp", "float"):
        kind = "rational" if backend == "exact" else "real"
        ok, worst, secs, queries = 0, 0.0, 0.0, set()
        for t in range(trials):
            head = random_low_rank_head(d, r, seed=100 + t, kind=kind)
            start = time.perf_counter()
            res = learn_low_rank(ea.Oracle(head, backend=backend), d, rank=r, backend=backend,
                                 seed=t)
            secs += time.perf_counter() - start
            queries.add(res.queries)
            if backend == "exact":
                good = ea.same_function(res.model, ea.MultiHeadAttention([head]))
                err = 0.0 if good else float("inf")
            else:
                err = relative_error(head, res.heads[0].W)
                good = err < THRESHOLD
            ok += good
            worst = max(worst, err)
        print(f"{backend:>8} {'/'.join(map(str, sorted(queries))):>8} {ok}/{trials:<6} "
              f"{worst:>15.2e} {secs / trials:>9.3f}")


def baseline_rows(d, r, trials, ms):
    try:
        from exactattn.learners.p1.cs_baseline import learn_low_rank_cs, require_cvxpy
        cp = require_cvxpy()
    except ImportError as e:
        print(f"\nP1 Thm 5.1 baseline skipped: {e}")
        return
    print(f"\nP1 Thm 5.1 baseline (random rank-one projections + nuclear norm, cvxpy "
          f"{cp.__version__}), float oracle, success = relative error < {THRESHOLD:g}")
    print(f"{'m':>5} {'queries':>8} {'success':>8} {'median rel. error':>18} {'seconds':>9}")
    for m in ms:
        ok, errs, secs = 0, [], 0.0
        for t in range(trials):
            head = random_low_rank_head(d, r, seed=100 + t, kind="real")
            start = time.perf_counter()
            res = learn_low_rank_cs(ea.Oracle(head, backend="float"), d, m, seed=t)
            secs += time.perf_counter() - start
            err = relative_error(head, res.heads[0].W)
            errs.append(err)
            ok += err < THRESHOLD
        marker = "  <- skeleton's measurement count" if m == r * (2 * d - r) else ""
        print(f"{m:>5} {d + m:>8} {ok}/{trials:<6} {float(np.median(errs)):>18.2e} "
              f"{secs / trials:>9.3f}{marker}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dim", type=int, default=16)
    p.add_argument("--rank", type=int, default=2)
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--ms", default=None, help="comma-separated measurement counts")
    a = p.parse_args(argv)
    d, r = a.dim, a.rank
    dof = r * (2 * d - r)
    ms = [int(x) for x in a.ms.split(",")] if a.ms else \
        sorted({dof // 2, dof, 4 * dof // 3, 5 * dof // 3, 2 * dof, 7 * dof // 3, 3 * dof})
    print(f"d = {d}, r = {r}: rank-{r} {d}×{d} matrices have dimension r(2d−r) = {dof}\n")
    skeleton_rows(d, r, a.trials)
    baseline_rows(d, r, a.trials, ms)


if __name__ == "__main__":
    main()

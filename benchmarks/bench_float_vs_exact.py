"""Where floating point breaks: max parameter error of the multi-head learner (P2 schedule,
docs/design.md §4.3) for H = 1…10 at d = 4 on float64, mp(dps=30), mp(dps=60) and exact.

The same rational model is learned on every backend (rational parameters are valid real
parameters); the exact backend's error is 0 by exact certification.  A backend whose
answer cannot be formed (poles not real, matching impossible at its tolerance) prints the
failure's name instead of an error.

    python benchmarks/bench_float_vs_exact.py [--dim 4] [--max-heads 10]
"""

from __future__ import annotations

import argparse
import time

import mpmath

from exactattn.analysis.experiments import FLOAT_VS_EXACT_BACKENDS as BACKENDS
from exactattn.analysis.experiments import backend_label, float_vs_exact_row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dim", type=int, default=4)
    ap.add_argument("--max-heads", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    names = [backend_label(b, d) for b, d in BACKENDS]
    print(f"d = {args.dim}; max |parameter error| after matching heads")
    print(f"{'H':>3} " + " ".join(f"{n:>18}" for n in names) + f" {'seconds':>8}")
    for H in range(1, args.max_heads + 1):
        start = time.perf_counter()
        row = float_vs_exact_row(args.dim, H, args.seed)
        cells = [e if isinstance(e, str) else mpmath.nstr(e, 3) for e in row.values()]
        print(f"{H:>3} " + " ".join(f"{c:>18}" for c in cells)
              + f" {time.perf_counter() - start:>8.1f}")


if __name__ == "__main__":
    main()

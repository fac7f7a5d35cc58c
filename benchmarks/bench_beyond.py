"""Beyond P2 (docs/design.md §10): measured query counts and ratios to the floor H(d² + d) at
(d, H) = (4, 3), (8, 4) and larger sizes, for P2, economy (H known) and adaptive (H0 = 2H), with
the targets (≤ 1.7× at (4, 3), ≤ 1.85× at (8, 4), stretch ≤ 1.25× at (8, 4)), the
learner's wall time per run, and the Jacobian rank (certified modulo a prime) of each run's
answers.  Every count is a certified exact run (recovered model = canonical form).

    python benchmarks/bench_beyond.py [--sizes 4x3,8x4,12x6] [--seed 0] [--no-rank]
"""

from __future__ import annotations

import argparse
import random
import time

from exactattn.analysis.floor import certify_full_rank, dimension_floor
from exactattn.learners.multi_head import learn_multi_head
from exactattn.models.attention import random_multi_head
from exactattn.oracles.oracle import Oracle

from _sizes import parse_sizes   # benchmarks/_sizes.py (this directory)

TARGETS = {(4, 3): "≤ 1.7", (8, 4): "≤ 1.85 (stretch ≤ 1.25)"}
RUNS = (("P2", {}), ("economy", {"schedule": "economy"}),
        ("adaptive", {"schedule": "adaptive"}))


def run(d, H, seed, rank):
    model = random_multi_head(d, H, seed=seed * 1000 + d * 31 + H)
    P = dimension_floor(d, H)
    for name, kw in RUNS:
        oracle = Oracle(model)
        heads = {"heads_bound": 2 * H} if name == "adaptive" else {"heads": H}
        start = time.perf_counter()
        res = learn_multi_head(oracle, d, seed=seed, **kw, **heads)
        secs = time.perf_counter() - start
        ok = res.model.head_set() == model.head_set() and res.certificate["certified"]
        jr = "-"
        if rank:
            prof = certify_full_rank(model, [q for q, _ in oracle.transcript],
                                     random.Random(seed))[3]
            jr = f"{prof.rank}{'=floor' if prof.rank == P else ''}"
        target = TARGETS.get((d, H), "") if name == "economy" else ""
        print(f"{d:>3} {H:>3} {name:>9} {oracle.queries:>8} {P:>6} "
              f"{oracle.queries / P:>7.3f} {oracle.max_length:>6} {secs:>8.2f} "
              f"{'yes' if ok else 'NO':>9} {jr:>12}  {target}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=parse_sizes, default="4x3,8x4,12x6",
                   help="comma-separated dxH sizes (default %(default)s)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-rank", action="store_true", help="skip the Jacobian rank")
    args = p.parse_args()
    print(f"{'d':>3} {'H':>3} {'schedule':>9} {'queries':>8} {'floor':>6} {'ratio':>7} "
          f"{'length':>6} {'seconds':>8} {'certified':>9} {'Jacobian':>12}  target")
    for d, H in args.sizes:
        run(d, H, args.seed, not args.no_rank)


if __name__ == "__main__":
    main()

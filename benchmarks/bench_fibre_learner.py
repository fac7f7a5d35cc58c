"""The answer-fibre search as a learner (docs/beyond.md §10): for each (d, H, H0) of a grid and
each seed, a random H-head model is learned by :func:`learn_by_fibre` — d single-token
queries, then random copy-count families of 2H0 − 1 samples until the answer fibre is one
point — and, beside it, by the design learner (``schedule="design"``, certified by Theorem
A).  Prints, per size, the fibre learner's queries and families over the seeds (min–max), its
search nodes and CPU seconds, the floor H(d² + d) and the design learner's count; a size whose
search passes its budget prints its named failure.

    python benchmarks/bench_fibre_learner.py [--sizes 2,1,1;2,2,2;...] [--seeds 4]
"""

from __future__ import annotations

import argparse
import sys
import time

from exactattn.errors import LearningFailure
from exactattn.learners.beyond.fibre_learner import learn_by_fibre
from exactattn.learners.multi_head import learn_multi_head
from exactattn.models.attention import random_multi_head, same_function
from exactattn.oracles.oracle import Oracle

SIZES = "1,2,2;2,1,1;2,1,2;2,2,2;2,2,3;2,3,3;3,1,1;3,1,2;3,2,2;3,2,3;3,3,3"


def _sizes(text):
    try:
        return [tuple(int(x) for x in part.split(",")) for part in text.split(";")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: sizes are d,H,H0;d,H,H0;…") from None


def measure(d, H, H0, seeds):
    """One row: the fibre learner over the seeds, and the design learner at the first."""
    counts, families, nodes, failures = [], [], [], []
    start = time.process_time()
    for seed in range(seeds):
        model = random_multi_head(d, H, seed=seed + 10 * d + H)
        try:
            res = learn_by_fibre(Oracle(model), d, H0, seed=seed)
        except LearningFailure as e:
            failures.append(e.reason)
            continue
        if not same_function(res.model, model):
            raise SystemExit(f"WRONG model at {(d, H, H0)} seed {seed}")
        counts.append(res.queries)
        families.append(res.extra["families"])
        nodes.append(res.extra["nodes"])
    seconds = time.process_time() - start
    model = random_multi_head(d, H, seed=10 * d + H)
    design = learn_multi_head(Oracle(model), d, heads_bound=H0, schedule="design", validate=0)
    return {"size": (d, H, H0), "queries": counts, "families": families, "nodes": nodes,
            "failures": failures, "seconds": seconds, "floor": H * (d * d + d),
            "design": design.queries}


def _span(xs):
    return "—" if not xs else (str(min(xs)) if min(xs) == max(xs) else f"{min(xs)}–{max(xs)}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=_sizes, default=_sizes(SIZES))
    p.add_argument("--seeds", type=int, default=4)
    a = p.parse_args(argv)
    print("| (d, H, H₀) | floor | fibre learner queries | families | search nodes | CPU s "
          "(all seeds) | design learner | failures |")
    print("|---|---|---|---|---|---|---|---|")
    for d, H, H0 in a.sizes:
        r = measure(d, H, H0, a.seeds)
        print(f"| ({d}, {H}, {H0}) | {r['floor']} | {_span(r['queries'])} | "
              f"{_span(r['families'])} | {_span(r['nodes'])} | {r['seconds']:.2f} | "
              f"{r['design']} | {', '.join(r['failures']) or '—'} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

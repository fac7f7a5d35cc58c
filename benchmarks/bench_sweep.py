"""Throughput of the sweep machinery on small exact trials (d ≤ 3, H ≤ 3; P2 multi-head
learner, exact backend, box 1000), serially and on the local process pool, and the per-trial
overhead outside the learner (docs/sweeps.md).

    python benchmarks/bench_sweep.py [--trials N] [--repeat R] [--workers W] [--dask]
                                     [--configs 2x2,3x3]

For each executor it runs the same spec R times into a fresh in-memory store and prints
trials/s (min and median over the repeats), the ratio pool/serial, and the overhead
1 − (time inside learn_multi_head) / (wall time per trial and worker).  The pool is started
and warmed up (every worker imports the learners) before the timed runs; its start-up time
is printed apart.  With --dask, a Dask LocalCluster is measured the same way (start-up time
printed).  Targets: pool with 2 workers ≥ 1.7× serial; overhead ≤ 10%.  Other
processes share the cores: the load average is printed before and after.  ``--configs 2x2``
measures the (2, 2) trials alone (target: ≥ 500 trials/s on a pool of 2).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from exactattn.sweep import PoolExecutor, SerialExecutor, Store, SweepSpec, run_sweep

from _sizes import parse_sizes   # benchmarks/_sizes.py (this directory)

CONFIGS = [[1, 1], [2, 2], [2, 3], [3, 3]]


def spec(trials: int, configs=None) -> SweepSpec:
    return SweepSpec.from_dict({"run": [{"learner": "multi-head", "d,H": configs or CONFIGS,
                                         "box": 1000, "trials": trials}]})


def measure(executor, sp, batch=None):
    """(wall seconds, Σ learner seconds, trials) of one run into a fresh store."""
    with Store(":memory:") as db:
        start = time.perf_counter()
        report = run_sweep(sp, db, executor=executor, batch=batch)
        wall = time.perf_counter() - start
        rows = db.rows()
    assert report.complete and len(rows) == len(sp)
    learner = sum(r["timing"]["learner_seconds"] for r in rows)
    return wall, learner, len(rows)


def series(name, executor, sp, repeat, workers, batch=None):
    rates, overheads = [], []
    for _ in range(repeat):
        wall, learner, n = measure(executor, sp, batch)
        rates.append(n / wall)
        overheads.append(1 - learner / (wall * workers))
    print(f"{name:<28} trials/s min {min(rates):7.1f}  median {statistics.median(rates):7.1f}"
          f"   overhead outside the learner: median {statistics.median(overheads):6.1%}"
          f" (min {min(overheads):.1%}, max {max(overheads):.1%})")
    return statistics.median(rates), statistics.median(overheads)


def _spin(n=3_000_000):
    x = 0
    for i in range(n):
        x += i * i
    return x


def capacity(workers: int) -> float:
    """How many cores this run can really use now: the throughput of `workers` processes
    spinning at once over one process spinning alone (2.0 on two idle cores)."""
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(workers) as ex:
        list(ex.map(_spin, [1000] * workers))          # start the processes
        t = time.perf_counter()
        list(ex.map(_spin, [3_000_000]))
        one = time.perf_counter() - t
        t = time.perf_counter()
        list(ex.map(_spin, [3_000_000] * workers))
        many = time.perf_counter() - t
    return workers * one / many


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=60, help="seeds per configuration")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dask", action="store_true", help="also a Dask LocalCluster")
    ap.add_argument("--configs", type=parse_sizes, default=CONFIGS,
                    help="the (d, H) of the trials, e.g. 2x2 (default 1x1,2x2,2x3,3x3)")
    a = ap.parse_args(argv)
    a.configs = [list(c) for c in a.configs]
    sp = spec(a.trials, a.configs)
    cap_before = capacity(a.workers)
    print(f"{len(sp)} trials: (d, H) in {a.configs}, box 1000, exact, {a.trials} seeds each; "
          f"{os.cpu_count()} cores; load average before: {load()}; usable cores now "
          f"(a CPU loop in {a.workers} processes against 1): {cap_before:.2f}")
    run_sweep(spec(2), ":memory:", executor="serial")  # warm up this process
    serial, s_over = series("serial", SerialExecutor(), sp, a.repeat, 1)
    start = time.perf_counter()
    pool = PoolExecutor(a.workers)
    run_sweep(spec(4), ":memory:", executor=pool, batch=1)  # every worker imports the learners
    print(f"pool of {a.workers}: started and warmed up in {time.perf_counter() - start:.2f} s")
    try:
        rate, p_over = series(f"pool({a.workers}), default batch", pool, sp, a.repeat,
                              a.workers)
        one, _ = series(f"pool({a.workers}), batch 1", pool, sp, a.repeat, a.workers, batch=1)
        pairs = sorted(measure(SerialExecutor(), sp)[0] / measure(pool, sp)[0]
                       for _ in range(a.repeat))  # back to back: both see the same load
        print(f"paired runs (serial then pool, {a.repeat}×): pool/serial min {pairs[0]:.2f}×, "
              f"median {statistics.median(pairs):.2f}×, max {pairs[-1]:.2f}×")
    finally:
        pool.close()
    cap_after = capacity(a.workers)
    usable = (cap_before + cap_after) / 2
    print(f"pool/serial = {rate / serial:.2f}× (target ≥ 1.7× with 2 workers); "
          f"batch 1 reaches {one / serial:.2f}×; usable cores {cap_before:.2f} before, "
          f"{cap_after:.2f} after: pool/serial per usable core = {rate / serial / usable:.2f}")
    print(f"overhead outside the learner: serial {s_over:.1%}, pool {p_over:.1%} "
          f"(target ≤ 10%)")
    if a.dask:
        from exactattn.sweep import DaskExecutor
        ex = DaskExecutor("local", workers=a.workers)
        print(f"Dask LocalCluster of {ex.workers}: started in {ex.startup_seconds:.2f} s")
        try:
            run_sweep(spec(4), ":memory:", executor=ex, batch=1)
            d_rate, _ = series(f"dask({a.workers}), default batch", ex, sp, a.repeat, a.workers)
        finally:
            ex.close()
        print(f"dask/serial = {d_rate / serial:.2f}×")
    print(f"load average after: {load()}; usable cores now: {capacity(a.workers):.2f}")


if __name__ == "__main__":
    main()

"""`exactattn sweep [SPEC] [grid flags] [--store FILE] [--workers N | --serial |
--dask local|ADDRESS] [--plot DIR] [--json]` (docs/sweeps.md).

Runs a grid of learner runs or claim checks — from a TOML/JSON spec file or from flags — into a
resumable SQLite store (one row per trial; an interrupted sweep continues where it stopped
when the same command is run again), then prints the failure rate of each configuration beside
the Schwartz–Zippel bound D/|S| with an exact Clopper–Pearson interval (P2 probability one),
the measured query counts beside the published formulas (P2 count, P1 Thm 4.1) and the time
per trial.  Exit status 0 when every trial is stored and every configuration is ok; 1 when a
configuration FAILs (a wrong model, a crash, a failure outside the bad set, a rate
significantly above the bound, a count off its formula); 130 after Ctrl-C; 2 for bad input.
"""

from __future__ import annotations

import json
import sys

from ._common import MAX_BOX, MAX_DIM, MAX_DPS, MAX_HEADS, int_in, strict_int

#: the most values one list flag (--dim 1-64, --model-seed ...) may expand to
MAX_LIST = 10000


def _workers(text: str) -> int:
    """--workers: 1 … 4 × the cores of this machine."""
    import os
    return int_in(1, 4 * (os.cpu_count() or 1))(text)

DEFAULT_STORE = "sweep.sqlite"


def int_list(text: str, high: int | None = None) -> list:
    """'2,3' or '1-4' or '10,100,1000' → a list of integers (at most :data:`MAX_LIST`, each
    at most ``high`` when given)."""
    import argparse
    out = []
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part[1:]:
                a, b = part[0] + part[1:].split("-", 1)[0], part[1:].split("-", 1)[1]
                a, b = strict_int(a), strict_int(b)
                if b < a:
                    raise ValueError
                if b - a + 1 + len(out) > MAX_LIST:
                    raise argparse.ArgumentTypeError(f"{text!r} has more than {MAX_LIST} "
                                                     f"values; give a shorter list")
                out += list(range(a, b + 1))
            else:
                out.append(strict_int(part))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a list like 2,3 or 1-4") from None
        if len(out) > MAX_LIST:
            raise argparse.ArgumentTypeError(f"{text!r} has more than {MAX_LIST} values")
    if high is not None and out and max(out) > high:
        raise argparse.ArgumentTypeError(f"{text!r}: {max(out)} is above the limit {high}; "
                                         f"use at most {high}")
    return out


def _bounded_list(high):
    return lambda text: int_list(text, high)


def pair_list(text: str) -> list:
    """'2:2,2:3,3:3' → [[2, 2], [2, 3], [3, 3]] (zipped d and H)."""
    import argparse
    try:
        pairs = [[int(x) for x in p.split(":")] for p in text.split(",")]
    except ValueError:
        pairs = None
    if not pairs or any(len(p) != 2 for p in pairs):
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of d:H pairs like 2:2,3:3")
    return pairs


def register(sub):
    p = sub.add_parser("sweep", help="run a grid of learner runs or claim checks (resumable)",
                       description=__doc__.split("\n\n")[1])
    p.add_argument("spec", nargs="?", help="a TOML (.toml) or JSON spec file (docs/sweeps.md); "
                   "or give the grid with the flags below")
    g = p.add_argument_group("grid (instead of a spec file)")
    g.add_argument("--learner", choices=("multi-head", "single-head", "low-rank"),
                   default=None, help="learner (default multi-head)")
    g.add_argument("--dim", type=_bounded_list(MAX_DIM), help="dimensions d, e.g. 2,3 or 1-4")
    g.add_argument("--heads", type=_bounded_list(MAX_HEADS), help="numbers of heads H")
    g.add_argument("--dim-heads", type=pair_list, help="zipped (d, H) pairs, e.g. 2:2,2:3,3:3")
    g.add_argument("--heads-bound", type=_bounded_list(MAX_HEADS), help="H0 told to the learner instead of H "
                   "(grid points with H0 < H are skipped)")
    g.add_argument("--rank", type=_bounded_list(MAX_DIM), help="low-rank: ranks r")
    g.add_argument("--box", type=_bounded_list(MAX_BOX), help="exact query entries from {−box … box}")
    g.add_argument("--backend", choices=("exact", "mp", "float"), default=None)
    g.add_argument("--dps", type=int_in(1, MAX_DPS), default=None, help="digits for mp")
    g.add_argument("--schedule", default=None, help="multi-head schedule (default p2)")
    g.add_argument("--model-seed", type=int_list, help="seeds of the random models (default 0)")
    g.add_argument("--seeds", help="learner seeds, a range A-B (inclusive)")
    g.add_argument("--trials", type=int_in(1, 10 ** 6), help="seeds 0 … N−1")
    g.add_argument("--claim", nargs="+", metavar="ID", help="claim checks instead of learner runs")
    g.add_argument("--size", choices=("quick", "full"), default="quick", help="claim sizes")
    r = p.add_argument_group("running")
    r.add_argument("--store", default=DEFAULT_STORE,
                   help="SQLite file of trial rows (default: %(default)s); reused to resume")
    r.add_argument("--workers", type=_workers, default=None,
                   help="processes of the local pool (default: every core; at most 4 × the "
                        "cores)")
    r.add_argument("--serial", action="store_true", help="run in this process")
    r.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="'local' (a Dask LocalCluster) or a scheduler such as tcp://host:8786 "
                        "(needs the [dask] extra)")
    r.add_argument("--batch", type=int_in(1, 10 ** 6), default=None,
                   help="trials per task (default: about 16 tasks per worker, at most 64)")
    r.add_argument("--retry-errors", action="store_true",
                   help="run again the trials stored with outcome 'error' (a crash)")
    r.add_argument("--summary-only", action="store_true",
                   help="run nothing: summarise what the store holds for this spec")
    o = p.add_argument_group("output")
    o.add_argument("--confidence", default="99/100",
                   help="confidence of the intervals and the bound test (default 99/100)")
    o.add_argument("--bound-min-trials", type=int, default=None, metavar="N",
                   help="compute the Schwartz–Zippel bound for configurations with ≥ N trials "
                        "(default 100; 0 = always; D costs minutes from d = 5 on)")
    o.add_argument("--plot", metavar="DIR", default=None,
                   help="write failure-rate, count and time plots (PNG) to DIR")
    o.add_argument("--json", action="store_true", help="print one JSON object")
    o.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    p.set_defaults(func=run)


_GRID = ("learner", "dim", "heads", "dim_heads", "heads_bound", "rank", "box", "backend", "dps",
         "schedule", "model_seed", "seeds", "trials")


def spec_from_args(a) -> dict:
    """The spec dict the flags describe (docs/sweeps.md)."""
    given = [k for k in _GRID if getattr(a, k) is not None]
    if a.spec:
        if given or a.claim:
            raise ValueError("give a spec file or grid flags, not both")
        return None
    if a.claim:
        extra = [k for k in given if k not in ("seeds", "trials")]
        if extra:
            raise ValueError(f"--claim takes only --size and --seeds/--trials, not "
                             f"--{extra[0].replace('_', '-')}")
        group = {"id": a.claim, "size": a.size}
    else:
        if a.dim is None and a.dim_heads is None:
            raise ValueError("give a spec file, --dim D (or --dim-heads d:H,...) or --claim ID")
        if a.dim_heads is not None and (a.dim is not None or a.heads is not None):
            raise ValueError("give --dim-heads or --dim/--heads, not both")
        group = {"learner": a.learner or "multi-head"}
        names = {"dim": "d", "heads": "H", "dim_heads": "d,H", "heads_bound": "H0",
                 "rank": "rank", "box": "box", "backend": "backend", "dps": "dps",
                 "schedule": "schedule", "model_seed": "model_seed"}
        for flag, key in names.items():
            if getattr(a, flag) is not None:
                group[key] = getattr(a, flag)
    if a.seeds is not None and a.trials is not None:
        raise ValueError("give --seeds or --trials, not both")
    if a.seeds is not None:
        group["seeds"] = a.seeds
    if a.trials is not None:
        group["trials"] = a.trials
    return {"claim" if a.claim else "run": [group]}


def _confidence(text):
    from fractions import Fraction
    try:
        c = Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"--confidence {text!r} is not a number like 99/100 or 0.99") from None
    if not 0 < c < 1:
        raise ValueError(f"--confidence {text} must lie strictly between 0 and 1")
    return c


def run(a) -> int:
    from ..sweep import SweepSpec
    from ..sweep.trials import preflight
    confidence = _confidence(a.confidence)
    if a.serial and (a.dask or a.workers):
        raise ValueError("--serial runs in this process: drop --workers/--dask")
    d = spec_from_args(a)
    spec = SweepSpec.from_file(a.spec) if d is None else SweepSpec.from_dict(d)
    trials = spec.trials()
    for fn, params, seeds in spec.groups:  # bad names fail before the store file is made
        for p in params:
            preflight(fn, p, seeds[0])
    import sqlite3
    try:
        return _run_store(a, spec, trials, confidence)
    except sqlite3.DatabaseError as e:
        raise ValueError(f"the store {a.store} is damaged ({e}); remove it or give another "
                         f"--store file") from None


def _run_store(a, spec, trials, confidence) -> int:
    from ..presentation.progress import Progress
    from ..sweep import Store, run_sweep
    from ..sweep.executors import WorkerLost
    from ..sweep.summary import BOUND_MIN_TRIALS, summarize
    store = Store(a.store)
    report = None
    try:
        if a.retry_errors:
            if a.summary_only:
                raise ValueError("--retry-errors runs trials: drop --summary-only")
            n = store.forget(trials, "error")
            if not a.json:
                print(f"forgot {n} trial{'s' if n != 1 else ''} that had crashed")
        if not a.summary_only:
            with Progress("sweep", quiet=a.quiet, json=a.json) as prog:
                try:
                    report = run_sweep(spec, store, executor="serial" if a.serial else "pool",
                                       workers=a.workers, dask=a.dask, batch=a.batch,
                                       progress=prog)
                except KeyboardInterrupt:
                    prog.close()
                    stored = store.audit(trials)["stored"]
                    sys.stderr.write(f"exactattn sweep: interrupted: {stored} of {len(trials)} "
                                     f"trials stored in {a.store}; run the same command "
                                     "again to resume\n")
                    return 130
                except WorkerLost as e:
                    sys.stderr.write(f"exactattn sweep: {e}\n")
                    return 1
        audit = store.audit(trials)
        summary = summarize(store.rows(trials), confidence, store,
                            BOUND_MIN_TRIALS if a.bound_min_trials is None
                            else a.bound_min_trials)
    finally:
        store.close()
    if a.plot:
        from ..sweep.plots import write_plots
        paths = write_plots(summary, a.plot)
    else:
        paths = []
    complete = not audit["missing"] and not audit["duplicated"]
    if a.json:
        out = {"trials": len(trials), "stored": audit["stored"], "missing": len(audit["missing"]),
               "duplicated": len(audit["duplicated"]), "skipped_grid_points": spec.skipped,
               "store": a.store, "summary": summary.to_dict(), "plots": paths}
        if report is not None:
            out["run"] = {"new": report.new, "already_stored": report.already,
                          "executor": report.executor, "batch": report.batch,
                          "seconds": round(report.seconds, 3),
                          "executor_startup_seconds": round(report.startup_seconds, 3),
                          "pool_restarts": report.restarts}
        print(json.dumps(out, indent=1))
    else:
        _print(a, spec, trials, audit, report, summary, paths)
    return 0 if complete and summary.ok else 1


def _print(a, spec, trials, audit, report, summary, paths):
    from ..sweep.tables import count_table, failure_table, outcome_table, time_table
    n = len(summary.configs)
    line = f"sweep: {len(trials)} trials, {n} configuration{'s' if n != 1 else ''}"
    if spec.skipped:
        line += f" ({spec.skipped} grid points with H0 < H skipped)"
    line += f"; store {a.store}: {audit['stored']} stored"
    if report is not None and report.new:
        rate = report.new / report.seconds if report.seconds > 0 else 0
        line += (f", {report.new} new in {report.seconds:.1f} s ({rate:.1f} trials/s) on "
                 f"{report.executor}, batches of {report.batch}")
    elif report is not None:
        line += ", nothing left to run"
    if report is not None and report.restarts:
        line += f"; a pool worker died: pool restarted {report.restarts}×"
    print(line)
    if audit["missing"]:
        print(f"INCOMPLETE: {len(audit['missing'])} trials not stored (run again to resume)")
    if audit["duplicated"]:
        print(f"DUPLICATED: {len(audit['duplicated'])} trials stored more than once")
    for table in (failure_table(summary), count_table(summary)):
        if table:
            print()
            print(table)
    if any(c.fn.endswith(":claim_trial") or c.expected_queries is None
           for c in summary.configs):
        print()
        print(outcome_table(summary))
    print()
    print(time_table(summary))
    for p in paths:
        print(f"wrote {p}")
    print()
    print(summary.verdict())

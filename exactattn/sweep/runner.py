"""Running a sweep: pending trials in batches on an executor, each finished batch written to
the store in one transaction (docs/sweeps.md).

* :func:`run_sweep` — a :class:`~exactattn.sweep.spec.SweepSpec` into a store; resumable
  (only trials whose identity key is not stored are run);
* :func:`run_trials` — the function-level API for any pure trial function
  ``fn(params, seed) -> record`` (given as a module-level function or its dotted name
  ``"package.module:function"``): every (params, seed) of ``param_list × seeds``, on any
  executor, returning the records in that order.  This is what a claim's Monte Carlo or a
  count regression calls (P2 probability one; P2 count).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .executors import make_executor
from .progress import Throughput
from .spec import SpecError, SweepSpec, make_trial
from .store import Store
from .trials import dotted_name, preflight

__all__ = ["SweepReport", "batches_of", "default_batch", "run_sweep", "run_trials"]

#: most trials in one task: large enough to amortise a task's overhead (≈ 0.1 ms for the pool,
#: ≈ 1–3 ms for Dask), small enough that an interrupted batch loses little
MAX_BATCH = 64


@dataclass
class SweepReport:
    """What a run did: trials in the spec, how many were already stored, how many it ran."""

    total: int
    already: int
    new: int
    executor: str
    batch: int
    seconds: float
    startup_seconds: float = 0.0
    restarts: int = 0
    audit: dict = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        a = self.audit
        return bool(a) and not a["missing"] and not a["duplicated"]


def default_batch(pending: int, workers: int) -> int:
    """About 16 tasks per worker, at most :data:`MAX_BATCH` trials each."""
    return max(1, min(MAX_BATCH, pending // (16 * max(1, workers)) or 1))


def batches_of(trials, size: int) -> list:
    """Consecutive runs of ≤ ``size`` trials with the same function."""
    out, cur = [], []
    for t in trials:
        if cur and (len(cur) == size or cur[0].fn != t.fn):
            out.append(cur)
            cur = []
        cur.append(t)
    if cur:
        out.append(cur)
    return out


def _execute(trials, store: Store, executor, batch, progress):
    from .. import __version__
    done = store.done()
    pending = [t for t in trials if t.key not in done]
    already = len(trials) - len(pending)
    seen = set()
    for t in pending:
        if t.config not in seen:
            seen.add(t.config)
            preflight(t.fn, t.params, t.seed)
    size = batch or default_batch(len(pending), executor.workers)
    meter = Throughput(len(trials), already)
    count = already
    meter.report(count, progress)
    groups = {}
    for b in batches_of(pending, size):
        groups.setdefault(b[0].fn, []).append(b)
    new = 0
    for fn, bs in groups.items():
        for i, out in executor.map(fn, [[(t.params, t.seed) for t in b] for b in bs],
                                   __version__):
            if out["version"] != __version__:
                raise RuntimeError(f"a worker runs exactattn {out['version']}, this sweep "
                                   f"{__version__}")
            new += store.write(bs[i], out["rows"], __version__)
            count += len(bs[i])
            meter.report(count, progress)
    return already, new, size


def run_sweep(spec, store="sweep.sqlite", executor=None, workers=None, dask=None, batch=None,
              progress=None) -> SweepReport:
    """Run every trial of ``spec`` (a SweepSpec or a spec dict) not yet in ``store`` (a path
    or a :class:`Store`) on ``executor`` ("pool" by default with ``workers`` processes,
    "serial", or ``dask="local"`` / ``"tcp://host:8786"``).  ``progress(text, done, total)``
    receives the rate and ETA.  Ctrl-C stops after closing the executor; the finished batches
    are stored, and running the same spec again resumes."""
    spec = spec if isinstance(spec, SweepSpec) else SweepSpec.from_dict(spec)
    trials = spec.trials()
    own = not isinstance(store, Store)
    db = Store(store) if own else store
    start = time.perf_counter()
    ex = make_executor(executor, workers, dask)
    try:
        already, new, size = _execute(trials, db, ex, batch, progress)
        return SweepReport(len(trials), already, new, ex.describe(), size,
                           time.perf_counter() - start, ex.startup_seconds,
                           getattr(ex, "restarts", 0), db.audit(trials))
    finally:
        if ex is not executor:
            ex.close()
        if own:
            db.close()


def run_trials(fn, param_list, seeds, executor="pool", workers=None, dask=None, batch=None,
               store=None, progress=None) -> list:
    """The records of ``fn(params, seed)`` for every params of ``param_list`` and seed of
    ``seeds`` (params-major order), run on ``executor`` in batches; with ``store`` (a path or
    a Store) finished trials are kept and a rerun resumes.  The records are the trial's own
    dicts without their ``"timing"`` entry (bit-identical on every executor)."""
    name = dotted_name(fn)
    trials = [make_trial(name, p, s) for p in param_list for s in seeds]
    if len({t.key for t in trials}) != len(trials):
        raise SpecError("run_trials: a (params, seed) pair is repeated")
    own = not isinstance(store, Store)
    db = Store(":memory:" if store is None else store) if own else store
    ex = make_executor(executor, workers, dask)
    try:
        _execute(trials, db, ex, batch, progress)
        rows = db.rows(trials)
    finally:
        if ex is not executor:
            ex.close()
        if own:
            db.close()
    if len(rows) != len(trials):
        raise RuntimeError(f"run_trials: {len(trials) - len(rows)} trials have no record")
    return [r["record"] for r in rows]

"""Sweeps (docs/sweeps.md): grids of learner runs, claim checks or any pure trial function
``fn(params, seed) -> record``, run on a local process pool or Dask distributed into a
resumable SQLite store, summarised against the published formulas and the Schwartz–Zippel
bound (P2 count; P2 probability one).

Python API::

    from exactattn.sweep import SweepSpec, run_sweep, run_trials, Store, summarize
    report = run_sweep(SweepSpec.from_file("grid.toml"), store="grid.sqlite")
    records = run_trials("package.module:trial", [{"d": 2}], range(1000), executor="pool")
"""

from .executors import DaskExecutor, PoolExecutor, SerialExecutor, make_executor
from .runner import SweepReport, run_sweep, run_trials
from .spec import SpecError, SweepSpec, Trial, trial_key
from .store import Store, StoreError
from .trials import claim_trial, learner_trial, run_batch

__all__ = ["SweepSpec", "Trial", "SpecError", "trial_key", "Store", "StoreError", "run_sweep",
           "run_trials", "SweepReport", "learner_trial", "claim_trial", "run_batch",
           "SerialExecutor", "PoolExecutor", "DaskExecutor", "make_executor", "summarize"]


def __getattr__(name):
    if name == "summarize":  # imports the genericity polynomials (sympy) on first use
        from .summary import summarize
        return summarize
    raise AttributeError(f"module 'exactattn.sweep' has no attribute {name!r}")

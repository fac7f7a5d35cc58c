"""Trial functions for the sweep tests (imported by name in worker processes: the tests put
this directory on PYTHONPATH for subprocesses)."""

import os
import signal
from pathlib import Path


def square(params, seed):
    """A pure trial: the record depends only on params and seed."""
    return {"outcome": "ok", "value": str(params["a"] * seed * seed), "timing": {"x": 0.5}}


def die_once(params, seed):
    """Kills its own worker process the first time seed == params["victim"] runs (a lost
    worker); the marker file makes it succeed when the pool runs it again."""
    marker = Path(params["marker"])
    if seed == params["victim"] and not marker.exists():
        marker.write_text("died")
        os.kill(os.getpid(), signal.SIGKILL)
    return {"outcome": "ok", "value": str(seed + 1)}


def not_a_dict(params, seed):
    return [seed]


def heads_of(params, seed):
    """A trial whose parameters hold a model object."""
    return {"heads": len(params["model"].heads)}

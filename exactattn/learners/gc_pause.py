"""The cyclic garbage collector paused during a learner run (docs/design.md §2.1): a run
allocates hundreds of thousands of short-lived objects (tokens, answers, field elements) and
almost no reference cycles, so the collector's passes over the young generations cost
5–10 % of a run and free nearly nothing; reference counting still frees everything else at
once.  The collector's state is restored when the run ends, by return or by exception."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from functools import wraps

__all__ = ["gc_paused", "without_gc"]


@contextmanager
def gc_paused():
    """Disable the cyclic collector inside the block; re-enable it after only if it was
    enabled before (a caller's own gc.disable() stands)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def without_gc(run):
    """``run`` with the cyclic collector paused (:func:`gc_paused`)."""
    @wraps(run)
    def paused(*args, **kwargs):
        with gc_paused():
            return run(*args, **kwargs)
    return paused

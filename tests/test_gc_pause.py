"""The cyclic garbage collector is paused during a learner run and restored after it
(exactattn/learners/gc_pause.py)."""

from __future__ import annotations

import gc

import pytest

import exactattn as ea
from exactattn.learners.gc_pause import gc_paused, without_gc
from exactattn.learners.multi_head import learn_multi_head
from exactattn.learners.p2 import recovery


@pytest.fixture
def collector():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_inside_restored_after_even_on_error(collector):
    gc.enable()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError):
        with gc_paused():
            raise KeyError("x")
    assert gc.isenabled()
    gc.disable()                        # a caller's own choice stands
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_a_p2_run_pauses_the_collector(collector, monkeypatch):
    gc.enable()
    seen = []
    real = recovery.check_observed

    def spy(*args):
        seen.append(gc.isenabled())
        return real(*args)
    monkeypatch.setattr(recovery, "check_observed", spy)
    model = ea.random_multi_head(2, 2, seed=0)
    res = learn_multi_head(ea.Oracle(model), 2, heads=2, seed=0, validate=0)
    assert res.model.head_set() == model.head_set()
    assert seen == [False] and gc.isenabled()
    assert without_gc(gc.isenabled)() is False and gc.isenabled()

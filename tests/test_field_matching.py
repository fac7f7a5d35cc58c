"""Matching in F_p (exactattn/learners/p2/recovery.py, ``_recover(in_field=True)`` and
``_attempt``; P2, matching families; docs/design.md §4.3 step 4): the heads matched as images
and lifted afterwards are the heads matched after lifting every family, with a discrete log
only for the d² score families; and whenever the F_p run fails, or its model fails
certification, the run that lifts everything decides, so failures keep their names."""

import random

import pytest

import exactattn as ea
from exactattn.arith import get_backend
from exactattn.errors import AmbiguousMatching, NotAttention
from exactattn.learners.p2 import recovery
from exactattn.learners.p2.engines import exponent_window, make_engine
from exactattn.learners.p2.matching import Close
from exactattn.learners.p2.schedule import Schedule

BE = get_backend("exact")
RECOVER = recovery._recover         # the real run, before any test plants its own


def _run(d, H, seed):
    """(schedule, answers, engine) of one P2 run on a random in-class model."""
    model = ea.random_multi_head(d, H, seed=seed)
    oracle = ea.Oracle(model, backend="exact")
    U, X = recovery.draw_bases(seed, d)
    schedule = Schedule(U, X, H)
    answers = [y for batch in schedule.batches() for y in oracle.ask_many(batch)]
    engine = make_engine(BE, answers, random.Random(seed), 62, 2 * H + 1,
                         window=exponent_window(answers))
    return model, schedule, answers, engine


class _CountingScores:
    """The engine, counting its discrete logs (``score``)."""

    def __init__(self, engine):
        self._engine, self.logs = engine, 0

    def __getattr__(self, name):
        return getattr(self._engine, name)

    def score(self, z):
        self.logs += 1
        return self._engine.score(z)


@pytest.mark.parametrize("d,H,seed", [(2, 2, 0), (3, 2, 1), (3, 3, 2), (4, 3, 3)])
def test_matching_in_field_gives_the_heads_of_lifting_every_family(d, H, seed):
    """The same heads and v (exact equality), the true model's; discrete logs only for the
    d² score families I(u_i, x_j), where lifting every family takes one per pole of the
    2d² − 1 families (a planted F_p run that lifts every pole, or fails and falls back,
    changes the count)."""
    model, schedule, answers, engine = _run(d, H, seed)
    got = {}
    for in_field in (True, False):
        counting = _CountingScores(engine)
        heads, v = recovery._recover(schedule, answers, counting, BE, H, Close(BE),
                                     in_field=in_field)
        got[in_field] = (heads, v, counting.logs)
    assert got[True][:2] == got[False][:2]
    assert got[True][2] == d * d * H
    assert got[False][2] == (2 * d * d - 1) * H
    heads = ea.MultiHeadAttention([ea.AttentionHead(W, vh) for W, vh in got[True][0]])
    assert heads.canonical() == model.canonical()


def _fake_recover(real, fast, slow):
    """``_recover`` whose F_p run (``in_field``) does ``fast`` and whose lifting run does
    ``slow``: each "real" (the true run), "raise" (a named failure) or "wrong" (the true heads
    with every v doubled)."""
    def recover(*args, in_field=False, **kw):
        what = fast if in_field else slow
        if what == "raise":
            raise (AmbiguousMatching if in_field else NotAttention)(f"planted ({in_field})")
        heads, v = real(*args, in_field=in_field, **kw)
        if what == "wrong":
            heads = [(W, [2 * a for a in vh]) for W, vh in heads]
        return heads, v
    return recover


def _attempt(monkeypatch, fast, slow):
    """``_attempt`` at the 62-bit prime on a (2, 2) run with the planted runs; returns its
    outcome (the model, or the failure's class name) and the number of certifications."""
    model, schedule, answers, engine = _run(2, 2, 7)
    transcript = list(zip(schedule.queries(), answers))
    calls = []

    def certify(m):
        calls.append(m)
        return recovery._certify(m, transcript, BE)
    monkeypatch.setattr(recovery, "_recover", _fake_recover(RECOVER, fast, slow))
    try:
        got, _, cert = recovery._attempt(schedule, answers, engine, BE, 2, Close(BE), certify)
    except (NotAttention, AmbiguousMatching) as e:
        return type(e).__name__, len(calls)
    return (got == model.canonical(), cert["certified"]), len(calls)


def test_a_failed_field_run_is_decided_by_the_lifting_run(monkeypatch):
    """The F_p run fails (a coincidence modulo p would): the lifting run's model is certified
    once; when it fails too, its own failure is raised, not the F_p run's."""
    assert _attempt(monkeypatch, "raise", "real") == ((True, True), 1)
    assert _attempt(monkeypatch, "raise", "raise") == ("NotAttention", 0)


def test_a_field_model_failing_certification_is_decided_by_the_lifting_run(monkeypatch):
    """The F_p run's model fails certification: the lifting run's failure is named, its
    different model certified, and the same model is not certified twice."""
    assert _attempt(monkeypatch, "wrong", "raise") == ("NotAttention", 1)
    assert _attempt(monkeypatch, "wrong", "real") == ((True, True), 2)
    assert _attempt(monkeypatch, "wrong", "wrong") == ((False, False), 1)
    assert _attempt(monkeypatch, "real", "raise") == ((True, True), 1)

"""Progress on a terminal for every long run (docs/design.md §7, "Progress"): the reporter's clock,
its width limit, and the ``progress=`` callbacks of every learner and of the noise sweeps."""

from __future__ import annotations

import io
import os
import time

import pytest
from conftest import run_cli

import exactattn as ea
from exactattn.presentation.progress import Progress


class _FakeTTY(io.StringIO):
    def isatty(self):
        return True


class _Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, stage, done, total=None):
        self.calls.append((stage, done, total))

    def stages(self):
        return [s for s, _, _ in self.calls]


def test_the_line_shows_elapsed_time_and_the_clock_moves_without_updates():
    tty = _FakeTTY()
    with Progress("check", stream=tty, interval=0, heartbeat=0.05) as p:
        p("P2-prob1", 1, 3)
        first = tty.getvalue()
        time.sleep(0.4)                      # one long step: no update from the caller
        later = tty.getvalue()
    assert "check · P2-prob1 [" in first and "1/3 · 0.0 s" in first
    assert len(later) > len(first), "the clock thread never redrew the line"
    assert any(f"· 0.{k} s" in later for k in range(1, 10))


def test_no_clock_thread_and_no_output_when_disabled():
    quiet = Progress("x", stream=_FakeTTY(), quiet=True, heartbeat=0.01)
    quiet("stage", 1, 2)
    assert quiet._thread is None and quiet.stream.getvalue() == ""
    quiet.close()


def test_a_cleared_line_stays_erased_until_the_next_update():
    """Results printed between updates (a claim's row) are never torn by the clock."""
    tty = _FakeTTY()
    p = Progress("check", stream=tty, interval=0, heartbeat=0.02)
    p("claim", 0, 2)
    p.clear()
    mark = len(tty.getvalue())
    time.sleep(0.15)
    assert tty.getvalue()[mark:] == ""
    p("claim", 1, 2)
    assert len(tty.getvalue()) > mark
    p.close()


def test_the_line_never_exceeds_the_terminal_width():
    """A wrapped line cannot be erased by a carriage return (the terminal shows garbage)."""
    tty = _FakeTTY()
    with Progress("learn " + "x" * 200, stream=tty, interval=0, heartbeat=0) as p:
        p("queries", 3, 10)
    drawn = [part for part in tty.getvalue().split("\r") if part.strip()]
    assert drawn and all(len(part) <= 79 for part in drawn), [len(d) for d in drawn]


def test_single_head_and_low_rank_report_queries_and_certification():
    d = 3
    rec = _Recorder()
    ea.learn_single_head(ea.Oracle(ea.random_head(d, seed=1)), d, progress=rec)
    queries = [c for c in rec.calls if c[0] == "queries"]
    assert queries[-1] == ("queries", d * d + d, d * d + d) and len(queries) == d * d + d
    assert ("certification", d * d + d, d * d + d) in rec.calls
    assert rec.calls[-1] == ("validation", 4, 4)         # 2H0 + 2 validation queries, H0 = 1
    from exactattn.learners.p1.low_rank import random_low_rank_head, skeleton_queries
    rec = _Recorder()
    ea.learn_low_rank(ea.Oracle(random_low_rank_head(4, 1, seed=2)), 4, rank=1, seed=0,
                      progress=rec)
    assert ("queries", skeleton_queries(4, 1), skeleton_queries(4, 1)) in rec.calls
    assert "certification" in rec.stages()


def test_multi_head_and_transformer_report_their_stages():
    rec = _Recorder()
    ea.learn_multi_head(ea.Oracle(ea.random_multi_head(2, 2, seed=1)), 2, heads=2, seed=0,
                        progress=rec)
    assert {"queries", "recovery", "certification"} <= set(rec.stages())
    rec = _Recorder()
    T = ea.random_transformer(2, 1, 2, seed=1)
    ea.learn_transformer(ea.Oracle(T), 2, heads=1, hidden=2, seed=0, progress=rec)
    stages = rec.stages()
    assert "attention queries" in stages and "FFN" in stages
    assert stages.index("FFN") > stages.index("attention queries")


def test_noise_sweep_reports_every_tau():
    from exactattn.analysis.noise_sweep import parse_taus, sweep_single_head
    rec = _Recorder()
    sweep_single_head(2, parse_taus("1e-6,1e-9"), dps=30, progress=rec)
    assert [(s, n, t) for s, n, t in rec.calls] == [("τ = 1.0e-06", 0, 2), ("τ = 1.0e-09", 1, 2)]


def _stderr_on_a_terminal(args):
    """The command in this process with stderr a pseudo-terminal (conftest ``run_cli``; the
    same with a real `python -m exactattn` subprocess: tests/test_demo.py)."""
    proc = run_cli(args, stderr_tty=True)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
@pytest.mark.parametrize("args,shown", [
    (["learn", "single-head", "--dim", "3"], "learn single-head · queries"),
    (["learn", "low-rank", "--dim", "3", "--rank", "1"], "learn low-rank · queries"),
    (["noise", "single-head", "--dim", "2", "--taus", "1e-6", "--dps", "20"],
     "noise single-head · τ = 1.0e-06"),
])
def test_commands_show_progress_on_a_terminal_only(args, shown):
    rc, out, err = _stderr_on_a_terminal(args)
    assert rc == 0 and shown in err and " s" in err, err
    assert "\r" not in out
    rc, out, err = _stderr_on_a_terminal(args + ["--quiet"])
    assert rc == 0 and err == ""
    proc = run_cli(args)                                         # stderr not a terminal
    assert proc.returncode == 0 and proc.stderr == ""


"""`exactattn demo`: the narrated recovery shows its key steps, --json is one clean
JSON object, and progress output never reaches a pipe or --json mode; plus the progress
reporter and the notebook representations of models and results."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from conftest import drain_tty, run_cli

import exactattn as ea
from exactattn.cli.main import main
from exactattn.presentation.progress import Progress, progress_enabled, track

KEY_LINES = [
    "1. The hidden model: 2 head(s) in dimension d = 2",
    "One copy-count family I(u1, x1)",
    "G(0) = ",
    "G(4) = ",
    "type (2, 2)",
    "→ score u1ᵀW_1 x1 = ",
    "residue c = −v_1·u1 = ",
    "the interpolant reproduces every sample: yes",
    "agree with the hidden model: yes",
    "5. Matching: I(u1+u2, x1)",
    "6. Recovered canonical heads",
    "7. Exact check: 29 queries (P2: 29), max length 5 (P2: 5)",
    "certified: yes",
    "same function as the hidden model (canonical forms equal): yes",
]


def cli(*args):
    """Run the installed command with stdout and stderr as pipes (not terminals)."""
    return subprocess.run([sys.executable, "-m", "exactattn", *args], capture_output=True,
                          text=True, timeout=120)


def test_demo_narrates_key_steps(capsys):
    assert main(["demo", "--dim", "2", "--heads", "2"]) == 0
    out = capsys.readouterr().out
    for line in KEY_LINES:
        assert line in out, line
    assert "z = t^" in out and "[t=e^(1/" not in out  # poles as t^k, suffix stripped


def test_demo_one_dimension_has_no_matching(capsys):
    assert main(["demo", "--dim", "1", "--heads", "2", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "nothing to match" in out and "same function as the hidden model" in out


@pytest.mark.slow
def test_demo_json_is_one_clean_object():
    proc = cli("demo", "--dim", "2", "--heads", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    data = json.loads(proc.stdout)            # the whole stdout is one JSON value
    assert set(data) >= {"model", "schedule", "family", "matching", "recovered", "check"}
    assert data["check"]["same_function"] and data["check"]["certified"]
    assert data["schedule"]["queries"] == data["schedule"]["published_count"] == 29
    assert len(data["family"]["samples"]) == 5 and len(data["family"]["poles"]) == 2
    assert data["recovered"]["W"] == data["model"]["W"]


@pytest.mark.parametrize("args", [
    ["learn", "multi-head", "--dim", "2", "--heads", "2"],
    ["learn", "multi-head", "--dim", "2", "--heads", "2", "--json"],
    ["counts", "--dims", "1-2", "--heads", "1"],
    ["demo", "--dim", "2", "--heads", "1"],
])
def test_no_progress_when_not_a_terminal(args):
    """In this process with stdout and stderr strings, not terminals (conftest ``run_cli``; as
    real pipes of a `python -m exactattn` subprocess: the --json test above)."""
    proc = run_cli(args)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "[####" not in proc.stdout and "\r" not in proc.stdout
    if "--json" in args:
        json.loads(proc.stdout)


def _run_with_tty_stderr(args):
    """stdout piped, stderr a pseudo-terminal: what a user at a terminal sees on stderr."""
    master, slave = os.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "exactattn", *args],
                              stdout=subprocess.PIPE, stderr=slave, timeout=120)
    finally:
        os.close(slave)
    return proc.returncode, proc.stdout.decode(), drain_tty(master)


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
@pytest.mark.slow
def test_progress_on_a_terminal_only_without_json_or_quiet():
    base = ["learn", "multi-head", "--dim", "2", "--heads", "2"]
    rc, out, err = _run_with_tty_stderr(base)
    assert rc == 0 and "learn multi-head · queries" in err and "29/29" in err
    assert "\r" not in out and "[#" not in out                  # stdout stays clean
    for extra in (["--json"], ["--quiet"]):
        rc, out, err = _run_with_tty_stderr(base + extra)
        assert rc == 0 and err == "", (extra, err)
    rc, out, err = _run_with_tty_stderr(base + ["--json"])
    json.loads(out)


class _FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_progress_reporter_draws_and_erases():
    tty = _FakeTTY()
    with Progress("job", stream=tty, interval=0) as p:
        p("queries", 1, 4)
        p("queries", 4, 4)
    text = tty.getvalue()
    assert "job · queries [" in text and "4/4" in text
    assert text.endswith("\r")                                   # the line is erased
    assert not progress_enabled(stream=io.StringIO())
    assert not progress_enabled(json=True, stream=tty) and not progress_enabled(quiet=True,
                                                                                stream=tty)
    silent = io.StringIO()
    assert list(track(range(3), "loop", stream=silent)) == [0, 1, 2]
    assert silent.getvalue() == ""
    tty2 = _FakeTTY()
    assert list(track(["a", "b"], "check", stream=tty2, describe=str)) == ["a", "b"]
    assert "check · b [" in tty2.getvalue()


def test_notebook_representations():
    model = ea.random_multi_head(2, 2, seed=1)
    latex = model._repr_latex_()
    assert latex.startswith("$$") and latex.endswith("$$") and r"\begin{pmatrix}" in latex
    assert r"\tfrac{3}{4}" in latex and "W_{2}" in latex
    assert model.heads[0]._repr_latex_().count(r"\begin{pmatrix}") == 2
    res = ea.learn_multi_head(ea.Oracle(model), 2, heads=2, seed=0)
    md = res._repr_markdown_()
    assert "**LearnResult** multi-head" in md and "29 queries (expected 29)" in md
    assert "certified exactly" in md and r"\begin{aligned}" in md
    assert "'" not in repr(model)                       # entries unquoted
    big = ea.random_multi_head(3, 7, seed=2)
    assert "(3 more)" in repr(big) and len(repr(big)) < 700


def test_one_family_is_singular(capsys):
    """At d = 1 the schedule has one copy-count family: "1 copy-count family", not "families"."""
    assert main(["demo", "--dim", "1", "--heads", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "   1 copy-count family I(u, x) of 2·H0" in out and "1 copy-count families" not in out

"""Ctrl-C and a closed stdout end a run with an exit status and no traceback."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

import importlib

cli = importlib.import_module("exactattn.cli.main")


def _cmd(*args):
    return [sys.executable, "-m", "exactattn", *args]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.slow
def test_ctrl_c_exits_130_quietly():
    # a foreground command in a terminal has SIGINT at its default; a suite started in the
    # background by a non-interactive shell inherits it ignored, so set it as a terminal would
    # a run of well over 3 s (about 10 s at (40, 8); (24, 8) ended in under 4 s once the
    # learner got faster, and a SIGINT during the interpreter's exit kills it, status −2)
    p = subprocess.Popen(_cmd("learn", "multi-head", "--dim", "40", "--heads", "8", "--quiet",
                              "--force"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(3)
    assert p.poll() is None, "the run ended before Ctrl-C could be sent"
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == cli.INTERRUPTED == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


@pytest.mark.slow
def test_broken_pipe_is_silent():
    p = subprocess.run(" ".join(_cmd("check", "--list")) + " | head -c 10", shell=True,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and len(p.stdout) == 10
    assert p.stderr == ""


def test_keyboard_interrupt_inside_a_command_is_status_130(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt
    monkeypatch.setattr(importlib.import_module("exactattn.cli.counts"), "run", interrupted)
    assert cli.main(["counts", "--dims", "1", "--heads", "1"]) == 130
    assert "Traceback" not in capsys.readouterr().err


def test_memory_error_is_one_line_status_1(monkeypatch, capsys):
    def huge(args):
        raise MemoryError
    monkeypatch.setattr(importlib.import_module("exactattn.cli.counts"), "run", huge)
    assert cli.main(["counts", "--dims", "1", "--heads", "1"]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "too large" in err

"""`exactattn sweep`: output, exit statuses, resuming after kill -9 and Ctrl-C in a real
subprocess (docs/sweeps.md)."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from exactattn.cli.main import main
from exactattn.sweep import Store, SweepSpec, run_sweep

TESTS = Path(__file__).parent
N = 120          # trials of the interrupted sweeps (interrupted at ≥ 24 stored)
FLAGS = ["--dim-heads", "2:2", "--box", "1000", "--trials", str(N)]


def _spec_of_flags():
    return SweepSpec.from_dict({"run": [{"learner": "multi-head", "d,H": [[2, 2]],
                                         "box": [1000], "trials": N}]})


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")])
    return env


def _rows(path):
    with sqlite3.connect(path) as db:
        try:
            return db.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
        except sqlite3.OperationalError:
            return 0


@pytest.mark.slow
def test_sweep_prints_the_tables_and_exits_0(tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    rc = main(["sweep", "--dim-heads", "1:1,2:2", "--box", "2,1000", "--trials", "20",
               "--store", str(db), "--serial", "--plot", str(tmp_path / "plots"),
               "--bound-min-trials", "20"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "Schwartz–Zippel" in out and "D/|S|" in out and "Clopper–Pearson" in out
    assert "multi-head d=2 H=2" in out and "query counts" in out and "time per trial" in out
    assert "ok: every configuration holds" in out
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == \
        ["counts.png", "failure_rate.png", "time.png"]
    rc = main(["sweep", "--dim-heads", "1:1,2:2", "--box", "2,1000", "--trials", "20",
               "--store", str(db), "--serial", "--json", "--bound-min-trials", "0"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["run"]["new"] == 0 and data["run"]["already_stored"] == 80
    assert data["stored"] == 80 and data["summary"]["ok"] is True
    for c in data["summary"]["configs"]:
        S = 2 * c["params"]["box"] + 1
        assert c["bound"] == f"{c['D'] // __import__('math').gcd(c['D'], S)}/" \
                             f"{S // __import__('math').gcd(c['D'], S)}"


def test_summary_only_on_an_empty_store_is_incomplete(tmp_path, capsys):
    rc = main(["sweep", "--dim", "2", "--trials", "3", "--store", str(tmp_path / "e.sqlite"),
               "--summary-only"])
    assert rc == 1 and "INCOMPLETE: 3 trials not stored" in capsys.readouterr().out


def test_claim_checks_run_through_the_sweep(tmp_path, capsys):
    rc = main(["sweep", "--claim", "P1-T4.1", "--store", str(tmp_path / "c.sqlite"), "--serial"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert '"claim": "P1-T4.1"' in out and "ok 1" in out


@pytest.mark.parametrize("argv, words", [
    (["sweep"], "give a spec file"),
    (["sweep", "--dim", "2", "--serial", "--workers", "2"], "--serial runs in this process"),
    (["sweep", "--dim", "2", "--confidence", "2"], "strictly between 0 and 1"),
    (["sweep", "--dim", "2", "--seeds", "0-3", "--trials", "4"], "not both"),
    (["sweep", "--dim", "2", "--rank", "1"], "rank does not apply"),
    (["sweep", "--claim", "P1-T4.1", "--dim", "2"], "--claim takes only"),
    (["sweep", "--claim", "NO-SUCH-CLAIM", "--serial"], "unknown claim"),
    (["sweep", "--claim", "P2-count", "--seeds", "0-1"], "takes no seed"),
    (["sweep", "/no/such/spec.toml"], "not found"),
    (["sweep", "--dim", "2,x"], "not a list"),
])
def test_bad_arguments_exit_2_with_one_line(argv, words, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        raise SystemExit(main(argv))
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert words in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "sweep.sqlite").exists()  # bad input leaves no store behind


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The results of an uninterrupted serial run of the same spec."""
    ref = tmp_path_factory.mktemp("ref") / "ref.sqlite"
    spec = _spec_of_flags()
    run_sweep(spec, ref, executor="serial")
    with Store(ref) as db:
        return {r["key"]: r["result"] for r in db.rows(spec.trials())}


def _start(db):
    cmd = [sys.executable, "-m", "exactattn", "sweep", *FLAGS, "--store", str(db),
           "--workers", "2", "--batch", "4", "--quiet"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(), start_new_session=True)


def _wait_for_rows(proc, db, n, limit=120):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if _rows(db) >= n:
            return
        if proc.poll() is not None:
            pytest.fail(f"the sweep ended before it was interrupted: {proc.stderr.read()}")
        time.sleep(0.02)
    pytest.fail("the sweep stored nothing in time")


def _processes_naming(text):
    out = []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and text in (d / "cmdline").read_bytes().decode(errors="replace"):
                out.append(int(d.name))
        except OSError:
            pass
    return out


def _workers_exit(db, limit=15):
    """After a kill -9 of the driver its pool workers must exit by themselves."""
    if not Path("/proc/self/cmdline").exists():
        return
    end = time.monotonic() + limit
    while _processes_naming(str(db)):
        if time.monotonic() > end:
            left = _processes_naming(str(db))
            for pid in left:
                os.kill(pid, signal.SIGKILL)
            pytest.fail(f"pool workers {left} outlived their driver")
        time.sleep(0.1)


def _resume_and_compare(db, want):
    done = subprocess.run([sys.executable, "-m", "exactattn", "sweep", *FLAGS, "--store",
                           str(db), "--workers", "2", "--json", "--quiet"],
                          capture_output=True, text=True, env=_env(), timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["stored"] == N and data["missing"] == 0 and data["duplicated"] == 0
    with Store(db) as store:
        spec = _spec_of_flags()
        got = {r["key"]: r["result"] for r in store.rows(spec.trials())}
        assert store.count() == N  # every trial exactly once, nothing else
        audit = store.audit(spec.trials())
    assert audit["duplicated"] == [] and audit["unexpected"] == []
    assert got == want  # the same results as an uninterrupted run
    return data


@pytest.mark.slow
def test_kill_9_halfway_then_resume(tmp_path, reference):
    db = tmp_path / "k.sqlite"
    proc = _start(db)
    _wait_for_rows(proc, db, 24)
    os.kill(proc.pid, signal.SIGKILL)  # the driver, mid-sweep
    proc.wait(timeout=30)
    _workers_exit(db)
    stored = _rows(db)
    assert 24 <= stored < N, stored  # really interrupted halfway
    data = _resume_and_compare(db, reference)
    assert data["run"]["already_stored"] == stored and data["run"]["new"] == N - stored


@pytest.mark.slow
def test_ctrl_c_then_resume(tmp_path, reference):
    db = tmp_path / "c.sqlite"
    proc = _start(db)
    _wait_for_rows(proc, db, 24)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends on Ctrl-C
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted:" in err and "run the same command again to resume" in err
    assert "Traceback" not in err
    assert _rows(db) < N
    _resume_and_compare(db, reference)


def test_retry_errors_runs_crashed_trials_again(tmp_path, capsys, monkeypatch):
    """Planted crash: the learner raises; --retry-errors after the 'fix' recovers them."""
    from exactattn.sweep import trials as trials_mod
    db = str(tmp_path / "e.sqlite")
    real = trials_mod._learn
    monkeypatch.setattr(trials_mod, "_learn", lambda p, o, s: 1 / 0)
    argv = ["sweep", "--dim", "2", "--heads", "1", "--trials", "3", "--store", db, "--serial"]
    assert main(argv) == 1
    assert "FAIL: 1 configuration" in capsys.readouterr().out
    monkeypatch.setattr(trials_mod, "_learn", real)
    assert main(argv) == 1  # stored crashes are not rerun by default
    capsys.readouterr()
    assert main(argv + ["--retry-errors"]) == 0
    out = capsys.readouterr().out
    assert "forgot 3 trials that had crashed" in out
    with Store(db) as store:
        assert {r["outcome"] for r in store.rows()} == {"recovered"} and store.count() == 3


@pytest.mark.parametrize("new", [0, 40])
def test_the_run_line_says_when_a_pool_worker_died(capsys, new):
    """A run whose pool was restarted says so on its first line, whether it ran new trials or
    found nothing left to run (the warning itself is logged when the worker dies)."""
    from fractions import Fraction
    from types import SimpleNamespace

    from exactattn.cli.sweep import _print
    from exactattn.sweep.runner import SweepReport
    from exactattn.sweep.summary import Summary
    summary = Summary([], Fraction(99, 100), Fraction(1, 100))
    for restarts in (0, 2):
        report = SweepReport(40, 40 - new, new, "pool(2)", 4, 1.0, restarts=restarts)
        _print(SimpleNamespace(store="s.sqlite"), SimpleNamespace(skipped=0), [None] * 40,
               {"stored": 40, "missing": [], "duplicated": []}, report, summary, [])
        first = capsys.readouterr().out.splitlines()[0]
        assert ("pool restarted 2×" in first) == (restarts == 2), first

"""Sweep store faults (docs/sweeps.md): unreadable rows are skipped and reported by row number
(the summary still works), a full disk is named as such, a writer that finds the store locked
waits and retries, and a spec nested too deeply is a bad argument (exit 2)."""

import json
import sqlite3

import pytest

from conftest import run_cli
from exactattn.sweep import Store, StoreError
from exactattn.sweep import store as store_module
from exactattn.sweep.spec import make_trial


def _rows(n, first=0):
    trials = [make_trial("exactattn.sweep.trials.multi_head", {"dim": 1, "heads": 1}, s)
              for s in range(first, first + n)]
    rows = [(json.dumps({"outcome": "recovered", "queries": 3, "max_length": 3}),
             {"seconds": 0.0}) for _ in trials]
    return trials, rows


def test_unreadable_rows_are_skipped_with_their_row_numbers(tmp_path, capsys):
    store = Store(tmp_path / "s.sqlite")
    trials, rows = _rows(4)
    assert store.write(trials, rows, "test") == 4
    store._db.execute("UPDATE trials SET result = 'not json' WHERE rowid IN (2, 4)")
    got = store.rows()
    assert len(got) == 2 and [n for n, _ in store.skipped] == [2, 4]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "2 unreadable row(s) skipped (row 2, 4: JSONDecodeError" in err[0]
    store.close()


def test_a_full_disk_is_named(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    store._db.execute("PRAGMA max_page_count = 8")           # the file cannot grow: "full"
    with pytest.raises(StoreError, match=r"the disk is full .* run the same command again"):
        for k in range(200):
            store.write(*_rows(50, 50 * k), "test")
    store.close()


def test_a_locked_store_is_waited_for(monkeypatch):
    calls = []

    def step():
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")
        return "written"
    monkeypatch.setattr(store_module, "LOCK_WAIT", 5)
    assert store_module._retrying("s.sqlite", step) == "written" and len(calls) == 3
    monkeypatch.setattr(store_module, "LOCK_WAIT", 0)
    calls.clear()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        store_module._retrying("s.sqlite", step)


def test_a_second_writer_waits_for_the_first(tmp_path):
    """One connection holds the write lock; a Store's write waits for it, then succeeds."""
    import threading
    path = tmp_path / "s.sqlite"
    Store(path).close()
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    threading.Timer(0.5, lambda: other.execute("COMMIT")).start()
    store = Store(path)
    assert store.write(*_rows(2), "test") == 2
    store.close()
    other.close()


def test_a_spec_nested_too_deeply_is_a_bad_argument(tmp_path):
    spec = tmp_path / "deep.json"
    spec.write_text('{"runs": ' + "[" * 100000 + "]" * 100000 + "}")
    proc = run_cli(["sweep", str(spec), "--store", str(tmp_path / "s.sqlite")])
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and "is nested too deeply" in proc.stderr

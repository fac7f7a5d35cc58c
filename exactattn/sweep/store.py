"""The sweep store: SQLite (standard library), one row per finished trial, keyed by the
trial's identity (docs/sweeps.md).

Resumable by construction:

* a row is written only when its trial has finished, inside a transaction together with the
  other trials of its batch (a kill -9 mid-write leaves the last committed state: SQLite's
  journal rolls the partial transaction back);
* the primary key is the trial's identity (:func:`~exactattn.sweep.spec.trial_key`), and rows
  are inserted with ``INSERT OR IGNORE``: a trial written twice (a resumed batch, a retried
  task of a lost worker) keeps its first row;
* a resumed sweep asks :meth:`Store.done` which keys exist and runs only the others.

Columns: key, fn, config (canonical JSON of fn and params), seed, outcome, queries,
max_length, seconds (the trial's wall time in its worker), result (the record's canonical
JSON, exact values as strings), timing (JSON), version (exactattn's).
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

__all__ = ["SCHEMA_VERSION", "Store", "StoreError"]

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS trials (
    key        TEXT PRIMARY KEY,
    fn         TEXT NOT NULL,
    config     TEXT NOT NULL,
    seed       TEXT NOT NULL,
    outcome    TEXT,
    queries    INTEGER,
    max_length INTEGER,
    seconds    REAL,
    result     TEXT NOT NULL,
    timing     TEXT NOT NULL,
    version    TEXT NOT NULL,
    finished   REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS trials_config ON trials (config);
CREATE TABLE IF NOT EXISTS cache (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class StoreError(OSError):
    """The store file cannot be used (not SQLite, another schema, unwritable, a full disk)."""


#: a writer that finds the store locked by another waits and retries for this many seconds
#: (SQLite's own busy timeout does not cover every lock, e.g. a change of journal mode)
LOCK_WAIT = 120


def _retrying(path, step):
    """step() once the store is not locked by another writer (retried with back-off for
    LOCK_WAIT seconds); a full disk becomes a StoreError that says so."""
    deadline, pause = time.monotonic() + LOCK_WAIT, 0.05
    while True:
        try:
            return step()
        except sqlite3.OperationalError as e:
            text = str(e)
            if "disk is full" in text or "disk I/O error" in text:
                raise StoreError(f"store {path!r}: the disk is full ({text}); the rows stored "
                                 f"so far are kept: free space and run the same command "
                                 f"again to resume") from None
            if "locked" not in text and "busy" not in text or time.monotonic() > deadline:
                raise
            time.sleep(pause)
            pause = min(2 * pause, 1.0)


class Store:
    """One SQLite file of trial rows (module docstring).  ``Store(":memory:")`` keeps the rows
    in memory (no resuming)."""

    def __init__(self, path="sweep.sqlite"):
        self.path = str(path)
        if self.path != ":memory:" and Path(self.path).is_dir():
            raise StoreError(f"store {self.path!r} is a directory; give a file name")
        self.skipped = []                 # (row number, reason) of rows that cannot be read
        try:
            self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            _retrying(self.path, lambda: self._db.execute("PRAGMA journal_mode=WAL"))
            self._db.execute("PRAGMA synchronous=NORMAL")
            _retrying(self.path, lambda: self._db.executescript(_SCHEMA))
            row = self._db.execute("SELECT value FROM meta WHERE name='schema'").fetchone()
            if row is None:
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)",
                                 (str(SCHEMA_VERSION),))
            elif row[0] != str(SCHEMA_VERSION):
                raise StoreError(f"store {self.path!r} has schema {row[0]}, this exactattn "
                                 f"writes {SCHEMA_VERSION}: use another --store file")
        except sqlite3.DatabaseError as e:
            raise StoreError(f"store {self.path!r} is not a usable SQLite file ({e})") from None

    # ------------------------------------------------------------------ writing
    def write(self, trials, rows, version: str) -> int:
        """Insert the finished ``trials`` with their ``rows`` [(result JSON, timing)] in ONE
        transaction; a key already present is left as it is.  Returns the rows inserted."""
        now = time.time()
        values = []
        for t, (result, timing) in zip(trials, rows, strict=True):
            rec = json.loads(result)
            values.append((t.key, t.fn, t.config, json.dumps(t.seed), _text(rec.get("outcome")),
                           _int(rec.get("queries")), _int(rec.get("max_length")),
                           float(timing.get("seconds", 0.0)), result,
                           json.dumps(timing, sort_keys=True), version, now))
        before = self._db.total_changes

        def insert():
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany("INSERT OR IGNORE INTO trials VALUES "
                                     "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", values)
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
        _retrying(self.path, insert)
        return self._db.total_changes - before

    def forget(self, trials, outcome: str) -> int:
        """Delete the rows of ``trials`` whose outcome is ``outcome`` (e.g. "error" after the
        defect is fixed), so that the next run does them again.  Returns the rows deleted."""
        keys = [(t.key, outcome) for t in trials]
        before = self._db.total_changes
        self._db.execute("BEGIN IMMEDIATE")
        self._db.executemany("DELETE FROM trials WHERE key = ? AND outcome = ?", keys)
        self._db.execute("COMMIT")
        return self._db.total_changes - before

    # ------------------------------------------------------------------ reading
    def done(self) -> set:
        """Keys of every stored trial."""
        return {k for (k,) in self._db.execute("SELECT key FROM trials")}

    def rows(self, trials=None) -> list:
        """Stored rows as dicts (result and timing parsed), restricted to ``trials`` if given,
        in the order of ``trials``."""
        cur = self._db.execute("SELECT rowid, key, fn, config, seed, outcome, queries, "
                               "max_length, seconds, result, timing, version FROM trials")
        names = [c[0] for c in cur.description]
        by_key, self.skipped = {}, []
        for r in cur:
            d = dict(zip(names, r))
            try:
                d["seed"] = json.loads(d["seed"])
                d["record"] = json.loads(d["result"])
                d["timing"] = json.loads(d["timing"])
                if not isinstance(d["record"], dict) or not isinstance(d["timing"], dict):
                    raise ValueError("the record or its timing is not a JSON object")
            except (TypeError, ValueError) as e:    # a row written by hand or damaged
                self.skipped.append((d.pop("rowid"), f"{type(e).__name__}: {str(e)[:60]}"))
                continue
            d.pop("rowid")
            by_key[d["key"]] = d
        if self.skipped:
            import sys
            numbers = ", ".join(str(n) for n, _ in self.skipped[:20])
            sys.stderr.write(f"store {self.path!r}: {len(self.skipped)} unreadable row(s) "
                             f"skipped (row {numbers}{', …' if len(self.skipped) > 20 else ''}: "
                             f"{self.skipped[0][1]}); the summary covers the others\n")
        if trials is None:
            return list(by_key.values())
        return [by_key[t.key] for t in trials if t.key in by_key]

    def count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM trials").fetchone()[0]

    def audit(self, trials) -> dict:
        """Compare the store with the expected ``trials``: keys missing, keys stored that the
        spec does not name, and trials (config, seed) stored more than once under any key — a
        defect that the identity key rules out, checked independently of it."""
        want = {t.key for t in trials}
        keys = {k for (k,) in self._db.execute("SELECT key FROM trials")}
        twice = self._db.execute("SELECT config, seed, COUNT(*) FROM trials GROUP BY config, "
                                 "seed HAVING COUNT(*) > 1").fetchall()
        return {"expected": len(want), "stored": len(want & keys),
                "missing": sorted(want - keys), "unexpected": sorted(keys - want),
                "duplicated": [(c, json.loads(s), n) for c, s, n in twice],
                "rows": len(keys)}

    # ------------------------------------------------------------------ cache
    def cached(self, name: str, compute):
        """A JSON value computed once per store (e.g. a Schwartz–Zippel degree D)."""
        row = self._db.execute("SELECT value FROM cache WHERE name=?", (name,)).fetchone()
        if row is not None:
            return json.loads(row[0])
        value = compute()
        self._db.execute("INSERT OR IGNORE INTO cache VALUES (?, ?)", (name, json.dumps(value)))
        return value

    def close(self):
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _int(x):
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def _text(x):
    return x if isinstance(x, str) else None

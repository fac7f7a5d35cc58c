"""Whole test files run in a second pytest process — a worker on the other core — while this
session runs the rest; the worker's reports are replayed here under the tests' own names.

A small stand-in for pytest-xdist (which the suite does not depend on), made for this suite's
shape: the quick claims already run in a background process (tests/conftest.py), and every
test that needs their outcomes, or an example script's shared run, must stay in the session
that has them, so that nothing runs twice.  :class:`Shard` is the plugin, registered by
tests/conftest.py:

* after collection (:meth:`Shard.pytest_collection_finish`), when the session is the main one
  and its selection is large enough, :func:`plan` picks whole test files that need no
  quick-claim outcome and no shared run (``keep_in_main``), from the measured costs in
  :data:`COST`, about enough to balance the two cores; a file not in :data:`COST` (a new one)
  stays here.  Their items move to the end of the run and a worker starts at once:
  ``python -m pytest -q -p no:cacheprovider FILES`` with :data:`WORKER` set in its
  environment, told the exact node ids to run, importing the very code this session imports
  (its directory first on PYTHONPATH; the worker puts the session's PYTHONPATH back for the
  tests' own subprocesses);
* the worker writes each report (``pytest_report_to_serializable``), each warning and the end
  of each test as a JSON line; nothing else changes there (it never shards again, and needs
  no quick-claims run);
* here, each delegated item's run (:meth:`Shard.pytest_runtest_protocol`) waits for the
  worker's lines of that test and emits them through the item's own hooks (logstart,
  logreport, logfinish): passes, failures with their tracebacks, skips with their reasons
  and durations appear in this session's report, counts and exit status as if run here.  A
  test the worker never finished — it crashed, was killed, or did not collect it — FAILS
  here, with the end of the worker's log.  The worker is killed (its whole process group)
  when the session ends.

Off with EXACTATTN_NO_SHARD=1, and whenever the run is interactive or reconfigured in a way
the worker would not share: --collect-only, --pdb, --trace, -s, or options in
PYTEST_ADDOPTS."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import pytest

#: set in a worker's environment (the directory of its files); read and removed at import
WORKER = "EXACTATTN_SHARD_WORKER"
#: the session's PYTHONPATH, for a worker to put back: "=" + its value, "" when it had none
_PYTHONPATH = "EXACTATTN_SHARD_PYTHONPATH"
#: set to anything but "" or "0": no worker
OFF = "EXACTATTN_NO_SHARD"

_HERE_DIR = os.environ.pop(WORKER, None)
if _HERE_DIR is not None:                  # a worker: the tests see the session's environment
    _was = os.environ.pop(_PYTHONPATH, "")
    if _was.startswith("="):
        os.environ["PYTHONPATH"] = _was[1:]
    else:
        os.environ.pop("PYTHONPATH", None)
#: True in a worker process
IS_WORKER = _HERE_DIR is not None

#: tests/ file → (seconds of its tests not marked slow, how many, seconds of its slow tests,
#: how many): setup + call + teardown of each test as `pytest -q --durations=0` of the whole
#: suite reports them on the idle 2-core machine, sharded (the claims' background run, the
#: worker and this session sharing the two cores; collection not counted).  Only for
#: choosing what to delegate: a stale figure costs balance, never a result.
COST = {
    "test_adapters.py": (0.0, 3, 0.4, 2),
    "test_adapters_torch.py": (2.3, 24, 0.2, 2),
    "test_api.py": (0.1, 5, 1.2, 8),
    "test_backends.py": (0.0, 0, 0.4, 3),
    "test_beyond_economy.py": (0.5, 17, 2.3, 28),
    "test_beyond_floor.py": (0.2, 6, 1.7, 8),
    "test_certs_approx.py": (0.1, 2, 2.6, 23),
    "test_certs_beyond.py": (0.9, 25, 1.3, 13),
    "test_checker_forgeries.py": (0.0, 0, 3.7, 13),
    "test_checker_prices.py": (0.2, 6, 0.0, 0),
    "test_checker_sizes.py": (0.1, 1, 0.4, 8),
    "test_cli_foundation.py": (0.1, 10, 0.8, 1),
    "test_cli_learn.py": (0.4, 10, 0.0, 0),
    "test_cli_models.py": (0.7, 16, 0.0, 0),
    "test_cli_signals.py": (0.0, 0, 4.0, 2),
    "test_core.py": (0.5, 19, 1.6, 4),
    "test_cost_guard.py": (0.1, 7, 4.9, 20),
    "test_decoder.py": (1.0, 8, 0.0, 0),
    "test_decoder_checker.py": (5.9, 19, 0.0, 0),
    "test_decoder_learner.py": (4.9, 34, 0.0, 0),
    "test_decoder_torch.py": (3.1, 8, 0.0, 0),
    "test_demo.py": (0.1, 8, 2.8, 2),
    "test_design.py": (0.9, 18, 0.1, 2),
    "test_design_learner.py": (0.5, 28, 0.4, 2),
    "test_docs_site.py": (0.0, 0, 7.7, 2),
    "test_economy_prob1_trust.py": (0.0, 0, 2.1, 9),
    "test_enclosure.py": (0.6, 6, 0.0, 0),
    "test_examples.py": (0.0, 1, 15.1, 10),
    "test_expfield.py": (0.4, 6, 6.2, 15),
    "test_fibre_checker.py": (1.7, 19, 0.0, 0),
    "test_field_matching.py": (0.0, 4, 0.0, 0),
    "test_forgery_corpus.py": (0.0, 0, 19.9, 62),
    "test_front_door.py": (0.4, 9, 0.3, 2),
    "test_head_count.py": (0.1, 8, 0.0, 0),
    "test_honesty.py": (0.7, 21, 2.2, 8),
    "test_hostile.py": (0.2, 5, 0.0, 0),
    "test_inexact.py": (0.8, 22, 0.0, 0),
    "test_interpolation.py": (0.6, 9, 0.0, 0),
    "test_layers.py": (0.0, 0, 2.9, 5),
    "test_limits.py": (0.1, 5, 4.3, 2),
    "test_low_rank.py": (0.4, 12, 1.3, 1),
    "test_matching.py": (0.4, 1, 0.0, 0),
    "test_model_files.py": (0.2, 8, 0.0, 0),
    "test_models.py": (0.2, 3, 0.8, 5),
    "test_multi_head.py": (0.3, 20, 1.6, 31),
    "test_multiplicities.py": (0.3, 5, 0.0, 0),
    "test_named_failures.py": (0.4, 3, 0.0, 0),
    "test_noise.py": (0.4, 14, 2.1, 6),
    "test_notebooks.py": (0.0, 1, 10.1, 6),
    "test_oracle.py": (0.0, 2, 0.0, 0),
    "test_phrasings.py": (0.3, 7, 0.0, 0),
    "test_power.py": (0.2, 6, 0.8, 3),
    "test_progress.py": (0.7, 7, 0.0, 0),
    "test_proofs_checks.py": (0.0, 1, 2.0, 13),
    "test_proofs_checks_evidence.py": (0.3, 8, 10.6, 18),
    "test_proofs_checks_rules.py": (0.2, 10, 1.5, 6),
    "test_proves.py": (0.1, 1, 0.1, 1),
    "test_rational_vectors.py": (0.2, 1, 0.0, 0),
    "test_readme.py": (1.1, 4, 23.5, 16),
    "test_shard.py": (0.0, 0, 1.9, 2),
    "test_single_head.py": (0.3, 9, 0.6, 1),
    "test_sweep.py": (0.3, 13, 0.4, 4),
    "test_sweep_cli.py": (0.1, 3, 5.0, 3),
    "test_sweep_dask.py": (0.0, 0, 2.3, 3),
    "test_sweep_store_faults.py": (0.8, 5, 0.0, 0),
    "test_tools.py": (0.0, 1, 0.0, 0),
    "test_transformer.py": (0.2, 8, 3.7, 18),
    "test_typing.py": (0.1, 2, 3.7, 2),
    "test_unique.py": (0.2, 8, 0.0, 0),
}
#: files that always stay in the main session, whatever they need
NEVER = {
    # plants a module inside exactattn/ for a moment: nothing may walk the package meanwhile
    "test_layers.py",
    # walk the repository's files (test_layers' planted module must not be half there)
    "test_phrasings.py", "test_readme.py",
}
#: a test of a file not in COST, or where a count is 0 (seconds, only for the total)
UNKNOWN = 0.05
#: the worker's own start: interpreter, imports, collection of its files (seconds)
START = 3.0
#: the share of the total the worker takes beyond an even split (see :func:`plan`)
LEAN = 0.04
#: no worker unless at least this much (seconds) would move to it
MIN_DELEGATED = 20.0
#: how many characters of the worker's log a test it never finished shows
TAIL = 3000


def estimate(item, cost=COST):
    """The seconds `item` is expected to take (its file's mean for tests alike: slow or not)."""
    row = cost.get(Path(str(item.path)).name)
    if row is None:
        return UNKNOWN
    fast_s, fast_n, slow_s, slow_n = row
    if item.get_closest_marker("slow") is not None:
        return slow_s / slow_n if slow_n else UNKNOWN
    return fast_s / fast_n if fast_n else UNKNOWN


def plan(items, keep_in_main, cost=COST, never=NEVER, start=START,
         min_delegated=MIN_DELEGATED):
    """The whole files (their paths, in collection order) whose selected items to delegate:
    files named in `cost`, not in `never`, none of whose items `keep_in_main`; the largest
    first while the worker's share — its `start` and the files so far — stays at most what
    remains here.  (The claims' background run, when there is one, slows both processes
    alike: three processes on two cores; the figures in `cost` were measured so.)  [] when
    less than `min_delegated` seconds would move."""
    files, blocked, order = {}, set(), []
    for item in items:
        path = Path(str(item.path))
        if path not in files:
            files[path] = 0.0
            order.append(path)
        files[path] += estimate(item, cost)
        if path.name not in cost or path.name in never or keep_in_main(item):
            blocked.add(path)
    total = sum(files.values())
    # worker: start + D = here: total − D, leaning LEAN of the total towards the worker (the
    # session also waits for the claims' background run and its own shared runs: measured
    # 4–24 s behind an even split)
    target = (total - start) / 2 + LEAN * total
    chosen, moved = set(), 0.0
    for path in sorted((p for p in order if p not in blocked), key=lambda p: -files[p]):
        if moved + files[path] <= target:
            chosen.add(path)
            moved += files[path]
    if moved < min_delegated:
        return []
    return [p for p in order if p in chosen]


def _forwarded(config):
    """The options of this session that change how a test runs or reports its failure, for
    the worker (reporting-only options — -q, -r, --durations, --junitxml — act here)."""
    opt, args = config.option, []
    if getattr(opt, "tbstyle", "auto") != "auto":
        args.append(f"--tb={opt.tbstyle}")
    if getattr(opt, "showlocals", False):
        args.append("--showlocals")
    if getattr(opt, "runxfail", False):
        args.append("--runxfail")
    for w in getattr(opt, "pythonwarnings", None) or ():
        args += ["-W", w]
    for o in getattr(opt, "override_ini", None) or ():
        args += ["-o", o]
    for p in getattr(opt, "plugins", None) or ():
        if p != "no:cacheprovider":
            args += ["-p", p]
    for dest, flag in (("hypothesis_profile", "--hypothesis-profile"),
                       ("hypothesis_verbosity", "--hypothesis-verbosity"),
                       ("hypothesis_seed", "--hypothesis-seed")):
        value = getattr(opt, dest, None)
        if value is not None:
            args.append(f"{flag}={value}")
    for dest, flag in (("hypothesis_show_statistics", "--hypothesis-show-statistics"),
                       ("hypothesis_explain", "--hypothesis-explain")):
        if getattr(opt, dest, False):
            args.append(flag)
    return args


def _category(name):
    module, _, qual = name.rpartition(".")
    try:
        obj = sys.modules.get(module) or __import__(module)
        for part in qual.split("."):
            obj = getattr(obj, part)
        if isinstance(obj, type) and issubclass(obj, Warning):
            return obj
    except Exception:
        pass
    return UserWarning


class Shard:
    """The plugin (see the module's text).  `keep_in_main(item)`: the item must run in the main
    session.  `cost`, `never`, `start`, `min_delegated`: as in
    :func:`plan`."""

    def __init__(self, keep_in_main, cost=COST, never=NEVER, start=START,
                 min_delegated=MIN_DELEGATED, worker=IS_WORKER):
        self.keep_in_main = keep_in_main
        self.worker = worker       # fixed when made: a test may change the module's globals
        self.cost, self.never, self.start = cost, never, start
        self.min_delegated = min_delegated
        self.delegated = {}        # main: nodeid → None, in run order
        self.proc = self.dir = self.log = self.reader = None
        self.lines = {}            # nodeid → [report data], "warnings"
        self.finished = set()
        self.running = None        # the test the worker last started and has not finished
        self.buffer = b""
        self.out = None            # worker: the reports file
        self.wanted = None         # worker: nodeids to run, in order
        self.config = None

    # ---------------------------------------------------------------- main session
    def wanted_here(self, session):
        config = session.config
        opt = config.option
        return not (self.worker or os.environ.get(OFF, "") not in ("", "0")
                    or opt.collectonly or getattr(opt, "usepdb", False)
                    or getattr(opt, "trace", False) or getattr(opt, "capture", "fd") == "no"
                    or os.environ.get("PYTEST_ADDOPTS", "").strip())

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session):
        if self.worker:
            return
        if not self.wanted_here(session) or not session.items:
            return
        files = plan(session.items, self.keep_in_main, self.cost, self.never, self.start,
                     self.min_delegated)
        if not files:
            return
        chosen = set(files)
        moved = [it for it in session.items if Path(str(it.path)) in chosen]
        session.items[:] = [it for it in session.items if Path(str(it.path)) not in chosen] \
            + moved
        self.delegated = dict.fromkeys(it.nodeid for it in moved)
        self._start_worker(session.config, files)

    def _start_worker(self, config, files):
        import importlib.util
        self.dir = Path(tempfile.mkdtemp(prefix="exactattn-shard-"))
        (self.dir / "wanted.json").write_text(json.dumps(list(self.delegated)),
                                              encoding="utf-8")
        (self.dir / "reports.jsonl").touch()
        self.reader = open(self.dir / "reports.jsonl", "rb")
        self.log = open(self.dir / "log.txt", "w+", encoding="utf-8")
        env = dict(os.environ)
        env[WORKER] = str(self.dir)
        had = os.environ.get("PYTHONPATH")
        env[_PYTHONPATH] = "" if had is None else "=" + had
        roots = dict.fromkeys(str(Path(spec.origin).resolve().parent.parent)
                              for spec in map(importlib.util.find_spec,
                                              ("exactattn", "proofs_checks"))
                              if spec is not None and spec.origin)
        env["PYTHONPATH"] = os.pathsep.join([*roots, os.environ.get("PYTHONPATH", "")])
        env.pop("PYTEST_ADDOPTS", None)
        args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                f"--rootdir={config.rootpath}", f"--basetemp={self.dir / 'tmp'}"]
        if config.inipath is not None:
            args.append(f"--config-file={config.inipath}")
        args += _forwarded(config) + [str(p) for p in files]
        self.proc = subprocess.Popen(args, cwd=config.invocation_params.dir, env=env,
                                     stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)

    def _read(self):
        chunk = self.reader.read()
        if not chunk:
            return False
        self.buffer += chunk                 # bytes: a line is decoded once it is whole
        *whole, self.buffer = self.buffer.split(b"\n")
        for line in whole:
            if not line.strip():
                continue
            row = json.loads(line.decode("utf-8"))
            nodeid = row["nodeid"]
            if row["kind"] == "start":
                self.running = nodeid
            elif row["kind"] == "finish":
                self.finished.add(nodeid)
                self.running = None
            else:
                self.lines.setdefault(nodeid, []).append(row)
        return True

    def _wait_for(self, nodeid):
        """The worker's lines for `nodeid`; True when it finished that test, False if the
        worker ended without."""
        while nodeid not in self.finished:
            if self._read():
                continue
            if self.proc.poll() is not None:
                while self._read():
                    pass
                return nodeid in self.finished
            time.sleep(0.02)
        return True

    def _tail(self):
        self.log.flush()
        self.log.seek(0)
        text = self.log.read()
        self.log.seek(0, 2)
        return text[-TAIL:]

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        if item.nodeid not in self.delegated:
            return None
        config, ihook = item.config, item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        finished = self._wait_for(item.nodeid)
        whens, setup = [], None
        for row in self.lines.pop(item.nodeid, []):
            if row["kind"] == "warning":
                message = warnings.WarningMessage(row["message"], _category(row["category"]),
                                                  row["filename"], row["lineno"])
                config.hook.pytest_warning_recorded.call_historic(kwargs=dict(
                    warning_message=message, when="runtest", nodeid=item.nodeid,
                    location=None))
                continue
            data = row["report"]
            for key in ("longrepr", "location"):        # JSON has no tuples: a skip's
                if isinstance(data.get(key), list):     # (path, line, reason), a location
                    data[key] = tuple(data[key])
            data["user_properties"] = [tuple(p) for p in data.get("user_properties") or ()]
            report = config.hook.pytest_report_from_serializable(config=config, data=data)
            whens.append(report.when)
            setup = report.outcome if report.when == "setup" else setup
            ihook.pytest_runtest_logreport(report=report)
        # whole: set up, then run unless the set-up failed or skipped, then torn down
        whole = "teardown" in whens and ("call" in whens or setup in ("failed", "skipped"))
        if not finished or not whole:
            from _pytest.reports import TestReport
            code = self.proc.poll()
            when = "teardown" if "call" in whens else "call"
            where = f" (while running {self.running})" if self.running else ""
            why = (f"exited with status {code}{where} without finishing this test"
                   if not finished else f"finished this test with reports of {whens} only")
            now = time.time()
            report = TestReport(
                item.nodeid, item.location, {k: 1 for k in item.keywords}, "failed",
                f"the shard worker (tests/_shard.py) {why}; the end of its log:\n"
                f"{self._tail()}", when, start=now, stop=now)
            ihook.pytest_runtest_logreport(report=report)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    def stop(self):
        if self.proc is not None:
            if self.proc.poll() is None:          # the session ended first (-x, Ctrl-C)
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    self.proc.kill()
            self.proc.wait()
            self.proc = None
        for f in (self.log, self.reader):
            if f is not None:
                f.close()
        self.log = self.reader = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def pytest_sessionfinish(self, session):
        if self.worker:
            if self.out is not None:
                self.out.close()
                self.out = None
            return
        self.stop()

    def pytest_unconfigure(self, config):
        if not self.worker:
            self.stop()

    # ---------------------------------------------------------------- worker
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        """In a worker: exactly the node ids the session delegated, in its order."""
        if not self.worker:
            return
        here = Path(_HERE_DIR)
        self.wanted = json.loads((here / "wanted.json").read_text(encoding="utf-8"))
        self.out = open(here / "reports.jsonl", "a", encoding="utf-8")
        self.config = config
        rank = {nodeid: k for k, nodeid in enumerate(self.wanted)}
        keep = sorted((it for it in items if it.nodeid in rank), key=lambda it: rank[it.nodeid])
        dropped = [it for it in items if it.nodeid not in rank]
        missing = set(rank) - {it.nodeid for it in keep}
        if missing:
            print(f"shard worker: not collected here: {sorted(missing)}", file=sys.stderr)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep

    def _write(self, row):
        if self.out is not None:
            self.out.write(json.dumps(row) + "\n")
            self.out.flush()

    def pytest_runtest_logreport(self, report):
        if self.worker and self.config is not None:
            data = self.config.hook.pytest_report_to_serializable(config=self.config,
                                                                   report=report)
            self._write({"kind": "report", "nodeid": report.nodeid, "report": data})

    def pytest_runtest_logstart(self, nodeid):
        if self.worker:
            self._write({"kind": "start", "nodeid": nodeid})

    def pytest_runtest_logfinish(self, nodeid):
        if self.worker:
            self._write({"kind": "finish", "nodeid": nodeid})

    def pytest_warning_recorded(self, warning_message, when, nodeid):
        if self.worker and when == "runtest" and nodeid:
            category = warning_message.category
            self._write({"kind": "warning", "nodeid": nodeid,
                         "message": str(warning_message.message),
                         "category": f"{category.__module__}.{category.__qualname__}",
                         "filename": warning_message.filename,
                         "lineno": warning_message.lineno})

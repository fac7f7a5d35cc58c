"""The suite's shard worker (tests/_shard.py): which files it takes, and that what it runs is
reported by the main session under the tests' own names — a failure as a failure, a skip
with its reason — and that a test the worker never finished fails there.  The sessions are
real pytest runs of planted files in a temporary directory."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

import _shard

TESTS = Path(__file__).resolve().parent


def _item(path, slow=False, main=False):
    return SimpleNamespace(path=Path(path), main=main,
                           get_closest_marker=lambda name: object()
                           if name == "slow" and slow else None)


def test_plan_takes_whole_files_that_need_nothing_of_the_session_largest_first():
    cost = {"test_big.py": (0.0, 0, 40.0, 4), "test_mid.py": (20.0, 2, 0.0, 0),
            "test_claims.py": (0.0, 0, 20.0, 3), "test_small.py": (1.0, 1, 0.0, 0),
            "test_never.py": (0.0, 0, 30.0, 1)}
    items = ([_item("/t/test_big.py", slow=True) for _ in range(4)]
             + [_item("/t/test_mid.py") for _ in range(2)]
             # one test of this file needs the session's claims: the whole file stays
             + [_item("/t/test_claims.py", slow=True), _item("/t/test_claims.py", slow=True),
                _item("/t/test_claims.py", slow=True, main=True)]
             + [_item("/t/test_small.py"), _item("/t/test_new.py"),
                _item("/t/test_never.py", slow=True)])
    keep = lambda item: item.main  # noqa: E731
    # 40 + 20 + 20 + 1 + 0.05 (unknown) + 30 s here: the worker takes at most (111 − 2) / 2
    files = _shard.plan(items, keep, cost=cost, never={"test_never.py"}, start=2,
                        min_delegated=10)
    assert [p.name for p in files] == ["test_big.py", "test_small.py"]
    # not worth a worker: nothing moves
    assert _shard.plan(items, keep, cost=cost, never={"test_never.py"}, start=2,
                       min_delegated=45) == []
    # a selection of one file's fast tests only: its figures for fast tests count
    assert _shard.estimate(_item("/t/test_mid.py"), cost) == 10.0
    assert _shard.estimate(_item("/t/test_new.py"), cost) == _shard.UNKNOWN


PLANTED_CONFTEST = """
    import _shard

    # test_here.py stays (its tests "need the session"), test_away.py goes to the worker
    SHARD = _shard.Shard(lambda item: item.path.name == "test_here.py",
                         cost={"test_here.py": (10.0, 1, 0.0, 0),
                               "test_away.py": (9.0, 4, 0.0, 0)},
                         never=set(), start=0.0, min_delegated=1.0)


    def pytest_configure(config):
        config.pluginmanager.register(SHARD, "exactattn-shard")
"""


def _session(tmp_path, away, *args):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(textwrap.dedent(PLANTED_CONFTEST))
    (tmp_path / "test_here.py").write_text(textwrap.dedent("""
        import os

        def test_here():
            open("pids.txt", "a").write(f"here {os.getpid()}\\n")
    """))
    (tmp_path / "test_away.py").write_text(textwrap.dedent(away))
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_ADDOPTS", _shard.WORKER, _shard.OFF)}
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")])
    env["PLANTED_PYTHONPATH"] = env["PYTHONPATH"]
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
                           *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.slow
def test_the_workers_failures_skips_and_passes_are_the_sessions(tmp_path):
    proc = _session(tmp_path, """
        import os
        import pytest

        def test_passes():
            open("pids.txt", "a").write(f"away {os.getpid()}\\n")
            # the tests see the session's environment, not the worker's
            assert os.environ["PYTHONPATH"] == os.environ["PLANTED_PYTHONPATH"]
            assert not any(k.startswith("EXACTATTN_SHARD") for k in os.environ)

        def test_fails():
            assert 1 + 1 == 3, "planted failure"

        @pytest.mark.skip(reason="planted skip reason")
        def test_skipped():
            pass

        def test_warns():
            import warnings
            warnings.warn("planted warning")
    """)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "1 failed, 3 passed, 1 skipped, 1 warning" in out, out
    assert "FAILED test_away.py::test_fails - AssertionError: planted failure" in out, out
    assert "planted failure" in out.split("= FAILURES =")[1]       # its traceback, here
    assert "SKIPPED [1] test_away.py:" in out and "planted skip reason" in out, out
    assert "PASSED test_away.py::test_passes" in out and "planted warning" in out, out
    pids = dict(line.split() for line in (tmp_path / "pids.txt").read_text().splitlines())
    assert pids["away"] != pids["here"]                  # it really ran in another process
    assert list(tmp_path.glob(".pytest_cache")) == []


@pytest.mark.slow
def test_a_test_the_worker_never_finished_fails(tmp_path):
    proc = _session(tmp_path, """
        import os
        import signal

        import pytest

        def test_before():
            pass

        @pytest.fixture
        def mute():
            import conftest
            yield conftest.SHARD
            conftest.SHARD.worker = True

        def test_hides_its_result(mute):
            mute.worker = False      # its call is not reported; its set-up and teardown are

        def test_dies():
            os.kill(os.getpid(), signal.SIGKILL)

        def test_after():
            pass
    """)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "3 failed, 2 passed" in out, out
    assert "PASSED test_away.py::test_before" in out
    for name in ("test_hides_its_result", "test_dies", "test_after"):
        assert f"FAILED test_away.py::{name} - the shard worker" in out, out
    assert "finished this test with reports of ['setup', 'teardown'] only" in out
    assert "exited with status -9 (while running test_away.py::test_dies) without finishing" \
        in out, out


def test_no_worker_where_the_run_is_interactive_or_reconfigured(monkeypatch):
    """--collect-only, --pdb, --trace, -s, EXACTATTN_NO_SHARD=1 and PYTEST_ADDOPTS: every
    test runs in the session."""
    monkeypatch.delenv(_shard.OFF, raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    plain = dict(collectonly=False, usepdb=False, trace=False, capture="fd")
    shard = _shard.Shard(lambda item: False, worker=False)

    def wanted(**option):
        return shard.wanted_here(SimpleNamespace(config=SimpleNamespace(
            option=SimpleNamespace(**{**plain, **option}))))
    assert wanted()
    for name, value in (("collectonly", True), ("usepdb", True), ("trace", True),
                        ("capture", "no")):
        assert not wanted(**{name: value}), name
    monkeypatch.setenv("PYTEST_ADDOPTS", "--junitxml=x.xml")
    assert not wanted()
    monkeypatch.delenv("PYTEST_ADDOPTS")
    monkeypatch.setenv(_shard.OFF, "1")
    assert not wanted()
    monkeypatch.setenv(_shard.OFF, "0")
    assert wanted()

import contextlib
import copy
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import _shard  # noqa: E402  (first: a shard worker restores the session's environment)

os.environ.setdefault("SYMPY_GROUND_TYPES", "python")

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", max_examples=60, deadline=None)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# ------------------------------------------------------------------ quick claims, run once
#: claim id → its Outcome at quick sizes: each claim runs at most once per session, whoever
#: asks first (a test, the quick check, a command of the docs) — in this process, or in the
#: background run of every claim (:func:`_start_background`) when the selected tests need them all
_QUICK = {}
#: the background run of tests/quick_claims.py: {"proc", "dir", "log"}, "done" once read
_BACKGROUND = {}


def quick_outcome(claim_id):
    """``run_claim(claim, quick=True)``, once per claim per session (the same Outcome after)."""
    from proofs_checks.registry import get_claim, run_claim
    _collect_background()
    claim = get_claim(claim_id)
    if claim.id not in _QUICK:
        _QUICK[claim.id] = run_claim(claim, quick=True)
    return _QUICK[claim.id]


def _start_background():
    """Start ``python tests/quick_claims.py`` (every claim at its quick sizes, each certificate
    verified) in a fresh directory, importing the very proofs_checks and exactattn this session
    imports (their directory first on PYTHONPATH); its results are read at the first
    :func:`quick_outcome`."""
    import tempfile
    import proofs_checks
    where = Path(tempfile.mkdtemp(prefix="exactattn-quick-claims-"))
    log = open(where / "log.txt", "w+", encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(proofs_checks.__file__).parent.parent),
                                         env.get("PYTHONPATH", "")])
    proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("quick_claims.py")),
                             str(where / "outcomes.pickle")], cwd=where, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    _BACKGROUND.update(proc=proc, dir=where, log=log)


def _collect_background():
    """Wait for the background run (if any) and take its outcomes: each becomes the
    session's Outcome of its claim, and each certificate the checker accepted there counts
    as verified once (:func:`verified_once`: same checker, same JSON text)."""
    import pickle
    from proofs_checks.registry import Outcome, get_claim
    if "proc" not in _BACKGROUND or _BACKGROUND.get("done"):
        return
    _BACKGROUND["done"] = True
    proc, where, log = _BACKGROUND["proc"], _BACKGROUND["dir"], _BACKGROUND["log"]
    code = proc.wait(timeout=1800)
    log.seek(0)
    text = log.read()
    result = where / "outcomes.pickle"
    assert code == 0 and result.exists(), f"tests/quick_claims.py exited {code}:\n{text[-3000:]}"
    with open(result, "rb") as f:
        rows = pickle.load(f)
    for claim_id, verdict, seconds, checked in rows:
        _QUICK.setdefault(claim_id, Outcome(get_claim(claim_id), "quick", verdict, seconds))
        if isinstance(checked, list):
            as_read = json.loads(json.dumps(verdict.certificate, ensure_ascii=False))
            _ACCEPTED.setdefault(json.dumps(as_read, ensure_ascii=False), checked)


def _stop_background():
    import shutil
    if "proc" in _BACKGROUND:
        if _BACKGROUND["proc"].poll() is None:          # the session ended first (-x, Ctrl-C)
            _BACKGROUND["proc"].kill()
            _BACKGROUND["proc"].wait()
        _BACKGROUND["log"].close()
        shutil.rmtree(_BACKGROUND["dir"], ignore_errors=True)


@contextlib.contextmanager
def replayed_quick_claims():
    """Within: ``proofs_checks.run_claim(claim, quick=True)`` — what `exactattn check --quick`
    calls — answers with a copy of the session's outcome of that claim (:func:`quick_outcome`,
    which runs it the first time), so a command that checks claims prints, verifies and
    writes exactly what it would, without running a claim a second time."""
    import proofs_checks
    real = proofs_checks.run_claim

    def replay(claim, quick=True):
        return copy.deepcopy(quick_outcome(claim.id)) if quick else real(claim, quick)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(proofs_checks, "run_claim", replay)
        yield


#: JSON text of a certificate the independent checker accepted in this session → its findings
_ACCEPTED = {}


@contextlib.contextmanager
def verified_once():
    """Within: the independent checker's ``verify`` (as `exactattn check`, ``verify.main`` and
    ``python -m proofs_checks.verify`` call it) verifies each distinct certificate once per
    session: the same JSON object again gets the findings of its first verification, by the
    same code.  Anything else — a changed digit, another file — is verified in full; strict
    parsing of a file's bytes always runs.  Only where a test asks for it, never under a
    planted bug in the checker."""
    import proofs_checks.verify as public
    module = sys.modules["proofs_checks.checker.verify"]
    real = module.verify
    if getattr(real, "memoized", False):          # nested: already in place
        yield
        return

    def verify(cert):
        key = json.dumps(cert, ensure_ascii=False)
        if key not in _ACCEPTED:
            _ACCEPTED[key] = real(cert)           # a rejection raises and is not stored
        return list(_ACCEPTED[key])
    verify.memoized = True
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(module, "verify", verify)
        mp.setattr(public, "verify", verify)
        yield


def verify_once(cert):
    """The independent checker's findings on `cert` (a parsed certificate), verified in full
    the first time this session sees that certificate (:func:`verified_once`): for the tests
    that check a session certificate *as written* is accepted."""
    with verified_once():
        return sys.modules["proofs_checks.checker.verify"].verify(cert)


def run_cli(argv, cwd=".", stderr_tty=False):
    """``exactattn ARGV`` in this process, as a shell in `cwd` would run it (MPLBACKEND=Agg,
    stdout and stderr captured; argparse's exits become the exit status): a CompletedProcess.
    With `stderr_tty` stderr is a pseudo-terminal (what a user at a terminal has), read back
    after the run.  The console script adds only the interpreter's start-up, tested apart
    (tests/test_readme.py, tests/test_cli_foundation.py, tests/test_demo.py)."""
    if stderr_tty:
        master, slave = os.openpty()
        with os.fdopen(slave, "w", encoding="utf-8") as tty:
            proc = _run_cli(argv, cwd, tty)
        proc.stderr = drain_tty(master)
        return proc
    return _run_cli(argv, cwd, io.StringIO())


def drain_tty(master) -> str:
    """Everything written to a pseudo-terminal whose other end is closed, as text; closes
    ``master``."""
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:                          # EIO once the terminal is drained
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return b"".join(chunks).decode(errors="replace")


def _run_cli(argv, cwd, err):
    from exactattn.cli.main import main
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd)
        mp.setenv("MPLBACKEND", "Agg")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(argv))
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
                if isinstance(e.code, str):
                    err.write(e.code + "\n")
    err.flush()
    return subprocess.CompletedProcess(["exactattn", *argv], code, out.getvalue(),
                                       err.getvalue() if isinstance(err, io.StringIO) else None)


@pytest.fixture(scope="session")
def quick_claim():
    """A claim's quick run (it must hold): the session's one Outcome of that claim."""
    def run(claim_id):
        out = quick_outcome(claim_id)
        assert out.status == "ok", out.verdict.details
        return out
    return run


@pytest.fixture(scope="session")
def quick_certificate(quick_claim):
    """A claim's quick certificate as the JSON a file would hold, a fresh copy per call (a
    test that tampers with it cannot alter another's)."""
    return lambda claim_id: json.loads(json.dumps(quick_claim(claim_id).verdict.certificate))


@pytest.fixture
def replayed_claims():
    """For one test: `exactattn check --quick` (and ``proofs_checks.run_claim``) answer from
    the session's quick outcomes (:func:`replayed_quick_claims`), certificates verified once
    (:func:`verified_once`)."""
    with replayed_quick_claims(), verified_once():
        yield


@pytest.fixture(scope="session")
def quick_check(tmp_path_factory):
    """The README's `exactattn check --quick`, once per session, in a fresh directory (its
    certificates go to DIR/certificates): the command's own code in this process (its table,
    its in-process verification of every certificate, the files it writes) on the session's
    claim outcomes, so no claim runs twice.  (CompletedProcess, DIR), shared by the README's
    command test and the quick-certificate tests.  The console script itself is run by
    tests/test_readme.py::test_the_console_scripts_run."""
    cwd = tmp_path_factory.mktemp("quick-check")
    with replayed_quick_claims(), verified_once():
        proc = run_cli(["check", "--quick"], cwd)
    return proc, cwd


ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run_script(path, args, cwd):
    """``python PATH ARGS`` in this process, as the interpreter would run it from `cwd`: the
    file as ``__main__`` (runpy), its own directory first on sys.path, sys.argv, MPLBACKEND=Agg,
    stdout and stderr captured; SystemExit becomes the exit status and an exception exit status
    1 with its traceback on stderr.  Afterwards the modules imported from the script's
    directory (e.g. examples/_common.py) are forgotten and matplotlib's figures closed, so one
    script cannot lend another anything.  A CompletedProcess.  (The interpreter's start-up,
    the only difference, is tested with a real subprocess in tests/test_examples.py.)"""
    import runpy
    import traceback
    path = Path(path).resolve()
    before = set(sys.modules)
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd)
        mp.setenv("MPLBACKEND", "Agg")
        mp.setattr(sys, "argv", [str(path), *map(str, args)])
        mp.syspath_prepend(str(path.parent))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                runpy.run_path(str(path), run_name="__main__")
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
                if isinstance(e.code, str):
                    print(e.code, file=sys.stderr)
            except Exception:
                traceback.print_exc()
                code = 1
    for name in set(sys.modules) - before:
        mod_file = getattr(sys.modules[name], "__file__", None) or ""
        if Path(mod_file).parent == path.parent:
            del sys.modules[name]
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
    return subprocess.CompletedProcess(["python", str(path), *map(str, args)], code,
                                       out.getvalue(), err.getvalue())


@pytest.fixture(scope="session")
def example_run(tmp_path_factory):
    """``python examples/SCRIPT --out DIR ARGS`` (:func:`run_script`), each distinct
    (SCRIPT, ARGS) once per session in its own fresh DIR: (CompletedProcess, DIR).  Shared by
    tests/test_examples.py and the commands of docs/teaching.md, which show the same runs."""
    runs = {}

    def run(script, args=()):
        key = (script, tuple(args))
        if key not in runs:
            out = tmp_path_factory.mktemp(Path(script).stem)
            runs[key] = run_script(EXAMPLES / script, ["--out", out, *args], out), out
        return runs[key]
    return run


#: session fixtures whose users need quick claim outcomes
QUICK_FIXTURES = {"quick_check", "quick_claim", "quick_certificate", "quick", "replayed_claims"}
#: session fixtures whose users are slow (they run claims at their quick sizes, or scripts)
SLOW_FIXTURES = QUICK_FIXTURES | {"example_run"}


def _needs(item, names):
    return bool(names & set(getattr(item, "fixturenames", ())))


def _needs_every_claim(item):
    """The whole quick check: `exactattn check --quick` (``quick_check``, also behind the
    evidence tests' ``quick`` unless EXACTATTN_QUICK_CERTS gives its certificates), or a test
    marked ``quick_claims`` (one that may ask for it)."""
    fixtures = {"quick_check"} | (set() if os.environ.get("EXACTATTN_QUICK_CERTS") else {"quick"})
    return _needs(item, fixtures) or item.get_closest_marker("quick_claims") is not None


def pytest_collection_modifyitems(config, items):
    """A test that needs a quick claim run is marked ``slow`` (the fast subset
    ``pytest -m "not slow"`` leaves it out; README.md, "Set-up"), and runs after the tests
    that need none (in their order otherwise): the claims' background run has the time of
    all the others."""
    for item in items:
        if _needs(item, SLOW_FIXTURES) or item.get_closest_marker("quick_claims"):
            item.add_marker(pytest.mark.slow)
    items[:] = sorted(items, key=lambda it: _needs(it, QUICK_FIXTURES) or
                      it.get_closest_marker("quick_claims") is not None)


def _keep_in_main(item):
    """The test must run in this session, not in a shard worker (tests/_shard.py): it uses
    the session's quick claim outcomes or an example script's shared run."""
    return _needs(item, SLOW_FIXTURES) or item.get_closest_marker("quick_claims") is not None \
        or _needs_every_claim(item)


#: whole files that need neither run in a second pytest process (tests/_shard.py)
SHARD = _shard.Shard(_keep_in_main)


def pytest_configure(config):
    config.pluginmanager.register(SHARD, "exactattn-shard")


def pytest_collection_finish(session):
    """When the selected tests need the whole quick check, every claim runs at once in the
    background (tests/quick_claims.py, another process: another core) while the tests that
    need no claim run; otherwise each claim runs here when a test first asks for it.  Then
    (tests/_shard.py, after this) whole files that need neither claims nor shared runs may go
    to a worker process, their reports replayed here."""
    if _shard.IS_WORKER:
        return
    if not session.config.option.collectonly and any(map(_needs_every_claim, session.items)):
        _start_background()


def pytest_sessionfinish(session, exitstatus):
    _stop_background()

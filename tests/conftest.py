import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("SYMPY_GROUND_TYPES", "python")

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", max_examples=60, deadline=None)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def quick_claim():
    """``run_claim(claim, quick=True)`` once per claim id in the session (it must hold): the
    outcome, shared by every test file that needs that claim's quick run."""
    from proofs_checks.registry import get_claim, run_claim
    outcomes = {}

    def run(claim_id):
        if claim_id not in outcomes:
            out = run_claim(get_claim(claim_id), quick=True)
            assert out.status == "ok", out.verdict.details
            outcomes[claim_id] = out
        return outcomes[claim_id]
    return run


@pytest.fixture(scope="session")
def quick_certificate(quick_claim):
    """A claim's quick certificate as the JSON a file would hold, a fresh copy per call (a
    test that tampers with it cannot alter another's)."""
    return lambda claim_id: json.loads(json.dumps(quick_claim(claim_id).verdict.certificate))


@pytest.fixture(scope="session")
def quick_check(tmp_path_factory):
    """The README's `exactattn check --quick`, run once per session as a reader runs it: this
    environment's `exactattn` in a subprocess, in a fresh directory (its certificates go to
    DIR/certificates).  (CompletedProcess, DIR), shared by the README's command test and the
    quick-certificate tests, so the whole quick check runs once."""
    cwd = tmp_path_factory.mktemp("quick-check")
    exe = Path(sys.executable).with_name("exactattn")
    env = dict(os.environ, MPLBACKEND="Agg")
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run([str(exe), "check", "--quick"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=1200)
    return proc, cwd


#: session fixtures whose users are slow (they run claims at their quick sizes)
SLOW_FIXTURES = {"quick_check", "quick_claim", "quick_certificate", "quick"}


def pytest_collection_modifyitems(config, items):
    """A test that needs a quick claim run is marked ``slow`` (the fast subset
    ``pytest -m "not slow"`` leaves it out; README.md, "Set-up")."""
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)

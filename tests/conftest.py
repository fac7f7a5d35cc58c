import json
import os

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

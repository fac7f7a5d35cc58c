"""The checker's own copy of every claim's sizes (proofs_checks/checker/claims.py ``SIZES``,
``MONTE_CARLO``): equal to the library's, so they cannot drift, and a certificate whose
parameters are not those of its size label — a quick certificate relabelled full, a Monte Carlo
cut short or moved to other seeds — is rejected."""

import copy
import json

import pytest
from conftest import verify_once

from proofs_checks.checker import Rejected, verify
from proofs_checks.checker.claims import CLAIMS, MONTE_CARLO, SIZES, USER_CLAIMS
from proofs_checks.certificates import new_certificate
from proofs_checks.registry import claims


def test_the_checkers_sizes_are_the_librarys():
    """Every claim with a certificate: the checker's quick and full parameters are exactly
    what the library's claim writes at those sizes (a test, so the two copies cannot drift)."""
    with_cert = {cid for cid, (_, _, kinds) in CLAIMS.items()
                 if kinds and cid not in USER_CLAIMS}
    lib = {c.id: c for c in claims()}
    assert with_cert == set(SIZES)
    for cid in with_cert:
        for size in ("quick", "full"):
            written = new_certificate(lib[cid], lib[cid].params(size == "quick"))["params"]
            assert json.loads(json.dumps(written)) == SIZES[cid][size], (cid, size)


def test_the_checkers_monte_carlo_constants_are_the_librarys():
    from proofs_checks import beyond_economy, p2_prob1
    from proofs_checks.registry import get_claim
    for size in (True, False):
        assert get_claim("P2-prob1").params(size)["seed"] == MONTE_CARLO["P2-prob1"]["first_seed"]
    assert p2_prob1.ALPHA == MONTE_CARLO["P2-prob1"]["alpha"]
    assert beyond_economy.FIRST_SEED == MONTE_CARLO["economy-prob1"]["first_seed"]
    assert p2_prob1.ALPHA == MONTE_CARLO["economy-prob1"]["alpha"]


def _rejected(cert, match):
    with pytest.raises(Rejected, match=match):
        verify(json.loads(json.dumps(cert)))


@pytest.mark.parametrize("claim", ["P2-prob1", "P2-count", "economy-prob1", "floor"])
def test_a_quick_certificate_relabelled_full_is_rejected(quick_certificate, claim):
    cert = quick_certificate(claim)
    verify_once(copy.deepcopy(cert))               # as written: accepted
    cert["size"] = "full"
    _rejected(cert, "not the full sizes")


def _bad_set(cert):
    return [c for c in cert["checks"] if c["kind"] == "bad-set"]


def test_p2_prob1_one_configuration_one_draw_labelled_full_is_rejected(quick_certificate):
    cert = quick_certificate("P2-prob1")
    first = _bad_set(cert)[0]
    mc = first["monte_carlo"]
    mc["trials"], mc["outcomes"], mc["sample"] = 1, [o for o in mc["outcomes"] if o[0] == 0], []
    cert["checks"] = [first]
    cert["params"] = {"d,H,box,trials": [[first["dim"], first["H"], first["box"], 1]]}
    cert["size"] = "full"
    _rejected(cert, "not the full sizes")


def test_p2_prob1_monte_carlo_cut_before_its_first_failure_is_rejected(quick_certificate):
    """The draws before the first recorded failure, with params and label kept consistent
    with the cut: the checker's own sizes say how many draws there must be."""
    cert = quick_certificate("P2-prob1")
    checks = _bad_set(cert)
    k, c = next((k, c) for k, c in enumerate(checks) if c["monte_carlo"]["outcomes"])
    mc = c["monte_carlo"]
    cut = min(s for s, _ in mc["outcomes"]) - mc["first_seed"]
    assert cut < mc["trials"]
    mc["trials"], mc["outcomes"] = cut, []
    mc["sample"] = [s for s in mc["sample"] if s["seed"] < mc["first_seed"] + cut]
    cert["params"]["d,H,box,trials"][k][3] = cut
    _rejected(cert, "not the quick sizes")
    cert["params"]["d,H,box,trials"][k][3] = checks[k]["monte_carlo"]["trials"] = cut
    for size in ("quick", "full"):
        cert["size"] = size
        _rejected(cert, f"not the {size} sizes")


def test_p2_prob1_monte_carlo_moved_to_other_seeds_is_rejected(quick_certificate):
    cert = quick_certificate("P2-prob1")
    mc = _bad_set(cert)[0]["monte_carlo"]
    shift = 10 ** 6
    mc["first_seed"] += shift
    mc["outcomes"] = [[s + shift, o] for s, o in mc["outcomes"]]
    _rejected(cert, "first seed must be 0")


def test_p2_prob1_monte_carlo_with_another_alpha_is_rejected(quick_certificate):
    cert = quick_certificate("P2-prob1")
    _bad_set(cert)[0]["monte_carlo"]["alpha"] = "1/10"
    _rejected(cert, "α must be 1/1000")


def test_economy_prob1_monte_carlo_moved_to_other_seeds_is_rejected(quick_certificate):
    cert = quick_certificate("economy-prob1")
    cert["checks"][0]["first_seed"] += 1
    _rejected(cert, "first seed must be 1000")


def test_economy_prob1_with_fewer_draws_is_rejected(quick_certificate):
    cert = quick_certificate("economy-prob1")
    c = cert["checks"][0]
    c["trials"] -= 5                               # the last five draws dropped
    c["generic"] = [g for g in c["generic"] if g["seed"] < c["first_seed"] + c["trials"]]
    cert["params"]["d,H,box,trials"][0][3] = c["trials"]
    _rejected(cert, "not the quick sizes")


def test_a_claim_without_sizes_is_rejected():
    from proofs_checks.checker.claims import check_size
    check_size("run", "full", {"learner": "multi-head", "dim": 2})
    with pytest.raises(Rejected, match="no sizes"):
        check_size("no-such-claim", "quick", {})

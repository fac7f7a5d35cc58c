"""economy-prob1: the checker derives D, requires every draw of the claim's trials to carry a
generic run or to lie in the bad set, and a learner failing outside the bad set fails the
claim (each test plants the defect its check catches)."""

import copy
import json

import pytest

from exactattn.errors import LearningFailure
from exactattn.learners.beyond import economy
from proofs_checks.beyond_economy import PROB1, run_prob1
from proofs_checks.checker import economy_prob1 as E
from proofs_checks.checker.bad_set import draw
from proofs_checks.checker.parse import Rejected
from proofs_checks.registry import run_claim


@pytest.fixture(scope="module")
def cert(quick_claim):
    return json.loads(json.dumps(quick_claim("economy-prob1").verdict.certificate))


def _check(c):
    return E.check_economy_prob1(c, [c])


def test_the_sizes_table_is_the_claims():
    assert E.SIZES == {k: v["d,H,box,trials"] for k, v in PROB1.sizes.items()}


def test_D_is_derived_from_the_structure_and_equals_the_library_degree(cert):
    c = cert["checks"][0]
    assert c["D"] == E.degree_bound(2, 2) == 51
    assert "D = 51 derived here from the structure" in _check(copy.deepcopy(c))


def test_a_recorded_D_of_the_box_is_rejected(cert):
    c = copy.deepcopy(cert["checks"][0])
    c["D"] = c["box"]
    with pytest.raises(Rejected, match="total degree 51"):
        _check(c)


def test_zero_runs_with_D_the_box_are_rejected(cert):
    c = copy.deepcopy(cert["checks"][0])
    c["D"], c["generic"] = c["box"], []
    with pytest.raises(Rejected):
        _check(c)
    c["D"] = E.degree_bound(2, 2)
    with pytest.raises(Rejected, match="no generic run, and the draw satisfies"):
        _check(c)


def test_deleted_runs_are_rejected(cert):
    c = copy.deepcopy(cert["checks"][0])
    del c["generic"][5:15]                       # 10 of 40
    with pytest.raises(Rejected, match="a run left out"):
        _check(c)


def test_fewer_trials_than_the_claims_are_rejected(cert):
    c = copy.deepcopy(cert["checks"][0])
    c["trials"] = 30
    c["generic"] = c["generic"][:30]
    with pytest.raises(Rejected, match="not a configuration of the claim's sizes"):
        _check(c)


def test_a_pair_record_at_a_generic_draw_is_rejected(cert):
    c = copy.deepcopy(cert["checks"][0])
    gone = c["generic"].pop(0)
    model = E.heads(c["model"], 2, "model")
    # directions of the learner's form (each sees one head) but no pair condition vanishes
    b = [[str(x) for x in _seeing(model, h)] for h in range(2)]
    c["pairs"] = [{"seed": gone["seed"], "b_a": b[0], "b_g": b[1], "alpha": 1, "beta": 1}]
    with pytest.raises(Rejected, match="no pair condition vanishes|sees"):
        _check(c)


def _seeing(model, h):
    """A direction b with v_g·b = 0 for the other head g (d = 2, H = 2)."""
    (_, v_g) = model[1 - h]
    return [-v_g[1], v_g[0]]


def test_many_draws_in_the_bad_set_reject_the_bound(cert, monkeypatch):
    """The binomial test can fail: with every draw declared in the bad set and the runs gone,
    40/40 non-generic draws reject Pr ≤ 51/1000."""
    c = copy.deepcopy(cert["checks"][0])
    c["generic"] = []
    monkeypatch.setattr(E, "ux_violations", lambda model, U, X: ["det U"])
    with pytest.raises(Rejected, match="reject Pr ≤ D/box"):
        _check(c)


def _planted(fail):
    original = economy.run_economy

    def run(orc, U, X, *a, **kw):
        if fail(U):
            raise LearningFailure("planted: fails outside the bad set")
        return original(orc, U, X, *a, **kw)
    return run


@pytest.mark.slow
def test_a_learner_failing_at_five_percent_of_draws_fails_the_claim(monkeypatch):
    """U[0][0] ≡ 0 mod 20: about 5% of all draws, almost all generic (seed 1023 of the quick
    size's 1000…1039 is one)."""
    assert any(draw(s, 2, 1000)[0][0][0] % 20 == 0 for s in range(1000, 1040))
    monkeypatch.setattr(economy, "run_economy", _planted(lambda U: U[0][0] % 20 == 0))
    out = run_claim(PROB1, quick=True)
    assert out.status != "ok"
    assert any("outside the bad set" in str(x) for x in out.verdict.details)
    cert = json.loads(json.dumps(out.verdict.certificate))
    with pytest.raises(Rejected, match="a failure outside the bad set"):
        for c in cert["checks"]:
            E.check_economy_prob1(c, cert["checks"])


@pytest.mark.slow
def test_draws_in_the_bad_set_are_exhibited_at_a_small_box(monkeypatch):
    """At box 2 many draws are singular or collide: each is shown in the bad set by the
    checker (its U, X re-drawn from the seed), and the certificate verifies."""
    monkeypatch.setitem(E.SIZES, "quick", [[2, 2, 2, 30]])
    verdict = run_prob1({"d,H,box,trials": [[2, 2, 2, 30]], "seed": 0})
    assert verdict.holds, verdict.details
    (c,) = json.loads(json.dumps(verdict.certificate))["checks"]
    assert len(c["generic"]) < 30
    msg = _check(c)
    assert f"each of the {30 - len(c['generic'])} others lies in the bad set" in msg
    # the same draws with a learner that also fails at one generic draw are rejected
    generic_seed = c["generic"][0]["seed"]
    c["generic"] = c["generic"][1:]
    with pytest.raises(Rejected, match=f"seed {generic_seed}: no generic run"):
        _check(c)


def test_a_pair_record_is_accepted_only_where_the_pair_condition_vanishes(cert):
    """At seed 63's x2 the pair family of the quick model's two heads collides for
    α/β = 50/61 (its first direction b per head: the kernel of the other head's v)."""
    c = cert["checks"][0]
    model = E.heads(c["model"], 2, "model")
    b = [[str(x) for x in _seeing(model, h)] for h in range(2)]
    _, X = draw(63, 2, 1000)
    entry = {"seed": 63, "b_a": b[0], "b_g": b[1], "alpha": 50, "beta": 61}
    assert E.pair_violation(entry, model, X, 1000, "pair") == "pair (1,2) at x2: poles"
    with pytest.raises(Rejected, match="no pair condition vanishes"):
        E.pair_violation(dict(entry, alpha=51), model, X, 1000, "pair")
    with pytest.raises(Rejected, match=r"alpha: 50 > 40"):
        E.pair_violation(entry, model, X, 40, "pair")
    with pytest.raises(Rejected, match="see the same head"):
        E.pair_violation(dict(entry, b_g=b[0]), model, X, 1000, "pair")

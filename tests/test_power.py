"""Power of the statistical and noise checks: each reports what it would detect, and a
planted defect of that size fails it (a bound too small by 0.3×, a learner failing at a
rate the test claims to detect)."""

import dataclasses
from fractions import Fraction

import pytest

from exactattn.learners.p1 import noisy
from proofs_checks import p1_t61, p2_approx
from proofs_checks.checker.binomial import (caught_rate, critical_count, detectable_rate,
                                            power_sentence, upper_tail)
from proofs_checks.registry import get_claim, run_claim


# ---------------------------------------------------------------------- binomial power
@pytest.mark.parametrize("n, bound, level, k", [
    (1000, Fraction(1, 20), Fraction(1, 4000), 77),       # P2-prob1 quick
    (40, Fraction(51, 1000), Fraction(1, 1000), 8),        # economy-prob1 quick
])
def test_the_critical_count_is_where_the_test_starts_rejecting(n, bound, level, k):
    assert critical_count(n, bound, level) == k
    assert upper_tail(n, k, bound) <= level < upper_tail(n, k - 1, bound)


@pytest.mark.parametrize("n, bound, level", [
    (1000, Fraction(1, 20), Fraction(1, 4000)), (40, Fraction(51, 1000), Fraction(1, 1000))])
def test_the_detectable_rate_has_power_and_a_smaller_one_has_not(n, bound, level):
    k, r = critical_count(n, bound, level), detectable_rate(n, bound, level)
    assert upper_tail(n, k, r) >= Fraction(9, 10) > upper_tail(n, k, r - Fraction(1, 2 ** 16))
    assert bound < r
    assert "would reject a failure rate ≥ 8.79e-2 with power 0.9 (it rejects from 77 of " \
        "1000)" == power_sentence(1000, Fraction(1, 20), Fraction(1, 4000))


def test_a_vacuous_bound_cannot_reject():
    assert critical_count(200, Fraction(51, 40), Fraction(1, 1000)) is None
    assert "could not reject" in power_sentence(200, Fraction(51, 40), Fraction(1, 1000))


def test_the_caught_rate_of_a_failure_outside_the_bad_set():
    r = caught_rate(1000)
    assert 1 - (1 - r) ** 1000 >= Fraction(9, 10) > 1 - (1 - (r - Fraction(1, 2 ** 16))) ** 1000
    # a learner failing outside the bad set at 10⁻³ is caught in 1000 draws only 63% of runs
    assert Fraction(63, 100) < 1 - (1 - Fraction(1, 1000)) ** 1000 < Fraction(64, 100)


# ---------------------------------------------------------------------- P1-T6.1
def _scaled_p1_bounds(monkeypatch, factor):
    original = noisy.p1_bounds

    def scaled(*a, **kw):
        out = dict(original(*a, **kw))
        out["W_entry"] = out["W_entry"] * factor
        out["W"] = out["W"] * factor
        return out
    monkeypatch.setattr(noisy, "p1_bounds", scaled)


P1_PARAMS = {"d": [4], "taus": "1e-6,1e-10,1e-15", "dps": 40, "seed": 0}


def test_p1_a_bound_too_small_by_03_passes_random_signs_but_not_the_worst_case(monkeypatch):
    _scaled_p1_bounds(monkeypatch, 0.3)
    random_only = p1_t61.run(dict(P1_PARAMS, modes=["adversarial", "random"]))
    assert random_only.holds        # what the random signs alone could not see (d = 4: 0.23)
    worst = p1_t61.run(dict(P1_PARAMS, modes=["worst-case"]))
    assert not worst.holds
    assert any("FAILED: d=4 worst-case: bound violated" in x for x in worst.details)


def test_p1_quick_size_fails_with_a_bound_too_small_by_03(monkeypatch):
    _scaled_p1_bounds(monkeypatch, 0.3)
    assert run_claim(get_claim("P1-T6.1"), quick=True).status == "FAIL"


def test_p1_worst_signs_attain_their_first_order_prediction():
    out = p1_t61.sweep_worst_case(4, [Fraction(1, 10 ** 10)], dps=40, seed=4)
    (row,) = out["rows"]
    assert abs(float(row["error"]) / row["first_order"] - 1) < 1e-3
    assert float(row["error"] / row["bound"]) > 0.4


def test_p1_wrong_signs_fail_the_tightness_check(monkeypatch):
    """Item 4 can fail: with the probe signs flipped the first-order prediction is not met."""
    original = p1_t61.worst_signs

    def flipped(W, v, B):
        signs, F = original(W, v, B)
        d = len(v)
        return signs[:d] + [-s for s in signs[d:]], F
    monkeypatch.setattr(p1_t61, "worst_signs", flipped)
    verdict = p1_t61.run(dict(P1_PARAMS, modes=["worst-case"]))
    assert any("not within 0.1 of 1" in x for x in verdict.details)


# ---------------------------------------------------------------------- P2-approx
P2_PARAMS = {"dH": [[2, 2]], "taus": "1e-12,1e-18,1e-24", "ball_taus": "1e-24,1e-12",
             "dps": 30, "seed": 0}


@pytest.mark.slow
def test_p2_approx_a_bound_too_small_by_03_fails(monkeypatch):
    original = p2_approx.noise_free_constant

    def scaled(*a, **kw):
        sens = original(*a, **kw)
        return dataclasses.replace(sens, C=sens.C * 3 / 10)
    monkeypatch.setattr(p2_approx, "noise_free_constant", scaled)
    verdict = p2_approx.run(dict(P2_PARAMS, modes=["adversarial", "worst-case"]))
    assert not verdict.holds
    assert any("FAILED: d=2 H=2 worst-case: error/(C·τ)" in x for x in verdict.details)


# ---------------------------------------------------------------------- P2-prob1 conditioned
@pytest.fixture(scope="module")
def conditioned():
    from exactattn.models.attention import random_multi_head
    from proofs_checks.p2_prob1 import _conditioned
    model = random_multi_head(2, 3, seed=0).canonical()
    return model, _conditioned(2, 3, 910, 0, 1000, model, 4)


def _check_conditioned(entries):
    import json
    from proofs_checks.checker.bad_set import _conditioned as check
    return check(json.loads(json.dumps(entries)), 2, 3, 910, 1000)


@pytest.mark.slow
def test_conditioned_draws_are_matching_only_and_predicted(conditioned):
    _, entries = conditioned
    assert len(entries) == 4 and all(e["condition"].startswith("matching") for e in entries)
    assert "4 draws conditioned into the matching-only part" in _check_conditioned(entries)


@pytest.mark.parametrize("tamper, message", [
    (lambda e, m: e.update(outcome="ambiguous-matching"), "learner's rules give"),
    (lambda e, m: e.update(model=m), "not in the matching-only part"),
    (lambda e, m: e.update(condition="matching I(u9,x1) (1,2)~3"), "does not vanish"),
    (lambda e, m: e.update(seed=999), r"seed: 999 < 1000"),
])
@pytest.mark.slow
def test_conditioned_draws_are_checked(conditioned, tamper, message):
    import copy
    from proofs_checks.certificates import heads_json
    from proofs_checks.checker.parse import Rejected
    model, entries = conditioned
    entries = copy.deepcopy(entries)
    tamper(entries[0], heads_json(model.heads))
    with pytest.raises(Rejected, match=message):
        _check_conditioned(entries)


@pytest.mark.slow
def test_a_residue_conditioned_draw_is_ambiguous_for_learner_and_predictor():
    """The matching branch's failure: with the residues moved too, the learner names the
    ambiguity, as the checker's rules predict (about 13 s: the learner's prime sizes)."""
    from exactattn.models.attention import random_multi_head
    from proofs_checks.p2_prob1 import _conditioned
    model = random_multi_head(2, 3, seed=0).canonical()
    entries = _conditioned(2, 3, 910, 1, 1000, model, 2, residues=True)
    assert [e["outcome"] for e in entries][1] == "ambiguous-matching"
    assert "ambiguous-matching" in _check_conditioned(entries)

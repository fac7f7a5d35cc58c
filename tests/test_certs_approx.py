"""Certificates of the approximate-oracle and Transformer claims: P1-T6.1,
P2-approx, P1-transformer and P2-transformer write certificates that the stdlib checker
re-derives (rational interval arithmetic for e^{1/L}, proofs_checks/checker/interval.py).
Every check has a forgery here — a changed digit, a wrong sign, a bound multiplied by 0.3, a
removed record — that the checker must REJECT, with the line saying why."""

import copy
import math
from fractions import Fraction

import pytest
from conftest import verify_once

from proofs_checks.checker import Rejected, verify
from proofs_checks.checker import interval, noisy_single, transformer as tcheck


def fmt(q):
    q = Fraction(q)
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def rejected(cert, match):
    with pytest.raises(Rejected, match=match):
        verify(cert)


def _of(cert, kind, **where):
    return [c for c in cert["checks"] if c["kind"] == kind and
            all(c.get(k) == v for k, v in where.items())]


# ---------------------------------------------------------------------- interval arithmetic
def test_exp_and_log_enclosures_contain_the_value_and_are_narrow(monkeypatch):
    import mpmath
    monkeypatch.setattr(mpmath.mp, "prec", 800)      # restored: later tests see the default

    def exact(x):
        m, e = mpmath.frexp(x)
        return Fraction(int(mpmath.ldexp(m, 900))) / Fraction(2) ** (900 - int(e))
    for y in (Fraction(1, 3), Fraction(-7, 5), Fraction(100), Fraction(-1000, 3),
              Fraction(12345678, 7), Fraction(1, 10 ** 30)):
        lo, hi = interval.exp_bounds(y)
        assert lo <= exact(mpmath.exp(mpmath.mpf(y.numerator) / y.denominator)) <= hi
        assert (hi - lo) / lo < Fraction(1, 2 ** 250)
    for x in (Fraction(3), Fraction(1, 7), Fraction(10 ** 50), Fraction(99, 100)):
        lo, hi = interval.log_bounds(x)
        assert lo <= exact(mpmath.log(mpmath.mpf(x.numerator) / x.denominator)) <= hi
        assert hi - lo < Fraction(1, 2 ** 240)
    lo, hi = interval.ln2()
    assert lo <= exact(mpmath.log(2)) <= hi


def test_outward_rounding_and_certified_signs():
    x = Fraction(1, 3)
    assert interval.down(x, 20) < x < interval.up(x, 20)
    assert interval.down(Fraction(3, 4), 20) == Fraction(3, 4)       # short dyadics stay
    a = interval.Iv(Fraction(1, 3), Fraction(1, 2), 16)
    b = a * a - a / 3
    for p in (Fraction(1, 3), Fraction(5, 12), Fraction(1, 2)):      # members give members
        assert b.contains(p * p - p / 3)
    # 1 − t³ at t = e^{1/2} is negative; 3 − t at t = e is positive; 0 is exactly 0
    assert interval.laurent_sign({0: Fraction(1), 3: Fraction(-1)}, 2) == -1
    assert interval.laurent_sign({0: Fraction(3), 1: Fraction(-1)}, 1) == 1
    assert interval.laurent_sign({}, 5) == 0
    # e^{1/10^6} − 1 − 10^{−6}: a near cancellation the precision doubling resolves
    assert interval.laurent_sign({1: Fraction(1), 0: Fraction(-1 - Fraction(1, 10 ** 6))},
                                 10 ** 6) == 1
    # a term 10⁶ below the top is bounded without a series (and without a huge power of 2)
    assert interval.laurent_sign({0: Fraction(-10 ** 9), 10 ** 6: Fraction(1, 10 ** 9)}, 1) == 1


def test_ball_solve_steps_outward():
    """exactattn/arith/ball.py: β and ‖z‖ are exact upper bounds (point balls), the radius
    and |x| are converted to mpf rounding up, and the verified solve contains the exact
    solution of every system in the balls."""
    import mpmath
    from flint import arb
    from exactattn.arith import ball as B
    from exactattn.arith.numbers import exact_fraction
    ctx = mpmath.MPContext()
    ctx.prec = 20

    def value(point):
        m, e = point.man_exp()
        return Fraction(int(m)) * Fraction(2) ** int(e)
    b = arb(1) / 3 + arb(0, 1) * (arb(1) / 7)
    assert exact_fraction(B.radius_upper(b, ctx)) >= value(b.rad())
    assert exact_fraction(B.upper_mpf(b, ctx)) >= value(b.abs_upper()) > Fraction(1, 3) + \
        Fraction(1, 7)
    with pytest.raises(AssertionError, match="point balls"):
        B._max_point([arb(1) / 3])
    A = [[arb(2) + arb(0, 1) * arb(2) ** -30, arb(1)], [arb(1), arb(3)]]
    x = B._verified_solve(A, [arb(1), arb(2)])
    exact = [Fraction(1, 5), Fraction(3, 5)]                           # A = [[2,1],[1,3]]
    assert all(xi.contains(arb(e.numerator) / e.denominator) for xi, e in zip(x, exact))


# ---------------------------------------------------------------------- P1-T6.1
@pytest.fixture
def p1(quick_certificate):
    return quick_certificate("P1-T6.1")


def test_p1_t61_quick_certificate_is_accepted_and_re_derived(p1):
    found = verify_once(p1)
    assert len(found) == 6 and all("recomputed from their constants" in f for f in found)
    assert sum("worst-case signs re-derived" in f for f in found) == 2


def test_p1_t61_a_bound_multiplied_by_03_is_rejected(p1):
    row = _of(p1, "noisy-single-head", mode="worst-case")[0]["rows"][2]
    row["bound_W"] = fmt(Fraction(row["bound_W"]) * Fraction(3, 10))
    rejected(p1, "the stated ε_W is not d·")


def test_p1_t61_a_03_bound_is_violated_by_the_worst_case_not_by_random_signs(p1, monkeypatch):
    """With the recomputation switched off, a bound scaled by 0.3 passes the random-sign
    records of d = 3 (ratios ≈ 0.13) and is caught by the worst case (≈ 0.44)."""
    monkeypatch.setattr(noisy_single, "AGREE_BITS", 10 ** 4)
    for rec in p1["checks"]:
        for row in rec["rows"]:
            row["bound_W"] = fmt(Fraction(row["bound_W"]) * Fraction(3, 10))
    random3 = copy.deepcopy(_of(p1, "noisy-single-head", dim=3, mode="random")[0])
    assert "d=3 random" in noisy_single.check_noisy_single_head(random3, [])
    worst3 = _of(p1, "noisy-single-head", dim=3, mode="worst-case")[0]
    with pytest.raises(Rejected, match=r"‖Ŵ − W‖_F > ε_W"):
        noisy_single.check_noisy_single_head(worst3, [])


def test_p1_t61_a_changed_answer_digit_is_rejected(p1):
    row = p1["checks"][0]["rows"][1]
    row["answers"][3] = fmt(Fraction(row["answers"][3]) + Fraction(1, 10 ** 7))
    rejected(p1, "answer 3 is not within τ_eff")


def test_p1_t61_noise_with_a_wrong_sign_is_rejected(p1):
    row = p1["checks"][0]["rows"][0]
    row["noise"][2] = fmt(-Fraction(row["noise"][2]))
    rejected(p1, "the recorded noise of answer 2 is not the answer's offset")


def test_p1_t61_a_wrong_worst_case_sign_is_rejected(p1):
    rec = _of(p1, "noisy-single-head", mode="worst-case")[0]
    rec["signs"][4] *= -1
    rejected(p1, r"signs: probe \(2,1\) has noise sign")
    rec["signs"][4] *= -1
    rec["signs"][1] *= -1                    # the v-signs: no longer the maximum
    rejected(p1, "do not maximise the first-order error")


def test_p1_t61_worst_case_noise_must_carry_the_signs(p1):
    rec = _of(p1, "noisy-single-head", mode="worst-case")[0]
    for row in rec["rows"]:                  # the adversarial noise under a worst-case label
        row["noise"] = [fmt(-Fraction(x)) for x in row["noise"]]
    rejected(p1, "recorded noise of answer 0|does not carry the worst-case sign")


def test_p1_t61_the_first_order_constant_is_re_derived(p1):
    rec = _of(p1, "noisy-single-head", mode="worst-case")[0]
    rec["first_order"] = fmt(Fraction(rec["first_order"]) * Fraction(11, 10))
    rejected(p1, "F is not the square root of the first-order maximum")


def test_p1_t61_a_recovered_entry_off_the_rule_is_rejected(p1):
    row = p1["checks"][1]["rows"][2]
    row["recovered"]["W"][0][1] = fmt(Fraction(row["recovered"]["W"][0][1]) + Fraction(1, 10 ** 20))
    rejected(p1, r"Ŵ_12 is not the learner's σ⁻¹\(σ̂\)/\(a·b\)")


def test_p1_t61_a_random_record_relabelled_adversarial_is_rejected(p1):
    adv, rnd = p1["checks"][0], p1["checks"][1]
    adv["mode"], rnd["mode"] = "random", "adversarial"
    p1["checks"][0], p1["checks"][1] = rnd, adv          # keep the order of d × modes
    rejected(p1, r"check 0 \(noisy-single-head\): rows\[0\]: noise \d+ is not ±τ")


def test_p1_t61_a_removed_row_or_record_is_rejected(p1):
    cert = copy.deepcopy(p1)
    del cert["checks"][1]["rows"][2]
    rejected(cert, "a record's τ are not the sizes' τ in order")
    del p1["checks"][4]
    rejected(p1, "the records do not cover d × modes in order")


def test_p1_t61_queries_precision_and_flags_are_checked(p1):
    cert = copy.deepcopy(p1)
    q = cert["checks"][0]["queries"][3]
    q[0][0] = fmt(Fraction(q[0][0]) + Fraction(1, 10 ** 9))
    rejected(cert, "queries\\[3\\]: not query 3 of the schedule")
    cert = copy.deepcopy(p1)
    cert["checks"][0]["prec"] = 60
    rejected(cert, "precision is not 136 bits")
    p1["checks"][0]["rows"][0]["flags"] = ["clipping-activated"]
    rejected(p1, "the learner flagged an assumption")


def test_p1_t61_the_checkers_constants_hold():
    """1/(p₋p₊) ≤ 5 and σ(±1/2) inside the clip: a Lipschitz constant too small is refused."""
    noisy_single.constants(256)
    saved = noisy_single.LIPSCHITZ
    try:
        noisy_single.LIPSCHITZ = 4
        with pytest.raises(Rejected, match="Lipschitz constant 5 does not bound"):
            noisy_single.constants(256)
    finally:
        noisy_single.LIPSCHITZ = saved


# ---------------------------------------------------------------------- P2-approx
@pytest.fixture
def p2(quick_certificate):
    return quick_certificate("P2-approx")


def test_p2_approx_quick_certificate_is_accepted_and_re_derived(p2):
    (found,) = verify_once(p2)
    assert "C = 2.9676" in found and "re-derived" in found and "2 certified τ" in found


def test_p2_approx_c_multiplied_by_03_is_rejected(p2):
    rec = p2["checks"][0]
    rec["C"] = fmt(Fraction(rec["C"]) * Fraction(3, 10))
    rejected(p2, "the recorded C is not the largest row sum")


def test_p2_approx_a_wrong_worst_sign_is_rejected(p2):
    rec = p2["checks"][0]
    k = next(k for k, row in enumerate(rec["rows"]) if row["mode"] == "worst-case")
    rec["signs"][5] *= -1
    rejected(p2, f"rows\\[{k}\\]: noise 5 does not carry the worst-case sign")


def test_p2_approx_worst_signs_not_a_jacobian_row_are_rejected(p2):
    rec = p2["checks"][0]
    rec["signs"][5] *= -1
    for row in rec["rows"]:                  # the noise carries the forged signs too
        if row["mode"] == "worst-case":
            row["noise"][5] = fmt(-Fraction(row["noise"][5]))
            row["answers"][5] = fmt(Fraction(row["answers"][5]) +
                                    2 * Fraction(row["noise"][5]))
    rejected(p2, "not the signs of a Jacobian row attaining C")


def test_p2_approx_a_changed_answer_digit_is_rejected(p2):
    row = p2["checks"][0]["rows"][0]
    row["answers"][7] = fmt(Fraction(row["answers"][7]) + Fraction(1, 10 ** 20))
    rejected(p2, "answer 7 is not within τ")


def test_p2_approx_recovered_heads_not_the_recovery_are_rejected(p2):
    row = p2["checks"][0]["rows"][2]
    row["recovered"][0]["v"][1] = fmt(Fraction(row["recovered"][0]["v"][1]) + Fraction(1, 10 ** 18))
    rejected(p2, r"rows\[2\]: the recorded heads are not the recovery")


def test_p2_approx_a_removed_row_is_rejected(p2):
    del p2["checks"][0]["rows"][1]
    rejected(p2, "the rows .and those skipped. are not every mode × τ")


def test_p2_approx_a_bar_multiplied_by_03_or_a_shrunk_ball_is_rejected(p2):
    cert = copy.deepcopy(p2)
    row = cert["checks"][0]["certified"][0]
    row["bar"] = fmt(Fraction(row["bar"]) * Fraction(3, 10))
    rejected(cert, "the bar is below radius")
    row = p2["checks"][0]["certified"][1]
    for head in row["enclosure"]:
        for r in head["W"]:
            for b in r:
                b[1] = fmt(Fraction(b[1]) / 10 ** 6)
    rejected(p2, r"certified\[1\]: a true head lies outside the enclosure")


def test_p2_approx_a_removed_certified_row_needs_its_stop(p2):
    rec = p2["checks"][0]
    del rec["certified"][0]
    rejected(p2, "the certified τ are not a prefix")


# ---------------------------------------------------------------------- Transformers
@pytest.fixture(params=["P1-transformer", "P2-transformer"])
def tf(request, quick_certificate):
    return request.param, quick_certificate(request.param)


def test_transformer_quick_certificates_are_accepted_and_re_derived(tf):
    cid, cert = tf
    found = verify_once(cert)
    assert sum("ReLU signs re-derived (certified in Q(t))" in f for f in found) == \
        len(_of(cert, "transformer"))
    assert "kink forms equal" in found[1] and found[-1].startswith("transformer-condition")


def test_transformer_a_wrong_relu_sign_is_rejected(tf):
    _, cert = tf
    t = cert["checks"][3]["transcript"]
    k = next(k for k, e in enumerate(t) if e["signs"][0] != 0)
    t[k]["signs"][0] *= -1
    rejected(cert, f"transcript\\[{k}\\]: the ReLU sign of unit 1 of the true Transformer")


def test_transformer_a_wrong_recovered_sign_is_rejected(tf):
    _, cert = tf
    t = cert["checks"][3]["transcript"]
    k = next(k for k, e in enumerate(t) if e["recovered_signs"][-1] != 0)
    t[k]["recovered_signs"][-1] *= -1
    rejected(cert, "of the recovered Transformer is not")


def test_transformer_a_changed_ffn_weight_is_rejected(tf):
    _, cert = tf
    rec = cert["checks"][3]["recovered"]
    rec["w"][0] = fmt(Fraction(rec["w"][0]) * 2)
    rejected(cert, "the recovered Transformer does not give the true Transformer's answer")


def test_transformer_a_changed_token_digit_is_rejected(tf):
    _, cert = tf
    tok = cert["checks"][3]["transcript"][2]["tokens"][0]      # an attention call
    tok[0] = fmt(Fraction(tok[0]) + Fraction(1, 7))
    rejected(cert, "calls 2, 3 are not X, −X of run query 1|ReLU sign")


def test_transformer_a_changed_run_answer_is_rejected(tf):
    _, cert = tf
    num = cert["checks"][2]["transcript"][0]["answer"]["num"]
    num[0][1] = fmt(Fraction(num[0][1]) + 1)
    rejected(cert, "does not reproduce answer 0|run answer 0 is not T")


def test_transformer_a_removed_call_is_rejected(tf):
    _, cert = tf
    del cert["checks"][3]["transcript"][-1]
    rejected(cert, "calls recorded but the oracle answered")


def test_transformer_attention_calls_must_pair_the_run(tf):
    _, cert = tf
    c = copy.deepcopy(cert)
    c["checks"][3]["attention_calls"] -= 2
    rejected(c, "attention calls but the run has")
    t = cert["checks"][3]["transcript"]
    t[0], t[1] = t[1], t[0]                                  # −X before X
    rejected(cert, "calls 0, 1 are not X, −X of run query 0")


def test_transformer_the_run_must_be_the_attention_part(tf):
    _, cert = tf
    run = cert["checks"][2]
    run["model"][0]["v"][0] = fmt(Fraction(run["model"][0]["v"][0]) + 1)
    rejected(cert, "recovered heads ≠ the canonical form of the true model|the run's model is "
                   "not the true Transformer's attention part")


def test_transformer_conditions_are_re_derived(tf):
    cid, cert = tf
    c = copy.deepcopy(cert)
    cond = c["checks"][-1]
    cond["model"]["w"][0] = fmt(Fraction(cond["model"]["w"][0]) + 1)
    rejected(c, "does not have V A w = 0 ≠ V A")
    c = copy.deepcopy(cert)
    c["checks"][-1]["reported"] = "ok"
    rejected(c, "the learner must report")
    del cert["checks"][-1]
    rejected(cert, r"missing checks \['transformer-condition'\]")


def test_kink_forms_see_functions_not_parameters():
    """Positive rescaling of a unit keeps the kink form; a different unit changes it."""
    F = Fraction
    W = ((F(1, 4), F(0)), (F(0), F(-1, 2)))
    V = ((F(1), F(0)), (F(1, 2), F(1)))
    T = ([(W, V)], [[F(1), F(-2)], [F(0), F(3)]], [F(2), F(-1)])
    scaled = ([(W, V)], [[F(2), F(-2)], [F(0), F(3)]], [F(1), F(-1)])   # unit 1: ×2, w/2
    other = ([(W, V)], [[F(1), F(-2)], [F(0), F(3)]], [F(2), F(-2)])
    assert tcheck.kink_form(T) == tcheck.kink_form(scaled)
    assert tcheck.kink_form(T) != tcheck.kink_form(other)
    assert math.isfinite(float(sum(tcheck.kink_form(T)[1])))

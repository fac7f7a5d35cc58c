"""Approximate oracles (docs/design.md §4.4): the P1 Thm 6.1 learner and its rigorous bound,
the P2 approximate-oracle constant C, membership queries (P1 App. B), `exactattn noise`."""

import json
from fractions import Fraction

import pytest

import exactattn as ea
from exactattn.arith import get_backend
from exactattn.cli.main import main
from exactattn.errors import ConditionsNotMet, LearningFailure
from exactattn.learners.result.compare import parameter_error
from exactattn.learners.p1.noisy import learn_single_head_noisy, p1_bounds
from exactattn.learners.p2.noisy import learn_multi_head_noisy
from exactattn.learners.p1.membership import (bisection_steps, learn_single_head_membership,
                                           membership_query_count)
from exactattn.oracles.membership import MembershipOracle
from exactattn.analysis.noise_sweep import (WorstCaseNoise, noise_free_constant, single_head_assumptions,
                                   sweep_single_head)
from exactattn.oracles.oracle import Additive, Oracle

DPS = 50
MODES = ("adversarial", "random")


def _errors(be, head, res):
    """(‖Ŵ − W‖_F, ‖v̂ − v‖₂, max entry error of W) at the working precision."""
    W, v = res.heads[0]
    dW = [be.scalar(W[i][j]) - be.scalar(head.W[i][j]) for i in range(head.dim)
          for j in range(head.dim)]
    dv = [be.scalar(v[i]) - be.scalar(head.v[i]) for i in range(head.dim)]
    return (be.ctx.sqrt(sum(x * x for x in dW)), be.ctx.sqrt(sum(x * x for x in dv)),
            max(abs(x) for x in dW))


# ------------------------------------------------------------------ P1 Thm 6.1
@pytest.mark.parametrize("d", [2, 4, 8])
@pytest.mark.parametrize("mode", MODES)
def test_p1_bound_holds(d, mode):
    be = get_backend("mp", DPS)
    head = ea.random_head(d, seed=10 + d, kind="real")
    B, mu = single_head_assumptions(be, head)
    for tau in (Fraction(1, 10 ** 4), Fraction(1, 10 ** 10), Fraction(1, 10 ** 20)):
        oracle = Oracle(head, backend=be, noise=Additive(tau, mode, seed=d))
        res = learn_single_head_noisy(oracle, d, B, mu, tau)
        eW, ev, e_entry = _errors(be, head, res)
        x = res.extra
        assert x["conditions_met"] and x["flags"] == []
        assert eW <= x["bound_W"] and ev <= x["bound_v"] and e_entry <= x["bound_W_entry"]
        assert eW <= x["posterior_bound_W"] <= x["bound_W"]
        assert (res.queries, res.max_length) == (d * d + d, 2) == (oracle.queries, 2)


def test_p1_bound_formula_and_linearity():
    # ε_W = d·B(15B + 10σ(1/2))·τ/(μ − τ) below the clipping cap, ε_v = √d·τ
    be = get_backend("mp", DPS)
    B, mu, tau, d = be.scalar(2), be.scalar(Fraction(1, 2)), be.scalar(Fraction(1, 10 ** 9)), 3
    b = p1_bounds(be, d, B, mu, tau)
    s_plus = 1 / (1 + be.ctx.exp(-be.scalar(Fraction(1, 2))))
    expect = d * B * (15 * B + 10 * s_plus) * tau / (mu - tau)
    assert abs(b["W"] - expect) <= expect * be.scalar(10) ** -40
    assert abs(b["v"] - be.ctx.sqrt(3) * tau) <= tau * be.scalar(10) ** -40
    # τ ≥ μ: only the clipping cap 5(p₊ − p₋)/(ab) remains
    cap = p1_bounds(be, d, B, mu, 2 * mu)["W_entry"]
    assert abs(cap - 5 * (be.scalar(Fraction(7236, 10000)) - be.scalar(Fraction(2764, 10000)))
               * 2 * B) <= be.scalar(10) ** -40
    out = sweep_single_head(3, [Fraction(1, 10 ** k) for k in (6, 12, 18)], dps=DPS, seed=1)
    errs = [r["error"] for r in out["rows"]]
    assert abs(errs[0] / errs[1] / 10 ** 6 - 1) < 1e-3 and abs(errs[1] / errs[2] / 10 ** 6 - 1) < 1e-6


def test_p1_float_backend():
    head = ea.random_head(3, seed=2, kind="real")
    be = get_backend("mp", 30)
    B, mu = (float(x) for x in single_head_assumptions(be, head))
    oracle = Oracle(head, backend="float", noise=Additive(1e-7, "adversarial"))
    res = learn_single_head_noisy(oracle, 3, B, mu, 1e-7)
    W, v = res.heads[0]
    err = max(abs(W[i][j] - head.W[i][j]) for i in range(3) for j in range(3))
    assert res.extra["conditions_met"] and err <= res.extra["bound_W_entry"]


def _flags(head, B, mu, tau, strict=False, mode="adversarial"):
    oracle = Oracle(head, backend="mp", dps=DPS, noise=Additive(tau, mode))
    return learn_single_head_noisy(oracle, head.dim, B, mu, tau, strict=strict)


def test_p1_violated_assumptions_are_flagged_and_strict_raises():
    be = get_backend("mp", DPS)
    head = ea.random_head(3, seed=4, kind="real")
    B, mu = single_head_assumptions(be, head)
    margin = _flags(head, B, 2 * max(abs(be.scalar(x)) for x in head.v), 1e-12)
    assert not margin.extra["conditions_met"] and "margin-violated" in margin.extra["flags"]
    assert any("margin assumption" in n for n in margin.notes)
    norm = _flags(head, B / 50, mu, 1e-12)  # probes see logits far beyond ±1/2
    assert "norm-bound-exceeded" in norm.extra["flags"] and not norm.extra["conditions_met"]
    loud = _flags(head, B, mu, mu / 2)  # τ comparable with the margin: σ̂ leaves the clip range
    assert "clipping-activated" in loud.extra["flags"]
    big = _flags(head, B, mu, 2 * mu)
    assert "tolerance-not-below-margin" in big.extra["flags"]
    with pytest.raises(ConditionsNotMet) as info:
        _flags(head, B / 50, mu, 1e-12, strict=True)
    assert info.value.reason == "conditions-not-met" and "norm-bound-exceeded" in \
        info.value.details["flags"]


# ------------------------------------------------------------------ P2 approximate-oracle bound
D, H = 3, 2


@pytest.fixture(scope="module")
def p2():
    """The d=3, H=2 model and its constant C at the noise-free answers (computed once)."""
    model = ea.random_multi_head(D, H, seed=0, kind="real")
    return model, noise_free_constant(D, H, DPS, seed=0)


def _learn_p2(model, sens, tau, mode, **kw):
    be = get_backend("mp", DPS)
    if mode == "worst-case":
        oracle = Oracle(WorstCaseNoise(model, be, sens.worst_signs, tau), dim=D, backend=be)
    else:
        oracle = Oracle(model, backend=be, noise=Additive(tau, mode, seed=5))
    res = learn_multi_head_noisy(oracle, D, H, tau, seed=0, sensitivity=sens, **kw)
    return res, parameter_error(model, res.heads, dps=DPS)


@pytest.mark.slow
def test_p2_constant_and_conditions(p2):
    _, sens = p2
    assert 0 < sens.C < float("inf") and sens.C == max(sens.C_W, sens.C_v)
    assert sens.fd_check < 1e-20 and sens.dps == 2 * DPS
    assert len(sens.jacobian) == H * (D * D + D) and len(sens.jacobian[0]) == 4 * H * D * D - 2 * H + 1
    assert len(sens.families) == 2 * D * D - 1
    assert sens.min_pole_separation > 0 and sens.min_residue > 0
    assert 1 <= sens.cond_U < float("inf") and 1 <= sens.cond_X < float("inf")
    assert sens.conditions(1e-20) == (True, [])
    summary = json.dumps(sens.summary())
    assert "min_pole_separation" in summary and "cond_U" in summary


@pytest.mark.parametrize("tau", [Fraction(1, 10 ** 10), Fraction(1, 10 ** 20),
                                 Fraction(1, 10 ** 30)])
@pytest.mark.slow
def test_p2_error_within_c_tau(p2, tau):
    model, sens = p2
    for mode in MODES + ("worst-case",):
        res, err = _learn_p2(model, sens, tau, mode)
        ratio = err / (sens.C * tau)
        assert res.extra["conditions_met"], res.notes
        assert ratio <= 1.1, (mode, ratio)
        if mode == "worst-case":  # C is attained to first order, not merely an upper bound
            assert ratio >= 0.9
        assert res.queries == 4 * H * D * D - 2 * H + 1 and res.max_length == 2 * H + 1


@pytest.mark.slow
def test_p2_noise_breaking_the_conditions_is_reported(p2):
    model, sens = p2
    # τ large against the pole separation: the recovery breaks down, named as such
    with pytest.raises(ConditionsNotMet) as info:
        _learn_p2(model, sens, Fraction(1, 10 ** 7), "adversarial")
    assert info.value.reason == "conditions-not-met" and "too large" in str(info.value)
    assert isinstance(info.value, LearningFailure) and info.value.details["tried"]
    # smaller, still too large: a result comes back, flagged, never presented as good
    res, err = _learn_p2(model, sens, Fraction(3, 10 ** 9), "adversarial")
    assert res.extra["conditions_met"] is False and res.extra["flags"] == ["conditions-not-met"]
    assert any("pole separation" in n for n in res.notes)
    with pytest.raises(ConditionsNotMet, match="does not apply"):
        _learn_p2(model, sens, Fraction(3, 10 ** 9), "adversarial", strict=True)


def test_p2_constant_from_an_observed_transcript():
    # C computed by the learner from its own (noisy) answers, and for a learn_multi_head run
    from exactattn.learners.multi_head import learn_multi_head
    from exactattn.learners.p2.sensitivity import constant_for
    model = ea.random_multi_head(2, 1, seed=3, kind="real")
    tau = Fraction(1, 10 ** 15)
    oracle = Oracle(model, backend="mp", dps=30, noise=Additive(tau, "adversarial"))
    res = learn_multi_head_noisy(oracle, 2, 1, tau, seed=1)
    assert res.extra["conditions_met"]
    assert parameter_error(model, res.heads, dps=30) <= res.extra["predicted_error"] * 1.1
    exact = learn_multi_head(Oracle(model, backend="mp", dps=30), 2, heads=1, seed=1)
    c = constant_for(exact)
    assert abs(c.C / res.extra["C"] - 1) < 1e-6


def test_p2_noisy_learner_needs_mp():
    model = ea.random_multi_head(2, 1, seed=3, kind="real")
    with pytest.raises(ValueError, match="mp backend"):
        learn_multi_head_noisy(Oracle(model, backend="float"), 2, 1, 1e-10)


# ------------------------------------------------------------------ membership (P1 App. B)
def test_membership_oracle_answers_bits_and_counts():
    head = ea.random_head(2, seed=1, kind="real")
    mo = MembershipOracle(head, dps=DPS)
    y = Oracle(head, backend="mp", dps=DPS)([[1, 0]])
    assert mo([[1, 0]], y - 1e-9) is True and mo([[1, 0]], y + 1e-9) is False
    assert mo([[1, 0]]) is (y > 0)  # default threshold 0
    assert mo.queries == 3 and mo.max_length == 1 and len(mo.transcript) == 3


@pytest.mark.parametrize("d", [2, 3])
def test_membership_learner_precision_and_query_count(d):
    be = get_backend("mp", DPS)
    head = ea.random_head(d, seed=20 + d, kind="real")
    B, mu = single_head_assumptions(be, head)
    eps, R = Fraction(1, 10 ** 12), 8
    mo = MembershipOracle(head, dps=DPS)
    res = learn_single_head_membership(mo, d, B, mu, eps, R)
    k = bisection_steps(Fraction(R), eps)
    assert k == 43 and Fraction(R, 2 ** k) <= eps < Fraction(R, 2 ** (k - 1))
    assert res.queries == mo.queries == (d * d + d) * k == membership_query_count(d, R, eps)
    assert res.expected_queries == res.queries and res.max_length == 2
    assert res.extra["value_queries"] == d * d + d and res.extra["conditions_met"]
    eW, ev, e_entry = _errors(be, head, res)
    W, v = res.heads[0]
    assert max(abs(be.scalar(v[i]) - be.scalar(head.v[i])) for i in range(d)) <= be.scalar(eps)
    assert e_entry <= res.extra["bound_W_entry"] and eW <= res.extra["bound_W"]


def test_membership_value_bound_too_small_is_flagged():
    be = get_backend("mp", DPS)
    head = ea.random_head(2, seed=7, kind="real")
    B, mu = single_head_assumptions(be, head)
    tiny = min(abs(be.scalar(x)) for x in head.v) / 2
    res = learn_single_head_membership(MembershipOracle(head, dps=DPS), 2, B, mu,
                                       Fraction(1, 10 ** 6), tiny)
    assert "value-bound-reached" in res.extra["flags"] and not res.extra["conditions_met"]


# ------------------------------------------------------------------ CLI
def test_cli_noise_single_head_json(capsys):
    code = main(["noise", "single-head", "--dim", "3", "--taus", "1e-6,1e-12", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["algorithm"] == "single-head" and out["dim"] == 3 and len(out["rows"]) == 2
    assert abs(out["slope"] - 1) < 0.05 and out["expected_queries"] == 12
    for row in out["rows"]:
        assert row["holds"] and row["conditions_met"] and row["error"] <= row["bound"]
        assert row["ratio"] == pytest.approx(row["error"] / row["bound"])
        assert row["queries"] == 12


@pytest.mark.slow
def test_cli_noise_multi_head_json_and_plot(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "noise.png"
    code = main(["noise", "multi-head", "--dim", "2", "--heads", "1", "--dps", "30",
                 "--taus", "1e-10,1e-20", "--json", "--plot", str(png)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and png.stat().st_size > 1000
    assert out["algorithm"] == "multi-head" and out["C"] > 0 and out["expected_queries"] == 15
    assert {"cond_U", "cond_X", "min_pole_separation", "min_residue"} <= set(out["constant"])
    assert all(r["conditions_met"] and r["ratio"] <= 1.1 for r in out["rows"])


def test_cli_noise_table_and_bad_arguments(capsys, monkeypatch):
    assert main(["noise", "single-head", "--dim", "2", "--taus", "1e-8"]) == 0
    text = capsys.readouterr().out
    assert "P1 Thm 6.1" in text and "eps_W" in text
    assert main(["noise", "single-head", "--dim", "2", "--heads", "2"]) == 2
    assert main(["noise", "single-head", "--dim", "2", "--taus", "x"]) == 2
    assert main(["noise", "single-head", "--dim", "2", "--mode", "worst-case"]) == 2
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    assert main(["noise", "single-head", "--dim", "2", "--plot", "x.png"]) == 2
    assert 'pip install ".[plots]"' in capsys.readouterr().err


def test_a_tau_below_float64_keeps_an_exact_constant_and_a_sweep_refuses_it():
    """τ = 10⁻⁴⁰⁰ (0.0 as a float): the noisy learner's constant C = bar/τ is computed in
    mpmath, not through float(τ) (a ZeroDivisionError before); a sweep, whose reports are
    float64, refuses such a τ up front."""
    from exactattn.analysis.noise_sweep import parse_taus
    from exactattn.learners.p2.noisy import learn_multi_head_noisy
    model = ea.random_multi_head(2, 1, seed=0, kind="real")
    res = learn_multi_head_noisy(Oracle(model, backend="mp", dps=50), 2, 1,
                                 Fraction(1, 10 ** 400), seed=0)
    assert res.error_bar is None or res.error_bar.constant > 10 ** 300
    with pytest.raises(ValueError, match="smallest normal float64"):
        parse_taus("1e-10,1e-400")
    assert parse_taus("0,1e-10") == [0, Fraction(1, 10 ** 10)]

"""What a result proves (docs/design.md §8): validation queries and the out-of-class failure,
the ``proves`` statement, budgets and timeouts, and the silent-nonsense cases of the honesty
audit.  Each check has a test with the planted bug that makes it fail."""

from __future__ import annotations

import json
import threading
from fractions import Fraction

import pytest

import exactattn as ea
from exactattn.analysis import adversaries as adv
from exactattn.cli.main import main as _main
from exactattn.learners.p2 import genericity
from exactattn.learners.result import proves, validation
from exactattn.learners.p1.low_rank import learn_low_rank, random_low_rank_head
from exactattn.learners.multi_head import learn_multi_head
from exactattn.learners.p2.schedule import Schedule, published_count
from exactattn.learners.p1.single_head import learn_single_head


def main(argv) -> int:
    """The CLI's exit status (argparse's bad arguments exit through SystemExit)."""
    try:
        return _main(argv)
    except SystemExit as e:
        return e.code


def _other(d, H, seed=99):
    return ea.random_multi_head(d, H, seed=seed)


# ---------------------------------------------------------------------- the three kinds
def _kinds(d, H, backend="exact"):
    m, o = ea.random_multi_head(d, H, seed=1), _other(d, H)
    return m, {
        "score bias": adv.score_bias(m, adv.final_token_bias(1), backend),
        "beyond the schedule's length": adv.beyond_length(m, o, 2 * H + 1, backend),
        "three distinct tokens": adv.on_distinct(m, o, 3, backend),
    }


@pytest.mark.parametrize("kind", ["score bias", "beyond the schedule's length",
                                  "three distinct tokens"])
def test_out_of_class_oracles_pass_the_bare_schedule_and_fail_validation(kind):
    """The bug validation removes: without it (validate=0) each oracle comes back
    "recovered" as M; with it (the default) the result is OutOfClass carrying the query."""
    d, H = (1, 1) if kind == "score bias" else (2, 2)   # the bias passes the schedule at d = 1
    m, kinds = _kinds(d, H)
    bare = learn_multi_head(ea.Oracle(kinds[kind], dim=d, backend="exact"), d, heads=H,
                            seed=0, validate=0)
    # returned as a model — M itself for the switching oracles, a shifted W for the bias
    assert bare.validation_queries == 0 and bare.certificate["certified"]
    assert ea.same_function(bare.model, m) == (kind != "score bias")
    assert "nothing outside the schedule's query shapes was checked" in bare.proves
    oracle = ea.Oracle(kinds[kind], dim=d, backend="exact")
    with pytest.raises(ea.OutOfClass) as e:
        learn_multi_head(oracle, d, heads=H, seed=0)
    q, det = e.value.details["query"], e.value.details
    distinct = len({tuple(t) for t in q})
    assert e.value.reason == "out-of-class" and (det["length"], det["distinct"]) == (len(q), distinct)
    # the catching query has a shape the schedule never asks (it stops at 2H + 1, two tokens)
    assert len(q) > 2 * H + 1 or distinct >= 3
    if kind == "beyond the schedule's length":
        assert len(q) > 2 * H + 1
    if kind == "three distinct tokens":
        assert distinct >= 3
    assert e.value.details["schedule_queries"] == published_count(d, H)
    assert oracle.queries == published_count(d, H)          # the schedule's count, apart
    assert oracle.validation_queries == e.value.details["validation_queries"] >= 1


def _schedule_shapes(S):
    return {(len(q), len({tuple(t) for t in q})) for q in S.queries()}


def test_validation_queries_have_shapes_the_schedule_never_uses():
    """validation.py's design: lengths 1 … 4H₀ + 4, 1 … min(L, 6) distinct tokens; the first
    unasked length, one length beyond 2H₀ + 4 and k = 4, 3, 2, 1 in every default run; each
    query has exactly the shape drawn, its final token one of the distinct ones."""
    import random
    be = ea.get_backend("exact")
    for H0 in (1, 2, 5):
        S = Schedule([[1, 0], [0, 1]], [[2, 1], [1, 1]], H0)
        longest = max(len(q) for q in S.queries())
        asked = _schedule_shapes(S)
        assert longest == 2 * H0 + 1 and max(k for _, k in asked) <= 2
        n = validation.default_count(H0)
        for seed in range(20):
            rng = random.Random(seed)
            shapes = validation.validation_shapes(rng, H0, n, longest)
            lengths, ks = [L for L, _ in shapes], [k for _, k in shapes]
            assert len(shapes) == n and len(set(lengths)) == n      # distinct while n ≤ 4H₀+4
            assert all(1 <= L <= 4 * H0 + 4 and 1 <= k <= min(L, 6) for L, k in shapes)
            assert longest + 1 in lengths                           # the first unasked length
            assert any(2 * H0 + 5 <= L <= 4 * H0 + 4 for L in lengths)
            assert all(ks.count(k) >= 1 for k in validation.FORCED_DISTINCT)
            assert any(s not in asked for s in shapes)
            for L, k in shapes:
                q = validation.validation_query(rng, 2, L, k, be)
                toks = {tuple(t) for t in q}
                assert len(q) == L and len(toks) == k and all(abs(x) <= 1000 for t in q for x in t)
    with pytest.raises(ValueError, match="cannot have 0 distinct tokens"):
        validation.validation_query(random.Random(0), 2, 1, 0, be)


def test_single_head_validation_asks_length_3_and_four_distinct_tokens():
    """The single head's schedule stops at length 2: every default run asks length 3 and a
    query with exactly four distinct tokens (4 validation queries, H₀ = 1)."""
    import random
    for seed in range(50):
        shapes = validation.validation_shapes(random.Random(f"validation:{seed}"), 1, 4, 2)
        assert 3 in [L for L, _ in shapes] and 4 in [k for _, k in shapes]
        assert all(k >= 2 for L, k in shapes if L == 3)


def _switch(model, other, when, backend="exact"):
    be = ea.get_backend(backend)
    return lambda tokens: (other if when(tokens) else model)(tokens, be)


@pytest.mark.parametrize("seed", range(4))
def test_an_oracle_deviating_only_at_length_3_is_caught_by_the_single_head(seed):
    h1, h2 = ea.random_multi_head(2, 1, seed=1), ea.random_multi_head(2, 1, seed=2)
    f = _switch(h1, h2, lambda X: len(X) == 3)
    bare = learn_single_head(ea.Oracle(f, dim=2, backend="exact"), 2, seed=seed, validate=0)
    assert ea.same_function(bare.model, h1)                 # the schedule never sees it
    with pytest.raises(ea.OutOfClass) as e:
        learn_single_head(ea.Oracle(f, dim=2, backend="exact"), 2, seed=seed)
    assert e.value.details["length"] == 3


@pytest.mark.parametrize("learner", ["single head", "multi-head"])
def test_an_oracle_deviating_only_with_four_distinct_tokens_is_caught(learner):
    d, H = (2, 1) if learner == "single head" else (2, 2)
    m, o = ea.random_multi_head(d, H, seed=1), ea.random_multi_head(d, H, seed=2)
    f = _switch(m, o, lambda X: len({tuple(t) for t in X}) == 4)
    for seed in range(3):
        run = (lambda **kw: learn_single_head(ea.Oracle(f, dim=d, backend="exact"), d,
                                              seed=seed, **kw)) if H == 1 else \
              (lambda **kw: learn_multi_head(ea.Oracle(f, dim=d, backend="exact"), d,
                                             heads=H, seed=seed, **kw))
        assert ea.same_function(run(validate=0).model, m)
        with pytest.raises(ea.OutOfClass) as e:
            run()
        assert e.value.details["distinct"] == 4


def test_planted_schedule_shaped_validation_misses_the_length_oracle(monkeypatch):
    """Planted bug: validation queries of the schedule's own shapes (length ≤ 2H₀ + 1, two
    distinct tokens); the oracle that changes beyond the schedule's length is then returned
    as recovered."""
    m, kinds = _kinds(2, 2)
    f = kinds["beyond the schedule's length"]
    with pytest.raises(ea.OutOfClass):
        learn_multi_head(ea.Oracle(f, dim=2, backend="exact"), 2, heads=2, seed=0)
    monkeypatch.setattr(validation, "validation_shapes",
                        lambda rng, H0, count, schedule_length=None: [(2 * H0 + 1, 2)] * count)
    res = learn_multi_head(ea.Oracle(f, dim=2, backend="exact"), 2, heads=2, seed=0)
    assert res.validation_queries == 6 and ea.same_function(res.model, m)


def test_planted_agreeing_check_misses_every_kind(monkeypatch):
    """Planted bug: the exact comparison always agrees; validation then proves nothing."""
    monkeypatch.setattr(validation, "_exact_check",
                        lambda model, be: lambda tokens, y: (True, y))
    m, kinds = _kinds(2, 2)
    res = learn_multi_head(ea.Oracle(kinds["three distinct tokens"], dim=2, backend="exact"),
                           2, heads=2, seed=0)
    assert ea.same_function(res.model, m)


@pytest.mark.slow
def test_in_class_oracles_validate_on_every_backend():
    m = ea.random_multi_head(2, 2, seed=3)
    res = learn_multi_head(ea.Oracle(m), 2, heads=2, seed=0)
    assert res.validation_queries == 6 and res.queries == published_count(2, 2)
    assert len(res.validation) == 6 and res.transcript[-1] != res.validation[0]
    real = ea.random_multi_head(2, 2, seed=3, kind="real")
    for backend in ("mp", "float"):
        res = learn_multi_head(ea.Oracle(real, backend=backend), 2, heads=2, seed=0,
                               accuracy=None)
        assert res.validation_queries == 6 and res.error_bar is not None


@pytest.mark.parametrize("backend", ["mp", "float"])
@pytest.mark.slow
def test_inexact_out_of_class_is_outside_the_error_bar(backend):
    real, other = (ea.random_multi_head(2, 2, seed=s, kind="real") for s in (3, 4))
    f = adv.on_distinct(real, other, 3, backend)
    bare = learn_multi_head(ea.Oracle(f, dim=2, backend=backend), 2, heads=2, seed=0,
                            validate=0)
    assert bare.error_bar is not None
    with pytest.raises(ea.OutOfClass, match="error bar"):
        learn_multi_head(ea.Oracle(f, dim=2, backend=backend), 2, heads=2, seed=0)


@pytest.mark.slow
def test_planted_shrunk_bar_makes_in_class_validation_fail(monkeypatch):
    """The inexact comparison uses the bar: shrink the model's output ball to a point and the
    answer's ball to a point, and an in-class float oracle fails validation."""
    real = ea.random_multi_head(2, 2, seed=3, kind="real")
    orig = validation.output_ball
    monkeypatch.setattr(validation, "output_ball",
                        lambda heads, radius, tokens: orig(heads, 0, tokens).mid() + 1e-3)
    with pytest.raises(ea.OutOfClass):
        learn_multi_head(ea.Oracle(real, backend="float"), 2, heads=2, seed=0)


def test_every_schedule_and_learner_validates():
    m, kinds = _kinds(2, 2)
    f = kinds["three distinct tokens"]
    for schedule in ("economy", "adaptive"):
        kw = {"heads": 2} if schedule == "economy" else {"heads_bound": 2}
        with pytest.raises(ea.OutOfClass):
            learn_multi_head(ea.Oracle(f, dim=2, backend="exact"), 2, seed=0,
                             schedule=schedule, **kw)
    lr = ea.MultiHeadAttention([random_low_rank_head(3, 1, seed=1)])
    lr2 = ea.MultiHeadAttention([random_low_rank_head(3, 1, seed=2)])
    g = adv.on_distinct(lr, lr2, 3)
    assert learn_low_rank(ea.Oracle(g, dim=3, backend="exact"), 3, rank=1, seed=0,
                          validate=0).validation_queries == 0
    with pytest.raises(ea.OutOfClass):
        learn_low_rank(ea.Oracle(g, dim=3, backend="exact"), 3, rank=1, seed=0)
    h1, h2 = ea.random_multi_head(2, 1, seed=1), ea.random_multi_head(2, 1, seed=2)
    with pytest.raises(ea.OutOfClass):
        learn_single_head(ea.Oracle(adv.on_distinct(h1, h2), dim=2, backend="exact"), 2)


def test_transformer_validates():
    T1 = ea.random_transformer(2, 1, 2, seed=1)
    T2 = ea.random_transformer(2, 1, 2, seed=2)
    res = ea.learn_transformer(ea.Oracle(T1), 2, heads=1, hidden=2, seed=0)
    assert res.validation_queries == 4 and "Transformer" in res.proves
    f = adv.beyond_length(T1, T2, res.max_length)
    with pytest.raises(ea.OutOfClass):
        ea.learn_transformer(ea.Oracle(f, dim=2, backend="exact"), 2, heads=1, hidden=2,
                             seed=0)


def test_validate_0_reproduces_the_bare_schedule():
    m = ea.random_multi_head(2, 2, seed=5)
    a, b = ea.Oracle(m), ea.Oracle(m)
    learn_multi_head(a, 2, heads=2, seed=4, validate=0)
    learn_multi_head(b, 2, heads=2, seed=4)
    assert a.transcript == b.transcript and a.validation_queries == 0
    assert b.validation_queries == 6 and len(b.validation_transcript) == 6
    with pytest.raises(ValueError, match="validate"):
        learn_multi_head(ea.Oracle(m), 2, heads=2, validate=-1)


def test_resample_never_retries_an_out_of_class_oracle():
    m, kinds = _kinds(2, 2)
    with pytest.raises(ea.OutOfClass):
        learn_multi_head(ea.Oracle(kinds["three distinct tokens"], dim=2, backend="exact"), 2,
                         heads=2, seed=0, resample=True)


def test_cli_line_and_json_show_both_counts(capsys):
    assert main(["learn", "multi-head", "--dim", "2", "--heads", "2", "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["queries"] == published_count(2, 2) and out["validation_queries"] == 6
    assert "generic" in out["proves"]
    assert main(["learn", "multi-head", "--dim", "2", "--heads", "2", "--validate", "0",
                 "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "+ 0 validation queries" in text and "proves: " in text
    assert main(["learn", "multi-head", "--dim", "2", "--validate", "-1"]) == 2


# ---------------------------------------------------------------------- proves
def test_exact_p2_statement_and_the_degree_bound():
    from exactattn.analysis.genericity import (bad_set_polynomials, distinct_factors,
                                               total_degree)
    m = ea.random_multi_head(2, 2, seed=1)
    res = learn_multi_head(ea.Oracle(m), 2, heads_bound=3, seed=0)
    D = genericity.degree_bound(2, 3)
    assert f"D/|S| = {D}/2001" in res.proves and "generic for it" in res.proves
    heads = [(h.W, h.v) for h in m.canonical().heads]
    assert total_degree(distinct_factors(bad_set_polynomials(heads, 2))[0]) <= D
    # with exactly H0 heads no probability is involved: Lemma B
    exact = learn_multi_head(ea.Oracle(m), 2, heads=2, seed=0)
    assert "Lemma B" in exact.proves and "D/|S|" not in exact.proves


def test_a_draw_that_is_not_generic_is_said_so():
    """Planted: a two-head model whose W differ only where u1ᵀ·x1 cannot see (identity
    bases): the poles collide in I(u1, x1); the statement must not claim genericity."""
    W = [[Fraction(1), Fraction(0)], [Fraction(0), Fraction(1, 2)]]
    W2 = [[Fraction(1), Fraction(0)], [Fraction(0), Fraction(3, 2)]]
    S = Schedule([[1, 0], [0, 1]], [[1, 0], [0, 1]], 2)
    bad = genericity.draw_violations([(W, [1, 1]), (W2, [1, 2])], S)
    assert any("collide in I(u1,x1)" in b for b in bad)
    assert genericity.draw_violations([(W, [1, 1])], S) == []
    res = ea.learners.result.LearnResult("multi-head", 2, "exact", [(W, [1, 1]), (W2, [1, 2])],
                                         29, 5)
    proves.state(res, 2, genericity.statement(res, S, 1000))
    assert "not generic" in res.proves and "may give the same answers" in res.proves


def test_inexact_and_p1_statements():
    real = ea.random_multi_head(2, 1, seed=3, kind="real")
    res = learn_single_head(ea.Oracle(real, backend="mp"), 2)
    assert "within ±" in res.proves and "validation queries" in res.proves
    res = learn_single_head(ea.Oracle(ea.random_multi_head(2, 1, seed=3)), 2)
    assert "a multi-head oracle is not excluded" in res.proves


# ---------------------------------------------------------------------- resources
def test_a_budget_below_the_schedule_is_refused_before_the_first_query():
    m = ea.random_multi_head(2, 2, seed=1)
    oracle = ea.Oracle(m, budget=10)
    with pytest.raises(ea.BudgetExceeded) as e:
        learn_multi_head(oracle, 2, heads=2, seed=0)
    assert oracle.queries == 0 and isinstance(e.value, ea.LearningFailure)
    assert e.value.reason == "budget-exceeded" and e.value.details["needed"] == 29 + 6
    one = ea.Oracle(ea.random_multi_head(2, 1, seed=1), budget=5)
    with pytest.raises(ea.BudgetExceeded):
        learn_single_head(one, 2)
    assert one.queries == 0


def test_a_budget_for_the_schedule_alone_needs_validate_0():
    m = ea.random_multi_head(2, 2, seed=1)
    with pytest.raises(ea.BudgetExceeded, match="validation"):
        learn_multi_head(ea.Oracle(m, budget=29), 2, heads=2, seed=0)
    res = learn_multi_head(ea.Oracle(m, budget=29), 2, heads=2, seed=0, validate=0)
    assert res.queries == 29


@pytest.mark.parametrize("schedule, told, least", [("economy", {"heads": 2}, 1 + 2 * 2 * 3),
                                                     ("adaptive", {"heads_bound": 3}, 1 + 2 * 3)])
def test_the_economy_schedules_reserve_their_first_queries(schedule, told, least):
    """The beyond-P2 schedules are adaptive, so they reserve what they always ask (q0, the
    first family and, for the economy, every column-1 family) and the validation queries;
    a budget that covers them runs the whole schedule."""
    m = ea.random_multi_head(3, 2, seed=1)
    n_valid = 2 * told.get("heads", told.get("heads_bound")) + 2
    short = ea.Oracle(m, budget=least + n_valid - 1)
    with pytest.raises(ea.BudgetExceeded, match="refused before the first query") as e:
        learn_multi_head(short, 3, schedule=schedule, seed=0, **told)
    assert short.queries == 0 and e.value.details["needed"] == least + n_valid
    res = learn_multi_head(ea.Oracle(m, budget=200), 3, schedule=schedule, seed=0, **told)
    assert res.queries >= least and res.validation_queries == n_valid


@pytest.mark.parametrize("H", [1, 2])
@pytest.mark.slow
def test_the_transformer_learner_reserves_its_attention_part(H):
    """Two antisymmetric calls per query of the attention schedule, plus validation, are
    reserved before the first query; a budget that covers the whole run is enough."""
    t = ea.random_transformer(2, H, hidden=3, seed=1)
    full = ea.Oracle(t)
    res = ea.learn_transformer(full, 2, heads=H, hidden=3, seed=0)
    short = ea.Oracle(t, budget=2 * (4 * H * 4 - 2 * H + 1) - 1)
    with pytest.raises(ea.BudgetExceeded, match="refused before the first query"):
        ea.learn_transformer(short, 2, heads=H, hidden=3, seed=0)
    assert short.queries == 0
    enough = ea.Oracle(t, budget=full.queries + res.validation_queries)
    assert ea.learn_transformer(enough, 2, heads=H, hidden=3, seed=0).queries == res.queries


def test_planted_no_reserve_spends_the_budget_first(monkeypatch):
    """Without the up-front refusal the oracle would answer 10 queries before failing."""
    monkeypatch.setattr(ea.Oracle, "reserve", lambda self, n, what: None)
    oracle = ea.Oracle(ea.random_multi_head(2, 2, seed=1), budget=10)
    with pytest.raises(ea.BudgetExceeded):
        learn_multi_head(oracle, 2, heads=2, seed=0)
    assert oracle.queries == 10


def test_a_silent_oracle_is_a_named_timeout():
    m = ea.random_multi_head(2, 1, seed=1)
    release, calls = threading.Event(), []

    def silent_from_the_third(tokens):
        calls.append(1)
        if len(calls) >= 3:
            release.wait()              # never answers (released when the test ends)
        return m(tokens, "exact")
    oracle = ea.Oracle(silent_from_the_third, dim=2, backend="exact", timeout=0.2)
    try:
        with pytest.raises(ea.OracleTimeout) as e:
            learn_single_head(oracle, 2)
    finally:
        release.set()
    assert e.value.reason == "oracle-timeout" and e.value.details["query_index"] == 2
    assert oracle.queries == 2                      # the abandoned query is not counted
    fast = ea.Oracle(lambda t: m(t, "exact"), dim=2, backend="exact", timeout=30)
    assert learn_single_head(fast, 2).queries == 6  # a timeout that is met changes nothing
    with pytest.raises(ValueError, match="timeout"):
        ea.Oracle(m, timeout=0)
    assert main(["learn", "single-head", "--dim", "2", "--timeout", "-1"]) == 2


def test_an_error_inside_a_timed_oracle_is_its_own():
    def broken(tokens):
        raise ZeroDivisionError("inside the oracle")
    with pytest.raises(ea.OracleError, match="ZeroDivisionError.*inside the oracle") as e:
        ea.Oracle(broken, dim=1, backend="exact", timeout=5)([[1]])
    assert isinstance(e.value.__cause__, ZeroDivisionError)
    assert e.value.details == {"query_index": 0, "error": "ZeroDivisionError"}


# ---------------------------------------------------------------------- silent nonsense
def test_heads_and_a_bound_together_say_which_is_used():
    m = ea.random_multi_head(2, 2, seed=1)
    res = learn_multi_head(ea.Oracle(m), 2, heads=2, heads_bound=3, seed=0)
    assert res.expected_queries == published_count(2, 2) == res.queries
    assert any("heads_bound=3 was not used" in n for n in res.notes)


def test_model_random_with_zero_heads_is_refused(capsys):
    assert main(["model", "random", "--dim", "2", "--heads", "0"]) == 2
    assert capsys.readouterr().out == ""


def test_an_empty_out_directory_is_not_no_out(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["check", "P2-count", "--quick", "--out", ""]) == 2
    assert "empty directory name" in capsys.readouterr().err and not list(tmp_path.iterdir())
    assert main(["learn", "single-head", "--dim", "1", "--save", ""]) == 2


@pytest.mark.slow
def test_plot_errors_come_before_the_sweep(tmp_path, monkeypatch, capsys):
    import exactattn.analysis.noise_sweep as ns
    ran = []
    monkeypatch.setattr(ns, "sweep_single_head", lambda *a, **k: ran.append(1))
    for bad in (str(tmp_path / "missing" / "x.png"), str(tmp_path / "x.nosuchformat"),
                str(tmp_path)):
        assert main(["noise", "single-head", "--dim", "2", "--plot", bad, "--quiet"]) == 2
    assert ran == []                     # the sweep never started


def test_noise_tau_beyond_float64_is_a_bad_argument(capsys):
    assert main(["noise", "single-head", "--dim", "2", "--taus", "1e400"]) == 2
    assert "float64 range" in capsys.readouterr().err


# ---------------------------------------------------------------------- the harness
def _harness():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "honesty_harness.py"
    spec = importlib.util.spec_from_file_location("honesty_harness", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_harness_one_trial_per_kind_is_clean():
    h = _harness()
    results = h.run(1, workers=1, seed=3)
    assert {k for k, *_ in results} == set(h.KINDS)
    assert all(o in ("recovered", "named") for _, o, _, _ in results), results


def test_harness_counts_a_planted_wrong_model_and_a_crash(monkeypatch):
    """Planted bugs: the learner returns another model as recovered (→ WRONG), validation
    switched off (→ the out-of-class oracle is WRONG), an unnamed exception (→ crash)."""
    h = _harness()
    real = h.learn_multi_head

    def tampered(*a, **k):
        res = real(*a, **k)
        res.heads = res.heads[:-1]
        return res
    monkeypatch.setattr(h, "learn_multi_head", tampered)
    assert h.run_trial("multi-head P2", 0)[1] == "WRONG"
    monkeypatch.setattr(h, "learn_multi_head", lambda *a, **k: real(*a, **{**k, "validate": 0}))
    assert h.run_trial("change on 3 distinct tokens", 0)[1] == "WRONG"

    def boom(*a, **k):
        raise KeyError("planted")
    monkeypatch.setattr(h, "learn_multi_head", boom)
    kind, outcome, detail, _ = h.run_trial("multi-head P2", 0)
    assert outcome == "crash" and "KeyError" in detail

"""exactattn.sweep: spec expansion, trial identity, store, runner, executors, the summary's
exact statistics and verdicts (docs/sweeps.md).  Every verdict check has a test that plants
the defect it must catch."""

import json
import sqlite3
from fractions import Fraction

import pytest
import sweep_helpers
from hypothesis import given
from hypothesis import strategies as st

from exactattn.sweep import (
    SerialExecutor,
    SpecError,
    Store,
    SweepSpec,
    run_sweep,
    run_trials,
)
from exactattn.sweep import spec as spec_mod
from exactattn.sweep import trials as trials_mod
from exactattn.sweep.confidence import (
    binomial_cdf,
    binomial_sf,
    clopper_pearson,
    exceeds_bound,
)
from exactattn.sweep.runner import batches_of, default_batch
from exactattn.sweep.summary import summarize

GRID = {"run": [{"learner": "multi-head", "d,H": [[1, 1], [2, 2]], "box": [2, 1000],
                 "trials": 6}]}


def _results(store, trials):
    return {r["key"]: r["result"] for r in store.rows(trials)}


# ---------------------------------------------------------------------- spec
def test_grid_expands_zipped_axes_in_order():
    spec = SweepSpec.from_dict(GRID)
    ts = spec.trials()
    assert len(ts) == len(spec) == 2 * 2 * 6
    assert [(t.params["d"], t.params["H"], t.params["box"], t.seed) for t in ts[:7]] == \
        [(1, 1, 2, s) for s in range(6)] + [(1, 1, 1000, 0)]
    assert len({t.key for t in ts}) == len(ts)
    assert len({t.config for t in ts}) == 4


def test_trial_key_is_the_identity_of_fn_params_and_seed():
    a = SweepSpec.from_dict(GRID).trials()
    b = SweepSpec.from_dict(json.loads(json.dumps(GRID))).trials()
    assert [t.key for t in a] == [t.key for t in b]
    p = a[0].params
    k = spec_mod.trial_key(a[0].fn, p, 0)
    assert k == a[0].key
    assert spec_mod.trial_key(a[0].fn, p, 1) != k
    assert spec_mod.trial_key(a[0].fn, {**p, "box": 3}, 0) != k
    assert spec_mod.trial_key(a[0].fn, dict(reversed(list(p.items()))), 0) == k


def test_heads_bound_below_heads_is_skipped_and_counted():
    spec = SweepSpec.from_dict({"run": [{"d": 2, "H": [1, 2, 3], "H0": 2, "trials": 1}]})
    assert spec.skipped == 1
    assert sorted(t.params["H"] for t in spec.trials()) == [1, 2]


def test_toml_and_json_specs_agree(tmp_path):
    (tmp_path / "g.toml").write_text('[[run]]\nlearner = "multi-head"\n"d,H" = [[1, 1], [2, 2]]\n'
                                     'box = [2, 1000]\ntrials = 6\n')
    (tmp_path / "g.json").write_text(json.dumps(GRID))
    a = SweepSpec.from_file(tmp_path / "g.toml").trials()
    b = SweepSpec.from_file(tmp_path / "g.json").trials()
    assert [t.key for t in a] == [t.key for t in b]


@pytest.mark.parametrize("spec, words", [
    ({"run": [{"learner": "nope", "d": 2}]}, "learner must be one of"),
    ({"run": [{"d": 2, "rank": 1}]}, "rank does not apply"),
    ({"run": [{"H": 2}]}, "d (the dimension) is required"),
    ({"run": [{"d": 0}]}, "positive integer"),
    ({"run": [{"d": 2, "seeds": "5-1"}]}, "empty"),
    ({"run": [{"d": 2, "seeds": [1, 1]}]}, "repeated"),
    ({"run": [{"d": 2, "seeds": "0-3", "trials": 4}]}, "not both"),
    ({"run": [{"d,H": [[2]]}]}, "each entry must list 2 values"),
    ({"run": [{"d": 2, "backend": "mp", "box": 5}]}, "box applies to the exact backend"),
    ({"runs": []}, "unknown top-level key"),
    ({}, "names no trials"),
    ({"trial": [{"fn": "no_colon"}]}, "dotted name"),
    ({"claim": [{"id": "P2-count", "size": "huge"}]}, "quick or full"),
])
def test_bad_specs_say_what_is_wrong(spec, words):
    with pytest.raises(SpecError, match=None) as e:
        SweepSpec.from_dict(spec)
    assert words in str(e.value)


def test_missing_and_malformed_spec_files(tmp_path):
    with pytest.raises(SpecError, match="not found"):
        SweepSpec.from_file(tmp_path / "none.toml")
    (tmp_path / "bad.toml").write_text("[[run]\n")
    with pytest.raises(SpecError, match="not valid TOML"):
        SweepSpec.from_file(tmp_path / "bad.toml")


# ---------------------------------------------------------------------- trials
def test_learner_trial_is_a_pure_function_of_params_and_seed():
    p = SweepSpec.from_dict({"run": [{"d": 2, "H": 2, "box": 1000}]}).trials()[0].params
    a = trials_mod.run_batch(spec_mod.LEARNER_TRIAL, [(p, 3), (p, 4)])
    b = trials_mod.run_batch(spec_mod.LEARNER_TRIAL, [(p, 3), (p, 4)])
    assert [r for r, _ in a["rows"]] == [r for r, _ in b["rows"]]
    rec = json.loads(a["rows"][0][0])
    assert rec["outcome"] == "recovered" and rec["queries"] == rec["expected_queries"] == 29
    assert "timing" not in rec and "learner_seconds" in a["rows"][0][1]
    other = json.loads(a["rows"][1][0])
    assert rec["U"] != other["U"]  # the seed draws the bases, and the record shows them
    assert rec["model_sha256"] == other["model_sha256"]  # the same model both times


def test_single_head_and_low_rank_trials():
    spec = SweepSpec.from_dict({"run": [{"learner": "single-head", "d": 3, "trials": 2},
                                        {"learner": "low-rank", "d": 3, "rank": 1}]})
    with Store(":memory:") as st_:
        run_sweep(spec, st_, executor="serial")
        rows = st_.rows(spec.trials())
    assert [r["outcome"] for r in rows] == ["recovered"] * 3
    assert [r["queries"] for r in rows] == [12, 12, 3 + 1 * (6 - 1)]


def test_validation_queries_are_counted_apart_from_the_published_count():
    """P1 on float: d² + d schedule queries, and 2H₀ + 2 = 4 validation queries counted apart
    (docs/design.md §8)."""
    spec = SweepSpec.from_dict({"run": [{"learner": "single-head", "d": 2, "backend": "float",
                                         "trials": 2}]})
    with Store(":memory:") as db:
        run_sweep(spec, db, executor="serial")
        rows = db.rows()
        s = summarize(rows)
    assert [r["record"]["queries"] for r in rows] == [6, 6]
    assert [r["record"]["validation_queries"] for r in rows] == [4, 4]
    assert s.configs[0].counts_match is True and s.ok


def test_a_learner_that_returns_a_wrong_model_is_caught(monkeypatch):
    """Planted bug: the learner returns a model with one entry changed."""
    from exactattn.learners.result import LearnResult
    real = trials_mod._learn

    def tampered(params, oracle, seed):
        res = real(params, oracle, seed)
        W, v = res.heads[0]
        v = list(v)
        v[0] += 1
        return LearnResult("multi-head", res.dim, "exact", [(W, v)] + list(res.heads[1:]),
                           res.queries, res.max_length)
    monkeypatch.setattr(trials_mod, "_learn", tampered)
    spec = SweepSpec.from_dict({"run": [{"d": 2, "H": 1, "box": 1000, "trials": 2}]})
    with Store(":memory:") as db:
        run_sweep(spec, db, executor="serial")
        rows = db.rows()
    assert {r["outcome"] for r in rows} == {"wrong"}
    assert "recovered" in rows[0]["record"]  # the wrong model itself is kept
    s = summarize(rows)
    assert s.configs[0].wrong == 2 and s.configs[0].status == "FAIL" and not s.ok


def test_a_crashing_learner_is_recorded_as_an_error(monkeypatch):
    """Planted bug: the learner raises something other than a named failure."""
    def crash(params, oracle, seed):
        raise ZeroDivisionError("planted")
    monkeypatch.setattr(trials_mod, "_learn", crash)
    spec = SweepSpec.from_dict({"run": [{"d": 2, "H": 1, "trials": 2}]})
    with Store(":memory:") as db:
        run_sweep(spec, db, executor="serial")
        rows = db.rows()
    assert {r["outcome"] for r in rows} == {"error"}
    assert "ZeroDivisionError: planted" in rows[0]["record"]["message"]
    assert summarize(rows).configs[0].status == "FAIL"


def test_dotted_names():
    assert trials_mod.dotted_name(sweep_helpers.square) == "sweep_helpers:square"
    with pytest.raises(SpecError, match="module-level"):
        trials_mod.dotted_name(lambda p, s: {})
    with pytest.raises(SpecError, match="cannot import"):
        trials_mod.resolve("no_such_module_xyz:f")
    with pytest.raises(SpecError, match="has no"):
        trials_mod.resolve("sweep_helpers:nothing")


def test_preflight_refuses_an_unknown_schedule():
    spec = SweepSpec.from_dict({"run": [{"d": 2, "schedule": "no-such-schedule"}]})
    with pytest.raises(SpecError, match="schedules are p2, economy"):
        run_sweep(spec, ":memory:", executor="serial")


def test_a_sweep_runs_the_economy_schedule():
    spec = SweepSpec.from_dict({"run": [{"d": 2, "H": 2, "schedule": "economy"}]})
    with Store(":memory:") as db:
        run_sweep(spec, db, executor="serial")
        (row,) = db.rows()
    assert row["record"]["outcome"] == "recovered"


def test_a_trial_must_return_a_record():
    with pytest.raises(TypeError, match="not a record"):
        run_trials("sweep_helpers:not_a_dict", [{}], [0], executor="serial")


# ---------------------------------------------------------------------- store
def test_a_trial_written_twice_keeps_its_first_row(tmp_path):
    t = SweepSpec.from_dict({"trial": [{"fn": "sweep_helpers:square", "params": [{"a": 2}]}]}
                            ).trials()
    with Store(tmp_path / "s.sqlite") as db:
        assert db.write(t, [('{"outcome":"ok","value":"1"}', {"seconds": 1.0})], "v") == 1
        assert db.write(t, [('{"outcome":"ok","value":"2"}', {"seconds": 2.0})], "v") == 0
        rows = db.rows()
    assert len(rows) == 1 and rows[0]["record"]["value"] == "1"


def test_a_failed_write_leaves_nothing_half_written(tmp_path):
    """Planted bug: the second row of a batch cannot be stored; the batch's transaction
    must roll back the first one too."""
    ts = SweepSpec.from_dict({"trial": [{"fn": "sweep_helpers:square", "params": [{"a": 2}],
                                         "trials": 2}]}).trials()
    with Store(tmp_path / "s.sqlite") as db:
        with pytest.raises((TypeError, sqlite3.Error)):
            db.write(ts, [('{"outcome":"ok"}', {"seconds": 1.0}),
                          ('{"outcome":"ok"}', {"seconds": object()})], "v")
        assert db.count() == 0
        assert db.write(ts, [('{"outcome":"ok"}', {"seconds": 1.0})] * 2, "v") == 2


def test_store_rejects_a_file_that_is_not_sqlite(tmp_path):
    from exactattn.sweep import StoreError
    bad = tmp_path / "x.sqlite"
    bad.write_text("not a database, just text " * 100)
    with pytest.raises(StoreError, match="not a usable SQLite file"):
        Store(bad)


def test_audit_catches_duplicates_from_an_unstable_identity(monkeypatch, tmp_path):
    """Planted bug: a trial key that changes between runs (here: salted by a counter) makes a
    resumed sweep run and store every trial again; the audit counts (config, seed) pairs and
    reports them, independently of the key."""
    spec = SweepSpec.from_dict({"trial": [{"fn": "sweep_helpers:square", "params": [{"a": 3}],
                                           "trials": 4}]})
    path = tmp_path / "s.sqlite"
    run_sweep(spec, path, executor="serial")
    with Store(path) as db:
        clean = db.audit(spec.trials())
    assert clean["missing"] == [] and clean["duplicated"] == [] and clean["stored"] == 4
    salt = iter(range(10 ** 6))
    real = spec_mod.trial_key
    monkeypatch.setattr(spec_mod, "trial_key", lambda f, p, s: real(f, p, [s, next(salt)]))
    run_sweep(spec, path, executor="serial")
    with Store(path) as db:
        audit = db.audit(spec.trials())
    assert len(audit["duplicated"]) == 4 and audit["rows"] == 8


# ---------------------------------------------------------------------- runner and executors
class _StopAfter(SerialExecutor):
    """An executor interrupted (Ctrl-C) after `n` batches."""

    def __init__(self, n):
        self.n = n

    def map(self, fn_name, batches, version=None):
        for i, out in super().map(fn_name, batches, version):
            if i == self.n:
                raise KeyboardInterrupt
            yield i, out


@pytest.mark.slow
def test_an_interrupted_sweep_resumes_with_nothing_lost_or_duplicated(tmp_path):
    spec = SweepSpec.from_dict(GRID)
    ts = spec.trials()
    path = tmp_path / "s.sqlite"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(spec, path, executor=_StopAfter(3), batch=4)
    with Store(path) as db:
        assert db.count() == 12  # exactly the three finished batches
    report = run_sweep(spec, path, executor="serial", batch=4)
    assert report.already == 12 and report.new == len(ts) - 12 and report.complete
    with Store(":memory:") as ref:
        run_sweep(spec, ref, executor="serial")
        want = _results(ref, ts)
    with Store(path) as db:
        assert _results(db, ts) == want
        assert db.count() == len(ts)


@pytest.mark.slow
def test_pool_and_serial_give_bit_identical_results():
    spec = SweepSpec.from_dict(GRID)
    ts = spec.trials()
    out = {}
    for ex in ("serial", "pool"):
        with Store(":memory:") as db:
            run_sweep(spec, db, executor=ex, workers=2, batch=3)
            out[ex] = _results(db, ts)
    assert len(out["serial"]) == len(ts) and out["serial"] == out["pool"]


def test_run_trials_returns_records_in_order_on_every_executor():
    want = [{"outcome": "ok", "value": str(a * s * s)} for a in (1, 2) for s in range(5)]
    for ex in ("serial", "pool"):
        got = run_trials(sweep_helpers.square, [{"a": 1}, {"a": 2}], range(5), executor=ex,
                         workers=2, batch=2)
        assert got == want
    with pytest.raises(SpecError, match="repeated"):
        run_trials(sweep_helpers.square, [{"a": 1}, {"a": 1}], [0], executor="serial")


def test_run_trials_accepts_a_model_in_its_parameters():
    """A claim may pass the model itself: its exact to_dict() is its identity."""
    from exactattn.models.attention import random_multi_head
    m = random_multi_head(2, 2, seed=5)
    m([[1, 2], [3, 4]])  # evaluated once: its heads now cache backend data (flint objects)
    got = run_trials(sweep_helpers.heads_of, [{"model": m}], [0, 1], executor="pool",
                     workers=2, batch=1)
    assert got == [{"heads": 2}] * 2
    k1 = spec_mod.trial_key("f:g", {"model": m}, 0)
    assert k1 == spec_mod.trial_key("f:g", {"model": random_multi_head(2, 2, seed=5)}, 0)
    assert k1 != spec_mod.trial_key("f:g", {"model": random_multi_head(2, 2, seed=6)}, 0)
    with pytest.raises(TypeError, match="not a JSON value"):
        spec_mod.trial_key("f:g", {"x": object()}, 0)


def test_parameters_a_worker_cannot_receive_fail_in_the_driver():
    """Planted: a parameter that does not pickle (an open file's lock) must fail at once with
    a one-line reason, not hang the pool."""
    import threading
    with pytest.raises(SpecError, match="cannot be sent to a worker"):
        run_trials(sweep_helpers.heads_of, [{"model": _Unpicklable(threading.Lock())}], [0],
                   executor="pool", workers=1)


class _Unpicklable:
    def __init__(self, lock):
        self.lock = lock

    def to_dict(self):
        return {"lock": "held"}


def test_run_trials_with_a_store_resumes(tmp_path):
    path = tmp_path / "r.sqlite"
    first = run_trials("sweep_helpers:square", [{"a": 1}], range(3), executor="serial",
                       store=path)
    again = run_trials("sweep_helpers:square", [{"a": 1}], range(6), executor="serial",
                       store=path)
    assert again[:3] == first and len(again) == 6
    with Store(path) as db:
        assert db.count() == 6


def test_batches_never_mix_functions():
    ts = SweepSpec.from_dict({"trial": [{"fn": "sweep_helpers:square", "params": [{"a": 1}],
                                         "trials": 5},
                                        {"fn": "sweep_helpers:die_once", "params": [{"a": 1}],
                                         "trials": 3}]}).trials()
    bs = batches_of(ts, 2)
    assert [len(b) for b in bs] == [2, 2, 1, 2, 1]
    assert all(len({t.fn for t in b}) == 1 for b in bs)
    assert default_batch(10 ** 5, 2) == 64 and default_batch(10, 2) == 1


@pytest.mark.slow
def test_a_lost_worker_is_replaced_and_its_batch_rerun(tmp_path, caplog):
    """...and says so: one warning per restart, never a silent recovery."""
    params = [{"marker": str(tmp_path / "died"), "victim": 7}]
    with caplog.at_level("WARNING", logger="exactattn.sweep"):
        got = run_trials(sweep_helpers.die_once, params, range(20), executor="pool",
                         workers=2, batch=3)
    assert (tmp_path / "died").exists()  # the worker really died once
    assert got == [{"outcome": "ok", "value": str(s + 1)} for s in range(20)]
    said = [r.getMessage() for r in caplog.records if r.name == "exactattn.sweep"]
    assert len(said) == 1 and "a pool worker died" in said[0] and "(1 of at most 3)" in said[0]


def test_worker_died_warning_counts_batches():
    from exactattn.sweep.executors import worker_died
    assert "1 unfinished batch submitted" in worker_died(1, 3, 1)
    assert "4 unfinished batches submitted" in worker_died(2, 3, 4)


def _configs(*specs):
    """ConfigSummary stand-ins: (status-relevant fields) for Summary.verdict."""
    from collections import Counter
    from exactattn.sweep.summary import ConfigSummary, Summary
    out = [ConfigSummary("f", {"i": i}, 20, Counter(ok=20), Fraction(0), (0, 0), **kw)
           for i, kw in enumerate(specs)]
    return Summary(out, Fraction(99, 100), Fraction(1, 100))


def test_the_verdict_never_says_a_bound_held_when_it_was_not_tested():
    """An untested bound (too few trials) is named in the ok line; a FAIL names its
    configurations with a correct plural."""
    assert _configs({}, {}).verdict() == "ok: every configuration holds"
    untested = _configs({"bound_untested_below": 100}, {}).verdict()
    assert untested.startswith("ok: ") and "holds" not in untested
    assert "not tested in 1 of 2 configurations (it needs 100 trials each)" in untested
    assert _configs({"outside": 1}, {}).verdict().startswith("FAIL: 1 configuration: f ")
    assert _configs({"outside": 1}, {"exceeds": True}).verdict().startswith(
        "FAIL: 2 configurations: ")


# ---------------------------------------------------------------------- exact statistics
@st.composite
def _binomial(draw):
    n = draw(st.integers(1, 25))
    k = draw(st.integers(-1, n + 1))
    p = Fraction(draw(st.integers(0, 12)), 12)
    return k, n, p


def _brute_cdf(k, n, p):
    from math import comb
    return sum((Fraction(comb(n, i)) * p ** i * (1 - p) ** (n - i) for i in range(k + 1)),
               Fraction(0)) if k >= 0 else Fraction(0)


@given(_binomial())
def test_binomial_tails_are_exact(knp):
    k, n, p = knp
    assert binomial_cdf(k, n, p) == _brute_cdf(min(k, n), n, p)
    assert binomial_sf(k, n, p) == 1 - _brute_cdf(min(k - 1, n), n, p)


@given(st.integers(1, 40).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_clopper_pearson_endpoints_are_certified_and_tight(kn):
    """hi: P_hi[X ≤ k] ≤ α/2 (so hi ≥ the exact endpoint) and one grid step below fails;
    lo: P_lo[X ≥ k] ≤ α/2 and one step above fails."""
    k, n = kn
    half = Fraction(1, 200)
    lo, hi = clopper_pearson(k, n, Fraction(99, 100))
    assert 0 <= lo <= Fraction(k, n) <= hi <= 1
    if k < n:
        assert _brute_cdf(k, n, hi) <= half
        assert _brute_cdf(k, n, hi * Fraction(99, 100)) > half   # three significant digits
    if k > 0:
        assert 0 < lo and 1 - _brute_cdf(k - 1, n, lo) <= half
        assert 1 - _brute_cdf(k - 1, n, lo * Fraction(101, 100)) > half


def test_exceeds_bound_is_an_exact_one_sided_test():
    # 0.5 bound, 10 trials: P[X ≥ 9] = 11/1024 ≈ 0.011, P[X ≥ 10] = 1/1024
    assert exceeds_bound(10, 10, Fraction(1, 2), Fraction(1, 100))
    assert not exceeds_bound(9, 10, Fraction(1, 2), Fraction(1, 100))
    assert exceeds_bound(9, 10, Fraction(1, 2), Fraction(11, 1024))
    assert not exceeds_bound(10, 10, Fraction(1), Fraction(1, 100))  # vacuous bound


# ---------------------------------------------------------------------- summary verdicts
def _rows_for(spec, records):
    ts = spec.trials()
    return [{"key": t.key, "config": t.config, "seed": t.seed, "record": r,
             "timing": {"seconds": 0.001, "learner_seconds": 0.001}} for t, r in zip(ts, records)]


@pytest.mark.slow
def test_summary_reports_degree_bound_and_verdicts():
    spec = SweepSpec.from_dict({"run": [{"d": 1, "H": 1, "box": [1, 1000], "trials": 40}]})
    with Store(":memory:") as db:
        run_sweep(spec, db, executor="serial")
        s = summarize(db.rows(spec.trials()), store=db, bound_min_trials=40)
        few = summarize(db.rows(spec.trials()), bound_min_trials=41)
    assert {c.D for c in few.configs} == {None}
    assert {c.bound_note for c in few.configs} == {"bound not tested (< 41 trials)"}
    by_box = {c.params["box"]: c for c in s.configs}
    from exactattn.analysis import genericity as G
    from exactattn.sweep.trials import model_of
    heads = [(h.W, h.v) for h in model_of(spec.trials()[0].params).heads]
    D = G.total_degree(G.distinct_factors(G.bad_set_polynomials(heads, 1))[0])
    assert by_box[1].D == by_box[1000].D == D
    assert by_box[1].bound == Fraction(D, 3) and by_box[1000].bound == Fraction(D, 2001)
    assert by_box[1].failures > 0 and by_box[1].outside == 0
    assert all(c.status == "ok" for c in s.configs) and s.ok
    assert by_box[1000].counts_match is True


def test_a_failure_outside_the_bad_set_fails_the_configuration():
    """Planted bug: a failure whose recorded draw is generic (no bad-set polynomial
    vanishes there) cannot be explained by the Schwartz–Zippel argument."""
    spec = SweepSpec.from_dict({"run": [{"d": 1, "H": 1, "box": 1000, "trials": 100}]})
    ok = {"outcome": "recovered", "queries": 3, "max_length": 3, "expected_queries": 3,
          "expected_max_length": 3}
    fake = {"outcome": "colliding-poles", "queries": 3, "max_length": 3, "U": [["5"]],
            "X": [["7"]], "expected_queries": 3, "expected_max_length": 3}
    s = summarize(_rows_for(spec, [ok] * 99 + [fake]))
    assert s.configs[0].outside == 1 and s.configs[0].status == "FAIL"
    inside = dict(fake, U=[["0"]])  # det U = 0: in the bad set
    c = summarize(_rows_for(spec, [ok] * 99 + [inside])).configs[0]
    assert c.outside == 0 and not c.exceeds and c.status == "ok"


def test_a_rate_far_above_the_bound_is_flagged():
    """Planted bug: 60 failures in 100 draws where D/|S| = D/2001 is tiny."""
    spec = SweepSpec.from_dict({"run": [{"d": 1, "H": 1, "box": 1000, "trials": 100}]})
    ok = {"outcome": "recovered", "queries": 3, "max_length": 3, "expected_queries": 3,
          "expected_max_length": 3}
    bad = dict(ok, outcome="singular-basis", U=[["0"]], X=[["1"]])
    s = summarize(_rows_for(spec, [bad] * 60 + [ok] * 40))
    c = s.configs[0]
    assert c.bound < Fraction(1, 100) and c.exceeds and c.status == "FAIL"
    s2 = summarize(_rows_for(spec, [bad] * 1 + [ok] * 99))
    assert not s2.configs[0].exceeds and s2.configs[0].status == "ok"


def test_a_count_off_its_formula_fails():
    """Planted bug: a successful run that used one query more than P2's count."""
    spec = SweepSpec.from_dict({"run": [{"d": 1, "H": 1, "box": 1000, "trials": 2}]})
    ok = {"outcome": "recovered", "queries": 3, "max_length": 3, "expected_queries": 3,
          "expected_max_length": 3}
    s = summarize(_rows_for(spec, [ok, dict(ok, queries=4)]))
    assert s.configs[0].counts_match is False and s.configs[0].status == "FAIL"


# ---------------------------------------------------------------------- progress
def test_rate_and_eta_follow_the_recent_rate():
    from exactattn.sweep.progress import Throughput, format_duration
    now = [0.0]
    meter = Throughput(1000, already=100, clock=lambda: now[0], window=10, interval=0)
    assert meter.text(100) == "starting"
    now[0] = 10.0
    assert meter.text(200) == "10.0 trials/s · ETA 1m20s"   # 100 new in 10 s, 800 left
    now[0] = 30.0                                          # slower now: 20 in the last 20 s
    meter.text(210)
    now[0] = 40.0
    assert meter.text(220).startswith("1.0 trials/s")       # only the last window counts
    assert format_duration(7322) == "2h02m" and format_duration(59.4) == "59s"
    seen = []
    meter.report(1000, lambda *a: seen.append(a))
    assert seen and seen[-1][1:] == (1000, 1000) and seen[-1][0].endswith("done")

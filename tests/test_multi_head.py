"""P2 multi-head learner (docs/design.md §4.3): exact canonical recovery, exact query counts,
failure detection, mp precision."""

import random
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings, strategies as st

import exactattn as ea
from exactattn.learners.multi_head import learn_multi_head
from exactattn.learners.p2.schedule import Schedule, published_count, published_max_length


def _learn(model, **kw):
    oracle = ea.Oracle(model, backend=kw.pop("backend", "exact"), dps=kw.pop("dps", None))
    return oracle, learn_multi_head(oracle, model.dim, **kw)


@pytest.mark.parametrize("d", [1, 2, 3, 4])
@pytest.mark.parametrize("H", [1, 2, 3])
def test_exact_recovery_and_counts_H_known(d, H):
    model = ea.random_multi_head(d, H, seed=10 * d + H)
    oracle, res = _learn(model, heads=H, seed=d * H)
    assert res.model.head_set() == model.head_set()       # exact canonical equality
    assert res.queries == oracle.queries == 4 * H * d * d - 2 * H + 1
    assert res.max_length == oracle.max_length == 2 * H + 1
    assert res.certificate["certified"] is True
    assert res.certificate["answers_checked"] == res.queries


@pytest.mark.parametrize("d", [1, 2, 3, 4])
@pytest.mark.parametrize("H", [1, 2, 3])
def test_exact_recovery_with_bound(d, H):
    H0 = H + 1
    model = ea.random_multi_head(d, H, seed=100 + 10 * d + H)
    oracle, res = _learn(model, heads_bound=H0, seed=7 * d + H)
    assert ea.same_function(res.model, model)
    assert len(res.heads) == H
    assert res.queries == 4 * H0 * d * d - 2 * H0 + 1
    assert res.max_length == 2 * H0 + 1


def test_merging_equal_W_and_dropping_cancelled_heads():
    W1 = [[Fraction(1, 2), 0], [Fraction(-1, 4), Fraction(3, 4)]]
    W2 = [[0, Fraction(1, 4)], [Fraction(1, 2), Fraction(-1, 2)]]
    W3 = [[Fraction(1, 4), Fraction(1, 4)], [0, Fraction(-3, 4)]]
    model = ea.MultiHeadAttention([
        (W1, [1, 2]), (W1, [Fraction(1, 2), -1]),          # merge: v = (3/2, 1)
        (W2, [2, -1]), (W2, [-2, 1]),                      # cancel: dropped
        (W3, [-1, 3]),
    ])
    oracle, res = _learn(model, heads_bound=5, seed=3)
    got = res.model.head_set()
    assert got == model.canonical().head_set()
    assert len(got) == 2
    assert (tuple(map(tuple, W1)), (Fraction(3, 2), Fraction(1))) in \
        {(tuple(map(tuple, W)), tuple(v)) for W, v in got}


def test_more_heads_than_bound_is_rejected():
    model = ea.random_multi_head(2, 3, seed=4)
    oracle = ea.Oracle(model)
    with pytest.raises(ea.LearningFailure):
        learn_multi_head(oracle, 2, heads_bound=2, seed=1)


def test_non_attention_function_is_rejected():
    def f(tokens):       # a rational function of the tokens, but not attention
        s = sum(sum(Fraction(x) for x in t) for t in tokens)
        return s * s / len(tokens)
    with pytest.raises(ea.LearningFailure) as e:
        learn_multi_head(f, 2, heads=2, seed=0)
    assert e.value.reason in {"not-attention", "certification-failed", "invisible-head",
                              "colliding-poles", "ambiguous-matching"}


def test_plain_callable_oracle():
    model = ea.random_multi_head(3, 2, seed=8)
    calls = []

    def f(tokens):
        calls.append(len(tokens))
        return model(tokens, "exact")

    res = learn_multi_head(f, 3, heads=2, seed=2, backend="exact")
    assert res.model.head_set() == model.head_set()
    assert len(calls) == published_count(3, 2) + res.validation_queries
    assert res.queries == published_count(3, 2) and res.validation_queries == 2 * 2 + 2
    sched = calls[:published_count(3, 2)]
    assert max(sched) == published_max_length(2) < min(calls[len(sched):])  # validation: longer
    # without backend=, one probe call (the zero token) infers it, outside the count
    calls.clear()
    res = learn_multi_head(f, 3, heads=2, seed=2, validate=0)
    assert res.backend == "exact" and res.model.head_set() == model.head_set()
    assert len(calls) == published_count(3, 2) + 1 == res.queries + 1 and calls[0] == 1


def test_small_box_failures_are_detected_and_resampling_recovers():
    """With entries in {-1, 0, 1} failures are frequent; each is named, and whenever the
    learner returns, the answer is exactly right."""
    seen = set()
    for s in range(12):
        model = ea.random_multi_head(2, 2, seed=200 + s)
        oracle = ea.Oracle(model)
        try:
            res = learn_multi_head(oracle, 2, heads=2, seed=s, box=1)
        except ea.LearningFailure as e:
            seen.add(e.reason)
            continue
        assert res.model.head_set() == model.head_set()
    assert seen, "box=1 should produce at least one detected failure in 12 draws"
    assert seen <= {"singular-basis", "colliding-poles", "invisible-head", "ambiguous-matching"}

    model = ea.random_multi_head(2, 2, seed=203)
    oracle = ea.Oracle(model)
    res = learn_multi_head(oracle, 2, heads=2, seed=0, box=1, resample=True, max_attempts=40)
    assert res.model.head_set() == model.head_set()
    failed = [a for a in res.extra["attempts"] if a["reason"] != "ok"]
    assert res.queries == oracle.queries
    # each failure records the queries spent so far; the last attempt costs the formula
    spent = failed[-1]["queries"] if failed else 0
    assert res.queries == spent + published_count(2, 2)


def test_resample_reports_extra_queries():
    model = ea.random_multi_head(2, 2, seed=211)
    for seed in range(50):
        oracle = ea.Oracle(model)
        try:
            learn_multi_head(oracle, 2, heads=2, seed=seed, box=1)
            continue
        except ea.SingularBasis:
            continue          # costs no queries; look for a failure after querying
        except ea.LearningFailure:
            pass
        oracle = ea.Oracle(model)
        res = learn_multi_head(oracle, 2, heads=2, seed=seed, box=1, resample=True,
                               max_attempts=40)
        assert res.model.head_set() == model.head_set()
        assert res.queries == oracle.queries > published_count(2, 2)
        assert any("extra queries" in n for n in res.notes)
        return
    pytest.skip("no post-query failure found in 50 seeds")


def test_mp_backend_recovers_gaussian_model_within_its_certified_bar():
    """mp at 60 digits: the true parameter error (measured at 80 digits) lies inside the
    certified error bar, and the bar itself is small (≤ 1e-25)."""
    model = ea.random_multi_head(4, 3, seed=5, kind="real")
    oracle, res = _learn(model, heads=3, backend="mp", dps=60, seed=1)
    assert res.queries == published_count(4, 3)
    from exactattn.learners.result.compare import parameter_error
    err = parameter_error(model, res.heads, dps=80)
    assert res.error_bar.rigorous and err <= res.error_bar.bound
    assert res.error_bar.bound < mpmath.mpf("1e-25")


def test_float_backend_small_model():
    model = ea.random_multi_head(3, 1, seed=6, kind="real")
    oracle, res = _learn(model, heads=1, backend="float", seed=1)
    from exactattn.learners.result.compare import parameter_error
    assert parameter_error(model, res.heads) < 1e-6


def test_bad_arguments():
    model = ea.random_multi_head(2, 1, seed=1)
    with pytest.raises(ValueError, match="heads"):
        learn_multi_head(ea.Oracle(model), 2)
    with pytest.raises(ValueError, match="exceeds"):
        learn_multi_head(ea.Oracle(model), 2, heads=3, heads_bound=2)
    with pytest.raises(ValueError, match="dim"):
        learn_multi_head(ea.Oracle(model), 0, heads=1)
    with pytest.raises(ValueError, match="backend"):
        learn_multi_head(ea.Oracle(model, backend="mp"), 2, heads=1, backend="exact")


@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 12), H=st.integers(1, 10))
@pytest.mark.slow
def test_schedule_count_formula(d, H):
    """1 + 2H[(2d−1) + 2d(d−1)] = 4Hd² − 2H + 1 for the schedule itself (docs/design.md §4.3)."""
    U = [[int(i == j) for j in range(d)] for i in range(d)]
    sched = Schedule(U, U, H)
    queries = list(sched.queries())
    assert len(queries) == sched.count == 4 * H * d * d - 2 * H + 1
    assert max(len(q) for q in queries) == 2 * H + 1
    assert len(sched.families) == 2 * d * d - 1


@settings(max_examples=30, deadline=None)
@given(d=st.integers(1, 5), H=st.integers(1, 3), seed=st.integers(0, 10 ** 6))
def test_schedule_tokens_are_the_sums_and_share_their_integers(d, H, seed):
    """Every query is [(x+u) × m, x] with x+u the entrywise sum (the family's stored x+u
    is not another vector), and equal integer entries across the whole schedule are one
    object (the transcript keeps d pointers per token, not d new integers)."""
    rng = random.Random(seed)
    U = [[rng.randint(-3000, 3000) for _ in range(d)] for _ in range(d)]
    X = [[rng.randint(-3000, 3000) for _ in range(d)] for _ in range(d)]
    sched = Schedule(U, X, H)
    objects = {}
    for fam in sched.families:
        assert list(fam.xu) == [a + b for a, b in zip(fam.x, fam.u)]
        for m in range(1, 2 * H + 1):
            q = fam.query(m)
            assert q == [[a + b for a, b in zip(fam.x, fam.u)]] * m + [list(fam.x)]
            for a in q[0] + q[-1]:
                assert objects.setdefault(a, a) is a


def test_large_rationals_retry_with_a_larger_prime():
    """Residues c_h = −v_h·u too large to reconstruct modulo the first ~62-bit prime: the
    engine retries with larger primes on the same transcript (no new queries)."""
    big = Fraction(10 ** 15 + 7, 3 ** 20)
    W1 = [[Fraction(1, 2), 0], [Fraction(1, 4), Fraction(-1, 2)]]
    W2 = [[0, Fraction(3, 4)], [Fraction(-1, 4), 0]]
    model = ea.MultiHeadAttention([(W1, [big, 1]), (W2, [-1, big])])
    oracle, res = _learn(model, heads=2, seed=0)
    assert res.model.head_set() == model.head_set()
    assert res.queries == published_count(2, 2)
    assert res.extra["engine"]["prime_bits"] > 64


@pytest.mark.slow
def test_a_structural_failure_stops_after_two_prime_sizes():
    """Colliding poles (a bad draw: exact exponents, not a reconstruction) at two sizes in a
    row is named at once; a failure that depends on reconstruction (an out-of-class oracle:
    not-attention / certification) still climbs every size."""
    from exactattn.learners.p2.engines import PRIME_BITS, STRUCTURAL, repeated_structural
    m = ea.random_multi_head(2, 3, seed=1).canonical()
    with pytest.raises(ea.CollidingPoles) as e:
        learn_multi_head(ea.Oracle(m), 2, heads=3, seed=2, box=2)
    tried = e.value.details["prime_sizes_tried"]
    assert [t["outcome"] for t in tried] == ["colliding-poles"] * 2
    assert [t["prime_bits"] for t in tried] == list(PRIME_BITS[:2])
    off = ea.Oracle(lambda t: m(t, "exact") + Fraction(1, 3), dim=2, backend="exact")
    with pytest.raises(ea.LearningFailure) as e:
        learn_multi_head(off, 2, heads=3, seed=0)
    assert e.value.reason not in STRUCTURAL
    assert len(e.value.details["prime_sizes_tried"]) > 2
    assert repeated_structural(["bad-reduction", "invisible-head", "invisible-head"])
    assert not repeated_structural(["colliding-poles", "invisible-head"])
    assert not repeated_structural(["not-attention", "not-attention"])


@pytest.mark.parametrize("position", range(1, published_count(2, 2) + 1))
@pytest.mark.slow
def test_one_corrupted_answer_is_never_silent(position):
    """An oracle that is attention except for one answer (off by 10⁻³⁰) must not yield a
    model, wherever in the schedule the corrupted answer falls."""
    model = ea.random_multi_head(2, 2, seed=12)
    count = {"n": 0}

    def f(tokens):
        count["n"] += 1
        y = model(tokens, "exact")
        return y + Fraction(1, 10 ** 30) if count["n"] == position else y

    with pytest.raises(ea.LearningFailure):
        learn_multi_head(f, 2, heads=2, seed=0, backend="exact")


def test_low_rank_at_full_rank_is_refused_before_the_first_query():
    """rank = d on the multi-head low-rank schedule: the budget is checked up front (it used
    to spend every query and then fail budget-exceeded)."""
    from exactattn.analysis.beyond import low_rank_model
    orc = ea.Oracle(low_rank_model(4, 2, 4, seed=0), budget=40)
    with pytest.raises(ea.BudgetExceeded, match="at least 47"):
        ea.learn_multi_head(orc, 4, heads=2, rank=4, seed=0)
    assert orc.queries == 0


def _count_root_finder(monkeypatch, paired=True):
    """The calls of the general root finder in one certified (3, 3) run (their degrees)."""
    from exactattn.arith.fields import PrimeField
    calls = []
    roots = PrimeField.roots

    def counted(self, coeffs):
        calls.append(len(coeffs) - 1)
        return roots(self, coeffs)
    monkeypatch.setattr(PrimeField, "roots", counted)
    if not paired:
        monkeypatch.setattr(PrimeField, "paired_roots", lambda self, Q, S, zs: None)
    d = 3
    model = ea.random_multi_head(d, 3, seed=4)
    res = learn_multi_head(ea.Oracle(model, backend="exact"), d, heads=3, seed=4)
    assert res.model.head_set() == model.head_set() and res.certificate["certified"]
    assert res.certificate["prime_sizes_tried"] == [62]
    return calls


def test_matching_families_find_their_poles_among_products(monkeypatch):
    """On the exact backend a matching family's poles are looked for among the products of
    its pair's poles before any factorisation (P2 step 4): without the paired gcds, the
    general root finder runs on the d² families I(u_i, x_j) only, not on the d² − 1 matching
    ones — and the run is certified.  (A candidate list that never matches would leave
    2d² − 1 calls.)"""
    assert len(_count_root_finder(monkeypatch, paired=False)) == 3 * 3


def test_a_family_paired_with_a_solved_one_needs_no_root_finder(monkeypatch):
    """docs/design.md §4.3: every family I(u_i, x_j) but I(u_1, x_1) finds its roots by one gcd
    per pole of the family it is paired with (gcd(Q(z_a m), Q_sum(m)) = 1 + m z_a w_a): the
    general root finder runs once, on a degree-3 denominator, and the run is certified.
    (Gcds that were never linear, or roots never kept, would leave d² calls.)"""
    assert _count_root_finder(monkeypatch) == [3]


def test_max_attempts_below_one_is_refused():
    """With no attempt the learner returned None, silently (found by mypy: a path without a
    return); now a clear ValueError."""
    oracle = ea.Oracle(ea.random_multi_head(2, 1, seed=1))
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="max_attempts must be an integer in 1"):
            ea.learn_multi_head(oracle, 2, heads=1, max_attempts=bad)
    assert ea.learn_multi_head(oracle, 2, heads=1, max_attempts=1).queries == 15

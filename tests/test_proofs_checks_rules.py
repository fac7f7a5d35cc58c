"""Each rule of the independent checker, with the planted bug that it catches (docs/evidence.md):
the run checker's (a) schedule, (b) answers, (c) genericity; the learner re-derivation that
predicts Monte Carlo outcomes (including a planted ambiguous matching); the matching
polynomials; the Schwartz–Zippel degree; the exact binomial tests; the count derivation;
the strict parser."""

import json
from fractions import Fraction
from math import comb

import pytest
from hypothesis import example, given, strategies as st

import exactattn.learners.multi_head as MH
from exactattn.learners.p2.recovery import draw_bases
from exactattn.errors import AmbiguousMatching
from exactattn.models.attention import random_multi_head
from exactattn.oracles.oracle import Oracle
from proofs_checks.checker import binomial, count, parse
from proofs_checks.checker.bad_set import bad_set_polynomials, check_bad_set
from proofs_checks.checker.parse import Rejected
from proofs_checks.checker.predict import predict
from proofs_checks.checker.run import check_run
from proofs_checks.checker.run_multi_head import STRUCTURE, families, violations
from proofs_checks.common import run_record


def _heads(model):
    return [(tuple(map(tuple, h.W)), tuple(h.v)) for h in model.heads]


def _dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def _mv(W, x):
    return [_dot(r, x) for r in W]


@pytest.fixture(scope="module")
def model3():
    return random_multi_head(2, 3, seed=0).canonical()


def _draw(model, residues_too):
    """U, X (d = 2) at which reference head 1 of I(u1, x1) has head 2 of I(u2, x1) as a second
    candidate through head 3 of I(u1+u2, x1): scores s3(u1+u2) = s1(u1) + s2(u2) and, when
    `residues_too`, also v3·(u1+u2) = v1·u1 + v2·u2 (else a generic second equation)."""
    (W1, v1), (W2, v2), (W3, v3) = [(h.W, h.v) for h in model.heads]
    x1, x2, u1 = [Fraction(2), Fraction(-3)], [Fraction(1), Fraction(4)], [Fraction(3), Fraction(1)]
    w1, w2, w3 = _mv(W1, x1), _mv(W2, x1), _mv(W3, x1)
    row1 = [a - b for a, b in zip(w3, w2)]
    rhs1 = _dot(u1, [a - b for a, b in zip(w1, w3)])
    if residues_too:
        row2, rhs2 = [a - b for a, b in zip(v3, v2)], _dot(u1, [a - b for a, b in zip(v1, v3)])
    else:
        row2, rhs2 = [Fraction(1), Fraction(0)], Fraction(7)
    det = row1[0] * row2[1] - row1[1] * row2[0]
    u2 = [(rhs1 * row2[1] - row1[1] * rhs2) / det, (row1[0] * rhs2 - rhs1 * row2[0]) / det]
    return [u1, u2], [x1, x2]


def _learn_at(monkeypatch, model, U, X, H0=3):
    monkeypatch.setattr(MH, "random_bases", lambda rng, d, box, be: (U, X))
    return MH.learn_multi_head(Oracle(model), 2, heads=H0, seed=0)


def _json(rec):
    return json.loads(json.dumps(rec))


# ------------------------------------------------------------------ prediction and matching
@pytest.mark.slow
def test_a_planted_ambiguous_matching_is_predicted_and_in_the_bad_set(monkeypatch, model3):
    U, X = _draw(model3, residues_too=True)
    with pytest.raises(AmbiguousMatching):
        _learn_at(monkeypatch, model3, U, X)
    heads = _heads(model3)
    assert predict(heads, U, X, 3)[0] == "ambiguous-matching"
    viol = violations(heads, U, X, 3)
    # only a unique-matching polynomial vanishes: without them this failure lies outside
    assert viol and all(v.startswith("matching") for v in viol)
    polys = bad_set_polynomials(heads, 2)
    point = [x for r in U for x in r] + [x for r in X for x in r]
    from proofs_checks.checker.poly import peval
    assert [n for n, p in polys.items() if peval(p, point) == 0] == viol


def test_matching_polynomials_are_listed_for_every_matching_family_and_triple(model3):
    polys = bad_set_polynomials(_heads(model3), 2)
    H, d = 3, 2
    n_matching_families = sum(1 for f in families(d) if f[2])
    assert n_matching_families == d * d - 1
    assert sum(name.startswith("matching") for name in polys) == n_matching_families * (H ** 3 - H)


@pytest.mark.slow
def test_prediction_agrees_with_the_learner_on_bad_draws(monkeypatch):
    """Small box, many bad draws: the checker's re-derivation names the learner's outcome."""
    from proofs_checks import p2_prob1
    model = random_multi_head(2, 3, seed=1).canonical()
    heads = _heads(model)
    seen = set()
    for seed in range(60):
        rec = p2_prob1.trial({"model": model, "dim": 2, "H": 3, "box": 2}, seed)
        U, X = draw_bases(seed, 2, 2)
        U = [[Fraction(x) for x in r] for r in U]
        X = [[Fraction(x) for x in r] for r in X]
        assert predict(heads, U, X, 3)[0] == rec["outcome"], seed
        seen.add(rec["outcome"])
    assert len(seen) >= 3        # several outcomes exercised, not only "recovered"


# ------------------------------------------------------------------ the run checker
def test_run_checker_rejects_a_draw_that_is_not_generic_for_the_recovered_model(monkeypatch, model3):
    U, X = _draw(model3, residues_too=False)      # a matching polynomial vanishes, residues differ
    res = _learn_at(monkeypatch, model3, U, X)     # so the learner still succeeds
    rec = _json(run_record(res, model3))
    with pytest.raises(Rejected, match="not generic for the recovered model .*matching"):
        check_run(rec)


@pytest.fixture(scope="module")
def good_run():
    model = random_multi_head(2, 2, seed=4).canonical()
    res = MH.learn_multi_head(Oracle(model), 2, heads=2, seed=1)
    rec = _json(run_record(res, model))
    check_run(rec)
    return rec


def test_run_checker_rule_a_transcript_is_the_schedule(good_run):
    rec = json.loads(json.dumps(good_run))
    rec["transcript"][3], rec["transcript"][4] = rec["transcript"][4], rec["transcript"][3]
    with pytest.raises(Rejected, match="is not query 3 of the schedule"):
        check_run(rec)
    rec = json.loads(json.dumps(good_run))
    rec["transcript"].pop()
    with pytest.raises(Rejected, match="queries but the schedule"):
        check_run(rec)
    rec = json.loads(json.dumps(good_run))
    rec["vectors"]["U"][0][0] = str(int(rec["vectors"]["U"][0][0]) + 1)
    with pytest.raises(Rejected, match="schedule"):
        check_run(rec)


def test_run_checker_rule_b_every_answer_reproduced(good_run):
    rec = json.loads(json.dumps(good_run))
    rec["transcript"][5]["answer"] = rec["transcript"][6]["answer"]
    with pytest.raises(Rejected, match="does not reproduce answer 5"):
        check_run(rec)
    rec = json.loads(json.dumps(good_run))
    rec["model"] = [rec["model"][0]]               # the true model is not the recovered one
    with pytest.raises(Rejected, match="canonical form of the true model"):
        check_run(rec)


def test_run_checker_rule_c_pole_count_bound(good_run):
    rec = json.loads(json.dumps(good_run))
    rec["params"]["H0"] = 1                        # two heads recovered, bound 1
    with pytest.raises(Rejected):
        check_run(rec)


def test_single_head_run_rebuilds_the_probes_from_v():
    from exactattn.learners.p1.single_head import learn_single_head
    from exactattn.models.attention import random_head
    head = random_head(3, seed=2)
    res = learn_single_head(Oracle(head), 3)
    rec = _json(run_record(res, [head]))
    assert "u_k·v ≠ 0" in check_run(rec)
    rec["transcript"][5], rec["transcript"][6] = rec["transcript"][6], rec["transcript"][5]
    with pytest.raises(Rejected, match="schedule"):
        check_run(rec)


def test_low_rank_run_replays_the_revealed_rank():
    from exactattn.learners.p1.low_rank import learn_low_rank, random_low_rank_head
    head = random_low_rank_head(4, 2, seed=3)
    res = learn_low_rank(Oracle(head), 4, seed=3)
    rec = _json(run_record(res, [head]))
    assert "rank 2 revealed" in check_run(rec)
    rec["params"]["rank"] = 1
    with pytest.raises(Rejected):
        check_run(rec)


# ------------------------------------------------------------------ bad-set degree
@pytest.mark.slow
def test_schwartz_zippel_degree_is_the_total_degree_not_the_number_of_factors():
    from proofs_checks import p2_prob1
    verdict = p2_prob1.run({"d,H,box,trials": [[2, 2, 240, 20]], "seed": 0})
    assert verdict.holds, verdict.details
    rec = _json(verdict.certificate["checks"][0])
    check_bad_set(rec, [rec])
    assert rec["D"] != len(rec["factors"])          # det U has degree 2: the two differ
    rec["D"] = len(rec["factors"])
    with pytest.raises(Rejected, match="total degree"):
        check_bad_set(rec, [rec])


@pytest.mark.slow
def test_a_multiplicity_above_the_degree_is_refused_before_any_power():
    from proofs_checks import p2_prob1
    verdict = p2_prob1.run({"d,H,box,trials": [[2, 2, 240, 5]], "seed": 0})
    rec = _json(verdict.certificate["checks"][0])
    poly = next(p for p in rec["polynomials"] if p["name"] == "det U")
    poly["factorisation"][0][1] = 3            # det U has degree 2
    with pytest.raises(Rejected, match="multiplicity: 3 > 2"):
        check_bad_set(rec, [rec])


# ------------------------------------------------------------------ binomial tests
@given(st.integers(1, 12), st.integers(-1, 13), st.integers(0, 7), st.integers(1, 7))
@example(2, 1, 1, 2)        # the last term of the tail counts (a tail one term short fails)
@example(12, 11, 3, 7)
def test_binomial_tails_equal_the_definition(n, k, p, q):
    b = Fraction(min(p, q), q)
    brute = sum((comb(n, i) * b ** i * (1 - b) ** (n - i) for i in range(0, min(k, n) + 1)),
                Fraction(0)) if k >= 0 else Fraction(0)
    assert binomial.lower_tail(n, k, b) == brute
    assert binomial.upper_tail(n, k, b) == 1 - (binomial.lower_tail(n, k - 1, b))


def test_binomial_test_rejects_too_many_failures_and_accepts_few():
    level = Fraction(1, 1000)
    assert not binomial.consistent_with_bound(100, 30, Fraction(1, 10), level)
    assert binomial.consistent_with_bound(100, 15, Fraction(1, 10), level)
    assert binomial.consistent_with_bound(10_000, 520, Fraction(1, 20), level)
    assert not binomial.consistent_with_bound(10_000, 640, Fraction(1, 20), level)


def test_clopper_pearson_limit_is_the_least_grid_point():
    from proofs_checks.p2_prob1 import binomial_upper_limit
    level = Fraction(1, 6000)
    lim = binomial_upper_limit(1000, 4, level)
    assert binomial.is_least_upper_limit(1000, 4, lim, level)
    assert not binomial.is_least_upper_limit(1000, 4, lim + Fraction(1, 2 ** 24), level)
    assert not binomial.is_upper_limit(1000, 4, lim - Fraction(1, 2 ** 24), level)


# ------------------------------------------------------------------ the count derivation
def test_count_derivation_reads_the_structure():
    c, length = count.derive(STRUCTURE)
    assert (c, length) == count.PUBLISHED
    fewer = json.loads(json.dumps(STRUCTURE))
    fewer["blocks"][2]["families"].pop()          # drop the matching family of block 3
    assert count.derive(fewer)[0] != count.PUBLISHED[0]


def test_library_schedule_is_generated_from_the_structure_the_checker_holds():
    from exactattn.learners.p2.schedule import STRUCTURE as LIB, Schedule, expand_structure
    assert json.loads(json.dumps(LIB)) == STRUCTURE
    for d in (1, 2, 3, 4):
        assert expand_structure(d) == families(d)
        for H0 in (1, 2, 3):
            s = Schedule([[1] * d] * d, [[1] * d] * d, H0)
            assert s.count == 4 * H0 * d * d - 2 * H0 + 1 == len(list(s.queries()))


@pytest.mark.slow
def test_p2_count_fails_when_the_structure_changes(monkeypatch):
    """At small sizes (d ≤ 2 run, d ≤ 8 enumerated; the quick sizes fail the same way): the
    Schedule then asks one matching family more than the published count."""
    import exactattn.learners.p2.schedule as S
    from proofs_checks import p2_count
    small = {"d": [1, 2], "H": [1], "d,H extra": [[6, 1]], "enumerated d,H0": [8, 2]}

    def count_failures():
        return [x for x in p2_count.CLAIM.run(dict(small)).details if x.startswith("FAILED")
                and "does not have the published count" in x]
    assert not count_failures()
    changed = json.loads(json.dumps(S.STRUCTURE))
    changed["blocks"][1]["loops"][0][1] = 1         # i = 1…d: one more matching family
    monkeypatch.setattr(S, "STRUCTURE", changed)
    assert count_failures()


def test_count_derivation_rejects_a_forged_structure():
    forged = json.loads(json.dumps(STRUCTURE))
    forged["blocks"][2]["loops"][1][1] = 2
    rec = {"kind": "count-derivation", "formula": "multi-head", "structure": forged,
           "count": [[0, 0, "1"], [0, 1, "-2"], [2, 1, "4"]], "max_length": [[0, 0, "1"], [0, 1, "2"]],
           "enumerated": {"d": 1, "H0": 1, "counts": [[1, 1, 3, 3]]}}
    with pytest.raises(Rejected, match="not the schedule"):
        count.check_count_derivation(rec)


# ------------------------------------------------------------------ strict parsing
def test_parser_bounds_and_exact_types():
    with pytest.raises(Rejected, match="duplicate key"):
        parse.load(b'{"a": 1, "a": 2}')
    with pytest.raises(Rejected, match="float"):
        parse.load(b'{"a": 1e3}')
    with pytest.raises(Rejected, match="digits"):
        parse.load(b"[" + b"1" * (parse.MAX_INT_DIGITS + 1) + b"]")
    with pytest.raises(Rejected, match="nesting"):
        parse.load(b"[" * (parse.MAX_DEPTH + 1) + b"]" * (parse.MAX_DEPTH + 1))
    assert parse.load(b'["[[[[", {"b": "}}}"}]') == ["[[[[", {"b": "}}}"}]
    # brackets inside strings (escaped quotes too) are not nesting; real nesting beside them is
    deep = "[" * (parse.MAX_DEPTH + 5)
    text = '["' + deep + '\\"' + deep + '", {"k\\"[": "' + deep + '"}]'
    assert parse.load(text.encode()) == [deep + '"' + deep, {'k"[': deep}]
    nested = "[" * parse.MAX_DEPTH + '"]]]"' + "]" * parse.MAX_DEPTH
    assert parse._depth(nested) == parse.MAX_DEPTH
    with pytest.raises(Rejected, match="nesting"):
        parse.load(("[" + nested + "]").encode())
    # siblings close before the deepest branch opens: the depth is still the deepest branch's
    assert parse._depth('[[], [[]], {"a": [[[]]]}]') == 5
    with pytest.raises(Rejected, match="nesting"):
        parse.load(("[" + "[], " * 3 + "[" * parse.MAX_DEPTH + "]" * parse.MAX_DEPTH + "]").encode())
    with pytest.raises(Rejected, match="characters"):
        parse.rat("1" * (parse.MAX_RATIONAL_CHARS + 1))
    with pytest.raises(Rejected):
        parse.integer(True)
    assert not parse.same_json([1], [True]) and parse.same_json({"a": [1]}, {"a": [1]})


@pytest.mark.slow
def test_determinant_spot_check_compares_with_the_matrix(monkeypatch):
    from proofs_checks import get_claim
    from proofs_checks.checker import determinant
    verdict = get_claim("P2-rational").run({"H": [2], "d": 2})
    rec = _json(next(c for c in verdict.certificate["checks"] if c["kind"] == "determinant"))
    determinant.check_determinant(rec)
    wrong = determinant._copy_count_matrix
    monkeypatch.setattr(determinant, "_copy_count_matrix",
                        lambda H, z, c, K, sign=1: [[2 * x for x in r] if i == 0 else r
                                                    for i, r in enumerate(wrong(H, z, c, K))])
    with pytest.raises(Rejected, match="matrix determinant"):
        determinant.check_determinant(rec)


def test_p1_t61_lipschitz_constant_bounds_the_inverse_sigmoid_on_the_clip():
    """P1 Thm 6.1's rigorous bound needs L ≥ max 1/(p(1−p)) over the clipping interval (the
    maximum is at an endpoint, 1/(p(1−p)) being convex and symmetric about 1/2)."""
    from exactattn.learners.p1.noisy import LIPSCHITZ, SIGMA_CLIP
    lo, hi = SIGMA_CLIP
    worst = max(1 / (p * (1 - p)) for p in (lo, hi))
    assert lo < Fraction(1, 2) < hi and worst <= LIPSCHITZ


def test_a_monte_carlo_trial_reports_a_wrong_model_as_such():
    """At the non-uniqueness lemma's draw the learner returns a model that reproduces every
    answer but is not the oracle's: the trial must say ``wrong-model``, not ``recovered``."""
    from exactattn.models.attention import random_head
    from proofs_checks import p2_prob1
    from proofs_checks.p2_nonunique import two_head_twin
    head = random_head(2, seed=3)
    U, X = draw_bases(3, 2, 1000)
    twin = two_head_twin(head.W, head.v, U, X)
    rec = p2_prob1.trial({"model": twin, "dim": 2, "H": 2, "box": 1000}, 3)
    assert rec["outcome"] == "wrong-model"
    Uf = [[Fraction(x) for x in r] for r in U]
    Xf = [[Fraction(x) for x in r] for r in X]
    assert predict(_heads(twin), Uf, Xf, 2)[0] == "wrong-model"


def test_violations_name_colliding_poles():
    """The lemma's twin heads share every score of I(u1, x1) (both keep S[1][1]): the run
    checker's genericity test must name that collision, not only the invisible heads."""
    from exactattn.models.attention import random_head
    from proofs_checks.checker.run_multi_head import genericity
    from proofs_checks.p2_nonunique import two_head_twin
    head = random_head(2, seed=3)
    U, X = draw_bases(3, 2, 1000)
    twin = _heads(two_head_twin(head.W, head.v, U, X))
    Uf = [[Fraction(x) for x in r] for r in U]
    Xf = [[Fraction(x) for x in r] for r in X]
    viol = violations(twin, Uf, Xf, 2)
    assert "poles I(u1,x1) heads 1,2" in viol and "visible head 2 at u1" in viol
    with pytest.raises(Rejected, match="poles I\\(u1,x1\\) heads 1,2"):
        genericity({"dim": 2, "H0": 2, "U": Uf, "X": Xf}, twin)

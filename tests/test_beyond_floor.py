"""The dimension floor, certified (docs/design.md §10): the Jacobian of the answers modulo p,
its rank profile, the claims floor and economy-count, and the stdlib checker's kinds floor and
economy-count with the tampered certificates each must reject."""

import copy
import random
from fractions import Fraction

import pytest
import sympy
from conftest import verify_once

import exactattn as ea
from exactattn.analysis import floor as F
from proofs_checks.checker import Rejected
from proofs_checks.checker import economy_count as checker_count
from proofs_checks.checker import floor as checker_floor


def _queries(model, schedule="economy", **kw):
    oracle = ea.Oracle(model)
    ea.learn_multi_head(oracle, model.dim, heads=len(model.heads), seed=0, schedule=schedule, **kw)
    return [q for q, _ in oracle.transcript]


@pytest.mark.slow
def test_jacobian_formula_matches_symbolic_differentiation():
    """The closed form ∂F/∂W = x_N·Cov_α(f, x), ∂F/∂v = x̄ against sympy's derivative of
    F(θ) = Σ_h Σ_i e^{s_hi} v_h·x_i / Σ_j e^{s_hj}, with e^{k/L} ↦ τ^k modulo p afterwards."""
    d, H = 2, 2
    model = ea.random_multi_head(d, H, seed=3)
    queries = [[[1, 2], [3, -1], [0, 1]], [[2, 2], [-1, 1]]]
    L = F.score_denominator(model, queries)
    p, tau = 1000003, 12345
    rows = F.jacobian_mod_p(model, queries, p, tau, L)
    Ws = [[[sympy.Symbol(f"W{h}{i}{j}") for j in range(d)] for i in range(d)] for h in range(H)]
    vs = [[sympy.Symbol(f"v{h}{i}") for i in range(d)] for h in range(H)]
    params = [s for h in range(H) for s in [x for r in Ws[h] for x in r] + vs[h]]
    at = {}
    for h, head in enumerate(model.heads):
        for i in range(d):
            at[vs[h][i]] = sympy.Rational(head.v[i].numerator, head.v[i].denominator)
            for j in range(d):
                w = head.W[i][j]
                at[Ws[h][i][j]] = sympy.Rational(w.numerator, w.denominator)
    t = sympy.Symbol("t")
    for q, row in zip(queries, rows):
        xn = q[-1]
        Fx = 0
        for h in range(H):
            s = [sum(x[i] * Ws[h][i][j] * xn[j] for i in range(d) for j in range(d)) for x in q]
            f = [sum(vs[h][i] * x[i] for i in range(d)) for x in q]
            Fx += sum(sympy.exp(si) * fi for si, fi in zip(s, f)) / sum(sympy.exp(si) for si in s)
        for col, theta in enumerate(params):
            e = sympy.diff(Fx, theta).subs(at)
            e = e.replace(sympy.exp, lambda a: t ** (a * L))
            num, den = sympy.fraction(sympy.together(e))
            val = lambda P: int(sympy.Poly(sympy.expand(P * t ** 64), t).eval(tau)) % p  # noqa: E731
            assert row[col] == val(num) * pow(val(den), -1, p) % p


def test_full_rank_needs_the_floor_many_answers():
    model = ea.random_multi_head(2, 2, seed=1)
    qs = _queries(model)
    P = F.dimension_floor(2, 2)
    p, tau, L, prof, rows = F.certify_full_rank(model, qs, random.Random(0))
    assert prof.rank == P == len(rows) and prof.first_full() == rows[-1] + 1
    assert all(prof.curve[k] <= k + 1 for k in range(len(qs)))
    short = F.certify_full_rank(model, qs[: P - 1], random.Random(0))[3]
    assert short.rank < P                       # fewer answers than parameters: rank deficit


def test_p1_schedule_sits_exactly_on_the_floor():
    model = ea.random_multi_head(3, 1, seed=2)
    oracle = ea.Oracle(model)
    ea.learn_single_head(oracle, 3)
    prof = F.certify_full_rank(model, [q for q, _ in oracle.transcript], random.Random(1))[3]
    assert prof.rank == 12 == len(oracle.transcript)


@pytest.fixture(scope="module")
def floor_cert(quick_certificate):
    return quick_certificate("floor")


def test_floor_claim_quick_and_its_certificate_verifies(floor_cert):
    findings = verify_once(floor_cert)
    assert findings and all("non-zero modulo" in f for f in findings)


def _floor_check(cert, schedule="economy", d=None, H=None):
    return next(c for c in cert["checks"] if c["kind"] == "floor" and c["schedule"] == schedule
                and (d is None or c["dim"] == d) and (H is None or len(c["model"]) == H))


# ------------------------------------------------------------------ the schedule is rebuilt
def test_floor_p2_with_random_queries_in_place_of_its_schedule_is_rejected(floor_cert):
    """A 'P2 d=2 H=1' record with 6 random length-2 queries in place of P2's 15."""
    import random as R
    c = copy.deepcopy(_floor_check(floor_cert, "P2", 2, 1))
    assert len(c["queries"]) == 15
    rng = R.Random(5)
    c["queries"] = [[[str(rng.randint(-9, 9)) for _ in range(2)] for _ in range(2)]
                    for _ in range(6)]
    c["rows"], c["first_full"], c["curve"] = list(range(6)), 6, list(range(1, 7))
    with pytest.raises(Rejected, match="rebuilt from the recorded draw has 15"):
        checker_floor.check_floor(c)


def test_floor_p2_cut_to_its_pivot_queries_is_rejected(floor_cert):
    """The P2 (d=3, H=2) record cut to its 24 pivot queries (the schedule reaches rank 24 only
    at answer 63): its minor is still non-zero, but the queries are not the schedule."""
    c = copy.deepcopy(_floor_check(floor_cert, "P2", 3, 2))
    P, rows = c["parameters"], c["rows"]
    assert P == 24 and rows[-1] + 1 == 63
    c["queries"] = [c["queries"][k] for k in rows]
    c["rows"], c["first_full"], c["curve"] = list(range(P)), P, list(range(1, P + 1))
    with pytest.raises(Rejected, match="24 queries, but the P2 schedule"):
        checker_floor.check_floor(c)


@pytest.mark.parametrize("schedule", ["P1", "P2", "economy", "adaptive", "low-rank"])
def test_floor_random_edits_of_queries_and_model_are_rejected(floor_cert, schedule):
    import random as R
    rng = R.Random(hash(schedule) % 1000)
    base = _floor_check(floor_cert, schedule)
    checker_floor.check_floor(copy.deepcopy(base))            # as written: accepted
    for _ in range(5):
        c = copy.deepcopy(base)
        q = rng.randrange(len(c["queries"]))
        t = rng.randrange(len(c["queries"][q]))
        i = rng.randrange(c["dim"])
        c["queries"][q][t][i] = str(Fraction(c["queries"][q][t][i]) + rng.choice([-1, 1]))
        with pytest.raises(Rejected, match="schedule rebuilt"):
            checker_floor.check_floor(c)
        c = copy.deepcopy(base)
        h, i = rng.randrange(len(c["model"])), rng.randrange(c["dim"])
        c["model"][h]["v"][i] = str(Fraction(c["model"][h]["v"][i]) + 1)
        with pytest.raises(Rejected, match="not the canonical form"):
            checker_floor.check_floor(c)


def test_floor_record_of_another_schedule_is_rejected(floor_cert):
    """The economy record relabelled adaptive (and P2 relabelled economy): the learner of the
    draw is not the named schedule's."""
    c = copy.deepcopy(_floor_check(floor_cert, "economy"))
    c["schedule"] = "adaptive"
    with pytest.raises(Rejected, match="adaptive schedule is the multi-head-adaptive"):
        checker_floor.check_floor(c)
    c = copy.deepcopy(_floor_check(floor_cert, "P2"))
    c.pop("draw")
    with pytest.raises(Rejected, match="draw"):
        checker_floor.check_floor(c)


def test_floor_says_at_answer_only_where_fewer_answers_cannot_reach_the_rank(floor_cert):
    p1 = checker_floor.check_floor(_floor_check(floor_cert, "P1"))
    p2 = checker_floor.check_floor(_floor_check(floor_cert, "P2", 3, 2))
    assert "reached at answer 6" in p1
    assert "reached by answer 63" in p2 and "at answer" not in p2


@pytest.mark.parametrize("tamper, message", [
    ("duplicate-query", "minor vanishes"),
    ("composite-p", "not a prime"),
    ("parameters", "H\\(d²\\+d\\)"),
    ("curve", "certified range"),
    ("first-full", "first_full"),
    ("L", "does not clear"),
    ("tau", "τ must lie"),
    ("rows", "increasing distinct"),
])
def test_floor_checker_rejects_tampering(floor_cert, tamper, message):
    c = copy.deepcopy(_floor_check(floor_cert))
    if tamper == "duplicate-query":       # the minor on the first P answers: dependent rows
        P = c["parameters"]
        first = list(range(P))
        assert c["rows"] != first
        c["rows"], c["first_full"] = first, P
    elif tamper == "composite-p":
        c["p"] = c["p"] * 3
    elif tamper == "parameters":
        c["parameters"] -= 1
    elif tamper == "curve":
        c["curve"][0] = 2
    elif tamper == "first-full":
        c["first_full"] -= 1
    elif tamper == "L":
        c["L"] = 1
    elif tamper == "tau":
        c["tau"] = c["p"]
    elif tamper == "rows":
        c["rows"] = c["rows"][:-1] + [c["rows"][-2]]
    with pytest.raises(Rejected, match=message):
        checker_floor.check_floor(c)


def test_floor_checker_determinant_is_a_determinant():
    p = 1000003
    assert checker_floor.det_mod([[2, 3], [4, 6]], p) == 0
    assert checker_floor.det_mod([[0, 1], [1, 0]], p) == p - 1
    assert checker_floor.is_prime(p) and not checker_floor.is_prime(p * 7)


def test_floor_checker_rows_agree_with_the_library():
    model = ea.random_multi_head(2, 2, seed=4)
    qs = _queries(model)
    p, tau = F.random_prime_63(random.Random(3)), 99991
    L = F.score_denominator(model, qs)
    lib = F.jacobian_mod_p(model, qs, p, tau, L)
    heads = [(tuple(tuple(r) for r in h.W), tuple(h.v)) for h in model.heads]
    for q, row in zip(qs, lib):
        toks = [[Fraction(x) for x in t] for t in q]
        assert checker_floor.jacobian_row(heads, toks, p, tau, L) == row


# ------------------------------------------------------------------ low-rank floor
def _low_rank_check(cert):
    return next(c for c in cert["checks"] if c["kind"] == "floor" and c["schedule"] == "low-rank")


def test_low_rank_floor_is_reached_over_the_factors(floor_cert):
    """The low-rank schedule's Jacobian over (Q, K, v) has the rank of rank-r heads,
    H(r(2d−r)+d), not H(d²+d): the checker's finding says which."""
    c = _low_rank_check(floor_cert)
    d, H, r = c["dim"], len(c["model"]), c["rank"]
    assert c["parameters"] == H * (r * (2 * d - r) + d) < F.dimension_floor(d, H)
    assert "rank H(r(2d−r)+d)" in checker_floor.check_floor(c)


def _product_changed(c):
    c["factors"][0]["K"][0][0] = str(Fraction(c["factors"][0]["K"][0][0]) + 1)


def _gauge_column(c):
    """All 2dr Q and K columns of head 1: their rank is r(2d − r) < 2dr (the GL(r) gauge), so
    a minor containing them all vanishes."""
    d, r = c["dim"], c["rank"]
    head = list(range(2 * d * r))                   # head 1: all Q and K entries
    rest = [j for j in c["columns"] if j >= 2 * d * r]
    c["columns"] = sorted(set(head + rest))[:c["parameters"]]


@pytest.mark.parametrize("tamper, message", [
    (_product_changed, "Q Kᵀ ≠ W"),
    (_gauge_column, "minor vanishes"),
    (lambda c: c.update(parameters=c["parameters"] + 1), "H\\(r\\(2d−r\\)\\+d\\)"),
    (lambda c: c.update(columns=c["columns"][:-1] + [c["columns"][-2]]), "increasing distinct"),
    (lambda c: c.pop("factors"), "one factor pair per head"),
])
def test_low_rank_floor_checker_rejects_tampering(floor_cert, tamper, message):
    c = copy.deepcopy(_low_rank_check(floor_cert))
    tamper(c)
    with pytest.raises(Rejected, match=message):
        checker_floor.check_floor(c)


def test_rank_factors_multiply_back_and_refuse_a_wrong_rank():
    from exactattn.analysis.beyond import low_rank_model
    m = low_rank_model(4, 2, 2, seed=5)
    for h in m.heads:
        Q, K = F.rank_factors(h.W, 2)
        assert [[sum(Q[a][k] * K[b][k] for k in range(2)) for b in range(4)]
                for a in range(4)] == [list(map(Fraction, row)) for row in h.W]
        with pytest.raises(ValueError, match="rank W = 2"):
            F.rank_factors(h.W, 1)


def test_factored_rows_agree_between_library_and_checker():
    from exactattn.analysis.beyond import low_rank_model
    m = low_rank_model(3, 2, 1, seed=2)
    qs = _queries(m)
    p, tau = F.random_prime_63(random.Random(1)), 12345
    rows = F.jacobian_mod_p(m, qs, p, tau)
    fac = [F.rank_factors(h.W, 1) for h in m.heads]
    for row in rows:
        assert F.factored_row(row, fac, 3, p) == checker_floor.factored(row, fac, 3, p)


# ------------------------------------------------------------------ economy-count
@pytest.fixture(scope="module")
def count_cert(quick_certificate):
    return quick_certificate("economy-count")


def test_economy_count_certificate_verifies(count_cert):
    assert len(verify_once(count_cert)) == len(count_cert["checks"])


def _counts(cert):
    return [k for k, c in enumerate(cert["checks"]) if c["kind"] == "economy-count"]


@pytest.mark.parametrize("tamper", ["measured", "samples", "total", "params"])
def test_economy_count_checker_rejects_tampering(count_cert, tamper):
    checks = count_cert["checks"]
    c = copy.deepcopy(checks[_counts(count_cert)[1]])
    checker_count.check_economy_count(c, checks)            # untampered: accepted
    if tamper == "measured":
        c["measured"]["pair"] -= 1
    elif tamper == "samples":
        b = next(b for b in c["blocks"] if b["name"] == "pair")
        b["samples"] = [[0, 0, 0, "2"]]
    elif tamper == "total":
        c["queries"] -= 1
    elif tamper == "params":
        c["params"]["H"] += 1
    with pytest.raises(Rejected):
        checker_count.check_economy_count(c, checks)


def test_economy_count_checker_catches_a_wrong_structure_copy(count_cert, monkeypatch):
    """Planted bug in the checker's own copy (pairs with 2 samples): its sum is no longer the
    closed form, and the certificate's structure no longer matches it."""
    real = checker_count.blocks

    def wrong(variant, path, matching=True):
        out = real(variant, path, matching)
        if "pair" in out:
            m, _, length = out["pair"]
            out["pair"] = (m, checker_count._p((2, 0, 0, 0)), length)
        return out
    checks = count_cert["checks"]
    monkeypatch.setattr(checker_count, "blocks", wrong)
    with pytest.raises(Rejected):
        checker_count.check_economy_count(checks[_counts(count_cert)[0]], checks)


def test_economy_prob1_quick_holds(quick_claim):
    out = quick_claim("economy-prob1")
    assert any("0 wrong models" in d for d in out.verdict.details)


def test_economy_bad_set_refuses_a_direction_that_does_not_see_its_head():
    from exactattn.analysis.economy_genericity import economy_bad_set_polynomials
    model = ea.random_multi_head(2, 2, seed=1)
    heads = [(h.W, h.v) for h in model.heads]
    blind = [[-heads[0][1][1], heads[0][1][0]], [1, 0]]      # v_1·b_1 = 0: the pair residue dies
    with pytest.raises(ValueError, match="identically zero"):
        economy_bad_set_polynomials(heads, 2, [blind[0], [0, 0]])

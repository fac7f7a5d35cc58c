"""The design learner (``schedule="design"``; Theorem A, docs/design.md §12, docs/beyond.md
§8): no random draw, the exact model from the moment-curve design, certified by its own
transcript; every check it makes is planted to fail here."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exactattn as ea
from exactattn.errors import CertificationFailed, LearningFailure, NotAttention
from exactattn.learners.beyond import design_learner as dl
from exactattn.learners.design import moment_curve as mc
from exactattn.learners.multi_head import learn_multi_head
from exactattn.learners.p2.recovery import draw_bases
from exactattn.models.attention import AttentionHead, MultiHeadAttention, random_head
from proofs_checks.checker import Rejected, verify
from proofs_checks.common import run_certificate
from proofs_checks.p2_nonunique import two_head_twin


def _learn(model, d, **told):
    return learn_multi_head(ea.Oracle(model), d, schedule="design", validate=0, **told)


def _families(model, d, lams):
    """[(λ, [(p_h(λ), v_h·(λ^i))])] computed from the model (what read_family returns: equal
    scores merged, zero residues dropped)."""
    out = []
    for lam in lams:
        lam = Fraction(lam)
        poles = {}
        for h in model.heads:
            p = sum((h.W[i][j] * lam ** (i + d * j) for i in range(d) for j in range(d)),
                    Fraction(0))
            poles[p] = poles.get(p, 0) + sum((h.v[i] * lam ** i for i in range(d)), Fraction(0))
        out.append((lam, sorted((p, c) for p, c in poles.items() if c)))
    return out


# ------------------------------------------------------------------ counts
@pytest.mark.parametrize("H", [1, 2, 3])
def test_at_d_1_the_learner_asks_exactly_2H_queries(H):
    m = ea.random_multi_head(1, H, seed=H)
    r = _learn(m, 1, heads=H)
    assert ea.same_function(r.model, m) and r.queries == 2 * H == r.expected_queries


@pytest.mark.parametrize("d,H,H0,told", [(2, 1, 1, True), (2, 2, 2, False), (2, 1, 2, True),
                                         (2, 1, 2, False)])
def test_the_count_is_the_formula_and_the_transcript_is_theorem_as_design(d, H, H0, told):
    m = ea.random_multi_head(d, H, seed=7)
    r = _learn(m, d, **({"heads": H, "heads_bound": H0} if told else {"heads_bound": H0}))
    S = dl.family_samples(H0, H if told else None)
    n = mc.families_needed(d, H, H0)
    assert ea.same_function(r.model, m)
    assert r.queries == dl.design_learner_count(d, H, H0, told) == d + S * n
    assert r.max_length == S + 1 and r.uniqueness.families == n
    asked = [tuple(map(tuple, q)) for q, _ in r.transcript]
    assert asked == [tuple(map(tuple, q)) for q in mc.unit_queries(d) + [
        q for lam in mc.points(n) for q in mc.family_queries(lam, d, S)]]


def test_samples_per_family():
    assert dl.family_samples(3) == 5 and dl.family_samples(3, 1) == 3 == 1 + 3 - 1
    assert all(dl.family_samples(H0, H) >= max(2 * H - 1, H + H0 - 1)
               for H0 in range(1, 7) for H in range(1, H0 + 1))


@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 8), H0=st.integers(1, 6), H=st.integers(0, 6))
def test_the_worst_case_covers_every_bad_set(d, H0, H):
    """After worst_case_families, H ≤ H₀ heads have a family showing all of them and
    H(d²−1)+1 good ones (at most Hγ + C(H,2)β bad), and Theorem A's count is reached."""
    H = min(H, H0)
    n = dl.worst_case_families(d, H0)
    bad = H * mc.gamma(d) + H * (H - 1) // 2 * mc.beta(d)
    assert n - bad >= dl.good_families_needed(d, H) and n >= mc.families_needed(d, H, H0)
    assert mc.families_needed(d, H, H0) >= dl.good_families_needed(d, H)


# ------------------------------------------------------------------ curves, unit
def test_elementary_and_interpolate():
    assert dl.elementary([2, 3, 5]) == [10, 31, 30]
    pts = [0, 1, -1, Fraction(1, 2)]
    assert dl.interpolate(pts, [1 + 2 * x - x ** 3 for x in map(Fraction, pts)]) == [1, 2, 0, -1]


@pytest.mark.parametrize("d,H", [(1, 2), (2, 2), (3, 2)])
def test_score_curves_are_the_heads_W_and_residues_their_v(d, H):
    m = ea.random_multi_head(d, H, seed=d).canonical()
    fams = _families(m, d, mc.points(mc.families_needed(d, H, H)))
    got = dl.recover(fams, d)
    assert got.head_set() == m.head_set()


@pytest.mark.parametrize("extra", [0, 1])
def test_a_symmetric_function_of_too_high_degree_is_named(extra):
    """e₁ of degree d² in λ: no head's score curve (planted: one score λ^{d²}); detected with
    the interpolation's own points (H = 2: e₁ has d² − 1 spare ones) and with more."""
    d = 2
    lams = mc.points(dl.good_families_needed(d, 2) + extra)
    fams = [(lam, [(Fraction(0), Fraction(2)), (lam ** 4 + 1, Fraction(1))]) for lam in lams]
    with pytest.raises(NotAttention, match="elementary symmetric"):
        dl.score_curves(fams, d, 2)


def test_a_product_that_is_not_linear_factors_is_named(monkeypatch):
    """Scores (−1 ± √(5 + 4λ²))/2 are not rational curves: plant e₁ = −1, e₂ = −(1 + λ²),
    whose product s² + s − (1 + λ²) is irreducible over Q."""
    d = 2
    lams = mc.points(dl.good_families_needed(d, 2))
    monkeypatch.setattr(dl, "elementary", lambda v: [Fraction(-1), -(1 + v[0] ** 2)])
    fams = [(lam, [(lam, Fraction(1)), (lam + 1, Fraction(1))]) for lam in lams]
    with pytest.raises(NotAttention, match="not s − p"):
        dl.score_curves(fams, d, 2)


def test_a_repeated_factor_is_named(monkeypatch):
    """(s − λ)²: two heads on one curve (planted through the symmetric functions)."""
    d = 2
    lams = mc.points(dl.good_families_needed(d, 2))
    monkeypatch.setattr(dl, "elementary", lambda v: [2 * v[0], v[0] ** 2])
    fams = [(lam, [(lam, Fraction(1)), (lam + 1, Fraction(2))]) for lam in lams]
    with pytest.raises(NotAttention, match="multiplicity 2"):
        dl.score_curves(fams, d, 2)


def test_a_curve_missing_from_a_good_family_is_named():
    d = 2
    m = ea.random_multi_head(d, 1, seed=1).canonical()
    fams = _families(m, d, mc.points(4))
    curve = dl.score_curves(fams, d, 1)
    fams[0] = (fams[0][0], [(fams[0][1][0][0] + 1, fams[0][1][0][1])])
    with pytest.raises(NotAttention, match="misses the poles"):
        dl.residue_vectors(curve, fams, d)


# ------------------------------------------------------------------ one family
def test_read_family_gives_the_affine_scores_and_residues_at_a_rational_point():
    d = 2
    m = ea.random_multi_head(d, 2, seed=4).canonical()
    lam = Fraction(-1, 2)
    v = [sum((h.v[i] for h in m.heads), Fraction(0)) for i in range(d)]
    answers = [m(q, "exact") for q in mc.family_queries(lam, d, 3)]
    assert dl.read_family(lam, d, v, answers, 2) == _families(m, d, [lam])[0][1]


def test_a_family_whose_interpolant_misreads_is_never_used(monkeypatch):
    """Planted: the limit interpolation returns a shifted pole; the exact check against the
    samples refuses it at every prime size."""
    d = 2
    m = ea.random_multi_head(d, 1, seed=4).canonical()
    v = list(m.heads[0].v)
    answers = [m(q, "exact") for q in mc.family_queries(1, d, 1)]
    real = dl.solve_family_with_limit

    def shifted(field, K, ys, n, hint=None):
        return [(z * z, c) for z, c in real(field, K, ys, n, hint)]
    monkeypatch.setattr(dl, "solve_family_with_limit", shifted)
    with pytest.raises(LearningFailure):
        dl.read_family(1, d, v, answers, 1)


# ------------------------------------------------------------------ the run
def test_no_seed_two_runs_write_byte_identical_certificates_the_checker_accepts():
    m = ea.random_multi_head(2, 1, seed=2)
    certs = [json.dumps(run_certificate(learn_multi_head(ea.Oracle(m), 2, heads_bound=2,
                                                         schedule="design", seed=s)))
             for s in (None, 5)]
    assert certs[0] == certs[1]
    cert = json.loads(certs[0])
    assert cert["claim"] == "certify" and cert["checks"][0]["samples"] == 3
    assert verify(cert)


def test_the_proves_text_is_theorem_a_with_no_probability():
    r = _learn(ea.random_multi_head(2, 1, seed=3), 2, heads_bound=2)
    assert "Theorem A" in r.proves and "is M" in r.proves and "≤ 2 heads" in r.proves
    assert "probability one" not in r.proves and "no random draw" in r.proves


def test_the_lemmas_twin_is_returned_as_itself_and_the_one_head_model_too():
    head = random_head(2, seed=3)
    U, X = draw_bases(3, 2, 1000)
    one, two = MultiHeadAttention([head]), two_head_twin(head.W, head.v, U, X)
    for m in (one, two):
        r = _learn(m, 2, heads_bound=2)
        assert ea.same_function(r.model, m) and len(r.heads) == len(m.canonical().heads)


def test_a_model_that_does_not_reproduce_the_answers_is_named(monkeypatch):
    m = ea.random_multi_head(2, 1, seed=3)
    other = ea.random_multi_head(2, 1, seed=4).canonical()
    monkeypatch.setattr(dl, "recover", lambda families, d: other)
    with pytest.raises(CertificationFailed):
        _learn(m, 2, heads=1)


def test_a_failed_first_recovery_asks_up_to_the_worst_case_and_retries(monkeypatch):
    m = ea.random_multi_head(2, 1, seed=3)
    real, calls = dl.recover, []

    def once(families, d):
        calls.append(len(families))
        if len(calls) == 1:
            raise NotAttention("planted")
        return real(families, d)
    monkeypatch.setattr(dl, "recover", once)
    r = _learn(m, 2, heads_bound=2)
    assert ea.same_function(r.model, m) and r.extra["retried"]
    assert calls == [mc.families_needed(2, 1, 2), dl.worst_case_families(2, 2)]


def test_a_second_failed_recovery_is_raised(monkeypatch):
    def never(families, d):
        raise NotAttention("planted")
    monkeypatch.setattr(dl, "recover", never)
    orc = ea.Oracle(ea.random_multi_head(2, 1, seed=3))
    with pytest.raises(NotAttention, match="planted"):
        learn_multi_head(orc, 2, heads_bound=1, schedule="design", validate=0)
    assert orc.queries == 2 + dl.worst_case_families(2, 1)


@pytest.mark.parametrize("build", ["more heads", "offset", "irrational unit"])
def test_out_of_class_oracles_end_in_named_failures(build):
    m = ea.random_multi_head(2, 2, seed=1)
    if build == "more heads":
        f = ea.Oracle(m)
    elif build == "offset":
        f = ea.Oracle(lambda t: m(t, "exact") + Fraction(1, 3), dim=2, backend="exact")
    else:
        t = ea.Oracle(m)
        f = ea.Oracle(lambda q: t(q) if len(q) > 1 else t(q + q), dim=2, backend="exact")
    with pytest.raises(LearningFailure):
        learn_multi_head(f, 2, heads_bound=1, schedule="design")


def test_a_non_rational_unit_answer_is_named():
    m = ea.random_multi_head(2, 1, seed=1)
    t = ea.Oracle(m)
    f = ea.Oracle(lambda q: t([q[0], [1, 1]]) if len(q) == 1 else t(q), dim=2, backend="exact")
    with pytest.raises(NotAttention, match="single-token"):
        learn_multi_head(f, 2, heads=1, schedule="design")


def test_the_design_schedule_refuses_inexact_backends_and_sizes_the_checker_cannot_read():
    m = ea.random_multi_head(2, 1, seed=1, kind="real")
    with pytest.raises(ValueError, match="exact backend"):
        learn_multi_head(ea.Oracle(m, backend="float"), 2, heads=1, schedule="design")
    with pytest.raises(ValueError, match="H0 = 9"):
        learn_multi_head(ea.Oracle(ea.random_multi_head(1, 1, seed=1)), 1, heads_bound=9,
                         schedule="design")


def test_cli_design_needs_the_exact_backend(capsys):
    from exactattn.cli import main
    assert main(["learn", "multi-head", "--dim", "2", "--schedule", "design",
                 "--backend", "float"]) == 2
    assert "--backend exact" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_dim_3_heads_2_bound_3_certificate_byte_identical_and_verified(tmp_path):
    """The issue's run: exact model, unique, two runs byte-identical, the checker accepts."""
    from exactattn.cli import main
    paths = [tmp_path / f"d{k}.json" for k in (1, 2)]
    for p in paths:
        assert main(["learn", "multi-head", "--dim", "3", "--heads", "2", "--heads-bound", "3",
                     "--schedule", "design", "--backend", "exact", "--certificate", str(p),
                     "--quiet"]) == 0
    assert paths[0].read_bytes() == paths[1].read_bytes()
    cert = json.loads(paths[0].read_text())
    assert verify(cert) and cert["params"] == {"dim": 3, "H": 2, "H0": 3}
    forged = json.loads(paths[0].read_text())
    forged["checks"][0]["points"] = forged["checks"][0]["points"][:-1]
    forged["checks"][0]["answers"] = forged["checks"][0]["answers"][:-5]
    with pytest.raises(Rejected):
        verify(forged)


@pytest.mark.parametrize("d,H,H0", [(3, 1, 2), (3, 2, 2)])
def test_generic_models_at_d_3(d, H, H0):
    m = ea.random_multi_head(d, H, seed=11)
    r = _learn(m, d, heads_bound=H0)
    assert ea.same_function(r.model, m)
    assert r.queries == dl.design_learner_count(d, H, H0)


def test_a_head_invisible_at_the_first_points_is_still_learned():
    """v_h·u(λ) = λ(λ − 1)·… vanishes at the first points 0 and 1 (γ = d − 1 = 2 of them):
    those families show one pole fewer and are left out."""
    d = 3
    a = AttentionHead([[Fraction(i - j, 3) for j in range(d)] for i in range(d)],
                      [0, -1, 1])
    b = AttentionHead([[Fraction(i + 2 * j + 1, 5) for j in range(d)] for i in range(d)],
                      [1, 2, -1])
    m = MultiHeadAttention([a, b])
    r = _learn(m, d, heads=2)
    assert ea.same_function(r.model, m) and r.extra["good"] == r.extra["families"] - 2


def test_the_honesty_harness_puts_every_multi_head_run_on_the_design_schedule(monkeypatch):
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "honesty_harness.py"
    spec = importlib.util.spec_from_file_location("honesty_harness", path)
    h = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(h)
    seen, real = [], h.learn_multi_head
    monkeypatch.setattr(h, "learn_multi_head", lambda *a, **k: seen.append(k) or real(*a, **k))
    assert h.run_trial("tiny box", 0, "design")[1:3] == ("recovered", None)
    assert seen[-1]["schedule"] == "design" and "box" not in seen[-1]
    h.run_trial("tiny box", 0)
    assert "schedule" not in seen[-1] and "box" in seen[-1]
    assert set(h.SCHEDULE_KINDS) <= set(h.KINDS)


@pytest.mark.parametrize("d,H", [(1, 2), (2, 1)])
def test_counts_beyond_reports_the_design_learner_beside_its_formula(d, H):
    from exactattn.analysis.beyond import measure_schemes
    row = measure_schemes(d, H)
    e = row["design"]
    assert e["recovered"] and e["queries"] == row["design_formula"]
    assert row["design_formula"] == d + (2 * H - 1) * ((2 * H - 1) * (d * d - 1) + d)
    assert e["max_length"] == row["design_max_length"] == 2 * H
    assert e["ratio"] == round(e["queries"] / row["floor"], 3)


# ------------------------------------------------------------------ the claim query-complexity
@pytest.mark.slow
def test_the_query_complexity_certificate_is_accepted(quick_certificate):
    cert = quick_certificate("query-complexity")
    findings = verify(cert)
    assert len(findings) == 18 and all("M = the canonical form of the true model" in f
                                       for f in findings)


def _replace(cert, k, c, model):
    from proofs_checks.certificates import heads_json
    from proofs_checks.common import design_record
    rec = design_record(c)
    rec["truth"] = heads_json(model.heads)
    cert["checks"][k] = rec


@pytest.mark.slow
@pytest.mark.parametrize("forge,match", [
    ("drop", "do not cover the grid"),
    ("certify's record", "not the design learner's transcript"),
    ("one more family", "not the design learner's transcript"),
])
def test_a_query_complexity_row_cannot_be_dropped_or_replaced(quick_certificate, forge, match):
    """Each replacement is a valid design record on its own (the checker accepts it), but not
    the design learner's transcript of that row."""
    from proofs_checks.query_complexity import CLAIM
    cert = quick_certificate("query-complexity")
    grid = CLAIM.sizes["quick"]["d,H,H0"]
    k = grid.index([2, 1, 2])
    d, H, H0 = grid[k]
    model = ea.random_multi_head(d, H, seed=CLAIM.sizes["quick"]["seed"] + 10 * d + H)
    if forge == "drop":
        cert["checks"].pop(k)
    elif forge == "certify's record":          # L − 1 = 2 samples, not 2H0 − 1 = 3
        _replace(cert, k, ea.certify(ea.Oracle(model), model, heads_bound=H0), model)
    else:
        r = learn_multi_head(ea.Oracle(model), d, heads_bound=H0, schedule="design",
                             validate=0)
        c = r.uniqueness
        extra = mc.points(c.families + 1)[-1]
        c.transcript += [(q, model(q, "exact")) for q in mc.family_queries(extra, d, c.samples)]
        c.points = c.points + [extra]
        _replace(cert, k, c, model)
    with pytest.raises(Rejected, match=match):
        verify(cert)


def test_family_element_is_the_models_answer_and_nothing_else():
    d, lam = 2, Fraction(2)
    m = ea.random_multi_head(d, 2, seed=4).canonical()
    u, x = mc.u_of(lam, d), mc.x_of(lam, d)
    v = [sum((h.v[i] for h in m.heads), Fraction(0)) for i in range(d)]
    K = sum((a * (b + c) for a, b, c in zip(v, x, u)), Fraction(0))
    poles = [(sum((u[i] * h.W[i][j] * x[j] for i in range(d) for j in range(d)), Fraction(0)),
              -sum((h.v[i] * u[i] for i in range(d)), Fraction(0))) for h in m.heads]
    L = 1
    for sc, _ in poles:
        L = L * sc.denominator // __import__("math").gcd(L, sc.denominator)
    for k, q in enumerate(mc.family_queries(lam, d, 3), 1):
        assert dl.family_element(K, poles, k, L) == m(q, "exact")
        bent = [(poles[0][0], poles[0][1] + 1)] + poles[1:]
        assert dl.family_element(K, bent, k, L) != m(q, "exact")


# ------------------------------------------------------------------ the fibre search as a learner
def test_the_fibre_learner_stops_when_the_fibre_is_one_point():
    from exactattn.learners.beyond.fibre_learner import learn_by_fibre
    m = ea.random_multi_head(2, 2, seed=22)
    r = learn_by_fibre(ea.Oracle(m), 2, 2, seed=0)
    assert ea.same_function(r.model, m) and r.queries == 2 + r.extra["families"] * 3
    assert r.queries >= 12 and "one point" in r.proves and "not re-checked" in r.proves


def test_the_fibre_learner_names_a_fibre_that_stays_large_or_empty(monkeypatch):
    from exactattn.learners.beyond import fibre_learner as fl
    m = ea.random_multi_head(2, 2, seed=22)
    with pytest.raises(fl.NotUnique):                     # 1 family cannot fix 2 heads
        fl.learn_by_fibre(ea.Oracle(m), 2, 2, seed=0, extra_families=-3)
    real = fl.compute_fibre

    def empty(*a, **k):
        fib = real(*a, **k)
        fib.pieces = []
        return fib
    monkeypatch.setattr(fl, "compute_fibre", empty)
    with pytest.raises(ea.OutOfClass, match="fibre of 1 families is empty"):
        fl.learn_by_fibre(ea.Oracle(m), 2, 2, seed=0)

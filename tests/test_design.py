"""Theorem A's design (docs/design.md §12): ``certify`` asks the moment-curve design of any exact
oracle and compares the answers with M exactly; the ``design`` certificate is re-derived by
the stdlib checker, and every planted defect — a family dropped, a repeated point, a changed
answer, too few samples, a forged H or H₀ — is rejected."""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import exactattn as ea
from exactattn.learners.design import moment_curve as mc
from exactattn.learners.design.certify import estimate_design
from exactattn.learners.p2 import cost
from exactattn.learners.p2.recovery import draw_bases
from exactattn.models.attention import AttentionHead, MultiHeadAttention, random_head
from proofs_checks.checker import Rejected, verify
from proofs_checks.checker import design as checker_design
from proofs_checks.certificates import element_json, heads_json
from proofs_checks.p2_nonunique import two_head_twin


def _certify(model, H0, oracle_model=None):
    return ea.certify(ea.Oracle(oracle_model or model), model, heads_bound=H0)


# ------------------------------------------------------------------ the design itself
@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_beta_is_exact_the_products_of_u_and_x_are_d2_independent_monomials(d):
    """u(λ)ᵀΔx(λ) = Σ Δ_ij λ^(i+dj): the d² products u_i x_j at d² distinct points form a
    non-singular (Vandermonde) matrix, so only Δ = 0 vanishes at d² points: β = d² − 1.  Both
    the library's and the checker's curves."""
    from proofs_checks.checker.linalg import det
    pts = mc.points(d * d)
    for u_of, x_of in ((mc.u_of, mc.x_of), (checker_design._u, checker_design._x)):
        rows = [[a * b for a in u_of(Fraction(p), d) for b in x_of(Fraction(p), d)]
                for p in pts]
        assert det(rows) != 0


@pytest.mark.parametrize("d", [1, 2, 3, 5])
def test_gamma_is_exact_d_points_of_the_curve_are_a_basis(d):
    from proofs_checks.checker.linalg import det
    for u_of in (mc.u_of, checker_design._u):
        assert det([u_of(Fraction(p), d) for p in mc.points(d)]) != 0


def test_the_points_are_distinct_and_of_smallest_height_first():
    pts = mc.points(200)
    assert len(set(pts)) == 200 and pts[:7] == [0, 1, -1, Fraction(1, 2), Fraction(-1, 2), 2, -2]
    heights = [mc.height(p) for p in pts]
    assert heights == sorted(heights)
    top = heights[-1]           # every rational of a smaller height is among them
    below = {Fraction(s * p, q) for q in range(1, top) for p in range(top) for s in (1, -1)}
    assert below <= set(pts)


@pytest.mark.parametrize("d,H,H0", [(1, 1, 1), (2, 1, 2), (3, 2, 3), (4, 2, 3), (8, 4, 6)])
def test_counts_follow_theorem_a(d, H, H0):
    L = H + H0
    n = mc.families_needed(d, H, H0)
    assert n == (L - 1) * (d * d - 1) + d and n - 1 == mc.gamma(d) + (L - 1) * mc.beta(d)
    assert mc.design_count(d, H, H0) == d + n * (L - 1) == len(mc.design_queries(d, H, H0))


@pytest.mark.parametrize("d,H,H0", [(1, 1, 2), (2, 2, 3), (3, 1, 2)])
def test_the_checker_rebuilds_the_librarys_queries(d, H, H0):
    lib = mc.design_queries(d, H, H0)
    pts = [Fraction(p) for p in mc.points(mc.families_needed(d, H, H0))]
    assert checker_design.queries(d, H + H0 - 1, pts) == lib


# ------------------------------------------------------------------ certify
@pytest.mark.parametrize("d,H,H0", [(1, 2, 2), (2, 1, 2), (2, 2, 2), (3, 2, 3)])
def test_the_oracle_itself_is_certified_with_exactly_the_designs_queries(d, H, H0):
    model = ea.random_multi_head(d, H, seed=d + H)
    orc = ea.Oracle(model)
    c = ea.certify(orc, model, heads_bound=H0)
    assert c.holds and c.mismatch is None and c.queries == orc.queries == c.needed
    assert c.max_length == H + H0 and c.families == mc.families_needed(d, H, H0)
    assert f"≤ {H0} heads" in c.proves and "Theorem A" in c.proves


def test_a_split_head_oracle_is_the_same_model():
    model = ea.random_multi_head(3, 2, seed=1)
    W, v = model.heads[0].W, model.heads[0].v
    half = [x / 2 for x in v]
    split = MultiHeadAttention([AttentionHead(W, half), AttentionHead(W, half), model.heads[1]])
    assert _certify(model, 3, split).holds


def test_a_perturbed_entry_is_found_and_named():
    model = ea.random_multi_head(3, 2, seed=1)
    W = [list(r) for r in model.heads[1].W]
    W[2][1] += Fraction(1, 1000)
    bent = MultiHeadAttention([model.heads[0], AttentionHead(W, model.heads[1].v)])
    c = _certify(model, 3, bent)
    assert not c.holds and c.mismatch is not None and c.mismatch >= 3     # after [e_i]
    q, a = c.transcript[c.mismatch]
    assert model(list(map(list, q)), "exact") != a == bent(list(map(list, q)), "exact")
    assert "not the oracle" in c.proves
    with pytest.raises(ValueError, match="mismatch"):
        c.certificate()


@pytest.fixture(scope="module")
def lemma():
    """The non-uniqueness lemma's one-head model and its two-head twin (d = 2, H0 = 2): they
    give the same answers on the whole P2 schedule at this draw."""
    head = random_head(2, seed=3)
    U, X = draw_bases(3, 2, 1000)
    return MultiHeadAttention([head]), two_head_twin(head.W, head.v, U, X)


def test_the_lemmas_twin_and_one_head_model_are_each_certified_as_themselves(lemma):
    one, two = lemma
    assert _certify(one, 2).holds and _certify(two, 2).holds
    assert not _certify(one, 2, two).holds and not _certify(two, 2, one).holds


def test_refused_above_the_budget_before_the_first_query(monkeypatch):
    monkeypatch.setattr(cost, "DEFAULT_BUDGET", cost.Budget(bytes=1 << 10, seconds=1e-3))
    model = ea.random_multi_head(2, 1, seed=0)
    orc = ea.Oracle(model)
    with pytest.raises(cost.CostExceeded, match="certify at d=2"):
        ea.certify(orc, model, heads_bound=2)
    assert orc.queries == 0
    assert ea.certify(orc, model, heads_bound=2, force=True).holds


def test_the_estimate_grows_with_the_exponents():
    small = estimate_design(3, 2, 3, ea.random_multi_head(3, 2, seed=0))
    big = estimate_design(6, 2, 3, ea.random_multi_head(6, 2, seed=0))
    assert big.exponent_bits > small.exponent_bits and big.bytes > small.bytes


@pytest.mark.parametrize("bad,match", [
    ({"heads_bound": 0}, "heads_bound"), ({"heads_bound": 9}, "heads_bound"),
    ({"heads_bound": True}, "heads_bound")])
def test_bad_bounds_are_one_line_errors(bad, match):
    model = ea.random_multi_head(2, 1, seed=0)
    with pytest.raises(ValueError, match=match):
        ea.certify(ea.Oracle(model), model, **bad)


def test_an_inexact_oracle_or_model_is_refused():
    model = ea.random_multi_head(2, 1, seed=0)
    with pytest.raises(ValueError, match="exact"):
        ea.certify(ea.Oracle(model, backend="mp"), model)
    real = ea.random_multi_head(2, 1, seed=0, kind="real")
    with pytest.raises(ValueError, match="rational"):
        ea.certify(ea.Oracle(model), real)


# ------------------------------------------------------------------ the checker
@pytest.fixture(scope="module")
def genuine():
    model = ea.random_multi_head(2, 2, seed=5)
    return json.loads(json.dumps(_certify(model, 3).certificate())), model


def _forged(genuine):
    cert = copy.deepcopy(genuine[0])
    return cert, cert["checks"][0]


def test_the_genuine_certificate_is_accepted(genuine):
    (line,) = verify(genuine[0])
    assert line.startswith("design moment-curve d=2 H=2 H0=3: 14 distinct points > γ + "
                           "(L−1)β = 1 + 4·3") and "Theorem A" in line


def test_one_family_dropped_is_rejected(genuine):
    cert, rec = _forged(genuine)
    rec["points"].pop()
    del rec["answers"][-rec["samples"]:]
    with pytest.raises(Rejected, match="Theorem A needs n > γ"):
        verify(cert)


def test_a_repeated_point_is_rejected(genuine):
    cert, rec = _forged(genuine)
    rec["points"][-1] = rec["points"][0]
    with pytest.raises(Rejected, match="repeated point"):
        verify(cert)


def test_a_changed_answer_is_rejected(genuine):
    cert, rec = _forged(genuine)
    k = len(rec["answers"]) // 2
    rec["answers"][k] = element_json(ea.ExpElement.from_rational(7))
    with pytest.raises(Rejected, match=f"recorded answer {k}"):
        verify(cert)


def test_too_few_samples_are_rejected(genuine):
    cert, rec = _forged(genuine)
    rec["samples"] -= 1
    with pytest.raises(Rejected, match="samples per family"):
        verify(cert)


def test_more_samples_are_a_design_too():
    """A transcript with S > L − 1 samples per family (a learner's) is checked as one."""
    model = ea.random_multi_head(2, 1, seed=2)
    c = _certify(model, 1)
    cert = c.certificate()
    rec = cert["checks"][0]
    pts = [Fraction(p) for p in c.points]
    qs = checker_design.queries(2, 3, pts)
    rec["samples"] = 3
    rec["answers"] = [element_json(model(q, "exact")) for q in qs]
    assert verify(json.loads(json.dumps(cert)))[0].startswith("design moment-curve d=2 H=1 H0=1")


def test_a_larger_bound_needs_more_families(genuine):
    cert, rec = _forged(genuine)
    rec["H0"] += 1
    cert["params"]["H0"] += 1
    with pytest.raises(Rejected, match="Theorem A needs n > γ"):
        verify(cert)


def test_h_is_counted_on_the_canonical_form(genuine):
    """An M written with a zero head and a split head is the same M: accepted; a third real
    head raises H, and the same design no longer suffices."""
    cert, rec = _forged(genuine)
    _, model = genuine
    W, v = model.heads[0].W, model.heads[0].v
    zero = [[Fraction(0)] * 2, [Fraction(1)] * 2]
    written = [(W, [x / 2 for x in v]), (W, [x / 2 for x in v]), (zero, [Fraction(0)] * 2),
               (model.heads[1].W, model.heads[1].v)]
    rec["model"] = heads_json(written)
    assert verify(cert)
    cert, rec = _forged(genuine)
    rec["model"].append({"W": [["1", "0"], ["0", "1"]], "v": ["1", "1"]})
    cert["params"]["H"] = 3
    with pytest.raises(Rejected, match="Theorem A needs n > γ"):
        verify(cert)


def test_params_must_be_those_of_the_record(genuine):
    cert, _ = _forged(genuine)
    cert["params"]["H"] = 1
    with pytest.raises(Rejected, match="canonical heads"):
        verify(cert)


def test_a_wrong_number_of_answers_is_rejected(genuine):
    cert, rec = _forged(genuine)
    rec["answers"].append(rec["answers"][-1])
    with pytest.raises(Rejected, match="answers but the design"):
        verify(cert)


def test_points_too_large_are_refused_before_any_power(genuine):
    cert, rec = _forged(genuine)
    rec["points"][-1] = str(1 << 2000)
    with pytest.raises(Rejected, match="bits"):
        verify(cert)


def test_an_unknown_design_is_rejected(genuine):
    cert, rec = _forged(genuine)
    rec["design"] = "product-grid"
    with pytest.raises(Rejected, match="unknown design"):
        verify(cert)


# ------------------------------------------------------------------ the command line
@pytest.mark.slow
def test_cli_certify_writes_a_certificate_and_names_a_mismatch(tmp_path):
    from conftest import run_cli
    m, o = tmp_path / "m.json", tmp_path / "o.json"
    m.write_text(ea.model_to_json(ea.random_multi_head(2, 2, seed=1)))
    o.write_text(ea.model_to_json(ea.random_multi_head(2, 2, seed=2)))
    ok = run_cli(["certify", "--model", str(m), "--against", str(m), "--heads-bound", "3",
                  "--certificate", str(tmp_path / "c.json")], cwd=tmp_path)
    assert ok.returncode == 0 and ok.stdout.startswith("certified: every oracle with ≤ 3 heads")
    from proofs_checks.verify import verify_file
    assert verify_file(str(tmp_path / "c.json"))[0].startswith("design moment-curve d=2 H=2")
    bad = run_cli(["certify", "--model", str(o), "--against", str(m)], cwd=tmp_path)
    assert bad.returncode == 1 and bad.stdout.startswith("NOT M: M is not the oracle")
    other = tmp_path / "d3.json"
    other.write_text(ea.model_to_json(ea.random_multi_head(3, 1, seed=1)))
    dim = run_cli(["certify", "--model", str(other), "--against", str(m)], cwd=tmp_path)
    assert dim.returncode == 2 and "dimension" in dim.stderr and len(dim.stderr.splitlines()) == 1


def test_a_certificate_the_checker_could_not_read_is_not_written(monkeypatch, tmp_path):
    from proofs_checks.checker import parse
    model = ea.random_multi_head(3, 1, seed=0)
    c = _certify(model, 2)
    monkeypatch.setattr(parse, "MAX_INT_DIGITS", 3)
    with pytest.raises(ValueError, match="digits, above the 3 the checker reads"):
        c.write_certificate(tmp_path / "c.json")
    monkeypatch.setattr(parse, "MAX_INT_DIGITS", 1200)
    monkeypatch.setattr(parse, "MAX_BYTES", 1000)
    with pytest.raises(ValueError, match="bytes, above the 1,000 the checker reads"):
        c.write_certificate(tmp_path / "c.json")
    assert not (tmp_path / "c.json").exists()


# ------------------------------------------------------------------ the claim design-unique
@pytest.mark.slow
def test_the_claims_certificate_is_accepted(quick_certificate):
    findings = verify(quick_certificate("design-unique"))
    assert len(findings) == 6 and all("M = the canonical form of the true model" in f
                                      for f in findings)


@pytest.mark.slow
@pytest.mark.parametrize("edit,match", [
    (lambda cs: cs.pop(1), "do not cover the grid"),
    (lambda cs: cs.insert(1, copy.deepcopy(cs[1])), "do not cover the grid"),
    (lambda cs: cs[-1].update(truth=cs[-2]["truth"], model=cs[-2]["model"]), "do not cover"),
    (lambda cs: cs[0].pop("truth"), "needs its true model"),
    (lambda cs: cs[0].update(truth=cs[-2]["truth"]), "not the canonical form of the recorded"),
])
def test_the_claims_records_cannot_be_dropped_duplicated_or_substituted(quick_certificate, edit,
                                                                        match):
    cert = quick_certificate("design-unique")
    edit(cert["checks"])
    with pytest.raises(Rejected, match=match):
        verify(cert)


# ------------------------------------------------------------------ Lemma B in the run checker
@pytest.mark.parametrize("H,H0,lemma", [(2, 2, True), (1, 2, False)])
def test_the_run_checker_states_lemma_b_exactly_when_h_is_h0(H, H0, lemma):
    from proofs_checks.common import run_certificate
    model = ea.random_multi_head(2, H, seed=7)
    res = ea.learn_multi_head(ea.Oracle(model), 2, heads_bound=H0, seed=7, validate=0)
    (line,) = verify(json.loads(json.dumps(run_certificate(res))))
    assert ("(Lemma B:" in line) is lemma and ("Theorem 1" in line) is not lemma
    assert ("Lemma B" in res.proves) is lemma


# ------------------------------------------------------------------ Theorem A as a law
_entry = st.fractions(min_value=-2, max_value=2, max_denominator=3)


@st.composite
def _pair(draw):
    """(M, oracle model, H0): small random heads; the oracle is M rewritten (heads split, a
    zero head added, order changed) or M with one entry changed, with at most H0 heads."""
    d = draw(st.integers(1, 2))
    H = draw(st.integers(1, 2))
    heads = [AttentionHead([[draw(_entry) for _ in range(d)] for _ in range(d)],
                           [draw(_entry) for _ in range(d)]) for _ in range(H)]
    M = MultiHeadAttention(heads, dim=d)
    if draw(st.booleans()):                   # the same function, written otherwise
        W, v = heads[0].W, heads[0].v
        other = [AttentionHead(W, [x / 2 for x in v]), AttentionHead(W, [x / 2 for x in v])]
        other += list(reversed(heads[1:]))
    else:                                     # one entry moved
        W = [list(r) for r in heads[-1].W]
        i, j = draw(st.integers(0, d - 1)), draw(st.integers(0, d - 1))
        W[i][j] += draw(st.sampled_from([Fraction(1, 7), Fraction(-1, 2), Fraction(1)]))
        other = heads[:-1] + [AttentionHead(W, heads[-1].v)]
    H0 = max(len(other), len(M.canonical().heads), 1)
    return M, MultiHeadAttention(other, dim=d), H0


@settings(max_examples=25, deadline=None)
@given(_pair())
def test_certify_holds_exactly_when_the_oracle_is_m(pair):
    """Theorem A with the moment-curve design: for an oracle with ≤ H0 heads, certify holds
    if and only if the oracle's canonical form is M's."""
    M, oracle, H0 = pair
    c = ea.certify(ea.Oracle(oracle), M, heads_bound=H0)
    assert c.holds == (oracle.head_set() == M.head_set())

"""proofs_checks: the claim registry, failing claims, certificates and the independent checker,
and `exactattn check` (docs/design.md §5, §7)."""

import ast
import json
import random
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from conftest import verify_once

import proofs_checks
from exactattn.cli.main import main
from proofs_checks import checker, get_claim, run_claim, verify
from proofs_checks.checker import claims as checker_claims, parse as checker_parse
from proofs_checks.registry import Claim, Verdict

CLAIM_IDS = ["P1-T4.1", "P1-T5.1", "P1-P7.1", "P2-rational", "P2-count", "P2-prob1",
             "P2-canonical"]


def needs_multi_head():
    pytest.importorskip("exactattn.learners.multi_head")


# ------------------------------------------------------------------ registry
def test_registry_lists_every_claim_with_reference_statement_and_sizes():
    claims = proofs_checks.claims()
    assert [c.id for c in claims][:len(CLAIM_IDS)] == CLAIM_IDS
    for c in claims:
        assert c.reference and c.statement and set(c.sizes) == {"quick", "full"}
        assert callable(c.run)


def test_checker_knows_the_same_claims():
    # the independent checker carries its own table; it must agree with the registry
    for c in proofs_checks.claims():
        ref, statement, _ = checker_claims.CLAIMS[c.id]
        assert (ref, statement) == (c.reference, c.statement)


def test_unknown_claim_is_a_clear_error():
    with pytest.raises(proofs_checks.UnknownClaim, match="known claims"):
        get_claim("P9-nothing")


def test_missing_learner_is_not_checked_and_fails():
    claim = Claim("X-test", "nowhere", "needs a module that is not there",
                  {"quick": {}, "full": {}}, lambda p: Verdict(True),
                  needs=("exactattn.learners.no_such_learner",))
    out = run_claim(claim)
    assert out.status == "FAIL" and "not checked" in out.verdict.details[0]


def test_a_crashing_claim_fails_with_its_error():
    def boom(params):
        raise ZeroDivisionError("on purpose")
    out = run_claim(Claim("X-crash", "nowhere", "crashes", {"quick": {}, "full": {}}, boom))
    assert out.status == "FAIL" and "ZeroDivisionError" in out.verdict.details[0]


# ------------------------------------------------------------------ claims without learners
@pytest.fixture(scope="module")
def rational_cert(quick_certificate):
    # its real quick sizes: the checker rejects a certificate whose params are not its label's
    return quick_certificate("P2-rational")


def test_p2_rational_quick_holds_and_its_certificate_verifies(rational_cert):
    findings = verify_once(rational_cert)
    assert any("determinant H=2" in f for f in findings)


def test_p2_rational_determinant_is_the_closed_form():
    from proofs_checks import p2_rational
    det = p2_rational.interpolation_determinant(2)
    assert det["closed_form_equal"] and det["independent_of_K"]
    assert det["poly"].total_degree() == 6


@pytest.mark.slow
def test_injected_wrong_determinant_formula_fails(monkeypatch):
    from proofs_checks import p2_rational
    original = p2_rational.closed_form_determinant
    monkeypatch.setattr(p2_rational, "closed_form_determinant",
                        lambda H, z, c, one=1: 2 * original(H, z, c, one))
    verdict = p2_rational.CLAIM.run({"H": [1, 2], "d": 2})     # H = 3 of the quick sizes too
    assert not verdict.holds
    assert any("closed form" in d for d in verdict.details if d.startswith("FAILED"))


# ------------------------------------------------------------------ checker: tampering
def _digit_positions(text, start):
    return [i for i in range(start, len(text)) if text[i] in "0123456789"]


def _tamper(text, i):
    return text[:i] + str((int(text[i]) + 1) % 10) + text[i + 1:]


def _rejected(text):
    try:
        cert = json.loads(text)
    except json.JSONDecodeError:
        return True
    try:
        verify.verify(cert)
    except verify.Rejected:
        return True
    return False


def test_tampered_certificate_is_rejected(rational_cert):
    text = json.dumps(rational_cert, indent=1, ensure_ascii=False)
    assert not _rejected(text)
    body = text.index('"checks"')
    positions = _digit_positions(text, body)
    rng = random.Random(5)
    sample = rng.sample(positions, 60)
    accepted = [text[max(0, i - 40):i + 5] for i in sample if not _rejected(_tamper(text, i))]
    assert not accepted, accepted


def test_verify_command_exit_status(tmp_path, rational_cert):
    good = tmp_path / "P2-rational.json"
    good.write_text(json.dumps(rational_cert, indent=1))
    bad = tmp_path / "tampered.json"
    text = good.read_text()
    i = _digit_positions(text, text.index('"value": "'))[0]    # a digit of a witness value
    bad.write_text(_tamper(text, i))
    run = lambda p: subprocess.run([sys.executable, "-m", "proofs_checks.verify", str(p)],  # noqa: E731
                                   capture_output=True, text=True)
    ok, rejected = run(good), run(bad)
    assert ok.returncode == 0 and "accepted" in ok.stdout
    assert rejected.returncode == 1 and "REJECTED" in rejected.stdout


def test_verify_prints_one_line_per_certificate_and_details_under_v(tmp_path, rational_cert,
                                                                   capsys):
    """Default: one `accepted PATH: N checks (names)` line per certificate, no finding text;
    -v adds every finding; -q (the old quiet flag) is the default's synonym."""
    from proofs_checks.checker.verify import main as verify_main
    good = tmp_path / "P2-rational.json"
    good.write_text(json.dumps(rational_cert, indent=1))
    findings = verify_once(rational_cert)
    assert verify_main([str(good), str(good)]) == 0
    lines = capsys.readouterr().out.splitlines()
    n = len(findings)
    assert len(lines) == 2 and all(x.startswith(f"accepted {good}: {n} checks (") for x in lines)
    assert all(len(x) - len(str(good)) < 120 for x in lines)
    assert verify_main(["-v", str(good)]) == 0
    lines_v = capsys.readouterr().out.splitlines()
    assert lines_v == [lines[0]] + [f"  - {f}" for f in findings]
    assert verify_main(["-q", str(good)]) == 0
    assert capsys.readouterr().out.splitlines() == [lines[0]]
    assert verify_main(["-q", "-v", str(good)]) == 2


def test_accepted_line_plural_and_names():
    from proofs_checks.checker.verify import SHOWN_NAMES, accepted_line
    assert accepted_line(["run d=2: ok"]) == "1 check (run d=2)"
    assert accepted_line(["count x {'d': 1}: ok", "count x {'d': 2}: ok"]) == \
        "2 checks (count x)"
    many = [f"kind{i:02d} with a long name: ok" for i in range(20)]
    line = accepted_line(many)
    assert line.startswith("20 checks (kind00 with a long name; ") and line.endswith(" more)")
    assert len(line) < SHOWN_NAMES + 40


@pytest.mark.slow
def test_checker_is_standard_library_only_and_never_evaluates():
    files = [Path(verify.__file__)] + sorted(Path(checker.__file__).parent.glob("*.py"))
    assert len(files) > 5
    for path in files:
        tree = ast.parse(path.read_text())
        mods = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                for a in n.names}
        mods |= {n.module.split(".")[0] for n in ast.walk(tree)
                 if isinstance(n, ast.ImportFrom) and n.module and n.level == 0}
        assert mods <= set(sys.stdlib_module_names) | {"__future__"}, (path, mods)
        calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Name)}
        assert not calls & {"eval", "exec", "compile", "sympify", "__import__"}, path


def test_checker_rejects_rationals_not_in_lowest_terms():
    with pytest.raises(verify.Rejected):
        checker_parse.rat("2/4")
    with pytest.raises(verify.Rejected):
        checker_parse.rat("1e3")
    assert checker_parse.rat("-3/7") == Fraction(-3, 7)


# ------------------------------------------------------------------ genericity
def test_bad_set_polynomials_are_nonzero_and_bounded():
    from exactattn.analysis import genericity as G
    from exactattn.models.attention import random_multi_head
    model = random_multi_head(1, 2, seed=3)
    heads = [(h.W, h.v) for h in model.heads]
    polys = G.bad_set_polynomials(heads, 1)
    factors, _ = G.distinct_factors(polys)
    D = G.total_degree(factors)
    exact = G.exact_bad_probability(factors, 1)
    assert exact == Fraction(5, 9) <= G.schwartz_zippel_bound(D, 1) == Fraction(2, 3)


def test_bad_set_refuses_a_model_that_is_not_canonical():
    from exactattn.analysis import genericity as G
    W = [[Fraction(1, 2), 0], [0, 1]]
    with pytest.raises(ValueError, match="not canonical"):
        G.bad_set_polynomials([(W, [1, 1]), (W, [2, 0])], 2)


# ------------------------------------------------------------------ claims with learners
@pytest.mark.slow
def test_injected_wrong_count_formula_fails(monkeypatch):
    """At small sizes (_SMALL, below): every measured count then differs from the formula."""
    needs_multi_head()
    from proofs_checks import p2_count
    assert not _count_failures(p2_count.CLAIM.run(dict(_SMALL)))
    monkeypatch.setattr(p2_count, "published_count", lambda d, H0: 4 * H0 * d * d - 2 * H0 + 2)
    verdict = p2_count.CLAIM.run(dict(_SMALL))
    assert not verdict.holds and _count_failures(verdict), verdict.details


def test_injected_wrong_single_head_formula_fails(monkeypatch):
    pytest.importorskip("exactattn.learners.p1.single_head")
    from proofs_checks import p1_t41
    monkeypatch.setattr(p1_t41, "published_queries", lambda d: d * d + d + 1)
    assert run_claim(get_claim("P1-T4.1")).status == "FAIL"


def test_p2_count_certificate_rejects_a_changed_count(quick_certificate):
    needs_multi_head()
    cert = quick_certificate("P2-count")
    verify_once(json.loads(json.dumps(cert)))
    count = next(c for c in cert["checks"] if c["kind"] == "count")
    count["queries"] += 1
    with pytest.raises(verify.Rejected, match="transcript of check"):
        verify.verify(json.loads(json.dumps(cert)))


# ------------------------------------------------------------------ CLI
def test_check_json_output_format(capsys, replayed_claims):
    code = main(["check", "P2-rational", "--quick", "--json", "--no-out"])
    rows = json.loads(capsys.readouterr().out)
    assert code == 0 and isinstance(rows, list) and len(rows) == 1
    row = rows[0]
    assert {"claim", "reference", "status"} <= set(row)
    assert row["claim"] == "P2-rational" and row["status"] == "ok" and row["certificate_verified"]


def test_check_unknown_claim_exits_2(capsys):
    assert main(["check", "P9-bogus"]) == 2
    err = capsys.readouterr().err
    assert "unknown claim" in err and len(err.strip().splitlines()) == 1


def test_check_table_has_one_line_per_claim(capsys, replayed_claims):
    needs_multi_head()
    assert main(["check", "P2-rational", "P1-P7.1", "--quick", "--no-out"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [ln.split() for ln in lines if ln.startswith(("ok ", "FAIL ", "partial "))]
    assert [r[:2] for r in rows] == [["ok", "P2-rational"], ["ok", "P1-P7.1"]]
    assert lines[-1].startswith("2/2 claims hold")


# ------------------------------------------------------------------ P2-count: checks that can fail
_SMALL = {"d": [1, 2], "H": [1], "d,H extra": [[6, 1]], "enumerated d,H0": [8, 2]}


def _count_failures(verdict):
    """The FAILED lines saying a measured count (of a run or of the Schedule object) is not
    the published one (at _SMALL the fit's own lines fail anyway: too few points)."""
    return [x for x in verdict.details if x.startswith("FAILED") and
            ("does not have the published count" in x or "queries (published" in x)]


@pytest.mark.slow
def test_p2_count_fails_for_a_learner_asking_one_extra_query_at_d6(monkeypatch):
    """Planted bug: the learner asks one query more than its schedule when d ≥ 6 (outside the
    old grid d ≤ 5): the run at d = 6 must make P2-count FAIL."""
    needs_multi_head()
    import exactattn.learners.multi_head as M
    from proofs_checks import p2_count
    real = M.learn_multi_head

    def planted(oracle, dim, *a, **kw):
        res = real(oracle, dim, *a, **kw)
        if dim >= 6:
            oracle([[1] * dim])
        return res
    monkeypatch.setattr(M, "learn_multi_head", planted)
    verdict = p2_count.CLAIM.run(dict(_SMALL))
    assert not verdict.holds
    assert any("FAILED" in x and "d=6" in x for x in verdict.details), verdict.details


@pytest.mark.slow
def test_p2_count_fails_when_the_schedule_object_asks_one_more_query_at_d7(monkeypatch):
    """Planted bug in the Schedule object beyond every learner run (d = 7): the enumeration of
    d ≤ 8 sees it."""
    needs_multi_head()
    import exactattn.learners.p2.schedule as S
    from proofs_checks import p2_count
    real = S.Schedule.queries

    def planted(self):
        yield from real(self)
        if self.d == 7:
            yield [list(self.X[0])]
    monkeypatch.setattr(S.Schedule, "queries", planted)
    verdict = p2_count.CLAIM.run(dict(_SMALL))
    assert any("FAILED" in x and "d=7 H0=1" in x for x in verdict.details), verdict.details


def test_p2_count_checker_rederives_the_enumeration_and_refuses_a_fit_that_cannot_fail(
        quick_certificate):
    needs_multi_head()
    from proofs_checks.checker import count as ccount
    cert = quick_certificate("P2-count")
    verify_once(json.loads(json.dumps(cert)))
    der = next(c for c in cert["checks"] if c["kind"] == "count-derivation")
    forged = json.loads(json.dumps(der))
    forged["enumerated"]["counts"][5 * 3 + 1][2] += 1        # d = 6, H0 = 2: one query more
    with pytest.raises(verify.Rejected, match="enumerated schedule 16"):
        ccount.check_count_derivation(forged, cert["checks"])
    forged = json.loads(json.dumps(der))
    forged["enumerated"]["counts"].pop()
    with pytest.raises(verify.Rejected, match="every d ≤ 40"):
        ccount.check_count_derivation(forged, cert["checks"])
    fit = next(c for c in cert["checks"] if c["kind"] == "count-fit" and c["quantity"] == "queries")
    assert len(fit["points"]) > 9
    exact = json.loads(json.dumps(fit))
    exact["points"] = [p for p in exact["points"] if p[0] <= 3]   # 9 points, 9 monomials
    assert len(exact["points"]) == 9
    with pytest.raises(verify.Rejected, match="cannot fail"):
        ccount.check_count_fit(exact, cert["checks"])


def test_p2_count_certificate_with_an_extra_query_at_d6_is_rejected(quick_certificate):
    needs_multi_head()
    cert = quick_certificate("P2-count")
    run = next(c for c in cert["checks"] if c["kind"] == "run" and c["dim"] == 6)
    run["transcript"].append(json.loads(json.dumps(run["transcript"][0])))
    with pytest.raises(verify.Rejected, match="rebuilt from the recorded vectors"):
        verify.verify(cert)

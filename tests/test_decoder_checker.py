"""The stdlib checker of causal runs and of the decoder claims (proofs_checks/checker/
run_causal.py, decoder.py): genuine certificates accepted, every planted defect rejected."""

import copy
import json
from fractions import Fraction as F

import pytest

from proofs_checks.checker import Rejected, verify
from proofs_checks.decoder_record import causal_certificate, learned


def _cert(d=2, H=2, **kw):
    result, model = learned(d, H, 3, **kw)
    return json.loads(json.dumps(causal_certificate(result, model)))


@pytest.fixture(scope="module")
def plain():
    return _cert()


@pytest.fixture(scope="module")
def slopes():
    return _cert(2, 2, slopes=[F(1, 2), F(1, 4)], residual=True)


@pytest.fixture(scope="module")
def shared():
    return _cert(2, 2, slopes=F(1, 3), residual=True)


def _rejected(cert, edit, match):
    bad = copy.deepcopy(cert)
    edit(bad["checks"][0])
    with pytest.raises(Rejected, match=match):
        verify(bad)


def test_genuine_certificates_are_accepted(plain, slopes, shared):
    for cert in (plain, slopes, shared):
        assert "run causal" in verify(copy.deepcopy(cert))[0]


def _bump(answer):
    num = answer["num"]
    num[0][1] = num[0][1] + "1" if "/" not in num[0][1] else "7"


@pytest.mark.parametrize("which", ["plain", "slopes", "shared"])
def test_a_changed_output_is_rejected(which, request):
    cert = request.getfixturevalue(which)
    _rejected(cert, lambda c: _bump(c["transcript"][1]["answer"][2]), "does not reproduce output")


def test_a_dropped_query_is_rejected(plain):
    _rejected(plain, lambda c: c["transcript"].pop(), "rebuilt")


def test_a_moved_query_is_rejected(plain):
    def edit(c):
        c["transcript"][0], c["transcript"][1] = c["transcript"][1], c["transcript"][0]
    _rejected(plain, edit, "not query 0")


def test_an_output_dropped_is_rejected(plain):
    _rejected(plain, lambda c: c["transcript"][0]["answer"].pop(), "outputs for")


def test_a_changed_slope_is_rejected(shared):
    def edit(c):
        for h in c["recovered"]["heads"]:
            h["slope"] = "1/5"
    _rejected(shared, edit, "not one of the known slopes")


def test_a_changed_known_slope_is_rejected(shared):
    def edit(c):
        c["params"]["slopes"] = ["1/5"]
        for h in c["recovered"]["heads"] + c["model"]["heads"]:
            h["slope"] = "1/5"
    _rejected(shared, edit, "does not reproduce output")


def test_residual_without_the_flag_is_rejected(shared):
    def edit(c):
        c["params"]["residual"] = False
    _rejected(shared, edit, "residual")


def test_a_changed_residual_is_rejected(shared):
    def edit(c):
        c["recovered"]["residual"][0] = "100"
    _rejected(shared, edit, "true model")


def test_a_true_model_that_differs_is_rejected(plain):
    def edit(c):
        c["model"]["heads"][0]["v"][0] = "99"
    _rejected(plain, edit, "canonical form of the true model")


def test_a_repeated_head_is_rejected(plain):
    def edit(c):
        c["recovered"]["heads"].append(copy.deepcopy(c["recovered"]["heads"][0]))
    _rejected(plain, edit, "not canonical|at most")


def test_an_unknown_mode_is_rejected(plain):
    _rejected(plain, lambda c: c["params"].update(mode="bidirectional"), "unknown mode")


def test_distinct_mode_needs_distinct_slopes(slopes):
    _rejected(slopes, lambda c: c["params"].update(slopes=["1/2", "1/2"]), "distinct slopes")


def test_dependent_slopes_fail_the_genericity_check():
    from proofs_checks.checker.run_causal import genericity
    U, X = [[1, 0], [0, 1]], [[1, 2], [3, 5]]
    heads = [(((F(1), F(0)), (F(0), F(1))), (F(1), F(1)))] * 3
    with pytest.raises(Rejected, match="same sum"):
        genericity(U, X, 3, "slopes", [F(1, 4), F(1, 2), F(3, 4)], heads)
    with pytest.raises(Rejected, match="invisible"):
        genericity(U, X, 1, "slopes", [F(1, 2)], [(heads[0][0], (F(0), F(1)))])


def test_a_non_generic_draw_is_rejected(plain):
    """Both rows of U equal: det U = 0 (the schedule rebuilt from it is then recorded too)."""
    from proofs_checks.checker.run_causal import genericity
    with pytest.raises(Rejected, match="not generic"):
        genericity([[1, 1], [1, 1]], [[1, 0], [0, 1]], 1, "copy-count", [],
                   [(((F(1), F(0)), (F(0), F(1))), (F(1), F(2)))])


# ------------------------------------------------------------------ the claims' kinds
@pytest.fixture(scope="module")
def count_cert():
    from proofs_checks.registry import get_claim, run_claim
    out = run_claim(get_claim("causal-count"), quick=True)
    assert out.status == "ok"
    return json.loads(json.dumps(out.verdict.certificate))


def _claim_rejected(cert, k, edit, match):
    bad = copy.deepcopy(cert)
    edit(bad["checks"][k])
    with pytest.raises(Rejected, match=match):
        verify(bad)


def _index(cert, kind):
    return next(k for k, c in enumerate(cert["checks"]) if c["kind"] == kind)


def test_claim_certificate_accepted(count_cert):
    assert len(verify(copy.deepcopy(count_cert))) == len(count_cert["checks"])


@pytest.mark.parametrize("field, value, match", [
    ("queries", 6, "formula gives"), ("max_length", 4, "formula gives"),
    ("outputs", 1, "queries × length"), ("p2_queries", 14, "P2's count"),
])
def test_a_misstated_count_is_rejected(count_cert, field, value, match):
    k = _index(count_cert, "causal-count")
    _claim_rejected(count_cert, k, lambda c: c.update({field: value}), match)


def test_a_count_of_another_run_is_rejected(count_cert):
    k = _index(count_cert, "causal-count")
    def edit(c):
        H = c["H0"]
        c.update(d=3, queries=17, outputs=17 * c["max_length"], p2_queries=36 * H - 2 * H + 1)
    _claim_rejected(count_cert, k, edit, "not a causal run")


def test_twin_with_a_changed_output_is_rejected(count_cert):
    k = _index(count_cert, "causal-twin")
    _claim_rejected(count_cert, k, lambda c: _bump(c["transcript"][0]["answer"][3]),
                    "does not give output")


def test_twin_that_is_the_same_model_is_rejected(count_cert):
    k = _index(count_cert, "causal-twin")
    _claim_rejected(count_cert, k, lambda c: c.update(second=copy.deepcopy(c["first"])),
                    "the same model")


def test_twin_whose_distinguishing_query_does_not_distinguish_is_rejected(count_cert):
    k = _index(count_cert, "causal-twin")
    _claim_rejected(count_cert, k,
                    lambda c: c.update(distinguishing=[c["transcript"][0]["tokens"][0]]),
                    "agree on the distinguishing")


def test_claim_params_must_cover_the_grid(count_cert):
    bad = copy.deepcopy(count_cert)
    k = max(i for i, c in enumerate(bad["checks"]) if c["kind"] == "causal-count")
    del bad["checks"][k]
    with pytest.raises(Rejected, match="count k does not refer"):
        verify(bad)


def test_the_count_recounts_its_runs_transcript(count_cert):
    """Called on its own (the run's own check would reject first inside a certificate)."""
    from proofs_checks.checker.decoder import check_causal_count
    checks = copy.deepcopy(count_cert["checks"])
    k = _index(count_cert, "causal-count")
    run = checks[checks[k]["run"]]
    run["transcript"].pop()
    with pytest.raises(Rejected, match="not .* queries of length"):
        check_causal_count(checks[k], checks)


def test_residue_run_accepted_and_shared_residues_rejected():
    from proofs_checks.checker.run_causal import _residue_genericity
    cert = json.loads(json.dumps(causal_certificate(*learned(3, 2, 3, matching="residue"))))
    assert "residue" in verify(cert)[0]
    U, X = [[1, 0], [0, 1]], [[1, 2], [3, 5]]
    same_v = [(((F(1), F(0)), (F(0), F(1))), (F(1), F(2))),
              (((F(0), F(1)), (F(-1), F(0))), (F(1), F(2)))]
    with pytest.raises(Rejected, match="share a residue"):
        _residue_genericity(U, X, 2, same_v)


# ------------------------------------------------------------------ Theorem A for decoders
@pytest.fixture(scope="module")
def design_cert():
    from exactattn.learners.decoder.design import certify_causal
    from exactattn.models.decoder import random_causal
    from exactattn.oracles.oracle import Oracle
    m = random_causal(2, 1, seed=2)
    c = certify_causal(Oracle(m), m, 2)
    assert c.holds and c.queries == 2 + (3 - 1) * 3 + 2 and c.max_length == 3
    return json.loads(json.dumps(c.certificate()))


def _design_rejected(cert, edit, match):
    bad = copy.deepcopy(cert)
    edit(bad["checks"][0])
    with pytest.raises(Rejected, match=match):
        verify(bad)


def test_causal_design_accepted(design_cert):
    assert "causal design d=2 H=1 H0=2" in verify(copy.deepcopy(design_cert))[0]


def test_causal_design_one_family_short_is_rejected(design_cert):
    def edit(c):
        c["points"].pop()
        c["answers"].pop()
    _design_rejected(design_cert, edit, "Theorem A needs n >")


def test_causal_design_repeated_point_is_rejected(design_cert):
    def edit(c):
        c["points"][-1] = c["points"][0]
    _design_rejected(design_cert, edit, "repeated point")


def test_causal_design_changed_output_is_rejected(design_cert):
    _design_rejected(design_cert, lambda c: _bump(c["answers"][3][1]), "does not give output")


def test_causal_design_queries_too_short_are_rejected(design_cert):
    """Causal outputs of a prefix are the prefix's: the truncated record is consistent, and
    only the length rule (L positions per family) rejects it."""
    def edit(c):
        c["length"] -= 1
        c["answers"] = [a if len(a) == 1 else a[:-1] for a in c["answers"]]
    _design_rejected(design_cert, edit, "needs 3")


def test_causal_design_with_distinct_slopes_is_rejected(design_cert):
    bad = copy.deepcopy(design_cert)
    h = copy.deepcopy(bad["checks"][0]["model"]["heads"][0])
    h["slope"], h["W"][0][0] = "1/2", "9"
    bad["checks"][0]["model"]["heads"].append(h)
    bad["params"]["H"] = 2
    with pytest.raises(Rejected, match="one shared slope"):
        verify(bad)


def test_certify_causal_names_a_wrong_model():
    from exactattn.learners.decoder.design import certify_causal
    from exactattn.models.decoder import random_causal
    from exactattn.oracles.oracle import Oracle
    c = certify_causal(Oracle(random_causal(2, 2, seed=5)), random_causal(2, 2, seed=2))
    assert not c.holds and c.mismatch is not None and "not the oracle" in c.proves
    with pytest.raises(ValueError):
        c.certificate()


def test_an_extra_record_in_a_decoder_claim_is_rejected(count_cert):
    bad = copy.deepcopy(count_cert)
    bad["checks"].append(copy.deepcopy(bad["checks"][_index(bad, "causal-twin")]))
    with pytest.raises(Rejected, match="one causal twin|record"):
        verify(bad)


def test_a_causal_design_certificate_the_checker_could_not_read_is_not_written(monkeypatch,
                                                                               tmp_path):
    """Above the checker's file size the certificate is refused with the size named and no
    file written (as for encoders); below it the written file verifies."""
    from exactattn.learners.decoder.design import certify_causal
    from exactattn.models.decoder import random_causal
    from exactattn.oracles.oracle import Oracle
    from proofs_checks.checker import parse
    m = random_causal(2, 1, seed=2)
    c = certify_causal(Oracle(m), m, 2)
    c.write_certificate(tmp_path / "ok.json")
    verify(json.loads((tmp_path / "ok.json").read_text()))
    monkeypatch.setattr(parse, "MAX_BYTES", 1000)
    with pytest.raises(ValueError, match="bytes, above the 1,000 the checker reads"):
        c.write_certificate(tmp_path / "c.json")
    assert not (tmp_path / "c.json").exists()

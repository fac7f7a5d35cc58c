"""The forgery corpus: every false certificate the hostile audit built, each kept as a small
generator that builds it from a genuine certificate (`exactattn check CLAIM --quick`, shared by
the session: tests/conftest.py) and asserts its rejection with its own message; the genuine
certificate is accepted.  Then one planted violation per rule of every claim's table of
records (proofs_checks/checker/claims.py, ``RECORDS``): a record dropped, duplicated, or
replaced by a record of a kind its claim does not have."""

import copy
import json
from fractions import Fraction

import pytest

from conftest import verify_once
from proofs_checks.checker import Rejected, verify
from proofs_checks.checker.claims import CLAIMS, RECORDS, USER_CLAIMS, check_records
from proofs_checks.checker.parse import fmt


def rejected(cert, match):
    with pytest.raises(Rejected, match=match):
        verify(cert)


def _of(cert, kind):
    return [c for c in cert["checks"] if c["kind"] == kind]


def split(model):
    """The same function written as more heads: head 0 split into two with the same W and v in
    halves (a non-canonical parameterisation with one more raw head)."""
    W, v = model[0]["W"], model[0]["v"]
    half = [fmt(Fraction(x) / 2) for x in v]
    return [{"W": W, "v": half}, {"W": copy.deepcopy(W), "v": list(half)}] + model[1:]


# ---------------------------------------------------------------------- P2-unique
def _lemma_index(cert):
    return len(cert["params"]["d,H,H0"])


def test_p2_unique_twin_replaced_by_a_split_one_head_record_is_rejected(quick_certificate):
    """The lemma's two-head twin replaced by the one-head record whose true model is written
    as its head split in two: no twin left, yet two raw heads."""
    cert = quick_certificate("P2-unique")
    verify_once(copy.deepcopy(cert))
    k = _lemma_index(cert)
    forged = copy.deepcopy(cert["checks"][k])
    forged["truth"] = split(forged["truth"])
    cert["checks"][k + 1] = forged
    rejected(cert, r"each with a true model of exactly H canonical heads")


def test_p2_unique_grid_point_covered_by_a_split_one_head_record_is_rejected(quick_certificate):
    """Grid point (2, 2, 3) covered by a genuine one-head record (d = 2, H0 = 3, certified
    unique) whose true model is written as its head split in two."""
    from exactattn.models.attention import MultiHeadAttention, random_head
    from proofs_checks.p2_unique import _record, _unique_run
    cert = quick_certificate("P2-unique")
    point = cert["params"]["d,H,H0"].index([2, 2, 3])
    one = MultiHeadAttention([random_head(2, seed=5)])
    record = json.loads(json.dumps(_record(_unique_run(one, 2, 3, seed=5), one)))
    record["truth"] = split(record["truth"])
    cert["checks"][point] = record
    rejected(cert, r"each with a true model of exactly H canonical heads")


# ---------------------------------------------------------------------- P1-P7.1, P2-canonical
def test_p1_p71_recovered_entry_reparameterised_is_rejected(quick_certificate):
    """"recovered from C" written as another parameterisation of the same function: not what
    the run recovered (a learner returns canonical heads)."""
    cert = quick_certificate("P1-P7.1")
    verify_once(copy.deepcopy(cert))
    models = _of(cert, "same-function")[0]["models"]
    models["recovered from C"] = split(models["recovered from C"])
    rejected(cert, r"'recovered from C' is not canonical")


def test_p1_p71_recovered_entry_missing_is_rejected(quick_certificate):
    cert = quick_certificate("P1-P7.1")
    del _of(cert, "same-function")[0]["models"]["recovered from B"]
    rejected(cert, r"the recovered models are not recovered from A, recovered from B")


def test_p1_p71_recovered_entry_not_its_runs_is_rejected(quick_certificate):
    """A canonical recovered entry that is not the heads its run recovered (the run's recovered
    heads changed to another head; the entry keeps the true form)."""
    from proofs_checks.checker.claims import _recovered_are_the_runs
    cert = quick_certificate("P1-P7.1")
    sf, runs = _of(cert, "same-function")[0], _of(cert, "run")
    runs[2]["recovered"] = [{"W": [["1", "0"], ["0", "1"]], "v": ["1", "1"]}]
    with pytest.raises(Rejected, match=r"'recovered from C' is not the heads its run recovered"):
        _recovered_are_the_runs(sf, runs, [f"recovered from {k}" for k in "ABC"])


def test_p2_canonical_recovered_entry_reparameterised_is_rejected(quick_certificate):
    cert = quick_certificate("P2-canonical")
    verify_once(copy.deepcopy(cert))
    models = _of(cert, "same-function")[0]["models"]
    models["recovered H0=5"] = split(models["recovered H0=5"])
    rejected(cert, r"'recovered H0=5' is not canonical")


# ---------------------------------------------------------------------- P2-count's count fits
def test_p2_count_fit_dropped_is_rejected(quick_certificate):
    cert = quick_certificate("P2-count")
    verify_once(copy.deepcopy(cert))
    cert["checks"].remove(_of(cert, "count-fit")[1])
    rejected(cert, r"the count fits are not one of the queries, then one of the lengths")


def test_p2_count_fit_duplicated_is_rejected(quick_certificate):
    cert = quick_certificate("P2-count")
    cert["checks"].append(copy.deepcopy(_of(cert, "count-fit")[1]))
    rejected(cert, r"the count fits are not one of the queries, then one of the lengths")


def test_p2_count_fit_replaced_by_the_other_is_rejected(quick_certificate):
    cert = quick_certificate("P2-count")
    fits = _of(cert, "count-fit")
    cert["checks"][cert["checks"].index(fits[1])] = copy.deepcopy(fits[0])
    rejected(cert, r"the count fits are not one of the queries, then one of the lengths")


def test_p2_count_fit_over_fewer_points_is_rejected(quick_certificate):
    """A fit over a subset of the measured points (still over-determined, still true)."""
    cert = quick_certificate("P2-count")
    fit = _of(cert, "count-fit")[0]
    fit["points"] = fit["points"][1:]
    rejected(cert, r"the queries fit's points are not each measured \(d, H0\) of the grid "
                   r"exactly once")


# ---------------------------------------------------------------------- the tables of records
def test_every_claim_has_a_table_of_records():
    assert set(CLAIMS) <= set(RECORDS)


def test_the_census_names_a_missing_and_a_surplus_record():
    table = {"c": lambda p: {"run": 2, "count": 1}}
    checks = [{"kind": "run"}, {"kind": "run"}, {"kind": "count"}]
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(RECORDS, "c", table["c"])
        check_records("c", {}, checks)
        with pytest.raises(Rejected, match=r"records: 1 run record\(s\), but the sizes imply "
                                           r"exactly 2"):
            check_records("c", {}, checks[1:])
        with pytest.raises(Rejected, match=r"records: 1 floor record\(s\), but the sizes imply "
                                           r"exactly 0"):
            check_records("c", {}, checks + [{"kind": "floor"}])


#: the claims whose certificates `exactattn check --quick` writes
QUICK = [c for c in CLAIMS if c not in USER_CLAIMS]


def _rules():
    """(claim, kind) for every row of every claim's table at its quick sizes."""
    from proofs_checks.checker.claims import SIZES
    return [(cid, kind) for cid in QUICK for kind in RECORDS[cid](SIZES[cid]["quick"])]


@pytest.mark.parametrize("cid,kind", _rules())
def test_each_rule_of_a_table_is_enforced(quick_certificate, cid, kind):
    """Each (claim, kind) rule: its last record dropped, or duplicated, is rejected."""
    cert = quick_certificate(cid)
    verify_once(copy.deepcopy(cert))
    last = max(i for i, c in enumerate(cert["checks"]) if c["kind"] == kind)
    dropped = copy.deepcopy(cert)
    del dropped["checks"][last]
    duplicated = copy.deepcopy(cert)
    duplicated["checks"].append(copy.deepcopy(cert["checks"][last]))
    for forged in (dropped, duplicated):
        if forged["checks"]:
            with pytest.raises(Rejected, match=rf"^{cid}: "):
                verify(forged)


def _foreign(quick_certificate, cid):
    """A genuine, self-contained record of a kind `cid`'s table does not list: P2-count's count
    derivation (P2-rational's first determinant for P2-count itself)."""
    if cid == "P2-count":
        return _of(quick_certificate("P2-rational"), "determinant")[0]
    return _of(quick_certificate("P2-count"), "count-derivation")[0]


@pytest.mark.parametrize("cid", QUICK)
def test_a_genuine_record_of_another_kind_is_rejected(quick_certificate, cid):
    """A record that passes its own check, of a kind its claim's table does not list, added."""
    cert = quick_certificate(cid)
    cert["checks"].append(_foreign(quick_certificate, cid))
    rejected(cert, rf"^{cid}: (params|records): ")


def test_evidence_smuggled_into_a_claim_is_named_by_the_table(quick_certificate):
    """P2-nonunique's own rules look at its lemma and its run only: the table names the rest."""
    cert = quick_certificate("P2-nonunique")
    verify_once(copy.deepcopy(cert))
    cert["checks"].append(_foreign(quick_certificate, "P2-nonunique"))
    rejected(cert, r"records: 1 count-derivation record\(s\), but the sizes imply exactly 0")


def test_a_copy_count_model_must_be_canonical(quick_certificate):
    cert = quick_certificate("P2-rational")
    verify_once(copy.deepcopy(cert))
    record = _of(cert, "copy-count")[1]
    record["model"] = split(record["model"])
    rejected(cert, r"copy-count: the model is not canonical")

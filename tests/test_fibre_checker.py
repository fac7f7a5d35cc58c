"""The stdlib checker of ``fibre`` records (claim ``unique``; beyond P2, answer fibres;
docs/design.md §11): certificates of runs made the one model of their answer fibre
(:func:`~exactattn.learners.p2.unique.with_fibre`) are accepted, and every
forgery — of the tree, a witness, a piece, the transcript, a family function or the verdict —
is rejected."""

import copy
import json
import random
from fractions import Fraction

import pytest

from exactattn import Oracle, learn_multi_head
from exactattn.learners.p2.unique import with_fibre
from exactattn.models.attention import random_multi_head
from proofs_checks.certificates import heads_json
from proofs_checks.checker import Rejected, verify
from proofs_checks.checker.claims import CLAIMS
from proofs_checks.common import run_certificate
from proofs_checks.fibre_record import UNIQUE_STATEMENT

CASES = [(2, 1, 2), (1, 1, 3), (2, 2, 3)]


@pytest.fixture(scope="module")
def certs():
    """(d, H, H0) → (certificate as JSON data, true model), cached for the module."""
    out = {}
    for d, H, H0 in CASES:
        model = random_multi_head(d, H, seed=1, kind="rational")
        orc = Oracle(model)
        res = with_fibre(learn_multi_head(orc, d, heads_bound=H0, seed=1, validate=0), orc,
                         random.Random(1))
        out[(d, H, H0)] = (json.loads(json.dumps(run_certificate(res, model))), model)
    return out


@pytest.fixture(scope="module")
def twin():
    """The non-uniqueness lemma's draw (d = 2, H0 = 2, seed 3, box 1000): the learner with
    --certify-unique on the two-head twin returns the twin; and the one-head model."""
    from exactattn.learners.p2.recovery import draw_bases
    from exactattn.models.attention import MultiHeadAttention
    from proofs_checks.p2_nonunique import random_head, two_head_twin
    head = random_head(2, seed=3)
    U, X = draw_bases(3, 2, 1000)
    two = two_head_twin(head.W, head.v, U, X)
    orc = Oracle(two)
    res = with_fibre(learn_multi_head(orc, 2, heads_bound=2, seed=3, box=1000, validate=0), orc,
                     random.Random(3))
    return json.loads(json.dumps(run_certificate(res))), MultiHeadAttention([head]), two


def forged(certs, case=(2, 1, 2)):
    cert = copy.deepcopy(certs[case][0])
    return cert, cert["checks"][0]


def nodes(rec):
    """(children list, index, child, depth) of every non-root node, depth-first."""
    stack = [(root, 0) for root in rec["tree"]]
    while stack:
        node, depth = stack.pop()
        for k, ch in enumerate(node.get("children", [])):
            yield node["children"], k, ch, depth + 1
            stack.append((ch, depth + 1))


def first(rec, pred):
    return next((kids, k, ch) for kids, k, ch, _ in nodes(rec) if pred(ch))


def rejected(cert, match):
    with pytest.raises(Rejected, match=match):
        verify(cert)


# ---------------------------------------------------------------------- accepted
@pytest.mark.parametrize("case", CASES)
def test_certificates_are_accepted(certs, case):
    cert, _ = certs[case]
    assert cert["claim"] == "unique" and CLAIMS["unique"][1] == UNIQUE_STATEMENT
    (line,) = verify(cert)
    d, _, H0 = case
    assert line.startswith(f"fibre d={d} H0={H0}:") and "final fibre 1 point" in line
    assert "no genericity theorem used" in line


def test_finding_counts_the_p2_fibre_and_the_extra_family(certs):
    (line,) = verify(certs[(2, 1, 2)][0])
    assert "33 queries = the P2 schedule rebuilt + 1 extra family" in line
    assert "8 family functions" in line and "P2 fibre at most 17 pieces" in line


def test_truth_is_checked_against_the_model(certs):
    cert, rec = forged(certs, (2, 2, 3))
    model = certs[(2, 2, 3)][1]
    rec["truth"] = heads_json(model.heads)
    assert "true model" in verify(cert)[0]
    rec["truth"] = heads_json(model.heads[:1])
    rejected(cert, "canonical form of the true model")


# ---------------------------------------------------------------------- the tree
def test_deleted_branch_is_rejected(certs):
    cert, rec = forged(certs)
    _, _, node = first(rec, lambda ch: len(ch.get("children", ())) >= 2
                       and "closed" in ch["children"][-1])
    del node["children"][-1]              # a closed branch: nothing else notices it is gone
    rejected(cert, "children but")


def test_extra_branch_is_rejected(certs):
    cert, rec = forged(certs)
    kids, k, ch = first(rec, lambda ch: "closed" in ch)
    kids.append(copy.deepcopy(ch))
    rejected(cert, "children but")


def test_swapped_children_are_rejected(certs):
    cert, rec = forged(certs)
    _, _, node = first(rec, lambda ch: len(ch.get("children", ())) >= 2)
    node["children"][0], node["children"][1] = node["children"][1], node["children"][0]
    rejected(cert, "labels are not labelling")


def test_witness_reading_zero_is_rejected(certs):
    for how in ("empty", "zeroed"):
        cert, rec = forged(certs)
        _, _, ch = first(rec, lambda ch: "system" in ch.get("closed", {}))
        lam = ch["closed"]["combination"]
        ch["closed"]["combination"] = {} if how == "empty" else {e: "0" for e in lam}
        rejected(cert, "0 = 0" if how == "empty" else "a witness term with coefficient 0")


def test_witness_with_a_left_side_is_rejected(certs):
    cert, rec = forged(certs)
    _, _, ch = first(rec, lambda ch: "system" in ch.get("closed", {})
                     and len(ch["closed"]["combination"]) >= 2)
    lam = ch["closed"]["combination"]
    e = next(iter(lam))
    lam[e] = str(2 * Fraction(lam[e]))
    rejected(cert, "not identically 0")


def test_ne_witness_with_a_wrong_component_is_rejected(certs):
    cert, rec = forged(certs)
    _, _, ch = first(rec, lambda ch: "ne" in ch.get("closed", {}))
    lam = ch["closed"]["combinations"][-1]
    e = next(iter(lam))
    lam[e] = str(-Fraction(lam[e]))
    rejected(cert, "does not force")


def test_dominated_with_a_wrong_by_is_rejected(certs):
    cert, rec = forged(certs)
    _, _, ch = first(rec, lambda ch: "dominated" in ch)
    ch["dominated"]["by"] = list(ch["labels"])
    rejected(cert, "'by' is not the sibling")


def test_dominated_head_not_at_a_shared_pole_is_rejected(certs):
    cert, rec = forged(certs, (2, 2, 3))
    _, _, ch = first(rec, lambda ch: "dominated" in ch and
                     any(ch["labels"].count(x) == 1 for x in ch["labels"]))
    E = ch["labels"]
    ch["dominated"]["head"] = next(h for h, x in enumerate(E) if E.count(x) == 1)
    rejected(cert, "not at a shared pole")


def test_dominated_combination_must_force_the_residue(certs):
    cert, rec = forged(certs)
    _, _, ch = first(rec, lambda ch: "dominated" in ch)
    ch["dominated"]["combination"] = {}
    rejected(cert, "is not a·r_")


def test_order_must_be_a_permutation(certs):
    cert, rec = forged(certs)
    rec["order"][0] = rec["order"][1]
    rejected(cert, "not a permutation")


# ---------------------------------------------------------------------- pieces, data, verdict
def test_piece_off_its_equations_is_rejected(certs):
    cert, rec = forged(certs)
    S = rec["pieces"][0]["S"][0][0]
    S[0] = str(Fraction(S[0]) + 1)
    rejected(cert, "does not satisfy the piece's equations")


def test_changed_answer_is_rejected(certs):
    cert, rec = forged(certs)
    term = rec["transcript"][3]["answer"]["num"][-1]
    term[1] = str(Fraction(term[1]) + 1)
    rejected(cert, r"G\(\d\) ≠ the answer")


def test_changed_extra_family_is_rejected(certs):
    for key in ("a", "b"):
        cert, rec = forged(certs)
        vec = rec["extra"][0][key]
        vec[0] = str(Fraction(vec[0]) + 1)
        rejected(cert, "is not query")


def test_changed_function_is_rejected(certs):
    for what in ("K", "sigma", "c"):
        cert, rec = forged(certs)
        f = rec["functions"][1]
        if what == "K":
            f["K"] = str(Fraction(f["K"]) + 1)
        else:
            k = 0 if what == "sigma" else 1
            f["poles"][0][k] = str(Fraction(f["poles"][0][k]) + 1)
        rejected(cert, r"G\(\d\) ≠ the answer")


def test_changed_model_is_rejected(certs):
    cert, rec = forged(certs)
    rec["model"][0]["v"][0] = str(Fraction(rec["model"][0]["v"][0]) + 1)
    rejected(cert, "a piece is not the recorded model")


def test_forged_sizes_are_rejected(certs):
    cert, rec = forged(certs)
    rec["H0"] = 7
    rejected(cert, "H0: 7 > 6")
    cert, rec = forged(certs)
    rec["extra"] = rec["extra"] * 17
    rejected(cert, "extra: 17 entries")


def test_no_model_is_not_a_uniqueness_certificate(certs):
    from proofs_checks.checker.fibre import check_fibre
    cert, rec = forged(certs)
    rec["model"] = None
    assert "not certified unique" in check_fibre(rec)
    rejected(cert, "with the model it certifies unique")


def test_twin_certificate_accepted_and_the_one_head_model_rejected(twin):
    cert, one, two = twin
    rec = cert["checks"][0]
    assert len(rec["model"]) == 2 and "final fibre 1 point" in verify(cert)[0]
    rec["model"] = heads_json(one.heads)
    rejected(cert, "a piece is not the recorded model")

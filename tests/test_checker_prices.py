"""The priced checker (docs/evidence.md §7): before a super-linear step of the fibre checker —
recombining a witness, re-solving the pieces — the cost is estimated from sizes already read
and refused above its stated allowance; a witness uses at most the unknowns + 1 equations and
no zero coefficient; and the checker refuses a FIFO or a device in one line, as the CLI does."""

import copy
import json
import os
import random

import pytest

import proofs_checks.checker.fibre as fibre
from exactattn import Oracle, learn_multi_head
from exactattn.learners.p2.unique import with_fibre
from exactattn.models.attention import random_multi_head
from proofs_checks.checker import Rejected, verify
from proofs_checks.checker.verify import main
from proofs_checks.common import run_certificate


@pytest.fixture(scope="module")
def cert():
    """A genuine fibre certificate at (d, H, H0) = (2, 1, 2) (the answer fibre shrunk to one
    model, :func:`~exactattn.learners.p2.unique.with_fibre`)."""
    model = random_multi_head(2, 1, seed=1, kind="rational")
    orc = Oracle(model)
    res = with_fibre(learn_multi_head(orc, 2, heads_bound=2, seed=1, validate=0), orc,
                     random.Random(1))
    return json.loads(json.dumps(run_certificate(res, model)))


def _witnesses(node, out):
    """Every combination {index: λ} of a tree, in walk order."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "combination":
                out.append(value)
            elif key == "combinations":
                out.extend(value)
            else:
                _witnesses(value, out)
    elif isinstance(node, list):
        for x in node:
            _witnesses(x, out)
    return out


def _closed_by_0_eq_c(rec):
    """The first closing witness {system, combination} of the record's tree."""
    stack = list(rec["tree"])
    while stack:
        node = stack.pop(0)
        why = node.get("closed")
        if isinstance(why, dict) and "system" in why:
            return why
        stack.extend(node.get("children", []))
    raise AssertionError("no 0 = c witness")


def test_the_genuine_certificate_is_accepted(cert):
    assert verify(copy.deepcopy(cert))


def test_a_witness_with_more_terms_than_unknowns_is_refused(cert):
    forged = copy.deepcopy(cert)
    why = _closed_by_0_eq_c(forged["checks"][0])
    why["combination"].update({str(k): "1" for k in range(40)})
    with pytest.raises(Rejected, match=r"terms for \d+ unknowns \(a witness needs at most \d+\)"):
        verify(forged)


def test_a_witness_term_with_coefficient_0_is_refused(cert):
    forged = copy.deepcopy(cert)
    why = _closed_by_0_eq_c(forged["checks"][0])
    why["combination"][next(iter(why["combination"]))] = "0"
    with pytest.raises(Rejected, match=r"a witness term with coefficient 0"):
        verify(forged)


def test_a_witness_of_huge_coefficients_is_refused_before_it_is_summed(cert, monkeypatch):
    """Coefficients of 3,999 characters: priced at their digits before any sum; the allowance
    of the first nodes is spent at once."""
    forged = copy.deepcopy(cert)
    why = _closed_by_0_eq_c(forged["checks"][0])
    huge = "1" + "0" * 1998 + "1/" + "7" * 1999
    why["combination"] = {k: huge for k in why["combination"]}
    monkeypatch.setattr(fibre, "WITNESS_BASE", 0)
    monkeypatch.setattr(fibre, "WITNESS_PER_NODE", 10)
    with pytest.raises(Rejected, match=r"recombining the witnesses would cost [\d,]+ \(equation "
                                       r"terms × digit weight\) after \d+ nodes, over the"):
        verify(forged)


def test_the_genuine_witnesses_cost_a_fraction_of_their_allowance(cert, monkeypatch):
    """The allowance can bind: at a tenth of a node's allowance the genuine record is still
    accepted (it spends under 10 a node), at none it is refused."""
    monkeypatch.setattr(fibre, "WITNESS_BASE", 0)
    monkeypatch.setattr(fibre, "WITNESS_PER_NODE", fibre.WITNESS_PER_NODE // 10)
    verify(copy.deepcopy(cert))
    monkeypatch.setattr(fibre, "WITNESS_PER_NODE", 0)
    with pytest.raises(Rejected, match=r"recombining the witnesses would cost"):
        verify(copy.deepcopy(cert))


def test_re_solving_the_pieces_is_priced(cert, monkeypatch):
    monkeypatch.setattr(fibre, "ELIMINATION_BASE", 0)
    monkeypatch.setattr(fibre, "ELIMINATION_PER_NODE", 0)
    with pytest.raises(Rejected, match=r"fibre.pieces\[0\]: re-solving the pieces would cost "
                                       r"[\d,]+ row operations after \d+ nodes, over the 0 "
                                       r"allowed, refused"):
        verify(copy.deepcopy(cert))


def test_the_checker_refuses_a_fifo_and_a_device_in_one_line(tmp_path, capsys):
    fifo = tmp_path / "cert.json"
    os.mkfifo(fifo)
    assert main([str(fifo), "/dev/zero"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"{path}: cannot read (not a regular file: a FIFO, device or directory; "
                   f"give a certificate file)" for path in (fifo, "/dev/zero")]

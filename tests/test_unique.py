"""Answer fibres and certified uniqueness (beyond P2; docs/design.md §11, §12): the fibre holds
every model that gives the answers (and only such models); certify_unique returns the oracle
itself — the lemma's twin included, found by the fibre search when the design shows the
learned model is not the oracle — and refuses what it cannot do."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

import exactattn as ea
from exactattn.errors import LearningFailure
from exactattn.learners.p2.recovery import draw_bases
from exactattn.learners.p2.schedule import Schedule
from exactattn.learners.p2.unique import NotUnique, model_of, with_fibre
from exactattn.models.attention import AttentionHead, MultiHeadAttention, random_head
from proofs_checks.p2_nonunique import two_head_twin
from proofs_checks.p2_unique import p2_fibre

D, H0, SEED, BOX = 2, 2, 3, 1000          # the lemma's draw (claim P2-nonunique)


@pytest.fixture(scope="module")
def lemma():
    head = random_head(D, seed=SEED)
    one = MultiHeadAttention([head])
    U, X = draw_bases(SEED, D, BOX)
    return one, two_head_twin(head.W, head.v, U, X)


def _learn(model, **kw):
    return ea.learn_multi_head(ea.Oracle(model), D, heads_bound=H0, seed=SEED, box=BOX,
                               validate=0, **kw)


def test_the_twin_oracle_is_returned_exactly_and_the_one_head_oracle_too(lemma):
    one, two = lemma
    plain = _learn(two)
    assert plain.model.head_set() == one.head_set()          # the silent wrong model
    r2, r1 = _learn(two, certify_unique=True), _learn(one, certify_unique=True)
    assert r2.model.head_set() == two.head_set() and len(r2.heads) == 2
    assert r1.model.head_set() == one.head_set()
    assert all(q1 == q2 and a1 == a2                        # the same schedule answers
               for (q1, a1), (q2, a2) in zip(r1.transcript, r2.transcript))
    assert r2.unique_queries > 0 and r2.queries == plain.queries
    assert any("did not fix the model" in n for n in r2.notes)
    assert "no genericity theorem" in r2.proves and "Theorem A" in r2.proves
    assert r2.uniqueness.holds and r1.uniqueness.holds          # each certified by the design


def test_every_piece_of_the_p2_fibre_reproduces_every_schedule_answer(lemma):
    """Soundness of the search: a piece's representative, as a model, gives the transcript's
    answers exactly (at the lemma's draw the P2 fibre holds 17 pieces, the twin among them)."""
    one, _ = lemma
    res = _learn(one)
    u = p2_fibre(res)
    U, X = res.extra["U"], res.extra["X"]
    assert len(u.fibre.pieces) > 1
    for piece in u.fibre.pieces:
        S, r = piece.representative()
        model = MultiHeadAttention([AttentionHead(W, v) for W, v in model_of(S, r, U, X)])
        for q, a in res.transcript:
            assert model(list(map(list, q)), "exact") == a


def test_a_model_outside_the_p2_fibre_does_not_reproduce_the_answers(lemma):
    """Completeness seen from the other side: the twin is in the fibre (it reproduces every
    answer), a perturbed twin is not (it fails an answer)."""
    one, two = lemma
    res = _learn(one)
    W, v = two.heads[0].W, two.heads[0].v
    bent = MultiHeadAttention([AttentionHead([[W[0][0] + 1, W[0][1]], W[1]], v), two.heads[1]])
    assert all(two(list(map(list, q)), "exact") == a for q, a in res.transcript)
    assert not all(bent(list(map(list, q)), "exact") == a for q, a in res.transcript)


def test_at_h0_equal_h_a_generic_draw_needs_no_extra_query():
    model = ea.random_multi_head(2, 2, seed=4)
    res = ea.learn_multi_head(ea.Oracle(model), 2, heads=2, seed=4, validate=0,
                              certify_unique=True)
    assert res.unique_queries == 0 and res.model.head_set() == model.head_set()
    assert res.uniqueness == "lemma-b" and "Lemma B" in res.proves


def test_fewer_heads_than_h0_are_certified_by_the_design_not_by_lemma_b():
    model = ea.random_multi_head(2, 1, seed=4)
    res = ea.learn_multi_head(ea.Oracle(model), 2, heads_bound=2, seed=4, validate=0,
                              certify_unique=True)
    assert res.uniqueness != "lemma-b" and res.unique_queries == res.uniqueness.needed
    assert "Lemma B" not in res.proves and "Theorem A" in res.proves


def test_out_of_families_is_a_named_failure(lemma):
    one, _ = lemma
    orc = ea.Oracle(one)
    with pytest.raises(NotUnique) as e:
        with_fibre(_learn_on(orc), orc, random.Random(0), max_families=0)
    assert e.value.reason == "not-unique" and e.value.details["pieces"] > 1


def _learn_on(orc):
    return ea.learn_multi_head(orc, D, heads_bound=H0, seed=SEED, box=BOX, validate=0)


def test_refused_on_an_inexact_backend():
    model = ea.random_multi_head(2, 1, seed=0)
    with pytest.raises(ValueError, match="certify_unique"):
        ea.learn_multi_head(ea.Oracle(model, backend="mp"), 2, heads_bound=2,
                            certify_unique=True, seed=0)


@pytest.mark.parametrize("schedule", ["economy", "adaptive"])
def test_every_schedule_is_certified_by_the_design(schedule):
    model = ea.random_multi_head(3, 2, seed=2)
    kw = {"heads": 2} if schedule == "economy" else {"heads_bound": 2}
    res = ea.learn_multi_head(ea.Oracle(model), 3, schedule=schedule, seed=0, validate=0,
                              certify_unique=True, **kw)
    assert res.model.head_set() == model.head_set() and res.uniqueness.holds
    assert res.unique_queries == res.uniqueness.needed


def test_extra_queries_are_counted_apart_and_asked_of_the_oracle(lemma):
    one, _ = lemma
    orc = ea.Oracle(one)
    res = ea.learn_multi_head(orc, D, heads_bound=H0, seed=SEED, box=BOX, validate=0,
                              certify_unique=True)
    assert res.queries == Schedule(res.extra["U"], res.extra["X"], H0).count
    assert orc.queries == res.queries + res.unique_queries
    assert len(res.uniqueness.transcript) == res.unique_queries


@pytest.mark.parametrize("lie_at", [32, 40])
def test_an_answer_no_model_gives_is_not_certified(lemma, lie_at):
    """One answer of the design changed (an oracle that is not the learned model there): the
    fibre search finds the learned model again, which does not give the changed answer, so
    certify_unique must not return it."""
    one, _ = lemma

    class Liar:
        def __init__(self):
            self.n = 0

        def __call__(self, tokens):
            self.n += 1
            y = one(tokens, "exact")
            return y + Fraction(1, 7) if self.n == lie_at else y

    with pytest.raises(LearningFailure):
        ea.learn_multi_head(ea.Oracle(Liar(), dim=D, backend="exact"), D, heads_bound=H0,
                            seed=SEED, box=BOX, validate=0, certify_unique=True)


def test_cli_certify_unique_writes_a_certificate_the_checker_accepts(tmp_path, capsys):
    from exactattn.cli.main import main
    from proofs_checks.checker.verify import verify_file
    path = tmp_path / "u.json"
    rc = main(["learn", "multi-head", "--dim", "2", "--heads", "1", "--heads-bound", "2",
               "--certify-unique", "--certificate", str(path), "--quiet"])
    out = capsys.readouterr().out
    assert rc == 0 and "queries to certify uniqueness" in out
    findings = verify_file(path)
    assert findings[0].startswith("design moment-curve d=2 H=1 H0=2") and "Theorem A" in findings[0]

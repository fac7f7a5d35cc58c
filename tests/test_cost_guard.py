"""The cost guard prices what a run really expands (exactattn/learners/p2/cost.py,
docs/design.md §2.1 lazy exact answers, §2.3 cost estimates): a lazy P2 run expands no answer
at any H, so it is priced per query and never refused for the size of answers it never
builds; a black box's expanded answers, validation compared term by term and a certificate
that writes every answer are priced at their terms; a run refused up front is one the
estimate calls large."""

from __future__ import annotations

import pytest

import exactattn as ea
from exactattn.arith import multiplicities
from exactattn.arith.expfield import ExpElement, TooLarge
from exactattn.cli.main import main
from exactattn.learners.multi_head import check_cost, learn_multi_head
from exactattn.learners.p2 import cost
from exactattn.learners.p2.schedule import published_count


@pytest.fixture
def expansions(monkeypatch):
    """The answers expanded while the test runs: [(heads, distinct tokens)] per expansion
    (every expansion of a lazy answer goes through head_polynomials)."""
    seen = []
    real = multiplicities.head_polynomials

    def counted(heads, mult, Da):
        seen.append((len(heads), len(mult)))
        return real(heads, mult, Da)
    monkeypatch.setattr(multiplicities, "head_polynomials", counted)
    return seen


def expanded_oracle(model):
    """A black box answering with built elements of Q(t) (not lazy)."""
    def f(tokens):
        e = model(tokens, "exact")
        return ExpElement(e.num, e.den, e.L)
    return ea.Oracle(f, dim=model.dim, backend="exact")


# ---------------------------------------------------------------------- lazy runs
def test_a_lazy_run_past_the_old_cliff_expands_nothing(expansions):
    """H = 14 at d = 3 (answers of 2^15 terms expanded; validation answers of up to 6^14):
    certified and validated by default, no answer expanded — images, the observed-cost check,
    certification and validation all read the heads' data."""
    model = ea.random_multi_head(3, 14, seed=2)
    res = learn_multi_head(ea.Oracle(model), 3, heads=14, seed=2)
    assert res.model.head_set() == model.head_set() and res.certificate["certified"]
    assert res.validation_queries == 2 * 14 + 2
    assert expansions == []
    assert cost.expanded_terms(res.transcript[0][1]) == 0
    assert cost.lazy_run(res.transcript)


def test_the_default_budget_passes_every_head_count_up_to_20_at_d_8():
    """The estimate up front (no --force) passes d = 8, H = 1 … 20, and prices each run at
    lazy answers: no term expanded, far below the budget (the runs take 0.1–0.3 s and
    < 10 MB beyond the interpreter, benchmarks/bench_heads.py)."""
    for H in range(1, 21):
        check_cost(8, heads=H)
        est = cost.estimate_multi_head(8, H, lazy=True)
        assert est.lazy and est.terms_per_answer == 0 and est.queries == published_count(8, H)
        assert est.seconds < 2 and est.bytes < 200 << 20
        worst = cost.estimate_multi_head(8, H)           # the same run, every answer expanded
        assert worst.terms_per_answer == 2 * 2 ** H and worst.bytes > est.bytes


@pytest.mark.slow
@pytest.mark.parametrize("H", range(1, 21))
def test_every_run_the_estimate_passes_at_d_8_is_certified(H, expansions):
    """d = 8, H = 1 … 20, validated by default: each run the up-front estimate passes
    finishes certified, expanding nothing."""
    model = ea.random_multi_head(8, H, seed=1)
    res = learn_multi_head(ea.Oracle(model), 8, heads=H, seed=1)
    assert res.model.head_set() == model.head_set() and res.certificate["certified"]
    assert expansions == []


def test_a_run_refused_up_front_is_one_the_estimate_calls_large(monkeypatch):
    """With the budget just below the lazy estimate of a size, that size is refused before
    its first query and the size below it runs: the refusal follows the estimate."""
    est = cost.estimate_multi_head(3, 3, lazy=True)
    smaller = cost.estimate_multi_head(3, 2, lazy=True)
    assert smaller.bytes < est.bytes
    monkeypatch.setattr(cost, "DEFAULT_BUDGET", cost.Budget(bytes=est.bytes - 1, seconds=1e9))
    oracle = ea.Oracle(ea.random_multi_head(3, 3, seed=0))
    with pytest.raises(cost.CostExceeded, match="lazy exact answers"):
        learn_multi_head(oracle, 3, heads=3, seed=0, validate=0)
    assert oracle.queries == 0
    model = ea.random_multi_head(3, 2, seed=0)
    res = learn_multi_head(ea.Oracle(model), 3, heads=2, seed=0, validate=0)
    assert res.model.head_set() == model.head_set()


def test_validation_of_a_lazy_run_is_priced_lazily():
    """(2, 12) validated by default asks queries of up to six distinct tokens, 2·6^12 terms
    each if expanded (past the term limit even forced): a lazy run compares their heads'
    data and certifies."""
    shapes = [(5, 6), (9, 4)]
    assert cost.estimate_validation(2, 12, 12, shapes).terms_per_answer > \
        ea.arith.expfield.MAX_TERMS
    assert cost.estimate_validation(2, 12, 12, shapes, lazy=True).terms_per_answer == 0
    model = ea.random_multi_head(2, 12, seed=3)
    res = learn_multi_head(ea.Oracle(model), 2, heads=12, seed=3)
    assert res.validation_queries == 26 and res.model.head_set() == model.head_set()


def test_a_group_past_the_term_limit_is_built_and_refused_only_when_expanded():
    """The term limit applies where terms are built: a group of 6 tokens on 12 heads (6^12
    terms expanded) is made and answers lazily; its polynomials are refused (TooLarge)."""
    heads = [[[i * 10 ** 9 + h * i for i in range(6)], [i + h for i in range(6)]]
             for h in range(12)]
    group = multiplicities.TokenGroup([k for k, _ in heads], [a for _, a in heads], 1, 1)
    answer = group.member((1, 2, 1, 1, 3, 1))
    assert cost.expanded_terms(answer) == 0
    with pytest.raises(TooLarge):
        answer.num


# ---------------------------------------------------------------------- expanded answers
def test_a_black_box_with_expanded_answers_is_priced_at_its_first_answer(monkeypatch):
    """A black box's built answers are priced at their terms after its first copy-count
    answer: with the budget between the lazy estimate and the expanded one, the lazy oracle
    runs and the black box is refused after two queries."""
    model = ea.random_multi_head(3, 6, seed=0)
    lazy = cost.estimate_multi_head(3, 6, lazy=True)
    y = model([[1, 2, 3], [1, 2, 3], [4, 5, 7]], "exact")
    expanded = cost.estimate_multi_head(3, 6, "exact", y.exponent_span().bit_length())
    expanded_bytes = expanded.bytes // expanded.terms_per_answer * (len(y.num) + len(y.den))
    assert lazy.bytes < expanded_bytes
    monkeypatch.setattr(cost, "DEFAULT_BUDGET",
                        cost.Budget(bytes=(lazy.bytes + expanded_bytes) // 2, seconds=1e9))
    box = expanded_oracle(model)
    with pytest.raises(cost.CostExceeded, match="131,072|terms once expanded"):
        learn_multi_head(box, 3, heads=6, seed=0, validate=0)
    assert box.queries == 2
    res = learn_multi_head(ea.Oracle(model), 3, heads=6, seed=0, validate=0)
    assert res.model.head_set() == model.head_set()


def test_validation_against_a_black_box_is_priced_at_its_terms():
    """Expanded answers: the validation floor at the head count the first answer shows is
    priced term by term (2·4^14 terms past the limit: refused after two queries); the same
    model answering lazily is not refused."""
    model = ea.random_multi_head(2, 14, seed=0)
    box = expanded_oracle(model)
    with pytest.raises(cost.CostExceeded, match="cheapest shapes"):
        learn_multi_head(box, 2, heads_bound=16, seed=0)
    assert box.queries == 2
    assert 1 <= cost.heads_shown(model([[1, 2], [1, 2], [3, 4]], "exact")) <= 14
    assert not cost.lazy_run([((), ExpElement.from_rational(1))])
    assert not cost.lazy_run([])


def test_a_certificate_is_priced_as_every_answer_expanded(tmp_path, capsys):
    """--certificate writes every answer expanded: d = 8, H = 16 (4,065 answers of 2^17
    terms) is refused up front, nothing written; without it the run is priced lazily."""
    path = tmp_path / "c.json"
    assert main(["learn", "multi-head", "--dim", "8", "--heads", "16", "--certificate",
                 str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--certificate" in err[0] and "--force" in err[0]
    assert not path.exists()
    check_cost(8, heads=16)


def test_schedules_beyond_p2_are_priced_as_expanded_answers():
    """The economy schedule compares answers in Q(t): priced expanded, so a known head
    count whose cheapest validation is past the term limit is refused before any query
    (and without validation it is not refused for validation)."""
    oracle = ea.Oracle(ea.random_multi_head(2, 17, seed=0))
    with pytest.raises(cost.CostExceeded, match="cheapest shapes.*--validate 0"):
        learn_multi_head(oracle, 2, heads=17, schedule="economy")
    assert oracle.queries == 0
    check_cost(2, heads=17, validate=0, schedule="economy")
    check_cost(2, heads=17)                                 # P2: lazy


def test_a_one_token_answer_is_read_as_a_rational_unexpanded(expansions):
    """F([x]) = Σ_h v_h·x: the lazy answer's rational is the expanded one's, read without
    expanding (P2's constant q0)."""
    model = ea.random_multi_head(3, 5, seed=4)
    y = model([[2, -1, 3]], "exact")
    assert y.is_rational() and expansions == []
    got = y.as_rational()
    assert expansions == []
    assert got == ExpElement(y.num, y.den, y.L).as_rational()
    assert got == sum(sum(a * b for a, b in zip(h.v, [2, -1, 3])) for h in model.heads)

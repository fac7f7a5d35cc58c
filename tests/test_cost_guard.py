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


def test_a_certificate_is_priced_as_every_answer_expanded(tmp_path, capsys, monkeypatch):
    """--certificate writes every answer expanded: with the budget between the lazy and the
    expanded estimate of (2, 2), the run is refused up front with --certificate (nothing
    written) and runs without it; at the default budget d = 8, H = 16 (4,065 answers of
    2^17 terms written) is over it and passes unwritten."""
    lazy = cost.estimate_multi_head(2, 2, lazy=True)
    expanded = cost.estimate_multi_head(2, 2)
    assert lazy.bytes < expanded.bytes
    monkeypatch.setattr(cost, "DEFAULT_BUDGET",
                        cost.Budget(bytes=(lazy.bytes + expanded.bytes) // 2, seconds=1e9))
    path = tmp_path / "c.json"
    args = ["learn", "multi-head", "--dim", "2", "--heads", "2", "--validate", "0", "--quiet"]
    assert main(args + ["--certificate", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--certificate" in err[0] and "--force" in err[0]
    assert not path.exists()
    assert main(args) == 0
    monkeypatch.undo()
    with pytest.raises(cost.CostExceeded):
        cost.check_budget(cost.estimate_multi_head(8, 16))
    check_cost(8, heads=16)


def test_the_economy_schedule_is_priced_like_p2(monkeypatch, expansions):
    """Economy and adaptive compare a family's answers through their partial fractions
    (nothing expanded), so they are priced lazily up front and re-priced at a black box's
    first copy-count answer; multi-head low rank stays priced as expanded answers."""
    model = ea.random_multi_head(3, 6, seed=0)
    res = learn_multi_head(ea.Oracle(model), 3, heads=6, seed=0, schedule="economy",
                           validate=0)
    assert res.model.head_set() == model.head_set() and expansions == []
    lazy = cost.estimate_multi_head(3, 6, lazy=True)
    monkeypatch.setattr(cost, "DEFAULT_BUDGET", cost.Budget(bytes=lazy.bytes * 2, seconds=1e9))
    box = expanded_oracle(model)
    with pytest.raises(cost.CostExceeded, match="terms once expanded"):
        learn_multi_head(box, 3, heads=6, seed=0, schedule="economy", validate=0)
    assert box.queries == 2
    monkeypatch.undo()
    oracle = ea.Oracle(ea.random_multi_head(2, 17, seed=0))
    with pytest.raises(cost.CostExceeded, match="cheapest shapes.*--validate 0"):
        learn_multi_head(oracle, 2, heads=17, schedule="low-rank")
    assert oracle.queries == 0
    check_cost(2, heads=17, validate=0, schedule="low-rank")
    check_cost(2, heads=17, schedule="economy")


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
    assert not model([[2, -1, 3], [1, 0, 1]], "exact").is_rational()      # two tokens


# ---------------------------------------------------------------------- partial fractions
def test_a_two_token_group_is_its_partial_fractions():
    """copy_count_form is the family exactly: K + Σ c/(1 + m e^s) equals the expanded member
    (m, 1) in Q(t) for several m (P2's G(m))."""
    from exactattn.learners.beyond.economy import _family_value
    model = ea.random_multi_head(3, 4, seed=5)
    x, u = [3, -1, 2], [1, 4, -2]
    xu = [a + b for a, b in zip(x, u)]
    group = model([xu, x], "exact").packed[0]
    K, poles = group.copy_count_form()
    heads = sorted(poles.items())
    L = group.L
    for s, _ in heads:
        assert (s * L).denominator == 1
    for m in (1, 2, 5):
        y = model([xu] * m + [x], "exact")
        assert _family_value(K, heads, m, L) == ExpElement(y.num, y.den, y.L)
    assert model([xu, xu, x], "exact").packed[0].copy_count_form() == (K, poles)
    assert model([xu, x, [0, 0, 1]], "exact").packed[0].copy_count_form() is None


def test_the_economy_shortcut_accepts_only_the_family_itself():
    """_same_family: the group's own partial fractions are accepted (in any order, a zero
    residue and a split pole merged); a changed residue, score or constant, answers of
    another group or out of order are not shown equal (the caller then compares in Q(t))."""
    from exactattn.learners.beyond.economy import _same_family
    model = ea.random_multi_head(3, 3, seed=6)
    x, u = [2, 5, -1], [-3, 1, 4]
    xu = [a + b for a, b in zip(x, u)]
    ys = [model([xu] * m + [x], "exact") for m in range(1, 7)]
    K, poles = ys[0].packed[0].copy_count_form()
    heads = list(poles.items())
    s0, c0 = heads[0]
    assert _same_family(K, heads[::-1], ys)
    assert _same_family(K, heads + [(s0 + 7, 0)], ys)
    assert _same_family(K, [(s0, c0 / 2), (s0, c0 / 2)] + heads[1:], ys)
    assert not _same_family(K, [(s0, c0 + 1)] + heads[1:], ys)
    assert not _same_family(K, [(s0 + 1, c0)] + heads[1:], ys)
    assert not _same_family(K + 1, heads, ys)
    assert not _same_family(K, heads, ys[1:])
    other = model([[1, 1, 1], [1, 1, 1], x], "exact")      # G(2) of another family
    assert not _same_family(K, heads, ys[:1] + [other] + ys[2:])
    assert not _same_family(K, heads, [ExpElement(ys[0].num, ys[0].den, ys[0].L)] + ys[1:])


# ---------------------------------------------------------------------- the command line's guard
def test_the_command_line_prices_runs_in_cpu_seconds():
    """The command line's up-front estimate (exactattn/cli/_common.py) passes the sizes that
    run in well under a minute (d = 8 at H = 1 … 20, (24, 8), (64, 4) … (64, 32), measured
    0.1 s … 45 s, benchmarks/bench_heads.py) and refuses (64, 64), over a million queries;
    it grows with every size and with the mp backend's digits."""
    from exactattn.cli._common import MAX_WORK, backend_factor, p1_work, p2_work
    for d, H in [(8, H) for H in range(1, 21)] + [(24, 8), (64, 4), (64, 16), (64, 32)]:
        assert p2_work(d, H) < MAX_WORK, (d, H)
    assert p2_work(64, 64) > MAX_WORK
    assert p2_work(8, 4) < p2_work(9, 4) and p2_work(8, 4) < p2_work(8, 5)
    assert p2_work(8, 4) < p2_work(8, 4, H0=6) and p2_work(8, 4) < p2_work(8, 4, K=4)
    assert p2_work(8, 4, validate=0) < p2_work(8, 4) < p2_work(8, 4, validate=100)
    assert p2_work(8, 2, K=2, transformer=True) > 2 * p2_work(8, 2, K=2)   # pairs and FFN
    assert p2_work(16, 1, K=16, transformer=True) < MAX_WORK < \
        p2_work(16, 1, K=32, transformer=True)          # measured 57 s; K³ beyond it
    assert backend_factor("exact") == 1 < backend_factor("mp", 15) < backend_factor("mp", 60)
    assert p2_work(16, 4, backend="mp", dps=60) == p2_work(16, 4) * backend_factor("mp", 60)
    assert p1_work(64, 64 * 65) < MAX_WORK < p1_work(64, 64 * 65, backend="mp", dps=10000)


def test_a_refusal_names_the_estimate_in_cpu_time():
    from exactattn.cli._common import MAX_WORK, check_work
    check_work("a run", MAX_WORK, force=False)                   # at the limit: runs
    with pytest.raises(ValueError, match=r"^a run is estimated at 2 min of CPU, above the "
                                         r"limit of 60 s; use smaller sizes, or --force"):
        check_work("a run", 2 * MAX_WORK, force=False)
    with pytest.raises(ValueError, match="estimated at 3 h of CPU"):
        check_work("a run", 3 * 3600e6, force=False)
    check_work("a run", 100 * MAX_WORK, force=True)


def test_the_command_line_refuses_an_mp_run_the_exact_one_would_pass(capsys):
    """(48, 16) exactly is estimated at about 11 s (measured 10 s); at 600 digits of mp its queries cost about
    44 times more: refused up front, before any query."""
    base = ["learn", "multi-head", "--dim", "48", "--heads", "16", "--quiet", "--validate", "0"]
    assert main(base + ["--backend", "mp", "--dps", "600"]) == 2
    assert "above the limit of 60 s" in capsys.readouterr().err

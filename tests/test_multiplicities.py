"""Batched exact evaluation (exactattn/arith/multiplicities.py, docs/design.md §2): the grouped
answers are the direct evaluation's exactly, their images in F_p are the polynomials',
batches behave as queries one by one, and the certification's shortcut cannot pass a model
that differs."""

import random
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

import exactattn as ea
from exactattn.arith import get_backend
from exactattn.arith.fields import PrimeField
from exactattn.arith.modular import ModularImage, random_prime
from exactattn.arith.multiplicities import PackedElement
from exactattn.errors import BudgetExceeded, QueryError
from exactattn.learners.p2.matching import certify

BE = get_backend("exact")


def _case(seed, max_heads=4, max_tokens=4):
    rng = random.Random(seed)
    d, H = rng.randint(1, 3), rng.randint(1, max_heads)
    model = ea.random_multi_head(d, H, seed=seed)
    toks = [[Fraction(rng.randint(-6, 6), rng.choice([1, 1, 2, 3])) for _ in range(d)]
            for _ in range(rng.randint(1, max_tokens))]
    query = [rng.choice(toks) for _ in range(rng.randint(1, 2 * H + 1))]
    return model, query


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10 ** 6))
def test_a_grouped_answer_is_the_direct_evaluation(seed):
    model, query = _case(seed)
    heads = model._heads_on(BE)
    prepared = BE.prepare_tokens(query)
    a, b = BE.attention(prepared, heads), BE.direct(prepared, heads)
    if not b.is_zero():
        assert isinstance(a, PackedElement) and not a.is_zero()   # before any polynomial
    assert a.exponent_span() == b.exponent_span()   # from the group, before any polynomial
    assert (a.L, a.num, a.den) == (b.L, b.num, b.den)
    assert a == b and hash(a) == hash(b)


def test_an_answer_whose_end_coefficients_vanish_is_not_zero():
    """N(t) = Σ μ_i a_i t^{k_i} with a zero value at the lowest and at the highest score and a
    nonzero one between: the ends leave the zero test undecided, and the expanded numerator
    decides it (a zero test that stops at the ends calls this answer 0; the random
    property above meets such a query in about one draw of eight)."""
    model = ea.MultiHeadAttention([ea.AttentionHead([[0, 0], [1, 0]], [1, 0])])
    query = [[0, 2], [0, -2], [1, 0]]              # scores 2, −2, 0; values 0, 0, 1
    heads = model._heads_on(BE)
    prepared = BE.prepare_tokens(query)
    group = BE._group(prepared, heads)
    assert not group.nonzero(prepared.mult)        # the ends say nothing here
    a, b = BE.attention(prepared, heads), BE.direct(prepared, heads)
    assert not b.is_zero() and not a.is_zero() and a == b


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10 ** 6), st.sampled_from([1, 2, 5]))
def test_the_image_of_a_packed_answer_is_the_polynomials(seed, lift):
    model, query = _case(seed)
    prepared = BE.prepare_tokens(query)
    a = BE.attention(prepared, model._heads_on(BE))
    b = BE.direct(prepared, model._heads_on(BE))
    p, factors = random_prime(62, random.Random(62))
    image = ModularImage(PrimeField(p), a.L * lift, random.Random(seed), factors)
    assert image.image(a) == image.image(b)
    assert image.image(a) == image.image(a)            # the cached powers: the same value


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10 ** 6), st.sampled_from([1, 3]))
def test_a_family_of_images_at_once_is_each_image(seed, lift):
    """ModularImage.images (two distinct tokens: N/D_a and D as polynomials in r = μ₁/μ₂,
    evaluated at once; other groups: their weights, one inversion for the denominators) gives
    image() of every answer, one at a time, and the family's images are those of the
    directly evaluated polynomials: a copy-count family [(x+u) × m, x], a two-token answer
    with μ₂ ≠ 1, answers of other groups and a plain ExpElement mixed in."""
    rng = random.Random(seed)
    d, H = rng.randint(1, 3), rng.randint(1, 6)
    model = ea.random_multi_head(d, H, seed=seed)
    x, u, w = ([rng.randint(-5, 5) for _ in range(d)] for _ in range(3))
    family = [[u] * m + [x] for m in range(1, 2 * H + 1)] + \
        [[u, w, u, x], [w, x], [x, u, x, u, x]]     # the last: μ = (2, 3), r = μ₁/μ₂
    answers = model.evaluate_many(family, "exact") + [BE.element(Fraction(3, 7))]
    L = 1
    for a in answers:
        L = L * a.L // __import__("math").gcd(L, a.L)
    p, factors = random_prime(62, random.Random(62))
    image = ModularImage(PrimeField(p), L * lift, random.Random(seed), factors)
    assert image.images(answers) == [image.image(a) for a in answers]
    direct = [BE.direct(BE.prepare_tokens(q), model._heads_on(BE)) for q in family]
    assert image.images(answers[:len(family)]) == [image.image(b) for b in direct]


def test_a_zero_answer_is_the_exact_zero():
    model = ea.MultiHeadAttention([([[1]], [1]), ([[1]], [-1])])
    y = model([[3], [2], [2]], "exact")
    assert y.is_zero() and y.L == 1 and type(y) is not PackedElement


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10 ** 6))
def test_integer_tokens_are_scored_as_by_the_matrix_products(seed):
    """The Python-integer products of a small model on integer tokens (exact._products_ints)
    and the FLINT integer products with the final token's scores cached
    (exact._products_integer, asked three times: a second query ending in the same token
    takes the cached scores, a third ends in another token) are python-flint's rational
    matrix products' (exact._products): the same k_hi, a_hi, L and D_a."""
    from exactattn.arith import exact
    rng = random.Random(seed)
    d, H = rng.randint(1, 4), rng.randint(1, 4)
    model = ea.random_multi_head(d, H, seed=seed)
    toks = [[rng.randint(-9, 9) for _ in range(d)] for _ in range(rng.randint(1, 5))]
    final = rng.choice(toks)
    other = [x + 1 for x in final]
    finals = (final, final, other)
    heads = model._heads_on(BE)
    for final in finals:
        prepared = BE.prepare_tokens([rng.choice(toks) for _ in range(rng.randint(0, 6))]
                                     + [final])
        reference = exact._per_head(*exact._products(prepared.matrix(), heads))
        assert exact._per_head(*exact._products_ints(prepared.order, heads)) == reference
        assert exact._per_head(*exact._products_integer(prepared.order, heads)) == reference


def test_end_coefficients_that_vanish_do_not_make_an_answer_zero():
    """One head, scores 0, 1, 2 on three tokens with values 0, 1, 0: N = μ₂·t has zero
    lowest and highest coefficients, so the zero test is undecided and the numerator is
    expanded; the answer is t/(1 + t + t²), not zero (a planted zero verdict would say 0)."""
    model = ea.MultiHeadAttention([([[1, 0], [0, 0]], [0, 1])])
    query = [[0, 0], [1, 1], [2, 0], [1, 0]]
    prepared = BE.prepare_tokens(query)
    group = BE._group(prepared, model._heads_on(BE))
    assert not group.nonzero(prepared.mult)              # undecided by the end coefficients
    y = model(query, "exact")
    assert isinstance(y, PackedElement) and not y.is_zero()
    b = BE.direct(prepared, model._heads_on(BE))
    assert not b.is_zero() and (y.L, y.num, y.den) == (b.L, b.num, b.den)


def test_a_zero_sum_of_heads_with_other_scores_is_the_exact_zero():
    """Two heads with different W whose values are constant on the tokens (v₁·x = 1,
    v₂·x = −1): each head's average is ±1 whatever its softmax, so the answer is 0 while
    the heads' lowest-exponent tokens differ — the zero test must weigh each head's end
    values by the others' (a planted unweighted sum calls it nonzero)."""
    model = ea.MultiHeadAttention([([[1, 0], [0, 1]], [1, 0]), ([[0, 0], [0, -1]], [-1, 0])])
    y = model([[1, 2], [1, 2], [1, -3], [1, 1]], "exact")
    assert y.is_zero() and y.L == 1 and type(y) is not PackedElement


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10 ** 6))
def test_zero_answers_are_decided_as_the_direct_evaluation(seed):
    """Models prone to zero answers (values ±e₁ or 0, tokens with first entry 1, few
    distinct tokens): the packed answer is zero exactly when the direct evaluation is, and
    equal to it."""
    rng = random.Random(seed)
    d, H = 2, rng.randint(1, 4)
    heads = [([[rng.randint(-2, 2) for _ in range(d)] for _ in range(d)],
              rng.choice([[1, 0], [-1, 0], [0, 0], [2, 0]])) for _ in range(H)]
    model = ea.MultiHeadAttention(heads)
    toks = [[1, rng.randint(-3, 3)] for _ in range(3)]
    query = [rng.choice(toks) for _ in range(rng.randint(1, 6))]
    prepared = BE.prepare_tokens(query)
    a, b = BE.attention(prepared, model._heads_on(BE)), BE.direct(prepared, model._heads_on(BE))
    assert a.is_zero() == b.is_zero()
    assert (type(a) is PackedElement) == (not b.is_zero())
    assert a == b and (a.L, a.num, a.den) == (b.L, b.num, b.den)


def test_equal_multiplicities_are_needed_for_the_shortcut():
    """Two models that agree on one token group but not on another multiplicity: the packed
    equality does not confuse members (a planted `same_as` ignoring μ would)."""
    model = ea.random_multi_head(2, 2, seed=4)
    x, u = [1, 2], [3, -1]
    a = model([u, u, x], "exact")
    b = model([u, u, u, x], "exact")
    assert isinstance(a, PackedElement) and isinstance(b, PackedElement)
    assert a.packed[0] is b.packed[0] and a != b
    assert model([u, u, x], "exact") == a


def test_a_copied_packed_answer_is_equal_and_builds_the_same_polynomials():
    import copy
    a = ea.random_multi_head(2, 2, seed=1)([[1, 2], [1, 2], [0, 1]], "exact")
    assert isinstance(a, PackedElement)
    b = copy.copy(a)
    assert b == a and (b.num, b.den, b.L) == (a.num, a.den, a.L)


def _queries(d, rng, n=30):
    base = [[rng.randint(-3, 3) for _ in range(d)] for _ in range(3)]
    return [[rng.choice(base) for _ in range(rng.randint(1, 5))] for _ in range(n)]


def test_a_batch_is_the_queries_one_by_one():
    model = ea.random_multi_head(3, 2, seed=7)
    qs = _queries(3, random.Random(0))
    one, many = ea.Oracle(model, backend="exact"), ea.Oracle(model, backend="exact")
    answers = [one(q) for q in qs]
    assert many.ask_many(qs) == answers
    assert (many.queries, many.max_length) == (one.queries, one.max_length)
    assert many.transcript == one.transcript


def test_a_batch_keeps_the_budget_and_the_errors_of_single_queries():
    model = ea.random_multi_head(2, 2, seed=3)
    orc = ea.Oracle(model, backend="exact", budget=3)
    with pytest.raises(BudgetExceeded):
        orc.ask_many([[[1, 2]]] * 5)
    assert orc.queries == 3 and len(orc.transcript) == 3
    orc = ea.Oracle(model, backend="exact")
    with pytest.raises(QueryError, match="token 1 has 3 entries"):
        orc.ask_many([[[1, 2]], [[1, 2], [1, 2, 3]]])
    assert orc.queries == 1                            # the one before it stays counted
    with pytest.raises(Exception, match="float"):
        ea.Oracle(model, backend="exact").ask_many([[[0.5, 1]]])   # never a float on exact


def test_certification_rejects_a_model_that_differs_on_one_family():
    """The shortcut (equal group polynomials at equal μ) must not hide a difference: a
    recovered model with one entry of one W changed fails at a query it changes."""
    true = ea.random_multi_head(2, 2, seed=5)
    orc = ea.Oracle(true, backend="exact")
    rng = random.Random(1)
    for q in _queries(2, rng, 20):
        orc(q)
    assert certify(true, orc.transcript, BE)["certified"] is True
    (W0, v0), (W1, v1) = [(h.W, h.v) for h in true.heads]
    W0 = [list(r) for r in W0]
    W0[0][1] += Fraction(1, 7)
    wrong = ea.MultiHeadAttention([(W0, v0), (W1, v1)])
    out = certify(wrong, orc.transcript, BE)
    assert out["certified"] is False
    first = out["first_mismatch"]
    tokens, answer = orc.transcript[first]
    assert wrong(tokens, "exact") != answer
    assert all(wrong(t, "exact") == a for t, a in orc.transcript[:first])


def test_certification_of_a_merged_model_takes_the_full_comparison():
    """A model with two equal W (not canonical) and its canonical form answer alike, but
    their groups differ (different expansions): certification compares the elements."""
    W = [[1, 2], [0, 1]]
    model = ea.MultiHeadAttention([(W, [1, 0]), (W, [0, 1])])
    orc = ea.Oracle(model, backend="exact")
    for q in _queries(2, random.Random(3), 10):
        orc(q)
    assert certify(model.canonical(), orc.transcript, BE)["certified"] is True


def test_certification_rejects_equal_scales_with_other_values():
    """Same L and D_a (integer parameters), other v: the groups' polynomials differ, so the
    shortcut must not apply (a planted `same_as` comparing only L, D_a and shapes would)."""
    one = ea.MultiHeadAttention([([[1, 0], [0, 2]], [1, 1]), ([[0, 1], [1, 0]], [2, -1])])
    two = ea.MultiHeadAttention([([[1, 0], [0, 2]], [1, 2]), ([[0, 1], [1, 0]], [2, -1])])
    orc = ea.Oracle(one, backend="exact")
    orc.ask_many([[[1, 1], [1, 1], [0, 1]], [[1, 1], [0, 1]]])
    a, b = orc.transcript[0][1], two([[1, 1], [1, 1], [0, 1]], "exact")
    assert a.L == b.L and a.packed[0].Da == b.packed[0].Da    # the shortcut is on offer
    assert certify(two, orc.transcript, BE) == {"certified": False, "first_mismatch": 0}
    assert a != b


def test_certification_rejects_answers_swapped_within_a_group():
    """Two answers of one token group exchanged in the transcript: each is the model's answer
    at other multiplicities, so both must be rejected (a planted shortcut that ignores μ
    would accept them)."""
    model = ea.random_multi_head(2, 2, seed=8)
    x, u = [0, 1], [2, 1]
    orc = ea.Oracle(model, backend="exact")
    orc.ask_many([[u, x], [u, u, x]])
    (q0, a0), (q1, a1) = orc.transcript
    assert a0.packed[0] is a1.packed[0]                        # the shortcut is on offer
    assert certify(model, [(q0, a1), (q1, a0)], BE) == {"certified": False, "first_mismatch": 0}
    assert certify(model, [(q0, a0), (q1, a1)], BE)["certified"] is True
    assert a0 != a1


def test_answers_pickle_and_deep_copy_to_equal_elements():
    """python-flint polynomials do not pickle: an ExpElement pickles as its terms, a packed
    answer as its group and μ (or, once reduced to another L, as the element it has
    become).  Each comes back equal, with the same polynomials and L."""
    import copy
    import pickle
    from exactattn.arith.expfield import ExpElement
    model = ea.random_multi_head(2, 2, seed=1)
    fresh = model([[1, 2], [1, 2], [0, 1]], "exact")
    built = model([[1, 2], [0, 1]], "exact")
    str(built)                                         # builds its polynomials
    reduced = ExpElement(built.num * 3, built.den * 3, built.L).reduce()
    mixed = fresh + built * 2
    zero = model([[1, 2]], "exact") - model([[1, 2]], "exact")
    for y in (fresh, built, reduced, mixed, zero, BE.element(Fraction(-5, 7))):
        for z in (pickle.loads(pickle.dumps(y)), copy.deepcopy(y)):
            assert z == y and type(z) is type(y)
            assert (z.L, z.num, z.den) == (y.L, y.num, y.den)
    assert pickle.loads(pickle.dumps(fresh)).packed is not None   # still lazy

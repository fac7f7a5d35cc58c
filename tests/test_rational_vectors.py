"""Exact dot products (exactattn/arith/rational_vectors.py): the Fraction loop's value."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from exactattn.arith.rational_vectors import dot

entries = st.one_of(st.integers(-10 ** 30, 10 ** 30), st.fractions(max_denominator=10 ** 12))


@given(st.lists(st.tuples(entries, entries), max_size=12))
def test_dot_is_the_fraction_loop(pairs):
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    want = sum((Fraction(x) * Fraction(y) for x, y in pairs), Fraction(0))
    got = dot(a, b)
    assert type(got) is Fraction and got == want
    assert dot(b, a) == want


def test_other_exact_types_and_lengths():
    assert dot([True, "3/4"], [2, Fraction(4, 3)]) == 3
    assert dot([1, 2, 3], [4, 5]) == 14
    assert dot([], []) == 0


def test_economy_genericity_scores_are_u_w_x_for_every_x():
    """The statement's scores uᵀWx (W x cached per head and x) for several x with one W."""
    from exactattn.learners.beyond import genericity
    W = [[1, Fraction(2, 3)], [-3, 4]]
    u = [Fraction(1, 2), 5]
    for x in ([1, 0], [0, 1], [2, -7], [1, 0]):
        want = sum(Fraction(u[i]) * W[i][j] * x[j] for i in range(2) for j in range(2))
        assert genericity._score(W, u, x) == want
    genericity._COLUMNS.clear()

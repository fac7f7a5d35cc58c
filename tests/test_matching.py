"""The matching of a family's heads to the reference heads (exactattn/learners/p2/matching.py;
P2, matching families; docs/design.md §4.3): the exact look-ups give what comparing every pair
gives, and the failures are named whatever the order of the heads."""

from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from exactattn.arith import get_backend
from exactattn.errors import AmbiguousMatching, NotAttention
from exactattn.learners.p2.matching import Close, match

EXACT = Close(get_backend("exact"))


def _pairwise(a, b):
    """Equality without the exact flag: match() then compares every pair, as on mp / float."""
    return a == b


def _outcome(ref, fam, sumfam, close, shared_u):
    try:
        return match(ref, fam, sumfam, close, shared_u, "I(test)")
    except (NotAttention, AmbiguousMatching) as e:
        return type(e).__name__


def test_shared_u_pairs_each_reference_head_with_its_residue():
    """I(u_i, x_j) against I(u_i, x_1) through I(u_i, x_1+x_j): a head keeps its residue."""
    ref = [(Fraction(1), Fraction(3)), (Fraction(2), Fraction(5))]
    fam = [(Fraction(7), Fraction(5)), (Fraction(4), Fraction(3))]          # reordered
    sumfam = [(Fraction(5), Fraction(3)), (Fraction(9), Fraction(5))]
    assert match(ref, fam, sumfam, EXACT, True, "I(test)") == [fam[1], fam[0]]


def test_two_heads_with_the_reference_residue_are_ambiguous():
    """Both heads of the family carry the first reference head's residue and both sums are
    in the matching family: ambiguous, not the first one found (a planted look-up that
    keeps one head per residue returns a match)."""
    ref = [(Fraction(1), Fraction(3)), (Fraction(2), Fraction(5))]
    fam = [(Fraction(4), Fraction(3)), (Fraction(6), Fraction(3))]
    sumfam = [(Fraction(5), Fraction(3)), (Fraction(7), Fraction(3))]
    with pytest.raises(AmbiguousMatching, match="several heads"):
        match(ref[:1], fam, sumfam, EXACT, True, "I(test)")
    # the second reference head has no candidate: "no head" is named first, in either path
    assert _outcome(ref, fam, sumfam, EXACT, True) == \
        _outcome(ref, fam, sumfam, _pairwise, True) == "NotAttention"


def test_column_matching_adds_scores_and_residues():
    """I(u_i, x_1) against I(u_1, x_1) through I(u_1+u_i, x_1): scores and residues add."""
    ref = [(Fraction(1), Fraction(3)), (Fraction(2), Fraction(5))]
    fam = [(Fraction(10), Fraction(-1)), (Fraction(20), Fraction(7))]
    sumfam = [(Fraction(22), Fraction(12)), (Fraction(11), Fraction(2))]
    assert match(ref, fam, sumfam, EXACT, False, "I(test)") == fam
    with pytest.raises(NotAttention, match="no head"):
        match(ref, fam, sumfam[:1], EXACT, False, "I(test)")


_small = st.integers(-2, 2).map(Fraction)
_heads = st.lists(st.tuples(_small, _small), min_size=1, max_size=4)


@settings(max_examples=300, deadline=None)
@given(ref=_heads, fam=_heads, sumfam=_heads, shared_u=st.booleans())
def test_exact_look_ups_agree_with_comparing_every_pair(ref, fam, sumfam, shared_u):
    """On small values (so that residues and sums collide often) the exact path's look-ups
    name the same heads, or the same failure, as comparing every pair."""
    assert _outcome(ref, fam, sumfam, EXACT, shared_u) == \
        _outcome(ref, fam, sumfam, _pairwise, shared_u)

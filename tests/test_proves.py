"""draw_violations (the genericity check behind ``result.proves``, docs/design.md §4.3/§8)
equals the conditions evaluated straight from their definitions, on small boxes where
collisions, invisible heads and ambiguous matchings happen."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from exactattn.learners.p2.genericity import draw_violations
from exactattn.learners.p2.schedule import Schedule


def _reference(heads, schedule):
    """Each condition from its definition: uᵀW_h x per family and head, v_h·u per u used,
    s1_a + s2_b ≠ s1_c + s2_c for (a, b) ≠ (c, c) in every matching family."""
    def score(W, u, x):
        return sum((Fraction(W[i][j]) * u[i] * x[j] for i in range(len(u))
                    for j in range(len(x))), Fraction(0))
    by_key = {(f.u_key, f.x_key): f for f in schedule.families}
    bad = set()
    seen = set()
    for fam in schedule.families:
        s = [score(W, fam.u, fam.x) for W, _ in heads]
        bad |= {("poles", fam.u_key, fam.x_key, a, b)
                for a, b in itertools.combinations(range(len(heads)), 2) if s[a] == s[b]}
        if fam.u_key not in seen:
            seen.add(fam.u_key)
            bad |= {("visible", fam.u_key, a) for a, (_, v) in enumerate(heads)
                    if sum(Fraction(p) * q for p, q in zip(v, fam.u)) == 0}
        if len(fam.u_key) == 2 or len(fam.x_key) == 2:
            if len(fam.u_key) == 2:
                f1, f2 = by_key[((0,), fam.x_key)], by_key[((fam.u_key[1],), fam.x_key)]
            else:
                f1, f2 = by_key[(fam.u_key, (0,))], by_key[(fam.u_key, (fam.x_key[1],))]
            s1 = [score(W, f1.u, f1.x) for W, _ in heads]
            s2 = [score(W, f2.u, f2.x) for W, _ in heads]
            bad |= {("match", fam.u_key, fam.x_key, a, b, c)
                    for a, b, c in itertools.product(range(len(heads)), repeat=3)
                    if (a, b) != (c, c) and s1[a] + s2[b] == s1[c] + s2[c]}
    return bad


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 10 ** 6), st.integers(1, 2))
@pytest.mark.slow
def test_draw_violations_equals_the_definitions(d, H, seed, box):
    rng = random.Random(seed)
    heads = [([[Fraction(rng.randint(-1, 1), 2) for _ in range(d)] for _ in range(d)],
              [Fraction(rng.randint(-1, 1)) for _ in range(d)]) for _ in range(H)]
    U = [[rng.randint(-box, box) for _ in range(d)] for _ in range(d)]
    X = [[rng.randint(-box, box) for _ in range(d)] for _ in range(d)]
    schedule = Schedule(U, X, H)
    got = [v for v in draw_violations(heads, schedule) if not v.startswith("det ")]
    assert len(got) == len(_reference(heads, schedule))


def test_a_generic_draw_has_no_violations_and_a_planted_collision_is_named():
    heads = [([[Fraction(1)]], [Fraction(1)]), ([[Fraction(2)]], [Fraction(1)])]
    assert draw_violations(heads, Schedule([[3]], [[5]], 2)) == []
    same = [([[Fraction(1)]], [Fraction(1)]), ([[Fraction(1)]], [Fraction(2)])]
    assert any("collide" in v for v in draw_violations(same, Schedule([[3]], [[5]], 2)))


def test_a_singular_basis_is_named():
    """det U = 0 and det X = 0 are read exactly (a planted check that never fires, or reads
    the other basis, fails here)."""
    heads = [([[Fraction(1), Fraction(0)], [Fraction(0), Fraction(2)]], [Fraction(1), Fraction(1)])]
    got = draw_violations(heads, Schedule([[1, 2], [2, 4]], [[1, 0], [0, 1]], 1))
    assert "det U = 0" in got and "det X = 0" not in got
    got = draw_violations(heads, Schedule([[1, 0], [0, 1]], [[3, 1], [6, 2]], 1))
    assert "det X = 0" in got and "det U = 0" not in got


# ---------------------------------------------------------------------- the headline
def test_headline_is_the_first_clause_without_asides():
    """The `proves:` headline (exactattn.learners.result.proves.headline): the statement up to
    its first ':' or ';' outside parentheses, asides " (…)" dropped, calls such as Q(t) kept."""
    from exactattn.learners.result.proves import _first_clause
    text = ("the model reproduces all 9 answers exactly in Q(t) and the draw (U, X) is generic "
            "(det U ≠ 0; poles): so any oracle …; more")
    assert _first_clause(text) == ("the model reproduces all 9 answers exactly in Q(t) and "
                                   "the draw is generic")
    assert _first_clause("a; b") == "a" and _first_clause("a: b") == "a"


@given(st.lists(st.sampled_from(["a", " ", "(", ")", ":", ";", "Q"]), max_size=30))
@settings(max_examples=200, deadline=None)
def test_headline_never_grows_and_stops_at_a_top_level_separator(chars):
    """A property of _first_clause: its words are a subsequence of the text's before the first
    top-level ':' or ';', so it never says more than the statement."""
    from exactattn.learners.result.proves import _first_clause
    text = "".join(chars)
    got = _first_clause(text)
    assert len(got) <= len(text)
    depth, stop = 0, len(text)
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")" and depth > 0)
        if depth == 0 and ch in ":;":
            stop = i
            break
    assert set(got) <= set(text[:stop]) | {" "}

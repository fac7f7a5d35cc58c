"""Canonical form and JSON of attention models (docs/design.md §1; P1 Prop 7.1, P2 canonical heads).

Two multi-head models are the same function iff their canonical forms are equal as sets.
The invariances are checked on the canonical form *and* by exact evaluation in Q(t)."""

import json
import random
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given
from hypothesis import strategies as st

import exactattn as ea
from exactattn.arith import get_backend
from exactattn.models.attention import AttentionHead, MultiHeadAttention, same_function

MP = get_backend("mp", dps=50)

seeds = st.integers(0, 10 ** 6)
dims = st.integers(1, 3)
n_heads = st.integers(1, 3)
small_q = st.fractions(min_value=-2, max_value=2, max_denominator=3)


def _queries(d, seed, count=3):
    rng = random.Random(seed)
    out = [[[rng.randint(-2, 2) for _ in range(d)]]]  # a length-1 query
    for _ in range(count - 1):
        out.append([[rng.randint(-2, 2) for _ in range(d)] for _ in range(rng.randint(2, 4))])
    return out


def _assert_same_everywhere(a, b, d, seed):
    assert a.canonical() == b.canonical()
    assert a.head_set() == b.head_set()
    assert same_function(a, b) and same_function(b, a)
    for q in _queries(d, seed):
        assert a(q, "exact") == b(q, "exact")


# ---------------------------------------------------------------------- invariances
@given(dims, n_heads, seeds, st.randoms(use_true_random=False))
@pytest.mark.slow
def test_permuting_heads(d, H, seed, rnd):
    m = ea.random_multi_head(d, H, seed=seed)
    heads = list(m.heads)
    rnd.shuffle(heads)
    _assert_same_everywhere(m, MultiHeadAttention(heads), d, seed)


@given(dims, n_heads, seeds, st.data())
@pytest.mark.slow
def test_splitting_a_head_value(d, H, seed, data):
    m = ea.random_multi_head(d, H, seed=seed)
    h = data.draw(st.integers(0, H - 1))
    part = data.draw(st.lists(small_q, min_size=d, max_size=d))
    W, v = m.heads[h].W, m.heads[h].v
    split = [AttentionHead(W, part), AttentionHead(W, [a - b for a, b in zip(v, part)])]
    m2 = MultiHeadAttention(list(m.heads[:h]) + split + list(m.heads[h + 1:]))
    assert len(m2) == H + 1
    _assert_same_everywhere(m, m2, d, seed)
    assert len(m2.canonical()) == H


@given(dims, n_heads, seeds, st.data())
@pytest.mark.slow
def test_adding_a_zero_value_head(d, H, seed, data):
    m = ea.random_multi_head(d, H, seed=seed)
    W0 = data.draw(st.lists(st.lists(small_q, min_size=d, max_size=d), min_size=d, max_size=d))
    pos = data.draw(st.integers(0, H))
    heads = list(m.heads)
    heads.insert(pos, AttentionHead(W0, [0] * d))
    m2 = MultiHeadAttention(heads)
    _assert_same_everywhere(m, m2, d, seed)


@given(dims, n_heads, seeds, st.data())
@pytest.mark.slow
def test_different_W_gives_a_different_function(d, H, seed, data):
    m = ea.random_multi_head(d, H, seed=seed)
    h = data.draw(st.integers(0, H - 1))
    i, j = data.draw(st.integers(0, d - 1)), data.draw(st.integers(0, d - 1))
    delta = data.draw(small_q.filter(lambda q: q != 0))
    W = [list(r) for r in m.heads[h].W]
    W[i][j] += delta
    heads = list(m.heads)
    heads[h] = AttentionHead(W, m.heads[h].v)
    m2 = MultiHeadAttention(heads)
    assert m.canonical() != m2.canonical()
    assert not same_function(m, m2)
    # and the functions really differ: on [(e_i + c·u), e_j]-style probes some answer changes
    probes = []
    for c in (1, 2, 3):
        for k in range(d):
            x = [0] * d
            x[j] = 1
            u = [0] * d
            u[i] = c
            u[k] += 1
            probes.append([[a + b for a, b in zip(x, u)], x])
    assert any(m(q, "exact") != m2(q, "exact") for q in probes)


@given(dims, seeds)
@pytest.mark.slow
def test_heads_whose_values_cancel_are_dropped(d, seed):
    m = ea.random_multi_head(d, 2, seed=seed)
    (W1, v1), (W2, v2) = [(h.W, h.v) for h in m.heads]
    cancel = MultiHeadAttention([(W1, v1), (W2, v2), (W1, [-x for x in v1])])
    c = cancel.canonical()
    assert len(c) == 1 and c.heads[0] == AttentionHead(W2, v2)
    assert same_function(cancel, [(W2, v2)])
    everything_cancels = MultiHeadAttention([(W1, v1), (W1, [-x for x in v1])])
    empty = everything_cancels.canonical()
    assert len(empty) == 0 and empty.dim == d
    assert same_function(everything_cancels, MultiHeadAttention([], dim=d))
    for q in _queries(d, seed):
        assert everything_cancels(q, "exact") == 0
        assert empty(q, "exact") == 0
        assert cancel(q, "exact") == MultiHeadAttention([(W2, v2)])(q, "exact")
    with pytest.raises(ea.QueryError):
        empty([[1] * (d + 1)], "exact")


@given(dims, n_heads, seeds)
def test_canonical_is_idempotent_and_deterministic(d, H, seed):
    m = ea.random_multi_head(d, H, seed=seed)
    c = m.canonical()
    assert c.canonical() == c
    assert MultiHeadAttention(list(reversed(m.heads))).canonical() == c
    # random_multi_head(distinct=True) is canonical with exactly H heads
    assert len(c) == H and set(c.heads) == set(m.heads)


def test_same_function_accepts_head_lists_and_fractions_vs_ints():
    a = [([[1, 0], [0, 1]], [1, 2])]
    b = [([[Fraction(1), Fraction(0)], [0, 1]], [Fraction(2, 2), 2])]
    assert same_function(a, b)
    assert not same_function(a, [([[1, 0], [0, 1]], [1, 3])])
    assert not same_function(a, [([[1, 0], [0, 2]], [1, 2])])


def test_random_generators_are_seeded_and_sized():
    a = ea.random_multi_head(4, 3, seed=7)
    assert a == ea.random_multi_head(4, 3, seed=7)
    assert a != ea.random_multi_head(4, 3, seed=8)
    assert a.dim == 4 and len(a) == 3 and a.is_rational
    assert all(x != 0 for h in a.heads for x in h.v)
    assert len({h.W for h in a.heads}) == 3
    r = ea.random_multi_head(3, 2, seed=1, kind="real")
    assert not r.is_rational and r == ea.random_multi_head(3, 2, seed=1, kind="real")
    assert ea.random_head(2, seed=3) == ea.random_head(2, seed=3)
    with pytest.raises(ValueError):
        ea.random_head(0)
    with pytest.raises(ValueError):
        ea.random_head(2, kind="complex")
    with pytest.raises(ValueError):
        ea.random_multi_head(2, -1)
    with pytest.raises(ValueError, match="distinct"):
        ea.random_multi_head(1, 10, seed=0)  # only 7 possible W in dimension 1


# ---------------------------------------------------------------------- JSON
@given(dims, st.integers(0, 3), seeds)
def test_json_round_trip_rational(d, H, seed):
    m = ea.random_multi_head(d, H, seed=seed)
    text = ea.model_to_json(m)
    data = json.loads(text)
    assert data["entries"] == "rational" and data["dim"] == d
    assert all(isinstance(x, str) for h in data["heads"] for r in h["W"] for x in r)
    back = ea.model_from_json(text)
    assert back == m and back.dim == d
    assert ea.model_from_json(data) == m
    for q in _queries(d, seed, 2):
        assert back(q, "exact") == m(q, "exact")


def test_json_rationals_are_strings_p_over_q():
    m = MultiHeadAttention([([[Fraction(-3, 4)]], [Fraction(5, 2)])])
    data = json.loads(ea.model_to_json(m))
    assert data["heads"][0] == {"W": [["-3/4"]], "v": ["5/2"]}
    assert ea.model_to_json(m.heads[0]) == ea.model_to_json(m)


@given(dims, n_heads, seeds)
def test_json_round_trip_real_float(d, H, seed):
    m = ea.random_multi_head(d, H, seed=seed, kind="real")
    back = ea.model_from_json(ea.model_to_json(m))
    assert back == m  # floats are written with repr and read back exactly
    q = _queries(d, seed, 2)[1]
    assert back(q, "float") == m(q, "float")


def test_json_round_trip_real_high_precision():
    ctx = get_backend("mp", dps=40).ctx
    W = [[ctx.mpf(1) / 3, ctx.mpf(2) / 7], [ctx.sqrt(2), ctx.pi / 10]]
    v = [ctx.e, ctx.mpf(-1) / 9]
    m = MultiHeadAttention([(W, v)])
    back = ea.model_from_json(ea.model_to_json(m))
    assert back == m  # every bit of the 40-digit entries survives
    q = [[1, 2], [0, -1]]
    assert abs(back(q, MP) - m(q, MP)) < MP.ctx.mpf(10) ** -38


def test_load_model_from_file(tmp_path):
    m = ea.random_multi_head(3, 2, seed=9)
    p = tmp_path / "m.json"
    p.write_text(ea.model_to_json(m))
    assert ea.load_model(str(p)) == m


@pytest.mark.parametrize("text, err, match", [
    ("[1, 2]", ValueError, "heads"),
    ('{"dim": 2}', ValueError, "heads"),
    ('{"heads": 3}', ValueError, "list"),
    ('{"heads": [{"W": [["1"]]}]}', ValueError, r"heads\[0\]"),
    ('{"heads": [{"W": [["1.5"]], "v": ["1"]}]}', ValueError, r"heads\[0\]\.W\[0\]\[0\]"),
    ('{"heads": [{"W": [[0.5]], "v": ["1"]}]}', TypeError, r"heads\[0\]\.W\[0\]\[0\]"),
    ('{"heads": [{"W": [["1"]], "v": ["1/0"]}]}', ValueError, r"heads\[0\]\.v\[0\]"),
    ('{"heads": [{"W": [["1", "2"]], "v": ["1"]}]}', ValueError, r"heads\[0\]"),
    ('{"heads": [{"W": [["1"]], "v": ["1", "2"]}]}', ValueError, r"heads\[0\]"),
    ('{"dim": 3, "heads": [{"W": [["1"]], "v": ["1"]}]}', ValueError, "dim"),
    ('{"entries": "complex", "heads": []}', ValueError, "entries"),
    ('{"entries": "real", "heads": [{"W": [["x"]], "v": ["1"]}]}', ValueError, "not a real"),
    ('{"entries": "real", "heads": [{"W": [[1.5]], "v": ["1"]}]}', TypeError, "strings"),
    ("{not json", ValueError, "not valid JSON"),
])
def test_bad_json_errors(text, err, match):
    with pytest.raises(err, match=match):
        ea.model_from_json(text)


def test_zero_head_model_keeps_dim_through_json():
    m = ea.random_multi_head(3, 0, seed=0)
    assert m.dim == 3 and len(m) == 0
    back = ea.model_from_json(ea.model_to_json(m))
    assert back.dim == 3 and len(back) == 0
    assert back([[1, 2, 3]], "exact") == 0
    with pytest.raises(ea.QueryError):
        back([[1, 2]], "exact")


def test_real_model_mp_and_float_agree():
    m = ea.random_multi_head(4, 3, seed=2, kind="real")
    q = [[1, 0, -1, 2], [0, 1, 1, 1], [2, -1, 0, 1]]
    y = m(q, MP)
    with mpmath.workdps(50):
        assert abs(y - m(q, "float")) < 1e-12

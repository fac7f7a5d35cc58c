"""Decoder-style models (docs/decoders.md): the causal model's outputs at every position, the
copy-count family of one causal query, ALiBi's S_k, the residual, the canonical form by
(W, slope), model files and their errors."""

import json
from fractions import Fraction as F

import mpmath
import pytest
from hypothesis import given, strategies as st

from exactattn.arith.expfield import exp_rational
from exactattn.models.attention import AttentionHead, MultiHeadAttention, model_from_json
from exactattn.models.decoder import (CausalAttention, causal_from_json, causal_to_json,
                                      random_causal)


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def test_position_p_is_the_prefix_read_at_its_last_token():
    m = random_causal(3, 2, seed=5)
    q = [[1, -2, 3], [0, 1, 1], [2, 2, -1], [1, 0, 0]]
    outs = m(q)
    mh = MultiHeadAttention(m.heads)
    assert len(outs) == 4
    assert all(o == mh(q[:p + 1]) for p, o in enumerate(outs))


def test_one_causal_query_is_the_whole_copy_count_family():
    """[x − u, x × (n−1)] at position k+1: G̃(k) = v·x − Σ (v_h·u)/(1 + k e^{uᵀW_h x})."""
    m = random_causal(2, 2, seed=7)
    x, u = [3, -1], [1, 2]
    q = [[a - b for a, b in zip(x, u)]] + [x] * 5
    v = [sum(h.v[i] for h in m.heads) for i in range(2)]
    for k, out in enumerate(m(q)):
        want = exp_rational(0) * dot(v, x)
        for h in m.heads:
            s = sum(u[i] * h.W[i][j] * x[j] for i in range(2) for j in range(2))
            want = want - dot(h.v, u) / (1 + k * exp_rational(s))
        assert out == want


def test_alibi_family_is_rational_in_s_k():
    """With slope s: G̃(k) = v·x − Σ (v_h·u)/(1 + S_k z_h), S_k = Σ_{i≤k} e^{i s}."""
    s = F(1, 3)
    m = random_causal(2, 2, seed=2, slopes=s)
    x, u = [2, 1], [-1, 3]
    q = [[a - b for a, b in zip(x, u)]] + [x] * 4
    v = [sum(h.v[i] for h in m.heads) for i in range(2)]
    for k, out in enumerate(m(q)):
        S = sum((exp_rational(s * i) for i in range(1, k + 1)), exp_rational(0) * 0)
        want = exp_rational(0) * dot(v, x)
        for h in m.heads:
            z = exp_rational(sum(u[i] * h.W[i][j] * x[j] for i in range(2) for j in range(2)))
            want = want - dot(h.v, u) / (1 + S * z)
        assert out == want


def test_residual_adds_w_dot_x_p_at_every_position():
    m = random_causal(2, 2, seed=1, residual=True)
    plain = CausalAttention(m.heads)
    q = [[1, 2], [3, -1], [0, 5]]
    for o, p, x in zip(m(q), plain(q), q):
        assert o == p + dot(m.residual, x)


def test_biased_path_with_a_zero_slope_head_is_that_head_unbiased():
    """Head 1 with slope 0 inside a model with slopes evaluates as the plain head."""
    a, b = random_causal(2, 2, seed=4).heads
    q = [[1, 0], [2, 3], [-1, 1]]
    both = CausalAttention([a, b], [0, F(1, 2)])(q)
    only_b = CausalAttention([b], [F(1, 2)])(q)
    only_a = CausalAttention([a])(q)
    assert all(x == y + z for x, y, z in zip(both, only_a, only_b))


def test_exact_and_mp_agree():
    m = random_causal(2, 2, seed=3, slopes=[F(1, 2), F(1, 5)], residual=True)
    q = [[1, 1], [2, -3], [0, 1]]
    for e, r in zip(m(q), m(q, "mp", 40)):
        assert abs(e.to_mpf(40) - r) < mpmath.mpf(10) ** -35


def test_canonical_merges_equal_w_and_slope_only():
    h = AttentionHead([[1, 0], [0, 1]], [1, 2])
    g = AttentionHead([[1, 0], [0, 1]], [3, -1])
    same = CausalAttention([h, g], [F(1, 2), F(1, 2)]).canonical()
    assert len(same) == 1 and same.heads[0].v == (F(4), F(1))
    apart = CausalAttention([h, g], [F(1, 2), F(1, 4)]).canonical()
    assert len(apart) == 2
    # and apart they are a different function from the merged model
    q = [[1, 2], [0, 1], [2, 2]]
    merged = CausalAttention([AttentionHead(h.W, [4, 1])], [F(1, 2)])
    assert apart(q) != merged(q)
    cancel = CausalAttention([h, AttentionHead(h.W, [-1, -2])], [F(1, 3), F(1, 3)]).canonical()
    assert len(cancel) == 0


@given(st.lists(st.integers(-3, 3), min_size=4, max_size=4),
       st.lists(st.integers(-3, 3), min_size=2, max_size=2),
       st.sampled_from([F(0), F(1, 2), F(1, 4)]))
def test_canonical_form_is_the_same_function(w, v, s):
    """Raw and canonical models agree exactly (a law for every split of v)."""
    W = [w[:2], w[2:]]
    h1, h2 = AttentionHead(W, v), AttentionHead(W, [1 - x for x in v])
    raw = CausalAttention([h1, h2, AttentionHead([[1, 1], [0, 0]], [1, 0])], [s, s, F(1, 3)])
    q = [[1, -1], [2, 0], [0, 3]]
    assert raw(q) == raw.canonical()(q)


def test_json_round_trip_and_kinds():
    m = random_causal(2, 2, seed=1, slopes=[F(1, 2), F(1, 4)], residual=True)
    back = causal_from_json(causal_to_json(m))
    assert back == m
    plain = json.dumps({"type": "multi-head-attention", "heads": [
        {"W": [["1", "0"], ["0", "1"]], "v": ["1", "2"]}]})
    assert causal_from_json(plain).slopes is None


@pytest.mark.parametrize("doc, words", [
    ({"type": "multi-head-attention", "heads": [{"W": [["1"]], "v": ["1"], "slope": "1/2"}]},
     "mixing kinds"),
    ({"type": "multi-head-attention", "residual": ["1"], "heads": []}, "mixing kinds"),
    ({"type": "causal-attention", "A": [["1"]], "heads": []}, "unknown key"),
    ({"type": "causal-attention", "heads": [{"W": [["1"]], "v": ["1"], "V": [["1"]]}]},
     "unknown key"),
    ({"type": "causal-attention", "heads": [{"W": [["1"]], "v": ["1"], "slope": "x"}]},
     "not a rational"),
])
def test_a_file_mixing_kinds_is_one_line_error(doc, words):
    with pytest.raises(ValueError) as e:
        causal_from_json(doc)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_multi_head_reader_refuses_a_causal_file():
    with pytest.raises(ValueError, match="causal attention model"):
        model_from_json({"type": "causal-attention", "heads": []})


def test_irrational_slope_on_exact_backend_is_one_line_error():
    m = CausalAttention(random_causal(2, 1, seed=1).heads, [mpmath.sqrt(2)])
    with pytest.raises(TypeError) as e:
        m([[1, 2]])
    assert "not rational" in str(e.value) and "\n" not in str(e.value)
    assert m([[1, 2], [0, 1]], "mp")        # the mp backend takes it


def test_final_token_family_with_a_residual_shifts_only_its_constant():
    """docs/decoders.md §5: for P2's final-token oracle a residual adds w·x to K and G(0) of
    I(u, x) alike — the family stays on its curve, with P2's poles and residues."""
    m = random_causal(2, 2, seed=8, residual=True)
    mh = MultiHeadAttention(m.heads)
    x, u = [2, -1], [1, 3]
    v = [sum(h.v[i] for h in m.heads) for i in range(2)]
    for k in range(5):
        q = [[a + b for a, b in zip(x, u)]] * k + [x]
        out = m(q)[-1]                                   # the last position: P2's oracle
        want = dot(v, [a + b for a, b in zip(x, u)]) + dot(m.residual, x)
        for h in m.heads:
            s = sum(u[i] * h.W[i][j] * x[j] for i in range(2) for j in range(2))
            want = want - dot(h.v, u) / (1 + k * exp_rational(s))
        assert out == want and out == mh(q) + dot(m.residual, x)


@given(st.lists(st.lists(st.integers(-4, 4), min_size=2, max_size=2), min_size=1, max_size=5),
       st.integers(1, 5), st.sampled_from([None, F(1, 2), [F(1, 2), F(1, 4)]]), st.booleans())
def test_causality_outputs_of_a_prefix_are_the_prefix_outputs(q, p, slopes, residual):
    """The causal law: position p's output depends on x_1 … x_p only (every slope, residual)."""
    m = random_causal(2, 2, seed=9, slopes=slopes, residual=residual)
    p = min(p, len(q))
    assert m(q)[:p] == m(q[:p])

"""One-layer Transformer (docs/design.md §1): the model on every backend, its canonical forms, the
bias-free ReLU-network learner (P1 one-layer reduction), the P1 and P2 Transformer learners
(exact functional equivalence, named failures) and the mp backend."""

import json
import random
from fractions import Fraction as F

import mpmath
import pytest
from conftest import run_cli

import exactattn as ea
from exactattn.learners.transformer.relu_ffn import TooManyUnits, learn_relu_ffn
from exactattn.learners.transformer.one_layer import (antisymmetric_oracle, learn_transformer,
                                            learn_transformer_p1, learn_transformer_p2)
from exactattn.models.transformer import (OneLayerTransformer, Scalars, _unit_form, first_disagreement,
                                   normalize_direction, random_sequences, random_transformer,
                                   same_transformer_function, transformer_distance,
                                   transformer_from_json, transformer_to_json)


def _agrees_on_transcript(model, oracle):
    return all(model([list(t) for t in toks]) == y for toks, y in oracle.transcript)


def _invisible_head(d=2, seed=5):
    """V_2 = n mᵀ with m ⊥ Aw: V_2 A w = 0 but V_2 A ≠ 0 (condition C1 violated)."""
    base = random_transformer(d, 2, 2, seed=seed)
    (W1, V1), (W2, _) = base.heads
    Aw = [sum(base.A[i][j] * base.w[j] for j in range(2)) for i in range(d)]
    m = [-Aw[1], Aw[0]] + [0] * (d - 2)
    V2 = [[(i + 1) * x for x in m] for i in range(d)]
    return OneLayerTransformer([(W1, V1), (W2, V2)], base.A, base.w)


# ---------------------------------------------------------------------- the model
def test_evaluation_on_every_backend_and_antisymmetric_part():
    T = random_transformer(3, 2, 4, seed=1)
    X = [[1, 2, -1], [0, F(1, 2), 3], [2, -1, 1]]
    y = T(X)
    assert isinstance(y, ea.ExpElement)
    assert abs(T(X, "mp", dps=40) - y.to_mpf(40)) < mpmath.mpf(10) ** -35
    assert abs(T(X, "float") - float(y)) < 1e-9
    assert abs(ea.get_backend("symbolic").to_mpf(T(X, "symbolic")) - y.to_mpf(30)) < 1e-12
    minus = [[-x for x in t] for t in X]
    assert y - T(minus) == T.attention_part()(X)          # T(X) − T(−X) = Σ_h (V_h A w)·p_h
    assert sum(w * max(z, 0) for w, z in zip(T.w, T.preactivations(X))) == y


def test_json_round_trip_rational_and_real():
    T = random_transformer(2, 2, 3, seed=4)
    back = transformer_from_json(transformer_to_json(T))
    assert back == T and json.loads(transformer_to_json(T))["entries"] == "rational"
    R = random_transformer(2, 2, 3, seed=4, kind="real")
    R2 = transformer_from_json(transformer_to_json(R))
    X = [[0.3, -1.2], [0.5, 0.25]]
    assert abs(R(X, "mp", dps=40) - R2(X, "mp", dps=40)) < mpmath.mpf(10) ** -30
    with pytest.raises(TypeError):
        R(X)                                                # real model on the exact backend
    with pytest.raises(ValueError):
        transformer_from_json({"type": "multi-head-attention"})


def test_canonical_forms_merge_heads_rescale_and_merge_parallel_units():
    T = random_transformer(2, 1, 2, seed=2)
    (W, V), A, w = T.heads[0], T.A, T.w
    # head split in two with equal W; unit 0 rescaled by 3 (w/3); unit 1 split into two copies
    halfV = [[x / 2 for x in r] for r in V]
    A2 = [[3 * r[0], r[1], r[1]] for r in A]
    w2 = [w[0] / 3, w[1] / 4, 3 * w[1] / 4]
    S = OneLayerTransformer([(W, halfV), (W, halfV)], A2, w2)
    assert S.unit_form() == T.unit_form() and S.kink_form() == T.kink_form()
    assert same_transformer_function(S, T)
    assert first_disagreement(S, T, random_sequences(2, 20, 5, seed=0)) is None
    # antiparallel units: w ReLU(z) + w' ReLU(−z) — different units, one kink form only if equal
    U = OneLayerTransformer([(W, V)], [[A[0][0], -A[0][0]], [A[1][0], -A[1][0]]], [1, -1])
    L = OneLayerTransformer([(W, V)], [[A[0][0], -A[0][0]], [A[1][0], -A[1][0]]], [2, -2])
    assert U.kink_form() != L.kink_form() and len(U.kink_form().terms) == 0


# ---------------------------------------------------------------------- ReLU learner
def _net(units):
    def f(x):
        return sum((w * max(F(0), sum((a * b for a, b in zip(u, x)), F(0))) for w, u in units),
                   F(0))
    return f


@pytest.mark.parametrize("n,k", [(1, 3), (2, 4), (3, 2), (3, 5)])
def test_relu_ffn_recovers_units_exactly(n, k):
    rng = random.Random(10 * n + k)
    units = [(F(rng.choice([-3, -2, -1, 1, 2, 3])),
              [F(rng.randint(-5, 5), rng.randint(1, 4)) for _ in range(n)]) for _ in range(k)]
    res = learn_relu_ffn(_net(units), n, hidden=k, seed=1)
    num = Scalars(True)
    lines = {normalize_direction(u, num)[1] for _, u in units}
    if n > 1 and len(lines) == k:          # no parallel units: the units themselves are found
        assert res.units_unique and res.unit_form() == _unit_form((), units, num)
    probe = [[F(rng.randint(-9, 9), 7) for _ in range(n)] for _ in range(30)]
    assert all(res.form(x, ea.get_backend("exact")) == _net(units)(x) for x in probe)
    assert res.queries == len(res.transcript)


def test_relu_ffn_width_bound_and_not_relu():
    units = [(F(1), [1, 0]), (F(-2), [1, 1]), (F(3), [0, 1])]
    with pytest.raises(TooManyUnits):
        learn_relu_ffn(_net(units), 2, hidden=2, seed=0)
    with pytest.raises(ea.LearningFailure):
        learn_relu_ffn(lambda x: F(x[0]) ** 2 + F(x[1]) ** 2, 2, hidden=3, seed=0)


# ---------------------------------------------------------------------- learners, exact
@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("H", [1, 2])
@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.slow
def test_p2_functional_equivalence_exact(d, H, k):
    T = random_transformer(d, H, k, seed=1000 + 100 * d + 10 * H + k)
    oracle = ea.Oracle(T)
    res = learn_transformer_p2(oracle, d, heads=H, hidden=k, seed=d * H + k)
    R = res.transformer
    assert _agrees_on_transcript(R, oracle)
    assert first_disagreement(T, R, random_sequences(d, 100, 2 * H + 3, seed=k)) is None
    assert R.kink_form() == T.kink_form()
    assert res.units_identified and R.unit_form() == T.unit_form()
    att = 4 * H * d * d - 2 * H + 1                      # P2 count, antisymmetric queries
    assert res.attention_queries == 2 * att
    assert res.queries == oracle.queries == res.attention_queries + res.ffn_queries


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.slow
def test_p1_functional_equivalence_exact(d, k):
    T = random_transformer(d, 1, k, seed=500 + 10 * d + k)
    oracle = ea.Oracle(T)
    res = learn_transformer(oracle, d, hidden=k, seed=k, method="p1")
    R = res.transformer
    assert _agrees_on_transcript(R, oracle)
    assert first_disagreement(T, R, random_sequences(d, 100, 5, seed=k)) is None
    assert R.kink_form() == T.kink_form()
    assert res.attention_queries == 2 * (d * d + d)       # P1 Thm 4.1, antisymmetric
    assert res.max_length == 2


def test_antisymmetric_oracle_counts_two_calls():
    T = random_transformer(2, 1, 2, seed=3)
    oracle = ea.Oracle(T)
    anti = antisymmetric_oracle(oracle)
    X = [[1, 2], [F(1, 3), -1]]
    assert anti(X) == T.attention_part()(X) and oracle.queries == 2


@pytest.mark.slow
def test_violated_conditions_are_named_failures():
    bad = _invisible_head()
    with pytest.raises(ea.InvisibleHead):
        learn_transformer_p2(ea.Oracle(bad), 2, heads=2, hidden=2, seed=0)
    (W1, V1), (W2, V2) = bad.heads
    one = OneLayerTransformer([(W2, V2)], bad.A, bad.w)           # V A w = 0
    with pytest.raises(ea.NotIdentifiable):
        learn_transformer_p1(ea.Oracle(one), 2, hidden=2, seed=0)
    T = random_transformer(2, 1, 4, seed=3)
    for method in ("p1", "p2"):
        with pytest.raises(TooManyUnits):
            learn_transformer(ea.Oracle(T), 2, heads=1, hidden=2, seed=0, method=method)


def test_irrelevant_head_is_dropped_not_a_failure():
    base = random_transformer(2, 2, 2, seed=5)
    (W1, V1), (W2, _) = base.heads
    T = OneLayerTransformer([(W1, V1), (W2, [[0, 0], [0, 0]])], base.A, base.w)
    res = learn_transformer_p2(ea.Oracle(T), 2, heads=2, hidden=2, seed=0)
    assert same_transformer_function(T, res.transformer) and len(res.heads) == 1


# ---------------------------------------------------------------------- mp backend
@pytest.mark.parametrize("d,H,k,method", [(2, 1, 4, "p1"), (3, 1, 2, "p2"), (2, 2, 4, "p2"),
                                          (3, 2, 2, "p2")])
@pytest.mark.slow
def test_mp_recovers_gaussian_transformers(d, H, k, method):
    T = random_transformer(d, H, k, seed=40 + d + H + k, kind="real")
    oracle = ea.Oracle(T, backend="mp", dps=60)
    res = learn_transformer(oracle, d, heads=H, hidden=k, seed=2, method=method)
    assert transformer_distance(T, res.transformer, dps=60) < mpmath.mpf("1e-30")
    assert first_disagreement(T, res.transformer, random_sequences(d, 20, 2 * H + 3, seed=1,
                                                                   kind="real"),
                              backend="mp", dps=60, tol=mpmath.mpf("1e-30")) is None


# ---------------------------------------------------------------------- CLI
@pytest.mark.slow
def test_cli_learn_transformer_json():
    out = run_cli(["learn", "transformer", "--dim", "2", "--heads", "2", "--hidden", "3",
                   "--seed", "1", "--json"])
    assert out.returncode == 0, out.stderr
    o = json.loads(out.stdout)
    assert o["recovered"] and o["attention_queries"] == 2 * (4 * 2 * 4 - 4 + 1)
    assert o["queries"] == o["attention_queries"] + o["ffn_queries"]
    bad = run_cli(["learn", "multi-head", "--dim", "2", "--hidden", "3"])
    assert bad.returncode == 2

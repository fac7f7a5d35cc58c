"""The backends agree (docs/design.md §2): softmax outputs of random rational models on the exact,
mp(dps=50) and float backends; linear algebra; backend selection; input coercion errors."""

import random
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import exactattn as ea
from exactattn.arith import (ExactBackend, ExpElement, FloatBackend, MPBackend,
                             SymbolicBackend, get_backend)
from exactattn.errors import SingularSystem

EXACT, MP, FLOAT = get_backend("exact"), get_backend("mp", dps=50), get_backend("float")


def _query(rng, d, n, lo=-3, hi=3):
    return [[rng.randint(lo, hi) for _ in range(d)] for _ in range(n)]


def _copy_count(rng, d, m):
    """[(x+u) repeated m times, x] (docs/design.md §4.3), integer entries in [-3, 3]."""
    x = [rng.randint(-3, 3) for _ in range(d)]
    u = [rng.randint(-3, 3) for _ in range(d)]
    return [[a + b for a, b in zip(x, u)]] * m + [x]


# ---------------------------------------------------------------------- softmax outputs
@given(st.integers(1, 5), st.integers(1, 4), st.integers(0, 10 ** 6), st.integers(1, 6),
       st.booleans())
@pytest.mark.slow
def test_exact_mp_float_agree_on_random_rational_models(d, H, seed, n, copy_count):
    m = ea.random_multi_head(d, H, seed=seed)
    rng = random.Random(seed)
    q = _copy_count(rng, d, n) if copy_count else _query(rng, d, n)
    y_exact = m(q, EXACT)
    y_mp = m(q, MP)
    y_float = m(q, FLOAT)
    assert isinstance(y_exact, ExpElement)
    assert isinstance(y_mp, MP.ctx.mpf)
    assert isinstance(y_float, float)
    with mpmath.workdps(60):
        ref = y_exact.to_mpf(60)
        scale = max(abs(ref), mpmath.mpf(1))
        # exact agrees with mp(dps=50) to 40 digits
        assert abs(ref - mpmath.mpf(y_mp)) <= scale * mpmath.mpf(10) ** -40
        # float64 to about 1e-9 relative
        assert abs(ref - y_float) <= scale * mpmath.mpf(10) ** -9


@given(st.integers(1, 4), st.integers(1, 3), st.integers(0, 10 ** 6))
@pytest.mark.slow
def test_rational_tokens_and_softmax_weights_exact(d, H, seed):
    # tokens with denominators: scores get new denominators, L is the lcm; compare with an
    # independent exact evaluation through the field operations of the backend interface
    m = ea.random_multi_head(d, H, seed=seed)
    rng = random.Random(seed + 1)
    q = [[Fraction(rng.randint(-4, 4), rng.choice([1, 2, 3])) for _ in range(d)]
         for _ in range(rng.randint(1, 4))]
    fast = m(q, EXACT)
    slow = ExpElement.from_rational(0)
    xN = q[-1]
    for h in m.heads:
        scores = [sum(x[i] * h.W[i][j] * xN[j] for i in range(d) for j in range(d)) for x in q]
        weights = [ea.arith.exp_rational(s) for s in scores]
        values = [sum(vi * xi for vi, xi in zip(h.v, x)) for x in q]
        slow = slow + sum((w * a for w, a in zip(weights, values)), ExpElement.from_rational(0)) \
            / sum(weights, ExpElement.from_rational(0))
    assert fast == slow
    assert hash(fast) == hash(slow)


def test_single_token_is_exactly_rational_on_every_backend():
    m = ea.random_multi_head(4, 3, seed=11)
    x = [2, -1, 0, 3]
    expect = sum(sum(v * xi for v, xi in zip(h.v, x)) for h in m.heads)
    y = m([x], EXACT)
    assert y.is_rational() and y.as_rational() == expect
    assert MP.is_zero(m([x], MP) - MP.scalar(expect))
    assert m([x], "symbolic") == sympy.Rational(expect.numerator, expect.denominator)


def test_symbolic_backend_agrees_with_exact():
    m = ea.random_multi_head(2, 2, seed=3)
    q = [[1, 0], [0, 1], [1, -1]]
    y_sym = m(q, "symbolic")
    y_exact = m(q, EXACT)
    with mpmath.workdps(40):
        assert abs(sympy.N(y_sym, 40) - sympy.Float(str(y_exact.to_mpf(40)), 40)) < 1e-35


def test_exact_differs_where_float_cannot_tell():
    # two heads whose outputs differ by ~5e-22, far below float resolution: exact equality
    # (by cross-multiplication in Q(t), here with L ~ 10^20) still tells them apart
    W1 = [[Fraction(1, 1000)]]
    W2 = [[Fraction(1, 1000) + Fraction(1, 10 ** 21)]]
    q = [[1], [2]]
    a = ea.MultiHeadAttention([(W1, [1])])(q, EXACT)
    b = ea.MultiHeadAttention([(W2, [1])])(q, EXACT)
    assert a != b and not (a == b)
    assert a == ea.MultiHeadAttention([(W1, [1])])(q, EXACT)
    fa = ea.MultiHeadAttention([(W1, [1])])(q, FLOAT)
    fb = ea.MultiHeadAttention([(W2, [1])])(q, FLOAT)
    assert fa == fb
    with mpmath.workdps(50):
        gap = b.to_mpf(45) - a.to_mpf(45)
        assert mpmath.mpf("4e-22") < gap < mpmath.mpf("6e-22")


# ---------------------------------------------------------------------- linear algebra
@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 3), st.integers(0, 10 ** 6))
def test_mp_solve_is_lu_solve_column_by_column(n, m, seed):
    """The mp backend's solve (A factored once) gives the very numbers of mpmath's lu_solve
    asked column by column (which factors A again each time), and the same refusal of a
    singular A — a planted change of working precision or pivoting would differ."""
    rng = random.Random(seed)
    A = [[MP.scalar(rng.gauss(0, 1)) for _ in range(n)] for _ in range(n)]
    if rng.random() < 0.2:
        A[-1] = list(A[0])                             # singular
    B = [[MP.scalar(rng.gauss(0, 1)) for _ in range(m)] for _ in range(n)]
    ctx = MP.ctx
    try:
        cols = [ctx.lu_solve(ctx.matrix(A), ctx.matrix([r[j] for r in B])) for j in range(m)]
    except ZeroDivisionError:
        with pytest.raises(SingularSystem):
            MP.solve(A, B)
        return
    X = MP.solve(A, B)
    assert X == [[c[i] for c in cols] for i in range(n)]


@given(st.integers(1, 5), st.integers(0, 10 ** 6))
@pytest.mark.slow
def test_solve_inv_matmul_agree(n, seed):
    rng = random.Random(seed)
    A = [[Fraction(rng.randint(-5, 5), rng.randint(1, 4)) for _ in range(n)] for _ in range(n)]
    B = [[Fraction(rng.randint(-5, 5)) for _ in range(2)] for _ in range(n)]
    if sympy.Matrix(A).det() == 0:
        with pytest.raises(SingularSystem):
            EXACT.solve(A, B)
        return
    X = EXACT.solve(A, B)
    assert EXACT.matmul(A, X) == B                       # exact: A X = B exactly
    Ainv = EXACT.inv(A)
    I = [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]
    assert EXACT.matmul(A, Ainv) == I and EXACT.matmul(Ainv, A) == I
    assert all(isinstance(x, Fraction) for r in X for x in r)
    assert sympy.Matrix(X) == sympy.Matrix(A).LUsolve(sympy.Matrix(B))
    Amp = [[MP.scalar(x) for x in r] for r in A]
    Bmp = [[MP.scalar(x) for x in r] for r in B]
    Xmp = MP.solve(Amp, Bmp)
    Xf = FLOAT.solve(A, B)
    cond = np.linalg.cond(np.array(A, dtype=float))
    for i in range(n):
        for j in range(2):
            exact = MP.scalar(X[i][j])
            assert abs(Xmp[i][j] - exact) <= MP.ctx.mpf(10) ** -35 * (1 + abs(exact)) * cond
            assert abs(Xf[i][j] - float(X[i][j])) <= 1e-9 * (1 + abs(float(X[i][j]))) * cond
    Cmp = MP.matmul(Amp, Xmp)
    Cf = FLOAT.matmul(A, Xf)
    for i in range(n):
        for j in range(2):
            assert abs(Cmp[i][j] - B[i][j]) <= MP.ctx.mpf(10) ** -35 * cond
            assert abs(Cf[i][j] - float(B[i][j])) <= 1e-9 * cond


@pytest.mark.parametrize("be", [EXACT, MP, FLOAT, get_backend("symbolic")], ids=lambda b: b.name)
def test_singular_systems_raise(be):
    with pytest.raises(SingularSystem):
        be.solve([[1, 2], [2, 4]], [[1], [1]])


def test_exact_log_and_exp_roundtrip_through_backend():
    for s in [Fraction(0), Fraction(-7, 3), Fraction(5, 12)]:
        assert EXACT.log(EXACT.exp(s)) == s
        assert abs(MP.log(MP.exp(MP.scalar(s))) - MP.scalar(s)) < MP.ctx.mpf(10) ** -45
    assert EXACT.is_zero(EXACT.exp(Fraction(1, 3)) - EXACT.exp(Fraction(2, 6)))
    assert not EXACT.is_zero(EXACT.exp(Fraction(1, 3)) - EXACT.exp(Fraction(1, 4)))
    assert EXACT.sign(EXACT.exp(Fraction(1, 3)) - EXACT.exp(Fraction(1, 4))) == 1
    with pytest.raises(ValueError):
        MP.log(MP.scalar(-1))
    with pytest.raises(ValueError):
        FLOAT.log(0.0)


# ---------------------------------------------------------------------- get_backend
def test_get_backend_selection_and_errors():
    assert isinstance(get_backend("exact"), ExactBackend)
    assert isinstance(get_backend("float"), FloatBackend)
    assert isinstance(get_backend("symbolic"), SymbolicBackend)
    mp = get_backend("mp", dps=30)
    assert isinstance(mp, MPBackend) and mp.dps == 30
    assert get_backend("mp").dps == 50
    assert get_backend(mp) is mp and get_backend(mp, dps=30) is mp
    with pytest.raises(ValueError, match="unknown backend"):
        get_backend("quad")
    with pytest.raises(ValueError, match="dps"):
        get_backend("exact", dps=30)
    with pytest.raises(ValueError, match="dps"):
        get_backend("float", dps=30)
    with pytest.raises(ValueError, match="dps"):
        get_backend(mp, dps=40)
    with pytest.raises(ValueError):
        get_backend("mp", dps=2)


def test_mp_contexts_are_independent_and_keep_precision():
    lo, hi = get_backend("mp", dps=20), get_backend("mp", dps=80)
    third = hi.ctx.mpf(1) / 3
    assert mpmath.mp.dps == 15  # the global context is untouched
    # an mpf from another context is converted without a detour through float
    same = get_backend("mp", dps=80).scalar(third)
    assert same == third
    assert abs(get_backend("mp", dps=50).scalar(third) - mpmath.mpf(1) / 3) < 1e-16
    with mpmath.workdps(60):
        assert abs(MP.scalar(third) - mpmath.mpf(1) / 3) < mpmath.mpf(10) ** -49
    assert abs(lo.scalar(third) * 3 - 1) < lo.ctx.mpf(10) ** -19
    assert abs(MP.scalar(sympy.Float("0.1", 60)) - MP.ctx.mpf("0.1")) < MP.ctx.mpf(10) ** -49


def test_real_model_on_mp_keeps_precision_through_plain_callable_oracle():
    m = ea.random_multi_head(3, 2, seed=4)
    q = [[1, 2, 3], [0, 1, 1]]
    o = ea.Oracle(lambda t: m(t, "mp"), dim=3, backend="mp")
    y = o(q)
    ref = m(q, EXACT).to_mpf(60)
    with mpmath.workdps(60):
        assert abs(mpmath.mpf(y) - ref) < mpmath.mpf(10) ** -45


# ---------------------------------------------------------------------- input coercion
@pytest.mark.parametrize("bad, kind", [(0.5, TypeError), (sympy.sqrt(2), ValueError),
                                       (np.float64(0.25), TypeError),
                                       (sympy.Float("0.5"), ValueError)])
def test_irrational_or_float_tokens_to_exact_name_the_entry(bad, kind):
    m = ea.random_multi_head(2, 1, seed=0)
    q = [[1, 0], [bad, 1]]
    with pytest.raises(kind, match=r"token 1, entry 0"):
        m(q, EXACT)


def test_float_and_irrational_parameters_name_the_entry_on_exact():
    W = [[1, 0], [0, 1]]
    Wf = [[1, 0.5], [0, 1]]
    m = ea.MultiHeadAttention([(Wf, [1, 1])])
    assert not m.is_rational
    with pytest.raises(TypeError, match=r"W\[0\]\[1\]"):
        m([[1, 0]], EXACT)
    # the same real model evaluates on mp and float
    assert abs(m([[1, 0], [0, 1]], FLOAT) - float(m([[1, 0], [0, 1]], MP))) < 1e-12
    m2 = ea.MultiHeadAttention([(W, [1, sympy.sqrt(2)])])
    with pytest.raises(TypeError, match=r"v\[1\]"):
        m2([[1, 0]], EXACT)
    y = m2([[0, 1]], MP)
    assert abs(y - MP.ctx.sqrt(2)) < MP.ctx.mpf(10) ** -45
    with pytest.raises(ValueError, match=r"W\[0\]\[1\]"):
        EXACT.prepare_head([[1, sympy.sqrt(2)], [0, 1]], [1, 1])
    with pytest.raises(TypeError, match=r"v\[0\]"):
        EXACT.prepare_head([[1, 0], [0, 1]], [0.5, 1])
    with pytest.raises(TypeError, match="not a number"):
        ea.MultiHeadAttention([([["a", 0], [0, 1]], [1, 1])])


def test_accepted_input_containers_give_identical_models():
    W = [[Fraction(1, 2), -1], [0, Fraction(3, 4)]]
    v = [1, Fraction(-1, 3)]
    variants = [
        (W, v),
        (np.array([[1, -1], [0, 1]], dtype=object) * np.array([[Fraction(1, 2), 1], [1, Fraction(3, 4)]],
                                                                   dtype=object), np.array(v, dtype=object)),
        (sympy.Matrix([[sympy.Rational(1, 2), -1], [0, sympy.Rational(3, 4)]]),
         sympy.Matrix([1, sympy.Rational(-1, 3)])),
        (tuple(tuple(r) for r in W), tuple(v)),
    ]
    heads = [ea.AttentionHead(Wx, vx) for Wx, vx in variants]
    assert all(h == heads[0] for h in heads)
    assert all(isinstance(x, Fraction) for h in heads for r in h.W for x in r)
    q_list = [[1, 2], [Fraction(1, 2), -1]]
    q_np = np.array([[1, 2], [3, -1]])
    y = ea.MultiHeadAttention([heads[0]])(q_list, EXACT)
    for h in heads:
        assert ea.MultiHeadAttention([h])(q_list, EXACT) == y
        assert h(np.array(q_np), EXACT) == heads[0]([[1, 2], [3, -1]], EXACT)
        assert h(sympy.Matrix([[1, 2], [3, -1]]).tolist(), EXACT) == heads[0](q_np, EXACT)
    # integer numpy arrays as parameters
    h_np = ea.AttentionHead(np.array([[1, 2], [3, 4]]), np.array([1, -1]))
    assert h_np.is_rational and h_np.W == ((1, 2), (3, 4))
    # a float numpy array is a real model: fine on mp/float, refused by exact
    h_f = ea.AttentionHead(np.array([[0.5, 0], [0, 1]]), np.array([1.0, 2.0]))
    assert not h_f.is_rational
    assert abs(h_f([[1, 0], [0, 1]], FLOAT) - float(h_f([[1, 0], [0, 1]], MP))) < 1e-12
    with pytest.raises(TypeError):
        h_f([[1, 0]], EXACT)


def test_shape_errors():
    with pytest.raises(ValueError, match="row 1"):
        ea.AttentionHead([[1, 2], [3]], [1, 1])
    with pytest.raises(ValueError, match="v"):
        ea.AttentionHead([[1, 2], [3, 4]], [1, 1, 1])
    with pytest.raises(ValueError, match="dimensions"):
        ea.MultiHeadAttention([([[1]], [1]), ([[1, 0], [0, 1]], [1, 1])])


@pytest.mark.parametrize("equal", [(1.0, 2), (1, 2.0), (True, 2)])
def test_a_row_equal_to_a_converted_integer_row_is_not_let_through(equal):
    """A batch converts each distinct integer row once; a later row equal to it in value but
    not exact — a float (1.0 == 1) or a bool (True == 1) — is refused on the exact path as it
    is alone, not answered from the integer row's conversion."""
    model = ea.random_multi_head(2, 1, seed=0)
    with pytest.raises(TypeError, match="token 0, entry"):
        model([equal], "exact")
    with pytest.raises(TypeError, match="token 0, entry"):
        model.evaluate_many([[(1, 2)], [equal]], "exact")
    oracle = ea.Oracle(model)
    with pytest.raises(TypeError, match="token 0, entry"):
        oracle.ask_many([[(1, 2)], [equal]])
    assert model.evaluate_many([[(1, 2)], [[1, 2]]], "exact") == [model([(1, 2)], "exact")] * 2


def test_mp_answers_each_query_of_a_batch_as_the_exact_value():
    """mp caches a query's scores per (heads, distinct tokens) and W_h x_N per (heads, final
    token): queries of one model sharing their final token, their other tokens, both or
    neither each agree with the exact answer to 40 digits (a key that forgot the other
    tokens or the final one would answer from another query's scores)."""
    rng = random.Random(5)
    model = ea.random_multi_head(3, 2, seed=5)
    toks = [tuple(rng.randint(-3, 3) for _ in range(3)) for _ in range(4)]
    queries = [[a, b] for a in toks for b in toks] + [[a, a, b] for a in toks for b in toks]
    for answers in (model.evaluate_many(queries, MP), [model(q, MP) for q in queries]):
        for q, y in zip(queries, answers):
            with mpmath.workdps(60):
                ref = model(q, EXACT).to_mpf(60)
                assert abs(ref - mpmath.mpf(y)) <= max(abs(ref), 1) * mpmath.mpf(10) ** -40, q


def test_a_row_is_shared_only_when_it_converts_by_value_alone():
    """Backend.caches_row: ints and Fractions (and mpf of any context on mp), never a bool or a
    float, whatever the other entries."""
    for be in (EXACT, MP):
        assert be.caches_row((1, Fraction(1, 2))) and be.caches_row(())
        assert not be.caches_row((1, True)) and not be.caches_row((Fraction(1), 1.0))
    assert MP.caches_row((mpmath.mpf(2), MP.ctx.mpf(3), 4))
    assert not EXACT.caches_row((mpmath.mpf(2), 4))

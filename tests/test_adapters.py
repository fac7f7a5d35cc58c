"""SymPy and NumPy adapters (docs/design.md §2, §3, §9)."""

import random
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import exactattn as ea
from exactattn.arith import exp_rational
from exactattn.arith import sympy_elements as sympy_adapter


def _sympy_output(model, X):
    """F(X) written in SymPy, term by term (no simplification)."""
    total = sp.Integer(0)
    for h in model.heads:
        W = sp.Matrix([[sp.Rational(x.numerator, x.denominator) for x in r] for r in h.W])
        v = sp.Matrix([sp.Rational(x.numerator, x.denominator) for x in h.v])
        xN = sp.Matrix(X[-1])
        ws = [sp.exp((sp.Matrix(x).T * W * xN)[0]) for x in X]
        vals = [(sp.Matrix(x).T * v)[0] for x in X]
        total += sp.Add(*[w * a for w, a in zip(ws, vals)]) / sp.Add(*ws)
    return total


# ---------------------------------------------------------------------- from_sympy
def test_from_sympy_is_the_model_output_at_a_large_box():
    """The softmax output in SymPy at entries ~1000 (where sympy.Poly exhausts memory)
    converts to exactly the model's exact answer."""
    m = ea.random_multi_head(3, 2, seed=1)
    rng = random.Random(0)
    X = [[rng.randint(-1000, 1000) for _ in range(3)] for _ in range(5)]
    assert ea.from_sympy(_sympy_output(m, X)) == m(X, "exact")
    other = [[x + (i == 0 and j == 0) for j, x in enumerate(t)] for i, t in enumerate(X)]
    assert ea.from_sympy(_sympy_output(m, other)) != m(X, "exact")


@settings(max_examples=40, deadline=None)
@given(st.builds(Fraction, st.integers(-60, 60), st.integers(1, 12)),
       st.builds(Fraction, st.integers(-60, 60), st.integers(1, 12)),
       st.builds(Fraction, st.integers(-9, 9), st.integers(1, 9)), st.integers(-3, 3))
@pytest.mark.slow
def test_from_sympy_is_a_homomorphism(p, q, c, n):
    """exp, +, ×, ÷ and integer powers go to the same operations in Q(t)."""
    P, Q, C = (sp.Rational(x.numerator, x.denominator) for x in (p, q, c))
    ep, eq = exp_rational(p), exp_rational(q)
    assert ea.from_sympy(sp.exp(P) * sp.exp(Q)) == ep * eq
    assert ea.from_sympy(C * sp.exp(P) + sp.exp(Q)) == ea.ExpElement.from_rational(c) * ep + eq
    assert ea.from_sympy((sp.exp(P) + 1) / (sp.exp(Q) + 2)) == (ep + 1) / (eq + 2)
    assert ea.from_sympy((sp.exp(P) + 2) ** n) == (ep + 2) ** n
    assert ea.from_sympy(sp.exp(P) ** sp.Rational(1, 3)) == exp_rational(p / 3)
    assert ea.from_sympy(sp.E) == exp_rational(1)


@pytest.mark.parametrize("expr,match", [
    (sp.sqrt(2), "non-integer power"),
    (sp.zoo, "not rational arithmetic"),
    (sp.Float("0.5"), "Float"),
    (sp.exp(sp.sqrt(2)), "not a rational"),
    (sp.Symbol("x") + 1, "free symbols"),
    (sp.log(3), "not rational arithmetic"),
    (sp.Integer(3) ** sp.Rational(1, 2), "non-integer power"),
    (sp.Pow(sp.Add(sp.exp(1), -sp.E, evaluate=False), -1, evaluate=False), "division by zero"),
])
def test_from_sympy_refuses_what_is_not_in_the_field(expr, match):
    with pytest.raises((ValueError, ZeroDivisionError), match=match):
        ea.from_sympy(expr)


def test_from_sympy_non_sympy_input():
    assert ea.from_sympy(Fraction(3, 4)) == Fraction(3, 4)
    with pytest.raises(TypeError, match="SymPy expression"):
        ea.from_sympy(0.5)


def test_exact_oracle_may_answer_in_sympy():
    """A plain callable answering with SymPy expressions is learned exactly."""
    m = ea.random_multi_head(2, 1, seed=4)
    f = lambda X: _sympy_output(m, X)  # noqa: E731
    res = ea.learn_single_head(f, 2)
    assert res.backend == "exact" and res.compare(m).equal


def test_from_sympy_converts_each_shared_subexpression_once(monkeypatch):
    calls = []
    real = sympy_adapter._Walk._convert

    def spy(self, e):
        calls.append(e)
        return real(self, e)
    monkeypatch.setattr(sympy_adapter._Walk, "_convert", spy)
    e = sp.exp(sp.Rational(1, 3))
    big = sp.Add(*[e * k for k in range(2, 50)], evaluate=False)
    ea.from_sympy(big / (e + 1))
    assert calls.count(e) == 1


# ---------------------------------------------------------------------- numpy
def _numpy_model(model):
    heads = [(np.array(h.W, dtype=float), np.array(h.v, dtype=float)) for h in model.heads]

    def f(X):
        out = 0.0
        for W, v in heads:
            s = X @ (W @ X[-1])
            w = np.exp(s - s.max())
            out += w @ (X @ v) / w.sum()
        return np.array(out)            # a 0-d array
    return f


@pytest.mark.slow
def test_numpy_oracle_learns_on_float_and_mp():
    # d = 2 (at d = 3 the float runs' error bars, a Jacobian of 24 perturbed recoveries, cost
    # ~5 s; the adapter is the same)
    m = ea.random_multi_head(2, 2, seed=3, kind="real")
    o = ea.numpy_oracle(_numpy_model(m))
    res = ea.learn_multi_head(o, 2, heads=2, seed=0)
    assert res.backend == "float" and o.probe is not None
    assert res.compare(m).max_error < 1e-7
    o2 = ea.numpy_oracle(_numpy_model(m))
    res2 = ea.learn_multi_head(o2, 2, heads=2, seed=0, backend="mp", dps=16)
    assert res2.backend == "mp" and o2.probe is None and res2.compare(m).max_error < 1e-7
    X = [[1, 2], [0, 1]]
    assert abs(o(X) - float(m(X, "mp"))) < 1e-12


def test_numpy_oracle_refuses_non_scalars():
    o = ea.numpy_oracle(lambda X: X[-1], dim=2, backend="float")
    with pytest.raises(ea.OracleError, match="one number") as e:
        o([[1, 2]])
    assert isinstance(e.value.__cause__, TypeError)
    o = ea.numpy_oracle(lambda X: np.array(1j), dim=2, backend="float")
    with pytest.raises(ea.OracleError, match="real number") as e:
        o([[1, 2]])
    assert isinstance(e.value.__cause__, TypeError)


def test_numpy_oracle_declares_a_shorter_dtype():
    """dtype=np.float32 rounds the queries to float32, so the oracle declares float32's
    precision (the learners' error bars hold at it); float64 declares nothing shorter."""
    from exactattn.learners.result.precision import (FLOAT32_PRECISION, FLOAT64_PRECISION,
                                                     declared_precision, infer_precision)
    m = ea.random_multi_head(2, 1, seed=3, kind="real")
    o32 = ea.numpy_oracle(_numpy_model(m), dim=2, dtype=np.float32)
    assert declared_precision(o32).eta == FLOAT32_PRECISION
    assert "float64" in declared_precision(o32).remedy
    assert infer_precision(o32, [0.123456789]).eta == FLOAT32_PRECISION
    o64 = ea.numpy_oracle(_numpy_model(m), dim=2)
    assert declared_precision(o64) is None
    assert infer_precision(o64, [0.123456789]).eta == FLOAT64_PRECISION
    assert declared_precision(ea.numpy_oracle(_numpy_model(m), dim=2,
                                              dtype=np.float16)).eta == Fraction(1, 4)

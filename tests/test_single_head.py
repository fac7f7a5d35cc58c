"""P1 Thm 4.1: exact single-head learning with d² + d queries of length ≤ 2."""

from fractions import Fraction as F

import mpmath
import pytest

import exactattn as ea
from exactattn.learners.result.compare import parameter_error
from exactattn.learners.p1.single_head import learn_single_head, probes


@pytest.mark.parametrize("d", range(1, 7))
def test_exact_counts_and_recovery(d):
    model = ea.random_head(d, seed=10 + d)
    oracle = ea.Oracle(model)
    res = learn_single_head(oracle, d)
    assert res.queries == d * d + d == res.expected_queries == oracle.queries
    assert res.max_length == 2 == res.expected_max_length
    W, v = res.heads[0]
    assert [list(r) for r in W] == [list(r) for r in model.W]       # exact Fractions
    assert list(v) == list(model.v)
    assert all(isinstance(x, F) for r in W for x in r)
    assert ea.same_function(res.model, ea.MultiHeadAttention([model]))
    assert res.certificate["claim"] == "P1 Thm 4.1"
    assert res.certificate["transcript_reproduced_exactly"] == d * d + d


def test_probes_are_a_basis_that_sees_v():
    v = [F(0), F(4), F(-1), F(3), F(1, 3)]
    U = probes(v)
    assert all(sum(a * b for a, b in zip(u, v)) != 0 for u in U)
    from flint import fmpz_mat
    assert fmpz_mat(5, 5, [x for u in U for x in u]).det() == 1


@pytest.mark.parametrize("backend,dps,bound", [("mp", 50, 1e-40), ("float", None, 1e-10)])
def test_approximate_backends_recover_to_their_precision(backend, dps, bound):
    d = 4
    model = ea.random_head(d, seed=3, kind="real")
    res = learn_single_head(ea.Oracle(model, backend=backend, dps=dps), d, backend=backend,
                            dps=dps, seed=0)
    assert res.queries == d * d + d              # P1's count; validation is counted apart
    assert res.validation_queries == 4 and res.max_length == 2
    assert parameter_error(model, res.heads, dps=60) < bound
    res2 = learn_single_head(ea.Oracle(model, backend=backend, dps=dps), d, backend=backend,
                             dps=dps, holdout=2, seed=0)
    assert res2.queries == d * d + d and res2.validation_queries == 4 + 2


def test_zero_value_vector_is_not_identifiable():
    head = ea.AttentionHead([[1, 2], [3, 4]], [0, 0])
    oracle = ea.Oracle(head)
    with pytest.raises(ea.NotIdentifiable, match="v = 0"):
        learn_single_head(oracle, 2)
    assert oracle.queries == 2                  # found after the d length-1 queries


@pytest.mark.parametrize("seed", range(4))
def test_multi_head_oracle_rejected_exactly(seed):
    model = ea.random_multi_head(3, 2, seed=seed)
    with pytest.raises(ea.NotAttention, match="not a single attention head"):
        learn_single_head(ea.Oracle(model), 3)


@pytest.mark.parametrize("backend", ["mp", "float"])
def test_multi_head_oracle_rejected_on_approximate_backends(backend):
    """On mp/float any d²+d answers fit one head: only queries beyond the schedule reject a
    multi-head oracle — the validation queries, or held-out length-2 ones."""
    model = ea.random_multi_head(3, 2, seed=1, kind="real")
    with pytest.raises(ea.OutOfClass):
        learn_single_head(ea.Oracle(model, backend=backend), 3, backend=backend, seed=0)
    with pytest.raises(ea.OutOfClass, match="held-out"):
        learn_single_head(ea.Oracle(model, backend=backend), 3, backend=backend, seed=0,
                          validate=0, holdout=1)


def test_adversarial_multi_head_needs_a_holdout_query():
    # head 2 is seen only by the probe e_2, and shares row 2 of W with head 1: P1's d²+d
    # answers are then exactly those of one head (a limit of the schedule, not of the code)
    W1 = [[F(1, 2), F(-1, 4), 0], [F(3, 4), 0, F(1, 4)], [F(-1, 2), F(1, 4), F(1, 2)]]
    W2 = [[0, F(1, 4), F(1, 2)], [F(-1, 4), F(1, 2), 0], W1[2]]
    model = ea.MultiHeadAttention([(W1, [2, 2, 1]), (W2, [0, 0, 1])])
    res = learn_single_head(ea.Oracle(model), 3, validate=0)
    assert not ea.same_function(res.model, model)
    with pytest.raises(ea.OutOfClass, match="held-out"):
        learn_single_head(ea.Oracle(model), 3, holdout=2, seed=0, validate=0)
    # the validation queries (shapes the schedule never asks: length ≥ 3 or three or more
    # distinct tokens) see it too, counted apart
    with pytest.raises(ea.OutOfClass) as e:
        learn_single_head(ea.Oracle(model), 3, seed=0)
    det, q = e.value.details, e.value.details["query"]
    assert det["schedule_queries"] == 12 and det["validation_queries"] >= 1
    assert len(q) >= 3 or len({tuple(t) for t in q}) >= 3


def test_callable_oracles():
    model = ea.random_head(3, seed=7)
    res = learn_single_head(lambda X: model(X, "exact"), 3)
    assert ea.same_function(res.model, ea.MultiHeadAttention([model]))
    assert res.queries == 12
    real = ea.random_head(3, seed=7, kind="real")
    res = learn_single_head(lambda X: real(X, "mp", 40), 3, backend="mp", dps=40)
    assert parameter_error(real, res.heads, dps=50) < mpmath.mpf(10) ** -30


def test_non_attention_callables_fail_clearly():
    with pytest.raises(ea.NotIdentifiable):
        learn_single_head(lambda X: 0, 2)
    # answers that are not softmax averages: σ = 2 is no attention weight
    with pytest.raises(ea.NotAttention):
        learn_single_head(lambda X: sum(sum(t) for t in X), 2, backend="float")
    with pytest.raises(ea.NotAttention):
        learn_single_head(lambda X: F(len(X)), 2)


def test_bad_input():
    with pytest.raises(ValueError):
        learn_single_head(ea.Oracle(ea.random_head(2, seed=0)), 0)
    with pytest.raises(ValueError, match="dimension"):
        learn_single_head(ea.Oracle(ea.random_head(2, seed=0)), 3)
    with pytest.raises(ValueError, match="backend"):
        learn_single_head(ea.Oracle(ea.random_head(2, seed=0), backend="exact"), 2,
                          backend="mp")
    with pytest.raises(TypeError):
        learn_single_head(ea.random_head(2, seed=0), 2)


def test_backend_defaults_to_the_oracles_and_mixed_precision():
    real = ea.random_head(3, seed=2, kind="real")
    res = learn_single_head(ea.Oracle(real, backend="float"), 3)
    assert res.backend == "float"
    # answers at 30 digits, learner at 60: checks use the coarser tolerance
    res = learn_single_head(ea.Oracle(real, backend="mp", dps=30), 3, dps=60)
    assert parameter_error(real, res.heads, dps=60) < 1e-25


from hypothesis import given, strategies as st  # noqa: E402

_q = st.fractions(min_value=-2, max_value=2, max_denominator=4)


@given(st.integers(1, 3).flatmap(lambda d: st.tuples(
    st.lists(st.lists(_q, min_size=d, max_size=d), min_size=d, max_size=d),
    st.lists(_q, min_size=d, max_size=d).filter(lambda v: any(v)))))
@pytest.mark.slow
def test_any_rational_head_with_nonzero_v_is_recovered_exactly(Wv):
    W, v = Wv
    head = ea.AttentionHead(W, v)          # v may have zero entries: probes e_k + s·e_p
    res = learn_single_head(ea.Oracle(head), len(v))
    assert res.queries == len(v) ** 2 + len(v)
    assert [list(r) for r in res.heads[0].W] == [list(r) for r in head.W]
    assert list(res.heads[0].v) == list(head.v)

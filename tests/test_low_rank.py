"""Low-rank heads: the exact skeleton (docs/design.md §4.2) and the P1 Thm 5.1 baseline."""

import sys

import mpmath
import pytest

import exactattn as ea
from exactattn.learners.result.compare import parameter_error
from exactattn.learners.p1.low_rank import (learn_low_rank, random_low_rank_head,
                                         revealing_extra_queries, skeleton_queries)

D = 8


def _same(res, head):
    return ea.same_function(res.model, ea.MultiHeadAttention([head]))


@pytest.mark.parametrize("r", [1, 2, 3])
def test_exact_skeleton_with_rank_given(r):
    head = random_low_rank_head(D, r, seed=r)
    oracle = ea.Oracle(head)
    res = learn_low_rank(oracle, D, rank=r, seed=5)
    assert res.queries == D + r * (2 * D - r) == skeleton_queries(D, r) == oracle.queries
    assert res.expected_queries == res.queries and res.max_length == 2
    assert _same(res, head)
    assert res.certificate["transcript_reproduced_exactly"] == res.queries


@pytest.mark.parametrize("r", [0, 1, 2, 3])
def test_rank_revealing_adds_at_most_2r_plus_1(r):
    head = random_low_rank_head(D, r, seed=20 + r)
    res = learn_low_rank(ea.Oracle(head), D, seed=6)
    assert res.extra["rank"] == r and not res.extra["rank_given"]
    extra = res.queries - skeleton_queries(D, r)
    assert extra == revealing_extra_queries(D, r) <= 2 * r + 1
    assert _same(res, head)


def test_rank_bound():
    head = random_low_rank_head(D, 2, seed=1)
    res = learn_low_rank(ea.Oracle(head), D, rank_bound=4, seed=2)
    assert res.extra["rank"] == 2 and _same(res, head)
    res = learn_low_rank(ea.Oracle(head), D, rank_bound=2, seed=2)
    assert res.extra["rank"] == 2 and _same(res, head)
    with pytest.raises(ea.NotAttention, match="rank_bound"):
        learn_low_rank(ea.Oracle(head), D, rank_bound=1, seed=2)


def test_full_rank_and_zero():
    head = random_low_rank_head(4, 4, seed=0)
    res = learn_low_rank(ea.Oracle(head), 4, seed=0)
    assert res.queries == 4 + 16 and _same(res, head)
    zero = random_low_rank_head(4, 0, seed=0)
    res = learn_low_rank(ea.Oracle(zero), 4, rank=0)
    assert res.queries == 4 and _same(res, zero)


@pytest.mark.parametrize("backend,dps,bound", [("mp", 50, 1e-40), ("float", None, 1e-9)])
@pytest.mark.parametrize("reveal", [False, True])
def test_approximate_backends(backend, dps, bound, reveal):
    r = 2
    head = random_low_rank_head(D, r, seed=4, kind="real")
    res = learn_low_rank(ea.Oracle(head, backend=backend, dps=dps), D,
                         rank=None if reveal else r, backend=backend, dps=dps, seed=3)
    assert res.extra["rank"] == r
    assert parameter_error(head, res.heads, dps=60) < bound


def test_multi_head_oracle_rejected():
    model = ea.random_multi_head(4, 2, seed=0)
    with pytest.raises(ea.NotAttention):
        learn_low_rank(ea.Oracle(model), 4, rank=2, seed=0)


def test_bad_arguments():
    head = random_low_rank_head(3, 1, seed=0)
    with pytest.raises(ValueError):
        learn_low_rank(ea.Oracle(head), 3, rank=4)
    with pytest.raises(ValueError):
        learn_low_rank(ea.Oracle(head), 3, rank=2, rank_bound=1)
    with pytest.raises(ValueError):
        random_low_rank_head(3, 5)
    with pytest.raises(ea.NotIdentifiable):
        learn_low_rank(lambda X: 0, 3)


# ----------------------------------------------------------------- P1 Thm 5.1 baseline
def test_cs_baseline_says_how_to_install_cvxpy(monkeypatch):
    from exactattn.learners.p1.cs_baseline import learn_low_rank_cs
    monkeypatch.setitem(sys.modules, "cvxpy", None)
    head = random_low_rank_head(4, 1, seed=0, kind="real")
    with pytest.raises(ImportError, match=r'pip install "\.\[cvx\]" from a clone'):
        learn_low_rank_cs(ea.Oracle(head, backend="float"), 4, 10)


def test_cs_baseline_is_float_only():
    from exactattn.learners.p1.cs_baseline import learn_low_rank_cs
    with pytest.raises(ValueError, match="float"):
        learn_low_rank_cs(lambda X: 0, 4, 10, backend="exact")


@pytest.mark.slow
def test_cs_baseline_recovers_with_enough_measurements():
    pytest.importorskip("cvxpy")
    import numpy as np
    from exactattn.learners.p1.cs_baseline import learn_low_rank_cs
    d, r = 6, 1
    head = random_low_rank_head(d, r, seed=2, kind="real")
    res = learn_low_rank_cs(ea.Oracle(head, backend="float"), d, 30, seed=0)
    assert res.queries == d + 30 and res.max_length == 2
    W = np.array(res.heads[0].W)
    Wt = np.array([[float(x) for x in row] for row in head.W])
    assert np.linalg.norm(W - Wt) / np.linalg.norm(Wt) < 1e-5
    assert float(mpmath.mpf(parameter_error(head, res.heads))) < 1e-5

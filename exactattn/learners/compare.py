"""Comparing recovered heads with a true model (for tests, the CLI and benchmarks).

Only canonical heads are identifiable (P1 Prop 7.1; P2 canonical heads), and a learner returns
them in its own order, so the true model is put in canonical form and its heads are matched
greedily to the recovered ones by the distance between their W.  Rational parameters on both
sides are compared exactly (Fractions, no floats: the error is 0 exactly when the heads are
equal); otherwise mpmath at the requested precision.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath

from ..models.attention import AttentionHead, MultiHeadAttention

__all__ = ["match_heads", "parameter_error", "default_tolerance"]


def _heads(model_or_heads):
    if isinstance(model_or_heads, AttentionHead):
        return [(model_or_heads.W, model_or_heads.v)]
    if isinstance(model_or_heads, MultiHeadAttention):
        return [(h.W, h.v) for h in model_or_heads.heads]
    return [(h.W, h.v) if isinstance(h, AttentionHead) else (h[0], h[1]) for h in model_or_heads]


def _canonical(model_or_heads):
    if isinstance(model_or_heads, AttentionHead):
        model_or_heads = MultiHeadAttention([model_or_heads])
    if not isinstance(model_or_heads, MultiHeadAttention):
        model_or_heads = MultiHeadAttention([AttentionHead(W, v)
                                             for W, v in _heads(model_or_heads)])
    return _heads(model_or_heads.canonical())


def _exact(x) -> bool:
    return isinstance(x, (int, Fraction)) and not isinstance(x, bool)


def _all_exact(heads) -> bool:
    return all(_exact(x) for W, v in heads for row in W for x in row) and \
        all(_exact(x) for W, v in heads for x in v)


def _num(x, exact):
    if exact:
        return Fraction(x)
    if isinstance(x, Fraction):
        return mpmath.mpf(x.numerator) / x.denominator
    return mpmath.mpf(x)


def _dist(a, b, exact):
    """max |a_ij − b_ij| over two matrices or vectors (given as nested rows)."""
    if a and isinstance(a[0], (list, tuple)):
        return max(_dist(ra, rb, exact) for ra, rb in zip(a, b))
    return max((abs(_num(x, exact) - _num(y, exact)) for x, y in zip(a, b)),
               default=Fraction(0) if exact else mpmath.mpf(0))


def match_heads(true_heads, result_heads, dps: int = 30):
    """Greedy matching by W distance: repeatedly pair the closest (true, recovered) heads.
    Returns (pairs, unmatched_true, unmatched_result) as index lists."""
    exact = _all_exact(true_heads) and _all_exact(result_heads)
    with mpmath.workdps(dps):
        cand = sorted((_dist(tW, rW, exact), i, j)
                      for i, (tW, _) in enumerate(true_heads)
                      for j, (rW, _) in enumerate(result_heads))
    used_t, used_r, pairs = set(), set(), []
    for _, i, j in cand:
        if i not in used_t and j not in used_r:
            pairs.append((i, j))
            used_t.add(i)
            used_r.add(j)
    return (pairs, [i for i in range(len(true_heads)) if i not in used_t],
            [j for j in range(len(result_heads)) if j not in used_r])


def parameter_error(true_model, result_heads, dps: int | None = None):
    """max |ΔW_ij|, |Δv_i| over the matched canonical heads (P2 canonical form).

    Exact (a Fraction, 0 iff equal) when both sides are rational; otherwise an mpmath
    number computed at ``dps`` digits (default 30).  A head left unmatched (different
    numbers of canonical heads) makes the error infinite."""
    true_heads = _canonical(true_model)
    result_heads = _heads(result_heads)
    exact = _all_exact(true_heads) and _all_exact(result_heads)
    dps = dps or 30
    pairs, lost, extra = match_heads(true_heads, result_heads, dps)
    if lost or extra:
        return mpmath.inf
    with mpmath.workdps(dps):
        err = Fraction(0) if exact else mpmath.mpf(0)
        for i, j in pairs:
            (tW, tv), (rW, rv) = true_heads[i], result_heads[j]
            err = max(err, _dist(tW, rW, exact), _dist(tv, rv, exact))
        return err


def default_tolerance(backend):
    """The parameter tolerance a learner on `backend` is held to: 0 on exact, the backend's own
    zero-test tolerance on mp (10^(−3·dps/4)) and float (1e-9)."""
    from ..arith import get_backend
    be = get_backend(backend)
    if be.name == "exact":
        return Fraction(0)
    return be.tolerance

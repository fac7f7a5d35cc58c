"""Comparing recovered heads with a true model (for tests, the CLI and benchmarks).

Only canonical heads are identifiable (P1 Prop 7.1; P2 canonical heads), and a learner returns
them in its own order, so the true model is put in canonical form and its heads are matched
greedily to the recovered ones by the distance between their W.  Rational parameters on both
sides are compared exactly (Fractions, no floats: the error is 0 exactly when the heads are
equal); otherwise mpmath at the requested precision.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any
    from ...models.attention import AttentionHead, MultiHeadAttention

from dataclasses import dataclass, field
from fractions import Fraction

import mpmath

from ...models.attention import AttentionHead, MultiHeadAttention, same_function

__all__ = ["match_heads", "parameter_error", "default_tolerance", "compare", "compare_models",
           "Comparison"]


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


@dataclass
class Comparison:
    """A recovered model beside a reference (P2 canonical heads; docs/design.md §8).

    ``exact`` — both sides rational: ``equal`` is then exact canonical equality (the same
    function, P1 Prop 7.1) and ``max_error`` an exact Fraction, 0 iff equal.  Otherwise
    ``equal`` is None (no finite-precision run proves equality) and ``max_error`` an mpmath
    number.  ``digits`` = −log10(max_error) and ``bits`` = −log2(max_error) (absolute error;
    inf when 0; display only).  ``pairs`` lists (reference head, recovered head, error of W,
    error of v) after matching canonical heads by W; ``missing`` / ``extra`` are reference /
    recovered heads left unmatched (then the error is infinite)."""

    exact: bool
    equal: bool | None
    max_error: object
    pairs: list = field(default_factory=list)
    missing: list = field(default_factory=list)
    extra: list = field(default_factory=list)
    what: str = "canonical heads"

    @property
    def digits(self) -> float:
        return _log_digits(self.max_error, 10)

    @property
    def bits(self) -> float:
        return _log_digits(self.max_error, 2)

    def within(self, tolerance) -> bool:
        """max_error ≤ tolerance (exact comparison for Fractions)."""
        return bool(self.max_error <= tolerance)

    def __str__(self):
        if self.missing or self.extra:
            return (f"{self.what} differ: {len(self.pairs)} matched, {len(self.missing)} "
                    f"reference and {len(self.extra)} recovered head(s) unmatched")
        n = f"{len(self.pairs)} head(s) matched" if self.pairs else self.what
        if self.exact:
            return (f"exact: {'equal' if self.equal else 'NOT equal'} ({n}; max error "
                    f"{_short(self.max_error)})")
        return (f"max error {mpmath.nstr(self.max_error, 3)} ({self.digits:.1f} digits, "
                f"{self.bits:.1f} bits; {n})")


def _short(q, limit: int = 40) -> str:
    """An exact max error as written, or rounded up when longer than ``limit`` characters (a
    3000-digit rational is named, not printed; --json keeps it whole)."""
    from ...arith.numbers import upper_decimal
    text = str(q)
    if len(text) <= limit:
        return text
    return f"{upper_decimal(q)} (rounded up; exactly a rational of {len(text)} characters)"


def _working_dps(heads) -> int:
    """30 digits, or more when an mpf entry carries more (so that its digits count)."""
    from mpmath.ctx_mp_python import _mpf
    return max([30] + [x.context.dps + 10 for W, v in heads for x in (*sum(map(list, W), []), *v)
                       if isinstance(x, _mpf)])


def _log_digits(err, base) -> float:
    if err == 0:
        return float("inf")
    if err == mpmath.inf:
        return float("-inf")
    with mpmath.workdps(20):
        e = mpmath.mpf(err.numerator) / err.denominator if isinstance(err, Fraction) \
            else mpmath.mpf(err)
        return float(-mpmath.log(e, base))


def compare(truth, result_heads, dps: int | None = None) -> Comparison:
    """Match the canonical heads of ``truth`` (a model, a head or (W, v) pairs) with
    ``result_heads`` by W and measure max |ΔW_ij|, |Δv_i| (P2 canonical form;
    docs/design.md §8).  Exact on rational inputs, else at ``dps`` digits (default 30)."""
    true_heads = _canonical(truth)
    found = _canonical(result_heads)
    dims = {len(W) for W, _ in true_heads + found}
    if len(dims) > 1:
        raise ValueError(f"cannot compare models of dimensions {sorted(dims)}")
    exact = _all_exact(true_heads) and _all_exact(found)
    dps = dps or _working_dps(true_heads + found)
    pairs, lost, extra = match_heads(true_heads, found, dps)
    rows, err = [], Fraction(0) if exact else mpmath.mpf(0)
    with mpmath.workdps(dps):
        for i, j in pairs:
            (tW, tv), (rW, rv) = true_heads[i], found[j]
            eW, ev = _dist(tW, rW, exact), _dist(tv, rv, exact)
            rows.append((i, j, eW, ev))
            err = max(err, eW, ev)
    if lost or extra:
        err = mpmath.inf
    equal = None
    if exact:
        equal = not lost and not extra and same_function(
            MultiHeadAttention([AttentionHead(W, v) for W, v in true_heads]),
            MultiHeadAttention([AttentionHead(W, v) for W, v in found]))
    return Comparison(exact, equal, err, rows, lost, extra)


def compare_models(truth, recovered, dps: int | None = None) -> Comparison:
    """:func:`compare` for any recovered model: two one-layer Transformers by their kink forms
    (the function's canonical form, docs/design.md §1: exact equality on rational models,
    else the kink-form distance), a Transformer reference against attention heads by its
    attention part T(X) − T(−X), everything else by canonical heads."""
    from ...models.transformer import (OneLayerTransformer, same_transformer_function,
                                      transformer_distance)
    if isinstance(truth, OneLayerTransformer):
        if isinstance(recovered, OneLayerTransformer):
            if truth.dim != recovered.dim:
                raise ValueError(f"cannot compare models of dimensions "
                                 f"{sorted({truth.dim, recovered.dim})}")
            exact = truth.is_rational and recovered.is_rational
            err = transformer_distance(truth, recovered, dps=dps or 30)
            equal = same_transformer_function(truth, recovered) if exact else None
            return Comparison(exact, equal, err, what="kink forms")
        truth = truth.attention_part()
    if isinstance(recovered, OneLayerTransformer):
        recovered = recovered.attention_part()
    return compare(truth, recovered, dps)


def parameter_error(true_model: AttentionHead | MultiHeadAttention, result_heads: Sequence,
                    dps: int | None = None) -> Any:
    """max |ΔW_ij|, |Δv_i| over the matched canonical heads (P2 canonical form).

    Exact (a Fraction, 0 iff equal) when both sides are rational; otherwise an mpmath
    number computed at ``dps`` digits (default 30).  A head left unmatched (different
    numbers of canonical heads) makes the error infinite."""
    return compare(true_model, result_heads, dps).max_error


def default_tolerance(backend):
    """The parameter tolerance a learner on `backend` is held to: 0 on exact, the backend's own
    zero-test tolerance on mp (10^(−3·dps/4)) and float (1e-9)."""
    from ...arith import get_backend
    be = get_backend(backend)
    if be.name == "exact":
        return Fraction(0)
    return be.tolerance

"""The Jacobian of a recovery map answers ↦ parameters by one-sided finite differences (the
first-order P2 approximate-oracle constant C; docs/design.md §4.4).  The recovery is passed
in as ``recover_fn(answers) -> (heads, v)`` so that every learner can use it."""

from __future__ import annotations

from ...errors import ConditionsNotMet
from ..result.compare import match_heads

__all__ = ["labels", "flat", "aligned", "perturbed", "jacobian", "row_norms"]


def labels(H: int, d: int):
    """Parameter names in :func:`flat` order (W_h row by row, then v_h, head by head)."""
    out = []
    for h in range(1, H + 1):
        out += [f"W{h}[{i + 1},{j + 1}]" for i in range(d) for j in range(d)]
        out += [f"v{h}[{i + 1}]" for i in range(d)]
    return out


def flat(heads, v):
    """Parameters (W_h row by row, then v_h, head by head) followed by the total v."""
    out = []
    for W, vh in heads:
        out += [x for row in W for x in row] + list(vh)
    return out + list(v)


def aligned(heads, reference):
    """`heads` reordered to pair with `reference` (nearest W; P2 heads are unordered)."""
    pairs, lost, extra = match_heads(reference, heads)
    if lost or extra:
        raise ConditionsNotMet("a perturbed answer changed the number of recovered heads: the "
                               "recovery is not differentiable here", heads=len(heads),
                               reference=len(reference))
    order = dict(pairs)
    return [heads[order[i]] for i in range(len(reference))]


def perturbed(recover_fn, answers, delta, reference):
    """The parameter vector recovered from ``answers + delta``."""
    heads, v = recover_fn([a + e for a, e in zip(answers, delta)])
    return flat(aligned(heads, reference), v)


def jacobian(recover_fn, answers, step, reference, p0, zero):
    """Columns ∂p/∂a_k by one-sided differences with step ``step``; returned as rows."""
    n = len(answers)
    cols = []
    for k in range(n):
        delta = [zero] * n
        delta[k] = step
        p = perturbed(recover_fn, answers, delta, reference)
        cols.append([(a - b) / step for a, b in zip(p, p0)])
    return [list(r) for r in zip(*cols)]


def row_norms(J):
    """Σ_k |J_rk| per row: the first-order change of each parameter when every answer moves
    by at most 1."""
    return [sum(abs(x) for x in row) for row in J]

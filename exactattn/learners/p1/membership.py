"""The membership-query learner of P1 App. B: a single head from threshold bits f(X) > θ
(the oracle is :class:`~exactattn.oracles.membership.MembershipOracle`).

Each of the d² + d real answers of the P1 Thm 6.1 schedule is found by bisection on θ over
[−R, R]; after k = ⌈log₂(R/ε)⌉ halvings the midpoint is within ε of f(X), so the Thm 6.1
learner and its rigorous bound apply with tolerance ε (+ τ for a value oracle off by ≤ τ).
Query count, exactly: (d² + d) · k membership queries, each of length ≤ 2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..._typing import Number
    from ...oracles.membership import MembershipOracle
    from ..result import LearnResult

import time

from ...arith import get_backend
from ...oracles.membership import MembershipOracle

__all__ = ["learn_single_head_membership", "bisection_steps", "membership_query_count"]


def bisection_steps(value_bound, precision) -> int:
    """k = ⌈log₂(R/ε)⌉ (≥ 0): the halvings of [−R, R] that leave the midpoint within ε
    of any value in the interval (P1 App. B; our protocol, module docstring)."""
    if not precision > 0 or not value_bound > 0:
        raise ValueError("value_bound and precision must be positive")
    k, width = 0, value_bound
    while width > precision:
        width = width / 2
        k += 1
    return k


def membership_query_count(d: int, value_bound, precision) -> int:
    """(d² + d)·⌈log₂(R/ε)⌉ membership queries (P1 App. B; module docstring)."""
    return (d * d + d) * bisection_steps(value_bound, precision)


class _Bisection:
    """A value oracle made of membership queries: each value by k halvings of [−R, R]."""

    def __init__(self, mo: MembershipOracle, R, k: int):
        self.mo, self.R, self.k = mo, mo.backend.scalar(R, "value_bound"), k
        self.at_edge = 0  # answers whose bisection never left one end of [−R, R]

    def __call__(self, tokens):
        lo, hi = -self.R, self.R
        above = 0
        for _ in range(self.k):
            mid = (lo + hi) / 2
            if self.mo(tokens, mid):
                lo, above = mid, above + 1
            else:
                hi = mid
        if above in (0, self.k) and self.k:
            self.at_edge += 1
        return (lo + hi) / 2


def learn_single_head_membership(membership: MembershipOracle, dim: int, norm_bound: Number,
                                 margin: Number, precision: Number, value_bound: Number,
                                 noise_tolerance: Number = 0,
                                 strict: bool = False) -> LearnResult:
    """Learn one head from membership queries (P1 App. B): every real answer of the P1 Thm
    6.1 schedule by bisection to ±``precision`` = ε over [−R, R], R = ``value_bound``, then
    :func:`~exactattn.learners.p1.noisy.learn_single_head_noisy` with tolerance ε + τ
    (τ = ``noise_tolerance`` of the value oracle behind ``membership``).

    Exactly (d² + d)·⌈log₂(R/ε)⌉ membership queries of length ≤ 2 (``expected_queries``).
    The result is that of the Thm 6.1 learner (its bounds in ``extra``) with the membership
    accounting; ``extra["value_queries"]`` = d² + d.  A bisection that never leaves an end
    of [−R, R] may mean |f| > R; it is flagged ``value-bound-reached``."""
    from .noisy import learn_single_head_noisy
    if not isinstance(membership, MembershipOracle):
        raise TypeError("pass a MembershipOracle (it answers f(X) > θ only)")
    start, first = time.perf_counter(), membership.queries
    be = membership.backend
    k = bisection_steps(be.scalar(value_bound), be.scalar(precision))
    values = _Bisection(membership, value_bound, k)
    tau = be.scalar(precision) + be.scalar(noise_tolerance)
    result = learn_single_head_noisy(values, dim, norm_bound, margin, tau,
                                     backend=get_backend(be), strict=False)
    result.algorithm = "single-head-membership"
    result.extra["value_queries"] = result.queries
    result.extra["bisection_steps"] = k
    result.queries = membership.queries - first
    result.max_length = membership.max_length
    result.expected_queries = membership_query_count(dim, be.scalar(value_bound),
                                                     be.scalar(precision))
    if values.at_edge:
        result.extra["flags"].append("value-bound-reached")
        result.extra["conditions_met"] = False
        result.notes.append(f"{values.at_edge} bisection(s) never left an end of [−R, R]: "
                            f"|f| may exceed value_bound R = {value_bound}")
    result.seconds = time.perf_counter() - start
    if strict and not result.extra["conditions_met"]:
        from ...errors import ConditionsNotMet
        raise ConditionsNotMet("P1 App. B / Thm 6.1 assumptions fail: " + "; ".join(result.notes),
                               flags=result.extra["flags"], result=result)
    return result

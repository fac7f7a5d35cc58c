"""Membership (threshold) queries, P1 App. B: the oracle says only whether the output exceeds
a threshold, and a bisection learner recovers a single head from such bits.

**Design (ours; P1 App. B gives the idea, not this exact protocol).**  A membership query is a
pair (X, θ): "is f(X) > θ?" — one bit.  :class:`MembershipOracle` has a default threshold
(``threshold=0``) for queries that name none; the learner names θ in every query (a
*threshold* query), because with one fixed threshold θ = 0 the bits sign f(X) are the same
for (W, v) and (W, c·v), c > 0, so v would be identifiable only up to a positive factor.

The learner (:func:`learn_single_head_membership`) needs the d² + d real answers of the P1
Thm 6.1 schedule (:func:`~exactattn.learners.noisy.learn_single_head_noisy`).  Each one is
found by bisection on θ over [−R, R] (R = ``value_bound`` ≥ |f| on these queries): after k
halvings the midpoint of the final interval is within ε = R/2^k of f(X).  So the real answers
are known to ±ε (±(ε + τ) if the value oracle itself is off by ≤ τ: a decision made on
f + η, |η| ≤ τ, keeps f inside the interval widened by τ), and the P1 Thm 6.1 learner and
its rigorous error bound apply with tolerance ε + τ.  Query count, exactly:

    (d² + d) · k,   k = ⌈log₂(R/ε)⌉   membership queries, each of length ≤ 2.
"""

from __future__ import annotations

import time

from .arith import get_backend
from .models import AttentionHead, MultiHeadAttention
from .oracle import Oracle

__all__ = ["MembershipOracle", "learn_single_head_membership", "bisection_steps",
           "membership_query_count"]


class MembershipOracle:
    """Answers only ``f(X) > θ`` (P1 App. B), counting its own queries.

    ``target`` is a model (wrapped in a no-peek value :class:`~exactattn.Oracle` on
    ``backend``/``dps`` with optional ``noise``) or an existing Oracle.  ``mo(tokens)`` uses
    the default ``threshold``; ``mo(tokens, theta)`` compares with θ.  Records ``queries``,
    ``max_length`` and a transcript of (tokens, θ, bit)."""

    def __init__(self, target, threshold=0, backend="mp", dps=None, noise=None, dim=None):
        if isinstance(target, Oracle):
            self.value_oracle = target
        else:
            if isinstance(target, AttentionHead):
                target = MultiHeadAttention([target])
            self.value_oracle = Oracle(target, dim=dim, backend=backend, dps=dps, noise=noise,
                                       no_peek=True)
        self.backend = self.value_oracle.backend
        self.threshold = self.backend.scalar(threshold, "threshold")
        self.queries = 0
        self.max_length = 0
        self.transcript: list = []

    @property
    def dim(self):
        return self.value_oracle.dim

    def __call__(self, tokens, threshold=None) -> bool:
        theta = self.threshold if threshold is None else self.backend.scalar(threshold, "θ")
        bit = bool(self.value_oracle(tokens) > theta)
        self.queries += 1
        self.max_length = max(self.max_length, len(tokens))
        self.transcript.append((tokens, theta, bit))
        return bit

    def __repr__(self):
        return (f"MembershipOracle(dim={self.dim}, backend={self.backend.name}, "
                f"threshold={self.threshold}, queries={self.queries})")


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


def learn_single_head_membership(membership, dim, norm_bound, margin, precision, value_bound,
                                 noise_tolerance=0, strict=False):
    """Learn one head from membership queries (P1 App. B): every real answer of the P1 Thm
    6.1 schedule by bisection to ±``precision`` = ε over [−R, R], R = ``value_bound``, then
    :func:`~exactattn.learners.noisy.learn_single_head_noisy` with tolerance ε + τ
    (τ = ``noise_tolerance`` of the value oracle behind ``membership``).

    Exactly (d² + d)·⌈log₂(R/ε)⌉ membership queries of length ≤ 2 (``expected_queries``).
    The result is that of the Thm 6.1 learner (its bounds in ``extra``) with the membership
    accounting; ``extra["value_queries"]`` = d² + d.  A bisection that never leaves an end
    of [−R, R] may mean |f| > R; it is flagged ``value-bound-reached``."""
    from .learners.noisy import learn_single_head_noisy
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
        from .errors import ConditionsNotMet
        raise ConditionsNotMet("P1 App. B / Thm 6.1 assumptions fail: " + "; ".join(result.notes),
                               flags=result.extra["flags"], result=result)
    return result

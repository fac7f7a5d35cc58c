"""Membership (threshold) queries, P1 App. B: the oracle says only whether the output exceeds
a threshold, and a bisection learner recovers a single head from such bits.

**Design (ours; P1 App. B gives the idea, not this exact protocol).**  A membership query is a
pair (X, θ): "is f(X) > θ?" — one bit.  :class:`MembershipOracle` has a default threshold
(``threshold=0``) for queries that name none; the learner names θ in every query (a
*threshold* query), because with one fixed threshold θ = 0 the bits sign f(X) are the same
for (W, v) and (W, c·v), c > 0, so v would be identifiable only up to a positive factor.

The learner (:func:`exactattn.learners.p1.membership.learn_single_head_membership`) needs the d² + d real answers of the P1
Thm 6.1 schedule (:func:`~exactattn.learners.p1.noisy.learn_single_head_noisy`).  Each one is
found by bisection on θ over [−R, R] (R = ``value_bound`` ≥ |f| on these queries): after k
halvings the midpoint of the final interval is within ε = R/2^k of f(X).  So the real answers
are known to ±ε (±(ε + τ) if the value oracle itself is off by ≤ τ: a decision made on
f + η, |η| ≤ τ, keeps f inside the interval widened by τ), and the P1 Thm 6.1 learner and
its rigorous error bound apply with tolerance ε + τ.  Query count, exactly:

    (d² + d) · k,   k = ⌈log₂(R/ε)⌉   membership queries, each of length ≤ 2.
"""

from __future__ import annotations

from ..models.attention import AttentionHead, MultiHeadAttention
from .oracle import Oracle

__all__ = ["MembershipOracle"]


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

"""Named failures.  A learner that cannot certify its answer raises one of these with the
offending quantities; it never returns a wrong model silently (docs/design.md §4.3)."""

from __future__ import annotations

__all__ = [
    "ExactAttnError", "QueryError", "BudgetExceeded", "PeekError", "SingularSystem",
    "LearningFailure", "SingularBasis", "CollidingPoles", "InvisibleHead",
    "AmbiguousMatching", "NotAttention", "CertificationFailed", "NotIdentifiable",
    "ConditionsNotMet", "IllConditioned", "UnresolvedHeads",
]


class ExactAttnError(Exception):
    """Base class of exactattn's own errors."""


class QueryError(ExactAttnError, ValueError):
    """A malformed query (empty sequence, wrong dimension, non-numeric entry); not counted."""


class BudgetExceeded(ExactAttnError, RuntimeError):
    """The oracle's query budget would be exceeded."""


class PeekError(ExactAttnError, AttributeError):
    """A no-peek oracle was asked for its parameters."""


class SingularSystem(ExactAttnError, ZeroDivisionError):
    """A linear system that must be solved is singular."""


class LearningFailure(ExactAttnError, RuntimeError):
    """A learner detected that it cannot certify an answer.

    ``reason`` is a short machine-readable name (e.g. ``"colliding-poles"``) and
    ``details`` a dict of the offending quantities.
    """

    reason = "learning-failure"

    def __init__(self, message: str, **details):
        super().__init__(message)
        self.details = details


class SingularBasis(LearningFailure):
    reason = "singular-basis"


class CollidingPoles(LearningFailure):
    reason = "colliding-poles"


class InvisibleHead(LearningFailure):
    reason = "invisible-head"


class AmbiguousMatching(LearningFailure):
    reason = "ambiguous-matching"


class NotAttention(LearningFailure):
    """The answers are not those of attention with at most the stated number of heads."""

    reason = "not-attention"


class CertificationFailed(LearningFailure):
    reason = "certification-failed"


class NotIdentifiable(LearningFailure):
    """The parameters are not determined by the function (e.g. W when v = 0)."""

    reason = "not-identifiable"


class ConditionsNotMet(LearningFailure):
    """An approximate-oracle guarantee does not apply: the answers or the noise level fall
    outside the assumptions of P1 Thm 6.1 or of the P2 approximate-oracle bound (e.g. τ large
    against the pole separation), so no error bound can be claimed for a result."""

    reason = "conditions-not-met"


class IllConditioned(LearningFailure):
    """An inexact run (mp / float) cannot certify its answer at the oracle's precision: the
    answer balls are too wide for the recovery's decisions (pivots, poles, matching) to be
    made (docs/design.md §8, inexact backends).  ``details`` carry the smallest pole
    separation seen (``pole_separation``), the oracle precision used (``precision``) and
    the precision that would be needed (``needed_precision``, None when no tried precision
    sufficed)."""

    reason = "ill-conditioned"


class UnresolvedHeads(LearningFailure):
    """An inexact run told heads=H resolves fewer than H heads at the oracle's precision: two
    poles or a residue cannot be told apart from a collision or from 0 (docs/design.md §8).
    ``details`` carry ``heads_found``, ``heads`` and the smallest pole separation seen."""

    reason = "unresolved-heads"

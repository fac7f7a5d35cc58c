"""Named failures.  A learner that cannot certify its answer raises one of these with the
offending quantities (docs/design.md §4.3).  A model returned without a failure reproduces
every schedule answer, but it can still be another oracle's twin (claim P2-nonunique); only
validation queries can catch that (docs/design.md §8)."""

from __future__ import annotations

__all__ = [
    "ExactAttnError", "QueryError", "BudgetExceeded", "PeekError", "SingularSystem",
    "LearningFailure", "SingularBasis", "CollidingPoles", "InvisibleHead",
    "AmbiguousMatching", "NotAttention", "CertificationFailed", "NotIdentifiable",
    "ConditionsNotMet", "IllConditioned", "UnresolvedHeads", "OutOfClass", "OracleTimeout",
    "OracleError", "TooFewHeads",
]


class ExactAttnError(Exception):
    """Base class of exactattn's own errors."""


class QueryError(ExactAttnError, ValueError):
    """A malformed query (empty sequence, wrong dimension, non-numeric entry); not counted."""


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


class BudgetExceeded(LearningFailure):
    """The oracle's query budget would be exceeded (docs/design.md §3).  A learner that knows
    its count refuses before its first query (``details``: ``budget``, ``needed``,
    ``remaining``); a query past the budget is never asked."""

    reason = "budget-exceeded"


class OracleTimeout(LearningFailure):
    """The oracle did not answer one query within its per-query ``timeout`` (docs/design.md
    §3): a slow or silent oracle is a named failure, not a hang.  ``details``: ``timeout``
    (seconds), ``query_index`` (0-based, among the oracle's counted queries)."""

    reason = "oracle-timeout"


class OracleError(LearningFailure):
    """The oracle raised while answering a query (``RuntimeError``, ``ZeroDivisionError``...),
    or gave an answer the backend cannot take (a float on the exact backend): no learner can
    certify from an oracle that does not answer.  The oracle's exception is chained as
    ``__cause__``; ``details``: ``query_index`` (0-based, among the oracle's counted queries),
    ``error`` (the exception's type name)."""

    reason = "oracle-error"


class TooFewHeads(LearningFailure):
    """The answers need more heads than the learner was told (``heads`` / ``heads_bound``):
    the oracle appears to have more heads than H (or H₀).  ``details``: ``told`` (the H or H₀
    told), ``hint`` (what to retry with)."""

    reason = "too-few-heads"


class OutOfClass(LearningFailure):
    """A validation query — a fresh random query of a random shape (lengths 1…4H₀ + 4, 1…6
    distinct tokens; :mod:`exactattn.learners.result.validation`) — is answered differently by the
    oracle and by the recovered model: exactly (any difference in Q(t)) on the exact
    backend, outside the result's error bar on mp / float (docs/design.md §8).  The oracle
    agrees with the model on the schedule but is not it: not attention of the assumed class.
    ``details``: ``query`` (the tokens, as strings), ``answer``, ``predicted``, ``index``
    (0-based among the validation queries), ``schedule_queries``, ``validation_queries``."""

    reason = "out-of-class"

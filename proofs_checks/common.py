"""Helpers shared by the learner-based claims: certificate check records and exact
comparison of recovered heads with a model's canonical form (P2 canonical heads)."""

from __future__ import annotations

from exactattn.models.attention import MultiHeadAttention

from .certificates import heads_json, transcript_json

__all__ = ["count_check", "recovery_check", "canonical_set", "same_canonical"]


def count_check(formula: str, params: dict, queries: int, max_length: int, run=None) -> dict:
    """A ``count`` record: the checker recomputes the published formula from `params`; with
    `run` (the index of a recovery check with a transcript) it also recounts the transcript."""
    rec = {"kind": "count", "formula": formula, "params": dict(params),
           "queries": int(queries), "max_length": int(max_length)}
    if run is not None:
        rec["run"] = run
    return rec


def recovery_check(dim: int, model, recovered, transcript=None) -> dict:
    """A ``recovery`` record: true heads, recovered canonical heads, optionally the oracle's
    transcript (every answer as an exact element of Q(t))."""
    rec = {"kind": "recovery", "dim": dim, "model": heads_json(_heads(model)),
           "recovered": heads_json(_heads(recovered))}
    if transcript:
        rec["queries"] = len(transcript)
        rec["max_length"] = max(len(toks) for toks, _ in transcript)
        rec["transcript"] = transcript_json(transcript)
    return rec


def _heads(m):
    return m.heads if isinstance(m, MultiHeadAttention) else list(m)


def canonical_set(heads):
    """The canonical form as a set of (W, v) tuples (exact; docs/design.md §1)."""
    m = heads if isinstance(heads, MultiHeadAttention) else MultiHeadAttention(heads)
    return m.head_set()


def same_canonical(model, recovered_heads) -> bool:
    """Exact equality of canonical forms as sets (P2 canonical heads)."""
    return canonical_set(model) == canonical_set(recovered_heads)

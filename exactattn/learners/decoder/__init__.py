"""Decoder-style oracles (docs/decoders.md): causal mask with an output at every position,
ALiBi slopes and a residual read-out — the schedule (:mod:`.schedule`), one family per query
(:mod:`.family`), the learner (:mod:`.learner`, and :mod:`.inexact` on float answers) and
Theorem A's design with one causal query per family (:mod:`.design`)."""

from .design import certify_causal
from .learner import CausalResult, learn_causal
from .schedule import CausalSchedule, causal_count

__all__ = ["learn_causal", "certify_causal", "CausalResult", "CausalSchedule", "causal_count"]

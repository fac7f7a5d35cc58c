"""Decoder-style oracles (docs/decoders.md): causal mask with an output at every position,
ALiBi slopes and a residual read-out — the schedule (:mod:`.schedule`), one family per query
(:mod:`.family`) and the learner (:mod:`.learner`)."""

from .learner import CausalResult, learn_causal
from .schedule import CausalSchedule, causal_count

__all__ = ["learn_causal", "CausalResult", "CausalSchedule", "causal_count"]

"""Oracles (layer 3, above models): the counting, no-peek value oracle (after CJM20) and the
membership (threshold) oracle of P1 App. B."""

from .membership import MembershipOracle
from .oracle import Additive, Oracle, Rounding, as_oracle

__all__ = ["Oracle", "Additive", "Rounding", "as_oracle", "MembershipOracle"]

"""Certified uniqueness without search: Theorem A's moment-curve design (:mod:`.design`) and
:func:`certify`, which asks it of any exact oracle and compares the answers with a model M
(docs/design.md §12; docs/evidence.md §2b)."""

from .certify import Certification, certify, estimate_design

__all__ = ["certify", "Certification", "estimate_design"]

"""Certified uniqueness without search (docs/design.md §12): Theorem A's moment-curve design
(:mod:`.moment_curve`) and :func:`~exactattn.certify` (:mod:`.certify`), which asks it of any
exact oracle and compares the answers with a model M."""

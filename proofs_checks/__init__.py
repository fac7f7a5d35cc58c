"""proofs_checks: every claim of P1 (arXiv 2601.16873) and P2 (arXiv 2608.03294) that exactattn
checks, as a named check with its reference, sizes and verdict (docs/design.md §5).

``claims()`` lists them, ``run_claim(claim, quick=True)`` runs one; exact checks write JSON
certificates that ``python -m proofs_checks.verify`` re-verifies with the standard library only.
"""

from .registry import (CLAIM_MODULES, Claim, Outcome, UnknownClaim, Verdict, claims,
                       describe_sizes, get_claim, register, run_claim)

__all__ = ["Claim", "Verdict", "Outcome", "UnknownClaim", "claims", "get_claim", "run_claim",
           "register", "describe_sizes", "CLAIM_MODULES"]

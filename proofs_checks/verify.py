"""``python -m proofs_checks.verify [-v] CERT.json ...``: the independent certificate checker
(standard library only; the code is in :mod:`proofs_checks.checker`)."""

import sys

from .checker import Rejected, main, verify, verify_bytes, verify_file

__all__ = ["Rejected", "main", "verify", "verify_bytes", "verify_file"]

if __name__ == "__main__":
    sys.exit(main())

"""``python tests/quick_claims.py OUT``: run every registered claim at its quick sizes, as
``run_claim(claim, quick=True)`` does in the test session, verify each certificate with the
independent checker as `exactattn check` does (from the bytes its file holds), and pickle
``[(claim id, Verdict, seconds, findings or the rejection's text), ...]`` to OUT.

tests/conftest.py starts this in the background when the selected tests need the whole quick
check, so that the claims run once, on another core, while the other tests run."""

import json
import os
import pickle
import sys

os.environ.setdefault("SYMPY_GROUND_TYPES", "python")


def main(out):
    from proofs_checks import claims, run_claim
    from proofs_checks.verify import Rejected, verify_bytes
    rows = []
    for claim in claims():
        outcome = run_claim(claim, quick=True)
        cert, checked = outcome.verdict.certificate, None
        if cert is not None:
            try:
                checked = verify_bytes(json.dumps(cert, indent=1, ensure_ascii=False)
                                       .encode("utf-8"))
            except Rejected as e:
                checked = str(e)
        rows.append((claim.id, outcome.verdict, outcome.seconds, checked))
    with open(out + ".part", "wb") as f:
        pickle.dump(rows, f)
    os.replace(out + ".part", out)


if __name__ == "__main__":
    main(sys.argv[1])

"""Verify one certificate: its header, its sizes, and every check by its kind."""

from __future__ import annotations

import json
import sys

from .bad_set import check_bad_set
from .claims import CLAIMS, FORMAT, PARAMS, VERSION, check_symbolic
from .copy_count import check_copy_count, check_rational_form
from .count import check_count, check_count_fit
from .determinant import check_determinant
from .economy_count import check_economy_count
from .floor import check_floor
from .parse import Rejected, require
from .recovery import check_recovery, check_same_function


KINDS = {
    "count": check_count,
    "count-fit": check_count_fit,
    "recovery": check_recovery,
    "same-function": check_same_function,
    "copy-count": check_copy_count,
    "determinant": check_determinant,
    "rational-form": check_rational_form,
    "bad-set": check_bad_set,
    "floor": check_floor,
    "economy-count": check_economy_count,
}


def verify(cert) -> list:
    """Verify one certificate (a parsed JSON object); return the list of findings or raise
    :class:`Rejected`."""
    require(isinstance(cert, dict), "a certificate is a JSON object")
    require(cert.get("format") == FORMAT and cert.get("version") == VERSION,
            f"not an {FORMAT} version {VERSION} file")
    cid = cert.get("claim")
    require(cid in CLAIMS, f"unknown claim {cid!r}")
    ref, statement, kinds = CLAIMS[cid]
    require(cert.get("reference") == ref, f"{cid}: reference {cert.get('reference')!r} ≠ {ref!r}")
    require(cert.get("statement") == statement, f"{cid}: the statement is not that of {cid}")
    require(cert.get("size") in ("quick", "full"), f"{cid}: size must be quick or full")
    require(cert.get("holds") is True, f"{cid}: the certificate records that the claim did not hold")
    checks = cert.get("checks")
    require(isinstance(checks, list) and checks, f"{cid}: no checks")
    present = {c.get("kind") for c in checks if isinstance(c, dict)}
    require(kinds <= present, f"{cid}: missing checks {sorted(kinds - present)}")
    symbolic = cert.get("symbolic", [])
    check_symbolic(cid, symbolic)
    params = cert.get("params")
    require(isinstance(params, dict), f"{cid}: params must be an object")
    try:
        fn = PARAMS[cid]
        fn(params, checks, symbolic) if cid in ("P1-P7.1", "P2-rational") else fn(params, checks)
    except Rejected as e:
        raise Rejected(f"{cid}: {e}") from None
    except (KeyError, TypeError, AttributeError) as e:
        raise Rejected(f"{cid}: params malformed ({type(e).__name__}: {e})") from None
    findings = []
    for k, c in enumerate(checks):
        require(isinstance(c, dict) and c.get("kind") in KINDS, f"{cid}: check {k} has an unknown kind")
        try:
            findings.append(KINDS[c["kind"]](c, checks))
        except Rejected as e:
            raise Rejected(f"{cid}: check {k} ({c['kind']}): {e}") from None
        except (KeyError, TypeError, ValueError, ZeroDivisionError, AttributeError) as e:
            raise Rejected(f"{cid}: check {k} ({c['kind']}) is malformed: "
                           f"{type(e).__name__}: {e}") from None
    return findings


def verify_file(path) -> list:
    """Verify one certificate file; raises Rejected."""
    try:
        with open(path, encoding="utf-8") as f:
            cert = json.load(f)
    except json.JSONDecodeError as e:
        raise Rejected(f"not valid JSON ({e})") from None
    return verify(cert)


def main(argv=None) -> int:
    """``python -m proofs_checks.verify [-q] CERT.json ...``: exit 0 if all are accepted."""
    args = sys.argv[1:] if argv is None else list(argv)
    quiet = "-q" in args
    paths = [a for a in args if a != "-q"]
    if not paths or any(a.startswith("-") for a in paths):
        sys.stderr.write("usage: python -m proofs_checks.verify [-q] CERT.json [CERT.json ...]\n")
        return 2
    status = 0
    for path in paths:
        try:
            findings = verify_file(path)
        except OSError as e:
            sys.stderr.write(f"{path}: cannot read ({e.strerror})\n")
            status = max(status, 2)
            continue
        except Rejected as e:
            print(f"REJECTED {path}: {e}")
            status = max(status, 1)
            continue
        print(f"accepted {path}: {len(findings)} checks")
        if not quiet:
            for line in findings:
                print(f"  - {line}")
    return status

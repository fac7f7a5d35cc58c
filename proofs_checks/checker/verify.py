"""Verify one certificate: its header, its sizes, and every check by its kind.

Kinds and their modules (one module per kind; a new kind adds one line to :data:`KINDS`):
``run`` (:mod:`.run`, with one module per learner), ``count`` / ``count-derivation`` /
``count-fit`` (:mod:`.count`), ``same-function`` (:mod:`.recovery`), ``copy-count`` /
``rational-form`` (:mod:`.copy_count`), ``determinant`` (:mod:`.determinant`), ``bad-set``
(:mod:`.bad_set`), ``non-unique`` (:mod:`.nonunique`), ``floor`` (:mod:`.floor`),
``economy-count`` (:mod:`.economy_count`), ``economy-prob1`` (:mod:`.economy_prob1`),
``fibre`` (:mod:`.fibre`), ``design`` (:mod:`.design`), ``causal-count`` / ``causal-twin`` /
``causal-design`` (:mod:`.decoder`; causal ``run`` records: :mod:`.run_causal`).
"""

from __future__ import annotations

import sys

from .bad_set import check_bad_set
from .claims import (AFTER, CLAIMS, FORMAT, PARAMS, VERSION, check_records, check_size,
                     check_symbolic)
from .copy_count import check_copy_count, check_rational_form
from .count import check_count, check_count_derivation, check_count_fit
from .decoder import check_causal_count, check_causal_design, check_causal_twin
from .design import check_design
from .determinant import check_determinant
from .economy_count import check_economy_count
from .economy_prob1 import check_economy_prob1
from .fibre import check_fibre
from .floor import check_floor
from .noisy_multi import check_noisy_multi_head
from .noisy_single import check_noisy_single_head
from .nonunique import check_non_unique
from .parse import MAX_BYTES, Rejected, load, only, require
from .recovery import check_same_function
from .run import check_run
from .transformer import check_transformer, check_transformer_condition

KINDS = {
    "run": check_run,
    "count": check_count,
    "count-derivation": check_count_derivation,
    "count-fit": check_count_fit,
    "same-function": check_same_function,
    "copy-count": check_copy_count,
    "determinant": check_determinant,
    "rational-form": check_rational_form,
    "bad-set": check_bad_set,
    "non-unique": check_non_unique,
    "floor": check_floor,
    "economy-count": check_economy_count,
    "economy-prob1": check_economy_prob1,
    "fibre": check_fibre,
    "design": check_design,
    "noisy-single-head": check_noisy_single_head,
    "noisy-multi-head": check_noisy_multi_head,
    "transformer": check_transformer,
    "transformer-condition": check_transformer_condition,
    "causal-count": check_causal_count,
    "causal-twin": check_causal_twin,
    "causal-design": check_causal_design,
}

MAX_CHECKS = 200
HEADER = ("format", "version", "claim", "reference", "statement", "size", "params", "holds",
          "checks", "symbolic")
_MALFORMED = (KeyError, TypeError, ValueError, ZeroDivisionError, AttributeError, IndexError,
              RecursionError, OverflowError)


def verify(cert) -> list:
    """Verify one certificate (a parsed JSON object); return the list of findings or raise
    :class:`Rejected`."""
    require(isinstance(cert, dict), "a certificate is a JSON object")
    require(cert.get("format") == FORMAT and type(cert.get("version")) is int and
            cert.get("version") == VERSION, f"not an {FORMAT} version {VERSION} file")
    only(cert, HEADER, "certificate")
    cid = cert["claim"]
    require(isinstance(cid, str) and cid in CLAIMS, f"unknown claim {cid!r:.60}")
    ref, statement, kinds = CLAIMS[cid]
    require(cert["reference"] == ref, f"{cid}: reference {cert['reference']!r:.60} ≠ {ref!r}")
    require(cert["statement"] == statement, f"{cid}: the statement is not that of {cid}")
    require(cert["size"] in ("quick", "full"), f"{cid}: size must be quick or full")
    require(cert["holds"] is True, f"{cid}: the certificate records that the claim did not hold")
    checks = cert["checks"]
    require(isinstance(checks, list) and checks, f"{cid}: no checks")
    require(len(checks) <= MAX_CHECKS, f"{cid}: {len(checks)} checks (at most {MAX_CHECKS})")
    present = {c.get("kind") for c in checks if isinstance(c, dict)}
    require(kinds <= present, f"{cid}: missing checks {sorted(kinds - present)}")
    symbolic = cert["symbolic"]
    params = cert["params"]
    try:
        check_symbolic(cid, symbolic)
        check_size(cid, cert["size"], params)
        require(isinstance(params, dict), "params must be an object")
        fn = PARAMS[cid]
        fn(params, checks, symbolic) if cid in ("P1-P7.1", "P2-rational", "P2-count") else fn(params, checks)
        check_records(cid, params, checks)
    except Rejected as e:
        raise Rejected(f"{cid}: {e}") from None
    except _MALFORMED as e:
        raise Rejected(f"{cid}: params malformed ({type(e).__name__}: {str(e)[:80]})") from None
    findings = []
    for k, c in enumerate(checks):
        require(isinstance(c, dict) and c.get("kind") in KINDS, f"{cid}: check {k} has an unknown kind")
        try:
            findings.append(KINDS[c["kind"]](c, checks))
        except Rejected as e:
            raise Rejected(f"{cid}: check {k} ({c['kind']}): {e}") from None
        except _MALFORMED as e:
            raise Rejected(f"{cid}: check {k} ({c['kind']}) is malformed: "
                           f"{type(e).__name__}: {str(e)[:80]}") from None
    try:
        AFTER.get(cid, lambda p, cs: None)(params, checks)
    except Rejected as e:
        raise Rejected(f"{cid}: {e}") from None
    return findings


def verify_bytes(data: bytes) -> list:
    """Verify the bytes of a certificate file (strict parsing first); raises Rejected."""
    return verify(load(data))


def verify_file(path) -> list:
    """Verify one certificate file; raises Rejected (OSError if it cannot be read, or is not a
    regular file: a FIFO would block for ever and a device never end, so the file is opened
    without blocking and its descriptor checked before any read)."""
    import os
    import stat
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file: a FIFO, device or directory; give a "
                             "certificate file")
        data = f.read(MAX_BYTES + 1)
    return verify_bytes(data)


#: exit status when Ctrl-C stops the check (128 + SIGINT) or standard output was closed
#: (128 + SIGPIPE: ``... | head``; not every certificate was reported, so not 0)
INTERRUPTED, CLOSED = 130, 141


#: the longest list of findings' names shown on an ``accepted`` line
SHOWN_NAMES = 72


def accepted_line(findings: list) -> str:
    """The one line of an accepted certificate: how many checks passed and what they were
    (each finding's name, the text before its first ': ' or ' {', while they fit in SHOWN_NAMES
    characters; -v prints every finding in full)."""
    n = len(findings)
    names = list(dict.fromkeys(f.split(": ", 1)[0].split(" {", 1)[0] for f in findings))
    shown = []
    for name in names:
        if shown and len("; ".join(shown + [name])) > SHOWN_NAMES:
            break
        shown.append(name[:SHOWN_NAMES])
    rest = len(names) - len(shown)
    what = "; ".join(shown) + (f"; {rest} more" if rest else "")
    return f"{n} check{'' if n == 1 else 's'} ({what})"


def main(argv=None) -> int:
    """``python -m proofs_checks.verify [-v | -q] CERT.json ...``: one line per certificate
    (``accepted PATH: N checks (names)`` or ``REJECTED PATH: why``; ``-v`` adds every
    finding, ``-q`` is the default, kept for scripts); exit 0 if all are accepted, 1 if
    one is rejected, 2 on bad usage or an unreadable file; Ctrl-C and a closed standard output
    end it without a traceback (130, 141)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        return INTERRUPTED
    except BrokenPipeError:
        import os
        devnull = os.open(os.devnull, os.O_WRONLY)      # no second error at exit's flush
        os.dup2(devnull, sys.stdout.fileno())
        return CLOSED


def _main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    verbose = "-v" in args
    paths = [a for a in args if a not in ("-q", "-v")]
    if not paths or any(a.startswith("-") for a in paths) or {"-q", "-v"} <= set(args):
        sys.stderr.write("usage: python -m proofs_checks.verify [-v | -q] CERT.json "
                         "[CERT.json ...]\n")
        return 2
    status = 0
    for path in paths:
        try:
            findings = verify_file(path)
        except OSError as e:
            sys.stderr.write(f"{path}: cannot read ({e.strerror or e})\n")
            status = max(status, 2)
            continue
        except Rejected as e:
            print(f"REJECTED {path}: {e}")
            status = max(status, 1)
            continue
        except MemoryError:
            print(f"REJECTED {path}: too large to check")
            status = max(status, 1)
            continue
        print(f"accepted {path}: {accepted_line(findings)}")
        if verbose:
            for line in findings:
                print(f"  - {line}")
    sys.stdout.flush()                     # a closed pipe is found here, not at exit
    return status

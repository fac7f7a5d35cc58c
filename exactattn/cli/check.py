"""`exactattn check [CLAIM ...] [--quick] [--json] [--out DIR] [--allow-partial]`: verify the
papers' claims (docs/design.md §5, §7, §8).

One line per claim (ok / partial / FAIL, id, reference, sizes, time, certificate).  ``partial``
means everything that ran holds but some part was not checked (e.g. an optional dependency is
missing); it is never ``ok``.  Exit status 0 only if every claim is ok (or, with
``--allow-partial``, ok or partial); 1 otherwise.  Each exact check's JSON certificate is
re-verified in-process by the independent checker (:mod:`proofs_checks.verify`, standard
library only) — a certificate it rejects makes the claim FAIL — and written to DIR (default
./certificates; ``--no-out`` to skip writing).  Unknown claim names exit with status 2.
"""

from __future__ import annotations

import json
import sys
import time

DEFAULT_OUT = "certificates"


def register(sub):
    """Add `exactattn check` to the CLI (docs/design.md §7)."""
    p = sub.add_parser("check", help="verify the papers' claims (P1, P2) and write certificates",
                       description="Run the named claims (default: all) and print one line per "
                       "claim; exit status 0 only if every claim holds.")
    p.add_argument("claims", nargs="*", metavar="CLAIM",
                   help="claim ids such as P2-count (case-insensitive) or a prefix such as P2; "
                        "default: every claim")
    p.add_argument("--quick", action="store_true", help="small sizes (under a minute)")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of the table")
    from ._common import path_arg
    p.add_argument("--out", metavar="DIR", default=None, type=path_arg("directory"),
                   help=f"directory for the JSON certificates, made if missing (default: "
                        f"{DEFAULT_OUT}; --no-out writes none)")
    p.add_argument("--no-out", action="store_true", help="do not write certificates")
    p.add_argument("-v", "--verbose", action="store_true", help="print every finding")
    p.add_argument("--list", action="store_true", help="list the claims and exit")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    p.add_argument("--allow-partial", action="store_true",
                   help="exit 0 when claims are partial (some part not checked) but none fails")
    p.set_defaults(func=run)


def select(names):
    """Claims by id (case-insensitive) or id prefix ("P2"); UsageError for an unknown name."""
    from proofs_checks import claims
    from .main import UsageError
    every = claims()
    if not names:
        return every
    chosen = []
    for name in names:
        key = name.lower()
        hits = [c for c in every if c.id.lower() == key] or \
               [c for c in every if c.id.lower().startswith(key.rstrip("-") + "-")]
        if not hits:
            raise UsageError(f"unknown claim {name!r}; known claims: "
                             f"{', '.join(c.id for c in every)}")
        chosen += [c for c in hits if c not in chosen]
    return chosen


def certify(outcome, out_dir):
    """Re-verify the outcome's certificate with the independent checker from the bytes a file
    holds (its strict reader first, exactly as `python -m proofs_checks.verify` reads the
    file) and write it; returns (path or None, error)."""
    from proofs_checks.certificates import write_certificate
    from proofs_checks.verify import Rejected, verify_bytes
    cert = outcome.verdict.certificate
    if cert is None:
        return None, None
    error = None
    try:
        verify_bytes(json.dumps(cert, indent=1, ensure_ascii=False).encode("utf-8"))
    except Rejected as e:
        error = str(e)
    path = write_certificate(cert, out_dir) if out_dir else None
    return path, error


def run(args):
    """Run the chosen claims, verify and write their certificates, print the table."""
    from ..presentation.progress import Progress, track
    from .main import UsageError
    if args.no_out and args.out is not None:
        raise UsageError("--out and --no-out contradict each other; give one")
    chosen = select(args.claims)                  # every claim when none is named
    if args.list:
        if args.json:
            print(json.dumps([{"claim": c.id, "reference": c.reference,
                               "statement": c.statement} for c in chosen],
                             indent=1, ensure_ascii=False))
        else:
            for c in chosen:
                print(f"{c.id:15} {c.reference:30} {c.statement}")
        return 0
    out_dir = None if args.no_out else (args.out or DEFAULT_OUT)
    if out_dir is not None:
        _check_out_dir(out_dir)
    rows, start = [], time.perf_counter()
    with Progress("check", quiet=args.quiet, json=args.json) as prog:
        for claim in track(chosen, "check", describe=lambda c: c.id, progress=prog):
            rows.append(_check_one(claim, args, out_dir, prog))
    total = time.perf_counter() - start
    held = sum(r["status"] == "ok" for r in rows)
    partial = sum(r["status"] == "partial" for r in rows)
    failed = len(rows) - held - partial
    if args.json:
        print(json.dumps(rows, indent=1, ensure_ascii=False))
    else:
        where = f"; certificates in {out_dir}/" if out_dir else ""
        part = f", {partial} partial (not fully checked)" if partial else ""
        print(f"{held}/{len(rows)} claims hold{part} ({'quick' if args.quick else 'full'} sizes, "
              f"{total:.1f} s){where}")
    sys.stdout.flush()
    if failed or (partial and not args.allow_partial):
        return 1
    return 0


def _check_out_dir(path):
    """UsageError (exit status 2) before any claim runs when the certificates cannot be
    written to ``path``: a file is there, or the directory (or the nearest existing one above
    it, where it would be made) is not writable — a long run never ends in a lost result."""
    import os
    from .main import UsageError
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"--out {path}: a file of that name exists; give a directory (it is "
                         f"made when missing)")
    here = os.path.abspath(path)
    while not os.path.isdir(here):
        here = os.path.dirname(here)
    if not os.access(here, os.W_OK):
        raise UsageError(f"--out {path}: the directory {here} is not writable; choose "
                         f"another directory")


def _check_one(claim, args, out_dir, prog):
    """Run one claim, verify and write its certificate, print its row; the row as a dict."""
    from proofs_checks import run_claim
    outcome = run_claim(claim, quick=args.quick)
    path, error = certify(outcome, out_dir)
    if error and outcome.verdict.holds:
        outcome.verdict.fail(f"certificate rejected by the independent checker: {error}")
    row = outcome.to_dict()
    row.update({"certificate": path, "certificate_verified":
                None if outcome.verdict.certificate is None else error is None})
    if not args.json:
        prog.clear()
        _print_row(row, args.verbose)
    return row


def _print_row(row, verbose):
    cert = {True: "cert ok", False: "cert REJECTED", None: "no cert"}[row["certificate_verified"]]
    print(f"{row['status']:7}  {row['claim']:14}  {row['reference']:27}  {row['seconds']:5.1f} s  "
          f"{cert:13}  {row['sizes']}")
    lines = row["details"] + row["notes"] if verbose else \
        [d for d in row["details"] if d.startswith(("FAILED", "error", "not checked"))] + \
        [n for n in row["notes"] if n.startswith(("NOT CHECKED", "optional"))]
    for line in lines:
        print(f"      {line}")
    sys.stdout.flush()

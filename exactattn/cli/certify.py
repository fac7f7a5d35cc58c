"""`exactattn certify --model ORACLE.json --against M.json [--heads-bound H0]
[--certificate FILE] [--json]`: is the oracle M?  (Theorem A, docs/design.md §12.)

Hides the model in ORACLE.json behind a no-peek oracle, asks it Theorem A's moment-curve
design (d single-token queries and (L−1)(d²−1)+d families of L−1 samples, L = H + H0, H the
canonical heads of M) and compares every answer with M's exactly in Q(t).  Exit 0 when every
answer is M's: every oracle with at most H0 heads that gives these answers is M, with no
probability and no search.  Exit 1 at the first answer that differs: M is not the oracle.
"""

from __future__ import annotations

from ._common import dump, heads_int, output_file, path_arg


def register(sub):
    p = sub.add_parser("certify", help="is the oracle M? Theorem A's design, answers compared "
                                       "with M exactly (docs/design.md §12)",
                       description=__doc__.split("\n\n")[1])
    p.add_argument("--model", required=True, metavar="ORACLE", type=path_arg("file"),
                   help="model JSON of the oracle (hidden behind a no-peek oracle)")
    p.add_argument("--against", required=True, metavar="M", type=path_arg("file"),
                   help="model JSON of the candidate M (e.g. what `learn --save` wrote)")
    p.add_argument("--heads-bound", type=heads_int, default=None, metavar="H0",
                   help="the verdict covers every oracle with at most H0 heads (default: "
                        "the canonical heads of M)")
    p.add_argument("--certificate", metavar="FILE", default=None, type=output_file("file"),
                   help="write the design certificate that 'python -m proofs_checks.verify "
                        "FILE' re-checks")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--force", action="store_true",
                   help="run even when the cost estimate is above the budget")
    p.set_defaults(func=run)


def run(args):
    from ..learners.design.certify import certify
    from ..oracles.oracle import Oracle
    from .model import read_model
    oracle_model = read_model(args.model, want="multi-head-attention", command="certify")
    M = read_model(args.against, want="multi-head-attention", command="certify")
    if oracle_model.dim != M.dim:
        raise ValueError(f"{args.model} has dimension {oracle_model.dim} but {args.against} "
                         f"has {M.dim}: M must have the oracle's dimension")
    for path, m in ((args.model, oracle_model), (args.against, M)):
        if not m.is_rational:
            raise ValueError(f"{path}: certify compares answers exactly in Q(t), so the model "
                             f"needs rational entries")
    c = certify(Oracle(oracle_model, backend="exact"), M, heads_bound=args.heads_bound,
                force=args.force)
    if c.holds and args.certificate:
        c.write_certificate(args.certificate)
    if args.json:
        print(dump({"holds": c.holds, "design": "moment-curve", "dim": c.dim, "heads": c.heads,
                    "heads_bound": c.heads_bound, "queries": c.queries,
                    "needed": c.needed, "max_length": c.max_length, "families": c.families,
                    "mismatch": c.mismatch, "proves": c.proves,
                    "seconds": round(c.seconds, 3)}))
    else:
        print(f"{'certified' if c.holds else 'NOT M'}: {c.proves}")
        print(f"design: moment curve at d={c.dim}, H={c.heads}, H0={c.heads_bound}: "
              f"{c.families} famil{'y' if c.families == 1 else 'ies'} asked, {c.queries} "
              f"quer{'y' if c.queries == 1 else 'ies'} of length ≤ {c.max_length}"
              f"{'' if c.holds else f' (the design has {c.needed})'}, {c.seconds:.2f} s")
        if args.certificate and c.holds:
            print(f"certificate: {args.certificate} (python -m proofs_checks.verify "
                  f"{args.certificate})")
    return 0 if c.holds else 1

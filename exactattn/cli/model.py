"""`exactattn model random --dim D --heads H --seed S [--real]`: print a model as JSON."""

from __future__ import annotations

from ._common import positive_int


def register(sub):
    p = sub.add_parser("model", help="make models")
    msub = p.add_subparsers(dest="model_command", parser_class=type(p))
    r = msub.add_parser("random", help="a seeded random multi-head model as JSON")
    r.add_argument("--dim", type=positive_int, required=True)
    r.add_argument("--heads", type=int, default=1)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--real", action="store_true",
                   help="Gaussian real entries (mp/float only) instead of rationals")
    r.set_defaults(func=run_random)
    p.set_defaults(func=lambda a: p.print_help() or 2)


def run_random(args):
    from ..models.attention import model_to_json, random_multi_head
    if args.heads < 0:
        raise ValueError(f"--heads must be ≥ 0, got {args.heads}")
    m = random_multi_head(args.dim, args.heads, seed=args.seed,
                          kind="real" if args.real else "rational")
    print(model_to_json(m))
    return 0

"""`exactattn eval MODEL.json QUERY.json --backend B [--force]`: evaluate F(X) on one query.

QUERY.json is a list of token vectors, entries as strings "p/q" or integers (exact), or
numbers/strings (mp, float).  On the exact backend the answer's size is estimated first
(learners/p2/cost.py: up to 2·n^H terms for n distinct tokens) and refused above the budget
unless --force; an answer too large to reduce is printed unreduced (``"reduced": false``)."""

from __future__ import annotations

import json

from ._common import add_backend_args, read_json


def register(sub):
    p = sub.add_parser("eval", help="evaluate a model on a query")
    p.add_argument("model", help="model JSON (from `exactattn model random`)")
    p.add_argument("query", help="query file (JSON): a list of token vectors")
    add_backend_args(p)
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.add_argument("--force", action="store_true",
                   help="evaluate even when the exact answer's estimated size is above the budget")
    p.set_defaults(func=run)


def _tokens(data, be):
    from ..models.attention import strict_rational as parse_rational
    if not isinstance(data, list) or not all(isinstance(t, list) for t in data):
        raise ValueError("query JSON must be a list of token vectors (a list of lists)")
    out = []
    for n, tok in enumerate(data):
        row = []
        for i, x in enumerate(tok):
            where = f"query token {n}, entry {i}"
            if isinstance(x, bool) or not isinstance(x, (int, float, str)):
                raise TypeError(f"{where}: {x!r} is not a number")
            if be.name == "exact" or isinstance(x, str) and "/" in x:
                row.append(parse_rational(x, where) if not isinstance(x, float) else
                           _float_error(x, where))
            elif isinstance(x, str):
                row.append(_real(x, be, where))
            else:
                row.append(x)
        out.append(row)
    return out


def _real(text, be, where):
    """A decimal string read at the backend's precision (not through float for mp)."""
    try:
        if be.name == "mp":
            return be.ctx.mpf(text)
        return float(text)
    except (ValueError, TypeError):
        raise ValueError(f"{where}: {text!r} is not a number") from None


def _float_error(x, where):
    raise TypeError(f"{where}: {x!r} is a float; the exact backend needs rationals such as "
                    f"\"1/10\" (or use --backend mp)")


def run(args):
    from ..arith import get_backend
    from .model import read_model
    model = read_model(args.model, "multi-head-attention", "'eval'")
    be = get_backend(args.backend, args.dps)
    if be.name == "exact" and not model.is_rational:
        from ..models.attention import _first_real_entry
        where, _ = _first_real_entry(model.heads)
        raise ValueError(f"{args.model} has real entries ({where}); the exact backend needs "
                         f"rationals (use --backend mp or float)")
    toks = _tokens(read_json(args.query, "query"), be)
    if be.name == "exact" and model.is_rational and toks and model.dim is not None:
        from ..learners.p2.cost import check_budget, estimate_answer
        from ..models.attention import validate_tokens
        check_budget(estimate_answer(model, validate_tokens(toks, model.dim)), args.force)
    try:
        y = model(toks, be)
    except MemoryError as e:  # TooLarge: refused before FLINT could abort the process
        raise ValueError(str(e) or "out of memory") from None
    approx = be.to_mpf(y, 30)
    import mpmath
    out = {"backend": be.name, "value": str(y), "approx": mpmath.nstr(approx, 25)}
    if be.name == "exact" and hasattr(y, "reduce"):
        r = y.reduce()
        out["L"] = r.L
        out["reduced"] = r.is_reduced
    print(json.dumps(out) if args.json else f"{out['value']}\n≈ {out['approx']}")
    return 0

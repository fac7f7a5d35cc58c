"""`exactattn eval MODEL.json QUERY.json --backend B [--force]`: evaluate F(X) on one query.

QUERY.json is a list of token vectors, entries as strings "p/q" or integers (exact), or
numbers/strings (mp, float).  On the exact backend the answer's size is estimated first
(learners/p2/cost.py: up to 2·n^H terms for n distinct tokens) and refused above the budget
unless --force; an answer too large to reduce is printed unreduced (``"reduced": false``).
The answer is also priced by its printed size before it is computed: its terms (the
estimate above) × the bits a coefficient can gather (every distinct token's and the model's
entries, H·log₂ n for the counts); above MAX_ANSWER_CHARS it is refused unless --force."""

from __future__ import annotations

import json
import sys

from ._common import add_backend_args, read_json


#: the most characters of an exact answer printed without --force (1 MB: a screenful is a few
#: thousand; writing 10⁶ digits of one rational already costs seconds)
MAX_ANSWER_CHARS = 1_000_000


def answer_chars(model, tokens, terms: int) -> int:
    """An upper estimate of the printed size of an exact answer F(X) with `terms` terms: a
    coefficient is a sum of products of one value v_h·x_i per head over a common denominator,
    so it has at most the bits of every distinct token and of the model's entries, plus
    H·log₂ n for the counts of n tokens (decimal digits ≈ 0.30103 × bits)."""
    from fractions import Fraction

    def bits(x):
        q = Fraction(x)
        return q.numerator.bit_length() + q.denominator.bit_length()
    distinct = {tuple(t) for t in tokens}
    token_bits = sum(bits(x) for t in distinct for x in t)
    model_bits = sum(bits(x) for h in model.heads for row in [*h.W, h.v] for x in row)
    per_term = token_bits + model_bits + len(model.heads) * len(distinct).bit_length()
    return terms * (per_term * 30103 // 100000 + 16)


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
    data = read_json(args.query, "query")
    toks = _tokens(data, be)
    if be.name == "exact" and model.is_rational and toks and model.dim is not None:
        from ..learners.p2.cost import check_budget, estimate_answer
        from ..models.attention import validate_tokens
        clean = validate_tokens(toks, model.dim)
        estimate = estimate_answer(model, clean)
        check_budget(estimate, args.force)
        chars = answer_chars(model, clean, estimate.terms_per_answer)
        if chars > MAX_ANSWER_CHARS and not args.force:
            raise ValueError(f"the exact answer could print up to {chars:,} characters (above "
                             f"{MAX_ANSWER_CHARS:,}); use --backend mp, or --force to "
                             f"compute and print it")
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
    if be.name != "exact" and model.heads:
        failed = _error_bound(model, data, y, be, out)
        if failed:
            sys.stderr.write(f"exactattn eval: {failed}\n")
            out["error"] = failed.split(":", 1)[0]
            if args.json:
                print(json.dumps(out))
            return 1
    lines = [out["value"], f"≈ {out['approx']}"]
    if "error_bound" in out:
        lines.append(f"|error| ≤ {out['error_bound']} (certified by ball arithmetic, at the "
                     f"query as written and the model as read)")
    print(json.dumps(out) if args.json else "\n".join(lines))
    return 0


def _exact_entry(x):
    """A query entry as the number written: ints, "p/q" and decimal text exactly, a JSON
    float as its binary value (the entries :func:`_tokens` accepted)."""
    if isinstance(x, str):
        if "/" in x:
            from ..models.attention import strict_rational
            return strict_rational(x)
        from fractions import Fraction
        from ..arith.numbers import decimal_parts
        man, exp = decimal_parts(x)
        return Fraction(man) * Fraction(10) ** exp
    return x


#: the most dps a "use --dps N" hint tries (each try an mp evaluation and its check)
HINT_TRIES = 4


def _digits(be) -> int:
    """The digits an mp / float answer must have: half the backend's (dps/2 on mp, 8 of
    float64's 16)."""
    return be.dps // 2 if be.name == "mp" else 8


def _check(model, data, exact, be, y=None):
    """:func:`~exactattn.models.enclosure.answer_error` of ``be``'s answer (computed when
    ``y`` is None) against F(X) at the exact query ``exact``."""
    from ..models.enclosure import answer_error
    if y is None:
        y = model(_tokens(data, be), be)
    bits = be.ctx.prec if be.name == "mp" else 53
    return answer_error([(h.W, h.v) for h in model.heads], exact, y, _digits(be), 2 * bits + 64)


def _error_bound(model, data, y, be, out):
    """Certify the mp / float answer ``y`` (docs/design.md §2.7): its error against F(X) at
    the query as written (the model's parameters as read), bounded in ball arithmetic, must
    be below 10^−k of |F(X)| (or of the values' size S when F(X) ≠ 0 is not shown),
    k = :func:`_digits`.  Records the bound in ``out``; returns the named failure line, or
    None."""
    from ..arith.numbers import upper_decimal
    exact = [[_exact_entry(x) for x in t] for t in data]
    r = _check(model, data, exact, be, y)
    out["error_bound"] = upper_decimal(r.bound)
    out["certified_digits"] = r.digits if r.ok else None
    if r.ok:
        return None
    at = f"dps={be.dps}" if be.name == "mp" else "float64"
    value = r.value.str(12)
    if not r.decided:
        return (f"uncertified: the {be.name} answer at {at} could not be bounded to {r.digits} "
                f"digits (F(X) ∈ {value} at {r.prec} bits, |error| ≤ {out['error_bound']}); "
                f"use --backend exact for rational input")
    from ._common import MAX_DPS
    need = _hint_start(r, be.dps if be.name == "mp" else 16)
    dps = _passing_dps(model, data, exact, need)
    flag = "--dps" if be.name == "mp" else "--backend mp --dps"
    if dps:
        hint = f"{flag} {dps} passes this check"
    else:
        hint = (f"about {flag} {need} would be needed, beyond the {MAX_DPS} allowed"
                if need > MAX_DPS else f"no {flag} up to {8 * need} passed this check")
    return (f"precision-lost: the {be.name} answer {out['approx']} at {at} is off by up to "
            f"{out['error_bound']}, more than 10^-{r.digits} of {r.relative_to} (F(X) ∈ "
            f"{value}, certified): cancellation lost the digits; {hint}, or use --backend "
            f"exact for rational input")


def _hint_start(r, dps: int) -> int:
    """A first dps to try (display only): an evaluation at D digits errs by about 10^−D·C,
    C the size of its intermediate values (at least S, and at least the error seen times
    10^dps), and passes when that is below 10^(−D/2)·|F(X)|: D ≈ 2·log10(C/|F(X)|) + 10;
    twice dps when F(X) ≠ 0 is not shown."""
    import mpmath
    if r.relative_to != "|F(X)|":
        return 2 * dps
    size = (lambda b: mpmath.mpf(b.mid().str(20, radius=False)))
    C = max(size(r.values), size(r.bound) * mpmath.mpf(10) ** dps)
    return max(dps + 10, 2 * int(mpmath.ceil(mpmath.log10(C / size(r.value.abs_lower())))) + 10)


def _passing_dps(model, data, exact, start: int):
    """The least dps tried that passes the check — ``start`` (:func:`_hint_start`), then
    doubled, at most HINT_TRIES times and MAX_DPS — or None: a hint re-derived, not
    guessed."""
    from ..arith import get_backend
    from ._common import MAX_DPS
    D = start
    for _ in range(HINT_TRIES):
        if D > MAX_DPS:
            return None
        if _check(model, data, exact, get_backend("mp", D)).ok:
            return D
        D *= 2
    return None

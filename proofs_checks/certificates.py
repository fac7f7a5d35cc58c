"""Writing certificates (docs/design.md §5): JSON with rationals as strings "p/q", exponents as integers.

The reading side is :mod:`proofs_checks.verify` (standard library only).  The writer may use
exactattn, sympy and flint; what it writes is re-derived, not trusted, by the checker.
"""

from __future__ import annotations

import json
import os
from fractions import Fraction

from exactattn.arith.numbers import format_rational

FORMAT = "exactattn-certificate"
VERSION = 1

__all__ = ["new_certificate", "rational", "vector_json", "heads_json", "poly_json",
           "element_json", "transcript_json", "write_certificate", "FORMAT", "VERSION"]


def rational(q) -> str:
    """A rational as "p" or "p/q" (the only way numbers other than exponents are written)."""
    if hasattr(q, "p") and hasattr(q, "q") and not isinstance(q, Fraction):  # sympy / flint
        q = Fraction(int(q.p), int(q.q))
    return format_rational(Fraction(q))


def vector_json(v) -> list:
    return [rational(x) for x in v]


def heads_json(heads) -> list:
    """[(W, v)] or AttentionHeads / a MultiHeadAttention → [{"W": [[..]], "v": [..]}]."""
    out = []
    for h in heads:
        W, v = (h.W, h.v) if hasattr(h, "W") else h
        out.append({"W": [vector_json(r) for r in W], "v": vector_json(v)})
    return out


def poly_json(poly, variables) -> dict:
    """A sympy Poly (or expression) over Q in `variables` as sparse terms + total degree."""
    import sympy
    p = poly if isinstance(poly, sympy.Poly) else sympy.Poly(poly, *variables, domain="QQ")
    if list(p.gens) != list(variables):
        p = sympy.Poly(p.as_expr(), *variables, domain="QQ")
    terms = [[list(map(int, e)), rational(c)] for e, c in sorted(p.terms())]
    return {"variables": [str(x) for x in variables], "terms": terms,
            "degree": int(p.total_degree()) if terms else -1}


def element_json(e) -> dict:
    """An ExpElement num(t)/den(t), t = e^{1/L}, as sparse [exponent, "coefficient"] lists,
    written over the smallest L (gcd of L and every exponent is 1), so L cannot be altered
    without changing the value."""
    from math import gcd
    num, den = e.terms()
    L, g = int(e.L), int(e.L)
    for k, _ in list(num) + list(den):
        g = gcd(g, int(k))
    g = g or 1
    sparse = lambda ts: sorted([int(k) // g, rational(c)] for k, c in ts if c != 0)  # noqa: E731
    return {"L": L // g, "num": sparse(num), "den": sparse(den)}


def transcript_json(transcript) -> list:
    """An Oracle transcript [(tokens, answer)] on the exact backend."""
    return [{"tokens": [vector_json(t) for t in toks], "answer": element_json(ans)}
            for toks, ans in transcript]


def new_certificate(claim, params: dict) -> dict:
    """The common header (``size`` is filled in by the registry); claim modules append their
    checks to ``checks`` and sympy results, for the reader, to ``symbolic``.  ``params`` keeps
    only the sizes the checks cover: seeds are left out (the models themselves are recorded)
    and so are uncertified parts (e.g. float baselines)."""
    params = {k: v for k, v in params.items() if k != "seed" and not k.startswith("cs_")}
    return {"format": FORMAT, "version": VERSION, "claim": claim.id,
            "reference": claim.reference, "statement": claim.statement, "size": None,
            "params": params, "holds": True, "checks": [], "symbolic": []}


def write_certificate(cert: dict, directory) -> str:
    """Write CLAIM.json into `directory` (created if needed); return its path."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{cert['claim']}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(cert, f, indent=1, ensure_ascii=False)
        f.write("\n")
    return path

"""Sparse multivariate polynomials over Q as dicts {exponent tuple: Fraction}."""

from __future__ import annotations

from fractions import Fraction

from .parse import only, rat, require


def poly_from(data, variables, where):
    """A polynomial object {variables, terms[, degree]} (no other field) as a sparse dict."""
    require(isinstance(data, dict), f"{where}: expected a polynomial object")
    only(data, ("variables", "terms"), where, optional=("degree",))
    require(data.get("variables") == variables, f"{where}: variables {data.get('variables')} "
            f"differ from the expected {variables}")
    terms = data.get("terms")
    require(isinstance(terms, list), f"{where}: 'terms' must be a list")
    p = {}
    for k, term in enumerate(terms):
        require(isinstance(term, list) and len(term) == 2, f"{where}.terms[{k}]: [exponents, coeff]")
        e, c = term
        require(isinstance(e, list) and len(e) == len(variables) and
                all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in e),
                f"{where}.terms[{k}]: bad exponent list {e!r}")
        e = tuple(e)
        require(e not in p, f"{where}: repeated monomial {list(e)}")
        c = rat(c, f"{where}.terms[{k}]")
        require(c != 0, f"{where}.terms[{k}]: zero coefficient listed")
        p[e] = c
    if "degree" in data:
        require(data["degree"] == degree(p), f"{where}: stated degree {data['degree']} but the "
                f"terms have total degree {degree(p)}")
    return p


def degree(p) -> int:
    return max((sum(e) for e in p), default=-1)


def padd(p, q):
    """Sum of two sparse polynomials {exponent(s): coefficient} (univariate or not)."""
    out = dict(p)
    for e, c in q.items():
        s = out.get(e, 0) + c
        if s:
            out[e] = s
        else:
            out.pop(e, None)
    return out


def pscale(p, c):
    return {e: a * c for e, a in p.items()} if c else {}


def pmul(p, q):
    out = {}
    for e1, a in p.items():
        for e2, b in q.items():
            e = tuple(x + y for x, y in zip(e1, e2))
            s = out.get(e, 0) + a * b
            if s:
                out[e] = s
            else:
                out.pop(e)
    return out


def ppow(p, n, nvars):
    out = {(0,) * nvars: Fraction(1)}
    for _ in range(n):
        out = pmul(out, p)
    return out


def peval(p, point):
    total = Fraction(0)
    for e, c in p.items():
        term = c
        for x, k in zip(point, e):
            if k:
                term *= x ** k
        total += term
    return total


def pvar(i, n):
    return {tuple(int(j == i) for j in range(n)): Fraction(1)}


def pconst(c, n):
    return {(0,) * n: Fraction(c)} if c else {}


def pdet(M, n):
    """Determinant of a small matrix of polynomials (Laplace expansion)."""
    if len(M) == 1:
        return M[0][0]
    out = {}
    for j in range(len(M)):
        minor = [row[:j] + row[j + 1:] for row in M[1:]]
        term = pmul(M[0][j], pdet(minor, n))
        out = padd(out, term if j % 2 == 0 else pscale(term, -1))
    return out


def normalise(p):
    """p divided by its leading coefficient (lexicographically largest monomial)."""
    if not p:
        return p
    lead = p[max(p)]
    return {e: c / lead for e, c in p.items()}

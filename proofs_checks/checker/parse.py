"""Strict reading of certificate values: rationals written "p" or "p/q" in lowest terms,
integers, vectors, matrices and heads (standard library only, nothing is evaluated)."""

from __future__ import annotations

import re
from fractions import Fraction

class Rejected(Exception):
    """The certificate does not verify; the message says which check and why."""


def require(cond, message):
    """Raise Rejected(message) unless cond."""
    if not cond:
        raise Rejected(message)


_RAT = re.compile(r"-?[0-9]+(/[0-9]+)?")


def rat(s, where="number") -> Fraction:
    """A rational from its certificate text "p" or "p/q" (no evaluation of any kind)."""
    if not isinstance(s, str):
        raise Rejected(f"{where}: expected a rational written as a string \"p/q\", got {s!r}")
    require(_RAT.fullmatch(s) is not None, f"{where}: {s!r} is not a rational \"p\" or \"p/q\"")
    p, _, q = s.partition("/")
    require(not q or int(q) != 0, f"{where}: zero denominator in {s!r}")
    value = Fraction(int(p), int(q) if q else 1)
    require(fmt(value) == s, f"{where}: {s!r} is not in lowest terms")
    return value


def integer(n, where="integer") -> int:
    require(isinstance(n, int) and not isinstance(n, bool), f"{where}: expected an integer, got {n!r}")
    return n


def fmt(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def vector(v, where):
    require(isinstance(v, list), f"{where}: expected a list")
    return [rat(x, f"{where}[{i}]") for i, x in enumerate(v)]


def matrix(M, where):
    require(isinstance(M, list) and M, f"{where}: expected a non-empty list of rows")
    return [vector(r, f"{where}[{i}]") for i, r in enumerate(M)]


def heads(data, dim, where):
    """[(W, v)] with W a tuple of row tuples and v a tuple, all Fractions, d×d and d."""
    require(isinstance(data, list), f"{where}: expected a list of heads")
    out = []
    for h, hd in enumerate(data):
        require(isinstance(hd, dict) and set(hd) == {"W", "v"}, f"{where}[{h}]: a head is {{W, v}}")
        W = matrix(hd["W"], f"{where}[{h}].W")
        v = vector(hd["v"], f"{where}[{h}].v")
        require(len(W) == dim and all(len(r) == dim for r in W) and len(v) == dim,
                f"{where}[{h}]: not of dimension {dim}")
        out.append((tuple(map(tuple, W)), tuple(v)))
    return out

"""Input coercion with errors that name the offending entry (docs/design.md §2: "an irrational input
is a clear error").

Every public entry point that takes numbers (model parameters, query tokens, JSON files)
passes them through here, so a float handed to the exact backend, a string that is not a
number or a non-rational sympy expression is reported with *where* it was found and what to
do instead.
"""

from __future__ import annotations

import numbers
from fractions import Fraction

__all__ = ["exact_fraction", "to_rational", "to_matrix", "to_vector", "parse_rational", "format_rational",
           "is_rational_like"]


def _sympy_rational(x):
    try:
        import sympy
    except ImportError:  # pragma: no cover - sympy is a core dependency
        return None
    if isinstance(x, sympy.Basic):
        if isinstance(x, sympy.Rational):
            return Fraction(int(x.p), int(x.q))
        return False
    return None


def is_rational_like(x) -> bool:
    try:
        to_rational(x)
        return True
    except (TypeError, ValueError):
        return False


def to_rational(x, where: str = "value") -> Fraction:
    """Exact rational from int / Fraction / "p" or "p/q" string / flint fmpq,fmpz / numpy
    integer / sympy Rational (docs/design.md §2) — the types every exact entry point accepts,
    in Python as in JSON.

    Floats are refused (their binary value is rarely what was meant: 0.1 is
    3602879701896397/36028797018963968); so are bools, decimal strings and expressions.
    """
    tx = type(x)
    if tx is Fraction:
        return x
    if tx is int:
        return Fraction(x)
    if isinstance(x, Fraction):
        return x
    if isinstance(x, bool):
        raise TypeError(f"{where}: {x!r} is a bool, not a number")
    if isinstance(x, str):
        try:
            return parse_rational(x, where)
        except ValueError:
            raise TypeError(f"{where}: {x!r} is not a number (write a rational as a string "
                            f"\"p\" or \"p/q\", e.g. \"-3/4\")") from None
    if isinstance(x, numbers.Integral):
        return Fraction(int(x))
    mod = type(x).__module__
    if mod.startswith("flint"):
        name = type(x).__name__
        if name == "fmpq":
            return Fraction(int(x.p), int(x.q))
        if name == "fmpz":
            return Fraction(int(x))
    s = _sympy_rational(x)
    if s is False:
        raise ValueError(
            f"{where}: {x} is not a rational number; the exact backend needs rationals "
            f"(use the mp backend for real values)")
    if s is not None:
        return s
    if isinstance(x, numbers.Real):
        import math
        if not math.isfinite(x):
            raise ValueError(f"{where}: {x!r} is not a finite number")
        raise TypeError(
            f"{where}: {x!r} is a {type(x).__name__}; the exact backend needs exact rationals "
            f"(write an integer, a Fraction or a string \"p/q\" such as "
            f"\"{format_rational(Fraction(x).limit_denominator(10**6))}\", or use the mp or "
            f"float backend)")
    raise TypeError(f"{where}: {x!r} ({type(x).__name__}) is not a number")


def parse_rational(s, where: str = "value") -> Fraction:
    """Rational from text: "3", "-2/7" (no floats, no decimals, no evaluation of
    expressions); ints and Fractions pass through."""
    if isinstance(s, (int, Fraction)) and not isinstance(s, bool):
        return Fraction(s)
    if not isinstance(s, str):
        raise TypeError(f"{where}: expected a rational written as a string like \"-3/4\", got {s!r}")
    text = s.strip()
    parts = text.split("/")
    try:
        if len(parts) == 1:
            return Fraction(int(parts[0]))
        if len(parts) == 2:
            den = int(parts[1])
            if den == 0:
                raise ValueError
            return Fraction(int(parts[0]), den)
    except ValueError:
        pass
    raise ValueError(f"{where}: {s!r} is not a rational of the form \"p\" or \"p/q\"")


def exact_fraction(y) -> Fraction:
    """The exact rational value of an int, Fraction, mpmath mpf or float (binary floating
    point is a dyadic rational: read exactly, never rounded)."""
    if isinstance(y, (int, Fraction)):
        return Fraction(y)
    if hasattr(y, "_mpf_"):
        sign, man, exp, _ = y._mpf_
        q = Fraction(man) * (Fraction(2) ** exp)
        return -q if sign else q
    return Fraction(float(y))


def format_rational(q) -> str:
    q = Fraction(q)
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def _rows(M, where):
    try:
        import numpy as np
        if isinstance(M, np.ndarray):
            return [list(r) for r in M.tolist()] if M.ndim == 2 else None
    except ImportError:  # pragma: no cover
        pass
    if hasattr(M, "tolist") and not isinstance(M, (list, tuple)):
        M = M.tolist()
    try:
        return [list(r) for r in M]
    except TypeError:
        raise TypeError(f"{where}: expected a matrix (list of rows), got {type(M).__name__}") from None


def to_matrix(M, convert, where: str = "W", shape=None):
    """Square list-of-lists of converted entries; `convert(x, where)` converts one entry."""
    rows = _rows(M, where)
    if rows is None or not rows:
        raise ValueError(f"{where}: expected a non-empty d×d matrix")
    d = len(rows)
    for i, r in enumerate(rows):
        if len(r) != (shape[1] if shape else d):
            raise ValueError(f"{where}: row {i} has {len(r)} entries, expected "
                             f"{shape[1] if shape else d} (a square d×d matrix)")
    if shape and len(rows) != shape[0]:
        raise ValueError(f"{where}: {len(rows)} rows, expected {shape[0]}")
    return [[convert(x, f"{where}[{i}][{j}]") for j, x in enumerate(r)] for i, r in enumerate(rows)]


def to_vector(v, convert, where: str = "v", length=None):
    if hasattr(v, "tolist") and not isinstance(v, (list, tuple)):
        v = v.tolist()
    try:
        items = list(v)
    except TypeError:
        raise TypeError(f"{where}: expected a vector, got {type(v).__name__}") from None
    # a sympy column Matrix tolists to [[a], [b]]
    if items and all(isinstance(x, list) and len(x) == 1 for x in items):
        items = [x[0] for x in items]
    if length is not None and len(items) != length:
        raise ValueError(f"{where}: has {len(items)} entries, expected {length}")
    return [convert(x, f"{where}[{i}]") for i, x in enumerate(items)]

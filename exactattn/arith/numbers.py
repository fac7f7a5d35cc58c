"""Input coercion with errors that name the offending entry (docs/design.md §2: "an irrational input
is a clear error").

Every public entry point that takes numbers (model parameters, query tokens, JSON files)
passes them through here, so a float handed to the exact backend, a string that is not a
number or a non-rational sympy expression is reported with *where* it was found and what to
do instead.
"""

from __future__ import annotations

import numbers
import re
from fractions import Fraction

__all__ = ["exact_fraction", "to_rational", "to_matrix", "to_vector", "parse_rational", "format_rational",
           "is_rational_like", "decimal_parts", "decimal_mpf", "shown", "brief", "upper_decimal",
           "lower_decimal",
           "NumberTooLarge", "MAX_INT_DIGITS", "MAX_REAL_DIGITS", "MAX_EXPONENT"]

# Limits on numbers written as text (model JSON entries, a file's dps, noise levels τ;
# docs/honesty.md, "Hostile input"): beyond them reading alone costs minutes and gigabytes
# (mpmath reads "1e999999999" by building 10^999999999), and no model needs them.
#: the most digits of an integer, numerator or denominator: Python's own limit on int() of a
#: string (4300 by default), which would otherwise fail with a message naming no entry
MAX_INT_DIGITS = 4300
#: the most digits of a real number's mantissa, and the largest dps a model file may ask:
#: three times the largest --dps (10 000; an entry written at dps N has about N + 3 digits)
MAX_REAL_DIGITS = 30000
#: the largest |decimal exponent| of a real number written in text: |x| from 10^-10000 to
#: 10^10000 (float64 spans 10^±308)
MAX_EXPONENT = 10000


class NumberTooLarge(ValueError):
    """A number written with more digits, or a larger decimal exponent, than the limits above."""


def shown(s, limit: int = 40) -> str:
    """repr of a text for an error message, cut to ``limit`` characters (a 100 000-digit entry
    is named, not printed)."""
    if not isinstance(s, str) or len(s) <= limit:
        return repr(s)
    return repr(s[:limit]) + f"… ({len(s)} characters)"


def brief(x, limit: int = 60) -> str:
    """repr of any value for an error message, cut to ``limit`` characters (a JSON list where
    a number belongs may be megabytes long)."""
    r = repr(x)
    return r if len(r) <= limit else r[:limit] + f"… ({len(r)} characters)"


def _digits_int(digits: str) -> int:
    """int of an ASCII digit string of any length up to MAX_REAL_DIGITS, in pieces below
    Python's 4300-digit limit on int() of a string."""
    if len(digits) <= 4000:
        return int(digits or "0")
    n = 0
    for i in range(0, len(digits), 4000):
        piece = digits[i:i + 4000]
        n = n * 10 ** len(piece) + int(piece)
    return n


_DECIMAL = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?")


def decimal_parts(text: str, where: str = "value"):
    """(man, exp) with value man·10^exp of a decimal written like "-1.25e-3" (ASCII digits, an
    optional sign, point and exponent); at most MAX_REAL_DIGITS digits and a decimal exponent
    (the power of ten of its first digit) within ±MAX_EXPONENT, else :class:`NumberTooLarge`
    naming ``where`` — checked on the text, before any number is built."""
    m = _DECIMAL.fullmatch(text) if isinstance(text, str) else None
    if m is None or not (m.group(2) or m.group(3)):
        raise ValueError(f"{where}: {shown(text)} is not a decimal number like -1.25e-3")
    sign, whole, frac, written = m.groups()
    frac = frac or ""
    if len(whole) + len(frac) > MAX_REAL_DIGITS:
        raise NumberTooLarge(f"{where}: {shown(text)} has {len(whole) + len(frac)} digits, above "
                             f"the limit of {MAX_REAL_DIGITS}; round it (a number at --dps N "
                             f"needs about N digits)")
    limits = (f"a number read from text has a decimal exponent within ±{MAX_EXPONENT} (about "
              f"1e-{MAX_EXPONENT} to 1e{MAX_EXPONENT} in size, or 0)")
    if written is not None and len(written.lstrip("+-").lstrip("0")) > 6:
        raise NumberTooLarge(f"{where}: {shown(text)} has a decimal exponent beyond "
                             f"±{MAX_EXPONENT}; {limits}")
    e = int(written or 0)
    frac = frac.rstrip("0")
    digits = (whole + frac).lstrip("0")
    exp = e - len(frac)
    magnitude = exp + len(digits) - 1 if digits else e
    if abs(magnitude) > MAX_EXPONENT:
        what = f"is about 1e{magnitude}" if digits else f"has the exponent {e}"
        raise NumberTooLarge(f"{where}: {shown(text)} {what}, beyond ±{MAX_EXPONENT} in decimal "
                             f"exponent; {limits}")
    man = _digits_int(digits)
    return (-man if sign == "-" else man), exp


def decimal_mpf(text: str, where: str = "value", ctx=None):
    """The mpf of a decimal text at ``ctx``'s precision (default mpmath.mp), rounded exactly as
    ``mpf(text)`` rounds it, after the checks of :func:`decimal_parts` (and without Python's
    4300-digit limit, so that an entry written at --dps 10 000 reads back)."""
    import mpmath
    from mpmath.libmp import from_int, from_rational, mpf_mul, mpf_pow_int
    ctx = ctx or mpmath.mp
    man, exp = decimal_parts(text, where)
    prec, rnd = ctx._prec_rounding
    if abs(exp) > 400:                    # as mpmath.libmp.from_str
        raw = mpf_mul(from_int(man, prec + 10), mpf_pow_int(from_int(10), exp, prec + 10),
                      prec, rnd)
    elif exp >= 0:
        raw = from_int(man * 10 ** exp, prec, rnd)
    else:
        raw = from_rational(man, 10 ** -exp, prec, rnd)
    return ctx.mpf(raw)


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
        except NumberTooLarge:
            raise
        except ValueError:
            raise TypeError(f"{where}: {shown(x)} is not a number (write a rational as a string "
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
    raise TypeError(f"{where}: {brief(x)} ({type(x).__name__}) is not a number")


def parse_rational(s, where: str = "value") -> Fraction:
    """Rational from text: "3", "-2/7" (no floats, no decimals, no evaluation of
    expressions); ints and Fractions pass through."""
    if isinstance(s, (int, Fraction)) and not isinstance(s, bool):
        return Fraction(s)
    if not isinstance(s, str):
        raise TypeError(f"{where}: expected a rational written as a string like \"-3/4\", got "
                        f"{brief(s)}")
    text = s.strip()
    parts = text.split("/")
    for part in parts:
        n = sum(c.isdigit() for c in part)
        if n > MAX_INT_DIGITS:
            raise NumberTooLarge(f"{where}: {shown(s)} has a part of {n} digits, above the limit "
                                 f"of {MAX_INT_DIGITS} digits for an integer, numerator or "
                                 f"denominator")
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
    raise ValueError(f"{where}: {shown(s)} is not a rational of the form \"p\" or \"p/q\"")


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


def _exact_value(x):
    """The exact rational value of an int, Fraction, float, mpf or arb midpoint; a string
    for inf / nan."""
    if hasattr(x, "man_exp") and callable(x.man_exp):             # a python-flint arb
        if not x.is_finite():
            return "inf"
        man, exp = (int(t) for t in x.man_exp())
        return Fraction(man) * Fraction(2) ** exp
    if hasattr(x, "_mpf_") and x._mpf_[1] == 0 and x._mpf_[2] != 0 or \
            isinstance(x, float) and (x != x or abs(x) == float("inf")):
        return str(x)                                             # inf / nan: not a number
    return exact_fraction(x)


def decimal_exponent(a: Fraction) -> int:
    """⌊log₁₀ a⌋ of a rational a > 0, exactly: a first exponent from the bit lengths (no
    str() of a 10 000-digit integer), then corrected with powers of 10."""
    # log10(2) < 30103/100000
    e = (a.numerator.bit_length() - a.denominator.bit_length()) * 30103 // 100000
    while Fraction(10) ** e > a:
        e -= 1
    while Fraction(10) ** (e + 1) <= a:
        e += 1
    return e


def upper_decimal(x, digits: int = 3) -> str:
    """``x`` in decimal with ``digits`` significant digits, rounded toward +∞, so that a
    printed upper bound (an error bar, an evaluation's error) is still an upper bound
    (docs/honesty.md, "Printed bounds"); rounding to nearest could print a number below it.
    ``x``: an int, Fraction, float, mpmath mpf or an exact python-flint arb point (a ball
    with a radius raises ValueError: pass its upper end).  Scientific notation outside 10^-4 ≤ |x| < 10^digits, trailing zeros cut;
    the decimal exponent comes from bit lengths (no str() of a 10 000-digit integer)."""
    q = _exact_value(x)
    if isinstance(q, str):
        return q
    if q == 0:
        return "0"
    e = decimal_exponent(abs(q))
    n = -(-q * Fraction(10) ** (digits - 1 - e) // 1)             # ceil, |n| < 10^digits + 1
    if abs(n) == 10 ** digits:
        n, e = n // 10, e + 1
    sign, body = ("-" if n < 0 else ""), str(abs(n))
    if -4 <= e < digits:                        # fixed: n·10^-scale, scale ≥ 0 places
        scale = digits - 1 - e
        padded = body.rjust(scale + 1, "0")
        text = f"{padded[:len(padded) - scale]}.{padded[len(padded) - scale:]}" if scale else body
        return sign + (text.rstrip("0").rstrip(".") if scale else text)
    frac = body[1:].rstrip("0")
    return f"{sign}{body[0]}{'.' + frac if frac else ''}e{e:+d}"


def lower_decimal(x, digits: int = 3) -> str:
    """``x`` rounded toward −∞ (:func:`upper_decimal` mirrored): how an *assumption* such as a
    noise level τ is printed, so that a statement "holds for every answer within ±τ" never
    claims more than was assumed."""
    q = _exact_value(x)
    if isinstance(q, str):
        return q
    text = upper_decimal(-q, digits)            # negated exactly (an arb would round)
    return text[1:] if text.startswith("-") else text if text == "0" else "-" + text


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

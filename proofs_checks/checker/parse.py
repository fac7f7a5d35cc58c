"""Strict reading of certificates (standard library only, nothing is evaluated).

:func:`load` bounds the input before any work — size, UTF-8, nesting depth, number literals —
and rejects duplicate keys, floats and the constants NaN / Infinity.  The readers below then
demand exact types: rationals written "p" or "p/q" in lowest terms (as strings, of bounded
length), integers that are not booleans, vectors, matrices and heads, and :func:`field`
demands that a key the verdict relies on is present.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction

#: bounds applied before parsing (a certificate of the full check is a few MB)
MAX_BYTES = 64 * 1024 * 1024
#: a fibre tree nests two levels per copy-count family: at d ≤ 8, 2d² − 1 = 127 schedule
#: families and at most 16 extra ones, 143 levels, 291 with the record around them
MAX_DEPTH = 320
#: an integer literal (an exponent k = L·score): a design certificate's exponents grow as
#: λ^(d²−1), about 860 digits at d = 16 (docs/design.md §12)
MAX_INT_DIGITS = 1200
MAX_RATIONAL_CHARS = 4000


class Rejected(Exception):
    """The certificate does not verify; the message says which check and why."""


def require(cond, message):
    """Raise Rejected(message) unless cond."""
    if not cond:
        raise Rejected(message)


# ------------------------------------------------------------------ loading
#: a JSON string literal (escapes included), and the brackets outside them
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")


def _depth(text: str) -> int:
    """Maximum nesting depth of [ and { outside strings: the string literals are cut out
    (a regular expression, no recursion), then the brackets left are counted.  An
    unterminated string leaves its brackets counted: never a smaller depth than json sees."""
    depth = best = 0
    for ch in _BRACKETS.findall(_STRING.sub("", text)):
        if ch in "[{":
            depth += 1
            if depth > best:
                best = depth
                if best > MAX_DEPTH:
                    return best
        else:
            depth -= 1
    return best


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise Rejected(f"duplicate key {k!r} in a JSON object")
        out[k] = v
    return out


def _int(text):
    digits = text.lstrip("-")
    if len(digits) > MAX_INT_DIGITS:
        raise Rejected(f"an integer literal has {len(digits)} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _no_float(text):
    raise Rejected(f"a float literal {text[:30]!r}: numbers are integers or rationals \"p/q\"")


def _no_constant(text):
    raise Rejected(f"the constant {text} is not allowed")


def load(data: bytes):
    """Parse certificate bytes strictly; raise Rejected with a one-line reason."""
    require(isinstance(data, (bytes, bytearray)), "expected the bytes of a file")
    require(len(data) <= MAX_BYTES, f"the file has {len(data)} bytes (at most {MAX_BYTES})")
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as e:
        raise Rejected(f"not UTF-8 text (invalid byte at offset {e.start})") from None
    require("\x00" not in text, "binary data (a NUL character) in the file")
    d = _depth(text)
    require(d <= MAX_DEPTH, f"nesting deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_int=_int,
                          parse_float=_no_float, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise Rejected(f"not valid JSON ({e})") from None
    except (ValueError, RecursionError) as e:
        raise Rejected(f"not a readable certificate ({type(e).__name__}: {str(e)[:80]})") from None


# ------------------------------------------------------------------ values
def field(obj, key, where):
    """obj[key], which must be present (a field the verdict relies on)."""
    require(isinstance(obj, dict), f"{where}: expected an object")
    require(key in obj, f"{where}: required field {key!r} is missing")
    return obj[key]


def only(obj, keys, where, optional=()):
    """obj has exactly the fields `keys` (plus any of `optional`)."""
    require(isinstance(obj, dict), f"{where}: expected an object")
    missing = set(keys) - set(obj)
    extra = set(obj) - set(keys) - set(optional)
    require(not missing, f"{where}: required field(s) {sorted(missing)} missing")
    require(not extra, f"{where}: unexpected field(s) {sorted(extra)}")
    return obj


_RAT = re.compile(r"-?[0-9]+(/[0-9]+)?")


def rat(s, where="number") -> Fraction:
    """A rational from its certificate text "p" or "p/q" (no evaluation of any kind)."""
    if not isinstance(s, str):
        raise Rejected(f"{where}: expected a rational written as a string \"p/q\", got {s!r:.40}")
    require(len(s) <= MAX_RATIONAL_CHARS, f"{where}: a rational of {len(s)} characters "
            f"(at most {MAX_RATIONAL_CHARS})")
    require(_RAT.fullmatch(s) is not None, f"{where}: {s[:40]!r} is not a rational \"p\" or \"p/q\"")
    p, _, q = s.partition("/")
    require(not q or int(q) != 0, f"{where}: zero denominator in {s!r}")
    value = Fraction(int(p), int(q) if q else 1)
    require(fmt(value) == s, f"{where}: {s[:40]!r} is not in lowest terms")
    return value


def integer(n, where="integer", lo=None, hi=None) -> int:
    """An int that is not a bool, optionally within [lo, hi]."""
    require(type(n) is int, f"{where}: expected an integer, got {n!r:.40}")
    require(lo is None or n >= lo, f"{where}: {n} < {lo}")
    require(hi is None or n <= hi, f"{where}: {n} > {hi}")
    return n


def boolean(b, where) -> bool:
    require(type(b) is bool, f"{where}: expected true or false, got {b!r:.40}")
    return b


def string(s, where) -> str:
    require(isinstance(s, str), f"{where}: expected a string")
    return s


def fmt(q: Fraction) -> str:
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def listed(v, where, max_len=None):
    require(isinstance(v, list), f"{where}: expected a list")
    require(max_len is None or len(v) <= max_len, f"{where}: {len(v)} entries (at most {max_len})")
    return v


def vector(v, where, length=None):
    listed(v, where)
    require(length is None or len(v) == length, f"{where}: expected {length} entries, got {len(v)}")
    return [rat(x, f"{where}[{i}]") for i, x in enumerate(v)]


def matrix(M, where, rows=None, cols=None):
    require(isinstance(M, list) and M, f"{where}: expected a non-empty list of rows")
    require(rows is None or len(M) == rows, f"{where}: expected {rows} rows, got {len(M)}")
    return [vector(r, f"{where}[{i}]", cols) for i, r in enumerate(M)]


def heads(data, dim, where, max_heads=64):
    """[(W, v)] with W a tuple of row tuples and v a tuple, all Fractions, d×d and d."""
    listed(data, where, max_heads)
    out = []
    for h, hd in enumerate(data):
        only(hd, ("W", "v"), f"{where}[{h}]")
        W = matrix(hd["W"], f"{where}[{h}].W", dim, dim)
        v = vector(hd["v"], f"{where}[{h}].v", dim)
        out.append((tuple(map(tuple, W)), tuple(v)))
    return out


def multiset(model):
    """A model as a multiset of heads (sorted tuple): a duplicated head is not the same model."""
    return tuple(sorted(model))


def same_json(a, b) -> bool:
    """Structural equality with exact types (true is not 1, "1" is not 1)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return a == b

"""JSON text of model and query files, read strictly (docs/honesty.md, "Hostile input").

``json.loads`` keeps the last of a key written twice in one object, silently (``{"heads": A,
"heads": B}`` is B), and fails on an integer of more than 4300 digits with Python's message,
which names neither the file nor the entry.  :func:`loads` refuses both by name.
"""

from __future__ import annotations

import json

from ..arith.numbers import MAX_INT_DIGITS

__all__ = ["loads"]


class _LongInt:
    """Stands for an integer too long to convert, until its place in the document is known."""

    def __init__(self, digits: int):
        self.digits = digits


def _no_duplicates(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"the key {key!r} is written twice in one object (JSON would keep "
                             f"only the last one, silently); write it once")
        obj[key] = value
    return obj


def loads(text: str):
    """``json.loads(text)``, with a key written twice in one object and an integer of more than
    MAX_INT_DIGITS digits refused (ValueError naming the key, or the entry as
    ``heads[0].W[0][0]``).  Malformed JSON raises json.JSONDecodeError and too deep a nesting
    RecursionError, as from json.loads."""
    long_ints = []

    def parse_int(s):
        digits = len(s) - s.startswith("-")
        if digits > MAX_INT_DIGITS:
            mark = _LongInt(digits)
            long_ints.append(mark)
            return mark
        return int(s)

    data = json.loads(text, parse_int=parse_int, object_pairs_hook=_no_duplicates)
    if long_ints:
        mark = long_ints[0]
        raise ValueError(f"{_place(data, mark)} is an integer of {mark.digits} digits, above "
                         f"Python's limit of {MAX_INT_DIGITS} for an integer read from text; "
                         f"write it with fewer digits")
    return data


def _place(data, mark) -> str:
    """Where ``mark`` is in ``data``: "heads[0].W[0][0]" (no recursion: the document may be
    as deep as json allows)."""
    stack = [(data, "")]
    while stack:
        node, where = stack.pop()
        if node is mark:
            return where or "the document"
        if isinstance(node, dict):
            stack.extend((v, f"{where}.{k}" if where else str(k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(node))
    return "an entry"

"""Helpers shared by the CLI commands."""

from __future__ import annotations

import json


def int_at_least(low: int):
    """An argparse type: an integer ≥ low, with a one-line reason otherwise."""
    def parse(text: str) -> int:
        import argparse
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if n < low:
            raise argparse.ArgumentTypeError(f"{text} must be ≥ {low}")
        return n
    return parse


positive_int = int_at_least(1)

#: the mp backend's least dps (``exactattn.arith.mp.MIN_DPS``, checked equal by a test), kept
#: here so that building the parser (``--help``, ``--version``) imports no backend
MIN_DPS = 15


def path_arg(what: str):
    """An argparse type: a non-empty path (``--out ''`` is refused, never read as "none")."""
    def parse(text: str) -> str:
        import argparse
        if not text.strip():
            raise argparse.ArgumentTypeError(f"an empty {what} name; give a {what}")
        return text
    return parse
nonnegative_int = int_at_least(0)


def output_file(what: str):
    """An argparse type: a file to write after a run — refused before the run when its
    directory does not exist or is not writable (a long run never ends in a lost result)."""
    def parse(text: str) -> str:
        import argparse
        import os
        text = path_arg(what)(text)
        folder = os.path.dirname(os.path.abspath(text))
        if os.path.isdir(text):
            raise argparse.ArgumentTypeError(f"{text} is a directory; give a {what} name")
        if not os.path.isdir(folder):
            raise argparse.ArgumentTypeError(f"cannot write {text}: the directory {folder} "
                                             f"does not exist; create it or choose another path")
        if not os.access(folder, os.W_OK):
            raise argparse.ArgumentTypeError(f"cannot write {text}: the directory {folder} "
                                             f"is not writable; choose another path")
        return text
    return parse


def int_range(text: str):
    """'A-B' or 'A' → range(A, B+1)."""
    import argparse
    try:
        if "-" in text:
            a, b = text.split("-", 1)
            a, b = int(a), int(b)
        else:
            a = b = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a range like 1-4") from None
    if a < 1 or b < a:
        raise argparse.ArgumentTypeError(f"{text!r}: need 1 ≤ A ≤ B")
    return range(a, b + 1)


def add_backend_args(p, default="exact"):
    p.add_argument("--backend", choices=["exact", "mp", "float"], default=default,
                   help="arithmetic backend (default %(default)s)")
    p.add_argument("--dps", type=int_at_least(MIN_DPS), default=None,
                   help=f"decimal digits for the mp backend (default 50, at least {MIN_DPS})")


def read_json(path: str, what: str):
    from .main import UsageError
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise UsageError(f"{what} file {path!r} not found") from None
    except json.JSONDecodeError as e:
        raise UsageError(f"{what} file {path!r} is not valid JSON ({e})") from None


def dump(obj) -> str:
    return json.dumps(obj, indent=1, default=str)

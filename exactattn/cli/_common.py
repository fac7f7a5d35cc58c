"""Helpers shared by the CLI commands."""

from __future__ import annotations

import json


#: upper limits of the size arguments (docs/honesty.md, "Hostile input"): beyond them a run
#: does not end in reasonable time or memory on one machine, so they are refused up front
MAX_DIM = 64
MAX_HEADS = 64
MAX_HIDDEN = 64
MAX_DPS = 10000
MAX_EXTRA_QUERIES = 10000      # --holdout, --validate
MAX_BOX = 10 ** 9
#: the largest model or spec file read (bytes)
MAX_FILE_BYTES = 16 * 2 ** 20


#: the largest run a command starts without --force, in units of one scalar operation of a
#: model evaluation: queries × length × (H·d² + K·d) (about a minute on the reference machine:
#: d = 64, H = 1 is 2·10⁸ units and takes 14 s)
MAX_WORK = 4 * 10 ** 8


def p2_work(d: int, H: int, H0: int | None = None, K: int = 0, validate: int | None = None,
            transformer: bool = False) -> int:
    """A rough size of one multi-head run (:data:`MAX_WORK`; P2, the schedules beyond it and
    the Transformer): at most 4H₀d² + 1 queries of length ≤ 2H₀ + 1, validation twice as
    long, the Transformer's FFN kinks about 400 times more."""
    H0 = H0 or H
    queries = 4 * H0 * d * d + 1
    if transformer:
        queries *= 400          # measured 5 s at d = K = 8, minutes at 16
    queries += 2 * (2 * H0 + 2 if validate is None else validate)
    return queries * (2 * H0 + 1) * (H * d * d + K * d)


def check_work(what: str, work: int, force: bool) -> None:
    """Refuse a run above :data:`MAX_WORK` unless --force (docs/honesty.md, "Hostile input")."""
    if work > MAX_WORK and not force:
        raise ValueError(f"{what} is about {work:.1e} operations, above the limit "
                         f"{MAX_WORK:.0e} (minutes to hours); use smaller sizes, or --force "
                         f"to run it anyway")


def strict_int(text: str) -> int:
    """ASCII digits with an optional sign ("12", "-3"); no spaces, underscores or other
    digits (``int()`` alone accepts "1_000" and "١٢")."""
    import re
    if not isinstance(text, str) or not re.fullmatch(r"[+-]?[0-9]+", text) or len(text) > 30:
        raise ValueError(f"{text!r} is not an integer")
    return int(text)


def int_at_least(low: int, high: int | None = None):
    """An argparse type: an integer in low … high (high None: no upper limit), with a
    one-line reason otherwise."""
    def parse(text: str) -> int:
        import argparse
        try:
            n = strict_int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer (ASCII digits, "
                                             f"at most 30)") from None
        if n < low:
            raise argparse.ArgumentTypeError(f"{text} must be ≥ {low}")
        if high is not None and n > high:
            raise argparse.ArgumentTypeError(f"{text} is above the limit {high}: larger runs do "
                                             f"not finish on one machine; use at most {high}")
        return n
    return parse


def int_in(low: int, high: int):
    """:func:`int_at_least` with an upper limit."""
    return int_at_least(low, high)


positive_int = int_at_least(1)
dim_int = int_in(1, MAX_DIM)
seed_int = int_at_least(-10 ** 30, 10 ** 30)
heads_int = int_in(1, MAX_HEADS)

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
            a, b = strict_int(a), strict_int(b)
        else:
            a = b = strict_int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a range like 1-4") from None
    if a < 1 or b < a:
        raise argparse.ArgumentTypeError(f"{text!r}: need 1 ≤ A ≤ B")
    if b > MAX_DIM:
        raise argparse.ArgumentTypeError(f"{text!r}: {b} is above the limit {MAX_DIM}; use "
                                         f"at most {MAX_DIM}")
    return range(a, b + 1)


def add_backend_args(p, default="exact", shown=None):
    """--backend and --dps; ``shown`` is the help's text for a default of None (a backend
    the command chooses itself)."""
    p.add_argument("--backend", choices=["exact", "mp", "float"], default=default,
                   help=f"arithmetic backend (default {shown or default})")
    p.add_argument("--dps", type=int_in(MIN_DPS, MAX_DPS), default=None,
                   help=f"decimal digits for the mp backend (default 50, at least {MIN_DPS})")


def read_text(path: str, what: str, limit: int = MAX_FILE_BYTES, binary: bool = False):
    """The text of a regular file of at most ``limit`` bytes (UTF-8; its bytes when
    ``binary``); a FIFO, a device, a directory, a larger or (unless ``binary``) a binary file
    is refused before it is read (UsageError, exit 2)."""
    from ..files import FileTooLarge, NotARegularFile, read_regular
    from .main import UsageError
    try:
        data = read_regular(path, what, limit)
    except FileNotFoundError:
        raise UsageError(f"{what} file {path!r} not found") from None
    except (NotARegularFile, FileTooLarge) as e:
        raise UsageError(str(e)) from None
    except OSError as e:
        raise UsageError(f"{what} file {path!r} cannot be opened ({e.strerror})") from None
    if binary:
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{what} file {path!r} is not UTF-8 text") from None


def read_json(path: str, what: str):
    """The JSON in a file (:func:`read_text`), strictly: a key written twice in one object or
    an integer beyond Python's 4300 digits is refused naming it (exactattn.models.json_text)."""
    from ..models.json_text import loads
    from .main import UsageError
    text = read_text(path, what)
    try:
        return loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"{what} file {path!r} is not valid JSON ({e})") from None
    except RecursionError:
        raise UsageError(f"{what} file {path!r} is nested too deeply to be a {what}") from None
    except ValueError as e:
        raise UsageError(f"{what} file {path!r}: {e}") from None


def dump(obj) -> str:
    return json.dumps(obj, indent=1, default=str)

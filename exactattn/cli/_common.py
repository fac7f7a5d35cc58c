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


#: the largest run a command starts without --force: an estimate of its CPU microseconds on
#: the reference machine (:func:`p2_work`), a minute
MAX_WORK = 60 * 10 ** 6


def backend_factor(backend: str | None = "exact", dps: int | None = None) -> float:
    """How much slower a query is on ``backend`` than on the exact one (measured at
    (16, 4): exact 0.05 ms per query, mp at 60 digits 0.4 ms; mp's arithmetic grows with
    its digits)."""
    if backend in (None, "exact"):
        return 1
    return 4 + (50 if dps is None else dps) / 15


def p2_work(d: int, H: int, H0: int | None = None, K: int = 0, validate: int | None = None,
            transformer: bool = False, backend: str | None = "exact",
            dps: int | None = None) -> float:
    """Estimated CPU microseconds of one multi-head run (:data:`MAX_WORK`; P2, the schedules
    beyond it and the Transformer), fitted to exact P2 runs at d = 8 … 64, H = 1 … 32
    (``benchmarks/bench_heads.py`` prints it beside the measured time): each of the ≤ 2d²
    copy-count families costs about 100 + 2d µs (its token group and its interpolation),
    each of the ≤ 4H₀d² + 1 queries 30 + 0.3d + 1.5H µs, a validation query a family's; the
    Transformer asks its attention part twice (antisymmetric pairs) and adds its FFN
    (:func:`ffn_work`); the other backends by :func:`backend_factor`."""
    H0 = H0 or H
    queries = 4 * H0 * d * d + 1
    families = 2 * d * d
    if transformer:
        queries *= 2
        families *= 2
    extra = 2 * H0 + 2 if validate is None else validate
    per_family = 100 + 2 * d + K
    us = families * per_family + queries * (30 + 0.3 * d + 1.5 * H) + extra * per_family
    if transformer:
        us += ffn_work(d, K)
    return us * backend_factor(backend, dps)


def ffn_work(d: int, K: int) -> float:
    """Estimated CPU microseconds of the Transformer learner's FFN part (the exact ReLU
    network's kinks, P2 §6): 800·d·K³ + 1500·d²·K, fitted to runs at (d, K) = (8, 2) … (16, 16)
    (measured 0.3 s at (8, 2), 1.5 s at (8, 8), 25 s at (8, 16), 57 s at (16, 16))."""
    return 800 * d * K ** 3 + 1500 * d * d * K


def p1_work(d: int, queries: int, backend: str | None = "exact", dps: int | None = None) -> float:
    """Estimated CPU microseconds of a single-head run of ``queries`` queries (P1's d² + d
    and the low-rank schedules): about 100 + 5d µs per query (measured 1.7 s at d = 64,
    12 s at d = 128)."""
    return queries * (100 + 5 * d) * backend_factor(backend, dps)


def check_work(what: str, work: float, force: bool) -> None:
    """Refuse a run estimated above :data:`MAX_WORK` unless --force (docs/honesty.md, "Hostile
    input")."""
    if work > MAX_WORK and not force:
        raise ValueError(f"{what} is estimated at {_duration(work)} of CPU, above the limit of "
                         f"{_duration(MAX_WORK)}; use smaller sizes, or --force to run it "
                         f"anyway")


def _duration(us: float) -> str:
    s = us / 1e6
    if s < 120:
        return f"{s:.0f} s"
    if s < 7200:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1e} h" if s >= 3600 * 1000 else f"{s / 3600:.0f} h"


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

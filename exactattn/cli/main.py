"""Command-line interface (docs/design.md §7).  Each command lives in its own module under
``exactattn.cli`` and registers itself here; bad arguments exit with status 2 and a
one-line reason, learning or check failures with status 1."""

from __future__ import annotations

import argparse
import importlib
import sys

from .. import __version__
from ..errors import ExactAttnError, LearningFailure

COMMANDS = ("model", "eval", "learn", "certify", "counts", "check", "noise", "demo", "sweep")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, status 2
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


class UsageError(ExactAttnError):
    """Bad input detected after parsing (missing file, malformed JSON...): exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="exactattn", description="Exact checks of P1 (arXiv 2601.16873) and "
                "P2 (arXiv 2608.03294): learning softmax attention from value queries.")
    p.add_argument("--version", action="version", version=f"exactattn {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f".{name}", __package__)
        except ModuleNotFoundError as e:
            if e.name and e.name.endswith(f"cli.{name}"):
                continue  # command not built yet
            raise
        mod.register(sub)
    return p


#: exit status of a run stopped by Ctrl-C (128 + SIGINT), as shells report it
INTERRUPTED = 130


def main(argv=None) -> int:
    """Run one command; every outcome is an exit status and at most one line on stderr:
    0 done, 1 a named failure (or a claim that does not hold), 2 bad input, 130 Ctrl-C.
    A closed stdout (``exactattn ... | head``) ends the run silently."""
    try:
        return _dispatch(argv)
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        return INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return 0


def _dispatch(argv) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        status = int(args.func(args) or 0)
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            _silence_stdout()
            raise _StdoutFailed(e.errno, e.strerror) from None
        return status
    except (UsageError, ValueError, TypeError, OSError) as e:
        if isinstance(e, BrokenPipeError):
            raise
        sys.stderr.write(f"exactattn {args.command}: error: "
                         f"{_os_error(e, args) if isinstance(e, OSError) else _one_line(e)}\n")
        return 2
    except LearningFailure as e:             # a named failure no command caught itself
        sys.stderr.write(f"exactattn {args.command}: {e.reason}: {_one_line(e)}\n")
        return 1
    except (MemoryError, RecursionError, OverflowError) as e:
        sys.stderr.write(f"exactattn {args.command}: error: the run is too large for this "
                         f"machine ({type(e).__name__}{': ' + _one_line(e) if str(e) else ''}); "
                         f"use smaller sizes\n")
        return 1


def _one_line(e) -> str:
    return " ".join(str(e).split())


#: the output files a command may be given (their flags' dests)
_OUTPUTS = ("save", "certificate", "plot", "out")


class _StdoutFailed(OSError):
    """Standard output could not be written (a full disk, /dev/full)."""


def _os_error(e: OSError, args) -> str:
    """The line for an OSError.  A failed write (a full disk, /dev/full) carries no file name,
    the file having opened fine: the line names the file being written when the traceback
    shows it, else the outputs that may have failed."""
    import errno
    if e.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO):
        return _one_line(e)
    why = f"({e.strerror or _one_line(e)}); free space there or choose another path"
    if e.filename is not None:
        return f"cannot write {e.filename} {why}"
    if isinstance(e, _StdoutFailed):
        return f"cannot write the standard output {why}"
    name = _file_written(e)
    if name is not None:
        return f"cannot write {name} {why}"
    where = [f"--{k} {getattr(args, k)}" for k in _OUTPUTS
             if isinstance(getattr(args, k, None), str)]
    return f"cannot write {' or '.join(where + ['the standard output'])} {why}"


def _file_written(e):
    """The name of the file object open in the innermost frame of ``e``'s traceback that has
    one (the file a failed write was writing), or None."""
    import io
    frames = []
    tb = e.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        for value in frame.f_locals.values():
            if isinstance(value, io.IOBase) and value not in (sys.stdout, sys.stderr) and \
                    isinstance(getattr(value, "name", None), str):
                return value.name
    return None


def _silence_stdout():
    """After a broken pipe, point stdout at /dev/null so that the interpreter's final flush
    does not print a second error."""
    import os
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

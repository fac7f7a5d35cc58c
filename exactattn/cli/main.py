"""Command-line interface (docs/design.md §7).  Each command lives in its own module under
``exactattn.cli`` and registers itself here; bad arguments exit with status 2 and a
one-line reason, learning or check failures with status 1."""

from __future__ import annotations

import argparse
import importlib
import sys

from .. import __version__
from ..errors import ExactAttnError

COMMANDS = ("model", "eval", "learn", "counts", "check", "noise", "demo", "sweep")


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


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (UsageError, ValueError, TypeError, OSError) as e:
        sys.stderr.write(f"exactattn {args.command}: error: {e}\n")
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

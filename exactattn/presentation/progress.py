"""A tiny progress reporter on stderr (issue 8: progress for anything that can run longer than
a few seconds).

It draws one self-erasing line such as ``learn multi-head · queries [######......] 37/69``
and is shown only when all of these hold: the stream (stderr by default) is a terminal,
the command is not in ``--json`` mode, and ``--quiet`` was not given.  Otherwise every call is
a no-op, so machine-readable output is never mixed with progress text.

Three ways to use it:

* as a callback with the shape ``progress(stage, done, total)`` — what
  :func:`~exactattn.learners.multi_head.learn_multi_head` accepts::

      with Progress("learn multi-head", quiet=args.quiet, json=args.json) as prog:
          learn_multi_head(oracle, d, heads=H, progress=prog)

* around a loop, one tick per item (``exactattn counts``, ``exactattn check``)::

      for claim in track(claims, "check", quiet=args.quiet, json=args.json,
                         describe=lambda c: c.id):
          ...

* ``Progress.echo(line)`` prints a result line on stdout without tearing the progress line.
"""

from __future__ import annotations

import sys
import time

__all__ = ["Progress", "track", "progress_enabled"]

_BAR = 24


def progress_enabled(quiet: bool = False, json: bool = False, stream=None) -> bool:
    """True when a progress line may be drawn: ``stream`` (default stderr) is a terminal and
    neither ``--quiet`` nor ``--json`` was given."""
    if quiet or json:
        return False
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Progress:
    """One self-erasing progress line on stderr; a no-op when not enabled (see module doc).

    Callable as ``progress(stage, done, total)``; redraws at most every ``interval`` seconds
    (always on a new stage).  ``close()`` (or leaving the ``with`` block) erases the line."""

    def __init__(self, label: str = "", *, quiet: bool = False, json: bool = False,
                 stream=None, enabled: bool | None = None, interval: float = 0.1):
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self.enabled = progress_enabled(quiet, json, self.stream) if enabled is None else enabled
        self.interval = interval
        self._stage = None
        self._state = None
        self._last = float("-inf")
        self._width = 0

    # ---------------------------------------------------------------- drawing
    def __call__(self, stage: str, done: int, total: int | None = None):
        if not self.enabled:
            return
        now = time.monotonic()
        new_stage = stage != self._stage
        self._stage, self._state = stage, (done, total)
        if new_stage or now - self._last >= self.interval or done == total:
            self._last = now
            self._draw()

    update = __call__

    def _line(self) -> str:
        done, total = self._state
        parts = [p for p in (self.label, self._stage) if p]
        head = " · ".join(parts)
        if total:
            filled = min(_BAR, _BAR * done // total)
            return f"{head} [{'#' * filled}{'.' * (_BAR - filled)}] {done}/{total}"
        return f"{head} {done}"

    def _draw(self):
        line = self._line()
        pad = max(0, self._width - len(line))
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()
        self._width = len(line)

    def clear(self):
        """Erase the progress line (it is redrawn by the next update)."""
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0

    def echo(self, line: str, file=None):
        """Print ``line`` (default on stdout) without tearing the progress line."""
        self.clear()
        print(line, file=file or sys.stdout, flush=True)
        if self.enabled and self._state is not None:
            self._draw()

    def close(self):
        self.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def track(iterable, label: str, total: int | None = None, *, quiet: bool = False,
          json: bool = False, describe=None, stream=None, progress: Progress | None = None):
    """Yield the items of ``iterable`` with one progress tick per item (a no-op display when
    not enabled).  ``describe(item)`` names the current item on the line (e.g. a claim id).
    Pass ``progress=`` to reuse a Progress (for its ``echo``); otherwise one is made here."""
    items = list(iterable) if total is None and not hasattr(iterable, "__len__") else iterable
    total = len(items) if total is None else total
    prog = progress or Progress(label, quiet=quiet, json=json, stream=stream)
    try:
        for n, item in enumerate(items):
            prog(describe(item) if describe else "", n, total)
            yield item
        prog("done" if describe else "", total, total)
    finally:
        if progress is None:
            prog.close()

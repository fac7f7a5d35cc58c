"""A tiny progress reporter on stderr: every command that can run longer than a couple of
seconds shows it (docs/design.md §7, "Progress").

It draws one self-erasing line such as
``learn multi-head · queries [######......] 37/69 · 3.2 s`` — the stage, a bar when the work
is countable, and the elapsed time (the current stage's, and the whole run's once they
differ).  A background clock redraws the line every ``heartbeat`` seconds, so a single long
step (one claim of ``exactattn check``, one τ of a noise sweep) still shows its time moving.
The line is shown only when all of these hold: the stream (stderr by default) is a terminal,
the command is not in ``--json`` mode, and ``--quiet`` was not given.  Otherwise every call is
a no-op (and no clock thread is started), so machine-readable output is never mixed with
progress text.

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

import os
import sys
import threading
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


def _clock(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, sec = divmod(int(seconds), 60)
    return f"{minutes} min {sec:02d} s"


class Progress:
    """One self-erasing progress line on stderr; a no-op when not enabled (see module doc).

    Callable as ``progress(stage, done, total)`` (``total`` None: a count without a bar);
    redraws at most every ``interval`` seconds (always on a new stage), and a clock thread
    redraws every ``heartbeat`` seconds while enabled (``heartbeat=0``: no thread).
    ``close()`` (or leaving the ``with`` block) stops the clock and erases the line; after
    ``clear()`` the line stays erased until the next update, so results printed in between
    are never torn."""

    def __init__(self, label: str = "", *, quiet: bool = False, json: bool = False,
                 stream=None, enabled: bool | None = None, interval: float = 0.1,
                 heartbeat: float = 0.5):
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self.enabled = progress_enabled(quiet, json, self.stream) if enabled is None else enabled
        self.interval = interval
        self.heartbeat = heartbeat
        self._stage = None
        self._state = None
        self._last = float("-inf")
        self._width = 0
        self._hidden = False
        self._start = self._stage_start = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None

    # ---------------------------------------------------------------- drawing
    def __call__(self, stage: str, done: int, total: int | None = None):
        if not self.enabled:
            return
        now = time.monotonic()
        with self._lock:
            new_stage = stage != self._stage
            if new_stage:
                self._stage_start = now
            self._stage, self._state = stage, (done, total)
            self._hidden = False
            if new_stage or now - self._last >= self.interval or done == total:
                self._last = now
                self._draw()
        if self._thread is None and self.heartbeat > 0:
            self._thread = threading.Thread(target=self._tick, name="exactattn-progress",
                                            daemon=True)
            self._thread.start()

    update = __call__

    def _tick(self):
        while not self._stop.wait(self.heartbeat):
            with self._lock:
                if not self._hidden and self._state is not None:
                    self._draw()

    def _line(self) -> str:
        done, total = self._state
        parts = [p for p in (self.label, self._stage) if p]
        head = " · ".join(parts)
        if total:
            filled = min(_BAR, _BAR * done // total)
            head = f"{head} [{'#' * filled}{'.' * (_BAR - filled)}] {done}/{total}"
        elif done:
            head = f"{head} {done}"
        now = time.monotonic()
        clock = _clock(now - self._stage_start)
        if self._stage_start - self._start >= 0.5:
            clock += f" ({_clock(now - self._start)} total)"
        return f"{head} · {clock}"

    def _columns(self) -> int:
        """The terminal's width (80 when unknown): a longer line would wrap, and a wrapped
        line cannot be erased with a carriage return."""
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
        return columns if columns >= 20 else 80   # 0: a pseudo-terminal with no size set

    def _draw(self):
        line = self._line()
        width = self._columns() - 1
        if len(line) > width:
            line = line[: max(0, width - 1)] + "…"
        pad = max(0, self._width - len(line))
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()
        self._width = len(line)

    def _erase(self):
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0

    def clear(self):
        """Erase the progress line; it stays erased until the next update."""
        if self.enabled:
            with self._lock:
                self._hidden = True
                self._erase()

    def echo(self, line: str, file=None):
        """Print ``line`` (default on stdout) without tearing the progress line."""
        if not self.enabled:
            print(line, file=file or sys.stdout, flush=True)
            return
        with self._lock:
            self._erase()
            print(line, file=file or sys.stdout, flush=True)
            if self._state is not None and not self._hidden:
                self._draw()

    def close(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
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

"""Rate and ETA of a running sweep (docs/sweeps.md).  This module only measures and formats;
drawing is left to the caller's ``progress(stage, done, total)`` callback (the CLI passes
:class:`exactattn.presentation.progress.Progress`, a no-op off a terminal)."""

from __future__ import annotations

import time

__all__ = ["Throughput", "format_duration"]


def format_duration(seconds: float) -> str:
    """'42s', '3m05s', '2h07m'."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Throughput:
    """Trials per second over this session's new trials, and the time left for the rest.

    ``Throughput(total, already)``: ``already`` trials were stored before (a resumed sweep),
    so they count towards done but not towards the rate.  ``report(done, callback)`` calls
    ``callback(text, done, total)`` at most every ``interval`` seconds (and always at the
    end), where text reads like ``412.3 trials/s · ETA 3m12s``."""

    def __init__(self, total: int, already: int = 0, interval: float = 0.25, clock=None):
        self.total, self.already = total, already
        self.interval = interval
        self.clock = clock or time.monotonic
        self.start = self.clock()
        self._last = float("-inf")

    def rate(self, done: int) -> float:
        elapsed = self.clock() - self.start
        return (done - self.already) / elapsed if elapsed > 0 else 0.0

    def text(self, done: int) -> str:
        rate = self.rate(done)
        if done - self.already <= 0 or rate <= 0:
            return "starting"
        left = self.total - done
        eta = "done" if left <= 0 else f"ETA {format_duration(left / rate)}"
        shown = f"{rate:.1f}" if rate < 100 else f"{rate:.0f}"
        return f"{shown} trials/s · {eta}"

    def report(self, done: int, callback) -> None:
        if callback is None:
            return
        now = self.clock()
        if done >= self.total or now - self._last >= self.interval:
            self._last = now
            callback(self.text(done), done, self.total)

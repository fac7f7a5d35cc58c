"""Rate and ETA of a running sweep (docs/sweeps.md).  This module only measures and formats;
drawing is left to the caller's ``progress(stage, done, total)`` callback (the CLI passes
:class:`exactattn.presentation.progress.Progress`, a no-op off a terminal)."""

from __future__ import annotations

import time
from collections import deque

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
    so they count towards done but not towards the rate.  The rate is measured over the last
    ``window`` seconds (configurations differ in cost, so the recent rate predicts the rest
    better than the mean since the start).  ``report(done, callback)`` calls
    ``callback(text, done, total)`` at most every ``interval`` seconds (and always at the
    end), where text reads like ``412.3 trials/s · ETA 3m12s``."""

    def __init__(self, total: int, already: int = 0, interval: float = 0.25, clock=None,
                 window: float = 60.0):
        self.total, self.already = total, already
        self.interval, self.window = interval, window
        self.clock = clock or time.monotonic
        self.start = self.clock()
        self._samples = deque([(self.start, already)])
        self._last = float("-inf")

    def rate(self, done: int) -> float:
        now = self.clock()
        samples = self._samples
        if samples[-1][1] != done:
            samples.append((now, done))
        while len(samples) > 2 and now - samples[1][0] >= self.window:
            samples.popleft()
        t0, d0 = samples[0]
        return (done - d0) / (now - t0) if now > t0 else 0.0

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

"""The benchmarks' size arguments (``--sizes``, ``--configs``): "4x3,8x4" → [(4, 3), (8, 4)],
the (d, H) of the runs, each at least 1; anything else is a one-line argparse error."""

from __future__ import annotations

import argparse


def parse_sizes(text: str) -> list:
    """Comma-separated dxH pairs as [(d, H), ...]."""
    try:
        out = [tuple(int(x) for x in part.lower().split("x")) for part in text.split(",")]
    except ValueError:
        out = []
    if not out or any(len(c) != 2 or min(c) < 1 for c in out):
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of (d, H) like 4x3,8x4")
    return out

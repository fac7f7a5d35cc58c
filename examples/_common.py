"""Shared set-up of the example scripts: the ``--out DIR`` argument, the non-interactive Agg
backend, and writing a PNG with its short text explanation beside it (NAME.png + NAME.txt).

A script writes files only where it is told: without ``--out`` it prints its explanation and
writes nothing.

The scripts need the optional plotting extra: ``pip install ".[plots]"``.
"""

from __future__ import annotations

import argparse
import os
import sys


def parser(doc: str) -> argparse.ArgumentParser:
    """An argument parser with ``--out DIR`` (no default: without it nothing is written); the
    description is the first paragraph of the script's docstring."""
    p = argparse.ArgumentParser(description=doc.strip().split("\n\n")[0])
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write NAME.png and NAME.txt into DIR (without it: print the "
                        "explanation only, write nothing)")
    return p


def pyplot():
    """matplotlib.pyplot on the non-interactive Agg backend (a clear message if missing)."""
    try:
        import matplotlib
    except ImportError:
        sys.exit('matplotlib is needed for the examples: pip install ".[plots]"')
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


#: the most entries a legend may have before it is too long to read at a glance
MAX_LEGEND = 8


def figure_problems(fig) -> list:
    """What keeps a picture from being read on its own: a plot without an x or y label (panels
    with no ticks, such as matrix pictures, need none) or a legend of more than
    :data:`MAX_LEGEND` entries."""
    problems = []
    for n, ax in enumerate(fig.axes):
        if not ax.axison:
            continue
        drawn = ax.lines or ax.collections or ax.images or ax.patches
        ticked = len(ax.get_xticks()) and len(ax.get_yticks())
        if drawn and ticked and not (ax.get_xlabel() and ax.get_ylabel()):
            problems.append(f"axes {n} ({ax.get_title() or 'untitled'}): unlabelled axis")
        legend = ax.get_legend()
        if legend is not None and len(legend.get_texts()) > MAX_LEGEND:
            problems.append(f"axes {n}: legend of {len(legend.get_texts())} entries "
                            f"(at most {MAX_LEGEND})")
    return problems


def save(fig, out, name: str, text: str):
    """Write OUT/NAME.png (150 dpi) and OUT/NAME.txt, print both paths and return the PNG
    path; with ``out`` None print the explanation only, write nothing and return None.  A
    figure with :func:`figure_problems` is refused (ValueError) before anything is written."""
    problems = figure_problems(fig)
    if problems:
        raise ValueError(f"{name}.png: " + "; ".join(problems))
    if out is None:
        print(text.rstrip())
        print("(nothing written: give --out DIR for NAME.png and NAME.txt)".replace("NAME", name))
        return None
    os.makedirs(out, exist_ok=True)
    png = os.path.join(out, name + ".png")
    txt = os.path.join(out, name + ".txt")
    fig.savefig(png, dpi=150, bbox_inches="tight")
    with open(txt, "w", encoding="utf-8") as f:
        f.write(text.rstrip() + "\n")
    print(png)
    print(txt)
    return png

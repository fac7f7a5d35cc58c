"""Every teaching example runs as a teacher would run it, `python examples/SCRIPT --out DIR`
at its defaults (each in a few seconds), on the Agg backend, and writes a non-trivial PNG with
its .txt explanation beside it; a picture with an unlabelled axis or an overlong legend is
refused by the script itself (examples/_common.py ``figure_problems``).  Each run is the
session's one run of that command line (conftest ``example_run``, the script as ``__main__``
in this process; one script also runs as a real subprocess below): docs/teaching.md shows the
same command lines, so its command test reads the same runs."""

from __future__ import annotations

import importlib.util
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

#: script → PNG name; every script runs at its defaults
CASES = {
    "rational_function.py": "rational_function",
    "float_vs_exact.py": "float_vs_exact",
    "merging_heads.py": "merging_heads",
    "query_counts.py": "query_counts",
    "beyond_counts.py": "beyond_counts",
    "noise.py": "noise",
    "causal_positions.py": "causal_positions",
}
#: examples that need an optional package: script → (module it needs, PNG name)
OPTIONAL = {"torch_layer.py": ("torch", "torch_layer")}


def png_size(path: Path):
    """(width, height) from the PNG header (signature, then the IHDR chunk)."""
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def _cases():
    cases = dict(CASES)
    cases.update({k: name for k, (module, name) in OPTIONAL.items()
                  if importlib.util.find_spec(module)})
    return sorted(cases.items())


@pytest.mark.parametrize("script,name", _cases(), ids=[c[0] for c in _cases()])
def test_example_writes_picture_and_text_at_its_defaults(script, name, example_run):
    proc, out = example_run(script)
    assert proc.returncode == 0, proc.stderr
    png, txt = out / f"{name}.png", out / f"{name}.txt"
    assert png.exists() and txt.exists(), proc.stdout
    assert png.stat().st_size > 20_000, "PNG suspiciously small (empty figure?)"
    width, height = png_size(png)
    assert width >= 600 and height >= 400, (width, height)
    text = txt.read_text(encoding="utf-8")
    assert len(text) > 200 and ("P1" in text or "P2" in text)


def test_png_readable_by_matplotlib(example_run):
    import matplotlib.image as mpimg
    proc, out = example_run("rational_function.py")
    assert proc.returncode == 0, proc.stderr
    img = mpimg.imread(out / "rational_function.png")
    assert img.ndim == 3 and img.shape[0] >= 400
    assert img.std() > 0.05, "the picture is (almost) one colour"


def test_every_example_is_tested():
    scripts = {p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")}
    assert scripts <= set(CASES) | set(OPTIONAL), scripts - set(CASES) - set(OPTIONAL)


def test_docs_teaching_shows_every_example_at_its_defaults():
    """So that the page's command test and these tests share one run of each script, and a
    teacher copies commands that finish in seconds."""
    import re
    page = (EXAMPLES.parent / "docs" / "teaching.md").read_text(encoding="utf-8")
    shown = re.findall(r"^python examples/(\w+\.py) --out pictures(.*?)(?:\s{2,}#.*)?$", page, re.M)
    assert {script for script, _ in shown} == set(CASES)
    assert all(args.strip() == "" for _, args in shown), shown


def _figure(plt, xlabel=True, entries=2):
    fig, ax = plt.subplots()
    for k in range(entries):
        ax.plot([0, 1], [k, k + 1], label=f"line {k}")
    ax.set_xlabel("x" if xlabel else "")
    ax.set_ylabel("y")
    ax.legend()
    return fig


def test_a_picture_with_an_unlabelled_axis_or_a_long_legend_is_refused(tmp_path):
    """The planted bugs: a missing x label; a legend of nine entries.  save() refuses them and
    writes nothing; a matrix panel without ticks needs no labels."""
    spec = importlib.util.spec_from_file_location("examples_common", EXAMPLES / "_common.py")
    _common = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(_common)
    plt = _common.pyplot()
    assert _common.figure_problems(_figure(plt)) == []
    assert "unlabelled axis" in _common.figure_problems(_figure(plt, xlabel=False))[0]
    assert "legend of 9 entries" in _common.figure_problems(_figure(plt, entries=9))[0]
    with pytest.raises(ValueError, match="unlabelled"):
        _common.save(_figure(plt, xlabel=False), tmp_path, "bad", "text")
    assert list(tmp_path.iterdir()) == []
    fig, ax = plt.subplots()
    ax.imshow([[0, 1], [1, 0]])
    ax.set_xticks([])
    ax.set_yticks([])
    assert _common.figure_problems(fig) == []
    plt.close("all")


@pytest.mark.slow
def test_an_example_writes_nothing_unless_told_where(tmp_path):
    """Without --out a script prints its explanation and leaves the directory untouched."""
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, str(EXAMPLES / "rational_function.py"), "--heads", "2"],
                          capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert list(tmp_path.iterdir()) == []
    assert "P2" in proc.stdout and "nothing written" in proc.stdout

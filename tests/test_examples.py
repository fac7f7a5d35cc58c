"""Every teaching example (issue 8) runs as `python examples/SCRIPT --out DIR ...` on the Agg
backend at small sizes and writes a non-trivial PNG with its .txt explanation beside it.  Each
run is the session's one run of that command line (conftest ``example_run``, the script as
``__main__`` in this process; one script also runs as a real subprocess below): where
docs/teaching.md shows a script, the arguments here are the page's, so its command test reads
the same run."""

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

#: script → (small-size arguments, PNG name); docs/teaching.md's arguments where it shows one
CASES = {
    "rational_function.py": ([], "rational_function"),
    "float_vs_exact.py": (["--dim", "2", "--max-heads", "3"], "float_vs_exact"),
    "merging_heads.py": ([], "merging_heads"),
    "query_counts.py": (["--dims", "1-3", "--heads", "1-2"], "query_counts"),
    "beyond_counts.py": (["--dims", "2-3", "--heads", "2-2"], "beyond_counts"),
    "causal_positions.py": ([], "causal_positions"),
}
#: examples that need modules built elsewhere (issue 6: approximate oracles): script →
#: (module it needs, arguments, PNG name)
OPTIONAL = {"noise.py": ("exactattn.analysis.noise_sweep", ["--dim", "2", "--points", "3"], "noise"),
            "torch_layer.py": ("torch", ["--exact", "2,2", "--scales", "1,4",
                                         "--samples", "60"], "torch_layer")}


def png_size(path: Path):
    """(width, height) from the PNG header (signature, then the IHDR chunk)."""
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def _cases():
    cases = dict(CASES)
    cases.update({k: (args, name) for k, (module, args, name) in OPTIONAL.items()
                  if (EXAMPLES / k).exists() and importlib.util.find_spec(module)})
    return sorted(cases.items())


@pytest.mark.parametrize("script,case", _cases(), ids=[c[0] for c in _cases()])
def test_example_writes_picture_and_text(script, case, example_run):
    args, name = case
    proc, out = example_run(script, args)
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
    proc, out = example_run("rational_function.py", CASES["rational_function.py"][0])
    assert proc.returncode == 0, proc.stderr
    img = mpimg.imread(out / "rational_function.png")
    assert img.ndim == 3 and img.shape[0] >= 400
    assert img.std() > 0.05, "the picture is (almost) one colour"


def test_every_example_is_tested():
    scripts = {p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")}
    assert scripts <= set(CASES) | set(OPTIONAL), scripts - set(CASES) - set(OPTIONAL)


def test_the_arguments_are_those_docs_teaching_shows():
    """So that the page's command test and these tests share one run of each script."""
    import re
    page = (EXAMPLES.parent / "docs" / "teaching.md").read_text(encoding="utf-8")
    shown = {m[0]: m[1].split() for m in
             re.findall(r"^python examples/(\w+\.py) --out pictures(.*?)(?:\s{2,}#.*)?$", page,
                        re.M)}
    assert len(shown) >= 4
    for script, args in shown.items():
        case = CASES.get(script) or OPTIONAL[script][1:]
        assert case[0] == args, script


@pytest.mark.slow
def test_an_example_writes_nothing_unless_told_where(tmp_path):
    """Without --out a script prints its explanation and leaves the directory untouched."""
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, str(EXAMPLES / "rational_function.py"), "--heads", "2"],
                          capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert list(tmp_path.iterdir()) == []
    assert "P2" in proc.stdout and "nothing written" in proc.stdout

"""Every teaching example (issue 8) runs from the command line on the Agg backend at small
sizes and writes a non-trivial PNG with its .txt explanation beside it."""

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

#: script → (small-size arguments, PNG name)
CASES = {
    "rational_function.py": ([], "rational_function"),
    "float_vs_exact.py": (["--dim", "2", "--max-heads", "3"], "float_vs_exact"),
    "merging_heads.py": (["--queries", "5"], "merging_heads"),
    "query_counts.py": (["--dims", "1-2", "--heads", "1-2"], "query_counts"),
    "beyond_counts.py": (["--dims", "2-3", "--heads", "2-2"], "beyond_counts"),
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


def run_example(script: str, args, out: Path):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, str(EXAMPLES / script), "--out", str(out), *args],
                          capture_output=True, text=True, env=env, timeout=120)


def _cases():
    cases = dict(CASES)
    cases.update({k: (args, name) for k, (module, args, name) in OPTIONAL.items()
                  if (EXAMPLES / k).exists() and importlib.util.find_spec(module)})
    return sorted(cases.items())


@pytest.mark.parametrize("script,case", _cases(), ids=[c[0] for c in _cases()])
def test_example_writes_picture_and_text(script, case, tmp_path):
    args, name = case
    proc = run_example(script, args, tmp_path)
    assert proc.returncode == 0, proc.stderr
    png, txt = tmp_path / f"{name}.png", tmp_path / f"{name}.txt"
    assert png.exists() and txt.exists(), proc.stdout
    assert png.stat().st_size > 20_000, "PNG suspiciously small (empty figure?)"
    width, height = png_size(png)
    assert width >= 600 and height >= 400, (width, height)
    text = txt.read_text(encoding="utf-8")
    assert len(text) > 200 and ("P1" in text or "P2" in text)


def test_png_readable_by_matplotlib(tmp_path):
    import matplotlib.image as mpimg
    proc = run_example("rational_function.py", ["--heads", "2"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    img = mpimg.imread(tmp_path / "rational_function.png")
    assert img.ndim == 3 and img.shape[0] >= 400
    assert img.std() > 0.05, "the picture is (almost) one colour"


def test_every_example_is_tested():
    scripts = {p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")}
    assert scripts <= set(CASES) | set(OPTIONAL), scripts - set(CASES) - set(OPTIONAL)


def test_an_example_writes_nothing_unless_told_where(tmp_path):
    """Without --out a script prints its explanation and leaves the directory untouched."""
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, str(EXAMPLES / "rational_function.py"), "--heads", "2"],
                          capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert list(tmp_path.iterdir()) == []
    assert "P2" in proc.stdout and "nothing written" in proc.stdout

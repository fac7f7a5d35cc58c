"""The public API is typed (exactattn/py.typed ships with the package) and mypy finds no error
in the public modules, those of exactattn.__all__ (pyproject.toml [tool.mypy] lists them); the
code passes its ruff configuration.  Each check is skipped, with the reason, where its tool
(in the ``test`` extra) is not installed."""

from __future__ import annotations

import importlib.util
import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import exactattn as ea

ROOT = Path(__file__).resolve().parent.parent


def _tool(module: str):
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (the test extra: pip install \".[test]\")")


def unannotated(names=None) -> list:
    """Public functions of exactattn.__all__ with a parameter or the return unannotated."""
    out = []
    for name in names or ea.__all__:
        obj = getattr(ea, name)
        if not inspect.isfunction(obj):
            continue
        sig = inspect.signature(obj)
        if sig.return_annotation is inspect.Signature.empty or any(
                p.annotation is inspect.Parameter.empty for p in sig.parameters.values()):
            out.append(name)
    return out


def test_the_package_is_marked_typed():
    assert (ROOT / "exactattn" / "py.typed").exists()
    assert re.search(r'^exactattn = \["py.typed"\]', (ROOT / "pyproject.toml").read_text(), re.M)


def test_every_public_function_is_annotated():
    assert unannotated() == []


def typed_lazy_names(source: str) -> dict:
    """name → submodule of the imports under ``if TYPE_CHECKING:`` of exactattn/__init__.py."""
    import ast
    out = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for imp in node.body:
                out.update({a.name: imp.module for a in imp.names})
    return out


def test_type_checkers_see_every_lazy_name_where_it_is_loaded():
    """``ea.learn_multi_head`` is typed for a user's mypy, not Any through the module's
    __getattr__: exactattn/__init__.py imports each name of _LAZY under TYPE_CHECKING from
    the submodule _LAZY loads it from."""
    source = (ROOT / "exactattn" / "__init__.py").read_text(encoding="utf-8")
    assert typed_lazy_names(source) == ea._LAZY
    planted = source.replace("    from .adapters.numpy import numpy_oracle\n", "")
    assert planted != source and typed_lazy_names(planted) != ea._LAZY


def test_the_annotation_check_sees_a_bare_function(monkeypatch):
    """The planted bug: a public function without annotations is reported."""
    def bare(x, y=1):
        return x
    monkeypatch.setattr(ea, "bare", bare, raising=False)
    assert unannotated(["bare", "learn_multi_head"]) == ["bare"]


@pytest.mark.slow
def test_mypy_finds_no_error_in_the_public_modules(tmp_path):
    _tool("mypy")
    cache = tmp_path
    proc = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "Success: no issues found" in proc.stdout


@pytest.mark.slow
def test_mypy_sees_a_type_error(tmp_path):
    """The planted bug: a call of a public function with an argument of the wrong type."""
    _tool("mypy")
    bad = tmp_path / "bad.py"
    bad.write_text("import exactattn as ea\nea.random_multi_head('3', 2)\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "c"),
                           "--config-file", str(ROOT / "pyproject.toml"), str(bad)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1 and 'incompatible type "str"' in proc.stdout, proc.stdout


def test_ruff_passes(tmp_path):
    _tool("ruff")
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    proc = subprocess.run([ruff, "check", "--no-cache", "."], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_ruff_sees_an_unused_import(tmp_path):
    """The planted bug: an unused import, with this repository's configuration."""
    _tool("ruff")
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    (tmp_path / "bad.py").write_text("import os\n", encoding="utf-8")
    proc = subprocess.run([ruff, "check", "--no-cache", "--config",
                           str(ROOT / "pyproject.toml"), "bad.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "F401" in proc.stdout, proc.stdout

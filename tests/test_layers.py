"""The package layout shows the architecture: imports point downward only.

Layers, bottom to top: errors/_env, arith, models, oracles, adapters (the public path of
adapters), learners, analysis, sweep, presentation, cli.  Every import of an exactattn
module (at module level or inside a function) must go to the same layer or a lower one, and
the module graph has no cycle.  The checker package of
proofs_checks stays standard-library only (tested in test_proofs_checks)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import exactattn

ROOT = Path(exactattn.__file__).parent
LAYERS = ["errors", "_env", "_typing", "files", "arith", "models", "oracles", "adapters", "learners", "analysis",
          "sweep", "presentation", "cli"]
RANK = {name: (0 if name in ("errors", "_env", "_typing", "files") else LAYERS.index(name) - 3)
        for name in LAYERS}
#: the sub-layers of learners, bottom to top (docs/design.md §6)
LEARNER_LAYERS = ["gc_pause", "result", "p1", "p2", "design", "decoder", "beyond", "multi_head",
                  "transformer"]


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _typing_only(tree) -> set:
    """The import nodes under ``if TYPE_CHECKING:``: names for annotations only, never
    imported at run time, so no dependency between layers."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            out |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return out


def _imports(path: Path):
    """Absolute names of the exactattn modules imported by `path` (any nesting depth), but
    not those imported for type checkers only."""
    mod = _module(path)
    package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    out = set()
    tree = ast.parse(path.read_text())
    skip = _typing_only(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("exactattn"):
                out.add(target)
                out |= {f"{target}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("exactattn")}
    return out


def _graph():
    files = {_module(p): p for p in ROOT.rglob("*.py")}
    graph = {}
    for mod, path in files.items():
        if mod in ("exactattn", "exactattn.__main__"):
            continue  # the public facade and the entry point may name every layer
        # "from .. import __version__" names the facade for a constant, not a layer
        graph[mod] = {t for t in _imports(path) if t in files and t not in (mod, "exactattn")}
    return graph


def _layer(mod: str) -> int:
    return RANK[mod.split(".")[1]]


def _sublayer(mod: str):
    """(layer, sub-layer): the learners' sub-packages are ranked among themselves."""
    parts = mod.split(".")
    if parts[1] != "learners" or len(parts) < 3:
        return (_layer(mod), -1)
    return (_layer(mod), LEARNER_LAYERS.index(parts[2]))


@pytest.mark.slow
def test_every_module_lives_in_a_layer():
    stray = [m for m in _graph() if m.split(".")[1] not in RANK]
    assert not stray, f"modules outside the layer packages: {stray}"
    loose = [m for m in _graph() if m.startswith("exactattn.learners.")
             and m.split(".")[2] not in LEARNER_LAYERS]
    assert not loose, f"learner modules outside the sub-layers: {loose}"


@pytest.mark.slow
def test_imports_point_downward():
    graph = _graph()
    assert len(graph) > 40
    upward = sorted(f"{a} -> {b}" for a, deps in graph.items() for b in deps
                    if _layer(b) > _layer(a))
    assert not upward, "upward imports:\n" + "\n".join(upward)
    inside = sorted(f"{a} -> {b}" for a, deps in graph.items() for b in deps
                    if _layer(a) == _layer(b) and -1 < _sublayer(a)[1] < _sublayer(b)[1])
    assert not inside, "upward imports between the learners' sub-layers:\n" + "\n".join(inside)


@pytest.mark.slow
def test_no_import_cycles():
    graph = _graph()
    state, stack, cycles = {}, [], []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, ()):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


@pytest.mark.slow
def test_the_layer_test_catches_a_planted_upward_import():
    """A check that cannot fail is a defect: an arith module importing a learner is caught."""
    planted = ROOT / "arith" / "_planted_upward.py"
    planted.write_text("from ..learners import multi_head  # noqa\n")
    try:
        graph = _graph()
        assert any(_layer(b) > _layer(a) for a, deps in graph.items() for b in deps)
    finally:
        planted.unlink()


@pytest.mark.slow
def test_the_sublayer_test_catches_a_planted_upward_import():
    """The learners' sub-layers: a P1 module importing the P2 recovery is caught."""
    planted = ROOT / "learners" / "p1" / "_planted_upward.py"
    planted.write_text("from ..p2 import recovery  # noqa\n")
    try:
        graph = _graph()
        assert any(_layer(a) == _layer(b) and -1 < _sublayer(a)[1] < _sublayer(b)[1]
                   for a, deps in graph.items() for b in deps)
    finally:
        planted.unlink()


def test_imports_for_type_checkers_only_are_not_dependencies(tmp_path):
    """An upward name under ``if TYPE_CHECKING:`` (an annotation) is not a dependency; the
    same import at run time is."""
    typed = tmp_path / "typed.py"
    typed.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                     "    from exactattn.cli import main\n")
    plain = tmp_path / "plain.py"
    plain.write_text("from exactattn.cli import main\n")
    tree_typed, tree_plain = ast.parse(typed.read_text()), ast.parse(plain.read_text())
    assert _typing_only(tree_typed) and not _typing_only(tree_plain)

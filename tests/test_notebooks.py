"""The teaching notebooks in docs/notebooks/ are committed with their outputs, each with at least
one figure, so that a student browsing them sees what a run shows; re-executed headless
(nbclient, a fresh kernel each) they show the same text and the same figures.  Models and
results display their matrices in a notebook."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

import exactattn as ea

NOTEBOOKS = Path(__file__).resolve().parent.parent / "docs" / "notebooks"
EXPECTED = {"single_head", "multi_head_poles", "float_vs_exact", "canonical_forms"}


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    """A kernel spec for this very interpreter (where exactattn is installed), so that a
    "python3" kernel installed elsewhere on the machine is never picked up."""
    spec = tmp_path / "kernels" / "exactattn-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "exactattn tests", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    return "exactattn-test"


def _books():
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def test_the_four_teaching_notebooks_are_there():
    assert {p.stem for p in _books()} == EXPECTED


def image_outputs(book) -> list:
    """The image/png outputs of an executed notebook."""
    return [o for c in book["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
            if "image/png" in o.get("data", {})]


def _text(output) -> str:
    """What an output says in text (a stream, or a result's text/plain), object addresses
    left out."""
    text = output.get("text") or output.get("data", {}).get("text/plain", "")
    return re.sub(r"0x[0-9a-f]+", "0x…", "".join(text) if isinstance(text, list) else text)


def outputs_by_cell(book) -> list:
    """Per code cell: (its texts, its number of figures) — what a reader sees, in order."""
    return [([_text(o) for o in c.get("outputs", []) if _text(o)],
             sum("image/png" in o.get("data", {}) for o in c.get("outputs", [])))
            for c in book["cells"] if c["cell_type"] == "code"]


def committed_problems(book: dict) -> list:
    """Why a committed notebook does not show a student its run: a code cell never run (no
    execution count), an error output, or no figure at all."""
    problems = [f"cell {n} was not run" for n, c in enumerate(book["cells"])
                if c["cell_type"] == "code" and c.get("execution_count") is None]
    problems += [f"cell {n} shows an error" for n, c in enumerate(book["cells"])
                 if any(o.get("output_type") == "error" for o in c.get("outputs", []))]
    if not image_outputs(book):
        problems.append("no figure")
    return problems


@pytest.mark.parametrize("path", _books(), ids=lambda p: p.stem)
def test_committed_notebooks_show_their_outputs_and_a_figure(path):
    assert committed_problems(json.loads(path.read_text(encoding="utf-8"))) == []


def test_the_committed_check_sees_a_stripped_notebook():
    """A check that cannot fail is a defect: a notebook stripped of its outputs (the planted
    bug) is reported, its figure missing and its cells not run."""
    book = json.loads(_books()[0].read_text(encoding="utf-8"))
    for cell in book["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    problems = committed_problems(book)
    assert "no figure" in problems and any("not run" in p for p in problems)


def test_a_stale_committed_output_is_seen():
    """The comparison behind the re-execution test sees a changed printed value and a missing
    figure (the planted bugs), and not an object's address."""
    book = json.loads((NOTEBOOKS / "single_head.ipynb").read_text(encoding="utf-8"))
    before = outputs_by_cell(book)
    stream = next(o for c in book["cells"] if c["cell_type"] == "code"
                  for o in c.get("outputs", []) if o.get("output_type") == "stream")
    stream["text"] = "".join(stream["text"]) + "1\n"
    assert outputs_by_cell(book) != before
    book = json.loads((NOTEBOOKS / "single_head.ipynb").read_text(encoding="utf-8"))
    for cell in book["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = [o for o in cell.get("outputs", []) if "image/png" not in
                               o.get("data", {})]
    assert outputs_by_cell(book) != before
    assert _text({"text": "<x at 0x7f12>"}) == _text({"text": "<x at 0x9a34>"})


@pytest.mark.parametrize("path", _books(), ids=lambda p: p.stem)
@pytest.mark.slow
def test_notebook_runs_headless(path, kernel):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    book = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(book, timeout=300, kernel_name=kernel,
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()          # raises CellExecutionError on any failing cell or assert
    assert committed_problems(book) == []
    committed = json.loads(path.read_text(encoding="utf-8"))
    assert outputs_by_cell(book) == outputs_by_cell(committed), \
        "the committed outputs are not what the notebook shows now: re-run it and commit it"


@pytest.mark.slow
def test_a_picture_drawn_on_agg_is_not_shown(tmp_path, kernel):
    """The planted bug (matplotlib.use("Agg") then plt.show(): nothing appears) is seen by
    image_outputs; %matplotlib inline shows the same figure."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    draw = "import matplotlib.pyplot as plt\nplt.plot([0, 1], [1, 0])\nplt.show()"
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell('import matplotlib\nmatplotlib.use("Agg")\n' + draw),
                  nbformat.v4.new_code_cell("%matplotlib inline\n" + draw)]
    nbclient.NotebookClient(book, timeout=60, kernel_name=kernel,
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    agg, inline = ({"cells": [c]} for c in book.cells)
    assert image_outputs(agg) == [] and len(image_outputs(inline)) == 1


@pytest.mark.slow
def test_a_failing_cell_fails_the_notebook_test(tmp_path, kernel):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell("assert 1 == 2, 'planted'")]
    client = nbclient.NotebookClient(book, timeout=60, kernel_name=kernel,
                                     resources={"metadata": {"path": str(tmp_path)}})
    with pytest.raises(nbclient.exceptions.CellExecutionError, match="planted"):
        client.execute()


def test_transformer_displays_its_matrices():
    T = ea.random_transformer(2, 1, 2, seed=1)
    latex = T._repr_latex_()
    assert latex.startswith("$$") and latex.endswith("$$")
    assert "V_{1}" in latex and "A &=" in latex and "w &=" in latex
    assert latex.count(r"\begin{pmatrix}") == 4            # W_1, V_1, A, w
    res = ea.learn_transformer(ea.Oracle(T), 2, heads=1, hidden=2, seed=0)
    md = res._repr_markdown_()
    assert md.startswith("**TransformerResult**") and "certified exactly" in md
    assert f"{res.queries} oracle calls" in md and "V_{1}" in md

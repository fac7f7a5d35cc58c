"""The teaching notebooks in docs/notebooks/ run headless (nbclient, a fresh kernel each) and
are committed without outputs; models and results display their matrices in a notebook."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import exactattn as ea

NOTEBOOKS = Path(__file__).resolve().parent.parent / "docs" / "notebooks"
EXPECTED = {"single_head", "multi_head_poles", "float_vs_exact", "canonical_forms"}
#: the notebooks that draw a picture: executing each must show at least one image/png
PICTURES = {"multi_head_poles"}


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


def draws(book) -> bool:
    """Whether a notebook's code uses matplotlib (so it promises a picture)."""
    return any("matplotlib" in "".join(c["source"]) for c in book["cells"]
               if c["cell_type"] == "code")


def image_outputs(book) -> list:
    """The image/png outputs of an executed notebook."""
    return [o for c in book["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
            if "image/png" in o.get("data", {})]


def test_every_notebook_that_draws_is_expected_to_show_it():
    drawing = {p.stem for p in _books() if draws(json.loads(p.read_text(encoding="utf-8")))}
    assert drawing == PICTURES


def stripped_problems(book: dict) -> list:
    """Why a notebook is not output-free: cells with outputs or execution counts."""
    problems = []
    for n, cell in enumerate(book["cells"]):
        if cell.get("cell_type") != "code":
            continue
        if cell.get("outputs"):
            problems.append(f"cell {n} has outputs")
        if cell.get("execution_count") is not None:
            problems.append(f"cell {n} has an execution count")
    return problems


@pytest.mark.parametrize("path", _books(), ids=lambda p: p.stem)
def test_committed_notebooks_have_no_outputs(path):
    assert stripped_problems(json.loads(path.read_text(encoding="utf-8"))) == []


def test_the_stripped_check_sees_an_output():
    """A check that cannot fail is a defect: an executed cell is reported."""
    book = json.loads(_books()[0].read_text(encoding="utf-8"))
    code = next(c for c in book["cells"] if c["cell_type"] == "code")
    code["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "1\n"}]
    code["execution_count"] = 1
    assert len(stripped_problems(book)) == 2


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
    outputs = [o for c in book.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert outputs, "the notebook produced no output at all"
    if path.stem in PICTURES:
        assert image_outputs(book), "the notebook draws a picture but shows no image/png"


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

"""Sphinx configuration of the exactattn documentation site: the Markdown pages of docs/ read
by MyST, the public API (``exactattn.__all__``) by autodoc and autosummary.

Build it from a clone with ``pip install ".[docs]"`` and
``sphinx-build -W -b html docs docs/_build/html``; tests/test_docs_site.py builds it so, with
every warning an error."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import exactattn  # noqa: E402  (after the path: the package of this checkout)

project = "exactattn"
author = "The exactattn maintainers"
copyright = "2026, The exactattn maintainers"
release = version = exactattn.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "notebooks", "**/.ipynb_checkpoints"]

#: MyST: `$…$` math where the pages use it, heading anchors for links to a section
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

autosummary_generate = False            # the API page lists its entries itself (docs/api.md)
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": False}

html_theme = "alabaster"
html_title = f"exactattn {release}"
html_static_path: list[str] = []


def _plain_bars(app, what, name, obj, options, lines):
    """The docstrings write |x| for absolute values and norms, which reStructuredText would
    read as substitutions: shown as the bars they are."""
    lines[:] = [line.replace("|", r"\|") for line in lines]


def setup(app):
    app.connect("autodoc-process-docstring", _plain_bars)

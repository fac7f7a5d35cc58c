"""The documentation site (docs/conf.py: Sphinx, MyST for the Markdown pages, autodoc and
autosummary for the public API) builds with every warning an error, as README.md shows:
``sphinx-build -W -b html docs docs/_build/html``.  Skipped, with the reason, where the
``docs`` extra (sphinx, myst-parser) is not installed."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import exactattn as ea

DOCS = Path(__file__).resolve().parent.parent / "docs"

pytest.importorskip("sphinx", reason='the docs extra is not installed: pip install ".[docs]"')
pytest.importorskip("myst_parser", reason='the docs extra is not installed: pip install ".[docs]"')


def build(source: Path, out: Path):
    """``sphinx-build -W -b html SOURCE OUT`` (doctrees beside OUT): the CompletedProcess."""
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html",
                           "-d", str(out.parent / "doctrees"), str(source), str(out)],
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site") / "html"
    proc = build(DOCS, out)
    assert proc.returncode == 0, f"sphinx-build -W failed:\n{proc.stderr[-3000:]}"
    return out


@pytest.mark.slow
def test_the_site_builds_without_a_warning_and_has_every_page(site):
    pages = {p.stem for p in DOCS.glob("*.md")}
    assert pages <= {p.stem for p in site.glob("*.html")}, pages
    index = (site / "index.html").read_text(encoding="utf-8")
    for page in pages - {"index"}:
        assert f'href="{page}.html"' in index, f"{page} is not in the table of contents"


@pytest.mark.slow
def test_the_api_page_documents_every_public_name(site):
    """Every name of exactattn.__all__ (but the version string and the adapters package) has
    its own entry, with its docstring's first line."""
    html = (site / "api.html").read_text(encoding="utf-8")
    names = [n for n in ea.__all__ if n not in ("__version__", "adapters")]
    missing = [n for n in names if f'id="exactattn.{n}"' not in html]
    assert not missing, missing
    first = ea.learn_multi_head.__doc__.strip().split()[:3]
    assert " ".join(first) in re.sub(r"<[^>]+>", "", html)


@pytest.mark.slow
def test_the_pages_show_the_example_pictures(site):
    """Each docs/*.png a page embeds is in the built site."""
    shown = {m for p in DOCS.glob("*.md")
             for m in re.findall(r"!\[[^]]*\]\(([\w.]+\.png)\)", p.read_text(encoding="utf-8"))}
    assert len(shown) >= 4
    assert shown <= {p.name for p in (site / "_images").glob("*.png")}


@pytest.mark.slow
def test_a_warning_fails_the_build(tmp_path):
    """The planted bug: a page linking to a page that does not exist.  With this site's
    configuration and -W the build fails, naming it."""
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(DOCS / "conf.py", source / "conf.py")
    (source / "index.md").write_text("# Site\n\nSee [a page](nowhere.md).\n", encoding="utf-8")
    proc = build(source, tmp_path / "html")
    assert proc.returncode != 0 and "nowhere" in proc.stderr

"""The static HTML export (scripts/export_html.py): every lesson page builds, carries all its
figures, renders its maths without a script and fetches nothing from the network.

Runs on every notebooks/NN-*.ipynb; while there are none, on tests/fixtures/slider_demo.ipynb.
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "slider_demo.ipynb"
RASTER = ("image/png", "image/jpeg", "image/gif")


def load_export_module():
    spec = importlib.util.spec_from_file_location("export_html", ROOT / "scripts" / "export_html.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


export_html = load_export_module()
LESSONS = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if export_html.LESSON.match(p.name))
SOURCES = LESSONS or [FIXTURE]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    pages = export_html.export(SOURCES, out)
    return out, pages


def page_for(out: Path, nb_path: Path) -> BeautifulSoup:
    return BeautifulSoup((out / f"{nb_path.stem}.html").read_text(encoding="utf-8"), features="html.parser")


def image_outputs(nb) -> tuple[int, int]:
    """(raster image outputs, svg outputs) over all code cells."""
    raster = svg = 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if any(m in data for m in RASTER):
                raster += 1
            elif "image/svg+xml" in data:
                svg += 1
    return raster, svg


def test_one_page_per_notebook_and_an_index(built):
    out, pages = built
    assert [p.name for p in pages] == [f"{p.stem}.html" for p in SOURCES] + ["index.html"]
    index = BeautifulSoup((out / "index.html").read_text(encoding="utf-8"), features="html.parser")
    links = [a["href"] for a in index.select("ol a")]
    assert links == [f"{p.stem}.html" for p in SOURCES]
    assert all((out / link).is_file() for link in links)


@pytest.mark.parametrize("nb_path", SOURCES, ids=lambda p: p.stem)
def test_no_cell_shows_a_figure_twice(nb_path):
    # a bare `fig` after pyplot made it can be shown by its repr and again by the inline backend
    for cell in nbformat.read(nb_path, as_version=4).cells:
        images = [o for o in cell.get("outputs", []) if any(m in o.get("data", {}) for m in RASTER)]
        assert len(images) <= 1, f"{nb_path.name}: a cell shows {len(images)} figures: {cell.source[-120:]!r}"


@pytest.mark.parametrize("nb_path", SOURCES, ids=lambda p: p.stem)
def test_every_figure_is_embedded(built, nb_path):
    out, _ = built
    nb = nbformat.read(nb_path, as_version=4)
    raster, svg = image_outputs(nb)
    page = page_for(out, nb_path)
    figures = page.select(".jp-OutputArea-output img")
    assert len(figures) == raster, f"{nb_path.name}: {raster} image outputs but {len(figures)} <img> in the page"
    assert all(img["src"].startswith("data:image/") for img in figures), "figures must be embedded data URIs"
    assert all(img.get("alt") and not img["alt"].startswith("No description") for img in figures)
    assert len(page.select(".jp-OutputArea-output svg")) >= svg
    if nb_path == FIXTURE:
        assert raster == 1, "the fixture has exactly one static figure"


@pytest.mark.parametrize("nb_path", SOURCES, ids=lambda p: p.stem)
def test_page_needs_no_network(built, nb_path):
    out, _ = built
    text = (out / f"{nb_path.stem}.html").read_text(encoding="utf-8")
    assert export_html.external_resources(text) == []
    soup = BeautifulSoup(text, features="html.parser")
    assert soup.find_all("script", src=True) == [], "no script may be loaded"
    assert not re.search(r"mathjax|require\.js|cdn\.jsdelivr|unpkg\.com|cdnjs", text, re.I)


@pytest.mark.parametrize("nb_path", SOURCES, ids=lambda p: p.stem)
def test_slider_views_become_a_note(built, nb_path):
    out, _ = built
    nb = nbformat.read(nb_path, as_version=4)
    views = sum(export_html.WIDGET_VIEW in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))
    page = page_for(out, nb_path)
    assert len(page.select(".widget-note")) == views
    assert "SliderView(" not in page.get_text() and "NumericCheck(" not in page.get_text()
    if nb_path == FIXTURE:
        assert views == 2


@pytest.mark.parametrize("nb_path", SOURCES, ids=lambda p: p.stem)
def test_maths_is_mathml(built, nb_path):
    if export_html.latex_to_mathml is None:
        if os.environ.get("CI"):
            pytest.fail("latex2mathml is missing in CI (it is in requirements-dev.txt)")
        pytest.skip("latex2mathml not installed: pip install latex2mathml (see requirements-dev.txt)")
    out, _ = built
    page = page_for(out, nb_path)
    assert page.select(".tex-source") == [], "every formula must convert to MathML"
    nb = nbformat.read(nb_path, as_version=4)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    if re.search(r"\$[^$\s][^$]*\$", markdown):
        assert page.find_all("math"), f"{nb_path.name} has TeX but its page has no MathML"
    if nb_path == FIXTURE:
        assert [m["display"] for m in page.find_all("math")] == ["inline", "block"]


def test_tex_falls_back_to_escaped_source_without_the_converter(monkeypatch):
    monkeypatch.setattr(export_html, "latex_to_mathml", None)
    assert export_html.tex_to_html("a<b", display=False) == '<span class="tex-source">$a&lt;b$</span>'
    assert export_html.tex_to_html("x", display=True) == '<span class="tex-source">$$x$$</span>'


def test_lesson_links_point_at_pages_and_images_get_alt_text():
    page = ('<a href="01-next.ipynb#top">next</a><a href="https://x.org/a.ipynb">ext</a>'
            '<div class="jp-OutputArea-output"><img alt="No description has been provided for this image" src="d"/>'
            "</div>")
    done = BeautifulSoup(export_html.finish_page(page, "T", {"01-next.ipynb"}), features="html.parser")
    assert [a["href"] for a in done.find_all("a")] == ["01-next.html#top", "https://x.org/a.ipynb"]
    assert done.img["alt"] == "Figure 1 of “T”"


def test_external_resources_are_detected():
    page = ('<script src="https://cdn.example/x.js"></script><link href="//fonts.example/f.css">'
            '<script type="module">import("https://cdn.example/m.mjs")</script><img src="data:image/png;base64,AA">')
    assert export_html.external_resources(page) == [
        "https://cdn.example/x.js", "//fonts.example/f.css", "https://cdn.example/m.mjs"]

"""Maths on the course site (issue 22, item 4): every lesson's markdown, rendered as the site renders it,
leaves no TeX source in the text a reader sees: no "$", no "^{" / "_{" braces, no "\\command". (Lesson 08's
solutions inside <details> once showed raw LaTeX; lessons 03 and 05 wrote "e^{zᵢ}" in prose.)
No kernel and no browser: the markdown cells only."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if re.match(r"^\d\d-[a-z0-9-]+\.ipynb$", p.name))
TEX_LEFT = re.compile(r"\^\{|_\{|\\[A-Za-z]+|\$")


def _build_site():
    spec = importlib.util.spec_from_file_location("build_site_for_maths", ROOT / "scripts" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tex_left_in(html: str) -> list[str]:
    """Pieces of TeX source in the visible text of rendered markdown (maths and code removed)."""
    soup = BeautifulSoup(html, features="html.parser")
    for tag in soup.find_all(["math", "code", "pre"]):
        tag.decompose()
    text = soup.get_text()
    return [text[max(0, m.start() - 30): m.end() + 30] for m in TEX_LEFT.finditer(text)]


@pytest.fixture(scope="module")
def exporter():
    build_site = _build_site()
    if build_site.latex_to_mathml is None:
        pytest.skip("latex2mathml is not installed: the site shows TeX source by design then")
    return build_site.OfflineHTMLExporter()


def test_tex_left_is_found(exporter):
    """The check sees raw TeX: braces in prose and maths in a <details> block with no blank lines."""
    assert tex_left_in(exporter.markdown2html({}, "the weight e^{z₁} of key 1"))
    raw_details = "1. An exercise\n   <details><summary>Solution</summary>\n   $\\mathrm{tr}(A)$\n   </details>"
    assert tex_left_in(exporter.markdown2html({}, raw_details))
    fixed = "1. An exercise\n\n   <details><summary>Solution</summary>\n\n   $\\mathrm{tr}(A)$\n   </details>"
    assert tex_left_in(exporter.markdown2html({}, fixed)) == []


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_no_tex_source_in_rendered_prose(exporter, lesson):
    nb = nbformat.read(lesson, as_version=4)
    found = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            found += [f"cell {cell.get('id')}: …{piece}…" for piece in tex_left_in(exporter.markdown2html({"cell": cell},
                                                                                                      cell.source))]
    assert found == [], f"{lesson.name}: TeX source shown as text on the site:\n" + "\n".join(found)


def folded_empty(html: str) -> list[str]:
    """<details> blocks of rendered markdown that hold nothing but their summary (the body fell outside)."""
    found = []
    for block in BeautifulSoup(html, features="html.parser").find_all("details"):
        summary = block.summary.get_text(strip=True) if block.summary else ""
        body = block.get_text(" ", strip=True).replace(summary, "", 1).strip()
        if len(body) < 3:
            found.append(summary or str(block)[:60])
    return found


def test_an_empty_fold_is_found(exporter):
    """A `<details>` line right under a list item's text joins that paragraph, and the page's parser (the
    site re-parses every page with html.parser) closes the fold at the paragraph's end: empty. Before
    MathMLRenderer.block_html, every fold whose body was markdown closed empty the same way."""
    assert folded_empty(exporter.markdown2html({}, "1. Q?\n<details><summary>Solution</summary>\n\nA.\n\n</details>"))
    assert folded_empty(exporter.markdown2html({}, "<details><summary>Solution</summary>\n\n1. one\n\n</details>")) == []


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_every_solution_is_inside_its_fold(exporter, lesson):
    """Each exercise's solution renders inside its <details> (not shown open below an empty fold)."""
    nb = nbformat.read(lesson, as_version=4)
    found = [f"cell {cell.get('id')}: {s}" for cell in nb.cells if cell.cell_type == "markdown"
             for s in folded_empty(exporter.markdown2html({"cell": cell}, cell.source))]
    assert found == [], f"{lesson.name}: folds that close before their content:\n" + "\n".join(found)

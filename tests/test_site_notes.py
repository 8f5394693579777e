"""The site folds each lesson's instructor notes as JupyterLab does: one closed "For instructors" disclosure.

Rendered from the real lesson 01 with nbconvert's lab template (no kernel, no full site build), then
passed through build_site.finish_page, the step every lesson page goes through."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def build_site():
    spec = importlib.util.spec_from_file_location("build_site_notes", ROOT / "scripts" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def lesson_page(build_site):
    from nbconvert import HTMLExporter

    nb = nbformat.read(ROOT / "notebooks" / "01-intuition.ipynb", as_version=4)
    for cell in nb.cells:  # outputs play no part here; a smaller page
        if cell.cell_type == "code":
            cell.outputs = []
    html, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    return html


def test_notes_are_one_closed_disclosure_after_the_lesson(build_site, lesson_page):
    page, _ = build_site.finish_page(lesson_page, "01", {"01-intuition.ipynb"})
    soup = BeautifulSoup(page, features="html.parser")
    folds = soup.select("details.instructor-notes")
    assert len(folds) == 1
    fold = folds[0]
    assert fold.summary.get_text(strip=True) == "For instructors"
    assert not fold.has_attr("open")
    assert fold.find("blockquote") is not None and "Timing:" in fold.get_text()
    assert "Instructor notes" not in [h.get_text(strip=True).rstrip("¶") for h in soup.find_all(["h1", "h2", "h3"])]
    outside = [b for b in soup.find_all("blockquote") if "Instructor notes" in b.get_text() and not b.find_parent("details")]
    assert outside == []
    assert fold.find_previous(class_="celltag_navigation") is not None  # after the bottom links


def test_unfolded_page_would_fail(build_site, lesson_page):
    """Without fold_notes the notes are in the open: the test above would see no disclosure."""
    soup = BeautifulSoup(lesson_page, features="html.parser")
    assert soup.select("details.instructor-notes") == []
    assert any("Instructor notes" in b.get_text() for b in soup.find_all("blockquote"))

"""Lesson code fits a projector: ruff holds notebooks to a line length that JupyterLab's Presentation
Mode shows without sideways scrolling (issue 25, item 6; measured by benchmarks/bench_code_width.py:
108 characters at 1280x720 with the left panel hidden, 106 with line numbers)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "notebooks" / "ruff.toml"
FITS_IN_PRESENTATION_MODE = 106  # the measured fit with line numbers shown (108 without)


def line_length() -> int:
    found = re.search(r"^line-length\s*=\s*(\d+)", CONFIG.read_text(encoding="utf-8"), re.M)  # no tomllib on 3.10
    assert found, f"{CONFIG} sets no line-length"
    return int(found.group(1))


def ruff_on_notebook(code: str) -> subprocess.CompletedProcess:
    """ruff check on a one-cell notebook, as if it were a lesson in notebooks/ (the config is found by path)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(code)]
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise",
                           "--stdin-filename", str(ROOT / "notebooks" / "zz-line-length.ipynb")],
                          input=nbformat.writes(nb), capture_output=True, text=True, cwd=ROOT, check=False)


def test_notebook_line_length_fits_presentation_mode():
    assert line_length() <= FITS_IN_PRESENTATION_MODE


@pytest.mark.parametrize("kind", ["code", "comment"])
def test_ruff_rejects_a_lesson_line_one_past_the_limit(kind):
    n = line_length()
    make = {"code": lambda k: "x = " + repr("a" * (k - 6)),
            "comment": lambda k: "x = 1  # " + "c" * (k - 9)}[kind]
    assert len(make(n)) == n and len(make(n + 1)) == n + 1
    fits, too_long = ruff_on_notebook(make(n)), ruff_on_notebook(make(n + 1))
    assert fits.returncode == 0, fits.stdout
    assert too_long.returncode == 1 and "E501" in too_long.stdout, too_long.stdout


def test_library_keeps_its_own_line_length():
    """The notebook limit does not leak into attnlib/: a 120-character line there stays fine."""
    line = "x = 1  # " + "c" * 111
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--stdin-filename",
                           str(ROOT / "attnlib" / "zz_line_length.py")], input=line + "\n",
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert len(line) == 120 and done.returncode == 0, done.stdout

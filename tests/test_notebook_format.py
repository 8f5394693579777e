"""Every notebook in the repository is a valid nbformat document, as written on disk."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p for p in ROOT.glob("**/*.ipynb")
                   if ".ipynb_checkpoints" not in p.parts and ".venv" not in p.parts and "build" not in p.parts)


def test_there_are_notebooks():
    assert len([p for p in NOTEBOOKS if p.parent.name == "notebooks"]) >= 10


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook_validates(path):
    """The raw JSON (not nbformat.read's repaired copy) against its declared schema; a warning
    (a cell id missing, ids in a 4.4 notebook) is a failure too."""
    with path.open(encoding="utf-8") as f:
        nb = json.load(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nbformat.validate(nb)
    ids = [c.get("id") for c in nb["cells"]]
    assert len(set(ids)) == len(ids), "cell ids are unique"


def test_validation_catches_a_missing_id(tmp_path):
    """The check above can fail: a 4.5 notebook with a cell lacking its id is refused."""
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
          "cells": [{"cell_type": "markdown", "metadata": {}, "source": ["x"]}]}
    with warnings.catch_warnings(), pytest.raises(Exception, match="id"):
        warnings.simplefilter("error")
        nbformat.validate(nb)

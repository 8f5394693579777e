"""Shared fixtures (test modules do not import from here: tests/browser has a conftest.py too). ``site``: the static course site, built ONCE per test session (it executes every
lesson and renders every slider state, a few minutes) and shared by tests/test_site.py and the
browser tests in tests/browser/test_site_in_browser.py."""

from __future__ import annotations

import importlib.util
import json
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LESSON = re.compile(r"^\d\d-[a-z0-9-]+\.ipynb$")
LESSONS = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if LESSON.match(p.name))


def load_build_site():
    """scripts/build_site.py as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("build_site", ROOT / "scripts" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def build_site():
    return load_build_site()


@pytest.fixture(scope="session")
def site(tmp_path_factory, build_site) -> Path:
    """build/site for every notebooks/NN-*.ipynb, in a temporary folder."""
    if not LESSONS:
        pytest.skip("no lessons in notebooks/")
    prebuilt = os.environ.get("SITE_PREBUILT")  # local iteration only: a folder built by this commit's code
    if prebuilt:
        return Path(prebuilt).resolve()
    out = tmp_path_factory.mktemp("site") / "site"
    found, sizes = [], []  # texts outside their figure's canvas; each figure's smallest text
    build_site.build(LESSONS, out, jobs=int(os.environ.get("SITE_JOBS", "2")), log=lambda _: None,
                     text_outside_found=found, text_sizes_found=sizes)
    (out.parent / "figure_text_outside.json").write_text(json.dumps(found, indent=1), encoding="utf-8")
    (out.parent / "figure_text_sizes.json").write_text(json.dumps(sizes, indent=1), encoding="utf-8")
    return out


@pytest.fixture(autouse=True)
def _no_frame_store_from_the_environment(monkeypatch):
    """Views made by tests draw (ATTNLIB_FRAMES, a developer's store, would serve frames and be written to)."""
    monkeypatch.delenv("ATTNLIB_FRAMES", raising=False)

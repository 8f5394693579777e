"""Fixtures for the real-browser tests: a JupyterLab server and Debian's headless Chromium.

The server runs from this environment on 127.0.0.1 (free port, random token) with its root
in a temporary COPY of notebooks/ (and the test fixture), so running lessons never touches the
repository, and with temporary Jupyter config/data/settings/workspace folders, so neither the
user's settings nor the news pop-up get in the way. Without a `chromium` on PATH the tests skip
(locally) or fail (when CI is set).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from lab_harness import CHROMIUM_FLAGS, Lab, start_lab

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"


def missing(reason: str):
    """Skip locally; in CI a missing browser is a failure, never a silent skip."""
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = shutil.which("chromium")
    if path is None:
        missing("Debian's chromium is not on PATH: apt-get install chromium")
    return path


@pytest.fixture(scope="session")
def lab(tmp_path_factory) -> Lab:
    try:
        server = start_lab(tmp_path_factory.mktemp("lab"))
    except RuntimeError as exc:
        pytest.fail(str(exc))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser(chromium_path):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("Python Playwright is not installed: pip install -r requirements-dev.txt")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=chromium_path, args=CHROMIUM_FLAGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def timings():
    """Collects per-lesson measurements; written to artifacts/browser_timings.json at the end."""
    results: dict = {}
    yield results
    if results:
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "browser_timings.json").write_text(json.dumps(results, indent=2) + "\n")

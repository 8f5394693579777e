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
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
NEWS_OFF = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}


def missing(reason: str):
    """Skip locally; in CI a missing browser is a failure, never a silent skip."""
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running JupyterLab: base URL, token, the temporary root, and small REST helpers."""

    def __init__(self, url: str, token: str, root: Path):
        self.url, self.token, self.root = url, token, root

    def api(self, method: str, path: str):
        req = urllib.request.Request(f"{self.url}{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Stop every session's kernel so lessons do not pile up on 2 cores."""
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}")


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = shutil.which("chromium")
    if path is None:
        missing("Debian's chromium is not on PATH: apt-get install chromium")
    return path


@pytest.fixture(scope="session")
def lab(tmp_path_factory) -> Lab:
    tmp = tmp_path_factory.mktemp("lab")
    root = tmp / "root"
    root.mkdir()
    if (ROOT / "notebooks").is_dir():
        shutil.copytree(ROOT / "notebooks", root / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copytree(ROOT / "tests" / "fixtures", root / "fixtures")
    settings = tmp / "app-settings"
    settings.mkdir()
    (settings / "overrides.json").write_text(json.dumps(NEWS_OFF))
    env = dict(os.environ)
    for var, sub in [("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"), ("JUPYTER_RUNTIME_DIR", "run"),
                     ("JUPYTERLAB_SETTINGS_DIR", "user-settings"), ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
                     ("IPYTHONDIR", "ipython")]:
        env[var] = str(tmp / sub)
    env.pop("JUPYTER_PATH", None)
    env.pop("JUPYTER_CONFIG_PATH", None)
    port, token = free_port(), secrets.token_hex(16)
    cmd = [
        str(Path(sys.executable).parent / "jupyter"), "lab", "--no-browser",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
        f"--LabApp.app_settings_dir={settings}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    log = open(tmp / "jupyter.log", "w")  # noqa: SIM115  (closed at teardown)
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    server = Lab(f"http://127.0.0.1:{port}", token, root)
    deadline = time.monotonic() + 60
    while True:
        try:
            server.api("GET", "/api/status")
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail("jupyter lab did not start:\n" + (tmp / "jupyter.log").read_text()[-3000:])
            time.sleep(0.3)
    yield server
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


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

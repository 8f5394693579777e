"""JupyterLab + headless Chromium plumbing shared by tests/browser and benchmarks/bench_browser.py.

No pytest here: the fixtures in conftest.py and the benchmark both call these functions.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
NEWS_OFF = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}

# True once Run All has finished: the kernel is idle, no cell is queued ([*]), and cells have run.
RUN_FINISHED = """() => {
  const bar = document.querySelector('#jp-main-statusbar');
  const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')].map(p => p.textContent);
  return bar && bar.textContent.includes('| Idle') && prompts.length > 0
    && !prompts.some(t => t.includes('*')) && prompts.some(t => /\\[\\d+\\]/.test(t));
}"""

# The slider views (attnlib/frameslider.js): each live view is a `.sv.sv-live` holding one `.sv-row` per slider
# (label, input[type=range], output readout) and a figure <img>. Sliders are numbered in page order.
RANGE = ".jp-Notebook .sv-live input[type=range]"

# Arms a timer for slider N. Two clocks, both from the key/pointer going down (event.timeStamp):
# - the view's own: its `sv-shown` event (new frame decoded + one animation frame) and `data-shown-ms`;
# - the page's: the <img> src changing, then decoded, then one animation frame (measured here, independently).
# window.__sv collects both; `done` is true once the view said `sv-shown`. Returns the old src's length (0: no img).
ARM_TIMER = """([index]) => {
  const input = document.querySelectorAll('RANGE')[index];
  const view = input && input.closest('.sv');
  const img = view && view.querySelector('img');
  if (!img || !img.getAttribute('src')) return 0;
  const old = img.getAttribute('src');
  const w = window.__sv = {t0: null, pageMs: null, shownMs: null, how: null, state: null, done: false, seen: false};
  const start = ev => { if (w.t0 === null) w.t0 = ev.timeStamp; };
  window.addEventListener('keydown', start, {capture: true, once: true});
  window.addEventListener('pointerdown', start, {capture: true, once: true});
  const obs = new MutationObserver(() => {
    if (w.seen || img.getAttribute('src') === old) return;
    w.seen = true;
    obs.disconnect();
    img.decode().catch(() => null).then(() => requestAnimationFrame(() => { w.pageMs = performance.now() - w.t0; }));
  });
  obs.observe(img, {attributes: true, attributeFilter: ['src']});
  view.addEventListener('sv-shown', ev => {
    w.shownMs = parseFloat(view.dataset.shownMs); w.how = ev.detail.how; w.state = ev.detail.state; w.done = true;
  }, {once: true});
  view.setAttribute('data-test-view', String(index));
  return old.length;
}""".replace("RANGE", RANGE)
SHOWN = "() => window.__sv && window.__sv.done && window.__sv.pageMs !== null"

# What a slider and its view show now (textContent: cells scrolled out of view are not laid out).
SLIDER_STATE = """([index]) => {
  const input = document.querySelectorAll('RANGE')[index];
  const view = input.closest('.sv'), row = input.closest('.sv-row'), img = view.querySelector('img');
  return {value: Number(input.value), max: Number(input.max), min: Number(input.min),
          label: row.querySelector('label').textContent, label_for: (input.labels[0] || {}).textContent || '',
          readout: row.querySelector('output').textContent, valuetext: input.getAttribute('aria-valuetext'),
          state: view.dataset.state, src: img.getAttribute('src'), alt: img.alt,
          natural: [img.naturalWidth, img.naturalHeight], busy: view.getAttribute('aria-busy'),
          error: view.querySelector('.sv-error').hidden ? '' : view.querySelector('.sv-error').textContent};
}""".replace("RANGE", RANGE)


def browser_missing(benchmark: str, as_json: bool) -> bool:
    """For benchmarks: True (after printing why, and a JSON row if asked) when Debian's chromium or
    Python playwright is missing, so the benchmark reports itself skipped."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pass
    else:
        if shutil.which("chromium"):
            return False
    print("skipped: needs Debian's chromium on PATH and Python playwright")
    if as_json:
        print(json.dumps([{"benchmark": benchmark, "figure": "skipped: no chromium/playwright", "met": None}]))
    return True

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running JupyterLab: base URL, token, the temporary root, and small REST helpers."""

    def __init__(self, url: str, token: str, root: Path, proc=None, log=None):
        self.url, self.token, self.root = url, token, root
        self.proc, self.log = proc, log

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

    def stop(self) -> None:
        """Terminate the server (kill it after 15 s) and close its log."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def start_lab(tmp: Path) -> Lab:
    """Start JupyterLab with its root in ``tmp/root`` holding copies of notebooks/ and tests/fixtures/.

    Config, data, settings and workspaces live under ``tmp`` too. Raises RuntimeError (with the
    log's tail) if the server does not answer within 60 s.
    """
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
    log = open(tmp / "jupyter.log", "w")  # noqa: SIM115  (closed by Lab.stop)
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    server = Lab(f"http://127.0.0.1:{port}", token, root, proc, log)
    deadline = time.monotonic() + 60
    while True:
        try:
            server.api("GET", "/api/status")
            return server
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                log.close()
                raise RuntimeError("jupyter lab did not start:\n" + (tmp / "jupyter.log").read_text()[-3000:]) from None
            time.sleep(0.3)


def run_menu(page, menu: str, command: str) -> None:
    """Open a main-menu entry and click the item bound to a JupyterLab command, like a person would."""
    page.locator(".lm-MenuBar-item", has_text=re.compile(rf"^{menu}$")).click()
    page.locator(f'.lm-Menu-item[data-command="{command}"]').click()


def open_and_run_all(page, lab: Lab, target: str, timeout_ms: int) -> float:
    """Open ``target`` (a path under the lab root), clear its outputs, Run All; return the seconds it took.

    Raises playwright's TimeoutError if Run All does not finish within ``timeout_ms``.
    """
    page.goto(f"{lab.url}/lab/tree/{target}?reset&token={lab.token}")
    page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=60_000)
    page.wait_for_function("() => document.querySelector('#jp-main-statusbar')?.textContent.includes('| Idle')",
                           timeout=60_000)
    # Clear the committed outputs first, so every prompt and figure seen afterwards is from this run.
    run_menu(page, "Edit", "editmenu:clear-all")
    page.wait_for_function("() => !document.querySelector('.jp-Notebook .jp-OutputArea-output')")
    start = time.perf_counter()
    run_menu(page, "Run", "runmenu:run-all")
    page.wait_for_function(RUN_FINISHED, timeout=timeout_ms, polling=200)
    return time.perf_counter() - start


def press_and_time(page, index: int, key: str, timeout_ms: int = 15_000) -> dict | None:
    """Arm the timers on slider ``index``, press ``key`` on its focused range input; return what was measured:
    ``ms`` (the view's data-shown-ms: keydown → new frame decoded + one frame), ``page_ms`` (the same span by the
    page's own clock), ``how`` ("held": the browser had the frame; "kernel": it was asked for) and ``state``.

    None if the key did not move the slider (End at the end). Raises playwright's TimeoutError if the view does
    not show a new frame within ``timeout_ms``.
    """
    rng = page.locator(RANGE).nth(index)
    before = rng.input_value()
    page.evaluate(ARM_TIMER, [index])
    rng.focus()
    page.wait_for_timeout(100)  # a reader reaches the slider, then presses: the focus's own work is not the press's
    page.keyboard.press(key)
    if rng.input_value() == before:
        return None
    return wait_shown(page, timeout_ms)


def click_and_time(page, index: int, fraction: float, timeout_ms: int = 15_000) -> dict | None:
    """Click slider ``index``'s track at ``fraction`` of its width (a pointer/tap); as ``press_and_time``.

    None if the click landed on the value already shown (no new frame)."""
    rng = page.locator(RANGE).nth(index)
    before = rng.input_value()
    box = rng.bounding_box()
    page.evaluate(ARM_TIMER, [index])
    page.mouse.click(box["x"] + fraction * box["width"], box["y"] + box["height"] / 2)
    if rng.input_value() == before:
        return None
    return wait_shown(page, timeout_ms)


def wait_shown(page, timeout_ms: int) -> dict:
    page.wait_for_function(SHOWN, timeout=timeout_ms, polling="raf")
    got = page.evaluate("() => window.__sv")
    return {"ms": got["shownMs"], "page_ms": got["pageMs"], "how": got["how"], "state": got["state"]}

"""Static-site plumbing shared by tests/browser/test_site_in_browser.py and benchmarks/bench_site.py:
a local HTTP server for build/site, a browser context that aborts (and counts) every request to any
other host, and the page-side snippets that read a slider view's state.

No pytest here.
"""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
         "device_scale_factor": 2}
DESKTOP = {"viewport": {"width": 1280, "height": 720}}


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # no access log on stderr
        pass


class SiteServer:
    """build/site served on 127.0.0.1 (a free port) from a background thread."""

    def __init__(self, root: Path):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class Guarded:
    """A browser context in which only ``allowed`` URL prefixes load; every other request is
    aborted and recorded in ``blocked``. Console errors and page errors are recorded too."""

    def __init__(self, browser, allowed: tuple[str, ...], **context_options):
        self.allowed = allowed
        self.blocked: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context(**context_options)
        self.context.route("**/*", self._route)

    def _route(self, route):
        url = route.request.url
        if url.startswith(self.allowed) or url.startswith("data:"):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def open(self, url: str):
        page = self.context.new_page()
        page.on("console", lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        page.goto(url)
        page.wait_for_function("() => document.querySelectorAll('.sv:not(.sv-ready), form.check:not(.check-ready)')"
                               ".length === 0", timeout=15_000)
        return page

    def close(self):
        self.context.close()


# (root) -> what the reader sees of a slider view now
SNAPSHOT = """r => {
  const img = r.querySelector('figure img');
  return {
    src: img.getAttribute('src'), alt: img.alt, loaded: img.complete && img.naturalWidth > 0,
    state: Number(r.dataset.state), how: r.dataset.how || null,
    values: Array.from(r.querySelectorAll('input[type=range]')).map(i => Number(i.value)),
    valuetexts: Array.from(r.querySelectorAll('input[type=range]')).map(i => i.getAttribute('aria-valuetext')),
    readouts: Array.from(r.querySelectorAll('output')).map(o => o.textContent),
  };
}"""

# (root, expected src) -> the snapshot once the image with that src has loaded (or after 5 s)
SNAPSHOT_WHEN_SHOWN = """(r, want) => new Promise(resolve => {
  const img = r.querySelector('figure img');
  const snap = """ + SNAPSHOT + """;
  const t0 = performance.now();
  (function poll() {
    const done = img.getAttribute('src') === want && img.complete && img.naturalWidth > 0;
    if (done || performance.now() - t0 > 5000) resolve(snap(r));
    else requestAnimationFrame(poll);
  })();
})"""

# root -> {shown: a promise of the next 'sv-shown' event's delay (attnlib/frameslider.js: ms from the key or
# pointer going down to the frame after the new picture is decoded) and how it was shown ("held": a frame it
# had; "kernel": asked for)}; wrapped in an object so that evaluate_handle does not wait for it
NEXT_SHOWN_MS = """r => ({ shown: new Promise(resolve => {
  r.addEventListener('sv-shown', ev => resolve([Number(r.dataset.shownMs), ev.detail.how]), { once: true });
}) })"""


def view_data(root_locator) -> dict:
    import json

    return json.loads(root_locator.locator("script.sv-data").text_content())


def state_of(indices: list[int], sizes: list[int]) -> int:
    state = 0
    for i, size in zip(indices, sizes, strict=True):
        state = state * size + i
    return state


def snake(sizes: list[int]) -> list[tuple[int, ...]]:
    """Every index tuple, each one key press (one slider, one step) from the one before."""
    if not sizes:
        return [()]
    rest = snake(sizes[1:])
    out = []
    for i in range(sizes[0]):
        out += [(i, *r) for r in (rest if i % 2 == 0 else rest[::-1])]
    return out

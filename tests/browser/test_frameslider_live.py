"""attnlib/frameslider.js in live mode, driven by a stand-in for the kernel's widget model (no JupyterLab).

The messages are the ones attnlib.widgets.SliderView sends: {type: "frame", state} with the PNG, and
{type: "reset"} when what the frames are drawn from changed in the kernel (a learner edited the data the
view draws from, in place). After a reset no frame held before may be shown again.
"""

from __future__ import annotations

import base64
import io
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Appended to frameslider.js in one module: a model whose messages the test delivers, three states.
HARNESS = """
const data = { spec: [{ label: "n", unit: "", readouts: ["1", "2", "3"] }], state: 0, first_state: 0,
               first: Uint8Array.from(atob(window.PNGS[0]), c => c.charCodeAt(0)).buffer };
const handlers = {}, sent = [];
const model = {
  get: name => data[name],
  set(name, value) { data[name] = value; },
  on(event, cb) { (handlers[event] = handlers[event] || []).push(cb); },
  off() {},
  save_changes() {},
  send(message) { sent.push(message); },
};
window.sent = sent;
window.deliver = (message, i) => (handlers["msg:custom"] || []).forEach(cb => cb(message,
  i === undefined ? [] : [Uint8Array.from(atob(window.PNGS[i]), c => c.charCodeAt(0)).buffer]));
render({ model, el: document.getElementById("host") });
"""


def _pngs() -> list[str]:
    """Three PNGs of different sizes (so the one shown can be told by its byte length)."""
    from PIL import Image

    out = []
    for side in (8, 16, 32):
        buf = io.BytesIO()
        Image.new("RGB", (side, side), (0, 114, 178)).save(buf, format="png")
        out.append(base64.b64encode(buf.getvalue()).decode())
    return out


def _shown_bytes(page) -> int:
    """Byte length of the picture the view shows now."""
    return page.evaluate("async () => (await (await fetch(document.querySelector('.sv img').src)).arrayBuffer())"
                         ".byteLength")


def _press(page, index: int) -> None:
    page.evaluate("""i => { const input = document.querySelector('.sv input[type=range]');
                            input.value = String(i); input.dispatchEvent(new Event('input', { bubbles: true })); }""",
                  index)


def test_a_reset_drops_every_frame_held_and_asks_again(browser):
    pngs = _pngs()
    sizes = [len(base64.b64decode(p)) for p in pngs]
    module = (ROOT / "attnlib" / "frameslider.js").read_text(encoding="utf-8") + HARNESS
    page = browser.new_page()
    try:
        page.set_content('<!DOCTYPE html><html><body><div id="host"></div></body></html>')
        page.evaluate("pngs => { window.PNGS = pngs; }", pngs)
        page.add_script_tag(content=module, type="module")
        page.wait_for_selector(".sv.sv-ready")
        assert _shown_bytes(page) == sizes[0]  # the frame sent with the view
        assert page.evaluate("window.sent") == [{"type": "want", "now": [], "ahead": [1]}]
        page.evaluate("() => window.deliver({ type: 'frame', state: 1 }, 1)")
        _press(page, 1)
        page.wait_for_function("() => document.querySelector('.sv').dataset.how === 'held'")
        assert _shown_bytes(page) == sizes[1]
        # the control: a frame for a state already held is ignored (the browser keeps what it has) ...
        page.evaluate("() => window.deliver({ type: 'frame', state: 1 }, 2)")
        assert _shown_bytes(page) == sizes[1]
        # ... so only a reset lets new frames in: the view drops what it holds and asks for the state shown
        page.evaluate("() => window.deliver({ type: 'reset' })")
        assert page.evaluate("document.querySelector('.sv').getAttribute('aria-busy')") == "true"
        assert page.evaluate("window.sent.at(-1)") == {"type": "want", "now": [1], "ahead": [0, 2]}
        page.evaluate("() => window.deliver({ type: 'frame', state: 1 }, 2)")
        page.wait_for_function("() => !document.querySelector('.sv').hasAttribute('aria-busy')")
        assert _shown_bytes(page) == sizes[2]
        _press(page, 0)  # the frame sent with the view was dropped too: asked for again, not shown stale
        assert page.evaluate("window.sent.at(-1)")["now"] == [0]
        assert page.evaluate("document.querySelector('.sv').getAttribute('aria-busy')") == "true"
    finally:
        page.close()

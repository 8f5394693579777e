"""axe-core on every page of the static course site (the index and each lesson), at a desktop width
(1280 px) and a phone width (390 px): no violation of any impact, for every rule axe runs by default.

axe-core is pinned in tests/browser/package.json (+ package-lock.json) and installed with
``npm ci --prefix tests/browser`` (.ci/run does it). Without it the tests skip locally and FAIL
when CI is set: they never pass without having run axe.

Before axe runs, every ``<details>`` on the page is opened (exercise solutions, folded code), so
the content a reader can unfold is checked too, and every self-check is answered once (a number
typed, or the first option chosen), so its feedback is checked in the colours it is shown in.

test_sideways_boxes_scroll_by_keyboard_on_a_phone: on the lessons with wide tables and equations, every
box that scrolls sideways at 390 px is reachable by keyboard, scrolls with the arrow keys and shows a
focus ring.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from site_harness import Guarded, SiteServer

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
LESSONS = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if re.match(r"^\d\d-[a-z0-9-]+\.ipynb$", p.name))
PAGES = ["index", *(p.stem for p in LESSONS)]
WIDTHS = {
    "1280px": {"viewport": {"width": 1280, "height": 800}},
    "390px": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
              "device_scale_factor": 2},
}

# Opens what a reader can unfold and answers each self-check wrong, so the feedback is on the page.
UNFOLD = """() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  document.querySelectorAll('form.check').forEach(f => {
    const box = f.querySelector('input[type=text]');
    if (box) box.value = '12345';
    const radio = f.querySelector('input[type=radio]');
    if (radio) radio.checked = true;
    f.requestSubmit();
  });
}"""


def describe(violations: list[dict], limit_nodes: int = 3) -> str:
    """Each violation: rule id, impact, help, and for its first nodes the target selector and HTML."""
    lines = []
    for v in violations:
        lines.append(f"- {v['id']} ({v['impact']}): {v['help']} [{len(v['nodes'])} element(s)]")
        for node in v["nodes"][:limit_nodes]:
            target = " ".join(str(t) for t in node["target"])
            lines.append(f"    at {target}: {node['html'][:200]}")
            summary = (node.get("failureSummary") or "").replace("\n", " ")
            if summary:
                lines.append(f"      {summary[:300]}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE.is_file():
        reason = ("axe-core is not installed: run `npm ci --prefix tests/browser` "
                  f"(it pins the version in tests/browser/package.json); looked for {AXE}")
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail(f"{reason} (CI is set, so this is a failure, not a skip)", pytrace=False)
        pytest.skip(reason)
    return AXE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def server(site):
    s = SiteServer(site)
    yield s
    s.stop()


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize("name", PAGES)
def test_no_axe_violations(browser, server, axe_source, name, width):
    guard = Guarded(browser, (server.url,), **WIDTHS[width])
    try:
        page = guard.open(server.url + f"{name}.html")
        page.evaluate(UNFOLD)
        page.add_script_tag(content=axe_source)
        version = page.evaluate("() => axe.version")
        violations = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")
        page.close()
        assert violations == [], (f"{name}.html at {width}: {len(violations)} axe-core {version} rule(s) violated\n"
                                  + describe(violations))
        assert guard.errors == [], f"{name}.html at {width}: {guard.errors}"
    finally:
        guard.close()


# Every box that scrolls sideways at 390 px: its tabindex, role and name, and whether ArrowRight scrolls it
# once it has the focus (after a key press, so the focus counts as keyboard focus) and shows a focus ring.
SCROLL_BOXES = """async () => {
  const boxes = Array.from(document.querySelectorAll('body *')).filter(e => {
    const cs = getComputedStyle(e);
    return e.scrollWidth > e.clientWidth + 1 && ['auto', 'scroll'].includes(cs.overflowX) && e.getClientRects().length;
  });
  const out = [];
  for (const e of boxes) {
    e.scrollIntoView({ block: 'center' });
    e.focus();
    const focused = document.activeElement === e;
    out.push({ html: e.outerHTML.slice(0, 120), tabindex: e.getAttribute('tabindex'), role: e.getAttribute('role'),
               label: e.getAttribute('aria-label'), focused: focused, x: e.scrollLeft });
  }
  return out;
}"""


# Prose, code, outputs and scroll boxes whose right edge lies past an ancestor that clips overflow: their
# line ends (and the scroll shadow) are cut off with no way to scroll to them.
CUT_OFF = """() => {
  const out = [];
  for (const e of document.querySelectorAll('.jp-RenderedHTMLCommon, .jp-OutputArea-output, .jp-InputArea-editor, .scroll-x')) {
    if (!e.getClientRects().length) continue;
    const right = e.getBoundingClientRect().right;
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== 'visible') {
        if (right > a.getBoundingClientRect().right + 0.5) out.push(`${e.className} ends ${Math.round(right)}, ${a.className} clips at ${Math.round(a.getBoundingClientRect().right)}`);
        break;
      }
    }
  }
  return out.slice(0, 5);
}"""


@pytest.mark.parametrize("name", ["03-worked-example", "08-pretrained-model"])
def test_sideways_boxes_scroll_by_keyboard_on_a_phone(browser, server, name):
    """Code, printed output, tables and display maths that are wider than a phone scroll inside their own box,
    which Tab reaches (tabindex 0, a role and a name), the arrow keys scroll and a focus ring marks."""
    guard = Guarded(browser, (server.url,), **WIDTHS["390px"])
    try:
        page = guard.open(server.url + f"{name}.html")
        page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390, f"{name}: the page scrolls sideways"
        cut = page.evaluate(CUT_OFF)
        assert cut == [], f"{name}: boxes reach past the edge of an ancestor that clips them (hidden): {cut}"
        boxes = page.evaluate(SCROLL_BOXES)
        kinds = {b["label"].split()[0] for b in boxes if b["label"]}
        assert {"Code", "Table", "Equation"} & kinds, f"{name}: no wide box found at 390 px, nothing was checked"
        for box in boxes:
            assert box["tabindex"] == "0" and box["role"] and box["label"] and box["focused"], (
                f"{name}: a box that scrolls sideways is not reachable by keyboard or has no name: {box['html']}")
            locator = page.locator(f'[aria-label="{box["label"]}"]').first
            locator.scroll_into_view_if_needed()
            page.keyboard.press("Shift")  # a key press first: the focus that follows is keyboard focus
            locator.focus()
            before = locator.evaluate("e => e.scrollLeft")
            page.keyboard.press("ArrowRight")
            page.keyboard.press("ArrowRight")
            page.wait_for_function("e => e.scrollLeft > 0", arg=locator.element_handle(), timeout=2000)
            ring = locator.evaluate("e => e.matches(':focus-visible') && getComputedStyle(e).outlineStyle !== 'none'"
                                    " && parseFloat(getComputedStyle(e).outlineWidth) >= 2")
            assert before == 0 and ring, f"{name}: {box['label']}: scrolled from {before}, focus ring shown: {ring}"
        page.close()
    finally:
        guard.close()

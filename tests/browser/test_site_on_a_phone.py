"""Figures on a phone, in Debian's headless Chromium at 390×844 (the static site the ``site`` fixture builds).

On each page with phone renderings: the content width a figure gets is at least PHONE_SHOWN_PX (the
width build_site sized the phone renderings for); every <picture> loads its phone source; every
figure's smallest text, from the build's size report and the width the image really takes on the
page, is at least PHONE_GOAL_PX; a slider move swaps the phone picture to the new state's; the "Tap
the figure to enlarge it" hint shows and a tap enlarges the figure. At 1280 px the large pictures
load and the hint says "Click". No console errors.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from site_harness import DESKTOP, PHONE, Guarded, SiteServer

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("build_site", ROOT / "scripts" / "build_site.py")
build_site = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_site)

# Load every lazy figure, then report each image: where it came from and how wide it is drawn.
IMAGES = """async () => {
  const imgs = Array.from(document.querySelectorAll('img'));
  imgs.forEach(i => { i.loading = 'eager'; });
  await Promise.all(imgs.map(i => i.decode().catch(() => null)));
  return imgs.map(i => {
    const source = i.parentElement.tagName === 'PICTURE' ? i.parentElement.querySelector('source') : null;
    const box = i.parentElement.closest('.jp-OutputArea-output, figure');
    const style = getComputedStyle(box);
    return { src: i.getAttribute('src'), current: i.currentSrc, shown: i.getBoundingClientRect().width,
             natural: i.naturalWidth, phone: source ? source.getAttribute('srcset') : null,
             room: box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight),
             slider: !!i.closest('.sv') };
  });
}"""


@pytest.fixture(scope="module")
def server(site):
    s = SiteServer(site)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def sizes(site) -> dict:
    """{first 20 hex digits of a PNG's sha256: its size entry} from the build's report."""
    report = site.parent / "figure_text_sizes.json"
    if not report.exists():
        pytest.skip("site from SITE_PREBUILT: the figure-size report is written only by a build in this session")
    return {e["png"][:20]: e for e in json.loads(report.read_text(encoding="utf-8")) if e.get("png")}


def lessons_with_phone_pictures(site: Path) -> list[str]:
    return [p.stem for p in sorted(site.glob("[0-9][0-9]-*.html"))
            if "<source" in p.read_text(encoding="utf-8")]


def test_phone_pictures_load_and_their_text_is_readable(browser, server, site, sizes):
    stems = lessons_with_phone_pictures(site)
    assert stems, "no page has a phone rendering"
    guard = Guarded(browser, (server.url,), **PHONE)
    try:
        checked = 0
        for stem in stems:
            page = guard.open(server.url + f"{stem}.html")
            for im in page.evaluate(IMAGES):
                where = f"{stem}: {im['src']}"
                assert im["room"] >= build_site.PHONE_SHOWN_PX - 0.5, (
                    f"{where}: a figure gets {im['room']:.1f} px at 390 px, less than PHONE_SHOWN_PX")
                if im["phone"]:
                    assert im["current"].endswith("/" + im["phone"]), f"{where}: loaded {im['current']}, not the phone one"
                entry = sizes.get(Path(im["current"]).stem)
                assert entry is not None, f"{where}: {im['current']} has no size entry"
                assert abs(im["natural"] - entry["width_px"]) <= 1  # (the size entry rounds, the canvas floors)
                px = build_site.smallest_text_px(entry, im["shown"])
                assert px >= build_site.PHONE_GOAL_PX, f"{where}: its smallest text {entry['min_text']!r} is {px:.2f} px"
                checked += 1
            page.close()
        assert checked > 0
        assert guard.errors == [] and guard.blocked == []
    finally:
        guard.close()


def test_a_slider_swaps_the_phone_picture(browser, server, site):
    guard = Guarded(browser, (server.url,), **PHONE)
    try:
        views = 0
        for stem in lessons_with_phone_pictures(site):
            page = guard.open(server.url + f"{stem}.html")
            roots = page.locator(".sv")
            for n in range(roots.count()):
                root = roots.nth(n)
                data = json.loads(root.locator("script.sv-data").text_content())
                if "phones" not in data:
                    continue
                slider = root.locator("input[type=range]").first
                slider.scroll_into_view_if_needed()
                for key in ("End", "Home"):
                    slider.focus()
                    page.keyboard.press(key)
                    state = int(root.get_attribute("data-state"))
                    want = data["urls"][data["phones"][state]]
                    page.wait_for_function(
                        "([r, want]) => { const i = r.querySelector('img'); return i.currentSrc.endsWith('/' + want)"
                        " && i.complete && i.naturalWidth > 0; }", arg=[root.element_handle(), want], timeout=5000)
                    shown = root.evaluate("r => r.querySelector('source').getAttribute('srcset')")
                    assert shown == want, f"{stem} view {n + 1}: {key} left the phone source at {shown}"
                views += 1
            page.close()
        assert views > 0, "no slider view has phone renderings"
        assert guard.errors == [] and guard.blocked == []
    finally:
        guard.close()


def test_the_enlarge_hint_shows_and_a_tap_enlarges(browser, server, site):
    stem = lessons_with_phone_pictures(site)[0]
    guard = Guarded(browser, (server.url,), **PHONE)
    try:
        page = guard.open(server.url + f"{stem}.html")
        page.evaluate(IMAGES)
        img = page.locator(".jp-OutputArea-output picture:has(source) img").first
        img.scroll_into_view_if_needed()
        hint = page.locator(".jp-OutputArea-output:has(picture source) .zoom-hint").first
        assert hint.is_visible() and hint.inner_text().strip() == "Tap the figure to enlarge it (again to shrink it)."
        before = img.bounding_box()["width"]
        img.tap()
        page.wait_for_function("i => i.parentElement.classList.contains('zoomed')", arg=img.element_handle())
        assert img.bounding_box()["width"] > before + 50
        img.tap()
        assert abs(img.bounding_box()["width"] - before) < 1
        assert guard.errors == [] and guard.blocked == []
    finally:
        guard.close()
    guard = Guarded(browser, (server.url,), **DESKTOP)
    try:
        page = guard.open(server.url + f"{stem}.html")
        for im in page.evaluate(IMAGES):
            if im["phone"]:
                assert im["current"].endswith("/" + im["src"]), f"{stem}: at 1280 px {im['current']} loaded"
        shown = [h.inner_text().strip() for h in page.locator(".zoom-hint").all() if h.is_visible()]
        assert all(t == "Click the figure to enlarge it (again to shrink it)." for t in shown), shown
        assert guard.errors == [] and guard.blocked == []
    finally:
        guard.close()

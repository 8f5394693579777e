#!/usr/bin/env python3
"""The static course site (scripts/build_site.py): its size, each page's first load, and how fast a
slider's new state shows in headless Chromium from disk (file://).

    python benchmarks/bench_site.py [--json] [--site build/site] [--presses 40] [--gap-ms 150] [--phone]

Builds the site into a temporary folder (timing the build), unless --site names one already built.

- Size: every file of the site; budget 15 MB.
- First load of each page: every byte the browser fetches when the page opens at 1280x720 (served
  on 127.0.0.1 so each response can be counted), until the network is idle: HTML, course.css,
  course.js, the figures in view, each slider view's shown image and the neighbours it preloads (the page's
  inline module, attnlib/frameslider.js, is part of the HTML).
  Also the bytes once the reader has scrolled to the end (every lazy figure loaded). Budget 1.5 MB.
- State change, from disk: in each slider view, ``--presses`` arrow-key presses sweeping each slider
  one way and back, ``--gap-ms`` apart (a reader's pace, so the preloads can finish); time from the
  key going down to the first frame after the new image is decoded (frameslider.js reports it, and
  whether the frame was "held"; on the site every frame is a file, so it always is). Floor in the
  same run: the same presses on a page whose figure never changes (the two states alternate between
  an image already decoded), i.e. the event + frame cost alone. Budget: median <= 50 ms. A second
  figure: jumps with Home/End to states that were never preloaded (cold, read from disk).
  ``--phone``: the state changes at 390x844 (mobile, touch, 2x pixels; the phone renderings show),
  still by arrow keys, so the numbers compare with the desktop ones.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from lab_harness import CHROMIUM_FLAGS, browser_missing  # noqa: E402
from site_harness import DESKTOP, NEXT_SHOWN_MS, PHONE, Guarded, SiteServer  # noqa: E402

SITE_BUDGET_PER_LESSON, PAGE_BUDGET, CHANGE_BUDGET = 1.8e6, 1.5e6, 50.0  # as tests/test_site.py


def load_build_site():
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_site", ROOT / "scripts" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def p95(xs: list[float]) -> float:
    xs = sorted(xs)
    pos = 0.95 * (len(xs) - 1)
    lo = int(pos)
    return xs[lo] + (xs[min(lo + 1, len(xs) - 1)] - xs[lo]) * (pos - lo)


def load(avg=None) -> str:
    return " ".join(f"{x:.2f}" for x in (avg or os.getloadavg()))


def first_load_bytes(guard: Guarded, url: str) -> tuple[int, int]:
    """(bytes fetched on opening the page, bytes after scrolling to its end)."""
    sizes: dict[str, int] = {}

    def count(response):
        try:
            sizes[response.url] = len(response.body())
        except Exception:  # noqa: BLE001 (a redirect or aborted response has no body)
            pass

    page = guard.context.new_page()
    page.on("response", count)
    page.goto(url, wait_until="networkidle")
    opened = sum(sizes.values())
    height = page.evaluate("() => document.body.scrollHeight")
    for y in range(0, height + 720, 600):
        page.evaluate(f"() => window.scrollTo(0, {y})")
        page.wait_for_timeout(30)
    page.wait_for_load_state("networkidle")
    scrolled = sum(sizes.values())
    page.close()
    return opened, scrolled


def press(page, root, key: str, gap_ms: int) -> float | None:
    """Press ``key`` in the focused slider of ``root``; ms until its new image is on screen (None: no change)."""
    waiting = root.evaluate_handle(NEXT_SHOWN_MS)
    before = root.evaluate("r => r.dataset.state")
    page.keyboard.press(key)
    if root.evaluate("r => r.dataset.state") == before:
        return None
    ms, how = page.evaluate("w => w.shown", waiting)
    if how != "held":
        raise AssertionError(f"a static page showed a frame it did not hold ({how!r})")
    page.wait_for_timeout(gap_ms)
    return ms


def sweep_times(page, presses: int, gap_ms: int) -> tuple[list[float], list[float]]:
    """(sweeping presses, cold Home/End jumps) over every slider of every view on the page."""
    warm, cold = [], []
    views = page.locator(".sv")
    for v in range(views.count()):
        root = views.nth(v)
        root.scroll_into_view_if_needed()
        inputs = root.locator("input[type=range]")
        for k in range(inputs.count()):
            inputs.nth(k).focus()
            top = int(inputs.nth(k).get_attribute("max"))
            way = "ArrowRight"
            for _ in range(min(presses, 2 * top)):
                if int(inputs.nth(k).input_value()) in ((top, 0) if way == "ArrowRight" else (0, top)):
                    way = "ArrowLeft" if way == "ArrowRight" else "ArrowRight"
                ms = press(page, root, way, gap_ms)
                if ms is not None:
                    warm.append(ms)
            for key in ("End", "Home"):
                ms = press(page, root, key, gap_ms)
                if ms is not None:
                    cold.append(ms)
    return warm, cold


FLOOR_PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>floor</title>
<link rel="stylesheet" href="course.css"></head><body><div><div class="sv">
<div class="sv-row"><label for="f">floor</label><input type="range" id="f" min="0" max="{top}" value="0">
<output>0</output></div>
<figure><img src="{src}" alt="floor" width="{w}" height="{h}"></figure><p class="sv-error" role="alert" hidden></p>
<script type="application/json" class="sv-data">{data}</script></div></div>{module}<script src="course.js"></script>
</body></html>"""


def write_floor(site: Path, build_site) -> Path:
    """A one-slider page over TWO copies of one image: every state change is a new src whose
    bytes are the same picture, so the time is the page's own cost (event, swap, decode, frame)."""
    png = max(site.rglob("*.png"), key=lambda p: p.stat().st_size)
    a, b = site / "_floor_a.png", site / "_floor_b.png"
    shutil.copy(png, a)
    shutil.copy(png, b)
    w, h = build_site.png_size(png.read_bytes())
    top = 40
    data = {"spec": [{"name": "f", "label": "floor", "readouts": [str(i) for i in range(top + 1)], "unit": ""}],
            "state": 0, "urls": [a.name, b.name], "images": [i % 2 for i in range(top + 1)],
            "alts": [f"floor {i}" for i in range(top + 1)]}
    page = site / "_floor.html"
    page.write_text(FLOOR_PAGE.format(top=top, src=a.name, w=w, h=h, data=json.dumps(data),
                                      module=build_site.view_module()), encoding="utf-8")
    return page


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="also print the rows as one JSON line at the end")
    parser.add_argument("--site", type=Path, help="an already built site (default: build one now)")
    parser.add_argument("--presses", type=int, default=40, help="timed presses per slider (at most 2x its steps)")
    parser.add_argument("--gap-ms", type=int, default=150, help="pause after each new image before the next press")
    parser.add_argument("--phone", action="store_true", help="time the state changes at a phone's 390x844 viewport")
    args, _ = parser.parse_known_args(argv)
    if browser_missing("site", args.json):
        return 0
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    build_site = load_build_site()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.site:
            site = args.site.resolve()
        else:
            site = Path(tmp) / "site"
            lessons = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if build_site.LESSON.match(p.name))
            print(f"building the site for {len(lessons)} lessons (load {load()})", flush=True)
            start = time.perf_counter()
            build_site.build(lessons, site, log=lambda m: print("  " + m, flush=True))
            built_s = time.perf_counter() - start
            print(f"built in {built_s:.0f} s (load {load()})")
            rows.append({"benchmark": "site", "figure": "site build, every lesson executed, every state rendered",
                         "median": round(built_s, 1), "unit": "s", "goal": "report", "met": None})
        # a copy, so the floor page never lands in a site folder the caller keeps
        work = Path(tmp) / "measured"
        shutil.copytree(site, work)
        total = sum(p.stat().st_size for p in work.rglob("*") if p.is_file())
        pngs = list(work.rglob("*.png"))
        print(f"site: {total / 1e6:.2f} MB in {sum(1 for p in work.rglob('*') if p.is_file())} files "
              f"({len(pngs)} PNGs, {sum(p.stat().st_size for p in pngs) / 1e6:.2f} MB)")
        budget = SITE_BUDGET_PER_LESSON * sum(1 for p in work.glob("[0-9][0-9]-*.html"))
        rows.append({"benchmark": "site", "figure": "whole site size (MB)", "median": round(total / 1e6, 2),
                     "goal": f"<= {budget / 1e6:.1f} MB (1.8 MB per lesson page)", "met": total <= budget})
        pages = sorted(p for p in work.glob("*.html") if not p.name.startswith("_"))
        floor = write_floor(work, build_site)
        server = SiteServer(work)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS, headless=True)
            try:
                print(f"\n{'page':32} {'first load':>11} {'scrolled':>10}  (load {load()})")
                for page_path in pages:
                    guard = Guarded(browser, (server.url,), **DESKTOP)
                    opened, scrolled = first_load_bytes(guard, server.url + page_path.name)
                    guard.close()
                    print(f"{page_path.name:32} {opened / 1e6:9.2f} MB {scrolled / 1e6:8.2f} MB")
                    rows.append({"benchmark": "site", "figure": f"first load {page_path.stem} (MB)",
                                 "median": round(opened / 1e6, 3), "scrolled_mb": round(scrolled / 1e6, 3),
                                 "goal": "<= 1.5 MB", "met": opened <= PAGE_BUDGET})
                viewport = "390x844 phone" if args.phone else "1280x720"
                print(f"\nstate changes from disk (file://), {viewport}, {args.gap_ms} ms apart (load {load()})")
                guard = Guarded(browser, ("file://",), **(PHONE if args.phone else DESKTOP))
                page = guard.open(floor.as_uri())
                floor_ms, _ = sweep_times(page, args.presses, args.gap_ms)
                page.close()
                fmed = statistics.median(floor_ms)
                print(f"{'floor (same picture, new src)':40} n={len(floor_ms):3} median {fmed:5.1f} ms "
                      f"p95 {p95(floor_ms):5.1f} ms")
                all_warm, all_cold = [], []
                for page_path in pages:
                    page = guard.open(page_path.as_uri())
                    if page.locator(".sv").count() == 0:
                        page.close()
                        continue
                    warm, cold = sweep_times(page, args.presses, args.gap_ms)
                    page.close()
                    all_warm += warm
                    all_cold += cold
                    med = statistics.median(warm)
                    print(f"{page_path.stem:40} n={len(warm):3} median {med:5.1f} ms p95 {p95(warm):5.1f} ms; "
                          f"cold jumps median {statistics.median(cold):5.1f} ms (n={len(cold)})")
                    rows.append({"benchmark": "site", "figure": f"state change {page_path.stem} ({viewport})",
                                 "median": round(med, 1), "min": round(min(warm), 1), "p95": round(p95(warm), 1),
                                 "floor": round(fmed, 1), "ratio": round(med / fmed, 2),
                                 "goal": "median <= 50 ms", "met": med <= CHANGE_BUDGET})
                assert guard.errors == [] and guard.blocked == [], (guard.errors, guard.blocked)
                guard.close()
                med = statistics.median(all_warm)
                print(f"{'all views':40} n={len(all_warm):3} median {med:5.1f} ms p95 {p95(all_warm):5.1f} ms; "
                      f"cold jumps median {statistics.median(all_cold):5.1f} ms p95 {p95(all_cold):5.1f} ms")
                rows.append({"benchmark": "site", "figure": f"state change, all views ({viewport})",
                             "median": round(med, 1), "min": round(min(all_warm), 1), "p95": round(p95(all_warm), 1),
                             "floor": round(fmed, 1), "ratio": round(med / fmed, 2), "goal": "median <= 50 ms",
                             "met": med <= CHANGE_BUDGET})
                rows.append({"benchmark": "site",
                             "figure": f"cold jump (Home/End, not preloaded), all views ({viewport})",
                             "median": round(statistics.median(all_cold), 1), "min": round(min(all_cold), 1),
                             "p95": round(p95(all_cold), 1), "goal": "report", "met": None})
            finally:
                browser.close()
                server.stop()
    print(f"load average at end: {load()}")
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

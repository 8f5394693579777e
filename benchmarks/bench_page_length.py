"""How long each page of the built course site is on a phone, in screens.

    python benchmarks/bench_page_length.py --site build/site            # 390x844, every lesson page
    python benchmarks/bench_page_length.py --site DIR --width 412 --height 915 --json

Opens each ``NN-*.html`` of the site from disk in headless Debian Chromium (Playwright) with a phone
viewport (touch, mobile), and prints the page's scroll height in CSS px and in screens (height /
viewport height), and its scroll width (wider than the viewport = the page scrolls sideways).
Skipped (exit 0) when chromium, playwright or the site is missing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", type=Path, default=ROOT / "build" / "site", help="a built site (default build/site)")
    parser.add_argument("--width", type=int, default=390, help="viewport width in CSS px (default 390)")
    parser.add_argument("--height", type=int, default=844, help="viewport height in CSS px (default 844)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON on the last line")
    args, _ = parser.parse_known_args(argv)  # run_all.py forwards --repeats/--warmup: not used here
    from lab_harness import CHROMIUM_FLAGS, browser_missing

    if browser_missing("page_length", args.json):
        return 0
    pages = sorted(args.site.glob("[0-9][0-9]-*.html"))
    if not pages:
        print(f"skipped: no lesson pages in {args.site} (build them with python3 course.py site)")
        if args.json:
            print(json.dumps([{"benchmark": "page_length", "figure": "skipped: no site", "met": None}]))
        return 0
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_FLAGS)
        context = browser.new_context(viewport={"width": args.width, "height": args.height}, is_mobile=True,
                                      has_touch=True)
        page = context.new_page()
        for path in pages:
            page.goto(path.resolve().as_uri(), wait_until="load")
            page.wait_for_timeout(300)
            height, width = page.evaluate(
                "[document.documentElement.scrollHeight, document.documentElement.scrollWidth]")
            screens = height / args.height
            print(f"{path.stem:32s} {height:7d} px  {screens:5.1f} screens  (scroll width {width} px)", flush=True)
            rows.append({"benchmark": "page_length", "figure": f"{path.stem} at {args.width}x{args.height}",
                         "value": round(screens, 1), "unit": "screens", "height_px": height, "scroll_width_px": width,
                         "met": None})
        browser.close()
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

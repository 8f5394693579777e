#!/usr/bin/env python3
"""Keypress → new figure in JupyterLab (headless Chromium), every slider of every lesson, vs its floor.

Starts JupyterLab and Chromium with the browser tests' plumbing (tests/browser/lab_harness.py), runs
each lesson (Run All), then presses an arrow key on each slider ``--repeats`` times (alternating
direction, after ``--warmup`` untimed presses) and times keydown → the view's <img> gets a new src.
Alternating presses revisit two states; ``--sweep`` presses one way, so each press asks for a state
not shown before (what a first pass through a slider costs; ``--gap-ms`` sets the pause between presses).
The floor, measured in the same run, is tests/fixtures/browser_floor.ipynb: a slider_view redrawing an
empty figure with the same PNG size (pixels) as the lesson's figure. Goal per slider: median <= 100 ms,
p95 <= 200 ms, median <= 1.5x the floor's.

    python benchmarks/bench_browser.py [--json] [--repeats 7] [notebooks/NN-*.ipynb ...]

With no lessons in notebooks/ it measures tests/fixtures/slider_demo.ipynb, so the harness is exercised.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from lab_harness import CHROMIUM_FLAGS, open_and_run_all, press_and_time, start_lab  # noqa: E402

GOAL_MEDIAN, GOAL_P95, GOAL_RATIO = 100.0, 200.0, 1.5
GOAL = f"med<={GOAL_MEDIAN:.0f}ms p95<={GOAL_P95:.0f}ms <={GOAL_RATIO}x"
FLOOR = "fixtures/browser_floor.ipynb"
IMG_SIZE = """([index]) => {
  let view = document.querySelectorAll('.widget-slider')[index].parentElement;
  while (view && !view.querySelector('.widget-output img')) view = view.parentElement;
  const img = view.querySelector('.widget-output img');
  return [img.naturalWidth, img.naturalHeight];
}"""


def p95(xs: list[float]) -> float:
    """95th percentile by linear interpolation between order statistics (max for fewer than ~20 samples)."""
    xs = sorted(xs)
    pos = 0.95 * (len(xs) - 1)
    lo = int(pos)
    return xs[lo] + (xs[min(lo + 1, len(xs) - 1)] - xs[lo]) * (pos - lo)


def measure_sliders(page, lab, target: str, repeats: int, warmup: int, sweep: bool = False,
                    gap_ms: int = 150) -> list[dict]:
    """Run ``target`` in the lab; for every slider, its label, PNG size and keypress→image times (ms).

    Presses alternate direction (revisiting two states), or with ``sweep`` go one way to states not
    shown before (turning back at the end), ``gap_ms`` after each new image.
    """
    run_s = open_and_run_all(page, lab, target, timeout_ms=180_000)
    page.wait_for_timeout(500)  # let widget views render
    sliders = page.locator(".widget-slider")
    out = []
    for i in range(sliders.count()):
        slider = sliders.nth(i)
        slider.scroll_into_view_if_needed()
        handle = slider.locator(".noUi-handle")
        at_top = float(handle.get_attribute("aria-valuenow")) >= float(handle.get_attribute("aria-valuemax"))
        keys = ["ArrowLeft", "ArrowRight"] if at_top else ["ArrowRight", "ArrowLeft"]
        times = []
        for n in range(warmup + repeats):
            key = keys[0] if sweep else keys[n % 2]
            if sweep and handle.get_attribute("aria-valuenow") in (handle.get_attribute("aria-valuemin"),
                                                                    handle.get_attribute("aria-valuemax")) and n:
                keys.reverse()  # at an end: sweep back (those states were shown already)
                key = keys[0]
            ms = press_and_time(page, i, key)
            if n >= warmup:
                times.append(ms)
            page.wait_for_timeout(gap_ms)  # a person does not press faster
        out.append({"target": target, "slider": (slider.locator(".widget-label").text_content() or "").strip(),
                    "size": tuple(page.evaluate(IMG_SIZE, [i])), "ms": times, "run_all_s": run_s})
    lab.shutdown_kernels()
    return out


def write_floor(root: Path, sizes: list[tuple[int, int]]) -> None:
    """Rewrite the SIZES_PX line of the lab's copy of the floor notebook."""
    path = root / FLOOR
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if "SIZES_PX = " in src:
            cell["source"] = re.sub(r"^SIZES_PX = .*$", f"SIZES_PX = {sorted(sizes)!r}", src, flags=re.M)
    path.write_text(json.dumps(nb))


def row(m: dict, floor: dict | None, sweep: bool = False) -> dict:
    med, hi = statistics.median(m["ms"]), p95(m["ms"])
    fmed = statistics.median(floor["ms"]) if floor else None
    ratio = med / fmed if fmed else None
    met = med <= GOAL_MEDIAN and hi <= GOAL_P95 and (ratio is not None and ratio <= GOAL_RATIO)
    w, h = m["size"]
    return {"benchmark": "browser", "figure": f"{Path(m['target']).stem}: {m['slider']}{' (sweep)' if sweep else ''}",
            "median_ms": round(med, 1), "min_ms": round(min(m["ms"]), 1), "p95_ms": round(hi, 1),
            "floor": f"empty {w}x{h} ({fmed:.0f} ms)" if fmed else "-", "ratio": ratio, "goal": GOAL, "met": met}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="lesson notebooks (default: notebooks/NN-*.ipynb)")
    parser.add_argument("--json", action="store_true", help="also print the rows as one JSON line at the end")
    parser.add_argument("--repeats", type=int, default=7, help="timed presses per slider")
    parser.add_argument("--warmup", type=int, default=1, help="untimed presses per slider first")
    parser.add_argument("--sweep", action="store_true", help="press one way (new states) instead of alternating")
    parser.add_argument("--gap-ms", type=int, default=150, help="pause after each new image before the next press")
    parser.add_argument("--kernel-startup", type=Path, help="a .py file every kernel runs first (to try a change, "
                        "e.g. benchmarks/proposals/*.py, without editing the repository)")
    args, _ = parser.parse_known_args(argv)
    chromium = shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        chromium = None
    if chromium is None:
        print("skipped: needs Debian's chromium on PATH and Python playwright")
        if args.json:
            print(json.dumps([{"benchmark": "browser", "figure": "skipped: no chromium/playwright", "met": None}]))
        return 0

    lessons = [Path(p) for p in args.notebooks] or sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    targets = [f"notebooks/{p.name}" for p in lessons] or ["fixtures/slider_demo.ipynb"]
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{args.repeats} timed presses per slider after {args.warmup} untimed, "
          f"{'sweeping one way' if args.sweep else 'alternating'}, {args.gap_ms} ms apart")
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        if args.kernel_startup:
            startup = Path(tmp) / "ipython" / "profile_default" / "startup"
            startup.mkdir(parents=True)
            shutil.copy(args.kernel_startup, startup / "00-bench.py")
            print(f"every kernel first runs {args.kernel_startup}")
        lab = start_lab(Path(tmp))
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        try:
            measured = []
            for target in targets:
                measured += measure_sliders(page, lab, target, args.repeats, args.warmup, args.sweep, args.gap_ms)
            write_floor(lab.root, list({m["size"] for m in measured}) or [(720, 420)])
            floors = {m["size"]: m for m in measure_sliders(page, lab, FLOOR, args.repeats, args.warmup,
                                                            args.sweep, args.gap_ms)}
        finally:
            browser.close()
            lab.stop()
    print(f"load average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rows = [row(m, floors.get(m["size"]), args.sweep) for m in measured]
    print(f"{'slider':48} {'size px':>9} {'median':>7} {'p95':>7} {'floor':>6} {'ratio':>6}  met")
    for m, r in zip(measured, rows, strict=True):
        fmed = statistics.median(floors[m["size"]]["ms"]) if m["size"] in floors else float("nan")
        print(f"{r['figure'][:48]:48} {'x'.join(map(str, m['size'])):>9} {r['median_ms']:7.0f} {r['p95_ms']:7.0f} "
              f"{fmed:6.0f} {r['ratio'] or float('nan'):6.2f}  {'yes' if r['met'] else 'NO'}")
    everything = [t for m in measured for t in m["ms"]]
    floor_all = [t for m in floors.values() for t in m["ms"]]
    print(f"all sliders: median {statistics.median(everything):.0f} ms, p95 {p95(everything):.0f} ms; "
          f"floors: median {statistics.median(floor_all):.0f} ms, p95 {p95(floor_all):.0f} ms")
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

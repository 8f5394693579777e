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

``--first-press`` measures what a reader meets on first touch instead: per lesson, Run All, wait
``--wait-ms`` (default 1000) after it has finished, then ONE arrow key on each slider in turn (its first
press; on a lesson with several views, the later ones are also presses on another view), then
``--jumps`` clicks far along each slider's track (alternately near the far end and near the other end:
states usually not rendered yet). Goals: first press median <= 100 ms and p95 <= 250 ms; jumps p95
<= 300 ms, over all sliders of the run.

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
from lab_harness import CHROMIUM_FLAGS, browser_missing, open_and_run_all, press_and_time, start_lab  # noqa: E402

GOAL_MEDIAN, GOAL_P95, GOAL_RATIO = 100.0, 200.0, 1.5
FIRST_MEDIAN, FIRST_P95, JUMP_P95 = 100.0, 250.0, 300.0
JUMP_FRACTIONS = (0.95, 0.05, 0.8, 0.2, 0.65)  # where the k-th click lands along the track (mirrored if needed)
# Arms a timer for slider N: pointerdown on its track starts it, a new <img> src in its view stops it.
ARM_CLICK = """([index]) => {
  const slider = document.querySelectorAll('.widget-slider')[index];
  let view = slider.parentElement;
  while (view && !view.querySelector('.widget-output')) view = view.parentElement;
  const out = view.querySelector('.widget-output');
  const old = out.querySelector('img').src;
  window.__t0 = null; window.__t1 = null;
  slider.addEventListener('pointerdown', () => { window.__t0 = performance.now(); }, {once: true, capture: true});
  const obs = new MutationObserver(() => {
    const img = out.querySelector('img');
    if (img && img.src !== old && window.__t1 === null) { window.__t1 = performance.now(); obs.disconnect(); }
  });
  obs.observe(out, {subtree: true, childList: true, attributes: true, attributeFilter: ['src']});
  return old.length;
}"""
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


def click_and_time(page, index: int, fraction: float, timeout_ms: int = 15_000) -> float | None:
    """Click slider ``index``'s track at ``fraction`` of its width; return pointerdown→new image ms.

    None if the click lands on the value already shown (no new image is asked for)."""
    slider = page.locator(".widget-slider").nth(index)
    handle = slider.locator(".noUi-handle")
    lo, hi = (float(handle.get_attribute(a)) for a in ("aria-valuemin", "aria-valuemax"))
    before = handle.get_attribute("aria-valuenow")
    box = slider.locator(".noUi-base").bounding_box()
    page.evaluate(ARM_CLICK, [index])
    page.mouse.click(box["x"] + fraction * box["width"], box["y"] + box["height"] / 2)
    page.wait_for_timeout(50)
    if handle.get_attribute("aria-valuenow") == before and hi > lo:
        return None
    page.wait_for_function("() => window.__t1 !== null && window.__t0 !== null", timeout=timeout_ms, polling="raf")
    return page.evaluate("() => window.__t1 - window.__t0")


def measure_first_touch(page, lab, target: str, wait_ms: int, jumps: int, gap_ms: int) -> list[dict]:
    """Run ``target``; ``wait_ms`` after Run All, one press on each slider, then ``jumps`` far clicks on each."""
    run_s = open_and_run_all(page, lab, target, timeout_ms=180_000)
    page.wait_for_timeout(wait_ms)
    sliders = page.locator(".widget-slider")
    out = []
    for i in range(sliders.count()):
        slider = sliders.nth(i)
        slider.scroll_into_view_if_needed()
        handle = slider.locator(".noUi-handle")
        at_top = float(handle.get_attribute("aria-valuenow")) >= float(handle.get_attribute("aria-valuemax"))
        first = press_and_time(page, i, "ArrowLeft" if at_top else "ArrowRight")
        out.append({"target": target, "slider": (slider.locator(".widget-label").text_content() or "").strip(),
                    "first_ms": first, "jump_ms": [], "run_all_s": run_s})
        page.wait_for_timeout(gap_ms)
    for i, m in enumerate(out):
        sliders.nth(i).scroll_into_view_if_needed()
        handle = sliders.nth(i).locator(".noUi-handle")
        for k in range(jumps):
            lo, hi, now = (float(handle.get_attribute(a)) for a in ("aria-valuemin", "aria-valuemax", "aria-valuenow"))
            f = JUMP_FRACTIONS[k % len(JUMP_FRACTIONS)]
            if hi > lo and abs((now - lo) / (hi - lo) - f) < 0.3:
                f = 1 - f  # the handle is already near there: click the other end
            ms = click_and_time(page, i, f)
            if ms is not None:
                m["jump_ms"].append(ms)
            page.wait_for_timeout(gap_ms)
    lab.shutdown_kernels()
    return out


def first_touch_report(measured: list[dict], wait_ms: int) -> list[dict]:
    """Print per-slider first presses and jumps; return the two summary rows (all sliders)."""
    print(f"{'slider':48} {'first press':>11} {'jumps (ms)':>24}")
    for m in measured:
        name = f"{Path(m['target']).stem}: {m['slider']}"
        print(f"{name[:48]:48} {m['first_ms']:11.0f} {' '.join(f'{t:.0f}' for t in m['jump_ms']):>24}")
    firsts = [m["first_ms"] for m in measured]
    jumps = [t for m in measured for t in m["jump_ms"]]
    rows = []
    for label, xs, goal, met in [
        (f"first press on each slider, {wait_ms} ms after Run All", firsts,
         f"med<={FIRST_MEDIAN:.0f}ms p95<={FIRST_P95:.0f}ms",
         lambda xs: statistics.median(xs) <= FIRST_MEDIAN and p95(xs) <= FIRST_P95),
        ("jump: a click far along the track", jumps, f"p95<={JUMP_P95:.0f}ms", lambda xs: p95(xs) <= JUMP_P95),
    ]:
        if not xs:
            continue
        print(f"{label}: n={len(xs)}, median {statistics.median(xs):.0f} ms, p95 {p95(xs):.0f} ms, "
              f"max {max(xs):.0f} ms -> {'met' if met(xs) else 'NOT met'} ({goal})")
        rows.append({"benchmark": "browser", "figure": label, "median_ms": round(statistics.median(xs), 1),
                     "min_ms": round(min(xs), 1), "p95_ms": round(p95(xs), 1), "floor": "-", "ratio": None,
                     "goal": goal, "met": met(xs), "n": len(xs)})
    return rows


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
    parser.add_argument("--first-press", action="store_true",
                        help="first touch: one press per slider --wait-ms after Run All, then --jumps far clicks")
    parser.add_argument("--wait-ms", type=int, default=1000, help="with --first-press: pause after Run All")
    parser.add_argument("--jumps", type=int, default=3, help="with --first-press: far clicks per slider")
    parser.add_argument("--kernel-startup", type=Path, help="a .py file every kernel runs first (to try a change, "
                        "e.g. benchmarks/proposals/*.py, without editing the repository)")
    args, _ = parser.parse_known_args(argv)
    if browser_missing("browser", args.json):
        return 0
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")

    lessons = [Path(p) for p in args.notebooks] or sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    targets = [f"notebooks/{p.name}" for p in lessons] or ["fixtures/slider_demo.ipynb"]
    if args.first_press:
        print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; first touch: one press "
              f"per slider {args.wait_ms} ms after Run All, then {args.jumps} far clicks per slider, "
              f"{args.gap_ms} ms apart")
    else:
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
            if args.first_press:
                touched = [m for target in targets
                           for m in measure_first_touch(page, lab, target, args.wait_ms, args.jumps, args.gap_ms)]
            else:
                measured = []
                for target in targets:
                    measured += measure_sliders(page, lab, target, args.repeats, args.warmup, args.sweep, args.gap_ms)
                write_floor(lab.root, list({m["size"] for m in measured}) or [(720, 420)])
                floors = {m["size"]: m for m in measure_sliders(page, lab, FLOOR, args.repeats, args.warmup,
                                                                args.sweep, args.gap_ms)}
        finally:
            browser.close()
            lab.stop()
    if args.first_press:
        print(f"load average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        rows = first_touch_report(touched, args.wait_ms)
        if args.json:
            print(json.dumps(rows))
        return 0
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

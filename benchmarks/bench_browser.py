#!/usr/bin/env python3
"""Keypress → new frame in JupyterLab (headless Chromium), every slider of every lesson, vs its floor.

Starts JupyterLab and Chromium with the browser tests' plumbing (tests/browser/lab_harness.py), runs
each lesson (Run All), then presses an arrow key on each slider's range input ``--repeats`` times
(alternating direction, after ``--warmup`` untimed presses). A press is timed by the slider view itself
(attnlib/frameslider.js): its ``data-shown-ms``, keydown/pointerdown → the new frame decoded plus one
animation frame; the harness also times the same span with its own page-side timer and the first-press
report prints how far the two differ. Each press is "held" (the browser had the frame) or "kernel" (asked for).
Alternating presses revisit two states; ``--sweep`` presses one way, so each press asks for a state
not shown before (``--gap-ms`` sets the pause between presses).
The floor, measured in the same run, is tests/fixtures/browser_floor.ipynb: a slider view of an
empty figure with the same PNG size (pixels) as the lesson's figure. Goal per slider: median <= 100 ms,
p95 <= 200 ms, median <= 1.5x the floor's.

    python benchmarks/bench_browser.py [--json] [--repeats 7] [notebooks/NN-*.ipynb ...]

``--first-press`` measures what a reader meets on first touch instead: per lesson, Run All, wait
``--wait-ms`` (default 1000) after it has finished, then ONE arrow key on each slider in turn (its first
press), then on each slider the keyboard jumps End, Home, PageUp x9, then ``--jumps`` clicks far along
its track (alternately near the far end and near the other end). Goals (issue 24): with a frame store
(env ATTNLIB_FRAMES names a filled folder; the lab's kernels inherit it) every press, first or jump,
median <= 50 ms and p95 <= 100 ms; without one (ATTNLIB_FRAMES unset or "off"), first press median
<= 100 ms and p95 <= 250 ms, jumps p95 <= 300 ms (issue 14's), over all sliders of the run.

The script makes no load of its own unless ``--busy N`` starts N spinning processes beside the run; it
prints the 1-minute load average sampled every 5 s during the run.

With no lessons in notebooks/ it measures tests/fixtures/slider_demo.ipynb, so the harness is exercised.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from lab_harness import (  # noqa: E402
    CHROMIUM_FLAGS,
    RANGE,
    SLIDER_STATE,
    browser_missing,
    click_and_time,
    open_and_run_all,
    press_and_time,
    start_lab,
)

GOAL_MEDIAN, GOAL_P95, GOAL_RATIO = 100.0, 200.0, 1.5
FIRST_MEDIAN, FIRST_P95, JUMP_P95 = 100.0, 250.0, 300.0  # without a frame store (issue 14; issue 24 keeps them)
STORE_MEDIAN, STORE_P95 = 50.0, 100.0  # with a filled frame store: every press, first or jump (issue 24)
JUMP_FRACTIONS = (0.95, 0.05, 0.8, 0.2, 0.65)  # where the k-th click lands along the track (mirrored if needed)
JUMP_KEYS = ["End", "Home"] + ["PageUp"] * 9  # keyboard jumps per slider after the first presses
GOAL = f"med<={GOAL_MEDIAN:.0f}ms p95<={GOAL_P95:.0f}ms <={GOAL_RATIO}x"
FLOOR = "fixtures/browser_floor.ipynb"


def store_in_use() -> str | None:
    """The frame store the lab's kernels will read (env ATTNLIB_FRAMES, as attnlib.frames.default_store), or None."""
    value = os.environ.get("ATTNLIB_FRAMES", "")
    return None if value.strip().lower() in ("", "off") else value


class LoadSampler:
    """The 1-minute load average every ``every`` seconds while a run lasts; ``busy`` spinning processes beside it
    (pure-Python loops, one core each) when asked to make load."""

    def __init__(self, busy: int = 0, every: float = 5.0):
        self.samples, self.every, self._stop = [], every, threading.Event()
        self._procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            self.samples.append(os.getloadavg()[0])
            self._stop.wait(self.every)

    def stop(self) -> str:
        self._stop.set()
        self._thread.join()
        for proc in self._procs:
            proc.kill()
            proc.wait()
        xs = self.samples or [os.getloadavg()[0]]
        return f"1-min load during the run: min {min(xs):.2f}, median {statistics.median(xs):.2f}, max {max(xs):.2f}"


def p95(xs: list[float]) -> float:
    """95th percentile by linear interpolation between order statistics (max for fewer than ~20 samples)."""
    xs = sorted(xs)
    pos = 0.95 * (len(xs) - 1)
    lo = int(pos)
    return xs[lo] + (xs[min(lo + 1, len(xs) - 1)] - xs[lo]) * (pos - lo)


def measure_sliders(page, lab, target: str, repeats: int, warmup: int, sweep: bool = False,
                    gap_ms: int = 150) -> list[dict]:
    """Run ``target`` in the lab; for every slider, its label, frame size and keypress→frame times (ms).

    Presses alternate direction (revisiting two states), or with ``sweep`` go one way to states not
    shown before (turning back at the end), ``gap_ms`` after each new frame.
    """
    run_s = open_and_run_all(page, lab, target, timeout_ms=180_000)
    page.wait_for_function("() => [...document.querySelectorAll('.jp-Notebook .sv-live')].every("
                           "v => v.classList.contains('sv-ready'))", timeout=30_000)
    out = []
    for i in range(page.locator(RANGE).count()):
        page.locator(RANGE).nth(i).scroll_into_view_if_needed()
        now = page.evaluate(SLIDER_STATE, [i])
        keys = ["ArrowLeft", "ArrowRight"] if now["value"] >= now["max"] else ["ArrowRight", "ArrowLeft"]
        times = []
        for n in range(warmup + repeats):
            key = keys[0] if sweep else keys[n % 2]
            at = page.evaluate(SLIDER_STATE, [i])["value"]
            if sweep and n and at in (0, now["max"]):
                keys.reverse()  # at an end: sweep back (those states were shown already)
                key = keys[0]
            shown = press_and_time(page, i, key)
            if n >= warmup and shown is not None:
                times.append(shown)
            page.wait_for_timeout(gap_ms)  # a person does not press faster
        out.append({"target": target, "slider": now["label"].strip(), "size": tuple(now["natural"]),
                    "ms": [t["ms"] for t in times], "shown": times, "run_all_s": run_s})
    lab.shutdown_kernels()
    return out


def measure_first_touch(page, lab, target: str, wait_ms: int, jumps: int, gap_ms: int) -> list[dict]:
    """Run ``target``; ``wait_ms`` after Run All, one press on each slider; then on each slider the keyboard
    jumps (End, Home, PageUp x9) and ``jumps`` far clicks on its track."""
    run_s = open_and_run_all(page, lab, target, timeout_ms=180_000)
    page.wait_for_function("() => [...document.querySelectorAll('.jp-Notebook .sv-live')].every("
                           "v => v.classList.contains('sv-ready'))", timeout=30_000)
    page.wait_for_timeout(wait_ms)
    out = []
    for i in range(page.locator(RANGE).count()):
        page.locator(RANGE).nth(i).scroll_into_view_if_needed()
        now = page.evaluate(SLIDER_STATE, [i])
        first = press_and_time(page, i, "ArrowLeft" if now["value"] >= now["max"] else "ArrowRight")
        out.append({"target": target, "slider": now["label"].strip(), "first": first, "keys": [], "clicks": [],
                    "run_all_s": run_s})
        page.wait_for_timeout(gap_ms)
    for i, m in enumerate(out):
        page.locator(RANGE).nth(i).scroll_into_view_if_needed()
        for key in JUMP_KEYS:
            shown = press_and_time(page, i, key)
            if shown is not None:
                m["keys"].append({"key": key, **shown})
            page.wait_for_timeout(gap_ms)
        for k in range(jumps):
            now = page.evaluate(SLIDER_STATE, [i])
            f = JUMP_FRACTIONS[k % len(JUMP_FRACTIONS)]
            if now["max"] and abs(now["value"] / now["max"] - f) < 0.3:
                f = 1 - f  # the handle is already near there: click the other end
            shown = click_and_time(page, i, f)
            if shown is not None:
                m["clicks"].append({"key": f"click {f:.2f}", **shown})
            page.wait_for_timeout(gap_ms)
    lab.shutdown_kernels()
    return out


def summary(label: str, shown: list[dict], goal: str, met) -> dict | None:
    """Print one line (n, median, p95, max, how many held) for ``shown`` presses; return its JSON row."""
    xs = [s["ms"] for s in shown]
    if not xs:
        return None
    held = sum(s["how"] == "held" for s in shown)
    ok = met(xs)
    print(f"{label}: n={len(xs)}, median {statistics.median(xs):.0f} ms, p95 {p95(xs):.0f} ms, max {max(xs):.0f} ms, "
          f"{held} held / {len(xs) - held} from the kernel -> {'met' if ok else 'NOT met'} ({goal})")
    return {"benchmark": "browser", "figure": label, "median_ms": round(statistics.median(xs), 1),
            "min_ms": round(min(xs), 1), "p95_ms": round(p95(xs), 1), "max_ms": round(max(xs), 1), "floor": "-",
            "ratio": None, "goal": goal, "met": ok, "n": len(xs), "held": held}


def first_touch_report(measured: list[dict], wait_ms: int, store: str | None) -> list[dict]:
    """Print per-slider first presses and jumps; return the summary rows (all sliders)."""
    print(f"{'slider':44} {'first':>11}  keyboard jumps (ms; * = from the kernel)  | clicks")
    star = lambda s: f"{s['ms']:.0f}{'*' if s['how'] == 'kernel' else ''}"  # noqa: E731
    for m in measured:
        name = f"{Path(m['target']).stem}: {m['slider']}"
        first = star(m["first"]) if m["first"] else "-"
        print(f"{name[:44]:44} {first:>11}  {' '.join(map(star, m['keys']))}  | {' '.join(map(star, m['clicks']))}")
    firsts = [m["first"] for m in measured if m["first"]]
    keys = [s for m in measured for s in m["keys"]]
    clicks = [s for m in measured for s in m["clicks"]]
    gap = [abs(s["ms"] - s["page_ms"]) for s in firsts + keys + clicks]
    if gap:
        print(f"data-shown-ms vs the page's own timer (img src changed, decoded, one frame): |difference| "
              f"median {statistics.median(gap):.1f} ms, max {max(gap):.1f} ms over {len(gap)} presses")
    if store:
        goal = f"med<={STORE_MEDIAN:.0f}ms p95<={STORE_P95:.0f}ms"
        met = lambda xs: statistics.median(xs) <= STORE_MEDIAN and p95(xs) <= STORE_P95  # noqa: E731
        parts = [(f"first press on each slider, {wait_ms} ms after Run All", firsts, goal, met),
                 ("keyboard jumps (End, Home, PageUp x9)", keys, goal, met),
                 ("clicks far along the track", clicks, goal, met),
                 ("every press (first, keys, clicks)", firsts + keys + clicks, goal, met)]
    else:
        first_goal = f"med<={FIRST_MEDIAN:.0f}ms p95<={FIRST_P95:.0f}ms"
        first_met = lambda xs: statistics.median(xs) <= FIRST_MEDIAN and p95(xs) <= FIRST_P95  # noqa: E731
        jump_goal, jump_met = f"p95<={JUMP_P95:.0f}ms", lambda xs: p95(xs) <= JUMP_P95
        parts = [(f"first press on each slider, {wait_ms} ms after Run All", firsts, first_goal, first_met),
                 ("keyboard jumps (End, Home, PageUp x9)", keys, jump_goal, jump_met),
                 ("clicks far along the track", clicks, jump_goal, jump_met),
                 ("every jump (keys and clicks)", keys + clicks, jump_goal, jump_met)]
    rows = [summary(*part) for part in parts]
    return [r for r in rows if r]


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


def run_targets(args, targets: list[str], chromium: str, sync_playwright):
    """One lab, one browser: the first-touch measurements, or (slider measurements, floors by frame size)."""
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
                return [m for target in targets
                        for m in measure_first_touch(page, lab, target, args.wait_ms, args.jumps, args.gap_ms)]
            measured = []
            for target in targets:
                measured += measure_sliders(page, lab, target, args.repeats, args.warmup, args.sweep, args.gap_ms)
            write_floor(lab.root, list({m["size"] for m in measured}) or [(720, 420)])
            floors = {m["size"]: m for m in measure_sliders(page, lab, FLOOR, args.repeats, args.warmup,
                                                            args.sweep, args.gap_ms)}
        finally:
            browser.close()
            lab.stop()
    return measured, floors


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
    parser.add_argument("--busy", type=int, default=0, help="make load: N spinning processes beside the run")
    parser.add_argument("--kernel-startup", type=Path, help="a .py file every kernel runs first (to try a change, "
                        "e.g. benchmarks/proposals/*.py, without editing the repository)")
    args, _ = parser.parse_known_args(argv)
    if browser_missing("browser", args.json):
        return 0
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")

    lessons = [Path(p) for p in args.notebooks] or sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    targets = [f"{'fixtures' if 'fixtures' in p.parts else 'notebooks'}/{p.name}" for p in lessons]
    targets = targets or ["fixtures/slider_demo.ipynb"]
    store = store_in_use()
    print(f"frame store: {store or 'none (ATTNLIB_FRAMES unset or off)'}; "
          f"{args.busy} spinning processes started beside the run")
    load = LoadSampler(args.busy)
    if args.first_press:
        print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; first touch: one press "
              f"per slider {args.wait_ms} ms after Run All, then {' '.join(JUMP_KEYS)} and {args.jumps} far clicks per "
              f"slider, {args.gap_ms} ms apart")
    else:
        print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
              f"{args.repeats} timed presses per slider after {args.warmup} untimed, "
              f"{'sweeping one way' if args.sweep else 'alternating'}, {args.gap_ms} ms apart")
    try:
        measured_all = run_targets(args, targets, chromium, sync_playwright)
    finally:
        load_line = load.stop()
    if args.first_press:
        touched = measured_all
    else:
        measured, floors = measured_all
    if args.first_press:
        print(f"load average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(load_line)
        rows = first_touch_report(touched, args.wait_ms, store)
        if args.json:
            print(json.dumps(rows))
        return 0
    print(f"load average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(load_line)
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

#!/usr/bin/env python3
"""A cold slider state in the kernel: time to draw and render a frame vs rebuilding the same figure from its data.

For every lesson, runs the notebook in a fresh kernel, finds every slider view
(attnlib.widgets.SliderView), takes each slider to 5 values across its grid (the other sliders where the
view stands) and times what the view does for a frame the front end lacks, without a frame
store: ``SliderView.figure`` (draw at the frozen reference layout) + its 256-colour PNG, the view's kept
frames cleared first.
The floor, in the same kernel and the same rounds, rebuilds the figure that callback produced from the
data its artists already hold (``pickle.loads`` of the figure: no maths, no plotting calls) and renders
it to PNG once, as SliderView.render does. Goal: callback / floor <= 1.2, i.e. nothing but drawing
per move. A larger ratio is time spent computing (or in slow artist construction) inside ``draw``.

    python benchmarks/bench_callbacks.py [--json] [--repeats 3] [notebooks/NN-*.ipynb ...]

With no lessons in notebooks/ it measures tests/fixtures/slider_demo.ipynb.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
GOAL = 1.2

PROBE = r"""
import gc, io, pickle, statistics, time, warnings
import matplotlib.pyplot as plt
from attnlib.widgets import SliderView, _png

def _bench_values(s):  # 5 values across the slider's grid
    return list(dict.fromkeys(s.values[round(f * (len(s.values) - 1))] for f in (0, 0.25, 0.5, 0.75, 1)))

def _bench_views(repeats):
    rows = []
    views = [o for o in gc.get_objects() if isinstance(o, SliderView)]
    for vi, view in enumerate(views):
        view.store = None  # every state drawn (no frame store), as after a learner edits the view's code
        for name, s in view.sliders.items():
            cb, floor, note = [], [], ""
            for _ in range(repeats):
                for v in _bench_values(s):
                    values = {**view.values(), name: v}
                    view._frames.clear()  # a cold state: the view keeps the frames it rendered
                    # what the view does for a frame it lacks (SliderView.render without a store)
                    t0 = time.perf_counter()
                    fig = view.figure(values)
                    _png(fig)
                    plt.close(fig)
                    cb.append(time.perf_counter() - t0)
                    try:
                        blob = pickle.dumps(fig)
                    except Exception as exc:  # e.g. a lambda formatter: fall back to rendering only
                        blob, note = None, f"figure not picklable ({type(exc).__name__}): floor = render only"
                    t0 = time.perf_counter()
                    copy = pickle.loads(blob) if blob is not None else fig
                    _png(copy)  # the PNG SliderView.render makes (one render pass, 256 colours)
                    floor.append(time.perf_counter() - t0)
                    plt.close(copy)
            w, h = fig.get_size_inches()
            rows.append({"view": vi, "slider": s.label or name, "callback_ms": 1e3 * statistics.median(cb),
                         "min_ms": 1e3 * min(cb), "floor_ms": 1e3 * statistics.median(floor),
                         "figsize": f"{w:g}x{h:g} in", "note": note})
    return rows

with warnings.catch_warnings():
    warnings.simplefilter("error")
    print("BENCH" + json.dumps(_bench_views(REPEATS)))
"""


def run_probe(path: Path, probe: str, marker: str, timeout: int) -> list:
    """Execute ``path`` in a fresh kernel, then ``probe`` (which prints ``marker`` and JSON); return that JSON.

    The kernel runs with ``ATTNLIB_FRAMES=off``: every frame is drawn (no frame store)."""
    os.environ["ATTNLIB_FRAMES"] = "off"  # the kernel inherits it
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import json\n" + probe))
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    for out in nb.cells[-1].outputs:
        text = out.get("text", "")
        if marker in text:
            return json.loads(text.split(marker, 1)[1])
    raise RuntimeError(f"{path.name}: probe printed nothing: {nb.cells[-1].outputs}")


def measure(path: Path, repeats: int) -> list[dict]:
    """Execute ``path`` in a fresh kernel, then the probe; return its rows (one per slider)."""
    return run_probe(path, PROBE.replace("REPEATS", str(repeats)), "BENCH", timeout=600)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="lesson notebooks (default: notebooks/NN-*.ipynb)")
    parser.add_argument("--json", action="store_true", help="also print the rows as one JSON line at the end")
    parser.add_argument("--repeats", type=int, default=3, help="sweeps over each slider's 5 values")
    args, _ = parser.parse_known_args(argv)
    paths = [Path(a) for a in args.notebooks] or sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    paths = paths or [ROOT / "tests" / "fixtures" / "slider_demo.ipynb"]
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'lesson':28} {'slider':22} {'figure':>11} {'callback ms':>11} {'floor ms':>9} {'ratio':>6}")
    rows = []
    for path in paths:
        for r in measure(path, args.repeats):
            ratio = r["callback_ms"] / r["floor_ms"]
            print(f"{path.stem[:28]:28} {r['slider'][:22]:22} {r['figsize']:>11} {r['callback_ms']:11.1f} "
                  f"{r['floor_ms']:9.1f} {ratio:6.2f} {r['note']}")
            rows.append({"benchmark": "callbacks", "figure": f"{path.stem}: {r['slider']}",
                         "median_ms": round(r["callback_ms"], 1), "min_ms": round(r["min_ms"], 1),
                         "floor": f"rebuild+render ({r['floor_ms']:.0f} ms)", "ratio": ratio,
                         "goal": f"<= {GOAL}x", "met": ratio <= GOAL})
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Slider callbacks in the kernel: time per slider move vs re-rendering the same figure.

For every lesson, runs the notebook in a fresh kernel, finds every slider view
(attnlib.widgets.SliderView), moves each slider across its range and times the full
callback (draw from precomputed data + display). The floor, measured in the same kernel,
is re-rendering the figure the callback produced to PNG (what the inline backend does)
without building it. Goal: callback / floor <= 1.2 — anything more is
work done per move (figure construction, or worse, recomputation).

    python benchmarks/bench_callbacks.py [notebooks/NN-*.ipynb ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent

PROBE = r"""
import gc, io, json, statistics, time
import matplotlib.pyplot as plt
from attnlib.widgets import SliderView
views = [o for o in gc.get_objects() if isinstance(o, SliderView)]
rows = []
for vi, view in enumerate(views):
    for name, s in view.sliders.items():
        opts = list(getattr(s, "options", [])) or None
        values = opts if opts else [s.min + (s.max - s.min) * f for f in (0, 0.25, 0.5, 0.75, 1)]
        if not opts and type(s.value) is int:
            values = sorted({int(round(v)) for v in values})
        cb, floor = [], []
        for rep in range(3):
            for v in values:
                s.unobserve(view.update, names="value"); s.value = v; s.observe(view.update, names="value")
                t0 = time.perf_counter(); view.update(); t1 = time.perf_counter()
                cb.append(t1 - t0)
                fig = view.last_figure
                t0 = time.perf_counter()
                fig.savefig(io.BytesIO(), format="png", bbox_inches="tight")  # what the inline backend does
                floor.append(time.perf_counter() - t0)
        rows.append({"view": vi, "slider": name, "callback_ms": 1e3 * statistics.median(cb),
                     "floor_ms": 1e3 * statistics.median(floor)})
print("BENCH" + json.dumps(rows))
"""


def measure(path: Path) -> list[dict]:
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    for out in nb.cells[-1].outputs:
        text = out.get("text", "")
        if "BENCH" in text:
            return json.loads(text.split("BENCH", 1)[1])
    raise RuntimeError(f"{path.name}: probe printed nothing: {nb.cells[-1].outputs}")


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    print(f"{'lesson':32} {'slider':22} {'callback ms':>11} {'floor ms':>9} {'ratio':>6}")
    worst = 0.0
    for path in paths:
        for r in measure(path):
            ratio = r["callback_ms"] / r["floor_ms"]
            worst = max(worst, ratio)
            print(f"{path.stem:32} {r['slider']:22} {r['callback_ms']:11.1f} {r['floor_ms']:9.1f} {ratio:6.2f}")
    print(f"worst callback/floor ratio: {worst:.2f} (goal <= 1.2)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

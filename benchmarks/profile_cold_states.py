#!/usr/bin/env python3
"""Where a cold slider state's time goes, per view: draw / Agg draw / quantise+encode.

Not a bench_*.py (run_all.py does not run it): a profiling aid for cold renders (issue 14's jumps; with the
frame store of issue 24 they are what a learner pays after editing a view's code). For every lesson,
runs the notebook in a fresh kernel (nbclient), then for every SliderView renders each slider's far
states (its two ends and its quarter points, the other sliders at their reference values) cold, as
``SliderView.render`` does, timing each step:

- ``draw``   : ``view.figure(values)`` (a new Figure from ``draw``, put at the frozen reference layout),
- ``agg``    : the one Agg pass,
- ``encode`` : quantise to 256 colours + PNG at zlib level 6,
- ``total``  : ``view.render(values)`` on an empty cache and without a frame store (the kernel runs with
               ``ATTNLIB_FRAMES=off``), timed separately: what the kernel spends on a frame the front
               end asked for and lacks.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/profile_cold_states.py [--repeats 3] [notebooks/NN-*.ipynb ...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from bench_callbacks import run_probe  # benchmarks/ is this script's folder, so on sys.path

ROOT = Path(__file__).resolve().parent.parent

PROBE = r"""
import gc, statistics, time, warnings
import matplotlib.pyplot as plt
from attnlib import widgets as _w
from attnlib.widgets import SliderView
from matplotlib.backends.backend_agg import FigureCanvasAgg

def _far_values(s):  # the grid's two ends and its quarter points
    return list(dict.fromkeys(s.values[round(f * (len(s.values) - 1))] for f in (0, 0.25, 0.75, 1)))

def _steps(view, values):
    t = {}
    t0 = time.perf_counter()
    fig = view.figure(values)
    t["draw"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    t["agg"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    _w._encode(canvas)
    t["encode"] = time.perf_counter() - t0
    plt.close(fig)
    return t

def _profile(repeats):
    rows = []
    views = [o for o in gc.get_objects() if isinstance(o, SliderView)]
    for vi, view in enumerate(views):
        view.store = None  # every state drawn, as without a frame store
        view._frames.clear()
        view.render(view.values())  # measures the reference layout
        for name, s in view.sliders.items():
            for v in _far_values(s):
                values = {**view.values(), name: v}
                acc = {"draw": [], "agg": [], "encode": [], "total": []}
                for _ in range(repeats):
                    t = _steps(view, values)
                    for k in t:
                        acc[k].append(t[k])
                    view._frames.clear()
                    t0 = time.perf_counter(); view.render(values); acc["total"].append(time.perf_counter() - t0)
                    view._frames.clear()
                rows.append({"view": vi, "slider": s.label or name, "value": repr(v),
                             **{k + "_ms": 1e3 * statistics.median(x) for k, x in acc.items()},
                             "max_total_ms": 1e3 * max(acc["total"])})
    return rows

with warnings.catch_warnings():
    warnings.simplefilter("error")
    print("PROFILE" + json.dumps(_profile(REPEATS)))
"""


def measure(path: Path, repeats: int) -> list[dict]:
    """Execute ``path`` in a fresh kernel, then the probe; return its rows (one per far state)."""
    return run_probe(path, PROBE.replace("REPEATS", str(repeats)), "PROFILE", timeout=900)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="lesson notebooks (default: the lessons with slider views)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    paths = [Path(a) for a in args.notebooks] or [
        p for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb")) if "SliderView" in p.read_text()]
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}  "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '-')}")
    print(f"{'lesson':24} {'slider':20} {'value':>7} {'draw':>6} {'agg':>6} "
          f"{'encode':>6} {'total':>6} {'max':>6}  (ms, medians of {args.repeats})")
    rows = []
    for path in paths:
        for r in measure(path, args.repeats):
            print(f"{path.stem[:24]:24} {r['slider'][:20]:20} {r['value'][:7]:>7} "
                  f"{r['draw_ms']:6.0f} {r['agg_ms']:6.0f} {r['encode_ms']:6.0f} "
                  f"{r['total_ms']:6.0f} {r['max_total_ms']:6.0f}", flush=True)
            rows.append({"lesson": path.stem, **r})
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

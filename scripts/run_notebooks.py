#!/usr/bin/env python3
"""Execute lessons top to bottom, in place, so the committed outputs are what nbval checks.

    python scripts/run_notebooks.py                       # every lesson
    python scripts/run_notebooks.py notebooks/03-*.ipynb  # some

Cells run with the current environment's python3 kernel from the notebooks/ folder.
Widget state is dropped from the saved file (the static figures carry the lesson without a kernel).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def execute(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,  # store_widget_state=False trips a KeyError in nbclient 0.11 output widgets
    ).execute()
    elapsed = time.perf_counter() - start
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    return elapsed


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    for path in paths:
        print(f"{path.name}: {execute(path):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

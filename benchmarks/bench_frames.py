#!/usr/bin/env python3
"""First press with and without a filled frame store (attnlib.frames), measured in the kernel.

    python benchmarks/bench_frames.py --store build/frames              # every lesson with sliders
    python benchmarks/bench_frames.py --store DIR notebooks/03-*.ipynb  # some lessons
    python benchmarks/bench_frames.py --store DIR --fill                # fill DIR first (scripts/fill_frames.py)
    python benchmarks/bench_frames.py --json                            # no --store: fills a temporary one

Each lesson runs twice in a fresh kernel (nbclient, as scripts/fill_frames.py runs it): once with an empty
store (a new folder: what a learner pays after editing the code or data behind a view, or without a
store), once with the filled store. After its last cell, a second client on the same kernel presses each view
as ``attnlib/frameslider.js`` does for a frame it lacks: the comm message ``{"type": "want", "now": [state],
"ahead": []}`` (ipywidgets' "custom" method), timed until the kernel's iopub carries that state's
``{"type": "frame"}`` with the PNG. The presses come from outside any cell, as a browser's do (the kernel's main
loop draws between cells). States the view has not rendered yet (a first press: no PNG kept in the view),
up to --states per view in a seeded random order, the same states in both runs. Time is wall time over the
kernel's ZMQ sockets (no browser, no websocket).
Prints per lesson the median and p95 in ms of each run, how many presses the filled store served (a
frame it served takes about a millisecond; one it missed is drawn), and the store's size on disk.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
LESSON = re.compile(r"^\d\d-[a-z0-9-]+\.ipynb$")
MARK = "ATTNLIB-BENCH "

# Runs after the lesson's last cell: which states to press on which view (by comm id), not yet rendered there.
PICK_CELL = """
import json as _json, random as _random
from ipywidgets.widgets.widget import _instances as _all_widgets
from attnlib.widgets import SliderView as _SliderView, _key as _state_key
_picked = []
for _i, _view in enumerate([w for w in list(_all_widgets.values()) if isinstance(w, _SliderView)]):
    _unseen = [s for s in _view.states() if _state_key(s) not in _view._frames]
    _random.Random(_i).shuffle(_unseen)
    for _s in _unseen[:STATES]:
        _key = _view._frame_key(_s)
        _hit = _key is not None and _view.store is not None and _view.store.get(_key) is not None
        _picked.append([_view.comm.comm_id, _view._index(_s), bool(_hit)])
print(MARK + _json.dumps(_picked))
"""


def run_one(path: Path, store: Path, states: int) -> dict:
    """Run ``path`` in a fresh kernel whose views use ``store``; then press, from outside any cell (as the
    front end does; the kernel's main loop draws between cells), states its views have not rendered yet."""
    import nbformat
    from jupyter_client import BlockingKernelClient
    from nbclient import NotebookClient

    sys.path.insert(0, str(ROOT / "scripts"))
    from build_site import poll_in_slices

    os.environ["ATTNLIB_FRAMES"] = str(store)
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PICK_CELL.replace("STATES", str(states)).replace("MARK", repr(MARK))))
    client = NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}},
                            record_timing=False)
    times, served = [], 0
    with client.setup_kernel():
        poll_in_slices(client.kc)  # the site build's guard against a missed zmq wake-up (a cell that looks hung)
        for index, code in enumerate(nb.cells):
            client.execute_cell(code, index)
        text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("output_type") == "stream")
        picked = json.loads(next(ln for ln in text.splitlines() if ln.startswith(MARK))[len(MARK):])
        kc = BlockingKernelClient()  # a second client on the same kernel: the comm messages a browser sends
        kc.load_connection_info(client.km.get_connection_info())
        kc.start_channels()
        try:
            time.sleep(0.5)  # let its iopub subscription settle
            for comm_id, state, hit in picked:
                want = {"type": "want", "now": [state], "ahead": []}  # a press, as frameslider.js asks
                msg = kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": want}})
                t0 = time.perf_counter()
                kc.shell_channel.send(msg)
                deadline = t0 + 120
                while True:
                    reply = kc.get_iopub_msg(timeout=max(0.1, deadline - time.perf_counter()))
                    content = reply["content"]
                    got = content.get("data", {}).get("content", {}) if reply["msg_type"] == "comm_msg" else {}
                    if content.get("comm_id") == comm_id and got.get("state") == state:
                        break
                if got.get("type") != "frame" or len(reply.get("buffers", [])) != 1:
                    raise RuntimeError(f"state {state}: got {got!r} with {len(reply.get('buffers', []))} buffers")
                times.append((time.perf_counter() - t0) * 1e3)
                served += hit
        finally:
            kc.stop_channels()
    return {"ms": times, "served": served}


def run_apart(path: Path, store: Path, states: int) -> dict:
    done = subprocess.run([sys.executable, __file__, "--one", str(path), str(store), str(states)],
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{path.name}: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def stats(ms: list) -> str:
    if not ms:
        return "     -        -"
    return f"{np.median(ms):7.1f}  {np.percentile(ms, 95):7.1f}"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--one"]:
        print(json.dumps(run_one(Path(argv[1]), Path(argv[2]), int(argv[3]))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/NN-*.ipynb")
    parser.add_argument("--store", type=Path, default=None,
                        help="the filled frame store (folder); default: a temporary one, filled first")
    parser.add_argument("--fill", action="store_true", help="fill --store first (scripts/fill_frames.py)")
    parser.add_argument("--states", type=int, default=12, help="first presses timed per view (default 12)")
    parser.add_argument("--json", action="store_true", help="end with a JSON line of rows (benchmarks/run_all.py)")
    args = parser.parse_args(argv)
    if args.store is None:
        with tempfile.TemporaryDirectory(prefix="frames-bench-") as tmp:
            return main([*argv, "--store", tmp, "--fill"])
    paths = args.notebooks or sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if LESSON.match(p.name))
    if args.fill:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, str(ROOT / "scripts" / "fill_frames.py"), "--store", str(args.store),
                        *map(str, paths)], check=True)
        print(f"filled in {time.perf_counter() - t0:.0f} s")
    from attnlib.frames import FrameStore

    store = FrameStore(args.store)
    if not store.keys():
        raise SystemExit(f"--store: {args.store} holds no frames (fill it: scripts/fill_frames.py or --fill)")
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'lesson':28} {'presses':>7}  {'empty store: median p95 (ms)':>29}  "
          f"{'filled: median p95 (ms)':>24}  served")
    all_empty, all_filled = [], []
    for path in paths:
        with tempfile.TemporaryDirectory(prefix="frames-empty-") as empty:
            cold = run_apart(path, Path(empty), args.states)
        if not cold["ms"]:
            continue  # no slider views
        warm = run_apart(path, store.root, args.states)
        all_empty += cold["ms"]
        all_filled += warm["ms"]
        print(f"{path.name:28} {len(warm['ms']):7d}  {stats(cold['ms']):>29}  {stats(warm['ms']):>24}  "
              f"{warm['served']}/{len(warm['ms'])}", flush=True)
    print(f"{'all':28} {len(all_filled):7d}  {stats(all_empty):>29}  {stats(all_filled):>24}")
    du = subprocess.run(["du", "-sk", str(store.root)], capture_output=True, text=True).stdout.split()[0]
    print(f"store: {len(store.keys())} frames, {store.size_bytes() / 1e6:.1f} MB of PNG, "
          f"{int(du) / 1024:.1f} MiB on disk")
    if args.json:
        def row(figure, ms, **extra):
            return {"benchmark": "frames", "figure": figure, "median_ms": float(np.median(ms)),
                    "min_ms": float(np.min(ms)), "p95_ms": float(np.percentile(ms, 95)), **extra}

        rows = [row("first press in the kernel, empty store", all_empty),
                row("first press in the kernel, filled store", all_filled, floor="empty store",
                    ratio=float(np.median(all_filled) / np.median(all_empty))),
                {"benchmark": "frames", "figure": "frame store on disk", "value": round(int(du) / 1024, 1),
                 "unit": "MiB"}]
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

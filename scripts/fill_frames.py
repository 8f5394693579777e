#!/usr/bin/env python3
"""Fill a frame store: every state of every slider view of the lessons, rendered once into a folder.

    python scripts/fill_frames.py --store build/frames               # every notebooks/NN-*.ipynb
    python scripts/fill_frames.py --store DIR notebooks/03-*.ipynb   # some lessons
    ATTNLIB_FRAMES=DIR python scripts/fill_frames.py                 # the store the kernels will read

Each lesson runs in a fresh kernel (nbclient, the ``python3`` kernel, as a learner's JupyterLab runs it)
with ATTNLIB_FRAMES set to the store, so its slider views look frames up and put what they draw there
(``attnlib.frames``); after its last cell, one more cell renders every state of every view. A kernel
that later runs the same lesson unchanged finds every frame there (same code, same data, same key);
an edited cell gives other keys and is drawn afresh. Frames are never read from here for a state whose
key differs, so a store can only be missing frames, never wrong ones. Binder's postBuild runs this.
``python scripts/build_site.py --frames DIR`` fills a store too, as it builds the site.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LESSON = re.compile(r"^\d\d-[a-z0-9-]+\.ipynb$")
MARK = "ATTNLIB-FILL "

# Runs in the lesson's kernel after its last cell: every state of every slider view, rendered through the
# view (so the store gets exactly the frames the live view would put there). Prints one JSON line.
FILL_CELL = """
import json as _json, time as _time
from ipywidgets.widgets.widget import _instances as _all_widgets
from attnlib.widgets import SliderView as _SliderView
_found = {"views": 0, "unkeyed": 0, "states": 0, "seconds": 0.0}
_t0 = _time.perf_counter()
for _view in [w for w in list(_all_widgets.values()) if isinstance(w, _SliderView)]:
    _found["views"] += 1
    if _view.store is None or _view._frame_key(_view.values()) is None:
        _found["unkeyed"] += 1
        continue
    for _state in _view.states():
        _view.render(_state)
        _found["states"] += 1
_found["seconds"] = round(_time.perf_counter() - _t0, 2)
print(MARK + _json.dumps(_found))
""".replace("MARK", repr(MARK))


def fill_one(path: Path, store: Path, timeout: int = 900) -> dict:
    """Run ``path`` in a fresh kernel whose slider views use ``store``, then render all their states."""
    import nbformat
    from build_site import poll_in_slices  # scripts/ is on sys.path: this file is run as a script
    from nbclient import NotebookClient

    os.environ["ATTNLIB_FRAMES"] = str(store)  # the kernel inherits it: every view's default store
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(FILL_CELL))
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}, record_timing=False)
    start = time.perf_counter()
    with client.setup_kernel():
        poll_in_slices(client.kc)  # the site build's guard against a missed zmq wake-up (a cell that looks hung)
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("output_type") == "stream")
    line = next(ln for ln in text.splitlines() if ln.startswith(MARK))
    return {**json.loads(line[len(MARK):]), "lesson_seconds": round(time.perf_counter() - start, 1)}


def fill_apart(path: Path, store: Path, attempts: int = 2) -> dict:
    """``fill_one`` in a child process (one event loop and kernel client per process); a kernel that failed to
    start (a port taken between jupyter_client choosing it and the kernel binding it, seen on a busy machine)
    is started again once. Frames already put stay: the second run finds them."""
    for attempt in range(1, attempts + 1):
        done = subprocess.run([sys.executable, __file__, "--one", str(path), str(store)], capture_output=True,
                              text=True)
        if done.returncode == 0:
            return json.loads(done.stdout.strip().splitlines()[-1])
        if attempt < attempts:
            print(f"  {path.name}: failed ({done.stderr.strip().splitlines()[-1][:160]}); trying again", flush=True)
    raise SystemExit(f"{path.name}: filling its frames failed:\n{done.stderr[-3000:]}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--one"]:
        print(json.dumps(fill_one(Path(argv[1]), Path(argv[2]))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/NN-*.ipynb")
    parser.add_argument("--store", type=Path, default=None,
                        help="the store's folder (default: env ATTNLIB_FRAMES); created if missing")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="lessons at once (default 2)")
    args = parser.parse_args(argv)
    store = args.store or (Path(os.environ["ATTNLIB_FRAMES"]) if os.environ.get("ATTNLIB_FRAMES", "off") != "off"
                           else None)
    if store is None:
        parser.error("--store: give the store's folder (or set ATTNLIB_FRAMES)")
    if store.exists() and not store.is_dir():
        parser.error(f"--store: {store} is not a folder")
    store = store.resolve()
    store.mkdir(parents=True, exist_ok=True)
    paths = args.notebooks or sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if LESSON.match(p.name))
    if not paths:
        print("no lessons found in notebooks/ (expected notebooks/NN-name.ipynb)")
        return 1
    from attnlib.frames import FrameStore

    before = len(FrameStore(store).keys())
    start = time.perf_counter()
    print(f"Filling the frame store {store} from {len(paths)} lesson(s), {max(1, args.jobs)} at a time", flush=True)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for path, found in zip(paths, pool.map(lambda p: fill_apart(p, store), paths), strict=True):
            print(f"  {path.name}: {found['views']} slider view(s), {found['states']} states rendered or found "
                  f"in {found['seconds']} s" + (f", {found['unkeyed']} view(s) cannot be keyed" if found["unkeyed"]
                                                else "") + f" (lesson {found['lesson_seconds']} s)", flush=True)
    after = FrameStore(store)
    print(f"frame store: {len(after.keys())} frames ({len(after.keys()) - before} new), "
          f"{after.size_bytes() / 1e6:.1f} MB, in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

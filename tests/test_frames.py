"""The frame store (attnlib.frames): what keys a slider frame, and that a stale frame is never shown.

A frame's key must change with everything its pixels depend on (the data a draw closes over, the
globals it reads, its code, attnlib's source, the reference state the layout is frozen at) and must
stay the same for an identical rebuild, also in another process. The store gives back exactly the
bytes a fresh render makes.
"""

import json
import subprocess
import sys
import threading

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attnlib import frames, plots, widgets  # noqa: E402

# A draw as a notebook cell would define it: its module is __main__, so the globals it reads are walked.
CELL = '''
import numpy as np
from attnlib import plots, widgets

TITLE = "{title}"
HELPER_SCALE = {scale}


def weights(data, n):
    return data[:n] * HELPER_SCALE / (data[:n] * HELPER_SCALE).sum()


def make(data, store=None, reference=None):
    def draw(n):
        return plots.probability_bars(weights(data, n), title=f"{{TITLE}}: n = {{n}}")

    return widgets.slider_view(draw, store=store, reference=reference, n=widgets.int_slider("keys", 2, 5, 3))
'''


def cell(title="weights", scale=1.0, blank_lines=0):
    """The ``make`` of a fresh run of CELL (its own globals, as a notebook kernel has)."""
    namespace = {"__name__": "__main__"}
    exec(compile("\n" * blank_lines + CELL.format(title=title, scale=scale), "<cell>", "exec"), namespace)
    return namespace


def data(seed=0):
    return np.random.default_rng(seed).uniform(0.5, 2.0, size=8)


def key(view, n=4):
    return frames.frame_key(view, {"n": n})


def test_identical_rebuilds_give_the_same_key_and_line_numbers_do_not_count():
    first = key(cell()["make"](data()))
    assert len(first) == 64 and int(first, 16) >= 0
    assert key(cell()["make"](data())) == first, "a rebuild from equal data and code must hit the store"
    assert key(cell(blank_lines=5)["make"](data())) == first, "a cell moved down computes the same"
    assert key(cell()["make"](data()), n=5) != first, "another state, another key"


def test_key_changes_when_one_value_of_the_closed_over_data_changes():
    values = data()
    before = key(cell()["make"](values))
    changed = values.copy()
    changed[2] += 1e-12
    assert key(cell()["make"](changed)) != before


def test_key_changes_when_a_global_the_draw_reads_changes():
    assert key(cell(title="weights")["make"](data())) != key(cell(title="weight")["make"](data()))
    # read two calls deep: draw -> weights -> HELPER_SCALE
    assert key(cell(scale=1.0)["make"](data())) != key(cell(scale=2.0)["make"](data()))


def test_key_changes_when_the_draws_code_changes():
    ns = cell()
    base = key(ns["make"](data()))
    other = CELL.replace('f"{{TITLE}}: n = {{n}}"', 'f"{{TITLE}}: {{n}} keys"')
    assert other != CELL
    namespace = {"__name__": "__main__"}
    exec(compile(other.format(title="weights", scale=1.0), "<cell>", "exec"), namespace)
    assert key(namespace["make"](data())) != base
    # an operator alone (the bytecode changes, no constant or name does)
    minus = CELL.replace("data[:n] * HELPER_SCALE / (", "data[:n] - HELPER_SCALE / (")
    assert minus != CELL
    namespace = {"__name__": "__main__"}
    exec(compile(minus.format(title="weights", scale=1.0), "<cell>", "exec"), namespace)
    assert key(namespace["make"](data())) != base


def test_key_changes_with_attnlibs_source(monkeypatch):
    view = cell()["make"](data())
    before = key(view)
    monkeypatch.setattr(frames, "attnlib_source_hash", lambda: "0" * 64)
    assert key(view) != before


def test_key_changes_with_the_reference_state():
    make = cell()["make"]
    assert key(make(data())) != key(make(data(), reference={"n": 5}))


def test_key_changes_with_the_matplotlib_settings_in_force():
    view = cell()["make"](data())
    before = key(view)
    with matplotlib.rc_context({"lines.linewidth": 7.0}):
        assert key(view) != before
    assert key(view) == before


CHILD = r'''
import json, sys
import matplotlib
matplotlib.use("Agg")
import numpy as np
sys.path.insert(0, {tests!r})
import test_frames as t
from attnlib import frames
view = t.cell()["make"](t.data())
print(json.dumps({{"key": t.key(view), "set": frames.fingerprint({{"d_k", "T", "sigma", 3, (1, "a")}}),
                  "dict": frames.fingerprint({{"b": [1.5, None, True], "a": np.arange(3.0)}})}}))
'''


def test_keys_are_the_same_in_another_process():
    """A store filled by one process (a site build, Binder's post-build) serves another (a learner's kernel).
    The child has another string-hash seed, so set order differs there."""
    from pathlib import Path

    code = CHILD.format(tests=str(Path(__file__).parent))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={"PYTHONHASHSEED": "12345", "MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    child = json.loads(done.stdout.strip().splitlines()[-1])
    assert child["key"] == key(cell()["make"](data()))
    assert child["set"] == frames.fingerprint({(1, "a"), 3, "sigma", "T", "d_k"})
    assert child["dict"] == frames.fingerprint({"b": [1.5, None, True], "a": np.arange(3.0)})


def test_fingerprint_cuts_cycles_and_tells_structures_apart():
    a = [1, 2]
    a.append(a)
    b = {"x": a}
    b["self"] = b
    assert frames.fingerprint(a) == frames.fingerprint(a) is not None
    assert frames.fingerprint(b) is not None
    assert frames.fingerprint([1, 2]) != frames.fingerprint((1, 2)) != frames.fingerprint([1.0, 2.0])
    assert frames.fingerprint(np.arange(4.0)) != frames.fingerprint(np.arange(4.0).reshape(2, 2))
    assert frames.fingerprint(np.arange(4.0)) != frames.fingerprint(np.arange(4.0).astype(np.float32))
    assert frames.fingerprint(threading.Lock()) is None, "an object with no stable form cannot be keyed"


class Scaler:
    """An object a draw might close over: keyed by its pickle, its class by its code."""

    def __init__(self, k):
        self.k = k


def test_objects_count_by_their_state():
    assert frames.fingerprint(Scaler(2.0)) == frames.fingerprint(Scaler(2.0)) is not None
    assert frames.fingerprint(Scaler(2.0)) != frames.fingerprint(Scaler(3.0))


def draws():
    """Count frames drawn (a view draws a frame only through widgets._png)."""
    count = [0]
    real = widgets._png

    def counting(*args, **kwargs):
        count[0] += 1
        return real(*args, **kwargs)

    return count, counting


def test_a_store_hit_gives_the_bytes_a_fresh_render_gives_without_drawing(tmp_path, monkeypatch):
    store = frames.FrameStore(tmp_path / "frames")
    make = cell()["make"]
    filler = make(data(), store=store)
    for state in filler.states():
        filler.render(state)
    assert len(store.keys()) == len(filler.states()) == 4
    count, counting = draws()
    monkeypatch.setattr(widgets, "_png", counting)
    served = make(data(), store=store)  # a new view (a learner's kernel): every state from the store
    pngs = {n: served.render({"n": n}) for n in (2, 3, 4, 5)}
    assert count[0] == 0, "a filled store must serve every state without drawing"
    monkeypatch.undo()
    fresh = make(data(), store=None)
    for n in (5, 2, 4, 3):  # another order of renders: still the same bytes (a frame is pure in its state)
        assert pngs[n] == fresh.render({"n": n}), f"state n = {n}: the store's bytes differ from a fresh render"
    assert store.keys() == sorted(store.keys()) and not list(tmp_path.rglob(".tmp-*")), "no temporary files left"
    assert all((tmp_path / "frames" / k[:2] / f"{k}.png").is_file() for k in store.keys()), "sharded by 2 digits"


def test_edited_data_never_shows_a_stale_frame(tmp_path, monkeypatch):
    store = frames.FrameStore(tmp_path)
    make = cell()["make"]
    values = data()
    old_view = make(values, store=store)
    old_png, old_key = old_view.render({"n": 4}), key(old_view)
    assert store.get(old_key) == old_png
    values = values.copy()
    values[1] *= 3  # the learner edits the cell that makes the data, and runs the view's cell again
    count, counting = draws()
    monkeypatch.setattr(widgets, "_png", counting)
    new_view = make(values, store=store)
    before = count[0]
    new_png = new_view.render({"n": 4})
    assert count[0] > before, "the edited data's state must be drawn, not read from the store"
    assert new_png != old_png
    assert store.get(key(new_view)) == new_png
    assert store.get(old_key) == old_png, "the old key still names the old frame"


def test_a_view_whose_draw_cannot_be_keyed_still_works_without_the_store(tmp_path):
    lock = threading.Lock()

    def draw(n):
        with lock:
            return plots.probability_bars([1 / n] * n, title=f"n = {n}")

    store = frames.FrameStore(tmp_path)
    view = widgets.slider_view(draw, store=store, n=widgets.int_slider("keys", 2, 4, 3))
    assert frames.frame_key(view, {"n": 2}) is None
    assert view.render({"n": 2}).startswith(frames.PNG_SIGNATURE)
    assert store.keys() == [], "nothing stored under a key that does not describe the frame"


def test_a_view_still_draws_when_hashing_fails_unexpectedly(tmp_path, monkeypatch):
    def broken(view):
        raise RuntimeError("a property that raises, deep in the draw's data")

    monkeypatch.setattr(frames, "view_fingerprint", broken)
    view = cell()["make"](data(), store=frames.FrameStore(tmp_path))
    assert view.render({"n": 5}).startswith(frames.PNG_SIGNATURE)
    assert frames.FrameStore(tmp_path).keys() == []


def test_a_failed_write_leaves_no_frame_and_no_temporary_file(tmp_path, monkeypatch):
    store = frames.FrameStore(tmp_path)
    png = cell()["make"](data()).render({"n": 2})

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(frames.os, "fdopen", broken)
    with pytest.raises(OSError, match="disk full"):
        store.put("ab" * 32, png)
    assert store.get("ab" * 32) is None and list(tmp_path.rglob("*.png")) == []
    monkeypatch.undo()
    store.put("ab" * 32, png)
    assert store.get("ab" * 32) == png


def test_default_store_is_read_from_the_environment_at_call_time(tmp_path, monkeypatch):
    monkeypatch.delenv("ATTNLIB_FRAMES", raising=False)
    assert frames.default_store() is None
    monkeypatch.setenv("ATTNLIB_FRAMES", "off")
    assert frames.default_store() is None
    monkeypatch.setenv("ATTNLIB_FRAMES", str(tmp_path))
    assert frames.default_store().root == tmp_path
    view = cell()["make"](data(), store="default")
    assert view.store.root == tmp_path and len(store_keys(tmp_path)) == 1, "the shown state went into the store"
    (tmp_path / "a-file").write_text("x")
    monkeypatch.setenv("ATTNLIB_FRAMES", str(tmp_path / "a-file"))
    with pytest.raises(ValueError, match="ATTNLIB_FRAMES"):
        frames.default_store()


def store_keys(root):
    return frames.FrameStore(root).keys()


def test_bad_input_names_the_argument(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="root must be a folder"):
        frames.FrameStore(tmp_path / "file")
    with pytest.raises(TypeError, match="root must be a folder path"):
        frames.FrameStore(12)
    store = frames.FrameStore(tmp_path / "frames")
    for bad in ["abc", "A" * 64, 12, "0" * 63 + "g"]:
        with pytest.raises(ValueError, match="key must be a sha256 hex digest"):
            store.get(bad)
    with pytest.raises(ValueError, match="png must be PNG bytes"):
        store.put("0" * 64, b"GIF89a....")
    with pytest.raises(ValueError, match="png must be PNG bytes"):
        store.put("0" * 64, "not bytes")
    with pytest.raises(TypeError, match="store must be"):
        widgets.slider_view(lambda n: None, store=str(tmp_path), n=widgets.int_slider("keys", 2, 4, 3))
    with pytest.raises(ValueError, match="values must give a value for each slider"):
        frames.frame_key(cell()["make"](data()), {"m": 3})
    assert store.get("0" * 64) is None, "a missing frame is None, not an error"

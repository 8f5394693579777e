"""Shared widget wiring: slider views redraw, self-checks grade numbers without evaluating them."""

import warnings

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from attnlib import plots, widgets  # noqa: E402


def test_parse_number_accepts_plain_forms_and_rejects_code():
    assert widgets.parse_number("0.25") == 0.25
    assert widgets.parse_number(" 1/8 ") == 0.125
    assert widgets.parse_number("2e-3") == 0.002
    assert widgets.parse_number("12.5%") == 0.125
    assert widgets.parse_number("-3") == -3
    for bad in ["", "abc", "1/0", "__import__('os')", "2**3", "sqrt(64)", "1/2/3"]:
        assert widgets.parse_number(bad) is None, bad


def test_numeric_check_grades_with_tolerance():
    q = widgets.numeric_check("What is sqrt(64)?", 8, rel_tol=0.01, hint="square root")
    assert q.check("8") is True and "Correct." in q.feedback.value
    assert q.check("8.05") is True
    assert q.check("9") is False and "square root" in q.feedback.value
    assert q.check("eight") is None


def test_choice_check_feedback_per_option():
    q = widgets.choice_check("Pick", ["a", "b"], correct=1, feedback=["no: a", "yes: b"])
    assert q.check() is None
    assert q.check(0) is False and "no: a" in q.feedback.value
    assert q.check(1) is True and "yes: b" in q.feedback.value
    with pytest.raises(ValueError, match="correct must index options"):
        widgets.choice_check("Pick", ["a"], correct=3)


def _counting_draw():
    """(drawn, draw): draw(n) makes an n-bar figure titled "n = …" and appends n to drawn."""
    drawn = []

    def draw(n):
        drawn.append(n)
        return plots.probability_bars([1 / n] * n, title=f"n = {n}")

    return drawn, draw


def test_slider_view_renders_each_state_once_without_warnings():
    calls, draw = _counting_draw()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        view = widgets.slider_view(draw, n=widgets.int_slider("keys", 1, 6, 3))
        assert calls == [3]  # the first frame goes with the view
        assert view.first == view.render({"n": 3}) and view.first_state == view.state == 2
        for n in (6, 1):
            assert view.render({"n": n}).startswith(b"\x89PNG")
    assert calls == [3, 6, 1]
    view.render({"n": 6})  # a state rendered before is kept, not drawn again
    assert calls == [3, 6, 1]
    view.set(n=1)
    assert view.values() == {"n": 1} and view.last_figure.axes[0].get_title() == "n = 1"
    assert plt.get_fignums() == []  # figures are closed once rendered


def test_float_states_that_differ_by_rounding_share_a_cache_entry():
    drawn = []

    def draw(t):
        drawn.append(t)
        return plots.probability_bars([0.5, 0.5], title=f"{t:.1f}")

    view = widgets.slider_view(draw, t=widgets.float_slider("t", 0.0, 1.0, 0.3, step=0.1))
    view.render({"t": 0.1 + 0.2})  # 0.30000000000000004: the state already shown
    assert len(drawn) == 1


def test_last_figure_is_the_shown_state_even_when_only_its_png_was_kept():
    view = widgets.slider_view(lambda n: plots.probability_bars([1 / n] * n, title=f"n = {n}"),
                               n=widgets.int_slider("keys", 1, 6, 3))
    view.render({"n": 5})  # rendered ahead: its PNG is kept, the shown Figure stays n = 3
    assert view.last_figure.axes[0].get_title() == "n = 3"
    view.set(n=5)
    assert view.last_figure.axes[0].get_title() == "n = 5"
    assert plt.get_fignums() == []


def test_slider_pngs_are_256_colour_and_look_the_same():
    import io

    import numpy as np
    from PIL import Image

    def draw(n):
        return plots.probability_bars(np.arange(1, n + 1) / (n * (n + 1) / 2), title=f"n = {n}")

    view = widgets.slider_view(draw, n=widgets.int_slider("keys", 1, 6, 5))
    png = view.render({"n": 5})
    fig = draw(5)
    full = io.BytesIO()
    fig.savefig(full, format="png")
    plt.close(fig)
    with Image.open(io.BytesIO(png)) as small, Image.open(full) as ref:
        assert small.mode == "P" and small.size == ref.size
        diff = np.abs(np.asarray(small.convert("RGB"), int) - np.asarray(ref.convert("RGB"), int))
    assert len(png) < 0.6 * len(full.getvalue())
    assert diff.max() <= 24 and diff.mean() < 2.0  # measured on lesson 01's figure: max 14, mean 1.2


def _scaled_bars(scale):
    """A figure whose y tick labels widen with ``scale`` (1, 10, …, 1e5; 1e6 gets an offset label): wider states need more margin."""
    return plots.probability_bars([0.3 * scale, 0.7 * scale], title=f"scale {scale:g}", ylim=(0, scale))


def _rgb(png):
    import io

    import numpy as np
    from PIL import Image

    with Image.open(io.BytesIO(png)) as im:
        return np.asarray(im.convert("RGB"))


def test_a_states_png_is_the_same_whatever_was_rendered_before():
    import itertools

    values = [1, 10, 100, 1000, 10**5, 10**6]

    def view():
        return widgets.slider_view(_scaled_bars, scale=widgets.options_slider("scale", values, 10))

    cold = {}
    for v in values:  # each state rendered first thing by a fresh view (after its reference state)
        cold[v] = view().render({"scale": v})
    for order in itertools.islice(itertools.permutations(values), 0, 120, 29):
        warm = view()
        for v in order:
            assert warm.render({"scale": v}) == cold[v], (order, v)
        warm._frames.clear()  # rendered again from scratch, after everything else
        assert all(warm.render({"scale": v}) == cold[v] for v in values)
    assert len({cold[v] for v in values}) == len(values)  # the states do differ
    assert plt.get_fignums() == []


def test_every_state_is_drawn_at_the_reference_layout_without_a_layout_pass():
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    view = widgets.slider_view(_scaled_bars, scale=widgets.options_slider("scale", [1, 10, 100], 100))
    ref = _scaled_bars(100)
    ref.draw_without_rendering()  # constrained layout places the axes
    ref_box = ref.axes[0].get_position()
    plt.close(ref)
    for scale in (1, 10, 100):
        view.set(scale=scale)
        fig = view.last_figure
        assert not isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)
        assert fig.axes[0].get_position().bounds == pytest.approx(ref_box.bounds)
    own = _scaled_bars(1)  # the control: laid out on its own, scale 1 (narrower labels) puts the axes elsewhere
    own.draw_without_rendering()
    assert own.axes[0].get_position().x0 < ref_box.x0 - 0.005
    plt.close(own)


def _axes_added(n):
    """One axes for n = 1, two for n = 2 (a state that changes the number of axes)."""
    fig, axes = plt.subplots(1, n, figsize=(4 * n, 3), layout="constrained", squeeze=False)
    for ax in axes[0]:
        ax.plot([0, 1], [0, n])
    return fig


def test_a_state_with_other_axes_keeps_its_own_layout():
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    view = widgets.slider_view(_axes_added, n=widgets.options_slider("n", [1, 2], 1))
    view.set(n=2)
    assert isinstance(view.last_figure.get_layout_engine(), ConstrainedLayoutEngine)
    assert view.render({"n": 2}).startswith(b"\x89PNG")


def test_reference_state_png_has_the_pixels_savefig_writes():
    import io

    import numpy as np
    from PIL import Image

    view = widgets.slider_view(_scaled_bars, scale=widgets.options_slider("scale", [1, 10, 100], 10))
    fig = _scaled_bars(10)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    buf.seek(0)
    with Image.open(buf) as im:
        ref = im.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE).convert("RGB")
    assert (_rgb(view.render({"scale": 10})) == np.asarray(ref)).all()
    view._frames.clear()  # drawn again: same pixels
    assert (_rgb(view.render({"scale": 10})) == np.asarray(ref)).all()


def test_the_reference_state_sets_the_layout_of_every_state():
    values = [1, 10, 1000, 10**5]

    def x0(reference):
        view = widgets.slider_view(_scaled_bars, reference=reference, scale=widgets.options_slider("scale", values, 10))
        view.set(scale=10)
        return view.last_figure.axes[0].get_position().x0

    assert x0({"scale": 10**5}) > x0(None) + 0.01  # room for "100000" at every state, not only "10"
    with pytest.raises(ValueError, match="reference must give a value for each slider"):
        widgets.slider_view(_scaled_bars, reference={"size": 1}, scale=widgets.options_slider("scale", values, 10))
    plt.close("all")




def test_sliders_are_grids_and_bad_input_names_the_argument():
    s = widgets.float_slider("temperature T", 0.5, 2.0, 1.0, step=0.5, unit="K")
    assert (s.values, s.readouts, s.value, s.unit) == ([0.5, 1.0, 1.5, 2.0], ["0.50", "1.00", "1.50", "2.00"], 1.0, "K")
    assert widgets.int_slider("layer", 1, 6, 2).readouts == ["1", "2", "3", "4", "5", "6"]
    pairs = widgets.options_slider("n", [("2^8", 256), ("2^12", 4096)], 4096)
    assert (pairs.values, pairs.readouts, pairs.index(4096)) == ([256, 4096], ["2^8", "2^12"], 1)
    assert widgets.options_slider("d_k", [16, 64]).value == 16
    with pytest.raises(ValueError, match="value 0.7 is not on its grid"):
        widgets.float_slider("t", 0.5, 2.0, 0.7, step=0.5)
    with pytest.raises(AttributeError):
        s.value = 2.0  # a grid's start is fixed: a view's state changes with view.set
    with pytest.raises(ValueError, match="values and readouts must be non-empty"):
        widgets.Slider("x", [], [], 0)
    with pytest.raises(TypeError, match="sliders must be Slider objects"):
        widgets.slider_view(lambda n: None, n=3)
    view = widgets.slider_view(lambda n: plots.probability_bars([1 / n] * n), n=widgets.int_slider("n", 1, 3, 2))
    with pytest.raises(ValueError, match=r"values must give a value for each slider \['n'\]"):
        view.set(m=2)
    with pytest.raises(ValueError, match="value 7 is not on its grid"):
        view.set(n=7)
    assert view.values() == {"n": 2}
    assert repr(view) == "SliderView(n; 3 states)"  # no memory address: strict nbval compares it


def _serving(view):
    """Capture what ``view`` sends the front end: a list of (content, PNG or None)."""
    sent = []
    view.send = lambda content, buffers=None: sent.append((content, buffers[0] if buffers else None))
    return sent


def _wait_for(predicate, seconds=20):
    import time

    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)
    return predicate()


def _main_loop():
    """An asyncio loop running on a thread of its own: it stands in for the kernel's main event loop."""
    import asyncio
    import threading

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, name="main loop", daemon=True).start()
    return loop


def test_the_main_loop_sends_the_asked_for_frame_first_and_a_new_request_replaces_the_old():
    import threading

    gate, drawn = threading.Event(), []

    def draw(n):
        drawn.append((n, threading.current_thread().name))
        if n == 2:
            gate.wait(20)  # the first frame asked for is being drawn while the next requests arrive
        return plots.probability_bars([1 / n] * n, title=f"n = {n}")

    view = widgets.slider_view(draw, n=widgets.int_slider("n", 1, 9, 1))
    view._loop = loop = _main_loop()
    sent = _serving(view)
    try:
        view._on_msg(view, {"type": "want", "now": [1], "ahead": [2, 3]}, [])  # states 1, 2, 3 are n = 2, 3, 4
        assert _wait_for(lambda: drawn[-1:] == [(2, "main loop")])
        # the reader jumped (the message comes on another thread, as on a widget subshell): n = 9 now, then 8;
        # the queued n = 3 and 4 are stale and never drawn
        threading.Thread(target=view._on_msg, args=(view, {"type": "want", "now": [8], "ahead": [7]}, [])).start()
        assert not _wait_for(lambda: len(drawn) > 2, seconds=0.3)  # one frame at a time: n = 2 is not done
        gate.set()
        assert _wait_for(lambda: len(sent) == 3)
        assert [c["state"] for c, _ in sent] == [1, 8, 7]
        assert drawn == [(1, "MainThread"), (2, "main loop"), (9, "main loop"), (8, "main loop")]
        fresh = widgets.slider_view(lambda n: plots.probability_bars([1 / n] * n, title=f"n = {n}"),
                                    n=widgets.int_slider("n", 1, 9, 1))
        assert [png for _, png in sent] == [fresh.render({"n": n}) for n in (2, 9, 8)]  # each its own state's
        view._on_msg(view, {"type": "want", "now": [99, "3", None], "ahead": []}, [])  # off the grid: ignored
        view._on_msg(view, {"type": "state"}, [])
        assert not _wait_for(lambda: len(sent) > 3, seconds=0.5)
        view.close()
        view._on_msg(view, {"type": "want", "now": [4], "ahead": []}, [])  # a closed view sends nothing
        assert not _wait_for(lambda: len(sent) > 3, seconds=0.5)
    finally:
        gate.set()
        loop.call_soon_threadsafe(loop.stop)


def test_in_a_kernel_frames_are_drawn_on_the_main_thread_between_cells():
    """A cell's plots and a frame's drawing both change matplotlib's global rcParams: a request that comes on
    another thread (JupyterLab's widget subshell) while a cell runs is drawn on the cell's thread, after it."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        def run(code):
            reply = kc.execute_interactive(code, timeout=60, output_hook=lambda msg: out.append(msg))
            assert reply["content"]["status"] == "ok", [m["content"] for m in out]

        out = []
        run("""
import threading, time
from attnlib import plots, widgets
log = []
def draw(n):
    log.append(("draw", n, threading.current_thread().name))
    return plots.probability_bars([1 / n] * n)
view = widgets.slider_view(draw, store=None, n=widgets.int_slider("n", 1, 4, 1))
view.send = lambda content, buffers=None: log.append(("sent", content["state"], threading.current_thread().name))
""")
        run("""
threading.Thread(target=view._on_msg, args=(view, {"type": "want", "now": [2], "ahead": [3]}, [])).start()
time.sleep(0.5)
log.append(("cell ends", None, threading.current_thread().name))
""")
        run("""
import asyncio
threading.Thread(target=view._on_msg, args=(view, {"type": "want", "now": [0], "ahead": []}, [])).start()
await asyncio.sleep(0.5)  # the kernel's loop runs while this cell awaits: still no frame drawn
log.append(("awaiting cell ends", None, threading.current_thread().name))
""")
        out.clear()
        run("print(log)")
        log = eval("".join(m["content"].get("text", "") for m in out if m["msg_type"] == "stream"))
        # (the draw reads ``log``, which the cells changed: the reference state n = 1 is laid out again, so
        # draws of n = 1 are left out; the frames sent are checked)
        log = [entry for entry in log[1:] if entry[:2] != ("draw", 1)]
        assert log == [("cell ends", None, "MainThread"), ("draw", 3, "MainThread"), ("sent", 2, "MainThread"),
                       ("draw", 4, "MainThread"), ("sent", 3, "MainThread"),
                       ("awaiting cell ends", None, "MainThread"), ("sent", 0, "MainThread")], log
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_a_state_that_cannot_be_drawn_sends_an_error_and_the_others_go_on():
    def draw(n):
        if n == 2:
            raise RuntimeError("no data for n = 2")
        return plots.probability_bars([1 / n] * n)

    view = widgets.slider_view(draw, n=widgets.int_slider("n", 1, 3, 1))
    sent = _serving(view)
    view._on_msg(view, {"type": "want", "now": [1], "ahead": [2]}, [])
    assert _wait_for(lambda: len(sent) == 2)
    (error, none), (frame, png) = sent
    assert error == {"type": "error", "state": 1,
                     "text": "This state could not be drawn: RuntimeError('no data for n = 2')"} and none is None
    assert frame == {"type": "frame", "state": 2} and png == view.render({"n": 3})
    view.close()


def test_data_edited_in_place_after_a_cell_gives_fresh_frames_and_keys(tmp_path):
    """A learner who changes, in place, the data a view draws from (then runs the cell) gets frames of the new
    data, in this view and from the store: the view's inputs are hashed again once per cell run."""
    import numpy as np

    from attnlib import frames

    store = frames.FrameStore(tmp_path / "store")
    heights = np.array([0.2, 0.8])

    def draw(n):
        return plots.probability_bars(heights * n / n.bit_length(), title=f"n = {n}")

    view = widgets.slider_view(draw, store=store, n=widgets.int_slider("n", 1, 3, 1))
    before = view.render({"n": 2})
    key_before = view._frame_key({"n": 2})
    heights *= 0.5  # edited in place: same object, other numbers
    view._cell_ran()  # the learner's cell ran (IPython's post_run_cell)
    after = view.render({"n": 2})
    assert after != before and view._frame_key({"n": 2}) != key_before
    fresh = widgets.slider_view(draw, store=None, n=widgets.int_slider("n", 1, 3, 1))
    assert after == fresh.render({"n": 2})
    assert store.get(key_before) == before  # the old data's frame stays under the old data's key


def test_after_a_cell_that_changed_the_data_the_front_end_drops_its_frames():
    """The browser keeps every frame it got: when a cell changed what they are drawn from (here, in place), the
    kernel tells it to drop them ({type: "reset"}), and the frame sent with the view is not sent again."""
    import numpy as np

    heights = np.array([0.2, 0.8])
    view = widgets.slider_view(lambda n: plots.probability_bars(heights * n, title=f"n = {n}"), store=None,
                               n=widgets.int_slider("n", 1, 3, 1))
    view._loop = loop = _main_loop()
    sent = _serving(view)
    try:
        old = view.render({"n": 2})
        loop.call_soon_threadsafe(view._cell_ran)  # a cell that changed nothing: no reset
        assert not _wait_for(lambda: sent, seconds=0.5)
        assert view.render({"n": 2}) == old and view.first
        heights *= 0.5
        loop.call_soon_threadsafe(view._cell_ran)
        assert _wait_for(lambda: sent == [({"type": "reset"}, None)])
        assert view.first == b"" and view.render({"n": 2}) != old
    finally:
        loop.call_soon_threadsafe(loop.stop)


def test_a_view_whose_inputs_cannot_be_hashed_forgets_its_frames_after_each_cell():
    import threading

    import numpy as np

    class Holder:  # a lock: no stable form, so the view cannot tell whether its data changed
        def __init__(self):
            self.lock, self.heights = threading.Lock(), np.array([0.2, 0.8])

    holder = Holder()
    view = widgets.slider_view(lambda n: plots.probability_bars(holder.heights * n), store=None,
                               n=widgets.int_slider("n", 1, 3, 1))
    old = view.render({"n": 2})
    holder.heights *= 0.5
    assert view.render({"n": 2}) == old  # no cell ran: the kept frame
    view._cell_ran()
    assert view.render({"n": 2}) != old


def test_a_request_to_a_closed_view_outside_a_kernel_returns_at_once():
    import threading

    view = widgets.slider_view(lambda n: plots.probability_bars([1 / n] * n), n=widgets.int_slider("n", 1, 3, 1))
    sent = _serving(view)
    view.close()
    asked = threading.Thread(target=view._on_msg, args=(view, {"type": "want", "now": [1], "ahead": [2]}, []),
                             daemon=True)
    asked.start()
    asked.join(5)
    assert not asked.is_alive() and sent == []


def test_the_store_key_is_made_with_the_settings_in_force_when_the_frame_is_drawn(tmp_path):
    """A frame is keyed by the matplotlib settings in force when it is drawn (a cell may have changed them)."""
    import matplotlib as mpl

    from attnlib import frames

    store = frames.FrameStore(tmp_path / "store")
    view = widgets.slider_view(lambda n: plots.probability_bars([1 / n] * n), store=store,
                               n=widgets.int_slider("n", 1, 3, 1))
    sent = _serving(view)
    with mpl.rc_context({"lines.linewidth": 7.0}):
        view._on_msg(view, {"type": "want", "now": [2], "ahead": []}, [])
        key_now = view._frame_key({"n": 3})
    assert sent and store.get(key_now) == sent[0][1]
    assert store.get(view._frame_key({"n": 3})) is None  # not under the default settings' key

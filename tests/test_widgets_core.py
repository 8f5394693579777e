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
        warm._rendered.clear()  # rendered again from scratch, after everything else
        assert all(warm.render({"scale": v}) == cold[v] for v in values)
    assert len({cold[v] for v in values}) == len(values)  # the states do differ
    assert plt.get_fignums() == []


def test_states_whose_text_fits_keep_the_reference_layout_and_wider_ones_move_their_axes_in():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    view = widgets.slider_view(_scaled_bars, scale=widgets.options_slider("scale", [1, 10, 100, 10**5], 100))
    ref = view.last_figure
    ref_box = ref.axes[0].get_position()
    canvas = FigureCanvasAgg(ref)
    canvas.draw()
    ref_label = ref.axes[0].yaxis.label.get_window_extent(canvas.get_renderer())
    view.set(scale=1)  # narrower tick labels: same panel position as the reference
    assert not isinstance(view.last_figure.get_layout_engine(), ConstrainedLayoutEngine)
    assert view.last_figure.axes[0].get_position().bounds == pytest.approx(ref_box.bounds)
    view.set(scale=10**5)  # "100000" does not fit the reference margin: the panel moves right
    fig = view.last_figure
    assert not isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)  # no second layout pass
    box = fig.axes[0].get_position()
    assert box.x0 > ref_box.x0 + 0.01
    assert (box.y0, box.x1, box.y1) == pytest.approx((ref_box.y0, ref_box.x1, ref_box.y1))  # only the crowded side
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    label = fig.axes[0].yaxis.label.get_window_extent(canvas.get_renderer())
    assert label.x0 >= 0  # the y label stays inside the figure
    assert label.x0 == pytest.approx(ref_label.x0, abs=1.0)  # where the reference's label was


def _growing_note(n):
    """A figure whose only growing text belongs to no axes and leaves the figure on the right when ``n`` is large."""
    fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel("x (units)")
    ax.set_ylabel("y (units)")
    fig.text(0.7, 0.95, "note " + "x" * n)
    return fig


def test_text_no_axes_owns_that_leaves_the_figure_gets_its_own_constrained_layout():
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    view = widgets.slider_view(_growing_note, n=widgets.options_slider("n", [1, 60], 1))
    view.set(n=60)
    assert isinstance(view.last_figure.get_layout_engine(), ConstrainedLayoutEngine)


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
    view._rendered.clear()  # the reference state drawn again through the frozen layout: same pixels
    assert (_rgb(view.render({"scale": 10})) == np.asarray(ref)).all()


def _bars_with_update():
    """A draw/update pair over bar heights and a title; ``scale`` widens the y tick labels (some states need room)."""

    def draw(scale, tilt):
        fig, ax = plt.subplots(figsize=(5.0, 3.5), layout="constrained")
        ax.bar([0, 1], [0.3 * scale * (1 + tilt), 0.7 * scale * (1 - tilt)], color=plots.SCALED)
        ax.set_xticks([0, 1], ["key 1", "key 2"])
        ax.set_ylim(0, scale)
        ax.set_ylabel("weight (units)")
        ax.set_title(f"scale {scale:g}, tilt {tilt:g}")
        return fig

    def update(fig, scale, tilt):
        ax = fig.axes[0]
        for rect, h in zip(ax.patches, [0.3 * scale * (1 + tilt), 0.7 * scale * (1 - tilt)], strict=True):
            rect.set_height(h)
        ax.set_ylim(0, scale)
        ax.set_title(f"scale {scale:g}, tilt {tilt:g}")
        return fig

    return draw, update


def test_an_update_hook_gives_the_bytes_a_new_figure_gives_for_every_state_in_any_order():
    import itertools
    import random

    draw, update = _bars_with_update()
    scales, tilts = [1, 10, 100, 10**4], [-0.5, 0.0, 0.25]

    def view(hook):
        return widgets.slider_view(draw, update=hook, scale=widgets.options_slider("scale", scales, 10),
                                   tilt=widgets.options_slider("tilt", tilts, 0.0))

    states = [{"scale": s, "tilt": t} for s, t in itertools.product(scales, tilts)]
    fresh = view(None)
    expected = [fresh.render(st) for st in states]
    assert fresh._spare is None
    assert len(set(expected)) == len(states)  # the states do differ
    rng = random.Random(0)
    for _ in range(3):
        order = rng.sample(range(len(states)), len(states))
        hooked = view(update)
        for i in order:
            assert hooked.render(states[i]) == expected[i], states[i]
        assert hooked._spare is not None  # the hook was used
    n = plt.get_fignums()
    assert n == []


def test_an_update_hook_does_not_change_the_shown_figure():
    draw, update = _bars_with_update()
    view = widgets.slider_view(draw, update=update, scale=widgets.options_slider("scale", [1, 10, 100], 10),
                               tilt=widgets.options_slider("tilt", [0.0, 0.5], 0.0))
    view.set(scale=100)
    shown = view.last_figure
    view.render({"scale": 1, "tilt": 0.5})  # a state rendered ahead updates the view's one Figure
    assert view.last_figure is shown
    assert shown.axes[0].get_title() == "scale 100, tilt 0"


def _layer_stats(n_layers=6, n_heads=12, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    var = rng.lognormal(2.0, 1.0, (n_layers, n_heads))
    return {"var_logit": var, "var_logit_scaled": var / 32, "iid_prediction": var * rng.uniform(0.5, 2, var.shape),
            "entropy_unscaled": rng.uniform(0, 2, var.shape), "entropy_scaled": rng.uniform(1, 3, var.shape),
            "log_keys": np.log(rng.integers(5, 20, (n_layers, 6)))}


def test_layer_view_update_gives_the_pngs_of_new_figures():
    stats = _layer_stats()
    hooked = widgets.minilm_layer_view(stats, var_ylim=(1e-2, 1e4))
    assert hooked.update_figure is not None
    plain = widgets.slider_view(lambda layer: plots.layer_profile(stats, layer, var_ylim=(1e-2, 1e4)),
                                layer=widgets.int_slider("layer", 1, 6, 1))
    for layer in (6, 2, 5, 1, 3, 4, 6):
        hooked._rendered.clear()
        assert hooked.render({"layer": layer}) == plain.render({"layer": layer}), layer
    assert widgets.minilm_layer_view(stats).update_figure is None  # autoscaled variance axis: no hook
    with pytest.raises(ValueError, match="var_ylim"):
        plots.update_layer_profile(plots.layer_profile(stats, 1), stats, 2)
    plt.close("all")


def test_a_kept_renderer_gives_the_bytes_a_new_one_gives(monkeypatch):
    from collections import OrderedDict

    values = [1, 10, 1000, 10**5]
    warm = widgets.slider_view(_scaled_bars, scale=widgets.options_slider("scale", values, 10))
    kept = [warm.render({"scale": v}) for v in values]  # each render reuses the renderer of the one before
    assert len(widgets.RENDER_LOCK.renderers) >= 1
    for v, png in zip(values, kept, strict=True):
        monkeypatch.setattr(widgets.RENDER_LOCK, "renderers", OrderedDict())  # a new renderer for this render only
        cold = widgets.slider_view(_scaled_bars, scale=widgets.options_slider("scale", values, 10))
        cold._layout = warm._layout
        assert cold.render({"scale": v}) == png, v


def _hook_matches_new_figures(view, plain, states):
    """Render ``states`` cold on ``view`` (which has an update hook) and compare with ``plain`` (no hook)."""
    assert view.update_figure is not None and plain.update_figure is None
    for st in states:
        view._rendered.clear()
        assert view.render(st) == plain.render(st), st
    assert view._spare is not None


def test_temperature_view_update_gives_the_pngs_of_new_figures_at_every_grid_temperature():
    import numpy as np

    from attnlib.saturation import WORKED_LOGITS, temperature_sweep

    z = np.array(WORKED_LOGITS)
    temps = np.arange(0.25, 16.0 + 1e-9, 0.25)
    probs, ent = temperature_sweep(z, temps)
    hooked = widgets.temperature_view(z, temps, probs, ent, value=8.0)
    plain = widgets.slider_view(lambda temperature: plots.temperature_panel(z, temps, probs, ent, temperature),
                                temperature=widgets.float_slider("temperature T", 0.25, 16.0, 8.0, step=0.25))
    order = [16.0, 0.25, 1.0, 12.0, 0.5, 3.75] + [float(t) for t in temps[::-1]]  # far jumps, then every state
    _hook_matches_new_figures(hooked, plain, [{"temperature": t} for t in order])
    plt.close("all")


def test_training_browser_update_gives_the_pngs_of_new_figures_for_every_state():
    import itertools
    import json
    from pathlib import Path

    import numpy as np

    data = np.load(Path(__file__).resolve().parent.parent / "notebooks" / "data" / "training_sweep.npz")
    c = json.loads(str(data["config"]))
    curves = data["curves"].astype(float).mean(axis=3)
    steps = (np.arange(curves.shape[-1]) + 0.5) * c["window"]
    hooked = widgets.training_browser(steps, curves, c["variants"], c["d_ks"], c["lrs"], uniform_entropy=np.log(8))

    def draw(d_k, lr):
        sl = curves[:, c["d_ks"].index(d_k), c["lrs"].index(lr)]
        return plots.training_curves(steps, sl, c["variants"], title=f"d_k = {d_k}, learning rate = {lr:g}",
                                     uniform_entropy=np.log(8))

    plain = widgets.slider_view(draw, d_k=widgets.options_slider("d_k", c["d_ks"]),
                                lr=widgets.options_slider("learning rate", c["lrs"]))
    states = [{"d_k": d, "lr": lr} for d, lr in itertools.product(c["d_ks"][::-1], c["lrs"])]
    _hook_matches_new_figures(hooked, plain, states)
    plt.close("all")


def test_renders_from_two_threads_take_turns():
    """JupyterLab sends widget messages on a kernel subshell, a thread of its own: a slider move renders
    there while the main thread may be rendering ahead. With an update hook both would change the view's
    one Figure; the render lock makes them take turns, so each PNG is its own state's."""
    import threading
    import time

    draw, update = _bars_with_update()
    entered = threading.Event()

    def slow_update(fig, scale, tilt):  # the "main thread" render pauses halfway through its update
        ax = fig.axes[0]
        for rect, h in zip(ax.patches, [0.3 * scale * (1 + tilt), 0.7 * scale * (1 - tilt)], strict=True):
            rect.set_height(h)
        if tilt == 0.5:
            entered.set()
            time.sleep(0.3)
        ax.set_ylim(0, scale)
        ax.set_title(f"scale {scale:g}, tilt {tilt:g}")
        return fig

    def view(hook):
        return widgets.slider_view(draw, update=hook, scale=widgets.options_slider("scale", [1, 10, 100], 10),
                                   tilt=widgets.options_slider("tilt", [0.0, 0.5, -0.5], 0.0))

    states = [{"scale": 100, "tilt": 0.5}, {"scale": 1, "tilt": -0.5}]
    plain = view(None)
    expected = [plain.render(st) for st in states]
    hooked = view(slow_update)
    hooked.render({"scale": 10, "tilt": -0.5})  # the view's one Figure exists: the next renders update it
    got = [None, None]
    main = threading.Thread(target=lambda: got.__setitem__(0, hooked.render(states[0])))
    main.start()
    assert entered.wait(10)
    got[1] = hooked.render(states[1])  # the "subshell" render, asked for while the other is under way
    main.join(10)
    assert got == expected
    assert plt.get_fignums() == []


def test_a_kept_state_is_shown_while_another_thread_renders():
    """A press that revisits a kept state must not wait for a render ahead on the other thread."""
    import threading

    view = widgets.slider_view(lambda n: plots.probability_bars([1 / n] * n), n=widgets.int_slider("n", 1, 6, 3))
    kept = view.render({"n": 4})
    holding, release = threading.Event(), threading.Event()

    def other_thread_renders():  # holds the render lock as a long render would
        with widgets.RENDER_LOCK():
            holding.set()
            release.wait(30)

    holder = threading.Thread(target=other_thread_renders)
    holder.start()
    try:
        assert holding.wait(10)
        got = []
        reader = threading.Thread(target=lambda: got.append(view.render({"n": 4})))
        reader.start()
        reader.join(10)
        assert got == [kept]  # returned while the lock was still held
    finally:
        release.set()
        holder.join(10)


def test_a_reference_state_with_the_widest_labels_lets_every_state_render_in_one_pass(monkeypatch):
    values = [1, 10, 1000, 10**5]
    moved = []
    make_room = widgets._make_room
    monkeypatch.setattr(widgets, "_make_room", lambda *a: moved.append(1) or make_room(*a))

    def moves(reference):
        moved.clear()
        view = widgets.slider_view(_scaled_bars, reference=reference,
                                   scale=widgets.options_slider("scale", values, 10))
        for v in values:
            view.render({"scale": v})
        return len(moved)

    assert moves(None) >= 1  # laid out at scale 10: the wider labels of 1e3 and 1e5 need a second pass
    assert moves({"scale": 10**5}) == 0
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


def test_the_worker_sends_the_asked_for_frame_first_and_a_new_request_replaces_the_old():
    import threading

    gate, drawn = threading.Event(), []

    def draw(n):
        drawn.append(n)
        if n == 2:
            gate.wait(20)  # the first frame asked for is being drawn while the next requests arrive
        return plots.probability_bars([1 / n] * n, title=f"n = {n}")

    view = widgets.slider_view(draw, n=widgets.int_slider("n", 1, 9, 1))
    sent = _serving(view)
    view._on_msg(view, {"type": "want", "now": [1], "ahead": [2, 3]}, [])  # states 1, 2, 3 are n = 2, 3, 4
    assert _wait_for(lambda: drawn[-1:] == [2])
    # the reader jumped: n = 9 now, then 8; the queued n = 3 and 4 are stale and never drawn
    view._on_msg(view, {"type": "want", "now": [8], "ahead": [7]}, [])
    gate.set()
    assert _wait_for(lambda: len(sent) == 3)
    assert [c["state"] for c, _ in sent] == [1, 8, 7] and drawn == [1, 2, 9, 8]
    fresh = widgets.slider_view(lambda n: plots.probability_bars([1 / n] * n, title=f"n = {n}"),
                                n=widgets.int_slider("n", 1, 9, 1))
    assert [png for _, png in sent] == [fresh.render({"n": n}) for n in (2, 9, 8)]  # each is its own state's frame
    view._on_msg(view, {"type": "want", "now": [99, "3", None], "ahead": []}, [])  # off the grid: ignored
    view._on_msg(view, {"type": "state"}, [])
    assert not _wait_for(lambda: len(sent) > 3, seconds=0.5)
    view.close()
    assert _wait_for(lambda: not view._worker.is_alive())  # closing the view ends its worker


def test_a_state_that_cannot_be_drawn_sends_an_error_and_the_worker_goes_on():
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


def test_a_render_someone_waits_for_goes_before_renders_ahead():
    """One lock around matplotlib: when it is free again, a waiting render for the reader takes it before
    a waiting render ahead, whichever asked first."""
    import threading
    import time

    lock, order, holding, release = widgets.RenderLock(), [], threading.Event(), threading.Event()

    def hold():
        with lock():
            holding.set()
            release.wait(20)

    def take(name, ahead):
        with lock(ahead=ahead):
            order.append(name)

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(10)
    behind = threading.Thread(target=take, args=("ahead", True))
    behind.start()
    time.sleep(0.1)  # the render ahead waits first
    asked = threading.Thread(target=take, args=("asked", False))
    asked.start()
    time.sleep(0.1)
    release.set()
    for t in (holder, behind, asked):
        t.join(10)
    assert order == ["asked", "ahead"]
    with lock(), lock():  # re-entrant: a render's nested Agg draw takes it again
        pass
    with lock(ahead=True):  # nobody waits: a render ahead goes at once
        pass


def test_the_worker_draws_only_between_cells():
    """A cell's plots change matplotlib's global rcParams (rc_context), and so does drawing a frame: the worker
    never draws while a cell runs, and a cell that starts while a frame is being drawn waits for it."""
    import threading
    import time

    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        drawing, finish, log = threading.Event(), threading.Event(), []

        def draw(n):
            if n == 3:  # the frame in progress when the next cell starts
                drawing.set()
                finish.wait(20)
                log.append("drawn")
            return plots.probability_bars([1 / n] * n)

        shell.user_ns.update(draw=draw, widgets=widgets)
        assert shell.run_cell('view = widgets.slider_view(draw, n=widgets.int_slider("n", 1, 4, 1))').success
        view = shell.user_ns["view"]
        sent = _serving(view)
        shell.events.trigger("pre_run_cell", None)  # a cell runs: what the reader asks for is not drawn yet
        view._on_msg(view, {"type": "want", "now": [1], "ahead": []}, [])
        assert not _wait_for(lambda: sent, seconds=0.5)
        shell.events.trigger("post_run_cell", None)
        assert _wait_for(lambda: [c["state"] for c, _ in sent] == [1])
        view._on_msg(view, {"type": "want", "now": [2], "ahead": []}, [])
        assert drawing.wait(10)
        starting = threading.Thread(target=lambda: (shell.events.trigger("pre_run_cell", None), log.append("cell")))
        starting.start()
        time.sleep(0.3)
        assert log == []  # the cell waits for the frame being drawn
        finish.set()
        starting.join(10)
        assert log == ["drawn", "cell"]
        shell.events.trigger("post_run_cell", None)
        assert shell.run_cell('other = widgets.slider_view(draw, n=widgets.int_slider("n", 1, 2, 1))').success
        for event in ("pre_run_cell", "post_run_cell"):  # followed once per shell, however many views
            assert sum(getattr(f, "__self__", None) is widgets.RENDER_LOCK for f in shell.events.callbacks[event]) == 1
        view.close()
    finally:
        InteractiveShell.clear_instance()


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
    widgets.RENDER_LOCK._cell_ends()  # the learner's cell ran
    after = view.render({"n": 2})
    assert after != before and view._frame_key({"n": 2}) != key_before
    fresh = widgets.slider_view(draw, store=None, n=widgets.int_slider("n", 1, 3, 1))
    assert after == fresh.render({"n": 2})
    assert store.get(key_before) == before  # the old data's frame stays under the old data's key


def test_the_store_key_is_made_with_the_settings_in_force_when_the_frame_is_drawn(tmp_path):
    """A request that waits for a cell: if the cell changes matplotlib's settings, the frame is keyed by them."""
    import time

    import matplotlib as mpl

    from attnlib import frames

    store = frames.FrameStore(tmp_path / "store")
    view = widgets.slider_view(lambda n: plots.probability_bars([1 / n] * n), store=store,
                               n=widgets.int_slider("n", 1, 3, 1))
    sent = _serving(view)
    gate = widgets.RENDER_LOCK.idle
    gate.clear()  # a cell runs
    try:
        view._on_msg(view, {"type": "want", "now": [2], "ahead": []}, [])
        assert _wait_for(lambda: view._drawing == 2)
        time.sleep(0.2)  # the worker has taken the request and waits for the cell
        with mpl.rc_context({"lines.linewidth": 7.0}):  # the cell changed a setting, and the cell ends
            widgets.RENDER_LOCK._cell_ends()
            assert _wait_for(lambda: sent)
            key_now = view._frame_key({"n": 3})
        assert store.get(key_now) == sent[0][1]
        assert store.get(view._frame_key({"n": 3})) is None  # not under the default settings' key
    finally:
        gate.set()
        view.close()

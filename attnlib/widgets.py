"""Slider views and self-check quizzes.

A slider view is a draw function over a finite grid of states; a *frame* is the PNG of one state.
``SliderView.render`` makes a frame (one function, so a frame is byte-identical in the live view, the
frame store and the course site). The browser keeps the frames it has and swaps them on input
(``frameslider.js``, the same file the course site runs); in JupyterLab it asks the kernel for the
frames it lacks, which one worker thread per view renders (the asked-for frame first, then the ones
ahead) under one lock around matplotlib. Views draw from data computed beforehand: no Monte Carlo
runs on a slider move. Tests drive a view without a browser with ``set``, ``render`` and ``last_figure``.

Sections below belong to lesson groups; keep additions inside your section.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import pathlib
import re
import threading
from collections import OrderedDict
from fractions import Fraction

import anywidget
import ipywidgets as widgets
import matplotlib.pyplot as plt
import traitlets

__all__ = ["slider_view", "int_slider", "float_slider", "numeric_check", "choice_check", "parse_number",
           "follow_content_font"]


class Slider:
    """One slider's grid: its label and unit, every value it can take (in order), how its readout shows
    each, and the value it starts at. Made by ``int_slider``, ``float_slider`` or ``options_slider``."""

    def __init__(self, label: str, values, readouts, value, unit: str = ""):
        self.label, self.unit = label, unit
        self.values, self.readouts = list(values), [str(r) for r in readouts]
        if not self.values or len(self.values) != len(self.readouts):
            raise ValueError(f"slider {label!r}: values and readouts must be non-empty and of equal length; "
                             f"got {len(self.values)} and {len(self.readouts)}")
        self._start = self.values[self.index(value)]

    @property
    def value(self):
        """The value the slider starts at (read-only: change a view's state with ``SliderView.set``)."""
        return self._start

    def index(self, value) -> int:
        """Where ``value`` sits on the grid (floats compared after rounding to 9 decimals)."""
        for i, v in enumerate(self.values):
            if _key({"v": v}) == _key({"v": value}):
                return i
        raise ValueError(f"slider {self.label!r}: value {value!r} is not on its grid {self.values}")


def _grid(description, min, max, step) -> int:
    """How many values ``min``, ``min + step``, ... ``max`` are; errors name the argument."""
    if not step > 0:
        raise ValueError(f"slider {description!r}: step must be positive; got {step!r}")
    n = round((max - min) / step)
    if n < 0 or abs(min + n * step - max) > 1e-9 * (1 + abs(max)):
        raise ValueError(f"slider {description!r}: max must be min + a whole number of steps; got min={min!r}, "
                         f"max={max!r}, step={step!r}")
    return n + 1


def int_slider(description, min, max, value, step=1, unit="") -> Slider:
    """Integers ``min``, ``min + step``, ... up to ``max``."""
    values = [min + i * step for i in range(_grid(description, min, max, step))]
    return Slider(description, values, [format(v, "d") for v in values], value, unit)


def float_slider(description, min, max, value, step=0.1, unit="", readout_format=".2f") -> Slider:
    """Floats from ``min`` to ``max`` in steps of ``step``, read out with ``readout_format``."""
    values = [round(min + i * step, 12) for i in range(_grid(description, min, max, step))]
    return Slider(description, values, [format(v, readout_format) for v in values], value, unit)


def options_slider(description, options, value=None) -> Slider:
    """A fixed list of values (e.g. d_k in powers of two), or of (readout, value) pairs."""
    pairs = [o if isinstance(o, tuple) else (str(o), o) for o in options]
    if not pairs:
        raise ValueError(f"slider {description!r}: options must not be empty")
    return Slider(description, [v for _, v in pairs], [r for r, _ in pairs], pairs[0][1] if value is None else value)


class RenderLock:
    """The one lock around matplotlib (re-entrant). A render a reader waits for goes before a render ahead:
    ``with lock(ahead=True)`` waits while any other render is asked for (do not take it ahead inside a held lock).

    It also follows IPython's cells (``watch_cells``): ``idle`` is set while no cell runs, ``cells`` counts the
    cells run, and a cell that starts waits for the frame being drawn. A cell's plots and a frame's drawing
    both change matplotlib's global rcParams, so they must never overlap."""

    def __init__(self):
        self._lock, self._turn, self._asked = threading.RLock(), threading.Condition(), 0
        self.idle, self.cells, self._shell = threading.Event(), 0, None
        # One Agg renderer per canvas size, shared by every draw of that size: matplotlib caches text
        # measurements per renderer, so a new one per render measured every label again (and re-parsed the
        # mathtext of log-axis labels). A renderer is cleared before each draw; the pixels do not depend on it.
        self.renderers = OrderedDict()  # (width px, height px, dpi) -> RendererAgg, least recently used first

    @contextlib.contextmanager
    def __call__(self, ahead=False):
        while ahead:  # take the lock only while nobody asked for it
            with self._turn:
                self._turn.wait_for(lambda: self._asked == 0)
            self._lock.acquire()
            with self._turn:
                if self._asked == 0:
                    break
            self._lock.release()  # someone asked while this waited: they go first
        if ahead:
            try:
                yield
            finally:
                self._lock.release()
            return
        with self._turn:
            self._asked += 1
        try:
            self._lock.acquire()
        finally:
            with self._turn:
                self._asked -= 1
                self._turn.notify_all()
        try:
            yield
        finally:
            self._lock.release()


    def watch_cells(self) -> None:
        """Follow the cells of the running IPython shell (hooks registered once per shell); none: always idle."""
        try:
            from IPython import get_ipython

            shell = get_ipython()
        except ImportError:
            shell = None
        with self._turn:
            if shell is None or shell is self._shell:
                if shell is None:
                    self.idle.set()
                return
            self._shell = shell
        shell.events.register("pre_run_cell", self._cell_starts)
        shell.events.register("post_run_cell", self._cell_ends)
        if getattr(shell.displayhook, "exec_result", None) is None:  # IPython sets it while a cell runs
            self.idle.set()
        else:
            self.idle.clear()

    def _cell_starts(self, *_):
        self.idle.clear()
        with self():  # a frame being drawn now is finished before the cell starts
            pass

    def _cell_ends(self, *_):
        self.cells += 1
        self.idle.set()


RENDER_LOCK = RenderLock()


class SliderView(anywidget.AnyWidget):
    """Sliders over a grid of states and the frame of the state shown; ``draw(**values)`` returns a Figure.

    ``draw`` must depend only on the slider values (it draws from data computed once), so a state's frame
    is a pure function of that state: the same values give the same bytes whatever was rendered before.
    Layout: the view's figure is laid out once, by its own constrained layout, at its *reference state*
    (default: the sliders' first values); every state is drawn at those frozen positions (axes, colour
    bars, suptitle) in one Agg pass, so panels stay put as the sliders move, and a state whose text
    reaches further moves only those axes in (``_draw_and_render``). With a frame store (``store``,
    ``attnlib.frames``), a frame is looked up there by a hash of everything it depends on before it is
    drawn, and a frame drawn here is put there.
    """

    _esm = pathlib.Path(__file__).with_name("frameslider.js")
    _css = pathlib.Path(__file__).with_name("frameslider.css")
    spec = traitlets.List().tag(sync=True)  # [{label, unit, readouts}]: the sliders, for the front end
    state = traitlets.Int(0).tag(sync=True)  # the state shown: flat index into the grid, last slider fastest
    first = traitlets.Bytes().tag(sync=True)  # the frame of ``first_state``, sent with the view
    first_state = traitlets.Int(0).tag(sync=True)
    CACHE_SIZE = 64  # frames kept per view (tens of kB each; Figures are not kept)

    def __init__(self, draw, sliders: dict, update=None, reference=None, store="default"):
        """``update(fig, **values)``, optional: change a Figure that ``draw`` made (for any state) in place so
        that it shows ``values``, with the same pixels as ``draw(**values)``; the view then keeps one Figure.

        ``store``: a ``frames.FrameStore``, None for none, or "default": ``frames.default_store()``."""
        from . import frames

        if isinstance(store, str) and store == "default":
            store = frames.default_store()
        elif store is not None and not isinstance(store, frames.FrameStore):
            raise TypeError(f"store must be a frames.FrameStore, None or 'default'; got {store!r}")
        bad = [name for name, s in sliders.items() if not isinstance(s, Slider)]
        if not sliders or bad:
            raise TypeError(f"sliders must be Slider objects (int_slider, float_slider, options_slider); "
                            f"got {bad or 'none'}")
        self.store, self._frame_view = store, None  # view_fingerprint once computed ("" if it cannot be keyed)
        self.draw, self.update_figure, self._spare = draw, update, None
        self.sliders = dict(sliders)
        names = list(self.sliders)  # every state once, in ``state`` order (the last slider varies fastest)
        self._states = [dict(zip(names, combo, strict=True))
                        for combo in itertools.product(*(s.values for s in self.sliders.values()))]
        self._reference = {name: s.value for name, s in self.sliders.items()}
        if reference is not None:
            if not isinstance(reference, dict) or set(reference) != set(self.sliders):
                raise ValueError(f"reference must give a value for each slider {sorted(self.sliders)}; "
                                 f"got {reference!r}")
            self._reference = {name: reference[name] for name in self.sliders}
        self._layout, self._rendered, self._figure = None, OrderedDict(), (None, None)
        self._queue, self._queued, self._worker = [], threading.Condition(), None
        self._drawing, self._seen = None, (None, None)  # state the worker draws now; (cells, digest) checked last
        RENDER_LOCK.watch_cells()
        start = self._index({name: s.value for name, s in self.sliders.items()})
        front = [{"label": s.label, "unit": s.unit, "readouts": s.readouts} for s in self.sliders.values()]
        super().__init__(spec=front, state=start, first_state=start,
                         first=self.render(self._states[start]))
        self.on_msg(self._on_msg)

    def __repr__(self):  # stable text for notebooks (no memory address)
        return f"SliderView({', '.join(self.sliders)}; {len(self._states)} states)"

    # ---- states ----
    def states(self) -> list[dict]:
        """Every combination of slider values (the last slider varies fastest); index = ``state``."""
        return [dict(values) for values in self._states]

    def _index(self, values: dict) -> int:
        if not isinstance(values, dict) or set(values) != set(self.sliders):
            raise ValueError(f"values must give a value for each slider {sorted(self.sliders)}; got {values!r}")
        index = 0
        for name, s in self.sliders.items():
            index = index * len(s.values) + s.index(values[name])
        return index

    def values(self) -> dict:
        """The state shown now, as slider values."""
        return dict(self._states[self.state])

    def set(self, **values) -> None:
        """Show another state (the front end follows); e.g. ``view.set(d_k=64)``."""
        self.state = self._index({**self.values(), **values})

    def controls(self) -> list[dict]:
        """Each slider as data: name, label, unit, grid of values, their readouts, and the index shown now."""
        now = self.values()
        return [{"name": name, "label": s.label, "unit": s.unit, "values": s.values, "readouts": s.readouts,
                 "index": s.index(now[name])} for name, s in self.sliders.items()]

    @property
    def last_figure(self):
        """The Figure of the state shown now (drawn again if only its frame was kept)."""
        with RENDER_LOCK():
            key = _key(self.values())
            if self._figure[0] != key:
                self._figure = (key, self._draw_and_render(self.values(), reuse=False)[0])
            return self._figure[1]

    # ---- frames ----
    def render(self, values: dict, ahead=False, idle=None) -> bytes:
        """The frame (PNG) of ``values``: kept, stored, or drawn now (then kept and stored).

        ``ahead``: no one waits for it (renders someone waits for go first). ``idle``: an Event set while no
        cell runs (``RENDER_LOCK.idle``); the store lookup and the drawing then wait for it and never overlap
        a cell (the worker's case). The store key is made just before the lookup, with the settings in force."""
        self._check_inputs()
        key = _key(values)
        png = self._rendered.get(key)
        while png is None:
            if idle is not None:
                idle.wait()
            with RENDER_LOCK(ahead):
                if idle is not None and not idle.is_set():
                    continue  # a cell started meanwhile: it goes first
                stored = self._frame_key(values)
                png = self._stored(stored)
                if png is None:
                    png = self._draw_and_render(values)[1]
                    self._keep(stored, png)
        self._rendered[key] = png
        while len(self._rendered) > self.CACHE_SIZE:
            self._rendered.popitem(last=False)
        return png

    def _check_inputs(self) -> None:
        """Once per cell run: if what the frames depend on changed (data edited in place, a global the draw
        reads, matplotlib's settings), forget the frames and layout kept for the old inputs."""
        from . import frames

        if self._seen[0] == RENDER_LOCK.cells:
            return
        try:
            digest = (frames.view_fingerprint(self), frames._rc_digest([]))
        except Exception:  # noqa: BLE001 - inputs that cannot be hashed: keep what is kept, draw without a store
            digest = None
        if self._seen[0] is not None and (digest is None or digest != self._seen[1]):
            self._rendered.clear()
            self._layout, self._spare, self._figure = None, None, (None, None)
        self._frame_view = (digest[0] or "") if digest else ""
        self._seen = (RENDER_LOCK.cells, digest)

    def _frame_key(self, values: dict):
        """The frame store's key for ``values`` (``frames.frame_key``), or None without a store or a key."""
        if self.store is None:
            return None
        from . import frames

        try:
            if self._frame_view is None:
                self._frame_view = frames.view_fingerprint(self) or ""
            return frames.frame_key(self, values, self._frame_view) if self._frame_view else None
        except Exception:  # noqa: BLE001 - something in the draw's reach broke the hashing: draw without the store
            self._frame_view = ""
            return None

    def _stored(self, key):
        try:
            return None if key is None else self.store.get(key)
        except OSError:  # a store that cannot be read: draw instead
            return None

    def _keep(self, key, png: bytes) -> None:
        with contextlib.suppress(OSError):  # a store that cannot be written is skipped: the view still works
            if key is not None:
                self.store.put(key, png)

    # ---- serving the front end: one worker thread, the asked-for frames first ----
    def _on_msg(self, _widget, content, _buffers):
        """{type: "want", now: [states], ahead: [states]}: replaces what was queued before."""
        if not isinstance(content, dict) or content.get("type") != "want":
            return
        n = len(self._states)
        queue = [(s, False) for s in content.get("now", [])] + [(s, True) for s in content.get("ahead", [])]
        with self._queued:  # the frame being drawn now is sent when done: not queued again
            self._queue = [(s, a) for s, a in queue if type(s) is int and 0 <= s < n and s != self._drawing]
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._serve, name="SliderView frames", daemon=True)
                self._worker.start()
            self._queued.notify()

    def _serve(self):
        while True:
            with self._queued:
                self._queued.wait_for(lambda: self._queue or self.comm is None)
                if self.comm is None:  # the view was closed
                    return
                self._drawing, ahead = self._queue.pop(0)
            state = self._drawing
            try:
                png = self.render(self._states[state], ahead=ahead, idle=RENDER_LOCK.idle)
                message, buffers = {"type": "frame", "state": state}, [png]
            except Exception as err:  # noqa: BLE001 - the reader sees what went wrong; the worker goes on
                text = f"This state could not be drawn: {err!r}"
                message, buffers = {"type": "error", "state": state, "text": text}, []
            with self._queued:
                self._drawing = None
            with contextlib.suppress(Exception):  # a view closed meanwhile: nothing to send to
                self.send(message, buffers=buffers or None)

    @traitlets.validate("state")
    def _valid_state(self, proposal):
        n = len(self._states)
        if not 0 <= proposal["value"] < n:
            raise traitlets.TraitError(f"state must index the view's {n} states (0..{n - 1}); got {proposal['value']}")
        return proposal["value"]

    def close(self):
        super().close()
        if hasattr(self, "_queued"):  # not when __init__ raised before making it
            with self._queued:
                self._queued.notify()

    # ---- drawing one state at the reference layout ----
    def _new_figure(self, values: dict, reuse=True):
        """A Figure showing ``values``: the view's one Figure updated in place if it has ``update``, else a new one."""
        if not reuse or self.update_figure is None:
            return self.draw(**values)
        if self._spare is None:
            self._spare = self.draw(**values)
        else:
            self.update_figure(self._spare, **values)
        return self._spare

    def _draw_and_render(self, values: dict, reuse=True):
        """(closed Figure, PNG) of ``values``: at the reference layout when its text fits there, else laid out anew.

        The first call lays out the reference state (constrained layout) and keeps its axes positions
        and how far each axes' text reaches beyond it. A state is then drawn at those positions; if any
        of its text reaches further than the reference's did (wider tick labels, a longer label), the
        sides of those axes move in by the excess and the same Figure is drawn once more (no second
        ``draw`` call, no layout pass). Only if that still does not fit (text that belongs to no axes
        leaving the figure, say) is the state drawn again with its own constrained layout. Each way the
        result depends on ``values`` alone. The constrained-layout fallback always draws a new Figure,
        so the kept one (``update``) stays at the reference layout. Caller holds ``RENDER_LOCK``.
        """
        if self._layout is None:
            ref = self.draw(**self._reference)
            png, texts = _png(ref, record_text=True)
            self._layout = _measure_layout(ref, texts)
            plt.close(ref)
            if _key(values) == _key(self._reference):
                return ref, png
        fig = self._new_figure(values, reuse)
        if fig is self._spare and len(fig.axes) != len(self._layout["axes"]):
            self._spare = None  # an update that added or removed axes: draw this state anew
            fig = self.draw(**values)
        if _apply_layout(fig, self._layout):
            canvas, texts = _agg_draw(fig, record_text=True)
            fits = _text_fits(fig, texts, self._layout)
            room = None if fits else _make_room(fig, texts, self._layout)
            if room is not None:
                canvas, texts = _agg_draw(fig, record_text=True)
                fits = _text_fits(fig, texts, room)
            plt.close(fig)
            if fits:
                return fig, _encode(canvas)
            fig = self.draw(**values)
        png = _png(fig)
        plt.close(fig)
        return fig, png


def _measure_layout(fig, texts) -> dict:
    """Where constrained layout put ``fig``'s axes (colour bars included) and super-titles, and how
    far (pixels) the drawn ``texts`` of each axes reach beyond it on each side. ``fig`` has been drawn."""
    return {
        "axes": [ax.get_position(original=True).frozen() for ax in fig.axes],
        "reach": _text_reach(fig, texts),
        "texts": {name: getattr(fig, name).get_position() for name in ("_suptitle", "_supxlabel", "_supylabel")
                  if getattr(fig, name, None) is not None},
    }


def _text_reach(fig, texts) -> list:
    """Per axes of ``fig``: (left, bottom, right, top) pixels its drawn texts reach beyond its frame."""
    import numpy as np

    renderer = fig.canvas.get_renderer()
    reach = [[0.0, 0.0, 0.0, 0.0] for _ in fig.axes]
    index = {}  # id(Text) -> index of its axes (axis labels and tick labels do not set .axes)
    for i, ax in enumerate(fig.axes):
        for axis in ax._axis_map.values():
            index[id(axis.label)] = index[id(axis.offsetText)] = i
            for tick in (*axis.majorTicks, *axis.minorTicks):
                index[id(tick.label1)] = index[id(tick.label2)] = i
    axes_index = {id(ax): i for i, ax in enumerate(fig.axes)}
    for text in texts:
        i = index.get(id(text), axes_index.get(id(text.axes)))
        if i is None:
            continue
        box, frame = text.get_window_extent(renderer), fig.axes[i].get_window_extent(renderer)
        out = (frame.x0 - box.x0, frame.y0 - box.y0, box.x1 - frame.x1, box.y1 - frame.y1)
        reach[i] = list(np.maximum(reach[i], out))
    return reach


def _text_fits(fig, texts, layout, tol_px=0.5) -> bool:
    """True if no text of ``fig`` reaches beyond its axes further than in the reference, nor leaves the figure."""
    renderer = fig.canvas.get_renderer()
    width, height = renderer.width, renderer.height
    for text in texts:
        box = text.get_window_extent(renderer)
        if box.x0 < -tol_px or box.y0 < -tol_px or box.x1 > width + tol_px or box.y1 > height + tol_px:
            return False
    for now, ref in zip(_text_reach(fig, texts), layout["reach"], strict=True):
        if any(n > r + tol_px for n, r in zip(now, ref, strict=True)):
            return False
    return True


def _make_room(fig, texts, layout: dict):
    """Move the sides of ``fig``'s axes in by how far their drawn ``texts`` reach beyond the reference's.

    ``fig`` is at the reference layout (``_apply_layout``) and has been drawn. Returns the layout
    the moved figure must fit (the reference's reach plus each move), or None when moving axes
    cannot help: nothing reaches further than the reference (so some other text left the figure).
    """
    width, height = fig.canvas.get_renderer().width, fig.canvas.get_renderer().height
    axes, reach, moved = [], [], False
    for ax, pos, now, ref in zip(fig.axes, layout["axes"], _text_reach(fig, texts), layout["reach"], strict=True):
        left, bottom, right, top = (max(0.0, float(n) - float(r)) for n, r in zip(now, ref, strict=True))
        moved = moved or left + bottom + right + top > 0.5
        x0, y0 = pos.x0 + left / width, pos.y0 + bottom / height
        x1, y1 = pos.x1 - right / width, pos.y1 - top / height
        if x1 <= x0 or y1 <= y0:
            return None
        box = type(pos).from_extents(x0, y0, x1, y1)
        ax.set_position(box, which="both")
        axes.append(box)
        reach.append([float(r) + e for r, e in zip(ref, (left, bottom, right, top), strict=True)])
    return {**layout, "axes": axes, "reach": reach} if moved else None


def _apply_layout(fig, layout: dict) -> bool:
    """Turn ``fig``'s layout engine off and put its axes and super-titles where ``layout`` says.

    Returns False (and changes nothing) if ``fig``'s axes do not match the measured ones.
    """
    if len(fig.axes) != len(layout["axes"]):
        return False
    fig.set_layout_engine("none")
    for ax, pos in zip(fig.axes, layout["axes"], strict=True):
        ax.set_position(pos, which="both")
    for name, xy in layout["texts"].items():
        if getattr(fig, name, None) is not None:
            getattr(fig, name).set_position(xy)
    return True


def _png(fig, record_text=False):
    """``fig`` as a 256-colour PNG: a third of the bytes of the RGBA one for these flat-coloured
    plots (less to send and decode on each move), same look (max channel error measured in the tests).

    One Agg pass into memory (the pixels ``savefig(format="png")`` would write, without encoding
    and decoding an RGBA PNG on the way), then quantised and written at zlib level 6.
    With ``record_text``, returns (PNG, the Text artists drawn).
    """
    canvas, texts = _agg_draw(fig, record_text)
    return (_encode(canvas), texts) if record_text else _encode(canvas)


def _agg_draw(fig, record_text=False):
    """Draw ``fig`` once on an Agg canvas; returns (canvas, the Text artists drawn if ``record_text``).

    Holds ``RENDER_LOCK`` (re-entrant), whose Agg renderers (one per canvas size) serve one draw at a time."""
    with RENDER_LOCK():
        return _agg_draw_locked(fig, record_text, RENDER_LOCK.renderers)


def _agg_draw_locked(fig, record_text, renderers):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    size = (*canvas.get_width_height(physical=True), fig.dpi)
    if size in renderers:
        renderers.move_to_end(size)
        canvas.renderer, canvas._lastKey = renderers[size], size  # what get_renderer() checks to reuse it
    else:
        renderers[size] = canvas.get_renderer()
        if len(renderers) > 8:
            renderers.popitem(last=False)
    texts = []
    if record_text:
        renderer = canvas.get_renderer()  # the one draw() reuses (same size and dpi)
        draw_text = renderer.draw_text

        def recording(gc, x, y, s, prop, angle, ismath=False, mtext=None):
            if mtext is not None:
                texts.append(mtext)
            return draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

        renderer.draw_text = recording
        try:
            canvas.draw()
        finally:
            del renderer.draw_text  # a shared renderer must not keep this render's recorder
    else:
        canvas.draw()
    return canvas, texts


def _encode(canvas) -> bytes:
    """The canvas's pixels as a 256-colour PNG, zlib level 6 (level 1 saves ~1.5 ms a render but makes
    the static site 18 MB, over its 15 MB budget)."""
    import numpy as np
    from PIL import Image

    rgba = np.asarray(canvas.buffer_rgba())
    paletted = Image.fromarray(rgba, "RGBA").convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE)
    out = io.BytesIO()
    paletted.save(out, format="png", compress_level=6)
    return out.getvalue()


def _key(values: dict) -> tuple:
    """Cache key of a state; floats rounded so 0.1 + 0.2 and 0.3 name the same state."""
    return tuple((name, round(v, 9) if isinstance(v, float) else v) for name, v in values.items())


def slider_view(draw, update=None, reference=None, store="default", **sliders) -> SliderView:
    """A ``SliderView`` of ``draw(**values) -> Figure`` over the named sliders' grids (``int_slider``, ...).

    update : optional ``update(fig, **values)`` that changes a Figure ``draw`` made in place to show
    ``values`` with the same pixels as a new ``draw(**values)`` (faster for figures with many ticks).
    reference : optional slider values whose constrained layout every state is drawn at (default: the
    sliders' initial values). Give the state with the widest tick labels, and every state fits in one pass.
    store : a ``frames.FrameStore`` whose frames (keyed by ``frames.frame_key``) are shown without drawing
    and which keeps what is drawn; None for none; "default": the folder in env ATTNLIB_FRAMES, if set.
    """
    return SliderView(draw, sliders, update=update, reference=reference, store=store)


# ---- text that follows JupyterLab's content font size (Presentation Mode enlarges it) ----------
# ipywidgets draws its text at var(--jp-widgets-font-size) (13 px, JupyterLab's UI size), which
# Presentation Mode leaves alone while prose grows to 17 px. A box given SCALES_CLASS redefines that
# variable (and the control height) from --jp-content-font-size1 for everything inside it; the rule
# comes with the box as a one-line <style> (an HTML widget), so no front-end extension is needed.
SCALES_CLASS = "attnlib-scales"
_SCALES_CSS = (f"<style>.{SCALES_CLASS} {{ --jp-widgets-font-size: var(--jp-content-font-size1, 14px); "
               "--jp-widgets-inline-height: calc(2 * var(--jp-content-font-size1, 14px)); }</style>")


def follow_content_font(box: widgets.Box) -> widgets.Box:
    """Make the text of every widget inside ``box`` follow JupyterLab's content font size; returns ``box``."""
    if not isinstance(box, widgets.Box):
        raise TypeError(f"box must be an ipywidgets Box (VBox, HBox, ...); got {type(box).__name__}")
    box.add_class(SCALES_CLASS)
    style = widgets.HTML(_SCALES_CSS, layout=widgets.Layout(display="none"))
    box.children = (*box.children, style)
    return box


# ---- self-checks --------------------------------------------------------------------------------
_NUMBER = re.compile(r"^\s*([-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?)\s*(/\s*([-+]?\d+(\.\d*)?)\s*)?$")
_THOUSANDS = re.compile(r"^[-+]?[1-9]\d{0,2}(,\d{3})+(\.\d*)?$")  # a leading 0 never groups thousands
_AMBIGUOUS = re.compile(r"^[-+]?[1-9]\d{0,2},\d{3}$")  # "1,000": one thousand, or 1.000?


def _point_decimals(s: str):
    """``s`` with decimal commas made points and thousands commas dropped; None if it cannot tell.

    "0,6285" -> "0.6285" (a single comma is a decimal comma); "12,345,678" and "1,234.5" -> thousands
    (groups of three after 1-3 digits that do not start with 0); "1,000" (one such group and no point)
    is ambiguous -> None.
    """
    if "," not in s:
        return s
    if _THOUSANDS.match(s):
        if "." not in s and _AMBIGUOUS.match(s):
            return None
        return s.replace(",", "")
    if s.count(",") == 1 and "." not in s:
        return s.replace(",", ".")
    return None


def parse_number(text: str):
    """Parse what a reader typed: '0.25', '0,25', '1e-3', '1/8', '12.5%', '−3'. Returns float or None.

    A single comma is a decimal comma ('0,6285' is 0.6285); commas that group thousands are dropped
    ('12,345,678', '1,234.5'); '1,000' could be either and is refused (None), like any text that is not
    a number. Nothing is evaluated as code. The site's course.js parseNumber follows the same steps.
    """
    s = str(text).strip().replace("\u2212", "-")
    percent = s.endswith("%")
    if percent:
        s = s[:-1].rstrip()
    s = _point_decimals(s)
    if s is None:
        return None
    m = _NUMBER.match(s)
    if not m:
        return None
    value = float(m.group(1))
    if m.group(6) is not None:
        den = float(m.group(6))
        if den == 0:
            return None
        value = float(Fraction(m.group(1)) / Fraction(m.group(6)))
    return value / 100 if percent else value


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def accepted_range(answer: float, sig_figs=None, decimals=None, rel_tol=None, abs_tol=None) -> tuple:
    """(low, high, precision sentence): the one grading rule of every numeric self-check.

    With ``sig_figs`` or ``decimals``, a typed number is right when it rounds to the answer at that
    precision: it lies within half a unit of the last stated place of the rounded answer (both ends
    included, so a tie counts either way, and a more precise right value is right too). With neither,
    the exact value is asked for (a fraction such as 1/8 is fine). ``rel_tol`` / ``abs_tol`` (older
    calls) accept a band around the answer, which the sentence states. The ends are widened by 1e-9
    relative so that floating-point reading of the typed text never decides.
    """
    given = [name for name, v in (("sig_figs", sig_figs), ("decimals", decimals)) if v is not None]
    if len(given) > 1 or (given and (rel_tol or abs_tol)):
        raise ValueError("give one precision: sig_figs, decimals, or rel_tol/abs_tol (got "
                         + ", ".join(given + [n for n, v in (("rel_tol", rel_tol), ("abs_tol", abs_tol)) if v]) + ")")
    if sig_figs is not None:
        if int(sig_figs) != sig_figs or sig_figs < 1:
            raise ValueError(f"sig_figs must be a whole number >= 1; got {sig_figs!r}")
        text = f"{answer:.{int(sig_figs) - 1}e}"
        rounded, unit = float(text), 10.0 ** (int(text.split("e")[1]) - int(sig_figs) + 1)
        low, high = rounded - unit / 2, rounded + unit / 2
        says = f"Give it to {_plural(int(sig_figs), 'significant figure')}."
    elif decimals is not None:
        if int(decimals) != decimals or decimals < 0:
            raise ValueError(f"decimals must be a whole number >= 0; got {decimals!r}")
        rounded, unit = round(answer, int(decimals)), 10.0 ** -int(decimals)
        low, high = rounded - unit / 2, rounded + unit / 2
        places = _plural(int(decimals), "decimal place")
        says = "Give it as a whole number." if decimals == 0 else f"Give it to {places}."
    elif rel_tol or abs_tol:
        if (rel_tol or 0) < 0 or (abs_tol or 0) < 0:
            raise ValueError(f"rel_tol and abs_tol must be >= 0; got {rel_tol!r}, {abs_tol!r}")
        tol = max(abs_tol or 0.0, (rel_tol or 0.0) * abs(answer))
        low, high = answer - tol, answer + tol
        says = (f"Answers within {format((rel_tol or 0) * 100, '.3g')} % of it are accepted." if tol != (abs_tol or 0)
                else f"Answers within ±{format(abs_tol, '.3g')} of it are accepted.")
    else:
        low = high = answer
        says = "Give the exact value (a fraction such as 1/8 is fine)."
    slack = 1e-9 * max(abs(low), abs(high), 1e-300)
    return low - slack, high + slack, says


# A drawn tick / cross (SVG, not an emoji: no emoji font needed), with the verdict word beside it.
# Colours: dark green / dark vermillion text on a pale tint of the same hue (contrast > 7:1), set inline
# so the live widget and the site look the same whatever the page's theme.
_TICK = ('<svg class="check-mark" width="1.15em" height="1.15em" viewBox="0 0 16 16" aria-hidden="true" '
         'focusable="false" style="flex:none;margin-top:0.15em"><circle cx="8" cy="8" r="8" fill="#00603F"/>'
         '<path d="M4.3 8.4l2.5 2.5 4.9-5.3" fill="none" stroke="#fff" stroke-width="2" stroke-linecap="round" '
         'stroke-linejoin="round"/></svg>')
_CROSS = ('<svg class="check-mark" width="1.15em" height="1.15em" viewBox="0 0 16 16" aria-hidden="true" '
          'focusable="false" style="flex:none;margin-top:0.15em"><rect width="16" height="16" rx="3" fill="#9A3A00"/>'
          '<path d="M5 5l6 6M11 5l-6 6" stroke="#fff" stroke-width="2" stroke-linecap="round"/></svg>')
_BOX = ('<div class="check-verdict check-{kind}" style="display:flex;gap:0.5em;align-items:flex-start;'
        'padding:0.35em 0.6em;border-radius:4px;border:1px solid {edge};background:{tint};color:{ink}">'
        '{mark}<div>{body}</div></div>')
VERDICT_RIGHT = _BOX.format(kind="right", edge="#00603F", tint="#E6F4EE", ink="#00432C", mark=_TICK,
                            body="<b>Correct.</b> {explanation}")
VERDICT_WRONG = _BOX.format(kind="wrong", edge="#9A3A00", tint="#FCEDE4", ink="#6E2900", mark=_CROSS,
                            body="<b>Not quite.</b> {explanation}")
PLACEHOLDER = "a number, e.g. 0.25, 0,25 or 1/8"


class NumericCheck(widgets.VBox):
    """Type a number, press Check (or Enter): "Correct." with the explanation, or "Not quite." with a hint.

    The precision asked for is stated under the question; see ``accepted_range`` for the rule.
    """

    # Feedback (HTML), filled in with str.format; the static site's script uses the same strings.
    UNREADABLE = ("Please type a plain number such as 0.25, 0,25, 1/8, 12.5% or 2e-3 "
                  "(for a thousand, type 1000, not 1,000).")
    RIGHT = VERDICT_RIGHT
    WRONG = VERDICT_WRONG.replace("{explanation}", "We read your answer as {value}. {hint}")

    def __init__(self, question, answer, rel_tol=None, abs_tol=None, hint="", explanation="", *,
                 sig_figs=None, decimals=None):
        self.question = question
        try:
            self.answer = float(answer)
        except (TypeError, ValueError):
            raise TypeError(f"answer must be a number; got {answer!r}") from None
        self.rel_tol, self.abs_tol, self.sig_figs, self.decimals = rel_tol, abs_tol, sig_figs, decimals
        self.low, self.high, self.precision = accepted_range(self.answer, sig_figs, decimals, rel_tol, abs_tol)
        self.hint, self.explanation = hint, explanation
        # continuous_update=False: the value arrives on Enter (or leaving the box), which grades it
        self.box = widgets.Text(placeholder=PLACEHOLDER, description="answer:", continuous_update=False,
                                layout=widgets.Layout(width="24em", max_width="100%"))
        self.button = widgets.Button(description="Check", button_style="info")
        self.feedback = widgets.HTML()
        self.button.on_click(lambda _: self.check())
        self.box.observe(lambda _: self.check(), names="value")
        super().__init__([widgets.HTML(f"<b>Self-check.</b> {question} <i>{self.precision}</i>"),
                          widgets.HBox([self.box, self.button]), self.feedback])
        follow_content_font(self)

    @classmethod
    def from_definition(cls, d: dict) -> NumericCheck:
        """The check ``definition()`` describes."""
        return cls(d["question"], d["answer"], d["rel_tol"], d["abs_tol"], d["hint"], d["explanation"],
                   sig_figs=d["sig_figs"], decimals=d["decimals"])

    def grade(self, text) -> bool | None:
        """True / False for ``text``, None if it is not a number (no widget change)."""
        value = parse_number(text)
        return None if value is None else self.low <= value <= self.high

    def check(self, text=None) -> bool | None:
        """Grade ``text`` (default: what is in the box); returns True, False, or None if unreadable."""
        if text is not None and text != self.box.value:
            self.box.value = text  # the observer grades it; grade again below for the return value
        value = parse_number(self.box.value)
        if value is None:
            self.feedback.value = self.UNREADABLE
            return None
        ok = self.low <= value <= self.high
        if ok:
            self.feedback.value = self.RIGHT.format(explanation=self.explanation)
        else:
            hint = f"Hint: {self.hint}" if self.hint else ""
            self.feedback.value = self.WRONG.format(value=f"{value:.4g}", hint=hint)
        return ok

    def definition(self) -> dict:
        """Everything that grades this check, as data (the static site grades in JavaScript from it)."""
        return {"kind": "numeric", "question": self.question, "answer": self.answer, "rel_tol": self.rel_tol,
                "abs_tol": self.abs_tol, "sig_figs": self.sig_figs, "decimals": self.decimals,
                "low": self.low, "high": self.high, "precision": self.precision, "placeholder": PLACEHOLDER,
                "hint": self.hint, "explanation": self.explanation,
                "number_pattern": _NUMBER.pattern, "messages": {"unreadable": self.UNREADABLE,
                                                                "right": self.RIGHT, "wrong": self.WRONG}}


def numeric_check(question, answer, rel_tol=None, abs_tol=None, hint="", explanation="", *,
                  sig_figs=None, decimals=None) -> NumericCheck:
    """Self-check widget for a numeric answer (typed text is parsed, never evaluated).

    Give the precision asked for: ``sig_figs=3`` (anything that rounds to the answer's 3 significant
    figures is right), ``decimals=2``, or nothing for the exact value; the widget states it to the
    reader. ``rel_tol`` / ``abs_tol`` (a band, also stated) remain for older calls.
    """
    return NumericCheck(question, answer, rel_tol, abs_tol, hint, explanation, sig_figs=sig_figs, decimals=decimals)


class ChoiceCheck(widgets.VBox):
    """Multiple choice: "Correct." or "Not quite." followed by the chosen option's own feedback."""

    # Feedback (HTML), filled in with str.format; the static site uses these too.
    UNCHOSEN = "Pick an option first."
    RIGHT = VERDICT_RIGHT.replace("{explanation}", "{feedback}")
    WRONG = VERDICT_WRONG.replace("{explanation}", "{feedback}")

    def __init__(self, question, options, correct, feedback=None):
        if not 0 <= correct < len(options):
            raise ValueError(f"correct must index options (0..{len(options) - 1}); got {correct}")
        if feedback is not None and len(feedback) != len(options):
            raise ValueError(f"feedback must have one entry per option ({len(options)}); got {len(feedback)}")
        self.question = question
        self.options, self.correct = list(options), correct
        self.option_feedback = list(feedback) if feedback else [""] * len(options)
        self.choice = widgets.RadioButtons(options=self.options, value=None, layout=widgets.Layout(width="auto"))
        self.button = widgets.Button(description="Check", button_style="info")
        self.feedback = widgets.HTML()
        self.button.on_click(lambda _: self.check())
        super().__init__([widgets.HTML(f"<b>Self-check.</b> {question}"), self.choice, self.button, self.feedback])
        follow_content_font(self)

    @classmethod
    def from_definition(cls, d: dict) -> ChoiceCheck:
        """The check ``definition()`` describes."""
        return cls(d["question"], d["options"], d["correct"], d["feedback"])

    def check(self, index=None) -> bool | None:
        """Grade the chosen option (or ``index``); returns True/False, None if nothing chosen."""
        if index is not None:
            self.choice.value = self.options[index]
        if self.choice.value is None:
            self.feedback.value = self.UNCHOSEN
            return None
        i = self.options.index(self.choice.value)
        ok = i == self.correct
        self.feedback.value = (self.RIGHT if ok else self.WRONG).format(feedback=self.option_feedback[i])
        return ok

    def definition(self) -> dict:
        """Everything that grades this check, as data (the static site grades in JavaScript from it)."""
        return {"kind": "choice", "question": self.question, "options": self.options, "correct": self.correct,
                "feedback": self.option_feedback,
                "messages": {"unchosen": self.UNCHOSEN, "right": self.RIGHT, "wrong": self.WRONG}}


def choice_check(question, options, correct, feedback=None) -> ChoiceCheck:
    """Self-check widget for a multiple-choice question, with feedback per option."""
    return ChoiceCheck(question, options, correct, feedback)


# ---------------------------------------------------------------------------
# Lessons 00-03 (intuition, variance derivation, worked example)
# ---------------------------------------------------------------------------


def dot_product_view(samples, row_logits, d_k=None) -> SliderView:
    """Lesson 01: a d_k slider over precomputed q·k samples ({d_k: (n,)}) and rows ({d_k: (S,)})."""
    import numpy as np

    from . import plots

    d_ks = sorted(samples)
    raw_lim = 4.0 * float(np.sqrt(max(d_ks)))

    def draw(d_k):
        return plots.dot_product_panel(samples[d_k], d_k, row_logits[d_k], raw_lim=raw_lim)

    return slider_view(draw, d_k=options_slider("d_k", d_ks, d_k if d_k is not None else d_ks[len(d_ks) // 2]))


def sigma_view(standard_samples, sigma_max=3.0, lim=12.0) -> SliderView:
    """Lesson 02: sliders d_k, σ_q, σ_k over samples of a·b for unit-variance a, b ({d_k: (n,)}).

    With zero means, q·k = σ_q σ_k (a·b) exactly, so a move only rescales stored samples.
    lim : fixed half-width of the x axis, so widths compare across slider moves.
    """

    from . import plots

    d_ks = sorted(standard_samples)

    def draw(d_k, sigma_q, sigma_k):
        sample = sigma_q * sigma_k * standard_samples[d_k]
        return plots.scaled_logit_density(sample, d_k, sigma_q, sigma_k, lim=lim, bins=96)

    return slider_view(
        draw,
        d_k=options_slider("d_k", d_ks, d_ks[len(d_ks) // 2]),
        sigma_q=float_slider("σ_q", 0.25, sigma_max, 1.0, step=0.25),
        sigma_k=float_slider("σ_k", 0.25, sigma_max, 1.0, step=0.25),
    )


def temperature_view(logits, temps, probs, entropy, value=8.0) -> SliderView:
    """Lessons 03, 05: a temperature slider over softmax(logits / T) precomputed on the grid ``temps``."""
    import numpy as np

    from . import plots

    temps = np.asarray(temps, dtype=float)
    step = float(np.min(np.diff(temps))) if temps.size > 1 else 1.0

    def draw(temperature):
        return plots.temperature_panel(logits, temps, probs, entropy, temperature)

    def update(fig, temperature):
        return plots.update_temperature_panel(fig, logits, temps, probs, entropy, temperature)

    slider = float_slider("temperature T", float(temps[0]), float(temps[-1]), value, step=step)
    return slider_view(draw, update=update, temperature=slider)


def at_scale_view(raw, d_k=None) -> SliderView:
    """Lesson 03: a d_k slider over precomputed (unscaled, scaled) row statistics ({d_k: (dict, dict)})."""

    from . import plots

    d_ks = sorted(raw)

    def draw(d_k):
        return plots.at_scale_histograms(*raw[d_k], d_k)

    return slider_view(draw, d_k=options_slider("d_k", d_ks, d_k if d_k is not None else d_ks[len(d_ks) // 2]))



# ---------------------------------------------------------------------------
# Lessons 04-06 (multi-head and init, tradeoffs, interview questions)
# ---------------------------------------------------------------------------


def heads_view(records: dict) -> SliderView:
    """Slider over the number of heads at fixed d_model (lesson 04).

    records : {num_heads: record for ``plots.heads_figure``}, computed before the widget.
    """
    from .plots import heads_figure

    keys = sorted(records)
    return slider_view(lambda num_heads: heads_figure(records[num_heads]),
                       num_heads=options_slider("number of heads h", keys, keys[len(keys) // 2]))


def alpha_view(d_ks, dots_independent, dots_correlated, alphas=(0.0, 0.25, 0.5, 0.75, 1.0),
               ylim=None) -> SliderView:
    """Slider over α in q·k / d_k^α, drawn from dot products sampled beforehand (lesson 05)."""
    from .plots import alpha_panel

    alphas = list(alphas)
    # laid out at the largest α, whose y tick labels are the widest (decimals): every α then renders in one pass
    return slider_view(lambda alpha: alpha_panel(d_ks, dots_independent, dots_correlated, alpha, ylim=ylim),
                       reference={"alpha": alphas[-1]}, alpha=options_slider("exponent α", alphas, 0.5))





# ---------------------------------------------------------------------------
# Lessons 07-08 (training run, pretrained model)
# ---------------------------------------------------------------------------
# lesson 08


def minilm_layer_view(stats, var_ylim=None, variance="pairs"):
    """Slider over MiniLM's layers redrawing ``plots.layer_profile`` from precomputed head statistics.

    variance : "pairs" or "row", passed on to ``plots.layer_profile``.
    """
    from . import plots

    n_layers = int(stats["var_logit"].shape[0])
    kw = {"var_ylim": var_ylim, "variance": variance}
    update = (lambda fig, layer: plots.update_layer_profile(fig, stats, layer, **kw)) if var_ylim else None
    return slider_view(lambda layer: plots.layer_profile(stats, layer, **kw), update=update,
                       layer=int_slider("layer", 1, n_layers, 1))


# lesson 07


def training_browser(steps, curves, scalings, d_ks, lrs, uniform_entropy=None) -> SliderView:
    """Sliders over d_k and learning rate that show one slice of a precomputed sweep (lesson 07).

    curves : (n_scalings, n_d_k, n_lr, 4, T) from ``attnlib.train.sweep`` (averaged over seeds).
    """
    from . import plots

    d_ks, lrs = list(d_ks), list(lrs)

    def shown(d_k, lr):  # the arguments both draw and update pass on for one state
        return {"steps": steps, "curves": curves[:, d_ks.index(d_k), lrs.index(lr)], "scalings": scalings,
                "title": f"d_k = {d_k}, learning rate = {lr:g}", "uniform_entropy": uniform_entropy}

    def draw(d_k, lr):
        return plots.training_curves(**shown(d_k, lr))

    def update(fig, d_k, lr):
        return plots.update_training_curves(fig, **shown(d_k, lr))

    return slider_view(draw, update=update, d_k=options_slider("d_k", d_ks), lr=options_slider("learning rate", lrs))


# ---------------------------------------------------------------------------
# Lesson 10 (what today's models do to the logit)
# ---------------------------------------------------------------------------


def gain_view(gains, entropy, entropy_se, uniform, top_weights, d, value=1.0) -> SliderView:
    """Lesson 10: a QK-norm gain slider over ``plots.gain_panel``; the slider offers the gains in
    ``top_weights`` (a subset of the curve's grid ``gains``)."""
    from . import plots

    def draw(g):
        return plots.gain_panel(gains, entropy, entropy_se, uniform, top_weights, g, d)

    return slider_view(draw, g=options_slider("QK-norm gain g", sorted(float(g) for g in top_weights), float(value)))


def softcap_view(logits, caps, value=50.0, span=None) -> SliderView:
    """Lesson 10: a soft-cap slider over ``plots.softcap_panel`` for one row of logits."""
    from . import plots

    def draw(cap):
        return plots.softcap_panel(logits, cap, span=span)

    return slider_view(draw, cap=options_slider("soft-cap c", [float(c) for c in caps], float(value)))


def sink_view(logits, b_grid, mass_curves, options=None, value=0.0) -> SliderView:
    """Lesson 10: a sink-logit slider over ``plots.sink_panel`` (mass curves precomputed on ``b_grid``;
    the slider offers ``options``, default every value of ``b_grid``)."""
    from . import plots

    def draw(b):
        return plots.sink_panel(logits, b, b_grid, mass_curves)

    values = b_grid if options is None else options
    return slider_view(draw, b=options_slider("sink logit b", [float(b) for b in values], float(value)))


def context_view(positions, factors, n_grid, top_mean, top_se, lead=8.0, low=None, options=None,
                 value=None) -> SliderView:
    """Lesson 10: a context-length slider over ``plots.context_panel`` (top weights precomputed on
    ``n_grid``; the slider offers ``options``, default every length of ``n_grid``)."""
    from . import plots

    values = [int(n) for n in (n_grid if options is None else options)]
    labelled = [(f"2^{int(round(math.log2(n)))}", n) for n in values]

    def draw(n):
        return plots.context_panel(n, positions, factors, n_grid, top_mean, top_se, lead=lead, low=low)

    start = int(value if value is not None else values[len(values) // 2])
    return slider_view(draw, n=options_slider("context length n", labelled, start))

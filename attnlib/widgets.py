"""Slider wiring and self-check quizzes (ipywidgets).

Widgets here only connect controls to plotting functions from ``attnlib.plots`` that
draw from data computed beforehand: no Monte Carlo runs on a slider move. Each view
object exposes ``update()`` so tests can drive it without a browser.

Sections below belong to lesson groups; keep additions inside your section.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import math
import re
import threading
import time
import weakref
from collections import OrderedDict
from fractions import Fraction

import ipywidgets as widgets
import matplotlib.pyplot as plt
from IPython.display import Image, display

__all__ = ["slider_view", "int_slider", "float_slider", "numeric_check", "choice_check", "parse_number",
           "follow_content_font"]


def int_slider(description, min, max, value, step=1, unit=""):
    """A labelled IntSlider that redraws on release (no queue of redraws while dragging)."""
    return widgets.IntSlider(
        value=value, min=min, max=max, step=step, description=f"{description}{f' ({unit})' if unit else ''}",
        continuous_update=False, style={"description_width": "initial"}, layout=widgets.Layout(width="520px"),
    )


def float_slider(description, min, max, value, step=0.1, unit="", readout_format=".2f"):
    """A labelled FloatSlider that redraws on release."""
    return widgets.FloatSlider(
        value=value, min=min, max=max, step=step, description=f"{description}{f' ({unit})' if unit else ''}",
        continuous_update=False, readout_format=readout_format, style={"description_width": "initial"},
        layout=widgets.Layout(width="520px"),
    )


def options_slider(description, options, value=None):
    """A SelectionSlider over a fixed list of values (e.g. d_k in powers of two)."""
    return widgets.SelectionSlider(
        options=list(options), value=value if value is not None else list(options)[0], description=description,
        continuous_update=False, style={"description_width": "initial"}, layout=widgets.Layout(width="520px"),
    )


# Prefetching waits until the kernel has been quiet this long: no cell run and no slider
# move (in any view). Rendering ahead never delays a cell (nbval, Run All) or a run of key
# presses; a press after a pause waits at most for the one render in progress.
QUIET_S = 0.4
# After QUIET_S: the states further along the reader's last move, then the one-step
# neighbours of every view's current state (what a first press or a press on another view
# asks for). The other nearby states of the view just moved come only after this longer
# pause, so a reader sweeping one way at a steady pace rarely presses while one of those
# guesses is being rendered.
QUIET_OTHERS_S = 2.0
# A cell that has just finished asks for less: under Run All the next queued cell starts within
# milliseconds, so this pause is never seen between two cells, and a first press comes sooner
# after Run All than a second press after a first.
QUIET_AFTER_CELL_S = 0.25
# time.monotonic() of the last cell run or slider move in this kernel, and the pause it asks for
# before the states due "after QUIET_S" are rendered
_last_activity = [0.0, QUIET_S]
_hooked_shells = set()  # id() of each IPython shell whose cell runs already count as activity
_cell_running = [False]  # a cell is running now (between IPython's pre_run_cell and post_run_cell)
# JupyterLab (4.4 and later, with a kernel that has subshells: ipykernel 7) sends widget messages on a
# kernel *subshell*, a thread of its own: a slider move is handled while the main thread runs a cell or
# renders ahead. Every render takes this lock, so two threads never draw at once (matplotlib is not
# thread-safe, and a view's cache, kept Figure and the shared Agg renderers are one each). A move that
# arrives during a prefetch render waits for that one render, as it did when both shared one thread.
_RENDER_LOCK = threading.RLock()
_CHAIN_LOCK = threading.Lock()  # guards ``_chains`` and ``_wanted``, which both threads change
# A render ahead gives way to a move: while a move's render waits for the lock (``_wanted`` > 0), the render
# ahead in progress stops at its next drawing call (``_Superseded``), keeps nothing, and is tried again later.
_wanted = [0]  # renders asked for by a move (or a cell) that wait for or hold the lock
_ahead = [False]  # the render holding the lock is a render ahead


class _Superseded(Exception):
    """A render ahead stopped because a move's render is waiting."""


def _give_way():
    """Raise ``_Superseded`` if this is a render ahead and a move's render is waiting."""
    if _ahead[0] and _wanted[0]:
        raise _Superseded
_views = []  # weak references to the live SliderViews of this kernel, oldest first
_last_moved = [None]  # weak reference to the view whose slider moved last
_chains = set()  # event loops running a prefetch chain: one chain per loop, and in a kernel only its main loop


def _kernel_loop():
    """The asyncio loop of the kernel's main thread (where cells run), or None outside a running ipykernel.

    Prefetch chains run there, so a render ahead never holds up the widget subshell's thread (a move
    there can make it give way instead)."""
    try:
        from IPython import get_ipython

        loop = get_ipython().kernel.io_loop.asyncio_loop
    except Exception:  # not in a kernel (plain Python, tests), or a kernel without a tornado IOLoop
        return None
    return loop if loop.is_running() and not loop.is_closed() else None


def _note_activity(*_):
    _last_activity[:] = [time.monotonic(), QUIET_S]


def _note_cell_start(*_):
    _cell_running[0] = True
    _last_activity[:] = [time.monotonic(), QUIET_AFTER_CELL_S]


def _note_cell_run(*_):
    _cell_running[0] = False
    _last_activity[:] = [time.monotonic(), QUIET_AFTER_CELL_S]


def _count_cell_runs_as_activity():
    """Register (once per kernel) cell runs as activity, so prefetching stays out of their way."""
    from IPython import get_ipython

    shell = get_ipython()
    if shell is not None and id(shell) not in _hooked_shells:
        shell.events.register("pre_run_cell", _note_cell_start)
        shell.events.register("post_run_cell", _note_cell_run)
        _hooked_shells.add(id(shell))


def _live_views() -> list:
    """Views still alive and open (a closed widget's ``comm`` is None), oldest first."""
    views = [v for v in (r() for r in _views) if v is not None and getattr(v, "comm", None) is not None]
    _views[:] = [weakref.ref(v) for v in views]
    return views


def _prefetch_plan_all(steps: int) -> list:
    """(view, slider values, seconds of quiet needed) for every live view, in the order to render them.

    1. the view moved last: states further along its last move (after QUIET_S);
    2. every view: the states one key press away, "up" before "down" (after QUIET_S), except the
       view moved last, whose other guesses wait for QUIET_OTHERS_S;
    3. then the rest of each view's plan (further states), as ``SliderView._prefetch_plan`` orders it.
    """
    moved = _last_moved[0]() if _last_moved[0] is not None else None
    views = _live_views()
    first, near, rest = [], [], []
    if moved is not None and moved in views:
        plan = moved._prefetch_plan(steps)
        n_along = sum(1 for _, q in plan if q == QUIET_S)
        first = [(moved, v, q) for v, q in plan[:n_along]]
        rest += [(moved, v, q) for v, q in plan[n_along:]]
    for direction in (1, -1):
        for view in views:
            if view is moved:
                continue
            for name in view.sliders:
                value = _step(view.sliders[name], direction)
                if value is not None:
                    near.append((view, {**view.values(), name: value}, QUIET_S))
    for view in views:
        if view is not moved:
            rest += [(view, v, q) for v, q in view._prefetch_plan(steps)]
    return first + near + rest


def _schedule_prefetch():
    """Once the kernel is quiet, render the planned states not yet kept, one per loop turn.

    One chain per event loop: in a kernel, always the main thread's (``_kernel_loop``), whichever
    thread the move came on; elsewhere the loop of the thread that starts it. It runs between that
    loop's messages and waits while a cell runs (a chain beside an async cell). Renders take
    ``_RENDER_LOCK``. The plan is made again before each render, so a move (from any thread)
    reorders it at once. Outside a running event loop (plain Python, tests) it does nothing.
    """
    try:
        here = asyncio.get_running_loop()
    except RuntimeError:
        return
    loop = _kernel_loop() or here
    with _CHAIN_LOCK:
        if loop in _chains:
            return  # the running chain reads the new state itself
        _chains.difference_update([old for old in _chains if old.is_closed()])  # loops that ended mid-chain
        _chains.add(loop)
    failed = set()  # (view id, state key) whose draw raised: the real update shows the error

    def one_more():
        try:
            next_render()
        except Exception:  # never leave a dead chain marked as running
            _chains.discard(loop)
            raise

    def next_render():
        todo = ((view, values, quiet) for view, values, quiet in _prefetch_plan_all(SliderView.PREFETCH_STEPS)
                if _key(values) not in view._rendered and (id(view), _key(values)) not in failed)
        view, values, quiet = next(todo, (None, None, None))
        if view is None:
            _chains.discard(loop)  # the next move or new view starts a new chain
            return
        if _cell_running[0]:
            loop.call_later(QUIET_AFTER_CELL_S, one_more)
            return
        wait = _last_activity[0] + (_last_activity[1] if quiet == QUIET_S else quiet) - time.monotonic()
        if wait > 0:
            loop.call_later(wait, one_more)
            return
        try:
            view._render_ahead(values)
        except _Superseded:
            pass  # a move came: the plan is made again after the next quiet pause
        except Exception:
            failed.add((id(view), _key(values)))
        loop.call_later(0.01, one_more)

    if loop is here:
        loop.call_later(min(QUIET_S, QUIET_AFTER_CELL_S), one_more)
    else:  # started from another thread (a slider move on a widget subshell)
        loop.call_soon_threadsafe(loop.call_later, min(QUIET_S, QUIET_AFTER_CELL_S), one_more)


class SliderView(widgets.VBox):
    """Sliders above an Output area; ``draw(**values)`` must return a matplotlib Figure.

    ``draw`` must depend only on the slider values (it draws from data computed once),
    so each rendered state's PNG is kept: moving back to a state shows it at once.
    A state's PNG is a pure function of that state: the same values give the same bytes
    whatever was rendered before. Layout: the view's figure is laid out once, by its own
    constrained layout, at the values the sliders had when the view was built (its
    *reference state*); every state is then drawn at those frozen positions (axes, colour
    bars, suptitle), in one Agg pass without a layout pass, so panels stay put as the
    sliders move. When the kernel is quiet, states are rendered ahead (see
    ``_prefetch_plan_all``): further along the last move, then every view's one-step
    neighbours, after ``QUIET_S``; the other guesses after ``QUIET_OTHERS_S``. A render ahead
    gives way to a move's render (it stops and is tried again later). Slider moves may arrive on
    another thread (JupyterLab's widget subshell) than cells: renders take turns on one lock.
    With a frame store (``store``; ``attnlib.frames``), a state's PNG is looked up there by a hash of
    everything it depends on before it is drawn, and a PNG drawn here is put there.
    """

    CACHE_SIZE = 64  # PNGs kept per view (tens of kB each; Figures are not kept)
    PREFETCH_STEPS = 3

    def __init__(self, draw, sliders: dict, update=None, reference=None, store="default"):
        """``update(fig, **values)``, optional: change a Figure that ``draw`` made (for any state) in place so
        that it shows ``values``, with the same pixels as ``draw(**values)``. A view that has one keeps a
        single Figure and renders each new state by updating it (no new Figure, axes and ticks per state).

        ``store``: a ``frames.FrameStore`` to look each state's PNG up in before drawing it (and to put
        what is drawn into), None for none, or "default": ``frames.default_store()`` (env ATTNLIB_FRAMES)."""
        from . import frames

        if isinstance(store, str) and store == "default":
            store = frames.default_store()
        elif store is not None and not isinstance(store, frames.FrameStore):
            raise TypeError(f"store must be a frames.FrameStore, None or 'default'; got {store!r}")
        self.store = store
        self._frame_view = None  # frames.view_fingerprint(self) once computed ("" if this view cannot be keyed)
        self.draw = draw
        self.update_figure = update
        self._spare = None  # with ``update``: the Figure every new state is drawn into
        self.sliders = dict(sliders)
        self.output = widgets.Output()
        self._rendered = OrderedDict()  # state key -> PNG bytes, least recently used first
        self._figure = (None, None)  # (state key, Figure) of the state drawn last
        self._last_move = None  # (slider name, +1/-1) of the last move
        self._reference = self.values()  # the state whose constrained layout every state uses
        if reference is not None:
            if not isinstance(reference, dict) or set(reference) != set(self.sliders):
                raise ValueError(f"reference must give a value for each slider {sorted(self.sliders)}; "
                                 f"got {reference!r}")
            self._reference = {name: reference[name] for name in self.sliders}
        self._layout = None  # the reference state's layout, measured when first needed
        super().__init__([*self.sliders.values(), self.output])
        # the slider labels and readouts (the d_k, T, ... a room reads) at the prose size, also in Presentation Mode
        follow_content_font(self)
        for s in self.sliders.values():
            s.observe(self._on_change, names="value")
        _count_cell_runs_as_activity()
        _views.append(weakref.ref(self))
        self._show()

    def values(self) -> dict:
        return {name: s.value for name, s in self.sliders.items()}

    @property
    def last_figure(self):
        """The Figure of the state shown now (drawn again if only its PNG was kept)."""
        with _RENDER_LOCK:
            key = _key(self.values())
            if self._figure[0] != key:
                fig, _ = self._draw_and_render(self.values(), reuse=False)
                self._figure = (key, fig)
            return self._figure[1]

    def render(self, values: dict) -> bytes:
        """The PNG for ``values``: from the cache, or drawn, rendered and cached (pure in ``values``).

        Thread-safe: renders from a widget subshell's thread and the main thread take turns (``_RENDER_LOCK``);
        a kept state is returned without the lock, so a prefetch render in progress does not delay it."""
        key = _key(values)
        png = self._rendered.get(key)  # one atomic dict read (the GIL), safe beside the other thread's render
        if png is not None:
            try:
                self._rendered.move_to_end(key)
            except KeyError:  # dropped from the cache by the other thread just now: still the right bytes
                pass
            return png
        with _CHAIN_LOCK:
            _wanted[0] += 1
        try:
            with _RENDER_LOCK:
                return self._render(values)
        finally:
            with _CHAIN_LOCK:
                _wanted[0] -= 1

    def _render_ahead(self, values: dict) -> bytes:
        """``render`` for the prefetch chain: raises ``_Superseded`` (keeping nothing) if a move's render waits."""
        with _RENDER_LOCK:
            _ahead[0] = True
            try:
                _give_way()
                return self._render(values)
            finally:
                _ahead[0] = False

    def _render(self, values: dict) -> bytes:
        key = _key(values)
        if key in self._rendered:
            self._rendered.move_to_end(key)
            return self._rendered[key]
        stored = self._frame_key(values)
        png = self._stored(stored)
        if png is None:
            fig, png = self._draw_and_render(values)
            if key == _key(self.values()) and fig is not self._spare:
                self._figure = (key, fig)  # keep the shown state's Figure (for last_figure), not prefetched ones
            self._keep(stored, png)
        self._rendered[key] = png
        if len(self._rendered) > self.CACHE_SIZE:
            self._rendered.popitem(last=False)
        return self._rendered[key]

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
        """The store's PNG under ``key`` (None: no key, not stored, or the store cannot be read)."""
        if key is None:
            return None
        try:
            return self.store.get(key)
        except OSError:
            return None

    def _keep(self, key, png: bytes) -> None:
        """Put a drawn PNG into the store (a store that cannot be written is skipped: the view still works)."""
        if key is not None:
            try:
                self.store.put(key, png)
            except OSError:
                pass

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

        The first call lays out the reference state (constrained layout) and keeps its axes
        positions and how far each axes' text reaches beyond it. A state is then drawn at
        those positions; if any of its text reaches further than the reference's did (wider
        tick labels, a longer label), the sides of those axes move in by the excess and the
        same Figure is drawn once more (no second ``draw`` call, no layout pass): its text then
        takes the room the reference's text took. Only if that still does not fit (text that
        belongs to no axes leaving the figure, say) is the state drawn again with its own
        constrained layout. Each way the result depends on ``values`` alone. With ``reuse`` and an
        ``update`` hook, the view's one Figure is updated instead of drawing a new one (the
        constrained-layout fallback always draws a new Figure, so the kept one stays at the reference layout).
        """
        if self._layout is None:
            ref = self.draw(**self._reference)
            try:
                png, texts = _png(ref, record_text=True)
                self._layout = _measure_layout(ref, texts)
            finally:
                plt.close(ref)
            if _key(values) == _key(self._reference):
                return ref, png
        made = [self._new_figure(values, reuse)]  # every Figure this render holds
        try:
            return self._render_at_layout(made, values)
        except _Superseded:
            for fig in made:
                plt.close(fig)  # a render ahead gave way: no Figure is left open in pyplot
            raise

    def _render_at_layout(self, made: list, values: dict):
        """The rest of ``_draw_and_render``: ``made[0]`` shows ``values``; Figures drawn anew are appended."""
        fig = made[0]
        _give_way()
        if fig is self._spare and len(fig.axes) != len(self._layout["axes"]):
            self._spare = None  # an update that added or removed axes: draw this state anew
            fig = self.draw(**values)
            made.append(fig)
        if _apply_layout(fig, self._layout):
            canvas, texts = _agg_draw(fig, record_text=True)
            if _text_fits(fig, texts, self._layout):
                plt.close(fig)
                return fig, _encode(canvas)
            room = _make_room(fig, texts, self._layout)
            if room is not None:
                canvas, texts = _agg_draw(fig, record_text=True)
                if _text_fits(fig, texts, room):
                    plt.close(fig)
                    return fig, _encode(canvas)
            plt.close(fig)
            _give_way()
            fig = self.draw(**values)
            made.append(fig)
        png = _png(fig)
        plt.close(fig)
        return fig, png

    def update(self, change=None):
        """Show the figure for the current slider values; returns that Figure."""
        self._show()
        return self.last_figure

    def _on_change(self, change):
        slider = change["owner"]
        name = next(n for n, s in self.sliders.items() if s is slider)
        self._last_move = (name, _direction(slider, change["old"], change["new"]))
        _last_moved[0] = weakref.ref(self)
        self._show()

    def _show(self):
        png = self.render(self.values())
        with self.output:
            self.output.clear_output(wait=True)
            display(Image(data=png, format="png"))
        _note_activity()
        _schedule_prefetch()

    def neighbours(self, steps: int = 1) -> list[dict]:
        """Slider values up to ``steps`` key presses away, one slider moved at a time.

        First the states further along the last move (same slider, same direction), then the
        rest, nearest first: a reader sweeping a slider one way finds the next states ready.
        """
        return [v for v, _ in self._prefetch_plan(steps)]

    def _prefetch_plan(self, steps: int) -> list[tuple[dict, float]]:
        """(slider values, seconds of quiet needed before rendering them ahead), in order."""
        now = self.values()
        ways = [(name, d) for name in self.sliders for d in (1, -1)]
        plan = []
        if self._last_move in ways:
            ways.remove(self._last_move)
            plan = [(*self._last_move, n, QUIET_S) for n in range(1, steps + 1)]
        plan += [(name, d, n, QUIET_OTHERS_S) for n in range(1, steps + 1) for name, d in ways]
        out = []
        for name, direction, n, quiet in plan:
            value = _step(self.sliders[name], direction * n)
            if value is not None:
                out.append(({**now, name: value}, quiet))
        return out

    # Used by the static course site (scripts/build_site.py): every state is rendered ahead there.
    def states(self) -> list[dict]:
        """Every combination of slider values on their grids (the last slider varies fastest).

        These are all the states a reader can reach; ``render`` gives each one's PNG.
        """
        grids = [grid_of(s) for s in self.sliders.values()]
        names = list(self.sliders)
        return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(g[0] for g in grids))]

    def controls(self) -> list[dict]:
        """Each slider as data: name, label, unit, grid of values, their readouts, and the index shown now."""
        out = []
        for name, slider in self.sliders.items():
            values, readouts = grid_of(slider)
            label, unit = _label_and_unit(slider.description)
            now = [i for i, v in enumerate(values) if _key({"v": v}) == _key({"v": slider.value})]
            if not now:
                raise ValueError(f"slider {name!r}: its value {slider.value!r} is not on its grid {values}")
            out.append({"name": name, "label": label, "unit": unit, "values": values, "readouts": readouts,
                        "index": now[0]})
        return out


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


# One Agg renderer per canvas size, shared by every render of that size: matplotlib caches text
# measurements per renderer, so a new renderer per render measured every label again (and re-parsed
# the mathtext of log-axis labels). A renderer is cleared before each draw; the pixels do not depend on it.
_RENDERERS = OrderedDict()  # (width px, height px, dpi) -> RendererAgg, least recently used first


def _agg_draw(fig, record_text=False):
    """Draw ``fig`` once on an Agg canvas; returns (canvas, the Text artists drawn if ``record_text``).

    Holds ``_RENDER_LOCK`` (re-entrant): the shared renderers serve one draw at a time."""
    with _RENDER_LOCK:
        return _agg_draw_locked(fig, record_text)


def _agg_draw_locked(fig, record_text):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    size = (*canvas.get_width_height(physical=True), fig.dpi)
    if size in _RENDERERS:
        _RENDERERS.move_to_end(size)
        canvas.renderer, canvas._lastKey = _RENDERERS[size], size  # what get_renderer() checks to reuse it
    else:
        _RENDERERS[size] = canvas.get_renderer()
        if len(_RENDERERS) > 8:
            _RENDERERS.popitem(last=False)
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
            _draw_giving_way(canvas)
        finally:
            del renderer.draw_text  # a shared renderer must not keep this render's recorder
    else:
        _draw_giving_way(canvas)
    return canvas, texts


# RendererAgg's drawing calls that a render ahead checks before each use (``_give_way``); matplotlib sets
# most of them per instance, so they are put back, not deleted, afterwards.
_CHECKED_CALLS = ("draw_path", "draw_markers", "draw_path_collection", "draw_image", "draw_text")


def _draw_giving_way(canvas):
    """``canvas.draw()``; in a render ahead, stops at the first drawing call after a move asks for a render."""
    if not _ahead[0]:
        canvas.draw()
        return
    renderer = canvas.get_renderer()
    kept = {name: renderer.__dict__.get(name) for name in _CHECKED_CALLS}

    def checking(call):
        def checked(*args, **kwargs):
            _give_way()
            return call(*args, **kwargs)
        return checked

    for name in _CHECKED_CALLS:
        setattr(renderer, name, checking(getattr(renderer, name)))
    try:
        canvas.draw()
    finally:
        for name, call in kept.items():
            if call is None:
                delattr(renderer, name)
            else:
                setattr(renderer, name, call)


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


def _direction(slider, old, new) -> int:
    """+1 if ``slider`` moved from ``old`` to a later value, else -1."""
    if isinstance(slider, widgets.SelectionSlider):
        values = list(slider._options_values)
        return 1 if values.index(new) > values.index(old) else -1
    return 1 if new > old else -1


def _step(slider, direction: int):
    """The value ``slider`` takes ``direction`` keyboard steps away (sign = way), or None past its end."""
    if isinstance(slider, widgets.SelectionSlider):
        i = slider.index + direction
        values = slider._options_values  # the values behind the labels
        return values[i] if 0 <= i < len(values) else None
    value = slider.value + direction * slider.step
    return value if slider.min <= value <= slider.max else None


def grid_of(slider) -> tuple[list, list[str]]:
    """(values, readouts): every value ``slider`` can take, in order, and how its readout shows each."""
    if isinstance(slider, widgets.SelectionSlider):
        return list(slider._options_values), list(slider._options_labels)
    if isinstance(slider, widgets.IntSlider):
        values = list(range(slider.min, slider.max + 1, slider.step))
    elif isinstance(slider, widgets.FloatSlider):
        n = int((slider.max - slider.min) / slider.step + 1e-9) + 1
        values = [round(slider.min + i * slider.step, 12) for i in range(n)]
    else:
        raise TypeError(f"slider must be an IntSlider, FloatSlider or SelectionSlider; got {type(slider).__name__}")
    return values, [format(v, slider.readout_format) for v in values]


def _label_and_unit(description: str) -> tuple[str, str]:
    """Split "label (unit)", as ``int_slider``/``float_slider`` write it, into (label, unit)."""
    m = re.fullmatch(r"(.+) \(([^()]+)\)", description)
    return (m.group(1), m.group(2)) if m else (description, "")


def slider_view(draw, update=None, reference=None, store="default", **sliders) -> SliderView:
    """Wire named sliders to ``draw(**values) -> Figure``; the figure redraws on each change.

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

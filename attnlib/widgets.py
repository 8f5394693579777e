"""Slider views and self-check quizzes.

A slider view is a draw function over a finite grid of states; a *frame* is the PNG of one state.
``SliderView.render`` makes a frame (one function, so a frame is byte-identical in the live view, the
frame store and the course site). The browser keeps the frames it has and swaps them on input
(``frameslider.js``, the same file the course site runs); in JupyterLab it asks the kernel for the
frames it lacks, which the kernel's main event loop draws one per turn, the asked-for frame first, then
the ones ahead (no threads, no locks). Views draw from data computed beforehand: no Monte Carlo runs on
a slider move. Tests drive a view without a browser with ``set``, ``render`` and ``last_figure``.

Sections below belong to lesson groups; keep additions inside your section.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import pathlib
import re
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


class SliderView(anywidget.AnyWidget):
    """Sliders over a grid of states and the frame of the state shown; ``draw(**values)`` returns a Figure.

    ``draw`` must depend only on the slider values (it draws from data computed once), so a state's frame
    is a pure function of that state: the same values give the same bytes whatever was rendered before.

    Layout: the *reference state* (default: the sliders' first values) is laid out once by its own
    constrained layout; every state is drawn at those axes and super-title positions, so panels stay put
    as the sliders move and no state pays for a layout pass. Hence the rule for a slider figure: every
    state's text must fit the reference's layout (fixed tick formats; give ``reference`` the state with
    the widest labels). The site build checks it for every state of every lesson
    (tests/test_site.py::test_no_figure_text_outside_its_canvas: text outside the figure or over another panel).

    Threads: none of its own. A frame is drawn on the thread that runs the cells, never while a cell runs
    (a cell's plots and a frame's drawing both change matplotlib's global rcParams): in a kernel, the front
    end's requests (which JupyterLab may deliver on a widget subshell's thread) are handed to the kernel's
    main event loop, which draws one asked-for frame per turn while no cell runs (IPython's pre/post_run_cell
    hooks: a cell that awaits lets the loop run). After each cell the view checks what its frames depend on;
    if that changed, the front end is told to drop the frames it holds (``{type: "reset"}``).
    """

    _esm = pathlib.Path(__file__).with_name("frameslider.js")
    _css = pathlib.Path(__file__).with_name("frameslider.css")
    spec = traitlets.List().tag(sync=True)  # [{label, unit, readouts}]: the sliders, for the front end
    state = traitlets.Int(0).tag(sync=True)  # the state shown: flat index into the grid, last slider fastest
    first = traitlets.Bytes().tag(sync=True)  # the frame of ``first_state``, sent with the view
    first_state = traitlets.Int(0).tag(sync=True)
    CACHE_SIZE = 64  # frames kept per view (tens of kB each; Figures are not kept)

    def __init__(self, draw, sliders: dict, reference=None, store="default"):
        """``store``: a ``frames.FrameStore``, None for none, or "default": ``frames.default_store()``."""
        from . import frames

        if isinstance(store, str) and store == "default":
            store = frames.default_store()
        elif store is not None and not isinstance(store, frames.FrameStore):
            raise TypeError(f"store must be a frames.FrameStore, None or 'default'; got {store!r}")
        bad = [name for name, s in sliders.items() if not isinstance(s, Slider)]
        if not sliders or bad:
            raise TypeError(f"sliders must be Slider objects (int_slider, float_slider, options_slider); "
                            f"got {bad or 'none'}")
        self.draw, self.store, self.sliders = draw, store, dict(sliders)
        names = list(self.sliders)  # every state once, in ``state`` order (the last slider varies fastest)
        self._states = [dict(zip(names, combo, strict=True))
                        for combo in itertools.product(*(s.values for s in self.sliders.values()))]
        start = {name: s.value for name, s in self.sliders.items()}
        if reference is not None and (not isinstance(reference, dict) or set(reference) != set(names)):
            raise ValueError(f"reference must give a value for each slider {sorted(names)}; got {reference!r}")
        self._reference = start if reference is None else {name: reference[name] for name in names}
        self._frames, self._layout, self._inputs, self._recheck = OrderedDict(), None, (None, None), True
        self._queue, self._loop, self._shell, self._in_cell = [], None, None, False
        front = [{"label": s.label, "unit": s.unit, "readouts": s.readouts} for s in self.sliders.values()]
        index = self._index(start)
        super().__init__(spec=front, state=index, first_state=index, first=self.render(start))
        self.on_msg(self._on_msg)
        with contextlib.suppress(ImportError, AttributeError):  # outside IPython: no hooks; outside a kernel: no loop
            from IPython import get_ipython

            self._shell = get_ipython()
            self._shell.events.register("pre_run_cell", self._cell_starts)
            self._shell.events.register("post_run_cell", self._cell_ran)
            self._loop = self._shell.kernel.io_loop.asyncio_loop  # the main thread's loop, which runs the cells
            self._in_cell = True  # made by a cell, which ends with post_run_cell

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

    @traitlets.validate("state")
    def _valid_state(self, proposal):
        n = len(self._states)
        if not 0 <= proposal["value"] < n:
            raise traitlets.TraitError(f"state must index the view's {n} states (0..{n - 1}); got {proposal['value']}")
        return proposal["value"]

    @property
    def last_figure(self):
        """A Figure of the state shown now, as its frame shows it (drawn again; closed in pyplot)."""
        fig = self.figure(self.values())
        plt.close(fig)
        return fig

    # ---- frames ----
    def figure(self, values: dict):
        """A new Figure of ``values`` at the reference layout (the Figure its frame is the picture of)."""
        fig = self.draw(**values)
        if self._layout is None:
            ref = fig if _key(values) == _key(self._reference) else self.draw(**self._reference)
            ref.draw_without_rendering()  # its layout engine places the axes
            self._layout = ([ax.get_position(original=True).frozen() for ax in ref.axes],
                            {name: getattr(ref, name).get_position() for name in _SUPER if getattr(ref, name, None)})
            if ref is not fig:
                plt.close(ref)
        axes, texts = self._layout
        if len(fig.axes) == len(axes):  # otherwise (axes added or gone) the state keeps its own layout
            fig.set_layout_engine("none")
            for ax, pos in zip(fig.axes, axes, strict=True):
                ax.set_position(pos, which="both")
            for name, xy in texts.items():
                if getattr(fig, name, None) is not None:
                    getattr(fig, name).set_position(xy)
        return fig

    def render(self, values: dict) -> bytes:
        """The frame (PNG) of ``values``: kept, from the store, or drawn now (then kept and stored)."""
        if self._recheck:
            self._check_inputs()
        key = _key(values)
        png = self._frames.get(key)
        if png is None:
            stored = self._frame_key(values)
            with contextlib.suppress(OSError):  # a store that cannot be read: draw instead
                png = None if stored is None else self.store.get(stored)
            if png is None:
                fig = self.figure(values)
                png = _png(fig)
                plt.close(fig)
                with contextlib.suppress(OSError):  # a store that cannot be written is skipped
                    if stored is not None:
                        self.store.put(stored, png)
        self._frames[key] = png
        self._frames.move_to_end(key)
        while len(self._frames) > self.CACHE_SIZE:
            self._frames.popitem(last=False)
        return png

    def _cell_starts(self, *_):
        self._in_cell = True

    def _cell_ran(self, *_):
        self._in_cell, self._recheck = False, True
        if self._loop is not None:
            self._loop.call_soon(self._after_cell)

    def _after_cell(self) -> None:
        """In a kernel, after each cell: if the frames' inputs changed, the front end drops the frames it holds
        (and asks again for what it shows); then the frames still asked for are drawn."""
        if self._recheck and self._check_inputs() and self.comm is not None:
            self.first = b""  # a view displayed again asks the kernel for its first frame
            with contextlib.suppress(Exception):
                self.send({"type": "reset"})
        self._send_next()

    def _check_inputs(self) -> bool:
        """(First render, and after each cell run.) If what the frames depend on changed (data edited in
        place, a global the draw reads, matplotlib's settings) or cannot be told, forget the frames and layout
        kept; returns True if frames were kept and are now forgotten."""
        from . import frames

        try:
            inputs = (frames.view_fingerprint(self), frames._rc_digest([]))
        except Exception:  # noqa: BLE001 - inputs that cannot be hashed: as if they changed after every cell
            inputs = (None, None)
        changed = None in inputs or inputs != self._inputs  # (the first check finds nothing kept)
        forgot = changed and bool(self._frames)
        if changed:
            self._frames.clear()
            self._layout = None
        self._inputs, self._recheck = inputs, False
        return forgot

    def _frame_key(self, values: dict):
        """The frame store's key for ``values`` (``frames.frame_key``), or None without a store or a key."""
        from . import frames

        if self._recheck:
            self._check_inputs()
        if self.store is None or not self._inputs[0]:
            return None
        try:
            return frames.frame_key(self, values, self._inputs[0])
        except Exception:  # noqa: BLE001 - something in the state broke the hashing: draw without the store
            return None

    # ---- serving the front end: the asked-for frames, one per turn of the kernel's main loop ----
    def _on_msg(self, _widget, content, _buffers):
        """{type: "want", now: [states], ahead: [states]}: replaces what was asked before (any thread)."""
        if not isinstance(content, dict) or content.get("type") != "want":
            return
        n = len(self._states)
        wanted = [s for s in (*content.get("now", []), *content.get("ahead", [])) if type(s) is int and 0 <= s < n]
        if self._loop is None:  # outside a kernel: at once, on this thread
            self._queue = wanted
            while self._queue:
                self._send_next()
        else:
            self._loop.call_soon_threadsafe(self._want, wanted)

    def _want(self, wanted: list) -> None:
        if not self._queue and wanted:
            self._loop.call_soon(self._send_next)
        self._queue = wanted

    def _send_next(self) -> None:
        """Send the frame of the first state asked for (drawn if need be); the next one on the loop's next turn."""
        if self.comm is None:  # closed
            self._queue = []
        if not self._queue or (self._in_cell and self._loop is not None):  # (the cell's end sends the rest)
            return
        state = self._queue.pop(0)
        try:
            message, buffers = {"type": "frame", "state": state}, [self.render(self._states[state])]
        except Exception as err:  # noqa: BLE001 - the reader sees what went wrong; the other states go on
            text = f"This state could not be drawn: {err!r}"
            message, buffers = {"type": "error", "state": state, "text": text}, None
        with contextlib.suppress(Exception):  # a view closed meanwhile: nothing to send to
            self.send(message, buffers=buffers)
        if self._queue and self._loop is not None:
            self._loop.call_soon(self._send_next)

    def close(self):
        self._queue = []
        if getattr(self, "_shell", None) is not None:
            with contextlib.suppress(ValueError):
                self._shell.events.unregister("pre_run_cell", self._cell_starts)
                self._shell.events.unregister("post_run_cell", self._cell_ran)
        super().close()


_SUPER = ("_suptitle", "_supxlabel", "_supylabel")


def _png(fig) -> bytes:
    """``fig`` drawn once on an Agg canvas, as a 256-colour PNG (``_encode``)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return _encode(canvas)


def _encode(canvas) -> bytes:
    """The canvas's pixels as a 256-colour PNG, zlib level 6: a third of the bytes of the RGBA PNG for these
    flat-coloured plots, same look (max channel error measured in the tests); level 1 saves ~1.5 ms a render
    but makes the static site 18 MB, over its 15 MB budget."""
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


def slider_view(draw, reference=None, store="default", **sliders) -> SliderView:
    """A ``SliderView`` of ``draw(**values) -> Figure`` over the named sliders' grids (``int_slider``, ...).

    reference : optional slider values whose constrained layout every state is drawn at (default: the
    sliders' initial values); give the state with the widest tick labels.
    store : a ``frames.FrameStore`` whose frames (keyed by ``frames.frame_key``) are shown without drawing
    and which keeps what is drawn; None for none; "default": the folder in env ATTNLIB_FRAMES, if set.
    """
    return SliderView(draw, sliders, reference=reference, store=store)


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

    start, low = d_ks[len(d_ks) // 2], 0.25
    # laid out at the narrowest density (both σ at their lowest), whose y tick labels ("10.00") are the widest
    return slider_view(
        draw,
        reference={"d_k": start, "sigma_q": low, "sigma_k": low},
        d_k=options_slider("d_k", d_ks, start),
        sigma_q=float_slider("σ_q", low, sigma_max, 1.0, step=0.25),
        sigma_k=float_slider("σ_k", low, sigma_max, 1.0, step=0.25),
    )


def temperature_view(logits, temps, probs, entropy, value=8.0) -> SliderView:
    """Lessons 03, 05: a temperature slider over softmax(logits / T) precomputed on the grid ``temps``."""
    import numpy as np

    from . import plots

    temps = np.asarray(temps, dtype=float)
    step = float(np.min(np.diff(temps))) if temps.size > 1 else 1.0

    def draw(temperature):
        return plots.temperature_panel(logits, temps, probs, entropy, temperature)

    slider = float_slider("temperature T", float(temps[0]), float(temps[-1]), value, step=step)
    return slider_view(draw, temperature=slider)


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
    return slider_view(lambda layer: plots.layer_profile(stats, layer, **kw), layer=int_slider("layer", 1, n_layers, 1))


# lesson 07


def training_browser(steps, curves, scalings, d_ks, lrs, uniform_entropy=None) -> SliderView:
    """Sliders over d_k and learning rate that show one slice of a precomputed sweep (lesson 07).

    curves : (n_scalings, n_d_k, n_lr, 4, T) from ``attnlib.train.sweep`` (averaged over seeds).
    """
    from . import plots

    d_ks, lrs = list(d_ks), list(lrs)

    def draw(d_k, lr):
        return plots.training_curves(steps, curves[:, d_ks.index(d_k), lrs.index(lr)], scalings,
                                     title=f"d_k = {d_k}, learning rate = {lr:g}", uniform_entropy=uniform_entropy)

    return slider_view(draw, d_k=options_slider("d_k", d_ks), lr=options_slider("learning rate", lrs))


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

"""FrameSlider prototype: an anywidget whose front end keeps frames and asks the kernel only for missing ones."""
import base64
import pathlib
import time

import anywidget
import traitlets


class FrameSlider(anywidget.AnyWidget):
    _esm = pathlib.Path(__file__).with_name("frameslider.js")
    sliders = traitlets.List().tag(sync=True)     # [{label, unit, readouts}]
    alts = traitlets.List().tag(sync=True)        # alt text per state (cheap: computed up front)
    state = traitlets.Int(0).tag(sync=True)       # flat index into the grid (C order)
    ahead = traitlets.Int(0).tag(sync=True)      # front end asks for this many frames along the move (+ neighbours)
    encoding = traitlets.Unicode("buffers")       # "buffers" or "b64": how a frame travels (kernel side only)

    def __init__(self, frame, sliders, alts, state=0, encoding="buffers", ahead=0):
        """``frame(state) -> PNG bytes``; sliders: [{label, unit, readouts}]."""
        super().__init__(sliders=sliders, alts=alts, state=state, encoding=encoding, ahead=ahead)
        self._frame = frame
        self.kernel_ms = []
        self.on_msg(self._on_msg)

    def _on_msg(self, _widget, content, buffers):
        if content.get("type") != "need":
            return
        i = int(content["state"])
        t = time.perf_counter()
        png = self._frame(i)
        ms = round((time.perf_counter() - t) * 1e3, 2)
        self.kernel_ms.append(ms)
        if self.encoding == "b64":
            self.send({"type": "frame", "state": i, "ms": ms, "b64": base64.b64encode(png).decode("ascii")})
        else:
            self.send({"type": "frame", "state": i, "ms": ms}, buffers=[png])


def temperature_demo(source="render", encoding="buffers", store_dir="frames-demo-store", ahead=0):
    """Lesson 05's temperature view on a 30-state grid. source: render | store | dict."""
    import numpy as np

    from attnlib import frames, widgets
    from attnlib.saturation import temperature_sweep

    logits = np.array([16.0, 8.0, 4.0])
    temps = np.arange(0.5, 15.0 + 1e-9, 0.5)  # 30 states
    probs, entropy = temperature_sweep(logits, temps)
    view = widgets.temperature_view(logits, temps, probs, entropy, value=8.0)
    view.store = None
    view.close()
    values = [{"temperature": float(t)} for t in temps]

    def render(i):
        view._frames.clear()  # always draw: the "kernel must render" case
        return view.render(values[i])

    if source == "render":
        frame = render
    else:
        store = frames.FrameStore(store_dir)
        digest = frames.view_fingerprint(view)
        keys = [frames.frame_key(view, v, digest) for v in values]
        for i, key in enumerate(keys):
            if store.get(key) is None:
                store.put(key, render(i))
        if source == "store":
            def frame(i):
                return store.get(frames.frame_key(view, values[i], digest))
        else:
            table = {i: store.get(k) for i, k in enumerate(keys)}
            frame = table.__getitem__
    readouts = [f"{t:g}" for t in temps]
    alts = [f"Softmax of logits 16, 8, 4 at temperature {t:g} (prototype alt text)" for t in temps]
    return FrameSlider(frame, [{"label": "temperature T", "unit": "", "readouts": readouts}], alts,
                       state=int(np.argmin(abs(temps - 8.0))), encoding=encoding, ahead=ahead)

"""Proposed change to attnlib.widgets.SliderView.update, as a kernel start-up patch for trying it out.

    python benchmarks/bench_browser.py --kernel-startup benchmarks/proposals/sliderview_one_pass_png.py

The inline backend saves every figure with bbox_inches="tight", which lays out and draws the figure
twice (once to find the tight box, once to render). attnlib's figures use layout="constrained", which
already fits them, so one plain draw gives the same picture. This renders the PNG once and displays it.
"""

import io

import matplotlib.pyplot as plt
from IPython.display import Image, display

from attnlib import widgets


def update(self, change=None):
    """Redraw from the current slider values; returns the new Figure."""
    fig = self.draw(**self.values())
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches=None if fig.get_layout_engine() is not None else "tight")
    with self.output:
        self.output.clear_output(wait=True)
        display(Image(data=buf.getvalue(), format="png"))
    plt.close(fig)
    self.last_figure = fig
    return fig


widgets.SliderView.update = update

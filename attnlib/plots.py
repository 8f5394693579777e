"""Plotting helpers: data in, matplotlib figure out.

Every function takes ``ax=None`` (make a new figure) or an Axes to draw into, and
returns the Figure. Nothing here computes attention maths beyond what it plots, and
nothing changes matplotlib's global rcParams: projector-sized fonts are applied with a
local ``rc_context`` around each function.

Sections below belong to lesson groups; keep additions inside your section.
"""

from __future__ import annotations

import functools

import matplotlib.pyplot as plt
import numpy as np

# Okabe–Ito palette: distinguishable under the common forms of colour blindness.
PALETTE = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "vermillion": "#D55E00",
    "sky": "#56B4E9",
    "purple": "#CC79A7",
    "yellow": "#F0E442",
    "black": "#000000",
}
UNSCALED = PALETTE["vermillion"]  # colour of everything "raw q·k"
SCALED = PALETTE["blue"]  # colour of everything "q·k / √d_k"
CYCLE = [PALETTE[c] for c in ("blue", "orange", "green", "vermillion", "sky", "purple", "black")]
SEQUENTIAL_CMAP = "viridis"  # perceptually uniform and colour-blind safe

# Sizes chosen to stay legible on a 1280x720 projector at the default figure sizes.
PROJECTOR_RC = {
    "font.size": 12,
    "axes.titlesize": 13,
    "axes.labelsize": 12,
    "xtick.labelsize": 11,
    "ytick.labelsize": 11,
    "legend.fontsize": 11,
    "figure.titlesize": 14,
    "axes.prop_cycle": plt.cycler(color=CYCLE),
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": 100,
}


def projector_style(func):
    """Decorator: run a plotting function under PROJECTOR_RC without touching global rcParams."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with plt.rc_context(PROJECTOR_RC):
            return func(*args, **kwargs)

    return wrapper


@projector_style
def axes_or_new(ax=None, figsize=(7.0, 4.0)):
    """Return (fig, ax): the given Axes and its figure, or a new figure with one Axes."""
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize, layout="constrained")
        return fig, ax
    return ax.figure, ax


@projector_style
def grid_of_axes(n, ncols=None, figsize_per=(3.2, 2.6), sharex=True, sharey=True):
    """A figure with n Axes in a grid for small multiples; returns (fig, flat list of Axes)."""
    ncols = ncols or min(n, 4)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(figsize_per[0] * ncols, figsize_per[1] * nrows),
        sharex=sharex,
        sharey=sharey,
        layout="constrained",
        squeeze=False,
    )
    flat = list(axes.ravel())
    for extra in flat[n:]:
        extra.set_visible(False)
    return fig, flat[:n]


@projector_style
def probability_bars(probs, labels=None, ax=None, title=None, color=SCALED, ylim=(0, 1)):
    """Bar chart of one probability vector (weights over keys), values printed on the bars.

    probs : (n,) probabilities.  labels : n tick labels (default "key 1".."key n").
    """
    probs = np.asarray(probs, dtype=float)
    fig, ax = axes_or_new(ax, figsize=(5.0, 3.5))
    labels = labels if labels is not None else [f"key {i + 1}" for i in range(len(probs))]
    bars = ax.bar(range(len(probs)), probs, color=color)
    ax.bar_label(bars, labels=[f"{p:.3f}" for p in probs], padding=2)
    ax.set_xticks(range(len(probs)), labels)
    ax.set_ylim(*ylim)
    ax.set_ylabel("attention weight (probability)")
    if title:
        ax.set_title(title)
    return fig


@projector_style
def heatmap(matrix, ax=None, title=None, xlabel="key position", ylabel="query position", vmin=0.0, vmax=1.0,
            colorbar_label="attention weight"):
    """Heatmap of an (L, S) matrix such as attention weights, with a labelled colour bar."""
    matrix = np.asarray(matrix, dtype=float)
    fig, ax = axes_or_new(ax, figsize=(5.0, 4.0))
    im = ax.imshow(matrix, cmap=SEQUENTIAL_CMAP, vmin=vmin, vmax=vmax, aspect="auto")
    ax.grid(False)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    fig.colorbar(im, ax=ax, label=colorbar_label)
    if title:
        ax.set_title(title)
    return fig


# ---------------------------------------------------------------------------
# Lessons 00-03 (intuition, variance derivation, worked example)
# ---------------------------------------------------------------------------





# ---------------------------------------------------------------------------
# Lessons 04-06 (multi-head and init, tradeoffs, interview questions)
# ---------------------------------------------------------------------------





# ---------------------------------------------------------------------------
# Lessons 07-08 (training run, pretrained model)
# ---------------------------------------------------------------------------

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


@projector_style
def series_plot(x, series, xlabel, ylabel, ax=None, title=None, logx=False, logy=False, hline=None,
                hline_label=None):
    """Lines (with markers) of several named series against one x (lessons 04-06).

    x : (m,) values.  series : {label: dict(y=(m,), color=..., yerr=(m,) or None, ls="-")}.
    hline : optional y value drawn as a dashed black reference line, labelled hline_label.
    """
    fig, ax = axes_or_new(ax, figsize=(6.4, 4.0))
    x = np.asarray(x, dtype=float)
    for i, (label, spec) in enumerate(series.items()):
        color = spec.get("color", CYCLE[i % len(CYCLE)])
        y = np.asarray(spec["y"], dtype=float)
        ax.plot(x, y, marker=spec.get("marker", "o"), ls=spec.get("ls", "-"), color=color, label=label)
        if spec.get("yerr") is not None:
            err = np.asarray(spec["yerr"], dtype=float)
            ax.fill_between(x, y - err, y + err, color=color, alpha=0.15, lw=0)
    if hline is not None:
        ax.axhline(hline, color=PALETTE["black"], ls="--", lw=1, label=hline_label)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(loc="best")
    if title:
        ax.set_title(title)
    return fig


@projector_style
def logit_histograms(raw, scaled, ax=None, title=None, xlim=None, bins=61):
    """Overlaid histograms of raw q·k (UNSCALED colour) and q·k/√d_k (SCALED colour) (lesson 04).

    raw, scaled : arrays of logits (any shape, flattened). xlim : (lo, hi) shared range;
    values outside it are counted in the edge bins. The legend reports each standard deviation.
    """
    fig, ax = axes_or_new(ax, figsize=(6.0, 3.8))
    raw = np.ravel(raw)
    scaled = np.ravel(scaled)
    lo, hi = xlim if xlim is not None else (min(raw.min(), scaled.min()), max(raw.max(), scaled.max()))
    edges = np.linspace(lo, hi, bins)
    ax.hist(np.clip(raw, lo, hi), bins=edges, density=True, color=UNSCALED, alpha=0.55,
            label=f"raw q·k (std {raw.std():.2f})")
    ax.hist(np.clip(scaled, lo, hi), bins=edges, density=True, color=SCALED, alpha=0.55,
            label=f"q·k/√d_k (std {scaled.std():.2f})")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("logit value")
    ax.set_ylabel("density")
    ax.legend(loc="upper left", fontsize=9)
    if title:
        ax.set_title(title)
    return fig


@projector_style
def head_entropy_bars(entropy_raw, entropy_scaled, max_entropy, ax=None, title=None):
    """Mean attention entropy per head, raw vs scaled, against the uniform maximum ln n (lesson 04).

    entropy_raw, entropy_scaled : (H,) nats.  max_entropy : ln n in nats.
    """
    fig, ax = axes_or_new(ax, figsize=(6.0, 3.8))
    h = len(entropy_raw)
    pos = np.arange(h)
    width = 0.4
    ax.bar(pos - width / 2, entropy_raw, width, color=UNSCALED, label="raw q·k")
    ax.bar(pos + width / 2, entropy_scaled, width, color=SCALED, label="q·k/√d_k")
    ax.axhline(max_entropy, color=PALETTE["black"], ls="--", lw=1, label="uniform (ln n)")
    step = max(1, h // 8)
    ax.set_xticks(pos[::step], [str(i + 1) for i in pos[::step]])
    ax.set_xlabel("head")
    ax.set_ylabel("mean attention entropy (nats)")
    ax.set_ylim(0, max_entropy * 1.25)
    ax.legend(loc="upper right", fontsize=9, ncols=3)
    if title:
        ax.set_title(title)
    return fig


@projector_style
def heads_figure(record, xlim=(-48, 48)):
    """Two panels for one head count (lesson 04): logit histograms and per-head entropy.

    record : dict with raw, scaled (H, n, n) logits, entropy_raw, entropy_scaled (H,),
             max_entropy, head_dim, num_heads.
    """
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12.0, 4.0), layout="constrained")
    logit_histograms(record["raw"], record["scaled"], ax=a1, xlim=xlim, title="logits, all heads")
    head_entropy_bars(record["entropy_raw"], record["entropy_scaled"], record["max_entropy"], ax=a2,
                      title="how spread out each head's attention is")
    fig.suptitle(f"{record['num_heads']} head(s) of d_k = {record['head_dim']} (d_model fixed)")
    return fig


@projector_style
def init_scheme_bars(schemes, widths, measured, predicted, ax=None):
    """Variance of q·k/√d_k at initialisation per scheme and width (lesson 04), log scale.

    schemes : names (m,). widths : embed dims (w,). measured, predicted : (m, w).
    Bars are measured, black ticks the prediction (E·std²)², dashed line the target 1.
    """
    fig, ax = axes_or_new(ax, figsize=(10.0, 4.2))
    measured = np.asarray(measured, dtype=float)
    predicted = np.asarray(predicted, dtype=float)
    m, w = measured.shape
    width = 0.8 / w
    for j in range(w):
        pos = np.arange(m) + (j - (w - 1) / 2) * width
        ax.bar(pos, measured[:, j], width, color=CYCLE[j % len(CYCLE)], label=f"d_model = {widths[j]}")
        ax.scatter(pos, predicted[:, j], marker="_", s=250, color=PALETTE["black"], zorder=3,
                   label="predicted (d_model·std²)²" if j == 0 else None)
    ax.axhline(1.0, color=PALETTE["black"], ls="--", lw=1, label="target 1")
    ax.set_yscale("log")
    ax.set_xticks(np.arange(m), list(schemes))
    ax.set_xlabel("initialisation of W_q, W_k")
    ax.set_ylabel("Var(q·k / √d_k) at init")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9)
    return fig


@projector_style
def temperature_panel(logits, temperature, labels=None, ax=None, xlabel="key"):
    """Bars of softmax(logits / T) with entropy and max weight in the title (lesson 05).

    logits : (n,) values.  temperature : T > 0.  labels : n tick labels.
    """
    from .core import attention_entropy, softmax

    p = softmax(np.asarray(logits, dtype=float), temperature=temperature)
    fig, ax = axes_or_new(ax, figsize=(6.4, 4.0))
    probability_bars(p, labels=labels, ax=ax, color=SCALED, ylim=(0, 1.18))
    ax.set_xlabel(xlabel)
    h = float(attention_entropy(p))
    ax.set_title(f"T = {temperature:.2f}\nentropy {h:.2f} nats (max {np.log(len(p)):.2f}), "
                 f"max weight {p.max():.3f}", fontsize=11)
    return fig


@projector_style
def alpha_panel(d_ks, dots_independent, dots_correlated, alpha, ax=None, ylim=None):
    """Mean ± std of q·k / d_k^α against d_k, independent vs correlated q, k (lesson 05).

    d_ks : (m,) head sizes.  dots_* : (m, n) raw dot products per d_k.  alpha : exponent.
    """
    d = np.asarray(d_ks, dtype=float)
    series = {}
    for label, dots, color in (("independent q, k", dots_independent, SCALED),
                               ("correlated q, k", dots_correlated, PALETTE["orange"])):
        z = np.asarray(dots, dtype=float) / d[:, None] ** alpha
        series[label] = {"y": z.mean(axis=1), "yerr": z.std(axis=1), "color": color}
    fig = series_plot(d, series, "head size d_k", f"q·k / d_k^{alpha:g}  (mean ± 1 std)", ax=ax, logx=True,
                      title=f"α = {alpha:g}")
    if ylim is not None:
        (ax or fig.axes[0]).set_ylim(*ylim)
    return fig





# ---------------------------------------------------------------------------
# Lessons 07-08 (training run, pretrained model)
# ---------------------------------------------------------------------------

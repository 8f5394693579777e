"""Plotting helpers: data in, matplotlib figure out.

A function that draws one panel takes ``ax=None`` (make a new figure) or an Axes to draw
into; one that draws a fixed group of panels takes ``axes=None`` or a sequence of Axes; one
that lays out a whole figure of its own (small multiples) takes neither. All return the
Figure. Nothing here computes attention maths beyond what it plots, and nothing changes
matplotlib's global rcParams: projector-sized fonts are applied with a local ``rc_context``
around each function.

Sections below belong to lesson groups; keep additions inside your section.
"""

from __future__ import annotations

import functools

import matplotlib.pyplot as plt
import matplotlib.ticker
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

# Figures are designed for a projector: 1280×720, JupyterLab's Presentation Mode, left side panel hidden.
# A cell's output area is then about 1054 CSS px wide, and an image wider than that is shrunk to fit
# (its text with it). At dpi 100 (below) a figure up to SHOWN_WIDTH_IN inches wide is shown at its
# natural size, and every text of at least MIN_FONT_PT points is then >= 14 CSS px tall
# (10.5 pt × 100 / 72 = 14.6 px). tests/test_figure_text.py checks every figure the lessons show.
SHOWN_WIDTH_IN = 10.5
MIN_FONT_PT = 10.5

# Sizes chosen to stay legible on that projector (none below MIN_FONT_PT).
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
def axes_pair_or_new(axes=None, height=4.2):
    """Return (fig, axes): the two given Axes and their figure, or a new full-width figure with two side by side."""
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(SHOWN_WIDTH_IN, height), layout="constrained")
    return axes[0].figure, axes


@projector_style
def grid_of_axes(n, ncols=None, figsize_per=(3.2, 2.6), sharex=True, sharey=True):
    """A figure with n Axes in a grid for small multiples; returns (fig, flat list of Axes)."""
    ncols = ncols or min(n, 4)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(min(figsize_per[0] * ncols, SHOWN_WIDTH_IN), figsize_per[1] * nrows),  # never shrunk on a projector
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


def markdown_table(headers, rows):
    """A Markdown table (rendered in Jupyter) from headers and rows of already formatted cells."""
    from IPython.display import Markdown

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return Markdown("\n".join(lines))


def _step_hist(ax, values, bins, color, density=False, fill_alpha=None, lw=None, label=None, weights=None):
    """A histogram as one filled step area and/or one step outline; values outside ``bins`` are dropped.

    Looks like ``ax.hist(histtype="stepfilled" / "step")`` but builds in a fraction of the
    time: matplotlib finds a patch's axis limits curve by curve, a line's in one numpy call.
    weights : optional, passed to np.histogram (one weight per value).
    """
    heights, edges = np.histogram(np.ravel(values), bins=bins, density=density, weights=weights)
    artists = []
    if fill_alpha is not None:
        artists.append(ax.fill_between(edges, np.append(heights, heights[-1]), step="post", color=color,
                                       alpha=fill_alpha, lw=0, label=None if lw is not None else label))
    if lw is not None:
        outline = np.concatenate([[0.0], np.repeat(heights, 2), [0.0]])
        artists += ax.plot(np.repeat(edges, 2), outline, color=color, lw=lw, label=label)
    for artist in artists:
        artist.sticky_edges.y.append(0.0)  # like ax.hist: the y axis starts at 0, no margin below


def _hist(ax, values, color, label, bins):
    _step_hist(ax, values, bins, color, density=True, fill_alpha=0.35, lw=2, label=label)


@projector_style
def dot_product_histograms(samples, d_ks=None, raw_lim=None, scaled_lim=4.5, bins=60):
    """Small multiples (lesson 01): top row raw q·k, bottom row q·k/√d_k, one column per d_k.

    samples : {d_k: (n,) dot products}. Each row of panels shares its x and y axes, so
    widths compare directly across d_k. Returns the Figure.
    """
    d_ks = list(d_ks if d_ks is not None else samples)
    raw_lim = raw_lim or 4.0 * np.sqrt(max(d_ks))
    # at most SHOWN_WIDTH_IN wide whatever the number of panels (five panels: 2.1 in each, three x ticks)
    fig, axes = plt.subplots(2, len(d_ks), figsize=(min(3.1 * len(d_ks), SHOWN_WIDTH_IN), 5.8), sharey="row",
                             layout="constrained", squeeze=False)
    for j, d in enumerate(d_ks):
        x = np.asarray(samples[d], dtype=float)
        for row, (vals, lim, color, name) in enumerate(
            ((x, raw_lim, UNSCALED, "q·k"), (x / np.sqrt(d), scaled_lim, SCALED, "q·k / √d_k"))
        ):
            ax = axes[row, j]
            _hist(ax, vals, color, name, np.linspace(-lim, lim, bins + 1))
            ax.set_xlim(-lim, lim)
            ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(nbins=3, symmetric=True))
            ax.text(0.03, 0.97, f"std\n{np.std(vals):.2f}", transform=ax.transAxes, va="top", fontsize=11)
            ax.set_xlabel(name)
        axes[0, j].set_title(f"d_k = {d}")
    axes[0, 0].set_ylabel("density (raw)")
    axes[1, 0].set_ylabel("density (scaled)")
    fig.suptitle("Raw dot products spread out as d_k grows; scaled ones keep the same width\n"
                 "(x axes in score units)")
    return fig


@projector_style
def dot_product_panel(sample, d_k, row_logits, raw_lim, scaled_lim=4.5, bins=60):
    """One d_k (lesson 01 slider): raw and scaled histograms, and softmax of one row of scores.

    sample : (n,) raw q·k.   row_logits : (S,) raw scores of one query against S keys.
    """
    from .core import softmax

    fig, axes = plt.subplots(1, 3, figsize=(SHOWN_WIDTH_IN, 4.0), layout="constrained")
    x = np.asarray(sample, dtype=float)
    _hist(axes[0], x, UNSCALED, "q·k", np.linspace(-raw_lim, raw_lim, bins + 1))
    axes[0].set_xlim(-raw_lim, raw_lim)
    axes[0].set_title(f"raw q·k, d_k = {d_k}: std {np.std(x):.1f}")
    # three decimals at every d_k (the peak density falls like 1/√d_k), so the labels keep one width as the slider moves
    axes[0].yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%.3f"))
    _hist(axes[1], x / np.sqrt(d_k), SCALED, "q·k/√d_k", np.linspace(-scaled_lim, scaled_lim, bins + 1))
    axes[1].set_xlim(-scaled_lim, scaled_lim)
    axes[1].set_title(f"scaled q·k/√d_k: std {np.std(x / np.sqrt(d_k)):.2f}")
    for ax, name in zip(axes[:2], ("q·k", "q·k / √d_k"), strict=True):
        ax.set_xlabel(f"{name} (score units)")
        ax.set_ylabel("density")
    z = np.asarray(row_logits, dtype=float)
    pos = np.arange(len(z))
    axes[2].bar(pos - 0.2, softmax(z), width=0.4, color=UNSCALED, label="softmax(raw)")
    axes[2].bar(pos + 0.2, softmax(z / np.sqrt(d_k)), width=0.4, color=SCALED, label="softmax(scaled)")
    # head room above weight 1 for the legend: no bar reaches it, whatever the d_k
    axes[2].set_ylim(0, 1.42)
    axes[2].set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    axes[2].set_xticks(pos, [str(i + 1) for i in pos])
    axes[2].set_xlabel("key")
    axes[2].set_ylabel("attention weight")
    axes[2].set_title(f"one query over {len(z)} keys")
    axes[2].legend(loc="upper center", ncols=1, borderaxespad=0.2,
                   handlelength=1.0, framealpha=1.0)
    return fig


@projector_style
def variance_vs_dk(d_ks, measured, theory, textbook_claim=None, ax=None):
    """Log-log Var(q·k) against d_k (lesson 02): measured points, theory lines, the textbook answer dashed.

    measured, theory : {label: (len(d_ks),) variances}, same labels.
    textbook_claim : optional {label: (len(d_ks),)}, the common textbook answer "Var(q·k) = d_k σ²",
        drawn dashed in the label's colour.
    """
    fig, ax = axes_or_new(ax, figsize=(SHOWN_WIDTH_IN, 4.8))
    for i, label in enumerate(measured):
        c = CYCLE[i % len(CYCLE)]
        ax.plot(d_ks, theory[label], color=c, lw=2, label=f"{label}: theory d_k σ_q² σ_k²")
        ax.plot(d_ks, measured[label], "o", color=c, ms=7, mfc="white", mew=2)
        if textbook_claim and label in textbook_claim:
            ax.plot(d_ks, textbook_claim[label], "--", color=c, lw=2, label=f"{label}: textbook answer d_k σ²")
    ax.plot([], [], "o", color="gray", mfc="white", mew=2, label="Monte Carlo (circles)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("d_k (components per vector)")
    ax.set_ylabel("Var(q·k) (score units²)")
    ax.set_title("Var(q·k) = d_k σ_q²σ_k²: slope 1 on log-log axes,\nheight set by σ_q²σ_k²")
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5))  # beside the axes: hides no curve
    return fig


@projector_style
def scaled_logit_density(sample, d_k, sigma_q, sigma_k, ax=None, lim=None, bins=60):
    """Histogram of q·k/√d_k with the density N(0, σ_q²σ_k²) predicted by lesson 02.

    When σ_q = σ_k = σ also draws, dashed, the N(0, σ²) of the common textbook answer
    ("after ÷√d_k the variance is σ²").
    sample : (n,) raw q·k for this d_k, σ_q, σ_k.
    """
    fig, ax = axes_or_new(ax, figsize=(5.4, 4.0))
    s = np.asarray(sample, dtype=float) / np.sqrt(d_k)
    sd = sigma_q * sigma_k
    lim = lim or 4.0 * max(sd, 0.25)
    # bins over ±5 std (at most the axis): a narrow density is resolved, not one bar; each sample weighs
    # 1/(n · bin width), so samples beyond the axis are not spread over the visible bins (the area shown
    # is the fraction of samples on the axis, and the histogram follows the density drawn over it)
    edges = np.linspace(-min(lim, 5.0 * sd), min(lim, 5.0 * sd), bins + 1)
    _step_hist(ax, s, edges, SCALED, fill_alpha=0.35, lw=2, label="q·k/√d_k (Monte Carlo)",
               weights=np.full(s.size, 1.0 / (s.size * (edges[1] - edges[0]))))
    x = np.linspace(-lim, lim, 801)
    peak = max(1.0 / (sd * np.sqrt(2 * np.pi)), np.histogram(s, edges)[0].max() / (s.size * (edges[1] - edges[0])))
    ax.plot(x, np.exp(-0.5 * (x / sd) ** 2) / (sd * np.sqrt(2 * np.pi)), color="black", lw=2,
            label=f"N(0, σ_q²σ_k²), std {sd:.2f}")
    if np.isclose(sigma_q, sigma_k):
        s2 = sigma_q
        ax.plot(x, np.exp(-0.5 * (x / s2) ** 2) / (s2 * np.sqrt(2 * np.pi)), "--", color=UNSCALED, lw=2,
                label=f"textbook answer N(0, σ²), std {s2:.2f}")
        peak = max(peak, 1.0 / (s2 * np.sqrt(2 * np.pi)))
    ax.set_ylim(0.0, 1.75 * peak)  # head room: the legend sits above every curve
    # ticks at 1, 2 or 5 × 10^k, all with two decimals: a slider view's reference state (σ_q = σ_k = 0.25, the
    # only one whose axis reaches 10) then has the widest labels, and every other state fits its layout
    ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(steps=[1, 2, 5, 10]))
    ax.yaxis.set_major_formatter(matplotlib.ticker.StrMethodFormatter("{x:.2f}"))
    ax.set_xlim(-lim, lim)
    ax.set_xlabel("q·k / √d_k (score units)")
    ax.set_ylabel("density")
    ax.set_title(f"d_k={d_k}, σ_q={sigma_q:g}, σ_k={sigma_k:g}\nvariance {np.var(s):.3g} (theory {sd**2:.3g})",
                 fontsize=12)
    ax.legend(loc="upper right", borderaxespad=0.3, handlelength=1.5)
    return fig


@projector_style
def mean_growth(d_ks, raw_means, theory_means, ax=None):
    """Mean of q·k against d_k for correlated q, k (lesson 02): raw, ÷√d_k and ÷d_k.

    raw_means, theory_means : (len(d_ks),) measured and predicted E[q·k].
    """
    fig, ax = axes_or_new(ax, figsize=(7.5, 4.4))
    d = np.asarray(d_ks, dtype=float)
    m, t = np.asarray(raw_means, dtype=float), np.asarray(theory_means, dtype=float)
    for div, c, name in ((1.0, UNSCALED, "E[q·k]"), (np.sqrt(d), SCALED, "E[q·k] / √d_k"),
                         (d, PALETTE["green"], "E[q·k] / d_k")):
        ax.plot(d, t / div, color=c, lw=2, label=f"{name}: theory")
        ax.plot(d, m / div, "o", color=c, ms=7, mfc="white", mew=2)
    ax.plot([], [], "o", color="gray", mfc="white", mew=2, label="Monte Carlo (circles)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("d_k (components per vector)")
    ax.set_ylabel("mean score (score units)")
    ax.set_title("Correlated q, k: the mean grows like d_k; only ÷d_k holds it fixed")
    ax.legend(loc="upper left")
    return fig


def _fmt_list(z):
    return "[" + ", ".join(f"{x:g}" for x in np.asarray(z, dtype=float)) + "]"


def _labelled_bars(ax, probs, color):
    probs = np.asarray(probs, dtype=float)
    bars = ax.bar(range(len(probs)), probs, color=color)
    ax.bar_label(bars, labels=[f"{p:.4g}" for p in probs], padding=2)
    ax.set_xticks(range(len(probs)), [f"key {i + 1}" for i in range(len(probs))])
    ax.set_xlabel("key")
    ax.set_ylim(0, 1.12)


def _temperature_shown(temps, temperature, probs, entropy):
    """(grid index nearest ``temperature`` on a log scale, bar colour, bar title) of the temperature view."""
    i = int(np.argmin(np.abs(np.log(temps) - np.log(temperature))))
    color = SCALED if temps[i] > 1.0 + 1e-9 else UNSCALED
    title = f"softmax(z / T), T = {temps[i]:.3g}\nentropy {entropy[i]:.3f} nats, max weight {probs[i].max():.3f}"
    return i, color, title


@projector_style
def worked_example_bars(logits, probs_raw, probs_scaled, sqrt_dk):
    """Two bar charts (lesson 03): softmax of the raw worked-example logits and of logits/√d_k.

    Bars are labelled to 4 significant figures so the tiny weights stay readable.
    """
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 3.8), sharey=True, layout="constrained")
    z = np.asarray(logits, dtype=float)
    _labelled_bars(axes[0], probs_raw, UNSCALED)
    axes[0].set_title(f"softmax of raw logits {_fmt_list(z)}")
    _labelled_bars(axes[1], probs_scaled, SCALED)
    axes[1].set_title(f"softmax of logits ÷ {sqrt_dk:g} = {_fmt_list(z / sqrt_dk)}")
    axes[0].set_ylabel("attention weight (probability)")
    return fig


@projector_style
def temperature_panel(logits, temps, probs, entropy, temperature, marks=(1.0, 8.0)):
    """Temperature view (lessons 03, 05): bars of softmax(logits/T) at one T, and entropy against T.

    temps : (m,) grid.  probs : (m, n) and entropy : (m,) from ``saturation.temperature_sweep``.
    temperature : the T to show (nearest grid value). marks : temperatures drawn as lines.
    """
    temps = np.asarray(temps, dtype=float)
    i, color, title = _temperature_shown(temps, temperature, probs, entropy)
    fig, axes = plt.subplots(1, 2, figsize=(SHOWN_WIDTH_IN, 4.2), layout="constrained")
    _labelled_bars(axes[0], probs[i], color)
    axes[0].set_ylabel("attention weight")
    axes[0].set_title(title)
    ax = axes[1]
    ax.plot(temps, entropy, color="black", lw=2, label="entropy of softmax(z / T)")
    ax.axhline(np.log(probs.shape[1]), color="gray", ls=":", lw=1.5, label=f"uniform: ln {probs.shape[1]}")
    for t, c, name in zip(marks, (UNSCALED, SCALED), ("T = 1 (raw)", "T = √d_k (scaled)"), strict=True):
        ax.axvline(t, color=c, ls="--", lw=2, label=name)
    ax.plot([temps[i]], [entropy[i]], "o", color=PALETTE["orange"], ms=11, label="this T")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("temperature T (dimensionless)")
    ax.set_ylabel("entropy (nats)")
    ax.set_title("Dividing by √d_k = softmax\nat temperature √d_k")
    ax.legend(loc="upper left", borderaxespad=0.3, handlelength=1.5, labelspacing=0.3)
    return fig


@projector_style
def temperature_small_multiples(logits, temps_shown, probs_shown, entropy_shown):
    """Static companion of the temperature slider: one bar chart per temperature (lesson 03)."""
    per = min(2.8, SHOWN_WIDTH_IN / len(temps_shown))  # the row at most SHOWN_WIDTH_IN wide
    fig, axes = grid_of_axes(len(temps_shown), ncols=len(temps_shown), figsize_per=(per, 3.2))
    for ax, t, p, h in zip(axes, temps_shown, probs_shown, entropy_shown, strict=True):
        color = SCALED if t > 1.0 + 1e-9 else UNSCALED
        ax.bar(range(len(p)), p, color=color)
        ax.bar_label(ax.containers[0], labels=[f"{v:.2f}" for v in p], padding=2, fontsize=11)
        ax.set_xticks(range(len(p)), [f"k{j + 1}" for j in range(len(p))])
        ax.set_xlabel("key")
        ax.set_ylim(0, 1.15)
        ax.set_title(f"T = {t:g}, H = {h:.2f}")
    axes[0].set_ylabel("attention weight")
    fig.suptitle(f"softmax({_fmt_list(logits)} / T): T = 1 is the raw row, T = 8 the scaled one")
    return fig


@projector_style
def at_scale_summary(rows):
    """Lesson 03: three panels against d_k, unscaled vs scaled, from ``saturation.at_scale_table`` rows.

    Mean max-probability; share of rows with max-probability > 0.99; median (solid) and
    90th percentile (dashed) of ‖∂p/∂q‖_F.
    """
    d = [r["d_k"] for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(SHOWN_WIDTH_IN, 4.4), layout="constrained")
    for kind, c in (("unscaled", UNSCALED), ("scaled ÷√d_k", SCALED)):
        key = kind.split()[0]
        axes[0].plot(d, [r[key]["mean_max_prob"] for r in rows], "o-", color=c, lw=2, label=kind)
        axes[1].plot(d, [r[key]["share_saturated"] for r in rows], "o-", color=c, lw=2, label=kind)
        axes[2].plot(d, [r[key]["query_grad_norm_median"] for r in rows], "o-", color=c, lw=2)
        axes[2].plot(d, [r[key]["query_grad_norm_p90"] for r in rows], "s--", color=c, lw=2)
    axes[0].set_ylabel("mean max-probability")
    axes[0].set_ylim(0, 1.02)
    axes[1].set_ylabel("share of rows, max-prob > 0.99")
    axes[1].set_ylim(-0.02, 1.02)
    axes[2].set_ylabel("‖∂p/∂q‖_F (per unit of q)")
    axes[2].set_yscale("log")
    for ax, title in zip(axes, ("How peaked\nare the rows?", "How many rows\nare one-hot?",
                                "How much does a row\nrespond to q?"), strict=True):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("d_k")
        ax.set_title(title)
    # colours (unscaled / scaled) are named once; the third panel's legend names its line styles
    axes[0].legend(loc="center right")
    axes[2].plot([], [], "o-", color="gray", lw=2, label="median")
    axes[2].plot([], [], "s--", color="gray", lw=2, label="90th percentile")
    axes[2].legend(loc="lower left")
    return fig


@projector_style
def at_scale_histograms(unscaled, scaled, d_k, axes=None):
    """Lesson 03, one d_k: histograms of max-probability and of log10 ‖∂p/∂q‖_F, unscaled vs scaled.

    unscaled, scaled : ``row_statistics`` dicts of (n_rows,) arrays. axes : optional two Axes.
    """
    fig, axes = axes_pair_or_new(axes, height=4.0)
    pbins = np.linspace(0, 1, 41)
    gbins = np.linspace(-24, 2, 53)
    for stats, c, name in ((unscaled, UNSCALED, "unscaled"), (scaled, SCALED, "scaled ÷√d_k")):
        _step_hist(axes[0], stats["max_prob"], pbins, c, fill_alpha=0.8, label=name)
        g = np.log10(np.maximum(stats["query_grad_norm"], 1e-24))
        _step_hist(axes[1], g, gbins, c, fill_alpha=0.8, label=name)
    axes[0].set_xlabel("max-probability of a row")
    axes[0].set_ylabel("rows")
    axes[0].set_title(f"d_k = {d_k}: how peaked")
    axes[1].set_xlabel("log10 ‖∂p/∂q‖_F (below −24 piled at −24)")
    axes[1].set_ylabel("rows")
    axes[1].set_title(f"d_k = {d_k}: gradient to the query")
    for ax in axes:
        ax.legend(loc="upper left")
    return fig


@projector_style
def at_scale_small_multiples(raw, d_ks):
    """Static companion of the d_k slider (lesson 03): max-probability histograms for several d_k."""
    fig, axes = plt.subplots(2, len(d_ks), figsize=(min(3.2 * len(d_ks), SHOWN_WIDTH_IN), 6.0),
                             layout="constrained", sharey="row", squeeze=False)
    for j, d in enumerate(d_ks):
        un, sc = raw[d]
        at_scale_histograms(un, sc, d, axes=axes[:, j])
        axes[0, j].set_title(f"d_k = {d}")
        axes[1, j].set_title("")
        axes[1, j].set_xlabel("log10 ‖∂p/∂q‖_F")
        axes[0, j].set_xticks([0, 0.5, 1], ["0", "0.5", "1"])  # narrow panels: three ticks
        for ax in axes[:, j]:
            ax.get_legend().remove()
            if j:
                ax.set_ylabel("")
    axes[0, 0].legend(loc="upper left")
    # a description of what is drawn, not a claim about the data (a lesson states its finding in its own title)
    fig.suptitle("Per row: max-probability (top) and gradient norm to the query (bottom),\n"
                 "unscaled vs scaled ÷√d_k (gradient norms below 10⁻²⁴ are drawn at −24)")
    return fig



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
    _step_hist(ax, np.clip(raw, lo, hi), edges, UNSCALED, density=True, fill_alpha=0.55,
               label=f"raw q·k (std {raw.std():.2f})")
    _step_hist(ax, np.clip(scaled, lo, hi), edges, SCALED, density=True, fill_alpha=0.55,
               label=f"q·k/√d_k (std {scaled.std():.2f})")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("logit value")
    ax.set_ylabel("density")
    ax.legend(loc="upper left", borderaxespad=0.3, handlelength=1.2)
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
    ax.legend(loc="upper right", ncols=3, borderaxespad=0.3, handlelength=1.2, columnspacing=0.8)
    if title:
        ax.set_title(title)
    return fig


@projector_style
def heads_figure(record, xlim=(-48, 48)):
    """Two panels for one head count (lesson 04): logit histograms and per-head entropy.

    record : dict with raw, scaled (H, n, n) logits, entropy_raw, entropy_scaled (H,),
             max_entropy, head_dim, num_heads.
    """
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(SHOWN_WIDTH_IN, 4.2), layout="constrained")
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
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
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
# lesson 08
from matplotlib.colors import LogNorm  # noqa: E402


@projector_style
def layer_head_grid(values, ax=None, title=None, colorbar_label="", norm=None, cmap=SEQUENTIAL_CMAP, fmt="{:.2g}"):
    """Heatmap of one number per (layer, head), each cell printed, with a labelled colour bar (lesson 08).

    values : (n_layers, n_heads). Layers and heads are numbered from 1 on the axes.
    norm : a matplotlib Normalize (e.g. LogNorm) or None for a linear scale over the data.
    """
    values = np.asarray(values, dtype=float)
    n_layers, n_heads = values.shape
    fig, ax = axes_or_new(ax, figsize=(9.0, 4.2))
    im = ax.imshow(values, cmap=cmap, norm=norm, aspect="auto")
    ax.grid(False)
    ax.set_xticks(range(n_heads), [str(h + 1) for h in range(n_heads)])
    ax.set_yticks(range(n_layers), [str(i + 1) for i in range(n_layers)])
    ax.set_xlabel("head")
    ax.set_ylabel("layer")
    for (i, j), v in np.ndenumerate(values):
        r, g, b, _ = im.cmap(im.norm(v))
        ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=MIN_FONT_PT,
                color="black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white")
    cbar = fig.colorbar(im, ax=ax, label=colorbar_label)
    if isinstance(im.norm, LogNorm):  # plain numbers, not 4×10⁰
        ticks = [t for t in (0.1, 0.25, 0.5, 1, 2, 4, 10, 25, 50, 100, 250, 1000) if im.norm.vmin <= t <= im.norm.vmax]
        cbar.set_ticks(ticks, labels=[f"{t:g}" for t in ticks])
        cbar.ax.minorticks_off()
    if title:
        ax.set_title(title)
    return fig


@projector_style
def prediction_scatter(measured, predictions, ax=None, title=None, unit="Var(q·k)"):
    """Predicted against measured values, one point per head, on log-log axes with the line y = x (lesson 08).

    measured : (n,) or (n_layers, n_heads).  predictions : {label: array like measured}.
    """
    measured = np.ravel(np.asarray(measured, dtype=float))
    fig, ax = axes_or_new(ax, figsize=(6.0, 5.0))
    colours = [PALETTE["orange"], PALETTE["green"], PALETTE["purple"], PALETTE["sky"]]
    every = [measured]
    for (label, pred), colour in zip(predictions.items(), colours, strict=False):
        pred = np.ravel(np.asarray(pred, dtype=float))
        every.append(pred)
        ax.scatter(pred, measured, s=28, color=colour, alpha=0.85, label=label, edgecolors="none")
    lo, hi = min(a.min() for a in every) / 1.3, max(a.max() for a in every) * 1.3
    ax.plot([lo, hi], [lo, hi], color=PALETTE["black"], lw=1, ls="--", label="prediction = measured")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel(f"predicted {unit}")
    ax.set_ylabel(f"measured {unit}")
    ax.legend(loc="upper left")
    if title:
        ax.set_title(title)
    return fig


@projector_style
def variance_terms(terms, reference, ax=None, title=None, marker=None, marker_label=None,
                   reference_label="the reference (= 1)", ylabel="term ÷ reference"):
    """Stacked bars, one per head sorted by total, of variance terms divided by a reference (lesson 08).

    terms : {label: (n_layers, n_heads) array}, stacked bottom to top in this order.
    reference : (n_layers, n_heads), e.g. the iid prediction; a dashed line marks 1 (= the reference).
    marker : optional (n_layers, n_heads) values, also ÷ reference, drawn as a vermillion tick per head
        (the ``UNSCALED`` colour).
    """
    reference = np.ravel(np.asarray(reference, dtype=float))
    parts = {label: np.ravel(np.asarray(v, dtype=float)) / reference for label, v in terms.items()}
    order = np.argsort(sum(parts.values()))
    x = np.arange(1, len(reference) + 1)
    fig, ax = axes_or_new(ax, figsize=(10.0, 4.6))
    colours = [PALETTE["orange"], PALETTE["blue"], PALETTE["sky"], PALETTE["green"]]
    bottom = np.zeros(len(reference))
    for (label, v), colour in zip(parts.items(), colours, strict=False):
        ax.bar(x, v[order], bottom=bottom, width=0.85, color=colour, label=label)
        bottom += v[order]
    if marker is not None:
        m = np.ravel(np.asarray(marker, dtype=float)) / reference
        ax.scatter(x, m[order], marker="_", s=90, linewidths=2.5, color=UNSCALED, zorder=3, label=marker_label)
    ax.axhline(1.0, color=PALETTE["black"], ls="--", lw=1, label=reference_label)
    ax.set_xlim(0.3, len(reference) + 0.7)
    ax.set_xlabel("head, sorted by the total")
    ax.set_ylabel(ylabel)
    ax.legend(loc="upper left")
    if title:
        ax.set_title(title)
    return fig


# layer_profile's variance panel: which statistic the bars show -> (raw key, scaled key, label prefix, y label)
_PROFILE_VARIANCE = {
    "pairs": ("var_logit", "var_logit_scaled", "", "variance of the logits"),
    "row": ("row_var", "row_var_scaled", "within-row ", "within-row variance\nof the logits"),
}


def _profile_variance(variance):
    if variance not in _PROFILE_VARIANCE:
        raise ValueError(f"variance must be one of {sorted(_PROFILE_VARIANCE)}; got {variance!r}")
    return _PROFILE_VARIANCE[variance]


@projector_style
def layer_profile(stats, layer, axes=None, var_ylim=None, variance="pairs"):
    """One layer's heads: Var(q·k) raw and ÷√d_k with the iid prediction, and entropy with and without
    the division (lesson 08). Used by the layer slider and its small multiples.

    stats : dict from ``attnlib.minilm.head_statistics`` ((n_layers, n_heads) arrays).
    layer : 1-based layer number.  axes : two Axes (variance, entropy) or None for a new figure.
    variance : "pairs" (the variance over all within-sentence pairs, ``var_logit``) or "row" (the
        within-row variance a softmax row sees, ``row_var``).
    """
    raw, scaled, prefix, ylabel = _profile_variance(variance)
    if axes is None:
        fig, axes = plt.subplots(2, 1, figsize=(7.5, 6.0), sharex=True, layout="constrained")
    fig = axes[0].figure
    i = layer - 1
    heads = np.arange(1, stats[raw].shape[1] + 1)
    ax = axes[0]
    ax.bar(heads - 0.2, stats[raw][i], width=0.4, color=UNSCALED, label=f"{prefix}Var(q·k)")
    ax.bar(heads + 0.2, stats[scaled][i], width=0.4, color=SCALED, label=f"{prefix}Var(q·k/√d_k)")
    ax.scatter(heads - 0.2, stats["iid_prediction"][i], marker="_", s=150, color=PALETTE["black"], zorder=3,
               label="iid prediction d_k·Var(q_i)·Var(k_i)")
    ax.axhline(1.0, color=SCALED, ls=":", lw=1, label="variance 1")
    ax.set_yscale("log")
    if var_ylim:
        ax.set_ylim(*var_ylim)
    ax.set_ylabel(ylabel)
    ax.set_title(f"layer {layer}")
    ax.legend(loc="upper right", ncols=1, borderaxespad=0.3, labelspacing=0.3)
    ax = axes[1]
    ax.bar(heads - 0.2, stats["entropy_unscaled"][i], width=0.4, color=UNSCALED, label="softmax(q·k)")
    ax.bar(heads + 0.2, stats["entropy_scaled"][i], width=0.4, color=SCALED, label="softmax(q·k/√d_k)")
    ax.axhline(stats["log_keys"][i].mean(), color=PALETTE["black"], ls="--", lw=1, label="uniform: mean log n")
    ax.set_ylim(0, 1.35 * stats["log_keys"].max())
    ax.set_ylabel("mean entropy (nats)")
    ax.set_xlabel("head")
    ax.set_xticks(heads)
    ax.legend(loc="upper right", ncols=3, borderaxespad=0.3, handlelength=1.2, columnspacing=0.8)
    return fig


@projector_style
def layer_profiles(stats, layers, var_ylim=None, variance="pairs"):
    """Small multiples of ``layer_profile`` side by side for the given 1-based layers (lesson 08).

    At most SHOWN_WIDTH_IN wide: the panels are too narrow for the legends, which go below the figure."""
    fig, axes = plt.subplots(2, len(layers), figsize=(min(5.2 * len(layers), SHOWN_WIDTH_IN), 6.3), sharex=True,
                             sharey="row", layout="constrained", squeeze=False)
    for col, layer in enumerate(layers):
        layer_profile(stats, layer, axes=axes[:, col], var_ylim=var_ylim, variance=variance)
        for ax in axes[:, col]:
            ax.get_legend().remove()
            if col:
                ax.set_ylabel("")
    handles, labels = [], []
    for ax in axes[:, 0]:
        h, lab = ax.get_legend_handles_labels()
        handles += h
        labels += lab
    fig.legend(handles, labels, loc="outside lower center", ncols=2, columnspacing=1.0, handlelength=1.5)
    return fig


@projector_style
def token_attention_pair(scaled, unscaled, tokens, title=None):
    """Attention weights of one head on one sentence, with and without ÷√d_k, side by side (lesson 08).

    scaled, unscaled : (n, n) weights over the real tokens.  tokens : n token strings.
    """
    fig, axes = plt.subplots(1, 2, figsize=(SHOWN_WIDTH_IN, 5.2), layout="constrained")
    for ax, w, name, colour in ((axes[0], scaled, "softmax(q·k/√d_k): as trained", SCALED),
                                (axes[1], unscaled, "softmax(q·k): division removed", UNSCALED)):
        im = ax.imshow(np.asarray(w, dtype=float), cmap=SEQUENTIAL_CMAP, vmin=0.0, vmax=1.0, aspect="auto")
        ax.grid(False)
        ax.set_xticks(range(len(tokens)), tokens, rotation=90)
        ax.set_yticks(range(len(tokens)), tokens)
        ax.set_xlabel("key token")
        ax.set_ylabel("query token")
        ax.set_title(name, color=colour)
    fig.colorbar(im, ax=axes, label="attention weight")
    if title:
        fig.suptitle(title)
    return fig


# lesson 07

SCALING_COLORS = {"none": UNSCALED, "sqrt": SCALED, "linear": PALETTE["green"], "qknorm": PALETTE["orange"],
                  "none_init": PALETTE["purple"]}
SCALING_LABELS = {"none": "unscaled (×1)", "sqrt": "÷√d_k", "linear": "÷d_k", "qknorm": "QK-norm (g·cos)",
                  "none_init": "unscaled, W_q, W_k started ×d_k^(−1/4)"}
SCALING_STYLES = {"none_init": "--"}  # the control (lesson 07) is dashed; every other line solid
_CURVE_AXES = {  # row of a (4, T) curves array -> (y label, log scale?)
    0: ("loss (nats)", False),
    1: ("largest |logit|", True),
    2: ("mean attention\nentropy (nats)", False),
}


def _curve_lines(ax, steps, curves, scalings, row, legend=False):
    """One line per scaling of ``curves[i, row]``; curves : (n_scalings, 4, T)."""
    for i, s in enumerate(scalings):
        ax.plot(steps, curves[i, row], color=SCALING_COLORS[s], label=SCALING_LABELS[s], lw=2,
                ls=SCALING_STYLES.get(s, "-"))
    label, log = _CURVE_AXES[row]
    if log:
        ax.set_yscale("log")
        ax.yaxis.set_minor_locator(plt.NullLocator())  # decades are enough; minor ticks cost seconds
    if legend:
        ax.legend(loc="best")
    return label


@projector_style
def training_curves(steps, curves, scalings, ax=None, title=None, uniform_entropy=None):
    """Loss, largest attention logit and mean attention entropy over training (lesson 07).

    steps : (T,) step numbers.  curves : (n_scalings, 4, T), rows in ``attnlib.train.CURVE_KEYS``
    order (loss, max_logit, entropy, accuracy).  scalings : names from ``attnlib.train.VARIANTS``.
    ax : None or a sequence of 3 Axes.  uniform_entropy : draw log S (uniform attention) if given.
    """
    steps, curves = np.asarray(steps, float), np.asarray(curves, float)
    own = ax is None
    if own:
        fig, ax = plt.subplots(1, 3, figsize=(SHOWN_WIDTH_IN, 4.6), layout="constrained", sharex=True)
    fig = ax[0].figure
    for row, a in enumerate(ax[:3]):
        a.set_ylabel(_curve_lines(a, steps, curves, scalings, row, legend=row == 0 and not own))
        a.set_xlabel("training step")
    if own:
        handles, labels = ax[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=min(len(scalings), 3))
    if uniform_entropy is not None:
        ax[2].axhline(uniform_entropy, color=PALETTE["black"], ls="--", lw=1)
        ax[2].annotate("uniform (log S)", (steps[-1], uniform_entropy), ha="right", va="bottom")
        ax[2].set_ylim(top=1.15 * uniform_entropy)
    for a in (ax[0], ax[2]):  # loss and entropy (nats) from 0, ticks at 1, 2 or 5 × 10^k: labels as wide in
        a.set_ylim(bottom=0.0)  # every slider state ("2.5", never "−0.5" or "1.25")
        a.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(steps=[1, 2, 5, 10]))
    if title:
        fig.suptitle(title)
    return fig


@projector_style
def training_grid(steps, curves, scalings, d_ks, lrs, row=0):
    """Small multiples: one panel per (d_k, learning rate), one line per scaling (lesson 07).

    curves : (n_scalings, n_d_k, n_lr, 4, T).  row : which CURVE_KEYS row to draw (0 = loss).
    scalings may include the control "none_init" (``attnlib.train.VARIANTS``), drawn dashed.
    """
    steps, curves = np.asarray(steps, float), np.asarray(curves, float)
    # at most SHOWN_WIDTH_IN wide and ~6.3 in tall: columns are learning rates (named on top), rows head sizes
    # (named at the left with the quantity), the legend below
    fig, axes = plt.subplots(len(d_ks), len(lrs), figsize=(min(3.6 * len(lrs), SHOWN_WIDTH_IN),
                                                           min(2.5 * len(d_ks), 5.4) + 0.9),
                             sharex=True, sharey=True, layout="constrained", squeeze=False)
    for j, d_k in enumerate(d_ks):
        for k, lr in enumerate(lrs):
            a = axes[j, k]
            label = _curve_lines(a, steps, curves[:, j, k], scalings, row)
            a.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(nbins=2, integer=True))
            if j == 0:
                a.set_title(f"lr = {lr:g}")
            if k == 0:
                a.set_ylabel(f"d_k = {d_k}\n{label.splitlines()[0]}")
            if j == len(d_ks) - 1:
                a.set_xlabel("step")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(len(scalings), 3))
    return fig


@projector_style
def best_final_loss(d_ks, best, scalings, ax=None, title=None, lo=None, hi=None, range_label=None):
    """Final loss at each scaling's best learning rate against d_k, log-log (lesson 07).

    best : (n_scalings, n_d_k) final losses (nats).  lo, hi : optional arrays of the same shape,
    drawn as a vertical bar from lo to hi at each point (e.g. the range over seeds); the points
    of the different scalings are then spread a little along x so the bars do not overlap, and
    ``range_label`` (if given) names the bars in the legend.
    """
    best = np.asarray(best, float)
    fig, ax = axes_or_new(ax, figsize=(9.5, 4.0))
    d_ks_arr = np.asarray(d_ks, float)
    for i, s in enumerate(scalings):
        x = d_ks_arr
        if lo is not None and hi is not None:
            x = d_ks_arr * 2.0 ** (0.07 * (i - (len(scalings) - 1) / 2))
            ax.vlines(x, np.asarray(lo, float)[i], np.asarray(hi, float)[i], color=SCALING_COLORS[s], lw=1.5,
                      alpha=0.8)
        ax.plot(x, best[i], "o", ls=SCALING_STYLES.get(s, "-"), color=SCALING_COLORS[s], label=SCALING_LABELS[s],
                lw=2)
    if lo is not None and hi is not None and range_label:
        ax.vlines([], [], [], color=PALETTE["black"], lw=1.5, label=range_label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(d_ks, [str(d) for d in d_ks])
    ax.set_xlabel("head size d_k")
    ax.set_ylabel("final loss at best lr (nats)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))  # beside the axes: five lines cross everywhere
    if title:
        ax.set_title(title)
    return fig


# ---------------------------------------------------------------------------
# Lesson 09 (check your own attention)
# ---------------------------------------------------------------------------


@projector_style
def scale_fit(points, ax=None, title=None):
    """Centred log-weights against centred q·k, one colour per implementation (lesson 09).

    points : {label: (x (n,), y (n,), slope)} from ``attnlib.checker.log_weight_points``.
    For a softmax of c·q·kᵀ every point lies on a line through 0 of slope c.
    """
    fig, ax = axes_or_new(ax, figsize=(6.4, 4.2))
    for i, (label, (x, y, slope)) in enumerate(points.items()):
        color = CYCLE[i % len(CYCLE)]
        ax.scatter(x, y, s=14, color=color, alpha=0.6, lw=0)
        xs = np.array([np.min(x), np.max(x)])
        ax.plot(xs, slope * xs, color=color, lw=2, label=f"{label}: slope c = {slope:.4g}")
    ax.axhline(0, color=PALETTE["black"], lw=0.5)
    ax.set_xlabel("q·k minus its row mean (raw units)")
    ax.set_ylabel("log weight minus its row mean (nats)")
    ax.legend(loc="best")
    if title:
        ax.set_title(title)
    return fig



# ---------------------------------------------------------------------------
# Lesson 10 (what today's models do to the logit)
# ---------------------------------------------------------------------------

_RATIO_COLORS = {"1/√head_dim": SCALED, "softer": PALETTE["sky"], "sharper": UNSCALED}


def _ratio_kind(ratio: float) -> str:
    if abs(ratio - 1.0) < 1e-9:
        return "1/√head_dim"
    return "softer" if ratio < 1 else "sharper"


@projector_style
def recipe_overview(rows, axes=None):
    """Lesson 10: entropy at initialisation and softmax scale ÷ (1/√head_dim), one bar per model.

    rows : ``attnlib.recipe_table()`` dicts (model, entropy, entropy_se, uniform, scale_ratio, ...).
    axes : optional two Axes (entropy, scale ratio).
    """
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(SHOWN_WIDTH_IN, 6.2), layout="constrained", sharey=True,
                               gridspec_kw={"width_ratios": [1.25, 1]})
    fig = axes[0].figure
    y = np.arange(len(rows))[::-1]
    colors = [_RATIO_COLORS[_ratio_kind(r["scale_ratio"])] for r in rows]
    ent = np.array([r["entropy"] for r in rows])
    axes[0].barh(y, ent, xerr=[5 * r["entropy_se"] for r in rows], color=colors, capsize=3)
    axes[0].axvline(rows[0]["uniform"], color=PALETTE["black"], ls="--", lw=1)
    axes[0].text(rows[0]["uniform"] + 0.1, np.mean(y), f"uniform: ln n = {rows[0]['uniform']:.2f}",
                 rotation=90, va="center")
    axes[0].set_xlim(0, rows[0]["uniform"] + 0.75)
    axes[0].set_ylim(-0.7, len(rows) - 0.3)
    axes[0].set_yticks(y, [r["model"] for r in rows])
    axes[0].set_xlabel("entropy at init (nats), ±5 SE")
    axes[0].set_title("How spread out attention starts")
    ratio = np.array([r["scale_ratio"] for r in rows])
    axes[1].barh(y, ratio, color=colors)
    axes[1].set_xscale("log")
    axes[1].set_xlim(0.5, 150)
    axes[1].axvline(1.0, color=PALETTE["black"], lw=1)
    for yi, r in zip(y, ratio, strict=True):
        axes[1].text(r * 1.08, yi, f"×{r:.3g}", va="center")
    axes[1].set_xlabel("softmax scale ÷ (1/√head_dim)")
    axes[1].set_title("The scale each model uses")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in _RATIO_COLORS.values()]
    axes[1].legend(handles, [f"scale {k}" if k[0] == "1" else k for k in _RATIO_COLORS], loc="upper right")
    for ax in axes:
        ax.grid(axis="y", visible=False)
    return fig


@projector_style
def states_grid(draw, states, row_height=3.6, suptitle=None):
    """Static companion of a two-panel slider view (lesson 10): one row of panels per state.

    draw : ``draw(state, axes=(ax_left, ax_right))`` that draws one state into two Axes.
    states : the slider values to show, top to bottom.
    """
    fig, axes = plt.subplots(len(states), 2, figsize=(SHOWN_WIDTH_IN, row_height * len(states)),
                             layout="constrained", squeeze=False)
    for state, row in zip(states, axes, strict=True):
        draw(state, axes=row)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


@projector_style
def gain_panel(gains, entropy, entropy_se, uniform, top_weights, g, d, axes=None):
    """Lesson 10, QK-norm gain g: the largest weights of one query, and mean entropy against g.

    gains : (m,) the grid.  entropy, entropy_se : (m,) mean entropy over random rows and its SE.
    uniform : ln(n_keys).  top_weights : {g: (k,) the k largest weights of one query, descending}.
    g : the gain shown.  d : head size (marks g = d^¼, where scale 1/√d equals Gemma 4's scale 1).
    """
    fig, axes = axes_pair_or_new(axes)
    w = np.asarray(top_weights[g])
    axes[0].bar(np.arange(1, w.size + 1), w, color=SCALED)
    axes[0].set_ylim(0, 1)
    axes[0].set_xlabel("key, by weight (largest first)")
    axes[0].set_ylabel("attention weight")
    axes[0].set_title(f"One query, gain g = {g:.2f}: top weight {w[0]:.2f}")
    gains = np.asarray(gains)
    axes[1].plot(gains, entropy, color=SCALED, marker="o", ms=4, label="mean entropy")
    axes[1].fill_between(gains, entropy - 5 * entropy_se, entropy + 5 * entropy_se, color=SCALED, alpha=0.2, lw=0,
                         label="±5 SE")
    i = int(np.argmin(np.abs(gains - g)))
    axes[1].plot([gains[i]], [entropy[i]], "o", ms=11, color=UNSCALED, label=f"g = {g:.2f}")
    axes[1].axhline(uniform, color=PALETTE["black"], ls="--", lw=1, label=f"uniform ln n = {uniform:.2f}")
    axes[1].axvline(d**0.25, color=PALETTE["green"], ls=":", lw=2, label=f"g = d^¼ = {d**0.25:.2f} (= scale 1)")
    axes[1].set_ylim(0, uniform * 1.65)
    axes[1].set_xlabel("QK-norm gain g (on q and on k)")
    axes[1].set_ylabel("entropy (nats)")
    axes[1].set_title("Entropy at init against the gain")
    axes[1].legend(loc="upper right", fontsize=10.5)
    return fig


@projector_style
def softcap_panel(logits, cap, span=None, axes=None):
    """Lesson 10, soft-capping: the map s ↦ c·tanh(s/c), and one row's weights without and with it.

    logits : (n,) one row of scaled logits.  cap : c > 0.  span : x range of the map (default 1.3·max|s|).
    """
    from .core import softmax
    from .recipes import softcap

    fig, axes = axes_pair_or_new(axes)
    logits = np.asarray(logits, dtype=float)
    span = span or 1.3 * float(np.max(np.abs(logits)))
    s = np.linspace(-span, span, 401)
    axes[0].plot(s, s, color=PALETTE["black"], ls="--", lw=1, label="no cap")
    axes[0].plot(s, softcap(s, cap), color=SCALED, lw=2.5, label=f"c·tanh(s/c), c = {cap:g}")
    axes[0].plot(logits, softcap(logits, cap), "o", color=UNSCALED, ms=7, label="this row's logits")
    axes[0].set_ylim(-span, span)
    axes[0].set_xlabel("logit s (after the scale)")
    axes[0].set_ylabel("logit after the cap")
    axes[0].set_title(f"Soft-cap c = {cap:g}")
    axes[0].legend(loc="upper left", fontsize=10.5)
    x = np.arange(1, logits.size + 1)
    axes[1].bar(x - 0.2, softmax(logits), width=0.4, color=PALETTE["black"], alpha=0.55, label="no cap")
    axes[1].bar(x + 0.2, softmax(softcap(logits, cap)), width=0.4, color=SCALED, label=f"cap {cap:g}")
    axes[1].set_ylim(0, 1.15)
    axes[1].set_xticks(x)
    axes[1].set_xlabel("key")
    axes[1].set_ylabel("attention weight")
    axes[1].set_title("The row's weights")
    axes[1].legend(loc="upper left", ncols=2)
    return fig


@projector_style
def sink_panel(logits, b, b_grid, mass_curves, axes=None):
    """Lesson 10, a learned sink logit b: one row's weights plus the sink, and sink mass against b.

    logits : (n,) one row of scaled logits.  b : the sink logit shown.  b_grid : (m,) values of b.
    mass_curves : {label: (m,) mean weight the sink takes at each b}.
    """
    from .recipes import softmax_with_sink

    fig, axes = axes_pair_or_new(axes)
    logits = np.asarray(logits, dtype=float)
    w = softmax_with_sink(logits, b)
    x = np.arange(1, logits.size + 1)
    axes[0].bar(x, w, color=SCALED, label="keys")
    axes[0].bar([0], [1.0 - w.sum()], color=PALETTE["orange"], label="sink")
    axes[0].set_xticks([0, *x], ["sink", *map(str, x)])
    axes[0].set_ylim(0, 1.1)
    axes[0].set_xlabel("key")
    axes[0].set_ylabel("attention weight")
    axes[0].set_title(f"Sink logit b = {b:+.1f}: keys get {w.sum():.2f}")
    axes[0].legend(loc="upper right")
    b_grid = np.asarray(b_grid)
    colors = [SCALED, PALETTE["green"], PALETTE["purple"]]
    for (label, mass), c in zip(mass_curves.items(), colors, strict=False):
        axes[1].plot(b_grid, mass, color=c, lw=2, label=label)
    axes[1].axvline(b, color=UNSCALED, lw=2, ls=":", label=f"b = {b:+.1f}")
    axes[1].set_ylim(0, 1.05)
    axes[1].set_xlabel("sink logit b")
    axes[1].set_ylabel("weight on the sink")
    axes[1].set_title("Random rows, logits N(0, 1)")
    axes[1].legend(loc="upper left", fontsize=10.5)
    return fig


@projector_style
def context_panel(n, positions, factors, n_grid, top_mean, top_se, lead=8.0, low=None, axes=None):
    """Lesson 10, length-dependent temperature: each rule's logit factor against position, and the
    mean weight of one key that leads the others by a fixed logit at context length n.

    positions : (m,) token positions.  factors : {rule: (m,) logit multiplier} (NaN where a rule is
    not defined).  n_grid : (r,) context lengths.  top_mean, top_se : {rule: (r,)} mean weight of the
    leading key (logit ``lead``, the others N(0, 1)) and its SE.  low : optional (lead, top_mean, top_se)
    for a second, smaller lead, drawn dashed.
    """
    fig, axes = axes_pair_or_new(axes, height=4.4)
    colors = [PALETTE["black"], SCALED, PALETTE["orange"], PALETTE["green"]]
    for (rule, f), c in zip(factors.items(), colors, strict=False):
        axes[0].plot(positions, f, color=c, lw=2, label=rule)
    axes[0].axvline(n, color=UNSCALED, ls=":", lw=2)
    axes[0].set_xscale("log", base=2)
    axes[0].set_xlabel("position p (tokens)")
    axes[0].set_ylabel("logit multiplier")
    axes[0].set_title(f"Context n = $2^{{{int(round(np.log2(n)))}}}$")
    axes[0].set_ylim(0.9, 1.95)
    axes[0].legend(loc="center left", fontsize=10.5)
    n_grid = np.asarray(n_grid, dtype=float)
    i = int(np.argmin(np.abs(n_grid - n)))
    runs = [(top_mean, top_se, "-")] + ([(low[1], low[2], "--")] if low is not None else [])
    for means, ses, ls in runs:
        for (rule, m), c in zip(means.items(), colors, strict=False):
            m = np.asarray(m, dtype=float)
            axes[1].plot(n_grid, m, color=c, marker="o", ms=4, ls=ls)
            axes[1].fill_between(n_grid, m - 5 * ses[rule], m + 5 * ses[rule], color=c, alpha=0.2, lw=0)
            axes[1].plot([n_grid[i]], [m[i]], "o", ms=10, color=c)
    axes[1].axvline(n, color=UNSCALED, ls=":", lw=2)
    axes[1].set_xscale("log", base=2)
    axes[1].set_ylim(0, 1.04)
    axes[1].set_xlabel("context length n (keys)")
    axes[1].set_ylabel("weight of the leading key")
    title = f"Leading key at logit {lead:g}" + (f" (—), {low[0]:g} (- -)" if low is not None else "")
    axes[1].set_title(title + ", others N(0, 1)")
    return fig

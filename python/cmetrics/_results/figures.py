"""Drawing with matplotlib: the pieces every figure of cmetrics is made of.

The Displays of :mod:`cmetrics.plot` and the figures of :meth:`cmetrics.Report.to_html` draw
with these functions, from arrays a report or a state already holds. matplotlib is an optional
dependency (``pip install "cmetrics[plot]"``): it is imported by the function that draws, never
by ``import cmetrics``; without it a figure raises scikit-learn's ``ImportError`` text.

Curves are decimated before they are drawn (:func:`decimate`): at most :data:`MAX_VERTICES`
vertices, the curve's upper convex hull kept, so a curve of 10^8 rows draws in milliseconds and
writes a small SVG.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from cmetrics._results.text import printable

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Curve:
    """One curve of a report, decimated for drawing (``report.curves``): its kind
    (``"roc"``, ``"precision_recall"`` or ``"risk_coverage"``), what it is of (a class, an
    average, the top-label confidence), its points and its area (AUC, AP or AURC)."""

    kind: str
    label: str
    x: F64
    y: F64
    value: float
    value_name: str


#: The most vertices a decimated curve keeps.
MAX_VERTICES = 600
#: Past this many classes a matrix's cells are coloured but not annotated.
MAX_ANNOTATED_CLASSES = 30
#: The coordinates of matplotlib's SVG (path data, text positions), and a number in them.
_PATH_DATA = re.compile(r' (?:d|x|y)="[^"]*"')
_COORD = re.compile(r"-?\d+\.\d+")
#: matplotlib's RDF metadata block (the creator's name and format: nothing a reader sees).
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
#: Indentation between elements.
_INDENT = re.compile(r"\n[ \t]+(?=<)")
#: Figures written as SVG so far (their element ids are salted with it).
_FIGURES_WRITTEN = 0
#: Figures drawn for HTML pages: their size in inches.
PAGE_FIGSIZE = (5.0, 4.0)


def require_matplotlib(caller: str) -> Any:
    """``matplotlib.pyplot``, or scikit-learn's ImportError naming ``caller``."""
    try:
        import matplotlib.pyplot as plt  # an optional dependency (the plot extra), imported where it is used
    except ImportError as e:
        msg = f"{caller} requires matplotlib. You can install matplotlib with `pip install matplotlib`"
        raise ImportError(msg) from e
    return plt


def new_axes(ax: Any, caller: str) -> tuple[Any, Any]:
    """``(ax, figure)``: ``ax`` and its figure, or a new figure's axes when ``ax`` is None."""
    plt = require_matplotlib(caller)
    if ax is None:
        ax = plt.subplots()[1]
    return ax, ax.figure


def page_figure(caller: str, *, ncols: int = 1, figsize: tuple[float, float] = PAGE_FIGSIZE) -> tuple[Any, Any]:
    """A figure outside pyplot's global state (for an HTML page: nothing left open), and
    its axes (an array when ``ncols > 1``)."""
    require_matplotlib(caller)
    from matplotlib.figure import Figure  # an optional dependency (the plot extra), imported where it is used

    # Fixed margins: a layout engine measures every text of the figure (most of a page's time).
    fig = Figure(figsize=(figsize[0] * ncols, figsize[1]))
    fig.subplots_adjust(left=0.14, right=0.96, bottom=0.13, top=0.95, wspace=0.3)
    axes = fig.subplots(1, ncols)
    return fig, axes


def svg_text(fig: Any) -> str:
    """The figure as SVG text to inline in a page (no XML header, no fixed id clash: every
    figure gets its own id prefix from matplotlib's hash salt)."""
    import matplotlib as mpl  # an optional dependency (the plot extra), imported where it is used

    global _FIGURES_WRITTEN
    _FIGURES_WRITTEN += 1
    buf = io.StringIO()
    rc: Any = {
        "svg.hashsalt": f"cmetrics-{_FIGURES_WRITTEN}",
        "svg.fonttype": "none",
        "font.sans-serif": ["DejaVu Sans"],
    }
    with mpl.rc_context(rc):
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight", pad_inches=0.05)
    text = buf.getvalue()
    # Coordinates to a tenth of a point (a few times finer than a screen pixel): a third of the
    # bytes of a curve. Text and scale factors are left as they are.
    text = _PATH_DATA.sub(
        lambda m: _COORD.sub(lambda c: f"{float(c.group()):.1f}".rstrip("0").rstrip("."), m.group()), text
    )
    text = _INDENT.sub("\n", _METADATA.sub("", text))
    return text[text.index("<svg") :]


def decimate(x: F64, y: F64, max_vertices: int = MAX_VERTICES, *, hull: bool = True) -> npt.NDArray[np.intp]:
    """Indices of at most about ``max_vertices`` points of the curve ``(x, y)`` to draw, in curve
    order: the first and last, the first point of each of ``max_vertices / 2`` equal steps of the
    path length (L1, both axes scaled to [0, 1]), and with ``hull`` every vertex of the upper
    convex hull (the envelope a ROC curve is judged by; found among the first points of 2^16
    steps past 2^17 points, a thinning no figure shows)."""
    n = x.shape[0]
    if n <= max_vertices:
        return np.arange(n)
    finite = np.isfinite(x) & np.isfinite(y)
    xs, ys = np.where(finite, x, 0.0), np.where(finite, y, 0.0)
    path = _path(xs, ys)
    keep = np.union1d(_step_starts(path, max_vertices // 2), [0, n - 1])
    if hull:
        candidates = np.arange(n) if n <= 1 << 17 else _step_starts(path, 1 << 16)
        vertices = candidates[_upper_hull(xs[candidates], ys[candidates])]
        if vertices.size > max_vertices // 2:  # a hull of many vertices, thinned by the same steps
            vertices = vertices[_step_starts(path[vertices], max_vertices // 2)]
        keep = np.union1d(keep, vertices)
    return keep.astype(np.intp)


def _path(x: F64, y: F64) -> F64:
    """Cumulative L1 path length along the curve, both axes scaled to their range."""
    span_x, span_y = max(float(np.ptp(x)), 1e-300), max(float(np.ptp(y)), 1e-300)
    return np.concatenate(([0.0], np.cumsum(np.abs(np.diff(x)) / span_x + np.abs(np.diff(y)) / span_y)))


def _step_starts(path: F64, steps: int) -> npt.NDArray[np.intp]:
    """Positions of the first point in each of ``steps`` equal steps of ``path`` (increasing)."""
    total = max(float(path[-1] - path[0]), 1e-300)
    bucket = np.floor((path - path[0]) / total * steps).astype(np.int64)
    return np.flatnonzero(np.diff(bucket, prepend=-1) != 0)


def _upper_hull(x: F64, y: F64) -> npt.NDArray[np.intp]:
    """Indices of the vertices of the upper convex hull of the points, increasing. The points
    are ordered by x (then y), and rounds drop, all at once, every point that is not a strict
    right turn between its neighbours: a hull vertex lies strictly above the chord of any two
    points on either side, so it is never dropped, and the rounds stop when every point left
    turns right."""
    idx = np.lexsort((y, x))
    for _ in range(10_000):
        if idx.size <= 2:
            break
        a, b, c = idx[:-2], idx[1:-1], idx[2:]
        cross = (x[b] - x[a]) * (y[c] - y[a]) - (y[b] - y[a]) * (x[c] - x[a])
        bad = cross >= 0
        if not bad.any():
            break
        keep = np.ones(idx.size, dtype=bool)
        keep[1:-1] = ~bad
        idx = idx[keep]
    return np.sort(idx)


def draw_curve(
    ax: Any, x: F64, y: F64, label: str | None, *, hull: bool = True, max_vertices: int = MAX_VERTICES, **kwargs: Any
) -> Any:
    """One decimated line on ``ax`` (see :func:`decimate`); the Line2D."""
    keep = decimate(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64), max_vertices, hull=hull)
    shown = None if label is None else printable(label)
    (line,) = ax.plot(np.asarray(x)[keep], np.asarray(y)[keep], label=shown, **kwargs)
    return line


def draw_matrix(
    ax: Any,
    values: F64,
    labels: Sequence[str],
    *,
    counts: npt.NDArray[Any] | None = None,
    cmap: str = "viridis",
    values_format: str | None = None,
    colorbar: bool = True,
    xlabel: str = "Predicted label",
    ylabel: str = "True label",
) -> tuple[Any, Any]:
    """A K x K table as an image with each cell's text (``counts`` beside the values: "count
    (rate)"); past :data:`MAX_ANNOTATED_CLASSES` classes only the colour. Returns ``(im, text)``
    (``text`` a K x K array of Text, or None)."""
    k = values.shape[0]
    im = ax.imshow(values, interpolation="nearest", cmap=cmap)
    if colorbar:
        ax.figure.colorbar(im, ax=ax)
    text = None
    if k <= MAX_ANNOTATED_CLASSES:
        text = np.empty((k, k), dtype=object)
        finite = values[np.isfinite(values)]
        mid = (float(finite.max()) + float(finite.min())) / 2 if finite.size else 0.0
        dark, light = im.cmap(0), im.cmap(1.0)
        for i in range(k):
            for j in range(k):
                v = values[i, j]
                if counts is not None:  # the count, and the value as a share
                    body = f"{_short(counts[i, j])}\n{_percent(v)}"
                else:
                    body = format(v, values_format) if values_format else _short(v)
                colour = light if v < mid else dark
                text[i, j] = ax.text(j, i, body, ha="center", va="center", color=colour, fontsize=_font(k))
    ticks = np.arange(k)
    names = [printable(lab) for lab in labels]
    shown = (
        names
        if k <= MAX_ANNOTATED_CLASSES
        else [lab if i % max(1, k // 20) == 0 else "" for i, lab in enumerate(names)]
    )
    ax.set(xticks=ticks, yticks=ticks, xticklabels=shown, yticklabels=shown, xlabel=xlabel, ylabel=ylabel)
    ax.set_ylim(k - 0.5, -0.5)
    return im, text


def row_shares(m: npt.NDArray[Any]) -> F64:
    """Each row of a table divided by its sum (a row without weight: zeros)."""
    rows = m.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.nan_to_num(np.where(rows > 0, m / rows, 0.0)), dtype=np.float64)


def _short(v: Any) -> str:
    """A cell's number in a few characters: 950, 9.5k, 95k, 1.2M; fractions to 2 significant
    digits."""
    f = float(v)
    if not np.isfinite(f):
        return "nan"
    a = abs(f)
    if a >= 1e9:
        return f"{f / 1e9:.2g}G"
    if a >= 1e6:
        return f"{f / 1e6:.2g}M"
    if a >= 1e4:
        return f"{f / 1e3:.0f}k"
    if a >= 1e3:
        return f"{f / 1e3:.1f}k"
    if f.is_integer():
        return f"{int(f)}"
    return f"{f:.0f}" if a >= 10 else f"{f:.2g}"


def _percent(v: Any) -> str:
    f = float(v)
    return "nan" if not np.isfinite(f) else f"{100 * f:.0f}%" if f >= 0.01 or f == 0 else "<1%"


def _font(k: int) -> float:
    return 9.0 if k <= 5 else max(4.0, 9.0 - 0.22 * k)


def draw_chance(ax: Any, x: Sequence[float], y: Sequence[float], label: str, **kwargs: Any) -> Any:
    """The chance level (or perfect calibration) line, dashed grey unless told otherwise."""
    style = {"color": "k", "linestyle": "--", "linewidth": 1.0, **kwargs}
    (line,) = ax.plot(list(x), list(y), label=label, **style)
    return line


def square_unit_axes(ax: Any, xlabel: str, ylabel: str) -> None:
    """Axes from 0 to 1 on both sides (a little margin), equal aspect, labelled."""
    ax.set(xlabel=xlabel, ylabel=ylabel, xlim=(-0.01, 1.01), ylim=(-0.01, 1.01))
    ax.set_box_aspect(1)

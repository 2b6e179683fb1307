"""Reports as HTML: the notebook view (``Report._repr_html_``) and one self-contained page
(``Report.to_html``): inline CSS and inline SVG figures, no script, no external resource, readable
in print. Built with the standard library; every label, name and title is escaped
(:func:`cmetrics._results.text.html_text`). Figures need matplotlib (the plot extra); without it
the page has the tables and says how to get the figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import numpy as np

from cmetrics._backend import VERSION
from cmetrics._derive.probability_pass import CalibrationBins
from cmetrics._results.figures import (
    MAX_ANNOTATED_CLASSES,
    Curve,
    draw_chance,
    draw_curve,
    draw_matrix,
    page_figure,
    require_matplotlib,
    row_shares,
    square_unit_axes,
    svg_text,
)
from cmetrics._results.intervals import BootstrapResult
from cmetrics._results.text import html_text, number

#: Per-class rows a page shows (past it: the classes with the most support, and a note).
MAX_TABLE_ROWS = 100
#: Per-class tables longer than this are collapsed (``<details>``) in notebooks.
COLLAPSE_ROWS = 20
#: Vertices of all the lines of one curve figure of a page together (a small SVG).
CURVE_VERTICES = 800
#: Past this many classes the confusion matrices are not drawn (a table of K^2 cells).
MAX_DRAWN_CLASSES = 100

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;max-width:70rem;
color:#1b1b1b;padding:0 1rem;line-height:1.4}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.25rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
.meta,.note{color:#555}.note{font-style:italic}
table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.9rem}
th,td{border:1px solid #ddd;padding:.25rem .6rem;text-align:right}th{background:#f4f4f4}
td:first-child,th:first-child{text-align:left}caption{font-weight:600;text-align:left;padding:.2rem 0}
.families{display:flex;flex-wrap:wrap;gap:1.5rem;align-items:flex-start}
.figures{display:flex;flex-wrap:wrap;gap:1rem}figure{margin:0;break-inside:avoid;flex:0 1 31rem;min-width:18rem}
figure svg{width:100%;height:auto}figcaption{font-size:.85rem;color:#444;text-align:center}
.worst td{background:#fff4f0}.wide{overflow-x:auto}
@media print{body{margin:0;max-width:none}details{display:block}details>summary{display:none}
section{break-inside:avoid-page}}
"""


class ReportView(Protocol):
    """What the page reads of a report (a :class:`cmetrics.Report`)."""

    n_samples: float
    n_classes: int
    labels: list[Any]
    per_class: dict[str, dict[str, float]]
    undefined: dict[str, str]
    confusion_matrix: np.ndarray
    prob_confusion_matrix: np.ndarray | None
    calibration: CalibrationBins | None
    curves: list[Curve] | None
    intervals: BootstrapResult | None
    ranking: dict[str, int | str] | None

    def families(self) -> list[tuple[str, dict[str, float]]]: ...


def _table(head: Sequence[str], rows: Iterable[Sequence[object]], caption: str | None = None, cls: str = "") -> str:
    out = [f'<table class="{cls}">' if cls else "<table>"]
    if caption:
        out.append(f"<caption>{html_text(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{html_text(h)}</th>" for h in head) + "</tr></thead><tbody>")
    for row in rows:
        cells = [html_text(c if isinstance(c, str) else number(c)) for c in row]
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def metric_tables(report: ReportView) -> str:
    """The scalar metrics, one table per family."""
    tables = [_table(["metric", "value"], values.items(), family.capitalize()) for family, values in report.families()]
    return '<div class="families">' + "".join(tables) + "</div>"


def interval_table(intervals: BootstrapResult) -> str:
    p = intervals.provenance
    caption = f"{p.confidence_level:.0%} {p.method} intervals, {p.n_resamples:,} {p.scheme} resamples, seed {p.seed}"
    rows = [
        (name, iv.estimate, iv.low, iv.high, iv.standard_error, iv.n_undefined)
        for name, iv in intervals.metrics.items()
    ]
    return _table(["metric", "estimate", "low", "high", "standard error", "undefined"], rows, caption)


def per_class_table(report: ReportView, collapse: bool) -> str:
    """The per-class table: every class up to :data:`MAX_TABLE_ROWS`, else the classes with
    the most support and a note; collapsed past :data:`COLLAPSE_ROWS` rows when ``collapse``."""
    if not report.per_class:
        return ""
    items = list(report.per_class.items())
    note = ""
    if len(items) > MAX_TABLE_ROWS:
        items = sorted(items, key=lambda kv: -kv[1].get("support", 0.0))[:MAX_TABLE_ROWS]
        note = (
            f'<p class="note">{len(report.per_class):,} classes: the {MAX_TABLE_ROWS} with the most support '
            "are shown; Report.to_dict() has them all.</p>"
        )
    cols = list(items[0][1])
    table = (
        '<div class="wide">'
        + _table(["class", *cols], ([lab, *(row[c] for c in cols)] for lab, row in items))
        + "</div>"
    )
    if collapse and len(items) > COLLAPSE_ROWS:
        table = f"<details><summary>Per class ({len(report.per_class):,} classes)</summary>{table}</details>"
    return note + table


def undefined_list(report: ReportView) -> str:
    if not report.undefined:
        return ""
    items = "".join(f"<li><b>{html_text(k)}</b>: {html_text(v)}</li>" for k, v in report.undefined.items())
    return f"<h2>Undefined</h2><ul>{items}</ul>"


def notebook_html(report: ReportView) -> str:
    """The notebook view: headline metrics by family and the per-class table (collapsed when
    long); no figures (they cost a render each: :meth:`Report.to_html` has them)."""
    head = f"<p><b>{number(report.n_samples)} samples, {report.n_classes} classes</b></p>"
    intervals = interval_table(report.intervals) if report.intervals is not None else ""
    return f"<div>{head}{metric_tables(report)}{intervals}{per_class_table(report, collapse=True)}</div>"


# -- figures -------------------------------------------------------------------------------------


def _matrix_figure(values: np.ndarray, labels: list[str], counts: np.ndarray | None, xlabel: str) -> Any:
    fig, ax = page_figure("Report.to_html", figsize=(5.5, 4.5))
    draw_matrix(ax, values, labels, counts=counts, xlabel=xlabel)
    return fig


def _reliability_figure(bins: CalibrationBins) -> Any:
    fig, ax = page_figure("Report.to_html", figsize=(5.0, 4.5))
    keep = bins.weight > 0
    ax.plot(bins.mean_confidence[keep], bins.accuracy[keep], "s-", label=f"model (ECE = {bins.ece():0.3f})")
    draw_chance(ax, (0, 1), (0, 1), "perfectly calibrated", linestyle=":")
    centres = (bins.edges[:-1] + bins.edges[1:]) / 2
    twin = ax.twinx()
    twin.bar(centres, bins.weight / max(float(bins.weight.sum()), 1e-300), width=np.diff(bins.edges), alpha=0.2)
    twin.set_ylabel("share of rows")
    square_unit_axes(ax, "mean confidence", "accuracy")
    ax.legend(loc="upper left")
    return fig


def _curve_figure(curves: list[Curve], kind: str) -> Any:
    xlabel, ylabel = {
        "roc": ("false positive rate", "true positive rate"),
        "precision_recall": ("recall", "precision"),
        "risk_coverage": ("coverage", "selective risk"),
    }[kind]
    fig, ax = page_figure("Report.to_html")
    budget = max(100, CURVE_VERTICES // len(curves))  # the figure's vertices, shared by its lines
    for c in curves:
        style = {"drawstyle": "steps-post"} if kind == "precision_recall" else {}
        label = f"{c.label} ({c.value_name} = {c.value:0.3f})"
        draw_curve(ax, c.x, c.y, label, hull=kind == "roc", max_vertices=budget, **style)
    if kind == "roc":
        draw_chance(ax, (0, 1), (0, 1), "chance (AUC = 0.5)")
    if kind == "risk_coverage":
        ax.set(xlabel=xlabel, ylabel=ylabel, xlim=(0, 1.01))
    else:
        square_unit_axes(ax, xlabel, ylabel)
    ax.legend(loc="best", fontsize="small")
    return fig


def figures_of(report: ReportView) -> list[tuple[str, str, Callable[[], Any]]]:
    """``(name, caption, draw)`` of every figure the report's data allow: ``draw()`` returns a
    matplotlib Figure (outside pyplot); ``name`` suits a file name."""
    labels = [str(x) for x in report.labels]
    out: list[tuple[str, str, Callable[[], Any]]] = []
    if 0 < report.n_classes <= MAX_DRAWN_CLASSES:
        cm = np.asarray(report.confusion_matrix, dtype=np.float64)
        counts = report.confusion_matrix if report.n_classes <= MAX_ANNOTATED_CLASSES else None
        out.append(
            (
                "confusion_matrix",
                "Confusion matrix: each cell's count and, in colour, its share of the true class",
                lambda: _matrix_figure(row_shares(cm), labels, counts, "predicted label"),
            )
        )
        pcm = report.prob_confusion_matrix
        if pcm is not None:
            out.append(
                (
                    "prob_confusion_matrix",
                    "Probabilistic confusion matrix: probability mass and, in colour, its share of the true class",
                    lambda: _matrix_figure(row_shares(pcm), labels, pcm, "hypothesised label (probability mass)"),
                )
            )
    if report.calibration is not None:
        bins = report.calibration
        out.append(
            ("reliability", "Reliability diagram with the share of rows per bin", lambda: _reliability_figure(bins))
        )
    names = {"roc": "ROC curves", "precision_recall": "Precision-recall curves", "risk_coverage": "Risk-coverage"}
    for kind, caption in names.items():
        chosen = [c for c in report.curves or [] if c.kind == kind]
        if chosen:
            out.append((kind, caption, lambda chosen=chosen, kind=kind: _curve_figure(chosen, kind)))  # type: ignore[misc]
    return out


def figure_svgs(report: ReportView) -> list[tuple[str, str]]:
    """``(caption, inline SVG)`` of every figure (matplotlib must be importable)."""
    return [(caption, svg_text(draw())) for _, caption, draw in figures_of(report)]


def _figure_section(report: ReportView, plots: bool) -> str:
    if not plots:
        return ""
    try:
        require_matplotlib("Report.to_html")
    except ImportError:
        return (
            '<section id="figures"><h2>Figures</h2><p class="note">The figures need matplotlib: '
            'pip install "cmetrics[plot]" (or pass plots=False).</p></section>'
        )
    parts = [
        f"<figure>{svg}<figcaption>{html_text(caption)}</figcaption></figure>" for caption, svg in figure_svgs(report)
    ]
    note = ""
    if report.curves is None and (report.ranking is not None or report.prob_confusion_matrix is not None):
        note = (
            '<p class="note">Curves (ROC, precision-recall, risk-coverage) are drawn from ranking states: '
            "evaluate(..., curves=True), Evaluator.report(curves=True), or cmetrics score --format html.</p>"
        )
    if report.n_classes > MAX_DRAWN_CLASSES:
        note += f'<p class="note">{report.n_classes:,} classes: the confusion matrices are not drawn.</p>'
    return f'<section id="figures"><h2>Figures</h2>{note}<div class="figures">{"".join(parts)}</div></section>'


def report_page(report: ReportView, *, plots: bool = True, title: str | None = None, extra: str = "") -> str:
    """One self-contained HTML page of the report (``extra``: more sections, already HTML)."""
    name = title or "Evaluation report"
    intervals = report.intervals
    sections = [
        f'<section id="metrics"><h2>Metrics</h2>{metric_tables(report)}</section>',
        f'<section id="intervals"><h2>Intervals</h2>{interval_table(intervals)}</section>' if intervals else "",
        extra,
        _figure_section(report, plots),
        f'<section id="per-class"><h2>Per class</h2>{per_class_table(report, collapse=False)}</section>',
        undefined_list(report),
    ]
    meta = f"{number(report.n_samples)} samples · {report.n_classes:,} classes · cmetrics {html_text(VERSION)}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html_text(name)}</title><style>{CSS}</style></head><body>"
        f'<header><h1>{html_text(name)}</h1><p class="meta">{meta}</p></header>'
        + "".join(sections)
        + "</body></html>\n"
    )


def group_table(rows: dict[str, dict[str, float]], by: str, metric: str, lower_is_better: bool) -> str:
    """The per-group summary, worst group first for ``metric`` (NaN last); the worst tenth
    (at least one) highlighted."""

    def badness(item: tuple[str, dict[str, float]]) -> float:
        v = item[1].get(metric, math.nan)
        return math.inf if math.isnan(v) else (-v if lower_is_better else v)

    ordered = sorted(rows.items(), key=badness)
    cols = list(ordered[0][1]) if ordered else ["n_samples"]
    worst = max(1, len(ordered) // 10)
    body = []
    for i, (key, row) in enumerate(ordered[:MAX_TABLE_ROWS]):
        cells = "".join(f"<td>{html_text(number(row[c]))}</td>" for c in cols)
        cls = ' class="worst"' if i < worst else ""
        body.append(f"<tr{cls}><td>{html_text(key)}</td>{cells}</tr>")
    head = "".join(f"<th>{html_text(c)}</th>" for c in [by, *cols])
    note = ""
    if len(ordered) > MAX_TABLE_ROWS:
        note = (
            f'<p class="note">{len(ordered):,} groups: the {MAX_TABLE_ROWS} worst by {html_text(metric)} are shown.</p>'
        )
    caption = f"Groups, worst {html_text(metric)} first"
    table = f"<table><caption>{caption}</caption><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    return f'<section id="groups"><h2>Per group ({html_text(by)})</h2>{note}{table}</section>'

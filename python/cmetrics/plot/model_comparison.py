"""The papers' pictures of several models: accuracy against entropy score and against purity
(Tornetta's figures, with his quadrant guides), and per-class metric bars with their bootstrap
intervals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cmetrics._base.aliases import F64
from cmetrics._results.figures import new_axes, require_matplotlib
from cmetrics._results.report import Report
from cmetrics._results.text import printable
from cmetrics.exceptions import ValidationError

__all__ = ["ModelComparisonDisplay", "PerClassDisplay", "compare_models", "per_class_bars"]

#: Tornetta's quadrant splits (accuracy and entropy score at 0.5) and the purity strip of
#: poorly confident models (0.5 to 0.7).
QUADRANT_SPLIT = 0.5
PURITY_STRIP = (0.5, 0.7)


class ModelComparisonDisplay:
    """Accuracy (x) against entropy score and against purity (y) for each model: one point per
    report, joined in the given order when a model has several (a sweep of thresholds, of
    training sizes).

    >>> import cmetrics
    >>> r = cmetrics.evaluate([0, 1, 1, 0], y_proba=[[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.7, 0.3]])
    >>> d = compare_models({"model": r})
    >>> d.accuracy["model"].tolist(), [round(v, 4) for v in d.entropy_score["model"].tolist()]
    ([0.75], [0.2392])
    """

    def __init__(self, accuracy: dict[str, F64], entropy_score: dict[str, F64], purity: dict[str, F64]) -> None:
        self.accuracy, self.entropy_score, self.purity = accuracy, entropy_score, purity

    def plot(self, axes: Sequence[Any] | None = None, *, quadrants: bool = True) -> ModelComparisonDisplay:
        """Draw on two axes (default: a new figure with two panels)."""
        if axes is None:
            plt = require_matplotlib("compare_models")
            axes = list(plt.subplots(1, 2, figsize=(10, 4.5), layout="constrained")[1])
        elif len(axes) != 2:
            msg = f"axes must be two matplotlib axes (entropy score, purity), got {len(axes)}"
            raise ValidationError(msg)
        else:
            new_axes(axes[0], "compare_models")
        self.lines_: dict[str, list[Any]] = {}
        for name, acc in self.accuracy.items():
            a = axes[0].plot(acc, self.entropy_score[name], "o-", label=printable(name))[0]
            b = axes[1].plot(acc, self.purity[name], "o-", label=printable(name), color=a.get_color())[0]
            self.lines_[name] = [a, b]
        if quadrants:
            for ax in axes:
                ax.axvline(QUADRANT_SPLIT, color="grey", linestyle=":", linewidth=1)
            axes[0].axhline(QUADRANT_SPLIT, color="grey", linestyle=":", linewidth=1)
            axes[1].axhspan(*PURITY_STRIP, color="grey", alpha=0.12, label="poorly confident (0.5-0.7)")
        for ax, ylabel in zip(axes, ("entropy score", "purity"), strict=True):
            ax.set(xlabel="accuracy", ylabel=ylabel, xlim=(0, 1.02), ylim=(0, 1.02))
            ax.legend(loc="lower right", fontsize="small")
        self.axes_, self.figure_ = list(axes), axes[0].figure
        return self


def compare_models(
    reports: Mapping[str, Report | Sequence[Report]], *, axes: Sequence[Any] | None = None, quadrants: bool = True
) -> ModelComparisonDisplay:
    """Accuracy against entropy score and against purity of several models (reports of
    probabilities; a sequence of reports per model draws its path)."""
    if not reports:
        msg = "reports is empty; pass {model name: report (or a list of reports)}"
        raise ValidationError(msg)
    acc: dict[str, F64] = {}
    ent: dict[str, F64] = {}
    pur: dict[str, F64] = {}
    for name, given in reports.items():
        series = [given] if isinstance(given, Report) else list(given)
        for r in series:
            if not isinstance(r, Report) or "entropy_score" not in r.metrics:
                msg = f"model {name!r}: compare_models needs reports of probabilities (evaluate(..., y_proba=...))"
                raise ValidationError(msg)
        acc[name] = np.array([r.accuracy for r in series])
        ent[name] = np.array([r.entropy_score for r in series])
        pur[name] = np.array([r.purity for r in series])
    return ModelComparisonDisplay(acc, ent, pur).plot(axes, quadrants=quadrants)


class PerClassDisplay:
    """One bar per class and model for a per-class metric, with the bootstrap interval of
    each bar when the report has intervals (``evaluate(..., bootstrap=N)``).

    >>> import cmetrics
    >>> r = cmetrics.evaluate([0, 1, 1, 0] * 20, y_pred=[0, 1, 0, 0] * 20, bootstrap=200)
    >>> d = per_class_bars({"model": r}, "recall")
    >>> d.values["model"].tolist(), bool(d.low["model"][1] < 0.5 < d.high["model"][1])
    ([1.0, 0.5], True)
    """

    def __init__(self, labels: list[str], values: dict[str, F64], low: dict[str, F64], high: dict[str, F64]) -> None:
        self.labels, self.values, self.low, self.high = labels, values, low, high

    def plot(self, ax: Any = None, *, metric: str = "") -> PerClassDisplay:
        ax, fig = new_axes(ax, "per_class_bars")
        width = 0.8 / max(len(self.values), 1)
        x = np.arange(len(self.labels))
        self.bars_: dict[str, Any] = {}
        for i, (name, v) in enumerate(self.values.items()):
            lo, hi = self.low[name], self.high[name]
            err = None if np.isnan(lo).all() else np.vstack([v - lo, hi - v])
            self.bars_[name] = ax.bar(x + (i - (len(self.values) - 1) / 2) * width, v, width, yerr=err,
                                      capsize=3, label=printable(name))  # fmt: skip
        ax.set_xticks(x, labels=[printable(lab) for lab in self.labels])
        ax.set(ylabel=metric, ylim=(0, 1.05))
        ax.legend(fontsize="small")
        self.ax_, self.figure_ = ax, fig
        return self


def per_class_bars(reports: Mapping[str, Report], metric: str = "f1", *, ax: Any = None) -> PerClassDisplay:
    """Bars of ``metric`` per class (``f1``, ``precision``, ``recall``, ``cf1``, ...) for each
    model, with the intervals of reports that have them."""
    if not reports:
        msg = "reports is empty; pass {model name: report}"
        raise ValidationError(msg)
    first = next(iter(reports.values()))
    labels = list(first.per_class)
    values, low, high = {}, {}, {}
    for name, r in reports.items():
        if list(r.per_class) != labels:
            msg = f"model {name!r} has other classes than the first model; compare reports of the same labels"
            raise ValidationError(msg)
        if metric not in r.per_class[labels[0]]:
            msg = f"no per-class {metric!r}; choose from {sorted(r.per_class[labels[0]])}"
            raise ValidationError(msg)
        values[name] = np.array([r.per_class[lab][metric] for lab in labels])
        rows = r.intervals.per_class if r.intervals is not None else {}
        low[name] = np.array([rows[lab][metric].low if metric in rows.get(lab, {}) else np.nan for lab in labels])
        high[name] = np.array([rows[lab][metric].high if metric in rows.get(lab, {}) else np.nan for lab in labels])
    return PerClassDisplay(labels, values, low, high).plot(ax, metric=metric)

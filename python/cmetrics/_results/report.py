"""The one report builder: every metric of a confusion matrix, of the probability pass and
of the ranking walk, as a :class:`Report`. :func:`cmetrics.evaluate`,
:meth:`cmetrics.Evaluator.report`, :func:`cmetrics.hard_label_report` and
:meth:`cmetrics.CountedTable.report` all build theirs here.

The metrics of a report and how each is computed are the tables below: adding a hard-label
metric to every report is one line in :data:`HARD`.
"""

from __future__ import annotations

import copy
import json
import math
import os
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from cmetrics._base.aliases import F64, I64, Average, Bools, Label, ZeroDivision
from cmetrics._derive import ranking_walk, table_metrics
from cmetrics._derive.counted_table import CountedTable
from cmetrics._derive.probability_pass import CalibrationBins, ProbResult
from cmetrics._kernels import BinaryRanking
from cmetrics._results import html
from cmetrics._results.figures import Curve
from cmetrics._results.intervals import BootstrapResult
from cmetrics._results.text import md, number
from cmetrics.exceptions import UndefinedMetricWarning

_AVERAGES: tuple[Average, ...] = ("macro", "weighted", "micro")
_PRF = (("precision", "precision"), ("recall", "recall"), ("f1", "f-score"))


def _prf(name: str, average: Average, prefix: str = "") -> Callable[[CountedTable, ZeroDivision], float]:
    """One averaged precision, recall or F1, warning only about itself (``prefix="c"``: the
    confidence version, on the table of the probabilistic confusion matrix)."""
    warn_for = next(w for n, w in _PRF if n == name)

    def value(cm: CountedTable, zd: ZeroDivision) -> float:
        return table_metrics.report_prf(cm, average, zd, prefix, warn_for)

    return value


def _on_confidence_table(
    metric: Callable[[CountedTable, ZeroDivision], float],
) -> Callable[[ProbResult, ZeroDivision], float]:
    return lambda res, zd: metric(res.cmatrix, zd)


#: The hard-label metrics of every report, in display order: name -> value of a confusion matrix.
HARD: dict[str, Callable[[CountedTable, ZeroDivision], float]] = {
    "accuracy": lambda cm, zd: table_metrics.accuracy(cm),
    "balanced_accuracy": lambda cm, zd: table_metrics.balanced_accuracy(cm),
    "balanced_accuracy_adjusted": lambda cm, zd: table_metrics.balanced_accuracy(cm, adjusted=True),
    **{f"{name}_{avg}": _prf(name, avg) for avg in _AVERAGES for name, _ in _PRF},
    "matthews_corrcoef": lambda cm, zd: table_metrics.matthews_corrcoef(cm),
    "cohen_kappa": lambda cm, zd: table_metrics.cohen_kappa(cm, None, None, float("nan")),
    "informedness": lambda cm, zd: table_metrics.informedness(cm),
    "markedness": lambda cm, zd: table_metrics.markedness(cm),
    "normalized_information_transfer": lambda cm, zd: table_metrics.nit(cm),
    "entropy_modulated_accuracy": lambda cm, zd: table_metrics.entropy_modulated_accuracy(cm),
    "mutual_information_bits": lambda cm, zd: table_metrics.mutual_information_bits(cm),
}
#: The probabilistic metrics (with ``y_proba``): name -> value of the probability pass.
PROBA: dict[str, Callable[[ProbResult, ZeroDivision], float]] = {
    **{f"c{name}_{avg}": _on_confidence_table(_prf(name, avg, prefix="c")) for avg in _AVERAGES for name, _ in _PRF},
    "entropy_score": lambda res, zd: res.entropy_score(),
    "purity": lambda res, zd: res.purity(),
    "brier_score": lambda res, zd: res.brier(),
    "log_loss": lambda res, zd: res.log_loss(),
}
CALIBRATION: dict[str, Callable[[ProbResult, ZeroDivision], float]] = {
    "expected_calibration_error": lambda res, zd: res.ece(),
    "max_calibration_error": lambda res, zd: res.mce(),
}
#: The selective-prediction metrics of the confidence (with ``y_proba`` or ``confidence``).
RANKING = ("refinement", "auroc_confidence", "reversed_pair_proportion", "aurc")
#: The metric families, in display order: the table and Markdown show each under a heading.
#: The ranking metrics of the probability columns (one-vs-rest, macro) and top-k accuracy.
MULTICLASS_RANKING = ("roc_auc_ovr", "average_precision_ovr", *(f"top_{k}_accuracy" for k in range(1, 33)))

FAMILIES = (
    ("hard-label", tuple(HARD)),
    ("probabilistic", tuple(PROBA)),
    ("calibration", tuple(CALIBRATION)),
    ("class ranking", MULTICLASS_RANKING),
    ("selective prediction", RANKING),
)


class Report:
    """Every metric of one evaluation, computed from the accumulators of one pass.

    Scalars are attributes (``report.accuracy``, ``report.log_loss``, ...);
    ``report.per_class`` maps each label to its per-class values;
    ``report.confusion_matrix`` (and ``report.prob_confusion_matrix`` with
    probabilities) are the tables; ``report.calibration`` the reliability bins.
    Values that are undefined are NaN here, ``None`` in :meth:`to_dict`, and the
    reason is in ``report.undefined``.
    """

    def __init__(
        self,
        cm: CountedTable,
        values: dict[str, float],
        per_class: dict[str, dict[str, float]],
        undefined: dict[str, str],
        proba: ProbResult | None = None,
        ranking: dict[str, int | str] | None = None,
        kept: tuple[Bools, F64] | None = None,
    ) -> None:
        self._values = values
        #: Per-class values by label (as text): precision, recall, f1, support, prevalence, bias,
        #: youden_j, markedness (and cprecision, crecall, cf1 with probabilities).
        self.per_class = per_class
        #: Why each undefined (NaN) metric is undefined.
        self.undefined = undefined
        #: The reliability bins (with probabilities), else None.
        self.calibration: CalibrationBins | None = None if proba is None else proba.bins
        #: The labels, in the order of the rows and columns of the tables.
        self.labels: list[Label] = cm.labels.tolist()
        #: Total (weighted) number of rows.
        self.n_samples: float = cm.n_samples
        self.n_classes: int = cm.n_classes
        #: Whether the report was made from probabilities.
        self.has_proba: bool = proba is not None
        #: How the ranking metrics were computed: ``{"mode": "exact"}``, or
        #: ``{"mode": "approximate", "bins": B}``; None without them.
        self.ranking = ranking
        #: How the class-ranking metrics (one-vs-rest AUROC and AP of the probability columns)
        #: were computed: "exact", "approximate" or "off"; None without probabilities.
        self.class_ranking: str | None = None
        #: The hard confusion matrix (int64 counts, or float64 sums with weights).
        self.confusion_matrix: F64 | I64 = cm.table(_quiet=True)
        #: The probabilistic confusion matrix (with probabilities), else None.
        self.prob_confusion_matrix: F64 | None = None if proba is None else proba.prob_matrix()
        #: Each row's top-label confidence and correctness (``keep_confidence=True``), else None.
        self.confidence: F64 | None = None if kept is None else kept[1]
        self.correct: Bools | None = None if kept is None else kept[0]
        #: Bootstrap intervals of the confusion-matrix metrics (``evaluate(..., bootstrap=N)`` or
        #: :func:`cmetrics.report_intervals`), else None.
        self.intervals: BootstrapResult | None = None
        #: The curves of the ranking states, decimated (``Evaluator.report(curves=True)``), else None.
        self.curves: list[Curve] | None = None

    def undefined_like(self, reason: str) -> Report:
        """A report of the same metrics, classes and modes with nothing to score (rows whose
        weights are all 0): every value NaN with ``reason``, the tables zero, 0 samples."""
        out = copy.copy(self)
        out._values = dict.fromkeys(self._values, math.nan)
        out.undefined = dict.fromkeys(self._values, reason)
        out.per_class = {
            lab: {k: 0.0 if k == "support" else math.nan for k in row} for lab, row in self.per_class.items()
        }
        out.n_samples = 0.0
        out.confusion_matrix = np.zeros_like(self.confusion_matrix)
        if self.prob_confusion_matrix is not None:
            out.prob_confusion_matrix = np.zeros_like(self.prob_confusion_matrix)
        out.calibration = None
        out.confidence = out.correct = None
        return out

    def __getattr__(self, name: str) -> float:
        values: dict[str, float] = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        msg = f"Report has no metric {name!r}; available: {sorted(values)}"
        raise AttributeError(msg)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._values))

    @property
    def metrics(self) -> dict[str, float]:
        """The scalar metrics as a dict (NaN where undefined)."""
        return dict(self._values)

    def families(self) -> list[tuple[str, dict[str, float]]]:
        """The scalar metrics grouped by family (hard-label, probabilistic, calibration,
        selective prediction), families without a value left out."""
        out = []
        for name, keys in FAMILIES:
            values = {k: self._values[k] for k in keys if k in self._values}
            if values:
                out.append((name, values))
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict: plain floats and lists; NaN becomes None with its reason
        under ``"undefined"``."""

        def clean(x: float) -> float | None:
            return None if not math.isfinite(x) else x

        out: dict[str, Any] = {
            "n_samples": self.n_samples,
            "n_classes": self.n_classes,
            "labels": [str(lab) if not isinstance(lab, (int, float, bool)) else lab for lab in self.labels],
            "metrics": {k: clean(v) for k, v in self._values.items()},
            "per_class": {lab: {k: clean(v) for k, v in row.items()} for lab, row in self.per_class.items()},
            "confusion_matrix": self.confusion_matrix.tolist(),
            "undefined": dict(self.undefined),
        }
        if self.prob_confusion_matrix is not None:
            out["prob_confusion_matrix"] = self.prob_confusion_matrix.tolist()
        if self.calibration is not None:
            out["calibration"] = self.calibration.to_dict()
        if self.ranking is not None:
            out["ranking"] = dict(self.ranking)
        if self.class_ranking is not None:
            out["class_ranking"] = self.class_ranking
        if self.intervals is not None:
            out["intervals"] = self.intervals.to_dict()
        return out

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`to_dict` as JSON text (``kwargs`` go to :func:`json.dumps`)."""
        kwargs.setdefault("indent", 2)
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    def to_markdown(self) -> str:
        """The metrics, one table per family under a heading, and the per-class table, as
        GitHub-flavoured Markdown (labels escaped: no control character or ``|`` gets through)."""
        lines = [f"**{number(self.n_samples)} samples, {self.n_classes} classes**"]
        for family, values in self.families():
            lines += ["", f"### {family.capitalize()}", "", "| metric | value |", "|---|---|"]
            lines += [f"| {k} | {number(v)} |" for k, v in values.items()]
        if self.per_class:
            cols = list(next(iter(self.per_class.values())))
            lines += ["", "### Per class", "", "| class | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
            for lab, row in self.per_class.items():
                lines.append(f"| {md(lab)} | " + " | ".join(number(row[c]) for c in cols) + " |")
        if self.undefined:
            lines += ["", "Undefined: " + "; ".join(f"{k}: {md(v)}" for k, v in self.undefined.items())]
        if self.intervals is not None:
            lines += ["", "### Intervals", "", self.intervals.to_markdown().rstrip("\n")]
        return "\n".join(lines) + "\n"

    def to_html(
        self, path: str | os.PathLike[str] | None = None, *, plots: bool = True, title: str | None = None
    ) -> str:
        """One self-contained HTML page: the metric tables of :meth:`to_markdown` by family, the
        intervals, the figures as inline SVG (the confusion matrix with counts and rates, the
        probabilistic one, the reliability diagram, and with :attr:`curves` the ROC,
        precision-recall and risk-coverage curves) and the per-class table. No script and no
        external resource; every label escaped. Written to ``path`` too when given (UTF-8).
        Without matplotlib (``plots=False``, or the plot extra missing) the page has the
        tables and says how to get the figures.

        >>> import cmetrics
        >>> page = cmetrics.evaluate([0, 1, 1, 0], y_pred=[0, 1, 0, 0], labels=[0, 1]).to_html(plots=False)
        >>> page.startswith("<!DOCTYPE html>"), "<table" in page, "<script" in page
        (True, True, False)
        """
        page = html.report_page(self, plots=plots, title=title)
        if path is not None:
            Path(path).write_text(page, encoding="utf-8")
        return page

    def _repr_html_(self) -> str:
        """The notebook view: headline metrics by family, intervals, per-class table (collapsed
        when long)."""
        return html.notebook_html(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """Text, Markdown and HTML views for notebooks and other front ends."""
        return {"text/plain": repr(self), "text/markdown": self.to_markdown(), "text/html": self._repr_html_()}

    def __repr__(self) -> str:
        head = f"Report(n_samples={number(self.n_samples)}, n_classes={self.n_classes}, proba={self.has_proba})"
        width = max((len(k) for k in self._values), default=0)
        body = "\n".join(f"  {k:<{width}}  {number(v)}" for k, v in self._values.items())
        return f"{head}\n{body}"


def _collect(values: dict[str, float], undefined: dict[str, str], name: str, fn: Callable[[], float]) -> None:
    """Compute one metric, turning its warnings into a recorded reason."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values[name] = float(fn())
    reasons = [str(w.message) for w in caught if issubclass(w.category, (UndefinedMetricWarning, UserWarning))]
    if reasons:
        undefined[name] = " ".join(dict.fromkeys(reasons))


def build_report(
    cm: CountedTable,
    *,
    proba: ProbResult | None = None,
    walk: BinaryRanking | None = None,
    zero_division: ZeroDivision = "warn",
    ranking: dict[str, int | str] | None = None,
    kept: tuple[Bools, F64] | None = None,
    extra: tuple[dict[str, float], dict[str, str]] | None = None,
    class_ranking: str | None = None,
) -> Report:
    """The :class:`Report` of a hard confusion matrix, the accumulators of the probability
    pass (or None), the ranking walk (or None), and values computed elsewhere with their
    undefined reasons (the class-ranking metrics)."""
    values: dict[str, float] = {}
    undefined: dict[str, str] = {}
    if extra is not None:
        values.update(extra[0])
        undefined.update(extra[1])
    for name, hard in HARD.items():
        _collect(values, undefined, name, partial(hard, cm, zero_division))
    per_class = table_metrics.per_class_table(cm, zero_division)
    if proba is not None:
        for name, prob in {**PROBA, **CALIBRATION}.items():
            _collect(values, undefined, name, partial(prob, proba, zero_division))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cp, cr, cf, _ = table_metrics.prfs(proba.cmatrix, zero_division=zero_division, prefix="c")
        for i, row in enumerate(per_class.values()):
            row.update({"cprecision": float(cp[i]), "crecall": float(cr[i]), "cf1": float(cf[i])})
    if walk is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            s = ranking_walk.selective_scores(walk, "half", cm._weighted)
        values.update(
            {
                "refinement": s.refinement,
                "auroc_confidence": s.auroc,
                "reversed_pair_proportion": s.reversed_pair_proportion,
                "aurc": s.aurc,
            }
        )
        if ranking_walk.no_pairs(walk):
            reason = "all predictions are correct or all are wrong: no (correct, wrong) pair to rank"
            undefined["refinement"] = undefined["auroc_confidence"] = reason
        if ranking is None:
            ranking = {"mode": "exact"}
    report = Report(cm, values, per_class, undefined, proba, ranking if walk is not None else None, kept)
    report.class_ranking = class_ranking if proba is not None else None
    return report

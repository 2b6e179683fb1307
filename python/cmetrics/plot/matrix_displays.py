"""Matrix and calibration Displays with scikit-learn's contract: the confusion matrix (counts
and row-normalised rates together), the probabilistic confusion matrix, and the reliability
diagram with its confidence histogram. Each draws from rows (``from_predictions``,
``from_estimator``) or from what a :class:`cmetrics.Report` (``from_report``) or a merged
:class:`cmetrics.Evaluator` (``from_evaluator``) already holds."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._base.aliases import F64, Label
from cmetrics._derive.probability_pass import CalibrationBins
from cmetrics._results.figures import draw_chance, draw_matrix, new_axes, require_matplotlib, row_shares
from cmetrics._results.report import Report
from cmetrics.confusion import confusion_matrix
from cmetrics.exceptions import ValidationError
from cmetrics.probabilistic import calibration_bins, prob_confusion_matrix
from cmetrics.streaming.evaluator import Evaluator

__all__ = ["CalibrationDisplay", "ConfusionMatrixDisplay", "ProbConfusionMatrixDisplay", "calibration_curve"]

Normalize = Literal["true", "pred", "all"] | None


def _normalised(cm: F64, normalize: Normalize) -> F64:
    """scikit-learn's ``normalize``: rows ("true"), columns ("pred") or the total ("all")."""
    if normalize not in (None, "true", "pred", "all"):
        msg = f"normalize must be 'true', 'pred', 'all' or None, got {normalize!r}"
        raise ValidationError(msg)
    if normalize == "true":
        return row_shares(cm)
    with np.errstate(invalid="ignore", divide="ignore"):
        if normalize == "pred":
            out = cm / cm.sum(axis=0, keepdims=True)
        elif normalize == "all":
            out = cm / cm.sum()
        else:
            return cm
    return np.asarray(np.nan_to_num(out), dtype=np.float64)


class ConfusionMatrixDisplay:
    """A confusion matrix, each cell's count and its share of the true class's row together
    (``counts`` beside the matrix shown); past 30 classes the cells keep their colour and drop
    their text.

    >>> d = ConfusionMatrixDisplay.from_predictions([0, 1, 1, 2], [0, 1, 2, 2])
    >>> d.confusion_matrix.tolist()
    [[1, 0, 0], [0, 1, 1], [0, 0, 1]]
    >>> d.text_[1, 2].get_text()
    '1\\n50%'
    """

    def __init__(
        self, confusion_matrix: ArrayLike, *, display_labels: ArrayLike | None = None, counts: ArrayLike | None = None
    ) -> None:
        #: The matrix shown (counts, or rates with ``normalize``).
        self.confusion_matrix = np.asarray(confusion_matrix)
        self.display_labels = None if display_labels is None else np.asarray(display_labels)
        #: The counts, when the matrix shown is normalised.
        self.counts = None if counts is None else np.asarray(counts)

    def plot(
        self, *, include_values: bool = True, cmap: str = "viridis", xticks_rotation: str | float = "horizontal",
        values_format: str | None = None, ax: Any = None, colorbar: bool = True, rates: bool = True,
    ) -> ConfusionMatrixDisplay:  # fmt: skip
        """Draw on ``ax`` (default: a new figure). With ``rates`` (the default) and a matrix of
        counts, the colour and the second line of each cell are the row-normalised rate."""
        ax, fig = new_axes(ax, "ConfusionMatrixDisplay")
        cm = np.asarray(self.confusion_matrix, dtype=np.float64)
        k = cm.shape[0]
        labels = [str(x) for x in (self.display_labels if self.display_labels is not None else np.arange(k))]
        counts = self.counts
        shown = cm
        if rates and counts is None and _whole(cm):
            counts, shown = self.confusion_matrix, _normalised(cm, "true")
        self.im_, text = draw_matrix(
            ax, shown, labels, counts=counts if include_values else None, cmap=cmap,
            values_format=values_format, colorbar=colorbar,
        )  # fmt: skip
        if not include_values and text is not None:
            for t in text.ravel():
                t.set_visible(False)
        self.text_ = text if include_values else None
        ax.tick_params(axis="x", labelrotation=0 if xticks_rotation == "horizontal" else xticks_rotation)
        self.ax_, self.figure_ = ax, fig
        return self

    @classmethod
    def from_predictions(
        cls, y_true: ArrayLike, y_pred: ArrayLike, *, labels: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None, normalize: Normalize = None, display_labels: ArrayLike | None = None,
        include_values: bool = True, xticks_rotation: str | float = "horizontal", values_format: str | None = None,
        cmap: str = "viridis", ax: Any = None, colorbar: bool = True,
    ) -> ConfusionMatrixDisplay:  # fmt: skip
        """The confusion matrix of ``y_pred`` against ``y_true`` (scikit-learn's values, its
        ``normalize`` too)."""
        t, p = np.asarray(y_true), np.asarray(y_pred)
        cm = confusion_matrix(t, p, labels=labels, sample_weight=sample_weight)
        if display_labels is None:
            display_labels = np.unique(np.concatenate([t, p])) if labels is None else np.asarray(labels)
        shown = _normalised(np.asarray(cm, dtype=np.float64), normalize) if normalize else cm
        d = cls(shown, display_labels=display_labels, counts=cm if normalize else None)
        return d.plot(include_values=include_values, cmap=cmap, xticks_rotation=xticks_rotation,
                      values_format=values_format, ax=ax, colorbar=colorbar)  # fmt: skip

    @classmethod
    def from_estimator(
        cls, estimator: Any, X: ArrayLike, y: ArrayLike, **kwargs: Any,  # noqa: N803
    ) -> ConfusionMatrixDisplay:  # fmt: skip
        """:meth:`from_predictions` of a fitted classifier's ``predict(X)`` (its classes as labels)."""
        kwargs.setdefault("labels", getattr(estimator, "classes_", None))
        return cls.from_predictions(y, estimator.predict(X), **kwargs)

    @classmethod
    def from_report(cls, report: Report, *, ax: Any = None, **kwargs: Any) -> ConfusionMatrixDisplay:
        """The matrix a Report holds (any number of rows behind it)."""
        d = cls(report.confusion_matrix, display_labels=[str(x) for x in report.labels])
        return d.plot(ax=ax, **kwargs)

    @classmethod
    def from_evaluator(cls, evaluator: Evaluator, *, ax: Any = None, **kwargs: Any) -> ConfusionMatrixDisplay:
        """The matrix of a merged Evaluator, without the rows."""
        return cls.from_report(evaluator.report(), ax=ax, **kwargs)


def _whole(cm: F64) -> bool:
    return bool(np.all(np.isfinite(cm)) and np.all(cm == np.round(cm)))


class ProbConfusionMatrixDisplay:
    """The probabilistic confusion matrix (Yacouby and Axman): row ``i``, column ``j`` sums the
    probability given to class ``j`` by the rows of true class ``i``; shown with the row shares.

    >>> d = ProbConfusionMatrixDisplay.from_predictions([0, 1], [[0.8, 0.2], [0.3, 0.7]])
    >>> d.prob_confusion_matrix.tolist()
    [[0.8, 0.2], [0.3, 0.7]]
    """

    def __init__(self, prob_confusion_matrix: ArrayLike, *, display_labels: ArrayLike | None = None) -> None:
        self.prob_confusion_matrix = np.asarray(prob_confusion_matrix, dtype=np.float64)
        self.display_labels = None if display_labels is None else np.asarray(display_labels)

    def plot(self, *, ax: Any = None, cmap: str = "viridis", colorbar: bool = True) -> ProbConfusionMatrixDisplay:
        """Draw on ``ax``: colour and second line the row share, first line the sum."""
        ax, fig = new_axes(ax, "ProbConfusionMatrixDisplay")
        m = self.prob_confusion_matrix
        k = m.shape[0]
        labels = [str(x) for x in (self.display_labels if self.display_labels is not None else np.arange(k))]
        self.im_, self.text_ = draw_matrix(
            ax, _normalised(m, "true"), labels, counts=m, cmap=cmap, colorbar=colorbar,
            xlabel="Hypothesised label (probability mass)",
        )  # fmt: skip
        self.ax_, self.figure_ = ax, fig
        return self

    @classmethod
    def from_predictions(
        cls, y_true: ArrayLike, y_score: ArrayLike, *, labels: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None, ax: Any = None, cmap: str = "viridis", colorbar: bool = True,
    ) -> ProbConfusionMatrixDisplay:  # fmt: skip
        """The probabilistic confusion matrix of ``y_score``, probabilities (one column per class)."""
        m = prob_confusion_matrix(y_true, y_score, labels=labels, sample_weight=sample_weight)
        shown = labels if labels is not None else np.unique(np.asarray(y_true))
        if len(np.asarray(shown)) != m.shape[0]:
            shown = np.arange(m.shape[0])
        return cls(m, display_labels=shown).plot(ax=ax, cmap=cmap, colorbar=colorbar)

    @classmethod
    def from_estimator(cls, estimator: Any, X: ArrayLike, y: ArrayLike, **kwargs: Any) -> ProbConfusionMatrixDisplay:  # noqa: N803
        """:meth:`from_predictions` of a fitted classifier's ``predict_proba(X)``."""
        kwargs.setdefault("labels", getattr(estimator, "classes_", None))
        return cls.from_predictions(y, estimator.predict_proba(X), **kwargs)

    @classmethod
    def from_report(cls, report: Report, *, ax: Any = None, **kwargs: Any) -> ProbConfusionMatrixDisplay:
        """The matrix a Report of probabilities holds."""
        if report.prob_confusion_matrix is None:
            msg = "the report has no probabilistic confusion matrix: evaluate probabilities (y_proba=)"
            raise ValidationError(msg)
        return cls(report.prob_confusion_matrix, display_labels=[str(x) for x in report.labels]).plot(ax=ax, **kwargs)

    @classmethod
    def from_evaluator(cls, evaluator: Evaluator, *, ax: Any = None, **kwargs: Any) -> ProbConfusionMatrixDisplay:
        """The matrix of a merged Evaluator fed probabilities."""
        return cls.from_report(evaluator.report(), ax=ax, **kwargs)


# -- calibration ---------------------------------------------------------------------------


def calibration_curve(
    y_true: ArrayLike, y_prob: ArrayLike, *, pos_label: Label | None = None, n_bins: int = 5,
    strategy: Literal["uniform", "quantile"] = "uniform",
) -> tuple[F64, F64]:  # fmt: skip
    """``(prob_true, prob_pred)`` of binary probabilities in ``n_bins`` bins (scikit-learn's
    ``calibration_curve``: empty bins left out).

    >>> calibration_curve([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.9], n_bins=2)
    (array([0., 1.]), array([0.2 , 0.75]))
    """
    t, p = np.asarray(y_true), np.asarray(y_prob, dtype=np.float64)
    if p.ndim != 1 or t.shape != p.shape:
        msg = "y_true and y_prob must be 1-D of the same length (the probability of the positive class)"
        raise ValidationError(msg)
    if p.size and (p.min() < 0 or p.max() > 1):
        msg = "y_prob has values outside [0, 1]; pass probabilities"
        raise ValidationError(msg)
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        msg = f"n_bins must be a positive integer, got {n_bins!r}"
        raise ValidationError(msg)
    pos = np.unique(t)[-1] if pos_label is None else pos_label
    positive = (t == pos).astype(np.float64)
    if strategy == "quantile":
        edges = np.percentile(p, np.linspace(0, 100, n_bins + 1))
    elif strategy == "uniform":
        edges = np.linspace(0.0, 1.0, n_bins + 1)
    else:
        msg = f"strategy must be 'uniform' or 'quantile', got {strategy!r}"
        raise ValidationError(msg)
    ids = np.searchsorted(edges[1:-1], p)
    total = np.bincount(ids, minlength=len(edges))
    nonzero = total != 0
    prob_true = np.bincount(ids, weights=positive, minlength=len(edges))[nonzero] / total[nonzero]
    prob_pred = np.bincount(ids, weights=p, minlength=len(edges))[nonzero] / total[nonzero]
    return prob_true, prob_pred


class CalibrationDisplay:
    """A reliability diagram with the histogram of the confidences beneath. Binary
    probabilities (1-D ``y_prob``) give scikit-learn's ``prob_true`` / ``prob_pred``; a 2-D
    ``y_prob``, a Report or an Evaluator give the top-label reliability bins (accuracy against
    mean confidence per bin, ECE in the legend).

    >>> d = CalibrationDisplay.from_predictions([0, 0, 1, 1], [0.1, 0.3, 0.6, 0.9], n_bins=2)
    >>> d.prob_true.tolist(), d.prob_pred.tolist()
    ([0.0, 1.0], [0.2, 0.75])
    """

    def __init__(
        self, prob_true: ArrayLike, prob_pred: ArrayLike, y_prob: ArrayLike | None, *,
        estimator_name: str | None = None, pos_label: Label | None = None, counts: ArrayLike | None = None,
        ece: float | None = None,
    ) -> None:  # fmt: skip
        self.prob_true, self.prob_pred = np.asarray(prob_true), np.asarray(prob_pred)
        self.y_prob = None if y_prob is None else np.asarray(y_prob)
        self.estimator_name, self.pos_label = estimator_name, pos_label
        #: The weight in each bin drawn (the histogram), when known.
        self.counts = None if counts is None else np.asarray(counts)
        self.ece = ece

    def plot(
        self, *, ax: Any = None, name: str | None = None, ref_line: bool = True, **kwargs: Any
    ) -> CalibrationDisplay:
        """The diagram on ``ax`` (default: a new figure whose lower fifth holds the histogram)."""
        if ax is None:
            fig = require_matplotlib("CalibrationDisplay").figure(figsize=(5.0, 5.5), layout="constrained")
            grid = fig.add_gridspec(5, 1)
            ax, hist_ax = fig.add_subplot(grid[:4, 0]), fig.add_subplot(grid[4, 0])
        else:
            new_axes(ax, "CalibrationDisplay")
            hist_ax = None
        name = self.estimator_name if name is None else name
        label = name or "Model"
        if self.ece is not None:
            label = f"{label} (ECE = {self.ece:0.3f})"
        (self.line_,) = ax.plot(self.prob_pred, self.prob_true, "s-", label=label, **kwargs)
        self.ref_line_ = draw_chance(ax, (0, 1), (0, 1), "Perfectly calibrated", linestyle=":") if ref_line else None
        ax.set(xlabel="Mean predicted probability", ylabel="Fraction of positives", xlim=(0, 1), ylim=(0, 1.02))
        ax.legend(loc="lower right")
        self.hist_ = None
        if hist_ax is not None:
            if self.counts is not None:
                self.hist_ = hist_ax.bar(self.prob_pred, self.counts, width=0.8 / max(len(self.counts), 1))
            elif self.y_prob is not None:
                self.hist_ = hist_ax.hist(self.y_prob, bins=20, range=(0, 1))[2]
            hist_ax.set(xlim=(0, 1), xlabel="Confidence", ylabel="Count")
        self.ax_, self.hist_ax_, self.figure_ = ax, hist_ax, ax.figure
        return self

    @classmethod
    def from_predictions(
        cls, y_true: ArrayLike, y_prob: ArrayLike, *, n_bins: int = 5,
        strategy: Literal["uniform", "quantile"] = "uniform", pos_label: Label | None = None, name: str | None = None,
        ax: Any = None, ref_line: bool = True, **kwargs: Any,
    ) -> CalibrationDisplay:  # fmt: skip
        """Binary probabilities: scikit-learn's curve; 2-D probabilities: the top-label bins."""
        p = np.asarray(y_prob, dtype=np.float64)
        if p.ndim == 2:
            return cls._of_bins(calibration_bins(y_true, p, n_bins=n_bins), name).plot(
                ax=ax, ref_line=ref_line, **kwargs
            )
        prob_true, prob_pred = calibration_curve(y_true, p, pos_label=pos_label, n_bins=n_bins, strategy=strategy)
        d = cls(prob_true, prob_pred, p, estimator_name=name, pos_label=pos_label)
        return d.plot(ax=ax, ref_line=ref_line, **kwargs)

    @classmethod
    def from_estimator(cls, estimator: Any, X: ArrayLike, y: ArrayLike, **kwargs: Any) -> CalibrationDisplay:  # noqa: N803
        """:meth:`from_predictions` of a fitted binary classifier's positive-class probability."""
        proba = np.asarray(estimator.predict_proba(X), dtype=np.float64)
        kwargs.setdefault("name", type(estimator).__name__)
        if proba.shape[1] == 2:
            pos = kwargs.get("pos_label")
            first = pos is not None and pos == estimator.classes_[0]
            kwargs.setdefault("pos_label", estimator.classes_[0 if first else 1])
            return cls.from_predictions(y, proba[:, 0 if first else 1], **kwargs)
        return cls.from_predictions(y, proba, **kwargs)

    @classmethod
    def _of_bins(cls, bins: CalibrationBins, name: str | None) -> CalibrationDisplay:
        keep = bins.weight > 0
        return cls(
            bins.accuracy[keep], bins.mean_confidence[keep], None, estimator_name=name, counts=bins.weight[keep],
            ece=bins.ece(),
        )  # fmt: skip

    @classmethod
    def from_report(
        cls, report: Report, *, name: str | None = None, ax: Any = None, **kwargs: Any
    ) -> CalibrationDisplay:
        """The reliability bins a Report of probabilities holds."""
        if report.calibration is None:
            msg = "the report has no reliability bins: evaluate probabilities (y_proba=)"
            raise ValidationError(msg)
        return cls._of_bins(report.calibration, name).plot(ax=ax, **kwargs)

    @classmethod
    def from_evaluator(cls, evaluator: Evaluator, **kwargs: Any) -> CalibrationDisplay:
        """The reliability bins of a merged Evaluator fed probabilities."""
        return cls.from_report(evaluator.report(), **kwargs)

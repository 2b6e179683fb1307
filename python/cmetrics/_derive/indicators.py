"""Multilabel indicator targets for the set-wise metrics (docs/definitions.md §2.3b): one
counting pass over the two ``n x L`` indicator matrices (the compiled kernel, or numpy) gives
per-label and per-row counts; :class:`MultilabelTable` presents the per-label counts as the
one-vs-rest sums the single-label code reads, and the row counts serve the sample-wise
metrics (subset accuracy, Hamming loss, ``average="samples"``)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._backend import resolve_backend
from cmetrics._base import validation, value_checks
from cmetrics._base.aliases import F64, Backend, ZeroDivision
from cmetrics._base.config import check_classes, get_num_threads
from cmetrics._derive.multiclass_ranking import indicator
from cmetrics._derive.table_metrics import apply_zero_division, average_values
from cmetrics._kernels import Kernels
from cmetrics.exceptions import LabelError, ShapeError, ValidationError

_SAMPLE_REASONS = {
    "precision": ("Precision", "predicted labels"),
    "recall": ("Recall", "true labels"),
    "f-score": ("F-score", "true nor predicted labels"),
}


def is_multilabel(y_true: ArrayLike, y_pred: ArrayLike) -> bool:
    """Whether the targets are 2-D (indicator matrices), judged by their shapes only."""
    return any(np.ndim(a) == 2 and np.shape(a)[1] != 1 for a in (y_true, y_pred) if not isinstance(a, str))


def _indicator(a: ArrayLike, name: str) -> np.ndarray:
    x = validation.to_numpy(a, name)
    if x.ndim != 2:
        msg = f"{name} has shape {x.shape}, but the other target is a 2-D label indicator matrix; pass both as 2-D"
        raise ShapeError(msg)
    return indicator(x, name)


class MultilabelTable:
    """The counts of two indicator matrices, with the one-vs-rest interface of
    :class:`cmetrics.ConfusionMatrix` (labels are column indices)."""

    def __init__(self, y_true: ArrayLike, y_pred: ArrayLike, sample_weight: ArrayLike | None, backend: Backend) -> None:
        t, p = _indicator(y_true, "y_true"), _indicator(y_pred, "y_pred")
        if t.shape != p.shape:
            msg = f"y_true has shape {t.shape} but y_pred has shape {p.shape}; pass indicator matrices of one shape"
            raise ShapeError(msg)
        if t.shape[0] == 0 or t.shape[1] == 0:
            raise ShapeError(f"y_true is empty (shape {t.shape}); at least one sample and one label are required")
        check_classes(t.shape[1], "y_true")
        n = t.shape[0]
        w = validation.weights(sample_weight, n)
        if w is not None:
            value_checks.check_weights(w, n, "y_true")
            with np.errstate(over="ignore"):
                value_checks.check_totals(float(np.sum(w)), 0.0, n)
        self._be: Kernels = resolve_backend(backend)
        self._t, self._p = t, p
        c = self._be.multilabel_counts(t, p, w, get_num_threads())
        self.n_labels = t.shape[1]
        self._labels = np.arange(self.n_labels)
        self._tp, self._true_sum, self._pred_sum, self._tn = c.tp, c.true_sum, c.pred_sum, c.tn
        self.row_tp = c.row_tp.astype(np.float64)
        self.row_true = c.row_true.astype(np.float64)
        self.row_pred = c.row_pred.astype(np.float64)
        self.weight = w
        self._weighted = w is not None
        self._total = float(np.sum(w)) if w is not None else float(n)

    @property
    def labels(self) -> np.ndarray:
        return self._labels

    def _positions(self, labels: ArrayLike) -> np.ndarray:
        lab = validation.to_numpy(labels, "labels")
        if lab.ndim != 1 or lab.dtype.kind not in "iu" or lab.size == 0:
            raise LabelError("labels of a multilabel target are column indices: a non-empty 1-D list of integers")
        if lab.min() < 0 or lab.max() >= self.n_labels:
            msg = f"All labels must be in [0, n labels) for multilabel targets. Got {lab.max()} > {self.n_labels - 1}"
            raise LabelError(msg)
        return lab.astype(np.intp)

    def _ovr(self, labels: ArrayLike | None) -> tuple[np.ndarray, F64, F64, F64]:
        """Per-label sums of the selected columns."""
        if labels is None:
            return self._labels, self._tp, self._true_sum, self._pred_sum
        pos = self._positions(labels)
        return pos, self._tp[pos], self._true_sum[pos], self._pred_sum[pos]

    def true_negatives(self, labels: ArrayLike | None) -> F64:
        """Per selected label, the (weighted) rows with the label in neither matrix."""
        return self._tn if labels is None else self._tn[self._positions(labels)]

    def restricted(self, labels: ArrayLike) -> MultilabelTable:
        """The table of the selected columns only (the sample-wise metrics of a label subset)."""
        pos = self._positions(labels)
        sub = object.__new__(MultilabelTable)
        sub.__dict__.update(self.__dict__)
        t, p = self._t[:, pos], self._p[:, pos]
        sub.n_labels = pos.size
        sub._labels = np.arange(pos.size)
        sub._tp, sub._true_sum, sub._pred_sum = self._tp[pos], self._true_sum[pos], self._pred_sum[pos]
        sub._tn = self._tn[pos]
        sub.row_tp = np.count_nonzero(t & p, axis=1).astype(np.float64)
        sub.row_true = np.count_nonzero(t, axis=1).astype(np.float64)
        sub.row_pred = np.count_nonzero(p, axis=1).astype(np.float64)
        return sub

    def _row_mean(self, values: F64) -> float:
        """The (weighted) mean over rows; rows whose value is NaN (``zero_division=np.nan``)
        are dropped with their weights, as scikit-learn's ``_nanaverage`` drops them."""
        if not np.isnan(values).any():
            return float(np.average(values, weights=self.weight))
        weights = np.ones_like(values) if self.weight is None else self.weight
        return average_values(values, weights, "weighted")

    def subset_hits(self) -> F64:
        """1.0 for a row predicted exactly (every label right), else 0.0."""
        exact = (self.row_tp == self.row_true) & (self.row_tp == self.row_pred)
        hits: F64 = exact.astype(np.float64)
        return hits

    def accuracy(self, normalize: bool) -> float:
        hits = self.subset_hits()
        if normalize:
            return self._row_mean(hits)
        return float(np.sum(hits if self.weight is None else hits * self.weight))

    def hamming(self) -> float:
        wrong = (self.row_true + self.row_pred - 2 * self.row_tp) / self.n_labels
        return self._row_mean(wrong)

    def samples_prfs(self, beta: float, warn_for: tuple[str, ...], zero_division: ZeroDivision) -> tuple[float, ...]:
        """Precision, recall and F-beta of each row's label set, averaged over rows."""
        prf = self._be.precision_recall_fbeta(self.row_tp, self.row_true, self.row_pred, beta)
        out = []
        for name, values in zip(("precision", "recall", "f-score"), prf, strict=True):
            what, reason = _SAMPLE_REASONS[name]
            filled = apply_zero_division(
                values, zero_division, what, reason, warn_here=name in warn_for, unit="samples"
            )
            out.append(self._row_mean(filled))
        return tuple(out)

    def samples_jaccard(self, zero_division: ZeroDivision) -> float:
        union = self.row_true + self.row_pred - self.row_tp
        with np.errstate(divide="ignore", invalid="ignore"):
            values: F64 = np.where(union > 0, self.row_tp / np.where(union > 0, union, 1.0), np.nan)
        values = apply_zero_division(values, zero_division, "Jaccard", "true or predicted labels", unit="samples")
        return self._row_mean(values)

    def samplewise_matrices(self) -> F64:
        """Per-row ``[[tn, fp], [fn, tp]]`` over the labels, each count scaled by the row's weight."""
        w = 1.0 if self.weight is None else self.weight
        tp = self.row_tp * w
        fp, fn = (self.row_pred - self.row_tp) * w, (self.row_true - self.row_tp) * w
        tn = (self.n_labels - self.row_true - self.row_pred + self.row_tp) * w
        out: F64 = np.stack([tn, fp, fn, tp], axis=1).reshape(-1, 2, 2)
        return out


def binary_average_error() -> ValidationError:
    msg = (
        "Target is multilabel-indicator but average='binary'. Please choose another average setting, one of "
        "[None, 'micro', 'macro', 'weighted', 'samples']."
    )
    return ValidationError(msg)

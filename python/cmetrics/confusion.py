"""Counting: one pass over the rows gives a :class:`ConfusionMatrix`, and every
hard-label metric is derived from it without touching the rows again."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._base import validation
from cmetrics._base.aliases import F64, I64, Average, Backend, KappaWeights, Label, LabelKind, Normalize, ZeroDivision
from cmetrics._derive import table_metrics
from cmetrics._derive.counted_table import CountedTable
from cmetrics._derive.table_metrics import PRFS
from cmetrics._results.report import Report, build_report
from cmetrics.exceptions import LabelError, ShapeError, ValidationError, WeightError

__all__ = ["ConfusionMatrix", "confusion_matrix"]


class ConfusionMatrix(CountedTable):
    """A counted confusion matrix and every metric derived from it.

    ``matrix[i, j]`` is the (weighted) number of samples with true label
    ``labels[i]`` and predicted label ``labels[j]`` (rows = true, as
    scikit-learn). Build one with :meth:`from_predictions` (one counting pass
    over the rows) or from an already counted table; each metric method then
    costs O(k^2) and never reads the rows again.

    Parameters
    ----------
    matrix : array-like of shape (k, k)
        Non-negative finite counts or weighted sums, rows = true.
    labels : array-like of shape (k,), optional
        The label of each row/column; defaults to ``0..k-1``.
    backend : {"auto", "rust", "numpy"}
        Which implementation derives the metrics.

    Examples
    --------
    >>> cm = ConfusionMatrix.from_predictions([0, 1, 1, 2], [0, 1, 2, 2])
    >>> cm.matrix.tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]
    >>> round(cm.accuracy(), 4)
    0.75
    """

    def __init__(self, matrix: ArrayLike, labels: ArrayLike | None = None, *, backend: Backend = "auto") -> None:
        try:
            c = np.array(matrix, dtype=np.float64)
        except (TypeError, ValueError):
            msg = "matrix must be a square (k, k) table of numbers; pass a nested list or a 2-D array"
            raise ShapeError(msg) from None
        if c.ndim != 2 or c.shape[0] != c.shape[1] or c.shape[0] == 0:
            msg = f"matrix must be a non-empty square (k, k) table, got shape {c.shape}"
            raise ShapeError(msg)
        if not np.isfinite(c).all() or (c < 0).any():
            msg = "matrix must hold finite, non-negative counts"
            raise ValidationError(msg)
        with np.errstate(over="ignore"):
            total = float(c.sum())
        if not np.isfinite(total):
            msg = (
                "the matrix adds up to more than the largest float64; divide every entry by the same constant "
                "(the metrics do not change)"
            )
            raise ValidationError(msg)
        if not total > 0:
            msg = "matrix sums to 0; there is nothing to score"
            raise ValidationError(msg)
        if labels is None:
            lab = np.arange(c.shape[0])
        else:
            kind: LabelKind = "str" if np.asarray(labels).dtype.kind in "UO" else "int"
            lab = validation.check_labels(labels, kind)
            if lab.size != c.shape[0]:
                msg = f"labels has {lab.size} entries for a {c.shape[0]}x{c.shape[0]} matrix"
                raise LabelError(msg)
        self._init(np.ascontiguousarray(c), lab, None, backend, weighted=True)

    @classmethod
    def from_predictions(
        cls,
        y_true: ArrayLike,
        y_pred: ArrayLike,
        *,
        labels: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
        max_classes: int | None = None,
        backend: Backend = "auto",
    ) -> ConfusionMatrix:
        """Count the matrix of ``y_true`` against ``y_pred`` in one pass.

        Parameters
        ----------
        y_true, y_pred : array-like of shape (n,)
            Integer, boolean or string labels (one kind for both).
        labels : array-like, optional
            The label set and its order. It may add classes absent from the data
            but must include every label that occurs. Default: the sorted union.
        sample_weight : array-like of shape (n,), optional
            Finite, non-negative weights, not all zero.
        max_classes : int, optional
            Refuse more distinct labels than this (memory guard; default
            :func:`cmetrics.get_max_classes`, 4096).
        backend : {"auto", "rust", "numpy"}
        """
        self = cls._count(y_true, y_pred, labels, sample_weight, max_classes, backend)
        if self._weighted and not self._total > 0:
            msg = "sample_weight sums to 0; at least one sample needs a positive weight"
            raise WeightError(msg)
        return self

    def __repr__(self) -> str:
        more = "..." if self.n_classes > 10 else ""
        return (
            f"ConfusionMatrix(n_classes={self.n_classes}, n_samples={self._total:g}, "
            f"labels={self._labels.tolist()[:10]}{more})"
        )

    # -- metrics (each O(k^2); the functions of cmetrics.classification count and call these) --

    def accuracy(self) -> float:
        """Fraction of correct predictions, ``trace / N``."""
        return table_metrics.accuracy(self)

    def balanced_accuracy(self, *, adjusted: bool = False) -> float:
        """Mean recall over classes present in the truth (see :func:`cmetrics.balanced_accuracy_score`)."""
        return table_metrics.balanced_accuracy(self, adjusted)

    def precision_recall_fscore_support(
        self,
        *,
        beta: float = 1.0,
        labels: ArrayLike | None = None,
        pos_label: Label = 1,
        average: Average | None = None,
        zero_division: ZeroDivision = "warn",
    ) -> PRFS:
        """Precision, recall, F-beta and support (see :func:`cmetrics.precision_recall_fscore_support`)."""
        return table_metrics.prfs(
            self, beta=beta, labels=labels, pos_label=pos_label, average=average, zero_division=zero_division
        )

    def matthews_corrcoef(self) -> float:
        """Multi-class Matthews correlation coefficient."""
        return table_metrics.matthews_corrcoef(self)

    def cohen_kappa(
        self,
        *,
        labels: ArrayLike | None = None,
        weights: KappaWeights | None = None,
        replace_undefined_by: float = float("nan"),
    ) -> float:
        """Cohen's kappa of the two label columns (see :func:`cmetrics.cohen_kappa_score`)."""
        return table_metrics.cohen_kappa(self, labels, weights, replace_undefined_by)

    def informedness(self, *, labels: ArrayLike | None = None, prior: ArrayLike | None = None) -> float:
        """Powers' bookmaker informedness (see :func:`cmetrics.informedness`)."""
        return table_metrics.informedness(self, labels, prior)

    def markedness(self, *, labels: ArrayLike | None = None) -> float:
        """Markedness, the dual of informedness."""
        return table_metrics.markedness(self, labels)

    def youden_j_per_class(self, *, labels: ArrayLike | None = None, zero_division: ZeroDivision = "warn") -> F64:
        """One-vs-rest Youden J of each class."""
        return table_metrics.per_class(self, "j", labels, zero_division)

    def markedness_per_class(self, *, labels: ArrayLike | None = None, zero_division: ZeroDivision = "warn") -> F64:
        """One-vs-rest markedness of each class."""
        return table_metrics.per_class(self, "mk", labels, zero_division)

    def normalized_information_transfer(self, *, n_classes: int | None = None) -> float:
        """``2^MI / k`` (see :func:`cmetrics.normalized_information_transfer`)."""
        return table_metrics.nit(self, n_classes)

    def entropy_modulated_accuracy(self) -> float:
        """``2^-H(true | pred)``."""
        return table_metrics.entropy_modulated_accuracy(self)

    def mutual_information_bits(self) -> float:
        """Mutual information of truth and prediction, in bits."""
        return table_metrics.mutual_information_bits(self)

    def class_prevalence(self, *, labels: ArrayLike | None = None) -> F64:
        """Per-class prevalence ``n_c / N`` (labels absent from the data give 0)."""
        return self._ovr(labels)[2] / self._total

    def class_bias(self, *, labels: ArrayLike | None = None) -> F64:
        """Per-class prediction bias ``m_c / N`` (labels absent from the data give 0)."""
        return self._ovr(labels)[3] / self._total

    def report(self, *, zero_division: ZeroDivision = "warn") -> Report:
        """Every hard-label metric as a :class:`cmetrics.Report` (``report.to_dict()`` for plain values)."""
        return build_report(self, zero_division=zero_division)


def confusion_matrix(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    normalize: Normalize | None = None,
    backend: Backend = "auto",
) -> F64 | I64:
    """Confusion matrix, rows = true, columns = predicted (as scikit-learn).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
    labels : array-like, optional
        Rows/columns to keep, in this order (labels absent from the data give zero
        rows); other labels are dropped. At least one must occur in ``y_true``.
    sample_weight : array-like of shape (n,), optional
    normalize : {"true", "pred", "all"}, optional
    backend : {"auto", "rust", "numpy"}

    Returns
    -------
    ndarray of shape (k, k)
        int64 counts, or float64 with weights or normalisation.

    Examples
    --------
    >>> confusion_matrix([2, 0, 2, 2, 0, 1], [0, 0, 2, 2, 0, 2]).tolist()
    [[2, 0, 0], [0, 0, 1], [1, 0, 2]]
    """
    cm = ConfusionMatrix.from_predictions(y_true, y_pred, sample_weight=sample_weight, backend=backend)
    return cm.table(labels=labels, normalize=normalize)

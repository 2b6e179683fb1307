"""Counting: one pass over the rows gives a :class:`ConfusionMatrix`, and every
hard-label metric is derived from it without touching the rows again."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from cmetrics import _checks
from cmetrics import _hard as _m
from cmetrics._checks import F64, I64, Average, Backend, KappaWeights, Label, LabelKind, Normalize, ZeroDivision
from cmetrics._config import check_classes, check_max_classes, get_num_threads, resolve_backend
from cmetrics._hard import PRFS, expand, positions
from cmetrics.exceptions import LabelError, ShapeError, ValidationError, WeightError

if TYPE_CHECKING:
    from cmetrics.report import Report

__all__ = ["ConfusionMatrix", "confusion_matrix"]


class ConfusionMatrix:
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

    _c: F64
    _labels: npt.NDArray[Any]
    _counts: I64 | None
    _tp: F64
    _true_sum: F64
    _pred_sum: F64
    _total: float

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
            lab = _checks.check_labels(labels, kind)
            if lab.size != c.shape[0]:
                msg = f"labels has {lab.size} entries for a {c.shape[0]}x{c.shape[0]} matrix"
                raise LabelError(msg)
        self._init(np.ascontiguousarray(c), lab, None, backend, weighted=True)

    def _init(self, c: F64, labels: np.ndarray, counts: I64 | None, backend: Backend, *, weighted: bool) -> None:
        self._weighted = weighted
        self._integral_weights = False
        self._c: F64 = c
        self._labels: npt.NDArray[Any] = labels
        self._counts = counts
        self._backend: Backend = backend
        self._be = resolve_backend(backend)
        self._kind: LabelKind = "str" if labels.dtype.kind in "UO" else "int"
        self._tp, self._true_sum, self._pred_sum, self._total = self._be.marginals(c)

    @classmethod
    def _from_parts(
        cls, c: np.ndarray, labels: np.ndarray, counts: I64 | None, backend: Backend, *, weighted: bool
    ) -> ConfusionMatrix:
        """An already counted table (internal: no validation)."""
        self = cls.__new__(cls)
        self._init(np.ascontiguousarray(c, dtype=np.float64), labels, counts, backend, weighted=weighted)
        return self

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

    @classmethod
    def _count(
        cls,
        y_true: ArrayLike,
        y_pred: ArrayLike,
        labels: ArrayLike | None,
        sample_weight: ArrayLike | None,
        max_classes: int | None,
        backend: Backend,
    ) -> ConfusionMatrix:
        """:meth:`from_predictions` without refusing weights that sum to 0 (a batch of an
        :class:`~cmetrics.Evaluator` may carry no weight; its total is checked at the report)."""
        be = resolve_backend(backend)
        limit = check_max_classes(max_classes)
        if labels is not None:  # fail before counting
            check_classes(_checks.length_of(labels), "labels", limit)
        max_classes = min(limit, sys.maxsize)
        pair = _checks.label_pair(y_true, y_pred)
        w = _checks.weights(sample_weight, pair.y_true.shape[0])
        threads = get_num_threads()
        if pair.kind == "str":
            if pair.y_true.dtype.kind == "O":
                which, rows, ta, pb = be.encode_objects(pair.y_true, pair.y_pred, max_classes=max_classes)
            else:
                a = _checks.ucs4_view(pair.y_true)
                b = _checks.ucs4_view(pair.y_pred)
                which, rows, ta, pb = be.encode_strings(a, b, max_classes=max_classes)
            rows = rows.astype(np.intp)
            values = np.where(
                which == 0,
                pair.y_true[np.minimum(rows, len(pair.y_true) - 1)],
                pair.y_pred[np.minimum(rows, len(pair.y_pred) - 1)],
            )
            _, counts, weighted = be.confusion_matrix_codes(ta, pb, len(values), w, n_threads=threads)
            union = np.asarray(values, dtype=np.str_)
        else:
            codes, counts, weighted = be.confusion_matrix(
                pair.y_true, pair.y_pred, w, max_classes=max_classes, n_threads=threads
            )
            union = codes.astype(pair.out_dtype)
        c = weighted if weighted is not None else counts.astype(np.float64)
        self = cls.__new__(cls)
        if labels is not None:
            lab = _checks.check_labels(labels, pair.kind, limit)
            lab = lab.astype(union.dtype) if pair.kind == "int" else lab.astype(np.str_)
            pos = positions(union, lab)
            if (pos < 0).sum() != lab.size - union.size or not np.isin(union, lab).all():
                missing = union[~np.isin(union, lab)]
                msg = (
                    f"labels must include every label in the data; {missing.tolist()[:10]} are missing. "
                    "To restrict per-class outputs, pass labels= to the metric instead"
                )
                raise LabelError(msg)
            c = expand(c, pos)
            counts = expand(counts, pos)
            union = lab
        self._init(np.ascontiguousarray(c), union, counts.astype(np.int64), backend, weighted=weighted is not None)
        self._integral_weights = sample_weight is not None and _checks.integral_weights(sample_weight)
        return self

    # -- basic views -------------------------------------------------------------------

    @property
    def labels(self) -> npt.NDArray[Any]:
        """Label of each row and column."""
        out: npt.NDArray[Any] = self._labels.copy()
        return out

    @property
    def matrix(self) -> npt.NDArray[np.float64]:
        """The (weighted) table as float64, rows = true."""
        out: F64 = self._c.copy()
        return out

    @property
    def counts(self) -> npt.NDArray[np.int64] | None:
        """Unweighted counts (int64) when built from predictions, else None."""
        return None if self._counts is None else self._counts.copy()

    @property
    def n_samples(self) -> float:
        """Total (weighted) number of samples."""
        return self._total

    @property
    def n_classes(self) -> int:
        """Number of rows/columns."""
        return int(self._labels.size)

    def __repr__(self) -> str:
        more = "..." if self.n_classes > 10 else ""
        return (
            f"ConfusionMatrix(n_classes={self.n_classes}, n_samples={self._total:g}, "
            f"labels={self._labels.tolist()[:10]}{more})"
        )

    def _positions(self, labels: ArrayLike) -> npt.NDArray[np.intp]:
        """Positions of ``labels`` among the rows (-1 for labels absent from the data)."""
        lab = _checks.check_labels(labels, self._kind)
        if self._kind == "int" and (np.can_cast(lab.dtype, self._labels.dtype) or lab.dtype.kind in "iub"):
            lab = lab.astype(self._labels.dtype)
        return positions(self._labels, lab)

    def _superset(self, labels: ArrayLike | None) -> None:
        """Whole-table metrics: ``labels`` may only add classes."""
        if labels is None:
            return
        pos = self._positions(labels)
        present = (self._true_sum > 0) | (self._pred_sum > 0)
        missing = np.setdiff1d(np.flatnonzero(present), pos[pos >= 0])
        if missing.size:
            msg = (
                f"labels must include every label in the data for this metric; "
                f"{self._labels[missing].tolist()[:10]} are missing"
            )
            raise LabelError(msg)

    def _ovr(self, labels: ArrayLike | None) -> tuple[np.ndarray, F64, F64, F64]:
        """One-vs-rest sums of the selected labels, counted against all samples."""
        if labels is None:
            return self._labels, self._tp, self._true_sum, self._pred_sum
        pos = self._positions(labels)
        ok = pos >= 0
        safe = np.where(ok, pos, 0)

        def pick(v: F64) -> F64:
            return np.where(ok, v[safe], 0.0)

        lab = np.asarray(labels)
        return lab, pick(self._tp), pick(self._true_sum), pick(self._pred_sum)

    def table(
        self, labels: ArrayLike | None = None, normalize: Normalize | None = None, *, _quiet: bool = False
    ) -> F64 | I64:
        """The matrix restricted to (and ordered by) ``labels``, optionally normalised.

        Mirrors :func:`sklearn.metrics.confusion_matrix`: unlisted labels are dropped,
        at least one listed label must occur in ``y_true``; ``normalize`` divides by
        row sums ("true"), column sums ("pred") or the total ("all"), 0/0 -> 0.
        Unweighted tables (and those counted with integer or boolean weights) come back
        as int64 unless normalised; a 1 x 1 table warns as scikit-learn does.
        """
        normalize = _checks.check_normalize(normalize)
        integral = not self._weighted or self._integral_weights
        if labels is None:
            c = self._c.copy()
        else:
            pos = self._positions(labels)
            if not ((pos >= 0) & (self._true_sum[np.maximum(pos, 0)] > 0)).any():
                msg = "At least one label specified must be in y_true"
                raise LabelError(msg)
            c = expand(self._c, pos)
        if c.shape == (1, 1) and not _quiet:
            _m.warn(
                "A single label was found in 'y_true' and 'y_pred'. For the confusion matrix to have the "
                "correct shape, use the 'labels' parameter to pass all known labels.",
                UserWarning,
            )
        if normalize is None:
            return _m.as_int64(c) if integral else c
        return _m.normalized(c, normalize, c.sum(axis=1))

    # -- metrics (each O(k^2); the functions of cmetrics.classification count and call these) --

    def accuracy(self) -> float:
        """Fraction of correct predictions, ``trace / N``."""
        return float(self._be.accuracy(self._c))

    def balanced_accuracy(self, *, adjusted: bool = False) -> float:
        """Mean recall over classes present in the truth (see :func:`cmetrics.balanced_accuracy_score`)."""
        return _m.balanced_accuracy(self, adjusted)

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
        return _m.prfs(
            self, beta=beta, labels=labels, pos_label=pos_label, average=average, zero_division=zero_division
        )

    def matthews_corrcoef(self) -> float:
        """Multi-class Matthews correlation coefficient."""
        return float(self._be.matthews_corrcoef(self._c))

    def cohen_kappa(
        self,
        *,
        labels: ArrayLike | None = None,
        weights: KappaWeights | None = None,
        replace_undefined_by: float = float("nan"),
    ) -> float:
        """Cohen's kappa of the two label columns (see :func:`cmetrics.cohen_kappa_score`)."""
        return _m.cohen_kappa(self, labels, weights, replace_undefined_by)

    def informedness(self, *, labels: ArrayLike | None = None, prior: ArrayLike | None = None) -> float:
        """Powers' bookmaker informedness (see :func:`cmetrics.informedness`)."""
        return _m.informedness(self, labels, prior)

    def markedness(self, *, labels: ArrayLike | None = None) -> float:
        """Markedness, the dual of informedness."""
        return _m.markedness(self, labels)

    def youden_j_per_class(self, *, labels: ArrayLike | None = None, zero_division: ZeroDivision = "warn") -> F64:
        """One-vs-rest Youden J of each class."""
        return _m.per_class(self, "j", labels, zero_division)

    def markedness_per_class(self, *, labels: ArrayLike | None = None, zero_division: ZeroDivision = "warn") -> F64:
        """One-vs-rest markedness of each class."""
        return _m.per_class(self, "mk", labels, zero_division)

    def normalized_information_transfer(self, *, n_classes: int | None = None) -> float:
        """``2^MI / k`` (see :func:`cmetrics.normalized_information_transfer`)."""
        return _m.nit(self, n_classes)

    def entropy_modulated_accuracy(self) -> float:
        """``2^-H(true | pred)``."""
        return float(self._be.entropy_modulated_accuracy(self._c))

    def mutual_information_bits(self) -> float:
        """Mutual information of truth and prediction, in bits."""
        return float(self._be.mutual_information_bits(self._c))

    def class_prevalence(self, *, labels: ArrayLike | None = None) -> F64:
        """Per-class prevalence ``n_c / N`` (labels absent from the data give 0)."""
        return self._ovr(labels)[2] / self._total

    def class_bias(self, *, labels: ArrayLike | None = None) -> F64:
        """Per-class prediction bias ``m_c / N`` (labels absent from the data give 0)."""
        return self._ovr(labels)[3] / self._total

    def report(self, *, zero_division: ZeroDivision = "warn") -> Report:
        """Every hard-label metric as a :class:`cmetrics.Report` (``report.to_dict()`` for plain values)."""
        from cmetrics._report import build_report

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

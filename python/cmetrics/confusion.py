"""Counting: one pass over the rows gives a :class:`ConfusionMatrix`, and every
hard-label metric is derived from it without touching the rows again."""

from __future__ import annotations

import sys
import warnings
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from cmetrics import _checks
from cmetrics import _hard as _m
from cmetrics._config import Backend, check_classes, check_max_classes, get_num_threads, resolve_backend
from cmetrics.exceptions import LabelError, LimitExceededError, ShapeError, ValidationError

Normalize = Literal["true", "pred", "all"]


def _check_labels_arg(labels: Any, kind: str, max_classes: Any = None) -> np.ndarray:
    """``labels=``: a 1-D list of distinct labels of the data's kind, at most ``max_classes``
    of them (checked before anything else, so that a huge list allocates nothing)."""
    check_classes(_length(labels), "labels", max_classes)
    arr = _checks.to_numpy(labels, "labels")
    if arr.ndim != 1:
        msg = f"labels must be a 1-D list of labels, got shape {arr.shape}"
        raise LabelError(msg)
    if arr.size == 0:
        msg = "'labels' should contain at least one label"
        raise LabelError(msg)
    akind = "str" if arr.dtype.kind in "UO" and isinstance(arr.tolist()[0], str) else "int"
    if arr.dtype.kind in "SV":
        msg = "labels must be numbers or strings"
        raise LabelError(msg)
    if akind != kind:
        msg = f"labels holds {akind} labels but the data holds {kind} labels; use the data's label type"
        raise LabelError(msg)
    if len(np.unique(arr)) != arr.size:
        values, counts = np.unique(arr, return_counts=True)
        msg = f"labels has duplicates ({values[counts > 1].tolist()}); list each label once"
        raise LabelError(msg)
    return arr


def _length(labels: Any) -> int:
    """How many entries ``labels`` has, without converting it (0 when it has no length)."""
    try:
        return len(labels) if not isinstance(labels, (str, bytes)) else 0
    except TypeError:
        return 0


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

    def __init__(self, matrix: Any, labels: Any = None, *, backend: Backend = "auto") -> None:
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
            msg = ("the matrix adds up to more than the largest float64; divide every entry by the same constant "
                   "(the metrics do not change)")
            raise ValidationError(msg)
        if not total > 0:
            msg = "matrix sums to 0; there is nothing to score"
            raise ValidationError(msg)
        if labels is None:
            lab = np.arange(c.shape[0])
        else:
            kind = "str" if np.asarray(labels).dtype.kind in "UO" else "int"
            lab = _check_labels_arg(labels, kind)
            if lab.size != c.shape[0]:
                msg = f"labels has {lab.size} entries for a {c.shape[0]}x{c.shape[0]} matrix"
                raise LabelError(msg)
        self._init(np.ascontiguousarray(c), lab, None, backend, weighted=True)

    def _init(
        self, c: np.ndarray, labels: np.ndarray, counts: np.ndarray | None, backend: Backend, *, weighted: bool
    ) -> None:
        self._weighted = weighted
        self._integral_weights = False
        self._c = c
        self._labels = labels
        self._counts = counts
        self._backend = backend
        self._be = resolve_backend(backend)
        self._kind = "str" if labels.dtype.kind in "UO" else "int"
        tp, true_sum, pred_sum, total = self._be.marginals(c)
        self._tp = np.asarray(tp)
        self._true_sum = np.asarray(true_sum)
        self._pred_sum = np.asarray(pred_sum)
        self._total = float(total)

    @classmethod
    def _from_parts(
        cls, c: np.ndarray, labels: np.ndarray, counts: np.ndarray | None, backend: Backend, *, weighted: bool
    ) -> ConfusionMatrix:
        """An already counted table (internal: no validation)."""
        self = cls.__new__(cls)
        self._init(np.ascontiguousarray(c, dtype=np.float64), labels, counts, backend, weighted=weighted)
        return self

    @classmethod
    def from_predictions(
        cls,
        y_true: Any,
        y_pred: Any,
        *,
        labels: Any = None,
        sample_weight: Any = None,
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
        be = resolve_backend(backend)
        limit = check_max_classes(max_classes)
        if labels is not None:  # fail before counting
            check_classes(_length(labels), "labels", limit)
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
            which = np.asarray(which)
            rows = np.asarray(rows).astype(np.intp)
            values = np.where(which == 0, pair.y_true[np.minimum(rows, len(pair.y_true) - 1)],
                              pair.y_pred[np.minimum(rows, len(pair.y_pred) - 1)])
            _, counts, weighted = be.confusion_matrix_codes(
                np.asarray(ta), np.asarray(pb), len(values), w, n_threads=threads
            )
            union = np.asarray(values, dtype=np.str_)
        else:
            codes, counts, weighted = be.confusion_matrix(
                pair.y_true, pair.y_pred, w, max_classes=max_classes, n_threads=threads
            )
            union = np.asarray(codes).astype(pair.out_dtype)
        counts = np.asarray(counts)
        c = np.asarray(weighted) if weighted is not None else counts.astype(np.float64)
        self = cls.__new__(cls)
        if labels is not None:
            lab = _check_labels_arg(labels, pair.kind, limit)
            lab = lab.astype(union.dtype) if pair.kind == "int" else lab.astype(np.str_)
            pos = _positions(union, lab)
            if (pos < 0).sum() != lab.size - union.size or not np.isin(union, lab).all():
                missing = union[~np.isin(union, lab)]
                msg = (
                    f"labels must include every label in the data; {missing.tolist()[:10]} are missing. "
                    "To restrict per-class outputs, pass labels= to the metric instead"
                )
                raise LabelError(msg)
            c = _expand(c, pos)
            counts = _expand(counts, pos)
            union = lab
        self._init(np.ascontiguousarray(c), union, counts.astype(np.int64), backend, weighted=weighted is not None)
        self._integral_weights = sample_weight is not None and _checks.integral_weights(sample_weight)
        return self

    # -- basic views -------------------------------------------------------------------

    @property
    def labels(self) -> np.ndarray:
        """Label of each row and column."""
        return self._labels.copy()

    @property
    def matrix(self) -> npt.NDArray[np.float64]:
        """The (weighted) table as float64, rows = true."""
        return self._c.copy()

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
        return f"ConfusionMatrix(n_classes={self.n_classes}, n_samples={self._total:g}, labels={self._labels.tolist()[:10]}{'...' if self.n_classes > 10 else ''})"

    def _positions(self, labels: Any) -> np.ndarray:
        """Positions of ``labels`` among the rows (-1 for labels absent from the data)."""
        lab = _check_labels_arg(labels, self._kind)
        if self._kind == "int":
            lab = lab.astype(self._labels.dtype) if np.can_cast(lab.dtype, self._labels.dtype) or lab.dtype.kind in "iub" else lab
        return _positions(self._labels, lab)

    def _superset(self, labels: Any) -> None:
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

    def _ovr(self, labels: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One-vs-rest sums of the selected labels, counted against all samples."""
        if labels is None:
            return self._labels, self._tp, self._true_sum, self._pred_sum
        pos = self._positions(labels)
        ok = pos >= 0
        safe = np.where(ok, pos, 0)

        def pick(v: np.ndarray) -> np.ndarray:
            return np.where(ok, v[safe], 0.0)

        lab = np.asarray(labels)
        return lab, pick(self._tp), pick(self._true_sum), pick(self._pred_sum)

    def table(self, labels: Any = None, normalize: Normalize | None = None, *, _quiet: bool = False) -> np.ndarray:
        """The matrix restricted to (and ordered by) ``labels``, optionally normalised.

        Mirrors :func:`sklearn.metrics.confusion_matrix`: unlisted labels are dropped,
        at least one listed label must occur in ``y_true``; ``normalize`` divides by
        row sums ("true"), column sums ("pred") or the total ("all"), 0/0 -> 0.
        Unweighted tables (and those counted with integer or boolean weights) come back
        as int64 unless normalised; a 1 x 1 table warns as scikit-learn does.
        """
        check_normalize(normalize)
        integral = not self._weighted or self._integral_weights
        if labels is None:
            c = self._c.copy()
        else:
            pos = self._positions(labels)
            if not ((pos >= 0) & (self._true_sum[np.maximum(pos, 0)] > 0)).any():
                msg = "At least one label specified must be in y_true"
                raise LabelError(msg)
            c = _expand(self._c, pos)
        if c.shape == (1, 1) and not _quiet:
            warnings.warn("A single label was found in 'y_true' and 'y_pred'. For the confusion matrix to have the "
                          "correct shape, use the 'labels' parameter to pass all known labels.", UserWarning,
                          stacklevel=3)
        if normalize is None:
            return _as_int64(c) if integral else c
        return normalized(c, normalize, c.sum(axis=1))


    # -- metrics (each O(k^2); see the functions of the same name in cmetrics.classification) --

    def accuracy(self) -> float:
        """Fraction of correct predictions, ``trace / N``."""
        return _m.accuracy(self)

    def balanced_accuracy(self, *, adjusted: bool = False) -> float:
        """Mean recall over classes present in the truth (see :func:`cmetrics.balanced_accuracy_score`)."""
        return _m.balanced_accuracy(self, adjusted)

    def precision_recall_fscore_support(
        self,
        *,
        beta: float = 1.0,
        labels: Any = None,
        pos_label: Any = 1,
        average: Any = None,
        zero_division: Any = "warn",
    ) -> tuple[Any, Any, Any, Any]:
        """Precision, recall, F-beta and support (see :func:`cmetrics.precision_recall_fscore_support`)."""
        return _m.prfs(
            self, beta=beta, labels=labels, pos_label=pos_label, average=average, zero_division=zero_division
        )

    def matthews_corrcoef(self) -> float:
        """Multi-class Matthews correlation coefficient."""
        return _m.matthews_corrcoef(self)

    def cohen_kappa(self, *, labels: Any = None, weights: str | None = None) -> float:
        """Cohen's kappa of the two label columns."""
        return _m.cohen_kappa(self, labels, weights)

    def informedness(self, *, labels: Any = None, prior: Any = None) -> float:
        """Powers' bookmaker informedness (see :func:`cmetrics.informedness`)."""
        return _m.informedness(self, labels, prior)

    def markedness(self, *, labels: Any = None) -> float:
        """Markedness, the dual of informedness."""
        return _m.markedness(self, labels)

    def youden_j_per_class(self, *, labels: Any = None, zero_division: Any = "warn") -> np.ndarray:
        """One-vs-rest Youden J of each class."""
        return _m.per_class(self, "j", labels, zero_division)

    def markedness_per_class(self, *, labels: Any = None, zero_division: Any = "warn") -> np.ndarray:
        """One-vs-rest markedness of each class."""
        return _m.per_class(self, "mk", labels, zero_division)

    def normalized_information_transfer(self, *, n_classes: int | None = None) -> float:
        """``2^MI / k`` (see :func:`cmetrics.normalized_information_transfer`)."""
        return _m.nit(self, n_classes)

    def entropy_modulated_accuracy(self) -> float:
        """``2^-H(true | pred)``."""
        return _m.ema(self)

    def mutual_information_bits(self) -> float:
        """Mutual information of truth and prediction, in bits."""
        return _m.mutual_information(self)

    def class_prevalence(self, *, labels: Any = None) -> np.ndarray:
        """Per-class prevalence ``n_c / N``."""
        return _m.rates(self, "prevalence", labels)

    def class_bias(self, *, labels: Any = None) -> np.ndarray:
        """Per-class prediction bias ``m_c / N``."""
        return _m.rates(self, "bias", labels)

    def report(self, *, zero_division: Any = "warn") -> dict[str, Any]:
        """Every hard-label metric as a dict of plain Python values (per-class under ``"per_class"``)."""
        return _m.report(self, zero_division)


def _as_int64(c: np.ndarray) -> npt.NDArray[np.int64]:
    """Counts (or sums of integer weights) as int64; refused beyond its range."""
    if c.size and float(c.max()) >= 2.0**63:
        msg = "the weighted counts exceed the int64 range; pass float weights to get float64 sums"
        raise LimitExceededError(msg)
    return c.astype(np.int64)


def check_normalize(normalize: Any) -> None:
    """``normalize`` must be None, "true", "pred" or "all"."""
    if normalize not in (None, "true", "pred", "all"):
        msg = f"normalize={normalize!r} is invalid; use None, 'true', 'pred' or 'all'"
        raise ValidationError(msg)


def normalized(c: np.ndarray, normalize: str, true_sum: np.ndarray) -> np.ndarray:
    """``c`` divided by the true counts ("true"), column sums ("pred") or the total
    ("all"); 0/0 gives 0, as scikit-learn."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if normalize == "true":
            c = c / true_sum[:, None]
        elif normalize == "pred":
            c = c / c.sum(axis=0, keepdims=True)
        else:
            c = c / c.sum()
    return np.nan_to_num(c)


def _positions(universe: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Index of each ``wanted`` label in ``universe`` (sorted or not), -1 if absent."""
    order = np.argsort(universe, kind="stable")
    su = universe[order]
    try:
        idx = np.searchsorted(su, wanted)
    except TypeError:
        return np.full(wanted.shape, -1, dtype=np.intp)
    idx = np.minimum(idx, su.size - 1)
    found = su[idx] == wanted
    return np.where(found, order[idx], -1).astype(np.intp)


def _expand(c: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Rows/columns ``pos`` of ``c``; -1 gives a zero row/column."""
    ok = pos >= 0
    safe = np.where(ok, pos, 0)
    out = c[np.ix_(safe, safe)].copy()
    out[~ok, :] = 0
    out[:, ~ok] = 0
    return out


def confusion_matrix(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    sample_weight: Any = None,
    normalize: Normalize | None = None,
    backend: Backend = "auto",
) -> np.ndarray:
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

"""The counted table every hard-label metric derives from: :class:`CountedTable` holds a
(weighted) confusion matrix, its labels, its unweighted counts and its marginals, counts one
from two label columns in one pass, and gives the table back restricted, reordered or
normalised. :class:`cmetrics.ConfusionMatrix` is its public face; the derivations of
:mod:`cmetrics._derive.table_metrics` and the reports read it directly."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from cmetrics._backend import resolve_backend
from cmetrics._base import validation, value_checks
from cmetrics._base.aliases import F64, I64, Backend, LabelKind, Normalize
from cmetrics._base.config import check_classes, check_max_classes, get_num_threads
from cmetrics._base.undefined import warn
from cmetrics.exceptions import LabelError, LimitExceededError

if TYPE_CHECKING:
    from typing_extensions import Self


def string_codes(pair: validation.Labels, backend: Backend, max_classes: int) -> tuple[I64, I64, np.ndarray]:
    """String labels of both columns as codes into the sorted union of their values (the codes
    of ``y_true``, of ``y_pred``, the union as a ``str`` array), at most ``max_classes`` values."""
    be = resolve_backend(backend)
    if pair.y_true.dtype.kind == "O":
        which, rows, ta, pb = be.encode_objects(pair.y_true, pair.y_pred, max_classes=max_classes)
    else:
        a, b = value_checks.ucs4_view(pair.y_true), value_checks.ucs4_view(pair.y_pred)
        which, rows, ta, pb = be.encode_strings(a, b, max_classes=max_classes)
    rows = rows.astype(np.intp)
    values = np.where(
        which == 0,
        pair.y_true[np.minimum(rows, len(pair.y_true) - 1)],
        pair.y_pred[np.minimum(rows, len(pair.y_pred) - 1)],
    )
    return np.asarray(ta, dtype=np.int64), np.asarray(pb, dtype=np.int64), np.asarray(values, dtype=np.str_)


class CountedTable:
    """A counted confusion matrix (rows = true) with its labels, counts and marginals."""

    _c: F64
    _labels: npt.NDArray[Any]
    _counts: I64 | None
    _tp: F64
    _true_sum: F64
    _pred_sum: F64
    _total: float

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
    ) -> Self:
        """An already counted table (internal: no validation)."""
        self = cls.__new__(cls)
        self._init(np.ascontiguousarray(c, dtype=np.float64), labels, counts, backend, weighted=weighted)
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
    ) -> Self:
        """:meth:`from_predictions` without refusing weights that sum to 0 (a batch of an
        :class:`~cmetrics.Evaluator` may carry no weight; its total is checked at the report)."""
        be = resolve_backend(backend)
        limit = check_max_classes(max_classes)
        if labels is not None:  # fail before counting
            check_classes(validation.length_of(labels), "labels", limit)
        max_classes = min(limit, sys.maxsize)
        pair = validation.label_pair(y_true, y_pred)
        sample_weight = validation.optional_array(sample_weight, "sample_weight")  # converted once
        w = validation.weights(sample_weight, pair.y_true.shape[0])
        threads = get_num_threads()
        if pair.kind == "str":
            ta, pb, union = string_codes(pair, backend, max_classes)
            _, counts, weighted = be.confusion_matrix_codes(ta, pb, len(union), w, n_threads=threads)
        else:
            codes, counts, weighted = be.confusion_matrix(
                pair.y_true, pair.y_pred, w, max_classes=max_classes, n_threads=threads
            )
            union = codes.astype(pair.out_dtype)
        c = weighted if weighted is not None else counts.astype(np.float64)
        self = cls.__new__(cls)
        if labels is not None:
            lab = validation.check_labels(labels, pair.kind, limit)
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
        self._integral_weights = sample_weight is not None and validation.integral_weights(sample_weight)
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

    def _positions(self, labels: ArrayLike) -> npt.NDArray[np.intp]:
        """Positions of ``labels`` among the rows (-1 for labels absent from the data)."""
        lab = validation.check_labels(labels, self._kind)
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
        normalize = validation.check_normalize(normalize)
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
            warn(
                "A single label was found in 'y_true' and 'y_pred'. For the confusion matrix to have the "
                "correct shape, use the 'labels' parameter to pass all known labels.",
                UserWarning,
            )
        if normalize is None:
            return as_int64(c) if integral else c
        return normalized(c, normalize, c.sum(axis=1))


# --------------------------------------------------------------------------------------
# Label positions and table operations


def positions(universe: np.ndarray, wanted: np.ndarray) -> npt.NDArray[np.intp]:
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


def expand(c: np.ndarray, pos: npt.NDArray[np.intp]) -> np.ndarray:
    """Rows and columns ``pos`` of ``c``; -1 gives a zero row and column."""
    ok = pos >= 0
    safe = np.where(ok, pos, 0)
    out: np.ndarray = c[np.ix_(safe, safe)].copy()
    out[~ok, :] = 0
    out[:, ~ok] = 0
    return out


def normalized(c: F64, normalize: Normalize, true_sum: F64) -> F64:
    """``c`` divided by the true counts ("true"), column sums ("pred") or the total
    ("all"); 0/0 gives 0, as scikit-learn."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if normalize == "true":
            c = c / true_sum[:, None]
        elif normalize == "pred":
            c = c / c.sum(axis=0, keepdims=True)
        else:
            c = c / c.sum()
    out: F64 = np.nan_to_num(c)
    return out


def as_int64(c: F64) -> I64:
    """Counts (or sums of integer weights) as int64; refused beyond its range."""
    if c.size and float(c.max()) >= 2.0**63:
        msg = "the weighted counts exceed the int64 range; pass float weights to get float64 sums"
        raise LimitExceededError(msg)
    return c.astype(np.int64)


def label_codes(values: np.ndarray, labels: np.ndarray, name: str, kind: LabelKind) -> np.ndarray:
    """Position of each value in ``labels`` (LabelError for values not listed)."""
    if kind == "int" and np.array_equal(labels, np.arange(labels.size)) and values.dtype in (np.int32, np.int64):
        return values  # already codes; the kernel checks the range
    lab = labels.astype(np.str_) if kind == "str" else labels
    if kind == "str" and values.dtype.kind == "O":
        value_checks.check_object_strings(values, name)
        values = values.astype(np.str_)
        value_checks.check_text(values, name)
    vals = values
    order = np.argsort(lab, kind="stable")
    sorted_lab = lab[order]
    pos = np.minimum(np.searchsorted(sorted_lab, vals), lab.size - 1)
    found = sorted_lab[pos] == vals
    if not found.all():
        missing = np.unique(vals[~found])[:10].tolist()
        msg = f"{name} contains values {missing} not belonging to the passed labels {lab.tolist()[:20]}"
        raise LabelError(msg)
    return order[pos].astype(np.int32)

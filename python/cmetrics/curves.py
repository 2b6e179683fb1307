"""Threshold curves of a binary score (docs/definitions.md §7.7), as ``sklearn.metrics``:
``roc_curve``, ``precision_recall_curve``, ``det_curve``, ``confusion_matrix_at_thresholds``,
``metric_at_thresholds`` and ``auc``.

Every curve comes from the tie groups of one sort (the compiled core's radix sort, or
numpy's): the counts at each distinct score, cumulated from the highest score down, so no
Python loop runs over rows. Float32 scores are sorted as float32 and their thresholds
returned as float32. Rows of weight 0 are left out (they add no threshold), as
scikit-learn does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._backend import resolve_backend
from cmetrics._base import validation, value_checks
from cmetrics._base.aliases import F64, Backend, Label
from cmetrics._base.undefined import warn
from cmetrics._derive import ranking_walk
from cmetrics._kernels import CurveDrop, ThresholdCounts
from cmetrics.exceptions import LabelError, NonFiniteError, ShapeError, ValidationError

__all__ = [
    "auc",
    "confusion_matrix_at_thresholds",
    "det_curve",
    "metric_at_thresholds",
    "precision_recall_curve",
    "roc_curve",
]


def _counts(
    y_true: ArrayLike,
    y_score: ArrayLike,
    pos_label: Label | None,
    sample_weight: ArrayLike | None,
    backend: Backend,
    drop: CurveDrop = "none",
) -> ThresholdCounts:
    positive = validation.binary(y_true, pos_label, any_classes=True)
    score = validation.scores(y_score, "y_score", keep_float32=True)
    validation.same_length("y_true", positive, "y_score", score)
    value_checks.check_finite("y_score", score)
    if score.shape[0] == 0:
        raise ShapeError("y_score is empty; at least one sample is required")
    return ranking_walk.rising_threshold_counts(positive, score, sample_weight, backend, drop)


def _from_top(first: float, values: np.ndarray) -> F64:
    """``first`` then ``values`` read backwards, as one new float64 array (one pass)."""
    out = np.empty(values.shape[0] + 1)
    out[0] = first
    out[1:] = values[::-1]
    return out


def confusion_matrix_at_thresholds(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    pos_label: Label | None = None,
    sample_weight: ArrayLike | None = None,
    backend: Backend = "auto",
) -> tuple[F64, F64, F64, F64, np.ndarray]:
    """``(tns, fps, fns, tps, thresholds)``: the binary confusion matrix when every row scored at
    least ``thresholds[i]`` is predicted positive, one entry per distinct score from the highest
    down (counts as float64, weighted with ``sample_weight``).

    >>> tns, fps, fns, tps, thr = confusion_matrix_at_thresholds([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> tps.tolist(), fps.tolist(), thr.tolist()
    ([1.0, 1.0, 2.0, 2.0], [0.0, 1.0, 1.0, 2.0], [0.8, 0.4, 0.35, 0.1])
    """
    c = _counts(y_true, y_score, pos_label, sample_weight, backend)
    fps, tps, thresholds = c.fps[::-1].copy(), c.tps[::-1].copy(), c.thresholds[::-1].copy()
    return fps[-1] - fps, fps, tps[-1] - tps, tps, thresholds


def roc_curve(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    pos_label: Label | None = None,
    sample_weight: ArrayLike | None = None,
    drop_intermediate: bool = True,
    backend: Backend = "auto",
) -> tuple[F64, F64, F64]:
    """``(fpr, tpr, thresholds)`` of the ROC curve, starting at ``(0, 0)`` with threshold
    ``inf``; ``drop_intermediate`` drops the points that lie on a straight segment between their
    neighbours (scikit-learn's rule). Without negatives (positives) ``fpr`` (``tpr``) is NaN
    with ``UndefinedMetricWarning``.

    >>> fpr, tpr, thr = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> fpr.tolist(), tpr.tolist(), thr.tolist()
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0], [inf, 0.8, 0.4, 0.35, 0.1])
    """
    drop = validation.check_flag("drop_intermediate", drop_intermediate)
    c = _counts(y_true, y_score, pos_label, sample_weight, backend, "collinear" if drop else "none")
    # The kernel's points rise; the curve starts at the top. Each rate is divided in place.
    fpr, tpr = _from_top(0.0, c.fps), _from_top(0.0, c.tps)
    thr = _from_top(np.inf, c.thresholds)
    if fpr[-1] <= 0:
        warn("No negative samples in y_true, false positive value should be meaningless")
        fpr.fill(np.nan)
    else:
        np.divide(fpr, fpr[-1], out=fpr)
    if tpr[-1] <= 0:
        warn("No positive samples in y_true, true positive value should be meaningless")
        tpr.fill(np.nan)
    else:
        np.divide(tpr, tpr[-1], out=tpr)
    return fpr, tpr, thr


def precision_recall_curve(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    pos_label: Label | None = None,
    sample_weight: ArrayLike | None = None,
    drop_intermediate: bool = False,
    backend: Backend = "auto",
) -> tuple[F64, F64, np.ndarray]:
    """``(precision, recall, thresholds)`` with recall decreasing, ending at ``(1, 0)`` (no
    threshold for that point); ``drop_intermediate`` keeps only the first and last point of
    each recall level. Without positives recall is 1 everywhere, with a warning.

    >>> import numpy as np
    >>> p, r, thr = precision_recall_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> np.round(p, 4).tolist(), r.tolist(), thr.tolist()
    ([0.5, 0.6667, 0.5, 1.0, 1.0], [1.0, 1.0, 0.5, 0.5, 0.0], [0.1, 0.35, 0.4, 0.8])
    """
    drop = validation.check_flag("drop_intermediate", drop_intermediate)
    c = _counts(y_true, y_score, pos_label, sample_weight, backend, "flat" if drop else "none")
    # The kernel's points rise with the threshold, as this curve's arrays do.
    fps, tps, m = c.fps, c.tps, c.fps.shape[0]
    precision, recall = np.empty(m + 1), np.empty(m + 1)
    precision[m], recall[m] = 1.0, 0.0
    # The rows predicted positive at each threshold, then divided in place. They shrink as the
    # threshold rises, so the last is the fewest; where none are, precision is 0.
    predicted = precision[:m]
    np.add(tps, fps, out=predicted)
    if predicted[-1] > 0:
        np.divide(tps, predicted, out=predicted)
    else:
        np.divide(tps, predicted, out=predicted, where=predicted != 0)
    if tps[0] == 0:
        warn("No positive class found in y_true, recall is set to one for all thresholds.", UserWarning)
        recall[:m] = 1.0
    else:
        np.divide(tps, tps[0], out=recall[:m])
    return precision, recall, c.thresholds


def det_curve(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    pos_label: Label | None = None,
    sample_weight: ArrayLike | None = None,
    drop_intermediate: bool = False,
    backend: Backend = "auto",
) -> tuple[F64, F64, F64]:
    """``(fpr, fnr, thresholds)`` of the detection error tradeoff curve, false positive rate
    decreasing, from the threshold ``inf`` (unless a finite threshold already has no false
    positive) to the first threshold with no false negative.

    >>> fpr, fnr, thr = det_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> fpr.tolist(), fnr.tolist(), thr.tolist()
    ([0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.35, 0.4, 0.8])
    """
    drop = validation.check_flag("drop_intermediate", drop_intermediate)
    c = _counts(y_true, y_score, pos_label, sample_weight, backend)
    fps, tps, thresholds = _from_top(0.0, c.fps), _from_top(0.0, c.tps), _from_top(np.inf, c.thresholds)
    if drop and fps.shape[0] > 2:
        keep = np.concatenate(([True], np.logical_or(np.diff(tps[:-1]), np.diff(tps[1:])), [True]))
        fps, tps, thresholds = fps[keep], tps[keep], thresholds[keep]
    if tps[-1] <= 0 or fps[-1] <= 0:
        raise LabelError(
            "Only one class is present in y_true. Detection error tradeoff curve is not defined in that case."
        )
    fns = tps[-1] - tps
    right = int(np.searchsorted(fps, fps[0], side="right"))
    first = right - 1 if right > 0 else None
    last = int(np.searchsorted(tps, tps[-1])) + 1
    sl = slice(first, last)
    return fps[sl][::-1] / fps[-1], fns[sl][::-1] / tps[-1], thresholds[sl][::-1]


def metric_at_thresholds(
    y_true: ArrayLike,
    y_score: ArrayLike,
    metric_func: Callable[..., Any],
    *,
    sample_weight: ArrayLike | None = None,
    metric_params: Mapping[str, Any] | None = None,
    backend: Backend = "auto",
) -> tuple[np.ndarray, np.ndarray]:
    """``(metric_values, thresholds)``: ``metric_func(y_true, y_score >= t, **metric_params)`` at
    every distinct score ``t`` from the highest down (``sample_weight`` is passed on). One call per
    threshold, as scikit-learn; for the confusion-matrix metrics
    :func:`confusion_matrix_at_thresholds` gives every threshold from one sort. ``backend`` is
    checked and otherwise unused (``metric_func`` runs on its own backend).

    >>> from cmetrics import accuracy_score
    >>> values, thr = metric_at_thresholds([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], accuracy_score)
    >>> values.tolist(), thr.tolist()
    ([0.75, 0.5, 0.75, 0.5], [0.8, 0.4, 0.35, 0.1])
    """
    resolve_backend(backend)
    if not callable(metric_func):
        raise ValidationError("metric_func must be a callable metric_func(y_true, y_pred, **metric_params)")
    yt = validation.as_1d(y_true, "y_true")
    score = validation.scores(y_score, "y_score", keep_float32=True)
    validation.same_length("y_true", yt, "y_score", score)
    value_checks.check_finite("y_score", score)
    w = validation.weights(sample_weight, score.shape[0])
    if w is not None:
        value_checks.check_weights(w, score.shape[0])
        keep = w != 0
        yt, score, w = yt[keep], score[keep], w[keep]
    params = {**(metric_params or {}), **({"sample_weight": w} if w is not None else {})}
    thresholds = np.unique(score)[::-1]
    values = [metric_func(yt, (score >= t).astype(np.int32), **params) for t in thresholds]
    return np.asarray(values), thresholds


def auc(x: ArrayLike, y: ArrayLike, *, backend: Backend = "auto") -> float:
    """Area under the curve through the points ``(x, y)`` by the trapezoidal rule; ``x`` must be
    increasing or decreasing (not necessarily strictly), as scikit-learn. The sums run on halves
    of the values, so no step overflows when the area itself is a float64 (x from -1e308 to
    1e308); an area beyond the float64 range raises :class:`NonFiniteError`. ``backend`` is
    checked and otherwise unused (numpy computes the area).

    >>> auc([0.0, 0.5, 1.0], [0.0, 1.0, 1.0])
    0.75
    """
    resolve_backend(backend)
    xs = np.asarray(validation.scores(x, "x"), dtype=np.float64)
    ys = np.asarray(validation.scores(y, "y"), dtype=np.float64)
    validation.same_length("x", xs, "y", ys)
    value_checks.check_finite("x", xs)
    value_checks.check_finite("y", ys)
    if xs.shape[0] < 2:
        msg = f"At least 2 points are needed to compute area under curve, but x.shape = {xs.shape}"
        raise ShapeError(msg)
    direction = 1.0
    dx = np.diff(xs / 2)  # the signs of the steps; halves, so no step overflows
    if np.any(dx < 0):
        if np.all(dx <= 0):
            direction = -1.0
        else:
            raise ValidationError(f"x is neither increasing nor decreasing : {xs}.")
    # Halves: x / 2 and y / 2 are exact (but for subnormals), and no difference or sum of two
    # halves overflows. The area is 4 times the sum of the half steps times the half heights.
    hx, hy = xs / 2, ys / 2
    with np.errstate(over="ignore", invalid="ignore"):
        quarter = float(np.sum(np.diff(hx) * (hy[1:] + hy[:-1]) / 2))
        area = direction * 4.0 * quarter
    if not math.isfinite(area):
        msg = "the area under the curve is beyond the float64 range; divide x or y by a constant first"
        raise NonFiniteError(msg)
    return area

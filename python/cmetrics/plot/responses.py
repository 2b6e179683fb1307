"""What the Displays read: an estimator's scores, the classes of a multiclass ``y_score``, and
the curve counts of a state's tie groups."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from cmetrics._base.aliases import F64, Label
from cmetrics.exceptions import LabelError, ShapeError, ValidationError
from cmetrics.streaming.rows import RankingSummary

#: scikit-learn's ``response_method`` choices.
ResponseMethod = Literal["auto", "predict_proba", "decision_function"]


def estimator_scores(
    estimator: Any, x: ArrayLike, response_method: ResponseMethod, pos_label: Label | None
) -> tuple[np.ndarray, np.ndarray, Label | None]:
    """``(y_score, classes, pos_label)`` of a fitted classifier: with two classes the score of
    ``pos_label`` (default the second class) from ``predict_proba`` or ``decision_function``
    (``"auto"``: the first it has), else every class's column."""
    if response_method not in ("auto", "predict_proba", "decision_function"):
        msg = f"response_method must be 'auto', 'predict_proba' or 'decision_function', got {response_method!r}"
        raise ValidationError(msg)
    methods = ["predict_proba", "decision_function"] if response_method == "auto" else [response_method]
    found = [m for m in methods if hasattr(estimator, m)]
    if not found or not hasattr(estimator, "classes_"):
        msg = f"the estimator has no fitted {' or '.join(methods)}; pass a fitted classifier that has one"
        raise ValidationError(msg)
    classes = np.asarray(estimator.classes_)
    out = np.asarray(getattr(estimator, found[0])(x), dtype=np.float64)
    if classes.size != 2:
        return out, classes, pos_label
    pos = classes[1] if pos_label is None else pos_label
    if pos not in classes.tolist():
        msg = f"pos_label={pos_label!r} is not a class of the estimator; its classes are {classes.tolist()}"
        raise LabelError(msg)
    first = bool(pos == classes[0])
    if out.ndim == 2:
        return out[:, 0 if first else 1], classes, pos
    return (-out if first else out), classes, pos


def score_classes(y_true: np.ndarray, y_score: np.ndarray, labels: ArrayLike | None) -> np.ndarray:
    """The classes of the columns of a 2-D ``y_score``: ``labels``, else the sorted labels of
    ``y_true``, one per column."""
    classes = np.unique(y_true) if labels is None else np.asarray(labels)
    if classes.size != y_score.shape[1]:
        msg = (
            f"y_score has {y_score.shape[1]} columns but there are {classes.size} classes "
            f"({'labels' if labels is not None else 'in y_true'}); pass labels= naming the class of each column"
        )
        raise ShapeError(msg)
    return classes


def group_counts(summary: RankingSummary) -> tuple[F64, F64, F64]:
    """``(fps, tps, thresholds)`` of a state's tie groups, from the highest score down (what
    :func:`cmetrics.confusion_matrix_at_thresholds` gives on the rows)."""
    pos = summary.w_pos if summary.w_pos is not None else summary.n_pos
    neg = summary.w_neg if summary.w_neg is not None else summary.n_neg
    tps = np.cumsum(np.asarray(pos, dtype=np.float64)[::-1])
    fps = np.cumsum(np.asarray(neg, dtype=np.float64)[::-1])
    return fps, tps, np.asarray(summary.values, dtype=np.float64)[::-1]


def collinear_kept(fps: F64, tps: F64) -> npt.NDArray[np.intp]:
    """scikit-learn's ``drop_intermediate`` rule for ROC curves: the points where the curve
    turns (and the two ends)."""
    if fps.size <= 2:
        return np.arange(fps.size)
    turn = np.logical_or(np.diff(fps, 2), np.diff(tps, 2))
    return np.flatnonzero(np.concatenate(([True], turn, [True])))


def merged_summaries(summaries: list[RankingSummary]) -> RankingSummary:
    """The tie groups of several columns pooled (the micro average): equal values add up."""
    values = np.concatenate([s.values for s in summaries])
    uniq, inverse = np.unique(values, return_inverse=True)

    def pooled(name: str) -> np.ndarray | None:
        parts = [getattr(s, name) for s in summaries]
        if any(p is None for p in parts):
            return None
        return np.bincount(inverse, weights=np.concatenate(parts).astype(np.float64), minlength=uniq.size)

    return RankingSummary(uniq, pooled("n_pos"), pooled("n_neg"), pooled("w_pos"), pooled("w_neg"))  # type: ignore[arg-type]

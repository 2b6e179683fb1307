"""What the Displays read from rows: an estimator's scores and the classes of a multiclass
``y_score``."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._base.aliases import Label
from cmetrics.exceptions import LabelError, ShapeError, ValidationError

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

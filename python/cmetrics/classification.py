"""Hard-label metrics with scikit-learn's names, arguments and defaults.

Each function counts the confusion matrix once (Rust kernel, GIL released)
and derives its value from it; to compute several metrics, count once with
:meth:`ConfusionMatrix.from_predictions` and call its methods, or use
:func:`hard_label_report`. Conventions follow ``docs/definitions.md`` sections 1-3;
the README lists every intentional difference from scikit-learn.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal, cast, overload

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._backend import resolve_backend
from cmetrics._base import validation, value_checks
from cmetrics._base.aliases import F64, I64, Average, Backend, KappaWeights, Label, ZeroDivision
from cmetrics._base.undefined import warn
from cmetrics._derive import multiclass_ranking, table_metrics
from cmetrics._derive.indicators import MultilabelTable, binary_average_error, is_multilabel
from cmetrics._derive.table_metrics import PRFS, Averaged, PerClass
from cmetrics.confusion import ConfusionMatrix
from cmetrics.exceptions import ShapeError, ValidationError
from cmetrics.report import Report

__all__ = [
    "accuracy_score",
    "balanced_accuracy_score",
    "class_bias",
    "class_likelihood_ratios",
    "class_prevalence",
    "classification_report",
    "cohen_kappa_score",
    "entropy_modulated_accuracy",
    "f1_score",
    "fbeta_score",
    "hamming_loss",
    "hard_label_report",
    "hinge_loss",
    "informedness",
    "jaccard_score",
    "markedness",
    "markedness_per_class",
    "matthews_corrcoef",
    "multilabel_confusion_matrix",
    "normalized_information_transfer",
    "precision_recall_fscore_support",
    "precision_score",
    "recall_score",
    "youden_j_per_class",
    "zero_one_loss",
]


def _count(y_true: ArrayLike, y_pred: ArrayLike, sample_weight: ArrayLike | None, backend: Backend) -> ConfusionMatrix:
    return ConfusionMatrix.from_predictions(y_true, y_pred, sample_weight=sample_weight, backend=backend)


def _count_any(
    y_true: ArrayLike, y_pred: ArrayLike, sample_weight: ArrayLike | None, backend: Backend
) -> ConfusionMatrix | MultilabelTable:
    """A confusion matrix of single-label targets, or the counts of two indicator matrices."""
    # Each input converted once, here: the shape test and the counting read the arrays.
    y_true = validation.to_numpy(y_true, "y_true")
    y_pred = validation.to_numpy(y_pred, "y_pred")
    sample_weight = validation.optional_array(sample_weight, "sample_weight")
    if is_multilabel(y_true, y_pred):
        return MultilabelTable(y_true, y_pred, sample_weight, backend)
    return _count(y_true, y_pred, sample_weight, backend)


def _prfs_any(
    table: ConfusionMatrix | MultilabelTable,
    *,
    beta: float = 1.0,
    labels: ArrayLike | None = None,
    pos_label: Label = 1,
    average: Average | None = None,
    warn_for: tuple[str, ...] = ("precision", "recall", "f-score"),
    zero_division: ZeroDivision = "warn",
) -> PRFS:
    """P/R/F of either kind of target; multilabel targets add ``average="samples"`` and refuse
    ``"binary"``, as scikit-learn."""
    if isinstance(table, MultilabelTable):
        average = validation.check_average(average)
        if average == "binary":
            raise binary_average_error()
        if average == "samples":
            b = validation.check_beta(beta)
            validation.zero_division_value(zero_division)
            sub = table if labels is None else table.restricted(labels)
            p, r, f = sub.samples_prfs(b, warn_for, zero_division)
            return p, r, f, None
    single: Callable[..., PRFS] = table_metrics.prfs  # one call for every average (the overloads type the public API)
    return single(
        table,
        beta=beta,
        labels=labels,
        pos_label=pos_label,
        average=average,
        warn_for=warn_for,
        zero_division=zero_division,
    )


def accuracy_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    normalize: bool = True,
    sample_weight: ArrayLike | None = None,
    backend: Backend = "auto",
) -> float:
    """Fraction (or, with ``normalize=False``, weighted count) of correct predictions.

    Higher is better; range [0, 1].

    Examples
    --------
    >>> accuracy_score([0, 1, 2, 3], [0, 2, 1, 3])
    0.5
    """
    normalize = validation.check_flag("normalize", normalize)
    cm = _count_any(y_true, y_pred, sample_weight, backend)
    if isinstance(cm, MultilabelTable):
        return cm.accuracy(normalize)
    return cm.accuracy() if normalize else float(np.trace(cm._c))


def balanced_accuracy_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    adjusted: bool = False,
    backend: Backend = "auto",
) -> float:
    """Mean per-class recall over the classes present in ``y_true``.

    ``adjusted=True`` rescales so that chance scores 0 and perfect 1; with a
    single class in ``y_true`` that is undefined: NaN and an
    :class:`~cmetrics.exceptions.UndefinedMetricWarning` (scikit-learn returns
    -inf there). Higher is better.

    Examples
    --------
    >>> balanced_accuracy_score([0, 1, 0, 0, 1, 0], [0, 1, 0, 0, 0, 1])
    0.625
    """
    return _count(y_true, y_pred, sample_weight, backend).balanced_accuracy(adjusted=adjusted)


@overload
def precision_recall_fscore_support(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    beta: float = ...,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: None = ...,
    warn_for: tuple[str, ...] = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> PerClass: ...
@overload
def precision_recall_fscore_support(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    beta: float = ...,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average,
    warn_for: tuple[str, ...] = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> Averaged: ...
@overload
def precision_recall_fscore_support(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    beta: float = ...,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average | None = ...,
    warn_for: tuple[str, ...] = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> PRFS: ...
def precision_recall_fscore_support(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    beta: float = 1.0,
    labels: ArrayLike | None = None,
    pos_label: Label = 1,
    average: Average | None = None,
    warn_for: tuple[str, ...] = ("precision", "recall", "f-score"),
    sample_weight: ArrayLike | None = None,
    zero_division: ZeroDivision = "warn",
    backend: Backend = "auto",
) -> PRFS:
    """Precision ``tp/m``, recall ``tp/n``, F-beta ``(1+b^2)tp/(b^2 n + m)`` and support ``n``.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,), or (n, n_labels) indicator matrices
    beta : float
        Weight of recall in the F-score (``inf`` = recall, 0 = precision).
    labels : array-like, optional
        Classes to report, in order; counts are always taken over all samples.
    pos_label : label
        The class reported when ``average="binary"``.
    average : {None, "binary", "micro", "macro", "weighted", "samples"}
        ``None`` returns per-class arrays; ``"samples"`` (multilabel targets) averages the
        values of each row's label set.
    sample_weight : array-like of shape (n,), optional
    zero_division : {"warn", 0, 1, nan}
        Value of a 0/0 entry; ``"warn"`` gives 0 and an ``UndefinedMetricWarning``.
        NaN entries are left out of macro and weighted averages.

    Returns
    -------
    precision, recall, fbeta : float or ndarray
    support : ndarray or None

    Examples
    --------
    >>> p, r, f, s = precision_recall_fscore_support([0, 1, 1], [0, 1, 0])
    >>> p.tolist(), r.tolist(), s.tolist()
    ([0.5, 1.0], [1.0, 0.5], [1, 2])

    Multilabel indicator targets (labels are column indices; ``"samples"`` averages each row's
    own precision and recall):

    >>> precision_recall_fscore_support([[1, 0, 1], [0, 1, 0]], [[1, 0, 0], [0, 1, 1]], average="samples")[:3]
    (0.75, 0.75, 0.6666666666666666)
    """
    cm = _count_any(y_true, y_pred, sample_weight, backend)
    return _prfs_any(
        cm,
        beta=beta,
        labels=labels,
        pos_label=pos_label,
        average=average,
        warn_for=warn_for,
        zero_division=zero_division,
    )


@overload
def fbeta_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    beta: float,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> float: ...
@overload
def fbeta_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    beta: float,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: None,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> F64: ...
@overload
def fbeta_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    beta: float,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average | None = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> float | F64: ...
def fbeta_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    beta: float,
    labels: ArrayLike | None = None,
    pos_label: Label = 1,
    average: Average | None = "binary",
    sample_weight: ArrayLike | None = None,
    zero_division: ZeroDivision = "warn",
    backend: Backend = "auto",
) -> float | F64:
    """F-beta score (see :func:`precision_recall_fscore_support`). Higher is better."""
    return precision_recall_fscore_support(
        y_true,
        y_pred,
        beta=beta,
        labels=labels,
        pos_label=pos_label,
        average=average,
        warn_for=("f-score",),
        sample_weight=sample_weight,
        zero_division=zero_division,
        backend=backend,
    )[2]


@overload
def f1_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> float: ...
@overload
def f1_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: None,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> F64: ...
@overload
def f1_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average | None = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> float | F64: ...
def f1_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    pos_label: Label = 1,
    average: Average | None = "binary",
    sample_weight: ArrayLike | None = None,
    zero_division: ZeroDivision = "warn",
    backend: Backend = "auto",
) -> float | F64:
    """F1 score, the harmonic mean of precision and recall. Higher is better.

    Examples
    --------
    >>> f1_score([0, 1, 1, 0], [0, 1, 0, 0])
    0.6666666666666666
    """
    return precision_recall_fscore_support(
        y_true,
        y_pred,
        beta=1.0,
        labels=labels,
        pos_label=pos_label,
        average=average,
        warn_for=("f-score",),
        sample_weight=sample_weight,
        zero_division=zero_division,
        backend=backend,
    )[2]


@overload
def precision_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> float: ...
@overload
def precision_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: None,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> F64: ...
@overload
def precision_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average | None = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> float | F64: ...
def precision_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    pos_label: Label = 1,
    average: Average | None = "binary",
    sample_weight: ArrayLike | None = None,
    zero_division: ZeroDivision = "warn",
    backend: Backend = "auto",
) -> float | F64:
    """Precision ``tp / (tp + fp)``. Higher is better."""
    return precision_recall_fscore_support(
        y_true,
        y_pred,
        beta=1.0,
        labels=labels,
        pos_label=pos_label,
        average=average,
        warn_for=("precision",),
        sample_weight=sample_weight,
        zero_division=zero_division,
        backend=backend,
    )[0]


@overload
def recall_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> float: ...
@overload
def recall_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: None,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> F64: ...
@overload
def recall_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average | None = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> float | F64: ...
def recall_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    pos_label: Label = 1,
    average: Average | None = "binary",
    sample_weight: ArrayLike | None = None,
    zero_division: ZeroDivision = "warn",
    backend: Backend = "auto",
) -> float | F64:
    """Recall ``tp / (tp + fn)``. Higher is better."""
    return precision_recall_fscore_support(
        y_true,
        y_pred,
        beta=1.0,
        labels=labels,
        pos_label=pos_label,
        average=average,
        warn_for=("recall",),
        sample_weight=sample_weight,
        zero_division=zero_division,
        backend=backend,
    )[1]


def matthews_corrcoef(
    y_true: ArrayLike, y_pred: ArrayLike, *, sample_weight: ArrayLike | None = None, backend: Backend = "auto"
) -> float:
    """Multi-class Matthews correlation coefficient (Gorodkin's R_K), in [-1, 1].

    0.0 when only one class is true or only one is predicted (scikit-learn's
    convention). Higher is better.

    Examples
    --------
    >>> matthews_corrcoef([1, 1, 1, 0], [1, 0, 1, 1])
    -0.3333333333333333
    """
    return _count(y_true, y_pred, sample_weight, backend).matthews_corrcoef()


def cohen_kappa_score(
    y1: ArrayLike,
    y2: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    weights: KappaWeights | None = None,
    sample_weight: ArrayLike | None = None,
    replace_undefined_by: float = float("nan"),
    backend: Backend = "auto",
) -> float:
    """Cohen's kappa ``1 - sum(W*C) / sum(W*E)`` between two annotations (docs/definitions.md §2.6).

    ``labels`` restricts the matrix to those classes (scikit-learn); ``weights`` is None,
    "linear" or "quadratic". When kappa is undefined (no sample has both labels among
    ``labels``, or the expected disagreement is 0) it is ``replace_undefined_by`` (NaN by
    default), with an ``UndefinedMetricWarning``, as scikit-learn.

    Examples
    --------
    >>> cohen_kappa_score([0, 1, 1, 0], [0, 1, 0, 0])
    0.5
    """
    return _count(y1, y2, sample_weight, backend).cohen_kappa(
        labels=labels, weights=weights, replace_undefined_by=replace_undefined_by
    )


def informedness(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    prior: ArrayLike | None = None,
    backend: Backend = "auto",
) -> float:
    """Powers' bookmaker informedness ``sum_c B_c (TPR_c - FPR_c)``, in [-1, 1].

    The probability that the prediction is informed about the truth: 0 for any
    prediction independent of the truth (a constant predictor included), 1 iff
    perfect; binary = Youden's J. NaN with an ``UndefinedMetricWarning`` when
    fewer than two classes occur in ``y_true``.

    ``prior`` (experimental, docs/definitions.md §3.5): per-class training prevalences, in
    ``labels`` order, replacing the test prevalence in the bookmaker odds; the
    value may then leave [-1, 1].

    The aacl-informedness release computes a different quantity; it equals
    :func:`markedness` (and ``informedness(y_pred, y_true)``) when two or more
    classes are predicted.

    Examples
    --------
    >>> informedness([0, 0, 0, 0, 1, 1], [0, 0, 0, 1, 0, 1])
    0.25
    """
    return _count(y_true, y_pred, sample_weight, backend).informedness(labels=labels, prior=prior)


def markedness(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    backend: Backend = "auto",
) -> float:
    """Markedness ``sum_c P_c (PPV_c - FOR_c)``: informedness with truth and
    prediction exchanged, in [-1, 1]. NaN with a warning when fewer than two
    classes are predicted."""
    return _count(y_true, y_pred, sample_weight, backend).markedness(labels=labels)


def youden_j_per_class(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    zero_division: ZeroDivision = "warn",
    backend: Backend = "auto",
) -> F64:
    """One-vs-rest Youden J ``TPR_c + TNR_c - 1`` of each class (docs/definitions.md §3.1).

    Undefined unless ``0 < n_c < N``; such entries follow ``zero_division``.
    """
    return _count(y_true, y_pred, sample_weight, backend).youden_j_per_class(labels=labels, zero_division=zero_division)


def markedness_per_class(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    zero_division: ZeroDivision = "warn",
    backend: Backend = "auto",
) -> F64:
    """One-vs-rest markedness ``PPV_c + NPV_c - 1`` of each class; undefined
    unless ``0 < m_c < N``."""
    return _count(y_true, y_pred, sample_weight, backend).markedness_per_class(
        labels=labels, zero_division=zero_division
    )


def normalized_information_transfer(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    n_classes: int | None = None,
    backend: Backend = "auto",
) -> float:
    """Normalized Information Transfer ``2^MI(true; pred) / k`` (MI in bits).

    ``k`` is the number of classes present in ``y_true`` unless ``n_classes``
    is given. 1/k for an uninformative prediction, 1 only for a perfect one on
    a uniform class distribution. A single true class gives 1.0 with a warning.
    """
    return _count(y_true, y_pred, sample_weight, backend).normalized_information_transfer(n_classes=n_classes)


def entropy_modulated_accuracy(
    y_true: ArrayLike, y_pred: ArrayLike, *, sample_weight: ArrayLike | None = None, backend: Backend = "auto"
) -> float:
    """Entropy-modulated accuracy ``2^-H(true | pred)``, in (0, 1]; 1 iff the
    prediction determines the truth."""
    return _count(y_true, y_pred, sample_weight, backend).entropy_modulated_accuracy()


def class_prevalence(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    backend: Backend = "auto",
) -> F64:
    """Per-class prevalence ``n_c / N`` (share of each class in ``y_true``)."""
    return _count(y_true, y_pred, sample_weight, backend).class_prevalence(labels=labels)


def class_bias(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    backend: Backend = "auto",
) -> F64:
    """Per-class bias ``m_c / N`` (share of each class in ``y_pred``)."""
    return _count(y_true, y_pred, sample_weight, backend).class_bias(labels=labels)


def zero_one_loss(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    normalize: bool = True,
    sample_weight: ArrayLike | None = None,
    backend: Backend = "auto",
) -> float:
    """Fraction (or, with ``normalize=False``, weighted count) of wrong predictions:
    ``1 - accuracy_score``. Lower is better.

    Examples
    --------
    >>> zero_one_loss([0, 1, 2, 3], [0, 2, 1, 3])
    0.5
    >>> zero_one_loss([0, 1, 2, 3], [0, 2, 1, 3], normalize=False)
    2.0
    """
    normalize = validation.check_flag("normalize", normalize)
    cm = _count_any(y_true, y_pred, sample_weight, backend)
    if isinstance(cm, MultilabelTable):
        return 1.0 - cm.accuracy(True) if normalize else cm._total - cm.accuracy(False)
    if normalize:
        return 1.0 - cm.accuracy()
    return float(cm._total - np.trace(cm._c))


def hamming_loss(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    backend: Backend = "auto",
) -> float:
    """Fraction of wrong labels: for indicator matrices the wrong (row, label) cells over all
    cells; for single-label (binary or multiclass) targets it is :func:`zero_one_loss`. Lower
    is better.

    Examples
    --------
    >>> hamming_loss([1, 2, 3, 4], [2, 2, 3, 4])
    0.25
    """
    cm = _count_any(y_true, y_pred, sample_weight, backend)
    if isinstance(cm, MultilabelTable):
        return cm.hamming()
    # The wrong weight over the total, divided once (1 - accuracy would round twice: 1/3 of
    # the rows wrong is 1/3, not 0.33333333333333337).
    return float((cm._total - np.trace(cm._c)) / cm._total)


@overload
def jaccard_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> float: ...
@overload
def jaccard_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: None,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> F64: ...
@overload
def jaccard_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average | None = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> float | F64: ...
def jaccard_score(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    pos_label: Label = 1,
    average: Average | None = "binary",
    sample_weight: ArrayLike | None = None,
    zero_division: ZeroDivision = "warn",
    backend: Backend = "auto",
) -> float | F64:
    """Jaccard index ``tp / (tp + fp + fn)`` of each class, or averaged as
    :func:`precision_score` averages (``"micro"`` pools the counts first). Higher is better.

    Examples
    --------
    >>> jaccard_score([0, 1, 1, 0], [0, 1, 0, 0])
    0.5
    >>> jaccard_score([0, 1, 2, 2], [0, 2, 2, 2], average=None).tolist()
    [1.0, 0.0, 0.6666666666666666]
    """
    cm = _count_any(y_true, y_pred, sample_weight, backend)
    if isinstance(cm, MultilabelTable):
        average = validation.check_average(average)
        if average == "binary":
            raise binary_average_error()
        if average == "samples":
            validation.zero_division_value(zero_division)
            return (cm if labels is None else cm.restricted(labels)).samples_jaccard(zero_division)
    return table_metrics.jaccard(
        cm,  # type: ignore[arg-type]  # the one-vs-rest interface of a ConfusionMatrix
        labels=labels,
        pos_label=pos_label,
        average=average,
        zero_division=zero_division,
    )


def multilabel_confusion_matrix(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    samplewise: bool = False,
    backend: Backend = "auto",
) -> F64 | I64:
    """One-vs-rest 2 x 2 matrices ``[[tn, fp], [fn, tp]]`` of each label, shape
    ``(n_labels, 2, 2)``, for single-label (binary or multiclass) targets or indicator
    matrices; int64 without weights, float64 with them (as scikit-learn). ``labels`` selects
    and orders the classes (column indices for indicator matrices; absent classes give a
    matrix of true negatives only). ``samplewise`` (indicator matrices only) gives one matrix
    per row instead.

    Examples
    --------
    >>> multilabel_confusion_matrix([0, 1, 2, 2], [0, 2, 2, 2]).tolist()
    [[[3, 0], [0, 1]], [[3, 0], [1, 0]], [[1, 1], [0, 2]]]
    """
    samplewise = validation.check_flag("samplewise", samplewise)
    cm = _count_any(y_true, y_pred, sample_weight, backend)
    if samplewise:
        if not isinstance(cm, MultilabelTable):
            raise ValidationError("Samplewise metrics are not available outside of multilabel classification.")
        rows = (cm if labels is None else cm.restricted(labels)).samplewise_matrices()
        return rows if sample_weight is not None else rows.astype(np.int64)
    _, tp, true_sum, pred_sum = cm._ovr(labels)
    fp, fn = pred_sum - tp, true_sum - tp
    # Indicator matrices count their true negatives; a single-label table's are the rows outside
    # both the true and the predicted class, a difference that rounding of weighted sums may
    # take a hair below zero, where no count can be.
    tn = cm.true_negatives(labels) if isinstance(cm, MultilabelTable) else np.maximum(cm._total - tp - fp - fn, 0.0)
    out: F64 = np.stack([tn, fp, fn, tp], axis=1).reshape(-1, 2, 2)
    return out if sample_weight is not None else out.astype(np.int64)


ReportDict = dict[str, "float | dict[str, float]"]


@overload
def classification_report(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    target_names: list[str] | None = ...,
    sample_weight: ArrayLike | None = ...,
    digits: int = ...,
    output_dict: Literal[False] = ...,
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> str: ...
@overload
def classification_report(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    target_names: list[str] | None = ...,
    sample_weight: ArrayLike | None = ...,
    digits: int = ...,
    output_dict: Literal[True],
    zero_division: ZeroDivision = ...,
    backend: Backend = ...,
) -> ReportDict: ...
def classification_report(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    target_names: list[str] | None = None,
    sample_weight: ArrayLike | None = None,
    digits: int = 2,
    output_dict: bool = False,
    zero_division: ZeroDivision = "warn",
    backend: Backend = "auto",
) -> str | ReportDict:
    """Per-class precision, recall, F1 and support, then their averages, as scikit-learn's
    text table (``digits`` decimals) or, with ``output_dict=True``, as a dict. The rows are
    counted once; the "accuracy" line replaces the micro average when ``labels`` covers every
    class present. For every metric cmetrics has, see :func:`hard_label_report`.

    Examples
    --------
    >>> print(classification_report([0, 1, 2, 2], [0, 2, 2, 1]))
                  precision    recall  f1-score   support
    <BLANKLINE>
               0       1.00      1.00      1.00         1
               1       0.00      0.00      0.00         1
               2       0.50      0.50      0.50         2
    <BLANKLINE>
        accuracy                           0.50         4
       macro avg       0.50      0.50      0.50         4
    weighted avg       0.50      0.50      0.50         4
    <BLANKLINE>
    >>> classification_report([0, 1, 1], [0, 1, 0], output_dict=True)["accuracy"]
    0.6666666666666666
    """
    if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) or digits < 0:
        msg = f"digits={digits!r} is invalid; pass a non-negative integer number of decimals"
        raise ValidationError(msg)
    cm = _count_any(y_true, y_pred, sample_weight, backend)
    multilabel = isinstance(cm, MultilabelTable)
    present = cm.labels
    chosen = present if labels is None else np.asarray(labels)
    if target_names is None:
        names = [str(lab) for lab in chosen.tolist()]
    else:
        names = [str(n) for n in target_names]
        if len(names) != len(chosen):
            text = f"labels size, {len(chosen)}, does not match size of target_names, {len(names)}"
            if labels is None:
                msg = (
                    f"Number of classes, {len(chosen)}, does not match size of target_names, {len(names)}. "
                    "Try specifying the labels parameter"
                )
                raise ValidationError(msg)
            warn(text, UserWarning)
    p, r, f, support = cast("PerClass", _prfs_any(cm, labels=chosen, average=None, zero_division=zero_division))
    total = support.sum()
    headers = ("precision", "recall", "f1-score", "support")
    accuracy_line = not multilabel and (labels is None or set(chosen.tolist()) >= set(present.tolist()))
    averages: list[tuple[str, tuple[float, float, float]]] = []
    kinds: tuple[Average, ...] = ("micro", "macro", "weighted")
    if multilabel:
        kinds += ("samples",)
    for average in kinds:
        ap, ar, af, _ = cast("Averaged", _prfs_any(cm, labels=chosen, average=average, zero_division=zero_division))
        heading = "accuracy" if average == "micro" and accuracy_line else f"{average} avg"
        averages.append((heading, (ap, ar, af)))
    if output_dict:
        out: ReportDict = {}
        for name, *values in zip(names, p, r, f, support, strict=False):
            out[name] = dict(zip(headers, (float(v) for v in values), strict=True))
        for heading, (ap, ar, af) in averages:
            out[heading] = ap if heading == "accuracy" else dict(zip(headers, (ap, ar, af, float(total)), strict=True))
        return out
    width = max(max((len(n) for n in names), default=0), len("weighted avg"), digits)
    lines = [f"{'':>{width}s} " + "".join(f" {h:>9}" for h in headers), ""]

    def row(name: str, values: tuple[float, ...], count: object) -> str:
        return f"{name:>{width}s} " + "".join(f" {v:>9.{digits}f}" for v in values) + f" {count!s:>9}"

    lines += [row(n, (pi, ri, fi), s_) for n, pi, ri, fi, s_ in zip(names, p, r, f, support, strict=False)]
    lines.append("")
    for heading, (ap, ar, af) in averages:
        if heading == "accuracy":
            lines.append(f"{heading:>{width}s} " + f" {'':>9}" * 2 + f" {af:>9.{digits}f} {total!s:>9}")
        else:
            lines.append(row(heading, (ap, ar, af), total))
    return "\n".join(lines) + "\n"


def hard_label_report(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    zero_division: ZeroDivision = "warn",
    backend: Backend = "auto",
) -> Report:
    """Every hard-label metric from one counting pass, as a :class:`cmetrics.Report`
    (the report :func:`cmetrics.evaluate` gives for ``y_pred`` alone).

    Examples
    --------
    >>> r = hard_label_report([0, 1, 1, 2], [0, 1, 2, 2])
    >>> r.accuracy, r.per_class["1"]["recall"]
    (0.75, 0.5)
    """
    return _count(y_true, y_pred, sample_weight, backend).report(zero_division=zero_division)


def hinge_loss(
    y_true: ArrayLike,
    pred_decision: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    backend: Backend = "auto",
) -> float:
    """Average hinge loss ``max(0, 1 - margin)`` of decision values, as scikit-learn: binary
    (a 1-D ``pred_decision``; the greater label is +1, the other -1, margin = label x decision)
    or multiclass (an ``(n, K)`` ``pred_decision``, one column per class of ``labels`` or of
    ``y_true``; Crammer and Singer's margin, the true class's decision minus the greatest other).

    >>> round(hinge_loss([-1, 1, 1], [-2.18, 2.36, 0.09]), 4)
    0.3033
    """
    resolve_backend(backend)
    t = validation.as_1d(y_true, "y_true")
    d = validation.to_numpy(pred_decision, "pred_decision")
    pair = validation.label_pair(t, t)
    values = pair.y_true
    if pair.kind == "str":
        value_checks.check_object_strings(values, "y_true")
        values = values.astype(np.str_)
    classes = np.unique(values if labels is None else validation.check_labels(labels, pair.kind))
    w = validation.weights(sample_weight, t.shape[0])
    if w is not None:
        value_checks.check_weights(w, t.shape[0])
        with np.errstate(over="ignore"):
            value_checks.check_totals(float(np.sum(w)), 0.0, t.shape[0])
    if classes.size > 2:
        if d.ndim != 2:
            msg = (
                f"pred_decision must be (n_samples, n_classes) with a multiclass target, that is "
                f"({t.shape[0]}, {classes.size}); got shape {d.shape}"
            )
            raise ShapeError(msg)
        s = np.asarray(multiclass_ranking.score_matrix(d, t.shape[0], "pred_decision"), dtype=np.float64)
        if s.shape[1] != classes.size:
            msg = (
                "Please include all labels in y_true or pass labels as third argument"
                if labels is None
                else f"pred_decision has {s.shape[1]} columns but there are {classes.size} labels"
            )
            raise ShapeError(msg)
        codes, _ = multiclass_ranking.encode(values, s.shape[1], None if labels is None else classes, ordered=False)
        rows = np.arange(t.shape[0])
        own = s[rows, codes]
        others = s.copy()
        others[rows, codes] = -np.inf
        margin = own - others.max(axis=1)
    else:
        if d.ndim == 2 and d.shape[1] > 1:
            msg = (
                f"pred_decision has {d.shape[1]} columns but y_true has {classes.size} classes; pass a 1-D "
                "decision for a binary target, or labels= listing every class"
            )
            raise ShapeError(msg)
        dec = np.asarray(validation.scores(d.ravel() if d.ndim == 2 else d, "pred_decision"), dtype=np.float64)
        validation.same_length("y_true", t, "pred_decision", dec)
        value_checks.check_finite("pred_decision", dec)
        if dec.shape[0] == 0:
            raise ShapeError("pred_decision is empty; at least one sample is required")
        present = np.unique(values)
        sign = np.where(values == present[-1], 1.0, -1.0) if present.size == 2 else np.full(t.shape[0], -1.0)
        margin = sign * dec
    losses = np.clip(1 - margin, 0, None)
    with np.errstate(over="ignore", invalid="ignore"):
        value = float(np.average(losses, weights=w))
    if not math.isfinite(value):  # losses times weights beyond float64: the same mean, scaled
        top = float(losses.max())
        value = top * float(np.average(losses / top, weights=None if w is None else w / np.sum(w)))
    return value


def class_likelihood_ratios(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    replace_undefined_by: float | dict[str, float] = np.nan,
    backend: Backend = "auto",
) -> tuple[float, float]:
    """Binary likelihood ratios ``(LR+, LR-)``: ``LR+ = sensitivity / (1 - specificity)`` and
    ``LR- = (1 - sensitivity) / specificity``, from one counting pass, with scikit-learn's
    warnings; undefined ratios are ``replace_undefined_by`` (NaN, 1.0, or
    ``{"LR+": a, "LR-": b}``).

    >>> class_likelihood_ratios([0, 1, 0, 1, 0], [1, 1, 0, 0, 0])
    (1.5, 0.75)
    """
    cm = ConfusionMatrix.from_predictions(y_true, y_pred, labels=labels, sample_weight=sample_weight, backend=backend)
    if cm.labels.size != 2:
        msg = f"class_likelihood_ratios only supports binary classification problems, got {cm.labels.size} labels"
        raise ValidationError(msg)
    return table_metrics.likelihood_ratios(cm, replace_undefined_by)

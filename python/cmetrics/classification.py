"""Hard-label metrics with scikit-learn's names, arguments and defaults.

Each function counts the confusion matrix once (Rust kernel, GIL released)
and derives its value from it; to compute several metrics, count once with
:meth:`ConfusionMatrix.from_predictions` and call its methods, or use
:func:`hard_label_report`. Conventions follow ``docs/definitions.md`` sections 1-3;
the README lists every intentional difference from scikit-learn.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cmetrics import _hard as _m
from cmetrics._config import Backend
from cmetrics.confusion import ConfusionMatrix


def _count(y_true: Any, y_pred: Any, sample_weight: Any, backend: Backend) -> ConfusionMatrix:
    return ConfusionMatrix.from_predictions(y_true, y_pred, sample_weight=sample_weight, backend=backend)


def accuracy_score(
    y_true: Any, y_pred: Any, *, normalize: bool = True, sample_weight: Any = None, backend: Backend = "auto"
) -> float:
    """Fraction (or, with ``normalize=False``, weighted count) of correct predictions.

    Higher is better; range [0, 1].

    Examples
    --------
    >>> accuracy_score([0, 1, 2, 3], [0, 2, 1, 3])
    0.5
    """
    cm = _count(y_true, y_pred, sample_weight, backend)
    if normalize:
        return _m.accuracy(cm)
    return float(np.trace(cm._c))


def balanced_accuracy_score(
    y_true: Any, y_pred: Any, *, sample_weight: Any = None, adjusted: bool = False, backend: Backend = "auto"
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
    return _m.balanced_accuracy(_count(y_true, y_pred, sample_weight, backend), adjusted)


def precision_recall_fscore_support(
    y_true: Any,
    y_pred: Any,
    *,
    beta: float = 1.0,
    labels: Any = None,
    pos_label: Any = 1,
    average: Any = None,
    warn_for: tuple[str, ...] = ("precision", "recall", "f-score"),
    sample_weight: Any = None,
    zero_division: Any = "warn",
    backend: Backend = "auto",
) -> tuple[Any, Any, Any, Any]:
    """Precision ``tp/m``, recall ``tp/n``, F-beta ``(1+b^2)tp/(b^2 n + m)`` and support ``n``.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
    beta : float
        Weight of recall in the F-score (``inf`` = recall, 0 = precision).
    labels : array-like, optional
        Classes to report, in order; counts are always taken over all samples.
    pos_label : label
        The class reported when ``average="binary"``.
    average : {None, "binary", "micro", "macro", "weighted"}
        ``None`` returns per-class arrays.
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
    """
    cm = _count(y_true, y_pred, sample_weight, backend)
    return _m.prfs(
        cm,
        beta=beta,
        labels=labels,
        pos_label=pos_label,
        average=average,
        warn_for=warn_for,
        zero_division=zero_division,
    )


def fbeta_score(
    y_true: Any,
    y_pred: Any,
    *,
    beta: float,
    labels: Any = None,
    pos_label: Any = 1,
    average: Any = "binary",
    sample_weight: Any = None,
    zero_division: Any = "warn",
    backend: Backend = "auto",
) -> Any:
    """F-beta score (see :func:`precision_recall_fscore_support`). Higher is better."""
    _, _, f, _ = precision_recall_fscore_support(
        y_true, y_pred, beta=beta, labels=labels, pos_label=pos_label, average=average,
        warn_for=("f-score",), sample_weight=sample_weight, zero_division=zero_division, backend=backend,
    )
    return f


def f1_score(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    pos_label: Any = 1,
    average: Any = "binary",
    sample_weight: Any = None,
    zero_division: Any = "warn",
    backend: Backend = "auto",
) -> Any:
    """F1 score, the harmonic mean of precision and recall. Higher is better.

    Examples
    --------
    >>> f1_score([0, 1, 1, 0], [0, 1, 0, 0])
    0.6666666666666666
    """
    return fbeta_score(
        y_true, y_pred, beta=1.0, labels=labels, pos_label=pos_label, average=average,
        sample_weight=sample_weight, zero_division=zero_division, backend=backend,
    )


def precision_score(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    pos_label: Any = 1,
    average: Any = "binary",
    sample_weight: Any = None,
    zero_division: Any = "warn",
    backend: Backend = "auto",
) -> Any:
    """Precision ``tp / (tp + fp)``. Higher is better."""
    p, _, _, _ = precision_recall_fscore_support(
        y_true, y_pred, labels=labels, pos_label=pos_label, average=average,
        warn_for=("precision",), sample_weight=sample_weight, zero_division=zero_division, backend=backend,
    )
    return p


def recall_score(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    pos_label: Any = 1,
    average: Any = "binary",
    sample_weight: Any = None,
    zero_division: Any = "warn",
    backend: Backend = "auto",
) -> Any:
    """Recall ``tp / (tp + fn)``. Higher is better."""
    _, r, _, _ = precision_recall_fscore_support(
        y_true, y_pred, labels=labels, pos_label=pos_label, average=average,
        warn_for=("recall",), sample_weight=sample_weight, zero_division=zero_division, backend=backend,
    )
    return r


def matthews_corrcoef(y_true: Any, y_pred: Any, *, sample_weight: Any = None, backend: Backend = "auto") -> float:
    """Multi-class Matthews correlation coefficient (Gorodkin's R_K), in [-1, 1].

    0.0 when only one class is true or only one is predicted (scikit-learn's
    convention). Higher is better.

    Examples
    --------
    >>> matthews_corrcoef([1, 1, 1, 0], [1, 0, 1, 1])
    -0.3333333333333333
    """
    return _m.matthews_corrcoef(_count(y_true, y_pred, sample_weight, backend))


def cohen_kappa_score(
    y1: Any,
    y2: Any,
    *,
    labels: Any = None,
    weights: str | None = None,
    sample_weight: Any = None,
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
    return _m.cohen_kappa(_count(y1, y2, sample_weight, backend), labels, weights, replace_undefined_by)


def informedness(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    sample_weight: Any = None,
    prior: Any = None,
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
    return _m.informedness(_count(y_true, y_pred, sample_weight, backend), labels, prior)


def markedness(
    y_true: Any, y_pred: Any, *, labels: Any = None, sample_weight: Any = None, backend: Backend = "auto"
) -> float:
    """Markedness ``sum_c P_c (PPV_c - FOR_c)``: informedness with truth and
    prediction exchanged, in [-1, 1]. NaN with a warning when fewer than two
    classes are predicted."""
    return _m.markedness(_count(y_true, y_pred, sample_weight, backend), labels)


def youden_j_per_class(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    sample_weight: Any = None,
    zero_division: Any = "warn",
    backend: Backend = "auto",
) -> np.ndarray:
    """One-vs-rest Youden J ``TPR_c + TNR_c - 1`` of each class (docs/definitions.md §3.1).

    Undefined unless ``0 < n_c < N``; such entries follow ``zero_division``.
    """
    return _m.per_class(_count(y_true, y_pred, sample_weight, backend), "j", labels, zero_division)


def markedness_per_class(
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any = None,
    sample_weight: Any = None,
    zero_division: Any = "warn",
    backend: Backend = "auto",
) -> np.ndarray:
    """One-vs-rest markedness ``PPV_c + NPV_c - 1`` of each class; undefined
    unless ``0 < m_c < N``."""
    return _m.per_class(_count(y_true, y_pred, sample_weight, backend), "mk", labels, zero_division)


def normalized_information_transfer(
    y_true: Any, y_pred: Any, *, sample_weight: Any = None, n_classes: int | None = None, backend: Backend = "auto"
) -> float:
    """Normalized Information Transfer ``2^MI(true; pred) / k`` (MI in bits).

    ``k`` is the number of classes present in ``y_true`` unless ``n_classes``
    is given. 1/k for an uninformative prediction, 1 only for a perfect one on
    a uniform class distribution. A single true class gives 1.0 with a warning.
    """
    return _m.nit(_count(y_true, y_pred, sample_weight, backend), n_classes)


def entropy_modulated_accuracy(
    y_true: Any, y_pred: Any, *, sample_weight: Any = None, backend: Backend = "auto"
) -> float:
    """Entropy-modulated accuracy ``2^-H(true | pred)``, in (0, 1]; 1 iff the
    prediction determines the truth."""
    return _m.ema(_count(y_true, y_pred, sample_weight, backend))


def class_prevalence(
    y_true: Any, y_pred: Any, *, labels: Any = None, sample_weight: Any = None, backend: Backend = "auto"
) -> np.ndarray:
    """Per-class prevalence ``n_c / N`` (share of each class in ``y_true``)."""
    return _m.rates(_count(y_true, y_pred, sample_weight, backend), "prevalence", labels)


def class_bias(
    y_true: Any, y_pred: Any, *, labels: Any = None, sample_weight: Any = None, backend: Backend = "auto"
) -> np.ndarray:
    """Per-class bias ``m_c / N`` (share of each class in ``y_pred``)."""
    return _m.rates(_count(y_true, y_pred, sample_weight, backend), "bias", labels)


def hard_label_report(
    y_true: Any, y_pred: Any, *, sample_weight: Any = None, zero_division: Any = "warn", backend: Backend = "auto"
) -> dict[str, Any]:
    """Every hard-label metric from one counting pass, as a dict of plain values."""
    return _m.report(_count(y_true, y_pred, sample_weight, backend), zero_division)

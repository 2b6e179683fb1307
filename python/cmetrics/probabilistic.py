"""Probabilistic metrics: the whole predicted distribution is scored, not only
its top label (docs/definitions.md §4, §6 and §7).

Each function reads ``y_proba`` once, in the Rust kernel, with validation fused
into the same pass: entries must lie in [0, 1] with no NaN/inf, and rows must
sum to 1 within ``1e-6 * K`` unless ``validate=False``. Column ``j`` belongs to
``labels[j]``; by default ``labels`` is the sorted set of ``y_true``, which must
then have exactly ``K`` classes. All sums are float64, whatever the input dtype.
"""

from __future__ import annotations

import warnings
from typing import Literal, overload

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._base import validation, value_checks
from cmetrics._base.aliases import F64, Average, Backend, Label, Normalize, ZeroDivision
from cmetrics._base.undefined import undefined, warn
from cmetrics._derive import probability_pass, table_metrics
from cmetrics._derive.probability_pass import CalibrationBins
from cmetrics._derive.table_metrics import PRFS, Averaged, PerClass
from cmetrics.exceptions import LabelError, ProbabilityError, ShapeError, ValidationError

__all__ = [
    "CalibrationBins",
    "brier_score",
    "brier_score_loss",
    "calibration_bins",
    "cf1_score",
    "cfbeta_score",
    "cprecision_recall_fscore_support",
    "cprecision_score",
    "crecall_score",
    "d2_brier_score",
    "d2_log_loss_score",
    "entropy_score",
    "expected_calibration_error",
    "log_loss",
    "max_calibration_error",
    "prob_confusion_matrix",
    "purity",
    "purity_from_matrix",
]


def _result(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    labels: ArrayLike | None,
    sample_weight: ArrayLike | None,
    backend: Backend,
    *,
    validate: bool = True,
    n_bins: int = 0,
    entropy: bool = False,
    scores: bool = False,
) -> probability_pass.ProbResult:
    inp = probability_pass.prob_inputs(y_true, y_proba, labels=labels, sample_weight=sample_weight, backend=backend)
    acc = probability_pass.accumulate(
        inp, backend=backend, n_bins=n_bins, validate=validate, entropy=entropy, scores=scores, hard=False
    )
    return probability_pass.ProbResult(acc, inp.labels, inp.kind, backend, hard=False)


def prob_confusion_matrix(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    normalize: Normalize | None = None,
    validate: bool = True,
    backend: Backend = "auto",
) -> F64:
    """Probabilistic confusion matrix ``pCM[r, h] = sum_{i: y_i = r} w_i p_ih``.

    Rows are true classes, columns hypothesised classes (Yacouby and Axman 2020). With one-hot
    probabilities it equals :func:`cmetrics.confusion_matrix`. ``normalize="true"``
    divides each row by the true count: the row-mean matrix of Tornetta 2021.

    Examples
    --------
    >>> prob_confusion_matrix([0, 1], [[0.8, 0.2], [0.4, 0.6]]).tolist()
    [[0.8, 0.2], [0.4, 0.6]]
    """
    return _result(y_true, y_proba, labels, sample_weight, backend, validate=validate).prob_matrix(normalize)


@overload
def cprecision_recall_fscore_support(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    beta: float = ...,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: None = ...,
    warn_for: tuple[str, ...] = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    validate: bool = ...,
    backend: Backend = ...,
) -> PerClass: ...
@overload
def cprecision_recall_fscore_support(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    beta: float = ...,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average,
    warn_for: tuple[str, ...] = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    validate: bool = ...,
    backend: Backend = ...,
) -> Averaged: ...
@overload
def cprecision_recall_fscore_support(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    beta: float = ...,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average | None = ...,
    warn_for: tuple[str, ...] = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    validate: bool = ...,
    backend: Backend = ...,
) -> PRFS: ...
def cprecision_recall_fscore_support(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    beta: float = 1.0,
    labels: ArrayLike | None = None,
    pos_label: Label = 1,
    average: Average | None = None,
    warn_for: tuple[str, ...] = ("precision", "recall", "f-score"),
    sample_weight: ArrayLike | None = None,
    zero_division: ZeroDivision = "warn",
    validate: bool = True,
    backend: Backend = "auto",
) -> PRFS:
    """Confidence precision, recall and F-beta (Yacouby and Axman 2020) and support.

    ``cPrecision_c = pCM[c, c] / colsum_c``, ``cRecall_c = pCM[c, c] / n_c`` (the hard
    true count), ``cF_c = (1 + b^2) pCM[c, c] / (b^2 n_c + colsum_c)``, computed from
    sums, so a class scored but never true gets cF = 0 (decision O4, docs/definitions.md §9). ``labels``
    names the columns of ``y_proba`` (every class, in column order); ``average``,
    ``pos_label`` and ``zero_division`` work as in
    :func:`cmetrics.precision_recall_fscore_support`. cPrecision is 0/0 only for a
    class that receives no probability mass at all (the "Benefit A" of Yacouby and Axman 2020).
    Higher is better.

    Examples
    --------
    >>> p, r, f, s = cprecision_recall_fscore_support([0, 1], [[0.8, 0.2], [0.4, 0.6]])
    >>> p.round(4).tolist(), r.round(4).tolist()
    ([0.6667, 0.75], [0.8, 0.6])
    """
    res = _result(y_true, y_proba, labels, sample_weight, backend, validate=validate)
    return table_metrics.prfs(
        res.cmatrix,
        beta=beta,
        pos_label=pos_label,
        average=average,
        warn_for=warn_for,
        zero_division=zero_division,
        prefix="c",
    )


@overload
def cfbeta_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    beta: float,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    validate: bool = ...,
    backend: Backend = ...,
) -> float: ...
@overload
def cfbeta_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    beta: float,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: None,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    validate: bool = ...,
    backend: Backend = ...,
) -> F64: ...
@overload
def cfbeta_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    beta: float,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average | None = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    validate: bool = ...,
    backend: Backend = ...,
) -> float | F64: ...
def cfbeta_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    beta: float,
    labels: ArrayLike | None = None,
    pos_label: Label = 1,
    average: Average | None = "binary",
    sample_weight: ArrayLike | None = None,
    zero_division: ZeroDivision = "warn",
    validate: bool = True,
    backend: Backend = "auto",
) -> float | F64:
    """Confidence F-beta (see :func:`cprecision_recall_fscore_support`)."""
    return cprecision_recall_fscore_support(
        y_true,
        y_proba,
        beta=beta,
        labels=labels,
        pos_label=pos_label,
        average=average,
        warn_for=("f-score",),
        sample_weight=sample_weight,
        zero_division=zero_division,
        validate=validate,
        backend=backend,
    )[2]


@overload
def cf1_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    validate: bool = ...,
    backend: Backend = ...,
) -> float: ...
@overload
def cf1_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: None,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    validate: bool = ...,
    backend: Backend = ...,
) -> F64: ...
@overload
def cf1_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average | None = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    validate: bool = ...,
    backend: Backend = ...,
) -> float | F64: ...
def cf1_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    pos_label: Label = 1,
    average: Average | None = "binary",
    sample_weight: ArrayLike | None = None,
    zero_division: ZeroDivision = "warn",
    validate: bool = True,
    backend: Backend = "auto",
) -> float | F64:
    """Confidence F1 (see :func:`cprecision_recall_fscore_support`)."""
    return cprecision_recall_fscore_support(
        y_true,
        y_proba,
        beta=1.0,
        labels=labels,
        pos_label=pos_label,
        average=average,
        warn_for=("f-score",),
        sample_weight=sample_weight,
        zero_division=zero_division,
        validate=validate,
        backend=backend,
    )[2]


@overload
def cprecision_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    validate: bool = ...,
    backend: Backend = ...,
) -> float: ...
@overload
def cprecision_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: None,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    validate: bool = ...,
    backend: Backend = ...,
) -> F64: ...
@overload
def cprecision_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average | None = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    validate: bool = ...,
    backend: Backend = ...,
) -> float | F64: ...
def cprecision_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    pos_label: Label = 1,
    average: Average | None = "binary",
    sample_weight: ArrayLike | None = None,
    zero_division: ZeroDivision = "warn",
    validate: bool = True,
    backend: Backend = "auto",
) -> float | F64:
    """Confidence precision ``pCM[c, c] / colsum_c``."""
    return cprecision_recall_fscore_support(
        y_true,
        y_proba,
        beta=1.0,
        labels=labels,
        pos_label=pos_label,
        average=average,
        warn_for=("precision",),
        sample_weight=sample_weight,
        zero_division=zero_division,
        validate=validate,
        backend=backend,
    )[0]


@overload
def crecall_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    validate: bool = ...,
    backend: Backend = ...,
) -> float: ...
@overload
def crecall_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: None,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    validate: bool = ...,
    backend: Backend = ...,
) -> F64: ...
@overload
def crecall_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average | None = ...,
    sample_weight: ArrayLike | None = ...,
    zero_division: ZeroDivision = ...,
    validate: bool = ...,
    backend: Backend = ...,
) -> float | F64: ...
def crecall_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    pos_label: Label = 1,
    average: Average | None = "binary",
    sample_weight: ArrayLike | None = None,
    zero_division: ZeroDivision = "warn",
    validate: bool = True,
    backend: Backend = "auto",
) -> float | F64:
    """Confidence recall ``pCM[c, c] / n_c``."""
    return cprecision_recall_fscore_support(
        y_true,
        y_proba,
        beta=1.0,
        labels=labels,
        pos_label=pos_label,
        average=average,
        warn_for=("recall",),
        sample_weight=sample_weight,
        zero_division=zero_division,
        validate=validate,
        backend=backend,
    )[1]


def entropy_score(
    y_proba: ArrayLike, *, sample_weight: ArrayLike | None = None, validate: bool = True, backend: Backend = "auto"
) -> float:
    """Entropy score ``1 - mean_i H(p_i) / log K`` (Tornetta 2021), in [0, 1].

    1 iff every row is one-hot (a fully confident model); 0 for uniform rows.
    Measures confidence, not correctness. NaN with a warning for K = 1.

    Examples
    --------
    >>> entropy_score([[1.0, 0.0], [0.5, 0.5]])
    0.5
    """
    raw = validation.to_numpy(y_proba, "y_proba")
    p = validation.proba_array(raw)
    zeros = np.zeros(p.shape[0], dtype=np.int32)
    w = validation.weights(sample_weight, p.shape[0])
    tolerance = validation.row_sum_tolerance(raw.dtype, p.shape[1])
    inp = probability_pass.ProbInputs(zeros, p, None, w, np.arange(p.shape[1]), "int", tolerance)
    acc = probability_pass.accumulate(
        inp, backend=backend, n_bins=0, validate=validate, entropy=True, scores=False, hard=False
    )
    return probability_pass.ProbResult(acc, inp.labels, "int", backend, hard=False).entropy_score()


def purity(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    validate: bool = True,
    backend: Backend = "auto",
) -> float:
    """Purity ``1 - ||P - I||_F / sqrt(2K)`` of the row-normalised probabilistic
    confusion matrix P (Tornetta 2021), in [0, 1]; 1 iff P = I. NaN with a warning when
    a class has no true samples."""
    return _result(y_true, y_proba, labels, sample_weight, backend, validate=validate).purity()


def purity_from_matrix(matrix: ArrayLike) -> float:
    """Purity of a given K x K row-normalised matrix P: entries in [0, 1], each row summing to 1
    (within 1e-6 K, as probability rows), as :func:`prob_confusion_matrix` gives it with
    ``normalize="true"``.

    Examples
    --------
    >>> purity_from_matrix([[0.5, 0.5], [0.5, 0.5]])
    0.5
    """
    try:
        p = np.asarray(matrix, dtype=np.float64)
    except (TypeError, ValueError):
        msg = "matrix must be a square (K, K) array of numbers; pass a nested list or a 2-D array"
        raise ShapeError(msg) from None
    if p.ndim != 2 or p.shape[0] != p.shape[1] or p.shape[0] == 0:
        msg = f"matrix must be a non-empty square (K, K) array, got shape {p.shape}"
        raise ShapeError(msg)
    bad = ~((p >= 0) & (p <= 1))
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        msg = f"matrix[{row}, {col}] = {float(p[row, col])!r} is not a probability; entries must lie in [0, 1]"
        raise ProbabilityError(msg)
    sums = p.sum(axis=1)
    atol = 1e-6 * p.shape[0]
    off = np.flatnonzero(np.abs(sums - 1.0) > atol)
    if off.size:
        row = int(off[0])
        msg = (
            f"matrix row {row} sums to {float(sums[row])!r}, not 1 (tolerance {atol!r}); pass the row-normalised "
            'matrix (prob_confusion_matrix(..., normalize="true"))'
        )
        raise ProbabilityError(msg)
    return probability_pass.purity_value(p)


def brier_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    scale_by_half: bool = False,
    validate: bool = True,
    backend: Backend = "auto",
) -> float:
    """Brier score ``mean_i sum_j (p_ij - 1[y_i = j])^2`` (Yacouby and Axman 2020), range [0, 2].

    Equals ``sklearn.metrics.brier_score_loss(..., scale_by_half=False)``;
    ``scale_by_half=True`` halves it (sklearn's default for binary input). Lower is better.
    """
    res = _result(y_true, y_proba, labels, sample_weight, backend, validate=validate, scores=True)
    return res.brier(bool(scale_by_half))


def log_loss(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    normalize: bool = True,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    validate: bool = True,
    backend: Backend = "auto",
) -> float:
    """Log loss ``-mean_i log clip(p_{i, y_i}, eps, 1 - eps)``, eps = float64 machine
    epsilon, as scikit-learn (docs/definitions.md §7.2); ``normalize=False`` gives the
    (weighted) sum instead of the mean. A 1-D ``y_proba`` is the probability of the greater of
    two classes (scikit-learn's binary form). Rows not summing to 1 raise (scikit-learn only
    warns). Lower is better.

    Examples
    --------
    >>> round(log_loss([0, 1], [[0.9, 0.1], [0.2, 0.8]]), 6)
    0.164252
    >>> round(log_loss([0, 1], [[0.9, 0.1], [0.2, 0.8]], normalize=False), 6)
    0.328504
    """
    normalize = validation.check_flag("normalize", normalize)
    p = _two_columns(validation.to_numpy(y_proba, "y_proba"))
    res = _result(y_true, p, _sorted_labels(labels), sample_weight, backend, validate=validate, scores=True)
    return res.log_loss() if normalize else float(res.log_loss_sum)


def _sorted_labels(labels: ArrayLike | None) -> ArrayLike | None:
    """``labels=`` of the scikit-learn-named probability functions: as scikit-learn, the
    columns are taken to be the sorted labels, with its warning when they were passed in
    another order (the cmetrics functions read ``labels`` as the order of the columns)."""
    if labels is None:
        return None
    given = validation.to_numpy(labels, "labels")
    if given.ndim != 1:
        return labels  # refused by the label check, with its message
    ordered = np.sort(given)
    if not np.array_equal(ordered, given):
        warnings.warn(
            f"Labels passed were {given.tolist()}. But this function assumes labels are ordered "
            f"lexicographically. Pass the ordered labels={ordered.tolist()} and ensure that the columns of "
            "y_prob correspond to this ordering.",
            UserWarning,
            stacklevel=3,
        )
    return ordered


def _two_columns(p: np.ndarray) -> np.ndarray:
    """A 1-D (or one-column) probability of the greater of two classes as the two columns
    ``[1 - p, p]``, as scikit-learn reads it; any other ``y_proba`` as it is."""
    if p.ndim == 1 or (p.ndim == 2 and p.shape[1] == 1):
        q = np.asarray(validation.scores(p.ravel(), "y_proba"), dtype=np.float64)
        return np.column_stack([1 - q, q])
    return p


def calibration_bins(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    n_bins: int = 15,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    validate: bool = True,
    backend: Backend = "auto",
) -> CalibrationBins:
    """Per-bin count, weight, mean top-label confidence and accuracy: what a
    reliability diagram plots. Equal-width bins ``((m-1)/M, m/M]`` with edges
    computed as ``m / M`` (docs/definitions.md §7.3); the first bin also holds 0."""
    n_bins = validation.check_n_bins(n_bins)
    return _result(y_true, y_proba, labels, sample_weight, backend, validate=validate, n_bins=n_bins).bins


def expected_calibration_error(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    n_bins: int = 15,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    validate: bool = True,
    backend: Backend = "auto",
) -> float:
    """Top-label expected calibration error ``sum_m (W_m / W) |acc_m - conf_m|``
    (Guo et al. 2017), in [0, 1]. Lower is better."""
    return calibration_bins(
        y_true, y_proba, n_bins=n_bins, labels=labels, sample_weight=sample_weight, validate=validate, backend=backend
    ).ece()


def max_calibration_error(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    n_bins: int = 15,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    validate: bool = True,
    backend: Backend = "auto",
) -> float:
    """Maximum calibration error over non-empty bins. Lower is better."""
    return calibration_bins(
        y_true, y_proba, n_bins=n_bins, labels=labels, sample_weight=sample_weight, validate=validate, backend=backend
    ).mce()


def _binary_proba(
    y_true: ArrayLike, y_proba: np.ndarray, sample_weight: ArrayLike | None, pos_label: Label | None
) -> tuple[F64, F64, F64 | None]:
    """``(is_positive, p, weight)`` of a 1-D probability of the positive class, checked: one
    probability per row, each in [0, 1]."""
    positive = validation.binary(y_true, pos_label, greater_positive=True).astype(np.float64)
    p = np.asarray(validation.scores(y_proba.ravel(), "y_proba"), dtype=np.float64)
    validation.same_length("y_true", positive, "y_proba", p)
    if p.shape[0] == 0:
        raise ShapeError("y_proba is empty; at least one sample is required")
    bad = ~((p >= 0) & (p <= 1))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        msg = f"y_proba[{i}] = {float(p[i])!r} is not a probability; entries must lie in [0, 1] (no NaN or inf)"
        raise ProbabilityError(msg)
    w = validation.weights(sample_weight, p.shape[0])
    if w is not None:
        value_checks.check_weights(w, p.shape[0])
        with np.errstate(over="ignore"):
            value_checks.check_totals(float(np.sum(w)), 0.0, p.shape[0])
    return positive, p, w


def _check_half(scale_by_half: object) -> bool | None:
    if isinstance(scale_by_half, str) and scale_by_half == "auto":
        return None
    if isinstance(scale_by_half, (bool, np.bool_)):
        return bool(scale_by_half)
    raise ValidationError(f"scale_by_half must be 'auto', True or False, got {scale_by_half!r}")


def brier_score_loss(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: Label | None = None,
    labels: ArrayLike | None = None,
    scale_by_half: bool | Literal["auto"] = "auto",
    backend: Backend = "auto",
) -> float:
    """scikit-learn's Brier score: ``mean_i sum_j (p_ij - 1[y_i = j])^2``, halved by default
    (``scale_by_half="auto"``) when there are at most two columns, so that a 1-D probability of
    the positive class gives ``mean (p_i - 1[y_i = pos])^2``. :func:`brier_score` is the
    unhalved sum (Yacouby and Axman 2020).

    >>> round(brier_score_loss([0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3]), 6)
    0.0375
    """
    half = _check_half(scale_by_half)
    p = validation.to_numpy(y_proba, "y_proba")
    y_true = _one_hot_codes(y_true)
    if p.ndim == 1 or (p.ndim == 2 and p.shape[1] == 1):
        positive, q, w = _binary_proba(y_true, p, sample_weight, pos_label)
        value = float(np.average((positive - q) ** 2, weights=w))
        return value if half in (None, True) else 2 * value
    value = brier_score(y_true, p, labels=_sorted_labels(labels), sample_weight=sample_weight, backend=backend)
    if half or (half is None and p.ndim == 2 and p.shape[1] < 3):
        value *= 0.5
    return value


def _one_hot_codes(y_true: ArrayLike) -> ArrayLike:
    """A one-hot ``y_true`` (an (n, K) 0/1 matrix with one 1 per row, which scikit-learn's
    Brier score takes) as the column index of each row's 1; any other ``y_true`` as it is."""
    t = validation.to_numpy(y_true, "y_true")
    if t.ndim != 2 or t.shape[1] < 2:
        return t  # converted once: the callers read the array
    if t.dtype.kind not in "biuf" or not ((t == 0) | (t == 1)).all() or not (t.sum(axis=1) == 1).all():
        msg = "y_true is 2-D, so it must be one-hot (one 1 per row, a column per class); or pass 1-D labels"
        raise LabelError(msg)
    codes: np.ndarray = np.argmax(t, axis=1)
    return codes


def _too_few(y_true: ArrayLike) -> bool:
    if validation.length_of(y_true) < 2:
        warn("D^2 score is not well-defined with less than two samples.")
        return True
    return False


def d2_brier_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: Label | None = None,
    labels: ArrayLike | None = None,
    backend: Backend = "auto",
) -> float:
    """The fraction of the Brier score explained: ``1 - B / B_0``, with ``B_0`` the Brier score
    of always predicting the (weighted) class frequencies, ``1 - sum_j q_j^2``. 1 is perfect, 0
    is no better than the frequencies. NaN with a warning for fewer than two samples.

    >>> round(d2_brier_score([0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3]), 4)
    0.85
    """
    if _too_few(y_true):
        return float("nan")
    p = validation.to_numpy(y_proba, "y_proba")
    if p.ndim == 1 or (p.ndim == 2 and p.shape[1] == 1):
        positive, q, w = _binary_proba(y_true, p, sample_weight, pos_label)
        prior = float(np.average(positive, weights=w))
        null = float(np.average((positive - prior) ** 2, weights=w))
        score = float(np.average((positive - q) ** 2, weights=w))
    else:
        res = _result(y_true, p, _sorted_labels(labels), sample_weight, backend, scores=True)
        share = res.true_weight / res.weight
        null = 1.0 - float(np.sum(share**2))
        score = res.brier()
    if null == 0:
        return undefined("d2_brier_score is undefined when y_true has one class; returning NaN")
    return _explained(score, null)


def d2_log_loss_score(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    backend: Backend = "auto",
) -> float:
    """The fraction of the log loss explained: ``1 - L / L_0``, with ``L_0`` the log loss of
    always predicting the (weighted) class frequencies (their entropy). A 1-D ``y_proba`` is the
    probability of the greater class. NaN with a warning for fewer than two samples.

    >>> round(d2_log_loss_score([0, 1, 1, 0], [[0.9, 0.1], [0.1, 0.9], [0.2, 0.8], [0.7, 0.3]]), 4)
    0.7149
    """
    if _too_few(y_true):
        return float("nan")
    p = _two_columns(validation.to_numpy(y_proba, "y_proba"))
    res = _result(y_true, p, _sorted_labels(labels), sample_weight, backend, scores=True)
    eps = np.finfo(np.float64).eps
    share = np.clip(res.true_weight / res.weight, eps, 1 - eps)
    null = -float(np.sum(res.true_weight * np.log(share)))
    if null == 0:
        return undefined("d2_log_loss_score is undefined when y_true has one class; returning NaN")
    return _explained(res.log_loss_sum, null)


def _explained(score: float, null: float) -> float:
    """``1 - score / null``, the share of the null model's loss explained. The two losses add
    the same terms in different orders when the forecast is the null model's (the class
    frequencies): a difference within that rounding (64 ulp of the null loss) is no
    difference, so that forecast explains exactly 0, not -2e-16."""
    if abs(null - score) <= 64 * np.finfo(np.float64).eps * abs(null):
        return 0.0
    return 1.0 - score / null

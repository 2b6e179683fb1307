"""Ranking and selective-prediction metrics (docs/definitions.md §5, §7.4 and §7.5).

A confidence function is judged by how well it ranks the correct predictions
above the wrong ones (Gu and Hopkins 2023). Every function here sorts once (Rust: an LSD
radix sort on order-preserving keys) and derives its value from the
tie-grouped walk down the scores; pair counts are exact integers without
weights. Scores must be finite: NaN or infinity raises ``NonFiniteError``.

Binary ``y_true`` is a bool array, or two labels of which the greater is
the positive class (as scikit-learn's ``roc_auc_score``), or ``pos_label=``.
"""

from __future__ import annotations

import math
import sys
import warnings
from fractions import Fraction
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from cmetrics import _checks
from cmetrics._config import Backend, get_num_threads, resolve_backend
from cmetrics._kernels import BinaryRanking
from cmetrics._numpy.ranking import check_finite, check_totals, check_weights, order_keys, tie_runs
from cmetrics.exceptions import (
    LabelError,
    LengthMismatchError,
    NonFiniteError,
    ShapeError,
    UndefinedMetricWarning,
    UnsupportedDtypeError,
    ValidationError,
    WeightError,
)

__all__ = [
    "SelectiveScores",
    "correctness",
    "aupr_trapezoid",
    "aurc",
    "average_precision_score",
    "kendall_tau",
    "kendall_tau_distance",
    "refinement",
    "reversed_pair_proportion",
    "risk_coverage_curve",
    "roc_auc_score",
    "selective_prediction_scores",
]

Ties = Literal["half", "strict", "harsh"]


def _scores(x: Any, name: str) -> np.ndarray:
    """Scores as the kernels read them: float64, or int64 / uint64 for integers, which are
    ordered as integers (float64 holds integers exactly only up to 2^53)."""
    a = _checks.as_1d(x, name)
    if a.dtype.kind == "O":
        try:
            a = np.array(a.tolist())
        except (TypeError, ValueError, OverflowError):
            a = np.empty(0, dtype=object)
        if a.dtype.kind not in "biuf" or a.ndim != 1:
            msg = f"{name} holds objects that are not numbers; pass real numbers"
            raise UnsupportedDtypeError(msg)
    kind = a.dtype.kind
    if kind == "b" or kind == "i" or (kind == "u" and a.dtype.itemsize < 8):
        return np.ascontiguousarray(a, dtype=np.int64)
    if kind == "u":
        return np.ascontiguousarray(a, dtype=np.uint64)
    if kind == "f":
        return np.ascontiguousarray(a, dtype=np.float64)
    msg = f"{name} has dtype {a.dtype}; pass real numbers"
    raise UnsupportedDtypeError(msg)


def _binary(y_true: Any, pos_label: Any, name: str = "y_true") -> npt.NDArray[np.bool_]:
    """``y_true == pos_label`` for binary labels, with scikit-learn's rules: integer labels
    in {0, 1} or {-1, 1} need no ``pos_label`` (1 is positive), two string labels take the
    greater as positive, and a ``pos_label`` that is not one of two present labels raises."""
    a = _checks.as_1d(y_true, name)
    if a.dtype == np.bool_:
        if pos_label not in (None, True, False, 0, 1):
            msg = f"pos_label={pos_label!r} is not a valid label. It should be one of [False, True]"
            raise LabelError(msg)
        return np.ascontiguousarray(a) if pos_label in (None, True, 1) else ~a
    pair = _checks.label_pair(a, a, names=(name, name))
    values = pair.y_true
    if pair.kind == "str":
        _checks.check_object_strings(values, name)
        values = values.astype(np.str_)
    classes = np.unique(values)
    shown = classes.tolist()[:10]
    if len(classes) > 2:
        msg = f"{name} has {len(classes)} classes; these metrics are binary (pass a bool array or pos_label=)"
        raise ValidationError(msg)
    if pos_label is None:
        if pair.kind == "int" and not set(classes.tolist()) <= {0, 1} and not set(classes.tolist()) <= {-1, 1}:
            msg = (f"{name} takes value in {shown} and pos_label is not specified: either make {name} take "
                   "value in {0, 1} or {-1, 1} or pass pos_label explicitly")
            raise LabelError(msg)
        pos_label = 1 if pair.kind == "int" else (classes[-1] if len(classes) else None)
    elif (isinstance(pos_label, str) != (pair.kind == "str")) or (len(classes) == 2 and pos_label not in shown):
        msg = f"pos_label={pos_label!r} is not a valid label. It should be one of {shown}"
        raise LabelError(msg)
    return np.ascontiguousarray(values == pos_label)


def _same_length(a_name: str, a: np.ndarray, b_name: str, b: np.ndarray) -> None:
    if a.shape[0] != b.shape[0]:
        msg = f"{a_name} has {a.shape[0]} rows but {b_name} has {b.shape[0]}; pass arrays of the same length"
        raise LengthMismatchError(msg)


def _weights(sample_weight: Any, n: int) -> npt.NDArray[np.float64] | None:
    return _checks.weights(sample_weight, n)


def _walk(positive: np.ndarray, score: np.ndarray, sample_weight: Any, backend: Backend, *,
          curves: bool = True) -> BinaryRanking:
    """The tie-grouped walk of the selected backend (``curves=False``: pair counts only)."""
    w = _weights(sample_weight, positive.shape[0])  # the kernels check the other lengths
    return resolve_backend(backend).binary_ranking(positive, score, w, curves, get_num_threads())


def _undefined(what: str) -> float:
    warnings.warn(what, UndefinedMetricWarning, stacklevel=3)
    return float("nan")


def _no_pairs(d: BinaryRanking) -> bool:
    """No (positive, negative) pair to rank: one side empty, or of zero weight."""
    return bool(d.n_pos == 0 or d.n_neg == 0 or math.isnan(d.reversed_share))


def _refinement_value(d: BinaryRanking, ties: str, weighted: bool) -> float:
    if ties not in ("half", "strict", "harsh"):
        msg = f"ties={ties!r} is not one of 'half', 'strict', 'harsh'"
        raise ValidationError(msg)
    if _no_pairs(d):
        return _undefined("refinement is undefined when all predictions are correct or all are wrong "
                          "(c(n - c) = 0); returning NaN")
    if not weighted:  # exact integer arithmetic, one rounding
        r, t, pairs = d.reversed, d.tied, d.n_pos * d.n_neg
        value = {"strict": Fraction(pairs - r, pairs), "half": Fraction(2 * (pairs - r) - t, 2 * pairs),
                 "harsh": Fraction(pairs - r - t, pairs)}[ties]
        return float(value)
    # The weighted shares are summed separately: each is in [0, 1]; the clamp only absorbs
    # the last ulp of a sum of two of them.
    rev, tied = d.reversed_share, d.tied_share
    value = {"strict": 1.0 - rev, "half": 1.0 - rev - tied / 2, "harsh": 1.0 - rev - tied}[ties]
    return min(1.0, max(0.0, value))


def _reversed_weight(d: BinaryRanking) -> float:
    """The summed weight ``w_i w_j`` of the reversed pairs (absolute units: it may leave float64)."""
    share = d.reversed_share
    value = share * d.w_pos * d.w_neg
    if not math.isfinite(value) or (share > 0 and value < sys.float_info.min):
        msg = ("the weighted count of reversed pairs is beyond the float64 range; divide every sample_weight by the "
               "same constant (normalised metrics such as reversed_pair_proportion do not change)")
        raise WeightError(msg)
    return float(value)


def _rpp(d: BinaryRanking, weighted: bool) -> float:
    """Reversed pairs over all ordered pairs of samples, ``L / n^2`` (weights: over ``(sum w)^2``)."""
    if not weighted:
        n = d.n_pos + d.n_neg
        return float(Fraction(d.reversed, n * n))
    if _no_pairs(d):
        return 0.0
    total = d.w_pos + d.w_neg
    return float(d.reversed_share * (d.w_pos / total) * (d.w_neg / total))


def roc_auc_score(y_true: Any, y_score: Any, *, sample_weight: Any = None, pos_label: Any = None,
                  backend: Backend = "auto") -> float:
    """Binary ROC AUC (docs/definitions.md §7.5): the weighted Mann-Whitney statistic, ties counting 1/2.

    NaN with ``UndefinedMetricWarning`` when ``y_true`` has one class (as scikit-learn 1.9).

    >>> roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    d = _walk(_binary(y_true, pos_label), _scores(y_score, "y_score"), sample_weight, backend, curves=False)
    if _no_pairs(d):
        return _undefined("Only one class is present in y_true. ROC AUC score is not defined in that case.")
    return _refinement_value(d, "half", sample_weight is not None)


def average_precision_score(y_true: Any, y_score: Any, *, sample_weight: Any = None, pos_label: Any = None,
                            backend: Backend = "auto") -> float:
    """Average precision (docs/definitions.md §7.4): ``sum_k (R_k - R_{k-1}) P_k`` over distinct thresholds, as scikit-learn.

    No positives: 0.0 with ``UndefinedMetricWarning`` (decision O10, docs/definitions.md §9).

    >>> round(average_precision_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), 4)
    0.8333
    """
    d = _walk(_binary(y_true, pos_label), _scores(y_score, "y_score"), sample_weight, backend)
    if d.w_pos == 0:
        warnings.warn("No positive class found in y_true, recall is set to one for all thresholds; "
                      "average precision is 0.0", UndefinedMetricWarning, stacklevel=2)
        return 0.0
    return float(d.average_precision)


def aupr_trapezoid(y_true: Any, y_score: Any, *, sample_weight: Any = None, pos_label: Any = None,
                   backend: Backend = "auto") -> float:
    """Trapezoidal area under the precision-recall curve, from (recall 0, precision 1) to the
    first point of full recall (``auc(recall, precision)`` over scikit-learn's curve): the "AUPR"
    of Gu and Hopkins (2023) and their package spred (docs/definitions.md §5.4). A compatibility function; :func:`average_precision_score` is the primary AP.
    """
    d = _walk(_binary(y_true, pos_label), _scores(y_score, "y_score"), sample_weight, backend)
    if d.w_pos == 0:
        return _undefined("aupr_trapezoid is undefined without positive samples; returning NaN")
    return float(d.aupr_trapezoid)


def refinement(correct: Any, confidence: Any, *, ties: Ties = "half", sample_weight: Any = None,
               backend: Backend = "auto") -> float:
    """Refinement of a confidence function (Gu and Hopkins 2023, docs/definitions.md §5.1): the share of (correct, wrong)
    pairs that the confidence orders correctly.

    ``ties="half"`` (default) counts a tied pair as 1/2 and equals the AUROC of confidence for
    correctness; ``"strict"`` is the paper's ``1 - tau / (c (n - c))`` (ties count as ordered);
    ``"harsh"`` is spred's (ties count as reversed). NaN with ``UndefinedMetricWarning`` when
    all predictions are correct or all are wrong.

    >>> refinement([1, 0, 1, 0, 0, 0, 1, 1, 1, 1], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    0.7083333333333334
    """
    d = _walk(_binary(correct, None, "correct"), _scores(confidence, "confidence"), sample_weight, backend, curves=False)
    return _refinement_value(d, ties, sample_weight is not None)


def reversed_pair_proportion(correct: Any, confidence: Any, *, sample_weight: Any = None,
                             backend: Backend = "auto") -> float:
    """Reversed Pair Proportion (Xin et al. 2021, Gu and Hopkins 2023): ``L / n^2``, L = (correct, wrong)
    pairs with the correct one strictly less confident; weighted: ``sum w_i w_j / (sum w)^2``.
    0 when all predictions are correct or all wrong. Range [0, 1/4].

    >>> reversed_pair_proportion([1, 0, 1, 0, 0, 0, 1, 1, 1, 1], [i / 10 for i in range(1, 11)])
    0.07
    """
    d = _walk(_binary(correct, None, "correct"), _scores(confidence, "confidence"), sample_weight, backend, curves=False)
    return _rpp(d, sample_weight is not None)


def kendall_tau_distance(correct: Any, confidence: Any, *, sample_weight: Any = None,
                         backend: Backend = "auto") -> float:
    """The Kendall-tau distance of Gu and Hopkins (2023): the number of (correct, wrong) pairs with the correct
    prediction strictly less confident (a weight sum with ``sample_weight``). NaN with
    ``UndefinedMetricWarning`` when all predictions are correct or all wrong.

    >>> kendall_tau_distance([1, 0, 1, 0, 0, 0, 1, 1, 1, 1], [i / 10 for i in range(1, 11)])
    7.0
    """
    d = _walk(_binary(correct, None, "correct"), _scores(confidence, "confidence"), sample_weight, backend, curves=False)
    if _no_pairs(d):
        return _undefined("kendall_tau_distance is undefined when all predictions are correct or all are wrong")
    return float(d.reversed) if sample_weight is None else _reversed_weight(d)


def aurc(correct: Any, confidence: Any, *, sample_weight: Any = None, backend: Backend = "auto") -> float:
    """Area under the risk-coverage curve (selective prediction): predictions are accepted from
    the most confident down, tied confidences together; ``AURC = sum_k (cov_k - cov_{k-1}) risk_k``
    with risk = weighted error rate among the accepted. Lower is better; 0 for a perfect ranking
    with no errors accepted before the last correct one.

    >>> round(aurc([1, 1, 0, 1], [0.9, 0.8, 0.7, 0.6]), 4)
    0.1458
    """
    d = _walk(_binary(correct, None, "correct"), _scores(confidence, "confidence"), sample_weight, backend)
    return float(d.aurc)


def risk_coverage_curve(correct: Any, confidence: Any, *, sample_weight: Any = None
                        ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """``(coverage, risk, thresholds)``, one point per distinct confidence from the highest down:
    coverage = accepted weight / total weight, risk = error weight / accepted weight when
    everything with confidence >= threshold is accepted. O(n) memory (the curve itself).

    >>> cov, risk, thr = risk_coverage_curve([1, 1, 0, 1], [0.9, 0.8, 0.7, 0.6])
    >>> cov.tolist(), risk.tolist()
    ([0.25, 0.5, 0.75, 1.0], [0.0, 0.0, 0.3333333333333333, 0.25])
    """
    ok = _binary(correct, None, "correct")
    conf = _scores(confidence, "confidence")
    _same_length("correct", ok, "confidence", conf)
    check_finite("confidence", conf)
    w = _weights(sample_weight, ok.shape[0])
    if w is not None:
        check_weights(w, ok.shape[0])
        with np.errstate(over="ignore"):
            check_totals(float(np.sum(w)), 0.0, ok.shape[0])
    w = np.ones(ok.shape[0]) if w is None else w
    keys = order_keys(conf)
    order = np.argsort(keys, kind="stable")[::-1]
    c, o, ww = keys[order], ok[order], w[order]
    starts = tie_runs(c)
    accepted = np.cumsum(np.add.reduceat(ww, starts)) if len(c) else np.zeros(0)
    errors = np.cumsum(np.add.reduceat(np.where(o, 0.0, ww), starts)) if len(c) else np.zeros(0)
    total = accepted[-1] if len(accepted) else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        coverage = accepted / total
        risk = errors / accepted  # NaN only where nothing of weight is accepted yet
    return coverage, risk, c[starts].astype(np.float64)


def kendall_tau(x: Any, y: Any, *, variant: Literal["b", "c"] = "b", backend: Backend = "auto") -> float:
    """Kendall's tau-b (default) or tau-c between two real vectors, with ties (docs/definitions.md §5.3).

    Equals ``scipy.stats.kendalltau(x, y, variant=...).statistic``. Integers are ordered as
    integers (int64 and uint64 values at any magnitude), ``-inf`` and ``inf`` as the smallest and
    largest values, as scipy orders them; NaN raises ``NonFiniteError``. The compiled core counts
    the pairs exactly by Knight's O(n log n) sort, or, when both vectors have at most 65,536
    distinct values (rounded scores, grades, quantised confidences), by a faster O(n + D_x D_y)
    sweep over the table of their ranks; both give the same counts. A constant vector, or a
    single sample, gives NaN with an ``UndefinedMetricWarning`` (scipy's value); empty input
    raises ``ShapeError``.

    >>> kendall_tau([1, 2, 3, 4, 5], [3, 1, 2, 5, 4])
    0.4
    >>> kendall_tau([2**62, 2**62 + 1, 2**62 + 2], [3, 2, 1])
    -1.0
    """
    if variant not in ("b", "c"):
        msg = f"variant={variant!r} is not one of 'b', 'c'"
        raise ValidationError(msg)
    xs, ys = _scores(x, "x"), _scores(y, "y")  # the kernels check lengths and NaN
    d = resolve_backend(backend).kendall_counts(xs, ys, get_num_threads())
    value = float(d.tau_b if variant == "b" else d.tau_c)
    if math.isnan(value):
        return _undefined("Kendall's tau is undefined for a constant vector or fewer than 2 samples; returning NaN")
    return value


@dataclass(frozen=True)
class SelectiveScores:
    """How well a confidence function separates correct from wrong predictions."""

    refinement: float
    auroc: float
    reversed_pair_proportion: float
    kendall_tau_distance: float
    aurc: float
    aupr: float
    average_precision: float
    accuracy: float


def correctness(y_true: Any, *, y_pred: Any = None, y_proba: Any = None, confidence: Any = None,
                labels: Any = None, backend: Backend = "auto") -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.float64]]:
    """``(correct, confidence)`` from ``(y_true, y_proba)`` (confidence = top probability,
    prediction = its column, ties to the lowest) or from ``(y_true, y_pred, confidence)``."""
    if y_proba is not None:
        from cmetrics import _proba as _p

        if y_pred is not None or confidence is not None:
            raise ValidationError("pass y_proba, or y_pred with confidence, not both")
        # The validated probability pass keeps each row's top-label confidence and correctness.
        inp = _p.prob_inputs(y_true, y_proba, labels=labels, backend=backend)
        acc = _p.accumulate(inp, backend=backend, n_bins=0, entropy=False, scores=False, keep_confidence=True)
        return np.ascontiguousarray(acc.correct, dtype=bool), np.ascontiguousarray(acc.confidence, dtype=np.float64)
    if y_pred is None or confidence is None:
        raise ValidationError("pass y_proba, or both y_pred and confidence")
    yt = _checks.as_1d(y_true, "y_true")
    yp = _checks.as_1d(y_pred, "y_pred")
    _same_length("y_true", yt, "y_pred", yp)
    conf = _scores(confidence, "confidence")
    if conf.ndim != 1:
        raise ShapeError("confidence must be 1-D")
    return np.ascontiguousarray(yt == yp), conf


def selective_prediction_scores(y_true: Any, *, y_pred: Any = None, y_proba: Any = None, confidence: Any = None,
                                labels: Any = None, sample_weight: Any = None, ties: Ties = "half",
                                backend: Backend = "auto") -> SelectiveScores:
    """Every selective-prediction metric from one sort, from ``(y_true, y_proba)`` or
    ``(y_true, y_pred, confidence)``.

    >>> s = selective_prediction_scores([0, 1, 1], y_proba=[[0.7, 0.3], [0.4, 0.6], [0.6, 0.4]])
    >>> s.refinement, s.accuracy  # the wrong prediction ties a right one at 0.6: half a pair lost
    (0.75, 0.6666666666666666)
    """
    ok, conf = correctness(y_true, y_pred=y_pred, y_proba=y_proba, confidence=confidence, labels=labels,
                           backend=backend)
    return selective_from_walk(_walk(ok, conf, sample_weight, backend), ties, sample_weight is not None)


def selective_from_walk(d: BinaryRanking, ties: str, weighted: bool) -> SelectiveScores:
    """:class:`SelectiveScores` from a ranking walk (shared with ``evaluate``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        ref = _refinement_value(d, ties, weighted)
        auroc = _refinement_value(d, "half", weighted)
    total = d.w_pos + d.w_neg
    undefined = _no_pairs(d)
    if undefined:
        warnings.warn("refinement, AUROC and the Kendall-tau distance are undefined when all predictions are "
                      "correct or all are wrong; they are NaN", UndefinedMetricWarning, stacklevel=3)
    if undefined:
        distance = float("nan")
    else:
        distance = float(d.reversed) if not weighted else _reversed_weight(d)
    return SelectiveScores(
        refinement=ref, auroc=auroc, reversed_pair_proportion=_rpp(d, weighted),
        kendall_tau_distance=distance,
        aurc=float(d.aurc), aupr=float(d.aupr_trapezoid),
        average_precision=float(d.average_precision) if d.w_pos > 0 else 0.0,
        accuracy=float(d.w_pos / total),
    )

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
import warnings
from fractions import Fraction
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from cmetrics import _convert
from cmetrics._config import Backend, get_num_threads, resolve_backend
from cmetrics._numpy.ranking import check_finite, tie_runs
from cmetrics.exceptions import (
    LengthMismatchError,
    NonFiniteError,
    ShapeError,
    UndefinedMetricWarning,
    UnsupportedDtypeError,
    ValidationError,
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


def _scores(x: Any, name: str) -> npt.NDArray[np.float64]:
    a = _convert.as_1d(x, name)
    if a.dtype.kind not in "biuf":
        msg = f"{name} has dtype {a.dtype}; pass real numbers"
        raise UnsupportedDtypeError(msg)
    return np.ascontiguousarray(a, dtype=np.float64)


def _binary(y_true: Any, pos_label: Any, name: str = "y_true") -> npt.NDArray[np.bool_]:
    a = _convert.as_1d(y_true, name)
    if a.dtype == np.bool_:
        return np.ascontiguousarray(a) if pos_label in (None, True) else ~a
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        raise NonFiniteError(f"{name} has NaN or infinite values; pass labels")
    classes = np.unique(a)
    if pos_label is None:
        if len(classes) > 2:
            msg = f"{name} has {len(classes)} classes; these metrics are binary (pass a bool array or pos_label=)"
            raise ValidationError(msg)
        if a.dtype.kind in "iuf" and not set(classes.tolist()) <= {0, 1} and not set(classes.tolist()) <= {-1, 1}:
            msg = f"{name} has labels {classes.tolist()}; pass pos_label= to say which one is positive"
            raise ValidationError(msg)
        pos_label = 1 if a.dtype.kind in "iuf" else (classes[-1] if len(classes) else None)
    return np.ascontiguousarray(a == pos_label)


def _same_length(a_name: str, a: np.ndarray, b_name: str, b: np.ndarray) -> None:
    if a.shape[0] != b.shape[0]:
        msg = f"{a_name} has {a.shape[0]} rows but {b_name} has {b.shape[0]}; pass arrays of the same length"
        raise LengthMismatchError(msg)


def _weights(sample_weight: Any, n: int) -> npt.NDArray[np.float64] | None:
    return _convert.weights(sample_weight, n)


def _walk(positive: np.ndarray, score: np.ndarray, sample_weight: Any, backend: Backend, *,
          curves: bool = True) -> dict[str, Any]:
    """The tie-grouped walk of the selected backend (``curves=False``: pair counts only)."""
    w = _weights(sample_weight, positive.shape[0])  # the kernels check the other lengths
    return resolve_backend(backend).binary_ranking(positive, score, w, curves, get_num_threads())


def _undefined(what: str) -> float:
    warnings.warn(what, UndefinedMetricWarning, stacklevel=3)
    return float("nan")


def _pairs(d: dict[str, Any], weighted: bool) -> tuple[float, float, float, float]:
    """(reversed, tied, ordered, all pairs), exact without weights."""
    if not weighted:
        return float(d["reversed"]), float(d["tied"]), float(d["ordered"]), float(d["n_pos"] * d["n_neg"])
    total = d["w_pos"] * d["w_neg"]
    return d["w_reversed"], d["w_tied"], total - d["w_reversed"] - d["w_tied"], total


def _refinement_value(d: dict[str, Any], ties: str, weighted: bool) -> float:
    if ties not in ("half", "strict", "harsh"):
        msg = f"ties={ties!r} is not one of 'half', 'strict', 'harsh'"
        raise ValidationError(msg)
    rev, tied, _, total = _pairs(d, weighted)
    if d["n_pos"] == 0 or d["n_neg"] == 0 or total == 0:
        return _undefined("refinement is undefined when all predictions are correct or all are wrong "
                          "(c(n - c) = 0); returning NaN")
    if not weighted:  # exact integer arithmetic, one rounding
        r, t, pairs = d["reversed"], d["tied"], d["n_pos"] * d["n_neg"]
        value = {"strict": Fraction(pairs - r, pairs), "half": Fraction(2 * (pairs - r) - t, 2 * pairs),
                 "harsh": Fraction(pairs - r - t, pairs)}[ties]
        return float(value)
    lost = {"strict": rev, "half": rev + tied / 2, "harsh": rev + tied}[ties]
    return 1.0 - lost / total


def roc_auc_score(y_true: Any, y_score: Any, *, sample_weight: Any = None, pos_label: Any = None,
                  backend: Backend = "auto") -> float:
    """Binary ROC AUC (docs/definitions.md §7.5): the weighted Mann-Whitney statistic, ties counting 1/2.

    NaN with ``UndefinedMetricWarning`` when ``y_true`` has one class (as scikit-learn 1.9).

    >>> roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    d = _walk(_binary(y_true, pos_label), _scores(y_score, "y_score"), sample_weight, backend, curves=False)
    if d["n_pos"] == 0 or d["n_neg"] == 0:
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
    if d["w_pos"] == 0:
        warnings.warn("No positive class found in y_true, recall is set to one for all thresholds; "
                      "average precision is 0.0", UndefinedMetricWarning, stacklevel=2)
        return 0.0
    return float(d["average_precision"])


def aupr_trapezoid(y_true: Any, y_score: Any, *, sample_weight: Any = None, pos_label: Any = None,
                   backend: Backend = "auto") -> float:
    """Trapezoidal area under the precision-recall curve, from (recall 0, precision 1) to the
    first point of full recall (``auc(recall, precision)`` over scikit-learn's curve): the "AUPR"
    of Gu and Hopkins (2023) and their package spred (docs/definitions.md §5.4). A compatibility function; :func:`average_precision_score` is the primary AP.
    """
    d = _walk(_binary(y_true, pos_label), _scores(y_score, "y_score"), sample_weight, backend)
    if d["w_pos"] == 0:
        return _undefined("aupr_trapezoid is undefined without positive samples; returning NaN")
    return float(d["aupr_trapezoid"])


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
    if sample_weight is None:
        n = d["n_pos"] + d["n_neg"]
        return float(Fraction(d["reversed"], n * n))
    total = d["w_pos"] + d["w_neg"]
    if total == 0:
        return _undefined("sample_weight sums to 0; RPP is undefined")
    return float(d["w_reversed"] / (total * total))


def kendall_tau_distance(correct: Any, confidence: Any, *, sample_weight: Any = None,
                         backend: Backend = "auto") -> float:
    """The Kendall-tau distance of Gu and Hopkins (2023): the number of (correct, wrong) pairs with the correct
    prediction strictly less confident (a weight sum with ``sample_weight``). NaN with
    ``UndefinedMetricWarning`` when all predictions are correct or all wrong.

    >>> kendall_tau_distance([1, 0, 1, 0, 0, 0, 1, 1, 1, 1], [i / 10 for i in range(1, 11)])
    7.0
    """
    d = _walk(_binary(correct, None, "correct"), _scores(confidence, "confidence"), sample_weight, backend, curves=False)
    if d["n_pos"] == 0 or d["n_neg"] == 0:
        return _undefined("kendall_tau_distance is undefined when all predictions are correct or all are wrong")
    return float(d["reversed"]) if sample_weight is None else float(d["w_reversed"])


def aurc(correct: Any, confidence: Any, *, sample_weight: Any = None, backend: Backend = "auto") -> float:
    """Area under the risk-coverage curve (selective prediction): predictions are accepted from
    the most confident down, tied confidences together; ``AURC = sum_k (cov_k - cov_{k-1}) risk_k``
    with risk = weighted error rate among the accepted. Lower is better; 0 for a perfect ranking
    with no errors accepted before the last correct one.

    >>> round(aurc([1, 1, 0, 1], [0.9, 0.8, 0.7, 0.6]), 4)
    0.1458
    """
    d = _walk(_binary(correct, None, "correct"), _scores(confidence, "confidence"), sample_weight, backend)
    return float(d["aurc"])


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
    w = np.ones(ok.shape[0]) if w is None else w
    order = np.argsort(-(conf + 0.0), kind="stable")
    c, o, ww = conf[order] + 0.0, ok[order], w[order]
    starts = tie_runs(c)
    accepted = np.cumsum(np.add.reduceat(ww, starts)) if len(c) else np.zeros(0)
    errors = np.cumsum(np.add.reduceat(np.where(o, 0.0, ww), starts)) if len(c) else np.zeros(0)
    total = accepted[-1] if len(accepted) else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        coverage = accepted / total
        risk = errors / accepted
    return coverage, risk, c[starts]


def kendall_tau(x: Any, y: Any, *, variant: Literal["b", "c"] = "b", backend: Backend = "auto") -> float:
    """Kendall's tau-b (default) or tau-c between two real vectors, with ties (docs/definitions.md §5.3). Equals
    ``scipy.stats.kendalltau(x, y, variant=...).statistic``. The compiled core counts the pairs
    exactly by Knight's O(n log n) sort, or, when both vectors have at most 65,536 distinct
    values (rounded scores, grades, quantised confidences), by a faster O(n + D_x D_y) sweep
    over the table of their ranks; both give the same counts.
    NaN (with ``UndefinedMetricWarning``) when x or y is constant or n < 2; NaN input raises.

    >>> kendall_tau([1, 2, 3, 4, 5], [3, 1, 2, 5, 4])
    0.4
    """
    if variant not in ("b", "c"):
        msg = f"variant={variant!r} is not one of 'b', 'c'"
        raise ValidationError(msg)
    xs, ys = _scores(x, "x"), _scores(y, "y")  # the kernels check lengths and finiteness
    d = resolve_backend(backend).kendall_counts(xs, ys, get_num_threads())
    value = float(d["tau_b"] if variant == "b" else d["tau_c"])
    if math.isnan(value):
        return _undefined("Kendall's tau is undefined for a constant vector or fewer than 2 samples; returning NaN")
    if variant == "b":  # exact numerator, one division (as scipy's formula)
        n0 = d["n"] * (d["n"] - 1) // 2
        num = n0 + d["joint_ties"] - d["x_ties"] - d["y_ties"] - 2 * d["discordant"]
        value = num / (math.sqrt(n0 - d["x_ties"]) * math.sqrt(n0 - d["y_ties"]))
    return min(1.0, max(-1.0, value))


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
        from cmetrics import _probabilistic as _p

        if y_pred is not None or confidence is not None:
            raise ValidationError("pass y_proba, or y_pred with confidence, not both")
        # The validated probability pass keeps each row's top-label confidence and correctness.
        inp = _p.prob_inputs(y_true, y_proba, labels=labels, backend=backend)
        acc = _p.accumulate(inp, backend=backend, n_bins=0, entropy=False, scores=False, keep_confidence=True)
        return np.ascontiguousarray(acc["correct"], dtype=bool), np.ascontiguousarray(acc["confidence"], dtype=np.float64)
    if y_pred is None or confidence is None:
        raise ValidationError("pass y_proba, or both y_pred and confidence")
    yt = _convert.as_1d(y_true, "y_true")
    yp = _convert.as_1d(y_pred, "y_pred")
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
    >>> s.refinement, s.accuracy
    (1.0, 0.6666666666666666)
    """
    ok, conf = correctness(y_true, y_pred=y_pred, y_proba=y_proba, confidence=confidence, labels=labels,
                           backend=backend)
    return selective_from_walk(_walk(ok, conf, sample_weight, backend), ties, sample_weight is not None)


def selective_from_walk(d: dict[str, Any], ties: str, weighted: bool) -> SelectiveScores:
    """:class:`SelectiveScores` from a ranking walk (shared with ``evaluate``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        ref = _refinement_value(d, ties, weighted)
        auroc = _refinement_value(d, "half", weighted)
    total = d["w_pos"] + d["w_neg"]
    n = d["n_pos"] + d["n_neg"]
    undefined = d["n_pos"] == 0 or d["n_neg"] == 0
    if undefined:
        warnings.warn("refinement, AUROC and the Kendall-tau distance are undefined when all predictions are "
                      "correct or all are wrong; they are NaN", UndefinedMetricWarning, stacklevel=3)
    rpp = (d["reversed"] / (n * n)) if not weighted else (d["w_reversed"] / (total * total) if total else float("nan"))
    return SelectiveScores(
        refinement=ref, auroc=auroc, reversed_pair_proportion=float(rpp),
        kendall_tau_distance=float("nan") if undefined else float(d["reversed"] if not weighted else d["w_reversed"]),
        aurc=float(d["aurc"]), aupr=float(d["aupr_trapezoid"]),
        average_precision=float(d["average_precision"]) if d["w_pos"] > 0 else 0.0,
        accuracy=float(d["w_pos"] / total) if total else float("nan"),
    )

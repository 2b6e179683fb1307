"""Ranking derivations (docs/definitions.md §5, §7.4, §7.5): every ranking metric is a value
of one tie-grouped walk (:class:`cmetrics._kernels.BinaryRanking`), computed here once for
the functions of :mod:`cmetrics.ranking`, :func:`cmetrics.evaluate` and the Evaluator."""

from __future__ import annotations

import math
import sys
import warnings
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._backend import resolve_backend
from cmetrics._base import validation, value_checks
from cmetrics._base.aliases import F64, Backend, Bools, Ties
from cmetrics._base.config import get_num_threads
from cmetrics._base.undefined import undefined
from cmetrics._derive import probability_pass
from cmetrics._kernels import BinaryRanking, CurveDrop, CurveTerms, ThresholdCounts
from cmetrics.exceptions import LengthMismatchError, ShapeError, UndefinedMetricWarning, ValidationError, WeightError


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


def walk(
    positive: Bools,
    score: np.ndarray,
    sample_weight: ArrayLike | None,
    backend: Backend,
    *,
    curves: CurveTerms = True,
) -> BinaryRanking:
    """The tie-grouped walk of the selected backend (``curves=False``: pair counts only;
    ``"precision"``: the average precision, the other curve terms NaN)."""
    w = validation.weights(sample_weight, positive.shape[0])  # the kernels check the other lengths
    return resolve_backend(backend).binary_ranking(positive, score, w, curves, get_num_threads())


def binned_walk(
    correct: Bools, confidence: np.ndarray, weight: F64 | None, backend: Backend, bins: int | None
) -> BinaryRanking:
    """The walk of the confidence against correctness: one sort, or, with ``bins``, a
    histogram of the confidences in [0, 1] first (the approximate mode, as the Evaluator's)."""
    if bins is None:
        return walk(correct, confidence, weight, backend)
    state = resolve_backend(backend).GroupState(weight is not None)
    state.add(correct, np.ascontiguousarray(confidence, dtype=np.float64), weight, bins, get_num_threads())
    return state.walk(True, get_num_threads())


def no_pairs(d: BinaryRanking) -> bool:
    """No (positive, negative) pair to rank: one side empty, or of zero weight."""
    return bool(d.n_pos == 0 or d.n_neg == 0 or math.isnan(d.reversed_share))


def refinement(d: BinaryRanking, ties: Ties, weighted: bool) -> float:
    """Refinement (docs/definitions.md §5.1): exact integer arithmetic and one rounding
    without weights; the kernel's weighted shares otherwise."""
    ties = validation.check_ties(ties)
    if no_pairs(d):
        return undefined(
            "refinement is undefined when all predictions are correct or all are wrong (c(n - c) = 0); returning NaN"
        )
    if not weighted:
        r, t, pairs = d.reversed, d.tied, d.n_pos * d.n_neg
        exact = {
            "strict": Fraction(pairs - r, pairs),
            "half": Fraction(2 * (pairs - r) - t, 2 * pairs),
            "harsh": Fraction(pairs - r - t, pairs),
        }[ties]
        return float(exact)
    # Each weighted share is in [0, 1]; the clamp only absorbs the last ulp of a sum of two.
    rev, tied = d.reversed_share, d.tied_share
    value = {"strict": 1.0 - rev, "half": 1.0 - rev - tied / 2, "harsh": 1.0 - rev - tied}[ties]
    return min(1.0, max(0.0, value))


def reversed_weight(d: BinaryRanking) -> float:
    """The summed weight ``w_i w_j`` of the reversed pairs (absolute units: it may leave float64)."""
    value = d.reversed_share * d.w_pos * d.w_neg
    if not math.isfinite(value) or (d.reversed_share > 0 and value < sys.float_info.min):
        msg = (
            "the weighted count of reversed pairs is beyond the float64 range; divide every sample_weight by the "
            "same constant (normalised metrics such as reversed_pair_proportion do not change)"
        )
        raise WeightError(msg)
    return float(value)


def kendall_tau_distance(d: BinaryRanking, weighted: bool) -> float:
    """Reversed (correct, wrong) pairs: an exact count, or their summed weight."""
    if no_pairs(d):
        return undefined("kendall_tau_distance is undefined when all predictions are correct or all are wrong")
    return float(d.reversed) if not weighted else reversed_weight(d)


def reversed_pair_proportion(d: BinaryRanking, weighted: bool) -> float:
    """Reversed pairs over all ordered pairs of samples, ``L / n^2`` as one exact fraction
    rounded once; with weights ``share * (w_pos / W) * (w_neg / W)`` from the kernel's
    scaled share. The one place RPP is computed."""
    if not weighted:
        n = d.n_pos + d.n_neg
        return float(Fraction(d.reversed, n * n))
    if no_pairs(d):
        return 0.0
    total = d.w_pos + d.w_neg
    return float(d.reversed_share * (d.w_pos / total) * (d.w_neg / total))


def selective_scores(d: BinaryRanking, ties: Ties, weighted: bool) -> SelectiveScores:
    """Every selective-prediction metric of one walk (one warning when pairs are missing)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        ref = refinement(d, ties, weighted)
        auroc = refinement(d, "half", weighted)
        distance = kendall_tau_distance(d, weighted)
    if no_pairs(d):
        undefined(
            "refinement, AUROC and the Kendall-tau distance are undefined when all predictions are "
            "correct or all are wrong; they are NaN"
        )
    return SelectiveScores(
        refinement=ref,
        auroc=auroc,
        reversed_pair_proportion=reversed_pair_proportion(d, weighted),
        kendall_tau_distance=distance,
        aurc=float(d.aurc),
        aupr=float(d.aupr_trapezoid),
        average_precision=float(d.average_precision) if d.w_pos > 0 else 0.0,
        accuracy=float(d.w_pos / (d.w_pos + d.w_neg)),
    )


def correctness(
    y_true: ArrayLike,
    y_pred: ArrayLike | None,
    y_proba: ArrayLike | None,
    confidence: ArrayLike | None,
    labels: ArrayLike | None,
    backend: Backend,
) -> tuple[Bools, np.ndarray]:
    """``(correct, confidence)`` of :func:`cmetrics.correctness`."""
    if y_proba is not None:
        if y_pred is not None or confidence is not None:
            raise ValidationError("pass y_proba, or y_pred with confidence, not both")
        # The validated probability pass keeps each row's top-label confidence and correctness.
        inp = probability_pass.prob_inputs(y_true, y_proba, labels=labels, backend=backend)
        acc = probability_pass.accumulate(
            inp, backend=backend, n_bins=0, entropy=False, scores=False, keep_confidence=True
        )
        assert acc.correct is not None and acc.confidence is not None  # keep_confidence=True
        return acc.correct, acc.confidence
    if y_pred is None or confidence is None:
        raise ValidationError("pass y_proba, or both y_pred and confidence")
    yt = validation.as_1d(y_true, "y_true")
    yp = validation.as_1d(y_pred, "y_pred")
    validation.same_length("y_true", yt, "y_pred", yp)
    conf = validation.scores(confidence, "confidence")
    if conf.ndim != 1:
        raise ShapeError("confidence must be 1-D")
    return np.ascontiguousarray(yt == yp), conf


def user_confidence(y_true: ArrayLike, y_pred: ArrayLike, confidence: ArrayLike) -> tuple[Bools, np.ndarray]:
    """``(correct, confidence)`` of hard predictions with a caller's confidence, checked:
    one finite confidence per row (shared by ``evaluate`` and the Evaluator)."""
    ok, conf = correctness(y_true, y_pred, None, confidence, None, "auto")
    if conf.shape[0] != ok.shape[0]:
        msg = f"confidence has {conf.shape[0]} rows but y_true has {ok.shape[0]}; pass one confidence per row"
        raise LengthMismatchError(msg)
    value_checks.check_finite("confidence", conf)
    return ok, conf


def threshold_counts(
    positive: Bools, score: np.ndarray, sample_weight: ArrayLike | None, backend: Backend, drop: CurveDrop = "none"
) -> ThresholdCounts:
    """The counts at each distinct score, cumulated from the top, from the highest score down
    (views of :func:`rising_threshold_counts`' arrays read backwards)."""
    c = rising_threshold_counts(positive, score, sample_weight, backend, drop)
    return ThresholdCounts(c.fps[::-1], c.tps[::-1], c.thresholds[::-1])


def rising_threshold_counts(
    positive: Bools, score: np.ndarray, sample_weight: ArrayLike | None, backend: Backend, drop: CurveDrop = "none"
) -> ThresholdCounts:
    """The counts at or above each distinct score, from the lowest score up (the selected
    backend's kernel, points dropped by ``drop``). Rows of weight 0 are left out first (as
    scikit-learn), so they add no threshold. Thresholds keep the score's dtype (float32 stays
    float32; integers beyond 2^53 are reported as their nearest float64)."""
    w = validation.weights(sample_weight, positive.shape[0])
    validation.same_length("y_true", positive, "y_score", score)
    if w is not None:
        value_checks.check_weights(w, positive.shape[0])
        keep = w != 0
        if not keep.all():
            positive, score, w = positive[keep], np.ascontiguousarray(score[keep]), w[keep]
    if score.shape[0] == 0:
        value_checks.check_totals(0.0, 0.0, 1)  # every weight was 0
    c = resolve_backend(backend).threshold_counts(positive, score, w, drop, get_num_threads())
    values = c.thresholds
    if (score.dtype.kind == "f" and score.dtype != values.dtype) or (
        score.dtype.kind in "iu" and np.all(np.abs(values) < 2.0**53)
    ):
        values = values.astype(score.dtype)
    return ThresholdCounts(c.fps, c.tps, values)

"""DeLong's variance of the AUROC and the paired test of two AUROCs (DeLong, DeLong and
Clarke-Pearson, "Comparing the areas under two or more correlated receiver operating
characteristic curves: a nonparametric approach", Biometrics 1988; docs/definitions.md §11.5).

A positive row's placement is the share of negatives scored below it (ties count half); a
negative's, the share of positives scored above it. One model's variance needs only the sums of
the squared placements, which the AUROC's tie-grouped walk carries; the paired test needs every
row's placement in both models: one kernel sorts each model's scores once (the two side by side),
places every row and sums the centred products of the two placements class by class.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._backend import resolve_backend
from cmetrics._base import validation
from cmetrics._base.aliases import Backend, Bools, Label
from cmetrics._base.config import get_num_threads
from cmetrics._kernels import BinaryRanking
from cmetrics._results.intervals import DeLongResult, DeLongTest
from cmetrics.exceptions import LabelError, LengthMismatchError
from cmetrics.uncertainty.intervals import check_level, z_of


def _one_class(positive: Bools) -> None:
    n_pos = int(np.count_nonzero(positive))
    if n_pos == 0 or n_pos == positive.size:
        msg = (
            "y_true holds one class only: the AUROC and its DeLong variance need positive and negative rows; "
            "pass rows of both classes"
        )
        raise LabelError(msg)


def _auc(d: BinaryRanking) -> float:
    """The AUROC of a walk from its exact pair counts, rounded once."""
    return (2 * d.ordered + d.tied) / (2 * d.n_pos * d.n_neg)


def _binary(y_true: ArrayLike, pos_label: Label | None) -> Bools:
    return validation.binary(y_true, pos_label, greater_positive=True)


def delong(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    confidence_level: float = 0.95,
    pos_label: Label | None = None,
    backend: Backend = "auto",
) -> DeLongResult:
    """The binary AUROC with DeLong's variance and its normal interval (clipped to [0, 1]).

    The AUROC is the exact pair count rounded once, equal to :func:`cmetrics.roc_auc_score`
    (scikit-learn's within its trapezoid's rounding); the variance is ``S10 / m + S01 / n`` with
    ``S10`` and ``S01`` the sample variances of the positives' and negatives' placements, whose
    squared sums the AUROC's own walk carries: the variance costs no more than the AUROC.
    Unweighted; ``y_true`` must hold both classes.

    >>> r = delong([0, 0, 1, 1, 0, 1, 1, 0], [0.1, 0.4, 0.35, 0.8, 0.2, 0.9, 0.7, 0.3])
    >>> round(r.auc, 4), round(r.standard_error, 4)
    (0.9375, 0.0884)
    """
    level = check_level(confidence_level)
    positive = _binary(y_true, pos_label)
    score = validation.scores(y_score, "y_score", keep_float32=True)
    if score.shape[0] != positive.shape[0]:
        raise LengthMismatchError(
            f"y_true has {positive.shape[0]} rows but y_score has {score.shape[0]}; pass arrays of the same length"
        )
    _one_class(positive)
    # The AUROC's own branch-free walk carries the placements' squared sums (and no other curve term).
    d = resolve_backend(backend).binary_ranking(positive, score, None, curves="placements", n_threads=get_num_threads())
    m, n = d.n_pos, d.n_neg
    auc = _auc(d)
    s10 = max(d.placement_pos_sq - m * auc * auc, 0.0) / (m - 1) if m > 1 else 0.0
    s01 = max(d.placement_neg_sq - n * auc * auc, 0.0) / (n - 1) if n > 1 else 0.0
    var = s10 / m + s01 / n
    se = math.sqrt(var)
    half = z_of(level) * se
    return DeLongResult(auc, var, se, max(0.0, auc - half), min(1.0, auc + half), level, m, n)


def delong_test(
    y_true: ArrayLike,
    score_a: ArrayLike,
    score_b: ArrayLike,
    *,
    confidence_level: float = 0.95,
    pos_label: Label | None = None,
    backend: Backend = "auto",
) -> DeLongTest:
    """DeLong's paired test of two models' AUROCs on the same rows: the difference
    ``auc_a - auc_b``, its variance (the placements' covariance matrix), the z statistic, the
    two-sided p-value and the normal interval of the difference.

    >>> y = [0, 0, 1, 1, 0, 1, 1, 0]
    >>> t = delong_test(y, [0.1, 0.4, 0.35, 0.8, 0.2, 0.9, 0.7, 0.3], [0.3, 0.2, 0.6, 0.7, 0.5, 0.4, 0.45, 0.1])
    >>> round(t.difference, 4), round(t.p_value, 4)
    (0.0625, 0.7518)
    """
    level = check_level(confidence_level)
    positive = _binary(y_true, pos_label)
    a = validation.scores(score_a, "score_a", keep_float32=True)
    b = validation.scores(score_b, "score_b", keep_float32=True)
    for name, s in (("score_a", a), ("score_b", b)):
        if s.shape[0] != positive.shape[0]:
            raise LengthMismatchError(
                f"y_true has {positive.shape[0]} rows but {name} has {s.shape[0]}; pass arrays of the same length"
            )
    _one_class(positive)
    # Both models placed in one kernel call (each sorted once, side by side): pair counts and the
    # centred products of the placements over each class.
    d = resolve_backend(backend).paired_placements(positive, a, b, n_threads=get_num_threads())
    m, n = d.n_pos, d.n_neg
    auc_a = (2 * d.ordered_a + d.tied_a) / (2 * m * n)
    auc_b = (2 * d.ordered_b + d.tied_b) / (2 * m * n)
    cov = np.zeros((2, 2))
    for (aa, bb, ab), count in (((d.pos_aa, d.pos_bb, d.pos_ab), m), ((d.neg_aa, d.neg_bb, d.neg_ab), n)):
        if count > 1:
            cov += np.array([[aa, ab], [ab, bb]]) / ((count - 1) * count)
    diff = auc_a - auc_b
    var = float(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1])
    var = max(var, 0.0)
    se = math.sqrt(var)
    if se > 0:
        z = diff / se
        p_value = 2 * NormalDist().cdf(-abs(z))
    else:
        z = 0.0 if diff == 0 else math.copysign(math.inf, diff)
        p_value = 1.0 if diff == 0 else 0.0
    den = math.sqrt(cov[0, 0] * cov[1, 1])
    corr = float(cov[0, 1] / den) if den > 0 else math.nan
    half = z_of(level) * se
    return DeLongTest(auc_a, auc_b, diff, var, se, z, p_value, diff - half, diff + half, level, corr)

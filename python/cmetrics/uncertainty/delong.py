"""DeLong's variance of the AUROC and the paired test of two AUROCs (DeLong, DeLong and
Clarke-Pearson, "Comparing the areas under two or more correlated receiver operating
characteristic curves: a nonparametric approach", Biometrics 1988), in O(n log n) from the same
tie groups as the AUROC (docs/definitions.md §11.5).

A positive row's placement is the share of negatives scored below it (ties count half); a
negative's, the share of positives scored above it. Every row of a tie group with the same
truth has the same placement, so the variance of one model needs only the tie groups the AUROC
walks; the paired test maps each row to its group in both models.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._backend import resolve_backend
from cmetrics._base import validation
from cmetrics._base.aliases import F64, Backend, Bools, Label
from cmetrics._base.config import get_num_threads
from cmetrics._kernels import Groups
from cmetrics._results.intervals import DeLongResult, DeLongTest
from cmetrics.exceptions import LabelError, LengthMismatchError
from cmetrics.uncertainty.intervals import check_level, z_of


class Placements(NamedTuple):
    """The placements of one model's tie groups, and its AUROC."""

    auc: float
    values: F64  # the distinct scores, increasing
    pos: F64  # positive rows per group
    neg: F64  # negative rows per group
    v10: F64  # the placement of a positive of each group
    v01: F64  # the placement of a negative of each group


def _placements(groups: Groups) -> Placements:
    pos = groups.n_pos.astype(np.float64)
    neg = groups.n_neg.astype(np.float64)
    n_pos, n_neg = float(pos.sum()), float(neg.sum())
    neg_below = np.cumsum(neg)
    neg_below -= neg
    pos_above = n_pos - np.cumsum(pos)
    v10 = (neg_below + 0.5 * neg) / n_neg
    v01 = (pos_above + 0.5 * pos) / n_pos
    # The AUROC from exact pair counts (twice the ordered pairs plus the tied ones), one rounding
    # at the division: float64 holds the counts exactly while 2 m n < 2^53, else integers do.
    if 2 * n_pos * n_neg < 2.0**53:
        pairs = int(pos @ (2 * neg_below + neg))
    else:
        ip, ineg = groups.n_pos.astype(np.uint64), groups.n_neg.astype(np.uint64)
        below = np.cumsum(ineg) - ineg
        pairs = int(np.sum(ip * (2 * below + ineg), dtype=np.uint64))
    auc = pairs / (2 * int(n_pos) * int(n_neg))
    return Placements(auc, groups.values, pos, neg, v10, v01)


def _groups(positive: Bools, score: np.ndarray, backend: Backend) -> Placements:
    n_pos = int(positive.sum())
    if n_pos == 0 or n_pos == positive.size:
        msg = (
            "y_true holds one class only: the AUROC and its DeLong variance need positive and negative rows; "
            "pass rows of both classes"
        )
        raise LabelError(msg)
    be = resolve_backend(backend)
    return _placements(be.score_groups(positive, score, None, n_threads=get_num_threads()))


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

    The AUROC equals :func:`cmetrics.roc_auc_score` (and scikit-learn's) exactly; the variance
    is ``S10 / m + S01 / n`` with ``S10`` and ``S01`` the sample variances of the positives' and
    negatives' placements. Unweighted; ``y_true`` must hold both classes.

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
    p = _groups(positive, score, backend)
    m, n = float(p.pos.sum()), float(p.neg.sum())
    s10 = float(p.pos @ (p.v10 - p.auc) ** 2) / (m - 1) if m > 1 else 0.0
    s01 = float(p.neg @ (p.v01 - p.auc) ** 2) / (n - 1) if n > 1 else 0.0
    var = s10 / m + s01 / n
    se = math.sqrt(var)
    half = z_of(level) * se
    return DeLongResult(p.auc, var, se, max(0.0, p.auc - half), min(1.0, p.auc + half), level, int(m), int(n))


def _row_placements(p: Placements, score: np.ndarray, positive: Bools) -> F64:
    """Each row's placement: its group's v10 for a positive, v01 for a negative (the groups
    are the runs of equal scores in sorted order)."""
    order = np.argsort(score, kind="stable")
    ordered = score[order]
    group = np.empty(score.size, dtype=np.int64)
    starts = np.empty(score.size, dtype=np.bool_)
    starts[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    group[order] = np.cumsum(starts) - 1
    out: F64 = np.where(positive, p.v10[group], p.v01[group])
    return out


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
    pa, pb = _groups(positive, a, backend), _groups(positive, b, backend)
    va, vb = _row_placements(pa, a, positive), _row_placements(pb, b, positive)
    m, n = float(positive.sum()), float(positive.size - positive.sum())
    cov = np.zeros((2, 2))
    for rows, count, mean_a, mean_b in ((positive, m, pa.auc, pb.auc), (~positive, n, pa.auc, pb.auc)):
        if count > 1:
            da, db = va[rows] - mean_a, vb[rows] - mean_b
            s = np.array([[da @ da, da @ db], [da @ db, db @ db]]) / (count - 1)
            cov += s / count
    diff = pa.auc - pb.auc
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
    return DeLongTest(pa.auc, pb.auc, diff, var, se, z, p_value, diff - half, diff + half, level, corr)

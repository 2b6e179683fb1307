"""Multilabel ranking metrics (docs/definitions.md §7.8), as ``sklearn.metrics``:
``coverage_error``, ``label_ranking_average_precision_score``, ``label_ranking_loss``,
``dcg_score`` and ``ndcg_score``.

Each row ranks its own labels, so the work is per row: the labels of a row are compared with
each other (or sorted once, for the gains) in blocks of rows, with no Python loop over rows.
Scores must be finite; ``y_true`` is an ``(n_samples, n_labels)`` indicator matrix (relevance
grades for the gains).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._backend import resolve_backend
from cmetrics._base import validation, value_checks
from cmetrics._base.aliases import F64, Backend
from cmetrics._base.undefined import undefined
from cmetrics._derive import multiclass_ranking
from cmetrics.exceptions import LabelError, NonFiniteError, ShapeError, UnsupportedDtypeError, ValidationError

__all__ = [
    "coverage_error",
    "dcg_score",
    "label_ranking_average_precision_score",
    "label_ranking_loss",
    "ndcg_score",
]


def _pair(y_true: ArrayLike, y_score: ArrayLike, backend: Backend) -> tuple[np.ndarray, F64]:
    """An indicator matrix and a finite float64 score matrix of the same shape."""
    resolve_backend(backend)
    t = validation.to_numpy(y_true, "y_true")
    if t.ndim != 2:
        raise ShapeError(f"y_true must be a 2-D label indicator matrix (n_samples, n_labels), got shape {t.shape}")
    ind = multiclass_ranking.indicator(t)
    s = np.asarray(multiclass_ranking.score_matrix(y_score, ind.shape[0]), dtype=np.float64)
    if s.shape != ind.shape:
        raise ShapeError(f"y_true and y_score have different shapes: {ind.shape} and {s.shape}")
    if s.shape[0] == 0:
        raise ShapeError("y_score is empty; at least one sample is required")
    return ind, s


def _gain_scale(rel: F64) -> float:
    """A power of two bringing the largest gain's magnitude into [0.5, 1) (1 without gains)."""
    top = float(np.max(np.abs(rel))) if rel.size else 0.0
    if not (np.isfinite(top) and top > 0):
        return 1.0
    return float(np.ldexp(1.0, min(-int(np.frexp(top)[1]), 1023)))  # subnormals lifted by 2^1023 at most


def _mean(values: F64, sample_weight: ArrayLike | None) -> float:
    w = validation.weights(sample_weight, values.shape[0])
    if w is None:
        return float(np.mean(values))
    value_checks.check_weights(w, values.shape[0])
    with np.errstate(over="ignore"):
        value_checks.check_totals(float(np.sum(w)), 0.0, values.shape[0])
    return float(np.average(values, weights=w))


def coverage_error(
    y_true: ArrayLike, y_score: ArrayLike, *, sample_weight: ArrayLike | None = None, backend: Backend = "auto"
) -> float:
    """How far down each row's ranking one must go to cover all its true labels: the number of
    labels scored at least as high as its lowest-scored true label (0 for a row without true
    labels), averaged over rows. Best 1 per true label; ties count against.

    >>> coverage_error([[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]])
    2.5
    """
    ind, s = _pair(y_true, y_score, backend)
    lowest = np.where(ind, s, np.inf).min(axis=1, keepdims=True)
    cover = np.count_nonzero(s >= lowest, axis=1).astype(np.float64)
    return _mean(np.where(ind.any(axis=1), cover, 0.0), sample_weight)


def label_ranking_average_precision_score(
    y_true: ArrayLike, y_score: ArrayLike, *, sample_weight: ArrayLike | None = None, backend: Backend = "auto"
) -> float:
    """LRAP: for each true label of a row, the share of true labels among the labels scored at
    least as high as it; averaged over the row's true labels, then over rows (a row with no
    true label, or only true labels, scores 1).

    >>> round(label_ranking_average_precision_score([[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]]), 4)
    0.4167
    """
    ind, s = _pair(y_true, y_score, backend)
    npos = ind.sum(axis=1)
    out = np.where((npos == 0) | (npos == s.shape[1]), 1.0, multiclass_ranking.row_precision(ind, s))
    return _mean(out, sample_weight)


def label_ranking_loss(
    y_true: ArrayLike, y_score: ArrayLike, *, sample_weight: ArrayLike | None = None, backend: Backend = "auto"
) -> float:
    """The share of (true, false) label pairs of a row that the scores order wrongly (the true
    label scored at most as high as the false one; ties count as wrong), averaged over rows; 0
    for a row with no true or no false label.

    >>> label_ranking_loss([[1, 0, 0], [0, 0, 1]], [[0.75, 0.5, 1.0], [1.0, 0.2, 0.1]])
    0.75
    """
    ind, s = _pair(y_true, y_score, backend)
    npos = ind.sum(axis=1)
    pairs = npos * (s.shape[1] - npos)
    ordered, _ = multiclass_ranking.row_pair_counts(ind, s)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(pairs > 0, (pairs - ordered) / pairs, 0.0)
    return _mean(out, sample_weight)


def _gains(y_true: ArrayLike, y_score: ArrayLike, backend: Backend) -> tuple[F64, F64]:
    """Relevance grades and scores for DCG: two finite float64 matrices of one shape, more
    than one document per row."""
    resolve_backend(backend)
    t = validation.to_numpy(y_true, "y_true")
    if t.ndim != 2:
        msg = (
            "Only ('multilabel-indicator', 'continuous-multioutput', 'multiclass-multioutput') formats are "
            f"supported: y_true must be 2-D (n_samples, n_labels), got shape {t.shape}"
        )
        raise ShapeError(msg)
    if t.dtype.kind not in "biuf":
        raise UnsupportedDtypeError(f"y_true has dtype {t.dtype}; pass numeric relevance grades")
    rel = np.asarray(t, dtype=np.float64)
    value_checks.check_finite("y_true", rel.ravel())
    s = np.asarray(multiclass_ranking.score_matrix(y_score, rel.shape[0]), dtype=np.float64)
    if s.shape != rel.shape:
        raise ShapeError(f"y_true and y_score have different shapes: {rel.shape} and {s.shape}")
    if s.shape[0] == 0:
        raise ShapeError("y_score is empty; at least one sample is required")
    return rel, s


def _check_k(k: object) -> int | None:
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValidationError(f"k must be a positive integer or None, got {k!r}")
    return int(k)


def _dcg_rows(rel: F64, s: F64, k: int | None, log_base: float, ignore_ties: bool) -> F64:
    """Discounted cumulative gain of each row: the gains in decreasing score order, position
    ``p`` (from 0) discounted by ``1 / log_base(p + 2)``, positions from ``k`` on by 0. Tied
    scores share the mean gain of their group over the group's positions (McSherry and Najork
    2008), unless ``ignore_ties`` (then a stable order, the later label first among ties)."""
    n, m = s.shape
    discount = 1 / (np.log(np.arange(m) + 2) / np.log(log_base))
    if k is not None:
        discount[k:] = 0
    order = np.argsort(s, axis=1, kind="stable")[:, ::-1]
    ranked = np.take_along_axis(rel, order, axis=1)
    if ignore_ties:
        out: F64 = ranked @ discount
        return out
    ranked_scores = np.take_along_axis(s, order, axis=1)
    # Tie groups of each row, numbered across the whole matrix.
    starts = np.ones((n, m), dtype=np.bool_)
    starts[:, 1:] = ranked_scores[:, 1:] != ranked_scores[:, :-1]
    group = np.cumsum(starts.ravel()) - 1
    n_groups = int(group[-1]) + 1 if group.size else 0
    size = np.bincount(group, minlength=n_groups)
    mean_gain = np.bincount(group, weights=ranked.ravel(), minlength=n_groups) / size
    group_discount = np.bincount(group, weights=np.broadcast_to(discount, (n, m)).ravel(), minlength=n_groups)
    row_of_group = np.repeat(np.arange(n), starts.sum(axis=1))
    dcg: F64 = np.bincount(row_of_group, weights=mean_gain * group_discount, minlength=n).astype(np.float64)
    return dcg


def dcg_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int | None = None,
    log_base: float = 2,
    sample_weight: ArrayLike | None = None,
    ignore_ties: bool = False,
    backend: Backend = "auto",
) -> float:
    """Discounted cumulative gain of each row's ranking of its documents (relevance grades in
    ``y_true``), averaged over rows; ``k`` keeps the top ``k`` positions, ties share their mean
    gain unless ``ignore_ties``.

    >>> round(dcg_score([[10, 0, 0, 1, 5]], [[0.1, 0.2, 0.3, 4, 70]]), 4)
    9.4995
    """
    kk = _check_k(k)
    if isinstance(log_base, bool) or not isinstance(log_base, (int, float, np.integer, np.floating)):
        raise ValidationError(f"log_base must be a number above 0 (not 1), got {log_base!r}")
    if not (log_base > 0 and log_base != 1 and np.isfinite(log_base)):
        raise ValidationError(f"log_base must be a number above 0 (not 1), got {log_base!r}")
    rel, s = _gains(y_true, y_score, backend)
    # The DCG is linear in the gains: computed on gains scaled by a power of two (exact) into
    # [-1, 1], no partial sum overflows; only a mean DCG beyond float64 itself is refused.
    scale = _gain_scale(rel)
    value = _mean(_dcg_rows(rel * scale, s, kk, float(log_base), bool(ignore_ties)), sample_weight) / scale
    if not np.isfinite(value):
        msg = "the mean DCG is beyond the float64 range; divide y_true by a constant first (NDCG does not change)"
        raise NonFiniteError(msg)
    return value


def ndcg_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int | None = None,
    sample_weight: ArrayLike | None = None,
    ignore_ties: bool = False,
    backend: Backend = "auto",
) -> float:
    """DCG divided by the DCG of the ideal ranking (by ``y_true`` itself), averaged over rows;
    a row with no relevant document scores 0. Relevance grades must be non-negative.

    >>> round(ndcg_score([[10, 0, 0, 1, 5]], [[0.1, 0.2, 0.3, 4, 70]]), 4)
    0.6957
    """
    kk = _check_k(k)
    rel, s = _gains(y_true, y_score, backend)
    if rel.size and rel.min() < 0:
        raise LabelError("ndcg_score should not be used on negative y_true values.")
    if rel.shape[1] <= 1:
        msg = f"Computing NDCG is only meaningful when there is more than 1 document. Got {rel.shape[1]} instead."
        raise ShapeError(msg)
    scaled = rel * _gain_scale(rel)  # as for dcg_score: the ratio does not change, no sum overflows
    gain = _dcg_rows(scaled, s, kk, 2.0, bool(ignore_ties))
    ideal = _dcg_rows(scaled, scaled, kk, 2.0, True)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(ideal == 0, 0.0, gain / ideal)
    if not np.isfinite(ratio).all():
        return undefined("ndcg_score is undefined for these gains; returning NaN")
    return _mean(ratio, sample_weight)

"""The multiclass ranking kernels with numpy (mirror of ``one_vs_rest.rs``, ``one_vs_one.rs``,
``top_k.rs`` and ``binned.rs`` in ``rust/core/src/ranking/``): each column of a score matrix
walked against its class (one-vs-rest), Hand and Till's pair AUROCs (one-vs-one), the histogram
of the true class's rank (top-k accuracy), and the binned one-vs-rest histograms of the
approximate mode, per batch and per group."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from cmetrics._base.value_checks import check_2d, check_finite, check_weights
from cmetrics._kernels import (
    F64,
    BinaryRanking,
    ClassRanking,
    CurveTerms,
    GroupedHistograms,
    Groups,
    OneVsOne,
    ProbabilityWalks,
    RowSums,
)
from cmetrics._numpy.grouping import check_offsets
from cmetrics._numpy.ranking import binary_ranking, check_curves, order_keys
from cmetrics.exceptions import LengthMismatchError, LimitExceededError, NonFiniteError, ShapeError, ValidationError


def _check_matrix(y_score: np.ndarray, codes: np.ndarray | None, indicator: np.ndarray | None) -> int:
    """The checks of ``rust/core/src/ranking/score_matrix.rs`` (same messages)."""
    check_2d(y_score, "y_score")
    check_2d(indicator, "indicator")
    n, k = y_score.shape
    if k == 0:
        raise ShapeError(f"y_score has the wrong shape: 0 values do not make rows of {k} columns")
    if n == 0:
        raise ShapeError("y_score is empty; at least one sample is required")
    truth = codes if codes is not None else indicator
    assert truth is not None
    if truth.shape[0] != n or (indicator is not None and indicator.shape[1] != k):
        msg = f"y_true has {truth.shape[0]} rows but y_score has {n}; pass arrays of the same length"
        raise LengthMismatchError(msg)
    if codes is not None:
        bad = np.flatnonzero(codes >= k)
        if bad.size:
            i = int(bad[0])
            msg = (
                f"y_true has the wrong shape: row {i} has class code {int(codes[i])}, but y_score has only {k} columns"
            )
            raise ShapeError(msg)
    return int(n)


def one_vs_rest(
    y_score: np.ndarray,
    columns: list[int],
    codes: np.ndarray | None = None,
    indicator: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
    curves: CurveTerms = True,
    n_threads: int = 0,
) -> list[BinaryRanking]:
    """The walk of each requested column against its class (as the Rust kernel)."""
    check_curves(curves)
    if (codes is None) == (indicator is None):
        raise ValidationError("pass exactly one of codes and indicator")
    n = _check_matrix(y_score, codes, indicator)
    for c in columns:
        if c >= y_score.shape[1]:
            msg = f"labels has the wrong shape: column {c} is beyond the {y_score.shape[1]} columns of y_score"
            raise ShapeError(msg)
    check_weights(sample_weight, n)
    out = []
    for c in columns:
        positive = codes == c if codes is not None else np.ascontiguousarray(indicator[:, c])  # type: ignore[index]
        out.append(binary_ranking(positive, np.ascontiguousarray(y_score[:, c]), sample_weight, curves))
    return out


def one_vs_rest_of_probabilities(
    y_score: np.ndarray,
    columns: list[int],
    codes: np.ndarray,
    sample_weight: np.ndarray | None = None,
    curves: CurveTerms = True,
    n_threads: int = 0,
) -> ProbabilityWalks:
    """The walks of :func:`one_vs_rest` by class codes, None when some row of the scores does
    not sum to 1 within numpy's ``allclose``, with the smallest and the largest row sum (as the
    Rust kernel, which takes the sums in the pass that writes its sort keys)."""
    check_curves(curves)
    _check_matrix(y_score, codes, None)
    low, high = row_sum_range(y_score)
    if not (_sums_to_one(low) and _sums_to_one(high)):
        return ProbabilityWalks(None, low, high)
    walks = one_vs_rest(y_score, columns, codes=codes, sample_weight=sample_weight, curves=curves)
    return ProbabilityWalks(walks, low, high)


def _sums_to_one(total: float) -> bool:
    """numpy's ``allclose(1.0, total)``, false for NaN (as ``sums_to_one`` in Rust)."""
    return abs(1.0 - total) <= 1e-8 + 1e-5 * abs(total)


def one_vs_one(y_score: np.ndarray, codes: np.ndarray, n_threads: int = 0) -> OneVsOne:
    """Hand and Till's pair AUROCs averaged (as the Rust kernel): for each class ``a`` with rows,
    one sort of its column gives, for every row, the a-rows scored above it and tied with it;
    summed per class ``b`` they are the exact pair counts of the pair (a, b)."""
    _check_matrix(y_score, codes, None)
    k = y_score.shape[1]
    counts = np.bincount(codes, minlength=k).astype(np.int64)
    present = np.flatnonzero(counts)
    m = present.size
    if m < 2:
        return OneVsOne(0, math.nan, math.nan)
    by_class = np.argsort(codes, kind="stable")
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))[present]
    plain, weighted = [], []
    for a in present.tolist():
        column = y_score[:, a]
        bad = np.flatnonzero(~np.isfinite(column))
        if bad.size:
            i = int(bad[0])
            msg = f"y_score[{i}] = {float(column[i])!r} is not finite; remove or impute NaN and infinite values"
            raise NonFiniteError(msg)
        column = column.astype(np.float64)
        mine = np.sort(column[codes == a])
        right = np.searchsorted(mine, column, "right")
        above = mine.size - right
        tied = right - np.searchsorted(mine, column, "left")
        ordered_b = np.add.reduceat(above[by_class], starts)
        tied_b = np.add.reduceat(tied[by_class], starts)
        others = present != a
        n_a, n_b = int(counts[a]), counts[present][others]
        auc = exact_ratios(2 * ordered_b[others] + tied_b[others], 2 * n_a * n_b)
        plain.append(np.cumsum(auc)[-1])
        weighted.append(np.cumsum(auc * (n_a + n_b).astype(np.float64))[-1])
    n_pairs = m * (m - 1) // 2
    total_rows = float(counts.sum())
    return OneVsOne(
        n_pairs,
        float(np.cumsum(plain)[-1] / (2.0 * n_pairs)),
        float(np.cumsum(weighted)[-1] / (2.0 * (m - 1) * total_rows)),
    )


def exact_ratios(num: np.ndarray, den: np.ndarray) -> F64:
    """``num / den`` of non-negative integers, each rounded once to the nearest float64 (as
    ``float(Fraction(num, den))``): IEEE division where both are exact float64s, fractions
    past 2^53."""
    num, den = np.asarray(num, dtype=np.int64), np.asarray(den, dtype=np.int64)
    out = num.astype(np.float64) / den.astype(np.float64)
    for i in np.flatnonzero(den > 2**53):
        out[i] = float(Fraction(int(num[i]), int(den[i])))
    return out


def class_ranking(
    y_score: np.ndarray,
    codes: np.ndarray,
    sample_weight: np.ndarray | None = None,
    curves: CurveTerms = True,
    n_threads: int = 0,
) -> ClassRanking:
    """The walk of every column against its class and the histogram of the true class's rank
    (as the Rust kernel, which counts the ranks in the pass that writes its sort keys): the
    checks and errors of :func:`rank_histogram`, then those of :func:`one_vs_rest`."""
    check_curves(curves)
    hist = rank_histogram(y_score, codes, sample_weight)
    walks = one_vs_rest(y_score, list(range(y_score.shape[1])), codes=codes, sample_weight=sample_weight, curves=curves)
    return ClassRanking(walks, hist)


def rank_histogram(
    y_score: np.ndarray, codes: np.ndarray, sample_weight: np.ndarray | None = None, n_threads: int = 0
) -> np.ndarray:
    """The (weighted) count of rows by the rank of their true class (as the Rust kernel)."""
    n = _check_matrix(y_score, codes, None)
    check_weights(sample_weight, n)
    k = y_score.shape[1]
    hist = np.zeros(k)
    step = max(1, (1 << 20) // k)
    later = np.arange(k)[None, :]
    for start in range(0, n, step):
        x = order_keys(y_score[start : start + step])
        c = codes[start : start + step].astype(np.intp)
        own = x[np.arange(x.shape[0]), c][:, None]
        rank = np.count_nonzero(x > own, axis=1) + np.count_nonzero((x == own) & (later > c[:, None]), axis=1)
        w = None if sample_weight is None else sample_weight[start : start + step]
        hist += np.bincount(rank, weights=w, minlength=k)
    return hist


def row_sum_range(y_score: np.ndarray, n_threads: int = 0) -> RowSums:
    """The smallest and the largest row sum (float64), every score checked finite first (as
    the Rust kernel: the first non-finite score by its flat row-major index)."""
    check_2d(y_score, "y_score")
    n, k = y_score.shape
    if k == 0:
        raise ShapeError(f"y_score has the wrong shape: 0 values do not make rows of {k} columns")
    if not np.isfinite(y_score).all():  # either layout, read in place
        check_finite("y_score", np.ascontiguousarray(y_score).ravel())  # names the first, row-major
    if n == 0:
        return RowSums(math.inf, -math.inf)
    sums = y_score.sum(axis=1, dtype=np.float64)
    return RowSums(float(sums.min()), float(sums.max()))


def _check_binned(y_score: np.ndarray, codes: np.ndarray, bins: int, sample_weight: np.ndarray | None) -> int:
    """The checks both binned kernels start with; the row count."""
    n = _check_matrix(y_score, codes, None)
    if bins <= 0:
        raise ValidationError("ranking_bins is invalid: the approximate mode needs at least one bin")
    check_weights(sample_weight, n)
    return n


def _check_unit(x: np.ndarray) -> None:
    """Scores outside [0, 1] cannot be binned: the first one (in row order) is named."""
    bad = ~((x >= 0) & (x <= 1))
    if bad.any():
        row, col = (int(v) for v in np.argwhere(bad)[0])
        msg = (
            f"y_proba is invalid: y_proba[{row}, {col}] = {float(x[row, col])!r} is outside [0, 1]; the approximate "
            "ranking mode bins probabilities in [0, 1] (use ranking='exact' for other scores)"
        )
        raise ValidationError(msg)


def binned_one_vs_rest(
    y_score: np.ndarray, codes: np.ndarray, bins: int, sample_weight: np.ndarray | None = None, n_threads: int = 0
) -> list[Groups]:
    """Each column's tie groups binned in [0, 1] against its class (as the Rust kernel)."""
    _check_binned(y_score, codes, bins, sample_weight)
    x = np.asarray(y_score, dtype=np.float64)
    _check_unit(x)
    cells = bins + 1
    out = []
    for col in range(x.shape[1]):
        cell = np.minimum(np.floor(x[:, col] * bins).astype(np.int64), cells - 1)
        pos = codes == col
        n_pos = np.bincount(cell[pos], minlength=cells).astype(np.uint64)
        n_neg = np.bincount(cell[~pos], minlength=cells).astype(np.uint64)
        keep = (n_pos + n_neg) > 0
        values = np.flatnonzero(keep) / float(bins)
        if sample_weight is None:
            out.append(Groups(values, n_pos[keep], n_neg[keep], None, None))
        else:
            w_pos = np.bincount(cell[pos], weights=sample_weight[pos], minlength=cells).astype(np.float64)
            w_neg = np.bincount(cell[~pos], weights=sample_weight[~pos], minlength=cells).astype(np.float64)
            out.append(Groups(values, n_pos[keep], n_neg[keep], w_pos[keep], w_neg[keep]))
    return out


def add_binned_one_vs_rest(
    y_score: np.ndarray,
    codes: np.ndarray,
    bins: int,
    all: np.ndarray,
    pos: np.ndarray,
    w_pos: np.ndarray | None = None,
    w_neg: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
    n_threads: int = 0,
) -> None:
    """A batch's binned one-vs-rest counts added in place into dense (K, bins + 1) tables (as
    the Rust kernel): rows and positive rows, and with weights the positive weights and the
    negative ones (a cell's weight less its positive weight, at least 0). The batch is checked
    before any table changes."""
    _check_binned(y_score, codes, bins, sample_weight)
    x = np.asarray(y_score, dtype=np.float64)
    want = (x.shape[1], bins + 1)
    if (w_pos is not None, w_neg is not None) != (sample_weight is not None,) * 2:
        raise ShapeError("w_pos and w_neg are the weight tables: give both with sample_weight, and neither without")
    tables = [("all", all), ("pos", pos), ("w_pos", w_pos), ("w_neg", w_neg)]
    for name, table in tables:
        if table is not None and tuple(table.shape) != want:
            msg = f"{name} has the shape {list(table.shape)}; the dense tables are (K, bins + 1) = {list(want)}"
            raise ShapeError(msg)
    for name, table in tables:
        if table is not None and not table.flags.c_contiguous:
            msg = f'{name} is not a C-contiguous, aligned array; pass np.require({name}, requirements="CA")'
            raise ValidationError(msg)
    _check_unit(x)
    cells = bins + 1
    cell = np.minimum(np.floor(x * bins).astype(np.int64), cells - 1)
    counts = []
    for col in range(x.shape[1]):
        c, hit = cell[:, col], codes == col
        one = [np.bincount(c, minlength=cells), np.bincount(c[hit], minlength=cells)]
        if sample_weight is not None:
            w = np.asarray(sample_weight, dtype=np.float64)
            w_all = np.bincount(c, weights=w, minlength=cells)
            w_hit = np.bincount(c[hit], weights=w[hit], minlength=cells)
            one += [w_hit, np.maximum(w_all - w_hit, 0.0)]
        counts.append(one)
    for col, one in enumerate(counts):
        all[col] += one[0].astype(np.uint64)
        pos[col] += one[1].astype(np.uint64)
        if sample_weight is not None and w_pos is not None and w_neg is not None:
            w_pos[col] += one[2]
            w_neg[col] += one[3]


def grouped_binned_histograms(
    y_score: np.ndarray,
    codes: np.ndarray,
    offsets: np.ndarray,
    bins: int,
    sample_weight: np.ndarray | None = None,
    n_threads: int = 0,
) -> GroupedHistograms:
    """Dense binned one-vs-rest histograms of each group of rows (as the Rust kernel): the
    rows laid out group by group, ``offsets`` the G + 1 group starts; arrays of shape
    (G, K, bins + 1) of all rows, positive rows, and with weights their weights."""
    n = _check_binned(y_score, codes, bins, sample_weight)
    o = check_offsets(offsets, n, strict=False)
    x = np.asarray(y_score, dtype=np.float64)
    k, cells, groups = x.shape[1], bins + 1, o.shape[0] - 1
    if groups * k * cells > 1 << 27:
        msg = (
            f"grouped histogram cells (groups x classes x bins) would be {groups * k * cells}, above the limit of "
            f"{1 << 27}; group by a coarser column, or use fewer group_ranking_bins"
        )
        raise LimitExceededError(msg)
    _check_unit(x)
    group = np.repeat(np.arange(groups, dtype=np.int64), np.diff(o))
    cell = np.minimum(np.floor(x * bins).astype(np.int64), cells - 1)
    flat = (group[:, None] * k + np.arange(k, dtype=np.int64)) * cells + cell
    size = groups * k * cells
    rows = np.arange(n)
    hit = flat[rows, np.asarray(codes, dtype=np.int64)] if n else np.zeros(0, np.int64)
    shape = (groups, k, cells)
    all_rows = np.bincount(flat.ravel(), minlength=size).astype(np.uint64).reshape(shape)
    pos_rows = np.bincount(hit, minlength=size).astype(np.uint64).reshape(shape)
    if sample_weight is None:
        return GroupedHistograms(all_rows, pos_rows, None, None)
    w = np.asarray(sample_weight, dtype=np.float64)
    w_all = np.bincount(flat.ravel(), weights=np.repeat(w, k), minlength=size).reshape(shape)
    w_pos = np.bincount(hit, weights=w, minlength=size).reshape(shape)
    return GroupedHistograms(all_rows, pos_rows, w_all, w_pos)


def rank_histogram_groups(
    y_score: np.ndarray,
    codes: np.ndarray,
    offsets: np.ndarray,
    sample_weight: np.ndarray | None = None,
    n_threads: int = 0,
) -> np.ndarray:
    """:func:`rank_histogram` of each group of rows (rows laid out group by group in a
    row-major matrix, ``offsets`` the G + 1 starts of the groups): a (G, K) array."""
    n = _check_matrix(y_score, codes, None)
    check_weights(sample_weight, n)
    o = check_offsets(offsets, n, strict=False)
    if not np.asarray(y_score).flags.c_contiguous:
        msg = f"y_score has the wrong shape: a row-major matrix of {n} rows is needed"
        raise ShapeError(msg)
    k = y_score.shape[1]
    out = np.zeros((o.shape[0] - 1, k))
    for g, (lo, hi) in enumerate(zip(o[:-1].tolist(), o[1:].tolist(), strict=True)):
        if hi > lo:
            w = None if sample_weight is None else sample_weight[lo:hi]
            out[g] = rank_histogram(y_score[lo:hi], codes[lo:hi], w)
    return out

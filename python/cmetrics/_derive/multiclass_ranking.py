"""Multiclass and multilabel ranking metrics (docs/definitions.md §7.6): one walk per
class from the compiled one-vs-rest kernel (or Hand and Till's pairs), averaged as
scikit-learn averages them. The functions of :mod:`cmetrics.ranking` call these."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from cmetrics._backend import resolve_backend
from cmetrics._base import validation, value_checks
from cmetrics._base.aliases import F64, Backend, Bools
from cmetrics._base.config import check_classes, get_num_threads
from cmetrics._base.undefined import undefined, warn
from cmetrics._derive import ranking_walk
from cmetrics._derive.counted_table import CountedTable, label_codes
from cmetrics._kernels import BinaryRanking, CurveTerms, ScoreMatrix
from cmetrics.exceptions import (
    LabelError,
    LengthMismatchError,
    ProbabilityError,
    ShapeError,
    UnsupportedDtypeError,
    ValidationError,
)

RankAverage = Literal["micro", "macro", "weighted", "samples"]
MultiClass = Literal["raise", "ovr", "ovo"]
Metric = Literal["auc", "ap"]

_NO_AUC = "Only one class is present in y_true. ROC AUC score is not defined in that case."
_NO_POSITIVE = "No positive class found in y_true, recall is set to one for all thresholds."


def check_rank_average(average: object) -> RankAverage | None:
    """``average=``: None or one of scikit-learn's four averages of a per-class ranking metric."""
    allowed: tuple[object, ...] = (None, "micro", "macro", "weighted", "samples")
    if not any(average is a if a is None else (isinstance(average, str) and average == a) for a in allowed):
        msg = f"average has to be one of (None, 'micro', 'macro', 'weighted', 'samples'), got {average!r}"
        raise ValidationError(msg)
    return average  # type: ignore[return-value]


def check_multi_class(multi_class: object) -> MultiClass:
    if not (isinstance(multi_class, str) and multi_class in ("raise", "ovr", "ovo")):
        msg = f"multi_class must be 'raise', 'ovr' or 'ovo', got {multi_class!r}"
        raise ValidationError(msg)
    return multi_class  # type: ignore[return-value]


def check_max_fpr(max_fpr: object) -> float | None:
    """``max_fpr=``: None, or a number in (0, 1] (1 means the whole curve)."""
    if max_fpr is None:
        return None
    if isinstance(max_fpr, bool) or not isinstance(max_fpr, (int, float, np.integer, np.floating)):
        raise ValidationError(f"max_fpr must be a number in (0, 1] or None, got {max_fpr!r}")
    value = float(max_fpr)
    if not 0.0 < value <= 1.0:
        raise ValidationError(f"Expected max_fpr in range (0, 1], got: {max_fpr!r}")
    return None if value == 1.0 else value


def score_matrix(y_score: ArrayLike, n: int, name: str = "y_score", *, finite: bool = True) -> ScoreMatrix:
    """An (n, K) score matrix as the kernels read it: C-contiguous float32 or float64
    (integers as int64), every value finite (unless ``finite`` is False: the caller checks,
    as :func:`check_sums_to_one` does in its pass)."""
    s = validation.to_numpy(y_score, name)
    if s.ndim != 2:
        raise ShapeError(f"{name} must be 2-D (n_samples, n_classes), got shape {s.shape}")
    if s.shape[1] == 0:
        raise ShapeError(f"{name} has no columns (shape {s.shape}); pass one column per class")
    check_classes(s.shape[1], name)
    if s.shape[0] != n:
        msg = f"y_true has {n} rows but {name} has {s.shape[0]}; pass arrays of the same length"
        raise LengthMismatchError(msg)
    kind = s.dtype.kind
    if kind == "f":
        dtype: type[np.generic] = np.float32 if s.dtype.itemsize <= 4 else np.float64
    elif kind in "biu":
        if kind == "u" and s.dtype.itemsize == 8 and s.size and int(s.max()) > np.iinfo(np.int64).max:
            raise UnsupportedDtypeError(f"{name} holds integers above the int64 range; pass float scores")
        dtype = np.int64
    else:
        raise UnsupportedDtypeError(f"{name} has dtype {s.dtype}; pass real numbers")
    out: ScoreMatrix = np.ascontiguousarray(s, dtype=dtype)
    if finite and kind == "f":
        value_checks.check_finite(name, out.ravel())
    return out


def indicator(y_true: np.ndarray, name: str = "y_true") -> Bools:
    """A 2-D label indicator matrix (entries 0 or 1) as a C-contiguous bool array (the one
    check of indicator targets, for the ranking and the set-wise metrics alike)."""
    if y_true.dtype == np.bool_:
        return np.ascontiguousarray(y_true)
    if y_true.dtype.kind not in "biuf" or not np.isin(y_true, (0, 1)).all():
        msg = (
            f"{name} is 2-D, so it must be a label indicator matrix of 0 and 1 (n_samples, n_labels); "
            "for multiclass labels pass a 1-D array"
        )
        raise LabelError(msg)
    return np.ascontiguousarray(y_true != 0)


#: Up to this many score columns, :func:`encode` finds the classes by the counting kernel.
_COUNTED_CLASSES = 1024


def encode(
    y_true: np.ndarray, n_cols: int, labels: ArrayLike | None, *, ordered: bool = True, backend: Backend = "auto"
) -> tuple[npt.NDArray[np.uint32], np.ndarray]:
    """Class codes of ``y_true`` against the column classes: ``labels`` (distinct and, with
    ``ordered``, sorted, as scikit-learn asks), or the sorted classes of ``y_true`` (found by
    the compiled counting pass, not a sort)."""

    pair = validation.label_pair(y_true, y_true)
    if labels is None:
        # The compiled counting pass finds the classes without a sort, but into a K x K table:
        # past _COUNTED_CLASSES columns (8 MiB of table) a sort of the labels costs less memory.
        if n_cols <= _COUNTED_CLASSES:
            classes = CountedTable._count(pair.y_true, pair.y_true, None, None, None, backend).labels
        else:
            classes = np.unique(pair.y_true.astype(np.str_) if pair.kind == "str" else pair.y_true)
        if classes.size != n_cols:
            msg = (
                f"Number of classes in y_true ({classes.size}) not equal to the number of columns in "
                f"'y_score' ({n_cols}); pass labels= naming the class of each column"
            )
            raise ShapeError(msg)
    else:
        classes = validation.check_labels(labels, pair.kind)
        if pair.kind == "str":
            classes = classes.astype(np.str_)
        if ordered and not np.array_equal(classes, np.sort(classes)):
            raise LabelError("Parameter 'labels' must be ordered")
        if classes.size != n_cols:
            msg = f"Number of given labels, {classes.size}, not equal to the number of columns in 'y_score', {n_cols}"
            raise ShapeError(msg)
    lab = classes.astype(np.str_) if pair.kind == "str" else classes.astype(np.int64)
    codes = label_codes(pair.y_true, lab, "y_true", pair.kind)
    # label_codes' fast path leaves the range to check when labels are given; classes found in
    # y_true hold every value of it (a pass over the codes saved: 12 ms at 10^7 rows).
    if labels is not None and codes.size and (int(codes.min()) < 0 or int(codes.max()) >= lab.size):
        bad = codes[(codes < 0) | (codes >= lab.size)]
        missing = np.unique(bad)[:10].tolist()
        msg = f"y_true contains values {missing} not belonging to the passed labels {lab.tolist()[:20]}"
        raise LabelError(msg)
    return np.ascontiguousarray(codes, dtype=np.uint32), classes


def rows_sum_to_one(s: ScoreMatrix, backend: Backend) -> bool:
    """scikit-learn's rule for multiclass ROC AUC: each row of scores sums to 1 (allclose),
    and every score is finite (a NonFiniteError names the first that is not). One pass of the
    backend's kernel finds the first non-finite score and the smallest and largest row sum (in
    float64: scikit-learn sums in the scores' own precision, which can differ in the last bits
    only); the sums that pass form an interval, so those two decide. Fused, the checks cost a
    third of a finiteness test and a row sum in numpy (10^7 x 10 float32: 80 ms)."""
    lo, hi = resolve_backend(backend).row_sum_range(s, n_threads=get_num_threads())
    return not s.shape[0] or bool(np.allclose(1.0, [lo, hi]))


def not_probabilities() -> ProbabilityError:
    """The error of scores whose rows do not sum to 1 (scikit-learn's message)."""
    msg = "Target scores need to be probabilities for multiclass roc_auc, i.e. they should sum up to 1.0 over classes"
    return ProbabilityError(msg)


def check_sums_to_one(s: ScoreMatrix, backend: Backend) -> None:
    """Raise :func:`not_probabilities` unless :func:`rows_sum_to_one`."""
    if not rows_sum_to_one(s, backend):
        raise not_probabilities()


def _auc_of(d: BinaryRanking, weighted: bool) -> float:
    if ranking_walk.no_pairs(d):
        return undefined(_NO_AUC)
    return ranking_walk.refinement(d, "half", weighted)


def _ap_of(d: BinaryRanking) -> float:
    if d.w_pos == 0:
        warn(_NO_POSITIVE, UserWarning)
        return 0.0
    return max(0.0, float(d.average_precision))


def _value(metric: Metric, weighted: bool) -> Callable[[BinaryRanking], float]:
    return (lambda d: _auc_of(d, weighted)) if metric == "auc" else _ap_of


def partial_auc(positive: Bools, score: np.ndarray, weight: F64 | None, max_fpr: float, backend: Backend) -> float:
    """McClish's standardised partial AUC up to ``max_fpr``, as scikit-learn: the ROC curve
    interpolated linearly at ``max_fpr``, the area below it rescaled so that chance is 1/2
    and a perfect ranking 1."""
    c = ranking_walk.threshold_counts(positive, score, weight, backend)
    if c.tps[-1] <= 0 or c.fps[-1] <= 0:
        return undefined(_NO_AUC)
    fpr = np.concatenate(([0.0], c.fps / c.fps[-1]))
    tpr = np.concatenate(([0.0], c.tps / c.tps[-1]))
    stop = int(np.searchsorted(fpr, max_fpr, "right"))
    x_interp = [fpr[stop - 1], fpr[stop]]
    y_interp = [tpr[stop - 1], tpr[stop]]
    tpr = np.append(tpr[:stop], np.interp(max_fpr, x_interp, y_interp))
    fpr = np.append(fpr[:stop], max_fpr)
    area = float(np.trapezoid(tpr, fpr))
    min_area = 0.5 * max_fpr**2
    return 0.5 * (1 + (area - min_area) / (max_fpr - min_area))


def _per_column(
    metric: Metric,
    s: ScoreMatrix,
    codes: npt.NDArray[np.uint32] | None,
    ind: Bools | None,
    w: F64 | None,
    max_fpr: float | None,
    backend: Backend,
    probabilities: bool = False,
) -> F64:
    """The metric of every column against its class; with ``probabilities`` (class codes, no
    ``max_fpr``), the rows are checked to sum to 1 in the same pass that keys the columns
    (:func:`not_probabilities` when they do not)."""
    k = s.shape[1]
    if max_fpr is not None:
        out = np.empty(k)
        for c in range(k):
            pos = codes == c if codes is not None else np.ascontiguousarray(ind[:, c])  # type: ignore[index]
            out[c] = partial_auc(pos, np.ascontiguousarray(s[:, c]), w, max_fpr, backend)
        return out
    kernels = resolve_backend(backend)
    curves: CurveTerms = "precision" if metric == "ap" else False
    if probabilities:
        assert codes is not None
        got = kernels.one_vs_rest_of_probabilities(
            s, list(range(k)), codes, sample_weight=w, curves=curves, n_threads=get_num_threads()
        )
        # The kernel applies allclose's rule itself; numpy's own call decides here.
        if got.walks is None or not np.allclose(1.0, [got.low, got.high]):
            raise not_probabilities()
        walks = got.walks
    else:
        walks = kernels.one_vs_rest(
            s, list(range(k)), codes=codes, indicator=ind, sample_weight=w, curves=curves, n_threads=get_num_threads()
        )
    value = _value(metric, w is not None)
    return np.array([value(d) for d in walks], dtype=np.float64)


#: Label pairs compared at once by the per-row helpers (rows per block = this / labels^2).
_BLOCK_PAIRS = 1 << 22


def _row_blocks(n: int, k: int) -> range:
    return range(0, n, max(1, _BLOCK_PAIRS // max(1, k * k)))


def row_pair_counts(ind: Bools, s: np.ndarray) -> tuple[F64, F64]:
    """Per row, over its (set, unset) label pairs: the pairs the scores order rightly (the set
    label scored higher) and the tied pairs. Rows in blocks of at most 2^22 label pairs; the
    row AUC and the label ranking loss both come from these."""
    n, k = s.shape
    ordered, tied = np.empty(n), np.empty(n)
    step = max(1, _BLOCK_PAIRS // max(1, k * k))
    for start in _row_blocks(n, k):
        y, x = ind[start : start + step], np.asarray(s[start : start + step], dtype=np.float64)
        pair = y[:, :, None] & ~y[:, None, :]  # [r, set i, unset j]
        ordered[start : start + step] = np.count_nonzero(pair & (x[:, :, None] > x[:, None, :]), axis=(1, 2))
        tied[start : start + step] = np.count_nonzero(pair & (x[:, :, None] == x[:, None, :]), axis=(1, 2))
    return ordered, tied


def row_precision(ind: Bools, s: np.ndarray) -> F64:
    """Per row, the mean over its set labels of the share of set labels among the labels scored
    at least as high (NaN for a row without set labels): the row AP, and LRAP's row value."""
    n, k = s.shape
    out = np.empty(n)
    step = max(1, _BLOCK_PAIRS // max(1, k * k))
    for start in _row_blocks(n, k):
        y, x = ind[start : start + step], np.asarray(s[start : start + step], dtype=np.float64)
        at_least = x[:, None, :] >= x[:, :, None]  # [r, i, j]: label j scored at least as high as label i
        share = (at_least & y[:, None, :]).sum(axis=2) / at_least.sum(axis=2)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + step] = np.where(y, share, 0.0).sum(axis=1) / y.sum(axis=1)
    return out


def _row_values(metric: Metric, ind: Bools, s: ScoreMatrix) -> F64:
    """The metric of each row's labels against its scores (``average="samples"``)."""
    k = s.shape[1]
    npos = ind.sum(axis=1)
    if metric == "auc":
        ordered, tied = row_pair_counts(ind, s)
        with np.errstate(invalid="ignore", divide="ignore"):
            out: F64 = (ordered + tied / 2) / (npos * (k - npos))
        if np.isnan(out).any():
            warn(_NO_AUC)
        return out
    out = row_precision(ind, s)
    empty = npos == 0
    if empty.any():
        warn(_NO_POSITIVE, UserWarning)
        out[empty] = 0.0
    return out


def averaged(
    metric: Metric,
    s: ScoreMatrix,
    *,
    codes: npt.NDArray[np.uint32] | None,
    ind: Bools | None,
    sample_weight: ArrayLike | None,
    average: RankAverage | None,
    max_fpr: float | None,
    backend: Backend,
    probabilities: bool = False,
) -> float | F64:
    """scikit-learn's ``_average_binary_score`` over the columns of ``s``: per class
    (``None``), their mean (``"macro"``), weighted by each class's positive weight
    (``"weighted"``, classes of no weight counting 0), one walk over every (row, class)
    cell (``"micro"``), or per row (``"samples"``, weighted by ``sample_weight``).
    ``probabilities``: the per-class walks check that the rows sum to 1 as they key the
    columns (:func:`_per_column`)."""
    n, k = s.shape
    if n == 0:
        raise ShapeError("y_score is empty; at least one sample is required")
    w = validation.weights(sample_weight, n)
    if w is not None:
        value_checks.check_weights(w, n)
        with np.errstate(over="ignore"):
            value_checks.check_totals(float(np.sum(w)), 0.0, n)
    if average == "micro":
        if ind is None:
            assert codes is not None
            cells = np.zeros((n, k), dtype=np.bool_)
            cells[np.arange(n), codes] = True
        else:
            cells = ind
        ww = None if w is None else np.repeat(w, k)
        flat = np.ascontiguousarray(s.ravel())
        if max_fpr is not None:
            return partial_auc(cells.ravel(), flat, ww, max_fpr, backend)
        d = ranking_walk.walk(cells.ravel(), flat, ww, backend, curves="precision" if metric == "ap" else False)
        return _value(metric, w is not None)(d)
    if average == "samples":
        if ind is None:
            assert codes is not None
            ind = np.zeros((n, k), dtype=np.bool_)
            ind[np.arange(n), codes] = True
        if max_fpr is not None:
            rows = np.array([partial_auc(ind[i], s[i], None, max_fpr, backend) for i in range(n)])
        else:
            rows = _row_values(metric, ind, s)
        if w is None:
            return float(np.mean(rows))
        rows = np.where(w == 0, 0.0, rows)
        return float(np.average(rows, weights=w))
    values = _per_column(metric, s, codes, ind, w, max_fpr, backend, probabilities)
    if average is None:
        return values
    if average == "macro":
        return float(np.mean(values))
    # weighted: by each class's (weighted) positives
    if ind is not None:
        support = (ind.sum(axis=0) if w is None else w @ ind).astype(np.float64)
    else:
        assert codes is not None
        support = np.bincount(codes, weights=w, minlength=k).astype(np.float64)
    if np.isclose(support.sum(), 0.0):
        return 0.0
    values = np.where(support == 0, 0.0, values)
    return float(np.average(values, weights=support))


def one_vs_one(codes: npt.NDArray[np.uint32], s: ScoreMatrix, average: RankAverage | None, backend: Backend) -> float:
    """Hand and Till's multiclass AUC: over each pair of classes present, the mean of the
    two one-vs-one AUCs; averaged with equal weights (``"macro"``) or by the share of rows
    in the pair (``"weighted"``). The kernel folds the pairs as it goes: its memory follows
    the rows, not the K(K - 1) / 2 pairs."""
    r = resolve_backend(backend).one_vs_one(s, codes, get_num_threads())
    if r.n_pairs == 0:
        return undefined(_NO_AUC)
    return r.weighted_auc if average == "weighted" else r.macro_auc


def in_place(y_proba: np.ndarray) -> ScoreMatrix:
    """A probability matrix as the class-ranking kernels read it: C- or Fortran-ordered arrays
    in place (the kernels read either layout), anything else copied once."""
    if y_proba.flags.c_contiguous or y_proba.flags.f_contiguous:
        return y_proba
    return np.ascontiguousarray(y_proba)


def class_ranking_values(
    hist: F64, walks: list[BinaryRanking] | None, weighted: bool, top_k: int
) -> tuple[dict[str, float], dict[str, str]]:
    """The class-ranking metrics of a report (docs/definitions.md §7.6) from the rank
    histogram of the true classes and the one-vs-rest walk of each column (None: ranking
    off): top-k accuracy for k = 1 .. min(top_k, K - 1), and the macro one-vs-rest AUROC and
    AP over the classes with both positive and negative rows."""
    values: dict[str, float] = {}
    undefined: dict[str, str] = {}
    k = hist.shape[0]
    total = float(np.sum(hist))
    for kk in range(1, min(top_k, k - 1) + 1):
        values[f"top_{kk}_accuracy"] = float(np.sum(hist[:kk])) / total if total > 0 else float("nan")
    if walks is None:
        return values, undefined
    ranked = [d for d in walks if not ranking_walk.no_pairs(d)]
    values["roc_auc_ovr"] = (
        float(np.mean([ranking_walk.refinement(d, "half", weighted) for d in ranked])) if ranked else math.nan
    )
    values["average_precision_ovr"] = float(np.mean([d.average_precision for d in ranked])) if ranked else math.nan
    if not ranked:
        undefined["roc_auc_ovr"] = undefined["average_precision_ovr"] = (
            "no class has both positive and negative rows: nothing to rank"
        )
    return values, undefined


def report_values(
    codes: npt.NDArray[np.int32] | npt.NDArray[np.int64],
    y_proba: np.ndarray,
    weight: F64 | None,
    *,
    ranking: bool,
    bins: int | None,
    top_k: int,
    backend: Backend,
) -> tuple[dict[str, float], dict[str, str]]:
    """:func:`class_ranking_values` of one batch of rows: the rank histogram, and the
    one-vs-rest walks exact (one sort per column, the ranks counted in the pass that writes
    the sort keys) or from ``bins`` equal-width bins of [0, 1] per column."""
    be = resolve_backend(backend)
    c = np.ascontiguousarray(codes, dtype=np.uint32)
    p = in_place(y_proba)
    if ranking and bins is None:
        # The ranks counted in the pass that writes the sort keys (one read of the matrix).
        exact = be.class_ranking(p, c, weight, "precision", get_num_threads())
        return class_ranking_values(exact.rank_histogram, exact.walks, weight is not None, top_k)
    hist = be.rank_histogram(p, c, weight, get_num_threads())
    walks: list[BinaryRanking] | None = None
    if ranking:
        groups = be.binned_one_vs_rest(p, c, int(bins), weight, get_num_threads())  # type: ignore[arg-type]
        walks = [be.walk_groups(g, True) for g in groups]
    return class_ranking_values(hist, walks, weight is not None, top_k)

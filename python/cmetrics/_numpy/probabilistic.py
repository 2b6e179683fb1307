"""The one pass over ``y_proba`` with numpy (mirror of
``rust/core/src/probabilistic.rs``): same accumulators, same checks, same
messages. Works through the rows in chunks so that its extra memory stays
bounded by the chunk, not by the matrix."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from cmetrics._base.value_checks import check_2d, check_same_length, row_atol, row_sums_fit
from cmetrics._kernels import F64, Codes, Proba, ProbAccumulators
from cmetrics._numpy.grouping import check_offsets
from cmetrics._numpy.ranking import binary_ranking
from cmetrics.exceptions import (
    LabelError,
    ProbabilityError,
    ShapeError,
    UnsupportedDtypeError,
    WeightError,
)

LOG_LOSS_EPS = float(np.finfo(np.float64).eps)
_CHUNK = 1 << 15


def _py(x: float) -> str:
    return repr(float(x))


def calibration_bin(conf: np.ndarray, n_bins: int) -> np.ndarray:
    """0-based bin of each confidence: bin m (1-based) holds ((m-1)/M, m/M], bin 1 also 0."""
    m = np.clip(np.ceil(conf * n_bins), 1, n_bins).astype(np.int64)
    lower = (m - 1) / n_bins
    upper = m / n_bins
    m = np.where((m > 1) & (conf <= lower), m - 1, m)
    m = np.where((m < n_bins) & (conf > upper), m + 1, m)
    out: npt.NDArray[np.int64] = m - 1
    return out


def evaluate_proba(
    y_true: np.ndarray,
    y_proba: np.ndarray,
    y_pred: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
    *,
    validate: bool = True,
    atol: float | None = None,
    entropy: bool = True,
    scores: bool = True,
    n_bins: int = 15,
    keep_confidence: bool = False,
    hard: bool = True,
    rank: bool = False,
    n_threads: int = 0,
) -> ProbAccumulators:
    """Every accumulator of the probabilistic pass (see the Rust docs); with ``rank``, the
    walk of the top-label confidences against correctness too."""
    del n_threads
    check_2d(y_proba, "y_proba")
    n = len(y_true)
    _check_pass_arguments(n, y_proba, y_pred, sample_weight)
    k = y_proba.shape[1]
    tol = row_atol(atol, k)
    acc = _empty_accumulators(k, n, n_bins, sample_weight is not None, keep_confidence or rank)
    sums = np.zeros(4)  # weight, entropy, Brier and log-loss sums
    with np.errstate(over="ignore", invalid="ignore"):
        for lo in range(0, n, _CHUNK):
            hi = min(lo + _CHUNK, n)
            sums += _chunk(
                acc,
                lo,
                y_true[lo:hi],
                y_proba[lo:hi],
                None if y_pred is None else y_pred[lo:hi],
                None if sample_weight is None else sample_weight[lo:hi],
                k,
                tol,
                validate,
                entropy,
                scores,
                n_bins,
                hard,
            )
    if not np.isfinite(sums).all():
        msg = (
            "a weighted sum of the probability pass is beyond the float64 range; divide every sample_weight by "
            "the same constant (the metrics do not change)"
        )
        raise WeightError(msg)
    weight_sum, entropy_sum, brier_sum, log_loss_sum = (float(x) for x in sums)
    acc = acc._replace(weight_sum=weight_sum, entropy_sum=entropy_sum, brier_sum=brier_sum, log_loss_sum=log_loss_sum)
    if rank:
        assert acc.correct is not None and acc.confidence is not None
        walk = binary_ranking(acc.correct, acc.confidence, sample_weight, True)
        if not keep_confidence:
            acc = acc._replace(confidence=None, correct=None)
        acc = acc._replace(ranking=walk)
    return acc


def _check_pass_arguments(
    n: int, y_proba: np.ndarray, y_pred: np.ndarray | None, sample_weight: np.ndarray | None
) -> None:
    """The shapes, lengths and weights of the pass's arguments, with the Rust pass's messages."""
    if n == 0:
        msg = "y_true is empty; at least one sample is required"
        raise ShapeError(msg)
    if y_proba.ndim != 2 or y_proba.shape[0] != n or y_proba.shape[1] == 0:
        msg = f"y_proba has the wrong shape: {y_proba.size} values for {n} rows of {y_proba.shape[-1]} columns"
        raise ShapeError(msg)
    check_same_length("y_pred", None if y_pred is None else len(y_pred), "y_true", n)
    check_same_length("sample_weight", None if sample_weight is None else len(sample_weight), "y_true", n)
    if sample_weight is not None:
        badw = ~((sample_weight >= 0) & np.isfinite(sample_weight))
        if badw.any():
            i = int(np.flatnonzero(badw)[0])
            msg = (
                f"sample_weight[{i}] = {_py(sample_weight[i])} is invalid; weights must be finite and >= 0 "
                f"({int(badw.sum())} invalid in total)"
            )
            raise WeightError(msg)


def _empty_accumulators(k: int, n: int, n_bins: int, weighted: bool, keep: bool) -> ProbAccumulators:
    """Zeroed accumulators of a pass over ``n`` rows of ``k`` classes (``keep``: room for each
    row's confidence and correctness)."""
    return ProbAccumulators(
        hard_counts=np.zeros((k, k), dtype=np.uint64),
        hard_weighted=np.zeros((k, k)) if weighted else None,
        pcm=np.zeros((k, k)),
        true_count=np.zeros(k, dtype=np.uint64),
        true_weight=np.zeros(k),
        entropy_sum=0.0,
        brier_sum=0.0,
        log_loss_sum=0.0,
        weight_sum=0.0,
        bin_weight=np.zeros(n_bins),
        bin_confidence=np.zeros(n_bins),
        bin_correct=np.zeros(n_bins),
        bin_count=np.zeros(n_bins, dtype=np.uint64),
        confidence=np.zeros(n) if keep else None,
        correct=np.zeros(n, dtype=bool) if keep else None,
    )


def _codes_in_range(codes: np.ndarray, name: str, lo: int, k: int) -> np.ndarray:
    """``codes`` as int64, or the LabelError naming the first one outside 0..k."""
    c = codes.astype(np.int64)
    outside = (c < 0) | (c >= k)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        msg = (
            f"{name}[{lo + i}] = {int(codes[i])} is not one of the {k} labels; "
            "pass labels= listing every class (one per y_proba column)"
        )
        raise LabelError(msg)
    return c


def _checked_chunk(
    lo: int, y: np.ndarray, pd: np.ndarray, yp: np.ndarray | None, k: int, tol: float, validate: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """The label codes of a chunk (``y`` and ``yp`` as int64) once its rows pass the checks of
    the Rust pass, row by row: the first bad row decides, and within a row y_true, then the
    entries, then the sum, then y_pred."""
    m = len(y)
    yi = y.astype(np.int64)
    bad_true: npt.NDArray[np.bool_] = (yi < 0) | (yi >= k)
    invalid = ~((pd >= 0) & (pd <= 1))
    bad_entry = np.asarray(invalid.any(axis=1))
    sums = pd.sum(axis=1)
    bad_sum: npt.NDArray[np.bool_] = ~row_sums_fit(sums, tol) & ~bad_entry if validate else np.zeros(m, dtype=bool)
    yp_codes = None if yp is None else yp.astype(np.int64)
    bad_pred = np.zeros(m, dtype=bool) if yp_codes is None else (yp_codes < 0) | (yp_codes >= k)
    bad = bad_true | bad_entry | bad_sum | bad_pred
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        if bad_true[r]:
            _codes_in_range(y[r : r + 1], "y_true", lo + r, k)
        if bad_entry[r]:
            c = int(np.flatnonzero(invalid[r])[0])
            msg = (
                f"y_proba[{lo + r}, {c}] = {_py(pd[r, c])} is not a probability; entries must lie in [0, 1] "
                "(no NaN or inf)"
            )
            raise ProbabilityError(msg)
        if bad_sum[r]:
            msg = (
                f"y_proba row {lo + r} sums to {_py(sums[r])}, not 1 (tolerance {_py(tol)}); "
                "pass normalised probabilities (softmax output) or validate=False"
            )
            raise ProbabilityError(msg)
        _codes_in_range(yp[r : r + 1], "y_pred", lo + r, k)  # type: ignore[index]
    return yi, yp_codes


def _chunk(
    out: ProbAccumulators,
    lo: int,
    y: np.ndarray,
    p: np.ndarray,
    yp: np.ndarray | None,
    w: np.ndarray | None,
    k: int,
    tol: float,
    validate: bool,
    entropy: bool,
    scores: bool,
    n_bins: int,
    hard: bool,
) -> npt.NDArray[np.float64]:
    """Add one chunk to the arrays of ``out``; return its (weight, entropy, Brier, log-loss) sums."""
    m = len(y)
    pd = p.astype(np.float64, copy=False)
    yi, yp_codes = _checked_chunk(lo, y, pd, yp, k, tol, validate)
    top = pd.argmax(axis=1)
    best = pd[np.arange(m), top]
    pred = top if yp_codes is None else yp_codes
    ww = np.ones(m) if w is None else w
    out.true_count[:] += np.bincount(yi, minlength=k).astype(np.uint64)
    out.true_weight[:] += np.bincount(yi, weights=ww, minlength=k)
    if hard:
        cells = yi * k + pred
        out.hard_counts[:] += np.bincount(cells, minlength=k * k).reshape(k, k).astype(np.uint64)
        if out.hard_weighted is not None:
            out.hard_weighted[:] += np.bincount(cells, weights=ww, minlength=k * k).reshape(k, k)
    onehot = np.zeros((m, k))
    onehot[np.arange(m), yi] = ww
    out.pcm[:] += onehot.T @ pd
    sums = np.zeros(4)
    sums[0] = np.sum(ww)
    pt = pd[np.arange(m), yi]
    if scores:
        sumsq = np.einsum("ij,ij->i", pd, pd)
        sums[2] = np.sum(ww * (sumsq - pt * pt + (1 - pt) ** 2))
        sums[3] = -np.sum(ww * np.log(np.clip(pt, LOG_LOSS_EPS, 1 - LOG_LOSS_EPS)))
    correct = top == yi
    if n_bins > 0:
        b = calibration_bin(best, n_bins)
        out.bin_weight[:] += np.bincount(b, weights=ww, minlength=n_bins)
        out.bin_confidence[:] += np.bincount(b, weights=ww * best, minlength=n_bins)
        out.bin_correct[:] += np.bincount(b, weights=ww * correct, minlength=n_bins)
        out.bin_count[:] += np.bincount(b, minlength=n_bins).astype(np.uint64)
    if out.confidence is not None and out.correct is not None:
        out.confidence[lo : lo + m] = best
        out.correct[lo : lo + m] = correct
    if entropy:
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(pd > 0, -pd * np.log(np.where(pd > 0, pd, 1.0)), 0.0)
        sums[1] = np.sum(ww * terms.sum(axis=1))
    return sums


def evaluate_proba_groups(
    y_true: np.ndarray,
    y_proba: np.ndarray,
    offsets: np.ndarray,
    y_pred: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
    *,
    validate: bool = True,
    atol: float | None = None,
    entropy: bool = True,
    scores: bool = True,
    n_bins: int = 15,
    keep_confidence: bool = False,
    hard: bool = True,
    n_threads: int = 0,
) -> list[ProbAccumulators]:
    """:func:`evaluate_proba` of each group of rows (rows laid out group by group in a
    row-major matrix, ``offsets`` the G + 1 starts of the groups)."""
    check_2d(y_proba, "y_proba")
    n = len(y_true)
    if y_proba.ndim != 2 or y_proba.shape[0] != n or y_proba.shape[1] == 0 or not y_proba.flags.c_contiguous:
        msg = f"y_proba has the wrong shape: a row-major matrix of {n} rows of {y_proba.shape[-1]} columns is needed"
        raise ShapeError(msg)
    o = check_offsets(offsets, n, strict=True)
    for name, a in (("y_pred", y_pred), ("sample_weight", sample_weight)):
        check_same_length(name, None if a is None else len(a), "y_true", n)
    return [
        evaluate_proba(
            y_true[lo:hi],
            y_proba[lo:hi],
            None if y_pred is None else y_pred[lo:hi],
            None if sample_weight is None else sample_weight[lo:hi],
            validate=validate,
            atol=atol,
            entropy=entropy,
            scores=scores,
            n_bins=n_bins,
            keep_confidence=keep_confidence,
            hard=hard,
        )
        for lo, hi in zip(o[:-1].tolist(), o[1:].tolist(), strict=True)
    ]


# ---------------------------------------------------------------------------- row by row outputs


def _checked_matrix(y_proba: object, n: int | None) -> Proba:
    """``y_proba`` as the row-by-row kernels take it: a 2-D float32 or float64 numpy array of at
    least one column (and ``n`` rows when given), refused as the compiled kernels refuse it."""
    check_2d(y_proba, "y_proba")
    p = np.asarray(y_proba)
    if p.dtype not in (np.float32, np.float64):
        msg = f"y_proba has dtype {p.dtype}; pass float32 or float64 probabilities"
        raise UnsupportedDtypeError(msg)
    rows, k = p.shape
    if k == 0 or (n is not None and rows != n):
        msg = f"y_proba has the wrong shape: {p.size} values do not make {rows if n is None else n} rows of {k} columns"
        raise ShapeError(msg)
    return p


def top_labels(y_proba: Proba, n_threads: int = 0) -> npt.NDArray[np.int64]:
    """Each row's top label: the first column of its largest probability (a NaN first)."""
    del n_threads  # numpy runs on one thread
    p = _checked_matrix(y_proba, None)
    if p.shape[1] == 2:  # one comparison, several times faster than argmax over a row-major pair
        top = np.greater(p[:, 1], p[:, 0]) | (np.isnan(p[:, 1]) & ~np.isnan(p[:, 0]))
        return top.view(np.int8).astype(np.int64)
    return np.asarray(p.argmax(axis=1), dtype=np.int64)


def proba_row_values(
    y_true: Codes, y_proba: Proba, sample_weight: F64 | None = None, n_threads: int = 0
) -> npt.NDArray[np.float64]:
    """Each row's ``K + 4`` contributions to a probability model's Poisson replicate sums: its
    weight ``w``, ``w p_j`` for every class, ``w`` again, ``w`` times its log loss (``p_t``
    clipped to ``[eps, 1 - eps]``) and ``w`` times its Brier score (``1`` for ``w`` and no
    products without weights)."""
    del n_threads  # numpy runs on one thread
    n = len(y_true)
    # Every value in float64, a float32 probability widened first (as the compiled kernel reads it).
    p = _checked_matrix(y_proba, n).astype(np.float64, copy=False)
    k = p.shape[1]
    check_same_length("sample_weight", None if sample_weight is None else len(sample_weight), "y_true", n)
    t = _codes_in_range(np.asarray(y_true), "y_true", 0, k)
    out = np.empty((n, k + 4))
    pt = p[np.arange(n), t]
    log_loss = -np.log(np.clip(pt, LOG_LOSS_EPS, 1 - LOG_LOSS_EPS))
    brier = np.einsum("ij,ij->i", p, p)
    brier -= pt * pt
    brier += (1 - pt) ** 2
    if sample_weight is None:
        out[:, 0] = 1.0
        out[:, 1 : k + 1] = p
        out[:, k + 1] = 1.0
    else:
        w = np.asarray(sample_weight, dtype=np.float64)
        out[:, 0] = w
        np.multiply(p, w[:, None], out=out[:, 1 : k + 1])
        out[:, k + 1] = w
        log_loss *= w
        brier *= w
    out[:, k + 2] = log_loss
    out[:, k + 3] = brier
    return out

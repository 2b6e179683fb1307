"""Confusion counting with numpy (mirror of ``rust/core/src/confusion.rs``)."""

from __future__ import annotations

import numpy as np

from cmetrics._base.value_checks import check_2d, check_object_strings, check_same_length, surrogate_error
from cmetrics._kernels import Counted, Encoded
from cmetrics.exceptions import (
    LimitExceededError,
    ShapeError,
    ValidationError,
    WeightError,
)

_ALWAYS_DENSE = 64
_MAX_DENSE_CELLS = 1 << 24


def _check(y_true: np.ndarray, y_pred: np.ndarray, w: np.ndarray | None) -> None:
    check_same_length("y_true", len(y_true), "y_pred", len(y_pred))
    if len(y_true) == 0:
        msg = "y_true is empty; at least one sample is required"
        raise ShapeError(msg)
    if w is not None:
        check_same_length("sample_weight", len(w), "y_true", len(y_true))
        bad = ~((w >= 0) & np.isfinite(w))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            msg = (
                f"sample_weight[{i}] = {float(w[i])!r} is invalid; weights must be finite and >= 0 "
                f"({int(bad.sum())} invalid in total)"
            )
            raise WeightError(msg)


def _dense_ok(d: int, n: int) -> bool:
    cells = (d + 1) * (d + 1)
    return cells <= _MAX_DENSE_CELLS and (d <= _ALWAYS_DENSE or cells // 4 <= n)


def _limit(k: int, max_classes: int) -> None:
    if k > max_classes:
        msg = (
            f"the number of distinct labels would be {k}, above the limit of {max_classes}; each class adds a row "
            "and a column to the K x K tables of counts and sums (16 K^2 bytes); raise max_classes= or "
            "cmetrics.set_max_classes() if that is intended"
        )
        raise LimitExceededError(msg)


def _chunked_sums(codes: np.ndarray, w: np.ndarray, cells: int) -> np.ndarray:
    """Weighted cell sums as the Rust kernel forms them: in row order inside chunks of a size
    fixed by the table, chunks added in order (a plain ``bincount`` over 10^8 rows drifts by
    about 1e-9; this stays within 1e-13)."""
    rows = max(1 << 16, 8 * cells)
    out = np.zeros(cells)
    for lo in range(0, codes.shape[0], rows):
        out += np.bincount(codes[lo : lo + rows], weights=w[lo : lo + rows], minlength=cells)
    return out


def _finish(
    codes: np.ndarray, d: int, w: np.ndarray | None, keep: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    counts = np.bincount(codes, minlength=d * d).reshape(d, d).astype(np.uint64)
    if keep is None:
        keep = np.flatnonzero((counts.sum(axis=0) > 0) | (counts.sum(axis=1) > 0))
    counts = counts[np.ix_(keep, keep)]
    weighted = None
    if w is not None:
        with np.errstate(over="ignore", invalid="ignore"):
            weighted = _chunked_sums(codes, w, d * d).reshape(d, d)[np.ix_(keep, keep)]
            total = float(weighted.sum())
        if not np.isfinite(total):
            msg = (
                "the sum of sample_weight is beyond the float64 range; divide every sample_weight by the same "
                "constant (the metrics do not change)"
            )
            raise WeightError(msg)
    return keep, np.ascontiguousarray(counts), None if weighted is None else np.ascontiguousarray(weighted)


def confusion_matrix(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sample_weight: np.ndarray | None = None,
    *,
    max_classes: int = 4096,
    n_threads: int = 0,
    min_parallel: int | None = None,
) -> Counted:
    """Count the confusion matrix over the labels that occur."""
    del n_threads, min_parallel  # numpy is single-threaded here
    _check(y_true, y_pred, sample_weight)
    n = len(y_true)
    lo = min(int(y_true.min()), int(y_pred.min()))
    hi = max(int(y_true.max()), int(y_pred.max()))
    if lo >= 0 and _dense_ok(hi + 1, n):
        d = hi + 1
        codes = y_true.astype(np.int64) * d + y_pred
        keep, counts, weighted = _finish(codes, d, sample_weight, None)
        _limit(len(keep), max_classes)
        return Counted(keep.astype(np.int64), counts, weighted)
    values, inverse = np.unique(np.concatenate([y_true.astype(np.int64), y_pred.astype(np.int64)]), return_inverse=True)
    k = len(values)
    _limit(k, max_classes)
    codes = inverse[:n].astype(np.int64) * k + inverse[n:]
    _, counts, weighted = _finish(codes, k, sample_weight, np.arange(k))
    return Counted(values.astype(np.int64), counts, weighted)


def confusion_matrix_codes(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    n_classes: int,
    sample_weight: np.ndarray | None = None,
    *,
    n_threads: int = 0,
) -> Counted:
    """Count codes known to lie in ``0..n_classes``; every class keeps its row."""
    del n_threads
    _check(y_true, y_pred, sample_weight)
    if not 0 < n_classes < 4096:
        msg = f"n_classes is invalid: {n_classes} classes; expected 1 to 4095"
        raise ValidationError(msg)
    if min(y_true.min(), y_pred.min()) < 0 or max(y_true.max(), y_pred.max()) >= n_classes:
        msg = f"y_true/y_pred is invalid: a code lies outside 0..{n_classes}; encode the labels first"
        raise ValidationError(msg)
    codes = y_true.astype(np.int64) * n_classes + y_pred
    keep, counts, weighted = _finish(codes, n_classes, sample_weight, np.arange(n_classes))
    return Counted(keep.astype(np.int64), counts, weighted)


def encode_strings(a: np.ndarray, b: np.ndarray, *, max_classes: int = 4096) -> Encoded:
    """Encode two (n, width) uint32 code-point arrays to shared sorted codes."""
    check_2d(a, "y_true")
    check_2d(b, "y_pred")
    if a.ndim != 2 or b.ndim != 2:
        msg = "encode_strings takes (n, width) uint32 arrays"
        raise ShapeError(msg)
    sa = np.ascontiguousarray(a).view(f"<U{a.shape[1]}").reshape(-1)
    sb = np.ascontiguousarray(b).view(f"<U{b.shape[1]}").reshape(-1)
    both = np.concatenate([sa.astype(np.str_), sb.astype(np.str_)])
    return _encode_sorted(both, len(sa), max_classes)


def _encode_sorted(both: np.ndarray, n: int, max_classes: int) -> Encoded:
    _, first, inverse = np.unique(both, return_index=True, return_inverse=True)
    _limit(len(first), max_classes)
    which = (first >= n).astype(np.uint8)
    rows = np.where(first >= n, first - n, first).astype(np.uint64)
    codes = inverse.reshape(-1).astype(np.int32)
    return Encoded(which, rows, codes[:n], codes[n:])


def encode_objects(a: np.ndarray, b: np.ndarray, *, max_classes: int = 4096) -> Encoded:
    """Encode two object arrays of ``str`` to shared codes sorted by code point."""
    for arr, name in ((a, "y_true"), (b, "y_pred")):
        check_object_strings(arr, name)
        for i, text in enumerate(arr.tolist()):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise surrogate_error(name, i) from None
    # Fixed-width strings drop trailing NULs, as the compiled kernel does.
    both = np.concatenate([a.astype(np.str_), b.astype(np.str_)]).astype(np.str_)
    return _encode_sorted(both, len(a), max_classes)

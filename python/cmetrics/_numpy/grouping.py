"""Rows split by group (the numpy twin of ``cmetrics_core::grouping``)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from cmetrics._base.value_checks import check_2d, check_same_length
from cmetrics._kernels import GroupedCounts, GroupSplit
from cmetrics._numpy.confusion import _check, _chunked_sums
from cmetrics.exceptions import ShapeError, ValidationError, WeightError

#: The most groups a split takes, as in the compiled kernel.
MAX_GROUPS = 1 << 20


def check_offsets(offsets: np.ndarray, n: int, strict: bool) -> npt.NDArray[np.int64]:
    """Group offsets (the G + 1 starts of the groups of a layout group by group) rising from 0
    to ``n``; with ``strict`` every group has a row (as the compiled check)."""
    o = np.asarray(offsets, dtype=np.int64)
    steps = np.diff(o) if o.ndim == 1 else np.zeros(0)
    rising = bool((steps > 0).all()) if strict else bool((steps >= 0).all())
    if o.ndim != 1 or o.shape[0] < 1 or o[0] != 0 or o[-1] != n or not rising:
        how = "rise strictly" if strict else "rise"
        msg = f"offsets has the wrong shape: the group offsets must {how} from 0 to the {n} rows"
        raise ShapeError(msg)
    return o


def group_positions(codes: npt.NDArray[np.uint32], n_groups: int, n_threads: int = 0) -> GroupSplit:
    """Each row's position in the group-by-group order (a stable sort by code) and where
    each group's slice starts (``n_groups + 1`` offsets)."""
    del n_threads
    if n_groups > MAX_GROUPS:
        msg = f"n_groups is invalid: {n_groups} groups is above the limit of {MAX_GROUPS}"
        raise ValidationError(msg)
    c = np.asarray(codes, dtype=np.uint32)
    if c.size and int(c.max()) >= n_groups:
        msg = f"groups is invalid: group code {int(c.max())} is not below the number of groups, {n_groups}"
        raise ValidationError(msg)
    order = np.argsort(c, kind="stable")
    positions = np.empty(c.shape[0], dtype=np.int64)
    positions[order] = np.arange(c.shape[0], dtype=np.int64)
    offsets = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(np.bincount(c, minlength=n_groups), out=offsets[1:])
    return GroupSplit(positions, offsets)


def scatter_rows(
    matrix: npt.NDArray[np.float32] | npt.NDArray[np.float64], positions: npt.NDArray[np.int64], n_threads: int = 0
) -> npt.NDArray[np.float32] | npt.NDArray[np.float64]:
    """The rows of a matrix laid out at ``positions`` (row ``i`` goes to row ``positions[i]``),
    which must name every row once (as the Rust kernel checks), in a row-major matrix."""
    del n_threads
    check_2d(matrix, "matrix")
    m = np.asarray(matrix)
    p = np.asarray(positions, dtype=np.int64)
    if m.ndim != 2 or m.shape[0] != p.shape[0] or m.shape[1] == 0:
        msg = f"positions is invalid: {m.size} values are not {p.shape[0]} rows of {m.shape[-1] if m.ndim else 0}"
        raise ValidationError(msg)
    bad = (p < 0) | (p >= p.shape[0])
    if not bad.any():  # then the first position naming a row named before
        first = np.zeros(p.shape[0], dtype=bool)
        first[np.unique(p, return_index=True)[1]] = True
        bad = ~first
    if bad.any():
        msg = (
            f"positions is invalid: position {int(p[bad][0])} is not a row of the {p.shape[0]}, or names a row "
            "named before; pass each row's own position once"
        )
        raise ValidationError(msg)
    out = np.empty(m.shape, dtype=m.dtype)  # row-major whatever the input's order, as the Rust kernel
    out[p] = m
    return out


def grouped_confusion(
    groups: np.ndarray,
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sample_weight: np.ndarray | None = None,
    *,
    max_cells: int,
    n_threads: int = 0,
) -> GroupedCounts | None:
    """The confusion table of every group over the ranges of the group values and labels, cut
    down to those that occur (None when that table would pass ``max_cells`` cells or the labels
    span more than 4095 values); weighted sums in the compiled kernel's chunks."""
    del n_threads
    for name, a in (("y_true", y_true), ("y_pred", y_pred), ("sample_weight", sample_weight)):
        check_same_length(name, None if a is None else len(a), "groups", len(groups))
    _check(y_true, y_pred, sample_weight)
    g_lo, g_hi = int(groups.min()), int(groups.max())
    l_lo, l_hi = min(int(y_true.min()), int(y_pred.min())), max(int(y_true.max()), int(y_pred.max()))
    g_span, l_span = g_hi - g_lo + 1, l_hi - l_lo + 1
    cells = g_span * l_span * l_span
    if l_span > 4095 or cells > max_cells:
        return None
    at = (groups.astype(np.int64) - g_lo) * l_span
    at += y_true.astype(np.int64) - l_lo
    at *= l_span
    at += y_pred.astype(np.int64) - l_lo
    counts = np.bincount(at, minlength=cells).astype(np.uint64).reshape(g_span, l_span, l_span)
    sums = None
    if sample_weight is not None:
        sums = _chunked_sums(at, sample_weight, cells).reshape(g_span, l_span, l_span)
        with np.errstate(over="ignore", invalid="ignore"):
            if not np.isfinite(sums.sum()):
                msg = (
                    "the sum of sample_weight is beyond the float64 range; divide every sample_weight by the same "
                    "constant (the metrics do not change)"
                )
                raise WeightError(msg)
    kept_groups = np.flatnonzero(counts.any(axis=(1, 2)))
    kept_labels = np.flatnonzero(counts.any(axis=(0, 2)) | counts.any(axis=(0, 1)))
    pick = np.ix_(kept_groups, kept_labels, kept_labels)
    return GroupedCounts(
        kept_groups.astype(np.int64) + g_lo,
        kept_labels.astype(np.int64) + l_lo,
        np.ascontiguousarray(counts[pick]),
        None if sums is None else np.ascontiguousarray(sums[pick]),
    )

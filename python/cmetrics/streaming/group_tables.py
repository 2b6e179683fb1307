"""Hard labels by group as one ``G x K x K`` table: every group's confusion matrix counted by
one kernel pass over a batch (no per-group state, no reordering of the rows), tables merged by
adding them, and the per-group metrics read off the whole table at once.

The table's rows are the groups in sorted order, its ``K x K`` slabs laid over the label set
of the state that holds it (``labels``); a group's own label set, when the labels are not fixed,
is the labels its rows hold (a label is in a group's report when a row of the group has it as
truth or prediction, as :func:`cmetrics.evaluate` of those rows alone would have it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from cmetrics._backend import resolve_backend
from cmetrics._base import validation
from cmetrics._base.aliases import F64, Backend, LabelKind
from cmetrics._base.config import check_classes, get_num_threads
from cmetrics._derive import replicate_metrics as rm
from cmetrics._derive.counted_table import string_codes
from cmetrics._results.grouped import GroupKey, sort_keys
from cmetrics.exceptions import LabelError, ValidationError
from cmetrics.streaming import group_values

#: The largest table (groups x labels x labels over the ranges of the raw values) counted
#: without encoding the group values first: one u64 table per thread, 128 MiB each at most.
RAW_CELLS = 1 << 24

U64 = npt.NDArray[np.uint64]


@dataclass(frozen=True)
class BatchTables:
    """One batch counted by group: its groups (sorted), its labels (sorted, the label kind's
    values), the ``G x K x K`` counts and weighted sums over those labels, and the kind of
    each grouping column."""

    keys: list[GroupKey]
    labels: np.ndarray
    kind: LabelKind
    counts: U64
    weighted: F64 | None
    group_kinds: tuple[str, ...]


def _int64(a: np.ndarray) -> npt.NDArray[np.int64] | npt.NDArray[np.int32] | None:
    """Integer values as the kernel's int32 / int64 (None for uint64 values beyond int64)."""
    if a.dtype in (np.int32, np.int64):
        return np.ascontiguousarray(a)
    if a.dtype == np.uint64 and a.size and int(a.max()) >= 1 << 63:
        return None
    return np.ascontiguousarray(a, dtype=np.int64)


def _label_codes(
    t: np.ndarray, p: np.ndarray, max_classes: int, backend: Backend
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, LabelKind, np.dtype[Any]]:
    """The labels as the kernel counts them: integer values as they are (``values`` None), or
    codes into ``values`` (sorted) for strings and integers beyond int64; with the label kind
    and the dtype the label set has (as :func:`cmetrics.evaluate` gives it)."""
    pair = validation.label_pair(t, p)
    if pair.kind == "str":
        ta, pb, values = string_codes(pair, backend, max_classes)
        return ta, pb, values, "str", np.dtype(np.str_)
    ti, pi = _int64(pair.y_true), _int64(pair.y_pred)
    if ti is not None and pi is not None and ti.dtype == pi.dtype:
        return ti, pi, None, "int", pair.out_dtype
    values, inverse = np.unique(np.concatenate([pair.y_true, pair.y_pred]), return_inverse=True)
    n = pair.y_true.shape[0]
    return inverse[:n].astype(np.int64), inverse[n:].astype(np.int64), values, "int", pair.out_dtype


def count_batch(
    t: np.ndarray,
    p: np.ndarray,
    groups: object,
    sample_weight: F64 | None,
    max_groups: int,
    max_classes: int,
    backend: Backend,
) -> BatchTables:
    """Count one batch's ``G x K x K`` table: integer group values and labels go to the kernel
    as they are when their ranges are narrow enough; anything else is encoded first (the
    limits on groups and cells checked before the table is made)."""
    n = int(t.shape[0])
    ta, pa, label_values, kind, dtype = _label_codes(t, p, max_classes, backend)
    be = resolve_backend(backend)
    threads = get_num_threads()
    counted = None
    keys: list[GroupKey] = []
    group_kinds: tuple[str, ...] = ("int",)
    if not isinstance(groups, tuple):
        raw = validation.as_1d(groups, "groups")
        if raw.dtype.kind in "iu" and raw.shape[0] == n:
            g = _int64(raw)
            if g is not None:
                cells = min(RAW_CELLS, max(1 << 20, n))
                counted = be.grouped_confusion(g, ta, pa, sample_weight, max_cells=cells, n_threads=threads)
                if counted is not None:
                    keys = counted.groups.tolist()
    if counted is None:
        enc = group_values.encode(groups, n, max_groups)
        if label_values is None:  # integer labels of a wide range: codes
            values, inverse = np.unique(np.concatenate([ta, pa]), return_inverse=True)
            ta, pa, label_values = inverse[:n].astype(np.int64), inverse[n:].astype(np.int64), values
        k = int(label_values.shape[0])
        check_classes(k, "the label set of the batch", max_classes)
        group_values.check_group_count(len(enc.keys), max_groups, k)
        codes = enc.codes.astype(np.int64)
        cells = max(len(enc.keys), 1) * k * k
        counted = be.grouped_confusion(codes, ta, pa, sample_weight, max_cells=cells, n_threads=threads)
        assert counted is not None  # the codes' ranges are those cells
        keys = [enc.keys[c] for c in counted.groups.tolist()]
        group_kinds = enc.kinds
    group_values.check_group_count(len(keys), max_groups, what="groups has")
    labels = counted.labels if label_values is None else label_values[counted.labels]
    check_classes(int(labels.shape[0]), "the label set of the batch", max_classes)
    return BatchTables(
        keys, np.asarray(labels).astype(dtype), kind, np.asarray(counted.counts), counted.weighted, group_kinds
    )


def label_positions(labels: np.ndarray, union: np.ndarray) -> npt.NDArray[np.intp]:
    """Where each of ``labels`` sits in ``union`` (LabelError naming those missing)."""
    if labels.shape == union.shape and np.array_equal(labels, union):
        return np.arange(union.shape[0])
    order = np.argsort(union, kind="stable")
    pos = order[np.minimum(np.searchsorted(union, labels, sorter=order), max(union.shape[0] - 1, 0))]
    if union.shape[0] == 0 or not np.array_equal(union[pos], labels):
        missing = labels[~np.isin(labels, union)].tolist()[:10]
        msg = (
            f"labels must include every label in the data; {missing} are missing. To restrict per-class outputs, "
            "pass labels= to the metric instead"
        )
        raise LabelError(msg)
    return np.asarray(pos, dtype=np.intp)


def embed(table: np.ndarray, labels: np.ndarray, union: np.ndarray) -> np.ndarray:
    """A ``G x K x K`` table over ``labels`` laid over the (larger) label set ``union``."""
    pos = label_positions(labels, union)
    if pos.shape[0] == union.shape[0]:
        return table
    k = union.shape[0]
    out = np.zeros((table.shape[0], k, k), dtype=table.dtype)
    out[:, pos[:, None], pos[None, :]] = table
    return out


@dataclass(frozen=True)
class GroupTables:
    """The groups' tables of a state: ``keys`` sorted, ``counts`` (and ``weighted``) of shape
    ``G x K x K`` over the state's labels."""

    keys: list[GroupKey]
    counts: U64
    weighted: F64 | None

    @classmethod
    def empty(cls, k: int, weighted: bool) -> GroupTables:
        return cls([], np.zeros((0, k, k), dtype=np.uint64), np.zeros((0, k, k)) if weighted else None)

    def __len__(self) -> int:
        return len(self.keys)

    def relabel(self, labels: np.ndarray, union: np.ndarray) -> GroupTables:
        """These tables over ``union`` (``labels``: the label set they are over now)."""
        if not self.keys:
            return GroupTables.empty(union.shape[0], self.weighted is not None)
        weighted = None if self.weighted is None else embed(self.weighted, labels, union)
        return GroupTables(self.keys, embed(self.counts, labels, union), weighted)

    def plus(self, keys: Sequence[GroupKey], counts: U64, weighted: F64 | None) -> GroupTables:
        """These tables with another set's added (same label set), keys merged in order."""
        if not self.keys:
            return GroupTables(list(keys), counts, weighted)
        if list(keys) == self.keys:
            both = None if self.weighted is None or weighted is None else self.weighted + weighted
            return GroupTables(self.keys, self.counts + counts, both)
        union = sort_keys(list(set(self.keys) | set(keys)))
        at = {key: i for i, key in enumerate(union)}
        mine = np.fromiter((at[key] for key in self.keys), dtype=np.intp, count=len(self.keys))
        theirs = np.fromiter((at[key] for key in keys), dtype=np.intp, count=len(keys))
        shape = (len(union), *counts.shape[1:])
        out = np.zeros(shape, dtype=np.uint64)
        out[mine] = self.counts
        out[theirs] += counts
        sums = None
        if self.weighted is not None and weighted is not None:
            sums = np.zeros(shape)
            sums[mine] = self.weighted
            sums[theirs] += weighted
        return GroupTables(union, out, sums)

    @staticmethod
    def marginals(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each group's true and predicted sums (``G x K`` each), in the table's type."""
        # einsum: several times faster than sum over a short last axis.
        return np.einsum("gij->gi", table), np.einsum("gij->gj", table)

    def total_weights(self) -> F64:
        """Each group's total weight (its row count without weights)."""
        table = self.counts if self.weighted is None else self.weighted
        return np.asarray(np.einsum("gij->g", table), dtype=np.float64)

    def group_table(self, i: int, fixed: bool) -> tuple[npt.NDArray[np.intp], U64, F64 | None]:
        """Group ``i``'s label positions (all with fixed labels, else those its rows hold) and
        its counts and weighted sums over them."""
        c = self.counts[i]
        pos = np.arange(c.shape[0]) if fixed else np.flatnonzero((c.sum(axis=1) > 0) | (c.sum(axis=0) > 0))
        sub = np.ix_(pos, pos)
        return pos, c[sub], None if self.weighted is None else self.weighted[i][sub]


def add_batch(
    tables: GroupTables | None,
    labels: np.ndarray | None,
    kind: LabelKind | None,
    fixed: bool,
    group_kinds: tuple[str, ...] | None,
    batch: BatchTables,
    max_groups: int,
) -> tuple[GroupTables, np.ndarray, U64]:
    """A state's tables (over ``labels``, of ``kind``; the label set ``fixed`` or growing) with
    a batch's added, checking first the kinds of labels and group values and the limits on
    groups and cells: the tables after, the label set after, and the batch's counts over it."""
    if group_kinds is not None and batch.group_kinds != group_kinds:
        msg = (
            f"earlier batches had group values of kinds {group_kinds}, this one {batch.group_kinds}; "
            "pass the same kind of group values (integers or strings, same columns) in every batch"
        )
        raise ValidationError(msg)
    if kind is not None and batch.kind != kind:
        msg = f"this batch has {batch.kind} labels but earlier ones had {kind} labels; use one kind throughout"
        raise LabelError(msg)
    if fixed and labels is not None:
        union = labels
    else:
        union = batch.labels if labels is None else np.union1d(labels, batch.labels)
    k = int(union.shape[0])
    counts = embed(batch.counts, batch.labels, union)
    weighted = None if batch.weighted is None else embed(batch.weighted, batch.labels, union)
    before = tables or GroupTables.empty(k, batch.weighted is not None)
    if labels is not None and len(before):
        before = before.relabel(labels, union)
    after = before.plus(batch.keys, counts, weighted)
    group_values.check_group_count(len(after), max_groups, k, "the batches have")
    return after, union, counts


def from_parts(
    parts: dict[GroupKey, tuple[np.ndarray | None, np.ndarray | None, F64 | None]], union: np.ndarray, weighted: bool
) -> GroupTables:
    """The tables of groups given as (labels, counts, weighted sums) each, over ``union``."""
    keys = sort_keys(list(parts))
    k = int(union.shape[0])
    counts = np.zeros((len(keys), k, k), dtype=np.uint64)
    sums = np.zeros((len(keys), k, k)) if weighted else None
    for i, key in enumerate(keys):
        labels, c, w = parts[key]
        assert labels is not None and c is not None  # a loaded group's checked tables
        pos = np.ix_(label_positions(labels, union), label_positions(labels, union))
        counts[i][pos] = c
        if sums is not None and w is not None:
            sums[i][pos] = w
    return GroupTables(keys, counts, sums)


#: The summary metrics read off the whole table at once (the others from each group's report).
TABLE_COLUMNS = frozenset(rm.TABLE_METRICS)


def summary_columns(tables: GroupTables, fixed: bool, names: Sequence[str]) -> dict[str, F64]:
    """The chosen metrics of :data:`TABLE_COLUMNS` for every group at once (the formulas of
    :func:`cmetrics._derive.replicate_metrics.table_metrics`, with each group's own label set
    when the labels are not fixed: labels absent from a group do not enter its averages), and
    ``n_samples``. Values where a group's report is undefined are NaN there as well."""
    # The marginals summed in the table's own type (counts exactly), then as float64.
    rows, cols = tables.marginals(tables.counts)
    present = np.ones(rows.shape, dtype=bool) if fixed else (rows > 0) | (cols > 0)
    table = tables.counts if tables.weighted is None else tables.weighted
    n, m = (rows, cols) if tables.weighted is None else tables.marginals(tables.weighted)
    tp = np.einsum("gii->gi", table).astype(np.float64)
    # Kappa's wrong weight summed cell by cell (a pass over the weighted table) only when asked for.
    weighted = tables.weighted
    errors = rm.off_diagonal(weighted) if weighted is not None and "cohen_kappa" in names else None
    metrics, _ = rm.marginal_metrics(
        tp, n.astype(np.float64), m.astype(np.float64), present, frozenset(names), errors=errors
    )
    scored = tables.total_weights() > 0  # a group without weight has no value at all
    out = {name: np.where(scored, metrics[name].value, np.nan) for name in names if name in metrics}
    if "n_samples" in names:
        out["n_samples"] = tables.total_weights()
    return out

"""Per-group evaluation: group values encoded to dense codes, rows split by code, and the
:class:`GroupedReport` of :func:`cmetrics.evaluate` ``(groups=...)`` and
:meth:`cmetrics.Evaluator.grouped_report`.

A group value is an integer or a string, or a tuple of them when rows are grouped by several
columns. The distinct values of a batch are found by one hashing pass (Arrow's dictionary
encoding), sorted (integers as integers, strings by code point; tuples element by element)
and numbered; one counting pass over the codes then gives each row its place in a layout
group by group (rows of a group keep their order), so that every group's rows are one
contiguous slice for the kernels.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from cmetrics import _checks
from cmetrics._checks import Backend
from cmetrics._config import get_num_threads, resolve_backend
from cmetrics._report import Report, _md, number, printable
from cmetrics.exceptions import LengthMismatchError, LimitExceededError, ValidationError

#: A group value: an integer or a string, or a tuple of them (grouping by several columns).
GroupKey: TypeAlias = int | str | tuple[int | str, ...]

#: Bins of each group's approximate ranking states, unless told otherwise: a group's
#: approximate class-ranking state then holds at most K x 1,025 entries (16 KiB per class),
#: where the 2^16 bins of the overall state would hold 1 MiB per class and group.
DEFAULT_GROUP_RANKING_BINS = 1 << 10

#: The default limit on the number of groups (see :func:`check_max_groups`).
DEFAULT_MAX_GROUPS = 10_000
#: The largest limit that may be set (every group keeps a state of its own).
MAX_GROUPS = 1 << 16
#: The most cells (groups x K x K) the grouped tables may hold: 2^27 cells are 2 GiB of
#: u64 counts and f64 sums together.
MAX_GROUP_CELLS = 1 << 27


def check_max_groups(max_groups: object) -> int:
    """``max_groups`` checked (None: the default, 10,000)."""
    if max_groups is None:
        return DEFAULT_MAX_GROUPS
    return _checks._integer_in(
        "max_groups", max_groups, 1, MAX_GROUPS, f"pass an integer from 1 to {MAX_GROUPS} (default 10,000)"
    )


def check_group_count(
    n_groups: int, max_groups: int, n_classes: int = 0, what: str = "groups has", ranking_bins: int | None = None
) -> None:
    """Refuse more groups than ``max_groups``, more group x class x class cells than
    :data:`MAX_GROUP_CELLS`, or (``ranking_bins``: the groups' approximate class ranking) more
    group x class x bin cells, before any per-group state is allocated."""
    if n_groups > max_groups:
        msg = (
            f"{what} {n_groups:,} distinct values, above max_groups={max_groups:,} (each group keeps its own "
            f"state: about 24 K^2 + 32 n_bins bytes, plus its ranking summary); raise max_groups= if that is "
            "intended, or group by a coarser column"
        )
        raise LimitExceededError(msg)
    cells = n_groups * n_classes * n_classes
    if cells > MAX_GROUP_CELLS:
        msg = (
            f"{n_groups:,} groups of {n_classes:,} classes need {cells:,} table cells (24 bytes each), above the "
            f"limit of {MAX_GROUP_CELLS:,}; group by a coarser column or score fewer classes"
        )
        raise LimitExceededError(msg)
    dense = 0 if ranking_bins is None else n_groups * n_classes * (ranking_bins + 1)
    if dense > MAX_GROUP_CELLS:
        msg = (
            f"{n_groups:,} groups of {n_classes:,} classes with group_ranking_bins={ranking_bins:,} need {dense:,} "
            f"class-ranking cells (16 bytes each, 32 with weights), above the limit of {MAX_GROUP_CELLS:,}; use "
            "fewer group_ranking_bins, group by a coarser column, or class_ranking='exact' or 'off'"
        )
        raise LimitExceededError(msg)


@dataclass(frozen=True)
class Encoded:
    """The groups of one batch: the distinct values in sorted order (``keys[c]`` is the
    value of code ``c``), each row's code, and the kind of each grouping column."""

    keys: list[GroupKey]
    codes: npt.NDArray[np.uint32]
    kinds: tuple[str, ...]


def _one_column(
    x: object, name: str, n: int, max_groups: int
) -> tuple[list[int] | list[str], npt.NDArray[np.uint32], str]:
    """One grouping column: its sorted distinct values, the row codes, and "int" or "str"
    (more than ``max_groups`` distinct values are refused before they are sorted)."""
    import pyarrow as pa

    a = _checks.as_1d(x, name)
    if a.shape[0] != n:
        msg = f"{name} has {a.shape[0]} rows but y_true has {n}; pass one group value per row"
        raise LengthMismatchError(msg)
    pair = _checks.label_pair(a, a, (name, name))
    values = pair.y_true
    if pair.kind == "str" and values.dtype.kind == "O":
        _checks.check_object_strings(values, name)
        # As fixed-width text, as labels are read: trailing NULs dropped as a <U array drops
        # them, and a lone surrogate (no UTF-8 text holds one) refused by name.
        values = values.astype(np.str_)
        _checks.check_text(values, name)
    if pair.kind == "int" and values.dtype.kind in "iu" and values.size:
        lo, hi = values.min(), values.max()
        if int(hi) - int(lo) < max(2 * n, 1 << 16):
            # Values in a short range (as group ids are): a count per value, no hashing.
            shifted = (values.astype(np.int64, copy=False) - np.int64(lo)).astype(np.intp, copy=False)
            seen = np.bincount(shifted) > 0
            present = np.flatnonzero(seen)
            check_group_count(present.size, max_groups, what=f"{name} has")
            code_of = (np.cumsum(seen, dtype=np.int64) - 1).astype(np.uint32)
            return [int(lo) + int(v) for v in present], code_of[shifted], "int"
    encoded = pa.array(values).dictionary_encode()
    check_group_count(len(encoded.dictionary), max_groups, what=f"{name} has")
    indices = encoded.indices.to_numpy(zero_copy_only=False)
    distinct = encoded.dictionary.to_pylist()
    if pair.kind == "int":
        distinct = [int(v) for v in distinct]
    order = sorted(range(len(distinct)), key=distinct.__getitem__)
    rank = np.empty(len(distinct), dtype=np.uint32)
    rank[np.asarray(order, dtype=np.intp)] = np.arange(len(distinct), dtype=np.uint32)
    codes = rank[indices]
    return [distinct[i] for i in order], codes, pair.kind


def encode(groups: object, n: int, max_groups: int, n_classes: int = 0) -> Encoded:
    """Encode ``groups`` (one array-like of n values, or a tuple of them) to sorted keys and
    row codes, refusing more than ``max_groups`` distinct values."""
    columns: Sequence[object] = groups if isinstance(groups, tuple) else (groups,)
    if not columns:
        msg = "groups is an empty tuple; pass one array of group values, or a tuple of arrays"
        raise ValidationError(msg)
    names = ["groups"] if len(columns) == 1 else [f"groups[{i}]" for i in range(len(columns))]
    parts = [_one_column(col, name, n, max_groups) for col, name in zip(columns, names, strict=True)]
    kinds = tuple(p[2] for p in parts)
    if len(parts) == 1:
        keys, codes, _ = parts[0]
        check_group_count(len(keys), max_groups, n_classes)
        return Encoded(list(keys), codes, kinds)
    # Several columns: codes combined in mixed radix (sorted as the tuples are), re-encoded.
    combined = np.zeros(n, dtype=np.uint64)
    radix = 1
    for keys_i, codes_i, _ in parts:
        radix *= max(len(keys_i), 1)
        if radix >= 2**63:
            msg = "the grouping columns have too many combinations of values; group by fewer columns"
            raise LimitExceededError(msg)
        combined = combined * np.uint64(len(keys_i)) + codes_i.astype(np.uint64)
    keys_c, codes, _ = _one_column(combined.astype(np.int64), "groups", n, max_groups)
    check_group_count(len(keys_c), max_groups, n_classes)
    out: list[GroupKey] = []
    for value in keys_c:
        rest = int(value)
        digits = []
        for keys_i, _, _ in reversed(parts):
            rest, d = divmod(rest, len(keys_i))
            digits.append(keys_i[d])
        out.append(tuple(reversed(digits)))
    return Encoded(out, codes, kinds)


def split(
    codes: npt.NDArray[np.uint32], n_groups: int, backend: Backend = "auto"
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Each row's position when the rows are laid out group by group (rows of a group keep
    their order) and the offsets of each group's slice in that layout: one counting pass of
    the compiled kernel, no sort."""
    return resolve_backend(backend).group_positions(codes, n_groups, get_num_threads())


def scatter(a: np.ndarray, positions: npt.NDArray[np.int64], backend: Backend = "auto") -> np.ndarray:
    """The rows of ``a`` laid out at ``positions`` (from :func:`split`). Each row is read in
    order and written to its group's next slot: sequential reads and one write stream per
    group, where gathering by a row order would read at random. A float matrix comes back
    row-major, so that each group's rows are one contiguous block (through the compiled
    kernel, which also reads column-major matrices a block of rows at a time); 1-D arrays
    go through numpy."""
    if a.ndim == 2 and a.dtype in (np.float32, np.float64) and a.shape[1]:
        m = a if a.flags.c_contiguous or a.flags.f_contiguous else np.ascontiguousarray(a)
        return resolve_backend(backend).scatter_rows(m, positions, get_num_threads())
    out = np.empty_like(a)
    out[positions] = a
    return out


def key_json(key: GroupKey) -> int | str | list[int | str]:
    """A group value as JSON (tuples become lists)."""
    return list(key) if isinstance(key, tuple) else key


def key_text(key: GroupKey) -> str:
    """A group value as text for a table (tuples joined by " / ")."""
    if isinstance(key, tuple):
        return " / ".join(printable(k) for k in key)
    return printable(key)


def sort_keys(keys: Sequence[GroupKey]) -> list[GroupKey]:
    """Group values in report order: integers as integers, strings by code point."""
    return sorted(keys)  # one kind per position, checked on entry


#: The summary columns when none are chosen: what the report holds of these.
DEFAULT_SUMMARY = (
    "accuracy",
    "f1_macro",
    "matthews_corrcoef",
    "log_loss",
    "brier_score",
    "expected_calibration_error",
    "roc_auc_ovr",
    "auroc_confidence",
)


class GroupedReport:
    """The report of every group, and of all rows together.

    ``grouped.overall`` is the :class:`cmetrics.Report` of all rows (what :func:`cmetrics.evaluate`
    gives without ``groups``); ``grouped[key]`` the report of one group's rows (what
    :func:`cmetrics.evaluate` gives on those rows alone), for each group value ``key`` (a tuple
    when grouping by several columns). Iterating gives the group values in sorted order.

    Examples
    --------
    >>> import cmetrics
    >>> g = cmetrics.evaluate([0, 1, 1, 0], y_pred=[0, 1, 0, 0], groups=["en", "en", "fr", "fr"])
    >>> g.overall.accuracy, g["en"].accuracy, g["fr"].accuracy
    (0.75, 1.0, 0.5)
    >>> g.summary(["accuracy"])
    {'en': {'n_samples': 2.0, 'accuracy': 1.0}, 'fr': {'n_samples': 2.0, 'accuracy': 0.5}}
    """

    def __init__(self, overall: Report, groups: dict[GroupKey, Report], group_by: Sequence[str] = ("groups",)) -> None:
        #: The report of all rows.
        self.overall = overall
        #: The report of each group, by group value, in sorted order.
        self.groups: dict[GroupKey, Report] = {k: groups[k] for k in sort_keys(list(groups))}
        #: The names of the grouping columns.
        self.group_by: tuple[str, ...] = tuple(group_by)

    def __getitem__(self, key: GroupKey) -> Report:
        try:
            return self.groups[key]
        except KeyError:
            shown = [key_text(k) for k in list(self.groups)[:10]]
            msg = f"no group {key!r}; the groups are {shown}{' ...' if len(self.groups) > 10 else ''}"
            raise KeyError(msg) from None

    def __len__(self) -> int:
        return len(self.groups)

    def __iter__(self) -> Iterator[GroupKey]:
        return iter(self.groups)

    def __contains__(self, key: object) -> bool:
        return key in self.groups

    def summary(self, metrics: Sequence[str] | None = None) -> dict[str, dict[str, float]]:
        """One row per group (by its value as text): ``n_samples`` and the chosen metrics
        (default: those of :data:`DEFAULT_SUMMARY` the reports hold). Unknown metric names
        raise :class:`~cmetrics.exceptions.ValidationError` listing the available ones."""
        available = self.overall.metrics
        if metrics is None:
            chosen = [m for m in DEFAULT_SUMMARY if m in available]
        else:
            chosen = list(metrics)
            unknown = [m for m in chosen if m not in available and m != "n_samples"]
            if unknown:
                msg = f"no metric {unknown[0]!r} in these reports; choose from {sorted(available)}"
                raise ValidationError(msg)
        texts = [key_text(k) for k in self.groups]
        if len(set(texts)) < len(texts):  # tuples whose parts hold " / ": their reprs differ
            texts = [printable(repr(k)) for k in self.groups]
        rows: dict[str, dict[str, float]] = {}
        for text, rep in zip(texts, self.groups.values(), strict=True):
            values = rep.metrics
            row = {"n_samples": float(rep.n_samples)}
            row.update({m: values.get(m, math.nan) for m in chosen if m != "n_samples"})
            rows[text] = row
        return rows

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict: the overall report's fields, ``group_by`` (the column names)
        and ``groups``, a list of ``{"group": value, "report": {...}}`` in sorted order."""
        out = self.overall.to_dict()
        out["group_by"] = list(self.group_by)
        out["groups"] = [{"group": key_json(k), "report": r.to_dict()} for k, r in self.groups.items()]
        return out

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`to_dict` as JSON text (``kwargs`` go to :func:`json.dumps`)."""
        kwargs.setdefault("indent", 2)
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    def summary_markdown(self, metrics: Sequence[str] | None = None) -> str:
        """:meth:`summary` as a Markdown table."""
        rows = self.summary(metrics)
        cols = list(next(iter(rows.values()))) if rows else ["n_samples"]
        head = " / ".join(self.group_by)
        lines = [f"| {_md(head)} | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
        lines += [f"| {_md(k)} | " + " | ".join(number(v[c]) for c in cols) + " |" for k, v in rows.items()]
        return "\n".join(lines) + "\n"

    def to_markdown(self, metrics: Sequence[str] | None = None) -> str:
        """The overall report, the per-group summary table, then every group's full report."""
        by = " / ".join(self.group_by)
        parts = ["## All rows", "", self.overall.to_markdown(), f"## Per group ({_md(by)})", ""]
        parts.append(self.summary_markdown(metrics))
        for key, rep in self.groups.items():
            parts += [f"## {_md(by)} = {_md(key_text(key))}", "", rep.to_markdown()]
        return "\n".join(parts)

    def __repr__(self) -> str:
        return f"GroupedReport({len(self.groups):,} groups by {', '.join(self.group_by)}; overall {self.overall!r})"

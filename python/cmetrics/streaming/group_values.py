"""Group values: encoded to dense codes, rows laid out group by group, and the limits on how
many groups (and how many per-group table cells) a grouped evaluation holds.

A group value is an integer or a string, or a tuple of them when rows are grouped by several
columns. The distinct values of a batch are found by one hashing pass (Arrow's dictionary
encoding), sorted (integers as integers, strings by code point; tuples element by element)
and numbered; one counting pass over the codes then gives each row its place in a layout
group by group (rows of a group keep their order), so that every group's rows are one
contiguous slice for the kernels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cmetrics._backend import resolve_backend
from cmetrics._base import validation, value_checks
from cmetrics._base.aliases import Backend
from cmetrics._base.config import get_num_threads
from cmetrics._results.grouped import GroupKey
from cmetrics.exceptions import LengthMismatchError, LimitExceededError, ValidationError

#: The most cells (groups x K x K) the grouped tables may hold: 2^27 cells are 2 GiB of
#: u64 counts and f64 sums together (1 GiB of counts without weights).
MAX_GROUP_CELLS = 1 << 27


def check_group_count(
    n_groups: int, max_groups: int, n_classes: int = 0, what: str = "groups has", ranking_bins: int | None = None
) -> None:
    """Refuse more groups than ``max_groups``, more group x class x class cells than
    :data:`MAX_GROUP_CELLS`, or (``ranking_bins``: the groups' approximate class ranking) more
    group x class x bin cells, before any per-group state is allocated."""
    if n_groups > max_groups:
        msg = (
            f"{what} {n_groups:,} distinct values, above max_groups={max_groups:,} (each group keeps its own "
            "tables: 8 K^2 bytes of counts, more with weights, probabilities or rankings); raise max_groups= if "
            "that is intended, or group by a coarser column"
        )
        raise LimitExceededError(msg)
    cells = n_groups * n_classes * n_classes
    if cells > MAX_GROUP_CELLS:
        limit = MAX_GROUP_CELLS * 16 / 2**30
        msg = (
            f"{n_groups:,} groups of {n_classes:,} classes need {cells:,} table cells ({cells * 16 / 2**30:,.1f} GiB "
            f"of counts and weighted sums), above the limit of {MAX_GROUP_CELLS:,} cells ({limit:g} GiB); group by "
            "a coarser column or score fewer classes"
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
    import pyarrow as pa  # imported on first use, so that `import cmetrics` does not load Arrow

    a = validation.as_1d(x, name)
    if a.shape[0] != n:
        msg = f"{name} has {a.shape[0]} rows but y_true has {n}; pass one group value per row"
        raise LengthMismatchError(msg)
    pair = validation.label_pair(a, a, (name, name))
    values = pair.y_true
    if pair.kind == "str" and values.dtype.kind == "O":
        value_checks.check_object_strings(values, name)
        # As fixed-width text, as labels are read: trailing NULs dropped as a <U array drops
        # them, and a lone surrogate (no UTF-8 text holds one) refused by name.
        values = values.astype(np.str_)
        value_checks.check_text(values, name)
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

"""The Poisson bootstrap state of an :class:`~cmetrics.Evaluator` created with ``bootstrap=N``
(docs/definitions.md §11.1): for each of the N replicates, the sums every metric of the
report is derived from (confusion cells and, with probabilities, the probabilistic confusion
matrix, log-loss and Brier sums), each row weighted by its Poisson(1) draw from the
counter-based stream keyed by ``(seed, global row index, replicate)``.

A batch's rows are numbered from ``row_offset`` (by default the number of rows the
Evaluator holds), so the replicates do not depend on how the rows were cut into batches or
partitions: states of disjoint row ranges merge by adding their sums, and a merge of states
whose row ranges overlap (two partitions both numbered from 0) is refused, since their rows
would share their draws. The state is ``N x width`` floats (``width = K^2``, or
``2 K^2 + 3`` with probabilities) plus the list of row ranges it covers.

A grouped Evaluator keeps one such state per group beside its own: each group's rows are
drawn with their global indices, so a group's replicates are those its rows have in the
replicates of all rows. A group's state keeps no ranges (its rows are scattered through
its parent's, whose ranges guard the merges).
"""

from __future__ import annotations

import bisect
from collections.abc import Container
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from cmetrics._backend import resolve_backend
from cmetrics._base import validation
from cmetrics._base.aliases import F64, Backend
from cmetrics._base.config import get_num_threads
from cmetrics._derive import replicate_metrics as rm
from cmetrics._results.grouped import GroupKey
from cmetrics._results.intervals import BootstrapResult, Provenance
from cmetrics.exceptions import LimitExceededError, StateError, ValidationError
from cmetrics.streaming import group_values
from cmetrics.uncertainty.intervals import check_level
from cmetrics.uncertainty.schemes import (
    Codes,
    Design,
    Encoded,
    Model,
    check_resamples,
    check_seed,
    column_sums,
    counted_sums,
    design_intervals,
    encode_model,
    layout,
    package_version,
    row_values,
)

#: The most replicate sums (replicates x width) an Evaluator keeps: 2^27 floats, 1 GiB.
MAX_REPLICATE_CELLS = 1 << 27


def check_options(n_resamples: object, seed: object, confidence_level: object) -> tuple[int, int, float]:
    """``bootstrap=``, ``seed=`` and ``confidence_level=`` of an Evaluator, checked."""
    return check_resamples(n_resamples, "bootstrap"), check_seed(seed), check_level(confidence_level)  # type: ignore[arg-type]


#: The version of the Poisson row weights this cmetrics draws (docs/definitions.md §11.2): 2 since
#: each weight reads a 16-bit half of a Philox word (eight weights a block); 1 before, a whole word
#: (four a block). A state records the version its sums were drawn with: one of an earlier version
#: reports its intervals, but takes no new rows and merges only with states of its version.
ROW_WEIGHTS_VERSION = 2


@dataclass
class ReplicateState:
    """The replicate sums of the rows added so far, and the global row ranges they cover."""

    n_resamples: int
    seed: int
    confidence_level: float
    k: int
    proba: bool
    sums: F64 = field(repr=False)
    full: F64 = field(repr=False)
    #: Disjoint ``[start, end)`` ranges of global row indices, sorted, adjacent ones joined.
    ranges: list[tuple[int, int]] = field(default_factory=list)
    #: The version of the row weights the sums were drawn with (:data:`ROW_WEIGHTS_VERSION`).
    weights: int = ROW_WEIGHTS_VERSION

    @classmethod
    def empty(cls, n_resamples: int, seed: int, confidence_level: float, k: int, proba: bool) -> ReplicateState:
        width = layout(k, proba).width
        if n_resamples * width > MAX_REPLICATE_CELLS:
            msg = (
                f"bootstrap={n_resamples} with {k} classes keeps {n_resamples} x {width} replicate sums, more than "
                f"{MAX_REPLICATE_CELLS:,}; ask for fewer replicates"
            )
            raise LimitExceededError(msg)
        return cls(n_resamples, seed, confidence_level, k, proba, np.zeros((n_resamples, width)), np.zeros(width))

    @property
    def n_rows(self) -> int:
        return sum(end - start for start, end in self.ranges)

    def batch(
        self,
        truth: Codes,
        model: Model,
        weight: F64 | None,
        first_row: int,
        backend: Backend,
    ) -> tuple[F64, F64, tuple[int, int]]:
        """A batch's replicate sums, full sums and row range (nothing kept yet)."""
        self.check_drawable()
        n = truth.size
        if isinstance(first_row, bool) or not isinstance(first_row, (int, np.integer)) or first_row < 0:
            msg = f"row_offset={first_row!r} is invalid; pass the global index of the batch's first row (>= 0)"
            raise ValidationError(msg)
        span = (int(first_row), int(first_row) + n)
        if span[1] > 1 << 63:
            msg = f"row_offset={first_row} puts rows past 2^63; pass a smaller row_offset"
            raise ValidationError(msg)
        self._check_disjoint([span], "row_offset")
        lay = layout(self.k, self.proba)
        enc = Encoded(truth, [model], np.arange(self.k), weight, np.zeros(n, dtype=np.int64), 1)
        values, segments = row_values(enc, model, lay, backend)
        values = np.ascontiguousarray(values)
        be = resolve_backend(backend)
        sums = be.replicate_sums(
            values, segments, int(first_row), self.seed, self.n_resamples, lay.width, get_num_threads()
        )
        full = column_sums(values, segments, lay.width, counted_sums(enc, [lay], [len(segments)]))[0]
        return sums, full, span

    def group_batches(
        self,
        truth: Codes,
        model: Model,
        weight: F64 | None,
        first_row: int,
        order: npt.NDArray[np.int64],
        offsets: npt.NDArray[np.int64],
        backend: Backend,
    ) -> list[tuple[F64, F64]]:
        """Each group's replicate sums and full sums for a batch whose first row has the global
        index ``first_row`` (checked by :meth:`batch`): ``order`` lists the batch's rows group
        by group, ``offsets`` where each group's begin. A row's draws are keyed by its global
        index, so a group's sums are those of its rows wherever they lie in the batch."""
        self.check_drawable()
        lay = layout(self.k, self.proba)
        enc = Encoded(truth, [model], np.arange(self.k), weight, np.zeros(truth.size, dtype=np.int64), 1)
        values, segments = row_values(enc, model, lay, backend)
        be = resolve_backend(backend)
        out: list[tuple[F64, F64]] = []
        for lo, hi in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True):
            rows = order[lo:hi]
            part = np.ascontiguousarray(values[rows])
            cols = [(length, c if isinstance(c, int) else np.ascontiguousarray(c[rows])) for length, c in segments]
            global_rows = rows.astype(np.uint64) + np.uint64(first_row)
            sums = be.replicate_sums(part, cols, global_rows, self.seed, self.n_resamples, lay.width, get_num_threads())
            out.append((sums, column_sums(part, cols, lay.width)[0]))
        return out

    def keep(self, sums: F64, full: F64, spans: list[tuple[int, int]]) -> None:
        """Add a batch's (or another state's) sums and rows."""
        self.sums += sums
        self.full += full
        self.ranges = _joined(self.ranges + spans)

    def _check_disjoint(self, spans: list[tuple[int, int]], what: str) -> None:
        mine = self.ranges
        for start, end in spans:
            if start == end:
                continue
            at = bisect.bisect_right(mine, (start, 1 << 64))
            before = mine[at - 1] if at > 0 else None
            after = mine[at] if at < len(mine) else None
            if (before is not None and before[1] > start) or (after is not None and after[0] < end):
                msg = (
                    f"rows {start}..{end - 1} were already added to this bootstrap state (their Poisson draws would "
                    f"repeat); pass {what}= with the global index of the batch's first row, distinct for every "
                    "batch and partition"
                )
                raise StateError(msg)

    def copy(self) -> ReplicateState:
        return ReplicateState(
            self.n_resamples,
            self.seed,
            self.confidence_level,
            self.k,
            self.proba,
            self.sums.copy(),
            self.full.copy(),
            list(self.ranges),
            self.weights,
        )

    def check_drawable(self) -> None:
        """A :class:`StateError` when this state's sums were drawn with other row weights than
        this cmetrics draws (a state saved by an earlier version takes no new rows)."""
        if self.weights != ROW_WEIGHTS_VERSION:
            msg = (
                f"this bootstrap state was drawn with the row weights of version {self.weights} (an earlier "
                f"cmetrics); this one draws version {ROW_WEIGHTS_VERSION}, so the state reports its intervals "
                "but takes no new rows; rebuild it from its rows with this cmetrics"
            )
            raise StateError(msg)

    def merge(self, other: ReplicateState) -> None:
        """Add another state of disjoint rows (same replicates, seed and classes)."""
        self.check_mergeable(other)
        self.keep(other.sums, other.full, other.ranges)

    def check_mergeable(self, other: ReplicateState) -> None:
        """A :class:`StateError` unless ``other`` may be merged into this state."""
        if self.weights != other.weights:
            msg = (
                f"cannot merge bootstrap states drawn with different row weights (versions {self.weights} and "
                f"{other.weights}): a state saved by an earlier cmetrics keeps its intervals but merges only with "
                "states of its version; rebuild it from its rows with this cmetrics"
            )
            raise StateError(msg)
        mine = (self.n_resamples, self.seed, self.k, self.proba)
        theirs = (other.n_resamples, other.seed, other.k, other.proba)
        if mine != theirs:
            msg = (
                f"cannot merge bootstrap states of different (replicates, seed, classes, probabilities): {mine} and "
                f"{theirs}; create every Evaluator with the same bootstrap= and seed="
            )
            raise StateError(msg)
        self._check_disjoint(other.ranges, "row_offset")

    def intervals(self, labels: list[str]) -> BootstrapResult:
        """Percentile intervals of every metric the sums give (and per class)."""
        lay = layout(self.k, self.proba)
        chosen = list(rm.TABLE_METRICS) + list(rm.TABLE_PER_CLASS)
        if self.proba:
            chosen += list(rm.PROB_METRICS) + list(rm.PROB_PER_CLASS)

        def no_jackknife(metric: object) -> tuple[F64, F64 | None]:
            msg = "method='bca' needs the rows; an Evaluator keeps sums only"  # pragma: no cover - never asked
            raise ValidationError(msg)

        sums = self.sums
        design = Design(self.full[None, :], lambda: sums, no_jackknife, "poisson")
        prov = Provenance(
            "percentile", "poisson", self.n_resamples, self.seed, self.confidence_level, False, package_version()
        )
        return design_intervals(design, self.k, lay, labels, chosen, prov, False)


def _joined(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted ranges with adjacent ones joined (empty ones dropped)."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(s for s in spans if s[0] < s[1]):
        if out and out[-1][1] == start:
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


@dataclass(frozen=True)
class Rows:
    """A batch as the replicate kernels take it, with the classes and the backend."""

    y_true: np.ndarray
    y_pred: ArrayLike | None
    y_proba: ArrayLike | None
    sample_weight: ArrayLike | None
    labels: np.ndarray
    backend: Backend

    @cached_property
    def encoded(self) -> tuple[npt.NDArray[np.int64], Model, F64 | None]:
        """Truth codes, the model and the weights, made once for the batch's sums and its
        groups' sums."""
        truth, model, _ = encode_model(self.y_true, self.y_pred, self.y_proba, self.labels, self.backend)
        return truth, model, validation.weights(self.sample_weight, truth.size)

    def empty_state(self, options: tuple[int, int, float]) -> ReplicateState:
        n_resamples, seed, level = options
        return ReplicateState.empty(n_resamples, seed, level, int(self.labels.shape[0]), self.y_proba is not None)


def batch_of(
    state: ReplicateState | None, options: tuple[int, int, float], rows: Rows, row_offset: int | None
) -> tuple[ReplicateState, tuple[F64, F64, tuple[int, int]]]:
    """The replicate state to keep (``state``, or a new one) and a batch's sums, full sums and
    row range (nothing kept yet); the rows follow those of ``state`` unless ``row_offset``."""
    state = state or rows.empty_state(options)
    if row_offset is None:
        row_offset = state.ranges[-1][1] if state.ranges else 0
    truth, model, w = rows.encoded
    return state, state.batch(truth, model, w, row_offset, rows.backend)


def groups_of(
    options: tuple[int, int, float],
    rows: Rows,
    groups: ArrayLike | tuple[ArrayLike, ...],
    known: tuple[int, Container[GroupKey]],
    max_groups: int,
    first_row: int,
) -> dict[GroupKey, tuple[F64, F64]]:
    """Each group's replicate sums and full sums for a batch whose first row has the global
    index ``first_row`` (nothing kept yet), within the limit on the sums that the ``known``
    groups (their number, their values), the batch's new ones and all rows keep together."""
    n_resamples = options[0]
    k = int(rows.labels.shape[0])
    n = int(rows.y_true.shape[0])
    enc = group_values.encode(groups, n, max_groups, n_classes=k)
    count = known[0] + sum(key not in known[1] for key in enc.keys)
    width = layout(k, rows.y_proba is not None).width
    if (count + 1) * n_resamples * width > MAX_REPLICATE_CELLS:
        msg = (
            f"bootstrap={n_resamples} over {count} groups keeps {n_resamples} x {width} replicate sums per group, "
            f"{(count + 1) * n_resamples * width:,} in all, more than {MAX_REPLICATE_CELLS:,}; ask for fewer "
            "replicates or groups, or score without bootstrap= and give each group's report the intervals of its "
            "counts with cmetrics.report_intervals"
        )
        raise LimitExceededError(msg)
    positions, offsets = group_values.split(enc.codes, len(enc.keys), rows.backend)
    order = np.empty(n, dtype=np.int64)
    order[positions] = np.arange(n, dtype=np.int64)
    truth, model, w = rows.encoded
    parts = rows.empty_state(options).group_batches(truth, model, w, first_row, order, offsets, rows.backend)
    return dict(zip(enc.keys, parts, strict=True))


def kept(
    state: ReplicateState | None, options: tuple[int, int, float] | None, rows: Rows, sums: F64, full: F64
) -> ReplicateState:
    """A group's replicate state (``state``, or a new one) with a batch's sums added; a group's
    state keeps no row ranges."""
    assert options is not None  # only a state with bootstrap options has groups' sums
    state = state or rows.empty_state(options)
    state.keep(sums, full, [])
    return state

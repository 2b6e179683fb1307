"""The state of one set of rows: the tables and accumulators a batch adds to, their merge, and
the :class:`~cmetrics.Report` they give. :class:`RowState` is the part of
:class:`~cmetrics.Evaluator` that knows nothing of groups; the grouped state builds on it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._backend import resolve_backend
from cmetrics._base import validation
from cmetrics._base.aliases import F64, Backend, Bools, LabelKind, RankingMode, ZeroDivision
from cmetrics._base.config import check_classes, get_num_threads
from cmetrics._derive import probability_pass, ranking_walk
from cmetrics._derive.counted_table import CountedTable
from cmetrics._derive.multiclass_ranking import class_ranking_values, in_place
from cmetrics._kernels import BinaryRanking, CurvePoints, Groups, ProbAccumulators, RankingState
from cmetrics._results.report import Report, build_report
from cmetrics.exceptions import LabelError, StateError, ValidationError, WeightError
from cmetrics.streaming import group_values
from cmetrics.streaming.dense_ranking import DenseClassRanking, dense_fits
from cmetrics.streaming.settings import EvaluationSettings

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class RankingSummary:
    """Distinct confidence values in increasing order, with the number of correct
    (``n_pos``) and wrong (``n_neg``) rows at each, and their weights when rows are
    weighted: everything the ranking metrics need, exactly."""

    values: np.ndarray
    n_pos: np.ndarray
    n_neg: np.ndarray
    w_pos: np.ndarray | None = None
    w_neg: np.ndarray | None = None

    @property
    def weighted(self) -> bool:
        return self.w_pos is not None

    def __len__(self) -> int:
        return int(self.values.shape[0])

    @property
    def nbytes(self) -> int:
        """Memory held by the summary."""
        return sum(a.nbytes for a in self.groups() if a is not None)

    def groups(self) -> Groups:
        """The summary as the kernels' tie groups."""
        return Groups(self.values, self.n_pos, self.n_neg, self.w_pos, self.w_neg)

    def walk(self, backend: Backend = "auto") -> BinaryRanking:
        """The ranking walk over the groups (the pair counts and curve areas of every ranking metric)."""
        return resolve_backend(backend).walk_groups(self.groups(), True)


class RowState:
    """What the rows added so far accumulated: the hard confusion table (or the probability
    pass's accumulators), the ranking state of the top-label confidences, and with
    probabilities the rank histogram and the class-ranking states. Batches add to it, another
    state merges into it, and :meth:`report` derives every metric from it."""

    def __init__(self, settings: EvaluationSettings, labels: np.ndarray | None, kind: LabelKind | None) -> None:
        #: The settings (frozen; :meth:`EvaluationSettings.make`).
        self.settings = settings
        self._labels: np.ndarray | None = labels
        self._kind: LabelKind | None = kind
        self._fixed = labels is not None
        # Set by the first batch: "proba" or "hard"; weights; a confidence with hard labels.
        self._mode: str | None = None
        self._weighted: bool | None = None
        self._has_confidence = False
        #: Rows added so far.
        self.n_rows = 0
        self._acc: ProbAccumulators | None = None
        self._hard_counts: np.ndarray | None = None
        self._hard_weighted: F64 | None = None
        # The backend's GroupState (exact tie groups of the ranking rows), made by the first batch.
        self._rank: RankingState | None = None
        # Grouped probabilities in the exact mode: the groups' states hold every ranking row,
        # so the state of all rows is their union, made when it is read (_overall_rank), not
        # fed the rows a second time; the report walks the union without making it.
        self._rank_stale = False
        # With probabilities: the weight of rows by the rank of their true class (top-k
        # accuracy), and one GroupState per column against "row is of this class".
        self._rank_hist: F64 | None = None
        self._class_rank: list[RankingState] | None = None
        # The approximate class-ranking state as dense tables (instead of _class_rank) when
        # K x (bins + 1) fits (dense_fits), and always on the groups of a grouped Evaluator,
        # whose batches are binned for all groups at once by their parent (_binned_by_parent).
        self._dense: DenseClassRanking | None = None
        self._binned_by_parent = False

    @property
    def labels(self) -> list[Any] | None:
        """The classes counted so far, in the order of the tables' rows and the probability
        columns (None before the first batch when none were given)."""
        return None if self._labels is None else np.asarray(self._labels).tolist()

    # -- the settings, read through -------------------------------------------------------

    @property
    def n_bins(self) -> int:
        return self.settings.n_bins

    @property
    def zero_division(self) -> ZeroDivision:
        return self.settings.zero_division

    @property
    def ranking(self) -> RankingMode:
        return self.settings.ranking

    @property
    def ranking_bins(self) -> int:
        return self.settings.ranking_bins

    @property
    def top_k(self) -> int:
        return self.settings.top_k

    @property
    def class_ranking(self) -> RankingMode:
        return self.settings.class_ranking

    @property
    def max_classes(self) -> int:
        return self.settings.max_classes

    @property
    def max_groups(self) -> int:
        return self.settings.max_groups

    @property
    def group_ranking_bins(self) -> int:
        return self.settings.group_ranking_bins

    @property
    def backend(self) -> Backend:
        return self.settings.backend

    @backend.setter
    def backend(self, backend: Backend) -> None:
        self.settings = self.settings.with_backend(backend)

    # -- accumulation ---------------------------------------------------------------------

    def _added(self, mode: str, weighted: bool, has_confidence: bool, rows: int) -> None:
        self._mode, self._weighted, self._has_confidence = mode, weighted, has_confidence
        self.n_rows += rows

    def _check_same_shape(self, mode: str, weighted: bool, has_confidence: bool) -> None:
        if self._mode is None:
            return
        if mode != self._mode:
            had = "y_proba" if self._mode == "proba" else "y_pred without y_proba"
            msg = f"earlier batches had {had}; pass the same inputs in every batch"
            raise ValidationError(msg)
        if weighted != self._weighted:
            msg = (
                f"earlier batches were {'' if self._weighted else 'not '}weighted; pass sample_weight in "
                "every batch or in none"
            )
            raise ValidationError(msg)
        if has_confidence != self._has_confidence:
            msg = "pass confidence in every batch or in none"
            raise ValidationError(msg)

    def _proba_inputs(
        self, t: np.ndarray, y_proba: ArrayLike, y_pred: ArrayLike | None, sample_weight: ArrayLike | None
    ) -> probability_pass.ProbInputs:
        labels = self._labels
        if labels is None:
            k = validation.proba_array(y_proba, t.shape[0], self.max_classes).shape[1]
            if t.dtype.kind in "UOS":
                msg = (
                    "y_true holds strings but the Evaluator has no labels; pass labels= naming the class "
                    "of each probability column"
                )
                raise LabelError(msg)
            labels = np.arange(k)
        return probability_pass.prob_inputs(
            t, y_proba, labels=labels, y_pred=y_pred, sample_weight=sample_weight, backend=self.backend
        )

    def _accumulate(self, inp: probability_pass.ProbInputs) -> ProbAccumulators:
        """The probability pass over validated inputs (keeping each row's confidence for the ranking)."""
        return probability_pass.accumulate(
            inp, backend=self.backend, n_bins=self.n_bins, validate=True, keep_confidence=self.ranking != "off"
        )

    def _update_proba(
        self, t: np.ndarray, y_proba: ArrayLike, y_pred: ArrayLike | None, sample_weight: ArrayLike | None
    ) -> None:
        inp = self._proba_inputs(t, y_proba, y_pred, sample_weight)
        self._add_proba(inp, self._accumulate(inp))

    def _add_proba(
        self, inp: probability_pass.ProbInputs, acc: ProbAccumulators, hist: F64 | None = None, ranked: bool = False
    ) -> F64:
        """Add a batch's probability pass and its ranking rows (unless ``ranked``: already
        added); returns the batch's rank histogram (``hist``, when given, is that histogram,
        already counted)."""
        if self.ranking != "off" and not ranked:
            self._add_ranking(acc.correct, acc.confidence, inp.sample_weight)
        hist = self._add_class_ranking(inp.y_true, inp.y_proba, inp.sample_weight, hist)
        if self._labels is None:
            self._labels, self._kind = np.asarray(inp.labels), inp.kind
            self._fixed = True
        self._acc = probability_pass.add_accumulators(self._acc, acc)
        return hist

    def _update_hard(
        self,
        t: np.ndarray,
        y_pred: ArrayLike | None,
        confidence: ArrayLike | None,
        sample_weight: ArrayLike | None,
        n_groups: int = 0,
    ) -> None:
        """Add a batch of hard labels; with ``n_groups`` (the groups there will be after the
        batch) the group x class x class cells are checked before anything changes."""
        assert y_pred is not None  # check_inputs
        # A batch whose weights are all zero is counted (it adds no weight); only a report of
        # rows without any weight is refused.
        cm = CountedTable._count(
            t, y_pred, self._labels if self._fixed else None, sample_weight, self.max_classes, self.backend
        )
        if n_groups:
            k = cm.labels.shape[0]
            if (
                self._labels is not None
                and not self._fixed
                and self._kind == ("str" if cm.labels.dtype.kind in "UOS" else "int")
            ):
                k = np.union1d(self._labels, cm.labels).shape[0]
            group_values.check_group_count(n_groups, self.max_groups, k, "the batches have")
        counts = np.asarray(cm.counts).astype(np.uint64)
        weighted = cm.matrix if sample_weight is not None else None
        # The new tables first (a refused batch raises here), then the ranking rows (which
        # may refuse a confidence), and only then is anything kept.
        tables = self._table_after(cm.labels, counts, weighted)
        if confidence is not None and self.ranking != "off":
            ok, conf = ranking_walk.user_confidence(t, y_pred, confidence)
            self._add_ranking(ok, conf, validation.weights(sample_weight, t.shape[0]))
        self._keep_table(*tables)

    def _add_table(self, labels: np.ndarray, counts: np.ndarray, weighted: np.ndarray | None) -> None:
        """Add a hard confusion table whose rows/columns are ``labels`` (a subset of the
        state's labels when they are fixed; otherwise the union grows)."""
        self._keep_table(*self._table_after(labels, counts, weighted))

    def _keep_table(self, counts: np.ndarray, weighted: np.ndarray | None, labels: np.ndarray, kind: LabelKind) -> None:
        self._hard_counts, self._hard_weighted = counts, weighted
        self._labels, self._kind = labels, kind

    def _table_after(
        self, labels: np.ndarray, counts: np.ndarray, weighted: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, LabelKind]:
        """The hard tables, labels and label kind once the table of ``labels`` is added,
        changing nothing (LabelError or LimitExceededError for a table that cannot be)."""
        kind: LabelKind = "str" if labels.dtype.kind in "UOS" else "int"
        if self._kind is not None and kind != self._kind:
            msg = f"this batch has {kind} labels but earlier ones had {self._kind} labels; use one kind throughout"
            raise LabelError(msg)
        if self._labels is None or self._hard_counts is None:
            union = labels if self._labels is None else self._labels
        else:
            union = self._labels if self._fixed else np.union1d(self._labels, labels)
        check_classes(union.shape[0], "the label set of the batches", self.max_classes)
        # Both tables are built before either is kept: a refused batch changes nothing.
        new_counts = embed_table(self._hard_counts, self._labels, union, np.uint64)
        new_counts += embed_table(counts, labels, union, np.uint64)
        new_weighted = self._hard_weighted
        if weighted is not None:
            new_weighted = embed_table(self._hard_weighted, self._labels, union, np.float64)
            new_weighted += embed_table(weighted, labels, union, np.float64)
        return new_counts, new_weighted, union, kind

    def _state(self, weighted: bool) -> RankingState:
        if self._rank is None:
            self._rank = resolve_backend(self.backend).GroupState(weighted)
        return self._rank

    def _add_ranking(self, correct: Bools | None, confidence: np.ndarray | None, weight: F64 | None) -> None:
        """Add rows to the ranking state (confidences binned first in the approximate mode)."""
        ok = np.ascontiguousarray(correct, dtype=bool)
        conf = np.ascontiguousarray(confidence, dtype=np.float64)
        w = None if weight is None else np.ascontiguousarray(weight, dtype=np.float64)
        bins = self.ranking_bins if self.ranking == "approximate" else None
        self._state(w is not None).add(ok, conf, w, bins, get_num_threads())

    def _add_class_ranking(
        self, codes: np.ndarray, y_proba: np.ndarray, weight: F64 | None, hist: F64 | None = None
    ) -> F64:
        """Add a probability batch to the class-ranking state: the rank histogram of the true
        classes (counted here unless given), and each column's rows to its class's tie groups
        (binned in approximate mode). Returns the batch's histogram."""
        be = resolve_backend(self.backend)
        if hist is None:
            hist = be.rank_histogram(
                in_place(y_proba), np.ascontiguousarray(codes, dtype=np.uint32), weight, get_num_threads()
            )
        self._rank_hist = hist.copy() if self._rank_hist is None else self._rank_hist + hist
        if self.class_ranking == "off" or self._binned_by_parent:
            return hist
        c = np.ascontiguousarray(codes, dtype=np.uint32)
        p = in_place(y_proba)
        w = None if weight is None else np.ascontiguousarray(weight, dtype=np.float64)
        if self.class_ranking == "approximate":
            if self._dense is None and self._class_rank is None and dense_fits(p.shape[1], self.ranking_bins):
                self._dense = DenseClassRanking.zeros(p.shape[1], self.ranking_bins, w is not None)
            if self._dense is not None:
                # One read of the matrix counts every column into the tables, in place.
                self._dense.add_batch(be, p, c, self.ranking_bins, w)
                return hist
        if self._class_rank is None:
            self._class_rank = [be.GroupState(weight is not None) for _ in range(p.shape[1])]
        if self.class_ranking == "approximate":
            # One read of the matrix bins every column (fixed memory per column).
            binned = be.binned_one_vs_rest(p, c, self.ranking_bins, w, get_num_threads())
            for state, groups in zip(self._class_rank, binned, strict=True):
                state.absorb(groups, get_num_threads())
            return hist
        for col, state in enumerate(self._class_rank):
            score = np.ascontiguousarray(p[:, col], dtype=np.float64)
            state.add(np.ascontiguousarray(c == col), score, w, None, get_num_threads())
        return hist

    def _class_groups(self) -> list[Groups]:
        """The class-ranking state of each column as tie groups (empty without one)."""
        if self._dense is not None:
            return self._dense.groups(self.ranking_bins)
        return [state.groups(get_num_threads()) for state in self._class_rank or []]

    def ranking_curve(self, steps: int, column: int | None = None) -> tuple[CurvePoints, BinaryRanking] | None:
        """Points of a ranking state's curve (at most about ``steps``, read off the groups in
        one pass: :meth:`RankingState.curve_points`) and the state's exact walk (its areas):
        of the top-label confidence against correctness (``column=None``), or of probability
        column ``column`` against "the row is of that class". None without that state."""
        if column is None:
            state = self._overall_rank()
        elif self._class_rank is not None and 0 <= column < len(self._class_rank):
            state = self._class_rank[column]
        elif self._dense is not None and self._dense.all is not None and 0 <= column < self._dense.all.shape[0]:
            state = resolve_backend(self.backend).GroupState(self._dense.w_pos is not None)
            state.absorb(self._dense.column_groups(column, self.ranking_bins), get_num_threads())
        else:
            return None
        if state is None or len(state) == 0:
            return None
        threads = get_num_threads()
        return state.curve_points(steps, threads), state.walk(True, threads)

    def class_ranking_summaries(self) -> list[RankingSummary] | None:
        """One summary per probability column, in the order of the labels: the column's
        distinct values with the rows of its class (``n_pos``) and of the other classes
        (``n_neg``); binned values in the approximate class-ranking mode. None without
        probabilities or with ``class_ranking="off"``."""
        groups = self._class_groups()
        return [RankingSummary(*g) for g in groups] if groups else None

    def ranking_summary(self) -> RankingSummary | None:
        """The ranking summary: the distinct confidence values with their correct and wrong
        rows (None when ranking is off or nothing was added)."""
        rank = self._overall_rank()
        if rank is None:
            return None
        g = rank.groups(get_num_threads())
        return RankingSummary(*g)

    def _overall_rank(self) -> RankingState | None:
        """The ranking state of all rows; when it is made from the groups' states (grouped
        probabilities, exact mode), their union, merged now."""
        if self._rank_stale:
            states = self._group_ranks()
            be = resolve_backend(self.backend)
            self._rank = be.union_states(states, get_num_threads()) if states else None
            self._rank_stale = False
        return self._rank

    def _group_ranks(self) -> list[RankingState]:
        """The ranking states of the groups that have one (none here: see the grouped state)."""
        return []

    def report(self) -> Report:
        """The :class:`cmetrics.Report` of every row added so far."""
        return self._report()

    def _report(self, walk: BinaryRanking | None = None) -> Report:
        """The report, with the ranking state's walk when it was already made."""
        if self._mode is None or self._labels is None:
            msg = "this Evaluator has no rows yet; call update() first"
            raise ValidationError(msg)
        if not self.total_weight() > 0:
            msg = (
                "sample_weight sums to 0 over every row added; at least one row needs a positive weight "
                "before there is anything to score"
            )
            raise WeightError(msg)
        if walk is None and self._rank_stale:
            # The state of all rows is the groups' union: walked without being made.
            states = [state for state in self._group_ranks() if len(state)]
            if states:
                walk = resolve_backend(self.backend).walk_union(states, True, get_num_threads())
        elif walk is None and self._rank is not None and len(self._rank):
            walk = self._rank.walk(True, get_num_threads())
        made: dict[str, int | str] = (
            {"mode": "exact"} if self.ranking == "exact" else {"mode": "approximate", "bins": self.ranking_bins}
        )
        if self._mode == "proba" and self._acc is not None:
            res = probability_pass.ProbResult(self._acc, self._labels, self._kind or "int", self.backend)
            extra = None
            if self._rank_hist is not None:
                walks = None
                if self._dense is not None and self._dense.all is not None:
                    be = resolve_backend(self.backend)
                    walks = [be.walk_groups(g, True) for g in self._dense.groups(self.ranking_bins)]
                elif self._class_rank is not None:
                    walks = [s.walk(True, get_num_threads()) for s in self._class_rank]
                extra = class_ranking_values(self._rank_hist, walks, bool(self._weighted), self.top_k)
            return build_report(
                res.hard_matrix(),
                proba=res,
                walk=walk,
                zero_division=self.zero_division,
                ranking=made,
                extra=extra,
                class_ranking=self.class_ranking,
            )
        if self._hard_counts is None:
            msg = "the Evaluator state is malformed: hard-label rows without a confusion matrix"
            raise StateError(msg)
        weighted = bool(self._weighted)
        table = (
            self._hard_weighted
            if weighted and self._hard_weighted is not None
            else self._hard_counts.astype(np.float64)
        )
        cm = CountedTable._from_parts(
            table, self._labels, self._hard_counts.astype(np.int64), self.backend, weighted=weighted
        )
        return build_report(cm, walk=walk, zero_division=self.zero_division, ranking=made)

    def total_weight(self) -> float:
        """The total weight of the rows added (their number without weights)."""
        if self._acc is not None:
            return float(self._acc.weight_sum)
        if self._weighted and self._hard_weighted is not None:
            return float(np.sum(self._hard_weighted))
        return float(self.n_rows)

    # -- merging --------------------------------------------------------------------------

    def _merge_rows(self, other: RowState) -> None:
        """Add another state's rows (same settings, checked by the caller), changing nothing
        when the other's inputs or labels cannot be merged."""
        if self._mode is not None and (self._mode, self._weighted, self._has_confidence) != (
            other._mode,
            other._weighted,
            other._has_confidence,
        ):
            msg = (
                "cannot merge Evaluators fed different inputs (probabilities or hard labels, weights, "
                "confidence must match)"
            )
            raise StateError(msg)
        if other._mode == "proba":
            self._merge_proba(other)
        elif other._labels is not None and other._hard_counts is not None:
            try:
                self._add_table(other._labels, other._hard_counts, other._hard_weighted if other._weighted else None)
            except LabelError as e:
                msg = f"cannot merge these Evaluators: {e}"
                raise StateError(msg) from None
        # A state of all rows made from the groups' stays so: the merged groups hold every row.
        derived = self._rank_stale or other._rank_stale
        if other._rank is not None and not derived:
            merge_ranking_state(self._state(other._rank.weighted), other._rank, other is self)
        if derived:
            self._rank, self._rank_stale = None, True
        self._mode, self._weighted, self._has_confidence = other._mode, other._weighted, other._has_confidence
        self.n_rows += other.n_rows

    def _merge_proba(self, other: RowState) -> None:
        """Add another state's probability accumulators and class-ranking states."""
        if self._mode is None:
            self._labels, self._kind, self._fixed = other._labels, other._kind, True
        elif self._labels is not None and other._labels is not None and not np.array_equal(self._labels, other._labels):
            msg = "cannot merge Evaluators whose probability columns are different classes"
            raise StateError(msg)
        if other._acc is not None:
            self._acc = probability_pass.add_accumulators(self._acc, other._acc)
        if other._rank_hist is not None:
            self._rank_hist = other._rank_hist.copy() if self._rank_hist is None else self._rank_hist + other._rank_hist
        merge_class_ranking(self, other)


def merge_class_ranking(state: RowState, other: RowState) -> None:
    """Add ``other``'s class-ranking state to ``state``'s: dense tables to dense tables; when one side
    keeps tie groups per column, the dense side's groups are absorbed into them."""
    theirs = other._dense if other._dense is not None and other._dense.all is not None else None
    mine = state._dense if state._dense is not None and state._dense.all is not None else None
    if theirs is not None and state._class_rank is None:
        if state._dense is None:
            state._dense = DenseClassRanking.empty()
        state._dense.merge(theirs)
        return
    threads = get_num_threads()
    if theirs is not None and state._class_rank is not None:
        for rank, groups in zip(state._class_rank, theirs.groups(state.ranking_bins), strict=True):
            rank.absorb(groups, threads)
        return
    if other._class_rank is not None and mine is not None:
        # This side's tables become tie groups per column, as the other side keeps them.
        be = resolve_backend(state.backend)
        own = mine.groups(state.ranking_bins)
        state._class_rank = [be.GroupState(mine.w_pos is not None) for _ in own]
        for rank, groups in zip(state._class_rank, own, strict=True):
            rank.absorb(groups, threads)
        state._dense = None
    if other._class_rank is not None:
        if state._class_rank is None:
            be = resolve_backend(state.backend)
            state._class_rank = [be.GroupState(s.weighted) for s in other._class_rank]
        for mine_state, theirs_state in zip(state._class_rank, other._class_rank, strict=True):
            merge_ranking_state(mine_state, theirs_state, other is state)


def merge_ranking_state(mine: RankingState, theirs: RankingState, same: bool) -> None:
    """Add the groups of one ranking state to another (by a sorted merge when both are of one backend)."""
    if same or type(theirs) is not type(mine):
        mine.absorb(theirs.groups(get_num_threads()), get_num_threads())
    else:
        mine.merge(theirs, get_num_threads())


def embed_table(table: np.ndarray | None, labels: np.ndarray | None, union: np.ndarray, dtype: Any) -> np.ndarray:
    """``table`` (rows and columns = ``labels``) placed in a zero table over ``union``."""
    k = union.shape[0]
    out = np.zeros((k, k), dtype=dtype)
    if table is None or labels is None or labels.shape[0] == 0:
        return out
    if labels.shape == union.shape and np.array_equal(labels, union):
        copied: np.ndarray = np.asarray(table, dtype=dtype).copy()
        return copied
    order = np.argsort(union, kind="stable")
    pos = order[np.minimum(np.searchsorted(union, labels, sorter=order), union.shape[0] - 1)]
    if not np.array_equal(union[pos], labels):
        missing = labels[union[pos] != labels].tolist()[:10]
        msg = f"labels {missing} are not among the Evaluator's labels; create it with every label in labels="
        raise LabelError(msg)
    out[np.ix_(pos, pos)] = table
    return out

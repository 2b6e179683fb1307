"""Grouped rows: beside the state of all rows, one state per group value, fed by one layout
of each batch group by group (the groups' kernels side by side), merged group by group, and the
:class:`~cmetrics.GroupedReport` of every group. :class:`GroupedRows` is the part of
:class:`~cmetrics.Evaluator` that adds, merges and reports rows, with or without groups."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._backend import resolve_backend
from cmetrics._base import validation
from cmetrics._base.aliases import F64, LabelKind
from cmetrics._base.config import get_num_threads
from cmetrics._derive import probability_pass
from cmetrics._derive.multiclass_ranking import in_place
from cmetrics._kernels import BinaryRanking, ProbAccumulators, RankingState
from cmetrics._results.grouped import GroupedReport, GroupKey, LazyReports, sort_keys
from cmetrics._results.report import Report
from cmetrics.exceptions import LengthMismatchError, StateError, ValidationError
from cmetrics.streaming import group_tables, group_values, replicates
from cmetrics.streaming.dense_ranking import DenseClassRanking
from cmetrics.streaming.replicates import ReplicateState
from cmetrics.streaming.rows import RowState
from cmetrics.streaming.settings import EvaluationSettings
from cmetrics.streaming.state_curves import state_curves

if TYPE_CHECKING:
    from typing_extensions import Self


def is_empty(x: object) -> bool:
    """Whether an argument has no rows (objects without a length are not empty)."""
    try:
        return len(x) == 0  # type: ignore[arg-type]  # anything with a length
    except TypeError:
        return False


def check_empty_batch(*args: object) -> None:
    """An empty batch adds nothing when every argument (``y_pred``, ``y_proba``, ``confidence``,
    ``sample_weight``, ``groups``) is empty too."""
    names = ("y_pred", "y_proba", "confidence", "sample_weight")
    groups = args[4]
    columns = groups if isinstance(groups, tuple) else (groups,)
    for name, other in (*zip(names, args[:4], strict=True), *(("groups", g) for g in columns)):
        if other is not None and not is_empty(other):
            msg = f"y_true is empty but {name} has rows; pass one {name} row per y_true row"
            raise LengthMismatchError(msg)


class GroupedRows(RowState):
    """A :class:`RowState` that adds, merges and reports batches, with one state of its own
    kind per group value when rows come with groups (``group_by``)."""

    def __init__(
        self, settings: EvaluationSettings, labels: np.ndarray | None, kind: LabelKind | None, group_by: bool
    ) -> None:
        super().__init__(settings, labels, kind)
        if not isinstance(group_by, bool):
            msg = f"group_by must be True or False, got {group_by!r}"
            raise ValidationError(msg)
        #: Whether rows come with group values (``update(..., groups=...)``).
        self.group_by = group_by
        # With group_by: one state per group value, and the kind ("int" or "str") of each
        # grouping column, set by the first batch.
        self._groups: dict[GroupKey, GroupedRows] = {}
        self._group_kinds: tuple[str, ...] | None = None
        # Hard labels without a confidence: one G x K x K table in place of a state per group.
        self._table: group_tables.GroupTables | None = None
        # With bootstrap=N (an Evaluator's option): (replicates, seed, confidence level), and
        # the replicate sums once a batch has come.
        self._bootstrap: tuple[int, int, float] | None = None
        self._replicates: ReplicateState | None = None
        # Whether update() draws this state's replicates: a group's state is handed its
        # replicate sums by its parent, which knows the rows' global indices.
        self._draws = True

    @classmethod
    def _empty(
        cls, settings: EvaluationSettings, labels: np.ndarray | None, kind: LabelKind | None, group_by: bool = False
    ) -> Self:
        """A state of this class, empty, from checked parts."""
        self = cls.__new__(cls)
        GroupedRows.__init__(self, settings, labels, kind, group_by)
        return self

    # -- accumulation ---------------------------------------------------------------------

    def update(
        self,
        y_true: ArrayLike,
        *,
        y_pred: ArrayLike | None = None,
        y_proba: ArrayLike | None = None,
        confidence: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
        groups: ArrayLike | tuple[ArrayLike, ...] | None = None,
        row_offset: int | None = None,
    ) -> Self:
        """Add one batch of rows (arguments as in :func:`cmetrics.evaluate`). Returns self.

        With ``group_by=True`` every batch passes ``groups``: one group value per row (an
        integer or a string), or a tuple of such arrays to group by several columns.

        ``row_offset`` (with ``bootstrap=``): the global index of the batch's first row, which
        keys the rows' Poisson draws; by default the rows follow those already added. Give it
        when batches or partitions are fed to several Evaluators that are merged later."""
        y_true, y_pred, y_proba, confidence, sample_weight, groups = validation.evaluation_inputs(
            "update", y_true, y_pred, y_proba, confidence, sample_weight, groups
        )
        if groups is not None and not self.group_by:
            msg = "groups= needs an Evaluator created with group_by=True"
            raise ValidationError(msg)
        if groups is None and self.group_by:
            msg = "this Evaluator was created with group_by=True; pass groups= (one group value per row) in every batch"
            raise ValidationError(msg)
        if row_offset is not None and self._bootstrap is None:
            msg = "row_offset= keys the bootstrap's draws; it needs an Evaluator created with bootstrap="
            raise ValidationError(msg)
        if is_empty(y_true):  # an empty batch (a filtered record batch, say) adds nothing...
            check_empty_batch(y_pred, y_proba, confidence, sample_weight, groups)
            return self
        t = validation.as_1d(y_true, "y_true")
        if y_proba is not None:  # checked and laid out once: the passes below borrow it
            y_proba = validation.proba_array(y_proba, int(t.shape[0]), self.max_classes)
        mode = "proba" if y_proba is not None else "hard"
        weighted = sample_weight is not None
        self._check_same_shape(mode, weighted, confidence is not None)
        # The batch's replicate sums first (they check the batch); kept once the rest is.
        boot, by_group = None, {}
        if self._bootstrap is not None and self._draws:
            assert self._labels is not None  # the constructor's check
            rows = replicates.Rows(t, y_pred, y_proba, sample_weight, self._labels, self.backend)
            boot = replicates.batch_of(self._replicates, self._bootstrap, rows, row_offset)
            if groups is not None:
                known = (len(self._groups), self._groups.keys())
                by_group = replicates.groups_of(self._bootstrap, rows, groups, known, self.max_groups, boot[1][2][0])
        if groups is not None:
            self._update_grouped(t, groups, y_pred, y_proba, confidence, sample_weight)
            for key, (sums, full) in by_group.items():  # the groups' rows are kept: their replicates too
                child = self._groups[key]
                child._replicates = replicates.kept(child._replicates, self._bootstrap, rows, sums, full)
        elif y_proba is not None:
            self._update_proba(t, y_proba, y_pred, sample_weight)
        else:
            self._update_hard(t, y_pred, confidence, sample_weight)
        if boot is not None:
            state, (sums, full, span) = boot
            state.keep(sums, full, [span])
            self._replicates = state
        self._added(mode, weighted, confidence is not None, int(t.shape[0]))
        return self

    def report(self, *, curves: bool = False) -> Report:
        """The :class:`cmetrics.Report` of every row added so far; with ``bootstrap=``, with
        its :attr:`~cmetrics.Report.intervals` (percentile, from the replicate sums); with
        ``curves``, with its :attr:`~cmetrics.Report.curves` (ROC, precision-recall and
        risk-coverage read off the ranking states, decimated: what :meth:`Report.to_html`
        draws)."""
        report = self._report()
        if self._replicates is not None:
            report.intervals = self._replicates.intervals([str(x) for x in np.asarray(report.labels).tolist()])
        if curves:
            report.curves = state_curves(self)
        return report

    def _child(self) -> GroupedRows:
        """An empty state for one group: these settings with the group bins and, when fixed,
        these labels. Its approximate class-ranking state is dense (binned by its parent)."""
        child = type(self)._empty(
            self.settings.for_groups(), self._labels if self._fixed else None, self._kind if self._fixed else None
        )
        if child.class_ranking == "approximate":
            child._dense, child._binned_by_parent = DenseClassRanking.empty(), True
        child._bootstrap, child._draws = self._bootstrap, False
        return child

    def _update_grouped(
        self,
        t: np.ndarray,
        groups: ArrayLike | tuple[ArrayLike, ...],
        y_pred: ArrayLike | None,
        y_proba: ArrayLike | None,
        confidence: ArrayLike | None,
        sample_weight: ArrayLike | None,
    ) -> None:
        """One batch with group values: every group's rows go to that group's Evaluator, and
        all rows to this one. The rows are laid out group by group once (one counting pass
        over the group codes, then each row written to its group's next slot); with
        probabilities the groups' kernels then run side by side over that layout, and this
        Evaluator's tables are the sums of the groups' (no second pass)."""
        n = int(t.shape[0])
        k = len(self._labels) if self._fixed and self._labels is not None else 0
        if y_proba is not None:
            k = validation.proba_array(y_proba, n, self.max_classes).shape[1]
        if y_proba is None and confidence is None and self._bootstrap is None:
            self._update_group_table(t, groups, y_pred, sample_weight)
            return
        enc = group_values.encode(groups, n, self.max_groups, n_classes=k)
        if self._group_kinds is not None and enc.kinds != self._group_kinds:
            msg = (
                f"earlier batches had group values of kinds {self._group_kinds}, this one {enc.kinds}; "
                "pass the same kind of group values (integers or strings, same columns) in every batch"
            )
            raise ValidationError(msg)
        fresh = sum(key not in self._groups for key in enc.keys)
        self._check_group_cells(len(self._groups) + fresh, k, "the batches have", proba=y_proba is not None)
        positions, offsets = group_values.split(enc.codes, len(enc.keys), self.backend)
        bounds = [(int(offsets[i]), int(offsets[i + 1])) for i in range(len(enc.keys))]
        if y_proba is not None:
            self._update_grouped_proba(t, enc.keys, positions, bounds, y_proba, y_pred, sample_weight)
        else:
            # Hard labels: counting is cheap, so this Evaluator counts the batch as it comes.
            self._update_hard(t, y_pred, confidence, sample_weight, len(self._groups) + fresh)
            assert y_pred is not None  # check_inputs
            p = group_values.scatter(validation.as_1d(y_pred, "y_pred"), positions)
            c = (
                None
                if confidence is None
                else group_values.scatter(validation.as_1d(confidence, "confidence"), positions)
            )
            w = validation.weights(sample_weight, n)
            w = None if w is None else group_values.scatter(w, positions)
            t = group_values.scatter(t, positions)
            for key, (lo, hi) in zip(enc.keys, bounds, strict=True):
                child = self._groups.get(key) or self._child()
                child.update(
                    t[lo:hi],
                    y_pred=p[lo:hi],
                    confidence=None if c is None else c[lo:hi],
                    sample_weight=None if w is None else w[lo:hi],
                )
                self._groups[key] = child
        self._group_kinds = enc.kinds

    def _update_group_table(
        self,
        t: np.ndarray,
        groups: ArrayLike | tuple[ArrayLike, ...],
        y_pred: ArrayLike | None,
        sample_weight: ArrayLike | None,
    ) -> None:
        """One batch of hard labels with group values: every group's table counted by one
        kernel pass into the G x K x K table (every check before anything is kept)."""
        assert y_pred is not None  # check_inputs
        w = validation.weights(sample_weight, int(t.shape[0]))
        batch = group_tables.count_batch(
            t, validation.as_1d(y_pred, "y_pred"), groups, w, self.max_groups, self.max_classes, self.backend
        )
        after, union, counts = group_tables.add_batch(
            self._table, self._labels, self._kind, self._fixed, self._group_kinds, batch, self.max_groups
        )
        if w is None:  # all rows: the groups' counts added up (exact)
            self._keep_table(*self._table_after(union, counts.sum(axis=0), None))
        else:  # the weighted sums of all rows in row order, as without groups
            self._update_hard(t, y_pred, None, sample_weight)
        self._table, self._group_kinds = after, batch.group_kinds

    def _table_child(self, i: int) -> GroupedRows:
        """The state of the ``i``-th group of the table, as a state of its own."""
        assert self._table is not None and self._labels is not None and self._kind is not None
        pos, counts, weighted = self._table.group_table(i, self._fixed)
        child = self._child()
        child._keep_table(counts, weighted, self._labels[pos], self._kind)
        child._added("hard", weighted is not None, False, int(counts.sum()))
        return child

    def _group_states(self) -> dict[GroupKey, GroupedRows]:
        """Every group's state by group value (made from the table when there is one)."""
        if self._table is None:
            return self._groups
        return {key: self._table_child(i) for i, key in enumerate(self._table.keys)}

    def _key_list(self) -> list[GroupKey]:  # the group values, in no particular order
        return list(self._groups) if self._table is None else self._table.keys

    def _tabulate(self) -> None:
        """Groups of hard labels without a confidence held as states (a loaded state): into the
        table."""
        if not self._groups or self._mode != "hard" or self._has_confidence or self._labels is None:
            return
        if self._bootstrap is not None:  # every group keeps its replicates in its own state
            return
        parts = {key: (c._labels, c._hard_counts, c._hard_weighted) for key, c in self._groups.items()}
        self._table, self._groups = group_tables.from_parts(parts, self._labels, bool(self._weighted)), {}

    def _update_grouped_proba(
        self,
        t: np.ndarray,
        keys: list[GroupKey],
        positions: np.ndarray,
        bounds: list[tuple[int, int]],
        y_proba: ArrayLike,
        y_pred: ArrayLike | None,
        sample_weight: ArrayLike | None,
    ) -> None:
        inp = self._proba_inputs(t, y_proba, y_pred, sample_weight)
        whole = probability_pass.ProbInputs(
            group_values.scatter(inp.y_true, positions),
            group_values.scatter(inp.y_proba, positions, self.backend),
            None if inp.y_pred is None else group_values.scatter(inp.y_pred, positions),
            None if inp.sample_weight is None else group_values.scatter(inp.sample_weight, positions),
            inp.labels,
            inp.kind,
            inp.atol,
        )
        offsets = np.array([0] + [hi for _, hi in bounds], dtype=np.int64)
        accs = self._group_passes(inp, whole, offsets)
        children = [self._groups.get(key) or self._child() for key in keys]
        be = resolve_backend(self.backend)
        codes = np.ascontiguousarray(whole.y_true, dtype=np.uint32)
        rank_hists = be.rank_histogram_groups(
            in_place(whole.y_proba), codes, offsets, whole.sample_weight, get_num_threads()
        )
        binned = None
        if self.class_ranking == "approximate":
            # Every group's columns binned by one call, in parallel over the groups.
            binned = be.grouped_binned_histograms(
                in_place(whole.y_proba), codes, offsets, self.group_ranking_bins, whole.sample_weight, get_num_threads()
            )
        # Every group's rows are valid: add them (nothing was changed before this point).
        ranked = self._add_group_ranking(children, accs, whole, offsets) if self.ranking != "off" else None
        total: ProbAccumulators | None = None
        for g, (key, child, acc, (lo, hi)) in enumerate(zip(keys, children, accs, bounds, strict=True)):
            sub = probability_pass.ProbInputs(
                whole.y_true[lo:hi],
                whole.y_proba[lo:hi],
                None if whole.y_pred is None else whole.y_pred[lo:hi],
                None if whole.sample_weight is None else whole.sample_weight[lo:hi],
                inp.labels,
                inp.kind,
            )
            if binned is not None and child._dense is not None:
                child._dense.add_group(binned, g)
            child._add_proba(sub, acc, rank_hists[g], ranked=True)
            child._added("proba", sub.sample_weight is not None, False, hi - lo)
            self._groups[key] = child
            total = probability_pass.add_accumulators(total, acc)
        assert total is not None  # at least one group
        # All rows: the groups' tables summed; the ranking rows are the groups' (their order
        # does not matter), with the weights in the same order; the class ranking reads the
        # matrix as given (a column-major matrix bins a column at a time).
        if ranked is not None:
            if self.ranking == "exact":
                self._rank, self._rank_stale = None, True
            else:
                self._add_ranking(*ranked, whole.sample_weight)
        self._add_class_ranking(inp.y_true, inp.y_proba, inp.sample_weight, rank_hists.sum(axis=0))
        if self._labels is None:
            self._labels, self._kind = np.asarray(inp.labels), inp.kind
            self._fixed = True
        self._acc = probability_pass.add_accumulators(self._acc, total)

    def _group_passes(
        self, inp: probability_pass.ProbInputs, whole: probability_pass.ProbInputs, offsets: np.ndarray
    ) -> list[ProbAccumulators]:
        """Every group's probability pass over the rows in group order (``whole``), the groups
        side by side in one call."""
        try:
            return resolve_backend(self.backend).evaluate_proba_groups(
                whole.y_true,
                whole.y_proba,
                offsets,
                whole.y_pred,
                whole.sample_weight,
                validate=True,
                atol=inp.atol,
                n_bins=self.n_bins,
                keep_confidence=self.ranking != "off",
                n_threads=get_num_threads(),
            )
        except ValidationError:
            # The row numbers of the error are those of the reordered rows: find it again in
            # the batch as given, so that the message names the user's row.
            probability_pass.accumulate(inp, backend=self.backend, n_bins=self.n_bins, validate=True)
            raise

    def _add_group_ranking(
        self,
        children: list[GroupedRows],
        accs: list[ProbAccumulators],
        whole: probability_pass.ProbInputs,
        offsets: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The groups' ranking rows, in the layout's order: each group's segment goes to its
        state, all in one call (the states side by side on the threads). Returns the rows'
        correctness and confidences, for the ranking of all rows."""
        correct = np.concatenate([acc.correct for acc in accs if acc.correct is not None])
        confidence = np.concatenate([acc.confidence for acc in accs if acc.confidence is not None])
        weighted = whole.sample_weight is not None
        resolve_backend(self.backend).add_segments(
            [child._state(weighted) for child in children],
            np.ascontiguousarray(correct, dtype=bool),
            np.ascontiguousarray(confidence, dtype=np.float64),
            offsets,
            None if whole.sample_weight is None else np.ascontiguousarray(whole.sample_weight, dtype=np.float64),
            self.group_ranking_bins if self.ranking == "approximate" else None,
            get_num_threads(),
        )
        return correct, confidence

    # -- merging --------------------------------------------------------------------------

    def merge(self, other: GroupedRows) -> Self:
        """Add the rows of another Evaluator (same settings) to this one. Returns self."""
        if not isinstance(other, GroupedRows):
            msg = (
                f"merge takes an Evaluator, got {type(other).__name__}; pass another Evaluator "
                "(or Evaluator.from_bytes(...))"
            )
            raise StateError(msg)
        if self.group_by != other.group_by:
            msg = (
                "cannot merge a grouped Evaluator (group_by=True) with an ungrouped one; create both with the "
                "same group_by="
            )
            raise StateError(msg)
        check_mergeable(self, other)
        if other._mode is None:
            return self
        if self.group_by:
            check_groups_merge(self, other)
        if self._replicates is not None and other._replicates is not None:
            self._replicates.check_mergeable(other._replicates)
        labels_before = self._labels
        self._merge_rows(other)
        if other._replicates is not None:
            if self._replicates is None:
                self._replicates = other._replicates.copy()
            else:
                self._replicates.merge(other._replicates)
        if other._table is not None:
            assert other._labels is not None and self._labels is not None
            mine = self._table or group_tables.GroupTables.empty(int(self._labels.shape[0]), bool(other._weighted))
            if labels_before is not None and len(mine):
                mine = mine.relabel(labels_before, self._labels)
            theirs = other._table.relabel(other._labels, self._labels)
            self._table = mine.plus(theirs.keys, theirs.counts, theirs.weighted)
        for key, theirs_child in list(other._groups.items()):
            mine_child = self._groups.get(key) or self._child()
            mine_child.merge(theirs_child)
            self._groups[key] = mine_child
        if other._group_kinds is not None:
            self._group_kinds = other._group_kinds
        return self

    def _check_group_cells(self, n_groups: int, k: int, what: str, *, proba: bool) -> None:
        """The limits on this Evaluator's groups (``max_groups``, the K x K tables and, with
        probabilities and the approximate class ranking, the dense ranking tables), checked
        before a batch, a merge or a load adds a group."""
        bins = self.group_ranking_bins if proba and self.class_ranking == "approximate" else None
        group_values.check_group_count(n_groups, self.max_groups, k, what, ranking_bins=bins)

    def grouped_report(self, names: Sequence[str] | None = None) -> GroupedReport:
        """The :class:`cmetrics.GroupedReport` of an Evaluator created with ``group_by=True``:
        the report of all rows and of each group's rows. ``names`` are the names of the
        grouping columns (default "groups", or "groups[0]", "groups[1]", ... for tuples). A
        group whose rows all have weight 0 has an undefined report: every value NaN, with
        the reason in its ``undefined``."""
        if not self.group_by:
            msg = "grouped_report() needs an Evaluator created with group_by=True; use report()"
            raise ValidationError(msg)
        arity = len(self._group_kinds or ("int",))
        if names is None:
            names = ["groups"] if arity == 1 else [f"groups[{i}]" for i in range(arity)]
        elif len(names) != arity:
            msg = f"names lists {len(names)} names but the rows are grouped by {arity} column(s)"
            raise ValidationError(msg)
        if self._table is not None:
            return table_report(self, names)
        children = list(self._groups.values())
        weighed = {id(child) for child in children if child.total_weight() > 0}
        # The groups' ranking walks first, side by side in one call; then each report.
        ranked = [child for child in children if child._rank is not None and len(child._rank) and id(child) in weighed]
        walks: dict[int, BinaryRanking] = {}
        if ranked:
            states = [child._rank for child in ranked if child._rank is not None]
            made = resolve_backend(self.backend).walk_states(states, True, get_num_threads())
            walks = {id(child): walk for child, walk in zip(ranked, made, strict=True)}
        reports = [child._report(walks.get(id(child))) if id(child) in weighed else None for child in children]
        for child, report in zip(children, reports, strict=True):
            if report is not None and child._replicates is not None:
                report.intervals = child._replicates.intervals([str(x) for x in np.asarray(report.labels).tolist()])
        # All rows last: their ranking walk may be the walk of the groups' union.
        overall = self.report()
        reason = "every row of this group has sample_weight 0: there is nothing to score"
        by_key = {
            key: overall.undefined_like(reason) if report is None else report
            for key, report in zip(self._groups, reports, strict=True)
        }
        return GroupedReport(overall, by_key, names)

    @property
    def group_keys(self) -> list[GroupKey]:
        """The group values seen so far, sorted (empty without ``group_by``)."""
        return sort_keys(self._key_list())

    def _group_ranks(self) -> list[RankingState]:
        """The ranking states of the groups that have one."""
        return [child._rank for child in self._groups.values() if child._rank is not None]


def check_mergeable(state: GroupedRows, other: GroupedRows) -> None:
    """Refuse, before anything changes, a merge of states of other settings, labels or
    bootstrap options."""
    mine, theirs = state.settings.header(), other.settings.header()
    if mine != theirs:
        diff = {k: (mine[k], theirs[k]) for k in mine if mine[k] != theirs[k]}
        msg = f"cannot merge Evaluators with different settings {diff} (this one, the other)"
        raise StateError(msg)
    if (
        state._fixed
        and other._fixed
        and state._labels is not None
        and other._labels is not None
        and (state._labels.shape != other._labels.shape or not np.array_equal(state._labels, other._labels))
    ):
        msg = (
            f"cannot merge Evaluators with different labels ({state._labels.tolist()[:10]} and "
            f"{other._labels.tolist()[:10]}); create both with the same labels="
        )
        raise StateError(msg)
    if state._bootstrap != other._bootstrap:
        msg = (
            f"cannot merge Evaluators with different bootstrap options {state._bootstrap} and {other._bootstrap} "
            "(replicates, seed, confidence level); create both with the same bootstrap= and seed="
        )
        raise StateError(msg)


def check_groups_merge(state: GroupedRows, other: GroupedRows) -> None:
    """Refuse, before anything changes, a merge of grouped states whose group values are of
    other kinds, or whose groups together exceed ``max_groups``."""
    if state._group_kinds is not None and other._group_kinds is not None and state._group_kinds != other._group_kinds:
        msg = (
            f"cannot merge Evaluators grouped by values of different kinds ({state._group_kinds} and "
            f"{other._group_kinds})"
        )
        raise StateError(msg)
    if state.settings.for_groups().header() != other.settings.for_groups().header():
        msg = (
            f"cannot merge grouped Evaluators with different group_ranking_bins ({state.group_ranking_bins} and "
            f"{other.group_ranking_bins})"
        )
        raise StateError(msg)
    mine = set(state._key_list())
    fresh = sum(key not in mine for key in other._key_list())
    labels = state._labels if state._labels is not None else other._labels
    k = 0 if labels is None else int(labels.shape[0])
    if state._labels is not None and other._labels is not None and not state._fixed:
        k = int(np.union1d(state._labels, other._labels).shape[0])
    state._check_group_cells(len(mine) + fresh, k, "the merged states have", proba=other._mode == "proba")


def table_report(state: GroupedRows, names: Sequence[str]) -> GroupedReport:
    """The grouped report of the table: each group's report made when it is first read, the
    summary's table metrics read off the whole table at once."""
    assert state._table is not None
    table, fixed = state._table, state._fixed
    overall = state.report()
    reason = "every row of this group has sample_weight 0: there is nothing to score"
    weights = table.total_weights()

    def report_of(i: int) -> Report:
        return state._table_child(i)._report() if weights[i] > 0 else overall.undefined_like(reason)

    def columns(chosen: Sequence[str]) -> dict[str, F64]:
        if state.zero_division not in ("warn", 0, 0.0):
            return {}  # the table formulas count an undefined ratio as 0
        return group_tables.summary_columns(table, fixed, chosen)

    return GroupedReport(overall, LazyReports(table.keys, report_of), names, columns=columns)

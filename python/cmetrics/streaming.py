"""Streaming evaluation: :class:`Evaluator` accumulates everything :func:`cmetrics.evaluate`
computes, batch by batch, merges exactly across processes and serialises to a small,
versioned binary state.

What the state holds (its size does not grow with the number of rows, except as said):

- the hard confusion counts (K x K u64; and K x K f64 weighted sums with weights);
- with probabilities: the probabilistic confusion matrix, per-class true counts and
  weights, the entropy, Brier and log-loss sums and the calibration bins (all sums);
- for the ranking metrics (refinement, AUROC of the confidence, RPP, AURC) the tie groups
  of the confidences: one entry per distinct confidence value with its number of correct
  and wrong rows (and their weights), kept sorted. It stays exact and merges by a sorted
  merge. The compiled backend holds 16 bytes per distinct value (32 with weights) plus a
  buffer of recent rows, sorted into the groups (radix sort, merge in place) once it holds
  a quarter as many rows as there are groups (at least 2^23); the numpy backend keeps runs of
  groups merged as they come. The size is bounded by the number of distinct confidence
  values: float32 confidences of a K-class softmax are at least 1/K, and there are 2^23
  float32 values per power of two, so at most ``2^23 * ceil(log2 K)`` entries whatever
  the number of rows (33.5 million, 512 MiB, for K = 10); in practice far fewer (about 21
  million for 10^8 rows of the demo dump).
- with probabilities, for the class-ranking metrics: the weight of rows by the rank of their
  true class among the row's probabilities (K floats: top-k accuracy), and, unless ranking is
  off, the same kind of tie groups for each probability column against "the row is of this
  class" (one-vs-rest AUROC and AP). Exact, that is one entry per distinct value of each
  column: at most ``K x min(rows, distinct float32 values in [0, 1])`` entries (about 2^30 per
  column), so in practice up to K times the row count; ``ranking="approximate"`` caps each
  column at ``ranking_bins + 1`` entries.
- grouped (``group_by=True``), one such state per group value besides the state of all rows.
  With probabilities in the exact mode, the confidence summary of all rows is not fed the rows
  a second time: it is the union of the groups' summaries (a k-way merge of their sorted
  groups, cut into key ranges merged side by side), made when the bytes or the summary need
  it; it may then hold one entry per group for a value several groups share. The report does
  not make it: the groups' sorted summaries are merged straight into the ranking walk.
- ``ranking="approximate"`` caps that summary at ``ranking_bins + 1`` entries: confidences
  (which must then lie in [0, 1]) are replaced by the lower edge of their bin of width
  ``1 / ranking_bins`` (counted in a histogram) before ranking. Pairs inside one bin count
  as ties, so refinement and AUROC move by at most half the share of (correct, wrong)
  pairs that share a bin. Reports say which mode made them (``report.ranking``).

The byte format (:meth:`Evaluator.to_bytes`, version 2): ``b"CMETRICS"``, a u16 format
version, a u16 0, a u32 header length, a UTF-8 JSON header (settings, labels, input kind,
row count, float sums, and the name, dtype and shape of every array that follows), the
arrays (little-endian, C order, back to back: the confusion tables and accumulators, and
``ranking.values`` / ``ranking.n_pos`` / ``ranking.n_neg`` [/ ``w_pos`` / ``w_neg``], the
tie groups, stored as float32 / uint32 when that loses nothing, so 12 bytes per group for
float32 confidences, else float64 / uint64; with probabilities ``topk.hist`` and
``class_ranking.<column>.values`` / ``n_pos`` / ... likewise), and a CRC-32 of everything
before it. Readers
widen every array back to 64 bits. Nothing in it is pickled.

Counts are integers, so any split of the rows into batches, merged in any order, gives
bit-identical counts; floating-point sums agree to rounding (about 1e-15 relative).
"""

from __future__ import annotations

import json
import math
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from cmetrics import _checks, _groups, _ranking
from cmetrics import _proba as _p
from cmetrics._checks import F64, Backend, Bools, LabelKind, RankingMode, ZeroDivision
from cmetrics._config import check_classes, check_max_classes, get_num_threads, resolve_backend
from cmetrics._groups import GroupedReport, GroupKey
from cmetrics._kernels import BinaryRanking, Groups, ProbAccumulators, RankingState
from cmetrics._multiclass import class_ranking_values, in_place
from cmetrics._report import Report, build_report
from cmetrics.confusion import ConfusionMatrix
from cmetrics.exceptions import LabelError, LengthMismatchError, LimitExceededError, ValidationError, WeightError

__all__ = ["Evaluator", "RankingSummary", "StateError"]


#: First bytes of every serialised state, and the format version this module writes.
MAGIC = b"CMETRICS"
FORMAT_VERSION = 2
_HEAD = struct.Struct("<8sHHI")  # magic, version, reserved (0), header length


#: The float sums of the probability accumulators (the fields named ``*_sum``), stored in the
#: header of a state; the array fields follow the header.
_SUM_FIELDS = tuple(f for f in ProbAccumulators._fields if f.endswith("_sum"))


class StateError(ValidationError):
    """An Evaluator state that cannot be used: a corrupt or foreign byte string, a newer
    format version, or a merge of states with different settings."""


# --------------------------------------------------------------------------------------
# The ranking summary


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


# --------------------------------------------------------------------------------------
# The evaluator


class Evaluator:
    """Accumulate an evaluation batch by batch; :meth:`report` gives what
    :func:`cmetrics.evaluate` gives on all the rows at once.

    Parameters
    ----------
    labels : array-like, optional
        The classes, in the order of the probability columns. Without it (and without
        ``n_classes``) hard-label batches may bring new labels (the union is kept, sorted),
        and probability columns are classes ``0 .. K-1``.
    n_classes : int, optional
        Shorthand for ``labels=range(n_classes)``.
    n_bins : int
        Calibration bins, as in :func:`cmetrics.evaluate`.
    zero_division : "warn", 0, 1 or nan
        As in :func:`cmetrics.evaluate` (applied by :meth:`report`).
    ranking : "exact", "approximate" or "off"
        How the ranking metrics are accumulated (module docs): exactly, with a summary
        bounded by the number of distinct confidence values; approximately, in
        ``ranking_bins`` bins of [0, 1] (fixed memory); or not at all.
    ranking_bins : int
        Bins of the approximate mode (default 2^16: at most 1.5 MiB of state).
    top_k : int
        With probabilities, the report's top-k accuracies run from k = 1 to
        ``min(top_k, K - 1)`` (as in :func:`cmetrics.evaluate`).
    class_ranking : "exact", "approximate", "off" or None
        How the one-vs-rest AUROC and AP of the probability columns are accumulated:
        exactly (one tie-group state per column: up to K times the rows, see the module
        docs), binned in ``ranking_bins`` bins of [0, 1] per column (fixed memory, one read
        of each batch; what ``cmetrics score`` does by default), or not at all. None (the
        default) follows ``ranking``, as :func:`cmetrics.evaluate` does.
    max_classes : int, optional
        The most classes this Evaluator counts (default :func:`cmetrics.get_max_classes`);
        ``n_classes``, ``labels`` and the label set of hard-label batches are checked
        against it before anything is allocated.
    group_by : bool
        Every batch comes with group values (``update(..., groups=...)``): the Evaluator
        then keeps, beside the state of all rows, one state per group value, and
        :meth:`grouped_report` gives every group's report (each what an Evaluator fed
        only that group's rows would give). States merge group by group.
    max_groups : int, optional
        The most distinct group values (default 10,000, at most 65,536); a batch or merge
        that would exceed it raises :class:`~cmetrics.exceptions.LimitExceededError`
        and changes nothing. A group's state is about ``24 K^2 + 32 n_bins`` bytes plus
        its ranking summaries (as above, bounded by the group's rows).
    group_ranking_bins : int
        Bins of each group's approximate ranking states (default 1,024: a group's
        approximate class-ranking state holds at most ``K x 1,025`` entries); the state
        of all rows keeps ``ranking_bins``. No effect in the exact mode.
    backend : "auto", "rust" or "numpy"

    Every batch must have the same shape of inputs: ``y_proba`` in all or none, a
    ``confidence`` in all or none, ``sample_weight`` in all or none.

    Examples
    --------
    >>> ev = Evaluator(n_classes=2)
    >>> _ = ev.update([0, 1], y_proba=[[0.8, 0.2], [0.3, 0.7]])
    >>> _ = ev.update([1, 1], y_proba=[[0.6, 0.4], [0.1, 0.9]])
    >>> round(ev.report().accuracy, 4)
    0.75
    >>> ev2 = Evaluator.from_bytes(ev.to_bytes())
    >>> ev2.report().confusion_matrix.tolist()
    [[1, 0], [1, 2]]

    By group (here a language per row):

    >>> ev = Evaluator(group_by=True)
    >>> _ = ev.update([0, 1, 1], y_pred=[0, 1, 0], groups=["en", "en", "de"])
    >>> _ = ev.update([0], y_pred=[1], groups=["de"])
    >>> g = ev.grouped_report()
    >>> g.overall.accuracy, g["de"].accuracy, g["en"].accuracy
    (0.5, 0.0, 1.0)
    """

    def __init__(
        self,
        labels: ArrayLike | None = None,
        *,
        n_classes: int | None = None,
        n_bins: int = 15,
        zero_division: ZeroDivision = "warn",
        ranking: RankingMode | bool = "exact",
        ranking_bins: int = 1 << 16,
        top_k: int = 5,
        class_ranking: RankingMode | bool | None = None,
        max_classes: int | None = None,
        group_by: bool = False,
        max_groups: int | None = None,
        group_ranking_bins: int = _groups.DEFAULT_GROUP_RANKING_BINS,
        backend: Backend = "auto",
    ) -> None:
        if labels is not None and n_classes is not None:
            msg = "pass labels or n_classes, not both"
            raise ValidationError(msg)
        self.max_classes = check_max_classes(max_classes)
        if n_classes is not None:
            n_classes = _checks.check_n_classes(n_classes)
            check_classes(n_classes, "n_classes", self.max_classes)
            labels = np.arange(n_classes)
        self._labels: np.ndarray | None = None
        self._kind: LabelKind | None = None
        self._fixed = labels is not None
        if labels is not None:
            check_classes(_checks.length_of(labels), "labels", self.max_classes)
            lab = _checks.to_numpy(labels, "labels")
            kind: LabelKind = "str" if lab.dtype.kind in "UOS" else "int"
            self._labels = _checks.check_labels(lab, kind, self.max_classes)
            self._kind = kind
        self.n_bins = _checks.check_n_bins(n_bins)
        _checks.zero_division_value(zero_division)
        self.zero_division: ZeroDivision = zero_division
        self.ranking: RankingMode = _checks.ranking_mode(ranking)
        self.ranking_bins = _checks.check_ranking_bins(ranking_bins)
        self.top_k = _checks.check_top_k(top_k)
        self.class_ranking: RankingMode = _checks.ranking_mode(self.ranking if class_ranking is None else class_ranking)
        self.backend: Backend = backend
        # Set by the first batch: "proba" or "hard"; weights; a confidence with hard labels.
        self._mode: str | None = None
        self._weighted: bool | None = None
        self._has_confidence = False
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
        if not isinstance(group_by, bool):
            msg = f"group_by must be True or False, got {group_by!r}"
            raise ValidationError(msg)
        #: Whether rows come with group values (``update(..., groups=...)``).
        self.group_by = group_by
        #: The most distinct group values this Evaluator keeps a state for.
        self.max_groups = _groups.check_max_groups(max_groups)
        #: Bins of each group's approximate ranking states (``ranking_bins`` for all rows).
        self.group_ranking_bins = _checks.check_ranking_bins(group_ranking_bins)
        # With group_by: one Evaluator per group value, and the kind ("int" or "str") of each
        # grouping column, set by the first batch.
        self._groups: dict[GroupKey, Evaluator] = {}
        self._group_kinds: tuple[str, ...] | None = None
        # A group's approximate class-ranking state, dense: per column and bin, all rows,
        # positive rows and (with weights) their weights; set on the groups of a grouped
        # Evaluator, whose batches are binned for all groups at once.
        self._dense: _Dense | None = None

    # -- accumulation -------------------------------------------------------------------

    def update(
        self,
        y_true: ArrayLike,
        *,
        y_pred: ArrayLike | None = None,
        y_proba: ArrayLike | None = None,
        confidence: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None,
        groups: ArrayLike | tuple[ArrayLike, ...] | None = None,
    ) -> Evaluator:
        """Add one batch of rows (arguments as in :func:`cmetrics.evaluate`). Returns self.

        With ``group_by=True`` every batch passes ``groups``: one group value per row (an
        integer or a string), or a tuple of such arrays to group by several columns."""
        _checks.check_inputs("update", y_pred, y_proba, confidence)
        if groups is not None and not self.group_by:
            msg = "groups= needs an Evaluator created with group_by=True"
            raise ValidationError(msg)
        if groups is None and self.group_by:
            msg = "this Evaluator was created with group_by=True; pass groups= (one group value per row) in every batch"
            raise ValidationError(msg)
        if _is_empty(y_true):  # an empty batch (a filtered record batch, say) adds nothing...
            group_columns = groups if isinstance(groups, tuple) else (groups,)
            for name, other in (
                ("y_pred", y_pred),
                ("y_proba", y_proba),
                ("confidence", confidence),
                ("sample_weight", sample_weight),
                *(("groups", g) for g in group_columns),
            ):
                if other is not None and not _is_empty(other):  # ...when every argument is empty
                    msg = f"y_true is empty but {name} has rows; pass one {name} row per y_true row"
                    raise LengthMismatchError(msg)
            return self
        t = _checks.as_1d(y_true, "y_true")
        mode = "proba" if y_proba is not None else "hard"
        weighted = sample_weight is not None
        self._check_same_shape(mode, weighted, confidence is not None)
        if groups is not None:
            self._update_grouped(t, groups, y_pred, y_proba, confidence, sample_weight)
        elif y_proba is not None:
            self._update_proba(t, y_proba, y_pred, sample_weight)
        else:
            self._update_hard(t, y_pred, confidence, sample_weight)
        self._added(mode, weighted, confidence is not None, int(t.shape[0]))
        return self

    def _added(self, mode: str, weighted: bool, has_confidence: bool, rows: int) -> None:
        self._mode, self._weighted, self._has_confidence = mode, weighted, has_confidence
        self.n_rows += rows

    def _child(self) -> Evaluator:
        """An empty Evaluator for one group: this one's settings and, when fixed, its labels.
        Its approximate class-ranking state is dense (:class:`_Dense`)."""
        child = Evaluator(
            self._labels if self._fixed else None,
            n_bins=self.n_bins,
            zero_division=self.zero_division,
            ranking=self.ranking,
            ranking_bins=self.group_ranking_bins,
            top_k=self.top_k,
            class_ranking=self.class_ranking,
            max_classes=self.max_classes,
            backend=self.backend,
        )
        if child.class_ranking == "approximate":
            child._dense = _Dense.empty()
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
            k = _checks.proba_array(y_proba, n, self.max_classes).shape[1]
        enc = _groups.encode(groups, n, self.max_groups, n_classes=k)
        if self._group_kinds is not None and enc.kinds != self._group_kinds:
            msg = (
                f"earlier batches had group values of kinds {self._group_kinds}, this one {enc.kinds}; "
                "pass the same kind of group values (integers or strings, same columns) in every batch"
            )
            raise ValidationError(msg)
        fresh = sum(key not in self._groups for key in enc.keys)
        self._check_group_cells(len(self._groups) + fresh, k, "the batches have", proba=y_proba is not None)
        positions, offsets = _groups.split(enc.codes, len(enc.keys), self.backend)
        bounds = [(int(offsets[i]), int(offsets[i + 1])) for i in range(len(enc.keys))]
        if y_proba is not None:
            self._update_grouped_proba(t, enc.keys, positions, bounds, y_proba, y_pred, sample_weight)
        else:
            # Hard labels: counting is cheap, so this Evaluator counts the batch as it comes.
            self._update_hard(t, y_pred, confidence, sample_weight, len(self._groups) + fresh)
            assert y_pred is not None  # check_inputs
            p = _groups.scatter(_checks.as_1d(y_pred, "y_pred"), positions)
            c = None if confidence is None else _groups.scatter(_checks.as_1d(confidence, "confidence"), positions)
            w = _checks.weights(sample_weight, n)
            w = None if w is None else _groups.scatter(w, positions)
            t = _groups.scatter(t, positions)
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
        whole = _p.ProbInputs(
            _groups.scatter(inp.y_true, positions),
            _groups.scatter(inp.y_proba, positions, self.backend),
            None if inp.y_pred is None else _groups.scatter(inp.y_pred, positions),
            None if inp.sample_weight is None else _groups.scatter(inp.sample_weight, positions),
            inp.labels,
            inp.kind,
            inp.atol,
        )
        children = [self._groups.get(key) or self._child() for key in keys]
        be = resolve_backend(self.backend)
        offsets = np.array([0] + [hi for _, hi in bounds], dtype=np.int64)
        subs = [
            _p.ProbInputs(
                whole.y_true[lo:hi],
                whole.y_proba[lo:hi],
                None if whole.y_pred is None else whole.y_pred[lo:hi],
                None if whole.sample_weight is None else whole.sample_weight[lo:hi],
                inp.labels,
                inp.kind,
            )
            for lo, hi in bounds
        ]
        try:
            # Every group's probability pass, the groups side by side in one call.
            accs = be.evaluate_proba_groups(
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
            _p.accumulate(inp, backend=self.backend, n_bins=self.n_bins, validate=True)
            raise
        parts = list(zip(subs, accs, strict=True))
        codes = np.ascontiguousarray(whole.y_true, dtype=np.uint32)
        rank_hists = be.rank_histogram_groups(
            in_place(whole.y_proba), codes, offsets, whole.sample_weight, get_num_threads()
        )
        binned = None
        if self.class_ranking == "approximate":
            # Every group's columns binned by one call, in parallel over the groups.
            binned = be.grouped_binned_histograms(
                in_place(whole.y_proba),
                codes,
                offsets,
                self.group_ranking_bins,
                whole.sample_weight,
                get_num_threads(),
            )

        # Every group's rows are valid: add them (nothing was changed before this point).
        correct = confidence = None
        if self.ranking != "off":
            # The groups' ranking rows, in the layout's order: each group's segment goes to
            # its state, all in one call (the states side by side on the threads).
            correct = np.concatenate([acc.correct for _, acc in parts if acc.correct is not None])
            confidence = np.concatenate([acc.confidence for _, acc in parts if acc.confidence is not None])
            weighted = whole.sample_weight is not None
            be.add_segments(
                [child._state(weighted) for child in children],
                np.ascontiguousarray(correct, dtype=bool),
                np.ascontiguousarray(confidence, dtype=np.float64),
                offsets,
                None if whole.sample_weight is None else np.ascontiguousarray(whole.sample_weight, dtype=np.float64),
                self.group_ranking_bins if self.ranking == "approximate" else None,
                get_num_threads(),
            )
        for g, (child, (sub, acc)) in enumerate(zip(children, parts, strict=True)):
            if binned is not None and child._dense is not None:
                child._dense.add(*(None if a is None else a[g] for a in binned))
            child._add_proba(sub, acc, rank_hists[g], ranked=True)
            child._added("proba", sub.sample_weight is not None, False, int(sub.y_true.shape[0]))
        total: ProbAccumulators | None = None
        for key, child, (_, acc) in zip(keys, children, parts, strict=True):
            self._groups[key] = child
            total = _p.add_accumulators(total, acc)
        assert total is not None  # at least one group
        # All rows: the groups' tables summed; the ranking rows are the groups' (their order
        # does not matter), with the weights in the same order; the class ranking reads the
        # matrix as given (a column-major matrix bins a column at a time).
        if correct is not None and confidence is not None:
            if self.ranking == "exact":
                self._rank, self._rank_stale = None, True
            else:
                self._add_ranking(correct, confidence, whole.sample_weight)
        self._add_class_ranking(inp.y_true, inp.y_proba, inp.sample_weight, rank_hists.sum(axis=0))
        if self._labels is None:
            self._labels, self._kind = np.asarray(inp.labels), inp.kind
            self._fixed = True
        self._acc = _p.add_accumulators(self._acc, total)

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
    ) -> _p.ProbInputs:
        labels = self._labels
        if labels is None:
            k = _checks.proba_array(y_proba, t.shape[0], self.max_classes).shape[1]
            if t.dtype.kind in "UOS":
                msg = (
                    "y_true holds strings but the Evaluator has no labels; pass labels= naming the class "
                    "of each probability column"
                )
                raise LabelError(msg)
            labels = np.arange(k)
        return _p.prob_inputs(
            t, y_proba, labels=labels, y_pred=y_pred, sample_weight=sample_weight, backend=self.backend
        )

    def _accumulate(self, inp: _p.ProbInputs) -> ProbAccumulators:
        """The probability pass over validated inputs (keeping each row's confidence for the ranking)."""
        return _p.accumulate(
            inp, backend=self.backend, n_bins=self.n_bins, validate=True, keep_confidence=self.ranking != "off"
        )

    def _update_proba(
        self, t: np.ndarray, y_proba: ArrayLike, y_pred: ArrayLike | None, sample_weight: ArrayLike | None
    ) -> None:
        inp = self._proba_inputs(t, y_proba, y_pred, sample_weight)
        self._add_proba(inp, self._accumulate(inp))

    def _add_proba(
        self, inp: _p.ProbInputs, acc: ProbAccumulators, hist: F64 | None = None, ranked: bool = False
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
        self._acc = _p.add_accumulators(self._acc, acc)
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
        cm = ConfusionMatrix._count(
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
            _groups.check_group_count(n_groups, self.max_groups, k, "the batches have")
        counts = np.asarray(cm.counts).astype(np.uint64)
        weighted = cm.matrix if sample_weight is not None else None
        # The new tables first (a refused batch raises here), then the ranking rows (which
        # may refuse a confidence), and only then is anything kept.
        tables = self._table_after(cm.labels, counts, weighted)
        if confidence is not None and self.ranking != "off":
            ok, conf = _ranking.user_confidence(t, y_pred, confidence)
            self._add_ranking(ok, conf, _checks.weights(sample_weight, t.shape[0]))
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
        new_counts = _embed(self._hard_counts, self._labels, union, np.uint64)
        new_counts += _embed(counts, labels, union, np.uint64)
        new_weighted = self._hard_weighted
        if weighted is not None:
            new_weighted = _embed(self._hard_weighted, self._labels, union, np.float64)
            new_weighted += _embed(weighted, labels, union, np.float64)
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
        if self.class_ranking == "off" or self._dense is not None:  # a group's: binned by its parent
            return hist
        c = np.ascontiguousarray(codes, dtype=np.uint32)
        p = in_place(y_proba)
        if self._class_rank is None:
            self._class_rank = [be.GroupState(weight is not None) for _ in range(p.shape[1])]
        w = None if weight is None else np.ascontiguousarray(weight, dtype=np.float64)
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
        """The ranking states of the groups that have one."""
        return [child._rank for child in self._groups.values() if child._rank is not None]

    # -- merging ------------------------------------------------------------------------

    def _settings(self) -> dict[str, int | str | float | None]:
        return {
            "n_bins": self.n_bins,
            "ranking": self.ranking,
            "ranking_bins": self.ranking_bins if "approximate" in (self.ranking, self.class_ranking) else None,
            "top_k": self.top_k,
            "class_ranking": self.class_ranking,
            "zero_division": _zd_repr(self.zero_division),
        }

    def _group_settings(self) -> dict[str, int | str | float | None]:
        """The settings of this Evaluator's groups (:meth:`_settings` with the group bins)."""
        return self._child()._settings()

    def merge(self, other: Evaluator) -> Evaluator:
        """Add the rows of another Evaluator (same settings) to this one. Returns self."""
        if not isinstance(other, Evaluator):
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
        mine, theirs = self._settings(), other._settings()
        if mine != theirs:
            diff = {k: (mine[k], theirs[k]) for k in mine if mine[k] != theirs[k]}
            msg = f"cannot merge Evaluators with different settings {diff} (this one, the other)"
            raise StateError(msg)
        if (
            self._fixed
            and other._fixed
            and self._labels is not None
            and other._labels is not None
            and (self._labels.shape != other._labels.shape or not np.array_equal(self._labels, other._labels))
        ):
            msg = (
                f"cannot merge Evaluators with different labels ({self._labels.tolist()[:10]} and "
                f"{other._labels.tolist()[:10]}); create both with the same labels="
            )
            raise StateError(msg)
        if other._mode is None:
            return self
        if self.group_by:
            self._check_groups_merge(other)
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
            if self._mode is None:
                self._labels, self._kind, self._fixed = other._labels, other._kind, True
            elif (
                self._labels is not None
                and other._labels is not None
                and not np.array_equal(self._labels, other._labels)
            ):
                msg = "cannot merge Evaluators whose probability columns are different classes"
                raise StateError(msg)
            if other._acc is not None:
                self._acc = _p.add_accumulators(self._acc, other._acc)
            if other._rank_hist is not None:
                self._rank_hist = (
                    other._rank_hist.copy() if self._rank_hist is None else self._rank_hist + other._rank_hist
                )
            if other._dense is not None and self._dense is not None:
                self._dense.merge(other._dense)
            if other._class_rank is not None:
                if self._class_rank is None:
                    be = resolve_backend(self.backend)
                    self._class_rank = [be.GroupState(s.weighted) for s in other._class_rank]
                for mine_state, theirs_state in zip(self._class_rank, other._class_rank, strict=True):
                    _merge_state(mine_state, theirs_state, other is self)
        elif other._labels is not None and other._hard_counts is not None:
            try:
                self._add_table(other._labels, other._hard_counts, other._hard_weighted if other._weighted else None)
            except LabelError as e:
                msg = f"cannot merge these Evaluators: {e}"
                raise StateError(msg) from None
        # A state of all rows made from the groups' stays so: the merged groups hold every row.
        derived = self._rank_stale or other._rank_stale
        if other._rank is not None and not derived:
            _merge_state(self._state(other._rank.weighted), other._rank, other is self)
        self._mode, self._weighted, self._has_confidence = other._mode, other._weighted, other._has_confidence
        self.n_rows += other.n_rows
        for key, theirs_child in list(other._groups.items()):
            mine_child = self._groups.get(key) or self._child()
            mine_child.merge(theirs_child)
            self._groups[key] = mine_child
        if derived:
            self._rank, self._rank_stale = None, True
        if other._group_kinds is not None:
            self._group_kinds = other._group_kinds
        return self

    def _check_groups_merge(self, other: Evaluator) -> None:
        """Refuse, before anything changes, a merge of grouped states whose group values are of
        other kinds, or whose groups together exceed ``max_groups``."""
        if self._group_kinds is not None and other._group_kinds is not None and self._group_kinds != other._group_kinds:
            msg = (
                f"cannot merge Evaluators grouped by values of different kinds ({self._group_kinds} and "
                f"{other._group_kinds})"
            )
            raise StateError(msg)
        if self._group_settings() != other._group_settings():
            msg = (
                f"cannot merge grouped Evaluators with different group_ranking_bins ({self.group_ranking_bins} and "
                f"{other.group_ranking_bins})"
            )
            raise StateError(msg)
        fresh = sum(key not in self._groups for key in other._groups)
        labels = self._labels if self._labels is not None else other._labels
        k = 0 if labels is None else int(labels.shape[0])
        if self._labels is not None and other._labels is not None and not self._fixed:
            k = int(np.union1d(self._labels, other._labels).shape[0])
        self._check_group_cells(len(self._groups) + fresh, k, "the merged states have", proba=other._mode == "proba")

    def _check_group_cells(self, n_groups: int, k: int, what: str, *, proba: bool) -> None:
        """The limits on this Evaluator's groups (``max_groups``, the K x K tables and, with
        probabilities and the approximate class ranking, the dense ranking tables), checked
        before a batch, a merge or a load adds a group."""
        bins = self.group_ranking_bins if proba and self.class_ranking == "approximate" else None
        _groups.check_group_count(n_groups, self.max_groups, k, what, ranking_bins=bins)

    # -- the report ---------------------------------------------------------------------

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
            res = _p.ProbResult(self._acc, self._labels, self._kind or "int", self.backend)
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
            raise _bad("hard-label rows without a confusion matrix")
        weighted = bool(self._weighted)
        table = (
            self._hard_weighted
            if weighted and self._hard_weighted is not None
            else self._hard_counts.astype(np.float64)
        )
        cm = ConfusionMatrix._from_parts(
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
        return _groups.sort_keys(list(self._groups))

    # -- serialisation ------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """The state as bytes (format version 2, described in the module docs):
        ``b"CMETRICS"``, u16 version, u16 0, u32 header length, a UTF-8 JSON header, the
        arrays it lists (little-endian, C order, back to back), and a CRC-32 of all that."""
        arrays: list[tuple[str, np.ndarray]] = []
        sums: dict[str, float] = {}
        if self._acc is not None:
            for key, value in self._acc._asdict().items():
                if isinstance(value, np.ndarray):
                    arrays.append((f"acc.{key}", value))
                elif isinstance(value, float):
                    sums[key] = value
        if self._hard_counts is not None:
            arrays.append(("hard.counts", self._hard_counts))
        if self._hard_weighted is not None:
            arrays.append(("hard.weighted", self._hard_weighted))
        summary = self.ranking_summary()
        if summary is not None:
            for name in ("values", "n_pos", "n_neg", "w_pos", "w_neg"):
                a = getattr(summary, name)
                if a is not None:
                    arrays.append((f"ranking.{name}", _narrow(a)))
        if self._rank_hist is not None:
            arrays.append(("topk.hist", self._rank_hist))
        for col, g in enumerate(self._class_groups()):
            for name in ("values", "n_pos", "n_neg", "w_pos", "w_neg"):
                a = getattr(g, name)
                if a is not None:
                    arrays.append((f"class_ranking.{col}.{name}", _narrow(a)))
        labels = None
        if self._labels is not None:
            labels = {"dtype": self._labels.dtype.str, "values": self._labels.tolist()}
        header = {
            "format": "cmetrics.Evaluator",
            "settings": self._settings(),
            "fixed_labels": self._fixed,
            "labels": labels,
            "kind": self._kind,
            "mode": self._mode,
            "weighted": self._weighted,
            "has_confidence": self._has_confidence,
            "n_rows": self.n_rows,
            "sums": sums,
            "arrays": [{"name": n, "dtype": _le(a).dtype.str, "shape": list(a.shape)} for n, a in arrays],
        }
        children: list[bytes] = []
        if self.group_by:
            keys = self.group_keys
            children = [self._groups[key].to_bytes() for key in keys]
            header["groups"] = {
                "max_groups": self.max_groups,
                "ranking_bins": self.group_ranking_bins,
                "kinds": None if self._group_kinds is None else list(self._group_kinds),
                "keys": [_groups.key_json(key) for key in keys],
                "sizes": [len(c) for c in children],
            }
        head = json.dumps(header, separators=(",", ":"), allow_nan=True).encode()
        body = b"".join(
            [_HEAD.pack(MAGIC, FORMAT_VERSION, 0, len(head)), head]
            + [np.ascontiguousarray(_le(a)).tobytes() for _, a in arrays]
            + children
        )
        return body + struct.pack("<I", zlib.crc32(body))

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> Evaluator:
        """An Evaluator from :meth:`to_bytes` output.

        The state is checked before anything is built from it: the checksum, then every
        header field (types and ranges), every array (name, dtype, shape, values) and the
        consistency of all counts with the row count (at most 2^53). Anything else is a
        :class:`StateError`; nothing is allocated beyond the size of ``data``."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            msg = f"from_bytes takes bytes, got {type(data).__name__}; pass the output of Evaluator.to_bytes()"
            raise StateError(msg)
        try:
            return _load(bytes(data))
        except StateError:
            raise
        except (ValidationError, KeyError, TypeError, ValueError, OverflowError, IndexError) as e:
            msg = f"the Evaluator state is malformed ({e}); pass the output of Evaluator.to_bytes()"
            raise StateError(msg) from None

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        # Pickle as the documented byte format (no pickled objects inside).
        return (_from_bytes, (self.to_bytes(),))

    def __repr__(self) -> str:
        k = "?" if self._labels is None else self._labels.size
        rank = self._overall_rank()
        size = 0 if rank is None else len(rank)
        return (
            f"Evaluator(n_rows={self.n_rows:,}, n_classes={k}, inputs={self._mode or 'none yet'}, "
            f"ranking={self.ranking!r}, ranking_entries={size:,})"
        )


@dataclass
class _Dense:
    """A group's approximate class-ranking state as dense (K, bins + 1) tables: per column
    and bin, all rows, the rows of the column's class, and (with weights) their weights.
    Adding a batch is an array addition; the tie groups (the non-empty bins) are made when
    the report or the bytes need them."""

    all: np.ndarray | None = None
    pos: np.ndarray | None = None
    w_all: np.ndarray | None = None
    w_pos: np.ndarray | None = None

    @classmethod
    def empty(cls) -> _Dense:
        return cls()

    def add(self, all_rows: Any, pos: Any, w_all: Any, w_pos: Any) -> None:
        if self.all is None or self.pos is None:
            self.all, self.pos = np.array(all_rows, dtype=np.uint64), np.array(pos, dtype=np.uint64)
            self.w_all = None if w_all is None else np.array(w_all, dtype=np.float64)
            self.w_pos = None if w_pos is None else np.array(w_pos, dtype=np.float64)
            return
        self.all += all_rows
        self.pos += pos
        if self.w_all is not None and self.w_pos is not None:
            self.w_all += w_all
            self.w_pos += w_pos

    def merge(self, other: _Dense) -> None:
        if other.all is not None:
            self.add(other.all, other.pos, other.w_all, other.w_pos)

    def groups(self, bins: int) -> list[Groups]:
        """Each column's non-empty bins as tie groups (values: the bins' lower edges)."""
        if self.all is None or self.pos is None:
            return []
        out = []
        for col in range(self.all.shape[0]):
            all_rows, pos = self.all[col], self.pos[col]
            keep = np.flatnonzero(all_rows)
            w_pos = w_neg = None
            if self.w_all is not None and self.w_pos is not None:
                w_pos = self.w_pos[col][keep]
                w_neg = np.maximum(self.w_all[col][keep] - w_pos, 0.0)
            out.append(Groups(keep / float(bins), pos[keep], all_rows[keep] - pos[keep], w_pos, w_neg))
        return out

    @classmethod
    def from_groups(cls, groups: list[Groups], bins: int) -> _Dense:
        """The dense state of stored tie groups (whose values must be bin edges ``b / bins``)."""
        dense = cls()
        if not groups:
            return dense
        k, cells = len(groups), bins + 1
        weighted = groups[0].w_pos is not None
        all_rows = np.zeros((k, cells), dtype=np.uint64)
        pos = np.zeros((k, cells), dtype=np.uint64)
        w_all = np.zeros((k, cells)) if weighted else None
        w_pos = np.zeros((k, cells)) if weighted else None
        for col, g in enumerate(groups):
            at = np.rint(np.asarray(g.values) * bins).astype(np.int64)
            _want(
                bool(((at >= 0) & (at < cells)).all()) and np.array_equal(at / float(bins), g.values),
                "approximate class ranking values that are not bin edges",
            )
            all_rows[col, at] = g.n_pos + g.n_neg
            pos[col, at] = g.n_pos
            if w_all is not None and w_pos is not None and g.w_pos is not None and g.w_neg is not None:
                w_all[col, at] = g.w_pos + g.w_neg
                w_pos[col, at] = g.w_pos
        dense.add(all_rows, pos, w_all, w_pos)
        return dense


def _is_empty(x: object) -> bool:
    """Whether an argument has no rows (objects without a length are not empty)."""
    try:
        return len(x) == 0  # type: ignore[arg-type]  # anything with a length
    except TypeError:
        return False


def _from_bytes(data: bytes) -> Evaluator:
    return Evaluator.from_bytes(data)


#: The most rows a state may count (counts stay exact in float64 and far from u64 overflow).
MAX_STATE_ROWS = 2**53


def _bad(what: str) -> StateError:
    return StateError(f"the Evaluator state is malformed: {what}; pass the output of Evaluator.to_bytes()")


def _want(cond: bool, what: str) -> None:
    if not cond:
        raise _bad(what)


def _int_in(x: object, lo: int, hi: int, what: str) -> int:
    if not (isinstance(x, int) and not isinstance(x, bool) and lo <= x <= hi):
        raise _bad(f"{what} must be an integer in [{lo}, {hi}]")
    return x


def _exact_sum(a: np.ndarray) -> int:
    """Sum of non-negative uint64 values without wrapping (in 32-bit halves)."""
    low = int(np.sum(a & np.uint64(0xFFFFFFFF), dtype=np.uint64))
    high = int(np.sum(a >> np.uint64(32), dtype=np.uint64))
    return (high << 32) + low


def _load(buf: bytes, nested: bool = False) -> Evaluator:
    """Parse and check a state (see :meth:`Evaluator.from_bytes`); ``nested``: a group's
    state inside a grouped one, which may not itself be grouped."""
    if len(buf) < _HEAD.size + 4 or buf[:8] != MAGIC:
        msg = "not a cmetrics Evaluator state (bad magic bytes); pass the output of Evaluator.to_bytes()"
        raise StateError(msg)
    if zlib.crc32(buf[:-4]) != struct.unpack("<I", buf[-4:])[0]:
        msg = "the Evaluator state is corrupt (checksum mismatch); it was truncated or altered"
        raise StateError(msg)
    _, version, _, hlen = _HEAD.unpack_from(buf)
    if version != FORMAT_VERSION:
        msg = (
            f"Evaluator state format version {version} is not supported by this cmetrics (reads version "
            f"{FORMAT_VERSION}); upgrade cmetrics"
        )
        raise StateError(msg)
    _want(_HEAD.size + hlen <= len(buf) - 4, "the header runs past the end")
    try:
        header = json.loads(buf[_HEAD.size : _HEAD.size + hlen])
    except RecursionError:
        raise _bad("the header nests too deeply") from None
    except (ValueError, UnicodeDecodeError):
        raise _bad("the header is not UTF-8 JSON") from None
    _want(isinstance(header, dict) and header.get("format") == "cmetrics.Evaluator", "not an Evaluator header")
    s = header["settings"]
    _want(isinstance(s, dict), "settings must be a mapping")
    mode = header["mode"]
    _want(mode in (None, "proba", "hard"), f"unknown input mode {mode!r}")
    weighted = header["weighted"]
    _want(weighted in (None, True, False) and (weighted is None) == (mode is None), "inconsistent weighting")
    has_confidence = header["has_confidence"]
    _want(isinstance(has_confidence, bool), "has_confidence must be true or false")
    _want(isinstance(header["fixed_labels"], bool), "fixed_labels must be true or false")
    n_rows = _int_in(header["n_rows"], 0, MAX_STATE_ROWS, "n_rows")
    _want((n_rows == 0) == (mode is None), "rows without inputs, or inputs without rows")
    ranking = s["ranking"]
    _want(ranking in ("exact", "approximate", "off"), f"unknown ranking mode {ranking!r}")
    class_ranking = s["class_ranking"]
    _want(class_ranking in ("exact", "approximate", "off"), f"unknown class ranking mode {class_ranking!r}")
    bins = s["ranking_bins"]
    approximate = "approximate" in (ranking, class_ranking)
    _want((bins is None) == (not approximate), "ranking_bins must be set exactly in approximate mode")
    ev = Evaluator(
        n_bins=_int_in(s["n_bins"], 1, _checks.MAX_BINS, "n_bins"),
        zero_division=_zd_value(s["zero_division"]),
        ranking=ranking,
        ranking_bins=1 << 16 if bins is None else _int_in(bins, 1, 1 << 24, "ranking_bins"),
        top_k=_int_in(s["top_k"], 1, 32, "top_k"),
        class_ranking=class_ranking,
    )
    # Labels: a list of distinct ints or strings, within the class limit.
    lab = header["labels"]
    labels = None
    kind = header["kind"]
    if lab is not None:
        _want(isinstance(lab, dict) and isinstance(lab["values"], list), "labels must be a list")
        values = lab["values"]
        check_classes(len(values), "the state's labels", ev.max_classes)
        dtype = np.dtype(lab["dtype"])
        if kind == "int":
            _want(
                dtype.kind in "iu" and all(isinstance(v, int) and not isinstance(v, bool) for v in values),
                "integer labels must be integers",
            )
            _want(all(-(2**63) <= v < 2**63 for v in values), "integer labels must fit int64")
            labels = np.array(values, dtype=np.int64) if values else np.zeros(0, np.int64)
        else:
            _want(
                kind == "str" and dtype.kind == "U" and all(isinstance(v, str) for v in values),
                "string labels must be strings",
            )
            labels = np.array(values, dtype=np.str_) if values else np.zeros(0, np.str_)
        _want(labels.shape[0] > 0 and np.unique(labels).shape[0] == labels.shape[0], "labels must be distinct")
    else:
        _want(kind is None and mode is None, "inputs without labels")
    _want(mode is None or labels is not None, "inputs without labels")
    k = 0 if labels is None else labels.shape[0]
    # Arrays: known names, dtypes and shapes, within the buffer.
    square, column, bins = (k, k), (k,), (ev.n_bins,)
    acc_shapes = {
        "hard_counts": square,
        "hard_weighted": square,
        "pcm": square,
        "true_count": column,
        "true_weight": column,
        "bin_weight": bins,
        "bin_confidence": bins,
        "bin_correct": bins,
        "bin_count": bins,
    }
    shapes = {
        "hard.counts": square,
        "hard.weighted": square,
        "topk.hist": column,
        **{f"acc.{n}": s for n, s in acc_shapes.items()},
    }
    arrays: dict[str, np.ndarray] = {}
    at = _HEAD.size + hlen
    specs = header["arrays"]
    _want(isinstance(specs, list), "arrays must be a list")
    for spec in specs:
        name, dtype, shape = spec["name"], np.dtype(spec["dtype"]), spec["shape"]
        _want(isinstance(name, str) and name not in arrays, f"array {name!r} repeated or unnamed")
        _want(dtype.str in ("<u8", "<f8", "<u4", "<f4"), f"array {name!r} has dtype {dtype.str}")
        _want(
            isinstance(shape, list) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape),
            f"array {name!r} has a bad shape",
        )
        count = 1
        for d in shape:
            count *= d
        _want(count * dtype.itemsize <= len(buf) - 4 - at, f"array {name!r} runs past the end")
        if name.startswith(("ranking.", "class_ranking.")):
            _want(len(shape) == 1, f"array {name!r} must be 1-D")
        else:
            _want(name in shapes and tuple(shape) == shapes[name], f"unexpected array {name!r} of shape {shape}")
        a = np.frombuffer(buf, dtype=dtype, count=count, offset=at).reshape(shape)
        wide = np.float64 if dtype.kind == "f" else np.uint64
        arrays[name] = a.astype(wide)
        at += a.nbytes
    grouping = header.get("groups")
    _want(grouping is None or not nested, "a group's state is itself grouped")
    children: list[bytes] = []
    if grouping is not None:
        _want(isinstance(grouping, dict), "groups must be a mapping")
        sizes = grouping["sizes"]
        _want(isinstance(sizes, list), "group sizes must be a list")
        for size in sizes:
            _int_in(size, _HEAD.size + 4, len(buf), "a group's state size")
            children.append(buf[at : at + size])
            at += size
    _want(at == len(buf) - 4, "trailing bytes after the arrays")
    for name, a in arrays.items():
        if a.dtype.kind == "f":
            _want(bool(np.isfinite(a).all()), f"array {name!r} holds NaN or infinity")
            if not name.endswith(".values"):
                _want(bool((a >= 0).all()), f"array {name!r} holds negative sums")
        else:
            _want(a.size == 0 or int(a.max()) <= n_rows, f"array {name!r} holds counts above n_rows")
    sums = header["sums"]
    _want(isinstance(sums, dict), "sums must be a mapping")
    for key, value in sums.items():
        _want(
            key in _SUM_FIELDS
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
            and math.isfinite(value)
            and value >= 0,
            f"bad sum {key!r}",
        )
    # What each mode must hold, and the counts agreeing with n_rows.
    proba_names = {f"acc.{key}" for key in acc_shapes if key != "hard_weighted"} | {"topk.hist"}
    grouped = {n for n in arrays if n.startswith(("ranking.", "class_ranking."))}
    if mode == "proba":
        want = proba_names | ({"acc.hard_weighted"} if weighted else set())
        _want(set(arrays) - grouped == want, "missing or extra arrays")
        hist = arrays["topk.hist"]
        if not weighted:
            _want(bool((hist == np.round(hist)).all()) and int(hist.sum()) == n_rows, "topk.hist does not add up")
        _want(set(sums) == set(_SUM_FIELDS), "missing sums")
        _want(not has_confidence, "a confidence column with probabilities")
        for name in ("acc.hard_counts", "acc.true_count", "acc.bin_count"):
            _want(_exact_sum(arrays[name]) == n_rows, f"{name} does not add up to n_rows")
    elif mode == "hard":
        want = {"hard.counts"} | ({"hard.weighted"} if weighted else set())
        _want(set(arrays) - grouped == want, "missing or extra arrays")
        _want(not sums, "sums without probabilities")
        _want(_exact_sum(arrays["hard.counts"]) == n_rows, "hard.counts does not add up to n_rows")
    else:
        _want(not arrays and not sums, "arrays without rows")
    ranked = {n for n in arrays if n.startswith("ranking.")}
    expect_ranking = mode is not None and ranking != "off" and (mode == "proba" or has_confidence)
    if expect_ranking:
        _check_groups(arrays, "ranking", ranked, bool(weighted), ranking, n_rows)
    else:
        _want(not ranked, "ranking arrays where none belong")
    by_class = {n for n in arrays if n.startswith("class_ranking.")}
    expect_classes = mode == "proba" and class_ranking != "off"
    if expect_classes:
        positives = 0
        for col in range(k):
            names = {n for n in by_class if n.startswith(f"class_ranking.{col}.")}
            positives += _check_groups(arrays, f"class_ranking.{col}", names, bool(weighted), class_ranking, n_rows)
            by_class -= names
        _want(not by_class, "class ranking arrays of no class")
        _want(positives == n_rows, "class ranking positives do not add up to n_rows")
    else:
        _want(not by_class, "class ranking arrays where none belong")
    # Built only now, from checked parts.
    ev._labels, ev._kind = labels, kind
    ev._fixed = bool(header["fixed_labels"])
    ev._mode, ev._weighted, ev._has_confidence = mode, weighted, has_confidence
    ev.n_rows = n_rows
    if mode == "proba":
        fields: dict[str, object] = {"hard_weighted": None, "confidence": None, "correct": None, "ranking": None}
        fields.update({n[4:]: a for n, a in arrays.items() if n.startswith("acc.")})
        fields.update({n: float(value) for n, value in sums.items()})
        ev._acc = ProbAccumulators._make(fields[f] for f in ProbAccumulators._fields)
    ev._hard_counts = arrays.get("hard.counts")
    ev._hard_weighted = arrays.get("hard.weighted")
    if expect_ranking:
        ev._state(bool(weighted)).absorb(_groups_of(arrays, "ranking"), get_num_threads())
    if mode == "proba":
        ev._rank_hist = arrays["topk.hist"]
    if expect_classes:
        be = resolve_backend(ev.backend)
        ev._class_rank = []
        for col in range(k):
            state = be.GroupState(bool(weighted))
            state.absorb(_groups_of(arrays, f"class_ranking.{col}"), get_num_threads())
            ev._class_rank.append(state)
    if grouping is not None:
        _load_groups(ev, grouping, children)
    return ev


def _group_key(value: object, kinds: list[str]) -> GroupKey:
    """A stored group value, checked against the kinds of the grouping columns."""
    parts = value if len(kinds) > 1 else [value]
    if not (isinstance(parts, list) and len(parts) == len(kinds)):
        raise _bad("a group value of the wrong arity")
    out: list[int | str] = []
    for part, kind in zip(parts, kinds, strict=True):
        if kind == "int":
            _want(isinstance(part, int) and not isinstance(part, bool), "an integer group value that is not one")
            _want(-(2**63) <= part < 2**63, "an integer group value outside int64")
        else:
            _want(isinstance(part, str), "a string group value that is not one")
        out.append(part)
    return tuple(out) if len(kinds) > 1 else out[0]


def _load_groups(ev: Evaluator, grouping: dict[str, Any], children: list[bytes]) -> None:
    """Rebuild the groups of a grouped state from checked parts: distinct keys of the stored
    kinds, within ``max_groups``, each a state with the parent's settings and inputs, whose
    rows add up to the parent's."""
    ev.group_by = True
    ev.max_groups = _int_in(grouping["max_groups"], 1, _groups.MAX_GROUPS, "max_groups")
    ev.group_ranking_bins = _int_in(grouping["ranking_bins"], 1, 1 << 24, "the groups' ranking_bins")
    kinds, keys = grouping["kinds"], grouping["keys"]
    _want(isinstance(keys, list) and len(keys) == len(children), "group keys and states do not match")
    _want(len(keys) <= ev.max_groups, "more groups than max_groups")
    k = 0 if ev._labels is None else int(ev._labels.shape[0])
    try:
        ev._check_group_cells(len(keys), k, "the state's groups have", proba=ev._mode == "proba")
    except LimitExceededError as e:
        raise _bad(str(e)) from None
    if kinds is None:
        _want(not keys and ev._mode is None, "groups without kinds")
        return
    _want(
        isinstance(kinds, list) and 0 < len(kinds) <= 64 and all(k in ("int", "str") for k in kinds),
        "group kinds must be a list of 'int' and 'str'",
    )
    rows = 0
    for value, blob in zip(keys, children, strict=True):
        key = _group_key(value, kinds)
        _want(key not in ev._groups, "a group value repeated")
        child = _load(blob, nested=True)
        _want(child._settings() == ev._group_settings(), "a group's settings differ from the state's")
        _want(
            (child._mode, child._weighted, child._has_confidence) == (ev._mode, ev._weighted, ev._has_confidence),
            "a group's inputs differ from the state's",
        )
        _want(child.n_rows > 0, "an empty group")
        _want(
            child._labels is not None
            and ev._labels is not None
            and child._kind == ev._kind
            and bool(np.isin(child._labels, ev._labels).all()),
            "a group's labels are not among the state's",
        )
        if ev._fixed:
            same = child._labels is not None and ev._labels is not None and np.array_equal(child._labels, ev._labels)
            _want(child._fixed and same, "a group's labels differ")
        child.max_classes = ev.max_classes
        if child.class_ranking == "approximate":
            child._dense = _Dense.from_groups(child._class_groups(), child.ranking_bins)
            child._class_rank = None
        rows += child.n_rows
        ev._groups[key] = child
    _want(rows == ev.n_rows, "the groups' rows do not add up to n_rows")
    _check_group_sums(ev)
    ev._group_kinds = tuple(kinds)


def _check_group_sums(ev: Evaluator) -> None:
    """The state of all rows of a grouped state holds what its groups hold together: every
    count exactly, every float sum to rounding (the two were added in different orders)."""
    children = list(ev._groups.values())
    if not children or ev._labels is None:
        return

    def agree(name: str, whole: Any, parts: list[Any]) -> None:
        total = sum(parts[1:], start=np.array(parts[0], dtype=np.float64))
        whole = np.asarray(whole, dtype=np.float64)
        scale = sum((np.abs(np.asarray(p, dtype=np.float64)) for p in parts[1:]), start=np.abs(parts[0]))
        _want(
            whole.shape == total.shape and bool((np.abs(whole - total) <= 1e-9 * scale + 1e-300).all()),
            f"the state's {name} is not the sum of its groups'",
        )

    def exact(name: str, whole: Any, parts: list[Any]) -> None:
        total = [int(v) for v in np.asarray(parts[0]).ravel()]
        for p in parts[1:]:
            total = [a + int(b) for a, b in zip(total, np.asarray(p).ravel(), strict=True)]
        ok = [int(v) for v in np.asarray(whole).ravel()] == total
        _want(ok, f"the state's {name} are not the sum of its groups'")

    if ev._mode == "proba":
        accs = [c._acc for c in children]
        _want(ev._acc is not None and all(a is not None for a in accs), "a group without accumulators")
        assert ev._acc is not None
        for field in ("hard_counts", "true_count", "bin_count"):
            exact(field, getattr(ev._acc, field), [getattr(a, field) for a in accs])
        sums = ("pcm", "true_weight", "bin_weight", "bin_confidence", "bin_correct", "weight_sum", "log_loss_sum")
        for field in sums:
            agree(field, getattr(ev._acc, field), [getattr(a, field) for a in accs])
        if ev._rank_hist is not None:
            agree("top-k histogram", ev._rank_hist, [c._rank_hist for c in children])
        return
    # Hard labels: each group's table placed at its labels' rows and columns of the whole.
    k = ev._labels.shape[0]
    position = {lab: i for i, lab in enumerate(ev._labels.tolist())}
    placed = []
    for c in children:
        assert c._labels is not None and c._hard_counts is not None
        at = np.array([position[lab] for lab in c._labels.tolist()], dtype=np.intp)
        table = np.zeros((k, k), dtype=np.uint64)
        table[np.ix_(at, at)] = c._hard_counts
        placed.append(table)
    exact("counts", ev._hard_counts, placed)


def _groups_of(arrays: dict[str, np.ndarray], prefix: str) -> Groups:
    return Groups(
        arrays[f"{prefix}.values"],
        arrays[f"{prefix}.n_pos"],
        arrays[f"{prefix}.n_neg"],
        arrays.get(f"{prefix}.w_pos"),
        arrays.get(f"{prefix}.w_neg"),
    )


def _check_groups(
    arrays: dict[str, np.ndarray], prefix: str, names: set[str], weighted: bool, ranking: str, n_rows: int
) -> int:
    """Check one set of stored tie groups (exactly the arrays a state of this kind holds,
    strictly increasing values, [0, 1] in approximate mode, counts adding up to ``n_rows``);
    returns their positive rows."""
    want = {f"{prefix}.values", f"{prefix}.n_pos", f"{prefix}.n_neg"} | (
        {f"{prefix}.w_pos", f"{prefix}.w_neg"} if weighted else set()
    )
    _want(names == want, f"missing or extra {prefix} arrays")
    v = arrays[f"{prefix}.values"]
    g = len(v)
    _want(all(len(arrays[n]) == g for n in want), f"{prefix} arrays of different lengths")
    _want(g == 0 or bool((np.diff(v) > 0).all()), f"{prefix} values not strictly increasing")
    if ranking == "approximate":
        _want(g == 0 or (v[0] >= 0 and v[-1] <= 1), f"approximate {prefix} values outside [0, 1]")
    positives = _exact_sum(arrays[f"{prefix}.n_pos"])
    _want(positives + _exact_sum(arrays[f"{prefix}.n_neg"]) == n_rows, f"{prefix} counts do not add up to n_rows")
    return positives


def _merge_state(mine: RankingState, theirs: RankingState, same: bool) -> None:
    """Add the groups of one ranking state to another (by a sorted merge when both are of one backend)."""
    if same or type(theirs) is not type(mine):
        mine.absorb(theirs.groups(get_num_threads()), get_num_threads())
    else:
        mine.merge(theirs, get_num_threads())


def _narrow(a: np.ndarray) -> np.ndarray:
    """Ranking arrays stored narrow when that loses nothing: float32 values (confidences of
    float32 probabilities) and uint32 counts take half the bytes; readers widen them back."""
    if a.dtype == np.float64:
        f = a.astype(np.float32)
        if np.array_equal(f.astype(np.float64), a):
            return f
    elif a.dtype == np.uint64 and (a.shape[0] == 0 or int(a.max()) < 2**32):
        return a.astype(np.uint32)
    return a


def _le(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    return a.astype(a.dtype.newbyteorder("<")) if a.dtype.byteorder == ">" else a


def _zd_repr(zd: ZeroDivision) -> str | float:
    return "nan" if isinstance(zd, float) and np.isnan(zd) else zd


def _zd_value(zd: object) -> ZeroDivision:
    """``zero_division`` as stored (NaN as the string "nan"), checked."""
    value = float("nan") if zd == "nan" else zd
    _checks.zero_division_value(value)
    return cast("ZeroDivision", value)  # checked just above


def _embed(table: np.ndarray | None, labels: np.ndarray | None, union: np.ndarray, dtype: Any) -> np.ndarray:
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

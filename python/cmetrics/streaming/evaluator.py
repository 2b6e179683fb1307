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

The byte format (:meth:`Evaluator.to_bytes`, version 2) is described in
:mod:`cmetrics.streaming.state_format`; nothing in it is pickled.

Counts are integers, so any split of the rows into batches, merged in any order, gives
bit-identical counts; floating-point sums agree to rounding (about 1e-15 relative).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._base import validation
from cmetrics._base.aliases import Backend, LabelKind, RankingMode, ZeroDivision
from cmetrics._base.config import check_classes
from cmetrics._derive.counted_table import CountedTable
from cmetrics.exceptions import LengthMismatchError, NotImplementedOptionError, StateError, ValidationError
from cmetrics.streaming import state_format
from cmetrics.streaming.grouping import GroupedRows, is_empty
from cmetrics.streaming.replicates import check_options
from cmetrics.streaming.rows import RankingSummary
from cmetrics.streaming.settings import DEFAULT_GROUP_RANKING_BINS, EvaluationSettings
from cmetrics.streaming.state_format import FORMAT_VERSION, MAGIC

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["FORMAT_VERSION", "MAGIC", "Evaluator", "RankingSummary", "StateError"]


class Evaluator(GroupedRows):
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
        The most distinct group values (default 10,000, at most 2^20); a batch or merge
        that would exceed it raises :class:`~cmetrics.exceptions.LimitExceededError`
        and changes nothing. Hard labels without a confidence keep every group's table in
        one ``G x K x K`` table (8 bytes a cell, 16 with weights; at most 2^27 cells); other
        inputs keep a state per group of about ``24 K^2 + 32 n_bins`` bytes plus its ranking
        summaries (as above, bounded by the group's rows).
    group_ranking_bins : int
        Bins of each group's approximate ranking states (default 1,024: a group's
        approximate class-ranking state holds at most ``K x 1,025`` entries); the state
        of all rows keeps ``ranking_bins``. No effect in the exact mode.
    bootstrap : int, optional
        Keep this many Poisson bootstrap replicates of every metric's sums (module
        :mod:`cmetrics.streaming.replicates`): :meth:`report` then has percentile
        :attr:`~cmetrics.Report.intervals` of the confusion-matrix metrics (and, with
        probabilities, of cPrecision/cRecall/cF1, log loss and Brier), the same as
        :func:`cmetrics.bootstrap` of all the rows with the same seed, however the rows were
        batched, merged or serialised. Needs ``labels`` or ``n_classes``; rows are keyed by
        their global index (``update(..., row_offset=)``). With ``group_by=True`` every group
        keeps its own replicate sums too (its rows drawn with their global indices), and each
        group's report in :meth:`grouped_report` has its intervals.
    seed : int
        The bootstrap's seed.
    confidence_level : float
        The level of the bootstrap intervals.
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

    With bootstrap intervals, from partitions merged:

    >>> y = [0, 1, 1, 0, 1, 0, 1, 1] * 50
    >>> p = [0, 1, 0, 0, 1, 1, 1, 1] * 50
    >>> a = Evaluator(n_classes=2, bootstrap=500, seed=3).update(y[:200], y_pred=p[:200])
    >>> b = Evaluator(n_classes=2, bootstrap=500, seed=3).update(y[200:], y_pred=p[200:], row_offset=200)
    >>> iv = a.merge(b).report().intervals["accuracy"]
    >>> iv.estimate, iv.low < 0.75 < iv.high
    (0.75, True)
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
        group_ranking_bins: int = DEFAULT_GROUP_RANKING_BINS,
        bootstrap: int | None = None,
        seed: int = 0,
        confidence_level: float = 0.95,
        backend: Backend = "auto",
    ) -> None:
        settings = EvaluationSettings.make(
            n_bins=n_bins,
            zero_division=zero_division,
            ranking=ranking,
            ranking_bins=ranking_bins,
            top_k=top_k,
            class_ranking=class_ranking,
            max_classes=max_classes,
            max_groups=max_groups,
            group_ranking_bins=group_ranking_bins,
            backend=backend,
        )
        labels_, kind = _checked_labels(labels, n_classes, settings.max_classes)
        super().__init__(settings, labels_, kind, group_by)
        self._keep_replicates(bootstrap, seed, confidence_level)

    def _keep_replicates(self, bootstrap: int | None, seed: int, confidence_level: float) -> None:
        """The ``bootstrap=``, ``seed=`` and ``confidence_level=`` options, checked and kept."""
        if bootstrap is not None:
            # The values first: a wrong count is named as such, with or without labels.
            options = check_options(bootstrap, seed, confidence_level)
            if self._labels is None:
                msg = "bootstrap= lays its replicate sums out by class; pass labels= or n_classes= as well"
                raise ValidationError(msg)
            self._bootstrap = options
        elif seed != 0 or confidence_level != 0.95:
            msg = "seed= and confidence_level= belong to the bootstrap; pass bootstrap= (the number of replicates)"
            raise ValidationError(msg)

    def update_counts(self, y_true: ArrayLike, y_pred: ArrayLike, counts: ArrayLike) -> Self:
        """Add rows given as cells of the confusion matrix: ``counts[i]`` rows whose true label
        is ``y_true[i]`` and prediction ``y_pred[i]`` (a pair may repeat; its counts add up).
        What an engine that counts in its own language hands over: a SQL
        ``GROUP BY y_true, y_pred`` with ``COUNT(*)`` gives every hard-label metric exactly,
        without the rows. Unweighted hard labels only (no ``groups``, ``y_proba``, confidence
        or bootstrap replicates, which need the rows). Returns self.

        >>> ev = Evaluator().update_counts(["cat", "cat", "dog"], ["cat", "dog", "dog"], [90, 10, 50])
        >>> ev.n_rows, round(ev.report().accuracy, 4)
        (150, 0.9333)
        """
        if self.group_by or self._bootstrap is not None:
            msg = (
                "update_counts adds ungrouped, unweighted cells; groups and bootstrap replicates need the rows (update)"
            )
            raise NotImplementedOptionError(msg)
        t, p = validation.as_1d(y_true, "y_true"), validation.as_1d(y_pred, "y_pred")
        n = validation.as_1d(counts, "counts")
        if not (t.shape[0] == p.shape[0] == n.shape[0]):
            msg = (
                f"y_true, y_pred and counts have {t.shape[0]}, {p.shape[0]} and {n.shape[0]} entries; pass one per cell"
            )
            raise LengthMismatchError(msg)
        if n.dtype.kind not in "iu" or (n.size and (int(n.min()) < 0 or int(n.max()) >= 2**53)):
            msg = "counts must be integers in [0, 2^53): the number of rows of each cell"
            raise ValidationError(msg)
        if is_empty(t):
            return self
        self._check_same_shape("hard", False, False)
        cm = CountedTable._count(
            t, p, self._labels if self._fixed else None, n.astype(np.float64), self.max_classes, self.backend
        )
        table = np.asarray(cm.matrix).astype(np.uint64)  # integer sums of integer counts: exact
        self._add_table(cm.labels, table, None)
        self._added("hard", False, False, int(n.sum()))
        return self

    @classmethod
    def from_settings(
        cls,
        settings: EvaluationSettings,
        labels: ArrayLike | None = None,
        *,
        n_classes: int | None = None,
        group_by: bool = False,
        bootstrap: int | None = None,
        seed: int = 0,
        confidence_level: float = 0.95,
    ) -> Self:
        """An Evaluator of settings made beforehand (:meth:`EvaluationSettings.make`): what
        the command line and :mod:`cmetrics.dask` build once and hand to every Evaluator
        (``bootstrap``, ``seed``, ``confidence_level`` as for the constructor).

        >>> s = EvaluationSettings.make(ranking="off")
        >>> Evaluator.from_settings(s, n_classes=2).update([0, 1], y_pred=[0, 0]).report().accuracy
        0.5
        """
        if not isinstance(settings, EvaluationSettings):
            msg = f"settings must be an EvaluationSettings, got {type(settings).__name__}"
            raise ValidationError(msg)
        labels_, kind = _checked_labels(labels, n_classes, settings.max_classes)
        ev = cls._empty(settings, labels_, kind, group_by)
        ev._keep_replicates(bootstrap, seed, confidence_level)
        return ev

    # -- serialisation ----------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """The state as bytes (format version 2, :mod:`cmetrics.streaming.state_format`):
        ``b"CMETRICS"``, u16 version, u16 0, u32 header length, a UTF-8 JSON header, the
        arrays it lists (little-endian, C order, back to back), and a CRC-32 of all that."""
        return state_format.encode(self)

    @classmethod
    def from_bytes(cls, data: bytes | bytearray | memoryview) -> Self:
        """An Evaluator from :meth:`to_bytes` output.

        The state is checked before anything is built from it: the checksum, then every
        header field (types and ranges), every array (name, dtype, shape, values) and the
        consistency of all counts with the row count (at most 2^53). Anything else is a
        :class:`StateError`; nothing is allocated beyond the size of ``data``."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            msg = f"from_bytes takes bytes, got {type(data).__name__}; pass the output of Evaluator.to_bytes()"
            raise StateError(msg)
        try:
            return state_format.decode(cls, bytes(data))
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


def _from_bytes(data: bytes) -> Evaluator:
    return Evaluator.from_bytes(data)


def _checked_labels(
    labels: ArrayLike | None, n_classes: int | None, max_classes: int
) -> tuple[np.ndarray | None, LabelKind | None]:
    """``labels=`` (or ``n_classes=``, standing for ``0 .. n_classes - 1``) checked, with
    their kind; (None, None) for neither."""
    if labels is not None and n_classes is not None:
        msg = "pass labels or n_classes, not both"
        raise ValidationError(msg)
    if n_classes is not None:
        n_classes = validation.check_n_classes(n_classes)
        check_classes(n_classes, "n_classes", max_classes)
        labels = np.arange(n_classes)
    if labels is None:
        return None, None
    check_classes(validation.length_of(labels), "labels", max_classes)
    lab = validation.to_numpy(labels, "labels")
    kind: LabelKind = "str" if lab.dtype.kind in "UOS" else "int"
    return validation.check_labels(lab, kind, max_classes), kind


def merge_all(states: Iterable[Evaluator | bytes | bytearray | memoryview]) -> Evaluator:
    """One Evaluator of many (Evaluators or their :meth:`Evaluator.to_bytes`), merged in pairs
    in a fixed balanced tree over the order given: the same sums, associated the same way,
    whatever engine produced the states (Dask, Spark, Ray, ``torch.distributed``), so the same
    states in the same order give the same bits; pass them in the order of the rows (partition
    order) for results independent of how an engine scheduled them. Evaluators given as objects
    are merged into (as :meth:`Evaluator.merge` merges into itself); pass their bytes to keep
    them as they are.

    >>> a = Evaluator(n_classes=2).update([0, 1], y_pred=[0, 1])
    >>> b = Evaluator(n_classes=2).update([1, 1], y_pred=[0, 1])
    >>> merge_all([a.to_bytes(), b]).report().accuracy
    0.75
    """
    evs: list[Evaluator] = []
    for i, s in enumerate(states):
        if isinstance(s, Evaluator):
            evs.append(s)
        elif isinstance(s, (bytes, bytearray, memoryview)):
            evs.append(Evaluator.from_bytes(s))
        else:
            msg = f"states[{i}] is a {type(s).__name__}; pass Evaluators or their to_bytes() output"
            raise StateError(msg)
    if not evs:
        msg = "states is empty; pass at least one Evaluator (or its bytes)"
        raise StateError(msg)
    while len(evs) > 1:
        evs = [a.merge(b) for a, b in zip(evs[::2], evs[1::2], strict=False)] + evs[len(evs) - len(evs) % 2 :]
    return evs[0]

"""An approximate class-ranking state as dense (K, bins + 1) tables: per column and bin, all
rows, the rows of the column's class, and (with weights) the weights of those and of the
other rows. Adding a batch adds into the tables (an Evaluator's batches, counted by one
kernel call; a grouped Evaluator's groups, binned for all groups at once by their parent);
the tie groups (the non-empty bins) are made when a report or the bytes need them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cmetrics._base.config import get_num_threads
from cmetrics._kernels import GroupedHistograms, Groups, Kernels
from cmetrics.exceptions import StateError

#: The most cells (classes x (bins + 1)) an Evaluator keeps dense: 2^21 cells, 32 MiB of
#: counts (64 MiB with weights). Past it each column keeps the tie groups of its occupied bins.
DENSE_CELLS = 1 << 21


def dense_fits(n_classes: int, bins: int) -> bool:
    """Whether an Evaluator's approximate class ranking of ``n_classes`` columns and ``bins``
    bins is kept dense (see ``DENSE_CELLS``)."""
    return n_classes * (bins + 1) <= DENSE_CELLS


@dataclass
class DenseClassRanking:
    """An approximate class-ranking state as dense (K, bins + 1) tables: per column and bin,
    all rows, the rows of the column's class, and (with weights) the weights of the column's
    class's rows and of the others. The tie groups (the non-empty bins) are made when the
    report or the bytes need them."""

    all: np.ndarray | None = None
    pos: np.ndarray | None = None
    w_pos: np.ndarray | None = None
    w_neg: np.ndarray | None = None

    @classmethod
    def empty(cls) -> DenseClassRanking:
        return cls()

    @classmethod
    def zeros(cls, n_classes: int, bins: int, weighted: bool) -> DenseClassRanking:
        shape = (n_classes, bins + 1)
        w = (np.zeros(shape), np.zeros(shape)) if weighted else (None, None)
        return cls(np.zeros(shape, dtype=np.uint64), np.zeros(shape, dtype=np.uint64), *w)

    def add(self, all_rows: Any, pos: Any, w_pos: Any, w_neg: Any) -> None:
        if self.all is None or self.pos is None:
            self.all, self.pos = np.array(all_rows, dtype=np.uint64), np.array(pos, dtype=np.uint64)
            self.w_pos = None if w_pos is None else np.array(w_pos, dtype=np.float64)
            self.w_neg = None if w_neg is None else np.array(w_neg, dtype=np.float64)
            return
        self.all += all_rows
        self.pos += pos
        if self.w_pos is not None and self.w_neg is not None:
            self.w_pos += w_pos
            self.w_neg += w_neg

    def add_group(self, h: GroupedHistograms, g: int) -> None:
        """Add group ``g``'s tables of a grouped batch (its weights: of all rows and of the
        positive ones; the negative weight of a cell is their difference, at least 0)."""
        w_pos = None if h.w_pos is None else h.w_pos[g]
        w_neg = None if h.w_all is None or w_pos is None else np.maximum(h.w_all[g] - w_pos, 0.0)
        self.add(h.all[g], h.pos[g], w_pos, w_neg)

    def add_batch(
        self, be: Kernels, y_proba: Any, codes: np.ndarray, bins: int, sample_weight: np.ndarray | None
    ) -> None:
        """Count a probability batch into the tables (made by ``zeros``) in place; a refused
        batch changes nothing."""
        assert self.all is not None and self.pos is not None  # made by zeros
        be.add_binned_one_vs_rest(
            y_proba, codes, bins, self.all, self.pos, self.w_pos, self.w_neg, sample_weight, get_num_threads()
        )

    def merge(self, other: DenseClassRanking) -> None:
        if other.all is not None:
            self.add(other.all, other.pos, other.w_pos, other.w_neg)

    def groups(self, bins: int) -> list[Groups]:
        """Each column's non-empty bins as tie groups (values: the bins' lower edges)."""
        return [] if self.all is None else [self.column_groups(col, bins) for col in range(self.all.shape[0])]

    def column_groups(self, col: int, bins: int) -> Groups:
        """Column ``col``'s non-empty bins as tie groups (values: the bins' lower edges)."""
        assert self.all is not None and self.pos is not None  # a state with rows
        all_rows, pos = self.all[col], self.pos[col]
        keep = np.flatnonzero(all_rows)
        w_pos = w_neg = None
        if self.w_pos is not None and self.w_neg is not None:
            w_pos, w_neg = self.w_pos[col][keep], self.w_neg[col][keep]
        return Groups(keep / float(bins), pos[keep], all_rows[keep] - pos[keep], w_pos, w_neg)

    @classmethod
    def from_groups(cls, groups: list[Groups], bins: int) -> DenseClassRanking:
        """The dense state of stored tie groups (whose values must be bin edges ``b / bins``)."""
        dense = cls()
        if not groups:
            return dense
        k, cells = len(groups), bins + 1
        weighted = groups[0].w_pos is not None
        dense = cls.zeros(k, bins, weighted)
        assert dense.all is not None and dense.pos is not None
        for col, g in enumerate(groups):
            at = np.rint(np.asarray(g.values) * bins).astype(np.int64)
            if not (bool(((at >= 0) & (at < cells)).all()) and np.array_equal(at / float(bins), g.values)):
                msg = (
                    "the Evaluator state is malformed: approximate class ranking values that are not bin edges; "
                    "pass the output of Evaluator.to_bytes()"
                )
                raise StateError(msg)
            dense.all[col, at] = g.n_pos + g.n_neg
            dense.pos[col, at] = g.n_pos
            if dense.w_pos is not None and dense.w_neg is not None and g.w_pos is not None and g.w_neg is not None:
                dense.w_pos[col, at] = g.w_pos
                dense.w_neg[col, at] = g.w_neg
        return dense

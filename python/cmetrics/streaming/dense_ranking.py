"""A group's approximate class-ranking state, as dense (K, bins + 1) tables: per column and
bin, all rows, the rows of the column's class, and (with weights) their weights. Adding a
batch is an array addition; the tie groups (the non-empty bins) are made when a report or the
bytes need them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cmetrics._kernels import Groups
from cmetrics.exceptions import StateError


@dataclass
class DenseClassRanking:
    """A group's approximate class-ranking state as dense (K, bins + 1) tables: per column
    and bin, all rows, the rows of the column's class, and (with weights) their weights.
    Adding a batch is an array addition; the tie groups (the non-empty bins) are made when
    the report or the bytes need them."""

    all: np.ndarray | None = None
    pos: np.ndarray | None = None
    w_all: np.ndarray | None = None
    w_pos: np.ndarray | None = None

    @classmethod
    def empty(cls) -> DenseClassRanking:
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

    def merge(self, other: DenseClassRanking) -> None:
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
    def from_groups(cls, groups: list[Groups], bins: int) -> DenseClassRanking:
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
            if not (bool(((at >= 0) & (at < cells)).all()) and np.array_equal(at / float(bins), g.values)):
                msg = (
                    "the Evaluator state is malformed: approximate class ranking values that are not bin edges; "
                    "pass the output of Evaluator.to_bytes()"
                )
                raise StateError(msg)
            all_rows[col, at] = g.n_pos + g.n_neg
            pos[col, at] = g.n_pos
            if w_all is not None and w_pos is not None and g.w_pos is not None and g.w_neg is not None:
                w_all[col, at] = g.w_pos + g.w_neg
                w_pos[col, at] = g.w_pos
        dense.add(all_rows, pos, w_all, w_pos)
        return dense

"""Exact leave-one-out values of the ranking metrics, for BCa's acceleration (docs/definitions.md
§11.4), from the tie groups alone.

Removing one row changes a ranking metric only through the group it sits in and the running
sums past that group, so the value without any one row follows from prefix and suffix sums over
the groups: O(groups) after the one sort that found them, never ``n`` refits. Every row of a
tie group on the same side (positive or negative) has the same value when rows are unweighted.
With weights, the AUROC and the reversed pair proportion stay linear in the removed row's weight
and are computed row by row; average precision and AURC are not (a row's weight enters every
later group's ratio, so the exact value costs O(groups) per row): for weighted rows they take the
value to first order in the removed weight, ``θ - w_i ∂θ/∂w_i``, the derivative again from suffix
sums over the groups (the infinitesimal jackknife).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from cmetrics._base.aliases import F64, Proba
from cmetrics._kernels import Groups, Kernels

#: The family of each ranking metric's leave-one-out value.
FAMILY = {
    "roc_auc": "auroc",
    "auroc_confidence": "auroc",
    "refinement": "auroc",
    "roc_auc_ovr": "auroc",
    "reversed_pair_proportion": "rpp",
    "average_precision": "ap",
    "average_precision_ovr": "ap",
    "aurc": "aurc",
}
#: The ranking metrics whose leave-one-out values of weighted rows are exact (the others take
#: them to first order in the removed row's weight).
WEIGHTED = frozenset(name for name, family in FAMILY.items() if family in ("auroc", "rpp"))

Index = npt.NDArray[np.intp]
Bools = npt.NDArray[np.bool_]
#: A backend's tie groups of ``(positive, score, weight)``.
GroupsOf = Callable[[Bools, F64, "F64 | None"], Groups]


class Cells(NamedTuple):
    """A ranking metric without one row, per tie group (increasing score order, as
    :class:`Groups`): without one of its positives, and without one of its negatives (NaN where
    the metric is undefined without that row; a value where the group has no such row is never
    read)."""

    pos: F64
    neg: F64


def _ratio(num: F64, den: F64) -> F64:
    """``num / den`` where ``den > 0``, else 0 (a group emptied by the removal adds nothing)."""
    out: F64 = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
    return out


def _over(num: F64, den: float) -> F64:
    """``num / den``, NaN everywhere when ``den <= 0`` (the metric undefined without the row)."""
    return num / den if den > 0 else np.full_like(num, np.nan)


def _later(x: F64) -> F64:
    """The sum of ``x`` over the groups after each one."""
    out: F64 = np.cumsum(x[::-1])[::-1] - x
    return out


def _sides(groups: Groups) -> tuple[F64, F64]:
    """The positive and negative weight of each group (the counts when rows are unweighted)."""
    p = groups.w_pos if groups.w_pos is not None else groups.n_pos.astype(np.float64)
    q = groups.w_neg if groups.w_neg is not None else groups.n_neg.astype(np.float64)
    return np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)


class _Linear(NamedTuple):
    """A metric linear in the removed row's weight ``w``: ``(total - w lost) / den(w)`` with
    ``lost`` the pairs one unit of the row's weight is part of, per group and side."""

    total: float
    lost_pos: F64
    lost_neg: F64
    w_pos: float
    w_neg: float


def _auroc(p: F64, q: F64) -> _Linear:
    # Ordered pairs, ties counting half: a positive pairs with the negatives below it and half its
    # group's; a negative with the positives above it and half its group's.
    below_neg = np.cumsum(q) - q
    above_pos = p.sum() - np.cumsum(p)
    lost_pos, lost_neg = below_neg + 0.5 * q, above_pos + 0.5 * p
    return _Linear(float(np.dot(p, lost_pos)), lost_pos, lost_neg, float(p.sum()), float(q.sum()))


def _rpp(p: F64, q: F64) -> _Linear:
    # Reversed pairs: a positive strictly below a negative.
    above_neg = q.sum() - np.cumsum(q)
    below_pos = np.cumsum(p) - p
    return _Linear(float(np.dot(p, above_neg)), above_neg, below_pos, float(p.sum()), float(q.sum()))


def _linear_rows(family: str, f: _Linear, lost: F64, positive: Bools, w: F64) -> F64:
    """``f`` without each row (``lost``: its group and side's value of ``f.lost_*``)."""
    if family == "auroc":
        pairs = np.where(positive, (f.w_pos - w) * f.w_neg, f.w_pos * (f.w_neg - w))
    else:
        pairs = (f.w_pos + f.w_neg - w) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        out: F64 = np.where(pairs > 0, (f.total - w * lost) / pairs, np.nan)
    return out


def _average_precision(p: F64, q: F64) -> Cells:
    # Highest score first: AP = sum_h p_h TP_h / N_h / P over the groups h.
    tp, seen = np.cumsum(p), np.cumsum(p + q)
    term = p * tp / seen
    above = np.cumsum(term) - term
    shrunk = seen - 1
    later_neg = _ratio(p * tp, shrunk)  # a group at or after a removed negative
    pos = above + _ratio((p - 1) * (tp - 1), shrunk) + _later(_ratio(p * (tp - 1), shrunk))
    neg = above + later_neg + _later(later_neg)
    return Cells(_over(pos, tp[-1] - 1), _over(neg, tp[-1]))


def _aurc(p: F64, q: F64) -> Cells:
    # Highest confidence first: AURC = sum_h m_h F_h / N_h / n, F_h the wrong rows at or above h.
    m, wrong, seen = p + q, np.cumsum(q), np.cumsum(p + q)
    term = m * wrong / seen
    above = np.cumsum(term) - term
    shrunk = seen - 1
    pos = above + _ratio((m - 1) * wrong, shrunk) + _later(_ratio(m * wrong, shrunk))
    neg = above + _ratio((m - 1) * (wrong - 1), shrunk) + _later(_ratio(m * (wrong - 1), shrunk))
    return Cells(_over(pos, seen[-1] - 1), _over(neg, seen[-1] - 1))


def _suffix(x: F64) -> F64:
    """The sum of ``x`` over each group and the groups after it."""
    out: F64 = np.cumsum(x[::-1])[::-1]
    return out


def _slopes(family: str, p: F64, q: F64) -> tuple[float, Cells]:
    """Average precision or AURC (groups highest score first) and its derivative in the weight
    of one row of each group, positive or negative."""
    seen = np.cumsum(p + q)
    square = seen * seen
    if family == "ap":
        # AP = S / P, S = sum_h p_h TP_h / N_h: a positive's weight enters p_g, TP_h and N_h
        # (h >= g) and P; a negative's N_h (h >= g).
        tp = np.cumsum(p)
        total = float(tp[-1])
        s = float(np.sum(_ratio(p * tp, seen)))
        d_pos = (_ratio(tp, seen) + _suffix(_ratio(p * (seen - tp), square))) / total - s / total**2
        d_neg = -_suffix(_ratio(p * tp, square)) / total
        return s / total, Cells(d_pos, d_neg)
    # AURC = R / n, R = sum_h m_h F_h / N_h: every row's weight enters m_g, N_h (h >= g) and n;
    # a wrong (negative) row's F_h (h >= g) too.
    m, wrong = p + q, np.cumsum(q)
    n = float(seen[-1])
    r = float(np.sum(_ratio(m * wrong, seen)))
    first = _ratio(wrong, seen) - r / n
    d_pos = (first - _suffix(_ratio(m * wrong, square))) / n
    d_neg = (first + _suffix(_ratio(m * (seen - wrong), square))) / n
    return r / n, Cells(d_pos, d_neg)


def _first_order(family: str, groups: Groups, g: Index, positive: Bools, w: F64) -> F64:
    """Average precision or AURC of weighted rows without each row, to first order in its weight:
    ``θ - w_i ∂θ/∂w_i`` (NaN where the removal leaves the metric undefined: no positive weight
    left for the AP, no weight at all for AURC)."""
    p, q = _sides(groups)
    left = float(p.sum()) if family == "ap" else float(p.sum() + q.sum())
    if not left > 0:
        return np.full(w.size, np.nan)
    value, down = _slopes(family, p[::-1].copy(), q[::-1].copy())
    slope = np.where(positive, down.pos[::-1][g], down.neg[::-1][g])
    emptied = (left - w <= 0) & (positive | (family == "aurc"))
    out: F64 = np.where(emptied, np.nan, value - w * slope)
    return out


def cells(name: str, groups: Groups) -> Cells:
    """The metric ``name`` of unweighted rows without one row, per tie group and side.

    >>> import numpy as np
    >>> from cmetrics._kernels import Groups
    >>> one = np.array([1, 1], dtype=np.uint64)
    >>> groups = Groups(np.array([0.2, 0.8]), one, one, None, None)  # scores 0.2 (+, -), 0.8 (+, -)
    >>> c = cells("roc_auc", groups)  # AUROC 0.5; without the positive at 0.2, 0.75
    >>> c.pos.tolist(), c.neg.tolist()
    ([0.75, 0.25], [0.25, 0.75])
    """
    family = FAMILY[name]
    p, q = _sides(groups)
    if family in ("auroc", "rpp"):
        f = _auroc(p, q) if family == "auroc" else _rpp(p, q)
        if family == "auroc":
            pairs_pos, pairs_neg = (f.w_pos - 1) * f.w_neg, f.w_pos * (f.w_neg - 1)
        else:
            pairs_pos = pairs_neg = (f.w_pos + f.w_neg - 1) ** 2
        return Cells(_over(f.total - f.lost_pos, pairs_pos), _over(f.total - f.lost_neg, pairs_neg))
    # The curves walk from the highest score down: flip the groups, and the values back.
    down = (_average_precision if family == "ap" else _aurc)(p[::-1].copy(), q[::-1].copy())
    return Cells(down.pos[::-1].copy(), down.neg[::-1].copy())


def leave_one_out(name: str, groups: Groups, g: Index, positive: Bools, weight: F64 | None = None) -> F64:
    """The metric ``name`` without each row in turn: the row in group ``g[i]`` (increasing score
    order, as :class:`Groups`), positive or not, of weight ``weight[i]`` (1 when None; weighted
    rows: exact for the metrics in :data:`WEIGHTED`, to first order in the row's weight for the
    others)."""
    if weight is None:
        c = cells(name, groups)
        out: F64 = np.where(positive, c.pos[g], c.neg[g])
        return out
    family = FAMILY[name]
    if family not in ("auroc", "rpp"):
        return _first_order(family, groups, g, positive, np.asarray(weight, dtype=np.float64))
    f = _auroc(*_sides(groups)) if family == "auroc" else _rpp(*_sides(groups))
    lost = np.where(positive, f.lost_pos[g], f.lost_neg[g])
    return _linear_rows(family, f, lost, positive, np.asarray(weight, dtype=np.float64))


def cell_leave_one_out(name: str, groups: Groups) -> tuple[F64, F64]:
    """The leave-one-out values of unweighted rows, one per occupied (group, side) cell, and how
    many rows share each."""
    c = cells(name, groups)
    counts = np.concatenate([groups.n_pos, groups.n_neg]).astype(np.float64)
    occupied = counts > 0
    return np.concatenate([c.pos, c.neg])[occupied], counts[occupied]


#: Tie groups past which each row's group is searched for in score order: a binary search per
#: row in a table past the caches costs more than sorting the scores first (at 10^6 distinct
#: scores 0.13 s instead of 0.6 s; at 10^7, 2.2 s instead of 14 s).
SORTED_SEARCH = 1 << 16


def row_group(groups: Groups, score: F64) -> Index:
    """Each row's tie group (the groups' distinct scores hold every row's score).

    >>> import numpy as np
    >>> from cmetrics._kernels import Groups
    >>> one = np.array([1, 1], dtype=np.uint64)
    >>> row_group(Groups(np.array([0.2, 0.8]), one, one, None, None), np.array([0.8, 0.2, 0.8])).tolist()
    [1, 0, 1]
    """
    if groups.values.size <= SORTED_SEARCH:
        out: Index = np.searchsorted(groups.values, score)
        return out
    # Sorted keys: each search starts where the last one ended.
    order = np.argsort(score)
    found: Index = np.empty(score.size, dtype=np.intp)
    found[order] = np.searchsorted(groups.values, score[order])
    return found


def groups_of(kernels: Kernels, n_threads: int) -> GroupsOf:
    """The tie groups found by ``kernels`` on ``n_threads`` threads."""

    def find(positive: Bools, score: F64, weight: F64 | None) -> Groups:
        return kernels.score_groups(positive, score, weight, n_threads)

    return find


def binary(name: str, positive: Bools, score: F64, weight: F64 | None, groups: Groups) -> tuple[F64, F64 | None]:
    """The leave-one-out values of a binary ranking metric of the rows in ``groups`` and how many
    rows share each (None: one per row), for :func:`cmetrics.uncertainty.intervals.acceleration`:
    one per occupied (group, side) cell of unweighted rows, one per row of weighted ones."""
    if weight is None:
        return cell_leave_one_out(name, groups)
    return leave_one_out(name, groups, row_group(groups, score), positive, weight), None


def one_vs_rest(
    names: Sequence[str], truth: npt.NDArray[np.int64], proba: Proba, weight: F64 | None, groups_of: GroupsOf
) -> dict[str, F64]:
    """Each row's leave-one-out value of macro one-vs-rest metrics (each class's column grouped
    once for all of ``names``): the mean over the classes with positive and negative rows in the
    data of the class's metric without the row, leaving out a class the removal leaves without
    one side (as a replicate's mean does)."""
    total = {name: np.zeros(truth.size) for name in names}
    count = {name: np.zeros(truth.size) for name in names}
    for c in range(proba.shape[1]):
        positive = truth == c
        score = np.ascontiguousarray(proba[:, c], dtype=np.float64)
        groups = groups_of(positive, score, weight)
        p, q = _sides(groups)
        if not (p.sum() > 0 and q.sum() > 0):
            continue
        g = row_group(groups, score)
        for name in names:
            v = leave_one_out(name, groups, g, positive, weight)
            defined = np.isfinite(v)
            total[name] += np.where(defined, v, 0.0)
            count[name] += defined
    with np.errstate(invalid="ignore", divide="ignore"):
        return {name: np.where(count[name] > 0, total[name] / count[name], np.nan) for name in names}


__all__ = [
    "FAMILY",
    "SORTED_SEARCH",
    "WEIGHTED",
    "binary",
    "cell_leave_one_out",
    "groups_of",
    "leave_one_out",
    "one_vs_rest",
    "row_group",
]

"""Ranking kernels with numpy (mirror of ``rust/core/src/ranking.rs``): the
tie-grouped walk of a binary outcome against a score, and Kendall's pair
counts by Knight's algorithm (lexicographic sort, tie runs, inversions by a
level-by-level merge). Same keys, checks and messages as the Rust backend."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

from cmetrics._base.value_checks import (
    check_2d,
    check_finite,
    check_not_nan,
    check_same_length,
    check_totals,
    check_weights,
    row_atol,
    row_sums_fit,
)
from cmetrics._kernels import (
    F64,
    BinaryRanking,
    CurveDrop,
    CurvePoints,
    CurveTerms,
    Groups,
    KendallCounts,
    PairedPlacements,
    RankingState,
    ThresholdCounts,
)
from cmetrics._numpy.grouping import check_offsets
from cmetrics.exceptions import (
    ShapeError,
    ValidationError,
)


def order_keys(x: np.ndarray) -> np.ndarray:
    """Values that sort as the scores do: floats with -0.0 as 0.0, integers as they are."""
    return x + 0.0 if x.dtype.kind == "f" else x


def weight_scale(total: float) -> float:
    """A power of two bringing ``total`` into [0.5, 1) (1 for 0 or non-finite): the scale the
    Rust walk multiplies every weight by, so that no product of weight sums leaves the float64 range."""
    if not (np.isfinite(total) and total > 0):
        return 1.0
    _, e = np.frexp(total)
    # A subnormal total is lifted by at most 2^1023 (2^-e would overflow), as in Rust.
    return float(np.ldexp(1.0, min(-int(e), 1023)))


def _check_pair(a_name: str, a: np.ndarray, b_name: str, b: np.ndarray, data: str) -> None:
    """Same length and not empty (the messages of the Rust kernels; `data` names the empty one)."""
    check_same_length(a_name, a.shape[0], b_name, b.shape[0])
    if a.shape[0] == 0:
        raise ShapeError(f"{data} is empty; at least one sample is required")


def tie_runs(sorted_values: np.ndarray) -> np.ndarray:
    """Start index of each run of equal values (shared with ``risk_coverage_curve``)."""
    if sorted_values.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    change = np.flatnonzero(sorted_values[1:] != sorted_values[:-1]) + 1
    return np.concatenate(([0], change))


def _tie_pairs(starts: np.ndarray, n: int) -> int:
    t = np.diff(np.append(starts, n)).astype(object)
    return int(sum(t * (t - 1) // 2)) if len(t) else 0


def binary_ranking(
    positive: np.ndarray,
    score: np.ndarray,
    sample_weight: np.ndarray | None = None,
    curves: CurveTerms = True,
    n_threads: int = 0,
) -> BinaryRanking:

    named = check_curves(curves)
    # The tie groups (checks included), walked from the highest score down.
    r = _walk_ascending(score_groups(positive, score, sample_weight), curves is not False)
    if named == "precision":
        return r._replace(aupr_trapezoid=math.nan, aurc=math.nan, placement_pos_sq=math.nan, placement_neg_sq=math.nan)
    if named == "placements":
        return r._replace(average_precision=math.nan, aupr_trapezoid=math.nan, aurc=math.nan)
    return r


def check_curves(curves: object) -> Literal["precision", "placements"] | None:
    """``curves=`` of the walks: True, False, ``"precision"`` or ``"placements"`` (the name, or
    None for a flag), as the Rust kernels take it."""
    if isinstance(curves, bool):
        return None
    if curves == "precision":
        return "precision"
    if curves == "placements":
        return "placements"
    raise ValidationError(f"curves must be True, False, 'precision' or 'placements', got {curves!r}")


def _exact_dot(a: np.ndarray, b: np.ndarray, bound: int) -> int:
    """``sum(a * b)`` as an exact integer (int64 when ``bound`` says it cannot overflow)."""
    if len(a) == 0:
        return 0
    if bound < 2**63:
        return int(np.dot(a.astype(np.int64), b.astype(np.int64)))
    return int(np.dot(a.astype(object), b.astype(object)))


def _walk_desc(
    cp: np.ndarray, cn: np.ndarray, wp: np.ndarray, wn: np.ndarray, curves: bool = True, weighted: bool = False
) -> BinaryRanking:
    """The walk over tie groups given from the highest score down: positive and negative
    counts and weights per group (as the Rust walk)."""
    n_pos, n_neg = int(cp.sum()), int(cn.sum())
    neg_above = np.cumsum(cn) - cn
    with np.errstate(over="ignore", invalid="ignore"):
        return _walk_sums(cp, cn, wp, wn, curves, weighted, n_pos, n_neg, neg_above)


def _walk_sums(
    cp: np.ndarray,
    cn: np.ndarray,
    wp: np.ndarray,
    wn: np.ndarray,
    curves: bool,
    weighted: bool,
    n_pos: int,
    n_neg: int,
    neg_above: np.ndarray,
) -> BinaryRanking:
    # Exact integers for the pair counts (every partial sum is at most n_pos * n_neg).
    reversed_ = _exact_dot(cp, neg_above, n_pos * n_neg)
    tied = _exact_dot(cp, cn, n_pos * n_neg)
    ordered = n_pos * n_neg - reversed_ - tied
    w_pos, w_neg = float(np.sum(wp)), float(np.sum(wn))
    check_totals(w_pos, w_neg, n_pos + n_neg)
    if weighted:
        # Weights scaled by a power of two; each kind of pair summed on its own.
        scale = weight_scale(max(w_pos, w_neg))
        sp, sn = wp * scale, wn * scale
        w_rev = float(np.sum(sp * (np.cumsum(sn) - sn)))
        w_ord = float(np.sum(sn * (np.cumsum(sp) - sp)))
        w_tied = float(np.sum(sp * sn))
        every = w_rev + w_tied + w_ord
        shares = (w_rev / every, w_tied / every, w_ord / every) if every > 0 else (float("nan"),) * 3
    else:
        every = reversed_ + tied + ordered
        shares = (reversed_ / every, tied / every, ordered / every) if every else (float("nan"),) * 3
    ap, aupr, aurc = _curves(cp, cn, wp, wn) if curves else (float("nan"),) * 3  # as the Rust kernel
    if not curves:
        placements = (float("nan"),) * 2
    elif weighted:
        # In weights scaled by a power of two, as the pair sums (exact to undo).
        k = weight_scale(max(w_pos, w_neg))
        kp, kn = wp * k, wn * k
        pos_sq, neg_sq = _placements(kp, kn, float(np.sum(kp)), float(np.sum(kn)), np.cumsum(kn) - kn)
        placements = (pos_sq / k, neg_sq / k)
    else:
        placements = _placements(cp, cn, n_pos, n_neg, neg_above)
    return BinaryRanking(
        n_pos, n_neg, w_pos, w_neg, reversed_, tied, ordered, *shares, ap, aupr, aurc, len(cp), *placements
    )


def _placements(
    cp: np.ndarray, cn: np.ndarray, n_pos: float, n_neg: float, neg_above: np.ndarray
) -> tuple[float, float]:
    """DeLong's sums of squared placements over tie groups given from the highest score down
    (counts, or weights): a positive's share of negatives below it, a negative's share of
    positives above it (ties count half)."""
    p, n = cp.astype(np.float64), cn.astype(np.float64)
    v10 = (n_neg - neg_above - 0.5 * n) / n_neg if n_neg else np.zeros_like(p)
    v01 = (np.cumsum(p) - 0.5 * p) / n_pos if n_pos else np.zeros_like(n)
    return float(p @ (v10 * v10)), float(n @ (v01 * v01))


def _check_groups(g: Groups, name: str) -> None:
    v, p, q, wp, wn = g
    n = v.shape[0]
    weighted = wp is not None or wn is not None
    if (
        p.shape[0] != n
        or q.shape[0] != n
        or (weighted and (wp is None or wn is None or wp.shape[0] != n or wn.shape[0] != n))
    ):
        raise ValidationError(f"{name} is invalid: the group arrays have different lengths")
    if not np.isfinite(v).all() or (n > 1 and not (np.diff(v + 0.0) > 0).all()):
        raise ValidationError(f"{name} is invalid: the group values are not finite and strictly increasing")


def score_groups(
    positive: np.ndarray, score: np.ndarray, sample_weight: np.ndarray | None = None, n_threads: int = 0
) -> Groups:
    """Tie groups of ``(positive, score, weight)`` in increasing score order (as the Rust kernel)."""
    n = score.shape[0]
    _check_pair("y_true", positive, "y_score", score, "y_score")
    check_finite("y_score", score)
    check_weights(sample_weight, n)
    if sample_weight is not None:
        with np.errstate(over="ignore"):
            check_totals(float(np.sum(sample_weight)), 0.0, n)
    return _groups(positive, score, sample_weight)


def binary_proba_groups(
    positive: np.ndarray, y_proba: np.ndarray, atol: float | None = None, n_threads: int = 0
) -> Groups | None:
    """The tie groups of the second column of binary probabilities, or None when a row is not a
    probability row: an entry outside [0, 1] (NaN included) or a sum further than ``atol`` (None:
    2e-6, the probability pass's 1e-6 K) from 1 (as the Rust kernel, which counts few distinct
    scores in the pass that checks the rows)."""
    del n_threads
    check_2d(y_proba, "y_proba")
    k = y_proba.shape[1]
    if k != 2:
        msg = f"y_proba is invalid: it has {k} columns; the tie groups of binary probabilities take two"
        raise ValidationError(msg)
    _check_pair("y_true", positive, "y_proba", y_proba, "y_proba")
    tol = row_atol(atol, 2)
    a = np.asarray(y_proba[:, 0], dtype=np.float64)
    b = np.asarray(y_proba[:, 1], dtype=np.float64)
    inside = (a >= 0) & (a <= 1) & (b >= 0) & (b <= 1)
    ok = bool(inside.all()) and bool(row_sums_fit(a + b, tol).all())
    return _groups(positive, b, None) if ok else None


def row_placements(positive: np.ndarray, score: np.ndarray, n_threads: int = 0) -> F64:
    """DeLong's placement of every row (as the Rust kernel): a positive's share of negatives
    scored below it, a negative's share of positives scored above it, ties counting half."""
    _check_pair("y_true", positive, "y_score", score, "y_score")
    check_finite("y_score", score)
    return _placed(positive, score)[0]


def paired_placements(
    positive: np.ndarray, score_a: np.ndarray, score_b: np.ndarray, n_threads: int = 0
) -> PairedPlacements:
    """DeLong's paired summary of two models on the same rows (as the Rust kernel)."""
    for name, s in (("score_a", score_a), ("score_b", score_b)):
        _check_pair("y_true", positive, name, s, name)
        check_finite(name, s)
    (va, ordered_a, tied_a), (vb, ordered_b, tied_b) = _placed(positive, score_a), _placed(positive, score_b)
    n_pos = int(np.count_nonzero(positive))
    n_neg = positive.shape[0] - n_pos
    pairs = 2 * n_pos * n_neg

    def centred(ordered: int, tied: int, v: F64) -> F64:
        return v - ((2 * ordered + tied) / pairs if pairs else 0.0)

    da, db = centred(ordered_a, tied_a, va), centred(ordered_b, tied_b, vb)
    sums = []
    for rows in (positive, ~positive):
        x, y = da[rows], db[rows]
        sums.append((float(x @ x), float(y @ y), float(x @ y)))
    return PairedPlacements(n_pos, n_neg, ordered_a, tied_a, ordered_b, tied_b, *sums[0], *sums[1])


def _placed(positive: np.ndarray, score: np.ndarray) -> tuple[F64, int, int]:
    """Every row's placement and the exact (ordered, tied) pair counts of checked rows."""
    n = score.shape[0]
    key = order_keys(score)
    order = np.argsort(key, kind="stable")
    p = positive[order]
    starts = tie_runs(key[order])
    size = np.diff(np.append(starts, n))
    gp = np.add.reduceat(p.astype(np.int64), starts)
    gn = size - gp
    neg_below = np.cumsum(gn) - gn
    pos_below = np.cumsum(gp) - gp
    n_pos = int(gp.sum())
    # Integer numerators over twice the other side's count, one rounding each (as the Rust
    # walk); a side facing no rows places 0.
    over_neg = 2.0 * (n - n_pos) if n > n_pos else np.inf
    over_pos = 2.0 * n_pos if n_pos else np.inf
    v10 = (2 * neg_below + gn) / over_neg
    v01 = (2 * (n_pos - pos_below) - gp) / over_pos
    group = np.repeat(np.arange(starts.size), size)
    out = np.empty(n)
    out[order] = np.where(p, v10[group], v01[group])
    return out, int(gp @ neg_below), int(gp @ gn)


def _groups(positive: np.ndarray, score: np.ndarray, sample_weight: np.ndarray | None) -> Groups:
    """The tie groups of checked rows (group values as float64)."""
    n = score.shape[0]
    key = order_keys(score)
    order = np.argsort(key, kind="stable")
    s, p = key[order], positive[order]
    starts = tie_runs(s)
    size = np.diff(np.append(starts, n)).astype(np.uint64)
    cp = np.add.reduceat(p.astype(np.uint64), starts) if n else np.zeros(0, np.uint64)
    values = s[starts].astype(np.float64)
    if sample_weight is None:
        return Groups(values, cp, size - cp, None, None)
    w = sample_weight[order]
    return Groups(
        values,
        cp,
        size - cp,
        np.add.reduceat(np.where(p, w, 0.0), starts),
        np.add.reduceat(np.where(p, 0.0, w), starts),
    )


def merge_groups(a: Groups, b: Groups) -> Groups:
    """Merge two group tuples (equal values add up)."""
    _check_groups(a, "a")
    _check_groups(b, "b")
    parts = [g for g in (a, b) if g[0].shape[0]]
    weighted = (a[3] is not None) or (b[3] is not None)
    if any((g[3] is not None) != weighted for g in parts):
        raise ValidationError("b is invalid: one set of groups has weights and the other has not")
    if not parts:
        return Groups(*a)
    v = np.concatenate([g[0] for g in parts]) + 0.0
    order = np.argsort(v, kind="stable")
    vs = v[order]
    starts = tie_runs(vs)

    def summed(i: int) -> np.ndarray:
        return np.add.reduceat(np.concatenate([g[i] for g in parts])[order], starts)

    return Groups(vs[starts], summed(1), summed(2), summed(3) if weighted else None, summed(4) if weighted else None)


def walk_groups(groups: Groups, curves: bool = True) -> BinaryRanking:
    """The ranking walk over tie groups in increasing score order."""
    _check_groups(groups, "groups")
    return _walk_ascending(groups, curves)


def _walk_ascending(groups: Groups, curves: bool) -> BinaryRanking:
    _, p, q, wp, wn = groups
    cp, cn = p[::-1].astype(np.int64), q[::-1].astype(np.int64)
    if wp is None or wn is None:
        return _walk_desc(cp, cn, cp.astype(np.float64), cn.astype(np.float64), curves)
    return _walk_desc(cp, cn, wp[::-1], wn[::-1], curves, weighted=True)


def _curves(cp: np.ndarray, cn: np.ndarray, wp: np.ndarray, wn: np.ndarray) -> tuple[float, float, float]:
    """(AP, trapezoid AUPR, AURC) from the per-group counts and weights, highest scores first.
    A side with no row at or above a group (counted exactly) contributes exactly 0 there.
    The weights are read through the walk's power-of-two scale (exact: every value is a ratio),
    so subnormal weights lose no precision in the products."""
    scale = weight_scale(max(float(np.sum(wp)), float(np.sum(wn))))
    wp, wn = wp * scale, wn * scale
    tp = np.where(np.cumsum(cp) > 0, np.cumsum(wp), 0.0)
    fp = np.where(np.cumsum(cn) > 0, np.cumsum(wn), 0.0)
    w_pos, w_neg = float(np.sum(wp)), float(np.sum(wn))
    covered = tp + fp
    total = w_pos + w_neg
    ok = covered > 0
    precision = np.where(ok, tp / np.where(ok, covered, 1.0), 0.0)
    if w_pos > 0:
        # sum_k (tp_k - tp_{k-1}) P_k, divided once: a perfect ranking gives exactly 1.
        ap = float(np.sum(wp * precision) / w_pos)
        recall = tp / w_pos
        last_recall = np.concatenate(([0.0], recall[:-1]))
        last_precision = np.concatenate(([1.0], precision[:-1]))
        full = np.flatnonzero(np.cumsum(cp) >= cp.sum())
        stop = int(full[0]) + 1 if len(full) else len(tp)
        seg = ((recall - last_recall) * (precision + last_precision) / 2.0)[:stop]
        aupr = float(np.sum(seg[ok[:stop]]))
    else:
        ap = aupr = float("nan")
    aurc = (
        float(np.sum(np.where(ok, (wp + wn) / total * (fp / np.where(ok, covered, 1.0)), 0.0)))
        if total > 0
        else float("nan")
    )
    return ap, aupr, aurc


def _inversions(r: np.ndarray) -> int:
    """Pairs i < j with r[i] > r[j] (r: dense ranks 0..m-1), by bottom-up merging:
    at each level every right block counts the left-block values above each of its values."""
    n = r.shape[0]
    m = int(r.max()) + 1 if n else 1
    a = r.astype(np.int64)
    idx = np.arange(n, dtype=np.int64)
    inv = 0
    width = 1
    while width < n:
        pair = idx // (2 * width)
        is_right = (idx // width) % 2 == 1
        key = pair * m + a
        left = key[~is_right]  # sorted: pairs ascend, each block is sorted
        right = key[is_right]
        le = np.searchsorted(left, right, side="right")
        end = np.searchsorted(left, (pair[is_right] + 1) * m, side="left")
        inv += int(np.sum(end - le))
        a = np.sort(key) - pair * m  # sorting keys sorts inside each pair
        width *= 2
    return inv


def kendall_counts(x: np.ndarray, y: np.ndarray, n_threads: int = 0) -> KendallCounts:
    n = x.shape[0]
    _check_pair("x", x, "y", y, "x")
    check_not_nan("x", x)
    check_not_nan("y", y)
    x = order_keys(x)
    y = order_keys(y)
    order = np.lexsort((y, x))
    xs, ys = x[order], y[order]
    x_starts = tie_runs(xs)
    x_ties = _tie_pairs(x_starts, n)
    joint_change = np.flatnonzero((xs[1:] != xs[:-1]) | (ys[1:] != ys[:-1])) + 1 if n > 1 else np.zeros(0, np.int64)
    joint_ties = _tie_pairs(np.concatenate(([0], joint_change)), n)
    uy, ranks = np.unique(ys, return_inverse=True)
    discordant = _inversions(ranks.reshape(-1))
    y_ties = _tie_pairs(tie_runs(np.sort(ys)), n)
    n0 = n * (n - 1) // 2
    cmd = n0 + joint_ties - x_ties - y_ties - 2 * discordant
    a, b = n0 - x_ties, n0 - y_ties
    # The product of the pair counts formed exactly, one square root, one division, clamped.
    tau_b = float("nan") if a == 0 or b == 0 else float(np.clip(cmd / math.sqrt(float(a * b)), -1, 1))
    m = min(len(x_starts), len(uy))
    tau_c = float("nan") if m < 2 or n < 2 else float(np.clip(2.0 * cmd / (float(n) * float(n) * (m - 1.0) / m), -1, 1))
    return KendallCounts(n, x_ties, y_ties, joint_ties, discordant, len(x_starts), len(uy), tau_b, tau_c)


def _rows_of(positive: np.ndarray, score: np.ndarray) -> int:
    """The row count of ``score``, with ``positive`` as long (as the Rust state checks it)."""
    n = int(score.shape[0])
    check_same_length("correct", positive.shape[0], "confidence", n)
    return n


def _check_unit_confidence(score: np.ndarray) -> None:
    """Refuse a confidence outside [0, 1] (the approximate mode bins [0, 1]), naming the first."""
    outside = (score < 0.0) | (score > 1.0)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise ValidationError(
            f"confidence is invalid: confidence[{i}] = {float(score[i])!r} is outside [0, 1]; the approximate "
            "ranking mode bins confidences in [0, 1] (use ranking='exact' for other scores)"
        )


def _check_row_weights(sample_weight: np.ndarray | None, n: int) -> None:
    """Weights (when given): one per row, finite and >= 0."""
    check_weights(sample_weight, n, "confidence")


class GroupState:
    """The exact streaming ranking state (mirror of ``rust/core/src/ranking/state.rs``):
    each ``add`` becomes one run of tie groups, and runs are kept in decreasing size,
    the last two merged while the newer is at least half the older, so each group is
    merged O(log n) times. Same groups, checks and messages as the Rust state."""

    def __init__(self, weighted: bool, min_buffer: int | None = None) -> None:
        del min_buffer  # the Rust state's compaction threshold; runs here merge as they come
        self.weighted = bool(weighted)
        self._runs: list[Groups] = []

    def __len__(self) -> int:
        return sum(int(r[0].shape[0]) for r in self._runs)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for r in self._runs for a in r if a is not None)

    def _check_rows(
        self, positive: np.ndarray, score: np.ndarray, sample_weight: np.ndarray | None, unit_interval: bool = False
    ) -> int:
        """The checks of the Rust state's ``add``, in its order; the number of rows."""
        n = _rows_of(positive, score)
        self._weights_match(sample_weight is not None, "sample_weight")
        check_finite("confidence", score)
        if unit_interval:
            _check_unit_confidence(score)
        _check_row_weights(sample_weight, n)
        return n

    def _weights_match(self, weighted: bool, arg: str) -> None:
        if weighted != self.weighted:
            have = "weighted" if self.weighted else "unweighted"
            fix = "pass weights" if self.weighted else "pass no weights"
            raise ValidationError(f"{arg} is invalid: this ranking state holds {have} rows; {fix}")

    def add(
        self,
        positive: np.ndarray,
        score: np.ndarray,
        sample_weight: np.ndarray | None = None,
        bins: int | None = None,
        n_threads: int = 0,
    ) -> None:
        """Add rows; with ``bins``, each score is first binned in [0, 1] (the approximate mode)."""
        if bins is not None:
            self._add_binned(positive, score, sample_weight, bins)
            return
        n = self._check_rows(positive, score, sample_weight)
        if n:
            self._push(_groups(positive, score, sample_weight))

    def _add_binned(self, positive: np.ndarray, score: np.ndarray, sample_weight: np.ndarray | None, bins: int) -> None:
        """Rows with each score replaced by the lower edge of its bin of width ``1 / bins``
        in [0, 1] (1.0 in a bin of its own), counted in a histogram."""
        n = self._check_rows(positive, score, sample_weight, unit_interval=True)
        if not n:
            return
        cell = np.minimum(np.floor(score * bins), bins).astype(np.int64)
        every = np.bincount(cell, minlength=bins + 1).astype(np.uint64)
        keep = np.flatnonzero(every)
        pos = np.bincount(cell, weights=positive, minlength=bins + 1).astype(np.uint64)[keep]
        values = keep.astype(np.float64) / bins
        if sample_weight is None:
            self._push(Groups(values, pos, every[keep] - pos, None, None))
            return
        wp = np.bincount(cell, weights=np.where(positive, sample_weight, 0.0), minlength=bins + 1)[keep].astype(
            np.float64
        )
        wn = np.bincount(cell, weights=np.where(positive, 0.0, sample_weight), minlength=bins + 1)[keep].astype(
            np.float64
        )
        self._push(Groups(values, pos, every[keep] - pos, wp, wn))

    def _push(self, g: Groups) -> None:
        self._runs.append(g)
        while len(self._runs) > 1 and 2 * self._runs[-1][0].shape[0] >= self._runs[-2][0].shape[0]:
            last = self._runs.pop()
            self._runs[-1] = merge_groups(self._runs[-1], last)

    def merge(self, other: GroupState, n_threads: int = 0) -> None:
        if len(other) and other.weighted != self.weighted:
            raise ValidationError("other is invalid: one ranking state has weights and the other has not")
        for r in list(other._runs):
            self._push(r)

    def absorb(self, groups: Groups, n_threads: int = 0) -> None:
        _check_groups(groups, "groups")
        if groups[0].shape[0] and (groups[3] is not None) != self.weighted:
            raise ValidationError("groups is invalid: the groups' weights do not match the ranking state")
        if groups[0].shape[0]:
            values, n_pos, n_neg, w_pos, w_neg = groups
            self._push(
                Groups(
                    values.copy(),
                    n_pos.copy(),
                    n_neg.copy(),
                    None if w_pos is None else w_pos.copy(),
                    None if w_neg is None else w_neg.copy(),
                )
            )

    def groups(self, n_threads: int = 0) -> Groups:
        if not self._runs:  # no weights either (as the Rust state: its weights are empty)
            return Groups(np.zeros(0), np.zeros(0, np.uint64), np.zeros(0, np.uint64), None, None)
        out = self._runs[0]
        for r in self._runs[1:]:
            out = merge_groups(out, r)
        self._runs = [out]
        return out

    def walk(self, curves: bool = True, n_threads: int = 0) -> BinaryRanking:
        return _walk_ascending(self.groups(), curves)

    def curve_points(self, steps: int, n_threads: int = 0) -> CurvePoints:
        """Points of the curve from the highest score down (the Rust state's rule and
        arithmetic): every group up to ``steps`` of them, else the first point of each of
        ``steps`` equal steps of ``(fpr + tpr) / 2`` and the two ends."""
        g = self.groups()
        if self.weighted and g.w_pos is not None and g.w_neg is not None:
            cp, cn = np.cumsum(g.w_pos), np.cumsum(g.w_neg)  # sequential sums, as the Rust loop adds
            tot_p, tot_n = (float(cp[-1]), float(cn[-1])) if cp.size else (0.0, 0.0)
            tp = tot_p - np.concatenate(([0.0], cp[:-1]))
            fp = tot_n - np.concatenate(([0.0], cn[:-1]))
        else:
            cpi, cni = np.cumsum(g.n_pos, dtype=np.uint64), np.cumsum(g.n_neg, dtype=np.uint64)
            tpi = (cpi[-1] if cpi.size else 0) - np.concatenate(([0], cpi[:-1])).astype(np.uint64)
            fpi = (cni[-1] if cni.size else 0) - np.concatenate(([0], cni[:-1])).astype(np.uint64)
            tp, fp = tpi.astype(np.float64), fpi.astype(np.float64)
            tot_p, tot_n = (float(tp[0]), float(fp[0])) if tp.size else (0.0, 0.0)
        n = g.values.shape[0]
        if n <= steps or not (tot_p > 0 and tot_n > 0):
            keep = np.arange(n)
        else:
            bucket = np.floor((fp / tot_n + tp / tot_p) * 0.5 * float(steps)).astype(np.int64)
            change = np.flatnonzero(bucket[:-1] != bucket[1:])
            keep = np.union1d(np.union1d(change, [0]), [n - 1])
        keep = keep[::-1]
        return CurvePoints(fp[keep], tp[keep], np.asarray(g.values, dtype=np.float64)[keep])


def add_segments(
    states: Sequence[RankingState],
    positive: np.ndarray,
    score: np.ndarray,
    offsets: np.ndarray,
    sample_weight: np.ndarray | None = None,
    bins: int | None = None,
    n_threads: int = 0,
) -> None:
    """Segment g of the rows (``offsets[g]:offsets[g + 1]``) added to ``states[g]``, every
    row checked first (as the Rust kernel: an error changes no state)."""
    n = _rows_of(positive, score)
    o = check_offsets(offsets, n, strict=False)
    if o.shape[0] != len(states) + 1:
        msg = (
            f"offsets has the wrong shape: {o.shape[0]} offsets for {len(states)} states; "
            "pass one offset more than states"
        )
        raise ShapeError(msg)
    if any(state.weighted != (sample_weight is not None) for state in states):
        msg = "sample_weight is invalid: pass weights exactly when the ranking states hold weighted rows"
        raise ValidationError(msg)
    check_finite("confidence", score)
    _check_row_weights(sample_weight, n)
    if bins is not None:
        if bins <= 0:
            raise ValidationError("bins is invalid: the approximate mode needs at least one bin")
        _check_unit_confidence(score)
    for state, lo, hi in zip(states, o[:-1].tolist(), o[1:].tolist(), strict=True):
        w = None if sample_weight is None else sample_weight[lo:hi]
        state.add(positive[lo:hi], score[lo:hi], w, bins)


def walk_states(states: Sequence[RankingState], curves: bool = True, n_threads: int = 0) -> list[BinaryRanking]:
    """Each state's walk, in the order given."""
    return [state.walk(curves) for state in states]


def union_states(states: Sequence[RankingState], n_threads: int = 0) -> GroupState:
    """A new state holding every row of ``states`` (which keep theirs)."""
    filled = [state for state in states if len(state)]
    weighted = (filled or list(states) or [GroupState(False)])[0].weighted
    if any(state.weighted != weighted for state in filled):
        raise ValidationError("states is invalid: some ranking states hold weighted rows and others unweighted rows")
    out = GroupState(weighted)
    for state in filled:
        out.absorb(state.groups())
    return out


def walk_union(states: Sequence[RankingState], curves: bool = True, n_threads: int = 0) -> BinaryRanking:
    """The walk of the union of ``states`` (the Rust core walks it without making it)."""
    return union_states(states).walk(curves)


def threshold_counts(
    positive: np.ndarray,
    score: np.ndarray,
    sample_weight: np.ndarray | None = None,
    drop: CurveDrop = "none",
    n_threads: int = 0,
) -> ThresholdCounts:
    """The tie groups cumulated from the highest score down, points dropped by ``drop``, given
    from the lowest score up (as the Rust kernel)."""
    if drop not in ("none", "collinear", "flat"):
        raise ValidationError(f"drop must be 'none', 'collinear' or 'flat', got {drop!r}")
    g = score_groups(positive, score, sample_weight)
    if g.w_pos is None or g.w_neg is None:
        tps = np.cumsum(g.n_pos[::-1]).astype(np.float64)
        fps = np.cumsum(g.n_neg[::-1]).astype(np.float64)
    else:
        tps, fps = np.cumsum(g.w_pos[::-1]), np.cumsum(g.w_neg[::-1])
    thresholds = np.ascontiguousarray(g.values[::-1])
    if drop != "none" and fps.shape[0] > 2:
        if drop == "collinear":
            inner = np.logical_or(np.diff(fps, 2), np.diff(tps, 2))
        else:
            inner = np.logical_or(np.diff(tps[:-1]), np.diff(tps[1:]))
        keep = np.concatenate(([True], inner, [True]))
        fps, tps, thresholds = fps[keep], tps[keep], thresholds[keep]
    return ThresholdCounts(fps[::-1].copy(), tps[::-1].copy(), thresholds[::-1].copy())

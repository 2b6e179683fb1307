"""The counter-based stream and the Poisson bootstrap of row sums, in numpy (the twin of
``rust/core/src/random.rs`` and ``resampling.rs``).

Philox4x32 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3",
SC 2011) runs vectorised over many counters at once in uint64 arithmetic; a row's Poisson(1)
weight in replicate ``b`` is the draw, by the exact integer thresholds below, of the 32-bit word
whose high half is 16-bit half ``b % 8`` of the block with counter
``(row low word, row high word, b // 8, 0)`` under the key ``(seed low word, seed high word)``
(half ``j``: the low half of word ``j // 2`` for even ``j``, its high half for odd) and whose low
half is half ``b % 8`` of the block with the same counter in stream 4; the low half is drawn only
for the eight high halves that leave the draw open. The weights equal the Rust backend's bit for
bit; the sums agree to rounding (numpy adds in another order).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from cmetrics._base.value_checks import check_finite, check_same_length, check_weights
from cmetrics._kernels import F64, RankingReplicates
from cmetrics.exceptions import ShapeError, ValidationError

_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_W0 = 0x9E3779B9
_W1 = 0xBB67AE85
_LOW = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)

#: ``round(2^32 P(X <= k))`` for ``X ~ Poisson(1)``, k = 0, 1, ...: the draw of a word ``u``
#: is how many of them are ``<= u`` (the same table as the Rust core).
POISSON1_THRESHOLDS = np.array(
    [
        1580030169,
        3160060337,
        3950075422,
        4213413783,
        4279248374,
        4292415292,
        4294609778,
        4294923276,
        4294962463,
        4294966817,
        4294967253,
        4294967292,
    ],
    dtype=np.uint32,
)

#: Rows drawn at a time (bounds the temporaries at a few MB).
_CHUNK = 1 << 14
#: Counters a Philox block of rounds takes at a time (its buffers, 64 KB each, stay in the cache).
_PHILOX_ROWS = 1 << 13


def philox4x32_blocks(
    counters: npt.NDArray[np.uint32], key: tuple[int, int], rounds: int = 10
) -> npt.NDArray[np.uint32]:
    """Philox4x32 with ``rounds`` rounds of each row of ``counters`` (``m x 4``) under ``key``.

    The rows go through in blocks of :data:`_PHILOX_ROWS`, each block's rounds computed in place
    in buffers that stay in the cache (whole-array temporaries made it memory-bound, about three
    times slower past 10^5 rows)."""
    c = np.asarray(counters)
    if c.ndim != 2 or c.shape[1] != 4:
        msg = "counters must have 4 columns"
        raise ShapeError(msg)
    round_keys = []
    k0, k1 = int(key[0]), int(key[1])
    for r in range(rounds):
        if r > 0:
            k0 = (k0 + _W0) & 0xFFFFFFFF
            k1 = (k1 + _W1) & 0xFFFFFFFF
        round_keys.append((np.uint64(k0), np.uint64(k1)))
    m = c.shape[0]
    out = np.empty((m, 4), dtype=np.uint32)
    q0 = np.empty(min(m, _PHILOX_ROWS), dtype=np.uint64)
    q1 = np.empty_like(q0)
    for a in range(0, m, _PHILOX_ROWS):
        # Each word widened straight into its own contiguous buffer (one copy, not two).
        c0, c1, c2, c3 = (c[a : a + _PHILOX_ROWS, j].astype(np.uint64) for j in range(4))
        p0, p1 = q0[: c0.size], q1[: c0.size]
        for r0, r1 in round_keys:
            np.multiply(c0, _M0, out=p0)
            np.multiply(c2, _M1, out=p1)
            # (c0, c1, c2, c3) <- (hi(p1) ^ c1 ^ k0, lo(p1), hi(p0) ^ c3 ^ k1, lo(p0))
            np.right_shift(p1, _SHIFT, out=c0)
            np.bitwise_xor(c0, c1, out=c0)
            np.bitwise_xor(c0, r0, out=c0)
            np.bitwise_and(p1, _LOW, out=c1)
            np.right_shift(p0, _SHIFT, out=c2)
            np.bitwise_xor(c2, c3, out=c2)
            np.bitwise_xor(c2, r1, out=c2)
            np.bitwise_and(p0, _LOW, out=c3)
        block = out[a : a + _PHILOX_ROWS]
        for j, word in enumerate((c0, c1, c2, c3)):
            block[:, j] = word
    return out


#: The stream of the row weights' low halves (the Rust core's ``ROW_WEIGHT_LOWS``).
_LOW_HALVES = 4

#: The high halves of :data:`POISSON1_THRESHOLDS` below ``2^16 - 1``: a high half ``h`` passes
#: threshold ``k`` for certain when above its high half, fails when below, and needs the word's
#: low half only when equal (those from the eighth on are all ``2^16 - 1``).
POISSON1_HIGH = (POISSON1_THRESHOLDS[:7] >> np.uint32(16)).astype(np.uint16)
#: The high halves that need their low half.
_TIES = np.append(POISSON1_HIGH, np.uint16(0xFFFF))


def _words(rows: npt.NDArray[np.uint64], seed: int, block: int, stream: int = 0) -> npt.NDArray[np.uint32]:
    """The four words of each row's block ``block`` in ``stream``: ``len(rows) x 4``."""
    ctr = np.empty((rows.size, 4), dtype=np.uint32)
    ctr[:, 0] = rows & _LOW
    ctr[:, 1] = rows >> _SHIFT
    ctr[:, 2] = block
    ctr[:, 3] = stream
    return philox4x32_blocks(ctr, (seed & 0xFFFFFFFF, seed >> 32))


def _halves(words: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint16]:
    """The eight 16-bit halves of each row of ``words`` (``m x 4``): half ``j`` is the low half
    of word ``j // 2`` for even ``j``, its high half for odd."""
    out = np.empty((words.shape[0], 8), dtype=np.uint16)
    out[:, 0::2] = words & np.uint32(0xFFFF)
    out[:, 1::2] = words >> np.uint32(16)
    return out


def block_weights(rows: npt.NDArray[np.uint64], seed: int, block: int) -> npt.NDArray[np.uint8]:
    """The weights of ``rows`` in replicates ``8 block .. 8 block + 8``: ``len(rows) x 8``."""
    high = _halves(_words(rows, seed, block))
    draws: npt.NDArray[np.uint8] = (high > POISSON1_HIGH[0]).view(np.uint8).copy()
    for t in POISSON1_HIGH[1:4]:
        draws += (high > t).view(np.uint8)
    far = high > POISSON1_HIGH[3]
    if far.any():
        draws[far] = np.searchsorted(POISSON1_HIGH, high[far], side="left")
    tied = np.isin(high, _TIES)
    if tied.any():
        which = np.flatnonzero(tied.any(axis=1))
        low = _halves(_words(rows[which], seed, block, _LOW_HALVES))
        sub = tied[which]
        word = (high[which][sub].astype(np.uint32) << np.uint32(16)) | low[sub].astype(np.uint32)
        fixed = draws[which]
        fixed[sub] = poisson1(word)
        draws[which] = fixed
    return draws


def poisson1(words: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint8]:
    """The Poisson(1) draw of each word: how many of :data:`POISSON1_THRESHOLDS` are ``<= u``.
    Four comparisons (``np.searchsorted`` over the twelve thresholds was 3-4x slower); the words
    past the fourth threshold (about 1.9%) are searched."""
    w = np.asarray(words, dtype=np.uint32)
    draws: npt.NDArray[np.uint8] = (w >= POISSON1_THRESHOLDS[0]).view(np.uint8).copy()
    for t in POISSON1_THRESHOLDS[1:4]:
        draws += (w >= t).view(np.uint8)
    far = w >= POISSON1_THRESHOLDS[3]
    if far.any():
        draws[far] = np.searchsorted(POISSON1_THRESHOLDS, w[far], side="right")
    return draws


def poisson_weights(rows: npt.NDArray[np.uint64], seed: int, n_resamples: int) -> npt.NDArray[np.uint8]:
    """The Poisson(1) weight of each of ``rows`` in replicates ``0 .. n_resamples``:
    ``n_resamples x len(rows)`` uint8."""
    return _weights_between(np.asarray(rows, dtype=np.uint64), seed, 0, n_resamples)


def _weights_between(rows: npt.NDArray[np.uint64], seed: int, lo: int, hi: int) -> npt.NDArray[np.uint8]:
    """The weights of ``rows`` in replicates ``lo .. hi`` (``hi - lo`` x ``len(rows)``, uint8):
    replicate ``b`` is half ``b % 8`` of block ``b // 8``."""
    out = np.empty((hi - lo, rows.size), dtype=np.uint8)
    for block in range(lo // 8, (hi + 7) // 8):
        draws = block_weights(rows, seed, block)
        for j in range(8):
            b = 8 * block + j
            if lo <= b < hi:
                out[b - lo] = draws[:, j]
    return out


def _check(n: int, n_values: int, segments: Sequence[tuple[int, int | npt.NDArray[np.uint32]]], width: int) -> None:
    total = sum(length for length, _ in segments)
    if total != n_values:
        msg = f"segments has the wrong shape: the segments hold {total} values but each row has {n_values}"
        raise ShapeError(msg)
    for length, cols in segments:
        if isinstance(cols, int):
            bad = cols + length > width
        else:
            c = np.asarray(cols)
            bad = c.shape != (n,) or (n > 0 and int(c.max()) + length > width)
        if bad:
            msg = (
                f"segments has the wrong shape: a segment of {length} values falls outside the {width} columns "
                "of a replicate (or has one column per row for another number of rows)"
            )
            raise ShapeError(msg)


def replicate_sums(
    values: npt.NDArray[np.float64],
    segments: Sequence[tuple[int, int | npt.NDArray[np.uint32]]],
    rows: int | npt.NDArray[np.uint64],
    seed: int,
    n_resamples: int,
    width: int,
    n_threads: int = 0,
) -> npt.NDArray[np.float64]:
    """The ``n_resamples x width`` Poisson-bootstrap replicates of the row sums of ``values``:
    segment ``s`` of row ``i`` (``length`` values) is added, times the row's weight, at its
    column (one for every row, or one per row)."""
    del n_threads  # numpy runs on one thread
    v = np.asarray(values, dtype=np.float64)
    n, n_values = v.shape
    if not isinstance(rows, int) and np.asarray(rows).shape != (n,):
        msg = f"rows has the wrong shape: {np.asarray(rows).size} row indices for {n} rows"
        raise ShapeError(msg)
    _check(n, n_values, segments, width)
    out = np.zeros((n_resamples, width))
    for lo in range(0, n, _CHUNK):
        hi = min(lo + _CHUNK, n)
        if isinstance(rows, int):
            ids = np.arange(lo, hi, dtype=np.uint64) + np.uint64(rows)
        else:
            ids = np.asarray(rows[lo:hi], dtype=np.uint64)
        w8 = poisson_weights(ids, seed, n_resamples)
        w: npt.NDArray[np.float64] | None = None
        at = 0
        for length, cols in segments:
            block = v[lo:hi, at : at + length]
            if isinstance(cols, int):
                if w is None:
                    w = w8.astype(np.float64)
                out[:, cols : cols + length] += w @ block
            else:
                # The rows grouped by column (stably): one gather of the weights' columns, then
                # each column's rows a contiguous slice (a boolean gather per column was 8x slower).
                c = np.asarray(cols[lo:hi])
                order = np.argsort(c, kind="stable")
                by_col, rows_w, rows_v = c[order], np.take(w8, order, axis=1).astype(np.float64), block[order]
                cuts = (np.flatnonzero(by_col[1:] != by_col[:-1]) + 1).tolist()
                for a, b in zip([0, *cuts], [*cuts, by_col.size], strict=True):
                    col = int(by_col[a])
                    out[:, col : col + length] += rows_w[:, a:b] @ rows_v[a:b]
            at += length
    return out


#: Replicates walked at a time by :func:`replicate_ranking` (bounds a ``B x groups`` temporary).
_RANKING_REPLICATES = 8


def walk_cell_weights(
    drawn: npt.NDArray[np.float64], cells: npt.NDArray[np.uint64], groups: int, curves: bool = True
) -> RankingReplicates:
    """The ranking metrics of each replicate of drawn (group, side) cell weights: ``drawn`` is
    ``replicates x cells``, ``cells`` the listed cells in increasing order (cell ``c < groups``
    the positives of group ``c``, ``groups + c`` its negatives, the groups from the highest score
    down); the rows' own pair counts 0."""
    drawn = np.asarray(drawn, dtype=np.float64)
    cells = np.asarray(cells, dtype=np.uint64)
    if drawn.ndim != 2 or drawn.shape[1] != cells.size:
        raise ValidationError(
            f"drawn has {drawn.shape[-1] if drawn.ndim else 0} columns but there are {cells.size} cells; "
            "pass one column per cell"
        )
    if cells.size == 0:
        raise ValidationError("cells: list at least one cell")
    if np.any(cells[1:] <= cells[:-1]) or int(cells[-1]) // 2 >= groups:
        raise ValidationError(f"cells: the cells must increase and stay below {2 * groups}")
    # Only the groups that hold a listed cell (an empty group changes no sum), in their order.
    negative = cells >= groups
    present, at = np.unique(np.where(negative, cells - np.uint64(groups), cells), return_inverse=True)
    full = np.zeros((drawn.shape[0], 2 * present.size))
    full[:, at + present.size * negative] = drawn
    gp, gn = full[:, : present.size], full[:, present.size :]
    return RankingReplicates(*walk_group_weights(gp, gn, curves), 0, 0, 0, 0)


def walk_group_weights(
    gp: npt.NDArray[np.float64], gn: npt.NDArray[np.float64], curves: bool
) -> tuple[F64, F64, F64, F64, F64, F64]:
    """The ranking metrics of replicates from their tie groups' positive and negative weights
    (``replicates x groups``, highest score first): ``(auroc, average precision, tied share,
    aurc, w_pos, w_neg)``, the curves NaN unless ``curves``."""
    tp_after = np.cumsum(gp, axis=1)
    fp_after = np.cumsum(gn, axis=1)
    tp_before = tp_after - gp
    p_total, n_total = tp_after[:, -1], fp_after[:, -1]
    auc = np.sum(gn * (tp_before + 0.5 * gp), axis=1)
    # One array each: the result's fields must not share memory.
    ap, aurc = np.full(gp.shape[0], np.nan), np.full(gp.shape[0], np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = (p_total > 0) & (n_total > 0)
        pair_weight = p_total * n_total
        auroc = np.where(ok, auc / pair_weight, np.nan)
        tied = np.where(ok, np.sum(gp * gn, axis=1) / pair_weight, np.nan)
        if curves:
            # The precision and risk of every group only for the curves (most of the walk).
            drawn = gp + gn
            precision = np.where(drawn > 0, tp_after / (tp_after + fp_after), 0.0)
            ap = np.where(ok, np.sum(np.where(gp > 0, gp * precision, 0.0), axis=1) / p_total, np.nan)
            total = p_total + n_total
            risk = np.sum(np.where(drawn > 0, drawn * (1.0 - precision), 0.0), axis=1)
            aurc = np.where(total > 0, risk / total, np.nan)
    return auroc, ap, tied, aurc, p_total, n_total


def replicate_ranking(
    positive: npt.NDArray[np.bool_],
    score: npt.NDArray[np.generic],
    sample_weight: npt.NDArray[np.float64] | None,
    rows: int | npt.NDArray[np.uint64],
    seed: int,
    n_resamples: int,
    n_threads: int = 0,
    curves: bool = True,
) -> RankingReplicates:
    """AUROC, tied share, average precision and AURC of Poisson-bootstrap replicates of
    ``(positive, score)`` (each draw times the row's ``sample_weight``): one sort, then per
    replicate the weights of each tie group from the highest score down. The average precision
    and AURC are NaN unless ``curves``."""
    del n_threads
    n = score.shape[0]
    check_same_length("y_true", positive.shape[0], "y_score", n)
    if n == 0:
        msg = "y_score is empty; at least one sample is required"
        raise ShapeError(msg)
    check_finite("y_score", score)
    if sample_weight is not None:
        check_weights(sample_weight, n)
    keys = score.astype(np.float64) + 0.0 if score.dtype.kind == "f" else score
    order = np.argsort(keys, kind="stable")[::-1]
    s = keys[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    group = np.cumsum(np.r_[True, s[1:] != s[:-1]]) - 1
    ids = (np.arange(n, dtype=np.uint64) + np.uint64(rows)) if isinstance(rows, int) else np.asarray(rows, np.uint64)
    pos = positive[order]
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)[order]
    g = starts.size
    out = [np.empty(n_resamples) for _ in range(6)]
    ordered_ids = ids[order]
    sw_pos, sw_neg = sw * pos, sw * ~pos
    for lo in range(0, n_resamples, _RANKING_REPLICATES):
        hi = min(lo + _RANKING_REPLICATES, n_resamples)
        w = _weights_between(ordered_ids, seed, lo, hi)
        gp = np.zeros((hi - lo, g))
        gn = np.zeros((hi - lo, g))
        for b in range(hi - lo):
            gp[b] = np.bincount(group, weights=w[b] * sw_pos, minlength=g)
            gn[b] = np.bincount(group, weights=w[b] * sw_neg, minlength=g)
        for column, values in zip(out, walk_group_weights(gp, gn, curves), strict=True):
            column[lo:hi] = values
    pairs = [0, 0, 0, 0]
    if sample_weight is None:
        gp1 = np.bincount(group, weights=pos, minlength=g).astype(np.int64)
        gn1 = np.bincount(group, weights=~pos, minlength=g).astype(np.int64)
        before = np.cumsum(gp1) - gp1
        pairs = [int(np.dot(gn1, before)), int(np.dot(gn1, gp1)), int(gp1.sum()), int(gn1.sum())]
    auroc, ap_, tied, aurc, w_pos, w_neg = out
    return RankingReplicates(auroc, ap_, tied, aurc, w_pos, w_neg, *pairs)

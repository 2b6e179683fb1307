"""The multinomial draws of a large stratum by Poisson draws and completion, in numpy (the
twin of ``rust/core/src/resampling/poisson_cells.rs``; docs/definitions.md §11).

Each occupied cell ``i`` draws ``X_i ~ Poisson(c_i (1 - d))``, ``d = 3 / sqrt(n)``, by inverting
a table shared by every cell of the same rate; given their total ``t <= n``, ``n - t`` rows drawn
one at a time from the shares ``c / n`` complete ``X`` to ``Multinomial(n, c / n)``. A replicate
whose draws total more than ``n`` is drawn by the split tree instead (the caller's). The tables
are built by the same sequential products and sums as the Rust core's, the uniforms come from
the same Philox4x32-10 blocks, and every search finds the same first entry, so both backends draw
the same counts bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cmetrics._numpy.random import philox4x32_blocks

F64 = npt.NDArray[np.float64]
U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]
I64 = npt.NDArray[np.int64]
Bool = npt.NDArray[np.bool_]

#: The stream tags of the Poisson draws and of the completion rows.
CELL_POISSON = 2
CELL_COMPLETIONS = 3
#: The rates are shrunk by ``MARGIN / sqrt(n)``: the draws then overshoot ``n`` in about 0.13 % of
#: replicates (each drawn by the split tree instead).
MARGIN = 3.0
#: Strata of fewer rows keep the split tree.
MIN_TOTAL = 1 << 10
#: The most entries the tables of one call may hold; past it every stratum keeps the tree.
TABLE_BUDGET = 1 << 22
_TWO_M53 = 1.0 / 9007199254740992.0
_LOW = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)
#: Draws taken at a time (bounds the temporaries at a few tens of MB).
_CHUNK = 1 << 20


def eligible(total: int, occupied: int) -> bool:
    """Whether a stratum of ``total`` rows over ``occupied`` nonzero cells is drawn by Poisson
    draws and completion: at least :data:`MIN_TOTAL` rows and ``2 sqrt(total)`` cells."""
    return total >= MIN_TOTAL and occupied * occupied >= 4 * total


def rate(count: int, total: int) -> float:
    """The Poisson rate of a cell of ``count`` rows in a stratum of ``total`` rows."""
    return float(count) * (1.0 - MARGIN / math.sqrt(float(total)))


def table_span(r: float) -> tuple[float, int]:
    """The first value and the number of entries of the table of rate ``r``: the values within
    ``12 sqrt(r) + 12`` of its floor (the mass outside is below ``10^-24`` at every rate)."""
    mode = math.floor(r)
    width = math.floor(12.0 * math.sqrt(r)) + 12.0
    low = max(mode - width, 0.0)
    return low, int(mode + width - low) + 1


def table(r: float, low: float, length: int) -> F64:
    """The cumulative weights of rate ``r``'s table (the weight of its floor is 1; the others by
    running products of ``r / j`` up and ``j / r`` down; summed from the first value up)."""
    mode = float(math.floor(r))
    at = int(mode - low)
    weights = np.empty(length)
    weights[at] = 1.0
    weights[at + 1 :] = np.cumprod(r / ((mode + 1.0) + np.arange(length - at - 1, dtype=np.float64)))
    weights[:at] = np.cumprod((mode - np.arange(at, dtype=np.float64)) / r)[::-1]
    return np.cumsum(weights)


@dataclass(frozen=True)
class Stratum:
    """A stratum drawn by Poisson draws and completion: its cells, rows, its occupied cells (local
    indices) grouped by table, the slice of those each table serves, the Philox pairs they draw
    from (``global cell >> 1``, distinct and ascending) and where each occupied cell's word lies
    among the pairs' words (``2 pair + 1`` for an odd cell, which takes the second), and the
    prefix sums of its counts."""

    lo: int
    hi: int
    total: int
    occupied: I64
    tables: list[tuple[int, int, int]]
    pairs: U64
    word_of: I64
    prefix: U64


def plan(counts: U64, bounds: list[tuple[int, int]]) -> tuple[list[Stratum], list[tuple[float, F64]]] | None:
    """The strata of ``bounds`` to draw by Poisson draws and completion and the tables (first
    value, cumulative weights), or ``None`` when none is eligible or the tables pass the budget.

    A table serves every cell of one rate (:func:`rate`, the same float product per distinct
    count), across strata; the distinct counts of a stratum come from one ``np.unique``."""
    rates: dict[float, int] = {}
    spans: list[tuple[float, float, int]] = []
    entries = 0
    chosen = []
    for lo, hi in bounds:
        c = np.asarray(counts[lo:hi], dtype=np.uint64)
        occupied = np.flatnonzero(c)
        total = int(c.sum(dtype=np.uint64))
        if not eligible(total, occupied.size):
            continue
        distinct, inverse = np.unique(c[occupied], return_inverse=True)
        shrink = 1.0 - MARGIN / math.sqrt(float(total))
        table_of = np.empty(distinct.size, dtype=np.int64)
        for j, r in enumerate((distinct.astype(np.float64) * shrink).tolist()):
            t = rates.get(r)
            if t is None:
                low, length = table_span(r)
                entries += length
                if entries > TABLE_BUDGET:
                    return None
                spans.append((r, low, length))
                t = rates[r] = len(spans) - 1
            table_of[j] = t
        cell_table = table_of[inverse.ravel()]
        by_table = np.argsort(cell_table, kind="stable")
        occupied, cell_table = occupied[by_table], cell_table[by_table]
        starts = np.flatnonzero(np.diff(cell_table, prepend=-1)).tolist()
        ends = [*starts[1:], occupied.size]
        slices = [(int(cell_table[a]), a, b) for a, b in zip(starts, ends, strict=True)]
        glob = occupied.astype(np.uint64) + np.uint64(lo)
        pairs, pair_of = np.unique(glob >> np.uint64(1), return_inverse=True)
        word_of = 2 * pair_of.ravel() + (glob & np.uint64(1)).astype(np.int64)
        prefix = np.concatenate([np.zeros(1, dtype=np.uint64), np.cumsum(c, dtype=np.uint64)])
        chosen.append(Stratum(lo, hi, total, occupied, slices, pairs, word_of, prefix))
    if not chosen:
        return None
    return chosen, [(low, table(r, low, length)) for r, low, length in spans]


def _words(counter: U32, key: tuple[int, int]) -> U64:
    """The two 64-bit words ``(w0 << 32 | w1, w2 << 32 | w3)`` of each block of ``counter``
    (``m x 4``), as an ``m x 2`` array."""
    w = philox4x32_blocks(counter, key)
    words: U64 = np.left_shift(w[:, 0::2].astype(np.uint64), _SHIFT)
    np.bitwise_or(words, w[:, 1::2], out=words)
    return words


def _counters(a: npt.ArrayLike, b: npt.ArrayLike, c: npt.ArrayLike, d: npt.ArrayLike) -> U32:
    """The counters ``(a, b, c, d)``, broadcast, one per row."""
    cols = np.broadcast_arrays(*(np.asarray(x, dtype=np.uint64) for x in (a, b, c, d)))
    return np.stack([x.ravel() for x in cols], axis=1).astype(np.uint32)


def _mul_halves(x: U64, total: int) -> tuple[U64, U64]:
    """The high and low 64-bit halves of each ``x`` times ``total`` (below 2^53), exactly: the
    products of 32-bit halves, each below 2^64, and their carries."""
    th, tl = np.uint64(total >> 32), np.uint64(total & 0xFFFFFFFF)
    xh, xl = x >> _SHIFT, x & _LOW
    p0, p1, p2 = xl * tl, xh * tl, xl * th
    mid = (p0 >> _SHIFT) + (p1 & _LOW) + (p2 & _LOW)
    low: U64 = (mid << _SHIFT) | (p0 & _LOW)
    high: U64 = xh * th + (p1 >> _SHIFT) + (p2 >> _SHIFT) + (mid >> _SHIFT)
    return high, low


def below(x: U64, total: int) -> tuple[U64, Bool]:
    """The uniform integer in ``[0, total)`` each 64-bit word gives (the high half of
    ``x total``) and whether it gives one: not when the low half falls below ``2^64 mod total``
    (Lemire's rejection; a chance below ``total / 2^64``)."""
    high, low = _mul_halves(x, total)
    kept: Bool = low >= np.uint64((1 << 64) % total)
    return high, kept


def _completions(stratum: Stratum, rows: U64, replicates: U32, key: tuple[int, int]) -> U64:
    """A uniform integer in ``[0, total)`` per completion row: rows ``2j`` and ``2j + 1`` take
    the first and second word of block ``(j, replicate, lo, CELL_COMPLETIONS)``; a word
    :func:`below` rejects gives way to the first word of block ``(row, replicate, lo,
    CELL_COMPLETIONS + 256 a)``, ``a = 1, 2, ...``, that it keeps."""
    words = _words(_counters(rows >> np.uint64(1), replicates, stratum.lo, CELL_COMPLETIONS), key)
    x = np.where((rows & np.uint64(1)) == 0, words[:, 0], words[:, 1])
    out, kept = below(x, stratum.total)
    open_ = np.flatnonzero(~kept)
    attempt = 1
    while open_.size:
        tag = (CELL_COMPLETIONS + (attempt << 8)) & 0xFFFFFFFF
        first = _words(_counters(rows[open_], replicates[open_], stratum.lo, tag), key)[:, 0]
        v, kept = below(first, stratum.total)
        out[open_[kept]] = v[kept]
        open_ = open_[~kept]
        attempt += 1
    return out


def draw(stratum: Stratum, tables: list[tuple[float, F64]], replicates: U32, key: tuple[int, int], out: F64) -> Bool:
    """The counts of ``stratum``'s cells in each of ``replicates``, written into ``out``
    (``len x cells``, zero on entry), and which replicates overshot (their rows are to be drawn
    by the split tree)."""
    cells = stratum.hi - stratum.lo
    over = np.zeros(replicates.size, dtype=np.bool_)
    # About cells + 3 sqrt(total) draws a replicate; a chunk of replicates keeps the temporaries
    # near _CHUNK draws.
    step = max(1, _CHUNK // (cells + 3 * math.isqrt(stratum.total) + 1))
    for a in range(0, replicates.size, step):
        over[a : a + step] = _draw_chunk(stratum, tables, replicates[a : a + step], key, out[a : a + step])
    return over


def _draw_chunk(
    stratum: Stratum, tables: list[tuple[float, F64]], replicates: U32, key: tuple[int, int], out: F64
) -> Bool:
    """:func:`draw` of a few replicates at once, into ``out``. One Philox block per pair of
    cells (its first word for the even cell, its second for the odd one), as the Rust core."""
    counters = _counters(stratum.pairs[None, :], replicates[:, None], 0, CELL_POISSON)
    words = _words(counters, key)
    x = words.reshape(replicates.size, 2 * stratum.pairs.size)[:, stratum.word_of]
    del words
    u = ((x >> np.uint64(11)).astype(np.float64) + 0.5) * _TWO_M53
    del x
    drawn = np.empty_like(u)
    for t, a, b in stratum.tables:
        low, cdf = tables[t]
        k = np.minimum(np.searchsorted(cdf, u[:, a:b] * cdf[-1], side="right"), cdf.size - 1)
        drawn[:, a:b] = low + k
    out[:, stratum.occupied] = drawn
    total = float(stratum.total)
    sums = out.sum(axis=1)
    over: Bool = (sums > total) | (total - sums >= 4294967296.0)
    extra = np.where(over, 0.0, total - sums).astype(np.int64)
    if extra.sum():
        which = np.repeat(np.arange(replicates.size), extra)
        starts = np.concatenate([[0], np.cumsum(extra)[:-1]])
        rows = (np.arange(which.size) - np.repeat(starts, extra)).astype(np.uint64)
        v = _completions(stratum, rows, replicates[which], key)
        cell = np.searchsorted(stratum.prefix[1:], v, side="right")
        np.add.at(out, (which, cell), 1.0)
    return over

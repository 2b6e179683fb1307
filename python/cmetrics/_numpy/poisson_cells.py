"""The multinomial draws of a large stratum by Poisson draws and completion, in numpy (the
twin of ``rust/core/src/resampling/poisson_cells.rs``; docs/definitions.md §11).

Each occupied cell ``i`` draws ``X_i ~ Poisson(c_i (1 - d))``, ``d = 2 / sqrt(n)``, by inverting
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
Bool = npt.NDArray[np.bool_]

#: The stream tags of the Poisson draws and of the completion rows.
CELL_POISSON = 2
CELL_COMPLETIONS = 3
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
    return float(count) * (1.0 - 2.0 / math.sqrt(float(total)))


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
    """A stratum drawn by Poisson draws and completion: its cells, rows, the tables of its
    occupied cells and the prefix sums of its counts."""

    lo: int
    hi: int
    total: int
    tables: dict[int, npt.NDArray[np.int64]]
    prefix: U64


def plan(counts: U64, bounds: list[tuple[int, int]]) -> tuple[list[Stratum], list[tuple[float, F64]]] | None:
    """The strata of ``bounds`` to draw by Poisson draws and completion and the tables (first
    value, cumulative weights), or ``None`` when none is eligible or the tables pass the budget."""
    rates: dict[float, int] = {}
    spans: list[tuple[float, float, int]] = []
    entries = 0
    chosen = []
    for lo, hi in bounds:
        c = [int(x) for x in counts[lo:hi]]
        total = sum(c)
        if not eligible(total, sum(1 for x in c if x > 0)):
            continue
        of_cell: dict[int, list[int]] = {}
        for i, x in enumerate(c):
            if x == 0:
                continue
            r = rate(x, total)
            t = rates.get(r)
            if t is None:
                low, length = table_span(r)
                entries += length
                spans.append((r, low, length))
                t = rates[r] = len(spans) - 1
            if entries > TABLE_BUDGET:
                return None
            of_cell.setdefault(t, []).append(i)
        prefix = np.concatenate([[0], np.cumsum(counts[lo:hi], dtype=np.uint64)]).astype(np.uint64)
        cells = {t: np.array(v, dtype=np.int64) for t, v in of_cell.items()}
        chosen.append(Stratum(lo, hi, total, cells, prefix))
    if not chosen:
        return None
    return chosen, [(low, table(r, low, length)) for r, low, length in spans]


def _words(counter: U32, key: tuple[int, int]) -> tuple[U64, U64]:
    """The two 64-bit words of each block of ``counter`` (``m x 4``)."""
    w = philox4x32_blocks(counter, key).astype(np.uint64)
    return (w[:, 0] << _SHIFT) | w[:, 1], (w[:, 2] << _SHIFT) | w[:, 3]


def _counters(a: npt.ArrayLike, b: npt.ArrayLike, c: npt.ArrayLike, d: npt.ArrayLike) -> U32:
    """The counters ``(a, b, c, d)``, broadcast, one per row."""
    cols = np.broadcast_arrays(*(np.asarray(x, dtype=np.uint64) for x in (a, b, c, d)))
    return np.stack([x.ravel() for x in cols], axis=1).astype(np.uint32)


def _uniform_below(stratum: Stratum, rows: U64, replicates: U32, key: tuple[int, int]) -> U64:
    """A uniform integer in ``[0, total)`` per completion row: the first of the two words of
    block ``(row, replicate, lo, CELL_COMPLETIONS + 256 a)``, ``a = 0, 1, ...``, whose top bits
    fall below ``total``."""
    shift = np.uint64(64 - (stratum.total - 1).bit_length())
    out = np.zeros(rows.size, dtype=np.uint64)
    open_ = np.arange(rows.size)
    attempt = 0
    while open_.size:
        tag = (CELL_COMPLETIONS + (attempt << 8)) & 0xFFFFFFFF
        first, second = _words(_counters(rows[open_], replicates[open_], stratum.lo, tag), key)
        first >>= shift
        second >>= shift
        total = np.uint64(stratum.total)
        take_first = first < total
        take_second = ~take_first & (second < total)
        out[open_[take_first]] = first[take_first]
        out[open_[take_second]] = second[take_second]
        open_ = open_[~(take_first | take_second)]
        attempt += 1
    return out


def draw(stratum: Stratum, tables: list[tuple[float, F64]], replicates: U32, key: tuple[int, int]) -> tuple[F64, Bool]:
    """The counts of ``stratum``'s cells in each of ``replicates`` (``len x cells``) and which
    replicates overshot (their rows are to be drawn by the split tree)."""
    cells = stratum.hi - stratum.lo
    out = np.zeros((replicates.size, cells))
    over = np.zeros(replicates.size, dtype=np.bool_)
    # About cells + 2 sqrt(total) draws a replicate; a chunk of replicates keeps the temporaries
    # near _CHUNK draws.
    step = max(1, _CHUNK // (cells + 2 * math.isqrt(stratum.total) + 1))
    for a in range(0, replicates.size, step):
        out[a : a + step], over[a : a + step] = _draw_chunk(stratum, tables, replicates[a : a + step], key)
    return out, over


def _draw_chunk(
    stratum: Stratum, tables: list[tuple[float, F64]], replicates: U32, key: tuple[int, int]
) -> tuple[F64, Bool]:
    """:func:`draw` of a few replicates at once."""
    cells = stratum.hi - stratum.lo
    out = np.zeros((replicates.size, cells))
    for t, local in stratum.tables.items():
        low, cdf = tables[t]
        glob = local + stratum.lo
        first, second = _words(_counters((glob >> 1)[None, :], replicates[:, None], 0, CELL_POISSON), key)
        shape = (replicates.size, local.size)
        x = np.where(((glob & 1) == 0)[None, :], first.reshape(shape), second.reshape(shape))
        u = ((x >> np.uint64(11)).astype(np.float64) + 0.5) * _TWO_M53
        k = np.minimum(np.searchsorted(cdf, u * cdf[-1], side="right"), cdf.size - 1)
        out[:, local] = low + k
    total = float(stratum.total)
    sums = out.sum(axis=1)
    over = (sums > total) | (total - sums >= 4294967296.0)
    extra = np.where(over, 0.0, total - sums).astype(np.int64)
    if extra.sum():
        which = np.repeat(np.arange(replicates.size), extra)
        starts = np.concatenate([[0], np.cumsum(extra)[:-1]])
        rows = (np.arange(which.size) - np.repeat(starts, extra)).astype(np.uint64)
        v = _uniform_below(stratum, rows, replicates[which], key)
        cell = np.searchsorted(stratum.prefix[1:], v, side="right")
        out += np.bincount(which * cells + cell, minlength=replicates.size * cells).reshape(replicates.size, cells)
    return out, over

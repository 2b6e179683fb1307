"""Exact multinomial draws of cell counts, in numpy (the twin of
``rust/core/src/resampling/multinomial.rs``; docs/definitions.md §11).

A stratum's cells are split in halves, recursively; a node holding ``m`` rows sends
``Binomial(m, p)`` of them to its left half, ``p`` the left half's share of the counts. A draw
is a pure function of ``(seed, replicate, node, m, p)``: its uniforms come from Philox4x32-10
with the counter ``(replicate, split position, attempt, 1)``. Here the tree is drawn level by
level, every replicate and node of a level at once; the Rust core draws one replicate per task,
level by level, a level's BTRD draws eight at a time in vector lanes. Both use only IEEE-exact
operations and the logarithm :func:`exact_ln` (written in them), so the counts are the same bit
for bit.

A large stratum (at least 1024 rows over at least ``2 sqrt(rows)`` occupied cells) is drawn by
Poisson draws and completion instead (:mod:`cmetrics._numpy.poisson_cells`), its replicates that
overshoot by the tree.

The binomial sampler is inversion from zero below a mean of 10 (Kachitvichyanukul and
Schmeiser's BINV) and Hörmann's BTRD above ("The generation of binomial random variates",
1993).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from cmetrics._kernels import RankingReplicates
from cmetrics._numpy import poisson_cells
from cmetrics._numpy.random import philox4x32_blocks, walk_cell_weights
from cmetrics.exceptions import OutOfMemoryError, ValidationError

F64 = npt.NDArray[np.float64]
U64 = npt.NDArray[np.uint64]
U32 = npt.NDArray[np.uint32]

#: The stream tag of the binomial splits (the Poisson row weights are stream 0).
CELL_SPLITS = 1
#: A stratum's total must stay below this to be exact in float64.
MAX_TOTAL = 1 << 53
_TWO_M52 = 1.0 / 4503599627370496.0
_TWO_P54 = 18014398509481984.0
_LN2_HI = 6.931471803691238e-01
_LN2_LO = 1.9082149292705877e-10
_SQRT2 = 1.4142135623730951
_MANTISSA = np.uint64((1 << 52) - 1)
_ONE_EXPONENT = np.uint64(1023 << 52)
#: ``1 / (2j + 3)``, the series of ``atanh(s) / s`` in ``s^2``.
_ATANH_SERIES = [1.0 / (2 * j + 3) for j in range(11)]
#: The Stirling correction of ``k!`` for ``k = 0..9`` (computed at 50 digits).
_STIRLING_CORRECTION = np.array(
    [
        0.08106146679532726,
        0.0413406959554093,
        0.02767792568499834,
        0.020790672103765093,
        0.016644691189821193,
        0.013876128823070748,
        0.01189670994589177,
        0.010411265261972096,
        0.009255462182712733,
        0.00833056343336287,
    ]
)
#: The most steps of one inversion before it starts again.
_INVERSION_STEPS = 110.0
#: Binomial draws computed at a time (bounds the temporaries at a few MB).
_CHUNK = 1 << 15


def exact_ln(x: F64) -> F64:
    """The natural logarithm in IEEE-exact steps (the Rust core's ``ln``, bit for bit): ``x =
    f 2^e`` with ``f`` in ``[sqrt(1/2), sqrt(2)]`` and ``ln f = 2 atanh((f - 1) / (f + 1))``.

    >>> float(exact_ln(np.array([np.e]))[0]) == 1.0
    True
    """
    x = np.asarray(x, dtype=np.float64)
    bits = x.view(np.uint64).copy()
    e = np.zeros(x.shape, dtype=np.int64)
    sub = (bits >> np.uint64(52)) == 0
    if sub.any():
        bits[sub] = (x[sub] * _TWO_P54).view(np.uint64)
        e[sub] = -54
    e += ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64) - 1023
    f = ((bits & _MANTISSA) | _ONE_EXPONENT).view(np.float64)
    big = f > _SQRT2
    f = np.where(big, f * 0.5, f)
    e += big
    g = f - 1.0
    s = g / (2.0 + g)
    z = s * s
    c = _ATANH_SERIES
    z2, z4 = z * z, (z * z) * (z * z)
    z8 = z4 * z4
    r0 = (c[0] + c[1] * z) + (c[2] + c[3] * z) * z2
    r1 = (c[4] + c[5] * z) + (c[6] + c[7] * z) * z2
    r2 = (c[8] + c[9] * z) + c[10] * z2
    poly = (r0 + r1 * z4) + r2 * z8
    ln_f = 2.0 * s + ((2.0 * s) * z) * poly
    ef = e.astype(np.float64)
    out: F64 = ef * _LN2_HI + (ef * _LN2_LO + ln_f)
    out[x == 0] = -np.inf
    out[x < 0] = np.nan
    return out


def _stirling_correction(k: F64) -> F64:
    r = 1.0 / (k + 1.0)
    rr = r * r
    series = (1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0 - rr / 1680.0) * rr) * rr) * r
    table = _STIRLING_CORRECTION[np.clip(k, 0, 9).astype(np.intp)]
    out: F64 = np.where(k < 10.0, table, series)
    return out


def _power(base: F64, e: U64) -> F64:
    """``base ** e`` by repeated squaring (the Rust core's steps)."""
    acc = np.ones(base.shape)
    b, e = base.copy(), e.copy()
    while (e > 0).any():
        odd = (e & np.uint64(1)) == 1
        acc = np.where(odd, acc * b, acc)
        b = b * b
        e >>= np.uint64(1)
    return acc


def _open_units(hi: U32, lo: U32) -> F64:
    """Uniforms in (0, 1), 52 bits from two words."""
    x = ((hi >> np.uint32(6)).astype(np.uint64) << np.uint64(26)) | (lo >> np.uint32(6)).astype(np.uint64)
    out: F64 = (x.astype(np.float64) + 0.5) * _TWO_M52
    return out


def _words(key: tuple[int, int], replicate: U32, node: U32, attempt: int) -> U32:
    ctr = np.empty((replicate.size, 4), dtype=np.uint32)
    ctr[:, 0] = replicate
    ctr[:, 1] = node
    ctr[:, 2] = attempt
    ctr[:, 3] = CELL_SPLITS
    return philox4x32_blocks(ctr, key)


def _inversion(n: F64, p: F64, replicate: U32, node: U32, key: tuple[int, int]) -> F64:
    """``Binomial(n, p)``, ``p <= 1/2`` and ``n p < 10``, by inversion from zero."""
    q = 1.0 - p
    s = p / q
    a = (n + 1.0) * s
    first = _power(q, n.astype(np.uint64))
    bound = np.minimum(n, _INVERSION_STEPS)
    out = np.zeros(n.shape)
    pending = np.arange(n.size)
    attempt = 0
    while pending.size:
        w = _words(key, replicate[pending], node[pending], attempt)
        u = _open_units(w[:, 0], w[:, 1])
        k = np.zeros(pending.size)
        f = first[pending]
        ap, sp, bp = a[pending], s[pending], bound[pending]
        active = np.ones(pending.size, dtype=bool)
        found = np.zeros(pending.size, dtype=bool)
        while active.any():
            hit = active & (u <= f)
            found |= hit
            active &= ~hit
            u = np.where(active, u - f, u)
            k = np.where(active, k + 1.0, k)
            active &= ~(k > bp)
            with np.errstate(divide="ignore", invalid="ignore"):  # rows no longer stepping hold k = 0
                f = np.where(active, f * (ap / k - sp), f)
        out[pending[found]] = k[found]
        pending = pending[~found]
        attempt += 1
    return out


def _btrd(n: F64, p: F64, replicate: U32, node: U32, key: tuple[int, int]) -> F64:
    """``Binomial(n, p)``, ``p <= 1/2`` and ``n p >= 10``, by Hörmann's BTRD."""
    q = 1.0 - p
    npq = (n * p) * q
    spq = np.sqrt(npq)
    b = 1.15 + 2.53 * spq
    a = (-0.0873 + 0.0248 * b) + 0.01 * p
    c = n * p + 0.5
    alpha = (2.83 + 5.1 / b) * spq
    vr = 0.92 - 4.2 / b
    urvr = 0.86 * vr
    m = np.floor((n + 1.0) * p)
    r = p / q
    out = np.zeros(n.shape)
    pending = np.arange(n.size)
    attempt = 0
    while pending.size:
        w = _words(key, replicate[pending], node[pending], attempt)
        attempt += 1
        nn, aa, bb, cc, al = n[pending], a[pending], b[pending], c[pending], alpha[pending]
        vrp, mm, rp, npqp = vr[pending], m[pending], r[pending], npq[pending]
        v = _open_units(w[:, 0], w[:, 1])
        second = _open_units(w[:, 2], w[:, 3])
        fast = v <= urvr[pending]
        uf = v / vrp - 0.43
        kf = np.floor((2.0 * aa / (0.5 - np.abs(uf)) + bb) * uf + cc)
        accept = fast & (kf >= 0.0) & (kf <= nn)
        u0 = v / vrp - 0.93
        wide = v >= vrp
        u = np.where(wide, second - 0.5, np.copysign(0.5, u0) - u0)
        v = np.where(wide, v, second * vrp)
        us = 0.5 - np.abs(u)
        k = np.floor((2.0 * aa / us + bb) * u + cc)
        inside = ~fast & (k >= 0.0) & (k <= nn)
        v = v * al / (aa / (us * us) + bb)
        km = np.abs(k - mm)
        near = np.flatnonzero(inside & (km <= 15.0))
        if near.size:
            accept[near] = _near_accept(v[near], k[near], km[near], nn[near], mm[near], rp[near])
        far = np.flatnonzero(inside & (km > 15.0))
        if far.size:
            accept[far] = _far_accept(v[far], k[far], km[far], nn[far], mm[far], rp[far], npqp[far])
        out[pending[accept]] = np.where(fast, kf, k)[accept]
        pending = pending[~accept]
    return out


def _near_accept(v: F64, k: F64, km: F64, n: F64, m: F64, r: F64) -> npt.NDArray[np.bool_]:
    """BTRD's test near the mode: ``f(k) / f(m)`` as two products and one division."""
    up = m < k
    lo, hi = np.where(up, m, k), np.where(up, k, m)
    num, den = np.ones(v.size), np.ones(v.size)
    for j in range(1, 16):
        i = lo + float(j)
        step = i <= hi
        num = np.where(step, num * ((n + 1.0) - i), num)
        den = np.where(step, den * i, den)
    ratio = _power(r, km.astype(np.uint64)) * num / den
    out: npt.NDArray[np.bool_] = np.where(up, v <= ratio, v * ratio <= 1.0)
    return out


def _far_accept(v: F64, k: F64, km: F64, n: F64, m: F64, r: F64, npq: F64) -> npt.NDArray[np.bool_]:
    """BTRD's squeeze on the log scale and its exact test by Stirling's formula."""
    lv = exact_ln(v)
    rho = (km / npq) * (((km / 3.0 + 0.625) * km + 1.0 / 6.0) / npq + 0.5)
    t = -(km * km) / (2.0 * npq)
    nm = n - m + 1.0
    h = (m + 0.5) * exact_ln((m + 1.0) / (r * nm)) + _stirling_correction(m) + _stirling_correction(n - m)
    nk = n - k + 1.0
    bound = (
        h
        + (n + 1.0) * exact_ln(nm / nk)
        + (k + 0.5) * exact_ln(nk * r / (k + 1.0))
        - _stirling_correction(k)
        - _stirling_correction(n - k)
    )
    out: npt.NDArray[np.bool_] = (lv < t - rho) | ((lv <= t + rho) & (lv <= bound))
    return out


def binomial(n: U64, p: F64, replicate: U32, node: U32, seed: int) -> U64:
    """``Binomial(n[i], p[i])`` drawn from the stream of ``(seed, replicate[i], node[i])``."""
    key = (seed & 0xFFFFFFFF, seed >> 32)
    out = np.zeros(n.shape, dtype=np.uint64)
    for lo in range(0, n.size, _CHUNK):
        part = slice(lo, lo + _CHUNK)
        nn, pp = n[part], p[part]
        live = (nn > 0) & (pp > 0.0)
        full = live & (pp >= 1.0)
        live &= ~full
        flip = pp > 0.5
        q = np.where(flip, 1.0 - pp, pp)
        nf = nn.astype(np.float64)
        k = np.zeros(nn.shape)
        small = live & (nf * q < 10.0)
        large = live & ~small
        rep, nod = replicate[part], node[part]
        for which, sampler in ((small, _inversion), (large, _btrd)):
            if which.any():
                k[which] = sampler(nf[which], q[which], rep[which], nod[which], key)
        ku = k.astype(np.uint64)
        drawn = np.where(flip, nn - ku, ku)
        out[part] = np.where(full, nn, np.where(live, drawn, 0))
    return out


def multinomial_draws(counts: U64, stratum_ends: U64, first: int, count: int, seed: int, n_threads: int = 0) -> F64:
    """Replicates ``first .. first + count`` of the multinomial resampling of the cell
    ``counts``, each stratum (its cells end at ``stratum_ends``) keeping its total:
    ``count x cells`` float64 counts (``n_threads`` is the Rust core's; unused here)."""
    del n_threads
    c = np.asarray(counts, dtype=np.uint64)
    cells = c.size
    if cells >= 1 << 32 or first + count > 1 << 32:
        msg = "counts is invalid: at most 2^32 cells and 2^32 replicates"
        raise ValidationError(msg)
    bounds = []
    start = 0
    for end in (int(x) for x in np.asarray(stratum_ends, dtype=np.uint64)):
        if end < start or end > cells:
            msg = "stratum_ends is invalid: must increase up to the number of cells"
            raise ValidationError(msg)
        if int(c[start:end].sum(dtype=np.uint64)) >= MAX_TOTAL or c[start:end].sum(dtype=float) >= MAX_TOTAL:
            msg = "counts is invalid: a stratum holds 2^53 rows or more: too many to draw exactly in float64"
            raise ValidationError(msg)
        if end > start:
            bounds.append((start, end))
        start = end
    try:
        out = np.zeros((count, cells))
    except MemoryError as e:
        msg = f"the multinomial draws could not be allocated ({8 * count * cells} bytes); draw fewer replicates"
        raise OutOfMemoryError(msg) from e
    if not bounds or count == 0:
        return out
    replicates = (first + np.arange(count)).astype(np.uint32)
    # The large strata by Poisson draws and completion (the tree for the replicates that
    # overshoot); the rest on the tree.
    chosen = poisson_cells.plan(c, bounds)
    by_poisson = chosen[0] if chosen is not None else []
    done = {(s.lo, s.hi) for s in by_poisson}
    rest = [b for b in bounds if b not in done]
    if rest:
        _tree(c, rest, replicates, seed, out)
    if chosen is not None:
        key = (seed & 0xFFFFFFFF, seed >> 32)
        for s in by_poisson:
            drawn = out[:, s.lo : s.hi]
            over = poisson_cells.draw(s, chosen[1], replicates, key, drawn)
            if over.any():
                again = np.zeros((int(over.sum()), c.size))
                drawn[over] = _tree(c, [(s.lo, s.hi)], replicates[over], seed, again)[:, s.lo : s.hi]
    return out


def _tree(c: U64, bounds: list[tuple[int, int]], replicates: U32, seed: int, out: F64) -> F64:
    """The split tree's draws of the strata ``bounds`` in ``replicates``, written into the
    cells of those strata in ``out`` (``len x cells``), which is returned."""
    count = replicates.size
    prefix = np.concatenate([np.zeros(1, dtype=np.uint64), np.cumsum(c, dtype=np.uint64)])
    lo = np.array([b[0] for b in bounds], dtype=np.int64)
    hi = np.array([b[1] for b in bounds], dtype=np.int64)
    m = np.tile((prefix[hi] - prefix[lo])[None, :], (count, 1))
    while lo.size:
        leaf = hi - lo == 1
        out[:, lo[leaf]] = m[:, leaf]
        inner = ~leaf
        lo, hi, m = lo[inner], hi[inner], m[:, inner]
        if not lo.size:
            break
        mid = lo + (hi - lo) // 2
        total = prefix[hi] - prefix[lo]
        share = np.where(total > 0, (prefix[mid] - prefix[lo]).astype(np.float64) / np.maximum(total, 1), 0.0)
        nodes = mid.size
        left = binomial(
            m.ravel(),
            np.tile(share, count),
            np.repeat(replicates, nodes),
            np.tile(mid.astype(np.uint32), count),
            seed,
        ).reshape(count, nodes)
        lo, hi = np.concatenate([lo, mid]), np.concatenate([mid, hi])
        m = np.concatenate([left, m - left], axis=1)
    return out


#: Replicates drawn and walked at a time by :func:`draw_cell_walks` (bounds its ``B x cells`` draws).
_WALKED_REPLICATES = 64


def draw_cell_walks(
    counts: U64,
    cells: U64,
    groups: int,
    first: int,
    count: int,
    seed: int,
    curves: bool = True,
    n_threads: int = 0,
) -> RankingReplicates:
    """Replicates ``first .. first + count`` of :func:`walk_cell_weights` drawn on the spot:
    ``counts`` holds the rows of each listed cell (one stratum), each replicate's cell weights
    :func:`multinomial_draws` of them; drawn and walked 64 replicates at a time (``n_threads``
    is the Rust core's; unused here)."""
    del n_threads
    c = np.asarray(counts, dtype=np.uint64)
    listed = np.asarray(cells, dtype=np.uint64)
    if c.size != listed.size:
        msg = f"counts is invalid: {c.size} counts for {listed.size} cells: give one count per listed cell"
        raise ValidationError(msg)
    if first + count > 1 << 32:
        msg = "count is invalid: at most 2^32 cells and 2^32 replicates"
        raise ValidationError(msg)
    ends = np.array([c.size], dtype=np.uint64)
    starts = range(first, first + count, _WALKED_REPLICATES)
    parts = [
        walk_cell_weights(
            multinomial_draws(c, ends, lo, min(_WALKED_REPLICATES, first + count - lo), seed), listed, groups, curves
        )
        for lo in starts
    ] or [walk_cell_weights(multinomial_draws(c, ends, first, 0, seed), listed, groups, curves)]

    def joined(name: str) -> F64:
        return np.concatenate([getattr(part, name) for part in parts])

    fields = ("auroc", "average_precision", "tied_share", "aurc", "w_pos", "w_neg")
    auroc, ap, tied, aurc, w_pos, w_neg = (joined(name) for name in fields)
    return RankingReplicates(auroc, ap, tied, aurc, w_pos, w_neg, 0, 0, 0, 0)

"""The counter-based stream: Philox4x32 against Random123's published known answers, the
Poisson(1) thresholds against exact arithmetic, both backends alike, and the replicate sums
against a plain loop, on any thread count."""

from __future__ import annotations

from decimal import Decimal, getcontext
from math import factorial

import numpy as np
import pytest

import cmetrics
from cmetrics._backend import resolve_backend
from cmetrics._numpy import random as numpy_random

# Random123's tests/kat_vectors, the philox4x32 lines: rounds, counter, key, result.
KAT = [
    (7, [0, 0, 0, 0], (0, 0), [0x5F6FB709, 0x0D893F64, 0x4F121F81, 0x4F730A48]),
    (7, [0xFFFFFFFF] * 4, (0xFFFFFFFF, 0xFFFFFFFF), [0x5207DDC2, 0x45165E59, 0x4D8EE751, 0x8C52F662]),
    (
        7,
        [0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344],
        (0xA4093822, 0x299F31D0),
        [0x4DFCCABA, 0x190A87F0, 0xC47362BA, 0xB6B5242A],
    ),
    (10, [0, 0, 0, 0], (0, 0), [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
    (10, [0xFFFFFFFF] * 4, (0xFFFFFFFF, 0xFFFFFFFF), [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
    (
        10,
        [0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344],
        (0xA4093822, 0x299F31D0),
        [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1],
    ),
]


@pytest.mark.parametrize(("rounds", "counter", "key", "want"), KAT)
def test_philox_gives_the_published_known_answers(backend: str, rounds: int, counter, key, want) -> None:
    be = resolve_backend(backend)
    got = be.philox4x32_blocks(np.array([counter], dtype=np.uint32), key, rounds)
    assert got.tolist() == [want]


def test_the_poisson_thresholds_are_the_exact_quantiles() -> None:
    getcontext().prec = 60
    e = (-Decimal(1)).exp()
    cdf = Decimal(0)
    want = []
    for k in range(40):
        cdf += e / factorial(k)
        t = int((cdf * 2**32).to_integral_value())
        if t >= 2**32:
            break
        want.append(t)
    assert numpy_random.POISSON1_THRESHOLDS.tolist() == want


def test_a_word_draws_how_many_thresholds_it_reaches() -> None:
    # Every threshold, one below and one above it, the extremes, and random words: the count of
    # thresholds <= u, as a plain loop counts it.
    t = [int(x) for x in numpy_random.POISSON1_THRESHOLDS]
    edges = [0, 1, 2**32 - 1] + [x + d for x in t for d in (-1, 0, 1)]
    words = np.array(edges + np.random.default_rng(4).integers(0, 2**32, 5_000).tolist(), dtype=np.uint32)
    got = numpy_random.poisson1(words)
    assert got.dtype == np.uint8
    assert got.tolist() == [sum(x <= int(u) for x in t) for u in words]
    assert got.max() == len(t)


def test_both_backends_draw_the_same_weights() -> None:
    if not cmetrics.rust_available():
        pytest.skip("the Rust extension is not built")
    rows = (np.arange(20_000, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) ^ np.uint64(12345)
    for seed in (0, 1, 2**64 - 1):
        a = resolve_backend("rust").poisson_weights(rows, seed, 11)
        b = resolve_backend("numpy").poisson_weights(rows, seed, 11)
        assert a.dtype == b.dtype == np.uint8
        assert np.array_equal(a, b)


def _definition_weight(row: int, seed: int, b: int) -> int:
    """The weight of ``row`` in replicate ``b`` as docs/definitions.md §11.2 states it, one block
    at a time with the Philox the known answers check: the 32-bit word whose high half is half
    ``b % 8`` of the block ``(row, b // 8, 0)`` and whose low half is the same half of the block
    in stream 4, drawn by the thresholds in a plain loop."""
    key = (seed & 0xFFFFFFFF, seed >> 32)

    def half(stream: int) -> int:
        ctr = np.array([[row & 0xFFFFFFFF, row >> 32, b // 8, stream]], dtype=np.uint32)
        word = int(numpy_random.philox4x32_blocks(ctr, key)[0, (b % 8) // 2])
        return (word >> (16 * (b % 2))) & 0xFFFF

    u = (half(0) << 16) | half(4)
    return sum(u >= int(t) for t in numpy_random.POISSON1_THRESHOLDS)


def test_the_weights_are_their_definition(backend: str) -> None:
    # Rows whose high halves leave the draw open (their low half decides) and rows picked at
    # random, in replicates of both blocks of a group of sixteen.
    seed, n_b = 2**40 + 3, 16
    rows = np.arange(40_000, dtype=np.uint64)
    got = resolve_backend(backend).poisson_weights(rows, seed, n_b)
    high = np.stack([numpy_random._halves(numpy_random._words(rows, seed, k)) for k in range(2)], axis=1)
    high = high.reshape(rows.size, n_b)
    open_ = np.argwhere(np.isin(high, numpy_random._TIES))
    assert len(open_) > 20
    picked = np.random.default_rng(1).integers(0, rows.size, 60)
    cases = [(int(i), int(b)) for i, b in open_] + [(int(i), int(b)) for i in picked for b in (0, 7, 8, 15)]
    for i, b in cases:
        assert got[b, i] == _definition_weight(int(rows[i]), seed, b), (i, b)
    # The open halves do draw by their low half: high halves alone would miss some.
    assert any(got[b, i] != np.searchsorted(numpy_random.POISSON1_HIGH, high[i, b]) for i, b in open_)


def test_the_weights_follow_poisson_one(backend: str) -> None:
    from scipy.stats import chisquare, poisson

    w = resolve_backend(backend).poisson_weights(np.arange(50_000, dtype=np.uint64), 7, 8).ravel()
    counts = np.bincount(w, minlength=6)[:6].astype(np.float64)
    counts[5] = (w >= 5).sum()
    p = poisson.pmf(np.arange(5), 1.0)
    expected = np.append(p, 1 - p.sum()) * w.size
    # A fixed seed: the test is deterministic; at the 1e-4 level a correct stream passes.
    assert chisquare(counts, expected).pvalue > 1e-4


def _naive(values, segments, first, seed, b_count, width, be) -> np.ndarray:
    n = values.shape[0]
    w = be.poisson_weights(np.arange(first, first + n, dtype=np.uint64), seed, b_count).astype(np.float64)
    out = np.zeros((b_count, width))
    for b in range(b_count):
        for i in range(n):
            at = 0
            for length, cols in segments:
                c = cols if isinstance(cols, int) else int(cols[i])
                out[b, c : c + length] += w[b, i] * values[i, at : at + length]
                at += length
    return out


def test_replicate_sums_equal_a_plain_loop(backend: str) -> None:
    rng = np.random.default_rng(3)
    n, k = 300, 3
    values = rng.random((n, k + 2))
    cols = (rng.integers(0, 4, n) * k).astype(np.uint32)
    segments = [(k, cols), (2, 12)]
    be = resolve_backend(backend)
    got = be.replicate_sums(values, segments, 1000, 5, 7, 14)
    np.testing.assert_allclose(got, _naive(values, segments, 1000, 5, 7, 14, be), rtol=1e-13, atol=1e-12)


def test_replicate_sums_do_not_depend_on_the_thread_count() -> None:
    if not cmetrics.rust_available():
        pytest.skip("the Rust extension is not built")
    rng = np.random.default_rng(4)
    n = 30_000
    values = rng.random((n, 2))
    cols = rng.integers(0, 9, n).astype(np.uint32)
    be = resolve_backend("rust")
    runs = [be.replicate_sums(values, [(1, cols), (1, 9)], 0, 11, 37, 10, threads) for threads in (1, 2, 8)]
    assert all(np.array_equal(runs[0], r) for r in runs[1:])
    np.testing.assert_allclose(
        runs[0], resolve_backend("numpy").replicate_sums(values, [(1, cols), (1, 9)], 0, 11, 37, 10), rtol=1e-12
    )


def test_segments_outside_the_replicate_are_refused(backend: str) -> None:
    be = resolve_backend(backend)
    values = np.ones((2, 1))
    with pytest.raises(cmetrics.exceptions.ShapeError, match="segments"):
        be.replicate_sums(values, [(1, np.array([0, 9], dtype=np.uint32))], 0, 0, 4, 4)
    with pytest.raises(cmetrics.exceptions.ShapeError, match="segments"):
        be.replicate_sums(values, [(2, 0)], 0, 0, 4, 4)


def test_the_ranking_replicates_count_the_rows_pairs(backend: str) -> None:
    """The AUROC of the data comes with the replicates: its pair counts equal a naive O(n^2) count."""
    rng = np.random.default_rng(12)
    score = np.round(rng.random(300), 1)  # ties within and across classes
    positive = rng.random(300) < 0.4
    be = resolve_backend(backend)  # type: ignore[arg-type]
    reps = be.replicate_ranking(positive, score, None, 0, 3, 5, 2, False)
    pos, neg = score[positive], score[~positive]
    ordered = int((pos[:, None] > neg[None, :]).sum())
    tied = int((pos[:, None] == neg[None, :]).sum())
    assert (reps.ordered, reps.tied, reps.n_pos, reps.n_neg) == (ordered, tied, pos.size, neg.size)
    assert np.isnan(reps.average_precision).all()  # not asked for
    weighted = be.replicate_ranking(positive, score, np.ones(300), 0, 3, 5, 2, True)
    assert (weighted.ordered, weighted.tied, weighted.n_pos, weighted.n_neg) == (0, 0, 0, 0)
    np.testing.assert_allclose(weighted.auroc, reps.auroc, rtol=1e-12)

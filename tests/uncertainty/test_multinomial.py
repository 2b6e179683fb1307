"""The multinomial scheme's draws of cell counts: each cell's count follows its binomial law
(Pearson's test against scipy's pmf), pairs of cells covary as a multinomial's, strata keep
their totals, both backends draw the same counts bit for bit on any thread count, and bad
arguments raise the same error on both."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import average_precision_score, roc_auc_score

from cmetrics._backend import resolve_backend, rust_available
from cmetrics._numpy import poisson_cells
from cmetrics._numpy.multinomial import exact_ln
from cmetrics.exceptions import ValidationError

U64 = np.uint64


def _draws(backend: str, counts: list[int], ends: list[int], first: int, count: int, seed: int, threads: int = 0):
    be = resolve_backend(backend)
    return be.multinomial_draws(np.array(counts, dtype=U64), np.array(ends, dtype=U64), first, count, seed, threads)


def _pearson(draws: np.ndarray, n: int, p: float) -> tuple[float, int]:
    """Pearson's statistic of integer draws against Binomial(n, p), the tails pooled so that
    every class expects at least 5 draws; and its degrees of freedom."""
    ks = np.arange(n + 1)
    expected = stats.binom.pmf(ks, n, p) * draws.size
    seen = np.bincount(draws.astype(np.int64), minlength=n + 1)
    stat, df, e_acc, o_acc = 0.0, -1, 0.0, 0.0
    for e, o in zip(expected, seen, strict=True):
        e_acc, o_acc = e_acc + e, o_acc + o
        if e_acc >= 5:
            stat += (o_acc - e_acc) ** 2 / e_acc
            df, e_acc, o_acc = df + 1, 0.0, 0.0
    if e_acc > 0:
        stat += (o_acc - e_acc) ** 2 / e_acc
    return stat, df


# Two cells: the left one is Binomial(a + b, a / (a + b)). Means below 10 take the inversion,
# above it BTRD (its recursion near the mode, its squeeze and its exact test in the tails);
# shares above 1/2 are drawn as their complement.
PAIRS = [(3, 97), (1, 1), (2, 5), (40, 160), (500, 500), (700, 300), (9_000, 1_000), (30_000, 70_000), (4, 999_996)]


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_a_split_follows_the_binomial_law(backend: str, a: int, b: int) -> None:
    reps = 20_000 if backend == "rust" else 6_000
    drawn = _draws(backend, [a, b], [2], 0, reps, seed=11)
    assert (drawn.sum(axis=1) == a + b).all()
    stat, df = _pearson(drawn[:, 0], a + b, a / (a + b))
    # Upper 1e-4 quantile: a fixed seed, a test that fails on a wrong law, not on bad luck.
    assert stat < stats.chi2.ppf(1 - 1e-4, max(df, 1)), (stat, df)


def test_cells_covary_as_a_multinomial(backend: str) -> None:
    counts = np.array([5, 120, 3_000, 40, 77_000, 1, 0, 650])
    n, reps = int(counts.sum()), 4_000
    drawn = _draws(backend, counts.tolist(), [counts.size], 0, reps, seed=3)
    p = counts / n
    cov = np.cov(drawn, rowvar=False)
    want = n * (np.diag(p) - np.outer(p, p))
    se = np.sqrt(n * n * (np.outer(p, p) + np.diag(p) ** 2) / reps) + 1e-9
    assert np.all(np.abs(cov - want) < 6 * se + 0.05 * np.sqrt(np.outer(np.diag(want), np.diag(want))))
    assert np.abs(drawn.mean(axis=0) - n * p).max() < 6 * np.sqrt(n * p * (1 - p) / reps).max() + 1e-12
    assert (drawn[:, 6] == 0).all()


@pytest.mark.parametrize("cell", [0, 1, 7])
def test_poisson_draws_and_completion_follow_the_binomial_law(backend: str, cell: int) -> None:
    counts = POISSON_STRATUM
    n = sum(counts)
    reps = 20_000 if backend == "rust" else 6_000
    drawn = _draws(backend, counts, [len(counts)], 0, reps, seed=23)
    assert (drawn.sum(axis=1) == n).all()
    stat, df = _pearson(drawn[:, cell], n, counts[cell] / n)
    assert stat < stats.chi2.ppf(1 - 1e-4, max(df, 1)), (stat, df)


def test_poisson_draws_and_completion_covary_as_a_multinomial(backend: str) -> None:
    counts = np.array(POISSON_STRATUM)
    n, reps = int(counts.sum()), 6_000
    drawn = _draws(backend, counts.tolist(), [counts.size], 0, reps, seed=4)[:, :6]
    p = counts[:6] / n
    cov = np.cov(drawn, rowvar=False)
    want = n * (np.diag(p) - np.outer(p, p))
    se = np.sqrt(n * n * (np.outer(p, p) + np.diag(p) ** 2) / reps) + 1e-9
    assert np.all(np.abs(cov - want) < 6 * se + 0.05 * np.sqrt(np.outer(np.diag(want), np.diag(want))))


def test_strata_keep_their_totals(backend: str) -> None:
    counts = [5, 0, 17, 300, 2, 9_000, 1, 44, 12]
    drawn = _draws(backend, counts, [3, 3, 8, 9], 5, 50, seed=2)
    assert (drawn[:, :3].sum(axis=1) == 22).all()
    assert (drawn[:, 3:8].sum(axis=1) == 9_347).all()
    assert (drawn[:, 8] == 12).all() and (drawn[:, 1] == 0).all()
    assert np.array_equal(drawn, np.round(drawn))


CASES = [
    # counts, stratum ends: small and large means, shares on both sides of 1/2, the far tails,
    # zero cells, single-cell strata, a total near 10^12.
    ([3, 97, 1, 0, 2, 5], [6]),
    ([40, 160, 500, 500, 700, 300, 9_000, 1_000], [2, 4, 8]),
    ([30_000, 70_000, 4, 999_996, 123_456_789, 7], [2, 4, 6]),
    ([10**12, 3 * 10**11, 5, 10**9], [4]),
    (list(range(1, 101)), [50, 100]),
    # A 20 x 20 confusion matrix as a model leaves it: a heavy diagonal, every other cell a few
    # hundred (the leaves' splits of BTRD, taken in vector lanes by the Rust core).
    ([70_000 if i % 21 == 0 else 280 + i % 41 for i in range(400)], [400]),
    # Strata of 1024 rows or more over at least 2 sqrt(rows) occupied cells: Poisson draws and
    # completion (the tree for the replicates whose draws overshoot), beside a small stratum on
    # the tree; a 30 x 30 matrix; a huge cell among ones (a table of 24,000 entries); zero cells.
    ([10 + i % 30 for i in range(400)] + [3, 9, 0, 4], [400, 404]),
    ([5_000 if i % 31 == 0 else 20 for i in range(900)], [900]),
    ([1] * 2_000 + [10**6], [2_001]),
    ([0 if i % 7 == 0 else 1 + i % 49 for i in range(3_000)], [1_000, 1_000, 3_000]),
    # A Poisson stratum starting at an odd cell (its cells' Philox pairs straddle the strata)
    # with runs of zero cells, so some pairs serve one occupied cell and some two.
    ([7] + [0 if i % 3 == 0 or i % 17 < 4 else 5 + i % 40 for i in range(3_001)], [1, 3_002]),
]

#: A stratum drawn by Poisson draws and completion: 400 cells, one of 500 rows.
POISSON_STRATUM = [500] + [10 + i % 30 for i in range(399)]


@pytest.mark.skipif(not rust_available(), reason="compares the Rust core with the numpy backend")
@pytest.mark.parametrize(("counts", "ends"), CASES)
def test_both_backends_draw_the_same_counts(counts: list[int], ends: list[int]) -> None:
    numpy_draws = _draws("numpy", counts, ends, 7, 300, seed=2**40 + 9)
    for threads in (1, 2, 8):
        rust_draws = _draws("rust", counts, ends, 7, 300, seed=2**40 + 9, threads=threads)
        assert np.array_equal(rust_draws, numpy_draws), threads


@pytest.mark.skipif(not rust_available(), reason="compares the Rust core with the numpy backend")
def test_both_backends_draw_the_overshooting_replicates_the_same() -> None:
    """The Poisson draws overshoot their stratum's rows in about 0.13 % of replicates, which
    the split tree then draws: 4,000 replicates of a Poisson stratum hold a few such (counted by
    the numpy backend's own plan), and both backends draw every replicate alike."""
    counts = [10 + i % 30 for i in range(400)]
    chosen = poisson_cells.plan(np.array(counts, dtype=U64), [(0, 400)])
    assert chosen is not None
    replicates = np.arange(4000, dtype=np.uint32)
    over = poisson_cells.draw(chosen[0][0], chosen[1], replicates, (5, 0), np.zeros((4000, 400)))
    assert 1 <= int(over.sum()) <= 20
    numpy_draws = _draws("numpy", counts, [400], 0, 4000, seed=5)
    assert np.array_equal(_draws("rust", counts, [400], 0, 4000, seed=5, threads=2), numpy_draws)


def test_a_completion_word_maps_by_lemires_multiplication() -> None:
    """A completion row's word ``x`` gives ``floor(x n / 2^64)``, refused exactly when
    ``x n mod 2^64`` falls below ``2^64 mod n`` (Python's integers as the reference), at the
    extremes of the words and of the totals."""
    rng = np.random.default_rng(3)
    for n in (3, 1024, 10**7, 2**40, 2**53 - 1):
        words = [0, 1, 2**64 - 1, 2**63, *(-(-(v << 64) // n) for v in range(1, min(n, 40)))]
        words += rng.bit_generator.random_raw(3000).tolist()
        x = np.array(words, dtype=np.uint64)
        value, kept = poisson_cells.below(x, n)
        limit = 2**64 % n
        for w, v, k in zip(words, value.tolist(), kept.tolist(), strict=True):
            product = w * n
            assert k == (product % 2**64 >= limit), (w, n)
            assert v == product >> 64, (w, n)
        assert bool(kept[0]) == (n & (n - 1) == 0)


def test_a_replicate_is_drawn_alone_the_same(backend: str) -> None:
    counts = [40, 160, 500, 500, 700, 300]
    block = _draws(backend, counts, [6], 100, 20, seed=5)
    alone = _draws(backend, counts, [6], 113, 1, seed=5)
    assert np.array_equal(alone[0], block[13])
    assert not np.array_equal(block[0], block[1])


def test_the_logarithm_is_exact_to_two_ulps() -> None:
    rng = np.random.default_rng(0)
    x = np.concatenate([np.exp(rng.uniform(-700, 700, 20_000)), rng.uniform(0.5, 2, 20_000), [5e-324, 1.0, 2.0]])
    want = np.array([math.log(v) for v in x])
    got = exact_ln(x)
    assert np.all(np.abs(got - want) <= 2 * np.spacing(np.abs(want)) + 1e-300)
    assert exact_ln(np.array([0.0]))[0] == -np.inf and exact_ln(np.array([1.0]))[0] == 0.0


@pytest.mark.parametrize(
    ("counts", "ends", "first", "count", "match"),
    [
        ([1, 2], [3], 0, 1, "stratum_ends"),
        ([1, 2], [2, 1], 0, 1, "stratum_ends"),
        ([2**52, 2**52], [2], 0, 1, "2\\^53"),
        ([2**64 - 1, 1], [2], 0, 1, "2\\^53"),
        ([1], [1], 2**32 - 1, 2, "2\\^32"),
    ],
)
def test_bad_arguments_raise_the_same_error(backend: str, counts, ends, first, count, match) -> None:
    with pytest.raises(ValidationError, match=match):
        _draws(backend, counts, ends, first, count, seed=0)


def test_drawn_cells_walk_as_weighted_rows(backend: str) -> None:
    """Each replicate of drawn (group, side) cell weights gives scikit-learn's AUROC and average
    precision of the cells taken as weighted rows (positives of group ``c`` at cell ``c``,
    negatives at ``groups + c``, group 0 the highest score), with empty groups and sides left
    out of ``cells``; a replicate without one side has NaN pair metrics."""
    rng = np.random.default_rng(23)
    be = resolve_backend(backend)
    for _ in range(40):
        groups = int(rng.integers(1, 40))
        m = int(rng.integers(1, 2 * groups + 1))
        cells = np.sort(rng.choice(2 * groups, m, replace=False)).astype(np.uint64)
        drawn = rng.integers(0, 5, (6, m)).astype(np.float64)
        got = be.walk_cell_weights(drawn, cells, groups)
        truth = (cells < groups).astype(int)
        score = -np.where(cells < groups, cells, cells - groups).astype(np.float64)
        for b in range(drawn.shape[0]):
            w = drawn[b]
            p, n = w[truth == 1].sum(), w[truth == 0].sum()
            assert (got.w_pos[b], got.w_neg[b]) == (p, n)
            if p > 0 and n > 0:
                assert got.auroc[b] == pytest.approx(roc_auc_score(truth, score, sample_weight=w), rel=1e-12)
                want_ap = average_precision_score(truth, score, sample_weight=w)
                assert got.average_precision[b] == pytest.approx(want_ap, rel=1e-12)
            else:
                assert math.isnan(got.auroc[b]) and math.isnan(got.tied_share[b])


@pytest.mark.parametrize(("occupied", "top"), [(3, 80), (2_400, 80), (4_000, 1_000)])
def test_drawing_and_walking_at_once_is_the_two_steps(backend: str, occupied: int, top: int) -> None:
    """``draw_cell_walks`` gives, bit for bit, the walk of the cells that ``multinomial_draws``
    draws from the same counts (one stratum; 2,400 occupied cells of 10^5 rows take the Poisson
    draws and completion, 4,000 cells of 2 x 10^6 rows invert their many tables in table order),
    on any thread count and on both backends."""
    rng = np.random.default_rng(occupied)
    groups = occupied
    cells = np.sort(rng.choice(2 * groups, occupied, replace=False)).astype(U64)
    counts = rng.integers(1, top, occupied).astype(U64)
    be = resolve_backend(backend)
    for curves in (True, False):
        drawn = be.multinomial_draws(counts, np.array([occupied], U64), 70, 90, 2**33 + 1)
        want = be.walk_cell_weights(drawn, cells, groups, curves)
        for threads in (1, 2, 8):
            got = be.draw_cell_walks(counts, cells, groups, 70, 90, 2**33 + 1, curves, n_threads=threads)
            for field in ("auroc", "average_precision", "tied_share", "aurc", "w_pos", "w_neg"):
                a, b = getattr(got, field), getattr(want, field)
                assert a.dtype == np.float64 and a.tobytes() == b.tobytes(), (field, threads)
        if rust_available() and backend == "rust":
            # The same draws (their totals equal bit for bit); the walks sum the curves in
            # another order (numpy by cumulative sums).
            other = resolve_backend("numpy").draw_cell_walks(counts, cells, groups, 70, 90, 2**33 + 1, curves)
            assert other.w_pos.tobytes() == want.w_pos.tobytes() and other.w_neg.tobytes() == want.w_neg.tobytes()
            for field in ("auroc", "average_precision", "tied_share", "aurc"):
                a, b = getattr(other, field), getattr(want, field)
                assert np.allclose(a, b, rtol=1e-12, atol=0, equal_nan=True), field
    none = be.draw_cell_walks(counts, cells, groups, 0, 0, 1)
    assert none.auroc.shape == (0,) and none.w_neg.shape == (0,)

"""The analytic companions against statsmodels and naive references: proportion intervals,
McNemar's test, DeLong's variance and paired test."""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

import cmetrics
from cmetrics import _core, _numpy
from cmetrics.exceptions import LabelError, LengthMismatchError, ValidationError

METHODS = {"wilson": "wilson", "clopper-pearson": "beta", "jeffreys": "jeffreys", "agresti-coull": "agresti_coull"}


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize(("count", "total"), [(0, 20), (1, 20), (10, 20), (19, 20), (20, 20), (3, 7), (812, 1000)])
@pytest.mark.parametrize("level", [0.8, 0.95, 0.99])
def test_proportion_intervals_equal_statsmodels(method: str, count: int, total: int, level: float) -> None:
    iv = cmetrics.proportion_interval(count, total, confidence_level=level, method=method)  # type: ignore[arg-type]
    low, high = proportion_confint(count, total, alpha=1 - level, method=METHODS[method])
    assert iv.low == pytest.approx(max(0.0, low), abs=1e-12)
    assert iv.high == pytest.approx(min(1.0, high), abs=1e-12)
    assert iv.estimate == count / total


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"count": 3, "total": 2}, "count"),
        ({"count": 1, "total": 0}, "total"),
        ({"count": 1, "total": 5, "confidence_level": 1.0}, "confidence_level"),
        ({"count": 1, "total": 5, "method": "exact"}, "method"),
    ],
)
def test_proportion_interval_refuses_bad_arguments(kwargs, match: str) -> None:
    with pytest.raises(ValidationError, match=match):
        cmetrics.proportion_interval(**kwargs)


def _table(a_only: int, b_only: int, both: int = 5, neither: int = 3):
    y = np.zeros(a_only + b_only + both + neither, dtype=int)
    pa = np.concatenate([np.zeros(a_only), np.ones(b_only), np.zeros(both), np.ones(neither)]).astype(int)
    pb = np.concatenate([np.ones(a_only), np.zeros(b_only), np.zeros(both), np.ones(neither)]).astype(int)
    return y, pa, pb


@pytest.mark.parametrize(("a_only", "b_only"), [(0, 0), (1, 0), (4, 1), (10, 10), (3, 25), (200, 170)])
def test_mcnemar_equals_statsmodels(a_only: int, b_only: int) -> None:
    y, pa, pb = _table(a_only, b_only)
    table = [[5, a_only], [b_only, 3]]
    exact = cmetrics.mcnemar(y, pa, pb, method="exact")
    assert (exact.a_only, exact.b_only) == (a_only, b_only)
    want = sm_mcnemar(table, exact=True)
    assert exact.p_value == pytest.approx(float(want.pvalue), abs=1e-12)
    chi2 = cmetrics.mcnemar(y, pa, pb, method="chi2")
    if a_only + b_only == 0:
        assert (chi2.statistic, chi2.p_value) == (0.0, 1.0)
    else:
        want = sm_mcnemar(table, exact=False, correction=True)
        assert chi2.statistic == pytest.approx(float(want.statistic), rel=1e-12)
        assert chi2.p_value == pytest.approx(float(want.pvalue), abs=1e-12)
    # mid-p from exact rational arithmetic.
    n, low = a_only + b_only, min(a_only, b_only)
    if n:
        tail = sum(Fraction(comb(n, j), 2**n) for j in range(low + 1))
        mid = 2 * tail - Fraction(comb(n, low), 2**n)
        assert cmetrics.mcnemar(y, pa, pb, method="mid-p").p_value == pytest.approx(float(min(mid, 1)), abs=1e-12)


def test_mcnemar_refuses_bad_arguments() -> None:
    with pytest.raises(ValidationError, match="method"):
        cmetrics.mcnemar([0, 1], [0, 1], [1, 1], method="fisher")  # type: ignore[arg-type]
    with pytest.raises(LengthMismatchError, match="pred_b"):
        cmetrics.mcnemar([0, 1], [0, 1], [1, 1, 0])


def _naive_placements(y: np.ndarray, s: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    pos, neg = s[y == 1], s[y == 0]
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    return float(psi.mean()), psi.mean(axis=1), psi.mean(axis=0)


def _data(n: int, seed: int, ties: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    a = y + rng.normal(0, 1.2, n)
    b = y + rng.normal(0, 1.5, n) + 0.3 * a
    if ties:
        a, b = np.round(a, 1), np.round(b, 0)
    return y, a, b


@pytest.mark.parametrize("ties", [False, True])
def test_delong_equals_sklearn_and_the_naive_placements(backend: str, ties: bool) -> None:
    y, a, _ = _data(700, 1, ties)
    r = cmetrics.delong(y, a, backend=backend)
    # The exact AUROC correctly rounded: cmetrics' own, and scikit-learn's to its trapezoid rounding.
    pos, neg = a[y == 1], a[y == 0]
    pairs = int(2 * (pos[:, None] > neg[None, :]).sum() + (pos[:, None] == neg[None, :]).sum())
    assert r.auc == float(Fraction(pairs, 2 * pos.size * neg.size))
    assert r.auc == cmetrics.roc_auc_score(y, a, backend=backend)
    assert r.auc == pytest.approx(roc_auc_score(y, a), rel=1e-15)
    auc, v10, v01 = _naive_placements(y, a)
    var = np.var(v10, ddof=1) / v10.size + np.var(v01, ddof=1) / v01.size
    assert r.auc == pytest.approx(auc, abs=1e-15)
    assert r.variance == pytest.approx(var, rel=1e-12)
    assert (r.n_positive, r.n_negative) == (v10.size, v01.size)


@pytest.mark.parametrize("ties", [False, True])
def test_delong_test_equals_the_naive_covariance(backend: str, ties: bool) -> None:
    y, a, b = _data(600, 2, ties)
    t = cmetrics.delong_test(y, a, b, backend=backend)
    _, a10, a01 = _naive_placements(y, a)
    _, b10, b01 = _naive_placements(y, b)
    s10 = np.cov(np.stack([a10, b10]))
    s01 = np.cov(np.stack([a01, b01]))
    cov = s10 / a10.size + s01 / a01.size
    var = cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]
    assert t.auc_a == cmetrics.roc_auc_score(y, a) and t.auc_b == cmetrics.roc_auc_score(y, b)
    assert t.auc_a == pytest.approx(roc_auc_score(y, a), rel=1e-15)
    assert t.variance == pytest.approx(var, rel=1e-10)
    from scipy.stats import norm

    assert t.p_value == pytest.approx(2 * norm.sf(abs(t.difference) / np.sqrt(var)), rel=1e-9)


def _unsampled(n: int) -> np.ndarray:
    """Every 97th row but those the Rust kernel's sample of 1023 scores looks at."""
    return np.setdiff1d(np.arange(5, n, 97), np.arange(1023) * n // 1023)


def _shapes(n: int, seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Score pairs of the shapes the placement kernel sorts differently: continuous float64 (packed
    keys), rounded (long runs of true ties), float32, crowded near 1 (saturated: the full-key sort),
    int64 at its extremes."""
    rng = np.random.default_rng(seed)
    a, b = rng.random(n), rng.random(n)
    i64 = np.iinfo(np.int64)
    ints = rng.integers(i64.min, i64.max, n, endpoint=True)
    ints[:4] = [i64.min, i64.max, i64.max - 1, i64.min + 1]
    return {
        "continuous": (a, b),
        "rounded": (np.round(a, 3), np.round(b, 2)),
        "float32": (a.astype(np.float32), b.astype(np.float32)),
        "crowded": (1.0 - a * 1e-12, b),
        # continuous, with a few hundred keys equal in their high bits (runs the packed sort leaves
        # to the full keys, too few for the sample to see)
        "mixed": (np.where(np.isin(np.arange(n), _unsampled(n)), 0.5 + a * 1e-13, a), b),
        "int64": (ints, rng.integers(0, 50, n)),
        # Both signs; a few hundred rows far beyond the sampled range, gathered at the ends of the line
        # the packed keys place the scores on; a few thousand such rows (the full-key sort instead);
        # scores over forty powers of ten (the order keys' high bits).
        "signed": (_far(rng.normal(0, 1, n), 300, rng), rng.normal(0, 3, n)),
        "far": (_far(a, 1500, rng), _far(b, 100, rng)),
        "wide": (10.0 ** rng.uniform(-20, 20, n), -(10.0 ** rng.uniform(-20, 20, n))),
    }


def _far(s: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """``s`` with ``count`` unsampled rows moved far beyond its range, both ways, some tied."""
    rows = _unsampled(s.size)[:count]
    out = s.copy()
    out[rows] = rng.choice([-1e300, -1e6, 1e6, 1e6 + 1, 1e300], rows.size) * rng.choice([1.0, 1.0 + 1e-9], rows.size)
    return out


SHAPES = ["continuous", "rounded", "float32", "crowded", "mixed", "int64", "signed", "far", "wide"]


@pytest.mark.parametrize("shape", SHAPES)
def test_paired_placements_agree_across_backends_threads_and_the_one_model_kernel(shape: str) -> None:
    # Past 2^16 rows, where the Rust kernel packs each row's key, class and index in one word.
    n = 150_001
    y = np.random.default_rng(3).random(n) < 0.35
    a, b = _shapes(n, 4)[shape]
    want = _numpy.paired_placements(y, a, b)
    one, two = (_core.paired_placements(y, a, b, n_threads=t) for t in (1, 2))
    assert one == two
    assert one[:6] == want[:6]  # the class and pair counts, exactly
    np.testing.assert_allclose(one[6:], want[6:], rtol=1e-9)
    for s in (a, b):
        np.testing.assert_array_equal(_core.row_placements(y, s, n_threads=2), _numpy.row_placements(y, s))
    pos, neg = a[y], a[~y]
    ordered = np.searchsorted(np.sort(neg), pos, side="left").sum()
    assert one.ordered_a == int(ordered)


def test_paired_placements_refuse_non_finite_scores_by_name(backend: str) -> None:
    with pytest.raises(ValidationError, match="score_b"):
        cmetrics.delong_test([0, 1, 1], [0.1, 0.2, 0.3], [0.1, np.nan, 0.2], backend=backend)


def test_delong_with_few_positives_and_all_ties(backend: str) -> None:
    rng = np.random.default_rng(5)
    n = 200_000
    y = np.zeros(n, dtype=np.int8)
    y[rng.choice(n, 12, replace=False)] = 1
    s = rng.random(n).astype(np.float32)
    r = cmetrics.delong(y, s, backend=backend)
    assert r.auc == pytest.approx(roc_auc_score(y, s), rel=1e-14)
    tied = cmetrics.delong(y, np.ones(n), backend=backend)
    assert (tied.auc, tied.variance) == (0.5, 0.0)


def test_delong_refuses_one_class_and_bad_lengths(backend: str) -> None:
    with pytest.raises(LabelError, match="one class"):
        cmetrics.delong([1, 1, 1], [0.1, 0.2, 0.3], backend=backend)
    with pytest.raises(LengthMismatchError, match="score_b"):
        cmetrics.delong_test([0, 1, 1], [0.1, 0.2, 0.3], [0.1, 0.2], backend=backend)
    with pytest.raises(ValidationError, match="confidence_level"):
        cmetrics.delong([0, 1], [0.1, 0.2], confidence_level=0, backend=backend)


def test_clopper_pearson_holds_the_wilson_interval() -> None:
    # the pairs of methods of a proportion are nested, the widest the Clopper-Pearson one
    for c, n in itertools.product([0, 5, 17], [20]):
        cp = cmetrics.proportion_interval(c, n, method="clopper-pearson")
        w = cmetrics.proportion_interval(c, n)
        assert cp.low <= w.low + 1e-12 and cp.high >= w.high - 1e-12


def test_the_walk_carries_weighted_placements(backend: str) -> None:
    """The tie-grouped walk's squared placements, weighted: shares of weight below (ties half),
    summed with the rows' weights, against a plain O(n^2) computation."""
    from cmetrics._backend import resolve_backend

    rng = np.random.default_rng(8)
    y = rng.random(400) < 0.4
    s = np.round(rng.random(400), 1)
    w = rng.uniform(0.1, 3.0, 400)
    d = resolve_backend(backend).binary_ranking(y, s, w, curves=True)
    pos, neg = s[y], s[~y]
    wp, wn = w[y], w[~y]
    v10 = ((pos[:, None] > neg[None, :]) * wn + 0.5 * (pos[:, None] == neg[None, :]) * wn).sum(1) / wn.sum()
    v01 = ((pos[:, None] > neg[None, :]) * wp[:, None] + 0.5 * (pos[:, None] == neg[None, :]) * wp[:, None]).sum(
        0
    ) / wp.sum()
    assert d.placement_pos_sq == pytest.approx(float(wp @ v10**2), rel=1e-12)
    assert d.placement_neg_sq == pytest.approx(float(wn @ v01**2), rel=1e-12)
    bare = resolve_backend(backend).binary_ranking(y, s, w, curves=False)
    assert np.isnan(bare.placement_pos_sq) and np.isnan(bare.placement_neg_sq)


@pytest.mark.parametrize("shape", ["continuous", "rounded", "float32", "crowded", "mixed", "int64"])
def test_replicate_walks_agree_across_backends_on_every_score_shape(shape: str) -> None:
    """The replicate walk's sorted rows (packed keys, runs put in full-key order, or the full-key
    sort of crowded scores) give the numpy twin's replicates."""
    n = 70_001
    y = np.random.default_rng(6).random(n) < 0.4
    score = _shapes(n, 7)[shape][0]
    got = _core.replicate_ranking(y, score, None, 0, 5, 20, 2, True)
    want = _numpy.replicate_ranking(y, score, None, 0, 5, 20, 0, True)
    assert got[-4:] == want[-4:]  # the rows' own pair counts, exactly
    for g, w in zip(got[:-4], want[:-4], strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10)

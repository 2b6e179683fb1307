"""Ranking and selective-prediction metrics: test vectors 05 and 07, scipy/sklearn
parity with heavy ties and weights, a naive O(n^2) oracle, the theorems of Gu and Hopkins (2023),
thread invariance and bad inputs, on both backends."""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from typing import Any

import numpy as np
import pytest
import scipy.stats
import sklearn.metrics
from hypothesis import given
from hypothesis import strategies as st

import cmetrics
from cmetrics.exceptions import (
    LabelError,
    LengthMismatchError,
    NonFiniteError,
    UndefinedMetricWarning,
    ValidationError,
    WeightError,
)
from tests.conftest import assert_close, load_vectors, num, quiet

V05 = load_vectors("05_refinement_rpp_kendall.json")
V07 = load_vectors("07_probabilistic_and_ranking.json")


@pytest.mark.parametrize("case", V05["cases"], ids=lambda c: c["name"])
def test_refinement_vectors(case: dict[str, Any], backend: str) -> None:
    ok, conf, e = case["correct"], case["confidence"], case["expected"]
    for ties, key in [
        ("strict", "refinement_strict_paper"),
        ("half", "refinement_half_ties_auroc"),
        ("harsh", "refinement_harsh_spred"),
    ]:
        got = quiet(cmetrics.refinement, ok, conf, ties=ties, backend=backend)
        assert_close(got, num(e[key]), f"{case['name']} {ties}")
    assert_close(cmetrics.reversed_pair_proportion(ok, conf, backend=backend), num(e["rpp"]), "rpp")
    undefined = e["c"] in (0, e["n"])
    if undefined:
        with pytest.warns(UndefinedMetricWarning):
            assert math.isnan(cmetrics.kendall_tau_distance(ok, conf, backend=backend))
        with pytest.warns(UndefinedMetricWarning):
            assert math.isnan(cmetrics.refinement(ok, conf, backend=backend))
        return
    assert cmetrics.kendall_tau_distance(ok, conf, backend=backend) == e["tau_paper_strict"]
    assert_close(cmetrics.roc_auc_score(ok, conf, backend=backend), num(e["sklearn_roc_auc_correct_vs_conf"]))
    assert_close(
        cmetrics.average_precision_score(ok, conf, backend=backend), num(e["sklearn_average_precision_correct_vs_conf"])
    )
    assert_close(cmetrics.aupr_trapezoid(ok, conf, backend=backend), num(e["aupr_spred_trapezoid"]))
    tau = num(e["scipy_kendalltau_b_conf_vs_correct"])
    got = quiet(cmetrics.kendall_tau, conf, ok, backend=backend)
    assert (math.isnan(got) and math.isnan(tau)) or abs(got - tau) <= 1e-12
    # The tau-b / AUROC link of docs/definitions.md §5.
    if not math.isnan(tau):
        n, c = e["n"], e["c"]
        x_ties = sum(k * (k - 1) // 2 for k in np.unique(conf, return_counts=True)[1])
        n0 = n * (n - 1) // 2
        link = (2 * num(e["sklearn_roc_auc_correct_vs_conf"]) - 1) * math.sqrt(c * (n - c) / (n0 - x_ties))
        assert abs(link - tau) <= 1e-12


@pytest.mark.parametrize("case", V05["kendall_tau_cases"], ids=lambda c: c["name"])
def test_kendall_vectors(case: dict[str, Any], backend: str) -> None:
    e = case["expected"]
    d = cmetrics.ranking.resolve_backend(backend).kendall_counts(
        np.asarray(case["x"], float), np.asarray(case["y"], float)
    )
    assert d.discordant == e["discordant"]
    assert d.x_ties == e["n1_ties_in_x"] and d.y_ties == e["n2_ties_in_y"]
    for variant, key in [("b", "scipy_tau_b"), ("c", "scipy_tau_c")]:
        got = quiet(cmetrics.kendall_tau, case["x"], case["y"], variant=variant, backend=backend)
        want = num(e[key])
        assert (math.isnan(got) and math.isnan(want)) or abs(got - want) <= 1e-12, (variant, got, want)


@pytest.mark.parametrize("case", V07["binary_ranking_cases"], ids=lambda c: c["name"])
def test_binary_ranking_vectors(case: dict[str, Any], backend: str) -> None:
    e = case["expected"]
    kw = {"sample_weight": case["sample_weight"], "backend": backend}
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        auc = cmetrics.roc_auc_score(case["y_true"], case["y_score"], **kw)
        ap = cmetrics.average_precision_score(case["y_true"], case["y_score"], **kw)
    assert_close(auc, num(e["roc_auc_sklearn"]), "auc")
    assert_close(ap, num(e["average_precision_sklearn"]), "ap")
    assert bool(e["sklearn_warnings"]) == any(issubclass(w.category, UndefinedMetricWarning) for w in rec)


def naive(ok: np.ndarray, conf: np.ndarray, w: np.ndarray) -> tuple[float, float, float]:
    """(reversed, tied, all) weighted pair sums over every (correct, wrong) pair."""
    rev = tied = total = 0.0
    for i, j in itertools.product(np.flatnonzero(ok), np.flatnonzero(~ok)):
        total += w[i] * w[j]
        rev += w[i] * w[j] * (conf[i] < conf[j])
        tied += w[i] * w[j] * (conf[i] == conf[j])
    return rev, tied, total


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 6), st.integers(0, 4)), min_size=1, max_size=40))
def test_against_the_naive_pair_oracle(rows: list[tuple[bool, int, int]]) -> None:
    ok = np.array([r[0] for r in rows])
    conf = np.array([r[1] / 6 for r in rows])
    w = np.array([r[2] / 2 for r in rows])
    one = np.ones(len(rows))
    for backend in ["rust", "numpy"] if cmetrics.rust_available() else ["numpy"]:
        for weights in (None, w):
            if weights is not None and weights.sum() == 0:
                with pytest.raises(WeightError, match="sums to 0"):
                    cmetrics.refinement(ok, conf, sample_weight=weights, backend=backend)
                continue
            rev, tied, total = naive(ok, conf, one if weights is None else w)
            got = quiet(cmetrics.refinement, ok, conf, ties="half", sample_weight=weights, backend=backend)
            if total == 0:
                assert math.isnan(got)
                continue
            assert abs(got - (1 - (rev + tied / 2) / total)) <= 1e-12
            harsh = cmetrics.refinement(ok, conf, ties="harsh", sample_weight=weights, backend=backend)
            assert abs(harsh - (1 - (rev + tied) / total)) <= 1e-12
            tot_w = (one if weights is None else w).sum()
            if tot_w > 0:
                rpp = cmetrics.reversed_pair_proportion(ok, conf, sample_weight=weights, backend=backend)
                assert abs(rpp - rev / tot_w**2) <= 1e-12


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=40))
def test_kendall_against_scipy_and_pairs(rows: list[tuple[int, int]]) -> None:
    x = np.array([r[0] for r in rows], float)
    y = np.array([r[1] for r in rows], float)
    want = scipy.stats.kendalltau(x, y).statistic if len(set(x)) > 1 and len(set(y)) > 1 else float("nan")
    disc = sum(1 for i, j in itertools.combinations(range(len(x)), 2) if (x[i] - x[j]) * (y[i] - y[j]) < 0)
    for backend in ["rust", "numpy"] if cmetrics.rust_available() else ["numpy"]:
        d = cmetrics.ranking.resolve_backend(backend).kendall_counts(x, y)
        assert d.discordant == disc
        got = quiet(cmetrics.kendall_tau, x, y, backend=backend)
        assert (math.isnan(got) and math.isnan(want)) or abs(got - want) <= 1e-12


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_parity_with_heavy_ties_and_weights(backend: str, dtype: type) -> None:
    rng = np.random.default_rng(7)
    n = 30_000
    s = np.round(rng.random(n), 2).astype(dtype)
    y = rng.random(n) < s
    w = rng.random(n)
    for weights in (None, w):
        assert_close(
            cmetrics.roc_auc_score(y, s, sample_weight=weights, backend=backend),
            sklearn.metrics.roc_auc_score(y, s, sample_weight=weights),
        )
        assert_close(
            cmetrics.average_precision_score(y, s, sample_weight=weights, backend=backend),
            sklearn.metrics.average_precision_score(y, s, sample_weight=weights),
        )
        p, r, _ = sklearn.metrics.precision_recall_curve(y, s, sample_weight=weights)
        assert_close(cmetrics.aupr_trapezoid(y, s, sample_weight=weights, backend=backend), sklearn.metrics.auc(r, p))
    z = np.round(s + rng.normal(0, 0.3, n), 1).astype(dtype)
    for variant in ("b", "c"):
        assert_close(
            cmetrics.kendall_tau(s, z, variant=variant, backend=backend),
            scipy.stats.kendalltau(s, z, variant=variant).statistic,
        )


def test_kendall_parity_beyond_the_table_limits(backend: str) -> None:
    """100k continuous values (more than the 65,536 distinct values of the compiled table
    sweep): Knight's sort, against scipy, with and without ties in the other vector."""
    rng = np.random.default_rng(8)
    x = rng.random(100_000)
    for y in (x + rng.normal(0, 0.3, x.size), np.round(x + rng.normal(0, 0.3, x.size), 1)):
        for variant in ("b", "c"):
            assert_close(
                cmetrics.kendall_tau(x, y, variant=variant, backend=backend),
                scipy.stats.kendalltau(x, y, variant=variant).statistic,
            )
            assert_close(
                cmetrics.kendall_tau(y, x, variant=variant, backend=backend),
                scipy.stats.kendalltau(y, x, variant=variant).statistic,
            )


def test_kendall_heavy_ties_in_both_vectors_beyond_the_table_limits(backend: str) -> None:
    """Both vectors with more than 65,536 distinct values and a tie of a third of the rows,
    x with values a few ulps apart: Knight's path, its tie runs and its exact re-sort of rows
    whose truncated keys agree, against scipy; the counts on 1 and 2 threads are identical."""
    rng = np.random.default_rng(31)
    n = 150_000
    base = rng.random(n)
    x = np.where(rng.random(n) < 0.3, 0.5, base)
    x[::7] = np.nextafter(0.25, 1.0) + np.arange(x[::7].size) % 3000 * np.finfo(float).eps / 8
    y = np.where(rng.random(n) < 0.3, -1.0, np.round(base + rng.normal(0, 0.2, n), 6))
    for variant in ("b", "c"):
        want = scipy.stats.kendalltau(x, y, variant=variant).statistic
        assert_close(cmetrics.kendall_tau(x, y, variant=variant, backend=backend), want)
        assert_close(cmetrics.kendall_tau(y, x, variant=variant, backend=backend), want)
    with cmetrics.thread_limit(1):
        one = cmetrics.kendall_tau(x, y, backend=backend)
    with cmetrics.thread_limit(2):
        two = cmetrics.kendall_tau(x, y, backend=backend)
    assert one == two


def test_seed003_theorems(backend: str) -> None:
    rng = np.random.default_rng(3)
    ok = rng.random(200) < 0.7
    conf = rng.random(200)
    # Theorem 1: the bounds are reached by the best and the worst orderings.
    best = np.where(ok, 1.0 + conf, conf)
    worst = np.where(ok, conf, 1.0 + conf)
    for ties in ("strict", "half", "harsh"):
        assert cmetrics.refinement(ok, best, ties=ties, backend=backend) == 1.0
        assert cmetrics.refinement(ok, worst, ties=ties, backend=backend) == 0.0
    # Theorem 2: a random confidence function scores 0.5 on average. Over 400 seeds the
    # mean of 400 values with standard deviation about 0.03 is within 0.01 of 0.5.
    vals = [cmetrics.refinement(ok, np.random.default_rng(s).random(200), backend=backend) for s in range(400)]
    assert abs(np.mean(vals) - 0.5) < 0.01


def test_threads_do_not_change_results() -> None:
    if not cmetrics.rust_available():
        pytest.skip("the Rust extension is not built")
    rng = np.random.default_rng(5)
    n = 1_200_000
    s = np.round(rng.random(n), 3)
    y = rng.random(n) < s
    w = rng.random(n)
    from cmetrics import _core

    def same(a: tuple[object, ...], b: tuple[object, ...]) -> bool:  # NaN fields (weighted placements) too
        return all(x == z or (x != x and z != z) for x, z in zip(a, b, strict=True))

    for weights in (w, None):
        base = _core.binary_ranking(y, s, weights, n_threads=1)
        for t in (2, 3):
            assert same(_core.binary_ranking(y, s, weights, n_threads=t), base)
    x2 = s + np.round(rng.random(n), 2)
    assert _core.kendall_counts(s, x2, n_threads=1) == _core.kendall_counts(s, x2, n_threads=2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("decimals", [2, None], ids=["few", "continuous"])
def test_tie_groups_of_a_strided_column(dtype: type, decimals: int | None) -> None:
    """One column of a row-major matrix, passed as a view: read where it lies (counted in hash
    tables when its scores are few, copied and sorted when not), it gives the groups of a plain
    count by ``np.unique``, on both backends, on one thread and two, reversed too."""
    rng = np.random.default_rng(17)
    n = 100_000  # past the rows below which the hash tables are not tried
    proba = rng.dirichlet(np.ones(3), n)
    proba = (np.round(proba, decimals) if decimals is not None else proba).astype(dtype)
    positive = rng.random(n) < proba[:, 1]
    from cmetrics import _core
    from cmetrics import _numpy as npb

    for column, rows in ((proba[:, 1], positive), (proba[::-1, 1], positive[::-1].copy())):
        assert not column.flags.c_contiguous
        values, inverse = np.unique(column, return_inverse=True)
        n_pos = np.bincount(inverse, weights=rows, minlength=values.size)
        n_neg = np.bincount(inverse, weights=~rows, minlength=values.size)
        got = [npb.score_groups(rows, column)]
        if cmetrics.rust_available():
            got += [_core.score_groups(rows, column, None, n_threads=t) for t in (1, 2)]
        for g in got:
            np.testing.assert_array_equal(g.values, values.astype(np.float64))
            np.testing.assert_array_equal(g.n_pos, n_pos)
            np.testing.assert_array_equal(g.n_neg, n_neg)
            assert g.w_pos is None and g.w_neg is None
    if cmetrics.rust_available():
        # A misaligned view is refused with the fix, not read.
        raw = np.frombuffer(bytes(8 * n + 1), dtype=np.float64, offset=1)
        with pytest.raises(ValidationError, match="y_score is not an aligned array"):
            _core.score_groups(positive, raw)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize(("n", "decimals"), [(90_000, 3), (90_000, None), (700, 2)], ids=["few", "many", "short"])
def test_tie_groups_of_checked_binary_probabilities(dtype: type, order: str, n: int, decimals: int | None) -> None:
    """The groups of the second column of binary probabilities, each row checked as the
    probability pass checks it (few scores of many rows counted in hash tables in the same pass;
    many scores, or few rows, checked then sorted): the groups of a plain ``np.unique`` count on
    both backends (one thread and two), and None on either for a row with an entry outside
    [0, 1] (NaN, infinity) or a sum further than the tolerance from 1; shape errors named as
    the other kernels name them."""
    rng = np.random.default_rng(23)
    s = rng.beta(2, 5, n)
    s = (s if decimals is None else np.round(s, decimals)).astype(dtype)
    proba = np.asarray(np.stack([1 - s, s], axis=1), order=order)
    positive = rng.random(n) < s
    from cmetrics import _core
    from cmetrics import _numpy as npb

    kernels = [npb.binary_proba_groups]
    if cmetrics.rust_available():
        kernels += [functools.partial(_core.binary_proba_groups, n_threads=t) for t in (1, 2)]
    values, inverse = np.unique(s, return_inverse=True)
    for kernel in kernels:
        g = kernel(positive, proba, None)
        assert g is not None
        np.testing.assert_array_equal(g.values, values.astype(np.float64))
        np.testing.assert_array_equal(g.n_pos, np.bincount(inverse, weights=positive, minlength=values.size))
        np.testing.assert_array_equal(g.n_neg, np.bincount(inverse, weights=~positive, minlength=values.size))
        assert g.w_pos is None and g.w_neg is None
    tol = 1e-6 if dtype == np.float32 else 2e-6
    for row, bad in [(0, (-0.5, 1.5)), (n // 3, (1.25, -0.25)), (n - 1, (np.nan, 1.0)), (17, (np.inf, 0.0))]:
        wrong = proba.copy(order=order)
        wrong[row] = bad
        assert all(kernel(positive, wrong, tol) is None for kernel in kernels), (row, bad)
    off = proba.copy(order=order)
    off[n // 2] = (0.5, 0.5 + 4 * tol)  # the sum 4 tolerances from 1; at the tolerance it passes
    assert all(kernel(positive, off, tol) is None for kernel in kernels)
    assert all(kernel(positive, off, 8 * tol) is not None for kernel in kernels)
    for kernel in kernels:
        with pytest.raises(ValidationError, match="y_proba is invalid: it has 3 columns"):
            kernel(positive, np.ones((n, 3), dtype=dtype) / 3, None)
        with pytest.raises(LengthMismatchError, match="y_true"):
            kernel(positive[1:], proba, None)


def test_selective_scores_and_evaluate(backend: str) -> None:
    rng = np.random.default_rng(11)
    n, k = 5000, 4
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), y] += 1.0
    p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    ok = p.argmax(1) == y
    conf = p.max(1)
    s = cmetrics.selective_prediction_scores(y, y_proba=p, backend=backend)
    assert_close(s.refinement, sklearn.metrics.roc_auc_score(ok, conf))
    assert_close(s.accuracy, ok.mean())
    s2 = cmetrics.selective_prediction_scores(y, y_pred=p.argmax(1), confidence=conf, backend=backend)
    assert s2 == s
    r = cmetrics.evaluate(y, y_proba=p, backend=backend)
    assert_close(r.refinement, s.refinement)
    assert_close(r.auroc_confidence, s.auroc)
    assert_close(r.reversed_pair_proportion, s.reversed_pair_proportion)
    assert_close(r.aurc, cmetrics.aurc(ok, conf, backend=backend))
    cov, risk, _ = cmetrics.risk_coverage_curve(ok, conf)
    assert_close(r.aurc, float(np.sum(np.diff(np.concatenate(([0.0], cov))) * risk)))


def test_bad_inputs(backend: str) -> None:
    with pytest.raises(NonFiniteError, match=r"y_score\[1\]"):
        cmetrics.roc_auc_score([0, 1], [0.5, np.nan], backend=backend)
    with pytest.raises(NonFiniteError, match=r"x\[0\] is NaN"):
        cmetrics.kendall_tau([np.nan, 1.0], [1.0, 2.0], backend=backend)
    with pytest.raises(LengthMismatchError):
        cmetrics.refinement([1, 0, 1], [0.1, 0.2], backend=backend)
    with pytest.raises(WeightError, match="sample_weight"):
        cmetrics.roc_auc_score([0, 1], [0.1, 0.2], sample_weight=[1.0, -1.0], backend=backend)
    with pytest.raises(ValidationError, match="ties="):
        cmetrics.refinement([1, 0], [0.1, 0.2], ties="loose", backend=backend)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="binary"):
        cmetrics.roc_auc_score([0, 1, 2], [0.1, 0.2, 0.3], backend=backend)


def test_exact_pair_counts_beyond_float_precision() -> None:
    # 2^27 positives above 2^27 negatives: 2^54 ordered pairs, beyond exact f64 integers.
    # Building that from rows would need 2^28 of them; the arithmetic is checked on the
    # counts instead (the Rust side in rust/core/tests/ranking.rs).
    from cmetrics._derive.ranking_walk import refinement
    from cmetrics._kernels import BinaryRanking

    big = 1 << 27
    nan = float("nan")
    d = BinaryRanking(
        n_pos=big,
        n_neg=big,
        w_pos=float(big),
        w_neg=float(big),
        reversed=1,
        tied=1,
        ordered=big * big - 2,
        reversed_share=1 / big**2,
        tied_share=1 / big**2,
        ordered_share=1 - 2 / big**2,
        average_precision=nan,
        aupr_trapezoid=nan,
        aurc=nan,
        n_thresholds=2,
        placement_pos_sq=nan,
        placement_neg_sq=nan,
    )
    got = refinement(d, "half", False)
    assert got == float(1 - __import__("fractions").Fraction(3, 2 * big * big))


def test_rust_walk_equals_numpy_walk() -> None:
    if not cmetrics.rust_available():
        pytest.skip("the Rust extension is not built")
    from cmetrics import _core, _numpy

    rng = np.random.default_rng(9)
    for n, dec in [(5, 1), (3000, 2), (200_000, 3)]:
        s = np.round(rng.normal(size=n), dec)
        y = rng.random(n) < 0.3
        w = rng.random(n) * (rng.random(n) < 0.9)
        for weights in (None, w):
            a = _core.binary_ranking(y, s, weights)
            b = _numpy.binary_ranking(y, s, weights)
            assert type(a) is type(b)
            for key, value in a._asdict().items():
                if isinstance(value, int):
                    assert value == getattr(b, key), key
                else:
                    assert_close(value, getattr(b, key), key)


def test_large_continuous_scores_sort_exactly() -> None:
    """Float64 scores past the fast sort's threshold (2^16 rows a side), where keys are
    sorted by their high bytes first: no ties, pairs a few ulps apart, and a crowd of
    scores near 1 that differ in their low bytes only (seen by the sample, or too few for
    it), against the numpy walk, scikit-learn, and on 1 and 2 threads."""
    if not cmetrics.rust_available():
        pytest.skip("the Rust extension is not built")
    from cmetrics import _core, _numpy

    rng = np.random.default_rng(21)
    n = 300_000
    y = rng.random(n) < 0.3
    plain = rng.normal(size=n) + y
    ulps = plain.copy()
    ulps[1::2] = np.nextafter(plain[::2], -np.inf)
    crowd = np.where(rng.random(n) < 0.3, 1 - rng.random(n) * 1e-9, plain)
    few = plain.copy()
    few[rng.choice(n, 60, replace=False)] = 1 - rng.random(60) * 1e-9
    for s in (plain, ulps, crowd, few):
        a = _core.binary_ranking(y, s, None, n_threads=2)
        assert _core.binary_ranking(y, s, None, n_threads=1) == a
        b = _numpy.binary_ranking(y, s, None)
        assert (a.ordered, a.tied, a.reversed, a.n_thresholds) == (b.ordered, b.tied, b.reversed, b.n_thresholds)
        assert_close(a.average_precision, b.average_precision)
        assert_close(a.aurc, b.aurc)
        assert_close(a.aupr_trapezoid, b.aupr_trapezoid)
        assert_close(cmetrics.roc_auc_score(y, s), sklearn.metrics.roc_auc_score(y, s))
        assert_close(cmetrics.average_precision_score(y, s), sklearn.metrics.average_precision_score(y, s))


@pytest.mark.parametrize(
    "call",
    [
        lambda b: cmetrics.roc_auc_score([0, 1], [0.5, np.nan], backend=b),
        lambda b: cmetrics.roc_auc_score([0, 1], [0.1, 0.2], sample_weight=[1.0, -1.0], backend=b),
        lambda b: cmetrics.kendall_tau([1.0, np.nan], [1.0, 2.0], backend=b),
        lambda b: cmetrics.kendall_tau([1.0, 2.0], [np.nan, 2.0], backend=b),
        lambda b: cmetrics.kendall_tau([], [], backend=b),
        lambda b: cmetrics.refinement([], [], backend=b),
    ],
)
def test_backends_raise_the_same_error(call: Any) -> None:
    if not cmetrics.rust_available():
        pytest.skip("the Rust extension is not built")
    errors = []
    for backend in ("rust", "numpy"):
        with pytest.raises(ValueError) as info:  # noqa: PT011  # the class is compared below
            call(backend)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1]


LABEL_CASES = [
    (dtype, classes)
    for dtype in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.int64, np.uint64, np.float32, np.float64)
    for classes in ((0, 1), (-1, 1), (2, 5), (0,), (1,), (0, 1, 2))
    if np.dtype(dtype).kind != "u" or min(classes) >= 0
]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16])
def test_narrow_labels_take_pos_label_as_wide_ones(backend: str, dtype: type) -> None:
    # Narrow integer labels are compared with pos_label as they are (no widened copy): a pos_label
    # beyond their range is refused as for int64 labels, and one class alone finds no positive.
    y, s = np.array([0, 1, 1, 0], dtype=dtype), [0.1, 0.8, 0.4, 0.3]
    for pos_label in (1, 0):
        got = cmetrics.roc_auc_score(y, s, pos_label=pos_label, backend=backend)
        assert got == cmetrics.roc_auc_score(y.astype(np.int64), s, pos_label=pos_label, backend=backend)
    for pos_label in (300, -70000):
        with pytest.raises(LabelError, match=f"pos_label={pos_label} is not a valid label"):
            cmetrics.roc_auc_score(y, s, pos_label=pos_label, backend=backend)
    ones = np.ones(4, dtype=dtype)

    def outcome(labels: np.ndarray) -> object:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                value = cmetrics.average_precision_score(labels, s, pos_label=300, backend=backend)
        except ValueError as e:
            return type(e), str(e)
        return repr(value), [str(w.message) for w in caught]

    assert outcome(ones) == outcome(ones.astype(np.int64))


@pytest.mark.parametrize(("dtype", "classes"), LABEL_CASES)
def test_binary_labels_of_every_dtype_as_scikit_learn(backend: str, dtype: type, classes: tuple[int, ...]) -> None:
    """The classes of numeric labels are found from their extremes (no sort of the rows): the
    positives, the one-class AUROC and the errors of three classes or of unusual labels without
    pos_label are scikit-learn's on every label dtype."""
    rng = np.random.default_rng(len(classes))
    y = np.asarray(classes, dtype=dtype)[rng.integers(0, len(classes), 300)]
    y[: len(classes)] = np.asarray(classes, dtype=dtype)
    s = np.round(rng.random(300), 2)
    for ours, theirs in (
        (cmetrics.average_precision_score, sklearn.metrics.average_precision_score),
        (cmetrics.roc_auc_score, sklearn.metrics.roc_auc_score),
    ):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = theirs(y, s)
        except ValueError:
            with pytest.raises((ValidationError, LabelError)):
                ours(y, s, backend=backend)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = ours(y, s, backend=backend)
        assert (np.isnan(got) and np.isnan(want)) or got == pytest.approx(want, rel=1e-12)

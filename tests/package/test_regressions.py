"""Regression tests of defects found by testing from outside: scikit-learn parity, exact
integer ordering, weight scales, all-zero weights, bounds, and the other silently wrong
answers. Each runs on both backends against an independent oracle (scikit-learn, scipy,
exact fractions, naive loops)."""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
import scipy.stats
import sklearn.metrics as skm
from hypothesis import given
from hypothesis import strategies as st

import cmetrics
from cmetrics.exceptions import LabelError, LengthMismatchError, ShapeError, UndefinedMetricWarning, WeightError
from tests.conftest import BACKENDS, quiet


def sk_quiet(fn: Any, *args: Any, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


# -- scikit-learn behaviours -------------------------------------------------------------------


@pytest.mark.parametrize(
    "weights",
    [None, np.array([1, 2, 3, 1]), np.array([True, False, True, True]), np.array([1.0, 2.5, 3.0, 1.0]), [1, 2, 3, 4]],
)
def test_confusion_matrix_dtype_follows_sklearn(backend: str, weights: Any) -> None:
    y, p = [0, 1, 1, 2], [0, 1, 2, 2]
    want = skm.confusion_matrix(y, p, sample_weight=weights)
    got = cmetrics.confusion_matrix(y, p, sample_weight=weights, backend=backend)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_log_loss_normalize_false_is_the_weighted_sum(backend: str) -> None:
    y = [0, 1, 1, 2]
    p = [[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.4, 0.5, 0.1], [0.2, 0.2, 0.6]]
    for w in (None, [2.0, 1.0, 0.5, 3.0]):
        want = skm.log_loss(y, p, normalize=False, sample_weight=w)
        got = cmetrics.log_loss(y, p, normalize=False, sample_weight=w, backend=backend)
        assert got == pytest.approx(want, rel=1e-13)
        assert cmetrics.log_loss(y, p, sample_weight=w, backend=backend) == pytest.approx(
            skm.log_loss(y, p, sample_weight=w), rel=1e-13
        )


@pytest.mark.parametrize(
    ("y1", "y2", "labels"),
    [
        ([0, 1], [1, 2], [0, 2]),  # no sample has both labels among `labels`
        ([0, 0], [0, 0], None),  # the expected disagreement is 0
        ([3, 3, 3], [3, 3, 3], [3]),
    ],
)
def test_kappa_undefined_cases_are_nan_with_a_warning(
    backend: str, y1: list[int], y2: list[int], labels: list[int] | None
) -> None:
    want = sk_quiet(skm.cohen_kappa_score, y1, y2, labels=labels)
    assert math.isnan(want)
    with pytest.warns(UndefinedMetricWarning, match="cohen_kappa_score` is undefined"):
        got = cmetrics.cohen_kappa_score(y1, y2, labels=labels, backend=backend)
    assert math.isnan(got)
    assert quiet(cmetrics.cohen_kappa_score, y1, y2, labels=labels, replace_undefined_by=0.0, backend=backend) == 0.0
    assert sk_quiet(skm.cohen_kappa_score, y1, y2, labels=labels, replace_undefined_by=0.0) == 0.0


def test_kappa_labels_absent_from_y1_raise_as_sklearn(backend: str) -> None:
    with pytest.raises(ValueError, match="labels"):
        skm.cohen_kappa_score([0, 1], [0, 1], labels=[2, 3])
    with pytest.raises(LabelError):
        cmetrics.cohen_kappa_score([0, 1], [0, 1], labels=[2, 3], backend=backend)


@pytest.mark.parametrize(
    ("y", "p", "labels"), [([0, 0], [0, 0], None), (["a", "a"], ["a", "a"], None), ([0, 1], [0, 1], [0])]
)
def test_single_label_confusion_matrix_warns_as_sklearn(
    backend: str, y: list[Any], p: list[Any], labels: list[Any] | None
) -> None:
    with warnings.catch_warnings(record=True) as sk:
        warnings.simplefilter("always")
        want = skm.confusion_matrix(y, p, labels=labels)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = cmetrics.confusion_matrix(y, p, labels=labels, backend=backend)
    np.testing.assert_array_equal(got, want)
    assert [(w.category, str(w.message)) for w in ours] == [(w.category, str(w.message)) for w in sk]


def test_average_precision_with_an_absent_pos_label_raises(backend: str) -> None:
    with pytest.raises(ValueError, match="pos_label=2 is not a valid label"):
        skm.average_precision_score([0, 1], [0.1, 0.9], pos_label=2)
    with pytest.raises(LabelError, match="pos_label=2 is not a valid label"):
        cmetrics.average_precision_score([0, 1], [0.1, 0.9], pos_label=2, backend=backend)
    # One class only: no positive, scikit-learn's 0.0 with a warning (decision O10).
    with pytest.warns(UndefinedMetricWarning):
        assert cmetrics.average_precision_score([0, 0], [0.1, 0.9], backend=backend) == 0.0


@given(
    st.integers(1, 60), st.integers(1, 60), st.lists(st.integers(1, 1000), min_size=120, max_size=120), st.booleans()
)
def test_perfect_ranking_has_average_precision_exactly_one(
    n_neg: int, n_pos: int, w: list[int], ties_in_groups: bool
) -> None:
    n = n_neg + n_pos
    y = np.arange(n) >= n_neg
    s = np.arange(n) / 7.0
    if ties_in_groups:  # tied scores inside each side keep the ranking perfect
        s = np.where(y, 2.0, 1.0) + (np.arange(n) % 3) * 0.1 * y
    weights = np.array(w[:n]) * 0.1
    for backend in BACKENDS:
        for sw in (None, weights):
            assert cmetrics.average_precision_score(y, s, sample_weight=sw, backend=backend) == 1.0
            assert cmetrics.refinement(y, s, sample_weight=sw, backend=backend) == 1.0
            assert cmetrics.roc_auc_score(y, s, sample_weight=sw, backend=backend) == 1.0


@pytest.mark.parametrize(
    ("fn", "y", "p", "kw"),
    [
        ("precision_score", [0, 1], [0, 0], {}),
        ("recall_score", [0, 0], [0, 1], {}),
        ("precision_score", [0, 1, 2], [0, 0, 0], {"average": None}),
        ("recall_score", [0, 1, 2], [0, 0, 0], {"average": None, "labels": [0, 3]}),
        ("precision_score", [0, 1, 2], [0, 0, 0], {"average": "micro", "labels": [1]}),
        ("f1_score", [0, 0], [0, 0], {"labels": [1], "average": None}),
        ("f1_score", [0, 1, 2], [0, 0, 0], {"average": "macro", "labels": [0, 3]}),
    ],
)
def test_zero_division_warnings_use_sklearns_wording(
    backend: str, fn: str, y: list[int], p: list[int], kw: dict[str, Any]
) -> None:
    with warnings.catch_warnings(record=True) as sk:
        warnings.simplefilter("always")
        want = getattr(skm, fn)(y, p, **kw)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = getattr(cmetrics, fn)(y, p, **kw, backend=backend)
    np.testing.assert_allclose(got, want)
    assert {str(w.message) for w in ours} == {str(w.message) for w in sk}


# -- silently wrong answers ------------------------------------------------------------------


def test_float_labels_at_or_beyond_2_63_raise(backend: str) -> None:
    with pytest.raises(LabelError, match="int64 range"):
        cmetrics.accuracy_score([2.0**63], [-(2.0**63)], backend=backend)
    with pytest.raises(LabelError, match="int64 range"):
        cmetrics.confusion_matrix([1e19, 0.0], [0.0, 0.0], backend=backend)
    assert cmetrics.accuracy_score([-(2.0**63)], [-(2.0**63)], backend=backend) == 1.0


def test_two_integer_labels_at_any_distance_are_read_as_two_classes(backend: str) -> None:
    """Binary labels are two integers: adjacent ones (read from the extremes alone), ones far
    apart (counted), the int64 extremes themselves, and integral floats; a third value between
    two extremes that are not adjacent is refused. The greater label is positive throughout."""
    positive = np.array([True, False, True, True, False, False, True, False])
    s = [0.9, 0.1, 0.8, 0.4, 0.5, 0.2, 0.7, 0.3]
    want = float(naive_auc(positive, [int(v * 10) for v in s]))
    top = np.iinfo(np.int64).max
    for neg, pos in ((0, 1), (-1, 1), (top - 1, top), (-top - 1, top), (3, 40)):
        y = np.where(positive, pos, neg).astype(np.int64)
        assert cmetrics.roc_auc_score(y, s, backend=backend) == want, (neg, pos)
    assert cmetrics.roc_auc_score(positive.astype(np.float64), s, backend=backend) == want
    assert cmetrics.roc_auc_score(np.where(positive, -(2.0**62), -(2.0**63)), s, backend=backend) == want
    with pytest.raises(ValueError, match="3 classes"):
        cmetrics.roc_auc_score([-1, 0, 1, 1, -1, 0, 1, -1], s, backend=backend)


def naive_auc(y: np.ndarray, s: list[int]) -> Fraction:
    pairs = [(i, j) for i in range(len(y)) for j in range(len(y)) if y[i] and not y[j]]
    good = sum(Fraction(1) if s[i] > s[j] else Fraction(1, 2) if s[i] == s[j] else Fraction(0) for i, j in pairs)
    return good / len(pairs)


def naive_tau_b(x: list[int], y: list[int]) -> float:
    n0 = con = dis = tx = ty = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        n0 += 1
        dx, dy = (x[i] > x[j]) - (x[i] < x[j]), (y[i] > y[j]) - (y[i] < y[j])
        tx += dx == 0
        ty += dy == 0
        con += dx * dy > 0
        dis += dx * dy < 0
    return (con - dis) / math.sqrt((n0 - tx) * (n0 - ty))


def test_integer_scores_are_ordered_as_integers(backend: str) -> None:
    # sklearn agrees here: the scores differ by one, beyond float64's 2^53.
    assert (
        cmetrics.roc_auc_score([0, 1], [2**62 + 1, 2**62], backend=backend)
        == skm.roc_auc_score([0, 1], [2**62 + 1, 2**62])
        == 0.0
    )
    extremes = {
        "int64": np.array(
            [np.iinfo(np.int64).min, -1, 0, 2**62, 2**62 + 1, np.iinfo(np.int64).max - 1, np.iinfo(np.int64).max],
            dtype=np.int64,
        ),
        "uint64": np.array([0, 1, 2**53, 2**53 + 1, 2**63, 2**64 - 2, 2**64 - 1], dtype=np.uint64),
    }
    rng = np.random.default_rng(4)
    for values in extremes.values():
        for _ in range(5):
            s = rng.choice(values, 12)
            y = rng.permutation(np.arange(12) % 2 == 0)
            ints = [int(v) for v in s]
            assert cmetrics.roc_auc_score(y, s, backend=backend) == float(naive_auc(y, ints))
            other = s[rng.permutation(len(s))]
            assert cmetrics.kendall_tau(s, other, backend=backend) == pytest.approx(
                naive_tau_b(ints, [int(v) for v in other]), abs=1e-15
            )
    # scipy is exact on int64 (it ranks integers); the same value here.
    x = np.array([2**62, 2**62 + 1, 2**62 + 2, 2**62 + 3])
    assert cmetrics.kendall_tau(x, [4, 3, 2, 1], backend=backend) == scipy.stats.kendalltau(x, [4, 3, 2, 1]).statistic


WEIGHT_SCALES = [2.0**-1000, 1e-300, 1e-170, 1e-80, 1e80, 1e160, 1e200, 1e300 / 64]


@pytest.mark.parametrize("scale", WEIGHT_SCALES)
def test_metrics_do_not_depend_on_the_weight_scale(backend: str, scale: float) -> None:
    rng = np.random.default_rng(11)
    n = 40
    y = rng.integers(0, 3, n)
    p = np.where(rng.random(n) < 0.6, y, rng.integers(0, 3, n))
    proba = rng.dirichlet(np.ones(3), n)
    conf = np.round(rng.random(n), 1)
    ok = rng.random(n) < 0.5
    w = rng.integers(1, 5, n).astype(float)

    def scores(weights: np.ndarray) -> list[float]:
        return [
            cmetrics.accuracy_score(y, p, sample_weight=weights, backend=backend),
            cmetrics.matthews_corrcoef(y, p, sample_weight=weights, backend=backend),
            cmetrics.cohen_kappa_score(y, p, sample_weight=weights, backend=backend),
            cmetrics.informedness(y, p, sample_weight=weights, backend=backend),
            cmetrics.f1_score(y, p, average="macro", sample_weight=weights, backend=backend),
            cmetrics.normalized_information_transfer(y, p, sample_weight=weights, backend=backend),
            cmetrics.roc_auc_score(ok, conf, sample_weight=weights, backend=backend),
            cmetrics.refinement(ok, conf, ties="strict", sample_weight=weights, backend=backend),
            cmetrics.reversed_pair_proportion(ok, conf, sample_weight=weights, backend=backend),
            cmetrics.average_precision_score(ok, conf, sample_weight=weights, backend=backend),
            cmetrics.aurc(ok, conf, sample_weight=weights, backend=backend),
            cmetrics.log_loss(y, proba, sample_weight=weights, backend=backend),
            cmetrics.brier_score(y, proba, sample_weight=weights, backend=backend),
            cmetrics.cf1_score(y, proba, average="macro", sample_weight=weights, backend=backend),
            cmetrics.expected_calibration_error(y, proba, sample_weight=weights, backend=backend),
        ]

    base = scores(w)
    got = scores(w * scale)
    np.testing.assert_allclose(got, base, rtol=1e-12, atol=1e-15)
    # sklearn at the unit scale is the oracle for the ones it has.
    assert base[1] == pytest.approx(skm.matthews_corrcoef(y, p, sample_weight=w), rel=1e-12)
    assert base[6] == pytest.approx(skm.roc_auc_score(ok, conf, sample_weight=w), rel=1e-12)


def test_weights_past_the_float64_range_raise(backend: str) -> None:
    big = [1e308] * 4
    with pytest.raises(WeightError, match="beyond the float64 range"):
        cmetrics.accuracy_score([0, 1, 1, 0], [0, 1, 0, 0], sample_weight=big, backend=backend)
    with pytest.raises(WeightError, match="beyond the float64 range"):
        cmetrics.log_loss(
            [0, 1, 1, 0], [[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.7, 0.3]], sample_weight=big, backend=backend
        )
    with pytest.raises(WeightError, match="beyond the float64 range"):
        cmetrics.roc_auc_score([0, 1, 1, 0], [0.1, 0.8, 0.3, 0.4], sample_weight=big, backend=backend)
    # Absolute units that leave float64 raise too; the normalised metric does not.
    tiny = [1e-170] * 4
    with pytest.raises(WeightError, match="reversed pairs"):
        cmetrics.kendall_tau_distance([1, 0, 1, 0], [0.1, 0.8, 0.3, 0.4], sample_weight=tiny, backend=backend)
    # Every correct one (0.1, 0.3) lies below every wrong one (0.8, 0.4): 4 of 16 pairs.
    assert cmetrics.reversed_pair_proportion(
        [1, 0, 1, 0], [0.1, 0.8, 0.3, 0.4], sample_weight=tiny, backend=backend
    ) == pytest.approx(4 / 16, rel=1e-15)


@pytest.mark.parametrize(
    "fn",
    [
        "aurc",
        "kendall_tau_distance",
        "roc_auc_score",
        "refinement",
        "reversed_pair_proportion",
        "average_precision_score",
        "risk_coverage_curve",
    ],
)
def test_all_zero_weights_raise(backend: str, fn: str) -> None:
    kw = {} if fn == "risk_coverage_curve" else {"backend": backend}
    with pytest.raises(WeightError, match="sums to 0"):
        getattr(cmetrics, fn)([0, 1, 1, 0], [0.1, 0.8, 0.3, 0.4], sample_weight=[0.0] * 4, **kw)
    with pytest.raises(WeightError, match="sums to 0"):
        cmetrics.selective_prediction_scores(
            [0, 1, 1, 0], y_pred=[0, 1, 0, 0], confidence=[0.1, 0.8, 0.3, 0.4], sample_weight=[0.0] * 4, backend=backend
        )


def test_risk_coverage_curve_checks_its_weights() -> None:
    with pytest.raises(WeightError, match=r"sample_weight\[1\] = -1.0"):
        cmetrics.risk_coverage_curve([0, 1, 1, 0], [0.1, 0.8, 0.3, 0.4], sample_weight=[1, -1, 1, 1])
    with pytest.raises(WeightError):
        cmetrics.risk_coverage_curve([0, 1], [0.1, 0.8], sample_weight=[1, np.nan])
    with pytest.raises(LengthMismatchError):
        cmetrics.risk_coverage_curve([0, 1], [0.1, 0.8], sample_weight=[1, 1, 1])
    cov, risk, _ = cmetrics.risk_coverage_curve([1, 0, 1], [0.9, 0.5, 0.1], sample_weight=[1, 2, 1])
    assert cov.tolist() == [0.25, 0.75, 1.0] and risk.tolist() == [0.0, 2 / 3, 0.5]


@given(
    st.lists(
        st.tuples(st.booleans(), st.integers(0, 5), st.sampled_from([0.0, 1e-300, 0.3, 1.0, 7.0, 1e150])),
        min_size=2,
        max_size=30,
    )
)
def test_pair_metrics_stay_in_their_range(rows: list[tuple[bool, int, float]]) -> None:
    ok = np.array([r[0] for r in rows])
    conf = np.array([r[1] / 5 for r in rows])
    w = np.array([r[2] for r in rows])
    if not w.sum() > 0:
        return
    for backend in BACKENDS:
        for ties in ("half", "strict", "harsh"):
            r = quiet(cmetrics.refinement, ok, conf, ties=ties, sample_weight=w, backend=backend)
            assert math.isnan(r) or 0.0 <= r <= 1.0
        rpp = cmetrics.reversed_pair_proportion(ok, conf, sample_weight=w, backend=backend)
        assert 0.0 <= rpp <= 0.25
        try:
            d = quiet(cmetrics.kendall_tau_distance, ok, conf, sample_weight=w, backend=backend)
        except WeightError:
            continue  # 1e-300 squared leaves float64: refused, never rounded to a wrong value
        assert math.isnan(d) or d >= 0.0


@pytest.mark.parametrize("k", [2, 3, 7, 10, 1000])
def test_entropy_score_stays_in_its_range(backend: str, k: int) -> None:
    # Uniform float32 rows carry a hair more entropy than log K in float64 (their sum is 1
    # only to float32 precision): the score is clamped at 0, not -2e-8.
    p = np.full((5, k), 1 / k, dtype=np.float32)
    assert 0.0 <= cmetrics.entropy_score(p, backend=backend) <= 1e-15
    one_hot = np.eye(k, dtype=np.float32)[:3]
    assert cmetrics.entropy_score(one_hot, backend=backend) == 1.0


def test_nit_with_n_classes_below_the_classes_present_raises(backend: str) -> None:
    with pytest.raises(LabelError, match="n_classes=2 is below the 4 classes"):
        cmetrics.normalized_information_transfer([0, 1, 2, 3], [0, 1, 2, 3], n_classes=2, backend=backend)
    assert cmetrics.normalized_information_transfer([0, 1, 2, 3], [0, 1, 2, 3], n_classes=4, backend=backend) == 1.0
    assert cmetrics.normalized_information_transfer(
        [0, 1, 2, 3], [0, 1, 2, 3], n_classes=8, backend=backend
    ) == pytest.approx(0.5)


@pytest.mark.parametrize("beta", [1e155, 1e200, 1e300, float("inf")])
def test_fbeta_with_a_huge_beta_is_its_limit_recall(backend: str, beta: float) -> None:
    y, p = [0, 1, 1, 0, 1], [0, 1, 0, 0, 0]
    assert cmetrics.fbeta_score(y, p, beta=beta, backend=backend) == skm.recall_score(y, p)
    assert cmetrics.fbeta_score(y, p, beta=beta, average="macro", backend=backend) == pytest.approx(
        skm.recall_score(y, p, average="macro")
    )


def test_numpy_weighted_sums_agree_with_rust_at_scale() -> None:
    """10^7 rows of weight 0.1: both backends sum in the same fixed chunks (a plain bincount
    sums 10^7 values in a row), agree with each other to 1e-14 and with the exact sum to 1e-12."""
    n = 10_000_000
    y = (np.arange(n) % 3).astype(np.int32)
    p = ((np.arange(n) // 3) % 3).astype(np.int32)
    w = np.full(n, 0.1)
    exact = float(Fraction(0.1) * (n // 9 + (1 if n % 9 else 0)))  # cell (0, 0): rows 0, 9, 18, ...
    tables = [cmetrics.confusion_matrix(y, p, sample_weight=w, backend=b) for b in BACKENDS]
    for t in tables:
        assert abs(t[0, 0] - exact) <= 1e-12 * exact
        assert abs(t.sum() - float(Fraction(0.1) * n)) <= 1e-12 * n * 0.1
    np.testing.assert_allclose(tables[0], tables[-1], rtol=1e-14)


def test_an_empty_batch_with_rows_elsewhere_is_refused(backend: str) -> None:
    ev = cmetrics.Evaluator(n_classes=2, backend=backend)
    with pytest.raises(LengthMismatchError, match="y_true is empty but y_proba has rows"):
        ev.update([], y_proba=[[0.5, 0.5]] * 5)
    with pytest.raises(LengthMismatchError, match="y_pred"):
        ev.update([], y_pred=[0, 1])
    ev.update([], y_proba=np.zeros((0, 2)))  # empty everywhere: nothing to add
    assert ev.n_rows == 0


@pytest.mark.parametrize("mode", ["off", False])
def test_ranking_off_means_off(backend: str, mode: Any) -> None:
    y = [0, 1, 1, 0]
    p = [[0.7, 0.3], [0.4, 0.6], [0.6, 0.4], [0.2, 0.8]]
    r = cmetrics.evaluate(y, y_proba=p, ranking=mode, backend=backend)
    assert r.ranking is None and "refinement" not in r.metrics
    ev = cmetrics.Evaluator(n_classes=2, ranking=mode, backend=backend).update(y, y_proba=p)
    assert ev.report().ranking is None and ev.ranking_summary() is None
    assert cmetrics.evaluate(y, y_proba=p, backend=backend).ranking == {"mode": "exact"}
    approx = cmetrics.evaluate(y, y_proba=p, ranking="approximate", ranking_bins=10, backend=backend)
    assert approx.ranking == {"mode": "approximate", "bins": 10}


@pytest.mark.parametrize("bad", ["yes", "on", 1, 0, None, "Exact"])
def test_other_ranking_values_raise_everywhere(backend: str, bad: Any) -> None:
    with pytest.raises(cmetrics.exceptions.ValidationError, match="ranking="):
        cmetrics.evaluate([0, 1], y_proba=[[0.6, 0.4], [0.3, 0.7]], ranking=bad, backend=backend)
    with pytest.raises(cmetrics.exceptions.ValidationError, match="ranking="):
        cmetrics.Evaluator(ranking=bad, backend=backend)


def test_kendall_tau_orders_infinities_as_scipy(backend: str) -> None:
    x = [-np.inf, -1.0, 0.0, 2.0, np.inf, np.inf]
    y = [1.0, 3.0, 2.0, 4.0, 6.0, 5.0]
    assert cmetrics.kendall_tau(x, y, backend=backend) == pytest.approx(
        scipy.stats.kendalltau(x, y).statistic, abs=1e-15
    )
    assert cmetrics.kendall_tau(x, y, variant="c", backend=backend) == pytest.approx(
        scipy.stats.kendalltau(x, y, variant="c").statistic, abs=1e-15
    )
    with pytest.raises(cmetrics.exceptions.NonFiniteError, match=r"y\[0\] is NaN"):
        cmetrics.kendall_tau([1.0, 2.0], [np.nan, 1.0], backend=backend)


def test_kendall_tau_of_zero_and_one_samples(backend: str) -> None:
    with pytest.raises(ShapeError, match="empty"):
        cmetrics.kendall_tau([], [], backend=backend)
    with pytest.warns(UndefinedMetricWarning):
        assert math.isnan(cmetrics.kendall_tau([1.0], [2.0], backend=backend))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(scipy.stats.kendalltau([1.0], [2.0]).statistic)

"""Multiclass and multilabel ranking metrics, threshold curves and top-k accuracy against
scikit-learn on seeded random data (ties, weights with zeros, string labels, ``labels=``
subsets), on both backends, plus the errors scikit-learn raises for invalid combinations."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as sk

import cmetrics as cm
from cmetrics import _core, _numpy
from cmetrics.exceptions import LabelError, NonFiniteError, ProbabilityError, ShapeError, ValidationError
from tests.conftest import BACKENDS

AVERAGES = [None, "macro", "weighted", "micro"]


def close(a: Any, b: Any) -> bool:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return x.shape == y.shape and bool(np.allclose(x, y, rtol=1e-12, atol=1e-14, equal_nan=True))


def quiet(fn: Any, *args: Any, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


def probabilities(rng: np.random.Generator, n: int, k: int, decimals: int, dtype: Any = np.float64) -> np.ndarray:
    """Rows of probabilities rounded to ``decimals`` (many ties), renormalised."""
    p = np.round(rng.dirichlet(np.ones(k), n), decimals) + 1e-3
    return (p / p.sum(axis=1, keepdims=True)).astype(dtype)


@pytest.fixture(params=[0, 1, 2])
def data(request: pytest.FixtureRequest) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(request.param)
    n, k = 600, [3, 5, 10][request.param]
    p = probabilities(rng, n, k, [1, 2, 6][request.param])
    y = rng.integers(0, k, n)
    y[:k] = np.arange(k)  # every class present
    w = rng.integers(0, 4, n).astype(np.float64)
    return y, p, w


@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("weighted", [False, True])
def test_ovr_roc_auc_matches_sklearn(backend: str, data: Any, average: Any, weighted: bool) -> None:
    y, p, w = data
    sw = w if weighted else None
    got = cm.roc_auc_score(y, p, multi_class="ovr", average=average, sample_weight=sw, backend=backend)
    assert close(got, sk.roc_auc_score(y, p, multi_class="ovr", average=average, sample_weight=sw))


@pytest.mark.parametrize("average", ["macro", "weighted"])
def test_ovo_roc_auc_matches_sklearn(backend: str, data: Any, average: str) -> None:
    y, p, _ = data
    got = cm.roc_auc_score(y, p, multi_class="ovo", average=average, backend=backend)
    assert close(got, sk.roc_auc_score(y, p, multi_class="ovo", average=average))


def test_float32_and_string_labels(backend: str) -> None:
    rng = np.random.default_rng(7)
    p = probabilities(rng, 500, 4, 2, np.float32)
    names = np.array(["ant", "bee", "cat", "dog"])
    y = names[rng.integers(0, 4, 500)]
    for mc in ["ovr", "ovo"]:
        got = cm.roc_auc_score(y, p, multi_class=mc, backend=backend)
        assert close(got, sk.roc_auc_score(y, p, multi_class=mc))
    assert close(cm.average_precision_score(y, p, backend=backend), sk.average_precision_score(y, p))


def test_labels_name_the_columns(backend: str) -> None:
    rng = np.random.default_rng(8)
    p = probabilities(rng, 400, 4, 2)
    y = rng.integers(0, 3, 400) * 2  # labels 0, 2, 4 present; 6 absent
    labels = [0, 2, 4, 6]
    got = quiet(cm.roc_auc_score, y, p, multi_class="ovr", average=None, labels=labels, backend=backend)
    want = quiet(sk.roc_auc_score, y, p, multi_class="ovr", average=None, labels=labels)
    assert close(got, want) and np.isnan(got[3])  # the absent class has no positives
    got = cm.roc_auc_score(y, p, multi_class="ovo", labels=labels, backend=backend)
    assert close(got, sk.roc_auc_score(y, p, multi_class="ovo", labels=labels))


@pytest.mark.parametrize("average", [*AVERAGES, "samples"])
@pytest.mark.parametrize("weighted", [False, True])
def test_average_precision_multiclass_matches_sklearn(backend: str, data: Any, average: Any, weighted: bool) -> None:
    y, p, w = data
    sw = w if weighted else None
    got = cm.average_precision_score(y, p, average=average, sample_weight=sw, backend=backend)
    assert close(got, sk.average_precision_score(y, p, average=average, sample_weight=sw))


@pytest.mark.parametrize("average", [*AVERAGES, "samples"])
@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_matches_sklearn(backend: str, average: Any, weighted: bool) -> None:
    rng = np.random.default_rng(11)
    n, k = 500, 6
    y = (rng.random((n, k)) < 0.35).astype(np.int64)
    y[0], y[1] = 1, 0  # every label has both classes
    y[2:, 0] = y[2:, 0] | (rng.random(n - 2) < 0.1)
    s = np.round(rng.random((n, k)), 1)
    sw = rng.integers(0, 3, n).astype(np.float64) if weighted else None
    for fn, ref in [(cm.roc_auc_score, sk.roc_auc_score), (cm.average_precision_score, sk.average_precision_score)]:
        got = quiet(fn, y, s, average=average, sample_weight=sw, backend=backend)
        assert close(got, quiet(ref, y, s, average=average, sample_weight=sw)), fn.__name__


def test_multilabel_samples_auc_rows_with_one_class_are_nan_as_sklearn(backend: str) -> None:
    y = np.array([[1, 0, 1], [1, 1, 1], [0, 1, 0]])
    s = np.array([[0.9, 0.2, 0.4], [0.1, 0.3, 0.5], [0.3, 0.3, 0.1]])
    with pytest.warns(cm.UndefinedMetricWarning):
        got = cm.roc_auc_score(y, s, average="samples", backend=backend)
    assert np.isnan(got) and np.isnan(quiet(sk.roc_auc_score, y, s, average="samples"))
    keep = [0, 2]
    got = cm.roc_auc_score(y[keep], s[keep], average="samples", backend=backend)
    assert close(got, sk.roc_auc_score(y[keep], s[keep], average="samples"))


@pytest.mark.parametrize("max_fpr", [0.05, 0.3, 0.5, 0.99, 1.0])
def test_partial_auc_matches_sklearn(backend: str, max_fpr: float) -> None:
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 800)
    s = np.round(rng.random(800) + 0.3 * y, 2)
    w = rng.integers(0, 4, 800).astype(np.float64)
    for sw in [None, w]:
        got = cm.roc_auc_score(y, s, max_fpr=max_fpr, sample_weight=sw, backend=backend)
        assert close(got, sk.roc_auc_score(y, s, max_fpr=max_fpr, sample_weight=sw))
    yl = np.column_stack([y, 1 - y, rng.integers(0, 2, 800)])
    sl = np.column_stack([s, 1 - s, rng.random(800)])
    for average in AVERAGES:
        got = cm.roc_auc_score(yl, sl, max_fpr=max_fpr, average=average, backend=backend)
        assert close(got, sk.roc_auc_score(yl, sl, max_fpr=max_fpr, average=average)), average


def test_the_kernel_columns_equal_the_binary_functions(backend: str, data: Any) -> None:
    """One-vs-rest column c is the binary AUROC / AP of ``y == c`` against ``p[:, c]``."""
    y, p, w = data
    auc = cm.roc_auc_score(y, p, multi_class="ovr", average=None, sample_weight=w, backend=backend)
    ap = cm.average_precision_score(y, p, average=None, sample_weight=w, backend=backend)
    for c in range(p.shape[1]):
        assert auc[c] == cm.roc_auc_score(y == c, p[:, c], sample_weight=w, backend=backend)
        assert ap[c] == pytest.approx(cm.average_precision_score(y == c, p[:, c], sample_weight=w), rel=1e-14)


def test_backends_agree_at_scale() -> None:
    if len(BACKENDS) < 2:
        pytest.skip("the compiled core is not built")
    rng = np.random.default_rng(5)
    p = probabilities(rng, 300_000, 7, 3, np.float32)
    y = rng.integers(0, 7, 300_000)
    w = rng.random(300_000)
    for kw in [{}, {"sample_weight": w}]:
        a = cm.roc_auc_score(y, p, multi_class="ovr", average=None, backend="rust", **kw)
        b = cm.roc_auc_score(y, p, multi_class="ovr", average=None, backend="numpy", **kw)
        np.testing.assert_allclose(a, b, rtol=1e-12)
    a = cm.roc_auc_score(y, p, multi_class="ovo", backend="rust")
    assert a == pytest.approx(cm.roc_auc_score(y, p, multi_class="ovo", backend="numpy"), rel=1e-12)


def test_thread_count_does_not_change_the_result() -> None:
    rng = np.random.default_rng(6)
    p = probabilities(rng, 200_000, 5, 2, np.float32)
    y = rng.integers(0, 5, 200_000)
    w = rng.random(200_000)
    results = []
    for threads in [1, 2, 3]:
        with cm.thread_limit(threads):
            results.append(cm.roc_auc_score(y, p, multi_class="ovr", average=None, sample_weight=w))
    assert all(np.array_equal(results[0], r) for r in results[1:])


def test_row_sum_range_backends_agree() -> None:
    """The fused finiteness and row-sum check (multiclass ROC AUC) of both backends: the
    extremes of float64 row sums (to the last bits of a sum's order), in any dtype and layout."""
    rng = np.random.default_rng(8)
    p = probabilities(rng, 30_001, 7, 2, np.float64)
    for s in (p, p.astype(np.float32), np.asfortranarray(p), (p * 100).astype(np.int64)):
        sums = np.asarray(s, dtype=np.float64).sum(axis=1)
        for be in (_core, _numpy):
            lo, hi = be.row_sum_range(s)
            assert lo == pytest.approx(sums.min(), rel=1e-15) and hi == pytest.approx(sums.max(), rel=1e-15)


def test_a_non_finite_score_is_named_alike_by_both_backends() -> None:
    rng = np.random.default_rng(9)
    y = np.arange(400) % 4
    for bad in (np.nan, np.inf):
        for dtype in (np.float64, np.float32):
            p = probabilities(rng, 400, 4, 2, dtype)
            p[301, 2] = bad
            p[350, 0] = bad
            messages = []
            for backend in ("rust", "numpy"):
                with pytest.raises(NonFiniteError) as err:
                    cm.roc_auc_score(y, p, multi_class="ovr", backend=backend)
                messages.append(str(err.value))
            want = f"y_score[{301 * 4 + 2}] = {bad!r} is not finite; remove or impute NaN and infinite values"
            assert messages[0] == messages[1] == want


# -- errors as scikit-learn's -------------------------------------------------------------------


def test_invalid_combinations_raise(backend: str) -> None:
    rng = np.random.default_rng(1)
    p = probabilities(rng, 50, 3, 2)
    y = np.arange(50) % 3
    with pytest.raises(ValidationError, match="sample_weight is not supported"):
        cm.roc_auc_score(y, p, multi_class="ovo", sample_weight=np.ones(50), backend=backend)
    with pytest.raises(ValidationError, match="Partial AUC"):
        cm.roc_auc_score(y, p, multi_class="ovr", max_fpr=0.5, backend=backend)
    with pytest.raises(ValidationError, match="multi_class must be in"):
        cm.roc_auc_score(y, p, backend=backend)
    with pytest.raises(ValidationError, match="average must be one of"):
        cm.roc_auc_score(y, p, multi_class="ovo", average="micro", backend=backend)
    with pytest.raises(ValidationError, match="average must be one of"):
        cm.roc_auc_score(y, p, multi_class="ovr", average="samples", backend=backend)
    with pytest.raises(ProbabilityError, match="sum up to 1"):
        cm.roc_auc_score(y, p * 2, multi_class="ovr", backend=backend)
    # scikit-learn's tolerance (allclose: 1e-5 relative), decided by every row, in either precision.
    for dtype in (np.float64, np.float32):
        q = p.astype(dtype)
        for row, shift, ok in ((7, 4e-6, True), (7, 3e-5, False), (len(q) - 1, -3e-5, False), (0, np.nan, False)):
            r = q.copy()
            r[row, 0] += dtype(shift)
            ours_ok = _accepted(lambda r=r: cm.roc_auc_score(y, r, multi_class="ovr", backend=backend))
            theirs_ok = _accepted(lambda r=r: sk.roc_auc_score(y, r, multi_class="ovr"))
            assert ours_ok == theirs_ok == ok, (dtype, row, shift)
    with pytest.raises(ShapeError, match="Number of classes"):
        cm.roc_auc_score(y, p[:, :2] / p[:, :2].sum(1, keepdims=True), multi_class="ovr", backend=backend)
    with pytest.raises(LabelError, match="must be ordered"):
        cm.roc_auc_score(y, p, multi_class="ovr", labels=[2, 1, 0], backend=backend)
    with pytest.raises(LabelError, match="not belonging to the passed labels"):
        cm.roc_auc_score(y, p, multi_class="ovr", labels=[0, 1, 5], backend=backend)
    with pytest.raises(ValidationError, match="max_fpr"):
        cm.roc_auc_score(y == 1, p[:, 1], max_fpr=0.0, backend=backend)
    with pytest.raises(LabelError, match="pos_label is fixed to 1"):
        cm.average_precision_score(y, p, pos_label=2, backend=backend)
    with pytest.raises(ValidationError, match="average has to be one of"):
        cm.average_precision_score(y, p, average="mean", backend=backend)  # type: ignore[call-overload]
    with pytest.raises(LabelError, match="indicator"):
        cm.roc_auc_score(np.full((50, 3), 2), p, backend=backend)
    for bad in (ValidationError, ValueError):  # the package's errors are ValueErrors
        with pytest.raises(bad):
            cm.roc_auc_score(y, p, multi_class="ovx", backend=backend)  # type: ignore[arg-type]


def test_rows_not_summing_to_one_are_reported_before_any_later_error(backend: str) -> None:
    """The one-vs-rest kernel checks the row sums in the pass that keys the columns, after the
    labels and weights are read; the error order stays scikit-learn's: scores that are not
    probabilities are reported first, whatever else is wrong."""
    rng = np.random.default_rng(12)
    p = probabilities(rng, 60, 3, 2, np.float32)
    y = np.arange(60) % 3
    later: list[dict[str, Any]] = [
        {"labels": [2, 1, 0]},  # not ordered
        {"labels": [0, 1, 5]},  # a class of y_true not listed
        {"sample_weight": -np.ones(60)},
        {"sample_weight": np.full(60, np.nan)},
    ]
    for kw in later:
        for average in ("macro", "weighted", None):
            with pytest.raises(ProbabilityError, match="sum up to 1"):
                cm.roc_auc_score(y, p * 2, multi_class="ovr", average=average, backend=backend, **kw)
            with pytest.raises(ValueError, match="sum up to 1"):
                sk.roc_auc_score(y, p * 2, multi_class="ovr", average=average, **kw)
            with pytest.raises((LabelError, ValueError)) as err:
                cm.roc_auc_score(y, p, multi_class="ovr", average=average, backend=backend, **kw)
            assert not isinstance(err.value, ProbabilityError)
    with pytest.raises(ProbabilityError, match="sum up to 1"):
        cm.roc_auc_score(y % 2, p * 2, multi_class="ovr", backend=backend)  # 2 classes, 3 columns
    with pytest.raises(ShapeError, match="Number of classes"):
        cm.roc_auc_score(y % 2, p, multi_class="ovr", backend=backend)
    bad = p.copy()
    bad[41, 1] = np.nan
    with pytest.raises(NonFiniteError, match=r"y_score\[124\]"):
        cm.roc_auc_score(y, bad, multi_class="ovr", labels=[2, 1, 0], backend=backend)
    # Every layout and precision the kernel keys (float32 rows packed in tiles, float32 columns,
    # float64): scikit-learn's values.
    w = rng.random(60)
    for s in (p, np.asfortranarray(p), p.astype(np.float64)):
        for average in ("macro", "weighted", None):
            for sw in (None, w):
                got = cm.roc_auc_score(y, s, multi_class="ovr", average=average, sample_weight=sw, backend=backend)
                want = sk.roc_auc_score(y, s, multi_class="ovr", average=average, sample_weight=sw)
                assert close(got, want), (s.dtype, s.flags.f_contiguous, average, sw is None)


# -- curves -------------------------------------------------------------------------------------


def binary_data(seed: int, n: int, dtype: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = (np.round(rng.random(n) + 0.2 * y, 2) * 10).astype(dtype)
    w = rng.integers(0, 4, n).astype(np.float64)
    w[0] = 1.0
    return y, s, w


CURVES = [
    (cm.roc_curve, sk.roc_curve),
    (cm.precision_recall_curve, sk.precision_recall_curve),
    (cm.det_curve, sk.det_curve),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
@pytest.mark.parametrize("drop", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_curves_match_sklearn(backend: str, dtype: Any, drop: bool, weighted: bool) -> None:
    y, s, w = binary_data(4, 2000, dtype)
    sw = w if weighted else None
    for ours, ref in CURVES:
        got = ours(y, s, sample_weight=sw, drop_intermediate=drop, backend=backend)
        want = ref(y, s, sample_weight=sw, drop_intermediate=drop)
        assert all(close(a, b) for a, b in zip(got, want, strict=True)), ours.__name__
        assert got[2].dtype == want[2].dtype, ours.__name__
    got = cm.confusion_matrix_at_thresholds(y, s, sample_weight=sw, backend=backend)
    assert all(close(a, b) for a, b in zip(got, sk.confusion_matrix_at_thresholds(y, s, sample_weight=sw), strict=True))


def test_curves_with_string_labels_and_pos_label(backend: str) -> None:
    y, s, _ = binary_data(5, 300, np.float64)
    names = np.array(["neg", "pos"])[y]
    for ours, ref in CURVES:
        got = ours(names, s, pos_label="pos", backend=backend)
        assert all(close(a, b) for a, b in zip(got, ref(names, s, pos_label="pos"), strict=True))
    three = np.array(["a", "b", "c"])[np.arange(300) % 3]
    got = cm.roc_curve(three, s, pos_label="b", backend=backend)
    assert all(close(a, b) for a, b in zip(got, sk.roc_curve(three, s, pos_label="b"), strict=True))


@settings(max_examples=60, deadline=None)
@given(
    y=st.lists(st.booleans(), min_size=1, max_size=30),
    data=st.data(),
)
def test_curves_match_sklearn_on_any_small_input(y: list[bool], data: st.DataObject) -> None:
    n = len(y)
    s = np.array(data.draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)), dtype=np.float64) / 4
    w = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.float64)
    sw = w if w.sum() > 0 and data.draw(st.booleans()) else None
    drop = data.draw(st.booleans())
    yy = np.array(y)
    for backend in BACKENDS:
        for ours, ref in CURVES[:2]:
            got = quiet(ours, yy, s, sample_weight=sw, drop_intermediate=drop, backend=backend)
            want = quiet(ref, yy, s, sample_weight=sw, drop_intermediate=drop)
            assert all(close(a, b) for a, b in zip(got, want, strict=True)), (ours.__name__, backend)


def test_curve_warnings_and_errors(backend: str) -> None:
    with pytest.warns(cm.UndefinedMetricWarning, match="No negative samples"):
        fpr, _, _ = cm.roc_curve([1, 1], [0.2, 0.4], backend=backend)
    assert np.isnan(fpr).all()
    with pytest.warns(UserWarning, match="No positive class found"):
        _, recall, _ = cm.precision_recall_curve([0, 0], [0.2, 0.4], backend=backend)
    assert recall.tolist() == [1.0, 1.0, 0.0]
    with pytest.raises(LabelError, match="Only one class"):
        cm.det_curve([1, 1], [0.2, 0.4], backend=backend)
    with pytest.raises(ValidationError, match="drop_intermediate"):
        cm.roc_curve([0, 1], [0.2, 0.4], drop_intermediate="yes", backend=backend)  # type: ignore[arg-type]


def test_metric_at_thresholds_and_auc() -> None:
    y, s, w = binary_data(9, 200, np.float64)
    got = cm.metric_at_thresholds(y, s, sk.f1_score, sample_weight=w)
    want = sk.metric_at_thresholds(y, s, sk.f1_score, sample_weight=w)
    assert all(close(a, b) for a, b in zip(got, want, strict=True))
    fpr, tpr, _ = cm.roc_curve(y, s)
    assert cm.auc(fpr, tpr) == pytest.approx(sk.auc(fpr, tpr), rel=1e-15)
    assert cm.auc(fpr, tpr) == pytest.approx(cm.roc_auc_score(y, s), rel=1e-12)
    assert cm.auc([3, 2, 1], [1, 1, 0]) == sk.auc([3, 2, 1], [1, 1, 0])
    with pytest.raises(ValidationError, match="neither increasing nor decreasing"):
        cm.auc([0, 2, 1], [1, 1, 1])
    with pytest.raises(ShapeError, match="At least 2 points"):
        cm.auc([0], [1])


# -- top-k ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 2, 3, 5])
@pytest.mark.parametrize("normalize", [True, False])
def test_top_k_matches_sklearn(backend: str, data: Any, k: int, normalize: bool) -> None:
    y, p, w = data
    for sw in [None, w]:
        got = quiet(cm.top_k_accuracy_score, y, p, k=k, normalize=normalize, sample_weight=sw, backend=backend)
        assert got == pytest.approx(quiet(sk.top_k_accuracy_score, y, p, k=k, normalize=normalize, sample_weight=sw))


def test_top_k_ties_and_binary(backend: str) -> None:
    p = np.array([[0.4, 0.4, 0.2], [0.4, 0.4, 0.2], [0.3, 0.3, 0.4]])
    y = np.array([0, 1, 1])
    for k in (1, 2):
        got = cm.top_k_accuracy_score(y, p, k=k, labels=[0, 1, 2], backend=backend)
        assert got == sk.top_k_accuracy_score(y, p, k=k, labels=[0, 1, 2])
    rng = np.random.default_rng(2)
    yb, sb = rng.integers(0, 2, 100), rng.normal(size=100)
    assert cm.top_k_accuracy_score(yb, sb, k=1, backend=backend) == sk.top_k_accuracy_score(yb, sb, k=1)
    with pytest.warns(cm.UndefinedMetricWarning, match="perfect score"):
        assert cm.top_k_accuracy_score(y, p, k=3, labels=[0, 1, 2], backend=backend) == 1.0
    with pytest.raises(ValidationError, match="k must be"):
        cm.top_k_accuracy_score(y, p, k=0, backend=backend)


@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_top_k_matches_a_sort_on_any_small_input(data: st.DataObject) -> None:
    n = data.draw(st.integers(1, 12))
    k_cols = data.draw(st.integers(2, 5))
    p = np.array(data.draw(st.lists(st.integers(0, 3), min_size=n * k_cols, max_size=n * k_cols)), float)
    p = p.reshape(n, k_cols)
    y = np.array(data.draw(st.lists(st.integers(0, k_cols - 1), min_size=n, max_size=n)))
    k = data.draw(st.integers(1, k_cols))
    # plain-Python reference: sklearn's order (reversed stable sort), then membership
    hits = [y[i] in sorted(range(k_cols), key=lambda j: (p[i, j], j), reverse=True)[:k] for i in range(n)]
    for backend in BACKENDS:
        got = quiet(cm.top_k_accuracy_score, y, p, k=k, labels=list(range(k_cols)), normalize=False, backend=backend)
        assert got == sum(hits)


def _accepted(call: Any) -> bool:
    """Whether a call returns rather than raising a ValueError (either library's)."""
    try:
        call()
    except ValueError:
        return False
    return True

"""Probabilistic metrics and ``evaluate``: parity with scikit-learn, one-hot = hard,
evaluate = the individual functions, backends, threads, float32 accumulation, bad input."""

from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np
import pytest
import sklearn.metrics as skm
from hypothesis import given
from hypothesis import strategies as st

import cmetrics
from cmetrics import exceptions as ex


def softmax_data(n: int, k: int, seed: int, dtype: Any = np.float64, weighted: bool = False) -> tuple[Any, Any, Any]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    logits = rng.standard_normal((n, k)) * 2
    logits[np.arange(n), y] += 1.0
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    p = p.astype(dtype)
    p[:, -1] = 1 - p[:, :-1].sum(axis=1, dtype=dtype)  # rows sum to 1 in their own dtype
    p = np.clip(p, 0, 1)
    w = rng.random(n) * 2 if weighted else None
    return y, p, w


def close(a: Any, b: Any, rtol: float = 1e-12) -> None:
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_log_loss_and_brier_match_sklearn(k: int, dtype: Any, weighted: bool, backend: str) -> None:
    y, p, w = softmax_data(4000, k, seed=k, dtype=dtype, weighted=weighted)
    p[0, :] = 0
    p[0, y[0]] = 1.0  # an exact one-hot row
    p[1, :] = 0
    p[1, (y[1] + 1) % k] = 1.0  # p_true = 0: clipped at eps
    labels = list(range(k))
    pd = p.astype(np.float64)
    with warnings.catch_warnings():
        # float32 rows widened to float64 miss sklearn's float64 row-sum tolerance (it only warns)
        warnings.simplefilter("ignore", UserWarning)
        ref_ll = skm.log_loss(y, pd, sample_weight=w, labels=labels)
        ref_brier = skm.brier_score_loss(y, pd, sample_weight=w, scale_by_half=False, labels=labels)
        ref_half = skm.brier_score_loss(y, pd, sample_weight=w, labels=labels) if k == 2 else None
    close(cmetrics.log_loss(y, p, sample_weight=w, backend=backend), ref_ll)
    close(cmetrics.brier_score(y, p, sample_weight=w, backend=backend), ref_brier)
    if ref_half is not None:
        close(cmetrics.brier_score(y, p, sample_weight=w, scale_by_half=True, backend=backend), ref_half)


@pytest.mark.parametrize("k", [2, 4, 10])
def test_one_hot_probabilities_give_the_hard_metrics_exactly(k: int, backend: str) -> None:
    rng = np.random.default_rng(k)
    y = rng.integers(0, k, 3000)
    pred = np.where(rng.random(3000) < 0.6, y, rng.integers(0, k, 3000))
    p = np.eye(k)[pred]
    w = rng.integers(0, 3, 3000).astype(float)
    np.testing.assert_array_equal(
        cmetrics.prob_confusion_matrix(y, p, sample_weight=w, backend=backend),
        cmetrics.confusion_matrix(y, pred, labels=list(range(k)), sample_weight=w),
    )
    for avg in (None, "macro", "weighted", "micro"):
        soft = cmetrics.cprecision_recall_fscore_support(
            y, p, average=avg, sample_weight=w, zero_division=np.nan, backend=backend
        )
        hard = cmetrics.precision_recall_fscore_support(
            y, pred, labels=list(range(k)), average=avg, sample_weight=w, zero_division=np.nan, backend=backend
        )
        for a, b in zip(soft[:3], hard[:3], strict=True):
            np.testing.assert_array_equal(a, b)
    r = cmetrics.evaluate(y, y_proba=p, sample_weight=w, backend=backend)
    assert r.entropy_score == 1.0
    assert r.purity == pytest.approx(
        cmetrics.purity_from_matrix(
            cmetrics.confusion_matrix(y, pred, labels=list(range(k)), sample_weight=w, normalize="true")
        ),
        rel=1e-12,
    )


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_evaluate_equals_the_individual_functions(weighted: bool, backend: str) -> None:
    y, p, w = softmax_data(5000, 6, seed=3, weighted=weighted)
    names = np.array(["a", "b", "c", "d", "e", "f"])
    yl = names[y]
    r = cmetrics.evaluate(yl, y_proba=p, sample_weight=w, n_bins=12, backend=backend)
    kw: dict[str, Any] = {"sample_weight": w, "backend": backend}
    top = names[p.argmax(axis=1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        checks = {
            "accuracy": cmetrics.accuracy_score(yl, top, **kw),
            "matthews_corrcoef": cmetrics.matthews_corrcoef(yl, top, **kw),
            "cohen_kappa": cmetrics.cohen_kappa_score(yl, top, **kw),
            "f1_macro": cmetrics.f1_score(yl, top, average="macro", **kw),
            "informedness": cmetrics.informedness(yl, top, **kw),
            "normalized_information_transfer": cmetrics.normalized_information_transfer(yl, top, **kw),
            "cf1_macro": cmetrics.cf1_score(yl, p, average="macro", **kw),
            "cprecision_weighted": cmetrics.cprecision_score(yl, p, average="weighted", **kw),
            "crecall_micro": cmetrics.crecall_score(yl, p, average="micro", **kw),
            "entropy_score": cmetrics.entropy_score(p, **kw),
            "purity": cmetrics.purity(yl, p, **kw),
            "brier_score": cmetrics.brier_score(yl, p, **kw),
            "log_loss": cmetrics.log_loss(yl, p, **kw),
            "expected_calibration_error": cmetrics.expected_calibration_error(yl, p, n_bins=12, **kw),
            "max_calibration_error": cmetrics.max_calibration_error(yl, p, n_bins=12, **kw),
        }
    for name, value in checks.items():
        assert getattr(r, name) == pytest.approx(value, rel=1e-12, abs=1e-15), name
    np.testing.assert_array_equal(r.confusion_matrix, cmetrics.confusion_matrix(yl, top, sample_weight=w))
    np.testing.assert_allclose(r.prob_confusion_matrix, cmetrics.prob_confusion_matrix(yl, p, **kw), rtol=1e-12)
    assert r.labels == names.tolist()
    # JSON: plain values only, NaN as null with a reason.
    d = json.loads(r.to_json())
    assert d["metrics"]["accuracy"] == r.accuracy
    assert set(d["per_class"]) == set(names)
    assert "| accuracy |" in r.to_markdown() and "Report(" in repr(r)


def test_evaluate_with_y_pred_and_hard_only(backend: str) -> None:
    y, p, _ = softmax_data(500, 3, seed=9)
    pred = (y + 1) % 3
    r = cmetrics.evaluate(y, y_pred=pred, y_proba=p, backend=backend)
    np.testing.assert_array_equal(r.confusion_matrix, cmetrics.confusion_matrix(y, pred))
    assert r.log_loss == pytest.approx(cmetrics.log_loss(y, p, backend=backend), rel=1e-12)
    hard = cmetrics.evaluate(y, y_pred=pred, backend=backend)
    assert not hard.has_proba and hard.accuracy == 0.0
    with pytest.raises(AttributeError):
        _ = hard.log_loss
    undefined = cmetrics.evaluate([0, 0, 1], y_pred=[0, 0, 0], backend=backend)
    assert np.isnan(undefined.markedness)
    assert "Markedness is undefined" in undefined.undefined["markedness"]
    assert undefined.to_dict()["metrics"]["markedness"] is None
    with pytest.raises(ex.ValidationError, match="needs y_pred, y_proba"):
        cmetrics.evaluate([0, 1])


def test_keep_confidence(backend: str) -> None:
    y, p, _ = softmax_data(300, 4, seed=1, dtype=np.float32)
    r = cmetrics.evaluate(y, y_proba=p, keep_confidence=True, backend=backend)
    np.testing.assert_array_equal(r.confidence, p.max(axis=1).astype(np.float64))
    np.testing.assert_array_equal(r.correct, p.argmax(axis=1) == y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("keep", [False, True], ids=["walk", "walk+kept"])
def test_the_walk_inside_the_pass_is_the_walk_of_the_kept_confidences(
    dtype: Any, weighted: bool, keep: bool, backend: str
) -> None:
    """``rank=True`` walks the top-label confidences inside the pass (from packed keys the
    pass writes, for float32 without weights): the same walk as the ranking kernel gives on
    the kept confidences and correctness (counts exact, sums to rounding: the kernel counts
    these few distinct values in hash tables, the pass walks its sorted keys in pieces), with
    ties (two decimals) and past the size where the walk runs in pieces, the same bits on any
    thread count; the kept arrays are returned only when asked for."""
    from cmetrics._backend import resolve_backend

    y, p, w = softmax_data(150_000, 5, seed=3, dtype=dtype, weighted=weighted)
    p = np.round(p, 2).astype(dtype)
    p[:, -1] = np.clip(1 - p[:, :-1].sum(axis=1, dtype=dtype), 0, 1)
    kernels = resolve_backend(backend)
    kept = kernels.evaluate_proba(y, p, None, w, keep_confidence=True, validate=False)
    assert kept.ranking is None and kept.correct is not None and kept.confidence is not None
    want = kernels.binary_ranking(kept.correct, kept.confidence, w, True)
    got = kernels.evaluate_proba(y, p, None, w, keep_confidence=keep, validate=False, rank=True)
    _same_walk(got.ranking, want)
    assert (got.confidence is not None, got.correct is not None) == (keep, keep)
    assert got._replace(ranking=None, confidence=None, correct=None)._asdict().keys() == kept._asdict().keys()
    np.testing.assert_array_equal(got.pcm, kept.pcm)
    if backend == "rust":
        walks = []
        for threads in (1, 3):
            with cmetrics.thread_limit(threads):
                walks.append(
                    kernels.evaluate_proba(y, p, None, w, validate=False, rank=True, n_threads=threads).ranking
                )
        assert walks[0] == walks[1]
        _same_walk(walks[0], want)


def _same_walk(got: Any, want: Any) -> None:
    """Two walks of the same rows: counts exact, sums to rounding."""
    assert got is not None
    for name, value in want._asdict().items():
        mine = getattr(got, name)
        if isinstance(value, float):
            assert mine == pytest.approx(value, rel=1e-12, abs=1e-15, nan_ok=True), name
        else:
            assert mine == value, name


@given(st.integers(1, 6), st.integers(1, 40), st.integers(0, 10**6), st.booleans())
def test_backends_agree_on_random_probabilities(k: int, n: int, seed: int, weighted: bool) -> None:
    if not cmetrics.rust_available():
        pytest.skip("needs the compiled extension")
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 4, (n, k)).astype(np.float64)
    raw[raw.sum(axis=1) == 0, 0] = 1
    p = raw / raw.sum(axis=1, keepdims=True)
    y = rng.integers(0, k, n)
    w = rng.integers(1, 4, n).astype(float) if weighted else None
    labels = list(range(k))
    a = cmetrics.evaluate(y, y_proba=p, labels=labels, sample_weight=w, n_bins=7, backend="rust")
    b = cmetrics.evaluate(y, y_proba=p, labels=labels, sample_weight=w, n_bins=7, backend="numpy")
    np.testing.assert_array_equal(a.confusion_matrix, b.confusion_matrix)
    for name, value in a.metrics.items():
        other = b.metrics[name]
        assert (np.isnan(value) and np.isnan(other)) or value == pytest.approx(other, rel=1e-12, abs=1e-12), name
    assert a.undefined.keys() == b.undefined.keys()


@pytest.mark.skipif(not cmetrics.rust_available(), reason="threads only matter for the Rust backend")
def test_thread_count_gives_identical_bits() -> None:
    y, p, w = softmax_data(300_000, 7, seed=5, dtype=np.float32, weighted=True)
    y = np.tile(y, 3)
    p = np.tile(p, (3, 1))
    w = np.tile(w, 3)
    results = []
    for threads in (1, 2, 3, 5):
        with cmetrics.thread_limit(threads):
            r = cmetrics.evaluate(y, y_proba=p, sample_weight=w, backend="rust")
        results.append((json.dumps(r.metrics), r.prob_confusion_matrix.tobytes()))
    assert len(set(results)) == 1


def test_float32_accumulates_in_float64(backend: str) -> None:
    """10^7 rows of [0.1, 0.9] in float32: summing 0.1f in float32 stalls far from 10^6."""
    n = 10_000_000
    p = np.empty((n, 2), dtype=np.float32)
    p[:, 0] = 0.1
    p[:, 1] = 0.9
    y = np.zeros(n, dtype=np.int32)
    y[::2] = 1
    naive_f32 = np.cumsum(p[:, 0])[-1]  # sequential float32 sum
    exact = n * float(np.float32(0.1))
    assert abs(naive_f32 - exact) / exact > 1e-3  # the trap this test guards against is real
    pcm = cmetrics.prob_confusion_matrix(y, p, labels=[0, 1], backend=backend)
    assert pcm[:, 0].sum() == pytest.approx(exact, rel=1e-12)
    assert pcm[1, 1] == pytest.approx(n / 2 * float(np.float32(0.9)), rel=1e-12)
    bins = cmetrics.calibration_bins(y, p, labels=[0, 1], n_bins=10, backend=backend)
    assert bins.count.sum() == n and bins.accuracy[8] == pytest.approx(0.5, rel=1e-12)


BAD: list[tuple[str, Any, type[Exception], str]] = [
    ("1-D proba", [0.2, 0.8, 0.5], ex.ProbabilityError, "must be 2-D"),
    ("3-D proba", np.full((3, 2, 1), 0.5), ex.ProbabilityError, "must be 2-D"),
    ("wrong column count", [[0.3, 0.3, 0.4]] * 3, ex.ProbabilityError, "2 classes but y_proba has 3 columns"),
    ("row not summing to 1", [[0.5, 0.5], [0.6, 0.6], [0.5, 0.5]], ex.ProbabilityError, "row 1 sums to 1.2"),
    ("negative entry", [[0.5, 0.5], [-0.1, 1.1], [0.5, 0.5]], ex.ProbabilityError, r"y_proba\[1, 0\] = -0.1"),
    ("entry above 1", [[0.5, 0.5], [0.5, 0.5], [1.5, -0.5]], ex.ProbabilityError, r"y_proba\[2, 0\] = 1.5"),
    ("NaN entry", [[0.5, 0.5], [np.nan, 0.5], [0.5, 0.5]], ex.ProbabilityError, r"y_proba\[1, 0\] = nan"),
    ("inf entry", [[0.5, np.inf], [0.5, 0.5], [0.5, 0.5]], ex.ProbabilityError, r"y_proba\[0, 1\] = inf"),
    ("row count", [[0.5, 0.5]] * 2, ex.LengthMismatchError, "y_proba has 2 rows but y_true has 3"),
    ("string dtype", [["a", "b"]] * 3, ex.UnsupportedDtypeError, "float32 or float64"),
]


@pytest.mark.parametrize(("name", "proba", "exc", "match"), BAD, ids=[b[0] for b in BAD])
def test_bad_probabilities(name: str, proba: Any, exc: type[Exception], match: str, backend: str) -> None:
    if name != "1-D proba":  # log_loss reads a 1-D y_proba as scikit-learn does (the greater class's)
        with pytest.raises(exc, match=match):
            cmetrics.log_loss([0, 1, 0], proba, backend=backend)
    with pytest.raises(exc, match=match):
        cmetrics.evaluate([0, 1, 0], y_proba=proba, backend=backend)


def test_label_and_option_errors(backend: str) -> None:
    p = [[0.5, 0.5], [0.4, 0.6]]
    with pytest.raises(ex.LabelError, match=r"y_true\[1\] = 7 is not one of the 2 labels"):
        cmetrics.brier_score([0, 7], p, labels=[0, 1], backend=backend)
    with pytest.raises(ex.LabelError, match=r"y_true contains values \['z'\] not belonging"):
        cmetrics.brier_score(["a", "z"], p, labels=["a", "b"], backend=backend)
    with pytest.raises(ex.ProbabilityError, match="labels has 3 entries"):
        cmetrics.log_loss([0, 1], p, labels=[0, 1, 2], backend=backend)
    with pytest.raises(ex.ValidationError, match="n_bins=0"):
        cmetrics.expected_calibration_error([0, 1], p, n_bins=0, backend=backend)
    with pytest.raises(ex.WeightError, match=r"sample_weight\[1\] = -1.0"):
        cmetrics.log_loss([0, 1], p, sample_weight=[1, -1], backend=backend)
    with pytest.raises(ex.LabelError, match=r"y_pred\[1\] = 5 is not one of the 2 labels"):
        cmetrics.evaluate([0, 1], y_pred=[0, 5], y_proba=p, backend=backend)
    # validate=False lets unnormalised scores through (documented escape hatch).
    got = cmetrics.prob_confusion_matrix([0, 1], [[0.7, 0.7], [0.0, 0.5]], validate=False, backend=backend)
    np.testing.assert_array_equal(got, [[0.7, 0.7], [0.0, 0.5]])
    with pytest.raises(ex.ProbabilityError):
        cmetrics.prob_confusion_matrix([0, 1], [[0.7, 0.7], [0.0, 0.5]], validate=True, backend=backend)


def test_layouts_and_dtypes_are_accepted(backend: str) -> None:
    y, p, _ = softmax_data(200, 3, seed=2)
    ref = cmetrics.log_loss(y, p, backend=backend)
    assert cmetrics.log_loss(y, np.asfortranarray(p), backend=backend) == ref
    assert cmetrics.log_loss(y, p.astype(">f8"), backend=backend) == ref
    big = np.zeros((200, 6))
    big[:, ::2] = p
    assert cmetrics.log_loss(y, big[:, ::2], backend=backend) == ref
    assert cmetrics.log_loss(y, p.tolist(), backend=backend) == ref
    onehot = np.eye(3, dtype=np.int64)[y]
    assert cmetrics.log_loss(y, onehot, backend=backend) == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("seed", range(3))
def test_any_split_of_the_rows_adds_up_to_the_whole(seed: int, backend: str) -> None:
    """Chunking invariance: the accumulators of any split of the rows add up to those of
    the whole (counts exactly, sums within 1e-12), whatever the kernel's own chunking."""
    y, p, w = softmax_data(100_000, 5, seed=seed, dtype=np.float32, weighted=True)
    cuts = np.sort(np.random.default_rng(seed).choice(np.arange(1, len(y)), size=4, replace=False))
    parts = np.split(np.arange(len(y)), cuts)
    labels = list(range(5))
    whole = cmetrics.evaluate(y, y_proba=p, labels=labels, sample_weight=w, backend=backend)
    pcm = sum(
        cmetrics.prob_confusion_matrix(y[i], p[i], labels=labels, sample_weight=w[i], backend=backend) for i in parts
    )
    np.testing.assert_allclose(pcm, whole.prob_confusion_matrix, rtol=1e-12)
    counts = sum(cmetrics.evaluate(y[i], y_proba=p[i], labels=labels, backend=backend).confusion_matrix for i in parts)
    np.testing.assert_array_equal(
        counts, cmetrics.evaluate(y, y_proba=p, labels=labels, backend=backend).confusion_matrix
    )
    ll = sum(
        cmetrics.log_loss(y[i], p[i], labels=labels, sample_weight=w[i], backend=backend) * w[i].sum() for i in parts
    )
    assert ll / w.sum() == pytest.approx(whole.log_loss, rel=1e-12)
    ent = sum(cmetrics.entropy_score(p[i], sample_weight=w[i], backend=backend) * w[i].sum() for i in parts)
    assert ent / w.sum() == pytest.approx(whole.entropy_score, rel=1e-12)


def test_fortran_ordered_probabilities_are_read_in_place() -> None:
    from cmetrics._base import validation
    from tests.conftest import BACKENDS

    """A Fortran-ordered matrix (a DataFrame's ``to_numpy()``, the CLI's column batches) gives
    the same report as its C-ordered copy, on both backends, and is not copied."""
    rng = np.random.default_rng(8)
    for dtype in (np.float32, np.float64):
        p = rng.random((50_000, 7)).astype(dtype)
        p /= p.sum(axis=1, keepdims=True)
        y = rng.integers(0, 7, 50_000)
        f = np.asfortranarray(p)
        assert validation.proba_array(f) is f
        for backend in BACKENDS:
            a = cmetrics.evaluate(y, y_proba=p, backend=backend).to_dict()
            b = cmetrics.evaluate(y, y_proba=f, backend=backend).to_dict()
            assert a["metrics"] == b["metrics"] and a["confusion_matrix"] == b["confusion_matrix"]
    strided = np.ones((10, 4))[:, ::2] / 2.0
    assert cmetrics.evaluate([0, 1] * 5, y_proba=strided).n_samples == 10


def test_boolean_truth_is_scored_as_its_integer_codes(backend: str) -> None:
    """A boolean ``y_true`` (its label set read from one count of the True rows) gives what the
    same rows as 0/1 integers give: the scores, the error when one value is missing, and with
    ``labels=``."""
    y, p, _ = softmax_data(3000, 2, seed=5)
    b = y.astype(bool)
    assert cmetrics.log_loss(b, p, backend=backend) == cmetrics.log_loss(y, p, backend=backend)
    close(cmetrics.log_loss(b, p, backend=backend), skm.log_loss(y, p))
    assert cmetrics.brier_score(b, p, backend=backend) == cmetrics.brier_score(y, p, backend=backend)
    rb = cmetrics.evaluate(b, y_proba=p, backend=backend)
    ri = cmetrics.evaluate(y, y_proba=p, backend=backend)
    assert rb.log_loss == ri.log_loss and rb.accuracy == ri.accuracy
    assert [bool(v) for v in rb.labels] == [False, True]
    for value in (False, True):
        one = np.full(50, value)
        with pytest.raises(ex.ProbabilityError, match="y_true has 1 classes but y_proba has 2 columns"):
            cmetrics.log_loss(one, p[:50], backend=backend)
        got = cmetrics.log_loss(one, p[:50], labels=[False, True], backend=backend)
        close(got, skm.log_loss(one.astype(int), p[:50], labels=[0, 1]))

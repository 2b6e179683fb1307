"""Multilabel indicator targets for the set-wise metrics against scikit-learn (both backends,
weights, label subsets, empty rows), the counting kernel against plain loops, and the
errors scikit-learn raises."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as sk

import cmetrics as cm
from cmetrics.exceptions import LabelError, ShapeError, ValidationError
from tests.conftest import BACKENDS

AVERAGES = [None, "micro", "macro", "weighted", "samples"]


@pytest.fixture(params=[(400, 5), (50, 2), (300, 12)])
def targets(request: pytest.FixtureRequest) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n, k = request.param
    rng = np.random.default_rng(n + k)
    y = (rng.random((n, k)) < 0.3).astype(np.int64)
    p = (rng.random((n, k)) < 0.3).astype(np.int64)
    y[0], p[0] = 0, 0  # a row with no label at all (0/0 in the sample-wise values)
    y[1], p[1] = 1, 1
    return y, p, rng.random(n)


def quiet(fn: Any, *args: Any, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


def same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return x.shape == y.shape and bool(np.allclose(x, y, rtol=1e-12, atol=1e-12))


@pytest.mark.parametrize("weighted", [False, True])
def test_subset_accuracy_zero_one_and_hamming(backend: str, targets: Any, weighted: bool) -> None:
    y, p, w = targets
    sw = w if weighted else None
    for name in ("accuracy_score", "zero_one_loss"):
        for normalize in (True, False):
            got = getattr(cm, name)(y, p, normalize=normalize, sample_weight=sw, backend=backend)
            assert got == pytest.approx(getattr(sk, name)(y, p, normalize=normalize, sample_weight=sw), rel=1e-12)
    assert cm.hamming_loss(y, p, sample_weight=sw, backend=backend) == pytest.approx(
        sk.hamming_loss(y, p, sample_weight=sw), rel=1e-12
    )


@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("labels", [None, [1, 0]])
def test_prfs_and_jaccard(backend: str, targets: Any, average: Any, weighted: bool, labels: Any) -> None:
    y, p, w = targets
    sw = w if weighted else None
    for beta in (1.0, 0.5):
        got = quiet(
            cm.precision_recall_fscore_support,
            y,
            p,
            beta=beta,
            average=average,
            labels=labels,
            sample_weight=sw,
            backend=backend,
        )
        want = quiet(
            sk.precision_recall_fscore_support, y, p, beta=beta, average=average, labels=labels, sample_weight=sw
        )
        assert all(same(a, b) for a, b in zip(got, want, strict=True))
    got = quiet(cm.jaccard_score, y, p, average=average, labels=labels, sample_weight=sw, backend=backend)
    assert same(got, quiet(sk.jaccard_score, y, p, average=average, labels=labels, sample_weight=sw))
    for fn, ref in [(cm.f1_score, sk.f1_score), (cm.precision_score, sk.precision_score)]:
        got = quiet(fn, y, p, average=average, labels=labels, sample_weight=sw, backend=backend)
        assert same(got, quiet(ref, y, p, average=average, labels=labels, sample_weight=sw))


def test_sample_wise_zero_division_warns_as_sklearn(backend: str, targets: Any) -> None:
    y, p, _ = targets
    with pytest.warns(cm.UndefinedMetricWarning, match="in samples with no predicted labels"):
        cm.precision_score(y, p, average="samples", backend=backend)
    assert cm.precision_score(y, p, average="samples", zero_division=1.0, backend=backend) == pytest.approx(
        sk.precision_score(y, p, average="samples", zero_division=1.0)
    )


@pytest.mark.parametrize("samplewise", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_confusion_matrix(backend: str, targets: Any, samplewise: bool, weighted: bool) -> None:
    y, p, w = targets
    sw = w if weighted else None
    for labels in (None, [2 % y.shape[1], 0]):
        got = cm.multilabel_confusion_matrix(
            y, p, sample_weight=sw, samplewise=samplewise, labels=labels, backend=backend
        )
        want = sk.multilabel_confusion_matrix(y, p, sample_weight=sw, samplewise=samplewise, labels=labels)
        assert got.dtype == want.dtype and same(got, want)


def test_classification_report(backend: str, targets: Any) -> None:
    y, p, w = targets
    names = [f"tag{i}" for i in range(y.shape[1])]
    got = quiet(cm.classification_report, y, p, target_names=names, digits=3, backend=backend)
    assert got == quiet(sk.classification_report, y, p, target_names=names, digits=3)
    got_d = quiet(cm.classification_report, y, p, sample_weight=w, output_dict=True, backend=backend)
    want_d = quiet(sk.classification_report, y, p, sample_weight=w, output_dict=True)
    assert got_d.keys() == want_d.keys()
    for key, row in got_d.items():
        assert isinstance(row, dict)
        assert all(row[m] == pytest.approx(want_d[key][m], rel=1e-12) for m in row), key  # type: ignore[index]


def test_bool_and_float_indicators_count_alike(backend: str, targets: Any) -> None:
    y, p, _ = targets
    a = cm.multilabel_confusion_matrix(y.astype(bool), p.astype(np.float32), backend=backend)
    assert np.array_equal(a, cm.multilabel_confusion_matrix(y, p, backend=backend))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_counts_match_plain_loops(data: st.DataObject) -> None:
    n, k = data.draw(st.integers(1, 7)), data.draw(st.integers(1, 5))
    y = [data.draw(st.lists(st.booleans(), min_size=k, max_size=k)) for _ in range(n)]
    p = [data.draw(st.lists(st.booleans(), min_size=k, max_size=k)) for _ in range(n)]
    w = data.draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    exact = sum(wi for yi, pi, wi in zip(y, p, w, strict=True) if yi == pi) / sum(w)
    wrong = sum(wi * sum(a != b for a, b in zip(yi, pi, strict=True)) for yi, pi, wi in zip(y, p, w, strict=True))
    tp = [sum(wi for yi, pi, wi in zip(y, p, w, strict=True) if yi[j] and pi[j]) for j in range(k)]
    for backend in BACKENDS:
        ya, pa = np.array(y), np.array(p)
        if k == 1:  # one column is a binary target, not an indicator matrix
            continue
        assert cm.accuracy_score(ya, pa, sample_weight=w, backend=backend) == pytest.approx(exact)
        assert cm.hamming_loss(ya, pa, sample_weight=w, backend=backend) == pytest.approx(wrong / (sum(w) * k))
        m = cm.multilabel_confusion_matrix(ya, pa, sample_weight=np.array(w, float), backend=backend)
        assert m[:, 1, 1].tolist() == tp


def test_backends_agree_at_scale() -> None:
    if len(BACKENDS) < 2:
        pytest.skip("the compiled core is not built")
    rng = np.random.default_rng(9)
    y = rng.random((300_000, 9)) < 0.2
    p = rng.random((300_000, 9)) < 0.2
    w = rng.random(300_000)
    a = cm.precision_recall_fscore_support(y, p, sample_weight=w, backend="rust")
    b = cm.precision_recall_fscore_support(y, p, sample_weight=w, backend="numpy")
    assert all(np.allclose(u, v, rtol=1e-12) for u, v in zip(a, b, strict=True))
    with cm.thread_limit(1):
        c = cm.precision_recall_fscore_support(y, p, sample_weight=w, backend="rust")
    assert all(np.array_equal(u, v) for u, v in zip(a, c, strict=True))


def test_errors(backend: str) -> None:
    y = np.array([[1, 0], [0, 1]])
    with pytest.raises(ValidationError, match="average='binary'"):
        cm.f1_score(y, y, backend=backend)
    with pytest.raises(ValidationError, match="not meaningful outside multilabel"):
        cm.f1_score([0, 1], [0, 1], average="samples", backend=backend)
    with pytest.raises(ValidationError, match="Samplewise metrics are not available"):
        cm.multilabel_confusion_matrix([0, 1], [0, 1], samplewise=True, backend=backend)
    with pytest.raises(ShapeError, match="one shape"):
        cm.accuracy_score(y, np.ones((2, 3)), backend=backend)
    with pytest.raises(ShapeError, match="2-D"):
        cm.accuracy_score(y, [0, 1], backend=backend)
    with pytest.raises(LabelError, match="indicator"):
        cm.hamming_loss(y, y * 2, backend=backend)
    with pytest.raises(LabelError, match=r"\[0, n labels\)"):
        cm.precision_score(y, y, labels=[0, 2], average="macro", backend=backend)

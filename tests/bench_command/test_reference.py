"""The plain-Python references of cmetrics.reference against scikit-learn and scipy, and
cmetrics (both backends) against the references: seeded random inputs with ties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn import metrics as skm

import cmetrics
from cmetrics import reference

BACKENDS = ["rust", "numpy"] if cmetrics.rust_available() else ["numpy"]


def dump(seed: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.6, y, rng.integers(0, k, n))
    logits = rng.standard_normal((n, k))
    logits[np.arange(n), p] += 2.0
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return y, p, proba


@pytest.mark.parametrize("seed", range(5))
def test_hard_references_equal_sklearn(seed: int) -> None:
    y, p, _ = dump(seed, 400, 4)
    labels = [0, 1, 2, 3]
    m = reference.confusion_matrix(y.tolist(), p.tolist(), labels)
    assert m == skm.confusion_matrix(y, p, labels=labels).tolist()
    r = reference.hard_report(m)
    prec, rec, f1, _ = skm.precision_recall_fscore_support(y, p, labels=labels, average="macro", zero_division=0)
    assert r["accuracy"] == pytest.approx(skm.accuracy_score(y, p), rel=1e-12)
    assert r["macro_precision"] == pytest.approx(prec, rel=1e-12)
    assert r["macro_recall"] == pytest.approx(rec, rel=1e-12)
    assert r["macro_f1"] == pytest.approx(f1, rel=1e-12)
    assert r["mcc"] == pytest.approx(skm.matthews_corrcoef(y, p), rel=1e-12)
    assert r["kappa"] == pytest.approx(skm.cohen_kappa_score(y, p), rel=1e-12)


def test_hard_report_of_a_one_class_matrix_is_zero_not_nan() -> None:
    r = reference.hard_report([[3, 0], [0, 0]])
    assert r["mcc"] == 0.0 and r["kappa"] == 0.0 and r["accuracy"] == 1.0


@pytest.mark.parametrize("seed", range(5))
def test_probability_references_equal_sklearn_and_numpy(seed: int) -> None:
    y, _, proba = dump(seed, 300, 3)
    labels = [0, 1, 2]
    pcm = np.zeros((3, 3))
    np.add.at(pcm, y, proba)  # an independent vectorised form
    got = np.array(reference.probabilistic_confusion_matrix(y.tolist(), proba.tolist(), labels))
    np.testing.assert_allclose(got, pcm, rtol=1e-12)
    assert reference.log_loss(y.tolist(), proba.tolist(), labels) == pytest.approx(
        skm.log_loss(y, proba, labels=labels), rel=1e-12
    )
    # ECE from its definition, vectorised: bins ((m-1)/M, m/M], edges m / M.
    conf, top = proba.max(axis=1), proba.argmax(axis=1)
    edges = np.arange(1, 16) / 15
    bins = np.searchsorted(edges, conf, side="left")
    ece = sum(abs((top[bins == b] == y[bins == b]).sum() - conf[bins == b].sum()) for b in range(15)) / len(y)
    assert reference.expected_calibration_error(y.tolist(), proba.tolist(), labels) == pytest.approx(ece, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 6)), min_size=2, max_size=60).filter(
        lambda rows: 0 < sum(p for p, _ in rows) < len(rows)
    )
)
def test_roc_auc_reference_equals_sklearn(rows: list[tuple[bool, int]]) -> None:
    positive = [p for p, _ in rows]
    score = [s / 4 for _, s in rows]
    assert reference.roc_auc(positive, score) == pytest.approx(skm.roc_auc_score(positive, score), rel=1e-12)


def test_roc_auc_reference_of_one_class_is_nan() -> None:
    assert math.isnan(reference.roc_auc([True, True], [0.1, 0.2]))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 4)), min_size=2, max_size=80))
def test_kendall_reference_equals_scipy(rows: list[tuple[int, int]]) -> None:
    x = [a for a, _ in rows]
    y = [b for _, b in rows]
    got = reference.kendall_tau(x, y)
    want = stats.kendalltau(x, y).statistic
    if math.isnan(want):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", range(3))
def test_cmetrics_equals_the_references(backend: str, seed: int) -> None:
    y, p, proba = dump(seed, 2000, 5)
    labels = list(range(5))
    lists = (y.tolist(), p.tolist(), proba.tolist())
    np.testing.assert_array_equal(
        cmetrics.confusion_matrix(y, p, labels=labels, backend=backend),
        reference.confusion_matrix(lists[0], lists[1], labels),
    )
    np.testing.assert_allclose(
        cmetrics.prob_confusion_matrix(y, proba, labels=labels, backend=backend),
        reference.probabilistic_confusion_matrix(lists[0], lists[2], labels),
        rtol=1e-12,
    )
    assert cmetrics.log_loss(y, proba, backend=backend) == pytest.approx(
        reference.log_loss(lists[0], lists[2], labels), rel=1e-12
    )
    assert cmetrics.expected_calibration_error(y, proba, backend=backend) == pytest.approx(
        reference.expected_calibration_error(lists[0], lists[2], labels), rel=1e-12
    )
    correct = (proba.argmax(axis=1) == y).tolist()
    conf = np.round(proba.max(axis=1), 2)  # ties
    assert cmetrics.roc_auc_score(correct, conf, backend=backend) == pytest.approx(
        reference.roc_auc(correct, conf.tolist()), rel=1e-12
    )
    x = np.round(proba[:, 0], 1)
    assert cmetrics.kendall_tau(x, conf, backend=backend) == pytest.approx(
        reference.kendall_tau(x.tolist(), conf.tolist()), rel=1e-12
    )

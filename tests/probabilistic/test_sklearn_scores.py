"""``brier_score_loss``, ``d2_brier_score``, ``d2_log_loss_score``, ``hinge_loss`` and
``class_likelihood_ratios`` against scikit-learn, on both backends."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from sklearn import metrics as sk

import cmetrics as cm
from cmetrics.exceptions import ProbabilityError, ShapeError, ValidationError


def proba(seed: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, k, n), rng.dirichlet(np.ones(k), n), rng.random(n)


@pytest.mark.parametrize("k", [2, 3, 6])
@pytest.mark.parametrize("weighted", [False, True])
def test_brier_and_d2_match_sklearn(backend: str, k: int, weighted: bool) -> None:
    y, p, w = proba(k, 500, k)
    sw = w if weighted else None
    for half in ["auto", True, False]:
        got = cm.brier_score_loss(y, p, sample_weight=sw, scale_by_half=half, backend=backend)  # type: ignore[arg-type]
        assert got == pytest.approx(sk.brier_score_loss(y, p, sample_weight=sw, scale_by_half=half), rel=1e-12)
    got = cm.d2_brier_score(y, p, sample_weight=sw, backend=backend)
    assert got == pytest.approx(sk.d2_brier_score(y, p, sample_weight=sw), rel=1e-12)
    got = cm.d2_log_loss_score(y, p, sample_weight=sw, backend=backend)
    assert got == pytest.approx(sk.d2_log_loss_score(y, p, sample_weight=sw), rel=1e-12)


def test_binary_probability_of_the_positive_class(backend: str) -> None:
    rng = np.random.default_rng(1)
    y, q, w = rng.integers(0, 2, 300), rng.random(300), rng.random(300)
    names = np.array(["no", "yes"])[y]
    for half in ["auto", True, False]:
        got = cm.brier_score_loss(y, q, sample_weight=w, scale_by_half=half, backend=backend)  # type: ignore[arg-type]
        assert got == pytest.approx(sk.brier_score_loss(y, q, sample_weight=w, scale_by_half=half), rel=1e-12)
    got = cm.brier_score_loss(names, q, pos_label="yes", backend=backend)
    assert got == pytest.approx(sk.brier_score_loss(names, q, pos_label="yes"), rel=1e-12)
    assert cm.d2_brier_score(y, q, sample_weight=w, backend=backend) == pytest.approx(
        sk.d2_brier_score(y, q, sample_weight=w), rel=1e-12
    )
    assert cm.d2_log_loss_score(y, q, backend=backend) == pytest.approx(sk.d2_log_loss_score(y, q), rel=1e-12)
    with pytest.raises(ProbabilityError, match="not a probability"):
        cm.brier_score_loss(y, q + 1, backend=backend)


def test_d2_with_fewer_than_two_samples_is_nan(backend: str) -> None:
    with pytest.warns(cm.UndefinedMetricWarning, match="two samples"):
        assert np.isnan(cm.d2_brier_score([1], [0.3], backend=backend))
    with pytest.warns(cm.UndefinedMetricWarning, match="two samples"):
        assert np.isnan(cm.d2_log_loss_score([1], [[0.7, 0.3]], backend=backend))


@pytest.mark.parametrize("k", [2, 3, 5])
def test_hinge_loss_matches_sklearn(backend: str, k: int) -> None:
    rng = np.random.default_rng(k)
    y = rng.integers(0, k, 400)
    d = rng.normal(size=400) if k == 2 else rng.normal(size=(400, k))
    w = rng.random(400)
    for sw in [None, w]:
        got = cm.hinge_loss(y, d, sample_weight=sw, backend=backend)
        assert got == pytest.approx(sk.hinge_loss(y, d, sample_weight=sw), rel=1e-12)
    if k > 2:
        y3 = np.minimum(y, k - 2)  # the last class absent: labels= names it
        labels = list(range(k))
        assert cm.hinge_loss(y3, d, labels=labels, backend=backend) == pytest.approx(
            sk.hinge_loss(y3, d, labels=labels), rel=1e-12
        )
        with pytest.raises(ShapeError, match="labels"):
            cm.hinge_loss(y3, d, backend=backend)


CASES: list[tuple[list[int], list[int]]] = [
    ([0, 1, 0, 1, 0], [1, 1, 0, 0, 0]),
    ([0, 0, 0], [0, 1, 0]),
    ([1, 1, 0], [1, 1, 1]),
    ([0, 1, 1], [0, 1, 1]),
]


@pytest.mark.parametrize(("y_true", "y_pred"), CASES)
@pytest.mark.parametrize("replace", [np.nan, 1.0, {"LR+": 2.0, "LR-": 0.5}])
def test_class_likelihood_ratios_match_sklearn(backend: str, y_true: Any, y_pred: Any, replace: Any) -> None:
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        got = cm.class_likelihood_ratios(y_true, y_pred, labels=[0, 1], replace_undefined_by=replace, backend=backend)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        want = sk.class_likelihood_ratios(y_true, y_pred, labels=[0, 1], replace_undefined_by=replace)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # the same undefined-ratio warnings (scikit-learn also leaks numpy's RuntimeWarnings; cmetrics does not)
    undefined = [w for w in theirs if w.category.__name__ == "UndefinedMetricWarning"]
    assert [w.category.__name__ for w in ours] == [w.category.__name__ for w in undefined]


def test_class_likelihood_ratios_weighted_and_errors(backend: str) -> None:
    rng = np.random.default_rng(3)
    y, p, w = rng.integers(0, 2, 200), rng.integers(0, 2, 200), rng.random(200)
    got = cm.class_likelihood_ratios(y, p, sample_weight=w, backend=backend)
    np.testing.assert_allclose(got, sk.class_likelihood_ratios(y, p, sample_weight=w), rtol=1e-12)
    with pytest.raises(ValidationError, match="binary"):
        cm.class_likelihood_ratios([0, 1, 2], [0, 1, 2], backend=backend)
    with pytest.raises(ValidationError, match="replace_undefined_by"):
        cm.class_likelihood_ratios(y, p, replace_undefined_by={"LR+": 0.5, "LR-": 0.5}, backend=backend)

"""Multilabel ranking metrics against scikit-learn (seeded data with ties, weights, row edge
cases) and against plain-Python loops, on both backends."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as sk

import cmetrics as cm
from cmetrics.exceptions import LabelError, ShapeError, ValidationError
from tests.conftest import BACKENDS

SET_METRICS = ["coverage_error", "label_ranking_average_precision_score", "label_ranking_loss"]


def indicator_data(seed: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (rng.random((n, k)) < 0.3).astype(np.int64)
    y[0], y[1] = 0, 1  # a row with no true label and a row with only true labels
    s = np.round(rng.random((n, k)), 1)  # ties
    return y, s, rng.random(n)


@pytest.mark.parametrize("name", SET_METRICS)
@pytest.mark.parametrize("shape", [(400, 5), (60, 2), (900, 17)])
@pytest.mark.parametrize("weighted", [False, True])
def test_set_metrics_match_sklearn(backend: str, name: str, shape: tuple[int, int], weighted: bool) -> None:
    y, s, w = indicator_data(shape[0] + shape[1], *shape)
    sw = w if weighted else None
    got = getattr(cm, name)(y, s, sample_weight=sw, backend=backend)
    assert got == pytest.approx(getattr(sk, name)(y, s, sample_weight=sw), rel=1e-12, abs=1e-14)


def plain_lrap(y: list[list[int]], s: list[list[float]]) -> float:
    """LRAP by loops over rows and labels (the definition, no numpy)."""
    total = 0.0
    for yr, sr in zip(y, s, strict=True):
        true = [j for j, v in enumerate(yr) if v]
        if not true or len(true) == len(yr):
            total += 1.0
            continue
        parts = []
        for j in true:
            above = [i for i in range(len(sr)) if sr[i] >= sr[j]]
            parts.append(sum(1 for i in above if yr[i]) / len(above))
        total += sum(parts) / len(parts)
    return total / len(y)


def plain_ranking_loss(y: list[list[int]], s: list[list[float]]) -> float:
    total = 0.0
    for yr, sr in zip(y, s, strict=True):
        true = [j for j, v in enumerate(yr) if v]
        false = [j for j, v in enumerate(yr) if not v]
        if true and false:
            total += sum(1 for i in true for j in false if sr[i] <= sr[j]) / (len(true) * len(false))
    return total / len(y)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_set_metrics_match_plain_loops(data: st.DataObject) -> None:
    n, k = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 6))
    y = [data.draw(st.lists(st.integers(0, 1), min_size=k, max_size=k)) for _ in range(n)]
    s = [data.draw(st.lists(st.integers(0, 3), min_size=k, max_size=k)) for _ in range(n)]
    sf = [[v / 3 for v in row] for row in s]
    for backend in BACKENDS:
        assert cm.label_ranking_average_precision_score(y, sf, backend=backend) == pytest.approx(plain_lrap(y, sf))
        assert cm.label_ranking_loss(y, sf, backend=backend) == pytest.approx(plain_ranking_loss(y, sf))


@pytest.mark.parametrize("k", [None, 1, 3, 7])
@pytest.mark.parametrize("ignore_ties", [False, True])
def test_dcg_and_ndcg_match_sklearn(backend: str, k: Any, ignore_ties: bool) -> None:
    rng = np.random.default_rng(4)
    n, m = 300, 7
    relevance = rng.integers(0, 4, (n, m)).astype(np.float64)
    relevance[0] = 0  # no relevant document: NDCG 0
    # sklearn breaks ties by numpy's default sort when ignore_ties=True: distinct scores there
    s = rng.random((n, m)) if ignore_ties else np.round(rng.random((n, m)), 1)
    w = rng.random(n)
    for sw in [None, w]:
        got = cm.dcg_score(relevance, s, k=k, sample_weight=sw, ignore_ties=ignore_ties, backend=backend)
        assert got == pytest.approx(sk.dcg_score(relevance, s, k=k, sample_weight=sw, ignore_ties=ignore_ties))
        got = cm.ndcg_score(relevance, s, k=k, sample_weight=sw, ignore_ties=ignore_ties, backend=backend)
        assert got == pytest.approx(sk.ndcg_score(relevance, s, k=k, sample_weight=sw, ignore_ties=ignore_ties))
    got = cm.dcg_score(relevance, s, k=k, log_base=10, ignore_ties=ignore_ties, backend=backend)
    assert got == pytest.approx(sk.dcg_score(relevance, s, k=k, log_base=10, ignore_ties=ignore_ties))


def test_tie_averaged_dcg_by_hand() -> None:
    # Scores tie at positions 0 and 1: both get the mean gain (3 + 1) / 2 over discounts 1 + 1/log2(3).
    got = cm.dcg_score([[3, 1, 0]], [[0.5, 0.5, 0.1]])
    assert got == pytest.approx(2 * (1 + 1 / math.log2(3)))


def test_errors(backend: str) -> None:
    with pytest.raises(ShapeError, match="different shapes"):
        cm.coverage_error([[1, 0]], [[0.1, 0.2, 0.3]], backend=backend)
    with pytest.raises(LabelError, match="indicator"):
        cm.label_ranking_loss([[2, 0]], [[0.1, 0.2]], backend=backend)
    with pytest.raises(LabelError, match="negative"):
        cm.ndcg_score([[-1, 2]], [[0.1, 0.2]], backend=backend)
    with pytest.raises(ShapeError, match="more than 1 document"):
        cm.ndcg_score([[1], [2]], [[0.1], [0.2]], backend=backend)
    with pytest.raises(ShapeError, match="formats are supported"):
        cm.dcg_score([1, 2], [0.1, 0.2], backend=backend)
    with pytest.raises(ValidationError, match="k must be"):
        cm.dcg_score([[1, 2]], [[0.1, 0.2]], k=0, backend=backend)
    with pytest.raises(ValidationError, match="log_base"):
        cm.dcg_score([[1, 2]], [[0.1, 0.2]], log_base=1, backend=backend)

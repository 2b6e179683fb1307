"""Multiclass ranking and threshold curves at n = 10^7 against scikit-learn and polars-ds
(the fastest Rust-backed peer with multiclass AUROC), ratios in one run.

Data: the session's K = 10 float32 softmax probabilities (``benches/conftest.py``: 70% of the
top labels correct, the rest uniform over the wrong classes) for one-vs-rest AUROC; for the
curves, 10^7 float32 scores uniform in [0, 1) with a 30% positive rate (about 8.3 million
distinct values, so the curves have millions of points).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import sklearn.metrics as skm

import cmetrics
from benches.conftest import K, N, record


@pytest.fixture(scope="module")
def curve_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(12)
    return rng.random(N) < 0.3, rng.random(N).astype(np.float32)


def _ovr(y: np.ndarray, p: np.ndarray) -> float:
    return cmetrics.roc_auc_score(y, p, multi_class="ovr", average="macro")


def test_cmetrics_ovr_auc(benchmark: Any, labels_1e7: Any, proba_1e7: np.ndarray) -> None:
    benchmark.group = "multiclass AUROC (ovr, macro) 1e7 x 10"
    y = labels_1e7[0]
    got = benchmark.pedantic(_ovr, args=(y, proba_1e7), rounds=3, iterations=1, warmup_rounds=1)
    n = 100_000
    want = skm.roc_auc_score(y[:n], proba_1e7[:n], multi_class="ovr", average="macro")
    assert abs(_ovr(y[:n], proba_1e7[:n]) - want) < 1e-12
    assert 0.5 < got <= 1
    record("cmetrics_ovr_auc", benchmark)


def test_sklearn_ovr_auc(benchmark: Any, labels_1e7: Any, proba_1e7: np.ndarray) -> None:
    benchmark.group = "multiclass AUROC (ovr, macro) 1e7 x 10"
    benchmark.pedantic(
        skm.roc_auc_score,
        args=(labels_1e7[0], proba_1e7),
        kwargs={"multi_class": "ovr", "average": "macro"},
        rounds=1,
        iterations=1,
    )
    record("sklearn_ovr_auc", benchmark)


def test_polars_ds_ovr_auc(benchmark: Any, labels_1e7: Any, proba_1e7: np.ndarray) -> None:
    pl = pytest.importorskip("polars")
    pds = pytest.importorskip("polars_ds")
    benchmark.group = "multiclass AUROC (ovr, macro) 1e7 x 10"
    # polars-ds reads the probabilities from a list column (its documented input); building
    # the frame is not timed.
    frame = pl.DataFrame({"y": labels_1e7[0], "p": proba_1e7}).with_columns(pl.col("p").arr.to_list())

    def run() -> float:
        return float(frame.select(pds.query_multi_roc_auc("y", "p", n_classes=K, strategy="macro")).item())

    got = benchmark.pedantic(run, rounds=1, iterations=1)
    assert abs(got - _ovr(labels_1e7[0], proba_1e7)) < 1e-6
    record("polars_ds_ovr_auc", benchmark)


@pytest.mark.parametrize("name", ["roc_curve", "precision_recall_curve"])
def test_cmetrics_curve(benchmark: Any, curve_data: Any, name: str) -> None:
    benchmark.group = f"{name} 1e7 float32"
    fn = getattr(cmetrics, name)
    got = benchmark.pedantic(fn, args=curve_data, rounds=3, iterations=1, warmup_rounds=1)
    n = 100_000
    small = (curve_data[0][:n], curve_data[1][:n])
    assert all(np.allclose(a, b) for a, b in zip(fn(*small), getattr(skm, name)(*small), strict=True))
    assert got[0].shape[0] > 2
    record(f"cmetrics_{name}", benchmark)


@pytest.mark.parametrize("name", ["roc_curve", "precision_recall_curve"])
def test_sklearn_curve(benchmark: Any, curve_data: Any, name: str) -> None:
    benchmark.group = f"{name} 1e7 float32"
    benchmark.pedantic(getattr(skm, name), args=curve_data, rounds=1, iterations=1)
    record(f"sklearn_{name}", benchmark)


@pytest.mark.parametrize("mode", ["off", "exact", "approximate"])
def test_evaluate_class_ranking(benchmark: Any, labels_1e7: Any, proba_1e7: np.ndarray, mode: str) -> None:
    """``evaluate`` with the class-ranking metrics (one-vs-rest AUROC / AP, top-k) against
    ``ranking="off"`` on the same 10^7 x 10 float32 probabilities."""
    benchmark.group = "evaluate 1e7 x 10, ranking modes"
    y = labels_1e7[0]
    report = benchmark.pedantic(
        cmetrics.evaluate, args=(y,), kwargs={"y_proba": proba_1e7, "ranking": mode}, rounds=3, iterations=1
    )
    assert ("roc_auc_ovr" in report.metrics) == (mode != "off")
    record(f"evaluate_ranking_{mode}", benchmark)

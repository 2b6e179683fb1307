"""The sorting-bound kernels on the hard inputs, against the fastest peers, ratios in one run
(n = 10^7): Kendall's tau with one continuous vector (the other with 1,001 distinct values) and
with two continuous vectors, binary AUROC / AP / refinement of continuous float64 scores, and
the cost of the exact confidence ranking inside ``evaluate`` (10^7 x 10 float32)."""

from __future__ import annotations

from importlib.util import find_spec
from typing import Any

import numpy as np
import pytest
import scipy.stats
import sklearn.metrics as skm

import cmetrics
from benches.conftest import EXTRA, K, N, record

HAS_PDS = find_spec("polars_ds") is not None
HAS_SCORS = find_spec("scors") is not None


@pytest.fixture(scope="module")
def one_sided_ties() -> tuple[np.ndarray, np.ndarray]:
    """x continuous (normal), y = x + noise rounded to 1,001 values."""
    rng = np.random.default_rng(14)
    x = rng.standard_normal(N)
    y = np.round(np.clip(x + rng.standard_normal(N), -5.0, 5.0) * 100.0)
    return x, y


@pytest.fixture(scope="module")
def no_ties() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(15)
    x = rng.standard_normal(N)
    return x, x + rng.standard_normal(N)


@pytest.fixture(scope="module")
def continuous_scores() -> tuple[np.ndarray, np.ndarray]:
    """30% positives, float64 scores N(0, 1) shifted by 1 for positives: no ties."""
    rng = np.random.default_rng(16)
    y = rng.random(N) < 0.3
    return y, rng.standard_normal(N) + y


KENDALL = {"one_sided_ties": "one_sided_ties", "no_ties": "no_ties"}


@pytest.mark.parametrize("case", list(KENDALL))
def test_kendall_cmetrics(benchmark: Any, case: str, request: pytest.FixtureRequest) -> None:
    x, y = request.getfixturevalue(case)
    benchmark.group = f"Kendall tau-b 1e7, {case}"
    got = benchmark.pedantic(cmetrics.kendall_tau, args=(x, y), rounds=3, iterations=1)
    n = 100_000
    assert abs(cmetrics.kendall_tau(x[:n], y[:n]) - scipy.stats.kendalltau(x[:n], y[:n]).statistic) < 1e-12
    assert -1 <= got <= 1
    record(f"cmetrics_kendall_{case}", benchmark)


@pytest.mark.parametrize("case", list(KENDALL))
def test_kendall_scipy(benchmark: Any, case: str, request: pytest.FixtureRequest) -> None:
    x, y = request.getfixturevalue(case)
    benchmark.group = f"Kendall tau-b 1e7, {case}"
    want = benchmark.pedantic(scipy.stats.kendalltau, args=(x, y), rounds=1, iterations=1).statistic
    assert abs(cmetrics.kendall_tau(x, y) - want) < 1e-12
    record(f"scipy_kendall_{case}", benchmark)


@pytest.mark.skipif(not HAS_PDS, reason="polars-ds is not installed (pip install '.[bench]')")
@pytest.mark.parametrize("case", list(KENDALL))
def test_kendall_polars_ds(benchmark: Any, case: str, request: pytest.FixtureRequest) -> None:
    import polars as pl
    import polars_ds as pds

    x, y = request.getfixturevalue(case)
    df = pl.DataFrame({"x": x, "y": y})  # built untimed
    benchmark.group = f"Kendall tau-b 1e7, {case}"
    want = benchmark.pedantic(lambda: df.select(pds.kendall_tau("x", "y")).item(), rounds=1, iterations=1)
    assert abs(cmetrics.kendall_tau(x, y) - want) < 1e-9
    record(f"polars_ds_kendall_{case}", benchmark)


BINARY = {
    "roc_auc": (cmetrics.roc_auc_score, skm.roc_auc_score, "roc_auc"),
    "average_precision": (cmetrics.average_precision_score, skm.average_precision_score, "average_precision"),
    "refinement": (cmetrics.refinement, skm.roc_auc_score, "roc_auc"),
}


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_cmetrics(benchmark: Any, continuous_scores: Any, name: str) -> None:
    ours, theirs, _ = BINARY[name]
    benchmark.group = f"binary {name} 1e7 float64"
    got = benchmark.pedantic(ours, args=continuous_scores, rounds=5, iterations=1, warmup_rounds=1)
    n = 200_000
    y, s = continuous_scores
    assert abs(ours(y[:n], s[:n]) - theirs(y[:n], s[:n])) < 1e-12
    assert 0 <= got <= 1
    record(f"cmetrics_binary_{name}", benchmark)


@pytest.mark.parametrize("name", ["roc_auc", "average_precision"])
def test_binary_sklearn(benchmark: Any, continuous_scores: Any, name: str) -> None:
    _, theirs, _ = BINARY[name]
    benchmark.group = f"binary {name} 1e7 float64"
    benchmark.pedantic(theirs, args=continuous_scores, rounds=1, iterations=1)
    record(f"sklearn_binary_{name}", benchmark)


@pytest.mark.skipif(not HAS_SCORS, reason="scors is not installed (pip install '.[bench]')")
@pytest.mark.parametrize("name", ["roc_auc", "average_precision"])
def test_binary_scors(benchmark: Any, continuous_scores: Any, name: str) -> None:
    import scors

    ours, _, attr = BINARY[name]
    y, s = continuous_scores
    benchmark.group = f"binary {name} 1e7 float64"
    want = benchmark.pedantic(getattr(scors, attr), args=(y, s), rounds=3, iterations=1)
    assert abs(ours(y, s) - want) < 1e-9
    record(f"scors_binary_{name}", benchmark)


@pytest.mark.parametrize("mode", ["off", "exact"])
def test_evaluate_confidence_ranking(benchmark: Any, labels_1e7: Any, proba_1e7: np.ndarray, mode: str) -> None:
    """``evaluate`` with the exact confidence ranking against ``ranking="off"``, the class
    ranking off in both (its cost is measured in test_bench_multiclass)."""
    benchmark.group = "evaluate 1e7 x 10, confidence ranking"
    report = benchmark.pedantic(
        cmetrics.evaluate,
        args=(labels_1e7[0],),
        kwargs={"y_proba": proba_1e7, "ranking": mode, "class_ranking": "off"},
        rounds=5,
        iterations=1,
        warmup_rounds=1,
    )
    assert report.n_classes == K
    assert ("refinement" in report.metrics) == (mode == "exact")
    record(f"evaluate_confidence_{mode}", benchmark)
    EXTRA["evaluate_confidence_rows"] = N

"""Ranking metrics at n = 10^7 (binary AUROC / refinement, Kendall tau-b)
against scikit-learn, scipy and the best numpy formulation, ratios in one run."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest
import scipy.stats
import sklearn.metrics as skm

import cmetrics
from benches.conftest import EXTRA, N, record


@pytest.fixture(scope="module")
def ranking_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(4)
    conf = rng.random(N).astype(np.float32).astype(np.float64)  # float32 confidences: many ties
    correct = rng.random(N) < conf
    return correct, conf


@pytest.fixture(scope="module")
def kendall_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    x = np.round(rng.random(N), 4)
    y = np.round(x + rng.normal(0, 0.3, N), 3)
    return x, y


@pytest.fixture(scope="module")
def kendall_distinct() -> tuple[np.ndarray, np.ndarray]:
    """Continuous data, almost no ties: the sort path (no table sweep)."""
    rng = np.random.default_rng(6)
    x = rng.random(N)
    y = x + rng.normal(0, 0.3, N)
    return x, y


def _numpy_auc(correct: np.ndarray, conf: np.ndarray) -> float:
    """Best numpy formulation: sort both sides, count with searchsorted."""
    neg = np.sort(conf[~correct])
    pos = np.sort(conf[correct])
    lo = np.searchsorted(neg, pos, "left")
    hi = np.searchsorted(neg, pos, "right")
    return float((lo.sum() + hi.sum()) / 2 / (len(pos) * len(neg)))


def test_cmetrics_refinement(benchmark: Any, ranking_data: tuple[np.ndarray, np.ndarray]) -> None:
    benchmark.group = "refinement / AUROC 1e7"
    got = benchmark.pedantic(cmetrics.refinement, args=ranking_data, rounds=5, iterations=1, warmup_rounds=1)
    n = 200_000
    assert (
        abs(
            cmetrics.refinement(ranking_data[0][:n], ranking_data[1][:n])
            - skm.roc_auc_score(ranking_data[0][:n], ranking_data[1][:n])
        )
        < 1e-12
    )
    assert 0 <= got <= 1
    record("cmetrics_refinement", benchmark)


def test_numpy_auc(benchmark: Any, ranking_data: tuple[np.ndarray, np.ndarray]) -> None:
    benchmark.group = "refinement / AUROC 1e7"
    benchmark.pedantic(_numpy_auc, args=ranking_data, rounds=2, iterations=1)
    record("numpy_auc", benchmark)


def test_sklearn_auc(benchmark: Any, ranking_data: tuple[np.ndarray, np.ndarray]) -> None:
    benchmark.group = "refinement / AUROC 1e7"
    benchmark.pedantic(skm.roc_auc_score, args=ranking_data, rounds=1, iterations=1)
    record("sklearn_auc", benchmark)


def test_cmetrics_kendall(benchmark: Any, kendall_data: tuple[np.ndarray, np.ndarray]) -> None:
    benchmark.group = "Kendall tau-b 1e7"
    benchmark.pedantic(cmetrics.kendall_tau, args=kendall_data, rounds=3, iterations=1)
    record("cmetrics_kendall", benchmark)


def test_scipy_kendall(benchmark: Any, kendall_data: tuple[np.ndarray, np.ndarray]) -> None:
    benchmark.group = "Kendall tau-b 1e7"
    want = benchmark.pedantic(scipy.stats.kendalltau, args=kendall_data, rounds=1, iterations=1).statistic
    assert abs(cmetrics.kendall_tau(*kendall_data) - want) < 1e-12
    record("scipy_kendall", benchmark)


def test_cmetrics_kendall_distinct(benchmark: Any, kendall_distinct: tuple[np.ndarray, np.ndarray]) -> None:
    benchmark.group = "Kendall tau-b 1e7, distinct values"
    benchmark.pedantic(cmetrics.kendall_tau, args=kendall_distinct, rounds=3, iterations=1)
    record("cmetrics_kendall_distinct", benchmark)


def test_scipy_kendall_distinct(benchmark: Any, kendall_distinct: tuple[np.ndarray, np.ndarray]) -> None:
    benchmark.group = "Kendall tau-b 1e7, distinct values"
    want = benchmark.pedantic(scipy.stats.kendalltau, args=kendall_distinct, rounds=1, iterations=1).statistic
    assert abs(cmetrics.kendall_tau(*kendall_distinct) - want) < 1e-12
    record("scipy_kendall_distinct", benchmark)


def _peak_extra_mib(setup: str, call: str) -> float:
    """Peak resident memory `call` adds over what `setup` built, in a fresh process."""
    code = f"""
import numpy as np, cmetrics
{setup}
import gc; gc.collect()
with open('/proc/self/clear_refs', 'w') as fh:
    fh.write('5')
before = int(open('/proc/self/status').read().split('VmRSS:')[1].split()[0])
{call}
peak = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])
print(peak - before)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.strip()) / 1024


def test_ranking_peak_memory() -> None:
    """Peak extra memory of refinement and kendall_tau: at most 3x the input."""
    setup = f"""
rng = np.random.default_rng(4)
conf = rng.random({N}).astype(np.float32).astype(np.float64)
correct = rng.random({N}) < conf
x = np.round(rng.random({N}), 4)
y = np.round(x + rng.normal(0, 0.3, {N}), 3)
"""
    ref = _peak_extra_mib(setup, "cmetrics.refinement(correct, conf)")
    ken = _peak_extra_mib(setup, "cmetrics.kendall_tau(x, y)")
    ref_in = N * 9 / 2**20  # float64 confidence + bool correctness
    ken_in = N * 16 / 2**20  # two float64 vectors
    EXTRA["refinement_peak_extra_MiB"] = ref
    EXTRA["refinement_input_MiB"] = ref_in
    EXTRA["kendall_peak_extra_MiB"] = ken
    EXTRA["kendall_input_MiB"] = ken_in
    assert ref <= 3 * ref_in + 16, f"refinement used {ref:.0f} MiB for {ref_in:.0f} MiB of input"
    assert ken <= 3 * ken_in + 16, f"kendall_tau used {ken:.0f} MiB for {ken_in:.0f} MiB of input"

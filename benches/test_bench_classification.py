"""Hard-label benchmarks at n = 10^7, K = 10, int32 labels.

Run: ``pytest benches --benchmark-enable -p no:cacheprovider`` (see benches/README.md).
Ratios against numpy, scikit-learn and the memory-bandwidth floor come from
this same run and are printed at the end and saved to ``benches/results.json``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import sklearn.metrics as skm

import cmetrics
from benches.conftest import EXTRA, K, N, read_probe, record
from cmetrics._base.aliases import Backend

pytestmark = pytest.mark.skipif(not cmetrics.rust_available(), reason="benchmarks measure the Rust backend")


_EVICT = np.ones(1 << 26, dtype=np.uint64)  # 512 MiB: more than any last-level cache here


def cold() -> None:
    """Round setup: stream through 512 MiB so the inputs come from DRAM, as they
    do when a dump is scored once (this machine's L3 is large enough to keep two
    40 MB label arrays warm between rounds otherwise)."""
    read_probe(_EVICT)


def test_read_bandwidth(benchmark: Any) -> None:
    """The floor: this machine's memory read bandwidth, measured now with the
    same number of threads as the kernels (a sum over 512 MiB, one slice per core). A probe
    over only 80 MB (which can stay in L3) is recorded beside it."""
    benchmark.group = "bandwidth"
    total = benchmark.pedantic(read_probe, args=(_EVICT,), rounds=15, iterations=1, warmup_rounds=2)
    assert total == _EVICT.size
    if getattr(benchmark, "stats", None) is None:
        return  # smoke-test mode: nothing was timed
    bw = _EVICT.nbytes / benchmark.stats.stats.min
    import time

    small = np.ones(N, dtype=np.uint64)
    best = min((lambda t0: (read_probe(small), time.perf_counter() - t0)[1])(time.perf_counter()) for _ in range(20))
    EXTRA["read_bandwidth_GBps"] = {"dram_512MiB": bw / 1e9, "l3_resident_80MB": small.nbytes / best / 1e9}
    EXTRA["floor_seconds"] = (2 * 4 * N) / bw  # two int32 label arrays read once from memory
    record("read_probe", benchmark)


def test_cmetrics_confusion(benchmark: Any, labels_1e7: tuple[np.ndarray, np.ndarray]) -> None:
    y, p = labels_1e7
    benchmark.group = "confusion matrix 1e7 x K=10"
    result = benchmark.pedantic(
        cmetrics.confusion_matrix, args=(y, p), setup=cold, rounds=30, iterations=1, warmup_rounds=3
    )
    benchmark.extra_info["matches_bincount"] = bool(
        np.array_equal(result.ravel(), np.bincount(K * y + p, minlength=K * K))
    )
    assert benchmark.extra_info["matches_bincount"]
    record("cmetrics_confusion", benchmark)


def test_numpy_bincount(benchmark: Any, labels_1e7: tuple[np.ndarray, np.ndarray]) -> None:
    y, p = labels_1e7
    benchmark.group = "confusion matrix 1e7 x K=10"
    benchmark.pedantic(
        lambda: np.bincount(K * y + p, minlength=K * K), setup=cold, rounds=7, iterations=1, warmup_rounds=1
    )
    record("numpy_bincount", benchmark)


def test_sklearn_confusion(benchmark: Any, labels_1e7: tuple[np.ndarray, np.ndarray]) -> None:
    y, p = labels_1e7
    benchmark.group = "confusion matrix 1e7 x K=10"
    benchmark.pedantic(skm.confusion_matrix, args=(y, p), rounds=3, iterations=1, warmup_rounds=0)
    record("sklearn_confusion", benchmark)


def cmetrics_report(y: np.ndarray, p: np.ndarray, backend: Backend = "auto") -> cmetrics.Report:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cmetrics.ConfusionMatrix.from_predictions(y, p, backend=backend).report()


def sklearn_report(y: np.ndarray, p: np.ndarray) -> dict[str, Any]:
    """The same set of numbers with scikit-learn calls; what sklearn lacks
    (informedness, markedness, per-class J/MK, NIT, EMA) is derived with numpy
    from one more sklearn confusion matrix, as a user would."""
    out: dict[str, Any] = {}
    out["accuracy"] = skm.accuracy_score(y, p)
    out["balanced_accuracy"] = skm.balanced_accuracy_score(y, p)
    out["balanced_accuracy_adjusted"] = skm.balanced_accuracy_score(y, p, adjusted=True)
    out["matthews_corrcoef"] = skm.matthews_corrcoef(y, p)
    out["cohen_kappa"] = skm.cohen_kappa_score(y, p)
    out["per_class"] = skm.precision_recall_fscore_support(y, p)
    for avg in ("macro", "weighted", "micro"):
        out[avg] = skm.precision_recall_fscore_support(y, p, average=avg)
    out["mutual_information_nats"] = skm.mutual_info_score(y, p)
    c = skm.confusion_matrix(y, p).astype(float)
    n, m, tp, total = c.sum(1), c.sum(0), np.diag(c), c.sum()
    fp, fn = m - tp, n - tp
    j = tp / n - fp / (total - n)
    mk = tp / m - fn / (total - m)
    out["informedness"] = float(np.sum(m / total * j))
    out["markedness"] = float(np.sum(n / total * mk))
    out["nit"] = np.exp(out["mutual_information_nats"]) / len(n)
    return out


def test_cmetrics_report(benchmark: Any, labels_1e7: tuple[np.ndarray, np.ndarray]) -> None:
    y, p = labels_1e7
    benchmark.group = "full hard-label report 1e7 x K=10"
    ours = benchmark.pedantic(cmetrics_report, args=(y, p), rounds=20, iterations=1, warmup_rounds=2)
    record("cmetrics_report", benchmark)
    ref = sklearn_report(y, p)
    ok = (
        abs(ours.matthews_corrcoef - ref["matthews_corrcoef"]) < 1e-12
        and abs(ours.cohen_kappa - ref["cohen_kappa"]) < 1e-12
        and abs(ours.f1_macro - ref["macro"][2]) < 1e-12
        and abs(ours.informedness - ref["informedness"]) < 1e-12
        and abs(ours.normalized_information_transfer - ref["nit"]) < 1e-12
    )
    benchmark.extra_info["matches_sklearn"] = ok
    assert ok


def test_numpy_backend_report(benchmark: Any, labels_1e7: tuple[np.ndarray, np.ndarray]) -> None:
    y, p = labels_1e7
    benchmark.group = "full hard-label report 1e7 x K=10"
    benchmark.pedantic(cmetrics_report, args=(y, p, "numpy"), rounds=3, iterations=1, warmup_rounds=1)
    record("numpy_backend_report", benchmark)


def test_sklearn_report(benchmark: Any, labels_1e7: tuple[np.ndarray, np.ndarray]) -> None:
    y, p = labels_1e7
    benchmark.group = "full hard-label report 1e7 x K=10"
    benchmark.pedantic(sklearn_report, args=(y, p), rounds=1, iterations=1, warmup_rounds=0)
    record("sklearn_report", benchmark)

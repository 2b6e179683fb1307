"""Probabilistic benchmarks at n = 10^7, K = 10, float32 probabilities.

Ratios come from this run: ``prob_confusion_matrix`` against the read-bandwidth
floor of the matrix (measured now, on a buffer of the same size) and the best
numpy formulation; ``evaluate`` against the same set computed with scikit-learn
calls and with hand-written numpy; peak extra memory of ``evaluate``.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from typing import Any

import numpy as np
import pytest
import sklearn.metrics as skm

import cmetrics
from benches.conftest import EXTRA, K, N, read_probe, record

pytestmark = pytest.mark.skipif(not cmetrics.rust_available(), reason="benchmarks measure the Rust backend")


def test_proba_read_bandwidth(benchmark: Any, proba_1e7: np.ndarray, labels_1e7: tuple[np.ndarray, np.ndarray]) -> None:
    """Read bandwidth over as many bytes as the pCM kernel reads (P plus y)."""
    nbytes = proba_1e7.nbytes + labels_1e7[0].nbytes
    words = np.ones(nbytes // 8, dtype=np.uint64)
    benchmark.group = "bandwidth"
    total = benchmark.pedantic(read_probe, args=(words,), rounds=10, iterations=1, warmup_rounds=2)
    assert total == words.size
    if getattr(benchmark, "stats", None) is None:
        return
    bw = words.nbytes / benchmark.stats.stats.min
    EXTRA["proba_read_bandwidth_GBps"] = bw / 1e9
    EXTRA["proba_floor_seconds"] = nbytes / bw


def test_cmetrics_pcm(benchmark: Any, proba_1e7: np.ndarray, labels_1e7: tuple[np.ndarray, np.ndarray]) -> None:
    y = labels_1e7[0]
    benchmark.group = "probabilistic confusion matrix 1e7 x K=10 f32"
    out = benchmark.pedantic(
        cmetrics.prob_confusion_matrix,
        args=(y, proba_1e7),
        kwargs={"labels": list(range(K))},
        rounds=10,
        iterations=1,
        warmup_rounds=2,
    )
    ref = np.stack([np.bincount(y, weights=proba_1e7[:, j], minlength=K) for j in range(K)], axis=1)
    benchmark.extra_info["matches_numpy"] = bool(np.allclose(out, ref, rtol=1e-9))
    assert benchmark.extra_info["matches_numpy"]
    record("cmetrics_pcm", benchmark)


def test_numpy_pcm_bincount(benchmark: Any, proba_1e7: np.ndarray, labels_1e7: tuple[np.ndarray, np.ndarray]) -> None:
    y = labels_1e7[0]
    benchmark.group = "probabilistic confusion matrix 1e7 x K=10 f32"
    benchmark.pedantic(
        lambda: [np.bincount(y, weights=proba_1e7[:, j], minlength=K) for j in range(K)],
        rounds=2,
        iterations=1,
        warmup_rounds=0,
    )
    record("numpy_pcm_bincount", benchmark)


def test_numpy_pcm_sparse(benchmark: Any, proba_1e7: np.ndarray, labels_1e7: tuple[np.ndarray, np.ndarray]) -> None:
    sp = pytest.importorskip("scipy.sparse")
    y = labels_1e7[0]

    def run() -> Any:
        ind = sp.csr_matrix((np.ones(N, np.float32), (y, np.arange(N))), shape=(K, N))
        return ind @ proba_1e7

    benchmark.group = "probabilistic confusion matrix 1e7 x K=10 f32"
    benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=1)
    record("numpy_pcm_sparse", benchmark)


def test_numpy_pcm_onehot(benchmark: Any, proba_1e7: np.ndarray, labels_1e7: tuple[np.ndarray, np.ndarray]) -> None:
    y = labels_1e7[0]
    benchmark.group = "probabilistic confusion matrix 1e7 x K=10 f32"
    eye = np.eye(K, dtype=np.float32)
    benchmark.pedantic(lambda: eye[y].T @ proba_1e7, rounds=2, iterations=1, warmup_rounds=0)
    record("numpy_pcm_onehot", benchmark)


def test_cmetrics_evaluate(benchmark: Any, proba_1e7: np.ndarray, labels_1e7: tuple[np.ndarray, np.ndarray]) -> None:
    y = labels_1e7[0]
    benchmark.group = "evaluate 1e7 x K=10 f32"
    rep = benchmark.pedantic(
        cmetrics.evaluate,
        args=(y,),
        kwargs={"y_proba": proba_1e7, "labels": list(range(K)), "ranking": False},
        rounds=8,
        iterations=1,
        warmup_rounds=1,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # float32 rows vs sklearn's float64 sum tolerance
        ref_ll = skm.log_loss(y[:200_000], proba_1e7[:200_000].astype(np.float64), labels=list(range(K)))
    small = cmetrics.evaluate(y[:200_000], y_proba=proba_1e7[:200_000], labels=list(range(K)))
    benchmark.extra_info["matches_sklearn"] = bool(abs(small.log_loss - ref_ll) < 1e-9)
    assert benchmark.extra_info["matches_sklearn"]
    assert rep.n_samples == N
    record("cmetrics_evaluate", benchmark)


def sklearn_proba_set(y: np.ndarray, p: np.ndarray) -> None:
    """What scikit-learn offers for the evaluate set (hard metrics of the top
    label, log loss, Brier); torchmetrics' calibration error could not be
    installed here (PyPI's Linux torch wheels pull CUDA), so it is left out,
    which only flatters the reference."""
    labels = list(range(K))
    top = p.argmax(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        skm.confusion_matrix(y, top)
        skm.accuracy_score(y, top)
        skm.balanced_accuracy_score(y, top)
        skm.precision_recall_fscore_support(y, top)
        for avg in ("macro", "weighted", "micro"):
            skm.precision_recall_fscore_support(y, top, average=avg)
        skm.matthews_corrcoef(y, top)
        skm.cohen_kappa_score(y, top)
        skm.log_loss(y, p, labels=labels)
        skm.brier_score_loss(y, p, labels=labels, scale_by_half=False)


def numpy_proba_set(y: np.ndarray, p: np.ndarray) -> dict[str, Any]:
    """The best hand-written numpy for the same accumulators, chunked so that
    float64 temporaries stay small (the fastest variant we found)."""
    out: dict[str, Any] = {
        "pcm": np.zeros((K, K)),
        "hard": np.zeros(K * K),
        "ent": 0.0,
        "brier": 0.0,
        "ll": 0.0,
        "bins": np.zeros((3, 15)),
    }
    step = 1 << 16
    for lo in range(0, len(y), step):
        b = p[lo : lo + step].astype(np.float64)
        t = y[lo : lo + step]
        r = np.arange(len(t))
        assert ((b >= 0) & (b <= 1)).all() and np.allclose(b.sum(axis=1), 1, atol=1e-5)
        top = b.argmax(axis=1)
        conf = b[r, top]
        out["hard"] += np.bincount(t * K + top, minlength=K * K)
        onehot = np.zeros((len(t), K))
        onehot[r, t] = 1
        out["pcm"] += onehot.T @ b
        with np.errstate(divide="ignore", invalid="ignore"):
            out["ent"] -= float(np.nansum(b * np.log(b)))
        pt = b[r, t]
        out["brier"] += float(np.einsum("ij,ij->", b, b) - 2 * pt.sum() + len(t))
        out["ll"] -= float(np.log(np.clip(pt, 2.2e-16, 1)).sum())
        m = np.clip(np.ceil(conf * 15), 1, 15).astype(np.int64) - 1
        out["bins"] += np.stack(
            [
                np.bincount(m, minlength=15),
                np.bincount(m, weights=conf, minlength=15),
                np.bincount(m, weights=(top == t), minlength=15),
            ]
        )
    return out


def test_sklearn_proba_set(benchmark: Any, proba_1e7: np.ndarray, labels_1e7: tuple[np.ndarray, np.ndarray]) -> None:
    y = labels_1e7[0]
    benchmark.group = "evaluate 1e7 x K=10 f32"
    benchmark.pedantic(sklearn_proba_set, args=(y, proba_1e7), rounds=1, iterations=1, warmup_rounds=0)
    record("sklearn_proba_set", benchmark)


def test_numpy_proba_set(benchmark: Any, proba_1e7: np.ndarray, labels_1e7: tuple[np.ndarray, np.ndarray]) -> None:
    y = labels_1e7[0]
    benchmark.group = "evaluate 1e7 x K=10 f32"
    benchmark.pedantic(numpy_proba_set, args=(y, proba_1e7), rounds=2, iterations=1, warmup_rounds=0)
    record("numpy_proba_set", benchmark)


def test_evaluate_peak_memory() -> None:
    """Peak resident memory added by evaluate() over its inputs, in a fresh process."""
    code = f"""
import resource, numpy as np, cmetrics
from cmetrics.cli import synthetic_dump, synthetic_proba
y, p = synthetic_dump({N}, {K}, 0)
proba = synthetic_proba(p, {K}, 0)
del p
import gc; gc.collect()
with open('/proc/self/clear_refs', 'w') as fh:
    fh.write('5')
before = int(open('/proc/self/status').read().split('VmRSS:')[1].split()[0])
cmetrics.evaluate(y, y_proba=proba, labels=list(range({K})), ranking=False)
peak = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])
print(peak - before)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    extra_kib = int(out.stdout.strip())
    EXTRA["evaluate_peak_extra_MiB"] = extra_kib / 1024
    EXTRA["proba_input_MiB"] = N * K * 4 / 2**20
    assert extra_kib / 1024 < 64, f"evaluate used {extra_kib / 1024:.0f} MiB beyond its inputs"

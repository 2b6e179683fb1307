"""Invariance properties (row order, containers, dtypes, layouts, relabelling, weights) and backend/thread parity."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cmetrics
from cmetrics import ConfusionMatrix


def data(seed: int, n: int = 2000, k: int = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.5, y, rng.integers(0, k, n))
    return y, p, rng.random(n)


def scalar_report(cm: ConfusionMatrix) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = cm.report()
    return np.array(list(r.metrics.values()))


@pytest.mark.parametrize("seed", range(5))
def test_row_order(seed: int, backend: str) -> None:
    y, p, w = data(seed)
    perm = np.random.default_rng(seed + 99).permutation(len(y))
    a = ConfusionMatrix.from_predictions(y, p, sample_weight=w, backend=backend)
    b = ConfusionMatrix.from_predictions(y[perm], p[perm], sample_weight=w[perm], backend=backend)
    assert np.array_equal(a.counts, b.counts)
    np.testing.assert_allclose(a.matrix, b.matrix, rtol=1e-12)
    np.testing.assert_allclose(scalar_report(a), scalar_report(b), rtol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_integer_weights_are_repetition_and_zero_weight_is_removal(seed: int, backend: str) -> None:
    y, p, _ = data(seed, n=500)
    reps = np.random.default_rng(seed).integers(0, 4, len(y))
    weighted = ConfusionMatrix.from_predictions(y, p, sample_weight=reps, backend=backend)
    repeated = ConfusionMatrix.from_predictions(np.repeat(y, reps), np.repeat(p, reps), backend=backend)
    # Zero-weight rows still name their labels; compare on the repeated matrix's labels.
    pos = np.searchsorted(weighted.labels, repeated.labels)
    np.testing.assert_array_equal(weighted.matrix[np.ix_(pos, pos)], repeated.matrix)
    assert weighted.accuracy() == pytest.approx(repeated.accuracy(), rel=1e-12)
    assert weighted.matthews_corrcoef() == pytest.approx(repeated.matthews_corrcoef(), rel=1e-12)
    # Scaling weights leaves normalised metrics unchanged.
    scaled = ConfusionMatrix.from_predictions(y, p, sample_weight=reps * 0.3, backend=backend)
    np.testing.assert_allclose(scalar_report(scaled), scalar_report(weighted), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("seed", range(3))
def test_relabeling_permutes_per_class_outputs(seed: int, backend: str) -> None:
    y, p, w = data(seed, k=4)
    mapping = np.array([30, 10, 40, 20])  # a consistent renaming that also reorders classes
    a = ConfusionMatrix.from_predictions(y, p, sample_weight=w, backend=backend)
    b = ConfusionMatrix.from_predictions(mapping[y], mapping[p], sample_weight=w, backend=backend)
    order = np.argsort(mapping)  # b's rows are sorted new labels
    np.testing.assert_allclose(b.matrix, a.matrix[np.ix_(order, order)], rtol=1e-12)
    np.testing.assert_allclose(scalar_report(a), scalar_report(b), rtol=1e-12, atol=1e-15)
    pa = a.precision_recall_fscore_support()[2]
    pb = b.precision_recall_fscore_support(labels=mapping)[2]
    np.testing.assert_allclose(pa, pb, rtol=1e-12)
    # Strings name the same classes.
    names = np.array(["d", "b", "a", "c"])
    s = ConfusionMatrix.from_predictions(names[y], names[p], sample_weight=w, backend=backend)
    np.testing.assert_allclose(scalar_report(s), scalar_report(a), rtol=1e-12, atol=1e-15)


def test_input_containers_and_dtypes(backend: str) -> None:
    y, p, w = data(3, n=300, k=3)
    ref = cmetrics.confusion_matrix(y, p, sample_weight=w, backend=backend)
    variants: list[tuple[Any, Any]] = [
        (y.tolist(), p.tolist()),
        (y.astype(np.int8), p.astype(np.uint16)),
        (y.astype(np.float64), p.astype(np.float32)),
        (y[:, None], p),
        (np.asfortranarray(np.stack([y, y]).T)[:, 0], p[::-1][::-1]),
        (y.astype(">i8"), p.astype(">i4")),
        (y.astype(object), p.astype(object)),
    ]
    for a, b in variants:
        np.testing.assert_array_equal(cmetrics.confusion_matrix(a, b, sample_weight=w, backend=backend), ref)
    np.testing.assert_array_equal(
        cmetrics.confusion_matrix(y, p, sample_weight=w.astype(np.float32), backend=backend),
        cmetrics.confusion_matrix(y, p, sample_weight=w.astype(np.float32).astype(np.float64), backend=backend),
    )
    b = cmetrics.confusion_matrix([True, False, True], [True, True, False], backend=backend)
    np.testing.assert_array_equal(b, [[0, 1], [1, 1]])
    cm = ConfusionMatrix.from_predictions([True, False], [True, True], backend=backend)
    assert cm.labels.tolist() == [False, True]


# Weights are 0 or in [1e-3, 10]: weights near the float epsilon make MCC and kappa
# differences of nearly equal numbers (ill-conditioned in any summation order).
WEIGHT = st.one_of(st.just(0.0), st.floats(1e-3, 10), st.integers(1, 5).map(float))


@given(st.lists(st.tuples(st.integers(-3, 6), st.integers(-3, 6), WEIGHT), min_size=1, max_size=60))
def test_backends_agree(rows: list[tuple[int, int, float]]) -> None:
    """Rust and numpy backends: counts exact, every metric within 1e-12."""
    if not cmetrics.rust_available():
        pytest.skip("needs the compiled extension")
    y = np.array([r[0] for r in rows])
    p = np.array([r[1] for r in rows])
    w = np.array([r[2] for r in rows])
    if not w.sum() > 0:
        w[0] = 1.0
    a = ConfusionMatrix.from_predictions(y, p, sample_weight=w, backend="rust")
    b = ConfusionMatrix.from_predictions(y, p, sample_weight=w, backend="numpy")
    assert np.array_equal(a.labels, b.labels)
    assert np.array_equal(a.counts, b.counts)
    np.testing.assert_allclose(a.matrix, b.matrix, rtol=1e-12)
    np.testing.assert_allclose(scalar_report(a), scalar_report(b), rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(not cmetrics.rust_available(), reason="threads only matter for the Rust backend")
def test_thread_count_is_bit_identical() -> None:
    rng = np.random.default_rng(0)
    n = 1_200_000  # above the sequential threshold (2^19)
    y = rng.integers(0, 10, n).astype(np.int32)
    p = rng.integers(0, 10, n).astype(np.int32)
    w = rng.random(n)
    results = []
    for threads in (1, 2, 3, 4, 8):
        with cmetrics.thread_limit(threads):
            m = ConfusionMatrix.from_predictions(y, p, sample_weight=w, backend="rust").matrix
        results.append(m.tobytes())
    assert len(set(results)) == 1
    env = dict(os.environ, CMETRICS_NUM_THREADS="3")
    code = "import cmetrics; print(cmetrics.get_num_threads())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "3"


def test_the_built_extension_loads_after_other_native_libraries() -> None:
    """The extension, when it was built, imports in a process that loaded numpy's, scipy's,
    scikit-learn's and pyarrow's native libraries first, and its kernels then run (its
    allocator's thread-local state must not need room in the static TLS block, which a module
    loaded late by ``dlopen`` cannot count on). A failed import would only warn and fall back to
    numpy, and the tests that need the extension would skip."""
    built = sorted(p.name for p in Path(cmetrics.__file__).parent.glob("_core*"))
    if not built:
        pytest.skip("the compiled extension is not built in this installation")
    code = """
import importlib
for name in ("numpy", "scipy.stats", "sklearn.metrics", "pyarrow.parquet", "pandas"):
    try:
        importlib.import_module(name)
    except ImportError:
        pass
import numpy as np, cmetrics
from cmetrics import _backend
assert cmetrics.rust_available(), _backend._IMPORT_ERROR
y = np.arange(3_000_000) % 2
s = (np.arange(3_000_000) % 1000) / 1000.0
print(cmetrics.roc_auc_score(y, s, backend="rust"), cmetrics.roc_auc_score(y, s, backend="numpy"))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, (built, out.stderr)
    rust, numpy = (float(x) for x in out.stdout.split())
    assert rust == pytest.approx(numpy, abs=1e-12)


@pytest.mark.skipif(not cmetrics.rust_available(), reason="needs the compiled extension")
def test_fork_after_pool_use_does_not_hang() -> None:
    code = """
import multiprocessing as mp, numpy as np, cmetrics
y = np.arange(1_200_000) % 7
def work(_):
    return int(cmetrics.confusion_matrix(y, y).trace())
with cmetrics.thread_limit(2):
    work(0)
    with mp.get_context("fork").Pool(2) as pool:
        print(pool.map(work, range(2)))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[1200000, 1200000]"

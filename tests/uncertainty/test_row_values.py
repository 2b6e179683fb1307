"""The row by row kernels of the Poisson bootstrap: each row's top label against numpy's
``argmax``, each row's contributions to a probability model's sums against their definition
in a plain loop, both backends alike, and bad arguments refused with the same class."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cmetrics._backend import resolve_backend
from cmetrics.exceptions import LabelError, LengthMismatchError, ShapeError, UnsupportedDtypeError


def _proba(n: int, k: int, seed: int) -> np.ndarray:
    """Rows of probabilities, every fifth with its two first columns tied at the top."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k), n)
    if k >= 2:
        p[::5, :2] = 0.5
        p[::5, 2:] = 0.0
    return p


@pytest.mark.parametrize("k", [1, 2, 3, 10])
@pytest.mark.parametrize("order", ["C", "F"])
def test_top_labels_are_numpy_argmax(backend: str, k: int, order: str) -> None:
    p = np.asarray(_proba(30_011, k, k), order=order)
    got = resolve_backend(backend).top_labels(p, 2)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, p.argmax(axis=1))


@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.parametrize("order", ["C", "F"])
def test_a_nan_is_the_top_label_where_argmax_puts_it(backend: str, k: int, order: str) -> None:
    p = np.full((4, k), 0.25)
    p[0, 1] = np.nan
    p[1, 0] = np.nan
    p[2, :] = np.nan
    p[3, -1] = 0.9
    p = np.asarray(p, order=order)
    got = resolve_backend(backend).top_labels(p)
    np.testing.assert_array_equal(got, p.argmax(axis=1))


@pytest.mark.parametrize("k", [3, 10])
@pytest.mark.parametrize("order", ["C", "F"])
def test_nans_across_many_blocks_of_rows(backend: str, k: int, order: str) -> None:
    """NaNs (one or several a row) and rows of -inf scattered over more rows than a block of
    the compiled kernel holds, in either layout."""
    rng = np.random.default_rng(k)
    p = _proba(40_003, k, k + 1)
    rows = rng.choice(p.shape[0], 600, replace=False)
    p[rows, rng.integers(0, k, rows.size)] = np.nan
    p[rows[:100], rng.integers(0, k, 100)] = np.nan
    p[rows[-50:]] = -np.inf
    p = np.asarray(p, order=order)
    got = resolve_backend(backend).top_labels(p, 2)
    np.testing.assert_array_equal(got, p.argmax(axis=1))


def _by_definition(t: int, row: np.ndarray, w: float) -> list[float]:
    """One row's values as the definition reads: weight, weighted probabilities, weight, log
    loss of the true class's clipped probability, and the squared distance to the one-hot row."""
    eps = float(np.finfo(np.float64).eps)
    pt = min(max(float(row[t]), eps), 1 - eps)
    brier = sum((float(v) - (1.0 if j == t else 0.0)) ** 2 for j, v in enumerate(row))
    return [w, *(float(v) * w for v in row), w, -math.log(pt) * w, brier * w]


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("order", ["C", "F"])
def test_row_values_follow_their_definition(backend: str, dtype: type, weighted: bool, order: str) -> None:
    n, k = 20_003, 4
    p = np.asarray(_proba(n, k, 3), order=order)
    p[7, :] = [1.0, 0.0, 0.0, 0.0]  # a zero probability of the true class: the clip
    rng = np.random.default_rng(4)
    y = rng.integers(0, k, n).astype(dtype)
    y[7] = 2
    w = rng.uniform(0, 3, n) if weighted else None
    got = resolve_backend(backend).proba_row_values(y, p, w, 2)
    assert got.shape == (n, k + 4) and got.dtype == np.float64
    for i in [0, 1, 5, 7, 8191, 8192, n - 1]:
        want = _by_definition(int(y[i]), p[i], 1.0 if w is None else float(w[i]))
        np.testing.assert_allclose(got[i], want, rtol=1e-13, atol=0)
    other = resolve_backend("numpy" if backend == "rust" else "rust").proba_row_values(y, p, w)
    np.testing.assert_allclose(got, other, rtol=1e-13, atol=0)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("weighted", [False, True])
def test_float32_reads_as_its_float64_widening(backend: str, order: str, weighted: bool) -> None:
    """Float32 probabilities (ties and a NaN among them) give the top labels and the rows'
    values of their float64 widening, bit for bit: the kernels widen each value as they read it,
    so a float32 model is never copied to float64 whole."""
    n, k = 20_011, 5
    narrow = np.asarray(_proba(n, k, 8), dtype=np.float32, order=order)
    narrow[11, 3] = np.nan
    wide = narrow.astype(np.float64)
    assert wide.flags.c_contiguous == (order == "C")
    rng = np.random.default_rng(9)
    y = rng.integers(0, k, n)
    w = rng.uniform(0, 2, n) if weighted else None
    be = resolve_backend(backend)
    tops = be.top_labels(narrow, 2)
    np.testing.assert_array_equal(tops, be.top_labels(wide, 2))
    np.testing.assert_array_equal(tops, narrow.argmax(axis=1))
    narrow[11, 3] = 0.5
    wide[11, 3] = 0.5
    got = be.proba_row_values(y, narrow, w, 2)
    np.testing.assert_array_equal(got.view(np.uint64), be.proba_row_values(y, wide, w, 2).view(np.uint64))


def test_bad_arguments_are_refused_alike(backend: str) -> None:
    be = resolve_backend(backend)
    p = np.array([[0.5, 0.5], [0.2, 0.8]])
    with pytest.raises(LabelError, match=r"y_true\[1\] = 2"):
        be.proba_row_values(np.array([0, 2]), p)
    with pytest.raises(LabelError, match=r"y_true\[0\] = -1"):
        be.proba_row_values(np.array([-1, 0], dtype=np.int32), p)
    with pytest.raises(LengthMismatchError, match="sample_weight"):
        be.proba_row_values(np.array([0, 1]), p, np.ones(3))
    with pytest.raises(ShapeError, match="y_proba"):
        be.proba_row_values(np.array([0, 1, 1]), p)
    with pytest.raises(ShapeError, match="y_proba"):
        be.top_labels(np.zeros((3, 0)))
    with pytest.raises(ShapeError, match="2-D"):
        be.top_labels(np.ones(4))
    with pytest.raises(UnsupportedDtypeError, match="float32 or float64"):
        be.top_labels(p.astype(np.float16))
    with pytest.raises(UnsupportedDtypeError, match="float32 or float64"):
        be.proba_row_values(np.array([0, 1]), p.astype(np.int64))

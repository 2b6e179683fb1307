"""Hard labels by group as one G x K x K table: the kernel against a plain loop and between
backends; every group's report equal to ``evaluate`` on its rows alone whatever the kinds of
group values and labels, batches, merges and bytes; the columnar summary, computed for all
groups at once, equal to the groups' own reports; reports made only when read."""

from __future__ import annotations

import math
import pickle
import warnings
from typing import Any

import numpy as np
import pytest
import sklearn.metrics as skm
from hypothesis import given, settings
from hypothesis import strategies as st

import cmetrics
from cmetrics import Evaluator
from cmetrics._backend import resolve_backend
from cmetrics._derive import replicate_metrics as rm
from cmetrics.exceptions import LengthMismatchError, LimitExceededError, WeightError
from tests.conftest import BACKENDS
from tests.streaming.test_groups import check_grouped


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    # Small groups have undefined per-class ratios: their warnings are not what is tested here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cmetrics.UndefinedMetricWarning)
        warnings.simplefilter("ignore", UserWarning)
        yield


def naive_tables(g: np.ndarray, t: np.ndarray, p: np.ndarray, w: np.ndarray | None) -> tuple[Any, ...]:
    """A plain-Python loop: every (group, true, pred) cell's count and weight."""
    groups = sorted(set(g.tolist()))
    labels = sorted(set(t.tolist()) | set(p.tolist()))
    gi = {v: i for i, v in enumerate(groups)}
    li = {v: i for i, v in enumerate(labels)}
    counts = np.zeros((len(groups), len(labels), len(labels)), dtype=np.uint64)
    sums = np.zeros(counts.shape)
    for r in range(g.shape[0]):
        cell = (gi[int(g[r])], li[int(t[r])], li[int(p[r])])
        counts[cell] += 1
        sums[cell] += 1.0 if w is None else float(w[r])
    return np.array(groups), np.array(labels), counts, sums


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 400),
    spread=st.sampled_from([3, 40, 5000]),
    weighted=st.booleans(),
)
@settings(max_examples=40, deadline=None)
def test_the_kernel_equals_a_plain_loop_on_both_backends(seed: int, n: int, spread: int, weighted: bool) -> None:
    rng = np.random.default_rng(seed)
    g = rng.integers(-spread, spread, n)
    t = rng.integers(-2, 5, n)
    p = rng.integers(0, 7, n)
    w = rng.random(n) * 10 if weighted else None
    groups, labels, counts, sums = naive_tables(g, t, p, w)
    results = []
    for backend in BACKENDS:
        got = resolve_backend(backend).grouped_confusion(g, t, p, w, max_cells=1 << 22, n_threads=2)
        assert got is not None
        assert np.array_equal(got.groups, groups) and np.array_equal(got.labels, labels)
        assert got.counts.dtype == np.uint64 and np.array_equal(got.counts, counts)
        if weighted:
            assert got.weighted is not None
            np.testing.assert_allclose(got.weighted, sums, rtol=1e-12)
        results.append(got)
    if weighted:  # the same chunks on both backends: the same bits
        assert np.array_equal(results[0].weighted, results[1].weighted)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_kernel_leaves_wide_ranges_to_the_caller_and_refuses_bad_rows(backend: str) -> None:
    k = resolve_backend(backend)
    wide = np.array([0, 2**62], dtype=np.int64)
    small = np.array([0, 1], dtype=np.int64)
    assert k.grouped_confusion(wide, small, small, max_cells=1 << 20) is None
    assert k.grouped_confusion(small, small * 5000, small, max_cells=1 << 20) is None  # labels over 4095
    extremes = np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max])
    assert k.grouped_confusion(small, extremes, extremes, max_cells=1 << 20) is None
    with pytest.raises(WeightError, match=r"sample_weight\[1\]"):
        k.grouped_confusion(small, small, small, np.array([1.0, -1.0]), max_cells=100)
    with pytest.raises(WeightError, match="beyond the float64 range"):
        k.grouped_confusion(small, small, small, np.array([1e308, 1e308]), max_cells=100)
    with pytest.raises(LengthMismatchError):
        k.grouped_confusion(small, small[:1], small, max_cells=100)


def test_a_large_table_is_counted_exactly_by_both_backends() -> None:
    """10^6 rows over 20,000 groups (the compiled kernel's bucketed path) and the guess of the
    ranges from the first rows missing a later group value (the full ranges are then found)."""
    rng = np.random.default_rng(5)
    n = 1_000_000
    g = rng.integers(0, 20_000, n)
    g[-1] = 30_000  # outside the range of the first rows, and the margin around it
    t = rng.integers(0, 10, n)
    p = np.where(rng.random(n) < 0.6, t, rng.integers(0, 10, n))
    got = [resolve_backend(b).grouped_confusion(g, t, p, max_cells=1 << 24, n_threads=2) for b in BACKENDS]
    assert got[0] is not None and got[1] is not None
    assert np.array_equal(got[0].groups, got[1].groups) and got[0].groups[-1] == 30_000
    assert np.array_equal(got[0].counts, got[1].counts)
    flat = np.bincount((np.searchsorted(got[0].groups, g) * 10 + t) * 10 + p, minlength=got[0].counts.size)
    assert np.array_equal(got[0].counts.ravel(), flat)


def data_of(seed: int, n: int, label_kind: str, group_kind: str, weighted: bool) -> tuple[dict[str, Any], Any]:
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 5, n)
    p = np.where(rng.random(n) < 0.5, t, rng.integers(0, 5, n))
    if label_kind == "str":
        names = np.array(["ant", "bee", "cat", "dog", "eel"])
        t, p = names[t], names[p]
    elif label_kind == "sparse":
        t, p = t * 10**15 - 7, p * 10**15 - 7
    raw = rng.integers(0, 6, n)
    groups: Any
    if group_kind == "int":
        groups = raw * 11 - 20
    elif group_kind == "wide":
        groups = np.array([-(2**62), 2**62, 3, 4, 5, 6])[raw]
    elif group_kind == "str":
        groups = np.array(["fr", "en", "de", "", "zz", "ünï"])[raw]
    else:
        groups = (raw % 2, np.array(["a", "b", "c"])[raw % 3])
    data = {"y_true": t, "y_pred": p, "sample_weight": rng.random(n) * 3 if weighted else None}
    return data, groups


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 150),
    label_kind=st.sampled_from(["int", "str", "sparse"]),
    group_kind=st.sampled_from(["int", "wide", "str", "tuple"]),
    weighted=st.booleans(),
    fixed=st.booleans(),
)
@settings(max_examples=60, deadline=None)
@pytest.mark.parametrize("backend", BACKENDS)
def test_each_group_of_hard_labels_is_evaluate_on_its_rows(
    backend: str, seed: int, n: int, label_kind: str, group_kind: str, weighted: bool, fixed: bool
) -> None:
    data, groups = data_of(seed, n, label_kind, group_kind, weighted)
    extra: dict[str, Any] = {"backend": backend}
    if fixed:
        extra["labels"] = np.union1d(data["y_true"], data["y_pred"])
    g = cmetrics.evaluate(**data, groups=groups, **extra)
    check_grouped(g, data, groups, extra)


def assert_columns_match_reports(g: cmetrics.GroupedReport) -> None:
    names = ["n_samples", *rm.TABLE_METRICS]
    columns = g.summary_columns(names)
    for i, key in enumerate(g):
        report = g[key]
        for name in names:
            want = float(report.n_samples) if name == "n_samples" else report.metrics[name]
            got = float(columns[name][i])
            assert (math.isnan(got) and math.isnan(want)) or math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-15), (
                key,
                name,
                got,
                want,
            )


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 200), weighted=st.booleans(), fixed=st.booleans())
@settings(max_examples=40, deadline=None)
@pytest.mark.parametrize("backend", BACKENDS)
def test_the_summary_of_all_groups_at_once_equals_their_reports(
    backend: str, seed: int, n: int, weighted: bool, fixed: bool
) -> None:
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 6, n)
    p = np.where(rng.random(n) < 0.4, t, rng.integers(0, 6, n))
    w = rng.random(n) * 2 if weighted else None
    if weighted:
        w[rng.random(n) < 0.2] = 0.0  # zero-weight rows; whole groups of them below
        w[0] = 1.0  # some weight overall
    groups = rng.integers(0, 9, n)
    extra: dict[str, Any] = {"labels": np.arange(6)} if fixed else {}
    g = cmetrics.evaluate(t, y_pred=p, sample_weight=w, groups=groups, backend=backend, **extra)
    assert_columns_match_reports(g)


@pytest.mark.parametrize("backend", BACKENDS)
def test_kappa_of_weighted_groups_that_are_nearly_all_correct(backend: str) -> None:
    """A few wrong rows of tiny weight beside heavy correct ones: the summary's kappa sums the
    wrong weight cell by cell, as the report does (``total - trace`` cancels it away), and both
    equal scikit-learn's (a group whose truth is one class included: kappa 0 up to rounding)."""
    t = np.array([0, 1, 1, 0, 1, 1, 1, 1])
    p = np.array([0, 1, 0, 0, 1, 0, 1, 0])
    w = np.array([1e-7, 1.0, 3e-7, 2.0, 0.75, 1.3e-9, 0.04874492462670288, 1.9881849724838176])
    groups = np.array([0, 0, 0, 1, 1, 1, 2, 2])  # group 2's truth is one class
    g = cmetrics.evaluate(t, y_pred=p, sample_weight=w, groups=groups, backend=backend)
    kappa = g.summary_columns(["cohen_kappa"])["cohen_kappa"]
    for i, key in enumerate(g):
        rows = groups == key
        want = skm.cohen_kappa_score(t[rows], p[rows], sample_weight=w[rows])
        assert kappa[i] == pytest.approx(want, rel=1e-12, abs=1e-300), key
        assert g[key].metrics["cohen_kappa"] == pytest.approx(want, rel=1e-12, abs=1e-300), key
    assert abs(kappa[2]) < 1e-15


def test_a_group_without_weight_and_groups_missing_labels() -> None:
    t = np.array([0, 1, 2, 0, 0, 1, 2, 2])
    p = np.array([0, 1, 1, 0, 1, 1, 2, 2])
    w = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 2.0, 1.0, 1.0])
    groups = np.array([1, 1, 1, 2, 2, 3, 3, 3])
    g = cmetrics.evaluate(t, y_pred=p, sample_weight=w, groups=groups)
    assert g[2].undefined and math.isnan(g[2].accuracy)
    col = g.summary_columns(["accuracy", "f1_macro"])
    assert math.isnan(col["accuracy"][1]) and col["n_samples"][1] == 0.0
    assert g[3].labels == [1, 2]  # the labels its rows hold
    assert col["f1_macro"][2] == pytest.approx(g[3].f1_macro, rel=1e-12)
    assert_columns_match_reports(g)


def test_reports_are_made_only_when_read() -> None:
    rng = np.random.default_rng(2)
    n = 50_000
    t = rng.integers(0, 4, n)
    g = cmetrics.evaluate(t, y_pred=(t + (rng.random(n) < 0.3)) % 4, groups=rng.integers(0, 3000, n))
    made = g.groups._made  # type: ignore[attr-defined]  # the lazy mapping's cache
    table = g.to_arrow(["accuracy", "f1_macro", "matthews_corrcoef"])
    assert table.num_rows == 3000 and not made
    assert g[17].accuracy == pytest.approx(table.column("accuracy")[17].as_py(), rel=1e-12)
    assert list(made) == [17]
    assert 17 in g and 3000 not in g and "x" not in g


@pytest.mark.parametrize("backend", BACKENDS)
def test_batches_merges_and_bytes_give_the_one_call_tables(backend: str) -> None:
    data, groups = data_of(9, 3000, "str", "str", True)
    whole = cmetrics.evaluate(**data, groups=groups, backend=backend)
    parts = []
    for lo, hi in [(0, 700), (700, 701), (701, 2500), (2500, 3000)]:
        ev = Evaluator(group_by=True, backend=backend)
        ev.update(**{k: v[lo:hi] for k, v in data.items()}, groups=groups[lo:hi])
        parts.append(ev)
    merged = parts[3]
    merged.merge(Evaluator.from_bytes(parts[1].to_bytes())).merge(pickle.loads(pickle.dumps(parts[0])))
    merged.merge(parts[2])
    got = Evaluator.from_bytes(merged.to_bytes()).grouped_report()
    assert list(got) == list(whole)
    for key in whole:
        np.testing.assert_allclose(got[key].confusion_matrix, whole[key].confusion_matrix, rtol=1e-12)
        assert got[key].labels == whole[key].labels
        assert got[key].accuracy == pytest.approx(whole[key].accuracy, rel=1e-12)


def test_many_groups_and_the_cell_limit_in_bytes() -> None:
    n = 300_000
    rng = np.random.default_rng(4)
    t = rng.integers(0, 3, n)
    g = cmetrics.evaluate(t, y_pred=t, groups=np.arange(n), max_groups=1 << 20)
    assert len(g) == n and g[n - 1].accuracy == 1.0
    with pytest.raises(LimitExceededError, match="max_groups"):
        cmetrics.evaluate(t, y_pred=t, groups=np.arange(n), max_groups=1000)
    y = np.arange(n) % 1000
    with pytest.raises(LimitExceededError, match="GiB"):
        cmetrics.evaluate(y, y_pred=y, groups=np.arange(n) % 500, max_groups=1 << 20)


@pytest.mark.parametrize("backend", BACKENDS)
def test_null_group_values_are_refused_by_row_and_unused_categories_have_no_group(backend: str) -> None:
    import pandas as pd

    from cmetrics.exceptions import LabelError, NonFiniteError

    y, p = np.array([0, 1, 0, 1]), np.array([0, 1, 1, 1])
    with pytest.raises(LabelError, match=r"groups\[1\] is missing"):
        cmetrics.evaluate(y, y_pred=p, groups=np.array(["a", None, "a", "b"], dtype=object), backend=backend)
    with pytest.raises(NonFiniteError, match=r"groups\[1\] = nan"):
        cmetrics.evaluate(y, y_pred=p, groups=np.array([1.0, np.nan, 1.0, 2.0]), backend=backend)
    filled = np.array(["a", "(missing)", "a", "b"])  # the documented way to keep such rows
    assert list(cmetrics.evaluate(y, y_pred=p, groups=filled, backend=backend)) == ["(missing)", "a", "b"]
    categories = pd.Categorical(["a", "a", "b", "b"], categories=["a", "b", "c"])
    g = cmetrics.evaluate(y, y_pred=p, groups=categories, backend=backend)
    assert list(g) == ["a", "b"] and "c" not in g and g["b"].accuracy == 0.5

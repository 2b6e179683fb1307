"""The approximate class-ranking state of an Evaluator kept as dense (K, bins + 1) tables:
the same tie groups as a plain count of every bin, and as the per-column tie-group states it
replaces (kept past ``DENSE_CELLS``), through batches, merges, bytes and curves."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import cmetrics
from cmetrics import Evaluator
from cmetrics.exceptions import ValidationError
from cmetrics.streaming import dense_ranking
from tests.conftest import BACKENDS

K, BINS = 5, 64


def data(seed: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(K) * 0.5, n)
    p[:7] = np.eye(K)[rng.integers(0, K, 7)]  # 0.0 and 1.0 exactly: the first and the last bin
    return rng.integers(0, K, n), p, rng.random(n)


def fed(backend: str, weighted: bool, dense: bool, monkeypatch: pytest.MonkeyPatch) -> Evaluator:
    """An Evaluator fed three batches, its class ranking dense or kept as tie-group states."""
    y, p, w = data(3, 2500)
    with monkeypatch.context() as m:
        if not dense:
            m.setattr(dense_ranking, "DENSE_CELLS", 0)
        ev = Evaluator(n_classes=K, class_ranking="approximate", ranking_bins=BINS, backend=backend)  # type: ignore[arg-type]
        for lo, hi in [(0, 900), (900, 1000), (1000, 2500)]:
            ev.update(y[lo:hi], y_proba=p[lo:hi], sample_weight=w[lo:hi] if weighted else None)
    assert (ev._dense is not None) == dense and (ev._class_rank is None) == dense
    return ev


def plain_bins(weighted: bool) -> list[tuple[np.ndarray, ...]]:
    """Each column's bins counted by a loop over the rows: values, positive and negative rows
    (and weights), the non-empty bins only."""
    y, p, w = data(3, 2500)
    out = []
    for col in range(K):
        pos, neg = [0] * (BINS + 1), [0] * (BINS + 1)
        wp, wn = [0.0] * (BINS + 1), [0.0] * (BINS + 1)
        for i in range(len(y)):
            b = min(int(p[i, col] * BINS), BINS)
            if y[i] == col:
                pos[b], wp[b] = pos[b] + 1, wp[b] + w[i]
            else:
                neg[b], wn[b] = neg[b] + 1, wn[b] + w[i]
        keep = [b for b in range(BINS + 1) if pos[b] + neg[b]]
        cols = [np.array(keep) / BINS, np.array([pos[b] for b in keep]), np.array([neg[b] for b in keep])]
        if weighted:
            cols += [np.array([wp[b] for b in keep]), np.array([wn[b] for b in keep])]
        out.append(tuple(cols))
    return out


def summaries(ev: Evaluator) -> list[Any]:
    """Each column's tie groups: values, positive and negative rows (and weights)."""
    return [tuple(x for x in s.groups() if x is not None) for s in ev.class_ranking_summaries() or []]


def assert_same_groups(got: list[Any], want: list[Any], exact: bool) -> None:
    assert len(got) == len(want)
    for g, v in zip(got, want, strict=True):
        for a, b in zip(g, v, strict=True):
            if a is None or b is None:
                assert a is None and b is None
            elif exact or np.asarray(a).dtype.kind != "f":
                assert np.array_equal(np.asarray(a), np.asarray(b))
            else:
                np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
def test_dense_tables_hold_the_bins_of_a_plain_count(backend: str, weighted: bool, monkeypatch: Any) -> None:
    ev = fed(backend, weighted, True, monkeypatch)
    assert_same_groups(summaries(ev), plain_bins(weighted), exact=False)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
def test_dense_tables_give_what_the_tie_group_states_give(backend: str, weighted: bool, monkeypatch: Any) -> None:
    dense, groups = fed(backend, weighted, True, monkeypatch), fed(backend, weighted, False, monkeypatch)
    # The same weights in the same order of additions: the same bits (the numpy backend's
    # tie groups sum the negative weights by a count of their own, to rounding).
    exact = backend == "rust" or not weighted
    assert_same_groups(summaries(dense), summaries(groups), exact=exact)
    a, b = dense.report(), groups.report()
    for m in ("roc_auc_ovr", "average_precision_ovr"):
        assert a.metrics[m] == (b.metrics[m] if exact else pytest.approx(b.metrics[m], rel=1e-12)), m
    for col in range(K):
        got, want = dense.ranking_curve(100, col), groups.ranking_curve(100, col)
        assert got is not None and want is not None
        for x, y in zip(got[0], want[0], strict=True):
            np.testing.assert_allclose(x, y, rtol=0 if exact else 1e-12)
        assert got[1] == want[1] or not exact
    assert dense.ranking_curve(100, K) is None
    assert dense.to_bytes() == groups.to_bytes() or not exact


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
def test_dense_states_merge_and_round_trip(backend: str, weighted: bool, monkeypatch: Any) -> None:
    dense, groups = fed(backend, weighted, True, monkeypatch), fed(backend, weighted, False, monkeypatch)
    back = Evaluator.from_bytes(dense.to_bytes())
    assert back._dense is not None and back.to_bytes() == dense.to_bytes()
    twice = plain_bins(weighted)
    twice = [(v, 2 * p, 2 * n, *(2 * x for x in rest)) for v, p, n, *rest in twice]
    # dense + dense (a fresh Evaluator takes the first state's tables), dense + tie groups
    # both ways: every pairing holds each bin twice.
    fresh = Evaluator(n_classes=K, class_ranking="approximate", ranking_bins=BINS, backend=backend)  # type: ignore[arg-type]
    mixed_a = Evaluator.from_bytes(dense.to_bytes()).merge(groups)
    mixed_b = fed(backend, weighted, False, monkeypatch).merge(dense)
    for merged in (fresh.merge(dense).merge(back), mixed_a, mixed_b):
        assert_same_groups(summaries(merged), twice, exact=False)
        assert merged.report().metrics["roc_auc_ovr"] == pytest.approx(dense.report().metrics["roc_auc_ovr"], rel=1e-12)


def test_many_classes_keep_tie_group_states() -> None:
    """Past DENSE_CELLS (40 classes x 2^16 + 1 bins) the state keeps only the occupied bins."""
    rng = np.random.default_rng(4)
    p = rng.dirichlet(np.ones(40), 500)
    ev = Evaluator(n_classes=40, class_ranking="approximate").update(rng.integers(0, 40, 500), y_proba=p)
    assert ev._dense is None and ev._class_rank is not None
    small = Evaluator(n_classes=40, class_ranking="approximate", ranking_bins=1024)
    small.update(rng.integers(0, 40, 500), y_proba=p)
    assert small._dense is not None and small._dense.all is not None and small._dense.all.shape == (40, 1025)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_refused_batch_leaves_the_tables_as_they_were(backend: str, weighted: bool) -> None:
    be = cmetrics._backend.resolve_backend(backend)  # type: ignore[arg-type]
    y, p, w = data(5, 300)
    codes = y.astype(np.uint32)
    weight = w if weighted else None
    tables = [np.zeros((K, BINS + 1), np.uint64), np.zeros((K, BINS + 1), np.uint64)]
    tables += [np.zeros((K, BINS + 1)), np.zeros((K, BINS + 1))] if weighted else [None, None]
    be.add_binned_one_vs_rest(p, codes, BINS, *tables, weight)
    before = [None if t is None else t.copy() for t in tables]
    bad = p.copy()
    bad[250, 3] = 1.5
    with pytest.raises(ValidationError, match=r"y_proba\[250, 3\]"):
        be.add_binned_one_vs_rest(bad, codes, BINS, *tables, weight)
    for t, b in zip(tables, before, strict=True):
        assert (t is None and b is None) or np.array_equal(t, b)
    assert int(tables[0].sum()) == 300 * K and int(tables[1].sum()) == 300

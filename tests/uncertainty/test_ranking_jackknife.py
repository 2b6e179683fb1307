"""The ranking metrics' leave-one-out values (BCa's acceleration) against refits without each
row: scikit-learn for the AUROC and AP, plain loops for AURC and RPP, on scores with ties, a
signed zero, and rows whose removal leaves the metric undefined."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from cmetrics._backend import resolve_backend
from cmetrics._derive import ranking_jackknife as rj


def _aurc(pos: np.ndarray, s: np.ndarray, w: np.ndarray) -> float:
    total = 0.0
    for c in sorted(set(s.tolist()), reverse=True):
        accepted = s >= c
        total += w[s == c].sum() / w.sum() * w[accepted & ~pos].sum() / w[accepted].sum()
    return total


def _rpp(pos: np.ndarray, s: np.ndarray, w: np.ndarray) -> float:
    r = sum(w[i] * w[j] for i in np.flatnonzero(pos) for j in np.flatnonzero(~pos) if s[i] < s[j])
    return float(r / w.sum() ** 2)


def _refit(name: str, pos: np.ndarray, s: np.ndarray, w: np.ndarray) -> float:
    if not (pos.any() and (~pos).any()) and name in ("roc_auc", "average_precision"):
        return np.nan if name == "roc_auc" or not pos.any() else 1.0
    if name == "roc_auc":
        return float(roc_auc_score(pos, s, sample_weight=w))
    if name == "average_precision":
        return float(average_precision_score(pos, s, sample_weight=w))
    return _aurc(pos, s, w) if name == "aurc" else _rpp(pos, s, w)


CASES = [
    (name, weighted)
    for name in ("roc_auc", "average_precision", "aurc", "reversed_pair_proportion")
    for weighted in (False, True)
    if name in rj.WEIGHTED or not weighted  # AP, AURC of weighted rows: first order, below
]


@pytest.mark.parametrize(("name", "weighted"), CASES)
@pytest.mark.parametrize("seed", range(4))
def test_leave_one_out_equals_a_refit_without_the_row(backend: str, name: str, weighted: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 35
    s = np.round(rng.random(n), 1)
    s[:2] = [-0.0, 0.0]  # one tie group
    pos = rng.random(n) < (0.4 if seed else 0.04)  # seed 0: a single positive, or none
    pos[3] = True
    w = rng.uniform(0.1, 3.0, n) if weighted else None
    groups = resolve_backend(backend).score_groups(pos, s, w, 1)
    got = rj.leave_one_out(name, groups, rj.row_group(groups, s), pos, w)
    ones = np.ones(n) if w is None else w
    want = np.array([_refit(name, np.delete(pos, i), np.delete(s, i), np.delete(ones, i)) for i in range(n)])
    assert np.array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[~np.isnan(got)], want[~np.isnan(want)], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["average_precision", "aurc"])
@pytest.mark.parametrize("seed", range(4))
def test_weighted_curves_leave_one_out_to_first_order(backend: str, name: str, seed: int) -> None:
    """Average precision and AURC of weighted rows: the value without each row to first order in
    its weight, ``θ - w_i ∂θ/∂w_i``, the derivative by central differences of scikit-learn's AP (a
    plain loop for AURC) with the row's weight moved; NaN where the removal leaves no positive
    weight for the AP. On average they miss the exact refit by a small part of its change."""
    rng = np.random.default_rng(seed)
    n = 35
    s = np.round(rng.random(n), 1)
    s[:2] = [-0.0, 0.0]
    pos = rng.random(n) < (0.4 if seed else 0.04)  # seed 0: a single positive
    pos[3] = True
    w = rng.uniform(0.1, 3.0, n)
    groups = resolve_backend(backend).score_groups(pos, s, w, 1)
    got = rj.leave_one_out(name, groups, rj.row_group(groups, s), pos, w)
    h = 1e-5
    want, exact = np.empty(n), np.empty(n)
    for i in range(n):
        up, down = w.copy(), w.copy()
        up[i], down[i] = w[i] * (1 + h), w[i] * (1 - h)
        slope = (_refit(name, pos, s, up) - _refit(name, pos, s, down)) / (2 * h)
        want[i] = _refit(name, pos, s, w) - slope
        exact[i] = _refit(name, np.delete(pos, i), np.delete(s, i), np.delete(w, i))
    undefined = pos & (w >= w[pos].sum()) if name == "average_precision" else np.zeros(n, dtype=bool)
    assert np.array_equal(np.isnan(got), undefined)
    np.testing.assert_allclose(got[~undefined], want[~undefined], rtol=1e-9, atol=1e-11)
    change = np.abs(_refit(name, pos, s, w) - exact)[~undefined]
    miss = np.abs(got - exact)[~undefined]
    assert miss.mean() < 0.25 * change.mean()  # 0.03-0.14 at these 35 rows


def test_row_groups_of_many_groups_are_the_binary_search(backend: str) -> None:
    """Past rj.SORTED_SEARCH groups each row's group is searched for in score order: the same
    groups as one binary search per row, signed zeros together."""
    rng = np.random.default_rng(8)
    s = rng.random(3 * rj.SORTED_SEARCH)
    s[:4] = [-0.0, 0.0, 0.0, -0.0]
    pos = rng.random(s.size) < 0.3
    groups = resolve_backend(backend).score_groups(pos, s, None, 1)
    assert groups.values.size > rj.SORTED_SEARCH
    g = rj.row_group(groups, s)
    np.testing.assert_array_equal(g, np.searchsorted(groups.values, s))
    np.testing.assert_array_equal(groups.values[g], s)
    assert g[0] == g[1] == g[2] == g[3]


def test_cells_count_every_row_once(backend: str) -> None:
    rng = np.random.default_rng(3)
    pos, s = rng.random(200) < 0.3, np.round(rng.random(200), 1)
    groups = resolve_backend(backend).score_groups(pos, s, None, 1)
    values, counts = rj.cell_leave_one_out("average_precision", groups)
    rows = rj.leave_one_out("average_precision", groups, rj.row_group(groups, s), pos)
    assert counts.sum() == 200
    np.testing.assert_allclose(np.sort(np.repeat(values, counts.astype(int))), np.sort(rows), rtol=0, atol=0)

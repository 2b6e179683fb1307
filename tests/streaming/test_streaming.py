"""The streaming Evaluator: any split into batches, in any order, merged in any tree, gives
the report of one ``evaluate`` call; the byte format round-trips and rejects bad states."""

from __future__ import annotations

import itertools
import json
import math
import pickle
import struct
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cmetrics
from cmetrics import Evaluator, StateError
from cmetrics.exceptions import LabelError, LimitExceededError, ValidationError
from cmetrics.streaming import FORMAT_VERSION
from tests.conftest import BACKENDS


def make(seed: int, n: int, k: int, ties: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    logits = rng.normal(0, 1.5, (n, k))
    logits[np.arange(n), y] += rng.random(n) * 2
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    if ties:  # coarse probabilities: many tied confidences
        p = np.round(p, 2)
        p[:, -1] = 1.0 - p[:, :-1].sum(axis=1)
        p = np.clip(p, 0, 1)
        p /= p.sum(axis=1, keepdims=True)
    return y, p, rng.random(n) + 0.1


def assert_same_report(got: cmetrics.Report, want: cmetrics.Report) -> None:
    if want.confusion_matrix.dtype.kind == "f":  # weighted sums: to rounding
        np.testing.assert_allclose(got.confusion_matrix, want.confusion_matrix, rtol=1e-12)
    else:  # counts: bit-identical
        assert got.confusion_matrix.dtype == want.confusion_matrix.dtype
        assert np.array_equal(got.confusion_matrix, want.confusion_matrix)
    assert got.labels == want.labels
    assert set(got.metrics) == set(want.metrics)
    for key, w in want.metrics.items():
        g = got.metrics[key]
        assert (math.isnan(g) and math.isnan(w)) or abs(g - w) <= 1e-12 * max(1.0, abs(w)), (key, g, w)
    if want.prob_confusion_matrix is not None:
        np.testing.assert_allclose(got.prob_confusion_matrix, want.prob_confusion_matrix, rtol=1e-12)
        assert got.calibration is not None and want.calibration is not None
        assert np.array_equal(got.calibration.count, want.calibration.count)


def split_and_merge(
    data: dict[str, Any], n: int, cuts: list[int], order_seed: int, tree_seed: int, make_ev: Any
) -> Evaluator:
    """Batches at ``cuts``, each into its own Evaluator in ``order``, merged in a random tree
    (some through bytes and pickle)."""
    bounds = [0, *sorted({c for c in cuts if 0 < c < n}), n]
    parts = []
    for i in np.random.default_rng(order_seed).permutation(len(bounds) - 1):
        lo, hi = bounds[i], bounds[i + 1]
        ev = make_ev()
        ev.update(**{k: (v[lo:hi] if v is not None else None) for k, v in data.items()})
        parts.append(ev)
    rng = np.random.default_rng(tree_seed)
    while len(parts) > 1:
        i, j = sorted(rng.choice(len(parts), 2, replace=False))
        b = parts.pop(j)
        a = parts.pop(i)
        route = rng.integers(3)
        if route == 1:
            b = Evaluator.from_bytes(b.to_bytes())
        elif route == 2:
            b = pickle.loads(pickle.dumps(b))
        parts.append(a.merge(b))
    return parts[0]


@pytest.mark.parametrize("be", BACKENDS)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 300),
    k=st.integers(2, 4),
    weighted=st.booleans(),
    cuts=st.lists(st.integers(0, 300), max_size=6),
    tree=st.integers(0, 1000),
    ties=st.booleans(),
)
def test_any_split_and_merge_tree_equals_evaluate(
    be: str, seed: int, n: int, k: int, weighted: bool, cuts: list[int], tree: int, ties: bool
) -> None:
    y, p, w = make(seed, n, k, ties)
    weights = w if weighted else None
    want = cmetrics.evaluate(y, y_proba=p, labels=list(range(k)), sample_weight=weights, backend=be)
    data = {"y_true": y, "y_proba": p, "sample_weight": weights}
    got = split_and_merge(data, n, cuts, seed, tree, lambda: Evaluator(n_classes=k, backend=be)).report()
    assert_same_report(got, want)
    assert got.ranking == {"mode": "exact"}


@pytest.mark.parametrize("be", BACKENDS)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 200),
    weighted=st.booleans(),
    cuts=st.lists(st.integers(0, 200), max_size=5),
    tree=st.integers(0, 1000),
)
def test_hard_labels_with_confidence_and_growing_label_set(
    be: str, seed: int, n: int, weighted: bool, cuts: list[int], tree: int
) -> None:
    rng = np.random.default_rng(seed)
    names = np.array(["ant", "bee", "cat", "dog", "eel"])
    y = names[rng.integers(0, 5, n)]
    pred = np.where(rng.random(n) < 0.6, y, names[rng.integers(0, 5, n)])
    conf = np.round(rng.random(n), 1)
    weights = rng.random(n) if weighted else None
    want = cmetrics.evaluate(y, y_pred=pred, confidence=conf, sample_weight=weights, backend=be)
    data = {"y_true": y, "y_pred": pred, "confidence": conf, "sample_weight": weights}
    got = split_and_merge(data, n, cuts, seed + 1, tree, lambda: Evaluator(backend=be)).report()
    assert_same_report(got, want)


def test_batches_of_different_labels_match_evaluate_with_all_labels() -> None:
    ev = Evaluator()
    ev.update([3, 3, 5], y_pred=[3, 5, 5])
    ev.update([1, 9], y_pred=[9, 1])
    want = cmetrics.evaluate([3, 3, 5, 1, 9], y_pred=[3, 5, 5, 9, 1])
    assert_same_report(ev.report(), want)
    assert ev.report().labels == [1, 3, 5, 9]


def test_state_round_trip_size_and_pickle() -> None:
    y, p, w = make(1, 5000, 5, ties=False)
    ev = Evaluator(n_classes=5).update(y, y_proba=p, sample_weight=w)
    blob = ev.to_bytes()
    assert blob[:8] == b"CMETRICS" and struct.unpack_from("<H", blob, 8)[0] == FORMAT_VERSION
    summary = ev.ranking_summary()
    assert summary is not None and summary.weighted
    # 40 bytes per distinct confidence with weights, the same per distinct value of each
    # probability column (the class-ranking state: at most 5 x 5000), plus the fixed part.
    assert len(blob) <= 40 * (len(summary) + 5 * 5000) + 8 * (5 * 5 * 3 + 4 * 15 + 2 * 5 + 5) + 4096
    again = Evaluator.from_bytes(blob)
    assert again.to_bytes() == blob
    assert_same_report(again.report(), ev.report())
    assert_same_report(pickle.loads(pickle.dumps(ev)).report(), ev.report())
    assert b"\x80" not in blob[16 : 16 + struct.unpack_from("<I", blob, 12)[0]]  # the header is JSON text


def test_corrupt_foreign_and_future_states_raise_state_error() -> None:
    blob = Evaluator(n_classes=2).update([0, 1], y_proba=[[0.9, 0.1], [0.2, 0.8]]).to_bytes()
    with pytest.raises(StateError, match="magic"):
        Evaluator.from_bytes(b"PK\x03\x04" + blob[4:])
    flipped = bytearray(blob)
    flipped[len(blob) // 2] ^= 0xFF
    with pytest.raises(StateError, match="checksum"):
        Evaluator.from_bytes(bytes(flipped))
    with pytest.raises(StateError):
        Evaluator.from_bytes(blob[:20])
    future = bytearray(blob[:-4])
    struct.pack_into("<H", future, 8, FORMAT_VERSION + 1)
    import zlib

    future += struct.pack("<I", zlib.crc32(bytes(future)))
    with pytest.raises(StateError, match=f"version {FORMAT_VERSION + 1}"):
        Evaluator.from_bytes(bytes(future))
    assert issubclass(StateError, ValueError)


def test_merging_different_settings_or_inputs_raises() -> None:
    a = Evaluator(n_classes=2).update([0, 1], y_proba=[[0.9, 0.1], [0.2, 0.8]])
    with pytest.raises(StateError, match="n_bins"):
        a.merge(Evaluator(n_classes=2, n_bins=10))
    with pytest.raises(StateError, match="labels"):
        a.merge(Evaluator(labels=[0, 2]))
    with pytest.raises(StateError, match="ranking"):
        a.merge(Evaluator(n_classes=2, ranking="approximate"))
    hard = Evaluator(n_classes=2).update([0, 1], y_pred=[0, 0])
    with pytest.raises(StateError, match="different inputs"):
        a.merge(hard)
    weighted = Evaluator(n_classes=2).update([0, 1], y_proba=[[0.9, 0.1], [0.2, 0.8]], sample_weight=[1, 2])
    with pytest.raises(StateError, match="different inputs"):
        a.merge(weighted)
    with pytest.raises(StateError, match="merge takes an Evaluator"):
        a.merge("not an evaluator")  # type: ignore[arg-type]


def test_update_errors_name_the_argument() -> None:
    ev = Evaluator(n_classes=2).update([0, 1], y_proba=[[0.9, 0.1], [0.2, 0.8]])
    with pytest.raises(ValidationError, match="earlier batches had y_proba"):
        ev.update([0], y_pred=[1])
    with pytest.raises(ValidationError, match="sample_weight"):
        ev.update([0], y_proba=[[0.5, 0.5]], sample_weight=[1.0])
    with pytest.raises(LabelError):
        ev.update([2], y_proba=[[0.5, 0.5]])
    with pytest.raises(LabelError, match="labels="):
        Evaluator().update(["a", "b"], y_proba=[[0.9, 0.1], [0.2, 0.8]])
    with pytest.raises(ValidationError, match="no rows"):
        Evaluator().report()
    with pytest.raises(ValidationError, match="ranking"):
        Evaluator(ranking="fast")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="outside"):
        Evaluator(ranking="approximate").update([0, 1], y_pred=[0, 1], confidence=[0.5, 1.5])
    with pytest.raises(ValidationError, match="confidence"):
        Evaluator().update([0, 1], y_pred=[0, 1], confidence=[0.5, float("nan")])
    assert Evaluator(n_classes=2).update([], y_proba=np.zeros((0, 2))).n_rows == 0


@pytest.mark.parametrize("ranking", ["exact", "approximate"])
def test_a_refused_hard_label_batch_changes_nothing(ranking: Any) -> None:
    """A batch with a confidence whose table cannot be added (another label kind, too many
    classes) or whose confidence is refused leaves the state as it was: the ranking rows are
    not kept without the table."""
    ev = Evaluator(ranking=ranking, max_classes=3).update([0, 1, 1], y_pred=[0, 1, 0], confidence=[0.9, 0.6, 0.7])
    blob = ev.to_bytes()
    with pytest.raises(LabelError):
        ev.update(["a", "b"], y_pred=["a", "a"], confidence=[0.8, 0.3])
    with pytest.raises(LimitExceededError):
        ev.update([5, 6], y_pred=[7, 6], confidence=[0.8, 0.3])
    with pytest.raises(ValidationError, match="confidence"):
        ev.update([0, 1], y_pred=[1, 1], confidence=[0.5, float("nan")])
    assert ev.to_bytes() == blob
    want = Evaluator(ranking=ranking).update([0, 1, 1], y_pred=[0, 1, 0], confidence=[0.9, 0.6, 0.7]).report()
    assert ev.report().to_dict() == want.to_dict()


def test_approximate_mode_has_a_fixed_cap_and_a_stated_error_bound() -> None:
    y, p, _ = make(4, 200_000, 10, ties=False)
    exact = Evaluator(n_classes=10)
    approx = Evaluator(n_classes=10, ranking="approximate", ranking_bins=1024)
    for lo in range(0, 200_000, 50_000):
        exact.update(y[lo : lo + 50_000], y_proba=p[lo : lo + 50_000])
        approx.update(y[lo : lo + 50_000], y_proba=p[lo : lo + 50_000])
    s_exact, s_approx = exact.ranking_summary(), approx.ranking_summary()
    assert s_exact is not None and s_approx is not None
    assert len(s_approx) <= 1025 < len(s_exact)
    r_exact, r_approx = exact.report(), approx.report()
    assert r_approx.ranking == {"mode": "approximate", "bins": 1024}
    assert r_approx.to_dict()["ranking"]["mode"] == "approximate"
    # The bound: refinement moves by at most half the share of (correct, wrong) pairs sharing a bin.
    walk = s_approx.walk()
    bound = walk.tied / (walk.n_pos * walk.n_neg) / 2
    assert abs(r_approx.refinement - r_exact.refinement) <= bound
    assert r_approx.accuracy == r_exact.accuracy


def test_ranking_off_and_report_without_ranking() -> None:
    y, p, _ = make(2, 1000, 3)
    ev = Evaluator(n_classes=3, ranking="off").update(y, y_proba=p)
    r = ev.report()
    assert "refinement" not in r.metrics and r.ranking is None
    want = cmetrics.evaluate(y, y_proba=p, labels=[0, 1, 2], ranking=False)
    assert_same_report(r, want)


@pytest.mark.parametrize("be", BACKENDS)
def test_group_kernels_against_numpy_and_errors(be: str) -> None:
    from cmetrics._backend import resolve_backend

    k = resolve_backend(be)
    rng = np.random.default_rng(9)
    conf = np.round(rng.random(5000), 2)
    ok = rng.random(5000) < conf
    w = rng.random(5000)
    for weight in (None, w):
        g = k.score_groups(ok, conf, weight)
        values = np.unique(conf)
        assert np.array_equal(g[0], values)
        assert np.array_equal(g[1], [ok[conf == v].sum() for v in values])
        assert np.array_equal(np.asarray(g[1]) + np.asarray(g[2]), [np.sum(conf == v) for v in values])
        whole = k.walk_groups(g)
        direct = k.binary_ranking(ok, conf, weight)
        for key in ("reversed", "tied", "ordered", "n_pos", "n_neg", "n_thresholds"):
            assert getattr(whole, key) == getattr(direct, key)
        for key in ("reversed_share", "tied_share", "aurc", "average_precision", "aupr_trapezoid"):
            assert getattr(whole, key) == pytest.approx(getattr(direct, key), rel=1e-12)
        a = k.score_groups(ok[:2000], conf[:2000], None if weight is None else weight[:2000])
        b = k.score_groups(ok[2000:], conf[2000:], None if weight is None else weight[2000:])
        m = k.merge_groups(a, b)
        assert np.array_equal(m[0], g[0]) and np.array_equal(m[1], g[1]) and np.array_equal(m[2], g[2])
    bad = (np.array([0.5, 0.2]), np.array([1, 1], np.uint64), np.array([0, 1], np.uint64), None, None)
    with pytest.raises(ValidationError, match="strictly increasing"):
        k.walk_groups(bad)
    short = (np.array([0.1, 0.2]), np.array([1], np.uint64), np.array([0, 1], np.uint64), None, None)
    with pytest.raises(ValidationError, match="different lengths"):
        k.merge_groups(short, short)


@pytest.mark.parametrize(
    "kind", ["rounded", "float32", "int64", "mixed", "continuous", "ten_thousand", "sampled", "sampled_continuous"]
)
def test_hashed_tie_groups_equal_the_sorted_ones(kind: str) -> None:
    """Past 2^16 unweighted rows with few distinct scores the Rust kernel counts the groups in
    hash tables: the groups equal numpy's (np.unique and counts), on 1 and 2 threads. A sample
    of 4096 evenly spaced scores estimates the distinct count: ``mixed`` (half the rows
    continuous) and ``continuous`` take the sort; ``ten_thousand`` (10^4 distinct) is hashed;
    ``sampled`` puts ten values on the sampled rows and 10^4 elsewhere, so the table starts small
    and grows; ``sampled_continuous`` the same with continuous scores elsewhere, so the table
    grows to its limit and the sort takes over."""
    if "rust" not in BACKENDS:
        pytest.skip("the Rust backend is not built")
    from cmetrics import _core
    from cmetrics import _numpy as npb

    rng = np.random.default_rng(17)
    n = 200_003
    u = rng.random(n)
    score: np.ndarray = {
        "rounded": np.where(u < 0.05, -0.0, np.round(u, 3)),
        "float32": np.round(u, 2).astype(np.float32),
        "int64": np.array([-(2**63), 2**63 - 1, 0, 7, 2**53 + 1, 2**53])[rng.integers(0, 6, n)],
        "mixed": np.where(u < 0.5, np.round(u, 1), rng.random(n)),
        "continuous": u,
        "ten_thousand": np.round(u, 4),
        "sampled": np.round(u, 4),
        "sampled_continuous": u,
    }[kind]
    if kind.startswith("sampled"):
        # The rows the sample reads (every (n // 4096)-th) hold ten values.
        at = np.arange(4096) * (n // 4096)
        score[at] = np.round(u[at], 1)
    ok = rng.random(n) < 0.4
    want = npb.score_groups(ok, score, None)
    values = np.unique(score)
    assert np.array_equal(np.asarray(want[0]), values.astype(np.float64)) or kind == "int64"
    assert np.array_equal(want[1], [ok[score == v].sum() for v in values[:50]] + list(want[1][50:]))
    for threads in (1, 2):
        got = _core.score_groups(ok, score, None, threads)
        for a, b in zip(got[:3], want[:3], strict=True):
            assert np.array_equal(a, b)
    bad = score.astype(np.float64)
    bad[123_456] = np.nan
    with pytest.raises(ValidationError, match="123456"):
        _core.score_groups(ok, bad, None, 2)


@given(
    rows=st.integers(1, 3000),
    n_cuts=st.integers(0, 6),
    seed=st.integers(0, 2**32 - 1),
    weighted=st.booleans(),
    wide=st.booleans(),
    buffer=st.integers(1, 500),
)
def test_group_state_backends_agree(rows: int, n_cuts: int, seed: int, weighted: bool, wide: bool, buffer: int) -> None:
    """The Rust state (compacting every ``buffer`` rows) and the numpy state give the same
    tie groups and walk as one ``score_groups`` call, batch by batch and merged."""
    if "rust" not in BACKENDS:
        pytest.skip("the Rust backend is not built")
    from cmetrics import _core
    from cmetrics import _numpy as npb

    rng = np.random.default_rng(seed)
    conf = rng.random(rows)
    conf = conf if wide else np.round(conf, 3).astype(np.float32).astype(np.float64)
    conf[rng.random(rows) < 0.05] = -0.0
    ok = rng.random(rows) < 0.6
    w = rng.random(rows) + 0.1 if weighted else None
    cuts = [0, *sorted(rng.integers(0, rows, n_cuts).tolist()), rows]
    whole = npb.score_groups(ok, conf, w)
    rs, ns = _core.GroupState(weighted, buffer), npb.GroupState(weighted)
    halves = [_core.GroupState(weighted, buffer), _core.GroupState(weighted, buffer)]
    for i, (lo, hi) in enumerate(itertools.pairwise(cuts)):
        part = (ok[lo:hi], conf[lo:hi], None if w is None else w[lo:hi])
        rs.add(*part)
        ns.add(*part)
        halves[i % 2].add(*part)
    halves[1].merge(halves[0])
    for got in (rs.groups(), ns.groups(), halves[1].groups()):
        assert np.array_equal(got[0], whole[0])
        assert np.array_equal(got[1], whole[1]) and np.array_equal(got[2], whole[2])
        if weighted:
            np.testing.assert_allclose(got[3], whole[3], rtol=1e-12)
            np.testing.assert_allclose(got[4], whole[4], rtol=1e-12)
    want = npb.walk_groups(whole)
    for got_walk in (rs.walk(), ns.walk()):
        for key, value in want._asdict().items():
            assert getattr(got_walk, key) == pytest.approx(value, rel=1e-12, nan_ok=True), key


@pytest.mark.parametrize("weighted", [False, True])
def test_approximate_histogram_backends_agree(weighted: bool) -> None:
    if "rust" not in BACKENDS:
        pytest.skip("the Rust backend is not built")
    from cmetrics import _core
    from cmetrics import _numpy as npb

    rng = np.random.default_rng(3)
    conf = np.concatenate([rng.random(20_000), [0.0, 1.0, 1.0, 0.5]])
    ok = rng.random(conf.shape[0]) < 0.7
    w = rng.random(conf.shape[0]) if weighted else None
    rs, ns = _core.GroupState(weighted), npb.GroupState(weighted)
    for st_ in (rs, ns):
        st_.add(ok, conf, w, 64)
    got, want = rs.groups(), ns.groups()
    assert got[0].shape[0] <= 65 and got[0][-1] == 1.0
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]) and np.array_equal(got[2], want[2])
    assert np.array_equal(
        got[0],
        np.floor(np.unique(conf) * 64).clip(max=64)[
            np.r_[True, np.diff(np.floor(np.unique(conf) * 64).clip(max=64)) > 0]
        ]
        / 64,
    )
    if weighted:
        np.testing.assert_allclose(got[3], want[3], rtol=1e-12)
    for st_ in (rs, ns):
        with pytest.raises(ValidationError, match="outside"):
            st_.add(ok[:1], np.array([1.5]), None if w is None else w[:1], 64)


def test_evaluators_of_different_backends_merge() -> None:
    if "rust" not in BACKENDS:
        pytest.skip("the Rust backend is not built")
    y, p, _ = make(11, 4000, 3)
    a = Evaluator(n_classes=3, backend="rust").update(y[:2500], y_proba=p[:2500])
    b = Evaluator(n_classes=3, backend="numpy").update(y[2500:], y_proba=p[2500:])
    a.merge(b)
    assert_same_report(a.report(), cmetrics.evaluate(y, y_proba=p))
    a.merge(a)  # merging with itself doubles every row
    twice = cmetrics.evaluate(np.concatenate([y, y]), y_proba=np.concatenate([p, p]))
    assert_same_report(a.report(), twice)


@pytest.mark.parametrize("backend", BACKENDS)
def test_state_stores_narrow_arrays_when_lossless(backend: str) -> None:
    """float32 confidences and small counts take 12 bytes per group in the byte format;
    float64 confidences keep 8-byte values; both read back exactly."""
    rng = np.random.default_rng(4)
    n = 20_000
    y = rng.integers(0, 2, n)
    pred = rng.integers(0, 2, n)
    for dtype, per_group in ((np.float32, 12), (np.float64, 16)):
        conf = rng.random(n).astype(dtype).astype(np.float64)
        ev = Evaluator(n_classes=2, backend=backend).update(y, y_pred=pred, confidence=conf)
        blob = ev.to_bytes()
        groups = len(ev.ranking_summary())  # type: ignore[arg-type]
        assert per_group * groups <= len(blob) <= per_group * groups + 4096
        back = Evaluator.from_bytes(blob)
        s0, s1 = ev.ranking_summary(), back.ranking_summary()
        assert s0 is not None and s1 is not None
        assert s1.values.dtype == np.float64 and s1.n_pos.dtype == np.uint64
        assert np.array_equal(s0.values, s1.values) and np.array_equal(s0.n_neg, s1.n_neg)
        assert_same_report(back.report(), cmetrics.evaluate(y, y_pred=pred, confidence=conf))


# -- the class-ranking metrics (one-vs-rest AUROC / AP of the columns, top-k accuracy) -----------


@pytest.mark.parametrize("ranking", ["exact", "approximate", "off"])
@pytest.mark.parametrize("weighted", [False, True])
def test_class_ranking_streams_and_merges_like_evaluate(ranking: str, weighted: bool) -> None:
    rng = np.random.default_rng(21)
    n, k = 3000, 5
    p = np.round(rng.dirichlet(np.ones(k), n), 3)
    p /= p.sum(axis=1, keepdims=True)
    y = rng.integers(0, k, n)
    w = rng.random(n) if weighted else None
    whole = cmetrics.evaluate(y, y_proba=p, sample_weight=w, ranking=ranking, top_k=3)  # type: ignore[arg-type]
    parts = []
    for lo, hi in [(0, 700), (700, 2000), (2000, n)]:
        ev = Evaluator(n_classes=k, ranking=ranking, top_k=3)  # type: ignore[arg-type]
        ev.update(y[lo:hi], y_proba=p[lo:hi], sample_weight=None if w is None else w[lo:hi])
        parts.append(Evaluator.from_bytes(ev.to_bytes()))
    merged = parts[2].merge(parts[0]).merge(parts[1]).report()
    names = [m for m in whole.metrics if m.startswith("top_") or m.endswith("_ovr")]
    assert names == ["top_1_accuracy", "top_2_accuracy", "top_3_accuracy"] + (
        ["roc_auc_ovr", "average_precision_ovr"] if ranking != "off" else []
    )
    for m in names:
        assert merged.metrics[m] == pytest.approx(whole.metrics[m], rel=1e-12), m


def test_class_ranking_of_evaluate_matches_sklearn() -> None:
    import sklearn.metrics as skm

    rng = np.random.default_rng(22)
    n, k = 2000, 4
    p = rng.dirichlet(np.ones(k), n)
    y = rng.integers(0, k, n)
    w = rng.random(n)
    r = cmetrics.evaluate(y, y_proba=p, sample_weight=w)
    assert r.roc_auc_ovr == pytest.approx(skm.roc_auc_score(y, p, multi_class="ovr", sample_weight=w), rel=1e-12)
    assert r.average_precision_ovr == pytest.approx(skm.average_precision_score(y, p, sample_weight=w), rel=1e-12)
    for kk in (1, 2, 3):
        want = skm.top_k_accuracy_score(y, p, k=kk, sample_weight=w)
        assert r.metrics[f"top_{kk}_accuracy"] == pytest.approx(want, rel=1e-12)
    # a class with no row is left out of the macro averages
    y3 = np.minimum(y, 2)
    r3 = cmetrics.evaluate(y3, y_proba=p, labels=[0, 1, 2, 3])
    walks = [cmetrics.roc_auc_score(y3 == c, p[:, c]) for c in range(3)]
    assert r3.roc_auc_ovr == pytest.approx(np.mean(walks), rel=1e-12)


def test_forged_class_ranking_arrays_raise_state_error() -> None:
    ev = Evaluator(n_classes=3).update(
        [0, 1, 2, 1], y_proba=[[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4], [0.5, 0.4, 0.1]]
    )
    blob = ev.to_bytes()
    head_len = struct.unpack_from("<I", blob, 12)[0]
    header = json.loads(blob[16 : 16 + head_len])
    names = [a["name"] for a in header["arrays"]]
    assert "topk.hist" in names and "class_ranking.2.values" in names
    import zlib

    def forged(change: Any) -> bytes:
        h = json.loads(blob[16 : 16 + head_len])
        change(h)
        head = json.dumps(h, separators=(",", ":")).encode()
        body = blob[:12] + struct.pack("<I", len(head)) + head + blob[16 + head_len : -4]
        return body + struct.pack("<I", zlib.crc32(body))

    def drop_class(h: dict[str, Any]) -> None:
        h["arrays"] = [a for a in h["arrays"] if not a["name"].startswith("class_ranking.2.")]

    def rename(h: dict[str, Any]) -> None:
        for a in h["arrays"]:
            if a["name"] == "class_ranking.2.n_pos":
                a["name"] = "class_ranking.7.n_pos"

    def bad_top_k(h: dict[str, Any]) -> None:
        h["settings"]["top_k"] = 0

    for change in (drop_class, rename, bad_top_k):
        with pytest.raises(StateError):
            Evaluator.from_bytes(forged(change))


def test_merge_all_of_partitions_equals_one_evaluator() -> None:
    """cmetrics.merge_all merges Evaluators and their bytes in a fixed balanced tree: the report
    of one Evaluator fed every row, and the same bits for the same states in the same order."""
    y, p, w = make(5, 7000, 4)
    cuts = [0, 900, 2000, 2000, 3500, 5100, 6000, 7000]
    parts = [
        Evaluator(n_classes=4).update(y[lo:hi], y_proba=p[lo:hi], sample_weight=w[lo:hi])
        for lo, hi in itertools.pairwise(cuts)
    ]
    blobs = [ev.to_bytes() for ev in parts]
    states = [blob if i % 2 else ev for i, (ev, blob) in enumerate(zip(parts, blobs, strict=True))]
    merged = cmetrics.merge_all(states)  # merges into the Evaluators it is given
    whole = Evaluator(n_classes=4).update(y, y_proba=p, sample_weight=w)
    assert_same_report(merged.report(), whole.report())
    assert cmetrics.merge_all(blobs).to_bytes() == cmetrics.merge_all(list(blobs)).to_bytes()
    with pytest.raises(StateError, match="empty"):
        cmetrics.merge_all([])
    with pytest.raises(StateError, match=r"states\[1\]"):
        cmetrics.merge_all([parts[0], "nope"])  # type: ignore[list-item]


def test_update_counts_equals_the_rows() -> None:
    """Cells with their row counts (what a SQL GROUP BY gives) make the state the rows make:
    the same report, merged with row-fed states too; bad counts are refused."""
    rng = np.random.default_rng(8)
    y = rng.choice(["ant", "bee", "cat"], 5000)
    p = np.where(rng.random(5000) < 0.6, y, rng.choice(["ant", "bee", "cat"], 5000))
    cells, counts = np.unique(np.stack([y, p], axis=1), axis=0, return_counts=True)
    half = counts.size // 2
    ev = Evaluator().update_counts(cells[:half, 0], cells[:half, 1], counts[:half])
    ev.update_counts(cells[half:, 0], cells[half:, 1], counts[half:])
    ev.update_counts(cells[:1, 0], cells[:1, 1], np.array([0]))  # an empty cell adds nothing
    want = cmetrics.evaluate(y, y_pred=p)
    assert ev.n_rows == 5000
    assert_same_report(ev.report(), want)
    rows = Evaluator().update(y[:100], y_pred=p[:100])
    rest, rest_counts = np.unique(np.stack([y[100:], p[100:]], axis=1), axis=0, return_counts=True)
    mixed = Evaluator().update_counts(rest[:, 0], rest[:, 1], rest_counts)
    assert_same_report(rows.merge(mixed).report(), want)
    with pytest.raises(ValidationError, match="counts must be integers"):
        Evaluator().update_counts(["a"], ["a"], [-1])
    with pytest.raises(ValidationError, match="counts must be integers"):
        Evaluator().update_counts(["a"], ["a"], [1.5])
    with pytest.raises(ValidationError, match="one per cell"):
        Evaluator().update_counts(["a", "b"], ["a"], [1, 2])
    with pytest.raises(cmetrics.exceptions.NotImplementedOptionError):
        Evaluator(group_by=True).update_counts(["a"], ["a"], [1])
    with pytest.raises(ValidationError, match="earlier batches"):
        Evaluator(n_classes=2).update([0], y_proba=[[0.6, 0.4]]).update_counts([0], [1], [3])

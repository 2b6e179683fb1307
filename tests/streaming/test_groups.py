"""Per-group reports: every group's report equals ``evaluate`` on that group's rows alone, the
overall report equals ``evaluate`` on all rows, on both backends, for any assignment of rows
to groups, any split into batches, merged or serialised; bad group input is refused cleanly."""

from __future__ import annotations

import itertools
import json
import struct
import warnings
import zlib
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cmetrics
from cmetrics import Evaluator, StateError
from cmetrics.exceptions import LengthMismatchError, LimitExceededError, UnsupportedDtypeError, ValidationError
from tests.conftest import BACKENDS
from tests.streaming.test_streaming import assert_same_report, make

MODES = ["exact", "approximate", "off"]


def rows_of(data: dict[str, Any], mask: np.ndarray) -> dict[str, Any]:
    return {k: (None if v is None else np.asarray(v)[mask]) for k, v in data.items()}


def check_grouped(
    g: cmetrics.GroupedReport,
    data: dict[str, Any],
    groups: Any,
    settings: dict[str, Any],
    group_bins: int = 1 << 10,
) -> None:
    """``g`` against ``evaluate`` on all rows and on each group's rows (group approximate
    states have ``group_bins`` bins; probability columns are classes 0 .. K-1, as for the
    Evaluator, whatever classes a group's rows hold)."""
    if data.get("y_proba") is not None and "labels" not in settings:
        settings = {**settings, "labels": np.arange(np.asarray(data["y_proba"]).shape[1])}
    assert_same_report(g.overall, cmetrics.evaluate(**data, **settings))
    columns = groups if isinstance(groups, tuple) else (groups,)
    keys = list(zip(*[np.asarray(c).tolist() for c in columns], strict=True))
    distinct = sorted(set(keys))
    assert list(g) == [k if isinstance(groups, tuple) else k[0] for k in distinct]
    for key in distinct:
        mask = np.array([k == key for k in keys])
        want = cmetrics.evaluate(**rows_of(data, mask), **{**settings, "ranking_bins": group_bins})
        assert_same_report(g[key if isinstance(groups, tuple) else key[0]], want)


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    # Small groups have undefined per-class ratios: their warnings are not what is tested here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cmetrics.UndefinedMetricWarning)
        yield


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 120),
    n_groups=st.integers(1, 6),
    mode=st.sampled_from(MODES),
    weighted=st.booleans(),
)
@pytest.mark.parametrize("backend", BACKENDS)
def test_each_group_is_evaluate_on_its_rows(
    backend: str, seed: int, n: int, n_groups: int, mode: str, weighted: bool
) -> None:
    y, p, w = make(seed, n, 4)
    groups = np.random.default_rng(seed).integers(0, n_groups, n) * 7 - 5  # negative ints too
    data = {"y_true": y, "y_proba": p, "sample_weight": w if weighted else None}
    settings = {"ranking": mode, "backend": backend, "zero_division": 0}
    g = cmetrics.evaluate(**data, groups=groups, **settings)
    check_grouped(g, data, groups, settings)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 150), mode=st.sampled_from(MODES))
@pytest.mark.parametrize("backend", BACKENDS)
def test_hard_labels_with_confidence_and_string_groups(backend: str, seed: int, n: int, mode: str) -> None:
    rng = np.random.default_rng(seed)
    y = rng.choice(np.array(["cat", "dog", "émeu"]), n)
    pred = np.where(rng.random(n) < 0.6, y, rng.choice(np.array(["cat", "dog", "ant"]), n))
    conf = np.round(rng.random(n), 1)
    groups = rng.choice(np.array(["en", "de", "fr-CA", "日本"]), n)
    data = {"y_true": y, "y_pred": pred, "confidence": conf}
    settings = {"ranking": mode, "backend": backend, "zero_division": 0}
    check_grouped(cmetrics.evaluate(**data, groups=groups, **settings), data, groups, settings)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tuples_of_group_columns(backend: str) -> None:
    y, p, _ = make(3, 400, 5)
    rng = np.random.default_rng(3)
    lang = rng.choice(np.array(["en", "de"]), 400)
    version = rng.integers(1, 4, 400)
    data = {"y_true": y, "y_proba": p}
    settings = {"backend": backend, "zero_division": 0, "class_ranking": "approximate"}
    g = cmetrics.evaluate(**data, groups=(lang, version), **settings)
    assert g.group_by == ("groups[0]", "groups[1]")
    assert all(isinstance(k, tuple) and len(k) == 2 for k in g)
    check_grouped(g, data, (lang, version), settings)
    assert ("de", 1) in g and g[("de", 1)].n_samples == float(np.sum((lang == "de") & (version == 1)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_int64_extremes_and_one_group(backend: str) -> None:
    y, p, _ = make(5, 50, 3)
    groups = np.where(np.arange(50) % 2 == 0, np.iinfo(np.int64).min, np.iinfo(np.int64).max)
    g = cmetrics.evaluate(y, y_proba=p, groups=groups, backend=backend, zero_division=0)
    assert list(g) == [np.iinfo(np.int64).min, np.iinfo(np.int64).max]  # ordered as integers, exactly
    one = cmetrics.evaluate(y, y_proba=p, groups=np.zeros(50, int), backend=backend, zero_division=0)
    assert_same_report(one[0], one.overall)


@given(
    seed=st.integers(0, 2**32 - 1),
    cuts=st.lists(st.integers(1, 199), max_size=4),
    mode=st.sampled_from(MODES),
    via_bytes=st.booleans(),
)
@pytest.mark.parametrize("backend", BACKENDS)
def test_batches_merged_in_any_way_give_the_one_call_report(
    backend: str, seed: int, cuts: list[int], mode: str, via_bytes: bool
) -> None:
    y, p, w = make(seed, 200, 3)
    groups = np.random.default_rng(seed).choice(np.array(["a", "b", "c", "d"]), 200)
    settings: dict[str, Any] = {"ranking": mode, "backend": backend, "zero_division": 0}
    bounds = [0, *sorted(set(cuts)), 200]
    parts = []
    for lo, hi in itertools.pairwise(bounds):
        ev = Evaluator(group_by=True, **settings)
        ev.update(y[lo:hi], y_proba=p[lo:hi], sample_weight=w[lo:hi], groups=groups[lo:hi])
        parts.append(Evaluator.from_bytes(ev.to_bytes()) if via_bytes else ev)
    merged = parts[-1]
    for other in reversed(parts[:-1]):
        merged = other.merge(merged)
    g = merged.grouped_report()
    check_grouped(g, {"y_true": y, "y_proba": p, "sample_weight": w}, groups, settings)
    assert merged.n_rows == 200 and sum(merged._groups[k].n_rows for k in merged.group_keys) == 200


@pytest.mark.parametrize("backend", BACKENDS)
def test_bytes_round_trip_and_pickle(backend: str) -> None:
    import pickle

    y, p, w = make(11, 300, 4)
    groups = np.random.default_rng(1).integers(0, 5, 300)
    ev = Evaluator(group_by=True, class_ranking="approximate", backend=backend, zero_division=0)
    ev.update(y, y_proba=p, sample_weight=w, groups=groups)
    for back in (Evaluator.from_bytes(ev.to_bytes()), pickle.loads(pickle.dumps(ev))):
        a, b = ev.grouped_report(), back.grouped_report()
        assert_same_report(b.overall, a.overall)
        for key in a:
            assert_same_report(b[key], a[key])
        assert back.to_bytes() == ev.to_bytes()


def test_the_grouped_approximate_state_is_bounded_by_its_bins() -> None:
    y, p, _ = make(2, 5000, 4, ties=False)
    groups = np.arange(5000) % 3
    ev = Evaluator(group_by=True, class_ranking="approximate", group_ranking_bins=16, zero_division=0)
    ev.update(y, y_proba=p, groups=groups)
    for key in ev.group_keys:
        assert all(len(g.values) <= 17 for g in ev._groups[key]._class_groups())
    check_grouped(
        ev.grouped_report(),
        {"y_true": y, "y_proba": p},
        groups,
        {"zero_division": 0, "class_ranking": "approximate"},
        group_bins=16,
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_group_input_is_refused(backend: str) -> None:
    y, p, _ = make(1, 10, 3)
    with pytest.raises(ValidationError, match="group_by=True"):
        Evaluator(backend=backend).update(y, y_proba=p, groups=np.zeros(10, int))
    with pytest.raises(ValidationError, match="pass groups="):
        Evaluator(group_by=True, backend=backend).update(y, y_proba=p)
    with pytest.raises(LengthMismatchError, match="groups has 9 rows"):
        cmetrics.evaluate(y, y_proba=p, groups=np.zeros(9, int), backend=backend)
    with pytest.raises(ValidationError, match="float labels must be integral"):
        cmetrics.evaluate(y, y_proba=p, groups=np.linspace(0, 1, 10), backend=backend)
    with pytest.raises(UnsupportedDtypeError):
        cmetrics.evaluate(y, y_proba=p, groups=np.zeros(10, complex), backend=backend)
    with pytest.raises(ValidationError, match="keep_confidence"):
        cmetrics.evaluate(y, y_proba=p, groups=np.zeros(10, int), keep_confidence=True, backend=backend)
    with pytest.raises(ValidationError, match="empty tuple"):
        cmetrics.evaluate(y, y_proba=p, groups=(), backend=backend)
    with pytest.raises(ValidationError, match="max_groups"):
        Evaluator(group_by=True, max_groups=0)
    with pytest.raises(ValidationError, match="group_by must be True or False"):
        Evaluator(group_by="yes")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="grouped_report"):
        Evaluator().update(y, y_proba=p).grouped_report()


@pytest.mark.parametrize("backend", BACKENDS)
def test_too_many_groups_raise_before_anything_changes(backend: str) -> None:
    y, p, _ = make(1, 30, 3)
    ev = Evaluator(group_by=True, max_groups=4, backend=backend)
    ev.update(y[:10], y_proba=p[:10], groups=np.arange(10) % 3)
    before = ev.to_bytes()
    with pytest.raises(LimitExceededError, match="max_groups=4"):
        ev.update(y[10:], y_proba=p[10:], groups=np.arange(20) % 5)  # 2 new groups: 5 in all
    assert ev.to_bytes() == before
    with pytest.raises(LimitExceededError, match="above max_groups"):
        cmetrics.evaluate(y, y_proba=p, groups=np.arange(30), max_groups=29, backend=backend)
    other = Evaluator(group_by=True, max_groups=4, backend=backend)
    other.update(y[10:], y_proba=p[10:], groups=np.arange(20) % 2 + 10)
    with pytest.raises(LimitExceededError, match="the merged states have 5"):
        ev.merge(other)
    assert ev.to_bytes() == before


def test_many_classes_times_many_groups_are_refused_before_anything_changes() -> None:
    """2,000 classes in each of 40 groups would need 40 x 2,000^2 cells of tables."""
    y = np.tile(np.arange(2000), 40)
    ev = Evaluator(group_by=True, max_groups=100)
    ev.update(y[:10], y_pred=y[:10], groups=np.zeros(10, int))
    before = ev.to_bytes()
    with pytest.raises(LimitExceededError, match="table cells"):
        ev.update(y, y_pred=y, groups=np.repeat(np.arange(40), 2000))
    assert ev.to_bytes() == before


def test_a_million_distinct_values_are_refused_before_they_are_sorted() -> None:
    n = 1_000_000
    y = np.zeros(n, np.int64)
    with pytest.raises(LimitExceededError, match="groups has 1,000,000 distinct values, above max_groups=10,000"):
        cmetrics.evaluate(y, y_pred=y, groups=np.arange(n))
    with pytest.raises(LimitExceededError, match=r"groups\[1\] has 1,000,000"):
        cmetrics.evaluate(y, y_pred=y, groups=(np.zeros(n, int), np.arange(n).astype(str)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bad_row_is_named_by_its_place_in_the_batch(backend: str) -> None:
    y, p, _ = make(4, 40, 3)
    p[17] = [0.5, 0.6, 0.2]  # sums to 1.3
    with pytest.raises(ValidationError, match=r"\b17\b") as grouped:
        cmetrics.evaluate(y, y_proba=p, groups=np.arange(40) % 4, backend=backend)
    with pytest.raises(ValidationError) as plain:
        cmetrics.evaluate(y, y_proba=p, backend=backend)
    assert type(grouped.value) is type(plain.value) and str(grouped.value) == str(plain.value)


def test_kinds_and_settings_must_match() -> None:
    y, p, _ = make(1, 20, 3)
    ev = Evaluator(group_by=True)
    ev.update(y[:10], y_proba=p[:10], groups=np.arange(10) % 2)
    with pytest.raises(ValidationError, match="kinds"):
        ev.update(y[10:], y_proba=p[10:], groups=np.array(["a"] * 10))
    with pytest.raises(StateError, match="ungrouped"):
        ev.merge(Evaluator().update(y, y_proba=p))
    approx = Evaluator(group_by=True, class_ranking="approximate", group_ranking_bins=8)
    approx.update(y, y_proba=p, groups=np.arange(20) % 2)
    with pytest.raises(StateError, match="group_ranking_bins"):
        approx.merge(Evaluator(group_by=True, class_ranking="approximate").update(y, y_proba=p, groups=np.zeros(20)))
    strings = Evaluator(group_by=True).update(y, y_proba=p, groups=np.array(["x"] * 20))
    with pytest.raises(StateError, match="different kinds"):
        ev.merge(strings)


def _forge(state: bytes, edit: Any) -> bytes:
    """The state with its JSON header edited by ``edit`` (checksum made valid again)."""
    hlen = struct.unpack_from("<I", state, 12)[0]
    header = json.loads(state[16 : 16 + hlen])
    edit(header)
    head = json.dumps(header, separators=(",", ":")).encode()
    body = state[:12] + struct.pack("<I", len(head)) + head + state[16 + hlen : -4]
    return body + struct.pack("<I", zlib.crc32(body))


def _set(path: list[str], value: Any) -> Any:
    def edit(header: dict[str, Any]) -> None:
        node = header
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return edit


@pytest.mark.parametrize(
    ("what", "edit"),
    [
        ("duplicate keys", _set(["groups", "keys"], [1, 1])),
        ("a key of the wrong kind", _set(["groups", "keys"], ["a", 2])),
        ("a bool key", _set(["groups", "keys"], [True, 2])),
        ("a key beyond int64", _set(["groups", "keys"], [2**63, 2])),
        ("sizes past the end", _set(["groups", "sizes"], [10**9, 10])),
        ("sizes too small", _set(["groups", "sizes"], [3, 3])),
        ("more groups than allowed", _set(["groups", "max_groups"], 1)),
        ("unknown kinds", _set(["groups", "kinds"], ["float"])),
        ("a group count that disagrees", _set(["n_rows"], 7)),
        ("other group bins", _set(["groups", "ranking_bins"], 3)),
        ("fewer keys than states", _set(["groups", "keys"], [1])),
    ],
)
def test_forged_grouped_states_raise_state_error(what: str, edit: Any) -> None:
    y, p, _ = make(8, 40, 3)
    ev = Evaluator(group_by=True, class_ranking="approximate")
    ev.update(y, y_proba=p, groups=np.arange(40) % 2 + 1)
    state = ev.to_bytes()
    assert Evaluator.from_bytes(state).n_rows == 40
    with pytest.raises(StateError):
        Evaluator.from_bytes(_forge(state, edit))


def test_a_group_state_may_not_be_grouped_itself() -> None:
    y, p, _ = make(8, 10, 3)
    inner = Evaluator(group_by=True).update(y, y_proba=p, groups=np.zeros(10, int)).to_bytes()
    outer = Evaluator(group_by=True).update(y, y_proba=p, groups=np.zeros(10, int)).to_bytes()
    hlen = struct.unpack_from("<I", outer, 12)[0]
    header = json.loads(outer[16 : 16 + hlen])
    child_size = header["groups"]["sizes"][0]
    body_end = len(outer) - 4 - child_size
    header["groups"]["sizes"] = [len(inner)]
    head = json.dumps(header, separators=(",", ":")).encode()
    body = outer[:12] + struct.pack("<I", len(head)) + head + outer[16 + hlen : body_end] + inner
    with pytest.raises(StateError, match="itself grouped"):
        Evaluator.from_bytes(body + struct.pack("<I", zlib.crc32(body)))


def test_the_grouped_report_api() -> None:
    y, p, _ = make(6, 60, 3)
    groups = np.array(["x|y", "b\nz"] * 30)
    g = cmetrics.evaluate(y, y_proba=p, groups=groups, zero_division=0)
    assert len(g) == 2 and "x|y" in g
    with pytest.raises(KeyError, match="no group 'nope'"):
        g["nope"]
    rows = g.summary(["accuracy", "log_loss"])
    assert list(rows) == ["b\\nz", "x|y"]  # printable keys
    assert rows["x|y"]["accuracy"] == g["x|y"].accuracy and rows["x|y"]["n_samples"] == 30.0
    with pytest.raises(ValidationError, match="no metric 'nope'"):
        g.summary(["nope"])
    data = json.loads(g.to_json())
    assert data["group_by"] == ["groups"] and [e["group"] for e in data["groups"]] == ["b\nz", "x|y"]
    assert data["groups"][1]["report"]["metrics"]["accuracy"] == g["x|y"].accuracy
    assert data["metrics"]["accuracy"] == g.overall.accuracy
    md = g.to_markdown(["accuracy"])
    assert "## Per group (groups)" in md and "| x\\|y |" in md and "\nz" not in md
    assert "GroupedReport(2 groups" in repr(g)


def test_summary_rows_stay_distinct_when_texts_would_collide() -> None:
    y, p, _ = make(6, 40, 3)
    a = np.array(["x / y", "x"] * 20)
    b = np.array(["z", "y / z"] * 20)
    g = cmetrics.evaluate(y, y_proba=p, groups=(a, b), zero_division=0)
    rows = g.summary(["accuracy"])
    assert len(rows) == 2 == len(g)
    assert set(rows) == {repr(("x / y", "z")), repr(("x", "y / z"))}


@pytest.mark.parametrize("ties", [False, True])
def test_the_report_walks_the_union_of_many_groups_in_pieces(ties: bool) -> None:
    """Past 2^16 distinct confidences the report of all rows walks the groups' union in key
    ranges (Rust core) without making it; its ranking values equal the numpy backend's (which
    makes the union and walks it in one piece) and an ungrouped Evaluator's, and reading the
    union afterwards still gives the state of every row."""
    n = 120_000
    y, p, _ = make(17, n, 5, ties=ties)
    g = np.random.default_rng(3).integers(0, 40, n)
    reports = {}
    for backend in ("rust", "numpy"):
        ev = Evaluator(n_classes=5, group_by=True, backend=backend)
        for lo in range(0, n, 50_000):
            ev.update(y[lo : lo + 50_000], y_proba=p[lo : lo + 50_000], groups=g[lo : lo + 50_000])
        reports[backend] = ev.report()
        plain = Evaluator(n_classes=5, backend=backend)
        plain.update(y, y_proba=p)
        assert_same_report(reports[backend], plain.report())
        summary, want = ev.ranking_summary(), plain.ranking_summary()
        assert summary is not None and want is not None
        assert np.array_equal(summary.values, want.values) and np.array_equal(summary.n_pos, want.n_pos)
        assert ties or summary.values.shape[0] > 1 << 16  # the pieces' path, without ties
    assert_same_report(reports["rust"], reports["numpy"])
    for key in ("refinement", "auroc_confidence", "reversed_pair_proportion"):  # exact pair counts
        assert reports["rust"].metrics[key] == reports["numpy"].metrics[key]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_the_ranking_state_of_all_rows_is_the_union_of_the_groups(backend: str, weighted: bool) -> None:
    """With probabilities in the exact mode, the state of all rows is made from the groups'
    states when it is read: it holds what an ungrouped Evaluator fed the same rows holds,
    after batches, a read, more batches, merges with states read back from bytes, and a
    merge with itself."""
    y, p, w = make(11, 900, 4)
    g = np.random.default_rng(5).integers(0, 7, 900)
    grouped = Evaluator(n_classes=4, group_by=True, backend=backend)
    plain = Evaluator(n_classes=4, backend=backend)

    def feed(ev: Evaluator, lo: int, hi: int, grouped_rows: bool) -> None:
        extra: dict[str, Any] = {"groups": g[lo:hi]} if grouped_rows else {}
        ev.update(y[lo:hi], y_proba=p[lo:hi], sample_weight=w[lo:hi] if weighted else None, **extra)

    def same(a: Evaluator, b: Evaluator) -> None:
        x, z = a.ranking_summary(), b.ranking_summary()
        assert x is not None and z is not None
        assert np.array_equal(x.values, z.values)
        assert np.array_equal(x.n_pos, z.n_pos) and np.array_equal(x.n_neg, z.n_neg)
        if weighted:
            assert x.w_pos is not None and z.w_pos is not None and x.w_neg is not None and z.w_neg is not None
            np.testing.assert_allclose(x.w_pos, z.w_pos, rtol=1e-12)
            np.testing.assert_allclose(x.w_neg, z.w_neg, rtol=1e-12)
        assert_same_report(a.report(), b.report())

    feed(grouped, 0, 300, True)
    feed(plain, 0, 300, False)
    same(grouped, plain)  # made from the groups on this read...
    feed(grouped, 300, 500, True)
    feed(plain, 300, 500, False)
    same(grouped, plain)  # ...and made again after more rows
    assert "ranking_entries=" in repr(grouped)  # the entries held (the union keeps each group's)
    other = Evaluator(n_classes=4, group_by=True, backend=backend)
    feed(other, 500, 900, True)
    feed(plain, 500, 900, False)
    loaded = Evaluator.from_bytes(grouped.to_bytes())  # a state read back holds its own
    loaded.merge(other)
    grouped.merge(Evaluator.from_bytes(other.to_bytes()))
    same(loaded, plain)
    same(grouped, plain)
    assert grouped.to_bytes() == loaded.to_bytes() or weighted  # weights: sums in another order
    grouped.merge(grouped)
    plain.merge(plain)
    same(grouped, plain)

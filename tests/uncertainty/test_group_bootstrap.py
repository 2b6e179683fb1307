"""Evaluator(bootstrap=N, group_by=True): every group's report gets Poisson intervals from its
own replicate sums, its rows drawn with their global indices. The oracle: an ungrouped
Evaluator fed all the rows with weight 0 outside the group (the same rows, the same global
indices, nothing else counted). Batches, partitions, merge orders, bytes and backends change
nothing; the memory limit and forged group states are refused."""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

import numpy as np
import pytest

import cmetrics
from cmetrics.exceptions import LimitExceededError, StateError

B = 150
SEED = 5
K = 3
METRICS = ["accuracy", "f1_macro", "matthews_corrcoef", "cohen_kappa", "precision_weighted"]
PROB = ["cf1_macro", "crecall_micro", "log_loss", "brier_score"]


def _rows(n: int = 3000, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    z = rng.normal(size=(n, K))
    z[np.arange(n), y] += 1.0
    p = np.exp(z)
    groups = np.asarray(["north", "south", "west"])[rng.integers(0, 3, n)]
    return y, p / p.sum(axis=1, keepdims=True), groups, rng.uniform(0.2, 2.0, n)


def _inputs(proba: bool, p: np.ndarray, rows: slice = slice(None)) -> dict[str, np.ndarray]:
    return {"y_proba": p[rows]} if proba else {"y_pred": p[rows].argmax(1)}


def _evaluator(backend: str, **kw: Any) -> cmetrics.Evaluator:
    return cmetrics.Evaluator(n_classes=K, bootstrap=B, seed=SEED, ranking="off", backend=backend, **kw)


def _same(a: cmetrics.BootstrapResult | None, b: cmetrics.BootstrapResult | None, names: list[str]) -> None:
    assert a is not None and b is not None
    assert a.provenance.scheme == b.provenance.scheme == "poisson"
    for name in names:
        x, y = a[name], b[name]
        for field in ("estimate", "low", "high", "standard_error"):
            assert getattr(x, field) == pytest.approx(getattr(y, field), rel=1e-12, abs=1e-14), (name, field)
        assert x.n_undefined == y.n_undefined


@pytest.mark.parametrize("proba", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_each_group_has_the_replicates_of_its_rows(backend: str, proba: bool, weighted: bool) -> None:
    y, p, groups, w = _rows()
    weight = w if weighted else None
    ev = _evaluator(backend, group_by=True).update(y, **_inputs(proba, p), sample_weight=weight, groups=groups)
    report = ev.grouped_report()
    names = METRICS + (PROB if proba else [])
    alone = _evaluator(backend).update(y, **_inputs(proba, p), sample_weight=weight)
    _same(report.overall.intervals, alone.report().intervals, names)  # all rows: as without groups
    for key in ("north", "south", "west"):
        inside = (groups == key).astype(np.float64) * (1.0 if weight is None else weight)
        oracle = _evaluator(backend).update(y, **_inputs(proba, p), sample_weight=inside)
        _same(report[key].intervals, oracle.report().intervals, names)
        assert report[key].intervals is not None
        assert report[key].intervals["accuracy"].estimate == pytest.approx(report[key].accuracy, rel=1e-12)


@pytest.mark.parametrize("proba", [False, True])
def test_batches_partitions_merges_and_bytes_change_nothing(backend: str, proba: bool) -> None:
    y, p, groups, _ = _rows(seed=1)
    names = METRICS + (PROB if proba else [])
    whole = _evaluator(backend, group_by=True).update(y, **_inputs(proba, p), groups=groups).grouped_report()
    cuts = [(0, 700), (700, 1900), (1900, 3000)]
    parts = [
        _evaluator(backend, group_by=True).update(
            y[lo:hi], **_inputs(proba, p, slice(lo, hi)), groups=groups[lo:hi], row_offset=lo
        )
        for lo, hi in cuts
    ]
    merged = cmetrics.merge_all([parts[2].to_bytes(), parts[0].to_bytes(), parts[1].to_bytes()])
    batches = _evaluator(backend, group_by=True)
    for lo, hi in cuts:  # batches in order: the rows follow each other
        batches.update(y[lo:hi], **_inputs(proba, p, slice(lo, hi)), groups=groups[lo:hi])
    for ev in (merged, batches, cmetrics.Evaluator.from_bytes(batches.to_bytes())):
        got = ev.grouped_report()
        for key in whole.groups:
            _same(got[key].intervals, whole[key].intervals, names)
        _same(got.overall.intervals, whole.overall.intervals, names)


def test_the_backends_agree() -> None:
    y, p, groups, w = _rows(seed=2)
    rust, numpy = (
        _evaluator(b, group_by=True).update(y, y_proba=p, sample_weight=w, groups=groups).grouped_report()
        for b in ("rust", "numpy")
    )
    for key in rust.groups:
        _same(rust[key].intervals, numpy[key].intervals, METRICS + PROB)


def test_too_many_replicate_sums_are_refused_before_anything_is_kept() -> None:
    n = 4000
    rng = np.random.default_rng(3)
    y = rng.integers(0, 10, n)
    ev = cmetrics.Evaluator(n_classes=10, bootstrap=2000, group_by=True).update(y[:10], y_pred=y[:10], groups=y[:10])
    before = ev.to_bytes()
    # 2000 replicates x 100 cells per group: 2^27 sums hold about 670 groups.
    with pytest.raises(LimitExceededError, match="fewer replicates or groups"):
        ev.update(y, y_pred=y, groups=np.arange(n))
    assert ev.to_bytes() == before


def _children(data: bytes) -> tuple[dict[str, Any], bytes, list[bytes]]:
    """A grouped state's header, the bytes before its groups' states, and those states."""
    (size,) = struct.unpack_from("<I", data, 12)
    header = json.loads(data[16 : 16 + size])
    sizes = header["groups"]["sizes"]
    end = len(data) - 4
    start = end - sum(sizes)
    blobs, at = [], start
    for s in sizes:
        blobs.append(data[at : at + s])
        at += s
    return header, data[16 + size : start], blobs


def _with_child(data: bytes, i: int, edit: Any) -> bytes:
    """``data`` with the header of its ``i``-th group's state changed by ``edit`` (checksums
    and sizes made good again)."""
    header, arrays, blobs = _children(data)
    child = blobs[i]
    (csize,) = struct.unpack_from("<I", child, 12)
    child_header = json.loads(child[16 : 16 + csize])
    edit(child_header)
    head = json.dumps(child_header, separators=(",", ":")).encode()
    body = child[:12] + struct.pack("<I", len(head)) + head + child[16 + csize : -4]
    blobs[i] = body + struct.pack("<I", zlib.crc32(body))
    header["groups"]["sizes"] = [len(b) for b in blobs]
    top = json.dumps(header, separators=(",", ":")).encode()
    outer = data[:12] + struct.pack("<I", len(top)) + top + arrays + b"".join(blobs)
    return outer + struct.pack("<I", zlib.crc32(outer))


def test_forged_group_states_are_refused() -> None:
    y, p, groups, _ = _rows(n=300)
    good = _evaluator("auto", group_by=True).update(y, y_proba=p, groups=groups).to_bytes()
    assert cmetrics.Evaluator.from_bytes(good).grouped_report()["north"].intervals is not None
    assert cmetrics.Evaluator.from_bytes(_with_child(good, 0, lambda h: None)).n_rows == 300  # the helper is sound
    forged = {
        "a group with row ranges": lambda h: h["bootstrap"].__setitem__("ranges", [[0, 5]]),
        "a group with another seed": lambda h: h["bootstrap"].__setitem__("seed", SEED + 1),
        "a group without bootstrap": lambda h: (h.pop("bootstrap"), h.__setitem__("arrays", h["arrays"][:-2])),
    }
    for what, edit in forged.items():
        with pytest.raises(StateError):
            cmetrics.Evaluator.from_bytes(_with_child(good, 1, edit))
        del what

"""Evaluator(bootstrap=N): Poisson replicate sums carried through update, merge, to_bytes and
pickle, equal to :func:`cmetrics.bootstrap` of all the rows at once, whatever the batches,
partitions, merge order or backend; and its bad arguments and forged states refused."""

from __future__ import annotations

import itertools
import json
import pickle
import struct
import zlib

import numpy as np
import pytest

import cmetrics
from cmetrics.exceptions import StateError, ValidationError

B = 120
SEED = 17


def _rows(n: int = 2400, k: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    z = rng.normal(size=(n, k))
    z[np.arange(n), y] += 1.2
    p = np.exp(z)
    return y, p / p.sum(axis=1, keepdims=True)


def _inputs(proba: bool, y: np.ndarray, p: np.ndarray, lo: int = 0, hi: int | None = None) -> dict[str, np.ndarray]:
    return {"y_proba": p[lo:hi]} if proba else {"y_pred": p[lo:hi].argmax(1)}


def _evaluator(backend: str, **kw: object) -> cmetrics.Evaluator:
    return cmetrics.Evaluator(n_classes=3, bootstrap=B, seed=SEED, ranking="off", backend=backend, **kw)  # type: ignore[arg-type]


def _same(a: cmetrics.BootstrapResult, b: cmetrics.BootstrapResult, names: list[str], tol: float) -> None:
    for name in names:
        x, y = a[name], b[name]
        for field in ("estimate", "low", "high", "standard_error"):
            assert getattr(x, field) == pytest.approx(getattr(y, field), rel=tol, abs=tol), (name, field)
        assert x.n_undefined == y.n_undefined


TABLE = [
    "accuracy",
    "f1_macro",
    "precision_weighted",
    "recall_micro",
    "matthews_corrcoef",
    "cohen_kappa",
    "informedness",
]
PROB = ["cf1_macro", "cprecision_weighted", "crecall_micro", "log_loss", "brier_score"]


@pytest.mark.parametrize("proba", [False, True])
def test_one_batch_equals_the_bootstrap_of_the_rows(backend: str, proba: bool) -> None:
    y, p = _rows()
    ev = _evaluator(backend).update(y, **_inputs(proba, y, p))
    got = ev.report().intervals
    assert got is not None and got.provenance.scheme == "poisson"
    # Unit weights make cmetrics.bootstrap take Poisson row weights for hard labels too.
    names = TABLE + (PROB if proba else [])
    want = cmetrics.bootstrap(
        y,
        **_inputs(proba, y, p),
        sample_weight=np.ones(y.size),
        labels=[0, 1, 2],
        n_resamples=B,
        seed=SEED,
        metrics=[*names, "f1"],
        backend=backend,  # type: ignore[arg-type]
    )
    _same(got, want, names, 1e-12)
    for label in ("0", "1", "2"):
        assert got.per_class[label]["f1"].low == pytest.approx(want.per_class[label]["f1"].low, rel=1e-12)
    assert got["accuracy"].estimate == ev.report().accuracy


@pytest.mark.parametrize("proba", [False, True])
def test_batches_partitions_merges_and_bytes_change_nothing(backend: str, proba: bool) -> None:
    y, p = _rows()
    names = TABLE + (PROB if proba else [])
    whole = _evaluator(backend).update(y, **_inputs(proba, y, p)).report().intervals
    assert whole is not None
    # Batches in order, numbered by default.
    ev = _evaluator(backend)
    for lo in range(0, y.size, 500):
        ev.update(y[lo : lo + 500], **_inputs(proba, y, p, lo, lo + 500))
    _same(ev.report().intervals, whole, names, 1e-12)  # type: ignore[arg-type]
    # Partitions fed out of order to their own Evaluators, sent as bytes, merged in two orders.
    cuts = [0, 700, 1100, 2400]
    parts = []
    for lo, hi in reversed(list(itertools.pairwise(cuts))):
        part = _evaluator(backend).update(y[lo:hi], **_inputs(proba, y, p, lo, hi), row_offset=lo)
        parts.append(cmetrics.Evaluator.from_bytes(part.to_bytes()))
    for order in (parts, parts[::-1]):
        merged = _evaluator(backend)
        for part in order:
            merged.merge(pickle.loads(pickle.dumps(part)))
        _same(merged.report().intervals, whole, names, 1e-12)  # type: ignore[arg-type]


def test_float32_batches_give_their_float64_widenings_intervals(backend: str) -> None:
    """Batches of float32 probabilities are read as they are (no float64 copy): the intervals
    are those of the same values widened to float64, bit for bit."""
    y, p = _rows()
    p32 = p.astype(np.float32)
    got = [_evaluator(backend), _evaluator(backend)]
    for lo in range(0, y.size, 700):
        got[0].update(y[lo : lo + 700], y_proba=p32[lo : lo + 700])
        got[1].update(y[lo : lo + 700], y_proba=p32[lo : lo + 700].astype(np.float64))
    a, b = (ev.report().intervals for ev in got)
    assert a is not None and b is not None
    assert repr(a.to_dict()) == repr(b.to_dict())
    _same(a, b, TABLE + PROB, 0.0)


def test_the_backends_and_thread_counts_agree() -> None:
    if not cmetrics.rust_available():
        pytest.skip("the compiled core is not built")
    y, p = _rows(seed=3)
    names = TABLE + PROB
    rust = _evaluator("rust").update(y, y_proba=p).report().intervals
    numpy = _evaluator("numpy").update(y, y_proba=p).report().intervals
    _same(rust, numpy, names, 1e-10)  # type: ignore[arg-type]
    threads = cmetrics.get_num_threads()
    try:
        cmetrics.set_num_threads(1)
        one = _evaluator("rust").update(y, y_proba=p).report().intervals
    finally:
        cmetrics.set_num_threads(threads)
    assert one is not None and rust is not None
    assert one.metrics == rust.metrics and one.per_class == rust.per_class


def test_weighted_rows_equal_the_bootstrap_of_weighted_rows(backend: str) -> None:
    y, p = _rows(seed=4)
    w = np.random.default_rng(9).uniform(0.1, 3.0, y.size)
    ev = _evaluator(backend).update(y, y_proba=p, sample_weight=w)
    want = cmetrics.bootstrap(
        y,
        y_proba=p,
        sample_weight=w,
        labels=[0, 1, 2],
        n_resamples=B,
        seed=SEED,
        metrics=TABLE + PROB,
        backend=backend,  # type: ignore[arg-type]
    )
    _same(ev.report().intervals, want, TABLE + PROB, 1e-9)  # type: ignore[arg-type]


def test_bad_options_and_merges_are_refused(backend: str) -> None:
    with pytest.raises(ValidationError, match="labels= or n_classes="):
        cmetrics.Evaluator(bootstrap=10)
    for bad in (0, -1, 2.5, True, 1 << 21):
        with pytest.raises(ValidationError, match="bootstrap="):
            cmetrics.Evaluator(n_classes=2, bootstrap=bad)  # type: ignore[arg-type]
        # Without labels the bad count is still what the message names.
        with pytest.raises(ValidationError, match=rf"bootstrap={bad!r} is invalid"):
            cmetrics.Evaluator(bootstrap=bad)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="seed="):
        cmetrics.Evaluator(n_classes=2, bootstrap=10, seed=-1)
    with pytest.raises(ValidationError, match="confidence_level"):
        cmetrics.Evaluator(n_classes=2, bootstrap=10, confidence_level=1.0)
    with pytest.raises(ValidationError, match="bootstrap="):
        cmetrics.Evaluator(n_classes=2, seed=3)
    with pytest.raises(ValidationError, match="row_offset"):
        cmetrics.Evaluator(n_classes=2).update([0, 1], y_pred=[0, 1], row_offset=0)
    ev = cmetrics.Evaluator(n_classes=2, bootstrap=10, backend=backend).update([0, 1, 1], y_pred=[0, 1, 0])
    with pytest.raises(ValidationError, match="row_offset"):
        ev.update([0], y_pred=[0], row_offset=-1)
    # Rows 0..2 again: their draws would repeat; the state is left as it was.
    before = ev.to_bytes()
    with pytest.raises(StateError, match="row_offset"):
        ev.update([0, 1], y_pred=[0, 1], row_offset=2)
    assert ev.to_bytes() == before
    other = cmetrics.Evaluator(n_classes=2, bootstrap=10, backend=backend).update([1, 1], y_pred=[1, 0])
    with pytest.raises(StateError, match="row_offset"):
        ev.merge(other)
    assert ev.to_bytes() == before
    with pytest.raises(StateError, match="bootstrap"):
        ev.merge(cmetrics.Evaluator(n_classes=2, bootstrap=10, seed=1).update([1], y_pred=[1], row_offset=50))
    with pytest.raises(StateError, match="bootstrap"):
        ev.merge(cmetrics.Evaluator(n_classes=2).update([1], y_pred=[1]))
    with pytest.raises(StateError, match="row_offset"):
        ev.merge(ev)
    ev.merge(other.__class__.from_bytes(_renumbered(other.to_bytes(), 3)))
    assert ev.n_rows == 5


def _rewrite(data: bytes, edit: object) -> bytes:
    """``data`` with its JSON header changed by ``edit`` (and a fresh checksum)."""
    magic, version, zero, size = struct.unpack_from("<8sHHI", data)
    header = json.loads(data[16 : 16 + size])
    edit(header)  # type: ignore[operator]
    head = json.dumps(header, separators=(",", ":")).encode()
    body = struct.pack("<8sHHI", magic, version, zero, len(head)) + head + data[16 + size : -4]
    return body + struct.pack("<I", zlib.crc32(body))


def _renumbered(data: bytes, first: int) -> bytes:
    def edit(h: dict) -> None:  # type: ignore[type-arg]
        ((start, end),) = h["bootstrap"]["ranges"]
        h["bootstrap"]["ranges"] = [[first, first + end - start]]

    return _rewrite(data, edit)


def test_forged_states_are_refused() -> None:
    good = cmetrics.Evaluator(n_classes=2, bootstrap=8).update([0, 1, 1, 0], y_pred=[0, 1, 0, 0]).to_bytes()
    cmetrics.Evaluator.from_bytes(good)

    def ranges(value: object):
        return lambda h: h["bootstrap"].__setitem__("ranges", value)

    forged = {
        "more rows than counted": ranges([[0, 5]]),
        "overlapping ranges": ranges([[0, 3], [2, 3]]),
        "unsorted ranges": ranges([[10, 12], [0, 2]]),
        "not a list": ranges("0-4"),
        "a negative start": ranges([[-1, 3]]),
        "replicates other than the sums": lambda h: h["bootstrap"].__setitem__("n_resamples", 9),
        "a bad seed": lambda h: h["bootstrap"].__setitem__("seed", -5),
        "probabilities claimed": lambda h: h["bootstrap"].__setitem__("proba", True),
        "options dropped": lambda h: h.pop("bootstrap"),
        "unknown row weights": lambda h: h["bootstrap"].__setitem__("weights", 3),
        "row weights not a number": lambda h: h["bootstrap"].__setitem__("weights", "2"),
    }
    for what, edit in forged.items():
        with pytest.raises(StateError):
            cmetrics.Evaluator.from_bytes(_rewrite(good, edit))
        del what
    # A negative replicate sum, checksum fixed.
    _magic, _version, _zero, size = struct.unpack_from("<8sHHI", good)
    header = json.loads(good[16 : 16 + size])
    at = 16 + size
    for spec in header["arrays"]:
        if spec["name"] == "bootstrap.sums":
            break
        at += int(np.prod(spec["shape"])) * np.dtype(spec["dtype"]).itemsize
    body = bytearray(good[:-4])
    body[at : at + 8] = struct.pack("<d", -1.0)
    with pytest.raises(StateError, match="negative"):
        cmetrics.Evaluator.from_bytes(bytes(body) + struct.pack("<I", zlib.crc32(bytes(body))))


def test_a_state_of_the_first_row_weights_reports_but_takes_no_rows(backend: str) -> None:
    """A state saved before the row weights read half words (its header has no ``weights``)
    keeps its intervals, merges with states of its version, and refuses new rows and states of
    this version's weights (their replicates would mix two streams)."""
    y, p = _rows(600)
    ev = _evaluator(backend).update(y[:300], y_pred=p[:300].argmax(1))
    blob = ev.to_bytes()
    assert json.loads(blob[16 : 16 + struct.unpack_from("<I", blob, 12)[0]])["bootstrap"]["weights"] == 2

    def first_weights(h: dict) -> None:
        del h["bootstrap"]["weights"]

    old = cmetrics.Evaluator.from_bytes(_rewrite(blob, first_weights))
    _same(old.report().intervals, ev.report().intervals, TABLE, 0.0)
    other = _evaluator(backend).update(y[300:], y_pred=p[300:].argmax(1), row_offset=300)
    other_old = cmetrics.Evaluator.from_bytes(_rewrite(other.to_bytes(), first_weights))
    with pytest.raises(StateError, match="no new rows"):
        old.update(y[300:], y_pred=p[300:].argmax(1), row_offset=300)
    with pytest.raises(StateError, match="different row weights"):
        old.merge(other)
    with pytest.raises(StateError, match="different row weights"):
        other.merge(old)
    merged = old.merge(other_old)
    both = _evaluator(backend).update(y, y_pred=p.argmax(1))
    # The sums of the two old states are this version's (only the label changed): their merge
    # is the one-pass state's.
    _same(merged.report().intervals, both.report().intervals, TABLE, 1e-12)
    assert b'"weights":1' in merged.to_bytes()

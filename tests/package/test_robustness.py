"""Crashes, hangs and undocumented exceptions found by testing from outside: class counts
capped before allocation, forged states, Ctrl-C, thread counts, odd label containers, and
the same exception class on both backends."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cmetrics
from cmetrics.exceptions import (
    InternalError,
    LabelError,
    LimitExceededError,
    ShapeError,
    UnsupportedDtypeError,
    ValidationError,
)
from cmetrics.streaming import FORMAT_VERSION, StateError
from tests.conftest import BACKENDS

#: Seconds within which a call that must not hang returns: a bound that catches a hang (the
#: kernels above run for 10 s and more) and that a loaded 2-core machine meets. Speed is
#: measured in benches/, never here.
HANG = 5.0

needs_rust = pytest.mark.skipif(not cmetrics.rust_available(), reason="the compiled extension is not built")

# -- class counts are capped before anything is allocated -------------------------------------


def seconds_to_refuse(fn: Callable[[], Any]) -> float:
    """Seconds taken by ``fn`` (which must raise LimitExceededError)."""
    start = time.perf_counter()
    with pytest.raises(LimitExceededError, match="max_classes"):
        fn()
    return time.perf_counter() - start


@pytest.mark.parametrize(
    "call",
    [
        lambda b: cmetrics.log_loss(
            np.zeros(2, int), np.full((2, 20_000), 1 / 20_000), labels=np.arange(20_000), backend=b
        ),
        lambda b: cmetrics.prob_confusion_matrix([0, 1], np.full((2, 5000), 1 / 5000), backend=b),
        lambda b: cmetrics.precision_score([0, 1], [0, 1], labels=list(range(30_000)), average=None, backend=b),
        lambda b: cmetrics.confusion_matrix([0, 1], [0, 1], labels=np.arange(30_000), backend=b),
        lambda b: cmetrics.Evaluator(n_classes=2**40, backend=b),
        lambda b: cmetrics.Evaluator(labels=range(10_000), backend=b),
        lambda b: cmetrics.confusion_matrix(np.arange(5000), np.arange(5000), backend=b),
        lambda b: cmetrics.confusion_matrix(np.arange(5000).astype(str), np.arange(5000).astype(str), backend=b),
        lambda b: cmetrics.confusion_matrix(
            np.arange(5000).astype(str).astype(object), np.arange(5000).astype(str).astype(object), backend=b
        ),
        lambda b: cmetrics.confusion_matrix(np.arange(5000) * 1000, np.arange(5000) * 1000, backend=b),
        lambda b: cmetrics.ConfusionMatrix.from_predictions([0, 1, 2], [0, 1, 2], max_classes=2, backend=b),
        lambda b: cmetrics.Evaluator(max_classes=3, backend=b).update([0, 1, 2, 3], y_pred=[0, 1, 2, 3]),
    ],
)
def test_class_counts_are_capped_before_allocation(backend: str, call: Callable[[str], Any]) -> None:
    assert seconds_to_refuse(lambda: call(backend)) < HANG  # refused before anything is allocated or counted


def test_the_limit_is_a_setting_and_states_the_memory() -> None:
    with pytest.raises(LimitExceededError, match=r"20,000 classes.*6\.0 GiB.*set_max_classes\(20000\)"):
        cmetrics.log_loss([0, 1], np.full((2, 20_000), 1 / 20_000), labels=np.arange(20_000))
    assert cmetrics.get_max_classes() == 4096
    try:
        cmetrics.set_max_classes(8)
        with pytest.raises(LimitExceededError):
            cmetrics.confusion_matrix(np.arange(9), np.arange(9))
        assert cmetrics.confusion_matrix(np.arange(8), np.arange(8)).shape == (8, 8)
    finally:
        cmetrics.set_max_classes(None)
    assert cmetrics.get_max_classes() == 4096
    big = cmetrics.ConfusionMatrix.from_predictions(np.arange(5000), np.arange(5000), max_classes=5000)
    assert big.n_classes == 5000


@pytest.mark.parametrize("bad", [-1, 0, 1.5, "10", True, None])
def test_max_classes_must_be_a_positive_integer(backend: str, bad: Any) -> None:
    if bad is None:  # None means the global setting
        assert cmetrics.ConfusionMatrix.from_predictions([0, 1], [0, 1], max_classes=None, backend=backend)
        return
    with pytest.raises(ValidationError, match="max_classes"):
        cmetrics.ConfusionMatrix.from_predictions([0, 1], [0, 1], max_classes=bad, backend=backend)
    with pytest.raises(ValidationError, match="max_classes"):
        cmetrics.Evaluator(max_classes=bad, backend=backend)
    with pytest.raises(ValidationError, match="max_classes"):
        cmetrics.set_max_classes(bad)
    # A limit beyond any machine is accepted (it is the caller's choice) on both backends alike.
    assert cmetrics.ConfusionMatrix.from_predictions([0, 1], [0, 1], max_classes=2**64, backend=backend).n_classes == 2


def test_the_command_line_caps_probability_columns(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    k = 5000
    table = pa.table(
        {"label": pa.array([0, 1], pa.int32()), **{f"p_{j}": pa.array([1 / k, 1 / k], pa.float32()) for j in range(k)}}
    )
    path = tmp_path / "wide.parquet"
    pq.write_table(table, path)
    out = subprocess.run(
        [sys.executable, "-m", "cmetrics", "score", str(path), "--label", "label", "--proba-prefix", "p_", "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2, out.stderr
    assert "5,000 classes, above max_classes=4,096" in out.stderr and "Traceback" not in out.stderr
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "cmetrics",
            "score",
            str(path),
            "--label",
            "label",
            "--proba-prefix",
            "p_",
            "--quiet",
            "--max-classes",
            "100",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2 and "above max_classes=100" in out.stderr


# -- forged states ------------------------------------------------------------------------------


def state_parts(ev: cmetrics.Evaluator) -> tuple[dict[str, Any], bytes]:
    data = ev.to_bytes()
    (hlen,) = struct.unpack_from("<I", data, 12)
    return json.loads(data[16 : 16 + hlen]), data[16 + hlen : -4]


def forge(header: dict[str, Any], body: bytes) -> bytes:
    """A state with a valid checksum around any header and body."""
    head = json.dumps(header).encode()
    payload = struct.pack("<8sHHI", b"CMETRICS", FORMAT_VERSION, 0, len(head)) + head + body
    return payload + struct.pack("<I", zlib.crc32(payload))


def example_state(weighted: bool = False, hard: bool = False) -> cmetrics.Evaluator:
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 200)
    w = rng.random(200) + 0.1 if weighted else None
    ev = cmetrics.Evaluator(n_classes=None if hard else 3)
    if hard:
        return ev.update(y, y_pred=rng.integers(0, 3, 200), confidence=rng.random(200), sample_weight=w)
    p = rng.dirichlet(np.ones(3), 200)
    return ev.update(y, y_proba=p, sample_weight=w)


def mutate(header: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    h = json.loads(json.dumps(header))
    node = h
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return h


FORGERIES: list[tuple[str, list[Any], Any]] = [
    ("huge row count", ["n_rows"], 2**62),
    ("negative row count", ["n_rows"], -5),
    ("row count not matching the counts", ["n_rows"], 199),
    ("flipped weighted flag", ["weighted"], True),
    ("duplicated labels", ["labels", "values"], [0, 0, 1]),
    ("labels of another length", ["labels", "values"], [0, 1, 2, 3]),
    ("string labels in an int state", ["labels", "values"], ["a", "b", "c"]),
    ("labels past int64", ["labels", "values"], [0, 1, 2**70]),
    ("unknown mode", ["mode"], "other"),
    ("no labels", ["labels"], None),
    ("n_bins of a string", ["settings", "n_bins"], "15"),
    ("zero calibration bins", ["settings", "n_bins"], 0),
    ("unknown ranking mode", ["settings", "ranking"], "fast"),
    ("ranking bins in exact mode", ["settings", "ranking_bins"], 10),
    ("a bad zero_division", ["settings", "zero_division"], 7),
    ("an array of the wrong shape", ["arrays", 0, "shape"], [4, 4]),
    ("an array past the end", ["arrays", 0, "shape"], [3000, 3000]),
    ("a negative dimension", ["arrays", 0, "shape"], [-3, 3]),
    ("an unknown array", ["arrays", 0, "name"], "acc.secret"),
    ("an unknown dtype", ["arrays", 0, "dtype"], "|O"),
    ("a negative sum", ["sums", "log_loss_sum"], -1.0),
    ("an infinite sum", ["sums", "weight_sum"], float("inf")),
    ("a missing field", ["fixed_labels"], None),
    ("fields of the wrong type", ["has_confidence"], "yes"),
    ("labels as a string", ["labels", "values"], "abc"),
]


@pytest.mark.parametrize(("what", "path", "value"), FORGERIES, ids=[f[0] for f in FORGERIES])
def test_forged_states_raise_state_error(what: str, path: list[Any], value: Any) -> None:
    header, body = state_parts(example_state())
    data = forge(mutate(header, path, value), body)
    start = time.perf_counter()
    with pytest.raises(StateError):
        cmetrics.Evaluator.from_bytes(data)
    assert time.perf_counter() - start < HANG, "a forged state must be refused at once, not parsed at length"


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("hard", [False, True])
def test_forged_counts_raise_state_error(weighted: bool, hard: bool) -> None:
    ev = example_state(weighted, hard)
    header, body = state_parts(ev)
    assert cmetrics.Evaluator.from_bytes(forge(header, body)).report().metrics == ev.report().metrics
    specs = header["arrays"]
    offsets = np.cumsum([0] + [int(np.prod(s["shape"])) * np.dtype(s["dtype"]).itemsize for s in specs])
    for i, spec in enumerate(specs):
        dtype = np.dtype(spec["dtype"])
        forged = bytearray(body)
        first = np.frombuffer(bytes(body[offsets[i] : offsets[i] + dtype.itemsize]), dtype=dtype)
        if dtype.kind == "u":  # a count beyond every row
            new = np.array([2**62 if dtype.itemsize == 8 else 2**31], dtype=dtype)
        else:  # a negative sum, or a NaN group value
            new = np.array([np.nan if spec["name"].endswith("values") else -1.0], dtype=dtype)
        if new.tobytes() == first.tobytes():
            continue
        forged[offsets[i] : offsets[i] + dtype.itemsize] = new.tobytes()
        with pytest.raises(StateError):
            cmetrics.Evaluator.from_bytes(forge(header, bytes(forged)))
    # Arrays dropped or swapped out.
    for name in [s["name"] for s in specs]:
        keep = [s for s in specs if s["name"] != name]
        pieces = b"".join(body[offsets[i] : offsets[i + 1]] for i, s in enumerate(specs) if s["name"] != name)
        with pytest.raises(StateError):
            cmetrics.Evaluator.from_bytes(forge(mutate(header, ["arrays"], keep), pieces))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_random_header_values_give_a_state_error_or_a_state(data: st.DataObject) -> None:
    header, body = state_parts(example_state(data.draw(st.booleans())))
    flat: list[list[Any]] = []

    def walk(node: Any, path: list[Any]) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, [*path, k])
        elif isinstance(node, list) and node and isinstance(node[0], dict):
            for i, v in enumerate(node):
                walk(v, [*path, i])
        else:
            flat.append(path)

    walk(header, [])
    path = data.draw(st.sampled_from(flat))
    value = data.draw(
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(-(2**70), 2**70),
            st.floats(),
            st.text(max_size=5),
            st.lists(st.integers(-3, 3), max_size=4),
        )
    )
    try:
        ev = cmetrics.Evaluator.from_bytes(forge(mutate(header, path, value), body))
    except StateError:
        return
    ev.report()  # whatever loads is a usable state


def test_not_bytes_is_a_state_error() -> None:
    for bad in (None, 42, "CMETRICS", [1, 2]):
        with pytest.raises(StateError, match="from_bytes takes bytes"):
            cmetrics.Evaluator.from_bytes(bad)  # type: ignore[arg-type]
    for bad in (b"", b"CMETRICS", b"\x00" * 64):
        with pytest.raises(StateError):
            cmetrics.Evaluator.from_bytes(bad)


def test_merging_with_anything_else_is_a_state_error(backend: str) -> None:
    ev = cmetrics.Evaluator(labels=[0, 1], backend=backend).update([0, 1], y_pred=[0, 1])
    with pytest.raises(StateError, match="merge takes an Evaluator"):
        ev.merge(42)  # type: ignore[arg-type]
    other = cmetrics.Evaluator(backend=backend).update([5, 6], y_pred=[5, 6])
    before = ev.report().confusion_matrix.tolist()
    with pytest.raises(StateError, match="cannot merge"):
        ev.merge(other)
    assert ev.report().confusion_matrix.tolist() == before  # unchanged by the refused merge
    strings = cmetrics.Evaluator(backend=backend).update(["a"], y_pred=["a"])
    with pytest.raises(StateError):
        ev.merge(strings)


# -- Ctrl-C ---------------------------------------------------------------------------------


INTERRUPT = r"""
import sys, time, numpy as np, cmetrics
kind, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
x = rng.random(n)
y = rng.random(n)
ok = rng.random(n) < 0.6
if kind == "proba":
    p = rng.random((n, 10)).astype(np.float32)
    p /= p.sum(axis=1, keepdims=True)
    labels = (y * 10).astype(np.int32)
print("ready", flush=True)
try:
    if kind == "kendall":
        cmetrics.kendall_tau(x, y)
    elif kind == "auroc":
        cmetrics.roc_auc_score(ok, x, sample_weight=y)
    else:
        for _ in range(100):
            cmetrics.evaluate(labels, y_proba=p, ranking="off")
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


@needs_rust
@pytest.mark.parametrize(
    ("kind", "n", "after"), [("kendall", 100_000_000, 2.0), ("auroc", 100_000_000, 1.0), ("proba", 10_000_000, 0.5)]
)
def test_ctrl_c_stops_a_long_kernel(kind: str, n: int, after: float) -> None:
    """SIGINT during a kernel on 10^8 rows (10 s for Kendall) raises KeyboardInterrupt long
    before the kernel would end: this catches a kernel that ignores Ctrl-C, on a machine as busy
    as it may be. How fast it stops (under half a second) is measured in
    ``benches/test_bench_interrupt.py``."""
    with subprocess.Popen([sys.executable, "-c", INTERRUPT, kind, str(n)], stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        try:
            assert proc.stdout.readline().strip() == "ready"
            time.sleep(after)
            sent = time.perf_counter()
            proc.send_signal(signal.SIGINT)
            line = proc.stdout.readline().strip()
            waited = time.perf_counter() - sent
        finally:
            proc.kill()
    assert line == "interrupted"
    assert waited < HANG, f"{kind}: {waited:.2f} s from SIGINT to KeyboardInterrupt"


# -- threads ----------------------------------------------------------------------------------


def test_thread_counts_are_bounded() -> None:
    limit = cmetrics.max_threads()
    assert limit == max(16, 4 * (os.cpu_count() or 1))
    with pytest.raises(ValidationError, match=f"above the limit of {limit}"):
        cmetrics.set_num_threads(10_000)
    with pytest.raises(ValidationError), cmetrics.thread_limit(limit + 1):
        pass
    with cmetrics.thread_limit(limit):
        start = time.perf_counter()
        assert cmetrics.accuracy_score([0, 1, 1, 0], [0, 1, 0, 0]) == 0.75
        assert time.perf_counter() - start < HANG  # the largest pool is not started for 4 rows
    env = dict(os.environ, CMETRICS_NUM_THREADS="100000")
    out = subprocess.run(
        [sys.executable, "-c", "import cmetrics; cmetrics.accuracy_score([0], [0])"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode != 0 and "CMETRICS_NUM_THREADS asks for 100000 threads" in out.stderr
    cli = subprocess.run(
        [sys.executable, "-m", "cmetrics", "demo", "--rows", "10", "--threads", "100000"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cli.returncode == 2 and "Traceback" not in cli.stderr and "above the limit" in cli.stderr


# -- odd inputs: the documented exception, the same on both backends ---------------------------


def _lists() -> np.ndarray:
    a = np.empty(2, dtype=object)
    a[0], a[1] = [1], [2]
    return a


ODD_LABELS: list[tuple[str, Any, Any, type[Exception]]] = [
    ("object array of lists", _lists(), _lists(), UnsupportedDtypeError),
    ("numbers and strings", np.array([0, "a"], dtype=object), np.array([0, 0], dtype=object), LabelError),
    (
        "a lone surrogate (object)",
        np.array(["\ud800", "a"], dtype=object),
        np.array(["a", "a"], dtype=object),
        LabelError,
    ),
    ("a lone surrogate (fixed width)", np.array(["\ud800", "a"]), np.array(["a", "a"]), LabelError),
    ("a missing label", np.array(["a", None], dtype=object), np.array(["a", "a"], dtype=object), LabelError),
    ("bytes", [b"a"], [b"a"], UnsupportedDtypeError),
    ("complex", np.array([1j]), np.array([1j]), UnsupportedDtypeError),
    (
        "datetime",
        np.array(["2020-01-01"], dtype="datetime64[D]"),
        np.array(["2020-01-01"], dtype="datetime64[D]"),
        UnsupportedDtypeError,
    ),
    ("2-D labels that are not indicators", [[0, 2], [1, 0]], [[0, 1], [1, 0]], LabelError),
    ("2-D against 1-D labels", [[0, 1], [1, 0]], [0, 1], ShapeError),
    ("a scalar", 0, 0, ShapeError),
    ("None", None, None, ShapeError),
    ("non-integral floats", [0.5, 1.0], [0.5, 1.0], LabelError),
    ("NaN labels", [np.nan, 1.0], [1.0, 1.0], cmetrics.exceptions.NonFiniteError),
    ("uint64 above int64", np.array([2**64 - 1, 0], dtype=np.uint64), np.array([0, 0], dtype=np.uint64), LabelError),
]


@pytest.mark.parametrize(("what", "y", "p", "error"), ODD_LABELS, ids=[o[0] for o in ODD_LABELS])
def test_odd_labels_raise_the_documented_error_on_both_backends(
    what: str, y: Any, p: Any, error: type[Exception]
) -> None:
    got = []
    for backend in BACKENDS:
        with pytest.raises(error) as info:
            cmetrics.accuracy_score(y, p, backend=backend)
        got.append((type(info.value), str(info.value)))
    assert len(set(got)) == 1, got


@pytest.mark.parametrize(
    ("what", "y", "p", "want"),
    [
        (
            "trailing NULs are dropped",
            np.array(["a\x00", "a"], dtype=object),
            np.array(["a", "a"], dtype=object),
            [[2]],
        ),
        ("a list with trailing NULs", ["a\x00", "a"], ["a", "a"], [[2]]),
        (
            "strided object arrays",
            np.array(["a", "x", "b", "x"], dtype=object)[::2],
            np.array(["a", "y", "a", "y"], dtype=object)[::2],
            [[1, 0], [1, 0]],
        ),
        (
            "numpy strings in object arrays",
            np.array([np.str_("a"), "b"], dtype=object),
            np.array(["a", np.str_("b")], dtype=object),
            [[1, 0], [0, 1]],
        ),
    ],
)
def test_string_label_containers_agree(backend: str, what: str, y: Any, p: Any, want: list[list[int]]) -> None:
    counts = cmetrics.ConfusionMatrix.from_predictions(y, p, backend=backend).counts
    assert counts is not None and counts.tolist() == want


def test_non_numeric_tables_are_shape_errors() -> None:
    with pytest.raises(ShapeError):
        cmetrics.ConfusionMatrix("abc")
    with pytest.raises(ShapeError):
        cmetrics.ConfusionMatrix([[1, 0], [0]])
    with pytest.raises(ShapeError):
        cmetrics.purity_from_matrix([[1, 0], [0]])
    with pytest.raises(ShapeError):
        cmetrics.purity_from_matrix("abc")


@needs_rust
def test_a_caught_panic_prints_nothing() -> None:
    code = (
        "import cmetrics._core as c\ntry:\n    c._panic_for_tests()\nexcept Exception as e:\n"
        "    print(type(e).__name__, e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    assert out.stderr == ""
    assert out.stdout.startswith("InternalError internal error in cmetrics (please report it): deliberate test panic")
    with pytest.raises(InternalError):
        cmetrics._core._panic_for_tests()


def _unaligned(a: np.ndarray) -> np.ndarray:
    """A copy of ``a`` (C order) starting one byte past an aligned address, as arrays
    unpickled from out-of-band buffers or read by np.frombuffer at an odd offset can."""
    buf = np.zeros(a.nbytes + 1, np.uint8)
    out = buf[1:].view(a.dtype).reshape(a.shape)
    out[...] = a
    assert a.itemsize == 1 or not out.flags.aligned
    return out


def test_unaligned_arrays_give_the_aligned_results(backend: str) -> None:
    """Every kind of input, misaligned: the same values as the aligned arrays (a copy is made
    for the compiled kernels, which read aligned memory only), not an error."""
    rng = np.random.default_rng(12)
    n, k = 5_000, 4
    y = rng.integers(0, k, n)
    p = rng.dirichlet(np.ones(k), n)
    pred = p.argmax(axis=1)
    conf = p.max(axis=1)
    w = rng.random(n) + 0.5
    want = cmetrics.evaluate(y, y_proba=p, sample_weight=w, backend=backend)
    got = cmetrics.evaluate(_unaligned(y), y_proba=_unaligned(p), sample_weight=_unaligned(w), backend=backend)
    assert got.metrics == want.metrics
    assert np.array_equal(got.confusion_matrix, want.confusion_matrix)
    assert cmetrics.roc_auc_score(_unaligned(pred == y), _unaligned(conf), backend=backend) == cmetrics.roc_auc_score(
        pred == y, conf, backend=backend
    )
    assert cmetrics.kendall_tau(_unaligned(conf), _unaligned(w), backend=backend) == cmetrics.kendall_tau(
        conf, w, backend=backend
    )
    p32 = p.astype(np.float32)
    ev = cmetrics.Evaluator(n_classes=k, backend=backend).update(_unaligned(y), y_proba=_unaligned(p32))
    assert ev.report().accuracy == cmetrics.evaluate(y, y_proba=p32, backend=backend).accuracy

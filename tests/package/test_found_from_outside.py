"""Regression tests of the defects a hostile or careless user found from outside: silent
wrong answers (labels past int64 in files, subnormal weights, NaN sample averages, negative
true negatives, a single string class taken as positive) and valid input refused (zero-weight
batches and groups, column-major probabilities without the compiled core). Each runs on both
backends against an independent oracle: scikit-learn, the unit-weight value, plain loops."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sklearn.metrics as skm

import cmetrics
from cmetrics import Evaluator
from cmetrics.exceptions import UndefinedMetricWarning, WeightError
from tests.conftest import BACKENDS, quiet


def cli(*args: str, backend: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``cmetrics`` in a fresh process whose ``backend="auto"`` is ``backend``."""
    env = {**os.environ, "CMETRICS_BACKEND": backend}
    return subprocess.run(
        [sys.executable, "-m", "cmetrics", *args], capture_output=True, text=True, timeout=300, env=env, cwd=cwd
    )


# -- labels at or above 2^63 in a file are refused, not wrapped ---------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("name", "write"),
    [
        ("text.csv", lambda p: p.write_text("y_true,y_pred\n18446744073709551621,1\n1,1\n")),
        ("two63.csv", lambda p: p.write_text("y_true,y_pred\n9223372036854775808,1\n1,1\n")),
        (
            "uint64.parquet",
            lambda p: pq.write_table(
                pa.table({"y_true": pa.array([2**63 + 5, 1], pa.uint64()), "y_pred": pa.array([1, 1], pa.uint64())}),
                p,
            ),
        ),
        (
            "float.parquet",
            lambda p: pq.write_table(pa.table({"y_true": [1.8446744073709552e19, 1.0], "y_pred": [1.0, 1.0]}), p),
        ),
    ],
)
def test_file_labels_beyond_int64_are_one_line_errors(tmp_path: Path, backend: str, name: str, write: Any) -> None:
    path = tmp_path / name
    write(path)
    done = cli("score", str(path), "--label", "y_true", "--pred", "y_pred", "-q", backend=backend)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "int64 range" in lines[0] and "'y_true'" in lines[0], done.stderr
    assert "RuntimeWarning" not in done.stderr and not done.stdout


# -- subnormal weights give the unit-weight values -----------------------------------------------

_Y = np.array([0, 1, 1, 0, 2, 1, 0, 2])
_P = np.array([0, 1, 0, 0, 2, 2, 0, 1])
_S = np.array([0.1, 0.9, 0.3, 0.2, 0.8, 0.6, 0.4, 0.7])
#: Integer weights times 2^-1070: subnormal floats, exact multiples of the smallest one.
_UNITS = np.array([1.0, 2.0, 1.0, 3.0, 1.0, 1.0, 2.0, 1.0])
_TINY = _UNITS * 2.0**-1070

_HARD = [
    "accuracy_score",
    "zero_one_loss",
    "hamming_loss",
    "matthews_corrcoef",
    "cohen_kappa_score",
    "balanced_accuracy_score",
    "entropy_modulated_accuracy",
    "normalized_information_transfer",
    "informedness",
    "markedness",
]


@pytest.mark.parametrize("name", _HARD)
def test_subnormal_weights_give_the_unit_weight_value_hard(backend: str, name: str) -> None:
    fn = getattr(cmetrics, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = fn(_Y, _P, sample_weight=_TINY, backend=backend)
    want = fn(_Y, _P, sample_weight=_UNITS, backend=backend)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("name", ["roc_auc_score", "average_precision_score", "refinement"])
def test_subnormal_weights_give_the_unit_weight_value_ranking(backend: str, name: str) -> None:
    positive = _Y == 1
    fn = getattr(cmetrics, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no false "only one class" warning
        got = fn(positive, _S, sample_weight=_TINY, backend=backend)
    want = fn(positive, _S, sample_weight=_UNITS, backend=backend)
    assert got == pytest.approx(want, rel=1e-12)
    if name != "refinement":
        assert got == pytest.approx(getattr(skm, name)(positive, _S, sample_weight=_UNITS), rel=1e-12)


def test_the_smallest_table_has_a_balanced_accuracy(backend: str) -> None:
    assert cmetrics.ConfusionMatrix([[5e-324]], backend=backend).balanced_accuracy() == 1.0
    tiny = cmetrics.ConfusionMatrix([[5e-324, 0.0], [5e-324, 1e-323]], backend=backend)
    unit = cmetrics.ConfusionMatrix([[1.0, 0.0], [1.0, 2.0]], backend=backend)
    assert tiny.matthews_corrcoef() == pytest.approx(unit.matthews_corrcoef(), rel=1e-12)
    assert tiny.balanced_accuracy() == pytest.approx(unit.balanced_accuracy(), rel=1e-12)


# -- average="samples" with zero_division=NaN drops the undefined rows ---------------------------


@pytest.mark.parametrize("weights", [None, [1.0, 2.0, 3.0]])
def test_samples_average_drops_nan_rows_as_sklearn(backend: str, weights: list[float] | None) -> None:
    t = np.array([[1, 0], [0, 0], [0, 1]])
    p = np.array([[1, 0], [0, 0], [1, 1]])
    for name in ("f1_score", "precision_score", "recall_score"):
        want = getattr(skm, name)(t, p, average="samples", zero_division=np.nan, sample_weight=weights)
        ours = getattr(cmetrics, name)
        got = ours(t, p, average="samples", zero_division=np.nan, sample_weight=weights, backend=backend)
        assert got == pytest.approx(want, rel=1e-15), name
    assert cmetrics.f1_score(t, p, average="samples", zero_division=np.nan, backend=backend) == pytest.approx(5 / 6)
    want_row = skm.classification_report(t, p, zero_division=np.nan, output_dict=True, sample_weight=weights)
    got_row = cmetrics.classification_report(
        t, p, zero_division=np.nan, output_dict=True, sample_weight=weights, backend=backend
    )
    assert got_row["samples avg"] == pytest.approx(want_row["samples avg"], rel=1e-15)
    # Every row undefined: NaN, as scikit-learn.
    assert math.isnan(cmetrics.precision_score([[0, 0]], [[0, 0]], average="samples", zero_division=np.nan))


# -- true negatives are counted, never negative ----------------------------------------------------


@pytest.mark.parametrize("samplewise", [False, True])
def test_weighted_multilabel_true_negatives_are_counted(backend: str, samplewise: bool) -> None:
    rng = np.random.default_rng(3)
    w = rng.random(50) / 7
    for t in (np.ones((50, 3), int), rng.integers(0, 2, (50, 3))):
        p = t.copy()
        p[::5] = 1 - p[::5]
        got = cmetrics.multilabel_confusion_matrix(t, p, sample_weight=w, samplewise=samplewise, backend=backend)
        assert (got >= 0).all()
        # Plain loops: each (row, label) cell's weight in its [[tn, fp], [fn, tp]] slot.
        want = np.zeros((50, 2, 2) if samplewise else (3, 2, 2))
        for i in range(50):
            for j in range(3):
                want[i if samplewise else j, t[i, j], p[i, j]] += w[i]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
        if t.min() == 1:
            assert (got[..., 0, 0] == 0).all()  # exactly zero: no rows without the label


# -- one string class is not the positive class --------------------------------------------------------


def test_a_single_string_class_is_not_taken_as_positive(backend: str) -> None:
    y, s = ["neg"] * 3, [0.1, 0.5, 0.9]
    with pytest.warns(UndefinedMetricWarning, match="No positive class"):
        got = cmetrics.average_precision_score(y, s, backend=backend)
    assert got == sk_quiet(skm.average_precision_score, y, s) == 0.0
    fpr, tpr, _ = quiet(cmetrics.roc_curve, y, s, backend=backend)
    assert np.isnan(tpr).all() and fpr[-1] == 1.0  # every row a negative
    precision, _, _ = quiet(cmetrics.precision_recall_curve, y, s, backend=backend)
    assert (precision[:-1] == 0).all()
    # Named as positive, it is.
    assert cmetrics.average_precision_score(y, s, pos_label="neg", backend=backend) == 1.0
    # Two string classes: the greater is positive (unchanged).
    two = ["neg", "pos", "neg"]
    assert cmetrics.average_precision_score(two, s, backend=backend) == skm.average_precision_score(
        np.array(two) == "pos", s
    )


def sk_quiet(fn: Any, *args: Any, **kw: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


# -- zero-weight batches and groups are valid --------------------------------------------------------


def test_a_zero_weight_batch_is_counted_and_only_a_zero_total_is_refused(backend: str) -> None:
    rng = np.random.default_rng(4)
    y = rng.integers(0, 3, 60)
    p = rng.dirichlet(np.ones(3), 60)
    w = rng.random(60)
    w[:20] = 0.0
    whole = cmetrics.evaluate(y, y_proba=p, sample_weight=w, backend=backend)
    for cut in (20, 10, 1):  # the first batch weighs nothing, whatever its size
        ev = Evaluator(backend=backend)
        ev.update(y[:cut], y_proba=p[:cut], sample_weight=w[:cut])
        with pytest.raises(WeightError, match="sums to 0"):
            ev.report()
        ev.update(y[cut:], y_proba=p[cut:], sample_weight=w[cut:])
        got = ev.report()
        for name in ("accuracy", "log_loss", "cf1_macro", "brier_score", "refinement", "matthews_corrcoef"):
            assert getattr(got, name) == pytest.approx(getattr(whole, name), rel=1e-12, abs=1e-15), name
    hard = Evaluator(backend=backend).update(y[:20], y_pred=y[:20], sample_weight=w[:20])
    hard.update(y[20:], y_pred=np.roll(y[20:], 1), sample_weight=w[20:])
    want = cmetrics.accuracy_score(y[20:], np.roll(y[20:], 1), sample_weight=w[20:], backend=backend)
    assert hard.report().accuracy == pytest.approx(want, rel=1e-12)
    # A one-shot call with no weight at all is still refused.
    with pytest.raises(WeightError, match="sums to 0"):
        cmetrics.evaluate(y, y_proba=p, sample_weight=np.zeros(60), backend=backend)
    with pytest.raises(WeightError, match="sums to 0"):
        cmetrics.accuracy_score(y, y, sample_weight=np.zeros(60), backend=backend)


def test_a_zero_weight_group_has_an_undefined_report(backend: str) -> None:
    rng = np.random.default_rng(5)
    y = rng.integers(0, 3, 90)
    p = rng.dirichlet(np.ones(3), 90)
    g = np.repeat([1, 2, 3], 30)
    w = rng.random(90)
    w[g == 2] = 0.0
    got = cmetrics.evaluate(y, y_proba=p, sample_weight=w, groups=g, backend=backend)
    assert math.isnan(got[2].accuracy) and "sample_weight 0" in got[2].undefined["accuracy"]
    assert got[2].n_samples == 0.0 and got[2].to_dict()["metrics"]["log_loss"] is None
    for key in (1, 3):
        rows = g == key
        alone = cmetrics.evaluate(y[rows], y_proba=p[rows], sample_weight=w[rows], backend=backend)
        assert got[key].accuracy == pytest.approx(alone.accuracy, rel=1e-12)
    json.dumps(got.to_dict())  # the undefined group serialises


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_command_line_scores_a_file_whose_first_batch_weighs_nothing(tmp_path: Path, backend: str) -> None:
    rng = np.random.default_rng(6)
    n = 3000
    y = rng.integers(0, 3, n)
    p = rng.dirichlet(np.ones(3), n)
    w = rng.random(n)
    w[:1000] = 0.0
    cols = {"y": y, "w": w, **{f"p_{j}": p[:, j] for j in range(3)}, "g": np.repeat([0, 1, 2], 1000)}
    path = tmp_path / "dump.parquet"
    pq.write_table(pa.table(cols), path, row_group_size=1000)
    args = ["score", str(path), "--label", "y", "--proba-prefix", "p_", "--weight", "w", "--batch-rows", "1000"]
    done = cli(*args, "--format", "json", "-q", backend=backend)
    assert done.returncode == 0, done.stderr
    want = cmetrics.evaluate(y, y_proba=p, sample_weight=w, backend=backend)
    assert json.loads(done.stdout)["metrics"]["accuracy"] == pytest.approx(want.accuracy, rel=1e-12)
    grouped = cli(*args, "--group-by", "g", "--format", "json", "-q", backend=backend)
    assert grouped.returncode == 0, grouped.stderr


def test_grouped_paths_take_column_major_probabilities(backend: str) -> None:
    # The file reader and Dask build column-major matrices; the numpy backend refused them.
    rng = np.random.default_rng(7)
    y = rng.integers(0, 4, 400)
    p = rng.dirichlet(np.ones(4), 400)
    g = rng.integers(0, 5, 400)
    fortran = np.asfortranarray(p)
    for exact in ("exact", "approximate"):
        got = cmetrics.evaluate(y, y_proba=fortran, groups=g, class_ranking=exact, backend=backend)
        want = cmetrics.evaluate(y, y_proba=p, groups=g, class_ranking=exact, backend=backend)
        for key in want:
            assert got[key].to_dict() == want[key].to_dict()
        ev = Evaluator(group_by=True, class_ranking=exact, backend=backend)
        ev.update(y[:150], y_proba=fortran[:150], groups=g[:150]).update(y[150:], y_proba=fortran[150:], groups=g[150:])
        assert ev.grouped_report()[2].log_loss == pytest.approx(want[2].log_loss, rel=1e-12)
    moved = cmetrics._numpy.scatter_rows(fortran, np.arange(400)[::-1].copy())
    assert moved.flags.c_contiguous and (moved == p[::-1]).all()


# -- scikit-learn compatibility ------------------------------------------------------------------------


def test_auc_and_metric_at_thresholds_take_backend(backend: str) -> None:
    assert cmetrics.auc([0.0, 0.5, 1.0], [0.0, 1.0, 1.0], backend=backend) == skm.auc([0.0, 0.5, 1.0], [0.0, 1.0, 1.0])
    values, thresholds = cmetrics.metric_at_thresholds(
        [0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], cmetrics.accuracy_score, backend=backend
    )
    assert values.tolist() == [0.75, 0.5, 0.75, 0.5] and thresholds.tolist() == [0.8, 0.4, 0.35, 0.1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning: the area itself is a float64
        assert cmetrics.auc([-1e308, 1e308], [0.5, 0.5], backend=backend) == 1e308
        assert cmetrics.auc([1e308, -1e308], [0.5, 0.5], backend=backend) == 1e308
    with pytest.raises(cmetrics.exceptions.NonFiniteError, match="float64 range"):
        cmetrics.auc([-1e308, 1e308], [1.5, 1.5], backend=backend)


def test_log_loss_takes_a_1d_probability_of_the_greater_class(backend: str) -> None:
    for y in ([0, 1, 1, 0], ["a", "b", "b", "a"], [2, 5, 5, 2]):
        p = [0.2, 0.7, 0.6, 0.45]
        assert cmetrics.log_loss(y, p, backend=backend) == pytest.approx(skm.log_loss(y, p), rel=1e-14)
        assert cmetrics.log_loss(y, np.reshape(p, (-1, 1)), backend=backend) == pytest.approx(skm.log_loss(y, p))
    with pytest.raises(cmetrics.exceptions.ValidationError, match="normalize"):
        cmetrics.log_loss([0, 1], [0.2, 0.7], normalize=None, backend=backend)  # type: ignore[arg-type]


def test_two_integer_labels_take_the_greater_as_positive(backend: str) -> None:
    y, p = [1, 2, 2, 1, 2], [0.1, 0.8, 0.7, 0.3, 0.4]
    assert cmetrics.roc_auc_score(y, p, backend=backend) == skm.roc_auc_score(y, p)
    assert cmetrics.brier_score_loss(y, p, backend=backend) == pytest.approx(skm.brier_score_loss(y, p), rel=1e-14)
    assert cmetrics.d2_brier_score(y, p, backend=backend) == pytest.approx(skm.d2_brier_score(y, p), rel=1e-14)
    # The curves still want pos_label for such labels, as scikit-learn.
    with pytest.raises(cmetrics.exceptions.LabelError, match="pos_label"):
        cmetrics.roc_curve(y, p, backend=backend)


def test_unsorted_labels_of_the_sklearn_named_scores_are_sorted_with_a_warning(backend: str) -> None:
    y = [0, 1, 2, 2]
    p = [[0.2, 0.3, 0.5], [0.1, 0.6, 0.3], [0.3, 0.3, 0.4], [0.1, 0.1, 0.8]]
    for name in ("log_loss", "brier_score_loss", "d2_brier_score", "d2_log_loss_score"):
        with pytest.warns(UserWarning, match="ordered lexicographically"):
            got = getattr(cmetrics, name)(y, p, labels=[2, 0, 1], backend=backend)
        want = sk_quiet(getattr(skm, name), y, p, labels=[2, 0, 1])
        assert got == pytest.approx(want, rel=1e-13), name
    # The cmetrics functions read labels as the classes of the columns, in order.
    swapped = cmetrics.brier_score(y, np.array(p)[:, [2, 0, 1]], labels=[2, 0, 1], backend=backend)
    assert swapped == pytest.approx(cmetrics.brier_score(y, p, backend=backend), rel=1e-14)


def test_scipy_sparse_indicator_matrices_are_read(backend: str) -> None:
    import scipy.sparse as sp

    rng = np.random.default_rng(8)
    t = rng.integers(0, 2, (40, 4))
    p = rng.integers(0, 2, (40, 4))
    s = rng.random((40, 4))
    for make in (sp.csr_matrix, sp.csc_array):
        assert cmetrics.f1_score(make(t), make(p), average="macro", backend=backend) == pytest.approx(
            skm.f1_score(t, p, average="macro"), rel=1e-14
        )
        got = cmetrics.multilabel_confusion_matrix(make(t), make(p), backend=backend)
        np.testing.assert_array_equal(got, skm.multilabel_confusion_matrix(t, p))
        assert cmetrics.label_ranking_loss(make(t), s, backend=backend) == pytest.approx(
            skm.label_ranking_loss(t, s), rel=1e-14
        )


def test_rounding_that_sklearn_does_not_show(backend: str) -> None:
    for y, p in (([0, 1, 1], [2 / 3] * 3), ([0, 1, 1], [[1 / 3, 2 / 3]] * 3), ([0, 1, 2, 2], [[0.25, 0.25, 0.5]] * 4)):
        assert cmetrics.d2_brier_score(y, p, backend=backend) == 0.0  # the class frequencies explain nothing
        assert cmetrics.d2_log_loss_score(y, p, backend=backend) == 0.0
    third = cmetrics.hamming_loss([0, 1, 1], [0, 0, 1], backend=backend)
    assert third == 1 / 3 == skm.hamming_loss([0, 1, 1], [0, 0, 1])
    for w in (np.array([1, 2, 1], dtype=object), np.array([1.5, 2, 1], dtype=object)):
        got = cmetrics.confusion_matrix([0, 1, 1], [0, 1, 0], sample_weight=w, backend=backend)
        want = skm.confusion_matrix([0, 1, 1], [0, 1, 0], sample_weight=w)
        assert got.dtype == want.dtype and (got == want).all()
    with pytest.raises(cmetrics.exceptions.UnsupportedDtypeError):
        cmetrics.confusion_matrix([0, 1], [0, 1], sample_weight=np.array(["a", 2], dtype=object), backend=backend)
    with pytest.raises(NotImplementedError, match="average=None"):
        cmetrics.roc_auc_score([0, 1, 2], np.eye(3), multi_class="ovo", average=None, backend=backend)


# -- exceptions and messages ---------------------------------------------------------------------------


def _bad_parquet(directory: Path) -> dict[str, Path]:
    rng = np.random.default_rng(9)
    good = directory / "good.parquet"
    pq.write_table(
        pa.table({"y": rng.integers(0, 2, 50_000), "p": rng.integers(0, 2, 50_000)}), good, compression="none"
    )
    data = good.read_bytes()
    paths = {"garbage": directory / "garbage.parquet", "empty": directory / "empty.parquet"}
    paths["garbage"].write_bytes(b"PAR1 not a parquet file at all")
    paths["empty"].write_bytes(b"")
    paths["truncated"] = directory / "truncated.parquet"
    paths["truncated"].write_bytes(data[: len(data) // 2])
    pages = bytearray(data)
    pages[100 : len(pages) // 2] = b"\xab" * (len(pages) // 2 - 100)  # the footer intact, the pages not
    paths["pages"] = directory / "pages.parquet"
    paths["pages"].write_bytes(bytes(pages))
    return paths


@pytest.mark.parametrize("kind", ["garbage", "empty", "truncated", "pages"])
def test_unreadable_parquet_under_dask_is_an_input_error(tmp_path: Path, backend: str, kind: str) -> None:
    cd = pytest.importorskip("cmetrics.dask")
    path = _bad_parquet(tmp_path)[kind]
    os.environ["CMETRICS_BACKEND"] = backend
    try:
        with pytest.raises(cmetrics.exceptions.ValidationError, match="not a readable Parquet file") as info:
            cd.evaluate(str(path), label="y", pred="p")
    finally:
        del os.environ["CMETRICS_BACKEND"]
    assert type(info.value).__name__ == "InputError" and path.name in str(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unreadable_parquet_on_local_workers_is_one_line(tmp_path: Path, backend: str) -> None:
    paths = _bad_parquet(tmp_path)
    for kind in ("garbage", "pages"):
        done = cli("score", str(paths[kind]), "--label", "y", "--pred", "p", "-q", "--workers", "2", backend=backend)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "not a readable Parquet file" in lines[0], done.stderr


def test_a_deeply_nested_state_header_is_a_state_error() -> None:
    import struct
    import zlib

    head = b"[" * 100_000 + b"]" * 100_000
    body = b"CMETRICS" + struct.pack("<HHI", 2, 0, len(head)) + head
    with pytest.raises(cmetrics.StateError, match="nests too deeply"):
        Evaluator.from_bytes(body + struct.pack("<I", zlib.crc32(body)))


def _state_with_header(head: bytes) -> bytes:
    import struct
    import zlib

    body = b"CMETRICS" + struct.pack("<HHI", 2, 0, len(head)) + head
    return body + struct.pack("<I", zlib.crc32(body))


def test_a_header_is_refused_for_its_nesting_before_it_is_parsed() -> None:
    # 65 levels parse without trouble, so only the count made before parsing refuses them.
    with pytest.raises(cmetrics.StateError, match="nests too deeply"):
        Evaluator.from_bytes(_state_with_header(b"[" * 65 + b"]" * 65))
    # Brackets inside strings, escaped quotes among them, are not nesting.
    inside = json.dumps({"format": "x", "label": '\\"' + "[{" * 200}).encode()
    with pytest.raises(cmetrics.StateError, match="not an Evaluator header"):
        Evaluator.from_bytes(_state_with_header(inside))
    groups = Evaluator(group_by=True, labels=[0, 1])
    groups.update([0, 1, 1], y_pred=[0, 1, 0], groups=(["a", "b", "a"], [1, 2, 1]))
    assert Evaluator.from_bytes(groups.to_bytes()).to_bytes() == groups.to_bytes()


def _swap_children(state: bytes, other: bytes) -> bytes:
    """``state`` with its groups' states replaced by ``other``'s (same keys and row counts)."""
    import struct
    import zlib

    def parts(b: bytes) -> tuple[dict[str, Any], bytes, bytes]:
        hlen = struct.unpack_from("<I", b, 12)[0]
        header = json.loads(b[16 : 16 + hlen])
        rest = b[16 + hlen : -4]
        cut = len(rest) - sum(header["groups"]["sizes"])
        return header, rest[:cut], rest[cut:]

    header, arrays, _ = parts(state)
    other_header, _, children = parts(other)
    header["groups"]["sizes"] = other_header["groups"]["sizes"]
    head = json.dumps(header, separators=(",", ":")).encode()
    body = state[:12] + struct.pack("<I", len(head)) + head + arrays + children
    return body + struct.pack("<I", zlib.crc32(body))


@pytest.mark.parametrize("proba", [False, True])
def test_a_grouped_state_whose_tables_are_not_its_groups_sum_is_refused(backend: str, proba: bool) -> None:
    rng = np.random.default_rng(10)
    g = np.repeat([1, 2], 30)
    y = rng.integers(0, 3, 60)
    y[:3] = [0, 1, 2]
    p = rng.dirichlet(np.ones(3), 60)
    pred = rng.integers(0, 3, 60)

    def state(truth: np.ndarray) -> bytes:
        ev = Evaluator(group_by=True, labels=[0, 1, 2], backend=backend)
        return (ev.update(truth, y_proba=p, groups=g) if proba else ev.update(truth, y_pred=pred, groups=g)).to_bytes()

    honest = state(y)
    assert Evaluator.from_bytes(honest).n_rows == 60
    assert Evaluator.from_bytes(_swap_children(honest, honest)).n_rows == 60
    forged = _swap_children(honest, state(np.roll(y, 1)))  # the groups of other rows, as many
    with pytest.raises(cmetrics.StateError, match="not the sum of its groups"):
        Evaluator.from_bytes(forged)


def test_object_group_values_are_text_as_labels_are(backend: str) -> None:
    with pytest.raises(cmetrics.exceptions.LabelError, match="lone surrogate"):
        cmetrics.evaluate([0, 1], y_pred=[0, 1], groups=np.array(["a", "\ud800"], dtype=object), backend=backend)
    values = ["a", "a\x00", "b"]
    as_objects = cmetrics.evaluate([0, 1, 1], y_pred=[0, 1, 0], groups=np.array(values, dtype=object), backend=backend)
    as_text = cmetrics.evaluate([0, 1, 1], y_pred=[0, 1, 0], groups=np.array(values), backend=backend)
    assert list(as_objects) == list(as_text) == ["a", "b"]
    assert as_objects["a"].to_dict() == as_text["a"].to_dict()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["bench", "--rows", str(10**12), "-q"], "GiB of memory"),
        (["bench", "--quick", "--threads", "100000", "-q"], "above the limit"),
        (["bench", "--quick", "--seed", "-1", "-q"], "--seed"),
        (["demo", "--rows", str(10**12), "--quiet"], "GiB of Parquet"),
    ],
)
def test_absurd_command_line_sizes_are_one_line_errors(backend: str, args: list[str], words: str) -> None:
    done = cli(*args, backend=backend)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], done.stderr[-2000:]


def test_huge_gains_leak_no_warning(backend: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cmetrics.ndcg_score([[1e308, 1e308, 1e308]], [[0.1, 0.2, 0.3]], backend=backend) == 1.0
        got = cmetrics.ndcg_score([[1e308, 5e307, 0]], [[0.3, 0.1, 0.2]], backend=backend)
        assert got == pytest.approx(skm.ndcg_score([[2.0, 1.0, 0.0]], [[0.3, 0.1, 0.2]]), rel=1e-14)
        tiny = cmetrics.dcg_score([[1e-320, 2e-320, 0]], [[0.3, 0.2, 0.1]], backend=backend)
        assert tiny == pytest.approx(skm.dcg_score([[1.0, 2.0, 0.0]], [[0.3, 0.2, 0.1]]) * 1e-320, rel=1e-3)
        with pytest.raises(cmetrics.exceptions.NonFiniteError, match="float64 range"):
            cmetrics.dcg_score([[1e308, 1e308, 1e308]], [[0.1, 0.2, 0.3]], backend=backend)


def test_purity_from_matrix_wants_a_row_normalised_matrix() -> None:
    assert cmetrics.purity_from_matrix([[0.5, 0.5], [0.5, 0.5]]) == 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for bad, words in (([[1e308, 1e308], [1, 0]], "not a probability"), ([[0.2, 0.2], [1, 0]], "sums to 0.4")):
            with pytest.raises(cmetrics.exceptions.ProbabilityError, match=words):
                cmetrics.purity_from_matrix(bad)


@pytest.mark.parametrize("k", [2, 10, 1000])
def test_float16_softmax_rows_are_accepted_at_every_k(backend: str, k: int) -> None:
    rng = np.random.default_rng(k)
    z = rng.standard_normal((60, k))
    p16 = (np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)).astype(np.float16)
    y = rng.integers(0, k, 60)
    got = cmetrics.log_loss(y, p16, labels=list(range(k)), backend=backend)
    want = sk_quiet(skm.log_loss, y, p16.astype(np.float64), labels=list(range(k)))  # it warns at any K
    assert got == pytest.approx(want, rel=1e-3)
    off = p16.copy()
    off[7, 0] += np.float16(0.02)  # a row that really does not sum to 1
    with pytest.raises(cmetrics.exceptions.ProbabilityError, match="row 7"):
        cmetrics.log_loss(y, off, labels=list(range(k)), backend=backend)


def test_normalize_is_a_switch(backend: str) -> None:
    for fn, args in (
        (cmetrics.accuracy_score, ([0, 1], [0, 1])),
        (cmetrics.zero_one_loss, ([0, 1], [0, 1])),
        (cmetrics.log_loss, ([0, 1], [[0.8, 0.2], [0.3, 0.7]])),
    ):
        for value in (None, "yes", 1):
            with pytest.raises(cmetrics.exceptions.ValidationError, match="normalize must be True or False"):
                fn(*args, normalize=value, backend=backend)  # type: ignore[operator]


def test_an_interrupted_output_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cmetrics.cli import render

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(render.os, "replace", interrupted)
    target = tmp_path / "report.json"
    with pytest.raises(KeyboardInterrupt):
        render.write_output("{}", str(target))
    assert list(tmp_path.iterdir()) == []

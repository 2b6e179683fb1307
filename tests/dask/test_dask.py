"""cmetrics.dask on a real local cluster (2 worker processes on 127.0.0.1, no dashboard):
the report equals a single-process evaluate on the same rows, and bad input raises the
package's own errors."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import cmetrics
from cmetrics.exceptions import ValidationError
from tests.streaming.test_streaming import assert_same_report

dd = pytest.importorskip("dask.dataframe", reason="cmetrics[dask] is part of the test extra")
distributed = pytest.importorskip("distributed")

import cmetrics.dask as cd  # noqa: E402


@pytest.fixture(scope="session")
def client() -> Iterator[Any]:
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
            silence_logs=40,
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def dump(n: int, k: int, seed: int, *, string_labels: bool = False) -> pd.DataFrame:
    """Rows of an evaluation dump: labels, float32 probabilities in steps of 1/20 (tied
    confidences cross partition boundaries), a prediction, a confidence, weights."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k)) + 1.5 * np.eye(k)[y]
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    # Multiples of 1/20: normalised, and tied confidences in every partition.
    p = (rng.multinomial(20, p) / 20).astype(np.float32)
    frame = pd.DataFrame({f"p_{j}": p[:, j] for j in range(k)})
    frame.insert(0, "y", np.array([f"c{v}" for v in y]) if string_labels else y)
    pred = p.argmax(axis=1)
    frame["pred"] = np.array([f"c{v}" for v in pred]) if string_labels else pred
    frame["conf"] = p.max(axis=1).astype(np.float64)
    frame["w"] = rng.random(n) + 0.25
    return frame


def write_parts(frame: pd.DataFrame, directory: Path, cuts: list[int]) -> list[Path]:
    """One Parquet file per slice between cuts (empty slices give empty files)."""
    bounds = [0, *cuts, len(frame)]
    paths = []
    for i, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        path = directory / f"part-{i:03d}.parquet"
        frame.iloc[lo:hi].to_parquet(path, index=False)
        paths.append(path)
    return paths


def col(frame: pd.DataFrame, name: str) -> np.ndarray:
    """A column as a contiguous array (pandas may hand out a strided view of its block)."""
    return np.ascontiguousarray(frame[name].to_numpy())


def proba_of(frame: pd.DataFrame, k: int) -> np.ndarray:
    return frame[[f"p_{j}" for j in range(k)]].to_numpy()


def test_parquet_files_on_the_cluster_equal_one_process(client: Any, tmp_path: Path) -> None:
    """16 files, two of them empty and one holding only class 0, the probabilities exact."""
    k = 4
    frame = dump(30_000, k, 1)
    frame = pd.concat([frame, frame.iloc[:400].assign(y=0)], ignore_index=True)
    cuts = [1_000, 1_000, 4_000, 7_500, 9_000, 12_000, 15_000, 15_000]
    cuts += [18_000, 21_000, 24_000, 26_000, 28_000, 29_000, 30_000]
    write_parts(frame, tmp_path, cuts)
    got = cd.evaluate(str(tmp_path / "*.parquet"), label="y", proba_prefix="p_", client=client)
    one_per_file = cd.evaluate(str(tmp_path), label="y", proba_prefix="p_", client=client, tasks=100)
    want = cmetrics.evaluate(col(frame, "y"), y_proba=proba_of(frame, k))
    assert_same_report(one_per_file, want)
    assert got.n_rows == want.n_rows == len(frame) if hasattr(want, "n_rows") else True
    assert_same_report(got, want)
    assert got.metrics["refinement"] == want.metrics["refinement"]
    assert got.metrics["roc_auc_ovr"] == pytest.approx(want.metrics["roc_auc_ovr"], rel=1e-12)


def test_weighted_hard_labels_with_confidence_and_string_labels(client: Any) -> None:
    frame = dump(20_000, 3, 2, string_labels=True)
    ddf = dd.from_pandas(frame, npartitions=9)
    got = cd.evaluate(ddf, label="y", pred="pred", confidence="conf", weight="w", client=client)
    want = cmetrics.evaluate(
        col(frame, "y"),
        y_pred=col(frame, "pred"),
        confidence=col(frame, "conf"),
        sample_weight=col(frame, "w"),
    )
    assert got.labels == ["c0", "c1", "c2"]
    assert_same_report(got, want)


@pytest.mark.parametrize(("split_every", "tasks"), [(2, 11), (3, 11), (64, 11), (2, 4), (8, 1), (8, None)])
def test_the_reduction_tree_does_not_change_the_report(client: Any, split_every: int, tasks: int | None) -> None:
    frame = dump(12_000, 5, 3)
    ddf = dd.from_pandas(frame, npartitions=11)
    got = cd.evaluate(
        ddf,
        label="y",
        proba=[f"p_{j}" for j in range(5)],
        labels=[0, 1, 2, 3, 4],
        split_every=split_every,
        tasks=tasks,
        client=client,
        ranking="approximate",
    )
    want = cmetrics.evaluate(col(frame, "y"), y_proba=proba_of(frame, 5), ranking="approximate")
    assert_same_report(got, want)


def test_without_a_client_the_default_scheduler_runs_it() -> None:
    frame = dump(5_000, 3, 4)
    got = cd.evaluate(dd.from_pandas(frame, npartitions=4), label="y", pred="pred")
    want = cmetrics.evaluate(col(frame, "y"), y_pred=col(frame, "pred"))
    assert_same_report(got, want)


def test_a_missing_column_is_refused_before_any_task(client: Any) -> None:
    ddf = dd.from_pandas(dump(1_000, 3, 5), npartitions=2)
    with pytest.raises(ValidationError, match="column 'label' is not in the input"):
        cd.evaluate(ddf, label="label", pred="pred", client=client)
    with pytest.raises(ValidationError, match="no column starts with 'q_'"):
        cd.evaluate(ddf, label="y", proba_prefix="q_", client=client)
    with pytest.raises(ValidationError, match="labels lists 2 classes but there are 3"):
        cd.evaluate(ddf, label="y", proba_prefix="p_", labels=[0, 1], client=client)
    with pytest.raises(ValidationError, match="nothing to score"):
        cd.evaluate(ddf, label="y", client=client)
    with pytest.raises(ValidationError, match="split_every"):
        cd.evaluate(ddf, label="y", pred="pred", split_every=1, client=client)
    with pytest.raises(ValidationError, match="dask DataFrame or Parquet"):
        cd.evaluate(pd.DataFrame({"y": [1]}), label="y", pred="y", client=client)


def test_a_partition_with_another_label_type_raises_the_package_error(client: Any, tmp_path: Path) -> None:
    """One file's labels are strings, the others' integers: the merge on the cluster refuses
    it with the error a single process merging the two Evaluators raises."""
    ints = dump(2_000, 3, 6)
    strs = dump(1_000, 3, 7, string_labels=True)
    ints[["y", "pred"]].to_parquet(tmp_path / "a.parquet", index=False)
    ints[["y", "pred"]].iloc[:500].to_parquet(tmp_path / "b.parquet", index=False)
    strs[["y", "pred"]].to_parquet(tmp_path / "c.parquet", index=False)
    frames = [dd.read_parquet(str(tmp_path / f)) for f in ("a.parquet", "b.parquet", "c.parquet")]
    mixed = dd.concat(frames)
    a = cmetrics.Evaluator().update(col(ints, "y"), y_pred=col(ints, "pred"))
    b = cmetrics.Evaluator().update(col(strs, "y"), y_pred=col(strs, "pred"))
    with pytest.raises(ValidationError, match="str labels but earlier ones had int labels") as single:
        a.merge(b)
    with pytest.raises(ValidationError, match="str labels but earlier ones had int labels") as on_cluster:
        cd.evaluate(mixed, label="y", pred="pred", client=client)
    assert type(on_cluster.value) is type(single.value)


def test_the_core_package_does_not_import_dask() -> None:
    import subprocess
    import sys

    code = "import sys, cmetrics; cmetrics.evaluate([0, 1], y_pred=[0, 1]); print('dask' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_command_line_scores_on_a_local_cluster(tmp_path: Path) -> None:
    """``cmetrics score DIR --workers 2`` gives the single-process command's report (exact
    class ranking too), and says how long the cluster took to start."""
    import json
    import subprocess
    import sys

    frame = dump(20_000, 3, 8)
    write_parts(frame.drop(columns=["pred", "conf"]), tmp_path, [3_000, 9_000, 9_000, 15_000])
    args = ["score", str(tmp_path), "--label", "y", "--proba-prefix", "p_", "--weight", "w", "--class-ranking", "exact"]

    def run(*extra: str) -> dict[str, Any]:
        out = subprocess.run(
            [sys.executable, "-m", "cmetrics", *args, *extra, "--format", "json", "--quiet"],
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        return dict(json.loads(out.stdout))

    single, on_dask = run(), run("--workers", "2")
    assert on_dask["run"]["workers"] == 2 and on_dask["run"]["cluster_start_seconds"] > 0
    assert on_dask["run"]["rows"] == single["run"]["rows"] == 20_000
    assert on_dask["n_samples"] == pytest.approx(single["n_samples"], rel=1e-12)
    np.testing.assert_allclose(on_dask["confusion_matrix"], single["confusion_matrix"], rtol=1e-12)
    assert set(on_dask["metrics"]) == set(single["metrics"])
    for key, want in single["metrics"].items():
        assert on_dask["metrics"][key] == pytest.approx(want, rel=1e-12, nan_ok=True), key
    bad = subprocess.run(
        [sys.executable, "-m", "cmetrics", *args, "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode != 0 and "not both" in bad.stderr


def _slow(part: pd.DataFrame) -> pd.DataFrame:
    import time

    time.sleep(0.15)
    return part


def test_a_worker_killed_mid_job_is_retried_and_the_result_is_exact() -> None:
    """A worker process exits while partitions are being scored: its nanny starts a new one,
    the scheduler recomputes the lost tasks, and the state is the same, bit for bit, as the
    state of a run that lost nothing (the runs and the merge tree follow from the data)."""
    import contextlib
    import os
    import threading
    import time

    frame = dump(24_000, 3, 9)
    want = cmetrics.evaluate(col(frame, "y"), y_proba=proba_of(frame, 3))
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0", silence_logs=50
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        ddf = dd.from_pandas(frame, npartitions=24).map_partitions(_slow, meta=frame.iloc[:0])
        victim = sorted(c.scheduler_info()["workers"])[0]
        killed: list[bool] = []

        def kill() -> None:
            time.sleep(0.8)
            with contextlib.suppress(Exception):  # the worker dies before it answers
                c.run(os._exit, 1, workers=[victim])
            killed.append(True)

        t = threading.Thread(target=kill)
        t.start()
        got = cd.evaluator(ddf, label="y", proba_prefix="p_", weight="w", client=c)
        t.join()
        assert killed
        assert victim not in c.scheduler_info()["workers"]  # a new process took its place
    calm = cd.evaluator(dd.from_pandas(frame, npartitions=24), label="y", proba_prefix="p_", weight="w")
    assert got.to_bytes() == calm.to_bytes()
    want = cmetrics.evaluate(col(frame, "y"), y_proba=proba_of(frame, 3), sample_weight=col(frame, "w"))
    assert_same_report(got.report(), want)


def test_files_with_other_columns_raise_the_package_error(client: Any, tmp_path: Path) -> None:
    """A file without one of the probability columns the first file has: InputError naming
    the file, from the worker that read it; through a Dask DataFrame of those files, the
    same class of error (Dask's reader fails first)."""
    dump(1_000, 3, 1).drop(columns=["pred", "conf", "w"]).to_parquet(tmp_path / "a.parquet", index=False)
    dump(1_000, 2, 2).drop(columns=["pred", "conf", "w"]).to_parquet(tmp_path / "b.parquet", index=False)
    with pytest.raises(ValidationError, match=r"b\.parquet lacks the column\(s\) 'p_2'"):
        cd.evaluate(str(tmp_path), label="y", proba_prefix="p_", client=client)
    mixed = dd.read_parquet(str(tmp_path / "*.parquet"))
    with pytest.raises(ValidationError, match=r"a partition lacks a column .*p_2"):
        cd.evaluate(mixed, label="y", proba_prefix="p_", client=client)
    with pytest.raises(ValidationError, match="tasks must be a positive integer"):
        cd.evaluate(str(tmp_path), label="y", proba_prefix="p_", client=client, tasks=0)
    with pytest.raises(ValidationError, match="no Parquet file there"):
        cd.evaluate(str(tmp_path / "missing-*.parquet"), label="y", pred="y", client=client)


def test_a_file_without_row_groups_adds_nothing(client: Any, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    frame = dump(3_000, 3, 10).drop(columns=["pred", "conf", "w"])
    frame.to_parquet(tmp_path / "a.parquet", index=False)
    schema = pq.read_schema(tmp_path / "a.parquet")
    with pq.ParquetWriter(tmp_path / "b.parquet", schema):
        pass  # no row group at all
    assert pq.ParquetFile(tmp_path / "b.parquet").num_row_groups == 0
    got = cd.evaluator(str(tmp_path), label="y", proba_prefix="p_", client=client)
    assert got.n_rows == 3_000
    assert_same_report(got.report(), cmetrics.evaluate(col(frame, "y"), y_proba=proba_of(frame, 3)))


def test_grouped_reports_on_the_cluster_equal_one_process(client: Any, tmp_path: Path) -> None:
    """Group values spread over the files (a group missing from some, one file with a single
    group): every group's report, and the overall one, equal single-process grouped evaluate."""
    import warnings

    k = 4
    frame = dump(20_000, k, 9)
    rng = np.random.default_rng(9)
    frame["lang"] = rng.choice(np.array(["en", "de", "fr", "ja"]), len(frame))
    frame["version"] = rng.integers(1, 3, len(frame))
    frame.loc[5_000:6_999, "lang"] = "ja"
    write_parts(frame, tmp_path, [2_000, 5_000, 7_000, 7_000, 12_000, 16_000])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cmetrics.UndefinedMetricWarning)
        for by, groups in (
            ("lang", col(frame, "lang")),
            (["lang", "version"], (col(frame, "lang"), col(frame, "version"))),
        ):
            got = cd.evaluate(str(tmp_path), label="y", proba_prefix="p_", group_by=by, client=client)
            want = cmetrics.evaluate(col(frame, "y"), y_proba=proba_of(frame, k), labels=range(k), groups=groups)
            assert got.group_by == ((by,) if isinstance(by, str) else tuple(by))
            assert list(got) == list(want)
            assert_same_report(got.overall, want.overall)
            for key in want:
                assert_same_report(got[key], want[key])
        ddf = dd.from_pandas(frame, npartitions=7)
        got = cd.evaluate(ddf, label="y", pred="pred", weight="w", group_by="lang", client=client)
        want = cmetrics.evaluate(
            col(frame, "y"), y_pred=col(frame, "pred"), sample_weight=col(frame, "w"), groups=col(frame, "lang")
        )
        for key in want:
            assert_same_report(got[key], want[key])
    with pytest.raises(ValidationError, match="column 'nope' is not in the input"):
        cd.evaluate(str(tmp_path), label="y", proba_prefix="p_", group_by="nope", client=client)


@pytest.mark.parametrize("group_by", [None, "g"])
def test_the_same_files_give_the_same_bits_on_any_cluster(
    client: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, group_by: str | None
) -> None:
    """The runs of row groups follow from the files (here 3,000 rows a run), not from the
    cluster's threads: 2 workers, 1 worker of 3 threads and Dask's local scheduler give the
    same state bytes, weighted float sums included."""
    monkeypatch.setattr(cd, "ROWS_PER_TASK", 3_000)
    frame = dump(20_000, 4, 12).assign(g=lambda f: np.arange(len(f)) % 7)
    cuts = [2_500, 6_000, 6_000, 11_000, 13_500, 17_000]
    write_parts(frame, tmp_path, cuts)
    options: dict[str, Any] = {"label": "y", "proba_prefix": "p_", "weight": "w", "group_by": group_by}
    states = [cd.evaluator(str(tmp_path), client=client, **options).to_bytes()]
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=3, processes=True, host="127.0.0.1", dashboard_address=":0", silence_logs=50
        ) as cluster,
        distributed.Client(cluster) as other,
    ):
        states.append(cd.evaluator(str(tmp_path), client=other, **options).to_bytes())
    states.append(cd.evaluator(str(tmp_path), **options).to_bytes())
    assert states[0] == states[1] == states[2]


@pytest.mark.parametrize("partitions", [1, 5, 13])
def test_other_partitionings_agree_with_one_process(client: Any, partitions: int) -> None:
    frame = dump(15_000, 3, 13)
    got = cd.evaluate(
        dd.from_pandas(frame, npartitions=partitions), label="y", proba_prefix="p_", weight="w", client=client
    )
    want = cmetrics.evaluate(col(frame, "y"), y_proba=proba_of(frame, 3), sample_weight=col(frame, "w"))
    assert_same_report(got, want)  # counts exact, every float to 1e-12 relative


def test_runs_of_rows_follow_the_data() -> None:
    from cmetrics.dask import _runs

    for sizes in ([5] * 16, [0, 0, 3, 0], [1], [10, 1, 1, 1, 10, 0], list(range(30))):
        for rows in (1, 4, 11, 1000):
            runs = _runs(sizes, rows)
            assert [i for r in runs for i in r] == list(range(len(sizes)))
            assert all(sum(sizes[i] for i in r) >= rows for r in runs[:-1])  # every run but the last is full
    assert [len(r) for r in _runs([5] * 16, 10)] == [2] * 8


def test_runs_of_units_cover_every_unit_once() -> None:
    from cmetrics.dask import _packed

    for sizes in ([5] * 16, [0, 0, 3, 0], [1], [10, 1, 1, 1, 10, 0], list(range(30))):
        for tasks in (1, 2, 3, 7, 100):
            runs = _packed(sizes, tasks)
            assert [i for r in runs for i in r] == list(range(len(sizes)))
            assert 1 <= len(runs) <= min(tasks, len(sizes))
    assert [len(r) for r in _packed([5] * 16, 2)] == [8, 8]


def test_the_reader_and_dask_find_the_same_columns(client: Any, tmp_path: Path) -> None:
    """One column rule (:meth:`cmetrics.cli.Columns.resolve`): with a probability prefix that
    the label, prediction and weight columns also start with, neither the command line's
    reader nor Dask takes them for probability columns, and a missing column gives the same
    message on both."""
    from cmetrics.cli import Columns, score_files

    frame = dump(3_000, 3, 21)
    frame = frame.rename(columns={"y": "p_true", "pred": "p_pred", "w": "p_weight"})
    frame.to_parquet(tmp_path / "part.parquet", index=False, row_group_size=700)
    columns = Columns(label="p_true", pred="p_pred", proba_prefix="p_", weight="p_weight")
    local, _ = score_files([str(tmp_path)], columns, cmetrics.EvaluationSettings.make())
    on_dask = cd.evaluate(
        str(tmp_path), label="p_true", pred="p_pred", proba_prefix="p_", weight="p_weight", client=client
    )
    want = cmetrics.evaluate(
        col(frame, "p_true"),
        y_pred=col(frame, "p_pred"),
        y_proba=frame[["p_0", "p_1", "p_2"]].to_numpy(),
        sample_weight=col(frame, "p_weight"),
    )
    assert isinstance(local, cmetrics.Report)
    assert local.n_classes == on_dask.n_classes == 3
    assert_same_report(local, want)
    assert_same_report(on_dask, want)
    messages = []
    for run in (
        lambda: score_files([str(tmp_path)], Columns(label="nope", pred="p_pred"), cmetrics.EvaluationSettings.make()),
        lambda: cd.evaluate(str(tmp_path), label="nope", pred="p_pred", client=client),
    ):
        with pytest.raises(ValidationError) as err:
            run()
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("column 'nope' is not in the input; available columns: ['p_true', 'p_0'")


def test_intervals_on_the_cluster_equal_the_bootstrap_in_memory(client: Any, tmp_path: Path) -> None:
    """``bootstrap=`` on Dask resamples the merged counts: the same intervals as
    :func:`cmetrics.bootstrap` of all rows in one process, whatever the partitioning, per group too."""
    frame = dump(8_000, 4, 23)
    frame["g"] = np.arange(len(frame)) % 3
    write_parts(frame, tmp_path, [0, 1_000, 4_500, 8_000])
    on_dask = cd.evaluate(str(tmp_path), label="y", pred="pred", bootstrap=300, seed=5, client=client)
    want = cmetrics.bootstrap(col(frame, "y"), y_pred=col(frame, "pred"), n_resamples=300, seed=5)
    assert on_dask.intervals is not None
    assert on_dask.intervals.metrics == want.metrics and on_dask.intervals.per_class == want.per_class
    grouped = cd.evaluate(
        str(tmp_path), label="y", pred="pred", group_by="g", bootstrap=100, seed=1, tasks=3, client=client
    )
    for key, rep in grouped.groups.items():
        rows = col(frame, "g") == key
        labels = sorted(set(col(frame, "y").tolist()) | set(col(frame, "pred").tolist()))
        alone = cmetrics.bootstrap(
            col(frame, "y")[rows], y_pred=col(frame, "pred")[rows], labels=labels, n_resamples=100, seed=1
        )
        assert rep.intervals is not None and rep.intervals["accuracy"] == alone["accuracy"]
    with pytest.raises(cmetrics.exceptions.NotImplementedOptionError, match="weight"):
        cd.evaluate(str(tmp_path), label="y", pred="pred", weight="w", bootstrap=10, client=client)


@pytest.mark.parametrize("source", ["files", "frame"])
def test_row_level_intervals_on_the_cluster_equal_one_evaluator(client: Any, tmp_path: Path, source: str) -> None:
    """``evaluator(bootstrap=N)`` keeps the Poisson replicate sums on the workers, each row keyed
    by its global index: the merged report's intervals (log loss, cF1, the confusion-matrix
    metrics from the same draws, weighted) are those of one Evaluator fed every row in one
    process, and of :func:`cmetrics.bootstrap`, on any partitioning."""
    k = 3
    frame = dump(9_000, k, 29)
    frame["g"] = (np.arange(len(frame)) * 7919) % 4
    labels = list(range(k))
    one = cmetrics.Evaluator(labels, bootstrap=150, seed=8, ranking="off")
    one.update(col(frame, "y"), y_proba=proba_of(frame, k), sample_weight=col(frame, "w"))
    want = one.report().intervals
    assert want is not None
    direct = cmetrics.bootstrap(
        col(frame, "y"),
        y_proba=proba_of(frame, k),
        sample_weight=col(frame, "w"),
        labels=labels,
        n_resamples=150,
        seed=8,
        metrics=["log_loss", "cf1_macro", "accuracy"],
    )
    for name in ("log_loss", "cf1_macro", "accuracy"):
        assert want[name].low == pytest.approx(direct[name].low, rel=1e-12)
    if source == "files":
        write_parts(frame, tmp_path, [0, 2_000, 2_000, 6_100])
        data: Any = str(tmp_path)
    else:
        data = dd.from_pandas(frame, npartitions=5)
    for tasks in (None, 2):
        ev = cd.evaluator(
            data,
            label="y",
            proba_prefix="p_",
            weight="w",
            ranking="off",
            bootstrap=150,
            seed=8,
            tasks=tasks,
            client=client,
        )
        got = ev.report().intervals
        assert got is not None and got.provenance.scheme == "poisson"
        for name in ("log_loss", "brier_score", "cf1_macro", "accuracy", "f1_macro"):
            for field in ("estimate", "low", "high", "standard_error"):
                assert getattr(got[name], field) == pytest.approx(getattr(want[name], field), rel=1e-12, abs=1e-15)
    # Per group: each group's replicates are those of its rows, wherever the partitions cut.
    by_group = cmetrics.Evaluator(labels, bootstrap=150, seed=8, ranking="off", group_by=True)
    by_group.update(col(frame, "y"), y_proba=proba_of(frame, k), sample_weight=col(frame, "w"), groups=col(frame, "g"))
    want_groups = by_group.grouped_report()
    got_groups = cd.evaluator(
        data,
        label="y",
        proba_prefix="p_",
        weight="w",
        ranking="off",
        group_by="g",
        bootstrap=150,
        seed=8,
        client=client,
    ).grouped_report()
    assert list(got_groups.groups) == [0, 1, 2, 3]
    for key, rep in got_groups.groups.items():
        mine, theirs = rep.intervals, want_groups[key].intervals
        assert mine is not None and theirs is not None and mine.provenance.scheme == "poisson"
        for name in ("log_loss", "cf1_macro", "accuracy"):
            assert mine[name].low == pytest.approx(theirs[name].low, rel=1e-12, abs=1e-15)
            assert mine[name].high == pytest.approx(theirs[name].high, rel=1e-12, abs=1e-15)
    with pytest.raises(ValidationError, match="labels"):
        cd.evaluator(data, label="y", pred="pred", bootstrap=10, client=client)
    with pytest.raises(ValidationError, match="bootstrap"):
        cd.evaluator(data, label="y", proba_prefix="p_", bootstrap=0, client=client)

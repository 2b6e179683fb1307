"""``cmetrics.dask`` on a local cluster of 2 worker processes (one thread each) against the
single-process ``cmetrics score`` path on the same files: n rows (K = 10, float32
probabilities) in 16 Parquet files of one row group each. Both score in the command's default
modes (exact confidence ranking, binned class ranking) and in the approximate mode. The
cluster's start is timed apart and recorded in ``extra``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benches.conftest import EXTRA, K, N, record

distributed = pytest.importorskip("distributed")
PARTS = 16


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from cmetrics.cli import synthetic_dump, synthetic_proba

    folder = tmp_path_factory.mktemp("parts")
    schema = pa.schema([("label", pa.int32())] + [(f"p_{j}", pa.float32()) for j in range(K)])
    per = -(-N // PARTS)
    for i, lo in enumerate(range(0, N, per)):
        rows = min(per, N - lo)
        y, p = synthetic_dump(rows, K, 7919 * i)
        proba = synthetic_proba(p, K, 7919 * i, y_true=y)
        cols = [pa.array(y)] + [pa.array(np.ascontiguousarray(proba[:, j])) for j in range(K)]
        pq.write_table(pa.Table.from_arrays(cols, schema=schema), folder / f"part-{i:02d}.parquet", row_group_size=per)
    return folder


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    t0 = time.perf_counter()
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=":0", silence_logs=50
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        EXTRA["dask_cluster_start_seconds"] = time.perf_counter() - t0
        yield c


@pytest.mark.benchmark(group="Dask, 16 Parquet files")
@pytest.mark.parametrize("ranking", ["exact", "approximate"])
def test_single_process(benchmark: Any, files: Path, ranking: str) -> None:
    import cmetrics
    from cmetrics.cli import Columns, score_files

    columns = Columns(label="label", proba_prefix="p_")
    settings = cmetrics.EvaluationSettings.make(ranking=ranking, class_ranking="approximate")
    _, run = benchmark.pedantic(lambda: score_files([str(files)], columns, settings), rounds=3, iterations=1)
    assert run["rows"] == N
    record(f"single_score_{ranking}", benchmark)


@pytest.mark.benchmark(group="Dask, 16 Parquet files")
@pytest.mark.parametrize("ranking", ["exact", "approximate"])
def test_on_the_cluster(benchmark: Any, files: Path, client: Any, ranking: str) -> None:
    import cmetrics
    import cmetrics.dask as cd
    from cmetrics.cli import Columns, score_files

    def run() -> Any:
        ev = cd.evaluator(
            str(files), label="label", proba_prefix="p_", ranking=ranking, class_ranking="approximate", client=client
        )
        return ev, ev.report()

    ev, report = benchmark.pedantic(run, rounds=3, iterations=1)
    settings = cmetrics.EvaluationSettings.make(ranking=ranking, class_ranking="approximate")
    single, _ = score_files([str(files)], Columns(label="label", proba_prefix="p_"), settings)
    assert ev.n_rows == N
    assert report.confusion_matrix.tolist() == single.confusion_matrix.tolist()
    for key, want in single.metrics.items():
        assert report.metrics[key] == pytest.approx(want, rel=1e-12, nan_ok=True), key
    record(f"dask_score_{ranking}", benchmark)

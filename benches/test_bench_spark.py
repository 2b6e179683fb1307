"""``cmetrics.spark`` on a local[2] session against Spark's own ``groupBy(y_true, y_pred).count()``
on the same table: n rows of int32 labels and predictions (K = 10, 70% right) in one Parquet file
of 8 row groups, read by Spark. The session's start is timed apart and recorded in ``extra``."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cmetrics
from benches.conftest import EXTRA, TIMINGS, N, record

pytest.importorskip("pyspark")
if shutil.which("java") is None:
    pytest.skip("no Java here", allow_module_level=True)

pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory, labels_1e7: Any) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    y, p = labels_1e7
    path = tmp_path_factory.mktemp("spark") / "dump.parquet"
    pq.write_table(pa.table({"y": y, "pred": p}), path, row_group_size=max(1, -(-y.size // 8)))
    return path


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    t0 = time.perf_counter()
    session = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("OFF")
    EXTRA["spark_session_start_seconds"] = time.perf_counter() - t0
    yield session
    session.stop()


@pytest.mark.benchmark(group="Spark local[2], hard labels of a Parquet table")
def test_cmetrics_spark(benchmark: Any, spark: Any, table: Path, labels_1e7: Any) -> None:
    import cmetrics.spark as cspark

    df = spark.read.parquet(str(table))
    report = benchmark.pedantic(lambda: cspark.evaluate(df, label="y", pred="pred"), rounds=3, iterations=1)
    y, p = labels_1e7
    assert report.confusion_matrix.tolist() == cmetrics.evaluate(y, y_pred=p).confusion_matrix.tolist()
    record("spark_cmetrics", benchmark)


@pytest.mark.benchmark(group="Spark local[2], hard labels of a Parquet table")
def test_spark_group_by_count(benchmark: Any, spark: Any, table: Path) -> None:
    df = spark.read.parquet(str(table))
    rows = benchmark.pedantic(lambda: df.groupBy("y", "pred").count().collect(), rounds=3, iterations=1)
    assert sum(r["count"] for r in rows) == N
    record("spark_group_by_count", benchmark)


def _count_rows(batches: Any) -> Any:
    import pyarrow as pa

    yield pa.RecordBatch.from_pydict({"n": [sum(b.num_rows for b in batches)]})


@pytest.mark.benchmark(group="Spark local[2], hard labels of a Parquet table")
def test_spark_map_in_arrow_alone(benchmark: Any, spark: Any, table: Path) -> None:
    """The engine's floor for any Python scorer: the rows handed to Python workers as Arrow
    batches, each partition counting its rows and nothing else."""
    df = spark.read.parquet(str(table)).select("y", "pred")
    rows = benchmark.pedantic(lambda: df.mapInArrow(_count_rows, "n long").collect(), rounds=3, iterations=1)
    assert sum(r["n"] for r in rows) == N
    record("spark_map_in_arrow", benchmark)


def test_record_the_ratio() -> None:
    if "spark_cmetrics" in TIMINGS and "spark_group_by_count" in TIMINGS:
        EXTRA["spark: cmetrics.spark.evaluate / groupBy(y, pred).count()"] = (
            TIMINGS["spark_cmetrics"] / TIMINGS["spark_group_by_count"]
        )
    if "spark_cmetrics" in TIMINGS and "spark_map_in_arrow" in TIMINGS:
        EXTRA["spark: cmetrics.spark.evaluate / mapInArrow counting rows"] = (
            TIMINGS["spark_cmetrics"] / TIMINGS["spark_map_in_arrow"]
        )
    assert np.isfinite(N)

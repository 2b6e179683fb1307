"""cmetrics.spark on one shared local[2] Spark session bound to 127.0.0.1: the report equals
``evaluate`` on the same rows (hard labels, probabilities, weights, string labels, groups, empty
partitions, partitions of one class), and bad input raises the package's errors, the classes
cmetrics.dask raises."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

import cmetrics
from cmetrics.exceptions import InputError, LimitExceededError, ValidationError
from tests.streaming.test_streaming import assert_same_report

if shutil.which("java") is None and os.environ.get("CI"):
    pytest.fail("CI installs Java (.ci/run); the Spark tests must run there", pytrace=False)
pyspark = pytest.importorskip("pyspark", reason="pyspark is part of the test extra (Java needed too)")
if shutil.which("java") is None:
    pytest.skip("no Java here (apt-get install openjdk-17-jre-headless)", allow_module_level=True)

import cmetrics.spark as cspark  # noqa: E402

#: PySpark's own notice about the installed pandas major version (not cmetrics').
pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("cmetrics-tests")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("OFF")
    yield session
    session.stop()


def dump(n: int, k: int, seed: int, string_labels: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    p = rng.dirichlet(np.ones(k), n) * 0.5 + 0.5 * np.eye(k)[y]
    p = np.round(p, 3)
    p /= p.sum(axis=1, keepdims=True)
    names = [f"c{j}" for j in range(k)] if string_labels else list(range(k))
    frame = pd.DataFrame({f"p_{names[j]}": p[:, j] for j in range(k)})
    frame.insert(0, "y", np.asarray(names, dtype=object)[y] if string_labels else y)
    frame["pred"] = np.asarray(names, dtype=object)[p.argmax(1)] if string_labels else p.argmax(1)
    frame["w"] = rng.random(n) + 0.25
    frame["g"] = rng.choice(["de", "en", "fr"], n)
    frame["h"] = rng.integers(0, 2, n)
    return frame


def test_hard_labels_with_empty_and_one_class_partitions(spark: Any) -> None:
    frame = dump(3000, 4, 1)
    by_class = spark.createDataFrame(frame).repartitionByRange(4, "y")  # each partition one class
    sparse = spark.createDataFrame(frame.iloc[:7]).repartition(12)  # most partitions empty
    for df, rows in ((by_class, frame), (sparse, frame.iloc[:7])):
        y, pred, w = rows["y"].to_numpy(), rows["pred"].to_numpy(), rows["w"].to_numpy()
        # Unweighted: Spark's own groupBy count; weighted: every partition's Evaluator, a tree of 2.
        got = cspark.evaluate(df, label="y", pred="pred", split_every=2)
        assert_same_report(got, cmetrics.evaluate(y, y_pred=pred))
        weighted = cspark.evaluate(df, label="y", pred="pred", weight="w", split_every=2)
        assert_same_report(weighted, cmetrics.evaluate(y, y_pred=pred, sample_weight=w))
    holes = spark.createDataFrame(
        frame.iloc[:50].assign(y=frame["y"].iloc[:50].astype("Int64").mask(frame.index[:50] == 3))
    )
    with pytest.raises(InputError, match="'y' has 1 missing values"):
        cspark.evaluate(holes, label="y", pred="pred")


def test_probabilities_weights_and_string_labels(spark: Any) -> None:
    frame = dump(4000, 3, 2, string_labels=True)
    df = spark.createDataFrame(frame).repartition(9)
    got = cspark.evaluate(df, label="y", proba_prefix="p_", weight="w")
    proba = frame[["p_c0", "p_c1", "p_c2"]].to_numpy()
    want = cmetrics.evaluate(
        frame["y"].to_numpy(), y_proba=proba, labels=["c0", "c1", "c2"], sample_weight=frame["w"].to_numpy()
    )
    assert_same_report(got, want)
    ev = cspark.evaluator(
        df, label="y", proba_prefix="p_", weight="w", ranking="approximate", class_ranking="approximate"
    )
    assert ev.n_rows == len(frame)


def test_groups_of_one_and_two_columns(spark: Any) -> None:
    frame = dump(3000, 3, 3)
    df = spark.createDataFrame(frame).repartition(5)
    y, pred = frame["y"].to_numpy(), frame["pred"].to_numpy()
    got = cspark.evaluate(df, label="y", pred="pred", group_by="g")
    want = cmetrics.evaluate(y, y_pred=pred, groups=frame["g"].to_numpy())
    assert list(got) == list(want) == ["de", "en", "fr"]
    for key in want:
        assert_same_report(got[key], want[key])
    two = cspark.evaluate(df, label="y", pred="pred", group_by=["g", "h"])
    want2 = cmetrics.evaluate(y, y_pred=pred, groups=(frame["g"].to_numpy(), frame["h"].to_numpy()))
    assert list(two) == list(want2)
    assert two[("fr", 1)].accuracy == want2[("fr", 1)].accuracy


def test_errors_are_the_packages_as_on_dask(spark: Any) -> None:
    dd = pytest.importorskip("dask.dataframe")
    import cmetrics.dask as cdask

    frame = dump(200, 3, 4)
    frame["p_text"] = "x"
    sdf, ddf = spark.createDataFrame(frame), dd.from_pandas(frame, npartitions=2)
    for kwargs in ({"label": "nope", "pred": "pred"}, {"label": "y", "proba": ["p_0", "p_text", "p_2"]}):
        with pytest.raises(ValidationError) as on_dask:
            cdask.evaluate(ddf, **kwargs)  # type: ignore[arg-type]
        with pytest.raises(ValidationError) as on_spark:
            cspark.evaluate(sdf, **kwargs)  # type: ignore[arg-type]
        assert type(on_spark.value) is type(on_dask.value) is InputError
    nan = frame.drop(columns="p_text").astype({"p_1": float})
    nan.loc[5, "p_1"] = np.nan
    with pytest.raises(ValidationError, match="p_1"):
        cspark.evaluate(spark.createDataFrame(nan), label="y", proba_prefix="p_")  # raised on an executor
    with pytest.raises(LimitExceededError, match="approximate"):
        cspark.evaluate(
            spark.createDataFrame(frame.drop(columns="p_text")), label="y", proba_prefix="p_", max_state_bytes=64
        )
    with pytest.raises(InputError, match="split_every"):
        cspark.evaluate(sdf, label="y", pred="pred", split_every=1)

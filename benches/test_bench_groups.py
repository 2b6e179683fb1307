"""Per-group reports: ``cmetrics score --group-by`` against the same command without it, on
n rows (K = 10, float32 probabilities) in 16 Parquet files of one row group each, with an
integer group column of 100 values drawn uniformly (every batch holds every group). Both run
in the command's default modes (exact confidence ranking, binned class ranking: 2^16 bins
for all rows, 1,024 per group) and with the ranking metrics off. The peak resident memory of
each run, measured in a fresh process (its VmHWM, Linux), is recorded in ``extra``."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benches.conftest import EXTRA, K, N, record

PARTS = 16
GROUPS = 100


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from cmetrics.cli import synthetic_dump, synthetic_proba

    folder = tmp_path_factory.mktemp("grouped")
    schema = pa.schema([("label", pa.int32()), ("group", pa.int32())] + [(f"p_{j}", pa.float32()) for j in range(K)])
    per = -(-N // PARTS)
    for i, lo in enumerate(range(0, N, per)):
        rows = min(per, N - lo)
        y, p = synthetic_dump(rows, K, 104_729 * i)
        proba = synthetic_proba(p, K, 104_729 * i, y_true=y)
        g = np.random.default_rng(i).integers(0, GROUPS, rows).astype(np.int32)
        cols = [pa.array(y), pa.array(g)] + [pa.array(np.ascontiguousarray(proba[:, j])) for j in range(K)]
        pq.write_table(pa.Table.from_arrays(cols, schema=schema), folder / f"part-{i:02d}.parquet", row_group_size=per)
    return folder


# The high-water mark of this process's own memory (VmHWM): ``ru_maxrss`` would also count
# the memory of the benchmark process it was forked from.
_PEAK = """
import json, sys
from cmetrics import EvaluationSettings
from cmetrics.cli import Columns, score_files
options = json.loads(sys.argv[2])
columns = Columns(label="label", proba_prefix="p_", group_by=tuple(options.pop("group_by", ())))
score_files([sys.argv[1]], columns, EvaluationSettings.make(**options))
status = open("/proc/self/status").read().split("\\n")
print(int(next(line.split()[1] for line in status if line.startswith("VmHWM:"))) / 1024)
"""


def peak_rss_mib(files: Path, options: dict[str, Any]) -> float:
    """The peak resident memory (MiB) of one ``score`` run in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", _PEAK, str(files), json.dumps(options)], capture_output=True, text=True, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


@pytest.mark.benchmark(group="Per-group reports, 16 Parquet files")
@pytest.mark.parametrize("ranking", ["exact", "off"])
@pytest.mark.parametrize("grouped", [False, True], ids=["ungrouped", "group_by_100"])
def test_score(benchmark: Any, files: Path, ranking: str, grouped: bool) -> None:
    import warnings

    import cmetrics
    from cmetrics.cli import Columns, score_files

    options: dict[str, Any] = {"ranking": ranking, "class_ranking": "approximate" if ranking != "off" else "off"}
    columns = Columns(label="label", proba_prefix="p_", group_by=("group",) if grouped else ())
    settings = cmetrics.EvaluationSettings.make(**options)
    if grouped:
        options["group_by"] = ("group",)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cmetrics.UndefinedMetricWarning)
        report, run = benchmark.pedantic(lambda: score_files([str(files)], columns, settings), rounds=3, iterations=1)
    assert run["rows"] == N
    name = f"score_{'grouped' if grouped else 'ungrouped'}_{ranking}"
    record(name, benchmark)
    if grouped:
        assert isinstance(report, cmetrics.GroupedReport) and len(report) == GROUPS
        assert sum(r.n_samples for r in report.groups.values()) == N
    if getattr(benchmark, "stats", None) is not None:
        EXTRA[f"{name}_peak_rss_mib"] = peak_rss_mib(files, options)
        EXTRA[f"{name}_report_json_bytes"] = len(json.dumps(report.to_dict()))


# ---------------------------------------------------------------------------- slices at scale

#: Rows of the in-memory grouped benchmark: 10^7 by default (CMETRICS_BENCH_ROWS, as the rest).
SLICE_ROWS = N


@pytest.fixture(scope="module")
def hard_rows() -> tuple[np.ndarray, np.ndarray]:
    """``SLICE_ROWS`` int64 labels of 10 classes, predictions right 70% of the time."""
    rng = np.random.default_rng(29)
    y = rng.integers(0, K, SLICE_ROWS)
    p = np.where(rng.random(SLICE_ROWS) < 0.7, y, rng.integers(0, K, SLICE_ROWS))
    return y, p


@pytest.mark.benchmark(group="Slices: evaluate(groups=) of 10^7 hard labels, K = 10")
@pytest.mark.parametrize("n_groups", [0, 10_000, 100_000], ids=["ungrouped", "groups_1e4", "groups_1e5"])
def test_evaluate_slices(benchmark: Any, hard_rows: tuple[np.ndarray, np.ndarray], n_groups: int) -> None:
    """``evaluate`` of hard labels with an int64 group column of ``n_groups`` values drawn
    uniformly (every group holds rows of every class), against the same call without groups;
    then the columnar summary of every group (``to_arrow``) timed apart."""
    import cmetrics

    y, p = hard_rows
    groups = np.random.default_rng(n_groups).integers(0, max(n_groups, 1), SLICE_ROWS) if n_groups else None
    kwargs: dict[str, Any] = {"groups": groups, "max_groups": max(n_groups, 1)} if n_groups else {}
    result = benchmark.pedantic(lambda: cmetrics.evaluate(y, y_pred=p, **kwargs), rounds=7, iterations=1)
    name = f"evaluate_slices_{n_groups}"
    record(name, benchmark)
    if n_groups:
        # Every value drawn when the rows are many (10^7); a smoke run of fewer rows misses some.
        assert isinstance(result, cmetrics.GroupedReport) and len(result) == len(np.unique(groups))
        import time

        best = math.inf
        for _ in range(3):
            start = time.perf_counter()
            table = result.to_arrow(["accuracy", "f1_macro", "matthews_corrcoef"])
            best = min(best, time.perf_counter() - start)
        assert table.num_rows == len(result)
        EXTRA[f"{name}_to_arrow_seconds"] = best
        EXTRA[f"{name}_table_bytes"] = int(n_groups * K * K * 8)
    if getattr(benchmark, "stats", None) is not None:
        EXTRA[f"{name}_peak_rss_mib"] = slices_peak_rss_mib(n_groups)


# The same rows made in a fresh process, scored once, and that process's VmHWM (Linux).
_SLICES_PEAK = """
import sys
import numpy as np
import cmetrics
n, k, groups = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(29)
y = rng.integers(0, k, n)
p = np.where(rng.random(n) < 0.7, y, rng.integers(0, k, n))
g = np.random.default_rng(groups).integers(0, max(groups, 1), n) if groups else None
extra = {"groups": g, "max_groups": groups} if groups else {}
cmetrics.evaluate(y, y_pred=p, **extra)
status = open("/proc/self/status").read().split("\\n")
print(int(next(line.split()[1] for line in status if line.startswith("VmHWM:"))) / 1024)
"""


def slices_peak_rss_mib(n_groups: int) -> float:
    """The peak resident memory (MiB) of a fresh process that makes the rows and scores them."""
    args = [sys.executable, "-c", _SLICES_PEAK, str(SLICE_ROWS), str(K), str(n_groups)]
    out = subprocess.run(args, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])

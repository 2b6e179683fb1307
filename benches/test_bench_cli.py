"""Issue 5: ``cmetrics score`` on an n-row Parquet file (K = 10, float32 probabilities) against
a Python process that only reads the same columns with pyarrow (both timed as whole processes,
in one run), its peak memory, and the size of a serialised n-row Evaluator state."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cmetrics
from benches.conftest import EXTRA, K, N, record


@pytest.fixture(scope="module")
def parquet_dump(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from cmetrics.cli import write_demo

    return write_demo(tmp_path_factory.mktemp("dump"), N, K)


def _process(code: str) -> tuple[float, float]:
    """Wall time of a whole Python process and its peak resident memory (MiB)."""
    wrapped = code + "\nimport resource; print('MAXRSS', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - t0
    rss = int(out.stdout.rsplit("MAXRSS", 1)[1].split()[0]) / 1024
    return seconds, rss


def _score_code(path: Path, ranking: str) -> str:
    return (f"from cmetrics.cli import main; main(['score', {str(path)!r}, '--label', 'label', '--proba-prefix', "
            f"'p_', '--quiet', '--format', 'json', '--output', '/dev/null', '--ranking', {ranking!r}])")


def _read_code(path: Path) -> str:
    cols = ["label"] + [f"p_{j}" for j in range(K)]
    return f"import pyarrow.parquet as pq; t = pq.read_table({str(path)!r}, columns={cols!r})"


@pytest.mark.parametrize("ranking", ["exact", "approximate", "off"])
def test_cli_score(benchmark: Any, parquet_dump: Path, ranking: str) -> None:
    benchmark.group = "cmetrics score, Parquet 1e7 x 10 float32 (whole process)"
    stats: list[float] = []

    def run() -> None:
        seconds, rss = _process(_score_code(parquet_dump, ranking))
        stats.append(rss)

    benchmark.pedantic(run, rounds=2, iterations=1)
    EXTRA[f"cli_score_{ranking}_peak_MiB"] = max(stats)
    record(f"cli_score_{ranking}", benchmark)


def test_pyarrow_read(benchmark: Any, parquet_dump: Path) -> None:
    benchmark.group = "cmetrics score, Parquet 1e7 x 10 float32 (whole process)"
    stats: list[float] = []

    def run() -> None:
        stats.append(_process(_read_code(parquet_dump))[1])

    benchmark.pedantic(run, rounds=2, iterations=1)
    EXTRA["pyarrow_read_peak_MiB"] = max(stats)
    record("pyarrow_read", benchmark)


def test_state_size(proba_1e7: np.ndarray, labels_1e7: tuple[np.ndarray, np.ndarray]) -> None:
    """Serialised size of an n-row state, exact and approximate ranking."""
    y = labels_1e7[0]
    step = 1 << 21
    for mode in ("exact", "approximate"):
        ev = cmetrics.Evaluator(n_classes=K, ranking=mode)  # type: ignore[arg-type]
        for lo in range(0, N, step):
            ev.update(y[lo:lo + step], y_proba=proba_1e7[lo:lo + step])
        blob = ev.to_bytes()
        summary = ev.ranking_summary()
        assert summary is not None
        EXTRA[f"state_{mode}_MiB"] = len(blob) / 2**20
        EXTRA[f"state_{mode}_entries"] = len(summary)
        assert len(blob) <= 24 * len(summary) + 64 * 1024

"""The README's Ray Data recipe (``examples/ray_data_recipe.py``) run on a local two-CPU Ray over
Parquet files: its report equals ``evaluate`` on the same rows. Part of the engine lane
(``pytest -m engines``, after ``pip install ".[engines]"``), which CI runs; ``ray`` is imported
by the script, so without it the test fails rather than skips."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import cmetrics

pytestmark = pytest.mark.engines

RECIPE = Path(__file__).resolve().parents[2] / "examples" / "ray_data_recipe.py"
LABELS = ["cat", "dog", "emu"]


def dump(tmp_path: Path, seed: int) -> dict[str, np.ndarray]:
    """A dump in four Parquet files, one holding a single class; returns all the rows."""
    rng = np.random.default_rng(seed)
    n = 40_000
    y = rng.integers(0, 3, n)
    logits = rng.normal(0, 1, (n, 3)) + 1.5 * np.eye(3)[y]
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    cols = {
        "y": np.asarray(LABELS)[y],
        "yhat": np.asarray(LABELS)[p.argmax(axis=1)],
        "w": rng.uniform(0.1, 3.0, n).round(3),
        **{f"p_{k}": p[:, k] for k in range(3)},
    }
    cols["y"][:5000] = "dog"  # the first file holds one class only
    for i, (lo, hi) in enumerate([(0, 5000), (5000, 20_000), (20_000, 21_000), (21_000, n)]):
        pq.write_table(pa.table({k: v[lo:hi] for k, v in cols.items()}), tmp_path / f"part-{i}.parquet")
    return cols


def run(path: Path, *args: str) -> dict[str, Any]:
    """The recipe's report, read from its ``--output`` file: the raylet may print warnings (such as
    "8 PYTHON worker processes have been started") to the driver's standard output."""
    report_file = path.with_name(f"{path.name}-report.json")  # beside the Parquet directory, not in it
    command = [sys.executable, str(RECIPE), str(path), "--label", "y", "--labels", *LABELS, "--batch-rows", "7000"]
    out = subprocess.run(
        [*command, "--output", str(report_file), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(report_file.read_text(encoding="utf-8"))
    assert result["states"] == 6  # 40,000 rows in batches of 7,000, merged on the driver
    report: dict[str, Any] = result["report"]
    return report


def test_hard_labels_equal_evaluate(tmp_path: Path) -> None:
    cols = dump(tmp_path, 0)
    got = run(tmp_path, "--pred", "yhat")
    want = cmetrics.evaluate(cols["y"], y_pred=cols["yhat"], labels=LABELS).to_dict()
    assert got["n_samples"] == 40_000
    assert got == json.loads(json.dumps(want))  # counts are integers: the same bits


def test_weighted_probabilities_equal_evaluate(tmp_path: Path) -> None:
    cols = dump(tmp_path, 1)
    got = run(tmp_path, "--proba", "p_0", "p_1", "p_2", "--weight", "w")
    proba = np.column_stack([cols[f"p_{k}"] for k in range(3)])
    want = cmetrics.evaluate(cols["y"], y_proba=proba, sample_weight=cols["w"], labels=LABELS)
    assert got["n_samples"] == pytest.approx(want.n_samples, rel=1e-12)  # the weights' sum
    assert np.allclose(got["confusion_matrix"], want.confusion_matrix, rtol=1e-12, atol=0)
    assert set(got["metrics"]) == set(want.metrics)
    for name, value in want.metrics.items():
        assert got["metrics"][name] == pytest.approx(value, rel=1e-12, abs=1e-15), name

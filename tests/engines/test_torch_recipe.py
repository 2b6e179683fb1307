"""The README's ``torch.distributed`` recipe (``examples/torch_distributed_recipe.py``) run with
three ``gloo`` ranks on this machine: every rank's report is the same and equals ``evaluate`` on
all the rows. Part of the engine lane (``pytest -m engines``, after ``pip install
".[engines]"``), which CI runs; ``torch`` is imported by the script, so without it the test fails
rather than skips."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cmetrics

pytestmark = pytest.mark.engines

RECIPE = Path(__file__).resolve().parents[2] / "examples" / "torch_distributed_recipe.py"


def test_every_rank_gets_the_report_of_all_rows(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    n, k = 30_001, 4  # shards of 10,001, 10,000 and 10,000 rows
    y = rng.integers(0, k, n)
    y[:10_001] = 2  # the first rank sees one class only
    z = rng.normal(0, 1, (n, k)) + 1.2 * np.eye(k)[y]
    p = (np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)).astype(np.float32)
    w = rng.uniform(0.5, 2.0, n)
    np.savez(tmp_path / "rows.npz", y_true=y, y_proba=p, sample_weight=w)
    out = subprocess.run(
        [sys.executable, str(RECIPE), str(tmp_path / "rows.npz"), str(tmp_path / "out"), "--world-size", "3"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    ranks = [json.loads((tmp_path / "out" / f"rank-{r}.json").read_text()) for r in range(3)]
    assert ranks[0] == ranks[1] == ranks[2]  # merged in rank order on every rank: the same bits
    want = cmetrics.evaluate(y, y_proba=p, sample_weight=w)
    got = ranks[0]
    assert got["n_samples"] == pytest.approx(want.n_samples, rel=1e-12)
    assert np.allclose(got["confusion_matrix"], want.confusion_matrix, rtol=1e-12, atol=0)
    assert set(got["metrics"]) == set(want.metrics)
    for name, value in want.metrics.items():
        assert got["metrics"][name] == pytest.approx(value, rel=1e-12, abs=1e-15), name

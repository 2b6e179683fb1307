"""The command line: ``cmetrics demo`` end to end."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import cmetrics
from cmetrics.cli import synthetic_dump, synthetic_proba


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cmetrics", *args], capture_output=True, text=True, timeout=300)


def test_demo_json_equals_python_api() -> None:
    out = run("demo", "--rows", "200000", "--classes", "7", "--seed", "3", "--json")
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    y, p = synthetic_dump(200_000, 7, seed=3)
    proba = synthetic_proba(p, 7, seed=3, y_true=y)
    assert abs(np.mean(y == p) - 0.7) < 0.01
    assert (proba.argmax(axis=1) == p).all()
    want = cmetrics.evaluate(y, y_proba=proba)
    got = payload["report"]
    assert got["n_samples"] == 200_000
    for key in ("accuracy", "matthews_corrcoef", "informedness", "f1_macro", "cf1_macro", "log_loss",
                "expected_calibration_error", "entropy_score", "refinement", "aurc"):
        assert got["metrics"][key] == pytest.approx(getattr(want, key), rel=1e-12)
    assert got["per_class"]["3"]["support"] == want.per_class["3"]["support"]
    assert got["calibration"]["count"] == want.calibration.count.tolist()
    # The demo's model is more confident where it is right.
    assert got["metrics"]["refinement"] > 0.6


def test_demo_table_hard_only_and_usage_errors() -> None:
    out = run("demo", "--rows", "50000")
    assert out.returncode == 0, out.stderr
    assert "probabilistic + hard-label report (50,000 rows" in out.stdout
    assert "log_loss" in out.stdout and "scored in " in out.stdout and "one pass over the rows" in out.stdout
    hard = run("demo", "--rows", "50000", "--hard-only")
    assert hard.returncode == 0 and "hard-label report" in hard.stdout and "log_loss" not in hard.stdout
    bad = run("demo", "--rows", "0")
    assert bad.returncode == 2
    assert "--rows must be >= 1" in bad.stderr
    assert "Traceback" not in bad.stderr

"""The command line: ``cmetrics demo`` end to end."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

import cmetrics
from cmetrics.cli import synthetic_dump


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cmetrics", *args], capture_output=True, text=True, timeout=300)


def test_demo_json_equals_python_api() -> None:
    out = run("demo", "--rows", "200000", "--classes", "7", "--seed", "3", "--json")
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    y, p = synthetic_dump(200_000, 7, seed=3)
    assert abs(np.mean(y == p) - 0.7) < 0.01
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = cmetrics.hard_label_report(y, p)
    got = payload["report"]
    assert got["n_samples"] == 200_000
    for key in ("accuracy", "matthews_corrcoef", "informedness", "f1_macro", "normalized_information_transfer"):
        assert got[key] == pytest.approx(want[key], rel=1e-12)
    assert got["per_class"]["3"]["support"] == want["per_class"]["3"]["support"]


def test_demo_table_and_usage_errors() -> None:
    out = run("demo", "--rows", "50000")
    assert out.returncode == 0, out.stderr
    assert "hard-label report (50,000 rows" in out.stdout
    assert "matthews_corrcoef" in out.stdout and "counted and derived in" in out.stdout
    bad = run("demo", "--rows", "0")
    assert bad.returncode == 2
    assert "--rows must be >= 1" in bad.stderr
    assert "Traceback" not in bad.stderr

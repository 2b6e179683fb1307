"""The papers' studies in ``examples/`` run, on small sizes, and print what they claim."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import cmetrics

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_yacouby_axman_study() -> None:
    ya = load("yacouby_axman_variance")
    rows = ya.study(rows=3000, resamples=200, seed=1)
    assert [r["fraction"] for r in rows] == list(ya.FRACTIONS)
    for r in rows:
        assert r["undefined_cprecision"] == 0.0  # cPrecision is defined whenever a probability is positive
        assert 0.0 <= r["undefined_precision"] <= 1.0
        assert r["var_cf1_macro"] > 0 and r["var_f1_macro"] > 0
    # The variance grows as the test set shrinks (30 rows against 3000), for F1 and cF1 alike.
    assert rows[-1]["var_f1_macro"] > 3 * rows[0]["var_f1_macro"]
    assert rows[-1]["var_cf1_macro"] > 3 * rows[0]["var_cf1_macro"]
    verdict = ya.verdict(rows)
    assert len(verdict) == 4 and verdict[-1].startswith("benefit C")


def test_gu_hopkins_study() -> None:
    gh = load("gu_hopkins_beating_baseline")
    out = gh.study(trials=8, rows=3000, seed=2)
    iv = out["likelihood"]
    assert iv.estimate == out["wins"] / 8
    assert iv == cmetrics.proportion_interval(out["wins"], 8)
    for t in out["trials"]:
        assert 0.5 < t["auc_baseline"] < 1 and 0 <= t["p_value"] <= 1


def test_the_scripts_run() -> None:
    for args in (
        ["yacouby_axman_variance.py", "--rows", "2000", "--resamples", "100"],
        ["gu_hopkins_beating_baseline.py", "--trials", "4", "--rows", "2000"],
    ):
        done = subprocess.run(
            [sys.executable, str(EXAMPLES / args[0]), *args[1:]], capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        assert "benefit" in done.stdout or "likelihood of beating" in done.stdout


def test_report_page_example(tmp_path: Path) -> None:
    """The example page writes a self-contained report; the committed one (the README's) stays
    small and has its six figures."""
    rp = load("report_page")
    page = rp.page(rows=3000, seed=2, out=tmp_path / "page.html")
    assert (tmp_path / "page.html").read_text() == page
    assert page.count("<svg") == 6 and "&lt;bird&gt;" in page and "<bird>" not in page
    committed = (EXAMPLES.parent / "docs" / "example_report.html").read_text()
    assert committed.count("<svg") == 6 and len(committed) < 120_000
    assert "Example: a simulated 3-class model" in committed

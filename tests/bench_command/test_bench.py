"""`cmetrics bench`: it runs end to end, compares every implementation's value with cmetrics'
before its time counts, reports a disagreement or a failure as a failure (exit status 1), and
lists peers that are not installed as skipped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cmetrics
from cmetrics.cli import benchmark, main


def small_run(**kw: Any) -> benchmark.Outcome:
    args: dict[str, Any] = {"rows": 3000, "classes": 4, "repeat": 2, "python_rows": 400}
    args.update(kw)
    return benchmark.run(**args)


def test_every_metric_runs_and_every_implementation_agrees() -> None:
    out = small_run()
    assert out.failures == []
    ran = {(r.metric, r.implementation) for r in out.rows}
    for metric in benchmark.metrics().values():
        for impl in metric.impls:
            if impl.needs is None or benchmark.installed(impl.needs) is not None:
                assert (metric.name, impl.name) in ran
    for r in out.rows:
        assert r.agrees
        assert len(r.times) == 2 and all(t > 0 for t in r.times)
        assert r.rows == (400 if r.implementation == "pure Python" else 3000)
        assert r.baseline is not None and r.baseline > 0
        if r.implementation == "cmetrics":
            assert r.ratio == pytest.approx(1.0)


def wrong_metric(shift: int) -> benchmark.Metric:
    cm = cmetrics

    def right(t: np.ndarray, p: np.ndarray, labels: list[int]) -> np.ndarray:
        return cm.confusion_matrix(t, p, labels=labels)

    def off_by(t: np.ndarray, p: np.ndarray, labels: list[int]) -> np.ndarray:
        m = cm.confusion_matrix(t, p, labels=labels)
        m[0, 0] += shift  # one count wrong: counts must be equal
        return m

    def broken(t: np.ndarray, p: np.ndarray, labels: list[int]) -> np.ndarray:
        raise RuntimeError("peer crashed")

    impls = (
        benchmark.Impl("cmetrics", right, benchmark._hard),
        benchmark.Impl("off by one", off_by, benchmark._hard),
        benchmark.Impl("crashes", broken, benchmark._hard),
    )
    return benchmark.Metric("confusion_matrix", "test", 0.0, impls)


def test_a_disagreement_and_a_crash_are_failures() -> None:
    out = benchmark.run(rows=500, classes=3, repeat=1, python_rows=100, chosen=[wrong_metric(1)])
    by_name = {r.implementation: r for r in out.rows}
    assert by_name["cmetrics"].agrees
    assert not by_name["off by one"].agrees
    assert "crashes" not in by_name
    assert len(out.failures) == 2
    assert "off by one gives" in out.failures[0]
    assert "crashes raised RuntimeError: peer crashed" in out.failures[1]
    text = benchmark.to_table(out)
    assert "FAILED" in text and "NO" in text


def test_the_command_exits_1_on_a_disagreement(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(benchmark, "metrics", lambda: {"confusion_matrix": wrong_metric(1)})
    assert main(["bench", "--rows", "300", "--repeat", "1", "--quiet", "--format", "json"]) == 1
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert [r["agrees"] for r in doc["results"]] == [True, False]
    assert "disagree with cmetrics or failed" in captured.err


def test_tolerances_compare_values() -> None:
    assert benchmark.agree(np.array([1, 2]), [[1, 2]], 0.0)
    assert not benchmark.agree(np.array([1, 2]), [1, 3], 0.0)
    assert not benchmark.agree(np.array([1, 2]), [1, 2, 3], 1e-9)
    assert benchmark.agree(1.0, 1.0 + 1e-12, 1e-9)
    assert not benchmark.agree(1.0, 1.0 + 1e-6, 1e-9)
    assert benchmark.agree(float("nan"), float("nan"), 1e-9)
    assert benchmark.agree({"a": 1.0, "b": 2.0}, {"b": 2.0, "a": 1.0}, 1e-9)
    assert not benchmark.agree({"a": 1.0}, {"a": 1.5}, 1e-9)


def test_missing_peers_are_listed_as_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    real = benchmark.installed
    monkeypatch.setattr(benchmark, "installed", lambda d: None if d in ("scors", "polars-ds") else real(d))
    out = small_run(metric_names=["auroc"], repeat=1)
    assert out.failures == []
    assert {s["implementation"] for s in out.skipped} == {"scors", "polars-ds"}
    assert all(r.implementation not in ("scors", "polars-ds") for r in out.rows)
    assert "skipped: auroc / scors (scors is not installed)" in benchmark.to_markdown(out)


def test_quick_json_output_describes_the_machine_and_every_result(tmp_path: Path) -> None:
    target = tmp_path / "bench.json"
    assert main(["bench", "--quick", "--quiet", "--format", "json", "--output", str(target)]) == 0
    doc = json.loads(target.read_text())
    assert doc["config"]["rows"] == 20_000 and doc["config"]["python_rows"] == 2_000
    assert doc["config"]["metrics"] == list(benchmark.metrics())
    assert doc["machine"]["cores"] >= 1 and doc["machine"]["libraries"]["numpy"] == np.__version__
    assert doc["failures"] == []
    assert {r["metric"] for r in doc["results"]} == set(benchmark.metrics())
    assert all(r["median_s"] > 0 and r["agrees"] for r in doc["results"])


def test_unknown_metrics_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--metrics", "auroc,nonsense", "--quiet"]) == 2
    assert "unknown metric(s) nonsense" in capsys.readouterr().err


def test_markdown_has_one_row_per_implementation() -> None:
    out = small_run(metric_names=["log_loss", "kendall_tau"], repeat=1)
    text = benchmark.to_markdown(out)
    table = [line for line in text.splitlines() if line.startswith("| ") and "implementation" not in line]
    assert len(table) == len(out.rows)
    assert all(line.endswith("| yes |") for line in table)

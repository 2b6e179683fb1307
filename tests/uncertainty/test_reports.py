"""Intervals everywhere a report is: ``evaluate(bootstrap=N)``, a merged Evaluator's report,
grouped reports and ``cmetrics score --bootstrap``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import cmetrics
from cmetrics.cli import main
from cmetrics.exceptions import NotImplementedOptionError, ValidationError


def _data(n: int = 4000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, n)
    return y, np.where(rng.random(n) < 0.75, y, rng.integers(0, 4, n))


def test_evaluate_with_bootstrap_equals_bootstrap_of_the_rows(backend: str) -> None:
    y, pred = _data()
    r = cmetrics.evaluate(y, y_pred=pred, bootstrap=300, seed=7, backend=backend)
    direct = cmetrics.bootstrap(y, y_pred=pred, n_resamples=300, seed=7, backend=backend)
    assert r.intervals is not None
    assert r.intervals.metrics == direct.metrics and r.intervals.per_class == direct.per_class
    for name, iv in r.intervals.metrics.items():
        assert iv.estimate == pytest.approx(r.metrics[name], rel=1e-12), name
    d = json.loads(r.to_json())
    assert d["intervals"]["provenance"]["scheme"] == "multinomial"
    assert "### Intervals" in r.to_markdown()
    assert cmetrics.evaluate(y, y_pred=pred).intervals is None


def test_a_merged_evaluator_gives_the_intervals_of_all_its_rows(backend: str) -> None:
    y, pred = _data(6000, 1)
    parts = []
    for lo in range(0, 6000, 1000):
        ev = cmetrics.Evaluator(backend=backend)
        ev.update(y[lo : lo + 1000], y_pred=pred[lo : lo + 1000])
        parts.append(ev)
    merged = parts[0]
    for ev in parts[1:]:
        merged = merged.merge(ev) or merged
    got = cmetrics.report_intervals(merged.report(), n_resamples=200, seed=2)
    want = cmetrics.bootstrap(y, y_pred=pred, n_resamples=200, seed=2, backend=backend)
    assert got.metrics == want.metrics


@pytest.mark.parametrize("batch", [1, 333, 1000, 6000])
def test_intervals_do_not_depend_on_the_batching(batch: int) -> None:
    y, pred = _data(6000, 4)
    ev = cmetrics.Evaluator()
    for lo in range(0, 6000, batch):
        ev.update(y[lo : lo + batch], y_pred=pred[lo : lo + batch])
    with cmetrics.thread_limit(1 if batch % 2 else 2):
        got = cmetrics.report_intervals(ev.report(), n_resamples=150, seed=9)
    assert got.metrics == cmetrics.bootstrap(y, y_pred=pred, n_resamples=150, seed=9).metrics


def test_grouped_reports_get_intervals_per_group() -> None:
    y, pred = _data(3000, 2)
    g = cmetrics.evaluate(y, y_pred=pred, groups=y % 3, bootstrap=100, seed=1)
    for key, rep in g.groups.items():
        rows = (y % 3) == key
        want = cmetrics.bootstrap(y[rows], y_pred=pred[rows], labels=[0, 1, 2, 3], n_resamples=100, seed=1)
        assert rep.intervals is not None
        assert rep.intervals["accuracy"] == want["accuracy"]
    assert g.overall.intervals is not None


def test_the_groups_intervals_are_made_when_read_in_any_order() -> None:
    """Many groups: each group's intervals are drawn when its report is first read, from its
    counts and the seed alone, so the order of reading (or the summary read first) changes
    nothing, and they are those of the group's rows alone."""
    y, pred = _data(20_000, 3)
    groups = np.arange(20_000) % 400
    forward = cmetrics.evaluate(y, y_pred=pred, groups=groups, bootstrap=80, seed=4)
    backward = cmetrics.evaluate(y, y_pred=pred, groups=groups, bootstrap=80, seed=4)
    assert forward.summary(["accuracy"])["7"]["accuracy"] == backward[7].accuracy  # the summary draws nothing
    keys = [3, 250, 399, 0]
    first = {key: forward[key].intervals for key in keys}
    second = {key: backward[key].intervals for key in reversed(keys)}
    for key in keys:
        a, b = first[key], second[key]
        assert a is not None and b is not None and a.metrics == b.metrics and a.per_class == b.per_class
        rows = groups == key
        want = cmetrics.bootstrap(y[rows], y_pred=pred[rows], labels=[0, 1, 2, 3], n_resamples=80, seed=4)
        assert a["f1_macro"] == want["f1_macro"]
    assert len(forward.to_dict()["groups"]) == 400  # every group, with its intervals, when all are read


def test_evaluate_refuses_bootstrap_with_weights_and_bad_arguments() -> None:
    y, pred = _data(100)
    with pytest.raises(NotImplementedOptionError, match="sample_weight"):
        cmetrics.evaluate(y, y_pred=pred, sample_weight=np.ones(100), bootstrap=10)
    with pytest.raises(ValidationError, match="n_resamples"):
        cmetrics.evaluate(y, y_pred=pred, bootstrap=0)
    with pytest.raises(ValidationError, match="confidence_level"):
        cmetrics.evaluate(y, y_pred=pred, bootstrap=10, confidence_level=95)
    weighted = cmetrics.evaluate(y, y_pred=pred, sample_weight=np.full(100, 0.5))
    with pytest.raises(NotImplementedOptionError, match="weighted"):
        cmetrics.report_intervals(weighted)


def test_score_with_bootstrap(tmp_path: Path) -> None:
    y, pred = _data(5000, 3)
    path = tmp_path / "dump.parquet"
    pq.write_table(pa.table({"label": y, "pred": pred, "g": y % 2, "w": np.ones(5000)}), path)
    out = tmp_path / "r.json"
    args = ["score", str(path), "--label", "label", "--pred", "pred", "--bootstrap", "200", "--seed", "4"]
    assert main([*args, "--format", "json", "--output", str(out), "--quiet"]) == 0
    d = json.loads(out.read_text())
    want = cmetrics.bootstrap(y, y_pred=pred, n_resamples=200, seed=4)
    assert d["intervals"]["metrics"]["f1_macro"] == want["f1_macro"].to_dict()
    assert main([*args, "--group-by", "g", "--format", "json", "--output", str(out), "--force", "--quiet"]) == 0
    grouped = json.loads(out.read_text())
    assert len(grouped["groups"]) == 2 and all("intervals" in g["report"] for g in grouped["groups"])
    assert main([*args, "--weight", "w", "--quiet"]) == 2

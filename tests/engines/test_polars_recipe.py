"""The README's polars recipe for per-group metrics: one grouped ``evaluate`` brought back as a
frame, and a metric of one's own per group through ``map_groups``; each value equal to the
metric of that group's rows alone."""

from __future__ import annotations

import numpy as np
import pytest

import cmetrics

pl = pytest.importorskip("polars", reason="polars is part of the test extra")


def test_per_group_metrics_in_a_polars_pipeline() -> None:
    rng = np.random.default_rng(0)
    n = 3000
    lang = rng.choice(["de", "en", "fr", "ja", "pt"], n)
    label = rng.integers(0, 3, n)
    pred = np.where(rng.random(n) < 0.7, label, rng.integers(0, 3, n))
    frame = pl.DataFrame({"lang": lang, "label": label, "pred": pred})
    by_lang = cmetrics.evaluate(
        frame["label"].to_numpy(), y_pred=frame["pred"].to_numpy(), groups=frame["lang"].to_numpy()
    )
    table = pl.from_arrow(by_lang.to_arrow(["accuracy", "f1_macro"])).rename({"groups": "lang"})
    assert isinstance(table, pl.DataFrame)
    custom = frame.group_by("lang").agg(
        pl.map_groups(
            exprs=["label", "pred"],
            function=lambda cols: cmetrics.matthews_corrcoef(cols[0].to_numpy(), cols[1].to_numpy()),
            return_dtype=pl.Float64,
            returns_scalar=True,
        ).alias("mcc")
    )
    assert table["lang"].to_list() == ["de", "en", "fr", "ja", "pt"]
    for row in table.iter_rows(named=True):
        rows = lang == row["lang"]
        alone = cmetrics.evaluate(label[rows], y_pred=pred[rows], labels=[0, 1, 2])
        assert row["n_samples"] == rows.sum()
        assert row["accuracy"] == pytest.approx(alone.accuracy, rel=1e-12)
        assert row["f1_macro"] == pytest.approx(alone.f1_macro, rel=1e-12)
    for row in custom.iter_rows(named=True):
        rows = lang == row["lang"]
        assert row["mcc"] == pytest.approx(cmetrics.matthews_corrcoef(label[rows], pred[rows]), rel=1e-12)


def test_the_columnar_summary_of_a_grouped_report() -> None:
    """``GroupedReport.to_arrow`` / ``to_pandas``: the summary's values, one key column per
    grouping column (tuples split, each of its own type), read by polars as it is."""
    rng = np.random.default_rng(1)
    n = 2000
    lang, device = rng.choice(["de", "en"], n), rng.integers(0, 3, n)
    y = rng.integers(0, 3, n)
    p = np.where(rng.random(n) < 0.6, y, rng.integers(0, 3, n))
    one = cmetrics.evaluate(y, y_pred=p, groups=lang)
    table = one.to_arrow(["accuracy", "f1_macro"])
    assert table.column_names == ["groups", "n_samples", "accuracy", "f1_macro"]
    summary = one.summary(["accuracy", "f1_macro"])
    assert table.column("groups").to_pylist() == list(summary)
    assert table.column("accuracy").to_pylist() == [row["accuracy"] for row in summary.values()]
    two = cmetrics.evaluate(y, y_pred=p, groups=(lang, device))
    frame = pl.from_arrow(two.to_arrow(["accuracy"]))
    assert isinstance(frame, pl.DataFrame)
    assert frame.columns == ["groups[0]", "groups[1]", "n_samples", "accuracy"]
    assert frame.schema["groups[1]"] == pl.Int64 and frame.height == 6
    for row in frame.iter_rows(named=True):
        assert row["accuracy"] == two[(row["groups[0]"], row["groups[1]"])].accuracy
    pandas = one.to_pandas()
    assert list(pandas["groups"]) == ["de", "en"] and pandas["n_samples"].sum() == n

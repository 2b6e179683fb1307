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
    table = pl.DataFrame([{"lang": k, **row} for k, row in by_lang.summary(["accuracy", "f1_macro"]).items()])
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

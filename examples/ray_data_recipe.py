"""Scoring a Ray Dataset exactly: ``map_batches`` hands every batch of rows (Arrow, a million rows
by default) to one :class:`cmetrics.Evaluator`, each batch yields its state's bytes, and the
driver merges them in row order with :func:`cmetrics.merge_all`: the same fixed tree Dask and
Spark use, so the report equals ``cmetrics.evaluate`` on all the rows.

Run ``python examples/ray_data_recipe.py PARQUET_DIR --label y --pred yhat`` (or ``--proba p_0
p_1 ...``, ``--weight w``, ``--batch-rows N``, ``--output report.json``); it needs ``pip install
"ray[data]"``. The report is JSON, on standard output or in the ``--output`` file: Ray's raylet
prints its own warnings to the driver's standard output (``log_to_driver=False`` does not stop
them), so a program that parses the report should ask for the file. The test
``tests/engines/test_ray_recipe.py`` runs it on a local two-CPU Ray.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import ray

import cmetrics

#: Rows scored by one Evaluator: one state per million rows, not one per Arrow batch of a file.
BATCH_ROWS = 1 << 20


def batch_state(
    batch: pa.Table, *, label: str, pred: str | None, proba: Sequence[str], weight: str | None, labels: list[Any]
) -> pa.Table:
    """One batch's rows scored by one Evaluator: a one-row table holding its state's bytes.
    Every batch is given the same ``labels``, so a batch that lacks a class merges with the rest."""
    ev = cmetrics.Evaluator(labels=labels)
    if batch.num_rows:
        ev.update(
            batch.column(label).to_numpy(),
            y_pred=None if pred is None else batch.column(pred).to_numpy(),
            y_proba=np.column_stack([batch.column(c).to_numpy() for c in proba]) if proba else None,
            sample_weight=None if weight is None else batch.column(weight).to_numpy(),
        )
    return pa.table({"state": pa.array([ev.to_bytes()], pa.binary())})


def batch_states(
    ds: ray.data.Dataset,
    *,
    label: str,
    labels: list[Any],
    pred: str | None = None,
    proba: Sequence[str] = (),
    weight: str | None = None,
    batch_rows: int = BATCH_ROWS,
) -> list[bytes]:
    """The state bytes of every batch of ``ds``, in the dataset's order."""
    ray.data.DataContext.get_current().execution_options.preserve_order = True  # states in row order
    states = ds.map_batches(
        batch_state,
        batch_format="pyarrow",
        batch_size=batch_rows,
        fn_kwargs={"label": label, "pred": pred, "proba": list(proba), "weight": weight, "labels": labels},
    )
    return [row["state"] for row in states.take_all()]


def evaluate_dataset(ds: ray.data.Dataset, **columns: Any) -> cmetrics.Report:
    """The Report of every row of ``ds`` (keywords of :func:`batch_states`): the batches'
    states merged on the driver in row order."""
    return cmetrics.merge_all(batch_states(ds, **columns)).report()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Score a Parquet dataset with Ray Data and cmetrics.")
    parser.add_argument("path", help="a Parquet file or directory")
    parser.add_argument("--label", required=True)
    parser.add_argument("--labels", nargs="+", required=True, help="every class, as strings or integers")
    parser.add_argument("--pred")
    parser.add_argument("--proba", nargs="*", default=[])
    parser.add_argument("--weight")
    parser.add_argument("--batch-rows", type=int, default=BATCH_ROWS, help="rows per state (default 2^20)")
    parser.add_argument("--output", type=Path, help="write the JSON report here (default: standard output)")
    args = parser.parse_args(argv)
    numeric = all(v.lstrip("-").isdigit() for v in args.labels)
    labels: list[Any] = [int(v) for v in args.labels] if numeric else args.labels
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        states = batch_states(
            ray.data.read_parquet(args.path),
            label=args.label,
            labels=labels,
            pred=args.pred,
            proba=args.proba,
            weight=args.weight,
            batch_rows=args.batch_rows,
        )
    finally:
        ray.shutdown()
    result = {"states": len(states), "report": cmetrics.merge_all(states).report().to_dict()}
    if args.output is None:
        json.dump(result, sys.stdout)
    else:
        args.output.write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main()

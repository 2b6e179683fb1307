"""``cmetrics score``'s two paths: files streamed batch by batch into one
:class:`~cmetrics.Evaluator` in this process, or Parquet inputs scored on a Dask cluster. Both
take the columns (:class:`~cmetrics._readers.Columns`) and the settings
(:class:`~cmetrics.EvaluationSettings`) the command built once."""

from __future__ import annotations

import importlib
import time
from pathlib import Path
from typing import Any

import cmetrics
from cmetrics._base.config import check_classes
from cmetrics._readers import Columns, Source, open_source
from cmetrics.cli.render import progress_bar
from cmetrics.dask import evaluator_of
from cmetrics.exceptions import InputError
from cmetrics.streaming import EvaluationSettings, Evaluator
from cmetrics.streaming.state_curves import state_curves

#: What a run returns: the report (grouped with ``group_by``) and a record of the run.
Scored = tuple[cmetrics.Report | cmetrics.GroupedReport, dict[str, Any]]


def _report(ev: Evaluator, columns: Columns, curves: bool) -> cmetrics.Report | cmetrics.GroupedReport:
    """The Evaluator's report (grouped with ``columns.group_by``); with ``curves``, the overall
    report's curves read off the merged state (what the HTML page and ``--plots`` draw)."""
    if not columns.group_by:
        return ev.report(curves=curves)
    grouped = ev.grouped_report(names=list(columns.group_by))
    if curves:
        grouped.overall.curves = state_curves(ev)
    return grouped


def score_files(
    paths: list[str],
    columns: Columns,
    settings: EvaluationSettings,
    *,
    labels: list[Any] | None = None,
    batch_rows: int = 1 << 20,
    progress: bool = False,
    curves: bool = False,
) -> Scored:
    """Stream files into an Evaluator; the report (a :class:`cmetrics.GroupedReport` with
    ``columns.group_by``) and a record of the run. Raises :class:`InputError` and the
    package's ValidationErrors on bad input, before any row is read where it can."""
    t0 = time.perf_counter()
    src = open_source(paths, columns, batch_rows, labels)
    if src.proba_names:  # before any row is read
        check_classes(len(src.proba_names), "the input's probability columns", settings.max_classes)
    ev = Evaluator.from_settings(settings, src.labels, group_by=bool(columns.group_by))
    rows = _stream(src, ev, progress)
    if rows == 0:
        raise InputError(f"{', '.join(paths)}: no rows to score")
    report = _report(ev, columns, curves)
    seconds = time.perf_counter() - t0
    run = _record(paths, src.format, rows, seconds, batch_rows=batch_rows)
    return report, _with_groups(run, columns, ev)


def _stream(src: Source, ev: Evaluator, progress: bool) -> int:
    """Every batch of ``src`` added to ``ev`` (a progress bar on standard error if asked);
    the rows read."""
    labels = src.labels
    rows = 0
    bar = progress_bar(src.total_rows) if progress else None
    try:
        for b in src.batches(reuse=True):
            if b.y_proba is not None and labels is not None and b.y_proba.shape[1] != len(labels):
                msg = (
                    f"the probability lists have {b.y_proba.shape[1]} entries but --labels lists {len(labels)} classes"
                )
                raise InputError(msg)
            groups = None if b.groups is None else b.groups[0] if len(b.groups) == 1 else b.groups
            ev.update(
                b.y_true,
                y_pred=b.y_pred,
                y_proba=b.y_proba,
                confidence=b.confidence,
                sample_weight=b.weight,
                groups=groups,
            )
            rows += len(b)
            if bar is not None:
                bar[0].update(bar[1], advance=len(b))
    finally:
        if bar is not None:
            bar[0].stop()
    return rows


def _record(paths: list[str], fmt: str, rows: int, seconds: float, **details: Any) -> dict[str, Any]:
    """The record of a run (``details``: what one path adds, after the rate)."""
    return {
        "files": list(paths),
        "format": fmt,
        "rows": rows,
        "seconds": seconds,
        "rows_per_second": rows / seconds if seconds > 0 else None,
        **details,
        "cmetrics": cmetrics.__version__,
        "backend": "rust" if cmetrics.rust_available() else "numpy",
        "threads": cmetrics.get_num_threads(),
    }


def _with_groups(run: dict[str, Any], columns: Columns, ev: Evaluator) -> dict[str, Any]:
    if columns.group_by:
        run["group_by"] = list(columns.group_by)
        run["groups"] = len(ev.group_keys)
    return run


def score_on_dask(
    paths: list[str],
    columns: Columns,
    settings: EvaluationSettings,
    *,
    labels: list[Any] | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    curves: bool = False,
) -> Scored:
    """Parquet inputs scored by :mod:`cmetrics.dask` on a running scheduler (``scheduler``) or
    a local cluster of ``workers`` processes started for the run; the report and a record of
    the run (the cluster's start is timed apart)."""
    if scheduler is not None and workers is not None:
        raise InputError("pass --scheduler or --workers, not both")
    if columns.proba_list is not None:
        raise InputError("--proba-list is not read on Dask; name the columns with --proba or --proba-prefix")
    not_parquet = [p for p in paths if not (Path(p).is_dir() or p.endswith((".parquet", ".parq", ".pq")))]
    if not_parquet:
        raise InputError(f"Dask reads Parquet files and directories only; not {', '.join(not_parquet)}")
    try:
        # An optional dependency, imported where it is used; untyped (its calls are checked by
        # the tests with a real cluster).
        distributed: Any = importlib.import_module("distributed")
        importlib.import_module("dask.dataframe")
    except ImportError as e:
        raise InputError(f'--scheduler and --workers need cmetrics[dask] ({e}): pip install "cmetrics[dask]"') from e
    files = [str(Path(p) / "*.parquet") if Path(p).is_dir() else p for p in paths]
    t0 = time.perf_counter()
    if scheduler is not None:
        cluster = None
        client = distributed.Client(scheduler)
    else:
        cluster = distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=50
        )
        client = distributed.Client(cluster)
    started = time.perf_counter() - t0
    try:
        t1 = time.perf_counter()
        ev = evaluator_of(files, columns, settings, labels=labels, client=client)
        report = _report(ev, columns, curves)
        seconds = time.perf_counter() - t1
        n_workers = len(client.scheduler_info().get("workers", {}))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    run = _record(
        paths,
        "parquet",
        ev.n_rows,
        seconds,
        cluster_start_seconds=started,
        scheduler=scheduler or f"local, {workers} worker processes",
        workers=n_workers,
    )
    return report, _with_groups(run, columns, ev)

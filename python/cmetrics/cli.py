"""The ``cmetrics`` command line.

``cmetrics score PATH...`` streams evaluation dumps (Parquet files or directories, CSV,
JSON Lines, ``.npz`` / structured ``.npy``) batch by batch into a :class:`cmetrics.Evaluator`
and prints the report as a table, JSON or Markdown. Memory stays bounded by the batch size
(plus the ranking summary, see :mod:`cmetrics.streaming`). A progress bar with rows per second
and an ETA goes to the terminal; on a pipe or with ``--quiet`` only the report is written.
User errors give a one-line message and exit status 2, never a traceback.

``cmetrics demo`` writes a synthetic dump (10^7 rows, 10 classes, float32 probabilities by
default) as Parquet and scores it through ``cmetrics score``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click
import numpy as np

import cmetrics
from cmetrics._base.config import check_classes


def synthetic_dump(n_rows: int, n_classes: int, seed: int = 0, accuracy: float = 0.7) -> tuple[np.ndarray, np.ndarray]:
    """int32 truth and predictions of a plausible model: class ``c`` has prevalence
    proportional to ``1 / (c + 1)`` (class 0 the most frequent) and the model is right more
    often on frequent classes (per-class accuracy from ``accuracy + 0.15`` on class 0 down to
    ``accuracy - 0.25`` on the rarest); wrong predictions go to the other classes uniformly."""
    rng = np.random.default_rng(seed)
    k = max(n_classes, 1)
    prevalence = 1.0 / np.arange(1, k + 1)
    prevalence /= prevalence.sum()
    y = np.minimum(np.searchsorted(np.cumsum(prevalence), rng.random(n_rows)), k - 1).astype(np.int32)
    per_class = np.clip(accuracy + 0.15 - 0.4 * np.arange(k) / max(k - 1, 1), 0.05, 0.99)
    shift = rng.integers(1, max(n_classes, 2), n_rows, dtype=np.int32)
    wrong = (y + shift) % n_classes
    correct = rng.random(n_rows, dtype=np.float32) < per_class[y]
    return y, np.where(correct, y, wrong).astype(np.int32)


def synthetic_proba(y_pred: np.ndarray, n_classes: int, seed: int = 0, y_true: np.ndarray | None = None) -> np.ndarray:
    """float32 softmax probabilities whose top label is ``y_pred`` (more confident
    on some rows than others), rows summing to 1. With ``y_true`` the model is
    more confident where it is right, as a useful confidence function is."""
    rng = np.random.default_rng(seed + 1)
    n = len(y_pred)
    logits = rng.standard_normal((n, n_classes), dtype=np.float32)
    rows = np.arange(n)
    margin = rng.exponential(1.0, n).astype(np.float32)
    if y_true is not None:
        margin *= np.where(y_pred == y_true, np.float32(2.0), np.float32(0.6))
    else:
        margin *= np.float32(1.5)
    logits[rows, y_pred] = logits.max(axis=1) + margin
    logits -= logits[rows, y_pred][:, None]
    np.exp(logits, out=logits)
    logits /= logits.sum(axis=1, keepdims=True)
    return logits


def _table(report: cmetrics.Report, summary: str) -> str:
    """The report as rich tables rendered to text: the metrics of each family under a
    heading, then the per-class table (labels escaped, integers as integers)."""
    from rich.console import Console
    from rich.table import Table

    from cmetrics._results.report import number, printable

    console = Console(record=True, width=100, file=open(os.devnull, "w"), force_terminal=False)  # noqa: SIM115
    console.print(f"{number(report.n_samples)} samples, {report.n_classes} classes")
    for family, values in report.families():
        t = Table(title=family, title_justify="left", show_edge=False)
        t.add_column("metric")
        t.add_column("value", justify="right")
        for k, v in values.items():
            t.add_row(k, number(v))
        console.print()
        console.print(t)
    cols = ["precision", "recall", "f1", "support", "youden_j"] + (
        ["cprecision", "crecall", "cf1"] if report.has_proba else []
    )
    pc = Table(title="per class", title_justify="left", show_edge=False)
    pc.add_column("class", justify="right")
    for c in cols:
        pc.add_column(c, justify="right")
    for label, row in report.per_class.items():
        pc.add_row(printable(label), *[number(row[c]) for c in cols])
    console.print()
    console.print(pc)
    if report.undefined:
        console.print("\nundefined: " + "; ".join(f"{k}: {printable(v)}" for k, v in report.undefined.items()))
    return summary + "\n\n" + console.export_text()


def _labels_option(values: tuple[str, ...]) -> list[Any] | None:
    if not values:
        return None
    items = [v for part in values for v in part.split(",") if v != ""]
    try:
        return [int(v) for v in items]
    except ValueError:
        return items


class UserError(click.ClickException):
    """A one-line error, exit status 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        # One line, whatever the message holds (a library's text may span several).
        click.echo(f"cmetrics: error: {' '.join(self.format_message().split())}", err=True)


class BenchFailureError(UserError):
    """Some implementation disagreed with cmetrics or failed: exit status 1."""

    exit_code = 1


def score_files(
    paths: list[str],
    *,
    label: str,
    pred: str | None = None,
    proba: tuple[str, ...] = (),
    proba_prefix: str | None = None,
    proba_list: str | None = None,
    confidence: str | None = None,
    weight: str | None = None,
    labels: list[Any] | None = None,
    batch_rows: int = 1 << 20,
    ranking: str = "exact",
    ranking_bins: int = 1 << 16,
    n_bins: int = 15,
    max_classes: int | None = None,
    progress: bool = False,
    class_ranking: str = "approximate",
    group_by: tuple[str, ...] = (),
    max_groups: int | None = None,
    group_ranking_bins: int = 1 << 10,
) -> tuple[cmetrics.Report | cmetrics.GroupedReport, dict[str, Any]]:
    """Stream files into an Evaluator; the report (a :class:`cmetrics.GroupedReport` with
    ``group_by``) and a record of the run. Raises :class:`cmetrics._readers.InputError` and
    the package's ValidationErrors on bad input."""
    from cmetrics._readers import Columns, open_source
    from cmetrics.exceptions import InputError

    if sum(bool(x) for x in (proba, proba_prefix, proba_list)) > 1:
        raise InputError("pass one of --proba, --proba-prefix, --proba-list")
    if pred is None and not (proba or proba_prefix or proba_list):
        raise InputError(
            "nothing to score: pass --pred and/or the probabilities (--proba, --proba-prefix, --proba-list)"
        )
    cols = Columns(
        label=label,
        pred=pred,
        proba=list(proba),
        proba_prefix=proba_prefix,
        proba_list=proba_list,
        confidence=confidence,
        weight=weight,
        group_by=list(group_by),
    )
    t0 = time.perf_counter()
    src = open_source(paths, cols, batch_rows)
    if labels is None and cols.has_proba:
        labels = src.labels_from_names
    if labels is not None and src.proba_names and len(labels) != len(src.proba_names):
        raise InputError(
            f"--labels lists {len(labels)} classes but there are {len(src.proba_names)} probability "
            "columns; give one label per column"
        )
    if src.proba_names:  # before any row is read
        check_classes(len(src.proba_names), "the input's probability columns", max_classes)
    ev = cmetrics.Evaluator(
        labels=labels,
        n_bins=n_bins,
        ranking=ranking,  # type: ignore[arg-type]
        ranking_bins=ranking_bins,
        class_ranking=class_ranking,  # type: ignore[arg-type]
        max_classes=max_classes,
        group_by=bool(group_by),
        max_groups=max_groups,
        group_ranking_bins=group_ranking_bins,
    )
    rows = 0
    bar = _progress(src.total_rows) if progress else None
    try:
        for b in src.batches(reuse=True):
            if b.y_proba is not None and labels is not None and b.y_proba.shape[1] != len(labels):
                raise InputError(
                    f"the probability lists have {b.y_proba.shape[1]} entries but --labels lists {len(labels)} classes"
                )
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
    if rows == 0:
        raise InputError(f"{', '.join(paths)}: no rows to score")
    report = ev.grouped_report(names=list(group_by)) if group_by else ev.report()
    seconds = time.perf_counter() - t0
    run = {
        "files": list(paths),
        "format": src.format,
        "rows": rows,
        "seconds": seconds,
        "rows_per_second": rows / seconds if seconds > 0 else None,
        "batch_rows": batch_rows,
        "cmetrics": cmetrics.__version__,
        "backend": "rust" if cmetrics.rust_available() else "numpy",
        "threads": cmetrics.get_num_threads(),
    }
    if group_by:
        run["group_by"] = list(group_by)
        run["groups"] = len(ev.group_keys)
    return report, run


def score_on_dask(
    paths: list[str],
    *,
    scheduler: str | None,
    workers: int | None,
    proba: tuple[str, ...] = (),
    ranking: str = "exact",
    class_ranking: str = "approximate",
    group_by: tuple[str, ...] = (),
    **options: Any,
) -> tuple[cmetrics.Report | cmetrics.GroupedReport, dict[str, Any]]:
    """Parquet inputs scored by :func:`cmetrics.dask.evaluate` on a running scheduler
    (``scheduler``) or a local cluster of ``workers`` processes started for the run; the
    report and a record of the run (the cluster's start is timed apart)."""
    from cmetrics.exceptions import InputError

    if scheduler is not None and workers is not None:
        raise InputError("pass --scheduler or --workers, not both")
    not_parquet = [p for p in paths if not (Path(p).is_dir() or p.endswith((".parquet", ".parq", ".pq")))]
    if not_parquet:
        raise InputError(f"Dask reads Parquet files and directories only; not {', '.join(not_parquet)}")
    try:
        import importlib

        # Untyped: its calls are checked by the tests with a real cluster.
        distributed: Any = importlib.import_module("distributed")
        import cmetrics.dask as cdask
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
        ev = cdask.evaluator(
            files,
            proba=list(proba) or None,
            ranking=ranking,  # type: ignore[arg-type]
            class_ranking=class_ranking,  # type: ignore[arg-type]
            client=client,
            group_by=list(group_by) or None,
            **options,
        )
        report = ev.grouped_report(names=list(group_by)) if group_by else ev.report()
        seconds = time.perf_counter() - t1
        n_workers = len(client.scheduler_info().get("workers", {}))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    rows = ev.n_rows
    run = {
        "files": list(paths),
        "format": "parquet",
        "rows": rows,
        "seconds": seconds,
        "rows_per_second": rows / seconds if seconds > 0 else None,
        "cluster_start_seconds": started,
        "scheduler": scheduler or f"local, {workers} worker processes",
        "workers": n_workers,
        "cmetrics": cmetrics.__version__,
        "backend": "rust" if cmetrics.rust_available() else "numpy",
        "threads": cmetrics.get_num_threads(),
    }
    if group_by:
        run["group_by"] = list(group_by)
        run["groups"] = len(ev.group_keys)
    return report, run


def _progress(total: int | None) -> tuple[Any, Any]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    class Rate(TextColumn):
        def render(self, task: Any) -> Any:
            from rich.text import Text

            speed = task.finished_speed or task.speed
            return Text("" if speed is None else f"{speed / 1e6:,.1f} M rows/s")

    p = Progress(
        TextColumn("scoring"),
        BarColumn(),
        MofNCompleteColumn(),
        Rate(""),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        transient=True,
        console=__import__("rich.console").console.Console(stderr=True),
    )
    task = p.add_task("rows", total=total)
    p.start()
    return p, task


def _group_table(grouped: cmetrics.GroupedReport, metrics: list[str] | None) -> str:
    """The per-group summary as a rich table rendered to text: one row per group."""
    from rich.console import Console
    from rich.table import Table

    from cmetrics._results.report import number, printable

    rows = grouped.summary(metrics)
    cols = list(next(iter(rows.values()))) if rows else ["n_samples"]
    console = Console(record=True, width=160, file=open(os.devnull, "w"), force_terminal=False)  # noqa: SIM115
    t = Table(title=f"per group ({len(rows):,} groups)", title_justify="left", show_edge=False)
    t.add_column(printable(" / ".join(grouped.group_by)), justify="right")
    for c in cols:
        t.add_column(c, justify="right")
    for key, row in rows.items():
        t.add_row(key, *[number(row[c]) for c in cols])
    console.print(t)
    return console.export_text()


def _render(
    report: cmetrics.Report | cmetrics.GroupedReport,
    run: dict[str, Any],
    fmt: str,
    group_metrics: list[str] | None = None,
) -> str:
    if fmt == "json":
        return json.dumps({"run": run, **report.to_dict()}, indent=2, allow_nan=False) + "\n"
    if fmt == "markdown":
        head = f"Scored {run['rows']:,} rows of {', '.join(run['files'])} in {run['seconds']:.2f} s\n\n"
        if isinstance(report, cmetrics.GroupedReport):
            return head + report.to_markdown(group_metrics)
        return head + report.to_markdown()
    grouped = report if isinstance(report, cmetrics.GroupedReport) else None
    overall = report.overall if isinstance(report, cmetrics.GroupedReport) else report
    kind = "probabilistic + hard-label" if overall.has_proba else "hard-label"
    summary = (
        f"cmetrics {cmetrics.__version__}: {kind} report of {run['rows']:,} rows "
        f"({run['backend']} backend, {run['threads']} threads)"
    )
    text = _table(overall, summary)
    if grouped is not None:
        text += "\n" + _group_table(grouped, group_metrics)
    rate = run["rows"] / run["seconds"] / 1e6 if run["seconds"] else float("nan")
    return text + f"\nscored {', '.join(run['files'])} in {run['seconds']:.2f} s ({rate:,.1f} M rows/s)\n"


def _check_output(output: str | None, *, force: bool, inputs: tuple[str, ...]) -> None:
    """``--output`` is never an input file (nor a directory), and an existing regular file only
    with ``--force``: checked before any row is read. A device or pipe (``/dev/null``, a FIFO)
    is written to as it is."""
    if output is None:
        return
    target = Path(output)
    if target.is_dir():
        raise UserError(f"--output {output} is a directory; name a file")
    if not target.exists() or not target.is_file():
        return
    for p in inputs:
        if os.path.exists(p) and os.path.samefile(target, p):
            raise UserError(f"--output {output} is one of the input files; write the report elsewhere")
    if not force:
        raise UserError(f"--output {output} exists; pass --force to overwrite it")


def _write(text: str, output: str | None, *, force: bool = False, inputs: tuple[str, ...] = ()) -> None:
    """Print ``text``, or write it to ``output`` (checked as by :func:`_check_output`),
    atomically: a temporary file beside it, then a rename over it."""
    if output is None:
        click.echo(text, nl=False)
        return
    _check_output(output, force=force, inputs=inputs)
    target = Path(output)
    if target.exists() and not target.is_file():  # a device or a pipe: no rename over it
        try:
            with target.open("w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as e:
            raise UserError(f"cannot write {output}: {e.strerror or e}") from e
        return
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent or ".", prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # the mode a plain open() would give
        os.replace(tmp, target)
        tmp = None
    except OSError as e:
        raise UserError(f"cannot write {output}: {e.strerror or e}") from e
    finally:
        # Whatever stopped the write (a full disk, Ctrl-C), no temporary file is left behind.
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(cmetrics.__version__, prog_name="cmetrics")
def cli() -> None:
    """Classification metrics for large evaluation dumps."""


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--label", required=True, help="column of true labels")
@click.option("--pred", help="column of predicted labels (default: the top probability's class)")
@click.option("--proba", multiple=True, help="a probability column, once per class, in label order")
@click.option("--proba-prefix", help="every column starting with PREFIX is a probability column (p_0, p_1, ...)")
@click.option("--proba-list", help="one list column holding each row's probabilities")
@click.option("--confidence", help="column of confidences (with --pred and no probabilities)")
@click.option("--weight", help="column of sample weights")
@click.option("--labels", multiple=True, help="class labels of the probability columns (repeat or comma-separate)")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
@click.option(
    "--output", "-o", help="write the report to FILE instead of standard output (atomically; never an input file)"
)
@click.option("--force", is_flag=True, help="overwrite --output if it exists")
@click.option(
    "--batch-rows",
    type=click.IntRange(1),
    default=1 << 20,
    show_default=True,
    help="rows per batch (memory grows with it)",
)
@click.option(
    "--ranking",
    type=click.Choice(["exact", "approximate", "off"]),
    default="exact",
    show_default=True,
    help="ranking metrics: exact, binned in [0, 1] (fixed memory), or off",
)
@click.option("--ranking-bins", type=click.IntRange(1, 1 << 24), default=1 << 16, show_default=True)
@click.option(
    "--class-ranking",
    type=click.Choice(["approximate", "exact", "off"]),
    default="approximate",
    show_default=True,
    help="one-vs-rest AUROC / AP of the probability columns: binned (fixed memory), exact (a state per column), or off",
)
@click.option(
    "--bins", "n_bins", type=click.IntRange(1, 1 << 20), default=15, show_default=True, help="calibration bins"
)
@click.option("--threads", type=click.IntRange(0), default=0, help="kernel threads (0: all cores)")
@click.option(
    "--max-classes",
    type=click.IntRange(1),
    default=None,
    help="the most classes to count (default 4096; each costs a row and a column of K x K tables)",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    help="score Parquet inputs on a running Dask scheduler (tcp://host:port); needs cmetrics[dask]",
)
@click.option(
    "--workers",
    type=click.IntRange(1),
    default=None,
    help="score Parquet inputs on a local Dask cluster of N worker processes started for the run",
)
@click.option(
    "--group-by",
    "group_by",
    multiple=True,
    metavar="COL",
    help="also report each value of COL (repeat for value tuples): one pass, one report per group",
)
@click.option(
    "--group-metrics",
    multiple=True,
    metavar="M1,M2",
    help="the metrics of the per-group table (repeat or comma-separate; default: a standard set)",
)
@click.option(
    "--max-groups",
    type=click.IntRange(1, 1 << 16),
    default=None,
    help="the most distinct group values (default 10,000)",
)
@click.option(
    "--group-ranking-bins",
    type=click.IntRange(1, 1 << 24),
    default=1 << 10,
    show_default=True,
    help="bins of each group's approximate ranking states (all rows keep --ranking-bins)",
)
@click.option("--quiet", "-q", is_flag=True, help="no progress bar")
def score(
    paths: tuple[str, ...],
    label: str,
    pred: str | None,
    proba: tuple[str, ...],
    proba_prefix: str | None,
    proba_list: str | None,
    confidence: str | None,
    weight: str | None,
    labels: tuple[str, ...],
    fmt: str,
    output: str | None,
    force: bool,
    batch_rows: int,
    ranking: str,
    ranking_bins: int,
    class_ranking: str,
    n_bins: int,
    threads: int,
    max_classes: int | None,
    scheduler: str | None,
    workers: int | None,
    group_by: tuple[str, ...],
    group_metrics: tuple[str, ...],
    max_groups: int | None,
    group_ranking_bins: int,
    quiet: bool,
) -> None:
    """Score evaluation dumps: Parquet files or directories, CSV/TSV, JSON Lines, .npz or
    structured .npy."""
    show = not quiet and sys.stderr.isatty()
    _check_output(output, force=force, inputs=paths)
    try:
        if threads:
            cmetrics.set_num_threads(threads)
        # The options both paths read the same way.
        common: dict[str, Any] = {
            "label": label,
            "pred": pred,
            "proba": proba,
            "proba_prefix": proba_prefix,
            "confidence": confidence,
            "weight": weight,
            "labels": _labels_option(labels),
            "ranking": ranking,
            "ranking_bins": ranking_bins,
            "class_ranking": class_ranking,
            "n_bins": n_bins,
            "max_classes": max_classes,
            "group_by": group_by,
            "max_groups": max_groups,
            "group_ranking_bins": group_ranking_bins,
        }
        metrics = [m for part in group_metrics for m in part.split(",") if m] or None
        if metrics and not group_by:
            raise UserError("--group-metrics chooses the columns of the per-group table; pass --group-by too")
        if scheduler is not None or workers is not None:
            if proba_list is not None:
                raise UserError("--proba-list is not read on Dask; name the columns with --proba or --proba-prefix")
            report, run = score_on_dask(list(paths), scheduler=scheduler, workers=workers, **common)
        else:
            report, run = score_files(
                list(paths), proba_list=proba_list, batch_rows=batch_rows, progress=show, **common
            )
        text = _render(report, run, fmt, metrics)
    except (cmetrics.exceptions.ValidationError, TypeError) as e:
        raise UserError(str(e) or type(e).__name__) from e
    _write(text, output, force=force, inputs=paths)


def _set_threads(threads: int) -> None:
    """``--threads`` (0: leave the default), refused in one line past the limit."""
    if threads:
        try:
            cmetrics.set_num_threads(threads)
        except cmetrics.exceptions.ValidationError as e:
            raise UserError(str(e)) from e


def _available_memory() -> int | None:
    """The memory the machine can give without swapping (Linux's MemAvailable), or None
    where it cannot tell."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def write_demo(directory: Path, rows: int, classes: int, seed: int = 0, chunk_rows: int = 1 << 21) -> Path:
    """Write a synthetic dump as Parquet (``label``, ``p_0`` ... ``p_{K-1}`` float32), in
    chunks so that memory does not grow with ``rows``; returns the file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = directory / f"demo_{rows}x{classes}.parquet"
    schema = pa.schema([("label", pa.int32())] + [(f"p_{j}", pa.float32()) for j in range(classes)])
    with pq.ParquetWriter(path, schema, compression="snappy") as w:
        for i, lo in enumerate(range(0, rows, chunk_rows)):
            n = min(chunk_rows, rows - lo)
            y, p = synthetic_dump(n, classes, seed + 7919 * i)
            proba = synthetic_proba(p, classes, seed + 7919 * i, y_true=y)
            cols = [pa.array(y)] + [pa.array(np.ascontiguousarray(proba[:, j])) for j in range(classes)]
            w.write_table(pa.Table.from_arrays(cols, schema=schema), row_group_size=1 << 20)
    return path


@cli.command()
@click.option("--rows", type=click.IntRange(1), default=10_000_000, show_default=True)
@click.option("--classes", type=click.IntRange(2, 4096), default=10, show_default=True)
@click.option("--seed", type=int, default=0)
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False),
    help="write the Parquet file here and keep it (default: a temporary directory, removed afterwards)",
)
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
@click.option("--threads", type=click.IntRange(0), default=0, help="kernel threads (0: all cores)")
@click.option("--quiet", "-q", is_flag=True, help="no progress bar")
def demo(rows: int, classes: int, seed: int, directory: str | None, fmt: str, threads: int, quiet: bool) -> None:
    """Write a synthetic evaluation dump as Parquet and score it with `cmetrics score`."""
    _set_threads(threads)
    with tempfile.TemporaryDirectory(prefix="cmetrics-demo-") as tmp:
        where = Path(directory) if directory else Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        # The file is about as large as its float32 values: refuse before writing any of it.
        need, free = rows * (4 + 4 * classes), shutil.disk_usage(where).free
        if need > free:
            msg = (
                f"--rows {rows:,} writes about {need / 2**30:,.1f} GiB of Parquet, but {where} has "
                f"{free / 2**30:,.1f} GiB free; pass fewer rows or --dir on a larger disk"
            )
            raise UserError(msg)
        t0 = time.perf_counter()
        path = write_demo(where, rows, classes, seed)
        written = time.perf_counter() - t0
        size = path.stat().st_size / 2**20
        if fmt == "table":
            click.echo(
                f"wrote {rows:,} synthetic rows ({classes} classes, float32 probabilities) to {path} "
                f"({size:,.0f} MiB) in {written:.1f} s"
            )
            click.echo(f"$ cmetrics score {path} --label label --proba-prefix p_\n")
        report, run = score_files(
            [str(path)], label="label", proba_prefix="p_", progress=not quiet and sys.stderr.isatty()
        )
        click.echo(_render(report, run, fmt), nl=False)


@cli.command()
@click.option("--rows", type=click.IntRange(2), default=1_000_000, show_default=True, help="rows of the dump")
@click.option("--classes", type=click.IntRange(2, 1024), default=10, show_default=True)
@click.option(
    "--metrics",
    "metric_names",
    multiple=True,
    help="metrics to run (repeat or comma-separate; default all): "
    "confusion_matrix, hard_report, prob_confusion_matrix, log_loss, ece, auroc, kendall_tau, kendall_tau_distinct",
)
@click.option(
    "--repeat", type=click.IntRange(1, 1000), default=5, show_default=True, help="calls timed per implementation"
)
@click.option(
    "--python-rows",
    type=click.IntRange(2),
    default=100_000,
    show_default=True,
    help="the row cap of the plain-Python references (they run on the first rows only)",
)
@click.option("--quick", is_flag=True, help="a small run for CI: 20,000 rows, 2,000 in pure Python, one call each")
@click.option("--seed", type=click.IntRange(0), default=0, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
@click.option("--output", "-o", help="write the results to FILE instead of standard output")
@click.option("--force", is_flag=True, help="overwrite --output if it exists")
@click.option("--threads", type=click.IntRange(0), default=0, help="kernel threads (0: all cores)")
@click.option("--quiet", "-q", is_flag=True, help="no progress bar")
def bench(
    rows: int,
    classes: int,
    metric_names: tuple[str, ...],
    repeat: int,
    python_rows: int,
    quick: bool,
    seed: int,
    fmt: str,
    output: str | None,
    force: bool,
    threads: int,
    quiet: bool,
) -> None:
    """Time cmetrics against scikit-learn, scipy, polars-ds, scors, its numpy backend and
    plain Python on one synthetic dump, after checking that they all give the same values.
    Peers that are not installed are listed as skipped. Exit status 1 when some
    implementation disagrees or fails."""
    from cmetrics import _bench

    _check_output(output, force=force, inputs=())
    _set_threads(threads)
    if quick:
        rows, python_rows, repeat = 20_000, 2_000, 1
    need, available = _bench.memory_needed(rows, classes), _available_memory()
    if available is not None and need > available:
        msg = (
            f"--rows {rows:,} x --classes {classes} needs about {need / 2**30:,.1f} GiB of memory (the dump and the "
            f"peers' copies of it), but {available / 2**30:,.1f} GiB is available; pass fewer rows"
        )
        raise UserError(msg)
    names = [n.strip() for v in metric_names for n in v.split(",") if n.strip()]
    try:
        todo = _bench.plan(names)
    except ValueError as e:
        raise UserError(str(e)) from e
    with _bench.progress_bar(_bench.steps(todo), enabled=not quiet and sys.stderr.isatty()) as step:
        outcome = _bench.run(
            rows=rows, classes=classes, repeat=repeat, python_rows=python_rows, seed=seed, progress=step, chosen=todo
        )
    if fmt == "json":
        text = json.dumps(_bench.to_json(outcome), indent=2) + "\n"
    elif fmt == "markdown":
        text = _bench.to_markdown(outcome)
    else:
        text = _bench.to_table(outcome)
    _write(text, output, force=force)
    if outcome.failures:
        raise BenchFailureError(f"{len(outcome.failures)} implementation(s) disagree with cmetrics or failed")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``cmetrics`` script; returns the exit status."""
    try:
        cli.main(args=argv, prog_name="cmetrics", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("cmetrics: aborted", err=True)
        return 130
    except click.ClickException as e:
        if isinstance(e, UserError):
            e.show()
        else:
            click.echo(f"cmetrics: error: {e.format_message()}", err=True)
        return e.exit_code
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The click commands of ``cmetrics`` (``score``, ``demo``, ``bench``) and :func:`main`, which runs
them: each command checks its options, builds the columns and the settings once, and hands them
to :mod:`cmetrics.cli.scoring` or :mod:`cmetrics.cli.benchmark`; errors become one line."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import click

import cmetrics
from cmetrics._readers import Columns
from cmetrics.cli import benchmark
from cmetrics.cli.demo_data import write_demo
from cmetrics.cli.render import (
    BenchFailureError,
    UserError,
    available_memory,
    check_output,
    labels_option,
    render,
    require_figures,
    set_threads,
    steps_bar,
    write_output,
    write_plots,
)
from cmetrics.cli.scoring import score_files, score_on_dask
from cmetrics.streaming import EvaluationSettings
from cmetrics.uncertainty.resampling import add_intervals


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(cmetrics.__version__, prog_name="cmetrics")
def cli() -> None:
    """Classification metrics for large evaluation dumps."""


def _score_options(
    group_metrics: tuple[str, ...],
    group_by: tuple[str, ...],
    n_resamples: int | None,
    weight: str | None,
    plots_dir: str | None,
) -> list[str] | None:
    """The options of ``score`` that go together checked before any row is read; the metrics of
    the per-group table."""
    metrics = [m for part in group_metrics for m in part.split(",") if m] or None
    if metrics and not group_by:
        raise UserError("--group-metrics chooses the columns of the per-group table; pass --group-by too")
    if n_resamples is not None and weight is not None:
        raise UserError(
            "--bootstrap resamples the counts of unweighted rows; with --weight, bootstrap the rows in Python "
            "(cmetrics.bootstrap(..., sample_weight=...))"
        )
    if plots_dir is not None:
        require_figures("--plots")
    return metrics


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
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "markdown", "html"]),
    default="table",
    show_default=True,
    help="html: one self-contained page with the figures (they need cmetrics[plot]); use with --output",
)
@click.option(
    "--output", "-o", help="write the report to FILE instead of standard output (atomically; never an input file)"
)
@click.option(
    "--plots",
    "plots_dir",
    type=click.Path(file_okay=False),
    help="also write one file per figure into DIR (confusion matrix, reliability, curves); needs cmetrics[plot]",
)
@click.option(
    "--plot-format", type=click.Choice(["svg", "png"]), default="svg", show_default=True, help="of the --plots files"
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
@click.option(
    "--bootstrap",
    "n_resamples",
    type=click.IntRange(1, 1 << 20),
    default=None,
    metavar="N",
    help="also give intervals of the confusion-matrix metrics from N resamples of the counts (every group too)",
)
@click.option("--seed", type=click.IntRange(0, (1 << 64) - 1), default=0, show_default=True, help="of --bootstrap")
@click.option(
    "--confidence-level",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.95,
    show_default=True,
    help="of the --bootstrap intervals",
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
    plots_dir: str | None,
    plot_format: str,
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
    n_resamples: int | None,
    seed: int,
    confidence_level: float,
    quiet: bool,
) -> None:
    """Score evaluation dumps: Parquet files or directories, CSV/TSV, JSON Lines, .npz or
    structured .npy."""
    check_output(output, force=force, inputs=paths)
    metrics = _score_options(group_metrics, group_by, n_resamples, weight, plots_dir)
    set_threads(threads)
    try:
        columns = Columns(
            label=label,
            pred=pred,
            proba=proba,
            proba_prefix=proba_prefix,
            proba_list=proba_list,
            confidence=confidence,
            weight=weight,
            group_by=group_by,
        )
        settings = EvaluationSettings.make(
            n_bins=n_bins,
            ranking=ranking,  # type: ignore[arg-type]  # click.Choice checked it
            ranking_bins=ranking_bins,
            class_ranking=class_ranking,  # type: ignore[arg-type]
            max_classes=max_classes,
            max_groups=max_groups,
            group_ranking_bins=group_ranking_bins,
        )
        classes = labels_option(labels)
        curves = fmt == "html" or plots_dir is not None
        if scheduler is not None or workers is not None:
            scored = score_on_dask(
                list(paths), columns, settings, labels=classes, scheduler=scheduler, workers=workers, curves=curves
            )
        else:
            show = not quiet and sys.stderr.isatty()
            scored = score_files(
                list(paths), columns, settings, labels=classes, batch_rows=batch_rows, progress=show, curves=curves
            )
        if n_resamples is not None:
            add_intervals(scored[0], n_resamples, confidence_level, seed)
        text = render(*scored, fmt, metrics)
        if plots_dir is not None:
            write_plots(scored[0], Path(plots_dir), plot_format)
    except (cmetrics.exceptions.ValidationError, TypeError) as e:
        raise UserError(str(e) or type(e).__name__) from e
    write_output(text, output, force=force, inputs=paths)


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
    set_threads(threads)
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
        columns = Columns(label="label", proba_prefix="p_")
        # What `cmetrics score` does by default: the exact confidence ranking, the binned class ranking.
        settings = EvaluationSettings.make(ranking="exact", class_ranking="approximate")
        scored = score_files([str(path)], columns, settings, progress=not quiet and sys.stderr.isatty())
        click.echo(render(*scored, fmt), nl=False)


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
    check_output(output, force=force, inputs=())
    set_threads(threads)
    if quick:
        rows, python_rows, repeat = 20_000, 2_000, 1
    need, available = benchmark.memory_needed(rows, classes), available_memory()
    if available is not None and need > available:
        msg = (
            f"--rows {rows:,} x --classes {classes} needs about {need / 2**30:,.1f} GiB of memory (the dump and the "
            f"peers' copies of it), but {available / 2**30:,.1f} GiB is available; pass fewer rows"
        )
        raise UserError(msg)
    names = [n.strip() for v in metric_names for n in v.split(",") if n.strip()]
    try:
        todo = benchmark.plan(names)
    except ValueError as e:
        raise UserError(str(e)) from e
    with steps_bar(benchmark.steps(todo), enabled=not quiet and sys.stderr.isatty()) as step:
        outcome = benchmark.run(
            rows=rows, classes=classes, repeat=repeat, python_rows=python_rows, seed=seed, progress=step, chosen=todo
        )
    if fmt == "json":
        text = json.dumps(benchmark.to_json(outcome), indent=2) + "\n"
    elif fmt == "markdown":
        text = benchmark.to_markdown(outcome)
    else:
        text = benchmark.to_table(outcome)
    write_output(text, output, force=force)
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

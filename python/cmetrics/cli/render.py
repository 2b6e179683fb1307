"""What the command line shows and writes: the report as a table, JSON, Markdown or HTML, its figures, the
progress bar, the one-line errors (exit status 2), and ``--output`` written atomically."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

import cmetrics
from cmetrics._results.figures import require_matplotlib
from cmetrics._results.html import figures_of
from cmetrics._results.text import number, printable


def report_table(report: cmetrics.Report, summary: str) -> str:
    """The report as rich tables rendered to text: the metrics of each family under a
    heading, then the per-class table (labels escaped, integers as integers)."""
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
    if report.intervals is not None:
        iv = report.intervals
        p = iv.provenance
        title = f"{p.confidence_level:.0%} {p.method} intervals ({p.n_resamples:,} {p.scheme} resamples, seed {p.seed})"
        t = Table(
            title=title,
            title_justify="left",
            show_edge=False,
        )
        for c in ("metric", "estimate", "low", "high", "std. error", "undefined"):
            t.add_column(c, justify="left" if c == "metric" else "right")
        for k, m in iv.metrics.items():
            t.add_row(
                k, number(m.estimate), number(m.low), number(m.high), number(m.standard_error), str(m.n_undefined)
            )
        console.print()
        console.print(t)
    if report.undefined:
        console.print("\nundefined: " + "; ".join(f"{k}: {printable(v)}" for k, v in report.undefined.items()))
    return summary + "\n\n" + console.export_text()


def labels_option(values: tuple[str, ...]) -> list[Any] | None:
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


class _Rate(TextColumn):
    """The progress bar's rows per second."""

    def render(self, task: Any) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed / 1e6:,.1f} M rows/s")


def progress_bar(total: int | None) -> tuple[Progress, TaskID]:
    """A started progress bar of ``total`` rows on standard error (rows per second, ETA),
    and its task; advance it with ``bar.update(task, advance=rows)``, end it with ``stop()``."""
    p = Progress(
        TextColumn("scoring"),
        BarColumn(),
        MofNCompleteColumn(),
        _Rate(""),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        transient=True,
        console=Console(stderr=True),
    )
    task = p.add_task("rows", total=total)
    p.start()
    return p, task


def group_table(grouped: cmetrics.GroupedReport, metrics: list[str] | None) -> str:
    """The per-group summary as a rich table rendered to text: one row per group."""
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


def render(
    report: cmetrics.Report | cmetrics.GroupedReport,
    run: dict[str, Any],
    fmt: str,
    group_metrics: list[str] | None = None,
) -> str:
    if fmt == "json":
        return json.dumps({"run": run, **report.to_dict()}, indent=2, allow_nan=False) + "\n"
    if fmt == "html":
        title = f"cmetrics report of {', '.join(run['files'])}"
        if isinstance(report, cmetrics.GroupedReport):
            return report.to_html(title=title, metrics=group_metrics)
        return report.to_html(title=title)
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
    text = report_table(overall, summary)
    if grouped is not None:
        text += "\n" + group_table(grouped, group_metrics)
    rate = run["rows"] / run["seconds"] / 1e6 if run["seconds"] else float("nan")
    return text + f"\nscored {', '.join(run['files'])} in {run['seconds']:.2f} s ({rate:,.1f} M rows/s)\n"


def require_figures(option: str) -> None:
    """matplotlib importable, else a one-line error naming ``option`` and the extra to install."""
    try:
        require_matplotlib(option)
    except ImportError as e:
        raise UserError(f'{option} draws with matplotlib: pip install "cmetrics[plot]" ({e})') from None


def write_plots(report: cmetrics.Report | cmetrics.GroupedReport, directory: Path, fmt: str) -> list[Path]:
    """One file per figure of the (overall) report in ``directory`` (made if missing):
    ``confusion_matrix.svg``, ``reliability.svg``, ``roc.svg``, ... Returns the paths."""
    overall = report.overall if isinstance(report, cmetrics.GroupedReport) else report
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, _, draw in figures_of(overall):
        path = directory / f"{name}.{fmt}"
        draw().savefig(path, format=fmt, metadata={"Date": None} if fmt == "svg" else None, dpi=150)
        written.append(path)
    return written


def check_output(output: str | None, *, force: bool, inputs: tuple[str, ...]) -> None:
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


def write_output(text: str, output: str | None, *, force: bool = False, inputs: tuple[str, ...] = ()) -> None:
    """Print ``text``, or write it to ``output`` (checked as by :func:`check_output`),
    atomically: a temporary file beside it, then a rename over it."""
    if output is None:
        click.echo(text, nl=False)
        return
    check_output(output, force=force, inputs=inputs)
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


def set_threads(threads: int) -> None:
    """``--threads`` (0: leave the default), refused in one line past the limit."""
    if threads:
        try:
            cmetrics.set_num_threads(threads)
        except cmetrics.exceptions.ValidationError as e:
            raise UserError(str(e)) from e


def available_memory() -> int | None:
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


@contextmanager
def steps_bar(total: int, enabled: bool) -> Iterator[Callable[[str], None]]:
    """A rich progress bar on standard error advanced by each call (a no-op when disabled)."""
    if not enabled:
        yield lambda _what: None
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        transient=True,
    ) as bar:
        task = bar.add_task("bench", total=total)
        started = [False]

        def step(what: str) -> None:
            if started[0]:
                bar.advance(task)
            started[0] = True
            bar.update(task, description=what)

        yield step
        bar.update(task, completed=total)

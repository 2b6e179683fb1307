"""Exact evaluation of a Dask DataFrame or a set of Parquet files on a Dask cluster.

The row groups of the files are cut into runs of consecutive row groups of about
:data:`ROWS_PER_TASK` rows (a DataFrame: one run per partition), or into ``tasks=`` runs of
about equal rows; each task scores its run into one :class:`cmetrics.Evaluator` on the worker
that runs it. The runs, and the tree in which their states merge, follow from the data alone,
never from the cluster: the float sums associate the same way on any cluster, after any
worker failure, so the same data gives the same bits. The Evaluators travel as their byte
format (:meth:`cmetrics.Evaluator.to_bytes`, a few kilobytes for the counts plus the ranking
state) and are merged in a tree, a few at a time. The result is the :class:`cmetrics.Report`
a single process gives on the same rows: counts are identical, sums of weights agree to
rounding, and the ranking metrics are exact (the tie-group states merge exactly) unless
``ranking="approximate"`` is asked for.

Needs the optional ``dask[dataframe]`` and ``distributed`` packages
(``pip install "cmetrics[dask]"``); ``import cmetrics`` never imports them.

The computation runs on whatever Dask scheduler is active: a ``distributed.Client``
created before the call (or passed as ``client=``), else Dask's default for DataFrames.
"""

from __future__ import annotations

import contextlib
import glob
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from cmetrics._readers import Columns, group_columns
from cmetrics.exceptions import InputError
from cmetrics.streaming import EvaluationSettings, Evaluator, merge_all
from cmetrics.streaming.replicates import check_options
from cmetrics.uncertainty.resampling import check_count_bootstrap, engine_report

if TYPE_CHECKING:
    from cmetrics._base.aliases import Backend, RankingMode, ZeroDivision
    from cmetrics._results.grouped import GroupedReport
    from cmetrics._results.report import Report

__all__ = ["evaluate", "evaluator"]


def _require_dask() -> Any:
    try:
        import dask.dataframe as dd  # an optional dependency, imported where it is used
    except ImportError as e:  # pragma: no cover - exercised only without the extra
        msg = 'cmetrics.dask needs dask[dataframe] and distributed: pip install "cmetrics[dask]"'
        raise ImportError(msg) from e
    return dd


def _state(parts: list[Any], task: _Task, offsets: list[int] | None = None) -> bytes:
    """Partitions (pandas DataFrames) scored by one fresh Evaluator, as its bytes; with a
    bootstrap, ``offsets`` are the global indices of their first rows."""
    ev = task.evaluator()
    for i, part in enumerate(parts):
        _check_columns({str(c) for c in part.columns}, task.wanted, "a partition")

        def column(name: str | None, part: Any = part) -> np.ndarray | None:
            # A column of a pandas block may be a strided view: the kernels take contiguous rows.
            return None if name is None else np.ascontiguousarray(part[name].to_numpy())

        y_proba = np.asarray(part[task.proba].to_numpy()) if task.proba and len(part) else None
        task.add(ev, column, y_proba, len(part), None if offsets is None else offsets[i])
    return ev.to_bytes()


def _file_state(units: list[tuple[str, int, int]], task: _Task) -> bytes:
    """Row groups of Parquet files (``(path, row group, global index of its first row)``),
    read by the worker itself, scored by one fresh Evaluator, as its bytes."""
    ev = task.evaluator()
    for path, row_group, offset in units:
        f = _parquet(path)
        _check_columns(set(f.schema_arrow.names), task.wanted, path)
        if row_group >= f.num_row_groups:  # a file written without any row group
            continue
        with _readable(path):
            table = f.read_row_group(row_group, columns=task.wanted)

        def column(name: str | None, table: Any = table) -> np.ndarray | None:
            return None if name is None else np.asarray(table.column(name).to_numpy())

        y_proba = None
        if task.proba and table.num_rows:
            first = column(task.proba[0])
            assert first is not None
            y_proba = np.empty((table.num_rows, len(task.proba)), dtype=first.dtype, order="F")
            for j, name in enumerate(task.proba):
                y_proba[:, j] = column(name)
        task.add(ev, column, y_proba, table.num_rows, offset)
    return ev.to_bytes()


@dataclass(frozen=True)
class _Task:
    """What every task is handed: the columns (resolved on the client), the classes and the
    settings, built and checked once."""

    columns: Columns
    proba: list[str]
    wanted: list[str]
    labels: list[Any] | None
    settings: EvaluationSettings
    #: ``(replicates, seed, confidence level)`` of Evaluators that keep bootstrap replicates.
    bootstrap: tuple[int, int, float] | None = None

    def evaluator(self) -> Evaluator:
        n, seed, level = self.bootstrap or (None, 0, 0.95)
        return Evaluator.from_settings(
            self.settings,
            self.labels,
            group_by=bool(self.columns.group_by),
            bootstrap=n,
            seed=seed,
            confidence_level=level,
        )

    def add(
        self,
        ev: Evaluator,
        column: Callable[[str | None], np.ndarray | None],
        y_proba: np.ndarray | None,
        rows: int,
        offset: int | None,
    ) -> None:
        """One block's rows (its columns read by ``column``) added to ``ev``; ``offset``, the
        global index of its first row, keys the bootstrap's draws."""
        c = self.columns
        y = column(c.label)
        if not rows or y is None:
            return
        if y_proba is not None and y_proba.dtype.kind not in "fiu":
            msg = f"the probability columns hold {y_proba.dtype} values; they must be numbers"
            raise InputError(msg)
        groups = [column(g) for g in c.group_by]
        by: Any = (groups[0] if len(groups) == 1 else tuple(groups)) if groups else None
        ev.update(
            y,
            y_pred=column(c.pred),
            y_proba=y_proba,
            confidence=column(c.confidence),
            sample_weight=column(c.weight),
            groups=by,
            row_offset=offset if self.bootstrap is not None else None,
        )


#: Rows a task scores from Parquet files by default: runs of consecutive row groups close once
#: they hold this many rows.
ROWS_PER_TASK = 1 << 22


@contextlib.contextmanager
def _readable(path: str) -> Iterator[None]:
    """Reading ``path``: a file that is not Parquet, truncated or empty raises
    :class:`InputError` naming it, on the client and on a worker alike."""
    try:
        yield
    except (pa.ArrowException, OSError) as e:
        detail = " ".join(str(e).split())
        msg = f"{path}: not a readable Parquet file ({detail}); remove it or write it again"
        raise InputError(msg) from None


def _parquet(path: str) -> Any:
    """``pyarrow.parquet.ParquetFile(path)``, its metadata read (see :func:`_readable`)."""
    with _readable(path):
        f = pq.ParquetFile(path)
        f.metadata  # noqa: B018 (read now: a truncated footer fails here, not later)
    return f


def _runs(sizes: list[int], rows_per_run: int) -> list[range]:
    """Consecutive units in runs that close once they hold ``rows_per_run`` rows (the last
    one may hold fewer): cut by the data alone."""
    out: list[range] = []
    start, rows = 0, 0
    for i, size in enumerate(sizes):
        rows += size
        if rows >= rows_per_run:
            out.append(range(start, i + 1))
            start, rows = i + 1, 0
    if start < len(sizes):
        out.append(range(start, len(sizes)))
    return out


def _packed(sizes: list[int], tasks: int) -> list[range]:
    """Consecutive units in at most ``tasks`` runs of about equal rows."""
    total = sum(sizes)
    out: list[range] = []
    start, rows = 0, 0
    for i, size in enumerate(sizes):
        rows += size
        # Close the run once it holds its share of the rows (the last run takes the rest).
        if len(out) < tasks - 1 and rows * tasks >= total * (len(out) + 1):
            out.append(range(start, i + 1))
            start = i + 1
    if start < len(sizes):
        out.append(range(start, len(sizes)))
    return out


def _check_columns(present: set[str], wanted: Sequence[str | None], where: str) -> None:
    missing = [c for c in wanted if c is not None and c not in present]
    if missing:
        msg = f"{where} lacks the column(s) {', '.join(map(repr, missing))}; every partition needs them"
        raise InputError(msg)


def _parquet_files(paths: Sequence[str | Path]) -> list[str]:
    """The Parquet files named by paths, directories (their ``*.parquet`` files) and globs,
    sorted within each entry."""
    files: list[str] = []
    for p in map(str, paths):
        if Path(p).is_dir():
            found = sorted(str(f) for f in Path(p).iterdir() if f.suffix in (".parquet", ".parq", ".pq"))
        elif any(ch in p for ch in "*?["):
            found = sorted(glob.glob(p))
        else:
            found = [p] if Path(p).is_file() else []
        if not found:
            msg = f"{p}: no Parquet file there"
            raise InputError(msg)
        files += found
    return files


def _merge(states: Sequence[bytes]) -> bytes:
    """Several Evaluators' bytes merged into one's (:func:`cmetrics.merge_all`: a balanced tree,
    so each row of an exact ranking state is merged log2(k) times, not up to k - 1 times)."""
    return merge_all(states).to_bytes()


@overload
def evaluate(
    data: Any,
    *,
    label: str,
    pred: str | None = None,
    proba: Sequence[str] | None = None,
    proba_prefix: str | None = None,
    confidence: str | None = None,
    weight: str | None = None,
    labels: Sequence[Any] | None = None,
    n_bins: int = 15,
    zero_division: ZeroDivision = "warn",
    ranking: RankingMode | bool = "exact",
    ranking_bins: int = 1 << 16,
    top_k: int = 5,
    class_ranking: RankingMode | bool | None = None,
    max_classes: int | None = None,
    group_by: None = None,
    max_groups: int | None = None,
    group_ranking_bins: int = 1 << 10,
    split_every: int = 8,
    tasks: int | None = None,
    client: Any = None,
    bootstrap: int | None = None,
    confidence_level: float = 0.95,
    seed: int = 0,
    backend: Backend = "auto",
) -> Report: ...


@overload
def evaluate(
    data: Any,
    *,
    label: str,
    pred: str | None = None,
    proba: Sequence[str] | None = None,
    proba_prefix: str | None = None,
    confidence: str | None = None,
    weight: str | None = None,
    labels: Sequence[Any] | None = None,
    n_bins: int = 15,
    zero_division: ZeroDivision = "warn",
    ranking: RankingMode | bool = "exact",
    ranking_bins: int = 1 << 16,
    top_k: int = 5,
    class_ranking: RankingMode | bool | None = None,
    max_classes: int | None = None,
    group_by: str | Sequence[str],
    max_groups: int | None = None,
    group_ranking_bins: int = 1 << 10,
    split_every: int = 8,
    tasks: int | None = None,
    client: Any = None,
    bootstrap: int | None = None,
    confidence_level: float = 0.95,
    seed: int = 0,
    backend: Backend = "auto",
) -> GroupedReport: ...


def evaluate(
    data: Any,
    *,
    label: str,
    pred: str | None = None,
    proba: Sequence[str] | None = None,
    proba_prefix: str | None = None,
    confidence: str | None = None,
    weight: str | None = None,
    labels: Sequence[Any] | None = None,
    n_bins: int = 15,
    zero_division: ZeroDivision = "warn",
    ranking: RankingMode | bool = "exact",
    ranking_bins: int = 1 << 16,
    top_k: int = 5,
    class_ranking: RankingMode | bool | None = None,
    max_classes: int | None = None,
    group_by: str | Sequence[str] | None = None,
    max_groups: int | None = None,
    group_ranking_bins: int = 1 << 10,
    split_every: int = 8,
    tasks: int | None = None,
    client: Any = None,
    bootstrap: int | None = None,
    confidence_level: float = 0.95,
    seed: int = 0,
    backend: Backend = "auto",
) -> Report | GroupedReport:
    """The :class:`cmetrics.Report` of every row of ``data``, computed on Dask.

    Parameters
    ----------
    data : dask.dataframe.DataFrame, str, path or list of them
        A Dask DataFrame, or Parquet files: a path, a directory (its ``*.parquet`` files), a
        glob, or a list of them. Each row group of each file is one task, and the worker
        that runs it reads the named columns itself (the client reads only the first file's
        schema and every file's footer).
    label : str
        The column of true labels.
    pred : str, optional
        The column of predicted labels (with probabilities: default, the top column).
    proba : sequence of str, optional
        The probability columns, one per class, in the order of ``labels``.
    proba_prefix : str, optional
        Instead of ``proba``: every column whose name starts with the prefix, in column
        order (``p_0``, ``p_1``, ... give labels 0, 1, ...; ``p_cat`` gives "cat").
    confidence, weight : str, optional
        A column of confidences (with ``pred`` and no probabilities), of sample weights.
    labels : sequence, optional
        The classes of the probability columns (default: read off the names with
        ``proba_prefix``, else ``0 .. K-1``); with hard labels only, the classes to count
        (default: every label seen).
    n_bins, zero_division, ranking, ranking_bins, top_k, class_ranking, max_classes, backend
        As for :class:`cmetrics.Evaluator` (``ranking="exact"`` by default: exact ranking
        metrics, each partition's state holding up to one entry per distinct confidence).
    group_by : str or sequence of str, optional
        Grouping column(s): the result is then a :class:`cmetrics.GroupedReport`, with the
        report of every group value (or tuple of values), as :func:`cmetrics.evaluate` gives
        with ``groups``. Each partition keeps one state per group it holds; the states merge
        group by group.
    max_groups, group_ranking_bins
        As for :class:`cmetrics.Evaluator`.
    split_every : int
        Evaluators merged by one task of the reduction tree (at least 2).
    tasks : int, optional
        How many tasks score the rows: the row groups (or partitions) are split into this
        many runs of about equal rows, each scored into one Evaluator. Default: runs of
        consecutive row groups of about 2^22 rows (:data:`ROWS_PER_TASK`), one task per
        partition of a DataFrame. Either way the runs follow from the data, not from the
        cluster, so every cluster (and a run that lost a worker) gives the same bits.
    client : distributed.Client, optional
        The client to compute with (default: the active scheduler).
    bootstrap, confidence_level, seed
        As for :func:`cmetrics.evaluate`: intervals of the confusion-matrix metrics of the merged
        report (every group's too) from its counts alone, on the client, in milliseconds.

    Raises
    ------
    cmetrics.exceptions.ValidationError
        A missing column, a partition with another kind of labels than the others, bad
        values: the error raised on the worker, as a single process raises it.

    Examples
    --------
    >>> import pandas as pd, dask.dataframe as dd
    >>> df = pd.DataFrame({"y": [0, 1, 1, 0], "p_0": [0.9, 0.2, 0.4, 0.3], "p_1": [0.1, 0.8, 0.6, 0.7]})
    >>> report = evaluate(dd.from_pandas(df, npartitions=2), label="y", proba_prefix="p_")
    >>> report.accuracy, report.confusion_matrix.tolist()
    (0.75, [[1, 1], [0, 2]])
    """
    args = dict(locals())
    for name in ("bootstrap", "confidence_level", "seed"):
        del args[name]
    instead = "keep Poisson replicates of the rows: cmetrics.dask.evaluator(..., bootstrap=N).report().intervals"
    check_count_bootstrap(bootstrap, confidence_level, seed, weight is not None, instead)
    return engine_report(evaluator(**args), group_columns(group_by), bootstrap, confidence_level, seed)


def evaluator(
    data: Any,
    *,
    label: str,
    pred: str | None = None,
    proba: Sequence[str] | None = None,
    proba_prefix: str | None = None,
    confidence: str | None = None,
    weight: str | None = None,
    labels: Sequence[Any] | None = None,
    n_bins: int = 15,
    zero_division: ZeroDivision = "warn",
    ranking: RankingMode | bool = "exact",
    ranking_bins: int = 1 << 16,
    top_k: int = 5,
    class_ranking: RankingMode | bool | None = None,
    max_classes: int | None = None,
    group_by: str | Sequence[str] | None = None,
    max_groups: int | None = None,
    group_ranking_bins: int = 1 << 10,
    split_every: int = 8,
    tasks: int | None = None,
    client: Any = None,
    bootstrap: int | None = None,
    seed: int = 0,
    confidence_level: float = 0.95,
    backend: Backend = "auto",
) -> Evaluator:
    """The merged :class:`cmetrics.Evaluator` of every row of ``data``, computed on Dask:
    :func:`evaluate` without the final report (to merge further, keep as bytes, or read
    ``n_rows``). Arguments as for :func:`evaluate`, but for the bootstrap.

    ``bootstrap=N`` (with ``seed``, ``confidence_level``) is the Evaluator's option: every
    task keeps the Poisson replicate sums of its rows, each row's draws keyed by its global
    index (the row groups' sizes are read from the footers; a DataFrame's partitions are
    counted first, one read of the label column), and the merged Evaluator's report has the
    row-level intervals (cPrecision/cRecall/cF1, log loss and Brier with probabilities, the
    confusion-matrix metrics from the same draws), weights included: the intervals of an
    ``Evaluator(bootstrap=N, seed=seed)`` fed every row in one process, or of
    :func:`cmetrics.bootstrap`, on any partitioning (the same draws; the replicate sums
    associate in the merge tree's order, so they agree to rounding, and bit for bit between
    runs on the same data). Needs ``labels`` or probability columns
    (the replicate sums are laid out by class), and no ``group_by``.

    >>> import pandas as pd, dask.dataframe as dd
    >>> df = pd.DataFrame({"y": [0, 1, 1], "pred": [0, 1, 0], "w": [1.0, 2.0, 3.0]})
    >>> ev = evaluator(dd.from_pandas(df, npartitions=2), label="y", pred="pred", weight="w")
    >>> ev.n_rows, ev.report().accuracy
    (3, 0.5)
    >>> df = pd.DataFrame({"y": [0, 1, 1, 0] * 50, "p_0": [0.9, 0.2, 0.6, 0.3] * 50, "p_1": [0.1, 0.8, 0.4, 0.7] * 50})
    >>> ev = evaluator(dd.from_pandas(df, npartitions=3), label="y", proba_prefix="p_", bootstrap=200, seed=1)
    >>> iv = ev.report().intervals["log_loss"]
    >>> round(iv.estimate, 4), iv.low < iv.estimate < iv.high
    (0.6122, True)
    """
    columns = Columns(
        label=label,
        pred=pred,
        proba=() if proba is None else tuple(proba),
        proba_prefix=proba_prefix,
        confidence=confidence,
        weight=weight,
        group_by=tuple(group_columns(group_by)),
    )
    settings = EvaluationSettings.make(
        n_bins=n_bins,
        zero_division=zero_division,
        ranking=ranking,
        ranking_bins=ranking_bins,
        top_k=top_k,
        class_ranking=class_ranking,
        max_classes=max_classes,
        max_groups=max_groups,
        group_ranking_bins=group_ranking_bins,
        backend=backend,
    )
    return evaluator_of(
        data,
        columns,
        settings,
        labels=None if labels is None else list(labels),
        split_every=split_every,
        tasks=tasks,
        client=client,
        bootstrap=None if bootstrap is None else check_options(bootstrap, seed, confidence_level),
    )


def evaluator_of(
    data: Any,
    columns: Columns,
    settings: EvaluationSettings,
    *,
    labels: list[Any] | None = None,
    split_every: int = 8,
    tasks: int | None = None,
    client: Any = None,
    bootstrap: tuple[int, int, float] | None = None,
) -> Evaluator:
    """:func:`evaluator` of columns and settings built beforehand (what ``cmetrics score
    --workers`` passes on): the columns are found in ``data`` by :meth:`Columns.resolve`, the
    rule the command line's reader follows, and every task gets ``settings`` as they are
    (and ``bootstrap``: replicates, seed and level, checked)."""
    dd = _require_dask()
    if isinstance(split_every, bool) or not isinstance(split_every, int) or split_every < 2:
        msg = f"split_every must be an integer of at least 2, got {split_every!r}"
        raise InputError(msg)
    if tasks is not None and (isinstance(tasks, bool) or not isinstance(tasks, int) or tasks < 1):
        msg = f"tasks must be a positive integer or None, got {tasks!r}"
        raise InputError(msg)
    files: list[str] | None = None
    if isinstance(data, (str, Path)) or (isinstance(data, list) and all(isinstance(p, (str, Path)) for p in data)):
        files = _parquet_files([data] if isinstance(data, (str, Path)) else data)
        names = list(_parquet(files[0]).schema_arrow.names)
    elif isinstance(data, dd.DataFrame):
        names = [str(c) for c in data.columns]
    else:
        msg = f"data must be a dask DataFrame or Parquet path(s), got {type(data).__name__}"
        raise InputError(msg)
    found = columns.resolve(names, labels)
    classes = found.labels if found.labels is not None or not found.proba else list(range(len(found.proba)))
    task = _Task(columns, found.proba, found.needed, classes, settings, bootstrap)
    task.evaluator()  # the classes (and the bootstrap's options) are checked here, before any task runs
    states = _file_tasks(files, task, tasks) if files is not None else _frame_tasks(data, task, tasks, client)
    return merge_all(_computed(states, split_every, client))


def _file_tasks(files: list[str], task: _Task, tasks: int | None) -> list[Any]:
    """The row groups of ``files`` in runs (of about :data:`ROWS_PER_TASK` rows, or ``tasks``
    runs of about equal rows), one delayed task each: the worker that runs it reads them
    itself, into one Evaluator (fewer, larger states to merge)."""
    from dask.delayed import delayed  # an optional dependency: imported where it is used

    units, sizes, first_row = [], [], 0
    for path in files:
        meta = _parquet(path).metadata
        for g in range(max(meta.num_row_groups, 1)):
            units.append((path, g, first_row))
            sizes.append(meta.row_group(g).num_rows if g < meta.num_row_groups else 0)
            first_row += sizes[-1]
    runs = _runs(sizes, ROWS_PER_TASK) if tasks is None else _packed(sizes, tasks)
    return [delayed(_file_state)([units[i] for i in run], task) for run in runs]


def _frame_tasks(frame: Any, task: _Task, tasks: int | None, client: Any) -> list[Any]:
    """The partitions of ``frame``, one delayed task each (or ``tasks`` runs of them); with a
    bootstrap, the partitions counted first (the global index of each one's first row)."""
    from dask.delayed import delayed  # an optional dependency: imported where it is used

    parts = frame[task.wanted].to_delayed()
    runs = _runs([1] * len(parts), 1) if tasks is None else _packed([1] * len(parts), tasks)
    if task.bootstrap is None:
        return [delayed(_state)([parts[i] for i in run], task) for run in runs]
    counted = frame[task.columns.label].map_partitions(len)
    sizes = [int(x) for x in (counted.compute() if client is None else client.compute(counted).result())]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    return [delayed(_state)([parts[i] for i in run], task, [offsets[i] for i in run]) for run in runs]


def _computed(states: list[Any], split_every: int, client: Any) -> list[bytes]:
    """The delayed states merged in a tree of ``split_every`` children a node, computed;
    the states of the last level (the caller merges them, as Evaluators)."""
    from dask.base import compute  # an optional dependency: imported where it is used
    from dask.delayed import delayed  # (the same)

    while len(states) > split_every:
        states = [delayed(_merge)(states[i : i + split_every]) for i in range(0, len(states), split_every)]
    try:
        if client is not None:
            return list(client.gather(client.compute(states)))
        return list(compute(*states))  # type: ignore[no-untyped-call]  # dask's compute is untyped
    except KeyError as e:
        # Dask's own readers select the columns before our tasks see a partition: a partition
        # without one of them (files of different schemas) fails there, as a KeyError.
        msg = f"a partition lacks a column ({e}); every partition needs the same columns"
        raise InputError(msg) from e

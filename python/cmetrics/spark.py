"""Exact evaluation of a Spark DataFrame, with the keywords, defaults, errors and results of
:mod:`cmetrics.dask`.

Unweighted, ungrouped hard labels are counted by Spark itself (``groupBy(label, pred).count()``:
the rows never leave the JVM) and the cells go to :meth:`cmetrics.Evaluator.update_counts`.
Otherwise each partition's Arrow batches go through ``DataFrame.mapInArrow`` into one
:class:`cmetrics.Evaluator`, which yields its state bytes; the states are merged in a tree of
``split_every`` children a node on the executors (``coalesce`` then ``mapInArrow`` again: no
RDD, so it runs on Spark Connect too), the last merge on the driver with
:func:`cmetrics.merge_all`. Before anything is collected the merged states' size is checked
against ``max_state_bytes``: an exact ranking state grows with the distinct scores, and the
error says to use the approximate modes instead. Columns and their types are checked on the
driver; an error raised on an executor reaches the caller as the package's own exception class,
as it does on Dask.

Needs ``pyspark[sql]`` (``pip install "cmetrics[spark]"``) and Java; ``import cmetrics`` never
imports them.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from cmetrics import exceptions
from cmetrics._readers import Columns, arrow_batch, check_arrow_schema, group_columns
from cmetrics.exceptions import InputError, LimitExceededError
from cmetrics.streaming import EvaluationSettings, Evaluator, merge_all
from cmetrics.uncertainty.resampling import check_count_bootstrap, engine_report

if TYPE_CHECKING:
    from cmetrics._base.aliases import Backend, RankingMode, ZeroDivision
    from cmetrics._results.grouped import GroupedReport
    from cmetrics._results.report import Report

__all__ = ["MAX_STATE_BYTES", "evaluate", "evaluator"]

#: The most bytes of merged Evaluator states collected to the driver by default.
MAX_STATE_BYTES = 1 << 30
_STATE = "state binary"


@dataclass(frozen=True)
class _Task:
    """What every partition is handed: the columns (resolved on the driver), the classes and
    the settings."""

    columns: Columns
    proba: list[str]
    labels: list[Any] | None
    settings: EvaluationSettings

    def evaluator(self) -> Evaluator:
        return Evaluator.from_settings(self.settings, self.labels, group_by=bool(self.columns.group_by))


#: Rows a partition gathers from Spark's Arrow batches (10,000 rows each by default) before it
#: hands them to its Evaluator: one update per million rows, not one per ten thousand.
GATHER_ROWS = 1 << 20


def _partition_state(task: _Task, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """One partition's rows scored by one Evaluator: its state bytes, one row."""
    ev = task.evaluator()

    def add(pending: list[pa.RecordBatch]) -> None:
        b = arrow_batch(pa.Table.from_batches(pending), task.columns, task.proba)
        groups: Any = None if b.groups is None else b.groups[0] if len(b.groups) == 1 else b.groups
        ev.update(
            b.y_true, y_pred=b.y_pred, y_proba=b.y_proba, confidence=b.confidence, sample_weight=b.weight, groups=groups
        )

    pending: list[pa.RecordBatch] = []
    rows = 0
    for rb in batches:
        if rb.num_rows:
            pending.append(rb)
            rows += rb.num_rows
        if rows >= GATHER_ROWS:
            add(pending)
            pending, rows = [], 0
    if pending:
        add(pending)
    yield pa.RecordBatch.from_arrays([pa.array([ev.to_bytes()], pa.binary())], names=["state"])


def _merged_states(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The states of one partition of the tree merged into one (in their order)."""
    blobs = [s for rb in batches for s in rb.column(0).to_pylist()]
    if blobs:
        yield pa.RecordBatch.from_arrays([pa.array([merge_all(blobs).to_bytes()], pa.binary())], names=["state"])


#: The last exception line of a Python traceback that Spark wraps: the package's class and message.
_RAISED = re.compile(r"cmetrics\.exceptions\.(\w+): (.*)")


@contextlib.contextmanager
def _own_errors() -> Iterator[None]:
    """An error raised on an executor, which Spark wraps in its own exception, re-raised as the
    package's exception class with its message."""
    try:
        yield
    except Exception as e:
        if type(e).__module__.startswith("cmetrics"):
            raise
        found = _RAISED.findall(str(e))
        cls = getattr(exceptions, found[-1][0], None) if found else None
        if isinstance(cls, type) and issubclass(cls, Exception):
            raise cls(found[-1][1]) from None
        raise


def evaluator(
    df: Any,
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
    max_state_bytes: int = MAX_STATE_BYTES,
    backend: Backend = "auto",
) -> Evaluator:
    """The merged :class:`cmetrics.Evaluator` of every row of the Spark DataFrame ``df``
    (arguments as for :func:`cmetrics.dask.evaluator`; ``max_state_bytes``: the most bytes of
    merged states collected to the driver, else :class:`~cmetrics.exceptions.LimitExceededError`
    before any is)."""
    _check_sizes(split_every, max_state_bytes)
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
    found = columns.resolve([str(c) for c in df.columns], None if labels is None else list(labels))
    frame = df.select(*found.needed)
    schema = _arrow_schema(frame.schema)
    check_arrow_schema(schema, columns, found.proba)
    classes = found.labels if found.labels is not None or not found.proba else list(range(len(found.proba)))
    task = _Task(columns, found.proba, classes, settings)
    task.evaluator()  # the classes are checked here, before any task runs
    if _cells_will_do(columns, found.proba, schema):
        return _counted(frame, task)
    with _own_errors():
        blobs = _tree(frame.mapInArrow(functools.partial(_partition_state, task), _STATE), split_every, max_state_bytes)
    return merge_all(blobs)


def _cells_will_do(columns: Columns, proba: list[str], schema: Any) -> bool:
    """Whether Spark's own aggregate is all it takes: unweighted, ungrouped hard labels of
    integer or text columns (nothing read per row but the two labels)."""
    plain = not proba and columns.proba_list is None and columns.confidence is None and columns.weight is None
    if not plain or columns.group_by or columns.pred is None:
        return False
    kinds = [schema.field(c).type for c in (columns.label, columns.pred)]
    return all(pa.types.is_integer(k) or pa.types.is_string(k) or pa.types.is_large_string(k) for k in kinds)


def _counted(frame: Any, task: _Task) -> Evaluator:
    """The Evaluator of unweighted hard labels from Spark's ``groupBy(label, pred).count()``
    (the rows never leave the JVM): the cells and their counts, added by
    :meth:`Evaluator.update_counts`."""
    c = task.columns
    assert c.pred is not None  # _cells_will_do
    with _own_errors():
        cells = frame.groupBy(c.label, c.pred).count().collect()
    for i, name in ((0, c.label), (1, c.pred)):
        missing = sum(int(r[2]) for r in cells if r[i] is None)
        if missing:
            msg = f"column {name!r} has {missing} missing values; drop or fill them first"
            raise InputError(msg)
    ev = task.evaluator()
    if cells:
        ev.update_counts([r[0] for r in cells], [r[1] for r in cells], np.array([int(r[2]) for r in cells]))
    return ev


def _tree(states: Any, split_every: int, max_state_bytes: int) -> list[bytes]:
    """The partitions' states merged on the executors until at most ``split_every`` are left;
    their bytes, after the size check."""
    from pyspark.sql import functions as sf  # an optional dependency (the spark extra), imported where it is used

    states = states.cache()
    cached = [states]
    try:
        n = states.count()
        while n > split_every:
            n = math.ceil(n / split_every)
            states = states.coalesce(n).mapInArrow(_merged_states, _STATE).cache()
            cached.append(states)
        size = states.select(sf.sum(sf.length("state"))).first()[0] or 0
        if size > max_state_bytes:
            msg = (
                f"the merged states hold {size / 2**20:,.1f} MiB, more than max_state_bytes={max_state_bytes:,}: the "
                "exact ranking states grow with the distinct scores; use ranking='approximate' and "
                "class_ranking='approximate' (fixed-size states), or raise max_state_bytes"
            )
            raise LimitExceededError(msg)
        return [bytes(r.state) for r in states.collect()]
    finally:
        for s in cached:
            s.unpersist()


def _arrow_schema(schema: Any) -> Any:
    """A Spark schema as Arrow's (its column types checked as every reader checks them)."""
    from pyspark.sql.pandas.types import to_arrow_schema  # (the same)

    try:
        return to_arrow_schema(schema)
    except (TypeError, ValueError) as e:
        msg = f"a column has a type cmetrics cannot read ({e}); cast it to a number or a string"
        raise InputError(msg) from None


def _check_sizes(split_every: object, max_state_bytes: object) -> None:
    if isinstance(split_every, bool) or not isinstance(split_every, int) or split_every < 2:
        msg = f"split_every must be an integer of at least 2, got {split_every!r}"
        raise InputError(msg)
    if isinstance(max_state_bytes, bool) or not isinstance(max_state_bytes, int) or max_state_bytes < 1:
        msg = f"max_state_bytes must be a positive integer, got {max_state_bytes!r}"
        raise InputError(msg)


def evaluate(
    df: Any,
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
    max_state_bytes: int = MAX_STATE_BYTES,
    bootstrap: int | None = None,
    confidence_level: float = 0.95,
    seed: int = 0,
    backend: Backend = "auto",
) -> Report | GroupedReport:
    """The :class:`cmetrics.Report` of every row of the Spark DataFrame ``df`` (a
    :class:`cmetrics.GroupedReport` with ``group_by``): what :func:`cmetrics.dask.evaluate`
    gives on the same rows, ``bootstrap`` included (intervals of the merged counts)."""
    args = dict(locals())
    for name in ("bootstrap", "confidence_level", "seed"):
        del args[name]
    check_count_bootstrap(bootstrap, confidence_level, seed, weight is not None, "bootstrap the rows in memory")
    return engine_report(evaluator(**args), group_columns(group_by), bootstrap, confidence_level, seed)

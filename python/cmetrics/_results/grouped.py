"""The report of every group: :class:`GroupedReport`, the group values as JSON and text, and
their order."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from cmetrics._results import html
from cmetrics._results.report import Report
from cmetrics._results.text import md, number, printable
from cmetrics.exceptions import ValidationError

#: A group value: an integer or a string, or a tuple of them (grouping by several columns).
GroupKey: TypeAlias = int | str | tuple[int | str, ...]


def key_json(key: GroupKey) -> int | str | list[int | str]:
    """A group value as JSON (tuples become lists)."""
    return list(key) if isinstance(key, tuple) else key


def key_text(key: GroupKey) -> str:
    """A group value as text for a table (tuples joined by " / ")."""
    if isinstance(key, tuple):
        return " / ".join(printable(k) for k in key)
    return printable(key)


def sort_keys(keys: Sequence[GroupKey]) -> list[GroupKey]:
    """Group values in report order: integers as integers, strings by code point."""
    return sorted(keys)  # one kind per position, checked on entry


#: Summary columns computed for every group at once: metric names in, one value per group
#: (in the groups' order) out, for the names it can compute.
Columns: TypeAlias = Callable[[Sequence[str]], dict[str, npt.NDArray[np.float64]]]


class LazyReports(Mapping[GroupKey, Report]):
    """The groups' reports by group value, in the given (sorted) order, each made by
    ``make(i)`` the first time it is read and kept."""

    def __init__(self, keys: Sequence[GroupKey], make: Callable[[int], Report]) -> None:
        self._keys = list(keys)
        self._make = make
        self._at: dict[GroupKey, int] | None = None
        self._made: dict[int, Report] = {}

    def position(self, key: GroupKey) -> int:
        if self._at is None:
            self._at = {k: i for i, k in enumerate(self._keys)}
        return self._at[key]

    def __getitem__(self, key: GroupKey) -> Report:
        i = self.position(key)
        if i not in self._made:
            self._made[i] = self._make(i)
        return self._made[i]

    def __iter__(self) -> Iterator[GroupKey]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        try:
            self.position(key)  # type: ignore[arg-type]  # any hashable may be asked for
        except (KeyError, TypeError):
            return False
        return True


#: Metrics where a lower value is better (the worst group has the highest).
LOWER_IS_BETTER = frozenset(
    {
        "log_loss",
        "brier_score",
        "expected_calibration_error",
        "max_calibration_error",
        "aurc",
        "reversed_pair_proportion",
    }
)

#: The summary columns when none are chosen: what the report holds of these.
DEFAULT_SUMMARY = (
    "accuracy",
    "f1_macro",
    "matthews_corrcoef",
    "log_loss",
    "brier_score",
    "expected_calibration_error",
    "roc_auc_ovr",
    "auroc_confidence",
)


class GroupedReport:
    """The report of every group, and of all rows together.

    ``grouped.overall`` is the :class:`cmetrics.Report` of all rows (what :func:`cmetrics.evaluate`
    gives without ``groups``); ``grouped[key]`` the report of one group's rows (what
    :func:`cmetrics.evaluate` gives on those rows alone), for each group value ``key`` (a tuple
    when grouping by several columns). Iterating gives the group values in sorted order.

    Examples
    --------
    >>> import cmetrics
    >>> g = cmetrics.evaluate([0, 1, 1, 0], y_pred=[0, 1, 0, 0], groups=["en", "en", "fr", "fr"])
    >>> g.overall.accuracy, g["en"].accuracy, g["fr"].accuracy
    (0.75, 1.0, 0.5)
    >>> g.summary(["accuracy"])
    {'en': {'n_samples': 2.0, 'accuracy': 1.0}, 'fr': {'n_samples': 2.0, 'accuracy': 0.5}}
    """

    def __init__(
        self,
        overall: Report,
        groups: Mapping[GroupKey, Report],
        group_by: Sequence[str] = ("groups",),
        *,
        columns: Columns | None = None,
    ) -> None:
        #: The report of all rows.
        self.overall = overall
        #: The report of each group, by group value, in sorted order (made when first read
        #: for groups of hard labels, whose summary comes from their tables at once).
        self.groups: Mapping[GroupKey, Report] = (
            groups if isinstance(groups, LazyReports) else {k: groups[k] for k in sort_keys(list(groups))}
        )
        self._columns = columns
        #: The names of the grouping columns.
        self.group_by: tuple[str, ...] = tuple(group_by)

    def __getitem__(self, key: GroupKey) -> Report:
        try:
            return self.groups[key]
        except KeyError:
            shown = [key_text(k) for k in list(self.groups)[:10]]
            msg = f"no group {key!r}; the groups are {shown}{' ...' if len(self.groups) > 10 else ''}"
            raise KeyError(msg) from None

    def __len__(self) -> int:
        return len(self.groups)

    def __iter__(self) -> Iterator[GroupKey]:
        return iter(self.groups)

    def __contains__(self, key: object) -> bool:
        return key in self.groups

    def summary(self, metrics: Sequence[str] | None = None) -> dict[str, dict[str, float]]:
        """One row per group (by its value as text): ``n_samples`` and the chosen metrics
        (default: those of :data:`DEFAULT_SUMMARY` the reports hold). Unknown metric names
        raise :class:`~cmetrics.exceptions.ValidationError` listing the available ones."""
        columns = self.summary_columns(metrics)
        texts = [key_text(k) for k in self.groups]
        if len(set(texts)) < len(texts):  # tuples whose parts hold " / ": their reprs differ
            texts = [printable(repr(k)) for k in self.groups]
        lists = {name: values.tolist() for name, values in columns.items()}
        return {text: {name: lists[name][i] for name in lists} for i, text in enumerate(texts)}

    def summary_columns(self, metrics: Sequence[str] | None = None) -> dict[str, npt.NDArray[np.float64]]:
        """:meth:`summary` as columns: ``n_samples`` and each chosen metric, one float64 value
        per group in the groups' order (NaN where undefined). The metrics of a confusion matrix
        of hard-label groups are computed for all groups at once from their tables (equal to
        each group's report to rounding); the others are read from the groups' reports."""
        available = self.overall.metrics
        if metrics is None:
            chosen = [m for m in DEFAULT_SUMMARY if m in available]
        else:
            chosen = list(metrics)
            unknown = [m for m in chosen if m not in available and m != "n_samples"]
            if unknown:
                msg = f"no metric {unknown[0]!r} in these reports; choose from {sorted(available)}"
                raise ValidationError(msg)
        names = list(dict.fromkeys(["n_samples", *chosen]))
        out = {} if self._columns is None else self._columns(names)
        rest = [name for name in names if name not in out]
        if rest:
            reports = list(self.groups.values())
            for name in rest:
                if name == "n_samples":
                    values = [float(rep.n_samples) for rep in reports]
                else:
                    values = [rep.metrics.get(name, math.nan) for rep in reports]
                out[name] = np.array(values, dtype=np.float64)
        return {name: out[name] for name in names}

    def to_arrow(self, metrics: Sequence[str] | None = None) -> Any:
        """:meth:`summary` as a ``pyarrow.Table``: one column per grouping column (named as
        ``group_by``; the parts of tuple values apart, each of its own type), ``n_samples``, then
        one float column per metric (NaN where undefined). Hand it to polars
        (``pl.from_arrow``), DuckDB or a Parquet writer.

        >>> import cmetrics
        >>> g = cmetrics.evaluate([0, 1, 1, 0], y_pred=[0, 1, 0, 0], groups=["en", "en", "fr", "fr"])
        >>> g.to_arrow(["accuracy"]).to_pydict()
        {'groups': ['en', 'fr'], 'n_samples': [2.0, 2.0], 'accuracy': [1.0, 0.5]}
        """
        import pyarrow as pa  # the columnar summary only: import cmetrics does not load Arrow

        columns = self.summary_columns(metrics)
        keys = list(self.groups)
        names = list(self.group_by)
        table: dict[str, Any]
        if len(names) == 1 and not any(isinstance(k, tuple) for k in keys):
            table = {names[0]: keys}  # one grouping column: its values as they are
        else:
            parts = [list(k) if isinstance(k, tuple) else [k] for k in keys]
            if any(len(p) != len(names) for p in parts):  # values of another width than the names
                names = [f"group_{i}" for i in range(max((len(p) for p in parts), default=1))]
            table = {name: [p[i] for p in parts] for i, name in enumerate(names)}
        for col, values in columns.items():
            table[col] = pa.array(values, pa.float64())
        return pa.table(table)

    def to_pandas(self, metrics: Sequence[str] | None = None) -> Any:
        """:meth:`to_arrow` as a pandas DataFrame (pandas must be installed)."""
        return self.to_arrow(metrics).to_pandas()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict: the overall report's fields, ``group_by`` (the column names)
        and ``groups``, a list of ``{"group": value, "report": {...}}`` in sorted order."""
        out = self.overall.to_dict()
        out["group_by"] = list(self.group_by)
        out["groups"] = [{"group": key_json(k), "report": r.to_dict()} for k, r in self.groups.items()]
        return out

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`to_dict` as JSON text (``kwargs`` go to :func:`json.dumps`)."""
        kwargs.setdefault("indent", 2)
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    def summary_markdown(self, metrics: Sequence[str] | None = None) -> str:
        """:meth:`summary` as a Markdown table."""
        rows = self.summary(metrics)
        cols = list(next(iter(rows.values()))) if rows else ["n_samples"]
        head = " / ".join(self.group_by)
        lines = [f"| {md(head)} | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
        lines += [f"| {md(k)} | " + " | ".join(number(v[c]) for c in cols) + " |" for k, v in rows.items()]
        return "\n".join(lines) + "\n"

    def to_markdown(self, metrics: Sequence[str] | None = None) -> str:
        """The overall report, the per-group summary table, then every group's full report."""
        by = " / ".join(self.group_by)
        parts = ["## All rows", "", self.overall.to_markdown(), f"## Per group ({md(by)})", ""]
        parts.append(self.summary_markdown(metrics))
        for key, rep in self.groups.items():
            parts += [f"## {md(by)} = {md(key_text(key))}", "", rep.to_markdown()]
        return "\n".join(parts)

    def to_html(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        plots: bool = True,
        title: str | None = None,
        worst_by: str = "accuracy",
        metrics: Sequence[str] | None = None,
    ) -> str:
        """The overall report's page (:meth:`Report.to_html`) with the per-group table sorted
        worst group first for ``worst_by`` (lower first, or higher first for the metrics where
        lower is better: log loss, Brier, calibration errors, AURC, RPP), the weak segments
        highlighted; ``metrics`` chooses the columns (as :meth:`summary`).

        >>> import cmetrics
        >>> g = cmetrics.evaluate([0, 1, 1, 0], y_pred=[0, 1, 0, 0], groups=["en", "en", "fr", "fr"])
        >>> page = g.to_html(plots=False)
        >>> page.index("<td>fr</td>") < page.index("<td>en</td>")
        True
        """
        if worst_by not in self.overall.metrics:
            msg = f"worst_by={worst_by!r} is not a metric of these reports; choose from {sorted(self.overall.metrics)}"
            raise ValidationError(msg)
        chosen = None if metrics is None else list(dict.fromkeys([*metrics, worst_by]))
        rows = self.summary(chosen)
        extra = html.group_table(rows, " / ".join(self.group_by), worst_by, worst_by in LOWER_IS_BETTER)
        page = html.report_page(self.overall, plots=plots, title=title, extra=extra)
        if path is not None:
            Path(path).write_text(page, encoding="utf-8")
        return page

    def _repr_html_(self) -> str:
        """The notebook view: the overall report and the per-group summary (worst accuracy first)."""
        metric = "accuracy" if "accuracy" in self.overall.metrics else next(iter(self.overall.metrics), "n_samples")
        groups = html.group_table(self.summary(), " / ".join(self.group_by), metric, metric in LOWER_IS_BETTER)
        return html.notebook_html(self.overall) + groups

    def __repr__(self) -> str:
        return f"GroupedReport({len(self.groups):,} groups by {', '.join(self.group_by)}; overall {self.overall!r})"

"""``cmetrics bench``: cmetrics against the implementations a user would otherwise run, on the
same synthetic evaluation dump, in one process.

Every metric has a list of implementations: cmetrics (the Rust core), its numpy backend, the
scikit-learn / scipy function, the Rust-backed peers when installed (polars-ds, scors), and
the plain-Python reference of :mod:`cmetrics.reference` on the first ``python_rows`` rows
only. Before any timing counts, each implementation's value is compared with cmetrics' on the
same rows; a disagreement beyond the metric's tolerance is a failure of the run. Times are
medians of ``repeat`` calls; peak memory is the resident set sampled during the first call,
above its level just before (so it sees Rust and numpy allocations alike; Linux only).
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

import cmetrics
from cmetrics import reference
from cmetrics.cli.demo_data import synthetic_dump, synthetic_proba

#: Values one implementation returns: an array, a number or named numbers.
Value = Any


def memory_needed(rows: int, classes: int) -> int:
    """Bytes a run over ``rows`` x ``classes`` may hold at its peak, measured: about 64 per
    probability (the float32 dump, the peers' float64 and one-hot copies) and 256 per row."""
    return rows * (64 * classes + 256)


@dataclass
class Data:
    """The benchmark's evaluation dump: truth, hard predictions, float32 probabilities of a
    plausible model (see :func:`cmetrics.cli.synthetic_dump`), the correctness and confidence
    of its top label, and two pairs of float64 vectors for Kendall's tau: continuous ``x``
    against ``y`` with 1,001 distinct values, and against a continuous ``y`` without ties."""

    rows: int
    classes: int
    seed: int
    y_true: np.ndarray = field(init=False)
    y_pred: np.ndarray = field(init=False)
    proba: np.ndarray = field(init=False)
    correct: np.ndarray = field(init=False)
    confidence: np.ndarray = field(init=False)
    x: np.ndarray = field(init=False)
    y_tied: np.ndarray = field(init=False)
    y_distinct: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.y_true, self.y_pred = synthetic_dump(self.rows, self.classes, self.seed)
        self.proba = synthetic_proba(self.y_pred, self.classes, self.seed, y_true=self.y_true)
        self.correct = self.y_pred == self.y_true
        self.confidence = self.proba.max(axis=1)
        rng = np.random.default_rng(self.seed + 2)
        self.x = rng.standard_normal(self.rows)
        noise = rng.standard_normal(self.rows)
        self.y_distinct = self.x + noise
        self.y_tied = np.round(np.clip(self.y_distinct, -5.0, 5.0) * 100.0)

    @property
    def labels(self) -> list[int]:
        return list(range(self.classes))

    def head(self, rows: int) -> Data:
        """The first ``rows`` rows (views, nothing regenerated)."""
        out = object.__new__(Data)
        out.rows, out.classes, out.seed = min(rows, self.rows), self.classes, self.seed
        for name in ("y_true", "y_pred", "proba", "correct", "confidence", "x", "y_tied", "y_distinct"):
            setattr(out, name, getattr(self, name)[:rows])
        return out

    @cached_property
    def lists(self) -> dict[str, list[Any]]:
        """Python lists of every column, for the plain-Python references."""
        return {
            "y_true": self.y_true.tolist(),
            "y_pred": self.y_pred.tolist(),
            "proba": self.proba.astype(np.float64).tolist(),
            "correct": self.correct.tolist(),
            "confidence": self.confidence.astype(np.float64).tolist(),
            "x": self.x.tolist(),
            "y_tied": self.y_tied.tolist(),
            "y_distinct": self.y_distinct.tolist(),
        }


@dataclass(frozen=True)
class Impl:
    """One implementation of a metric: ``prepare`` (untimed: building a DataFrame, Python
    lists) turns the data into the arguments of ``run``, which is timed."""

    name: str
    run: Callable[..., Value]
    prepare: Callable[[Data], tuple[Any, ...]]
    python: bool = False
    needs: str | None = None  # the distribution that must be installed
    module: str | None = None  # imported before timing (an import is not the metric's cost)


@dataclass(frozen=True)
class Metric:
    name: str
    description: str
    tolerance: float  # relative; 0 means equal
    impls: tuple[Impl, ...]


def _hard(y: Data) -> tuple[Any, ...]:
    return y.y_true, y.y_pred, y.labels


def _proba(y: Data) -> tuple[Any, ...]:
    return y.y_true, y.proba, y.labels


def _proba64(y: Data) -> tuple[Any, ...]:
    # scikit-learn computes a float32 log loss in float32 (clipped at float32's epsilon): it
    # is given a float64 copy, made untimed, so that it computes the same number.
    return y.y_true, y.proba.astype(np.float64), y.labels


def _ranked(y: Data) -> tuple[Any, ...]:
    return y.correct, y.confidence


def _tied(y: Data) -> tuple[Any, ...]:
    return y.x, y.y_tied


def _distinct(y: Data) -> tuple[Any, ...]:
    return y.x, y.y_distinct


def _lists(*names: str) -> Callable[[Data], tuple[Any, ...]]:
    def prepare(y: Data) -> tuple[Any, ...]:
        return (*(y.lists[n] for n in names), y.labels)

    return prepare


def _frame(**columns: str) -> Callable[[Data], tuple[Any, ...]]:
    def prepare(y: Data) -> tuple[Any, ...]:
        import polars as pl  # an optional peer, imported where it is used

        values = {k: (getattr(y, v).astype(np.int32) if v == "correct" else getattr(y, v)) for k, v in columns.items()}
        return (pl.DataFrame(values),)

    return prepare


def _report_values(r: cmetrics.Report) -> dict[str, float]:
    return {
        "accuracy": r.accuracy,
        "macro_precision": r.precision_macro,
        "macro_recall": r.recall_macro,
        "macro_f1": r.f1_macro,
        "mcc": r.matthews_corrcoef,
        "kappa": r.cohen_kappa,
    }


def _sklearn_report(y_true: np.ndarray, y_pred: np.ndarray, labels: list[int]) -> dict[str, float]:
    from sklearn import metrics as sk_metrics  # an optional peer, imported where it is used

    p, r, f, _ = sk_metrics.precision_recall_fscore_support(
        y_true, y_pred, labels=labels, average="macro", zero_division=0
    )
    return {
        "accuracy": sk_metrics.accuracy_score(y_true, y_pred),
        "macro_precision": p,
        "macro_recall": r,
        "macro_f1": f,
        "mcc": sk_metrics.matthews_corrcoef(y_true, y_pred),
        "kappa": sk_metrics.cohen_kappa_score(y_true, y_pred, labels=labels),
    }


def _pds_auroc(df: Any) -> float:
    import polars_ds as pds  # an optional peer, imported where it is used

    return float(df.select(pds.query_roc_auc("y", "s")).item())


def _pds_kendall(df: Any) -> float:
    import polars_ds as pds  # an optional peer, imported where it is used

    return float(df.select(pds.kendall_tau("x", "y")).item())


def _scipy_kendall(x: np.ndarray, y: np.ndarray) -> float:
    from scipy import stats  # an optional peer, imported where it is used

    return float(stats.kendalltau(x, y).statistic)


def _sklearn(name: str) -> Callable[..., Value]:
    def run(*args: Any, **kwargs: Any) -> Value:
        from sklearn import metrics as sk_metrics  # an optional peer, imported where it is used

        return getattr(sk_metrics, name)(*args, **kwargs)

    return run


def _sklearn_labels(name: str, prepare: Callable[[Data], tuple[Any, ...]]) -> Impl:
    """scikit-learn's ``name(y_true, y, labels=labels)``."""
    return Impl(
        "scikit-learn",
        lambda t, p, labels: _sklearn(name)(t, p, labels=labels),
        prepare,
        needs="scikit-learn",
        module="sklearn.metrics",
    )


def _python(fn: Callable[..., Value], *columns: str) -> Impl:
    """A plain-Python reference on the lists of ``columns`` (and the labels)."""
    return Impl("pure Python", fn, _lists(*columns), python=True)


def _both(fn: Callable[..., Value], **fixed: Any) -> tuple[Callable[..., Value], Callable[..., Value]]:
    """``fn`` on the Rust backend and on the numpy backend."""

    def rust(*args: Any) -> Value:
        return fn(*args, backend="rust", **fixed)

    def numpy(*args: Any) -> Value:
        return fn(*args, backend="numpy", **fixed)

    return rust, numpy


def _metric(
    name: str,
    description: str,
    tolerance: float,
    rust_numpy: tuple[Callable[..., Value], ...],
    *rest: Impl,
    prepare: Callable[[Data], tuple[Any, ...]],
) -> Metric:
    """A metric: cmetrics on both backends (``rust_numpy``), then the peers ``rest``."""
    rust, numpy = rust_numpy
    impls = (Impl("cmetrics", rust, prepare), Impl("cmetrics (numpy backend)", numpy, prepare), *rest)
    return Metric(name, description, tolerance, impls)


def metrics() -> dict[str, Metric]:
    """Every metric the bench knows, by name, in the order it runs them."""
    return {m.name: m for m in (*_label_metrics(), *_probability_metrics(), *_ranking_metrics())}


def _label_metrics() -> list[Metric]:
    cm = cmetrics
    return [
        _metric(
            "confusion_matrix",
            "K x K confusion matrix of int32 labels",
            0.0,
            _both(lambda t, p, labels, **kw: cm.confusion_matrix(t, p, labels=labels, **kw)),
            _sklearn_labels("confusion_matrix", _hard),
            _python(reference.confusion_matrix, "y_true", "y_pred"),
            prepare=_hard,
        ),
        _metric(
            "hard_report",
            "accuracy, macro P/R/F1, MCC, kappa (cmetrics: evaluate's whole hard-label report)",
            1e-9,
            _both(lambda t, p, labels, **kw: _report_values(cm.evaluate(t, y_pred=p, labels=labels, **kw))),
            Impl("scikit-learn", _sklearn_report, _hard, needs="scikit-learn", module="sklearn.metrics"),
            _python(
                lambda t, p, labels: reference.hard_report(reference.confusion_matrix(t, p, labels)), "y_true", "y_pred"
            ),
            prepare=_hard,
        ),
    ]


def _probability_metrics() -> list[Metric]:
    cm = cmetrics
    return [
        _metric(
            "prob_confusion_matrix",
            "K x K probabilistic confusion matrix of float32 probabilities",
            1e-9,
            _both(lambda t, p, labels, **kw: cm.prob_confusion_matrix(t, p, labels=labels, **kw)),
            _python(reference.probabilistic_confusion_matrix, "y_true", "proba"),
            prepare=_proba,
        ),
        _metric(
            "log_loss",
            "log loss of float32 probabilities",
            1e-9,
            _both(lambda t, p, labels, **kw: cm.log_loss(t, p, labels=labels, **kw)),
            _sklearn_labels("log_loss", _proba64),
            _python(reference.log_loss, "y_true", "proba"),
            prepare=_proba,
        ),
        _metric(
            "ece",
            "top-label expected calibration error, 15 bins",
            1e-9,
            _both(lambda t, p, labels, **kw: cm.expected_calibration_error(t, p, labels=labels, **kw)),
            _python(reference.expected_calibration_error, "y_true", "proba"),
            prepare=_proba,
        ),
    ]


def _ranking_metrics() -> list[Metric]:
    cm = cmetrics
    out = [
        _metric(
            "auroc",
            "AUROC of correctness against float32 confidence (= refinement)",
            1e-9,
            _both(lambda c, s, **kw: cm.roc_auc_score(c, s, **kw)),
            Impl("scikit-learn", _sklearn("roc_auc_score"), _ranked, needs="scikit-learn", module="sklearn.metrics"),
            Impl("scors", lambda c, s: import_module("scors").roc_auc(c, s), _ranked, needs="scors", module="scors"),
            Impl("polars-ds", _pds_auroc, _frame(y="correct", s="confidence"), needs="polars-ds", module="polars_ds"),
            Impl(
                "pure Python",
                lambda c, s, _labels: reference.roc_auc(c, s),
                _lists("correct", "confidence"),
                python=True,
            ),
            prepare=_ranked,
        ),
    ]
    for name, prepare, what, cols in (
        ("kendall_tau", _tied, "continuous x, y with 1,001 distinct values", ("x", "y_tied")),
        ("kendall_tau_distinct", _distinct, "continuous x and y, no ties", ("x", "y_distinct")),
    ):
        out.append(
            _metric(
                name,
                f"Kendall's tau-b of float64 vectors: {what}",
                1e-9,
                _both(lambda x, y, **kw: cm.kendall_tau(x, y, **kw)),
                Impl("scipy", _scipy_kendall, prepare, needs="scipy", module="scipy.stats"),
                Impl("polars-ds", _pds_kendall, _frame(x="x", y=cols[1]), needs="polars-ds", module="polars_ds"),
                _python(lambda x, y, _labels: reference.kendall_tau(x, y), *cols),
                prepare=prepare,
            )
        )
    return out


def installed(distribution: str) -> str | None:
    """The installed version of ``distribution``, or None."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    cpu = platform.processor() or platform.machine()
    memory = None
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), cpu)
        with open("/proc/meminfo") as fh:
            kib = next((int(line.split()[1]) for line in fh if line.startswith("MemTotal")), None)
            memory = None if kib is None else round(kib / 2**20, 1)
    except OSError:
        pass
    libraries = {
        d: installed(d) for d in ("cmetrics", "numpy", "scikit-learn", "scipy", "polars", "polars-ds", "scors")
    }
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "threads": cmetrics.get_num_threads(),
        "memory_gib": memory,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "rust_core": cmetrics.rust_available(),
        "libraries": libraries,
    }


class _PeakRss:
    """The largest resident set seen while the block runs, above its level at entry (sampled
    every millisecond from /proc/self/statm; None where that file does not exist)."""

    def __init__(self) -> None:
        self.peak: int | None = None
        self._stop = threading.Event()

    @staticmethod
    def _rss() -> int | None:
        try:
            with open("/proc/self/statm") as fh:
                return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            return None

    def __enter__(self) -> _PeakRss:
        self._base = self._rss()
        self._max = self._base
        if self._base is not None:
            self._thread = threading.Thread(target=self._watch, daemon=True)
            self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._stop.wait(0.001):
            now = self._rss()
            if now is not None and self._max is not None and now > self._max:
                self._max = now

    def __exit__(self, *exc: object) -> None:
        if self._base is None:
            return
        self._stop.set()
        self._thread.join()
        now = self._rss()
        top = max(self._max or 0, now or 0)
        self.peak = top - self._base


def _as_array(value: Value) -> np.ndarray:
    if isinstance(value, dict):
        return np.array([float(value[k]) for k in sorted(value)], dtype=np.float64)
    return np.asarray(value, dtype=np.float64).ravel()


def agree(a: Value, b: Value, tolerance: float) -> bool:
    """Whether two implementations' values agree: equal when ``tolerance`` is 0, else within
    ``tolerance`` relatively (and 1e-12 absolutely, for values near 0); NaN agrees with NaN."""
    x, y = _as_array(a), _as_array(b)
    if x.shape != y.shape:
        return False
    if tolerance == 0:
        return bool(np.array_equal(x, y, equal_nan=True))
    return bool(np.allclose(x, y, rtol=tolerance, atol=1e-12, equal_nan=True))


def _summary(value: Value) -> str:
    x = _as_array(value)
    if x.size == 1:
        return f"{x[0]:.12g}"
    return f"{x.size} values, sum {math.fsum(x.tolist()):.12g}"


@dataclass
class Row:
    metric: str
    implementation: str
    rows: int
    times: list[float]
    peak_bytes: int | None
    value: str
    agrees: bool
    baseline: float | None = None  # cmetrics' median on the same rows

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def ratio(self) -> float | None:
        return None if self.baseline is None else self.median / self.baseline


@dataclass
class Outcome:
    machine: dict[str, Any]
    config: dict[str, Any]
    rows: list[Row]
    skipped: list[dict[str, str]]
    failures: list[str]


def _timed(fn: Callable[..., Value], args: tuple[Any, ...], repeat: int) -> tuple[Value, list[float], int | None]:
    with warnings.catch_warnings():
        # A peer's remarks about the input (float32 rows summing to 1 within float32) are
        # not results; the values are compared instead.
        warnings.simplefilter("ignore")
        return _timed_quietly(fn, args, repeat)


def _timed_quietly(
    fn: Callable[..., Value], args: tuple[Any, ...], repeat: int
) -> tuple[Value, list[float], int | None]:
    with _PeakRss() as peak:
        t = time.perf_counter()
        value = fn(*args)
        first = time.perf_counter() - t
    times = [first]
    for _ in range(repeat - 1):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return value, times, peak.peak


def steps(todo: list[Metric]) -> int:
    """How many implementations a run of ``todo`` times (the installed ones)."""
    return sum(1 for m in todo for i in m.impls if i.needs is None or installed(i.needs) is not None)


def plan(names: list[str] | None) -> list[Metric]:
    known = metrics()
    if not names:
        return list(known.values())
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown metric(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    return [known[n] for n in names]


def run(
    *,
    rows: int,
    classes: int,
    metric_names: list[str] | None = None,
    repeat: int = 5,
    python_rows: int = 100_000,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    chosen: list[Metric] | None = None,
) -> Outcome:
    """Run the bench. ``progress`` is called before each implementation runs (with what runs);
    ``chosen`` replaces the metric table (tests inject a wrong implementation through it)."""
    todo = chosen if chosen is not None else plan(metric_names)
    data = Data(rows, classes, seed)
    small = data.head(python_rows)
    out = Outcome(
        machine=machine(),
        config={
            "rows": rows,
            "classes": classes,
            "repeat": repeat,
            "python_rows": min(python_rows, rows),
            "seed": seed,
            "metrics": [m.name for m in todo],
        },
        rows=[],
        skipped=[],
        failures=[],
    )
    for metric in todo:
        base = metric.impls[0]
        reference_value: dict[int, tuple[Value, float]] = {}

        def baseline(
            d: Data, base: Impl = base, cache: dict[int, tuple[Value, float]] = reference_value
        ) -> tuple[Value, float]:
            if d.rows not in cache:
                value, times, _ = _timed(base.run, base.prepare(d), repeat)
                cache[d.rows] = (value, statistics.median(times))
            return cache[d.rows]

        for impl in metric.impls:
            if impl.needs is not None and installed(impl.needs) is None:
                out.skipped.append(
                    {"metric": metric.name, "implementation": impl.name, "reason": f"{impl.needs} is not installed"}
                )
                continue
            d = small if impl.python else data
            if progress is not None:
                progress(f"{metric.name}: {impl.name} ({d.rows:,} rows)")
            try:
                if impl.module is not None:
                    import_module(impl.module)
                args = impl.prepare(d)
                value, times, peak = _timed(impl.run, args, repeat)
            except Exception as e:  # a peer's failure is reported, not raised
                out.failures.append(f"{metric.name}: {impl.name} raised {type(e).__name__}: {e}")
                continue
            if impl is base and d.rows not in reference_value:
                reference_value[d.rows] = (value, statistics.median(times))
            want, base_time = baseline(d)
            ok = agree(value, want, metric.tolerance)
            if not ok:
                out.failures.append(
                    f"{metric.name}: {impl.name} gives {_summary(value)}, cmetrics {_summary(want)} "
                    f"on the same {d.rows:,} rows (tolerance {metric.tolerance:g})"
                )
            out.rows.append(Row(metric.name, impl.name, d.rows, times, peak, _summary(value), ok, base_time))
    return out


def to_json(outcome: Outcome) -> dict[str, Any]:
    return {
        "machine": outcome.machine,
        "config": outcome.config,
        "results": [
            {
                "metric": r.metric,
                "implementation": r.implementation,
                "rows": r.rows,
                "median_s": r.median,
                "times_s": r.times,
                "ratio_to_cmetrics": r.ratio,
                "peak_mib": None if r.peak_bytes is None else r.peak_bytes / 2**20,
                "value": r.value,
                "agrees": r.agrees,
            }
            for r in outcome.rows
        ],
        "skipped": outcome.skipped,
        "failures": outcome.failures,
    }


def _time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:,.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:,.1f} ms"
    return f"{seconds * 1e6:,.0f} µs"


def _cells(r: Row) -> list[str]:
    ratio = "-" if r.ratio is None or r.implementation == "cmetrics" else f"{r.ratio:,.1f}x"
    peak = "n/a" if r.peak_bytes is None else f"{r.peak_bytes / 2**20:,.0f}"
    return [r.metric, r.implementation, f"{r.rows:,}", _time(r.median), ratio, peak, "yes" if r.agrees else "NO"]


HEADERS = ["metric", "implementation", "rows", "median", "time / cmetrics", "peak MiB", "agrees"]


def _header(outcome: Outcome) -> str:
    m, c = outcome.machine, outcome.config
    libs = ", ".join(f"{k} {v}" for k, v in m["libraries"].items() if v)
    return (
        f"{m['cpu']}, {m['cores']} cores ({m['threads']} threads used), {m['memory_gib']} GiB, Python {m['python']}\n"
        f"{libs}\n"
        f"{c['rows']:,} rows, {c['classes']} classes, median of {c['repeat']}; "
        f"pure Python on the first {c['python_rows']:,} rows (its ratio is against cmetrics on those rows)"
    )


def to_markdown(outcome: Outcome) -> str:
    lines = [
        "| " + " | ".join(HEADERS) + " |",
        "|" + "|".join("---" for _ in HEADERS) + "|",
    ]
    lines += ["| " + " | ".join(_cells(r)) + " |" for r in outcome.rows]
    notes = [_header(outcome).replace("\n", "; ")]
    notes += [f"skipped: {s['metric']} / {s['implementation']} ({s['reason']})" for s in outcome.skipped]
    notes += [f"FAILED: {f}" for f in outcome.failures]
    return "\n".join(lines) + "\n\n" + "\n".join(f"- {n}" for n in notes) + "\n"


def to_table(outcome: Outcome) -> str:
    console = Console(record=True, width=140, force_terminal=False)
    table = Table(title="cmetrics bench", caption=_header(outcome), show_lines=False)
    for h in HEADERS:
        table.add_column(h, justify="left" if h in ("metric", "implementation") else "right")
    last = None
    for r in outcome.rows:
        cells = _cells(r)
        if r.metric == last:
            cells[0] = ""
        last = r.metric
        table.add_row(*cells, style=None if r.agrees else "bold red")
    with console.capture() as cap:
        console.print(table)
        for s in outcome.skipped:
            console.print(f"skipped: {s['metric']} / {s['implementation']} ({s['reason']})")
        for f in outcome.failures:
            console.print(f"FAILED: {f}", markup=False)
    return cap.get()

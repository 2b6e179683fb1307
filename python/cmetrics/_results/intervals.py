"""The typed results of intervals and comparisons (:mod:`cmetrics.uncertainty`): what each
holds and how it prints."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from cmetrics._base.aliases import F64

#: How a bootstrap interval is read off the replicates.
IntervalMethod = Literal["percentile", "basic", "normal", "bca"]
#: How the replicates were drawn: the cells of the confusion matrix from a multinomial, or
#: every row with a Poisson(1) weight from the counter-based stream.
Scheme = Literal["multinomial", "poisson"]
#: The analytic interval of a proportion.
ProportionMethod = Literal["wilson", "clopper-pearson", "jeffreys", "agresti-coull"]
#: How McNemar's test computes its p-value.
McNemarMethod = Literal["exact", "mid-p", "chi2"]


def _num(x: float) -> str:
    return "nan" if math.isnan(x) else f"{x:.4f}"


@dataclass(frozen=True)
class Interval:
    """A point estimate with its interval."""

    estimate: float
    low: float
    high: float
    confidence_level: float
    method: str

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict."""
        return asdict(self)


@dataclass(frozen=True)
class MetricInterval:
    """The bootstrap interval of one metric.

    ``n_undefined`` counts the replicates in which the metric was undefined (a class with no
    prediction for a precision, say); their value follows the metric's convention (0 for an
    undefined ratio in an average) and stays in the distribution, except where the metric has no
    value at all (NaN), which is left out of ``low``, ``high`` and ``standard_error`` and counted.
    """

    estimate: float
    standard_error: float
    low: float
    high: float
    n_undefined: int
    n_resamples: int

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict."""
        return asdict(self)


@dataclass(frozen=True)
class Provenance:
    """How a bootstrap result was made: enough to make it again bit for bit."""

    method: IntervalMethod
    scheme: Scheme
    n_resamples: int
    seed: int
    confidence_level: float
    stratified: bool
    version: str

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict."""
        return asdict(self)


def _cell(text: str) -> str:
    """Text inside a Markdown table cell: no control character or ``|`` gets through."""
    return "".join(ch if ch.isprintable() else "?" for ch in text).replace("|", "\\|")


def _markdown_rows(rows: dict[str, MetricInterval]) -> list[str]:
    return [
        f"| {_cell(name)} | {_num(m.estimate)} | {_num(m.standard_error)} | {_num(m.low)} | {_num(m.high)} "
        f"| {m.n_undefined} |"
        for name, m in rows.items()
    ]


@dataclass(frozen=True)
class BootstrapResult:
    """Bootstrap intervals of several metrics, from one resample shared by all of them."""

    metrics: dict[str, MetricInterval]
    per_class: dict[str, dict[str, MetricInterval]]
    provenance: Provenance
    distribution: dict[str, F64] | None = field(default=None, repr=False, compare=False)

    def __getitem__(self, name: str) -> MetricInterval:
        return self.metrics[name]

    def to_dict(self) -> dict[str, Any]:
        """Plain dicts of the metrics, the per-class intervals and the provenance (no arrays)."""
        return {
            "metrics": {k: v.to_dict() for k, v in self.metrics.items()},
            "per_class": {lab: {k: v.to_dict() for k, v in d.items()} for lab, d in self.per_class.items()},
            "provenance": self.provenance.to_dict(),
        }

    def to_markdown(self) -> str:
        """A Markdown table per section: the metrics, then each class."""
        p = self.provenance
        head = (
            f"{p.confidence_level:.0%} {p.method} intervals, {p.n_resamples} {p.scheme} bootstrap replicates, "
            f"seed {p.seed}"
        )
        cols = "| metric | estimate | std. error | low | high | undefined |\n|---|---:|---:|---:|---:|---:|"
        lines = [head, "", cols, *_markdown_rows(self.metrics)]
        for label, rows in self.per_class.items():
            named = {f"{name} [{label}]": m for name, m in rows.items()}
            lines.extend(_markdown_rows(named))
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        p = self.provenance
        shown = ", ".join(f"{k}={_num(v.estimate)} [{_num(v.low)}, {_num(v.high)}]" for k, v in self.metrics.items())
        return f"BootstrapResult({p.method}, {p.scheme}, n_resamples={p.n_resamples}, seed={p.seed}: {shown})"


@dataclass(frozen=True)
class Difference:
    """A paired comparison of one metric: ``a - b`` with its interval.

    ``p_value`` is the two-sided bootstrap p-value of no difference (twice the smaller share of
    replicates on either side of 0, at most 1); ``prob_a_better`` the share of replicates in
    which ``a`` is better (higher, or lower for a loss).
    """

    a: float
    b: float
    difference: float
    standard_error: float
    low: float
    high: float
    p_value: float
    prob_a_better: float
    n_undefined: int

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict."""
        return asdict(self)


@dataclass(frozen=True)
class Comparison:
    """Paired bootstrap comparisons of two models on the same rows, one per metric."""

    metrics: dict[str, Difference]
    provenance: Provenance
    distribution: dict[str, F64] | None = field(default=None, repr=False, compare=False)

    def __getitem__(self, name: str) -> Difference:
        return self.metrics[name]

    def to_dict(self) -> dict[str, Any]:
        """Plain dicts of the differences and the provenance."""
        return {"metrics": {k: v.to_dict() for k, v in self.metrics.items()}, "provenance": self.provenance.to_dict()}

    def to_markdown(self) -> str:
        """One Markdown table of the differences."""
        p = self.provenance
        lines = [
            f"a - b: {p.confidence_level:.0%} {p.method} intervals, {p.n_resamples} {p.scheme} bootstrap replicates, "
            f"seed {p.seed}",
            "",
            "| metric | a | b | a - b | low | high | p-value | P(a better) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, d in self.metrics.items():
            lines.append(
                f"| {name} | {_num(d.a)} | {_num(d.b)} | {_num(d.difference)} | {_num(d.low)} | {_num(d.high)} | "
                f"{_num(d.p_value)} | {_num(d.prob_a_better)} |"
            )
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}: {_num(v.difference)} (p={_num(v.p_value)})" for k, v in self.metrics.items())
        return f"Comparison({shown})"


@dataclass(frozen=True)
class DeLongResult:
    """The AUROC with DeLong's variance (DeLong, DeLong and Clarke-Pearson 1988) and its
    normal interval, clipped to [0, 1]."""

    auc: float
    variance: float
    standard_error: float
    low: float
    high: float
    confidence_level: float
    n_positive: int
    n_negative: int

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict."""
        return asdict(self)


@dataclass(frozen=True)
class DeLongTest:
    """DeLong's paired test of two AUROCs on the same rows: ``auc_a - auc_b``, its variance
    (with the covariance of the two models' placements), the z statistic, the two-sided p-value
    and the normal interval of the difference."""

    auc_a: float
    auc_b: float
    difference: float
    variance: float
    standard_error: float
    z: float
    p_value: float
    low: float
    high: float
    confidence_level: float
    correlation: float

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict."""
        return asdict(self)


@dataclass(frozen=True)
class McNemarResult:
    """McNemar's test of two classifiers on the same rows.

    ``a_only`` counts the rows ``a`` gets right and ``b`` wrong, ``b_only`` the reverse; the
    statistic is ``min(a_only, b_only)`` for ``"exact"`` and ``"mid-p"``, and the
    continuity-corrected chi-square for ``"chi2"``. With no discordant row there is no evidence
    either way: the statistic is 0 and the p-value 1.
    """

    statistic: float
    p_value: float
    a_only: int
    b_only: int
    method: McNemarMethod

    def to_dict(self) -> dict[str, Any]:
        """The fields as a plain dict."""
        return asdict(self)

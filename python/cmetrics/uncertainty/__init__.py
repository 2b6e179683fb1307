"""How sure a metric is, and whether one model beats another: bootstrap intervals from one
shared resample (:func:`bootstrap`), paired comparisons (:func:`compare`), the analytic interval
of a proportion (:func:`proportion_interval`), DeLong's AUROC variance and paired test
(:func:`delong`, :func:`delong_test`), McNemar's test (:func:`mcnemar`) and the intervals of
a report from its counts alone (:func:`report_intervals`)."""

from cmetrics._results.intervals import (
    BootstrapResult,
    Comparison,
    DeLongResult,
    DeLongTest,
    Difference,
    Interval,
    McNemarResult,
    MetricInterval,
    Provenance,
)
from cmetrics.uncertainty.delong import delong, delong_test
from cmetrics.uncertainty.intervals import proportion_interval
from cmetrics.uncertainty.mcnemar import mcnemar
from cmetrics.uncertainty.resampling import bootstrap, compare, report_intervals

__all__ = [
    "BootstrapResult",
    "Comparison",
    "DeLongResult",
    "DeLongTest",
    "Difference",
    "Interval",
    "McNemarResult",
    "MetricInterval",
    "Provenance",
    "bootstrap",
    "compare",
    "delong",
    "delong_test",
    "mcnemar",
    "proportion_interval",
    "report_intervals",
]

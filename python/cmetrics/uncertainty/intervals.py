"""Intervals: the analytic interval of a proportion, and the four ways of reading an interval
off bootstrap replicates (docs/definitions.md §11).

scipy gives the beta and binomial quantiles; it is imported where one is needed (it costs a
tenth of a second at import, and ``import cmetrics`` stays light).
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from cmetrics._base.aliases import F64
from cmetrics._results.intervals import Interval, IntervalMethod, ProportionMethod
from cmetrics.exceptions import ValidationError

_NORMAL = NormalDist()
_PROPORTION_METHODS = ("wilson", "clopper-pearson", "jeffreys", "agresti-coull")
INTERVAL_METHODS: tuple[IntervalMethod, ...] = ("percentile", "basic", "normal", "bca")


def check_level(confidence_level: float) -> float:
    """``confidence_level`` as a float strictly between 0 and 1."""
    try:
        level = float(confidence_level)
    except (TypeError, ValueError):
        level = math.nan
    if not 0.0 < level < 1.0:
        msg = f"confidence_level={confidence_level!r} is invalid; pass a number strictly between 0 and 1, e.g. 0.95"
        raise ValidationError(msg)
    return level


def z_of(confidence_level: float) -> float:
    """The two-sided standard normal quantile of a confidence level."""
    return _NORMAL.inv_cdf(0.5 + confidence_level / 2)


def proportion_interval(
    count: float, total: float, *, confidence_level: float = 0.95, method: ProportionMethod = "wilson"
) -> Interval:
    """The interval of a binomial proportion ``count / total``.

    ``method``: ``"wilson"`` (the score interval), ``"clopper-pearson"`` (the exact beta
    interval), ``"jeffreys"`` (the equal-tailed Beta(1/2, 1/2) posterior interval) or
    ``"agresti-coull"``; the same values as ``statsmodels.stats.proportion.proportion_confint``
    (methods ``wilson``, ``beta``, ``jeffreys``, ``agresti_coull``). Accuracy, recall, precision,
    specificity and NPV are proportions: pass the count of successes and the number of trials.

    >>> iv = proportion_interval(81, 100)
    >>> round(iv.low, 4), round(iv.high, 4)
    (0.7222, 0.8749)
    >>> round(proportion_interval(0, 20, method="clopper-pearson").high, 4)
    0.1684
    """
    level = check_level(confidence_level)
    if method not in _PROPORTION_METHODS:
        msg = f"method={method!r} is invalid; use one of {', '.join(_PROPORTION_METHODS)}"
        raise ValidationError(msg)
    c, n = float(count), float(total)
    if not (math.isfinite(c) and math.isfinite(n) and n > 0 and 0 <= c <= n):
        msg = f"count={count!r}, total={total!r} are invalid; pass 0 <= count <= total with total > 0"
        raise ValidationError(msg)
    alpha = 1 - level
    p = c / n
    if method in ("wilson", "agresti-coull"):
        z = z_of(level)
        z2 = z * z
        if method == "wilson":
            den = 1 + z2 / n
            center = (p + z2 / (2 * n)) / den
            half = z / den * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
        else:
            n_tilde = n + z2
            center = (c + z2 / 2) / n_tilde
            half = z * math.sqrt(center * (1 - center) / n_tilde)
        low, high = max(0.0, center - half), min(1.0, center + half)
    else:
        # scipy is imported where a beta quantile is needed (see the module docs).
        from scipy.special import betaincinv  # a beta quantile: scipy loads on first use

        if method == "clopper-pearson":
            low = float(betaincinv(c, n - c + 1, alpha / 2)) if c > 0 else 0.0
            high = float(betaincinv(c + 1, n - c, 1 - alpha / 2)) if c < n else 1.0
        else:
            low = float(betaincinv(c + 0.5, n - c + 0.5, alpha / 2))
            high = float(betaincinv(c + 0.5, n - c + 0.5, 1 - alpha / 2))
    return Interval(p, low, high, level, method)


def _quantiles(values: F64, qs: npt.ArrayLike) -> F64:
    out: F64 = np.quantile(values, np.asarray(qs, dtype=np.float64))
    return out


def acceleration(jackknife: F64, counts: F64 | None = None) -> float:
    """BCa's acceleration from leave-one-out values (each repeated ``counts`` times: the rows
    that share a cell of the confusion matrix share their leave-one-out value); undefined
    (non-finite) values are left out."""
    v = np.asarray(jackknife, dtype=np.float64)
    w = None if counts is None else np.asarray(counts, dtype=np.float64)
    keep = np.isfinite(v) if w is None else np.isfinite(v) & (w > 0)
    if not keep.all():
        v, w = v[keep], None if w is None else w[keep]
    total = float(v.size if w is None else w.sum())
    if total == 0:
        return 0.0
    d = (float(v.sum() if w is None else np.dot(w, v)) / total) - v
    d2 = d * d
    wd = d if w is None else w * d
    den = 6.0 * float(np.dot(wd, d)) ** 1.5
    return float(np.dot(wd, d2)) / den if den > 0 else 0.0


def replicate_interval(
    estimate: float, replicates: F64, method: IntervalMethod, level: float, accel: float = 0.0
) -> tuple[float, float]:
    """The interval ``method`` reads off the defined (non-NaN) replicates."""
    r = replicates[~np.isnan(replicates)]
    alpha = 1 - level
    if r.size < 2 or math.isnan(estimate):
        return math.nan, math.nan
    if method == "percentile":
        lo, hi = _quantiles(r, [alpha / 2, 1 - alpha / 2])
        return float(lo), float(hi)
    if method == "basic":
        lo, hi = _quantiles(r, [alpha / 2, 1 - alpha / 2])
        return float(2 * estimate - hi), float(2 * estimate - lo)
    if method == "normal":
        half = z_of(level) * float(np.std(r, ddof=1))
        return estimate - half, estimate + half
    # BCa (Efron 1987): the bias correction from the share of replicates below the estimate,
    # the acceleration from the leave-one-out values.
    share = float(np.mean(r < estimate)) + 0.5 * float(np.mean(r == estimate))
    if share <= 0.0 or share >= 1.0:
        return math.nan, math.nan
    z0 = _NORMAL.inv_cdf(share)
    ends = []
    for q in (alpha / 2, 1 - alpha / 2):
        zq = _NORMAL.inv_cdf(q)
        ends.append(_NORMAL.cdf(z0 + (z0 + zq) / (1 - accel * (z0 + zq))))
    lo, hi = _quantiles(r, ends)
    return float(lo), float(hi)


def replicate_intervals(
    estimates: F64, replicates: F64, method: IntervalMethod, level: float
) -> tuple[F64, F64, F64, npt.NDArray[np.bool_]]:
    """:func:`replicate_interval` of many metrics at once, and their standard errors:
    ``replicates`` holds one metric per row (``metrics x resamples``, C order), ``estimates``
    one value per metric. The rows without an undefined (NaN) replicate are read in one call
    (the same values, bit for bit, as one call per row: each row is sorted and summed alone);
    the others, and BCa (its acceleration is per metric), are left to the caller: ``done``
    says which rows were read.

    >>> reps = np.array([[0.1, 0.2, 0.3, 0.4, 0.5], [1.0, np.nan, 3.0, 4.0, 5.0]])
    >>> low, high, se, done = replicate_intervals(np.array([0.3, 3.0]), reps, "percentile", 0.5)
    >>> low.tolist(), high.tolist(), done.tolist()
    ([0.2, nan], [0.4, nan], [True, False])
    """
    n_metrics = replicates.shape[0]
    low, high, se = (np.full(n_metrics, np.nan) for _ in range(3))
    clean = ~np.isnan(replicates).any(axis=1) & ~np.isnan(estimates)
    if method == "bca" or replicates.shape[1] < 2:
        clean[:] = False
    if not clean.any():
        return low, high, se, clean
    r = replicates[clean]
    est = estimates[clean]
    se[clean] = np.std(r, ddof=1, axis=1)
    alpha = 1 - level
    if method == "normal":
        half = z_of(level) * se[clean]
        low[clean], high[clean] = est - half, est + half
        return low, high, se, clean
    lo, hi = np.quantile(r, np.array([alpha / 2, 1 - alpha / 2]), axis=1)
    if method == "basic":
        lo, hi = 2 * est - hi, 2 * est - lo
    low[clean], high[clean] = lo, hi
    return low, high, se, clean


def check_method(method: str, n_resamples: int, level: float) -> IntervalMethod:
    """``method`` if it is one of :data:`INTERVAL_METHODS` and the resamples can carry it."""
    if method not in INTERVAL_METHODS:
        msg = f"method={method!r} is invalid; use one of {', '.join(INTERVAL_METHODS)}"
        raise ValidationError(msg)
    if method == "bca":
        need = math.ceil(2 / (1 - level))
        if n_resamples < need:
            msg = (
                f"method='bca' needs at least {need} resamples at confidence_level={level} (it reads quantiles "
                f"in the tails); pass n_resamples >= {need}, 1000 or more for a stable interval"
            )
            raise ValidationError(msg)
    return method

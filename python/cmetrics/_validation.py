"""Option checks and the ``zero_division`` / averaging policy shared by both backends."""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal, Union

import numpy as np
import numpy.typing as npt

from cmetrics.exceptions import UndefinedMetricWarning, ValidationError

Average = Literal["binary", "micro", "macro", "weighted"]
RankingMode = Literal["exact", "approximate", "off"]
ZeroDivision = Union[Literal["warn"], float]
AVERAGES = (None, "binary", "micro", "macro", "weighted")


def check_average(average: Any) -> None:
    """``average`` must be one of :data:`AVERAGES`."""
    if average not in AVERAGES:
        msg = f"average={average!r} is invalid; use one of {list(AVERAGES)}"
        raise ValidationError(msg)


def zero_division_value(zero_division: Any) -> float:
    """The number a 0/0 entry becomes."""
    if isinstance(zero_division, str):
        if zero_division == "warn":
            return 0.0
    elif isinstance(zero_division, (int, float)) and not isinstance(zero_division, bool):
        if math.isnan(zero_division):
            return float("nan")
        if zero_division in (0, 1):
            return float(zero_division)
    msg = f"zero_division={zero_division!r} is invalid; use 'warn', 0, 1 or float('nan')"
    raise ValidationError(msg)


def apply_zero_division(
    values: npt.NDArray[np.float64], zero_division: Any, what: str, reason: str, warn: bool = True
) -> npt.NDArray[np.float64]:
    """Replace the NaN (0/0) entries by the ``zero_division`` value, warning
    under ``"warn"`` as scikit-learn does."""
    fill = zero_division_value(zero_division)
    mask = np.isnan(values)
    if not mask.any():
        return values
    out = values.copy()
    out[mask] = fill
    if warn and isinstance(zero_division, str):
        # scikit-learn's wording: "due to" for a single value, "in labels with" per class.
        where = "due to" if values.size == 1 else "in labels with"
        warnings.warn(
            f"{what} is ill-defined and being set to 0.0 {where} no {reason}. "
            "Use `zero_division` parameter to control this behavior.",
            UndefinedMetricWarning,
            stacklevel=4,
        )
    return out


def average_values(values: npt.NDArray[np.float64], weights: npt.NDArray[np.float64], average: Any) -> Any:
    """Average per-class values, NaN entries dropped with their weights (scikit-learn's
    ``_nanaverage``); all-NaN gives NaN; weights summing to 0 fall back to the plain mean."""
    if average is None:
        return values
    keep = ~np.isnan(values)
    if not keep.any():
        return float("nan")
    v = values[keep]
    if average == "weighted":
        w = weights[keep]
        total = float(w.sum())
        if total != 0:
            return float(np.sum(v * w) / total)
    return float(np.sum(v) / v.size)


def warn_undefined(message: str) -> None:
    """Emit an :class:`UndefinedMetricWarning`."""
    warnings.warn(message, UndefinedMetricWarning, stacklevel=4)


def check_beta(beta: Any) -> float:
    """``beta`` must be a number >= 0 (``inf`` allowed). A finite beta so large that
    ``beta**2`` overflows is its limit, ``inf`` (F-beta tends to recall)."""
    if isinstance(beta, (str, bytes)):
        msg = f"beta={beta!r} is invalid; pass a number >= 0"
        raise ValidationError(msg)
    try:
        b = float(beta)
    except (TypeError, ValueError, OverflowError):
        msg = f"beta={beta!r} is invalid; pass a number >= 0"
        raise ValidationError(msg) from None
    if not b >= 0:
        msg = f"beta={beta!r} is invalid; beta should be >= 0"
        raise ValidationError(msg)
    if not math.isfinite(b * b):
        return math.inf
    return b


def ranking_mode(ranking: Any) -> RankingMode:
    """The one set of ``ranking`` values of :func:`cmetrics.evaluate`, :class:`Evaluator` and
    ``cmetrics score --ranking``: "exact", "approximate" or "off" (``True`` and ``False``
    stand for "exact" and "off"); anything else raises."""
    if ranking is True:
        return "exact"
    if ranking is False:
        return "off"
    if isinstance(ranking, str) and ranking in ("exact", "approximate", "off"):
        return ranking  # type: ignore[return-value]
    msg = f"ranking={ranking!r} is not one of 'exact', 'approximate', 'off' (or True / False)"
    raise ValidationError(msg)


def check_ranking_bins(ranking_bins: Any) -> int:
    """Bins of the approximate ranking mode: an integer from 1 to 2^24."""
    if isinstance(ranking_bins, bool) or not isinstance(ranking_bins, (int, np.integer)) \
            or not 1 <= ranking_bins <= 1 << 24:
        msg = f"ranking_bins={ranking_bins!r} is invalid; pass an integer from 1 to 2^24"
        raise ValidationError(msg)
    return int(ranking_bins)

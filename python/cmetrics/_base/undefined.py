"""Warnings of undefined values: each is given at the user's line (the first frame outside
cmetrics), with scikit-learn's class for 0/0 results, :class:`~cmetrics.UndefinedMetricWarning`."""

from __future__ import annotations

import sys
import warnings

from cmetrics.exceptions import UndefinedMetricWarning

_PACKAGE = __name__.split(".", 1)[0]


def _outside_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside cmetrics: the user's call."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").split(".", 1)[0] == _PACKAGE:
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def warn(message: str, category: type[Warning] = UndefinedMetricWarning) -> None:
    """Warn at the caller's line (the first frame outside the package)."""
    warnings.warn(message, category, stacklevel=_outside_stacklevel())


def undefined(message: str) -> float:
    """An undefined value: NaN, with an :class:`UndefinedMetricWarning` saying why."""
    warn(message)
    return float("nan")

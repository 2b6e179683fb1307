"""Figures of evaluations, with scikit-learn's Display contract (``pip install "cmetrics[plot]"``).

Every Display computes its values with cmetrics (equal to scikit-learn's Display of the same
rows), draws on ``plot(ax=None, ...)`` without ever calling ``plt.show()``, and keeps ``ax_``,
``figure_`` and its artists. Beyond scikit-learn: one-vs-rest curves of a multiclass
``y_score``, ``from_evaluator`` / ``from_report`` drawing from a merged state without the rows,
and :func:`compare_models` (the papers' pictures of several models). matplotlib is imported
when a figure is drawn, never by ``import cmetrics`` or ``import cmetrics.plot``.
"""

from __future__ import annotations

from cmetrics.plot.curve_displays import DetCurveDisplay, PrecisionRecallDisplay, RiskCoverageDisplay, RocCurveDisplay
from cmetrics.plot.matrix_displays import (
    CalibrationDisplay,
    ConfusionMatrixDisplay,
    ProbConfusionMatrixDisplay,
    calibration_curve,
)
from cmetrics.plot.model_comparison import ModelComparisonDisplay, PerClassDisplay, compare_models, per_class_bars

__all__ = [
    "CalibrationDisplay",
    "ConfusionMatrixDisplay",
    "DetCurveDisplay",
    "ModelComparisonDisplay",
    "PerClassDisplay",
    "PrecisionRecallDisplay",
    "ProbConfusionMatrixDisplay",
    "RiskCoverageDisplay",
    "RocCurveDisplay",
    "calibration_curve",
    "compare_models",
    "per_class_bars",
]

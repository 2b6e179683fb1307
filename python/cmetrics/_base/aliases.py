"""The type aliases of the package, written once: the closed options (``Literal`` types, each
checked by a function of :mod:`cmetrics._base.validation`) and the array types the kernels
read and return."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import numpy.typing as npt

# --------------------------------------------------------------------------------------
# The closed options

#: Which kernels run: the compiled extension when it is importable ("auto"), or one of them.
Backend = Literal["auto", "rust", "numpy"]

#: How per-class precision, recall and F are averaged (None: no averaging).
Average = Literal["binary", "micro", "macro", "weighted", "samples"]

#: The value of a 0/0 ratio: "warn" (0 with a warning), 0, 1 or NaN.
ZeroDivision = Literal["warn"] | float

#: How the ranking metrics of a report are computed.
RankingMode = Literal["exact", "approximate", "off"]

#: How a tied (correct, wrong) pair counts in refinement.
Ties = Literal["half", "strict", "harsh"]

#: What a confusion matrix is divided by.
Normalize = Literal["true", "pred", "all"]

#: The disagreement weights of Cohen's kappa (None: unweighted).
KappaWeights = Literal["linear", "quadratic"]

#: Kendall's tau-b or tau-c.
Variant = Literal["b", "c"]

#: Integer-like or string labels.
LabelKind = Literal["int", "str"]

#: One label: an integer (bool included) or a string.
Label = int | str | np.integer[Any] | np.str_

# --------------------------------------------------------------------------------------
# Arrays

F64 = npt.NDArray[np.float64]
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
#: Label codes or integer labels, as the kernels read them (other dtypes are cast once).
Codes = npt.NDArray[np.int32] | npt.NDArray[np.int64]
#: Probabilities, row-major or column-major.
Proba = npt.NDArray[np.float32] | npt.NDArray[np.float64]
#: Scores of the ranking kernels: floats, or integers ordered as integers.
Scores = npt.NDArray[np.float64] | npt.NDArray[np.float32] | npt.NDArray[np.int64] | npt.NDArray[np.uint64]
#: A score matrix (n, K) as the multiclass ranking kernels read it (C-contiguous).
ScoreMatrix = npt.NDArray[np.float32] | npt.NDArray[np.float64] | npt.NDArray[np.int64]
#: Which curve points ``threshold_counts`` drops: none, scikit-learn's ROC rule, or its
#: precision-recall / DET rule.
CurveDrop = Literal["none", "collinear", "flat"]

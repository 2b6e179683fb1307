"""cmetrics: classification metrics for very large evaluation dumps.

A compiled Rust core counts in parallel with the GIL released; this typed API
mirrors ``sklearn.metrics`` and falls back to an equivalent numpy backend when
the extension is unavailable. Every public function takes
``backend="auto" | "rust" | "numpy"``.
"""

from cmetrics._config import get_num_threads, rust_available, set_num_threads, thread_limit
from cmetrics.classification import (
    accuracy_score,
    balanced_accuracy_score,
    class_bias,
    class_prevalence,
    cohen_kappa_score,
    entropy_modulated_accuracy,
    f1_score,
    fbeta_score,
    hard_label_report,
    informedness,
    markedness,
    markedness_per_class,
    matthews_corrcoef,
    normalized_information_transfer,
    precision_recall_fscore_support,
    precision_score,
    recall_score,
    youden_j_per_class,
)
from cmetrics.confusion import ConfusionMatrix, confusion_matrix
from cmetrics.probabilistic import (
    CalibrationBins,
    brier_score,
    calibration_bins,
    cf1_score,
    cfbeta_score,
    cprecision_recall_fscore_support,
    cprecision_score,
    crecall_score,
    entropy_score,
    expected_calibration_error,
    log_loss,
    max_calibration_error,
    prob_confusion_matrix,
    purity,
    purity_from_matrix,
)
from cmetrics.report import Report, evaluate
from cmetrics.exceptions import UndefinedMetricWarning

__version__ = "0.1.0"

__all__ = [
    "CalibrationBins",
    "ConfusionMatrix",
    "Report",
    "brier_score",
    "calibration_bins",
    "cf1_score",
    "cfbeta_score",
    "cprecision_recall_fscore_support",
    "cprecision_score",
    "crecall_score",
    "entropy_score",
    "evaluate",
    "expected_calibration_error",
    "log_loss",
    "max_calibration_error",
    "prob_confusion_matrix",
    "purity",
    "purity_from_matrix",
    "UndefinedMetricWarning",
    "__version__",
    "accuracy_score",
    "balanced_accuracy_score",
    "class_bias",
    "class_prevalence",
    "cohen_kappa_score",
    "confusion_matrix",
    "entropy_modulated_accuracy",
    "f1_score",
    "fbeta_score",
    "get_num_threads",
    "hard_label_report",
    "informedness",
    "markedness",
    "markedness_per_class",
    "matthews_corrcoef",
    "normalized_information_transfer",
    "precision_recall_fscore_support",
    "precision_score",
    "recall_score",
    "rust_available",
    "set_num_threads",
    "thread_limit",
    "youden_j_per_class",
]

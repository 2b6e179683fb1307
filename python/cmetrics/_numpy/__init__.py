"""The numpy backend: the same functions, signatures, results and errors as
the Rust extension ``cmetrics._core``, written independently with numpy.

It is the fallback when the extension is unavailable and the oracle the Rust
kernels are tested against. Counting uses integer ``bincount`` and float64
weighted ``bincount`` (sequential f64 sums), so it agrees with the Rust
backend exactly on counts and to rounding on weighted sums.
"""

from cmetrics._numpy.classification import (
    accuracy,
    balanced_accuracy,
    cohen_kappa,
    entropy_modulated_accuracy,
    informedness,
    marginals,
    markedness,
    markedness_per_class,
    matthews_corrcoef,
    mutual_information_bits,
    normalized_information_transfer,
    precision_recall_fbeta,
    youden_j_per_class,
)
from cmetrics._numpy.probabilistic import evaluate_proba
from cmetrics._numpy.ranking import (
    GroupState,
    binary_ranking,
    kendall_counts,
    merge_groups,
    score_groups,
    walk_groups,
)
from cmetrics._numpy.confusion import (
    confusion_matrix,
    confusion_matrix_codes,
    encode_objects,
    encode_strings,
)

__all__ = [
    "GroupState",
    "accuracy",
    "binary_ranking",
    "kendall_counts",
    "merge_groups",
    "score_groups",
    "walk_groups",
    "balanced_accuracy",
    "cohen_kappa",
    "confusion_matrix",
    "confusion_matrix_codes",
    "encode_objects",
    "encode_strings",
    "entropy_modulated_accuracy",
    "evaluate_proba",
    "informedness",
    "marginals",
    "markedness",
    "markedness_per_class",
    "matthews_corrcoef",
    "mutual_information_bits",
    "normalized_information_transfer",
    "precision_recall_fbeta",
    "youden_j_per_class",
]

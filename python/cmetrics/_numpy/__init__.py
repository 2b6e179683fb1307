"""The numpy backend: the same kernels, signatures, results and errors as the Rust
extension ``cmetrics._core`` (the contract is :class:`cmetrics._kernels.Kernels`, which mypy
checks this module against), written independently with numpy.

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
    multilabel_counts,
    mutual_information_bits,
    normalized_information_transfer,
    precision_recall_fbeta,
    youden_j_per_class,
)
from cmetrics._numpy.confusion import (
    confusion_matrix,
    confusion_matrix_codes,
    encode_objects,
    encode_strings,
)
from cmetrics._numpy.grouping import group_positions, grouped_confusion, scatter_rows
from cmetrics._numpy.multiclass_ranking import (
    add_binned_one_vs_rest,
    binned_one_vs_rest,
    class_ranking,
    grouped_binned_histograms,
    one_vs_one,
    one_vs_rest,
    one_vs_rest_of_probabilities,
    rank_histogram,
    rank_histogram_groups,
    row_sum_range,
)
from cmetrics._numpy.multinomial import draw_cell_walks, multinomial_draws
from cmetrics._numpy.probabilistic import (
    evaluate_proba,
    evaluate_proba_groups,
    proba_row_values,
    top_labels,
)
from cmetrics._numpy.random import (
    philox4x32_blocks,
    poisson_weights,
    replicate_ranking,
    replicate_sums,
    walk_cell_weights,
)
from cmetrics._numpy.ranking import (
    GroupState,
    add_segments,
    binary_proba_groups,
    binary_ranking,
    kendall_counts,
    merge_groups,
    paired_placements,
    row_placements,
    score_groups,
    threshold_counts,
    union_states,
    walk_groups,
    walk_states,
    walk_union,
)

__all__ = [
    "GroupState",
    "accuracy",
    "add_binned_one_vs_rest",
    "add_segments",
    "balanced_accuracy",
    "binary_proba_groups",
    "binary_ranking",
    "binned_one_vs_rest",
    "class_ranking",
    "cohen_kappa",
    "confusion_matrix",
    "confusion_matrix_codes",
    "draw_cell_walks",
    "encode_objects",
    "encode_strings",
    "entropy_modulated_accuracy",
    "evaluate_proba",
    "evaluate_proba_groups",
    "group_positions",
    "grouped_binned_histograms",
    "grouped_confusion",
    "informedness",
    "kendall_counts",
    "marginals",
    "markedness",
    "markedness_per_class",
    "matthews_corrcoef",
    "merge_groups",
    "multilabel_counts",
    "multinomial_draws",
    "mutual_information_bits",
    "normalized_information_transfer",
    "one_vs_one",
    "one_vs_rest",
    "one_vs_rest_of_probabilities",
    "paired_placements",
    "philox4x32_blocks",
    "poisson_weights",
    "precision_recall_fbeta",
    "proba_row_values",
    "rank_histogram",
    "rank_histogram_groups",
    "replicate_ranking",
    "replicate_sums",
    "row_placements",
    "row_sum_range",
    "scatter_rows",
    "score_groups",
    "threshold_counts",
    "top_labels",
    "union_states",
    "walk_cell_weights",
    "walk_groups",
    "walk_states",
    "walk_union",
    "youden_j_per_class",
]

"""Stub of the compiled extension ``cmetrics._core`` (rust/py): the kernels of
:class:`cmetrics._kernels.Kernels`, checked against the built module by ``stubtest``."""

from collections.abc import Sequence
from typing import Literal, final

import numpy as np
import numpy.typing as npt

from cmetrics._kernels import (
    F64,
    PRF,
    BalancedAccuracy,
    BinaryRanking,
    Bools,
    ClassRanking,
    Codes,
    Counted,
    CurveDrop,
    CurvePoints,
    CurveTerms,
    Encoded,
    GroupedCounts,
    GroupedHistograms,
    Groups,
    GroupSplit,
    KendallCounts,
    Marginals,
    MultilabelCounts,
    OneVsOne,
    PairedPlacements,
    Proba,
    ProbabilityWalks,
    ProbAccumulators,
    RankingReplicates,
    RankingState,
    RowSums,
    ScoreMatrix,
    Scores,
    ThresholdCounts,
)

__all__ = [
    "SEQUENTIAL_BELOW",
    "VECTORIZED_SORT_BUILT",
    "GroupState",
    "__version__",
    "_allocator_purge_threshold",
    "_panic_for_tests",
    "accuracy",
    "add_binned_one_vs_rest",
    "add_segments",
    "available_threads",
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
    "max_threads",
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
    "sort_algorithm",
    "threshold_counts",
    "top_labels",
    "union_states",
    "walk_cell_weights",
    "walk_groups",
    "walk_states",
    "walk_union",
    "youden_j_per_class",
]

__version__: str
SEQUENTIAL_BELOW: int
VECTORIZED_SORT_BUILT: bool

def confusion_matrix(
    y_true: Codes,
    y_pred: Codes,
    sample_weight: F64 | None = None,
    *,
    max_classes: int = 4096,
    n_threads: int = 0,
    min_parallel: int | None = None,
) -> Counted:
    """Count the confusion matrix over the labels that occur."""

def confusion_matrix_codes(
    y_true: Codes, y_pred: Codes, n_classes: int, sample_weight: F64 | None = None, *, n_threads: int = 0
) -> Counted:
    """Count codes in 0..n_classes; every class keeps its row."""

def encode_strings(a: npt.NDArray[np.uint32], b: npt.NDArray[np.uint32], *, max_classes: int = 4096) -> Encoded:
    """Encode two (n, width) UCS-4 arrays to shared codes sorted by code point."""

def encode_objects(a: npt.NDArray[np.object_], b: npt.NDArray[np.object_], *, max_classes: int = 4096) -> Encoded:
    """Encode two object arrays of str to shared codes sorted by code point (keeps the GIL)."""

def marginals(c: F64) -> Marginals: ...
def precision_recall_fbeta(tp: F64, true_sum: F64, pred_sum: F64, beta: float) -> PRF: ...
def accuracy(c: F64) -> float: ...
def balanced_accuracy(c: F64, adjusted: bool) -> BalancedAccuracy: ...
def matthews_corrcoef(c: F64) -> float: ...
def cohen_kappa(c: F64, weights: str | None = None) -> float: ...
def youden_j_per_class(c: F64) -> F64: ...
def markedness_per_class(c: F64) -> F64: ...
def informedness(c: F64, prior: F64 | None = None) -> float: ...
def markedness(c: F64) -> float: ...
def mutual_information_bits(c: F64) -> float: ...
def normalized_information_transfer(c: F64, n_classes: int | None = None) -> float: ...
def entropy_modulated_accuracy(c: F64) -> float: ...
def philox4x32_blocks(
    counters: npt.NDArray[np.uint32], key: tuple[int, int], rounds: int = 10
) -> npt.NDArray[np.uint32]: ...
def poisson_weights(rows: npt.NDArray[np.uint64], seed: int, n_resamples: int) -> npt.NDArray[np.uint8]: ...
def multinomial_draws(
    counts: npt.NDArray[np.uint64],
    stratum_ends: npt.NDArray[np.uint64],
    first: int,
    count: int,
    seed: int,
    n_threads: int = 0,
) -> npt.NDArray[np.float64]: ...
def draw_cell_walks(
    counts: npt.NDArray[np.uint64],
    cells: npt.NDArray[np.uint64],
    groups: int,
    first: int,
    count: int,
    seed: int,
    curves: bool = True,
    n_threads: int = 0,
) -> RankingReplicates: ...
def walk_cell_weights(
    drawn: npt.NDArray[np.float64], cells: npt.NDArray[np.uint64], groups: int, curves: bool = True
) -> RankingReplicates: ...
def replicate_sums(
    values: F64,
    segments: Sequence[tuple[int, int | npt.NDArray[np.uint32]]],
    rows: int | npt.NDArray[np.uint64],
    seed: int,
    n_resamples: int,
    width: int,
    n_threads: int = 0,
) -> npt.NDArray[np.float64]: ...
def replicate_ranking(
    positive: Bools,
    score: Scores,
    sample_weight: F64 | None,
    rows: int | npt.NDArray[np.uint64],
    seed: int,
    n_resamples: int,
    n_threads: int = 0,
    curves: bool = True,
) -> RankingReplicates: ...
def available_threads() -> int: ...
def max_threads() -> int: ...
def sort_algorithm(keys: Literal["u32", "u64", "u64_high_bytes"] = "u64") -> Literal["radix", "vectorized"]: ...
def _panic_for_tests() -> None: ...
def _allocator_purge_threshold() -> int | None: ...
def evaluate_proba(
    y_true: Codes,
    y_proba: Proba,
    y_pred: Codes | None = None,
    sample_weight: F64 | None = None,
    *,
    validate: bool = True,
    atol: float | None = None,
    entropy: bool = True,
    scores: bool = True,
    n_bins: int = 15,
    keep_confidence: bool = False,
    hard: bool = True,
    rank: bool = False,
    n_threads: int = 0,
) -> ProbAccumulators:
    """One pass over y_proba: every accumulator of the probabilistic metrics."""

def top_labels(y_proba: Proba, n_threads: int = 0) -> npt.NDArray[np.int64]:
    """Each row's top label: the first column of its largest probability."""

def proba_row_values(
    y_true: Codes, y_proba: Proba, sample_weight: F64 | None = None, n_threads: int = 0
) -> npt.NDArray[np.float64]:
    """Each row's K + 4 contributions to a probability model's Poisson replicate sums."""

def binary_ranking(
    positive: Bools, score: Scores, sample_weight: F64 | None = None, curves: CurveTerms = True, n_threads: int = 0
) -> BinaryRanking: ...
def score_groups(positive: Bools, score: Scores, sample_weight: F64 | None = None, n_threads: int = 0) -> Groups: ...
def binary_proba_groups(
    positive: Bools, y_proba: Proba, atol: float | None = None, n_threads: int = 0
) -> Groups | None: ...
def row_placements(positive: Bools, score: Scores, n_threads: int = 0) -> F64: ...
def paired_placements(positive: Bools, score_a: Scores, score_b: Scores, n_threads: int = 0) -> PairedPlacements: ...
def multilabel_counts(
    y_true: Bools, y_pred: Bools, sample_weight: F64 | None = None, n_threads: int = 0
) -> MultilabelCounts: ...
def threshold_counts(
    positive: Bools, score: Scores, sample_weight: F64 | None = None, drop: CurveDrop = "none", n_threads: int = 0
) -> ThresholdCounts: ...
def one_vs_rest(
    y_score: ScoreMatrix,
    columns: list[int],
    codes: npt.NDArray[np.uint32] | None = None,
    indicator: Bools | None = None,
    sample_weight: F64 | None = None,
    curves: CurveTerms = True,
    n_threads: int = 0,
) -> list[BinaryRanking]: ...
def one_vs_rest_of_probabilities(
    y_score: ScoreMatrix,
    columns: list[int],
    codes: npt.NDArray[np.uint32],
    sample_weight: F64 | None = None,
    curves: CurveTerms = True,
    n_threads: int = 0,
) -> ProbabilityWalks: ...
def class_ranking(
    y_score: ScoreMatrix,
    codes: npt.NDArray[np.uint32],
    sample_weight: F64 | None = None,
    curves: CurveTerms = True,
    n_threads: int = 0,
) -> ClassRanking: ...
def add_binned_one_vs_rest(
    y_score: ScoreMatrix,
    codes: npt.NDArray[np.uint32],
    bins: int,
    all: npt.NDArray[np.uint64],
    pos: npt.NDArray[np.uint64],
    w_pos: F64 | None = None,
    w_neg: F64 | None = None,
    sample_weight: F64 | None = None,
    n_threads: int = 0,
) -> None: ...
def binned_one_vs_rest(
    y_score: ScoreMatrix,
    codes: npt.NDArray[np.uint32],
    bins: int,
    sample_weight: F64 | None = None,
    n_threads: int = 0,
) -> list[Groups]: ...
def rank_histogram(
    y_score: ScoreMatrix, codes: npt.NDArray[np.uint32], sample_weight: F64 | None = None, n_threads: int = 0
) -> F64: ...
def row_sum_range(y_score: ScoreMatrix, n_threads: int = 0) -> RowSums: ...
def one_vs_one(y_score: ScoreMatrix, codes: npt.NDArray[np.uint32], n_threads: int = 0) -> OneVsOne: ...
def merge_groups(a: Groups, b: Groups) -> Groups: ...
def walk_groups(groups: Groups, curves: bool = True) -> BinaryRanking: ...
def kendall_counts(x: Scores, y: Scores, n_threads: int = 0) -> KendallCounts: ...

@final
class GroupState:
    """The exact streaming ranking state (tie groups of every row added)."""

    def __new__(cls, weighted: bool, min_buffer: int | None = None) -> GroupState: ...
    @property
    def weighted(self) -> bool: ...
    @property
    def nbytes(self) -> int: ...
    def __len__(self) -> int: ...
    def add(
        self,
        positive: Bools,
        score: F64,
        sample_weight: F64 | None = None,
        bins: int | None = None,
        n_threads: int = 0,
    ) -> None: ...
    def merge(self, other: GroupState, n_threads: int = 0) -> None: ...
    def absorb(self, groups: Groups, n_threads: int = 0) -> None: ...
    def groups(self, n_threads: int = 0) -> Groups: ...
    def walk(self, curves: bool = True, n_threads: int = 0) -> BinaryRanking: ...
    def curve_points(self, steps: int, n_threads: int = 0) -> CurvePoints: ...

def add_segments(
    states: Sequence[RankingState],
    positive: Bools,
    score: F64,
    offsets: npt.NDArray[np.int64],
    sample_weight: F64 | None = None,
    bins: int | None = None,
    n_threads: int = 0,
) -> None: ...
def walk_states(states: Sequence[RankingState], curves: bool = True, n_threads: int = 0) -> list[BinaryRanking]: ...
def union_states(states: Sequence[RankingState], n_threads: int = 0) -> GroupState: ...
def walk_union(states: Sequence[RankingState], curves: bool = True, n_threads: int = 0) -> BinaryRanking: ...
def group_positions(codes: npt.NDArray[np.uint32], n_groups: int, n_threads: int = 0) -> GroupSplit: ...
def grouped_confusion(
    groups: Codes,
    y_true: Codes,
    y_pred: Codes,
    sample_weight: F64 | None = None,
    *,
    max_cells: int,
    n_threads: int = 0,
) -> GroupedCounts | None: ...
def scatter_rows(
    matrix: npt.NDArray[np.float32] | npt.NDArray[np.float64], positions: npt.NDArray[np.int64], n_threads: int = 0
) -> npt.NDArray[np.float32] | npt.NDArray[np.float64]: ...
def grouped_binned_histograms(
    y_score: ScoreMatrix,
    codes: npt.NDArray[np.uint32],
    offsets: npt.NDArray[np.int64],
    bins: int,
    sample_weight: F64 | None = None,
    n_threads: int = 0,
) -> GroupedHistograms: ...
def evaluate_proba_groups(
    y_true: Codes,
    y_proba: Proba,
    offsets: npt.NDArray[np.int64],
    y_pred: Codes | None = None,
    sample_weight: F64 | None = None,
    *,
    validate: bool = True,
    atol: float | None = None,
    entropy: bool = True,
    scores: bool = True,
    n_bins: int = 15,
    keep_confidence: bool = False,
    hard: bool = True,
    n_threads: int = 0,
) -> list[ProbAccumulators]: ...
def rank_histogram_groups(
    y_score: ScoreMatrix,
    codes: npt.NDArray[np.uint32],
    offsets: npt.NDArray[np.int64],
    sample_weight: F64 | None = None,
    n_threads: int = 0,
) -> F64: ...

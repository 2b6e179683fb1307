"""The contract between the Python layer and the two backends.

Every kernel the compiled extension ``cmetrics._core`` provides, the numpy backend
``cmetrics._numpy`` provides too, with the same signature, the same result type and the
same exceptions. :class:`Kernels` states that contract; ``resolve_backend`` returns it, mypy
checks both modules against it (the extension through its stub ``_core.pyi``, which
``stubtest`` checks against the built module), and a test compares the runtime signatures.

Results are the named tuples below, filled by both backends: their field names are the only
place the keys are spelled. The Rust bindings build them positionally, in field order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from typing_extensions import Self

F64 = npt.NDArray[np.float64]
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
#: Label codes or integer labels, as the kernels read them (other dtypes are cast once).
Codes = npt.NDArray[np.int32] | npt.NDArray[np.int64]
#: Probabilities, row-major or column-major.
Proba = npt.NDArray[np.float32] | npt.NDArray[np.float64]
#: Scores of the ranking kernels: floats, or integers ordered as integers.
Scores = npt.NDArray[np.float64] | npt.NDArray[np.float32] | npt.NDArray[np.int64] | npt.NDArray[np.uint64]
#: A score matrix (n, K) as the multiclass ranking kernels read it (C-contiguous).
ScoreMatrix = npt.NDArray[np.float32] | npt.NDArray[np.float64] | npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
#: Which curve points ``threshold_counts`` drops: none, scikit-learn's ROC rule, or its
#: precision-recall / DET rule.
CurveDrop = Literal["none", "collinear", "flat"]
#: What a walk computes beyond the pair counts: every curve term (True), none (False), the
#: average precision alone ("precision": the other curve terms NaN, one division per tie group
#: holding positives), or DeLong's placements alone ("placements": the other curve terms NaN;
#: without weights, exact integer sums in the branch-free pair walk).
CurveTerms = bool | Literal["precision", "placements"]


class Counted(NamedTuple):
    """A counted confusion matrix: the labels of its rows and columns, the counts, and the
    weighted sums when weights were given."""

    labels: I64
    counts: U64
    weighted: F64 | None


class Encoded(NamedTuple):
    """String labels encoded to codes sorted by code point: where one occurrence of each
    distinct label stands (``which`` array, ``rows`` index), and the codes of both arrays."""

    which: npt.NDArray[np.uint8]
    rows: U64
    a: npt.NDArray[np.int32]
    b: npt.NDArray[np.int32]


class Marginals(NamedTuple):
    """Diagonal, row sums, column sums and total of a confusion matrix."""

    tp: F64
    true_sum: F64
    pred_sum: F64
    total: float


class PRF(NamedTuple):
    """Per-class precision, recall and F-beta; NaN where 0/0."""

    precision: F64
    recall: F64
    fbeta: F64


class BalancedAccuracy(NamedTuple):
    """Balanced accuracy and the number of classes it averages over."""

    score: float
    kept: int


class ProbAccumulators(NamedTuple):
    """Everything one pass over a probability matrix accumulates (docs/definitions.md §4, §6, §7):
    arrays, and float sums, whose names (and only theirs) end in ``_sum``."""

    hard_counts: U64
    hard_weighted: F64 | None
    pcm: F64
    true_count: U64
    true_weight: F64
    entropy_sum: float
    brier_sum: float
    log_loss_sum: float
    weight_sum: float
    bin_weight: F64
    bin_confidence: F64
    bin_correct: F64
    bin_count: U64
    confidence: F64 | None
    correct: Bools | None
    ranking: BinaryRanking | None = None
    """The exact walk of the top-label confidences against correctness (``rank=True``)."""


class BinaryRanking(NamedTuple):
    """The tie-grouped walk of a binary outcome against a score: exact pair counts, the shares
    of reversed, tied and ordered pairs (weighted when weights are given), and the curve areas."""

    n_pos: int
    n_neg: int
    w_pos: float
    w_neg: float
    reversed: int
    tied: int
    ordered: int
    reversed_share: float
    tied_share: float
    ordered_share: float
    average_precision: float
    aupr_trapezoid: float
    aurc: float
    n_thresholds: int
    #: DeLong's placements (docs/definitions.md §11.5), with ``curves`` (NaN without): the sum of
    #: ``V10^2`` over positive rows and of ``V01^2`` over negative rows (weighted: shares of weight,
    #: sums weighted by the rows' weights).
    placement_pos_sq: float
    placement_neg_sq: float


class CurvePoints(NamedTuple):
    """Points of a ranking state's curve from the highest score down: accepting every row
    scored at least ``thresholds[i]`` accepts ``fps[i]`` negative and ``tps[i]`` positive rows
    (weights when weighted); the last point accepts every row."""

    fps: F64
    tps: F64
    thresholds: F64


class PairedPlacements(NamedTuple):
    """DeLong's paired summary of two models on the same rows (docs/definitions.md §11.5): the
    class counts, each model's exact pair counts (positive above negative, tied), and the centred
    products of the two models' placements summed over the positive rows (``pos_*``) and over the
    negative rows (``neg_*``): ``aa``, ``bb``, ``ab`` (a placement minus its model's AUROC)."""

    n_pos: int
    n_neg: int
    ordered_a: int
    tied_a: int
    ordered_b: int
    tied_b: int
    pos_aa: float
    pos_bb: float
    pos_ab: float
    neg_aa: float
    neg_bb: float
    neg_ab: float


class RowSums(NamedTuple):
    """The smallest and the largest row sum of a score matrix (float64 sums; ``inf, -inf``
    without rows)."""

    low: float
    high: float


class ProbabilityWalks(NamedTuple):
    """The one-vs-rest walks of probabilities whose rows must sum to 1 (numpy's ``allclose``),
    ``walks`` None when some row does not, with the smallest and the largest row sum."""

    walks: list[BinaryRanking] | None
    low: float
    high: float


class ClassRanking(NamedTuple):
    """The walk of every column of a score matrix against its class, and the (weighted) count
    of rows by the rank of their true class (``one_vs_rest`` and ``rank_histogram`` in one)."""

    walks: list[BinaryRanking]
    rank_histogram: F64


class OneVsOne(NamedTuple):
    """Hand and Till's pair AUROCs averaged over the pairs of classes with rows (NaN without a pair)."""

    n_pairs: int
    macro_auc: float
    weighted_auc: float


class KendallCounts(NamedTuple):
    """The exact pair counts of Kendall's tau and the two variants."""

    n: int
    x_ties: int
    y_ties: int
    joint_ties: int
    discordant: int
    x_distinct: int
    y_distinct: int
    tau_b: float
    tau_c: float


class MultilabelCounts(NamedTuple):
    """Per-label (weighted) true positives, true and predicted totals and true negatives of
    two indicator matrices, and per-row counts of labels set in both, in the truth, in the
    prediction."""

    tp: F64
    true_sum: F64
    pred_sum: F64
    tn: F64
    row_tp: npt.NDArray[np.uint32]
    row_true: npt.NDArray[np.uint32]
    row_pred: npt.NDArray[np.uint32]


class ThresholdCounts(NamedTuple):
    """Counts at each distinct score, one point per score from the lowest up (float64; weighted
    with weights): ``tps[i]`` / ``fps[i]`` positives / negatives scored at least ``thresholds[i]``."""

    fps: F64
    tps: F64
    thresholds: F64


class GroupSplit(NamedTuple):
    """Rows laid out group by group: each row's position in that layout, and where each
    group's slice starts (``n_groups + 1`` offsets, the last the row count)."""

    positions: npt.NDArray[np.int64]
    offsets: npt.NDArray[np.int64]


class GroupedCounts(NamedTuple):
    """The confusion table of every group that occurs: group values (or codes) and labels (or
    codes) ascending, ``G x K x K`` counts (rows = true) and weighted sums with weights."""

    groups: npt.NDArray[np.int64]
    labels: npt.NDArray[np.int64]
    counts: npt.NDArray[np.uint64]
    weighted: F64 | None


class GroupedHistograms(NamedTuple):
    """Dense binned one-vs-rest histograms of each group, shape (groups, K, bins + 1): all
    rows of a bin, the rows of the column's class among them, and their weights (None
    without weights)."""

    all: U64
    pos: U64
    w_all: F64 | None
    w_pos: F64 | None


class RankingReplicates(NamedTuple):
    """AUROC, the tied share of the (positive, negative) pairs, average precision and the area
    under the risk-coverage curve of each Poisson-bootstrap replicate (the last two NaN unless
    asked for), with its positive and negative weights (the pair metrics are NaN in a replicate
    without both, the AURC in one without rows); and, of unweighted
    rows (zeros with weights), the (positive, negative) pairs of the rows themselves ranked in
    order and tied and the positive and negative rows: the AUROC of the data from the same sort."""

    auroc: F64
    average_precision: F64
    tied_share: F64
    aurc: F64
    w_pos: F64
    w_neg: F64
    ordered: int
    tied: int
    n_pos: int
    n_neg: int


class Groups(NamedTuple):
    """Tie groups: distinct scores (increasing) with their positive and negative rows, and
    their weights when rows are weighted."""

    values: F64
    n_pos: U64
    n_neg: U64
    w_pos: F64 | None
    w_neg: F64 | None


class RankingState(Protocol):
    """The exact streaming ranking state (the tie groups of every row added)."""

    @property
    def weighted(self) -> bool: ...
    @property
    def nbytes(self) -> int: ...
    def __len__(self) -> int: ...
    def add(
        self, positive: Bools, score: F64, sample_weight: F64 | None = None, bins: int | None = None, n_threads: int = 0
    ) -> None: ...
    def merge(self, other: Self, n_threads: int = 0) -> None: ...
    def absorb(self, groups: Groups, n_threads: int = 0) -> None: ...
    def groups(self, n_threads: int = 0) -> Groups: ...
    def walk(self, curves: bool = True, n_threads: int = 0) -> BinaryRanking: ...
    def curve_points(self, steps: int, n_threads: int = 0) -> CurvePoints: ...


class Kernels(Protocol):
    """The kernels both backends provide (see the module docs)."""

    def confusion_matrix(
        self,
        y_true: Codes,
        y_pred: Codes,
        sample_weight: F64 | None = None,
        *,
        max_classes: int = 4096,
        n_threads: int = 0,
        min_parallel: int | None = None,
    ) -> Counted: ...
    def confusion_matrix_codes(
        self, y_true: Codes, y_pred: Codes, n_classes: int, sample_weight: F64 | None = None, *, n_threads: int = 0
    ) -> Counted: ...
    def encode_strings(
        self, a: npt.NDArray[np.uint32], b: npt.NDArray[np.uint32], *, max_classes: int = 4096
    ) -> Encoded: ...
    def encode_objects(
        self, a: npt.NDArray[np.object_], b: npt.NDArray[np.object_], *, max_classes: int = 4096
    ) -> Encoded: ...
    def marginals(self, c: F64) -> Marginals: ...
    def precision_recall_fbeta(self, tp: F64, true_sum: F64, pred_sum: F64, beta: float) -> PRF: ...
    def accuracy(self, c: F64) -> float: ...
    def balanced_accuracy(self, c: F64, adjusted: bool) -> BalancedAccuracy: ...
    def matthews_corrcoef(self, c: F64) -> float: ...
    def cohen_kappa(self, c: F64, weights: str | None = None) -> float: ...
    def youden_j_per_class(self, c: F64) -> F64: ...
    def markedness_per_class(self, c: F64) -> F64: ...
    def informedness(self, c: F64, prior: F64 | None = None) -> float: ...
    def markedness(self, c: F64) -> float: ...
    def mutual_information_bits(self, c: F64) -> float: ...
    def normalized_information_transfer(self, c: F64, n_classes: int | None = None) -> float: ...
    def entropy_modulated_accuracy(self, c: F64) -> float: ...
    def multilabel_counts(
        self, y_true: Bools, y_pred: Bools, sample_weight: F64 | None = None, n_threads: int = 0
    ) -> MultilabelCounts: ...
    def evaluate_proba(
        self,
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
    ) -> ProbAccumulators: ...
    def top_labels(self, y_proba: Proba, n_threads: int = 0) -> npt.NDArray[np.int64]: ...
    def proba_row_values(
        self, y_true: Codes, y_proba: Proba, sample_weight: F64 | None = None, n_threads: int = 0
    ) -> npt.NDArray[np.float64]: ...
    def evaluate_proba_groups(
        self,
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
        self,
        y_score: ScoreMatrix,
        codes: npt.NDArray[np.uint32],
        offsets: npt.NDArray[np.int64],
        sample_weight: F64 | None = None,
        n_threads: int = 0,
    ) -> F64: ...
    def binary_ranking(
        self,
        positive: Bools,
        score: Scores,
        sample_weight: F64 | None = None,
        curves: CurveTerms = True,
        n_threads: int = 0,
    ) -> BinaryRanking: ...
    def score_groups(
        self, positive: Bools, score: Scores, sample_weight: F64 | None = None, n_threads: int = 0
    ) -> Groups: ...
    def binary_proba_groups(
        self, positive: Bools, y_proba: Proba, atol: float | None = None, n_threads: int = 0
    ) -> Groups | None: ...
    def row_placements(self, positive: Bools, score: Scores, n_threads: int = 0) -> F64: ...
    def paired_placements(
        self, positive: Bools, score_a: Scores, score_b: Scores, n_threads: int = 0
    ) -> PairedPlacements: ...
    def threshold_counts(
        self,
        positive: Bools,
        score: Scores,
        sample_weight: F64 | None = None,
        drop: CurveDrop = "none",
        n_threads: int = 0,
    ) -> ThresholdCounts: ...
    def one_vs_rest(
        self,
        y_score: ScoreMatrix,
        columns: list[int],
        codes: npt.NDArray[np.uint32] | None = None,
        indicator: Bools | None = None,
        sample_weight: F64 | None = None,
        curves: CurveTerms = True,
        n_threads: int = 0,
    ) -> list[BinaryRanking]: ...
    def one_vs_rest_of_probabilities(
        self,
        y_score: ScoreMatrix,
        columns: list[int],
        codes: npt.NDArray[np.uint32],
        sample_weight: F64 | None = None,
        curves: CurveTerms = True,
        n_threads: int = 0,
    ) -> ProbabilityWalks: ...
    def class_ranking(
        self,
        y_score: ScoreMatrix,
        codes: npt.NDArray[np.uint32],
        sample_weight: F64 | None = None,
        curves: CurveTerms = True,
        n_threads: int = 0,
    ) -> ClassRanking: ...
    def binned_one_vs_rest(
        self,
        y_score: ScoreMatrix,
        codes: npt.NDArray[np.uint32],
        bins: int,
        sample_weight: F64 | None = None,
        n_threads: int = 0,
    ) -> list[Groups]: ...
    def add_binned_one_vs_rest(
        self,
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
    def grouped_binned_histograms(
        self,
        y_score: ScoreMatrix,
        codes: npt.NDArray[np.uint32],
        offsets: npt.NDArray[np.int64],
        bins: int,
        sample_weight: F64 | None = None,
        n_threads: int = 0,
    ) -> GroupedHistograms: ...
    def rank_histogram(
        self, y_score: ScoreMatrix, codes: npt.NDArray[np.uint32], sample_weight: F64 | None = None, n_threads: int = 0
    ) -> F64: ...
    def row_sum_range(self, y_score: ScoreMatrix, n_threads: int = 0) -> RowSums: ...
    def one_vs_one(self, y_score: ScoreMatrix, codes: npt.NDArray[np.uint32], n_threads: int = 0) -> OneVsOne: ...
    def merge_groups(self, a: Groups, b: Groups) -> Groups: ...
    def walk_groups(self, groups: Groups, curves: bool = True) -> BinaryRanking: ...
    def kendall_counts(self, x: Scores, y: Scores, n_threads: int = 0) -> KendallCounts: ...
    def GroupState(self, weighted: bool, min_buffer: int | None = None) -> RankingState: ...  # noqa: N802
    def add_segments(
        self,
        states: Sequence[RankingState],
        positive: Bools,
        score: F64,
        offsets: I64,
        sample_weight: F64 | None = None,
        bins: int | None = None,
        n_threads: int = 0,
    ) -> None: ...
    def walk_states(
        self, states: Sequence[RankingState], curves: bool = True, n_threads: int = 0
    ) -> list[BinaryRanking]: ...
    def union_states(self, states: Sequence[RankingState], n_threads: int = 0) -> RankingState: ...
    def walk_union(self, states: Sequence[RankingState], curves: bool = True, n_threads: int = 0) -> BinaryRanking: ...
    def group_positions(self, codes: npt.NDArray[np.uint32], n_groups: int, n_threads: int = 0) -> GroupSplit: ...
    def grouped_confusion(
        self,
        groups: Codes,
        y_true: Codes,
        y_pred: Codes,
        sample_weight: F64 | None = None,
        *,
        max_cells: int,
        n_threads: int = 0,
    ) -> GroupedCounts | None: ...
    def scatter_rows(
        self,
        matrix: npt.NDArray[np.float32] | npt.NDArray[np.float64],
        positions: npt.NDArray[np.int64],
        n_threads: int = 0,
    ) -> npt.NDArray[np.float32] | npt.NDArray[np.float64]: ...
    def philox4x32_blocks(
        self, counters: npt.NDArray[np.uint32], key: tuple[int, int], rounds: int = 10
    ) -> npt.NDArray[np.uint32]: ...
    def poisson_weights(self, rows: npt.NDArray[np.uint64], seed: int, n_resamples: int) -> npt.NDArray[np.uint8]: ...
    def multinomial_draws(
        self,
        counts: npt.NDArray[np.uint64],
        stratum_ends: npt.NDArray[np.uint64],
        first: int,
        count: int,
        seed: int,
        n_threads: int = 0,
    ) -> npt.NDArray[np.float64]: ...
    def draw_cell_walks(
        self,
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
        self,
        drawn: npt.NDArray[np.float64],
        cells: npt.NDArray[np.uint64],
        groups: int,
        curves: bool = True,
    ) -> RankingReplicates: ...
    def replicate_sums(
        self,
        values: F64,
        segments: Sequence[tuple[int, int | npt.NDArray[np.uint32]]],
        rows: int | npt.NDArray[np.uint64],
        seed: int,
        n_resamples: int,
        width: int,
        n_threads: int = 0,
    ) -> npt.NDArray[np.float64]: ...
    def replicate_ranking(
        self,
        positive: Bools,
        score: Scores,
        sample_weight: F64 | None,
        rows: int | npt.NDArray[np.uint64],
        seed: int,
        n_resamples: int,
        n_threads: int = 0,
        curves: bool = True,
    ) -> RankingReplicates: ...

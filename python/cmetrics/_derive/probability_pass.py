"""Probability inputs and the metrics derived from the one-pass accumulators
(docs/definitions.md §4, §6 and §7), shared by both backends."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from cmetrics._backend import resolve_backend
from cmetrics._base import validation
from cmetrics._base.aliases import F64, Backend, LabelKind, Normalize
from cmetrics._base.config import get_num_threads
from cmetrics._base.undefined import undefined
from cmetrics._derive.counted_table import CountedTable, label_codes, normalized
from cmetrics._kernels import ProbAccumulators
from cmetrics.exceptions import InternalError, ProbabilityError, WeightError


@dataclass(frozen=True)
class ProbInputs:
    """Validated inputs of a probabilistic metric."""

    y_true: np.ndarray
    y_proba: np.ndarray
    y_pred: np.ndarray | None
    sample_weight: F64 | None
    labels: np.ndarray
    kind: LabelKind
    #: How far a row may sum from 1 (None: the kernels' 1e-6 K; see :func:`validation.row_sum_tolerance`).
    atol: float | None = None


def prob_inputs(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    *,
    labels: ArrayLike | None = None,
    y_pred: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    backend: Backend = "auto",
) -> ProbInputs:
    """Validate and encode the inputs of a probabilistic metric."""
    t = validation.as_1d(y_true, "y_true")
    raw = validation.to_numpy(y_proba, "y_proba")
    p = validation.proba_array(raw, t.shape[0])
    k = p.shape[1]
    pair = validation.label_pair(t, t if y_pred is None else y_pred)
    w = validation.weights(sample_weight, t.shape[0])
    if labels is None:
        # The label set of y_true: one counting pass of y_true against itself (for booleans,
        # whether each value occurs: a count of the True ones).
        union = (
            _bool_labels(t, pair.y_true.dtype)
            if t.dtype.kind == "b"
            else CountedTable._count(pair.y_true, pair.y_true, None, None, None, backend).labels
        )
        if union.size != k:
            msg = (
                f"y_true has {union.size} classes but y_proba has {k} columns; pass labels= naming the class "
                "of each column"
            )
            raise ProbabilityError(msg)
        lab = union if pair.kind == "str" else union.astype(np.int64)
        lab_out = union.astype(pair.out_dtype) if pair.kind == "int" else union
    else:
        lab_out = validation.check_labels(labels, pair.kind)
        if lab_out.size != k:
            msg = f"labels has {lab_out.size} entries but y_proba has {k} columns; give one label per column"
            raise ProbabilityError(msg)
        lab = lab_out.astype(np.str_) if pair.kind == "str" else lab_out.astype(np.int64)
    yt = label_codes(pair.y_true, lab, "y_true", pair.kind)
    yp = None if y_pred is None else label_codes(pair.y_pred, lab, "y_pred", pair.kind)
    if yp is not None and yp.dtype != yt.dtype:
        yt, yp = yt.astype(np.int64), yp.astype(np.int64)
    return ProbInputs(yt, p, yp, w, np.asarray(lab_out), pair.kind, validation.row_sum_tolerance(raw.dtype, k))


def _bool_labels(t: npt.NDArray[np.bool_], dtype: np.dtype[Any]) -> np.ndarray:
    """The values of a boolean ``y_true`` that occur, as codes 0 (False) and 1 (True) of
    ``dtype``, in order: what the counting pass gives, from one count."""
    ones = int(np.count_nonzero(t))
    return np.array([v for v, seen in ((0, ones < t.size), (1, ones > 0)) if seen], dtype=dtype)


def accumulate(
    inp: ProbInputs,
    *,
    backend: Backend,
    n_bins: int = 15,
    validate: bool = True,
    entropy: bool = True,
    scores: bool = True,
    keep_confidence: bool = False,
    hard: bool = True,
    rank: bool = False,
) -> ProbAccumulators:
    """Run the one pass of the selected backend (``hard=False`` skips the top-label
    confusion matrix, which only :func:`cmetrics.evaluate` reports; ``rank=True`` adds the
    exact walk of the top-label confidences against correctness)."""
    return resolve_backend(backend).evaluate_proba(
        inp.y_true,
        inp.y_proba,
        inp.y_pred,
        inp.sample_weight,
        validate=bool(validate),
        atol=inp.atol,
        entropy=entropy,
        scores=scores,
        n_bins=n_bins,
        keep_confidence=keep_confidence,
        hard=hard,
        rank=rank,
        n_threads=get_num_threads(),
    )


def add_accumulators(a: ProbAccumulators | None, b: ProbAccumulators) -> ProbAccumulators:
    """``a + b`` field by field (a copy of ``b`` when ``a`` is None), without the per-row
    confidences, which do not add up: the state an :class:`~cmetrics.Evaluator` keeps."""
    b = b._replace(confidence=None, correct=None, ranking=None)
    if a is None:
        return ProbAccumulators._make(x.copy() if isinstance(x, np.ndarray) else x for x in b)
    pairs: Iterable[tuple[Any, Any]] = zip(a, b, strict=True)  # arrays, floats and Nones
    return ProbAccumulators._make(y if x is None else x if y is None else x + y for x, y in pairs)


@dataclass(frozen=True)
class CalibrationBins:
    """Per-bin statistics of a reliability diagram (docs/definitions.md §7.3).

    Bin ``m`` (0-based) holds top-label confidences in ``(edges[m], edges[m+1]]``;
    the first bin also holds 0. ``mean_confidence`` and ``accuracy`` are NaN
    for empty bins.
    """

    edges: npt.NDArray[np.float64]
    count: npt.NDArray[np.int64]
    weight: npt.NDArray[np.float64]
    mean_confidence: npt.NDArray[np.float64]
    accuracy: npt.NDArray[np.float64]

    def ece(self) -> float:
        """Expected calibration error: sum_m (W_m / W) |acc_m - conf_m|."""
        keep = self.weight > 0
        total = float(self.weight.sum())
        gap = np.abs(self.accuracy[keep] - self.mean_confidence[keep])
        return float(np.sum(self.weight[keep] / total * gap))

    def mce(self) -> float:
        """Maximum calibration error over non-empty bins."""
        keep = self.weight > 0
        return float(np.max(np.abs(self.accuracy[keep] - self.mean_confidence[keep])))

    def to_dict(self) -> dict[str, list[float | None]]:
        """JSON-safe lists (empty bins give None)."""

        def clean(a: F64) -> list[float | None]:
            return [None if isinstance(x, float) and math.isnan(x) else x for x in a.tolist()]

        return {
            "edges": self.edges.tolist(),
            "count": self.count.tolist(),
            "weight": self.weight.tolist(),
            "mean_confidence": clean(self.mean_confidence),
            "accuracy": clean(self.accuracy),
        }


class ProbResult:
    """The accumulators of one pass and every metric derived from them."""

    def __init__(
        self, acc: ProbAccumulators, labels: np.ndarray, kind: LabelKind, backend: Backend, hard: bool = True
    ) -> None:
        if not acc.weight_sum > 0:
            # The pass counts zero-weight rows (an Evaluator's batch may have no weight); the
            # metrics need some.
            msg = "sample_weight sums to 0; at least one sample needs a positive weight"
            raise WeightError(msg)
        self.k = int(acc.pcm.shape[0])
        self.labels = labels
        weighted = acc.hard_weighted is not None
        self.true_weight = np.asarray(acc.true_weight, dtype=np.float64)
        self.hard: CountedTable | None = None
        if hard:
            table = acc.hard_weighted if acc.hard_weighted is not None else acc.hard_counts.astype(np.float64)
            self.hard = CountedTable._from_parts(
                table, labels, acc.hard_counts.astype(np.int64), backend, weighted=weighted
            )
        self.pcm: F64 = np.ascontiguousarray(acc.pcm, dtype=np.float64)
        # cTP = diag(pCM), cTP + cFP = column sums of pCM, cRecall's denominator = the hard true counts
        # (docs/definitions.md §4).
        self.cmatrix = CountedTable._from_parts(self.pcm, labels, None, backend, weighted=True)
        self.cmatrix._true_sum = self.true_weight.copy()
        self.cmatrix._weighted = weighted  # support comes back as int64 when unweighted
        self.weight = float(acc.weight_sum)
        self.entropy_sum = float(acc.entropy_sum)
        self.brier_sum = float(acc.brier_sum)
        self.log_loss_sum = float(acc.log_loss_sum)
        n_bins = len(acc.bin_weight)
        self.n_bins = n_bins
        w = np.asarray(acc.bin_weight, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            conf = np.where(w > 0, acc.bin_confidence / w, np.nan)
            accy = np.where(w > 0, acc.bin_correct / w, np.nan)
        self.bins = CalibrationBins(
            edges=np.arange(n_bins + 1, dtype=np.float64) / n_bins if n_bins else np.zeros(1),
            count=acc.bin_count.astype(np.int64),
            weight=w,
            mean_confidence=conf,
            accuracy=accy,
        )
        self.confidence = acc.confidence
        self.correct = acc.correct

    def hard_matrix(self) -> CountedTable:
        """The top-label (or ``y_pred``) confusion matrix the pass counted."""
        if self.hard is None:
            msg = "internal error in cmetrics (please report it): the probability pass counted no hard matrix"
            raise InternalError(msg)
        return self.hard

    def prob_matrix(self, normalize: Normalize | None = None) -> F64:
        """The probabilistic confusion matrix, optionally normalised like confusion_matrix
        ("true" divides by the hard true counts: the row-mean matrix of Tornetta 2021)."""
        normalize = validation.check_normalize(normalize)
        if normalize is None:
            out: F64 = self.pcm.copy()
            return out
        return normalized(self.pcm, normalize, self.true_weight)

    def entropy_score(self) -> float:
        """1 - mean normalised entropy of the rows (docs/definitions.md §6)."""
        if self.k < 2:
            return undefined("Entropy score is undefined with a single column (log K = 0); returning NaN")
        # Rows that sum to 1 only within the tolerance (float32 softmax rows, say) can carry
        # a hair more entropy than log K (2e-8 for uniform float32 rows): the score is
        # clamped to its range [0, 1].
        return min(1.0, max(0.0, 1.0 - (self.entropy_sum / math.log(self.k)) / self.weight))

    def purity(self) -> float:
        """Purity of the row-normalised probabilistic confusion matrix (docs/definitions.md §6)."""
        n = self.true_weight
        if (n == 0).any():
            absent = self.labels[n == 0].tolist()[:10]
            return undefined(f"Purity is undefined: classes {absent} have no true samples; returning NaN")
        return purity_value(self.pcm / n[:, None])

    def brier(self, scale_by_half: bool = False) -> float:
        """Mean squared distance to the one-hot truth (the form of Yacouby and Axman 2020, range [0, 2])."""
        value = self.brier_sum / self.weight
        return value / 2 if scale_by_half else value

    def log_loss(self) -> float:
        """Mean negative log-likelihood of the true class (clipped at eps)."""
        return self.log_loss_sum / self.weight

    def ece(self) -> float:
        """Expected calibration error (top label)."""
        return self.bins.ece()

    def mce(self) -> float:
        """Maximum calibration error (top label)."""
        return self.bins.mce()


def purity_value(p: F64) -> float:
    """``1 - ||P - I||_F / sqrt(2K)``."""
    k = p.shape[0]
    return float(1.0 - np.sqrt(np.sum((p - np.eye(k)) ** 2)) / math.sqrt(2 * k))

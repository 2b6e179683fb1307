"""Ranking and selective-prediction metrics (docs/definitions.md §5, §7.4 and §7.5).

A confidence function is judged by how well it ranks the correct predictions
above the wrong ones (Gu and Hopkins 2023). Every function here sorts once (Rust: an LSD
radix sort on order-preserving keys) and derives its value from the
tie-grouped walk down the scores; pair counts are exact integers without
weights. Scores must be finite: NaN or infinity raises ``NonFiniteError``.

Binary ``y_true`` is a bool array, or two labels of which the greater is
the positive class (as scikit-learn's ``roc_auc_score``), or ``pos_label=``.
"""

from __future__ import annotations

import math
from typing import overload

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._backend import resolve_backend
from cmetrics._base import validation, value_checks
from cmetrics._base.aliases import F64, Backend, Bools, Label, Ties, Variant
from cmetrics._base.config import get_num_threads
from cmetrics._base.undefined import undefined, warn
from cmetrics._derive import multiclass_ranking, ranking_walk
from cmetrics._derive.multiclass_ranking import MultiClass, RankAverage
from cmetrics._derive.ranking_walk import SelectiveScores
from cmetrics._kernels import BinaryRanking, ScoreMatrix
from cmetrics._numpy.ranking import order_keys, tie_runs
from cmetrics.exceptions import (
    LabelError,
    NotImplementedOptionError,
    ProbabilityError,
    ShapeError,
    ValidationError,
)

__all__ = [
    "SelectiveScores",
    "aupr_trapezoid",
    "aurc",
    "average_precision_score",
    "correctness",
    "kendall_tau",
    "kendall_tau_distance",
    "refinement",
    "reversed_pair_proportion",
    "risk_coverage_curve",
    "roc_auc_score",
    "selective_prediction_scores",
    "top_k_accuracy_score",
]


def _pairs_walk(
    correct: ArrayLike, confidence: ArrayLike, sample_weight: ArrayLike | None, backend: Backend, curves: bool = False
) -> BinaryRanking:
    return ranking_walk.walk(
        validation.binary(correct, None, "correct"),
        validation.scores(confidence, "confidence", keep_float32=True),
        sample_weight,
        backend,
        curves=curves,
    )


@overload
def roc_auc_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: RankAverage = "macro",
    sample_weight: ArrayLike | None = None,
    max_fpr: float | None = None,
    multi_class: MultiClass = "raise",
    labels: ArrayLike | None = None,
    pos_label: Label | None = None,
    backend: Backend = "auto",
) -> float: ...
@overload
def roc_auc_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: None,
    sample_weight: ArrayLike | None = None,
    max_fpr: float | None = None,
    multi_class: MultiClass = "raise",
    labels: ArrayLike | None = None,
    pos_label: Label | None = None,
    backend: Backend = "auto",
) -> float | F64: ...
def roc_auc_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: RankAverage | None = "macro",
    sample_weight: ArrayLike | None = None,
    max_fpr: float | None = None,
    multi_class: MultiClass = "raise",
    labels: ArrayLike | None = None,
    pos_label: Label | None = None,
    backend: Backend = "auto",
) -> float | F64:
    """ROC AUC (docs/definitions.md §7.5, §7.6): the weighted Mann-Whitney statistic, ties counting 1/2,
    for binary, multiclass and multilabel targets, with scikit-learn's arguments.

    - Binary ``y_true`` with a 1-D ``y_score``: one AUC (``average`` is ignored); ``max_fpr``
      gives McClish's standardised partial AUC. ``pos_label`` (a cmetrics extension) picks the
      positive class when the labels are not {0, 1} or {-1, 1}.
    - Multiclass ``y_true`` with an (n, K) ``y_score`` of probabilities: ``multi_class="ovr"``
      (each class against the rest, from the compiled one-vs-rest kernel; ``average`` None,
      ``"macro"``, ``"weighted"`` or ``"micro"``) or ``"ovo"`` (Hand and Till's pairs;
      ``"macro"`` or ``"weighted"``, no weights). ``labels`` names the class of each column.
    - Multilabel ``y_true`` (an n x L 0/1 matrix): one AUC per label, averaged as above or per
      row (``"samples"``).

    A class with no positive or no negative row gives NaN with ``UndefinedMetricWarning``.

    >>> roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    >>> roc_auc_score([0, 1, 2, 2], [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7], [0.3, 0.3, 0.4]],
    ...               multi_class="ovr")
    1.0
    """
    average = multiclass_ranking.check_rank_average(average)
    multi_class = multiclass_ranking.check_multi_class(multi_class)
    fpr = multiclass_ranking.check_max_fpr(max_fpr)
    t = validation.to_numpy(y_true, "y_true")
    s = validation.to_numpy(y_score, "y_score")
    if t.ndim == 2 and t.shape[1] > 1:
        ind = multiclass_ranking.indicator(t)
        sm = multiclass_ranking.score_matrix(s, ind.shape[0])
        if sm.shape != ind.shape:
            raise ShapeError(f"y_true has shape {ind.shape} but y_score has shape {sm.shape}; pass one score per label")
        return multiclass_ranking.averaged(
            "auc", sm, codes=None, ind=ind, sample_weight=sample_weight, average=average, max_fpr=fpr, backend=backend
        )
    if s.ndim == 2 and s.shape[1] != 1:
        if fpr is not None:
            msg = (
                "Partial AUC computation not available in multiclass setting, 'max_fpr' must be set to `None`, "
                f"received `max_fpr={max_fpr}` instead"
            )
            raise ValidationError(msg)
        if multi_class == "raise":
            raise ValidationError("multi_class must be in ('ovo', 'ovr') for a 2-D y_score")
        sm = multiclass_ranking.score_matrix(s, validation.as_1d(t, "y_true").shape[0], finite=False)
        # One-vs-rest by class: the kernel checks that the rows sum to 1 in the pass that keys the
        # columns (the matrix read once, not twice). The check still comes first: when a step
        # before the kernel fails, rows that do not sum to 1 are the error reported.
        fused = multi_class == "ovr" and average in ("macro", "weighted", None)
        if not fused:
            multiclass_ranking.check_sums_to_one(sm, backend)
        try:
            return _multiclass_auc(t, sm, multi_class, average, sample_weight, labels, fused, backend)
        except (ValueError, TypeError) as error:
            failed = error
        if fused and not isinstance(failed, ProbabilityError):
            multiclass_ranking.check_sums_to_one(sm, backend)  # its error first, as when it ran first
        raise failed
    positive = validation.binary(t.ravel() if t.ndim == 2 else t, pos_label, greater_positive=True)
    # float32 scores stay float32: the kernels key them in place (a float64 copy is 80 MB at 10^7).
    score = validation.scores(s.ravel() if s.ndim == 2 else s, "y_score", keep_float32=True)
    if fpr is not None:
        validation.same_length("y_true", positive, "y_score", score)
        value_checks.check_finite("y_score", score)
        return multiclass_ranking.partial_auc(
            positive, score, validation.weights(sample_weight, positive.shape[0]), fpr, backend
        )
    d = ranking_walk.walk(positive, score, sample_weight, backend, curves=False)
    if ranking_walk.no_pairs(d):
        return undefined("Only one class is present in y_true. ROC AUC score is not defined in that case.")
    return ranking_walk.refinement(d, "half", sample_weight is not None)


def _multiclass_auc(
    t: np.ndarray,
    sm: ScoreMatrix,
    multi_class: MultiClass,
    average: RankAverage | None,
    sample_weight: ArrayLike | None,
    labels: ArrayLike | None,
    probabilities: bool,
    backend: Backend,
) -> float | F64:
    """:func:`roc_auc_score` of a multiclass ``y_true`` against an (n, K) score matrix, once the
    rows are known to sum to 1 or ``probabilities`` asks the one-vs-rest walks to check it."""
    if multi_class == "ovo" and average is None:
        raise NotImplementedOptionError("average=None is not implemented for multi_class='ovo'.")
    if average not in (("micro", "macro", "weighted", None) if multi_class == "ovr" else ("macro", "weighted")):
        shown = "('micro', 'macro', 'weighted', None)" if multi_class == "ovr" else "('macro', 'weighted')"
        raise ValidationError(
            f"average must be one of {shown} for multiclass problems with multi_class={multi_class!r}"
        )
    codes, _ = multiclass_ranking.encode(validation.as_1d(t, "y_true"), sm.shape[1], labels)
    if multi_class == "ovo":
        if sample_weight is not None:
            msg = (
                "sample_weight is not supported for multiclass one-vs-one ROC AUC, 'sample_weight' must be "
                "None in this case."
            )
            raise ValidationError(msg)
        return multiclass_ranking.one_vs_one(codes, sm, average, backend)
    return multiclass_ranking.averaged(
        "auc",
        sm,
        codes=codes,
        ind=None,
        sample_weight=sample_weight,
        average=average,
        max_fpr=None,
        backend=backend,
        probabilities=probabilities,
    )


@overload
def average_precision_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: RankAverage = "macro",
    pos_label: Label | None = None,
    sample_weight: ArrayLike | None = None,
    backend: Backend = "auto",
) -> float: ...
@overload
def average_precision_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: None,
    pos_label: Label | None = None,
    sample_weight: ArrayLike | None = None,
    backend: Backend = "auto",
) -> float | F64: ...
def average_precision_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    average: RankAverage | None = "macro",
    pos_label: Label | None = None,
    sample_weight: ArrayLike | None = None,
    backend: Backend = "auto",
) -> float | F64:
    """Average precision (docs/definitions.md §7.4): ``sum_k (R_k - R_{k-1}) P_k`` over distinct
    thresholds, as scikit-learn, for binary, multiclass (one-vs-rest over the classes of
    ``y_true``, which must match the columns of ``y_score``) and multilabel targets, averaged
    as :func:`roc_auc_score` averages (``"samples"`` too).

    No positives: 0.0 with a warning (decision O10, docs/definitions.md §9).

    >>> round(average_precision_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), 4)
    0.8333
    >>> average_precision_score([0, 1, 2, 2], [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7], [0.5, 0.3, 0.2]])
    0.9444444444444443
    """
    average = multiclass_ranking.check_rank_average(average)
    t = validation.to_numpy(y_true, "y_true")
    s = validation.to_numpy(y_score, "y_score")
    if (t.ndim == 2 and t.shape[1] > 1) or (s.ndim == 2 and s.shape[1] != 1):
        if pos_label not in (None, 1):
            msg = (
                "Parameter pos_label is fixed to 1 for multiclass and multilabel-indicator y_true. Do not set "
                "pos_label or set pos_label to 1."
            )
            raise LabelError(msg)
        if t.ndim == 2 and t.shape[1] > 1:
            ind: Bools | None = multiclass_ranking.indicator(t)
            codes = None
            n = t.shape[0]
        else:
            ind = None
            y = validation.as_1d(t, "y_true")
            n = y.shape[0]
        sm = multiclass_ranking.score_matrix(s, n)
        if ind is None:
            codes, _ = multiclass_ranking.encode(y, sm.shape[1], None)
        elif sm.shape != ind.shape:
            raise ShapeError(f"y_true has shape {ind.shape} but y_score has shape {sm.shape}; pass one score per label")
        return multiclass_ranking.averaged(
            "ap", sm, codes=codes, ind=ind, sample_weight=sample_weight, average=average, max_fpr=None, backend=backend
        )
    d = ranking_walk.walk(
        validation.binary(t.ravel() if t.ndim == 2 else t, pos_label),
        validation.scores(s.ravel() if s.ndim == 2 else s, "y_score", keep_float32=True),
        sample_weight,
        backend,
        curves="precision",
    )
    if d.w_pos == 0:
        warn("No positive class found in y_true, recall is set to one for all thresholds; average precision is 0.0")
        return 0.0
    return float(d.average_precision)


def top_k_accuracy_score(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    k: int = 2,
    normalize: bool = True,
    sample_weight: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    backend: Backend = "auto",
) -> float:
    """Share of rows whose true class is among the ``k`` highest scores (scikit-learn's rule for
    ties: among equal scores the class of the higher column ranks first). ``normalize=False``
    gives the (weighted) number of hits. A 1-D ``y_score`` is a binary score: with ``k=1`` a row
    is predicted positive above 0.5 (above 0 when scores leave [0, 1]); with ``k >= 2`` every
    row is a hit. ``k >= n_classes`` warns that the score is trivially perfect.

    The rank of the true class is counted per row without sorting (the scores above it, plus
    the ties in later columns), in one parallel pass of the compiled core.

    >>> top_k_accuracy_score([0, 1, 2, 2], [[0.5, 0.2, 0.3], [0.3, 0.4, 0.3], [0.2, 0.4, 0.4], [0.7, 0.2, 0.1]], k=2)
    0.75
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValidationError(f"k must be a positive integer, got {k!r}")
    normalize = validation.check_flag("normalize", normalize)
    t = validation.as_1d(y_true, "y_true")
    s = validation.to_numpy(y_score, "y_score")
    w = validation.weights(sample_weight, t.shape[0])
    if w is not None:
        value_checks.check_weights(w, t.shape[0])
    if s.ndim == 1:
        score = validation.scores(s, "y_score")
        validation.same_length("y_true", t, "y_score", score)
        value_checks.check_finite("y_score", score)
        codes, _ = multiclass_ranking.encode(t, 2, labels)
        if k >= 2:
            warn(
                f"'k' ({k}) greater than or equal to 'n_classes' (2) will result in a perfect score and is "
                "therefore meaningless."
            )
            hits = np.ones(t.shape[0], dtype=np.bool_)
        else:
            threshold = 0.5 if score.size and score.min() >= 0 and score.max() <= 1 else 0
            hits = (score > threshold) == (codes == 1)
    else:
        sm = multiclass_ranking.score_matrix(s, t.shape[0])
        codes, _ = multiclass_ranking.encode(t, sm.shape[1], labels)
        n_classes = sm.shape[1]
        if k >= n_classes:
            warn(
                f"'k' ({k}) greater than or equal to 'n_classes' ({n_classes}) will result in a perfect score and "
                "is therefore meaningless."
            )
        hist = resolve_backend(backend).rank_histogram(sm, codes, w, get_num_threads())
        hit_weight = float(np.sum(hist[: int(k)]))
        if normalize:
            value_checks.check_totals(float(np.sum(hist)), 0.0, t.shape[0])
            return hit_weight / float(np.sum(hist))
        return hit_weight
    if normalize:
        if w is None:
            return float(np.mean(hits)) if hits.size else undefined("top_k_accuracy_score of no samples is NaN")
        value_checks.check_totals(float(np.sum(w)), 0.0, t.shape[0])
        return float(np.average(hits, weights=w))
    return float(np.sum(hits)) if w is None else float(np.dot(hits, w))


def aupr_trapezoid(
    y_true: ArrayLike,
    y_score: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    pos_label: Label | None = None,
    backend: Backend = "auto",
) -> float:
    """Trapezoidal area under the precision-recall curve, from (recall 0, precision 1) to the
    first point of full recall (``auc(recall, precision)`` over scikit-learn's curve): the "AUPR"
    of Gu and Hopkins (2023) and their package spred (docs/definitions.md §5.4). A compatibility
    function; :func:`average_precision_score` is the primary AP.
    """
    d = ranking_walk.walk(
        validation.binary(y_true, pos_label),
        validation.scores(y_score, "y_score", keep_float32=True),
        sample_weight,
        backend,
    )
    if d.w_pos == 0:
        return undefined("aupr_trapezoid is undefined without positive samples; returning NaN")
    return float(d.aupr_trapezoid)


def refinement(
    correct: ArrayLike,
    confidence: ArrayLike,
    *,
    ties: Ties = "half",
    sample_weight: ArrayLike | None = None,
    backend: Backend = "auto",
) -> float:
    """Refinement of a confidence function (Gu and Hopkins 2023, docs/definitions.md §5.1): the
    share of (correct, wrong) pairs that the confidence orders correctly.

    ``ties="half"`` (default) counts a tied pair as 1/2 and equals the AUROC of confidence for
    correctness; ``"strict"`` is the paper's ``1 - tau / (c (n - c))`` (ties count as ordered);
    ``"harsh"`` is spred's (ties count as reversed). NaN with ``UndefinedMetricWarning`` when
    all predictions are correct or all are wrong.

    >>> refinement([1, 0, 1, 0, 0, 0, 1, 1, 1, 1], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    0.7083333333333334
    """
    ties = validation.check_ties(ties)
    return ranking_walk.refinement(
        _pairs_walk(correct, confidence, sample_weight, backend), ties, sample_weight is not None
    )


def reversed_pair_proportion(
    correct: ArrayLike, confidence: ArrayLike, *, sample_weight: ArrayLike | None = None, backend: Backend = "auto"
) -> float:
    """Reversed Pair Proportion (Xin et al. 2021, Gu and Hopkins 2023): ``L / n^2``, L = (correct, wrong)
    pairs with the correct one strictly less confident; weighted: ``sum w_i w_j / (sum w)^2``.
    0 when all predictions are correct or all wrong. Range [0, 1/4].

    >>> reversed_pair_proportion([1, 0, 1, 0, 0, 0, 1, 1, 1, 1], [i / 10 for i in range(1, 11)])
    0.07
    """
    d = _pairs_walk(correct, confidence, sample_weight, backend)
    return ranking_walk.reversed_pair_proportion(d, sample_weight is not None)


def kendall_tau_distance(
    correct: ArrayLike, confidence: ArrayLike, *, sample_weight: ArrayLike | None = None, backend: Backend = "auto"
) -> float:
    """The Kendall-tau distance of Gu and Hopkins (2023): the number of (correct, wrong) pairs with the correct
    prediction strictly less confident (a weight sum with ``sample_weight``). NaN with
    ``UndefinedMetricWarning`` when all predictions are correct or all wrong.

    >>> kendall_tau_distance([1, 0, 1, 0, 0, 0, 1, 1, 1, 1], [i / 10 for i in range(1, 11)])
    7.0
    """
    d = _pairs_walk(correct, confidence, sample_weight, backend)
    return ranking_walk.kendall_tau_distance(d, sample_weight is not None)


def aurc(
    correct: ArrayLike, confidence: ArrayLike, *, sample_weight: ArrayLike | None = None, backend: Backend = "auto"
) -> float:
    """Area under the risk-coverage curve (selective prediction): predictions are accepted from
    the most confident down, tied confidences together; ``AURC = sum_k (cov_k - cov_{k-1}) risk_k``
    with risk = weighted error rate among the accepted. Lower is better; 0 for a perfect ranking
    with no errors accepted before the last correct one.

    >>> round(aurc([1, 1, 0, 1], [0.9, 0.8, 0.7, 0.6]), 4)
    0.1458
    """
    return float(_pairs_walk(correct, confidence, sample_weight, backend, curves=True).aurc)


def risk_coverage_curve(
    correct: ArrayLike, confidence: ArrayLike, *, sample_weight: ArrayLike | None = None
) -> tuple[F64, F64, F64]:
    """``(coverage, risk, thresholds)``, one point per distinct confidence from the highest down:
    coverage = accepted weight / total weight, risk = error weight / accepted weight when
    everything with confidence >= threshold is accepted. O(n) memory (the curve itself).

    >>> cov, risk, thr = risk_coverage_curve([1, 1, 0, 1], [0.9, 0.8, 0.7, 0.6])
    >>> cov.tolist(), risk.tolist()
    ([0.25, 0.5, 0.75, 1.0], [0.0, 0.0, 0.3333333333333333, 0.25])
    """
    ok = validation.binary(correct, None, "correct")
    conf = validation.scores(confidence, "confidence")
    validation.same_length("correct", ok, "confidence", conf)
    value_checks.check_finite("confidence", conf)
    w = validation.weights(sample_weight, ok.shape[0])
    if w is not None:
        value_checks.check_weights(w, ok.shape[0])
        with np.errstate(over="ignore"):
            value_checks.check_totals(float(np.sum(w)), 0.0, ok.shape[0])
    w = np.ones(ok.shape[0]) if w is None else w
    keys = order_keys(conf)
    order = np.argsort(keys, kind="stable")[::-1]
    c, o, ww = keys[order], ok[order], w[order]
    starts = tie_runs(c)
    accepted = np.cumsum(np.add.reduceat(ww, starts)) if len(c) else np.zeros(0)
    errors = np.cumsum(np.add.reduceat(np.where(o, 0.0, ww), starts)) if len(c) else np.zeros(0)
    total = accepted[-1] if len(accepted) else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        coverage = accepted / total
        risk = errors / accepted  # NaN only where nothing of weight is accepted yet
    return coverage, risk, c[starts].astype(np.float64)


def kendall_tau(x: ArrayLike, y: ArrayLike, *, variant: Variant = "b", backend: Backend = "auto") -> float:
    """Kendall's tau-b (default) or tau-c between two real vectors, with ties (docs/definitions.md §5.3).

    Equals ``scipy.stats.kendalltau(x, y, variant=...).statistic``. Integers are ordered as
    integers (int64 and uint64 values at any magnitude), ``-inf`` and ``inf`` as the smallest and
    largest values, as scipy orders them; NaN raises ``NonFiniteError``. The compiled core counts
    the pairs exactly by Knight's O(n log n) algorithm (the rows sorted by x and by y, the y
    ranks' inversions in x order counted eight bits at a time), or, when both vectors have at
    most 65,536 distinct values (rounded scores, grades, quantised confidences), by a faster
    O(n + D_x D_y) sweep over the table of their ranks; every method gives the same counts. A constant vector, or a
    single sample, gives NaN with an ``UndefinedMetricWarning`` (scipy's value); empty input
    raises ``ShapeError``.

    >>> kendall_tau([1, 2, 3, 4, 5], [3, 1, 2, 5, 4])
    0.4
    >>> kendall_tau([2**62, 2**62 + 1, 2**62 + 2], [3, 2, 1])
    -1.0
    """
    variant = validation.check_variant(variant)
    xs, ys = validation.scores(x, "x"), validation.scores(y, "y")  # the kernels check lengths and NaN
    d = resolve_backend(backend).kendall_counts(xs, ys, get_num_threads())
    value = float(d.tau_b if variant == "b" else d.tau_c)
    if math.isnan(value):
        return undefined("Kendall's tau is undefined for a constant vector or fewer than 2 samples; returning NaN")
    return value


def correctness(
    y_true: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    y_proba: ArrayLike | None = None,
    confidence: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    backend: Backend = "auto",
) -> tuple[Bools, np.ndarray]:
    """``(correct, confidence)`` from ``(y_true, y_proba)`` (confidence = top probability,
    prediction = its column, ties to the lowest) or from ``(y_true, y_pred, confidence)``
    (the confidence as given: float64, or int64 / uint64 for integers).

    >>> ok, conf = correctness([0, 1, 1], y_proba=[[0.7, 0.3], [0.4, 0.6], [0.6, 0.4]])
    >>> ok.tolist(), conf.tolist()
    ([True, True, False], [0.7, 0.6, 0.6])
    """
    return ranking_walk.correctness(y_true, y_pred, y_proba, confidence, labels, backend)


def selective_prediction_scores(
    y_true: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    y_proba: ArrayLike | None = None,
    confidence: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    ties: Ties = "half",
    backend: Backend = "auto",
) -> SelectiveScores:
    """Every selective-prediction metric from one sort, from ``(y_true, y_proba)`` or
    ``(y_true, y_pred, confidence)``.

    >>> s = selective_prediction_scores([0, 1, 1], y_proba=[[0.7, 0.3], [0.4, 0.6], [0.6, 0.4]])
    >>> s.refinement, s.accuracy  # the wrong prediction ties a right one at 0.6: half a pair lost
    (0.75, 0.6666666666666666)
    """
    ties = validation.check_ties(ties)
    ok, conf = ranking_walk.correctness(y_true, y_pred, y_proba, confidence, labels, backend)
    return ranking_walk.selective_scores(
        ranking_walk.walk(ok, conf, sample_weight, backend), ties, sample_weight is not None
    )

"""``evaluate``: one pass over the rows, every metric, one :class:`Report`."""

from __future__ import annotations

from typing import overload

from numpy.typing import ArrayLike

from cmetrics._base import validation
from cmetrics._base.aliases import Backend, RankingMode, ZeroDivision
from cmetrics._derive import multiclass_ranking, probability_pass, ranking_walk
from cmetrics._results.grouped import GroupedReport
from cmetrics._results.report import Report, build_report
from cmetrics.confusion import ConfusionMatrix
from cmetrics.exceptions import ValidationError
from cmetrics.streaming.settings import DEFAULT_GROUP_RANKING_BINS

__all__ = ["GroupedReport", "Report", "evaluate"]


@overload
def evaluate(
    y_true: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    y_proba: ArrayLike | None = None,
    confidence: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    n_bins: int = 15,
    zero_division: ZeroDivision = "warn",
    validate: bool = True,
    keep_confidence: bool = False,
    ranking: RankingMode | bool = "exact",
    ranking_bins: int = 1 << 16,
    top_k: int = 5,
    class_ranking: RankingMode | bool | None = None,
    groups: None = None,
    max_groups: int | None = None,
    group_ranking_bins: int = DEFAULT_GROUP_RANKING_BINS,
    backend: Backend = "auto",
) -> Report: ...


@overload
def evaluate(
    y_true: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    y_proba: ArrayLike | None = None,
    confidence: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    n_bins: int = 15,
    zero_division: ZeroDivision = "warn",
    validate: bool = True,
    keep_confidence: bool = False,
    ranking: RankingMode | bool = "exact",
    ranking_bins: int = 1 << 16,
    top_k: int = 5,
    class_ranking: RankingMode | bool | None = None,
    groups: ArrayLike | tuple[ArrayLike, ...],
    max_groups: int | None = None,
    group_ranking_bins: int = DEFAULT_GROUP_RANKING_BINS,
    backend: Backend = "auto",
) -> GroupedReport: ...


def evaluate(
    y_true: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    y_proba: ArrayLike | None = None,
    confidence: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
    n_bins: int = 15,
    zero_division: ZeroDivision = "warn",
    validate: bool = True,
    keep_confidence: bool = False,
    ranking: RankingMode | bool = "exact",
    ranking_bins: int = 1 << 16,
    top_k: int = 5,
    class_ranking: RankingMode | bool | None = None,
    groups: ArrayLike | tuple[ArrayLike, ...] | None = None,
    max_groups: int | None = None,
    group_ranking_bins: int = DEFAULT_GROUP_RANKING_BINS,
    backend: Backend = "auto",
) -> Report | GroupedReport:
    """Score an evaluation dump in one pass and return a :class:`Report`.

    With ``y_proba`` (N x K, column j = ``labels[j]``) the matrix is read once and
    that single pass yields the hard confusion matrix of the top label (ties to the
    lowest column; or of ``y_pred`` if given), the probabilistic confusion matrix,
    the entropy, Brier and log-loss sums and the calibration bins; every hard-label
    and probabilistic metric is derived from those, and the selective-prediction metrics
    of the top-label confidence. Without ``y_proba`` the report holds the hard-label
    metrics of ``y_pred``, plus the selective-prediction metrics when a per-row
    ``confidence`` is given. ``ranking`` says how those are computed, as for
    :class:`cmetrics.Evaluator` and ``cmetrics score --ranking``: "exact" (default; one
    sort of the confidences), "approximate" (confidences in [0, 1] binned into
    ``ranking_bins`` bins first) or "off" (``True`` and ``False`` mean "exact" and "off").
    ``keep_confidence=True`` also keeps each row's top-label confidence and
    correctness (``report.confidence``, ``report.correct``; O(N) memory).

    With ``y_proba`` the report also ranks the classes by their columns (the "class ranking"
    family): ``roc_auc_ovr`` and ``average_precision_ovr``, the macro averages over the
    classes with both positive and negative rows of each column's one-vs-rest AUROC and AP
    (computed as ``class_ranking`` says: "exact", one sort per column; "approximate", binned
    as the confidences are; "off"; None, the default, follows ``ranking``), and
    ``top_1_accuracy`` .. ``top_{k}_accuracy`` for ``k = min(top_k, K - 1)`` (scikit-learn's
    tie rule: the later column first).

    Undefined values (0/0) are NaN with the reason in ``report.undefined``;
    ``zero_division`` applies to the per-class ratios as in scikit-learn. For data
    that does not fit in memory, :class:`cmetrics.Evaluator` accumulates the same
    report batch by batch.

    With ``groups`` (one group value per row: integers or strings; or a tuple of such
    arrays to group by several columns) the result is a :class:`GroupedReport`: the report of
    all rows and one report per group value, each equal to ``evaluate`` on that group's rows
    alone, ranking metrics included (with ``ranking_bins=group_ranking_bins`` in the
    approximate modes: 1,024 bins per group unless told otherwise, which keeps a group's
    class-ranking state at K x 16 KiB). The rows are put in group order once and read once
    (the overall tables are the sums of the groups'); at most ``max_groups`` distinct values
    (default 10,000; more raise :class:`~cmetrics.exceptions.LimitExceededError` before any
    per-group state exists). Rows are always validated there, and ``keep_confidence`` is
    not available.

    Examples
    --------
    >>> r = evaluate([0, 1, 1], y_proba=[[0.7, 0.3], [0.4, 0.6], [0.6, 0.4]])
    >>> round(r.accuracy, 4), round(r.log_loss, 4)  # -(ln 0.7 + ln 0.6 + ln 0.4) / 3
    (0.6667, 0.5946)
    >>> g = evaluate([0, 1, 1, 0], y_pred=[0, 1, 0, 1], groups=[7, 7, 8, 8])
    >>> g.overall.accuracy, g[7].accuracy, g[8].accuracy
    (0.5, 1.0, 0.0)
    """
    if groups is not None:
        return _grouped(
            y_true,
            groups,
            y_pred=y_pred,
            y_proba=y_proba,
            confidence=confidence,
            labels=labels,
            sample_weight=sample_weight,
            n_bins=n_bins,
            zero_division=zero_division,
            keep_confidence=keep_confidence,
            ranking=ranking,
            ranking_bins=ranking_bins,
            top_k=top_k,
            class_ranking=class_ranking,
            max_groups=max_groups,
            group_ranking_bins=group_ranking_bins,
            backend=backend,
        )
    validation.check_inputs("evaluate", y_pred, y_proba, confidence)
    n_bins = validation.check_n_bins(n_bins)
    top_k = validation.check_top_k(top_k)
    class_mode = validation.ranking_mode(ranking if class_ranking is None else class_ranking)
    validation.zero_division_value(zero_division)
    mode = validation.ranking_mode(ranking)
    bins = validation.check_ranking_bins(ranking_bins) if mode == "approximate" else None
    made: dict[str, int | str] = {"mode": "exact"} if bins is None else {"mode": "approximate", "bins": bins}
    class_bins = validation.check_ranking_bins(ranking_bins) if class_mode == "approximate" else None
    walk = None
    if y_proba is not None:
        inp = probability_pass.prob_inputs(
            y_true, y_proba, labels=labels, y_pred=y_pred, sample_weight=sample_weight, backend=backend
        )
        # The exact walk runs inside the pass (the kernel sorts keys it writes as it reads);
        # the approximate one bins the kept confidences.
        acc = probability_pass.accumulate(
            inp,
            backend=backend,
            n_bins=n_bins,
            validate=validate,
            keep_confidence=keep_confidence or mode == "approximate",
            rank=mode == "exact",
        )
        res = probability_pass.ProbResult(acc, inp.labels, inp.kind, backend)
        kept = None
        walk = acc.ranking
        if acc.correct is not None and acc.confidence is not None:
            if mode == "approximate":
                walk = ranking_walk.binned_walk(acc.correct, acc.confidence, inp.sample_weight, backend, bins)
            kept = (acc.correct, acc.confidence) if keep_confidence else None
        extra = multiclass_ranking.report_values(
            inp.y_true,
            inp.y_proba,
            inp.sample_weight,
            ranking=class_mode != "off",
            bins=class_bins,
            top_k=top_k,
            backend=backend,
        )
        return build_report(
            res.hard_matrix(),
            proba=res,
            walk=walk,
            zero_division=zero_division,
            ranking=made,
            kept=kept,
            extra=extra,
            class_ranking=class_mode,
        )
    t = validation.as_1d(y_true, "y_true")
    assert y_pred is not None  # check_inputs
    cm = ConfusionMatrix.from_predictions(t, y_pred, labels=labels, sample_weight=sample_weight, backend=backend)
    if confidence is not None and mode != "off":
        ok, conf = ranking_walk.user_confidence(t, y_pred, confidence)
        walk = ranking_walk.binned_walk(ok, conf, validation.weights(sample_weight, t.shape[0]), backend, bins)
    return build_report(cm, walk=walk, zero_division=zero_division, ranking=made)


def _grouped(
    y_true: ArrayLike,
    groups: ArrayLike | tuple[ArrayLike, ...],
    *,
    y_pred: ArrayLike | None,
    y_proba: ArrayLike | None,
    confidence: ArrayLike | None,
    labels: ArrayLike | None,
    sample_weight: ArrayLike | None,
    n_bins: int,
    zero_division: ZeroDivision,
    keep_confidence: bool,
    ranking: RankingMode | bool,
    ranking_bins: int,
    top_k: int,
    class_ranking: RankingMode | bool | None,
    max_groups: int | None,
    group_ranking_bins: int,
    backend: Backend,
) -> GroupedReport:
    """:func:`evaluate` with ``groups``: one grouped Evaluator fed the rows at once."""
    from cmetrics.streaming import Evaluator

    if keep_confidence:
        msg = "keep_confidence=True is not available with groups=; score without groups to keep the confidences"
        raise ValidationError(msg)
    validation.check_inputs("evaluate", y_pred, y_proba, confidence)
    validation.as_1d(y_true, "y_true")  # empty input is refused here as without groups
    ev = Evaluator(
        labels,
        n_bins=n_bins,
        zero_division=zero_division,
        ranking=ranking,
        ranking_bins=ranking_bins,
        top_k=top_k,
        class_ranking=class_ranking,
        group_by=True,
        max_groups=max_groups,
        group_ranking_bins=group_ranking_bins,
        backend=backend,
    )
    ev.update(y_true, y_pred=y_pred, y_proba=y_proba, confidence=confidence, sample_weight=sample_weight, groups=groups)
    return ev.grouped_report()

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
from cmetrics.exceptions import NotImplementedOptionError, ValidationError
from cmetrics.streaming.evaluator import Evaluator
from cmetrics.streaming.settings import DEFAULT_GROUP_RANKING_BINS, EvaluationSettings
from cmetrics.streaming.state_curves import state_curves
from cmetrics.uncertainty.resampling import add_intervals, check_bootstrap

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
    bootstrap: int | None = None,
    confidence_level: float = 0.95,
    seed: int = 0,
    curves: bool = False,
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
    bootstrap: int | None = None,
    confidence_level: float = 0.95,
    seed: int = 0,
    curves: bool = False,
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
    bootstrap: int | None = None,
    confidence_level: float = 0.95,
    seed: int = 0,
    curves: bool = False,
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

    With ``bootstrap=N`` each report also carries ``report.intervals``: the ``confidence_level``
    percentile intervals of its confusion-matrix metrics from ``N`` multinomial resamples of
    its counts (:func:`cmetrics.report_intervals`, seeded by ``seed``; milliseconds whatever
    the number of rows), in :meth:`Report.to_dict` and :meth:`Report.to_markdown` too; with
    ``groups``, one per group. The probabilistic metrics' intervals need the rows:
    :func:`cmetrics.bootstrap`.

    With ``curves=True`` the rows go through a :class:`cmetrics.Evaluator` (the same report;
    rows always validated) and the report keeps its curves (:attr:`Report.curves`: ROC,
    precision-recall and risk-coverage, decimated), which :meth:`Report.to_html` and the
    Displays' ``from_report`` draw; with ``groups``, the curves of all rows.

    Examples
    --------
    >>> r = evaluate([0, 1, 1], y_proba=[[0.7, 0.3], [0.4, 0.6], [0.6, 0.4]])
    >>> round(r.accuracy, 4), round(r.log_loss, 4)  # -(ln 0.7 + ln 0.6 + ln 0.4) / 3
    (0.6667, 0.5946)
    >>> g = evaluate([0, 1, 1, 0], y_pred=[0, 1, 0, 1], groups=[7, 7, 8, 8])
    >>> g.overall.accuracy, g[7].accuracy, g[8].accuracy
    (0.5, 1.0, 0.0)
    """
    if bootstrap is not None:
        check_bootstrap(bootstrap, confidence_level, "percentile", seed)
        if sample_weight is not None:
            msg = (
                "bootstrap= resamples the counts of an unweighted report; with sample_weight use "
                "cmetrics.bootstrap(y_true, ..., sample_weight=...), which resamples the rows"
            )
            raise NotImplementedOptionError(msg)
    settings = EvaluationSettings.make(
        n_bins=n_bins,
        zero_division=zero_division,
        ranking=ranking,
        ranking_bins=ranking_bins,
        top_k=top_k,
        class_ranking=class_ranking,
        max_groups=max_groups,
        group_ranking_bins=group_ranking_bins,
        backend=backend,
    )
    if curves:
        if keep_confidence:
            msg = "curves=True reads the curves off ranking states that keep no rows; drop keep_confidence=True"
            raise ValidationError(msg)
        result = _with_curves(y_true, y_pred, y_proba, confidence, labels, sample_weight, groups, settings)
    else:
        inputs = (y_true, y_pred, y_proba, confidence, labels, sample_weight)
        result = _evaluate(*inputs, validate, keep_confidence, groups, settings)
    if bootstrap is not None:
        add_intervals(result, bootstrap, confidence_level, seed)
    return result


def _evaluate(
    y_true: ArrayLike,
    y_pred: ArrayLike | None,
    y_proba: ArrayLike | None,
    confidence: ArrayLike | None,
    labels: ArrayLike | None,
    sample_weight: ArrayLike | None,
    validate: bool,
    keep_confidence: bool,
    groups: ArrayLike | tuple[ArrayLike, ...] | None,
    settings: EvaluationSettings,
) -> Report | GroupedReport:
    """:func:`evaluate` without the intervals."""
    backend, zero_division = settings.backend, settings.zero_division
    y_true, y_pred, y_proba, confidence, sample_weight, groups = validation.evaluation_inputs(
        "evaluate", y_true, y_pred, y_proba, confidence, sample_weight, groups
    )
    if groups is not None:
        if keep_confidence:
            msg = "keep_confidence=True is not available with groups=; score without groups to keep the confidences"
            raise ValidationError(msg)
        validation.as_1d(y_true, "y_true")  # empty input is refused here as without groups
        ev = Evaluator.from_settings(settings, labels, group_by=True)
        ev.update(
            y_true, y_pred=y_pred, y_proba=y_proba, confidence=confidence, sample_weight=sample_weight, groups=groups
        )
        return ev.grouped_report()
    if y_proba is not None:
        return _of_probabilities(y_true, y_proba, y_pred, labels, sample_weight, settings, validate, keep_confidence)
    t = validation.as_1d(y_true, "y_true")
    assert y_pred is not None  # check_inputs
    cm = ConfusionMatrix.from_predictions(t, y_pred, labels=labels, sample_weight=sample_weight, backend=backend)
    walk = None
    if confidence is not None and settings.ranking != "off":
        ok, conf = ranking_walk.user_confidence(t, y_pred, confidence)
        bins = settings.ranking_bins if settings.ranking == "approximate" else None
        walk = ranking_walk.binned_walk(ok, conf, validation.weights(sample_weight, t.shape[0]), backend, bins)
    return build_report(cm, walk=walk, zero_division=zero_division, ranking=_made(settings))


def _with_curves(
    y_true: ArrayLike,
    y_pred: ArrayLike | None,
    y_proba: ArrayLike | None,
    confidence: ArrayLike | None,
    labels: ArrayLike | None,
    sample_weight: ArrayLike | None,
    groups: ArrayLike | tuple[ArrayLike, ...] | None,
    settings: EvaluationSettings,
) -> Report | GroupedReport:
    """:func:`evaluate` through an Evaluator, its report keeping the curves of its states."""
    ev = Evaluator.from_settings(settings, labels, group_by=groups is not None)
    ev.update(y_true, y_pred=y_pred, y_proba=y_proba, confidence=confidence, sample_weight=sample_weight, groups=groups)
    if groups is None:
        return ev.report(curves=True)
    grouped = ev.grouped_report()
    grouped.overall.curves = state_curves(ev)
    return grouped


def _made(settings: EvaluationSettings) -> dict[str, int | str]:
    """How the report's selective-prediction ranking was made (its ``ranking`` record)."""
    if settings.ranking == "approximate":
        return {"mode": "approximate", "bins": settings.ranking_bins}
    return {"mode": "exact"}


def _of_probabilities(
    y_true: ArrayLike,
    y_proba: ArrayLike,
    y_pred: ArrayLike | None,
    labels: ArrayLike | None,
    sample_weight: ArrayLike | None,
    settings: EvaluationSettings,
    validate: bool,
    keep_confidence: bool,
) -> Report:
    """:func:`evaluate` of probabilities, without groups: one probability pass (with the exact
    ranking walk inside it), then the class-ranking values of the columns."""
    backend, mode = settings.backend, settings.ranking
    inp = probability_pass.prob_inputs(
        y_true, y_proba, labels=labels, y_pred=y_pred, sample_weight=sample_weight, backend=backend
    )
    # The exact walk runs inside the pass (the kernel sorts keys it writes as it reads);
    # the approximate one bins the kept confidences.
    acc = probability_pass.accumulate(
        inp,
        backend=backend,
        n_bins=settings.n_bins,
        validate=validate,
        keep_confidence=keep_confidence or mode == "approximate",
        rank=mode == "exact",
    )
    res = probability_pass.ProbResult(acc, inp.labels, inp.kind, backend)
    kept = None
    walk = acc.ranking
    if acc.correct is not None and acc.confidence is not None:
        if mode == "approximate":
            walk = ranking_walk.binned_walk(
                acc.correct, acc.confidence, inp.sample_weight, backend, settings.ranking_bins
            )
        kept = (acc.correct, acc.confidence) if keep_confidence else None
    extra = multiclass_ranking.report_values(
        inp.y_true,
        inp.y_proba,
        inp.sample_weight,
        ranking=settings.class_ranking != "off",
        bins=settings.ranking_bins if settings.class_ranking == "approximate" else None,
        top_k=settings.top_k,
        backend=backend,
    )
    return build_report(
        res.hard_matrix(),
        proba=res,
        walk=walk,
        zero_division=settings.zero_division,
        ranking=_made(settings),
        kept=kept,
        extra=extra,
        class_ranking=settings.class_ranking,
    )

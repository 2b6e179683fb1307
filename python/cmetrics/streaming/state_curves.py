"""The curves a merged state holds: ROC and precision-recall of each probability column, and
risk-coverage of the top-label confidence, read off the tie groups without the rows (binned
curves in the approximate modes)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from cmetrics._backend import resolve_backend
from cmetrics._base.aliases import F64, Backend
from cmetrics._kernels import Groups
from cmetrics._results.figures import Curve, decimate
from cmetrics.streaming.rows import RankingSummary, RowState

#: Past this many classes a report's curves are the averages only (one line per class would
#: not be read).
MAX_CLASS_CURVES = 10
#: The micro-average curve pools every column's tie groups; past this many groups in all it is
#: left out of a report's curves (the Displays' ``from_evaluator`` still draws it).
MAX_MICRO_GROUPS = 1 << 22


def group_counts(summary: RankingSummary) -> tuple[F64, F64, F64]:
    """``(fps, tps, thresholds)`` of a state's tie groups, from the highest score down (what
    :func:`cmetrics.confusion_matrix_at_thresholds` gives on the rows)."""
    pos = summary.w_pos if summary.w_pos is not None else summary.n_pos
    neg = summary.w_neg if summary.w_neg is not None else summary.n_neg
    tps = np.cumsum(np.asarray(pos, dtype=np.float64)[::-1])
    fps = np.cumsum(np.asarray(neg, dtype=np.float64)[::-1])
    return fps, tps, np.asarray(summary.values, dtype=np.float64)[::-1]


def collinear_kept(fps: F64, tps: F64) -> npt.NDArray[np.intp]:
    """scikit-learn's ``drop_intermediate`` rule for ROC curves: the points where the curve
    turns (and the two ends)."""
    if fps.size <= 2:
        return np.arange(fps.size)
    turn = np.logical_or(np.diff(fps, 2), np.diff(tps, 2))
    return np.flatnonzero(np.concatenate(([True], turn, [True])))


def merged_summaries(summaries: list[RankingSummary], backend: Backend = "auto") -> RankingSummary:
    """The tie groups of several columns pooled (the micro average): equal values add up;
    merged in pairs by the kernels' linear merge (a balanced tree)."""
    be = resolve_backend(backend)
    groups = [Groups(s.values, s.n_pos, s.n_neg, s.w_pos, s.w_neg) for s in summaries]
    while len(groups) > 1:
        pairs = zip(groups[::2], groups[1::2], strict=False)
        groups = [be.merge_groups(a, b) for a, b in pairs] + groups[len(groups) - len(groups) % 2 :]
    return RankingSummary(*groups[0])


def roc_of(summary: RankingSummary, drop_intermediate: bool = True) -> tuple[F64, F64]:
    """``(fpr, tpr)`` of a column's tie groups, from ``(0, 0)``."""
    fps, tps, _ = group_counts(summary)
    fps, tps = np.concatenate(([0.0], fps)), np.concatenate(([0.0], tps))
    keep = collinear_kept(fps, tps) if drop_intermediate else np.arange(fps.size)
    return fps[keep] / fps[-1], tps[keep] / tps[-1]


def precision_recall_of(summary: RankingSummary) -> tuple[F64, F64, float, float]:
    """``(precision, recall, average precision, prevalence)``, recall decreasing to 0."""
    fps, tps, _ = group_counts(summary)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(tps + fps > 0, tps / (tps + fps), 0.0)
    p, r = np.concatenate((precision[::-1], [1.0])), np.concatenate(((tps / tps[-1])[::-1], [0.0]))
    return p, r, float(-np.sum(np.diff(r) * p[:-1])), float(tps[-1] / (tps[-1] + fps[-1]))


def risk_coverage_of(summary: RankingSummary) -> tuple[F64, F64, float]:
    """``(coverage, risk, AURC)`` of the confidence groups (positives: the correct rows)."""
    wrong, right, _ = group_counts(summary)
    accepted = wrong + right
    coverage = accepted / accepted[-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        risk = np.where(accepted > 0, wrong / accepted, np.nan)
    return coverage, risk, float(np.nansum(np.diff(coverage, prepend=0.0) * risk))


def _trapezoid(x: F64, y: F64) -> float:
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2))


def _decimated(kind: str, label: str, x: F64, y: F64, value: float, name: str) -> Curve:
    keep = decimate(x, y, hull=kind == "roc")
    return Curve(kind, label, x[keep], y[keep], value, name)


def state_curves(state: RowState) -> list[Curve]:
    """The decimated curves of ``state``: risk-coverage of the confidence ranking; ROC and
    precision-recall of the positive class (two classes) or of each class (up to
    :data:`MAX_CLASS_CURVES`) and the micro average (up to :data:`MAX_MICRO_GROUPS` groups in
    all); the macro-average ROC (drawn as the mean
    of the decimated class curves; its AUC the mean of the classes' exact AUCs). Each area is
    computed on the full curve before it is decimated."""
    out: list[Curve] = []
    binned = " (binned)" if state.ranking == "approximate" else ""
    confidence = state.ranking_summary()
    if confidence is not None and len(confidence):
        cov, risk, area = risk_coverage_of(confidence)
        out.append(_decimated("risk_coverage", f"top-label confidence{binned}", cov, risk, area, "AURC"))
    columns = state.class_ranking_summaries()
    if not columns or state.labels is None:
        return out
    labels = [str(x) for x in state.labels]
    binned = " (binned)" if state.class_ranking == "approximate" else ""
    usable = [(lab, col) for lab, col in zip(labels, columns, strict=True) if _both_sides(col)]
    if len(columns) == 2:
        chosen = usable[1:] if len(usable) == 2 else []
    else:
        chosen = usable if len(columns) <= MAX_CLASS_CURVES else []
        if usable and sum(len(c) for c in columns) <= MAX_MICRO_GROUPS:
            chosen.append(("micro-average", merged_summaries(columns, state.backend)))
    rocs, prs = [], []
    for lab, col in chosen:
        fpr, tpr = roc_of(col)
        rocs.append(_decimated("roc", lab + binned, fpr, tpr, _trapezoid(fpr, tpr), "AUC"))
        p, r, ap, _ = precision_recall_of(col)
        prs.append(_decimated("precision_recall", lab + binned, r, p, ap, "AP"))
    if len(columns) > 2 and usable:
        per_class = (
            rocs[: len(usable)]
            if len(columns) <= MAX_CLASS_CURVES
            else [_decimated("roc", lab, *roc_of(col), 0.0, "AUC") for lab, col in usable]
        )
        aucs = (
            [c.value for c in per_class]
            if len(columns) <= MAX_CLASS_CURVES
            else [_trapezoid(*roc_of(col)) for _, col in usable]
        )
        grid = np.unique(np.concatenate([c.x for c in per_class]))
        tpr = np.mean([np.interp(grid, c.x, c.y) for c in per_class], axis=0)
        rocs.append(_decimated("roc", "macro-average" + binned, grid, tpr, float(np.mean(aucs)), "AUC"))
    return out + rocs + prs


def _both_sides(summary: RankingSummary) -> bool:
    pos = summary.w_pos if summary.w_pos is not None else summary.n_pos
    neg = summary.w_neg if summary.w_neg is not None else summary.n_neg
    return bool(np.sum(pos) > 0 and np.sum(neg) > 0)

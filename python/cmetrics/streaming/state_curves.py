"""The curves a merged state holds: ROC and precision-recall of each probability column, and
risk-coverage of the top-label confidence, read off the tie groups without the rows (binned
curves in the approximate modes)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from cmetrics._backend import resolve_backend
from cmetrics._base.aliases import F64, Backend
from cmetrics._kernels import BinaryRanking, CurvePoints, Groups
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


#: Points read off a ranking state for one curve (steps of the curve; a figure needs fewer).
CURVE_STEPS = 1 << 16


def auroc_of(walk: BinaryRanking) -> float:
    """The AUROC of a walk: ordered pairs plus half the tied ones."""
    return float(walk.ordered_share + walk.tied_share / 2)


def roc_points(points: CurvePoints, drop_intermediate: bool = True) -> tuple[F64, F64]:
    """``(fpr, tpr)`` from ``(0, 0)`` of a state's curve points."""
    fps, tps = np.concatenate(([0.0], points.fps)), np.concatenate(([0.0], points.tps))
    keep = collinear_kept(fps, tps) if drop_intermediate else np.arange(fps.size)
    return fps[keep] / fps[-1], tps[keep] / tps[-1]


def pr_points(points: CurvePoints) -> tuple[F64, F64, float]:
    """``(precision, recall, prevalence)``, recall decreasing to 0 (scikit-learn's layout)."""
    fps, tps = points.fps, points.tps
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(tps + fps > 0, tps / (tps + fps), 0.0)
    p, r = np.concatenate((precision[::-1], [1.0])), np.concatenate(((tps / tps[-1])[::-1], [0.0]))
    return p, r, float(tps[-1] / (tps[-1] + fps[-1]))


def risk_coverage_points(points: CurvePoints) -> tuple[F64, F64]:
    """``(coverage, risk)`` of the confidence state's points (positives: the correct rows)."""
    accepted = points.fps + points.tps
    with np.errstate(invalid="ignore", divide="ignore"):
        risk = np.where(accepted > 0, points.fps / accepted, np.nan)
    return accepted / accepted[-1], risk


def summary_points(summary: RankingSummary) -> CurvePoints:
    """Every point of tie groups held as arrays (the pooled columns of a micro average)."""
    fps, tps, thresholds = group_counts(summary)
    return CurvePoints(fps, tps, thresholds)


def _decimated(kind: str, label: str, x: F64, y: F64, value: float, name: str) -> Curve:
    keep = decimate(x, y, hull=kind == "roc")
    return Curve(kind, label, x[keep], y[keep], value, name)


def state_curves(state: RowState) -> list[Curve]:
    """The decimated curves of ``state``, read off its ranking states (at most
    :data:`CURVE_STEPS` points each, areas from the exact walks): risk-coverage of the
    confidence ranking; ROC and precision-recall of the positive class (two classes) or of each
    class (up to :data:`MAX_CLASS_CURVES`) and the micro average (up to
    :data:`MAX_MICRO_GROUPS` groups in all); the macro-average ROC (drawn as the mean of the
    class curves, its AUC the mean of the classes' AUCs)."""
    out: list[Curve] = []
    binned = " (binned)" if state.ranking == "approximate" else ""
    confidence = state.ranking_curve(CURVE_STEPS)
    if confidence is not None:
        cov, risk = risk_coverage_points(confidence[0])
        out.append(_decimated("risk_coverage", f"top-label confidence{binned}", cov, risk, confidence[1].aurc, "AURC"))
    labels = [str(x) for x in state.labels or []]
    wanted = [1] if len(labels) == 2 else list(range(len(labels)))  # two classes: the second's curve
    read = [(labels[k], state.ranking_curve(CURVE_STEPS, k)) for k in wanted]
    columns = [(lab, r) for lab, r in read if r is not None and _two_sided(r[0])]
    if not columns:
        return out
    binned = " (binned)" if state.class_ranking == "approximate" else ""
    chosen = [(lab, pts, auroc_of(w), w.average_precision) for lab, (pts, w) in columns]
    if len(labels) > MAX_CLASS_CURVES:
        chosen = []
    rocs = [_decimated("roc", lab + binned, *roc_points(pts), auc, "AUC") for lab, pts, auc, _ in chosen]
    prs = [_decimated("precision_recall", lab + binned, *_pr(pts), ap, "AP") for lab, pts, _, ap in chosen]
    if len(labels) > 2:
        summaries = state.class_ranking_summaries() or []
        if sum(len(c) for c in summaries) <= MAX_MICRO_GROUPS:
            micro = merged_summaries(summaries, state.backend)
            pts, walk = summary_points(micro), resolve_backend(state.backend).walk_groups(micro.groups())
            rocs.append(_decimated("roc", "micro-average" + binned, *roc_points(pts), auroc_of(walk), "AUC"))
            prs.append(
                _decimated("precision_recall", "micro-average" + binned, *_pr(pts), walk.average_precision, "AP")
            )
        per_class = [roc_points(pts) for _, (pts, _) in columns]
        grid = np.unique(np.concatenate([f for f, _ in per_class]))
        tpr = np.mean([np.interp(grid, f, r) for f, r in per_class], axis=0)
        macro = float(np.mean([auroc_of(w) for _, (_, w) in columns]))
        rocs.append(_decimated("roc", "macro-average" + binned, grid, tpr, macro, "AUC"))
    return out + rocs + prs


def _pr(points: CurvePoints) -> tuple[F64, F64]:
    """``(recall, precision)``: the precision-recall curve as drawn (x, y)."""
    p, r, _ = pr_points(points)
    return r, p


def _two_sided(points: CurvePoints) -> bool:
    return bool(points.fps.size and points.fps[-1] > 0 and points.tps[-1] > 0)

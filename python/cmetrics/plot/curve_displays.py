"""Curve Displays with scikit-learn's contract: ROC, precision-recall, DET and risk-coverage.

Each holds the curve's values (equal to scikit-learn's Display of the same rows), draws on
``plot(ax=None, ...)`` and keeps ``ax_``, ``figure_`` and the lines (``line_``: the Line2D of a
single curve, else the list; ``lines_``: always the list). Beyond scikit-learn: a multiclass
``y_score`` draws one-vs-rest curves (one per class, plus the micro and macro averages), and
``from_evaluator`` draws from a merged :class:`cmetrics.Evaluator`'s tie groups, without the rows
(the approximate ranking modes draw the binned curve and say so in the legend).
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._backend import resolve_backend
from cmetrics._base.aliases import F64, Label
from cmetrics._kernels import BinaryRanking, CurvePoints
from cmetrics._results.figures import Curve, draw_chance, draw_curve, new_axes, square_unit_axes
from cmetrics._results.report import Report
from cmetrics.curves import auc, det_curve, precision_recall_curve, roc_curve
from cmetrics.exceptions import ValidationError
from cmetrics.plot.responses import ResponseMethod, estimator_scores, score_classes
from cmetrics.ranking import aurc, risk_coverage_curve
from cmetrics.streaming.evaluator import Evaluator
from cmetrics.streaming.state_curves import (
    CURVE_STEPS,
    auroc_of,
    merged_summaries,
    pr_points,
    risk_coverage_points,
    roc_points,
    summary_points,
)

__all__ = ["DetCurveDisplay", "PrecisionRecallDisplay", "RiskCoverageDisplay", "RocCurveDisplay"]

_D = TypeVar("_D", bound="_CurveDisplay")
Curves = F64 | list[F64]
Names = str | list[str] | None
CurveKwargs = dict[str, Any] | list[dict[str, Any]] | None


def _listed(x: Any) -> list[Any]:
    return list(x) if isinstance(x, list) else [x]


class _CurveDisplay:
    """Drawing shared by the curve Displays: one line per curve, legend values, chance level."""

    _xlabel = ""
    _ylabel = ""
    _score_name = ""
    _drawstyle = "default"
    #: Whether decimation keeps the curve's upper hull (the ROC envelope).
    _hull = False
    name: Names

    def _curves(self) -> list[tuple[F64, F64, float | None]]:  # pragma: no cover - each Display's own
        raise NotImplementedError

    def _chance(self, ax: Any, kw: dict[str, Any]) -> Any:  # pragma: no cover - each Display's own
        raise NotImplementedError

    def _draw(
        self: _D,
        ax: Any,
        name: Names,
        curve_kwargs: CurveKwargs,
        plot_chance_level: bool,
        chance_level_kw: dict[str, Any] | None,
        despine: bool,
    ) -> _D:
        ax, fig = new_axes(ax, type(self).__name__)
        curves = self._curves()
        names = _listed(self.name if name is None else name)
        if len(names) == 1 and len(curves) > 1:
            names = names * len(curves)
        kws = _listed(curve_kwargs or {})
        if len(names) != len(curves) or len(kws) not in (1, len(curves)):
            msg = f"{len(curves)} curves: pass one name and one dict of curve_kwargs per curve (or one for all)"
            raise ValidationError(msg)
        lines = []
        for i, (x, y, score) in enumerate(curves):
            kw = {"drawstyle": self._drawstyle, **kws[i if len(kws) > 1 else 0]}
            label = _legend(names[i], self._score_name, score)
            lines.append(draw_curve(ax, x, y, label, hull=self._hull, **kw))
        self.lines_ = lines
        self.line_: Any = lines[0] if len(lines) == 1 else lines
        self.chance_level_ = self._chance(ax, chance_level_kw or {}) if plot_chance_level else None
        self._axes(ax)
        if any(line.get_label() and not line.get_label().startswith("_") for line in lines):
            ax.legend(loc="best")
        if despine:
            for side in ("top", "right"):
                ax.spines[side].set_visible(False)
        self.ax_, self.figure_ = ax, fig
        return self

    def _axes(self, ax: Any) -> None:
        square_unit_axes(ax, self._xlabel, self._ylabel)


def _legend(name: str | None, score_name: str, score: float | None) -> str | None:
    if score is None:
        return name
    value = f"{score_name} = {score:0.2f}"
    return f"{name} ({value})" if name else value


def _binned(ev: Evaluator, which: str) -> str:
    """The legend note of an approximate ranking state."""
    mode = ev.settings.class_ranking if which == "class" else ev.settings.ranking
    return f", binned: {ev.settings.ranking_bins} bins" if mode == "approximate" else ""


def _class_curves(
    ev: Evaluator, caller: str, pos_label: Label | None = None
) -> tuple[list[str], list[tuple[CurvePoints, BinaryRanking]]]:
    """The labels, and each probability column's curve points and exact walk (with two
    classes, the column of ``pos_label`` alone)."""
    labels = [str(x) for x in ev.labels or []]
    wanted = [_pos_index(labels, pos_label)] if len(labels) == 2 else range(len(labels))
    read = [ev.ranking_curve(CURVE_STEPS, k) for k in wanted]
    if not labels or any(r is None for r in read):
        msg = (
            f"{caller}.from_evaluator needs an Evaluator fed probabilities with class ranking on "
            "(class_ranking='exact', or 'approximate' for a binned curve)"
        )
        raise ValidationError(msg)
    return labels, [r for r in read if r is not None]


def _report_curves(report: Report, kind: str, caller: str) -> list[Curve]:
    """The curves of ``kind`` a report holds (``Evaluator.report(curves=True)``)."""
    chosen = [c for c in report.curves or [] if c.kind == kind]
    if not chosen:
        msg = (
            f"{caller}.from_report needs a report with curves: Evaluator.report(curves=True) (or cmetrics score "
            "--format html); from rows, use from_predictions"
        )
        raise ValidationError(msg)
    return chosen


def _pos_index(labels: list[str], pos_label: Label | None) -> int:
    if pos_label is None:
        return 1
    if str(pos_label) not in labels:
        msg = f"pos_label={pos_label!r} is not one of the labels {labels}"
        raise ValidationError(msg)
    return labels.index(str(pos_label))


# -- ROC ------------------------------------------------------------------------------------


class RocCurveDisplay(_CurveDisplay):
    """ROC curve(s): ``fpr``, ``tpr`` and ``roc_auc`` (lists of them for one-vs-rest).

    >>> import numpy as np
    >>> d = RocCurveDisplay.from_predictions([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> d.fpr.tolist(), d.tpr.tolist(), d.roc_auc
    ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0], 0.75)
    >>> d.line_.get_label()
    'AUC = 0.75'
    """

    _xlabel = "False Positive Rate"
    _ylabel = "True Positive Rate"
    _score_name = "AUC"
    _hull = True

    def __init__(
        self, *, fpr: Curves, tpr: Curves, roc_auc: float | list[float] | None = None, name: Names = None,
        pos_label: Label | None = None,
    ) -> None:  # fmt: skip
        self.fpr, self.tpr, self.roc_auc, self.name, self.pos_label = fpr, tpr, roc_auc, name, pos_label

    def _curves(self) -> list[tuple[F64, F64, float | None]]:
        aucs = _listed(self.roc_auc) if self.roc_auc is not None else [None] * len(_listed(self.fpr))
        return list(zip(_listed(self.fpr), _listed(self.tpr), aucs, strict=True))

    def _chance(self, ax: Any, kw: dict[str, Any]) -> Any:
        return draw_chance(ax, (0, 1), (0, 1), "Chance level (AUC = 0.5)", **kw)

    def plot(
        self, ax: Any = None, *, name: Names = None, curve_kwargs: CurveKwargs = None, plot_chance_level: bool = False,
        chance_level_kw: dict[str, Any] | None = None, despine: bool = False,
    ) -> RocCurveDisplay:  # fmt: skip
        """Draw on ``ax`` (default: a new figure); returns the Display."""
        return self._draw(ax, name, curve_kwargs, plot_chance_level, chance_level_kw, despine)

    @classmethod
    def from_predictions(
        cls, y_true: ArrayLike, y_score: ArrayLike, *, sample_weight: ArrayLike | None = None,
        drop_intermediate: bool = True, pos_label: Label | None = None, name: Names = None, ax: Any = None,
        curve_kwargs: CurveKwargs = None, plot_chance_level: bool = False,
        chance_level_kw: dict[str, Any] | None = None, despine: bool = False, labels: ArrayLike | None = None,
    ) -> RocCurveDisplay:  # fmt: skip
        """The ROC curve of ``y_score`` against ``y_true`` (scikit-learn's values); a 2-D
        ``y_score`` of three or more columns (one per class of ``labels``, default the sorted
        labels of ``y_true``) gives one curve per class, the micro and the macro average."""
        t, s = np.asarray(y_true), np.asarray(y_score)
        if s.ndim == 2 and s.shape[1] > 2:
            classes = score_classes(t, s, labels)
            per = [roc_curve(t == c, s[:, j], sample_weight=sample_weight, drop_intermediate=drop_intermediate)
                   for j, c in enumerate(classes)]  # fmt: skip
            curves = [(f, r) for f, r, _ in per]
            w = None if sample_weight is None else np.repeat(np.asarray(sample_weight, dtype=np.float64), s.shape[1])
            onehot = (t[:, None] == classes[None, :]).ravel()
            micro = roc_curve(onehot, s.ravel(), sample_weight=w, drop_intermediate=drop_intermediate)[:2]
            d = cls._one_vs_rest(curves, micro, [str(c) for c in classes.tolist()], name)
        else:
            if s.ndim == 2:
                s = s[:, _pos_index([str(c) for c in np.unique(t).tolist()], pos_label)]
            fpr, tpr, _ = roc_curve(t, s, pos_label=pos_label, sample_weight=sample_weight,
                                    drop_intermediate=drop_intermediate)  # fmt: skip
            d = cls(fpr=fpr, tpr=tpr, roc_auc=auc(fpr, tpr), name=name, pos_label=pos_label)
        return d.plot(ax, curve_kwargs=curve_kwargs, plot_chance_level=plot_chance_level,
                      chance_level_kw=chance_level_kw, despine=despine)  # fmt: skip

    @classmethod
    def _one_vs_rest(
        cls, curves: list[tuple[F64, F64]], micro: tuple[F64, F64], classes: list[str], name: Names,
        aucs: list[float] | None = None, micro_auc: float | None = None,
    ) -> RocCurveDisplay:  # fmt: skip
        """One curve per class, the micro average (the pooled columns) and the macro average
        (the mean true positive rate on the union of the false positive rates; its AUC the mean
        of the classes')."""
        grid = np.unique(np.concatenate([f for f, _ in curves]))
        macro_tpr = np.mean([np.interp(grid, f, r) for f, r in curves], axis=0)
        aucs = [auc(f, r) for f, r in curves] if aucs is None else aucs
        prefix = f"{name}: " if isinstance(name, str) else ""
        names = [f"{prefix}{c}" for c in classes] + [f"{prefix}micro-average", f"{prefix}macro-average"]
        return cls(
            fpr=[f for f, _ in curves] + [micro[0], grid],
            tpr=[r for _, r in curves] + [micro[1], macro_tpr],
            roc_auc=[*aucs, auc(*micro) if micro_auc is None else micro_auc, float(np.mean(aucs))],
            name=names,
        )

    @classmethod
    def from_estimator(
        cls, estimator: Any, X: ArrayLike, y: ArrayLike, *, sample_weight: ArrayLike | None = None,  # noqa: N803
        drop_intermediate: bool = True, response_method: ResponseMethod = "auto", pos_label: Label | None = None,
        name: Names = None, ax: Any = None, curve_kwargs: CurveKwargs = None, plot_chance_level: bool = False,
        chance_level_kw: dict[str, Any] | None = None, despine: bool = False,
    ) -> RocCurveDisplay:  # fmt: skip
        """:meth:`from_predictions` of a fitted classifier's scores on ``X`` (``name``: the
        estimator's class name by default)."""
        score, classes, pos = estimator_scores(estimator, X, response_method, pos_label)
        return cls.from_predictions(
            y, score, sample_weight=sample_weight, drop_intermediate=drop_intermediate, pos_label=pos,
            name=type(estimator).__name__ if name is None else name, ax=ax, curve_kwargs=curve_kwargs,
            plot_chance_level=plot_chance_level, chance_level_kw=chance_level_kw, despine=despine,
            labels=classes if classes.size > 2 else None,
        )  # fmt: skip

    @classmethod
    def from_report(
        cls, report: Report, *, ax: Any = None, curve_kwargs: CurveKwargs = None, plot_chance_level: bool = False,
        chance_level_kw: dict[str, Any] | None = None, despine: bool = False,
    ) -> RocCurveDisplay:  # fmt: skip
        """The ROC curves a report holds (decimated, with their exact AUCs)."""
        curves = _report_curves(report, "roc", "RocCurveDisplay")
        d = cls(fpr=[c.x for c in curves], tpr=[c.y for c in curves], roc_auc=[c.value for c in curves],
                name=[c.label for c in curves])  # fmt: skip
        return d.plot(ax, curve_kwargs=curve_kwargs, plot_chance_level=plot_chance_level,
                      chance_level_kw=chance_level_kw, despine=despine)  # fmt: skip

    @classmethod
    def from_evaluator(
        cls, evaluator: Evaluator, *, pos_label: Label | None = None, drop_intermediate: bool = True,
        name: Names = None, ax: Any = None, curve_kwargs: CurveKwargs = None, plot_chance_level: bool = False,
        chance_level_kw: dict[str, Any] | None = None, despine: bool = False,
    ) -> RocCurveDisplay:  # fmt: skip
        """The ROC curve(s) held by a merged Evaluator's class-ranking state, without the rows:
        with two classes the curve of ``pos_label`` (default the second label), else one per
        class and the averages."""
        labels, columns = _class_curves(evaluator, "RocCurveDisplay", pos_label)
        note = _binned(evaluator, "class")
        if len(labels) == 2:
            pts, walk = columns[0]
            fpr, tpr = roc_points(pts, drop_intermediate)
            base = name if isinstance(name, str) else None
            label = f"{base or ''}{note.lstrip(', ') if not base else note}" or None
            d = cls(fpr=fpr, tpr=tpr, roc_auc=auroc_of(walk), name=label, pos_label=pos_label)
        else:
            summaries = evaluator.class_ranking_summaries() or []
            micro = merged_summaries(summaries, evaluator.settings.backend)
            micro_walk = resolve_backend(evaluator.settings.backend).walk_groups(micro.groups())
            curves = [roc_points(pts, drop_intermediate) for pts, _ in columns]
            d = cls._one_vs_rest(
                curves, roc_points(summary_points(micro), drop_intermediate), [f"{c}{note}" for c in labels], name,
                [auroc_of(w) for _, w in columns], auroc_of(micro_walk),
            )  # fmt: skip
        return d.plot(ax, curve_kwargs=curve_kwargs, plot_chance_level=plot_chance_level,
                      chance_level_kw=chance_level_kw, despine=despine)  # fmt: skip


# -- precision-recall ------------------------------------------------------------------------


def _ap(precision: F64, recall: F64) -> float:
    """Average precision of a curve with recall decreasing: ``sum (R_k - R_{k+1}) P_k``."""
    return float(-np.sum(np.diff(recall) * precision[:-1]))


class PrecisionRecallDisplay(_CurveDisplay):
    """Precision-recall curve(s): ``precision``, ``recall``, ``average_precision`` and the
    positive class's prevalence (the chance level).

    >>> d = PrecisionRecallDisplay.from_predictions([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> [round(p, 4) for p in d.precision.tolist()], d.recall.tolist(), round(d.average_precision, 4)
    ([0.5, 0.6667, 0.5, 1.0, 1.0], [1.0, 1.0, 0.5, 0.5, 0.0], 0.8333)
    """

    _xlabel = "Recall"
    _ylabel = "Precision"
    _score_name = "AP"
    _drawstyle = "steps-post"

    def __init__(
        self, precision: Curves, recall: Curves, *, average_precision: float | list[float] | None = None,
        name: Names = None, pos_label: Label | None = None, prevalence_pos_label: float | list[float] | None = None,
    ) -> None:  # fmt: skip
        self.precision, self.recall, self.average_precision = precision, recall, average_precision
        self.name, self.pos_label, self.prevalence_pos_label = name, pos_label, prevalence_pos_label

    def _curves(self) -> list[tuple[F64, F64, float | None]]:
        aps = (
            _listed(self.average_precision)
            if self.average_precision is not None
            else [None] * len(_listed(self.recall))
        )
        return list(zip(_listed(self.recall), _listed(self.precision), aps, strict=True))

    def _chance(self, ax: Any, kw: dict[str, Any]) -> Any:
        prevalence = _listed(self.prevalence_pos_label)[0]
        if prevalence is None:
            msg = "plot_chance_level=True needs prevalence_pos_label"
            raise ValidationError(msg)
        return draw_chance(ax, (0, 1), (prevalence, prevalence), f"Chance level (AP = {prevalence:0.2f})", **kw)

    def plot(
        self, ax: Any = None, *, name: Names = None, curve_kwargs: CurveKwargs = None, plot_chance_level: bool = False,
        chance_level_kw: dict[str, Any] | None = None, despine: bool = False,
    ) -> PrecisionRecallDisplay:  # fmt: skip
        """Draw on ``ax`` (default: a new figure); returns the Display."""
        return self._draw(ax, name, curve_kwargs, plot_chance_level, chance_level_kw, despine)

    @classmethod
    def _of_counts(cls, fps: F64, tps: F64, name: str | None, pos_label: Label | None) -> PrecisionRecallDisplay:
        with np.errstate(invalid="ignore", divide="ignore"):
            precision = np.where(tps + fps > 0, tps / (tps + fps), 0.0)
        p, r = np.concatenate((precision[::-1], [1.0])), np.concatenate(((tps / tps[-1])[::-1], [0.0]))
        prevalence = float(tps[-1] / (tps[-1] + fps[-1]))
        return cls(p, r, average_precision=_ap(p, r), name=name, pos_label=pos_label, prevalence_pos_label=prevalence)

    @classmethod
    def from_predictions(
        cls, y_true: ArrayLike, y_score: ArrayLike, *, sample_weight: ArrayLike | None = None,
        drop_intermediate: bool = False, pos_label: Label | None = None, name: Names = None, ax: Any = None,
        curve_kwargs: CurveKwargs = None, plot_chance_level: bool = False,
        chance_level_kw: dict[str, Any] | None = None, despine: bool = False, labels: ArrayLike | None = None,
    ) -> PrecisionRecallDisplay:  # fmt: skip
        """The precision-recall curve of ``y_score`` against ``y_true`` (scikit-learn's values);
        a 2-D ``y_score`` of three or more columns gives one curve per class and the micro average."""
        t, s = np.asarray(y_true), np.asarray(y_score)
        kw: dict[str, Any] = {"sample_weight": sample_weight, "drop_intermediate": drop_intermediate}
        if s.ndim == 2 and s.shape[1] > 2:
            classes = score_classes(t, s, labels)
            w = None if sample_weight is None else np.repeat(np.asarray(sample_weight, dtype=np.float64), s.shape[1])
            onehot = (t[:, None] == classes[None, :]).ravel()
            pairs = [(t == c, s[:, j], sample_weight) for j, c in enumerate(classes)] + [(onehot, s.ravel(), w)]
            curves, aps, prevalences = [], [], []
            for truth, score, weight in pairs:
                p, r, _ = precision_recall_curve(
                    truth, score, sample_weight=weight, drop_intermediate=drop_intermediate
                )
                curves.append((p, r))
                aps.append(_ap(p, r))
                prevalences.append(float(np.mean(truth)))
            prefix = f"{name}: " if isinstance(name, str) else ""
            names = [f"{prefix}{c}" for c in classes.tolist()] + [f"{prefix}micro-average"]
            d = cls([p for p, _ in curves], [r for _, r in curves], average_precision=aps, name=names,
                    prevalence_pos_label=prevalences)  # fmt: skip
        else:
            if s.ndim == 2:
                s = s[:, _pos_index([str(c) for c in np.unique(t).tolist()], pos_label)]
            p, r, _ = precision_recall_curve(t, s, pos_label=pos_label, **kw)
            # scikit-learn's chance level: the share of positive rows, whatever their weights.
            prevalence = float(np.mean(t == (pos_label if pos_label is not None else np.unique(t)[-1])))
            d = cls(p, r, average_precision=_ap(p, r), name=name, pos_label=pos_label, prevalence_pos_label=prevalence)
        return d.plot(ax, curve_kwargs=curve_kwargs, plot_chance_level=plot_chance_level,
                      chance_level_kw=chance_level_kw, despine=despine)  # fmt: skip

    @classmethod
    def from_estimator(
        cls, estimator: Any, X: ArrayLike, y: ArrayLike, *, sample_weight: ArrayLike | None = None,  # noqa: N803
        drop_intermediate: bool = False, response_method: ResponseMethod = "auto", pos_label: Label | None = None,
        name: Names = None, ax: Any = None, curve_kwargs: CurveKwargs = None, plot_chance_level: bool = False,
        chance_level_kw: dict[str, Any] | None = None, despine: bool = False,
    ) -> PrecisionRecallDisplay:  # fmt: skip
        """:meth:`from_predictions` of a fitted classifier's scores on ``X``."""
        score, classes, pos = estimator_scores(estimator, X, response_method, pos_label)
        return cls.from_predictions(
            y, score, sample_weight=sample_weight, drop_intermediate=drop_intermediate, pos_label=pos,
            name=type(estimator).__name__ if name is None else name, ax=ax, curve_kwargs=curve_kwargs,
            plot_chance_level=plot_chance_level, chance_level_kw=chance_level_kw, despine=despine,
            labels=classes if classes.size > 2 else None,
        )  # fmt: skip

    @classmethod
    def from_report(
        cls, report: Report, *, ax: Any = None, curve_kwargs: CurveKwargs = None, despine: bool = False,
    ) -> PrecisionRecallDisplay:  # fmt: skip
        """The precision-recall curves a report holds (decimated, with their exact APs)."""
        curves = _report_curves(report, "precision_recall", "PrecisionRecallDisplay")
        d = cls([c.y for c in curves], [c.x for c in curves], average_precision=[c.value for c in curves],
                name=[c.label for c in curves])  # fmt: skip
        return d.plot(ax, curve_kwargs=curve_kwargs, despine=despine)

    @classmethod
    def from_evaluator(
        cls, evaluator: Evaluator, *, pos_label: Label | None = None, name: Names = None, ax: Any = None,
        curve_kwargs: CurveKwargs = None, plot_chance_level: bool = False,
        chance_level_kw: dict[str, Any] | None = None, despine: bool = False,
    ) -> PrecisionRecallDisplay:  # fmt: skip
        """The precision-recall curve(s) of a merged Evaluator's class-ranking state (the class
        ``pos_label`` with two classes, else one per class and the micro average)."""
        labels, columns = _class_curves(evaluator, "PrecisionRecallDisplay", pos_label)
        note = _binned(evaluator, "class")
        if len(labels) == 2:
            pts, walk = columns[0]
            p, r, prevalence = pr_points(pts)
            base = name if isinstance(name, str) else ""
            label = (base + note if base else note.lstrip(", ")) or None
            d = cls(p, r, average_precision=walk.average_precision, name=label, pos_label=pos_label,
                    prevalence_pos_label=prevalence)  # fmt: skip
        else:
            summaries = evaluator.class_ranking_summaries() or []
            micro = merged_summaries(summaries, evaluator.settings.backend)
            micro_walk = resolve_backend(evaluator.settings.backend).walk_groups(micro.groups())
            parts = [(pr_points(pts), w.average_precision) for pts, w in columns]
            parts.append((pr_points(summary_points(micro)), micro_walk.average_precision))
            prefix = f"{name}: " if isinstance(name, str) else ""
            d = cls(
                [p for (p, _, _), _ in parts], [r for (_, r, _), _ in parts],
                average_precision=[ap for _, ap in parts],
                name=[f"{prefix}{c}{note}" for c in labels] + [f"{prefix}micro-average{note}"],
                prevalence_pos_label=[prev for (_, _, prev), _ in parts],
            )  # fmt: skip
        return d.plot(ax, curve_kwargs=curve_kwargs, plot_chance_level=plot_chance_level,
                      chance_level_kw=chance_level_kw, despine=despine)  # fmt: skip


# -- DET ---------------------------------------------------------------------------------------


class DetCurveDisplay(_CurveDisplay):
    """Detection error tradeoff curve: ``fpr`` and ``fnr`` (scikit-learn's ``det_curve``), drawn
    on normal-deviate axes.

    >>> d = DetCurveDisplay.from_predictions([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> d.fpr.tolist(), d.fnr.tolist()
    ([0.5, 0.5, 0.0], [0.0, 0.5, 0.5])
    """

    _xlabel = "False Positive Rate"
    _ylabel = "False Negative Rate"

    def __init__(self, *, fpr: F64, fnr: F64, name: str | None = None, pos_label: Label | None = None) -> None:
        self.fpr, self.fnr, self.name, self.pos_label = fpr, fnr, name, pos_label

    def _curves(self) -> list[tuple[F64, F64, float | None]]:
        from scipy.special import ndtri  # scipy's special functions, imported where a figure is drawn

        with np.errstate(divide="ignore"):
            return [(ndtri(np.asarray(self.fpr)), ndtri(np.asarray(self.fnr)), None)]

    def _chance(self, ax: Any, kw: dict[str, Any]) -> Any:
        return draw_chance(ax, (-3, 3), (3, -3), "Chance level", **kw)

    def _axes(self, ax: Any) -> None:
        from scipy.special import ndtri  # (the same)

        ticks = [0.001, 0.01, 0.05, 0.20, 0.5, 0.80, 0.95, 0.99, 0.999]
        at = ndtri(ticks)
        names = [f"{t:.0%}" if (100 * t).is_integer() else f"{t:.1%}" for t in ticks]
        ax.set(xlabel=self._xlabel, ylabel=self._ylabel, xlim=(-3, 3), ylim=(-3, 3))
        ax.set_xticks(at, labels=names)
        ax.set_yticks(at, labels=names)

    def plot(self, ax: Any = None, *, name: str | None = None, plot_chance_level: bool = False,
             chance_level_kw: dict[str, Any] | None = None, **kwargs: Any) -> DetCurveDisplay:  # fmt: skip
        """Draw on ``ax`` (default: a new figure); ``kwargs`` go to the line."""
        return self._draw(ax, name, kwargs or None, plot_chance_level, chance_level_kw, False)

    @classmethod
    def from_predictions(
        cls, y_true: ArrayLike, y_score: ArrayLike, *, sample_weight: ArrayLike | None = None,
        drop_intermediate: bool = True, pos_label: Label | None = None, name: str | None = None, ax: Any = None,
        plot_chance_level: bool = False, chance_level_kw: dict[str, Any] | None = None, **kwargs: Any,
    ) -> DetCurveDisplay:  # fmt: skip
        """The DET curve of binary ``y_score`` against ``y_true`` (scikit-learn's values)."""
        fpr, fnr, _ = det_curve(y_true, y_score, pos_label=pos_label, sample_weight=sample_weight,
                                drop_intermediate=drop_intermediate)  # fmt: skip
        d = cls(fpr=fpr, fnr=fnr, name=name, pos_label=pos_label)
        return d.plot(ax, plot_chance_level=plot_chance_level, chance_level_kw=chance_level_kw, **kwargs)

    @classmethod
    def from_estimator(
        cls, estimator: Any, X: ArrayLike, y: ArrayLike, *, sample_weight: ArrayLike | None = None,  # noqa: N803
        drop_intermediate: bool = True, response_method: ResponseMethod = "auto", pos_label: Label | None = None,
        name: str | None = None, ax: Any = None, **kwargs: Any,
    ) -> DetCurveDisplay:  # fmt: skip
        """:meth:`from_predictions` of a fitted binary classifier's scores on ``X``."""
        score, _, pos = estimator_scores(estimator, X, response_method, pos_label)
        return cls.from_predictions(
            y, score, sample_weight=sample_weight, drop_intermediate=drop_intermediate, pos_label=pos,
            name=type(estimator).__name__ if name is None else name, ax=ax, **kwargs,
        )  # fmt: skip

    @classmethod
    def from_evaluator(
        cls, evaluator: Evaluator, *, pos_label: Label | None = None, name: str | None = None, ax: Any = None,
        **kwargs: Any,
    ) -> DetCurveDisplay:  # fmt: skip
        """The DET curve of a merged two-class Evaluator's class-ranking state (the column of
        ``pos_label``, default the second label), without the rows."""
        labels, columns = _class_curves(evaluator, "DetCurveDisplay", pos_label)
        if len(labels) != 2:
            msg = f"DetCurveDisplay.from_evaluator draws a binary curve; this Evaluator has {len(labels)} classes"
            raise ValidationError(msg)
        pts = columns[0][0]
        fps, tps = np.concatenate(([0.0], pts.fps)), np.concatenate(([0.0], pts.tps))
        # det_curve's ends: from the last threshold without false positives to the first
        # without false negatives.
        right = int(np.searchsorted(fps, fps[0], side="right"))
        keep = slice(right - 1 if right > 0 else None, int(np.searchsorted(tps, tps[-1])) + 1)
        fpr, fnr = fps[keep][::-1] / fps[-1], (tps[-1] - tps)[keep][::-1] / tps[-1]
        note = _binned(evaluator, "class").lstrip(", ")
        label = f"{name} ({note})" if name and note else name or note or None
        return cls(fpr=fpr, fnr=fnr, name=label, pos_label=pos_label).plot(ax, **kwargs)


# -- risk-coverage -------------------------------------------------------------------------------


class RiskCoverageDisplay(_CurveDisplay):
    """Selective risk against coverage: predictions accepted from the most confident down
    (tied confidences together), the error rate among the accepted; AURC in the legend.

    >>> d = RiskCoverageDisplay.from_predictions([1, 1, 0, 1], [0.9, 0.8, 0.7, 0.6], y_pred=[1, 1, 1, 1])
    >>> d.coverage.tolist(), [round(r, 4) for r in d.risk.tolist()], round(d.aurc, 4)
    ([0.25, 0.5, 0.75, 1.0], [0.0, 0.0, 0.3333, 0.25], 0.1458)
    """

    _xlabel = "Coverage"
    _ylabel = "Selective risk"
    _score_name = "AURC"

    def __init__(self, *, coverage: F64, risk: F64, aurc: float | None = None, name: str | None = None) -> None:
        self.coverage, self.risk, self.aurc, self.name = coverage, risk, aurc, name

    def _curves(self) -> list[tuple[F64, F64, float | None]]:
        return [(self.coverage, self.risk, self.aurc)]

    def _chance(self, ax: Any, kw: dict[str, Any]) -> Any:
        overall = float(self.risk[-1])
        return draw_chance(ax, (0, 1), (overall, overall), f"Random order (risk = {overall:0.2f})", **kw)

    def _axes(self, ax: Any) -> None:
        top = float(np.nanmax(self.risk)) if np.isfinite(self.risk).any() else 1.0
        ax.set(xlabel=self._xlabel, ylabel=self._ylabel, xlim=(0, 1.01), ylim=(0, max(top * 1.05, 1e-3)))

    def plot(
        self, ax: Any = None, *, name: str | None = None, curve_kwargs: dict[str, Any] | None = None,
        plot_chance_level: bool = False, chance_level_kw: dict[str, Any] | None = None, despine: bool = False,
    ) -> RiskCoverageDisplay:  # fmt: skip
        """Draw on ``ax`` (default: a new figure); returns the Display."""
        return self._draw(ax, name, curve_kwargs, plot_chance_level, chance_level_kw, despine)

    @classmethod
    def from_predictions(
        cls, y_true: ArrayLike, y_score: ArrayLike, *, y_pred: ArrayLike | None = None,
        sample_weight: ArrayLike | None = None, labels: ArrayLike | None = None, name: str | None = None,
        ax: Any = None, curve_kwargs: dict[str, Any] | None = None, plot_chance_level: bool = False,
        chance_level_kw: dict[str, Any] | None = None, despine: bool = False,
    ) -> RiskCoverageDisplay:  # fmt: skip
        """``y_score``: probabilities (2-D: the top label and its probability) or, with
        ``y_pred``, one confidence per row."""
        t, s = np.asarray(y_true), np.asarray(y_score, dtype=np.float64)
        if s.ndim == 2:
            classes = score_classes(t, s, labels)
            pred, conf = classes[s.argmax(axis=1)], s.max(axis=1)
        elif y_pred is None:
            msg = "a 1-D y_score is a confidence per row: pass the predictions it belongs to as y_pred"
            raise ValidationError(msg)
        else:
            pred, conf = np.asarray(y_pred), s
        correct = pred == t
        coverage, risk, _ = risk_coverage_curve(correct, conf, sample_weight=sample_weight)
        d = cls(coverage=coverage, risk=risk, aurc=aurc(correct, conf, sample_weight=sample_weight), name=name)
        return d.plot(ax, curve_kwargs=curve_kwargs, plot_chance_level=plot_chance_level,
                      chance_level_kw=chance_level_kw, despine=despine)  # fmt: skip

    @classmethod
    def from_estimator(
        cls, estimator: Any, X: ArrayLike, y: ArrayLike, *, sample_weight: ArrayLike | None = None,  # noqa: N803
        name: str | None = None, ax: Any = None, **kwargs: Any,
    ) -> RiskCoverageDisplay:  # fmt: skip
        """The risk-coverage curve of a fitted classifier's ``predict_proba`` on ``X``."""
        if not hasattr(estimator, "predict_proba") or not hasattr(estimator, "classes_"):
            msg = "RiskCoverageDisplay.from_estimator needs a fitted classifier with predict_proba"
            raise ValidationError(msg)
        proba = np.asarray(estimator.predict_proba(X), dtype=np.float64)
        return cls.from_predictions(
            y, proba, sample_weight=sample_weight, labels=estimator.classes_,
            name=type(estimator).__name__ if name is None else name, ax=ax, **kwargs,
        )  # fmt: skip

    @classmethod
    def from_report(
        cls, report: Report, *, ax: Any = None, curve_kwargs: dict[str, Any] | None = None,
        plot_chance_level: bool = False, chance_level_kw: dict[str, Any] | None = None, despine: bool = False,
    ) -> RiskCoverageDisplay:  # fmt: skip
        """The risk-coverage curve a report holds (decimated, with its exact AURC)."""
        (c,) = _report_curves(report, "risk_coverage", "RiskCoverageDisplay")[:1]
        d = cls(coverage=c.x, risk=c.y, aurc=c.value, name=c.label)
        return d.plot(ax, curve_kwargs=curve_kwargs, plot_chance_level=plot_chance_level,
                      chance_level_kw=chance_level_kw, despine=despine)  # fmt: skip

    @classmethod
    def from_evaluator(
        cls, evaluator: Evaluator, *, name: str | None = None, ax: Any = None,
        curve_kwargs: dict[str, Any] | None = None, plot_chance_level: bool = False,
        chance_level_kw: dict[str, Any] | None = None, despine: bool = False,
    ) -> RiskCoverageDisplay:  # fmt: skip
        """The curve of a merged Evaluator's confidence ranking state (top-label confidence
        against correctness), without the rows."""
        read = evaluator.ranking_curve(CURVE_STEPS)
        if read is None:
            msg = "RiskCoverageDisplay.from_evaluator needs an Evaluator with ranking on and a confidence per row"
            raise ValidationError(msg)
        coverage, risk = risk_coverage_points(read[0])
        area = read[1].aurc
        note = _binned(evaluator, "confidence").lstrip(", ")
        label = f"{name} ({note})" if name and note else name or note or None
        d = cls(coverage=coverage, risk=risk, aurc=area, name=label)
        return d.plot(ax, curve_kwargs=curve_kwargs, plot_chance_level=plot_chance_level,
                      chance_level_kw=chance_level_kw, despine=despine)  # fmt: skip

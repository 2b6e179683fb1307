"""cmetrics' metrics in scikit-learn's model selection: scorers for ``cross_validate``,
``GridSearchCV`` and every other place that takes ``scoring=``.

:func:`get_scorer` knows scikit-learn's classification scorer names (``accuracy``, ``f1_macro``,
``roc_auc_ovr``, ``neg_log_loss``, ...) and cmetrics' own (``mcc``, ``informedness``,
``cf1_macro``, ``refinement``, ``neg_expected_calibration_error``, ...): each with the response
method it needs (``predict``, ``predict_proba``, ``decision_function``) and its direction
(metrics where lower is better are negated and named ``neg_*``). The scorers are scikit-learn's
own scorer objects (``sklearn.metrics.make_scorer``'s kind: metadata routing of
``sample_weight``, pickling for ``n_jobs``), computing with cmetrics; the metrics of
probabilities get the estimator's classes as ``labels``, so a fold that lacks a class still
scores. :func:`make_multi_scorer` scores every requested metric from one
:func:`cmetrics.evaluate` per fold.

Needs scikit-learn (``pip install scikit-learn``); ``import cmetrics`` never imports it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from sklearn.metrics._scorer import _Scorer

import cmetrics
from cmetrics.exceptions import ValidationError

__all__ = ["MultiScorer", "get_scorer", "get_scorer_names", "make_multi_scorer", "make_scorer"]

#: What a metric reads: the hard predictions, the score of the positive class (or every
#: column, multiclass), or the probability matrix with the estimator's classes as labels.
Reads = Literal["predict", "score", "proba"]


@dataclass(frozen=True)
class _Metric:
    """One scorer: the cmetrics function, what it reads, its sign and fixed arguments; and the
    name of the same value in a :class:`cmetrics.Report` (for the multi-metric scorer)."""

    func: Callable[..., float]
    reads: Reads
    lower_is_better: bool = False
    kwargs: dict[str, Any] = field(default_factory=dict)
    report_key: str | None = None


def _refinement_of(y_true: Any, proba: Any, *, labels: Any, sample_weight: Any = None) -> float:
    """Refinement of the top-label confidence against correctness (Gu and Hopkins)."""
    p = np.asarray(proba, dtype=np.float64)
    correct = np.asarray(labels)[p.argmax(axis=1)] == np.asarray(y_true)
    return cmetrics.refinement(correct, p.max(axis=1), sample_weight=sample_weight)


def _entropy_score_of(y_true: Any, proba: Any, *, labels: Any, sample_weight: Any = None) -> float:
    del y_true, labels  # the entropy score reads the probabilities alone
    return cmetrics.entropy_score(proba, sample_weight=sample_weight)


def _registry() -> dict[str, _Metric]:
    out: dict[str, _Metric] = {
        "accuracy": _Metric(cmetrics.accuracy_score, "predict", report_key="accuracy"),
        "balanced_accuracy": _Metric(cmetrics.balanced_accuracy_score, "predict", report_key="balanced_accuracy"),
        "matthews_corrcoef": _Metric(cmetrics.matthews_corrcoef, "predict", report_key="matthews_corrcoef"),
        "mcc": _Metric(cmetrics.matthews_corrcoef, "predict", report_key="matthews_corrcoef"),
        "cohen_kappa": _Metric(cmetrics.cohen_kappa_score, "predict", report_key="cohen_kappa"),
        "informedness": _Metric(cmetrics.informedness, "predict", report_key="informedness"),
        "markedness": _Metric(cmetrics.markedness, "predict", report_key="markedness"),
        "roc_auc": _Metric(cmetrics.roc_auc_score, "score"),
        "average_precision": _Metric(cmetrics.average_precision_score, "score"),
        "top_k_accuracy": _Metric(cmetrics.top_k_accuracy_score, "proba"),
        "neg_log_loss": _Metric(cmetrics.log_loss, "proba", True, report_key="log_loss"),
        "neg_brier_score": _Metric(cmetrics.brier_score_loss, "proba", True),
        "neg_expected_calibration_error": _Metric(
            cmetrics.expected_calibration_error, "proba", True, report_key="expected_calibration_error"
        ),
        "neg_max_calibration_error": _Metric(
            cmetrics.max_calibration_error, "proba", True, report_key="max_calibration_error"
        ),
        "purity": _Metric(cmetrics.purity, "proba", report_key="purity"),
        "entropy_score": _Metric(_entropy_score_of, "proba", report_key="entropy_score"),
        "refinement": _Metric(_refinement_of, "proba", report_key="refinement"),
    }
    for name, func in (
        ("f1", cmetrics.f1_score),
        ("precision", cmetrics.precision_score),
        ("recall", cmetrics.recall_score),
        ("jaccard", cmetrics.jaccard_score),
    ):
        out[name] = _Metric(func, "predict")
        for avg in ("micro", "macro", "weighted"):
            key = f"{name}_{avg}" if name != "jaccard" else None
            out[f"{name}_{avg}"] = _Metric(func, "predict", kwargs={"average": avg}, report_key=key)
    probabilistic: list[tuple[str, Callable[..., Any]]] = [
        ("cf1", cmetrics.cf1_score),
        ("cprecision", cmetrics.cprecision_score),
        ("crecall", cmetrics.crecall_score),
    ]
    for name, pfunc in probabilistic:
        for avg in ("micro", "macro", "weighted"):
            out[f"{name}_{avg}"] = _Metric(pfunc, "proba", kwargs={"average": avg}, report_key=f"{name}_{avg}")
    for multi in ("ovr", "ovo"):
        for avg in ("macro", "weighted"):
            suffix = "" if avg == "macro" else "_weighted"
            report_key = "roc_auc_ovr" if (multi, avg) == ("ovr", "macro") else None
            out[f"roc_auc_{multi}{suffix}"] = _Metric(
                cmetrics.roc_auc_score, "proba", kwargs={"multi_class": multi, "average": avg}, report_key=report_key
            )
    return out


METRICS = _registry()


class CmetricsScorer(_Scorer):  # type: ignore[misc]  # scikit-learn's scorer is untyped
    """A scikit-learn scorer computing with cmetrics (made by :func:`make_scorer`)."""

    def __init__(self, name: str, metric: _Metric, kwargs: dict[str, Any]) -> None:
        response = {"predict": "predict", "score": ("decision_function", "predict_proba"), "proba": "predict_proba"}
        super().__init__(metric.func, -1 if metric.lower_is_better else 1, kwargs, response[metric.reads])
        self.name, self.metric = name, metric

    def _score(self, method_caller: Any, estimator: Any, X: Any, y_true: Any, **kwargs: Any) -> float:  # noqa: N803
        if self.metric.reads != "proba":
            return float(super()._score(method_caller, estimator, X, y_true, **kwargs))
        proba = _proba(estimator, X)
        args = {"labels": estimator.classes_, **self._kwargs, **kwargs}
        if self.metric.func is cmetrics.roc_auc_score and proba.shape[1] == 2:
            # scikit-learn's roc_auc_ovr of two classes is the binary AUROC of the second.
            args.pop("multi_class", None)
            args.pop("average", None)
            return float(self._sign * self.metric.func(y_true, proba[:, 1], **args))
        return float(self._sign * self.metric.func(y_true, proba, **args))

    def __repr__(self) -> str:
        return f"cmetrics.sklearn.get_scorer({self.name!r})"


def _proba(estimator: Any, x: Any) -> np.ndarray:
    if not hasattr(estimator, "predict_proba"):
        msg = f"{type(estimator).__name__} has no predict_proba; the metric needs probabilities"
        raise ValidationError(msg)
    return np.asarray(estimator.predict_proba(x), dtype=np.float64)


def get_scorer_names() -> list[str]:
    """Every scorer name :func:`get_scorer` knows, sorted."""
    return sorted(METRICS)


def get_scorer(name: str) -> CmetricsScorer:
    """The scorer of ``name`` (see :func:`get_scorer_names`).

    >>> from sklearn.linear_model import LogisticRegression
    >>> X, y = [[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1]
    >>> get_scorer("mcc")(LogisticRegression().fit(X, y), X, y)
    1.0
    """
    return make_scorer(name)


def make_scorer(metric: str, **kwargs: Any) -> CmetricsScorer:
    """The scorer of a metric name with fixed arguments (``make_scorer("f1", pos_label="spam")``,
    ``make_scorer("top_k_accuracy", k=3)``)."""
    if not isinstance(metric, str) or metric not in METRICS:
        msg = f"unknown scorer {metric!r}; choose from cmetrics.sklearn.get_scorer_names()"
        raise ValidationError(msg)
    m = METRICS[metric]
    return CmetricsScorer(metric, m, {**m.kwargs, **kwargs})


class MultiScorer(_Scorer):  # type: ignore[misc]  # scikit-learn's scorer is untyped
    """Several metrics from one :func:`cmetrics.evaluate` per fold (made by
    :func:`make_multi_scorer`): a scorer returning ``{name: value}``, as ``cross_validate`` and
    ``GridSearchCV(refit=name)`` take it."""

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__(cmetrics.evaluate, 1, {}, "predict")
        self.names = list(names)

    def _score(self, method_caller: Any, estimator: Any, X: Any, y_true: Any, **kwargs: Any) -> dict[str, float]:  # noqa: N803
        weight = kwargs.get("sample_weight")
        pred = method_caller(estimator, "predict", X, pos_label=None)
        wanted = [METRICS[n] for n in self.names]
        proba = _proba(estimator, X) if any(m.reads == "proba" for m in wanted) else None
        report = cmetrics.evaluate(
            y_true, y_pred=pred, y_proba=proba, labels=estimator.classes_, sample_weight=weight, zero_division=0.0
        )
        out: dict[str, float] = {}
        for name, m in zip(self.names, wanted, strict=True):
            if m.report_key is not None and m.report_key in report.metrics:
                value = report.metrics[m.report_key]
                out[name] = -value if m.lower_is_better else value
            else:  # not a Report value (a binary average, a ranking of decision values): its scorer
                out[name] = float(make_scorer(name)._score(method_caller, estimator, X, y_true, **kwargs))
            out[name] = float(out[name]) if math.isfinite(out[name]) else out[name]
        return out

    def __repr__(self) -> str:
        return f"cmetrics.sklearn.make_multi_scorer({self.names!r})"


def make_multi_scorer(metrics: Sequence[str]) -> MultiScorer:
    """One scorer of several metrics, from one :func:`cmetrics.evaluate` per fold (the Report's
    values where it has them: macro, micro and weighted averages, MCC, calibration, log loss...;
    the others by their own scorer on the same predictions).

    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import cross_validate
    >>> X, y = [[v] for v in range(20)], [0] * 10 + [1] * 10
    >>> cv = cross_validate(LogisticRegression(), X, y, cv=2, scoring=make_multi_scorer(["accuracy", "neg_log_loss"]))
    >>> sorted(k for k in cv if k.startswith("test_"))
    ['test_accuracy', 'test_neg_log_loss']
    """
    names = list(metrics)
    unknown = [n for n in names if n not in METRICS]
    if not names or unknown:
        msg = f"unknown scorer(s) {unknown or names!r}; choose from cmetrics.sklearn.get_scorer_names()"
        raise ValidationError(msg)
    return MultiScorer(names)

"""``evaluate``: one pass over the rows, every metric, one :class:`Report`."""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

import numpy as np

from cmetrics import _checks
from cmetrics import _hard as _m
from cmetrics import _proba as _p
from cmetrics._config import Backend, get_num_threads, resolve_backend
from cmetrics._kernels import BinaryRanking
from cmetrics._validation import RankingMode, check_ranking_bins, ranking_mode
from cmetrics.confusion import ConfusionMatrix
from cmetrics.exceptions import LengthMismatchError, UndefinedMetricWarning, ValidationError

#: Scalar metrics of every report, in display order.
HARD_METRICS = (
    "accuracy", "balanced_accuracy", "balanced_accuracy_adjusted",
    "precision_macro", "recall_macro", "f1_macro",
    "precision_weighted", "recall_weighted", "f1_weighted",
    "precision_micro", "recall_micro", "f1_micro",
    "matthews_corrcoef", "cohen_kappa", "informedness", "markedness",
    "normalized_information_transfer", "entropy_modulated_accuracy", "mutual_information_bits",
)
PROBA_METRICS = (
    "cprecision_macro", "crecall_macro", "cf1_macro",
    "cprecision_weighted", "crecall_weighted", "cf1_weighted",
    "cprecision_micro", "crecall_micro", "cf1_micro",
    "entropy_score", "purity", "brier_score", "log_loss",
)
CALIBRATION_METRICS = ("expected_calibration_error", "max_calibration_error")
RANKING_METRICS = ("refinement", "auroc_confidence", "reversed_pair_proportion", "aurc")
#: The metric families, in display order: the table and Markdown show each under a heading.
FAMILIES = (
    ("hard-label", HARD_METRICS),
    ("probabilistic", PROBA_METRICS),
    ("calibration", CALIBRATION_METRICS),
    ("selective prediction", RANKING_METRICS),
)


def printable(label: Any) -> str:
    """A label as text safe to show in a terminal or a table: newlines, tabs, escape sequences
    and other control characters appear as their backslash escapes."""
    text = str(label)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def number(x: Any) -> str:
    """A value for people: integers as integers (with thousands separators), other floats to
    six significant digits, NaN as "nan"."""
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    if isinstance(x, (float, np.floating)):
        if math.isnan(x):
            return "nan"
        if float(x).is_integer() and abs(x) < 2**53:
            return f"{int(x):,}"
        return f"{float(x):.6g}"
    return str(x)


class Report:
    """Every metric of one evaluation, computed from the accumulators of one pass.

    Scalars are attributes (``report.accuracy``, ``report.log_loss``, ...);
    ``report.per_class`` maps each label to its per-class values;
    ``report.confusion_matrix`` (and ``report.prob_confusion_matrix`` with
    probabilities) are the tables; ``report.calibration`` the reliability bins.
    Values that are undefined are NaN here, ``None`` in :meth:`to_dict`, and the
    reason is in ``report.undefined``.
    """

    def __init__(self, values: dict[str, Any], per_class: dict[str, dict[str, float]], tables: dict[str, Any],
                 undefined: dict[str, str], calibration: _p.CalibrationBins | None, meta: dict[str, Any]) -> None:
        self._values = values
        self.per_class = per_class
        self.undefined = undefined
        self.calibration = calibration
        self.labels: list[Any] = meta["labels"]
        self.n_samples: float = meta["n_samples"]
        self.n_classes: int = meta["n_classes"]
        self.has_proba: bool = meta["has_proba"]
        #: How the ranking metrics were computed: ``{"mode": "exact"}``, or
        #: ``{"mode": "approximate", "bins": B}`` from a streaming Evaluator; None without them.
        self.ranking: dict[str, Any] | None = meta.get("ranking")
        self.confusion_matrix: np.ndarray = tables["confusion_matrix"]
        self.prob_confusion_matrix: np.ndarray | None = tables.get("prob_confusion_matrix")
        self.confidence: np.ndarray | None = tables.get("confidence")
        self.correct: np.ndarray | None = tables.get("correct")

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        msg = f"Report has no metric {name!r}; available: {sorted(values)}"
        raise AttributeError(msg)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._values))

    @property
    def metrics(self) -> dict[str, float]:
        """The scalar metrics as a dict (NaN where undefined)."""
        return dict(self._values)

    def families(self) -> list[tuple[str, dict[str, float]]]:
        """The scalar metrics grouped by family (hard-label, probabilistic, calibration,
        selective prediction), families without a value left out."""
        out = []
        for name, keys in FAMILIES:
            values = {k: self._values[k] for k in keys if k in self._values}
            if values:
                out.append((name, values))
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict: plain floats and lists; NaN becomes None with its reason
        under ``"undefined"``."""
        def clean(x: Any) -> Any:
            if isinstance(x, float) and not math.isfinite(x):
                return None
            return x

        out: dict[str, Any] = {
            "n_samples": self.n_samples,
            "n_classes": self.n_classes,
            "labels": [str(lab) if not isinstance(lab, (int, float, bool)) else lab for lab in self.labels],
            "metrics": {k: clean(v) for k, v in self._values.items()},
            "per_class": {lab: {k: clean(v) for k, v in row.items()} for lab, row in self.per_class.items()},
            "confusion_matrix": self.confusion_matrix.tolist(),
            "undefined": dict(self.undefined),
        }
        if self.prob_confusion_matrix is not None:
            out["prob_confusion_matrix"] = self.prob_confusion_matrix.tolist()
        if self.calibration is not None:
            out["calibration"] = self.calibration.to_dict()
        if self.ranking is not None:
            out["ranking"] = dict(self.ranking)
        return out

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`to_dict` as JSON text (``kwargs`` go to :func:`json.dumps`)."""
        kwargs.setdefault("indent", 2)
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    def to_markdown(self) -> str:
        """The metrics, one table per family under a heading, and the per-class table, as
        GitHub-flavoured Markdown (labels escaped: no control character or ``|`` gets through)."""
        lines = [f"**{number(self.n_samples)} samples, {self.n_classes} classes**"]
        for family, values in self.families():
            lines += ["", f"### {family.capitalize()}", "", "| metric | value |", "|---|---|"]
            lines += [f"| {k} | {number(v)} |" for k, v in values.items()]
        if self.per_class:
            cols = list(next(iter(self.per_class.values())))
            lines += ["", "### Per class", "", "| class | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
            for lab, row in self.per_class.items():
                lines.append(f"| {_md(lab)} | " + " | ".join(number(row[c]) for c in cols) + " |")
        if self.undefined:
            lines += ["", "Undefined: " + "; ".join(f"{k}: {_md(v)}" for k, v in self.undefined.items())]
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        head = f"Report(n_samples={number(self.n_samples)}, n_classes={self.n_classes}, proba={self.has_proba})"
        width = max((len(k) for k in self._values), default=0)
        body = "\n".join(f"  {k:<{width}}  {number(v)}" for k, v in self._values.items())
        return f"{head}\n{body}"


_WARN = ("precision", "recall", "f-score")


def _md(label: Any) -> str:
    """A label inside a Markdown table cell."""
    return printable(label).replace("|", "\\|")


def _collect(values: dict[str, Any], undefined: dict[str, str], name: str, fn: Any) -> None:
    """Compute one metric, turning its UndefinedMetricWarning into a recorded reason."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        values[name] = float(fn())
    reasons = [str(w.message) for w in caught if issubclass(w.category, (UndefinedMetricWarning, UserWarning))]
    if reasons:
        undefined[name] = " ".join(dict.fromkeys(reasons))


def evaluate(
    y_true: Any,
    *,
    y_pred: Any = None,
    y_proba: Any = None,
    confidence: Any = None,
    labels: Any = None,
    sample_weight: Any = None,
    n_bins: int = 15,
    zero_division: Any = "warn",
    validate: bool = True,
    keep_confidence: bool = False,
    ranking: RankingMode | bool = "exact",
    ranking_bins: int = 1 << 16,
    backend: Backend = "auto",
) -> Report:
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

    Undefined values (0/0) are NaN with the reason in ``report.undefined``;
    ``zero_division`` applies to the per-class ratios as in scikit-learn. For data
    that does not fit in memory, :class:`cmetrics.Evaluator` accumulates the same
    report batch by batch.

    Examples
    --------
    >>> r = evaluate([0, 1, 1], y_proba=[[0.7, 0.3], [0.4, 0.6], [0.6, 0.4]])
    >>> round(r.accuracy, 4), round(r.log_loss, 4)  # -(ln 0.7 + ln 0.6 + ln 0.4) / 3
    (0.6667, 0.5946)
    """
    check_inputs("evaluate", y_pred, y_proba, confidence)
    n_bins = _p.check_n_bins(n_bins)
    mode = ranking_mode(ranking)
    bins = check_ranking_bins(ranking_bins) if mode == "approximate" else None
    tables: dict[str, Any] = {}
    res = None
    walk = None
    if y_proba is not None:
        inp = _p.prob_inputs(y_true, y_proba, labels=labels, y_pred=y_pred, sample_weight=sample_weight,
                             backend=backend)
        acc = _p.accumulate(inp, backend=backend, n_bins=n_bins, validate=validate,
                            keep_confidence=keep_confidence or mode != "off")
        res = _p.ProbResult(acc, inp.labels, inp.kind, backend)
        if res.hard is None:  # accumulate(hard=True) always counts it
            msg = "internal error: the probability pass returned no hard confusion matrix"
            raise RuntimeError(msg)
        cm = res.hard
        if keep_confidence:
            tables["confidence"] = np.asarray(res.confidence)
            tables["correct"] = np.asarray(res.correct)
        if mode != "off":
            walk = _ranking_walk(acc.correct, acc.confidence, inp.sample_weight, backend, bins)
    else:
        t = _checks.as_1d(y_true, "y_true")
        cm = ConfusionMatrix.from_predictions(t, y_pred, labels=labels, sample_weight=sample_weight, backend=backend)
        if confidence is not None and mode != "off":
            ok, conf = user_confidence(t, y_pred, confidence)
            walk = _ranking_walk(ok, conf, _checks.weights(sample_weight, t.shape[0]), backend, bins)
    made = None if walk is None else ({"mode": "exact"} if bins is None else {"mode": "approximate", "bins": bins})
    return build_report(cm, res, walk, weighted=sample_weight is not None, zero_division=zero_division,
                        tables=tables, ranking=made)


def check_inputs(caller: str, y_pred: Any, y_proba: Any, confidence: Any) -> None:
    """The combinations of inputs ``evaluate`` and ``Evaluator.update`` accept."""
    if y_pred is None and y_proba is None:
        msg = f"{caller} needs y_pred, y_proba or both"
        raise ValidationError(msg)
    if confidence is not None and y_proba is not None:
        msg = "pass confidence only with y_pred and without y_proba (with y_proba the confidence is its top probability)"
        raise ValidationError(msg)


def user_confidence(y_true: Any, y_pred: Any, confidence: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(correct, confidence)`` of hard predictions with a caller's confidence, checked:
    one confidence per row, all finite (shared with :class:`cmetrics.Evaluator`)."""
    from cmetrics._numpy.ranking import check_finite
    from cmetrics.ranking import correctness

    ok, conf = correctness(y_true, y_pred=y_pred, confidence=confidence)
    if conf.shape[0] != ok.shape[0]:
        msg = f"confidence has {conf.shape[0]} rows but y_true has {ok.shape[0]}; pass one confidence per row"
        raise LengthMismatchError(msg)
    check_finite("confidence", conf)
    return ok, conf


def _ranking_walk(correct: Any, confidence: Any, weight: np.ndarray | None, backend: Backend,
                  bins: int | None) -> BinaryRanking:
    """The tie-grouped walk of the confidence against correctness: one sort, or, with
    ``bins``, a histogram of the confidences (the approximate mode, as the Evaluator's)."""
    from cmetrics import ranking as _r

    ok = np.ascontiguousarray(correct, dtype=bool)
    if bins is None:
        return _r._walk(ok, _r._scores(confidence, "confidence"), weight, backend)
    state = resolve_backend(backend).GroupState(weight is not None)
    state.add(ok, np.ascontiguousarray(confidence, dtype=np.float64), weight, bins, get_num_threads())
    return state.walk(True, get_num_threads())


def build_report(cm: ConfusionMatrix, res: _p.ProbResult | None, walk: BinaryRanking | None, *, weighted: bool,
                 zero_division: Any, tables: dict[str, Any] | None = None, ranking: dict[str, Any] | None = None,
                 ) -> Report:
    """The :class:`Report` of a hard confusion matrix, the accumulators of the probability
    pass (or None) and the ranking walk (or None); shared by :func:`evaluate` and
    :class:`cmetrics.Evaluator`."""
    values: dict[str, Any] = {}
    undefined: dict[str, str] = {}
    tables = dict(tables or {})
    _hard(cm, values, undefined, zero_division)
    per_class = _per_class(cm, zero_division)
    tables["confusion_matrix"] = cm.table(_quiet=True)
    calibration = None
    if res is not None:
        _proba(res, values, undefined, zero_division, per_class)
        tables["prob_confusion_matrix"] = res.prob_matrix()
        calibration = res.bins
    if walk is not None:
        _ranking(walk, weighted, values, undefined)
    meta = {
        "labels": cm.labels.tolist(),
        "n_samples": cm.n_samples,
        "n_classes": cm.n_classes,
        "has_proba": res is not None,
        "ranking": ranking if ranking is not None else ({"mode": "exact"} if walk is not None else None),
    }
    return Report(values, per_class, tables, undefined, calibration, meta)


def _ranking(d: BinaryRanking, weighted: bool, values: dict[str, Any], undefined: dict[str, str]) -> None:
    """Selective-prediction metrics of the confidence, from the ranking walk."""
    from cmetrics import ranking as _r

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        s = _r.selective_from_walk(d, "half", weighted)
    values["refinement"] = s.refinement
    values["auroc_confidence"] = s.auroc
    values["reversed_pair_proportion"] = s.reversed_pair_proportion
    values["aurc"] = s.aurc
    if np.isnan(s.refinement):
        reason = "all predictions are correct or all are wrong: no (correct, wrong) pair to rank"
        undefined["refinement"] = reason
        undefined["auroc_confidence"] = reason


def _collect_prf(cm: ConfusionMatrix, values: dict[str, Any], undefined: dict[str, str], zd: Any,
                 prefix: str) -> None:
    """Macro, weighted and micro precision/recall/F1 (``prefix="c"``: the confidence versions)."""
    for avg in ("macro", "weighted", "micro"):
        for i, name in enumerate(("precision", "recall", "f1")):
            _collect(values, undefined, f"{prefix}{name}_{avg}",
                     lambda i=i, avg=avg: _m.prfs(cm, average=avg, zero_division=zd, prefix=prefix,
                                                  warn_for=(_WARN[i],))[i])


def _hard(cm: ConfusionMatrix, values: dict[str, Any], undefined: dict[str, str], zd: Any) -> None:
    _collect(values, undefined, "accuracy", cm.accuracy)
    _collect(values, undefined, "balanced_accuracy", cm.balanced_accuracy)
    _collect(values, undefined, "balanced_accuracy_adjusted", lambda: cm.balanced_accuracy(adjusted=True))
    _collect_prf(cm, values, undefined, zd, prefix="")
    _collect(values, undefined, "matthews_corrcoef", cm.matthews_corrcoef)
    _collect(values, undefined, "cohen_kappa", cm.cohen_kappa)
    _collect(values, undefined, "informedness", cm.informedness)
    _collect(values, undefined, "markedness", cm.markedness)
    _collect(values, undefined, "normalized_information_transfer", cm.normalized_information_transfer)
    _collect(values, undefined, "entropy_modulated_accuracy", cm.entropy_modulated_accuracy)
    _collect(values, undefined, "mutual_information_bits", cm.mutual_information_bits)


def _per_class(cm: ConfusionMatrix, zd: Any) -> dict[str, dict[str, float]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, r, f, s = cm.precision_recall_fscore_support(zero_division=zd)
        j = cm.youden_j_per_class(zero_division=float("nan"))
        mk = cm.markedness_per_class(zero_division=float("nan"))
    prev, bias = cm.class_prevalence(), cm.class_bias()
    return {
        str(lab): {
            "precision": float(p[i]), "recall": float(r[i]), "f1": float(f[i]), "support": float(s[i]),
            "prevalence": float(prev[i]), "bias": float(bias[i]), "youden_j": float(j[i]), "markedness": float(mk[i]),
        }
        for i, lab in enumerate(cm.labels.tolist())
    }


def _proba(res: _p.ProbResult, values: dict[str, Any], undefined: dict[str, str], zd: Any,
           per_class: dict[str, dict[str, float]]) -> None:
    _collect_prf(res.cmatrix, values, undefined, zd, prefix="c")
    _collect(values, undefined, "entropy_score", res.entropy_score)
    _collect(values, undefined, "purity", res.purity)
    _collect(values, undefined, "brier_score", res.brier)
    _collect(values, undefined, "log_loss", res.log_loss)
    _collect(values, undefined, "expected_calibration_error", res.ece)
    _collect(values, undefined, "max_calibration_error", res.mce)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cp, cr, cf, _ = _m.prfs(res.cmatrix, zero_division=zd, prefix="c")
    for i, row in enumerate(per_class.values()):
        row.update({"cprecision": float(cp[i]), "crecall": float(cr[i]), "cf1": float(cf[i])})

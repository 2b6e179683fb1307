"""Metric derivations on a counted :class:`~cmetrics.confusion.ConfusionMatrix`.

Shared by the methods of ``ConfusionMatrix`` and the functional API; the
arithmetic itself comes from the selected backend (``cmetrics._core`` or
``cmetrics._numpy``), the ``zero_division``/averaging/warning policy from
:mod:`cmetrics._validation`, so both backends behave identically.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from cmetrics import _validation as v
from cmetrics.exceptions import LabelError, ValidationError

if TYPE_CHECKING:
    from cmetrics.confusion import ConfusionMatrix

_PRF_REASONS = {
    "precision": ("Precision", "predicted samples"),
    "recall": ("Recall", "true samples"),
    "f-score": ("F-score", "true nor predicted samples"),
}


def _binary_labels(cm: ConfusionMatrix, pos_label: Any) -> list[Any]:
    present = cm._labels[(cm._true_sum > 0) | (cm._pred_sum > 0)]
    if present.size > 2:
        msg = (
            "Target is multiclass but average='binary'. Please choose another average setting, "
            "one of [None, 'micro', 'macro', 'weighted']."
        )
        raise ValidationError(msg)
    is_str = isinstance(pos_label, str)
    if is_str != (cm._kind == "str"):
        msg = f"pos_label={pos_label!r} is not a valid label. It should be one of {present.tolist()}"
        raise LabelError(msg)
    if pos_label not in present.tolist() and present.size >= 2:
        msg = f"pos_label={pos_label!r} is not a valid label. It should be one of {present.tolist()}"
        raise LabelError(msg)
    return [pos_label]


def prfs(
    cm: ConfusionMatrix,
    *,
    beta: float = 1.0,
    labels: Any = None,
    pos_label: Any = 1,
    average: Any = None,
    warn_for: tuple[str, ...] = ("precision", "recall", "f-score"),
    zero_division: Any = "warn",
    prefix: str = "",
) -> tuple[Any, Any, Any, Any]:
    """Precision, recall, F-beta and support with scikit-learn's semantics (docs/definitions.md §2.3).

    The confidence versions (docs/definitions.md §4) run through here too, on a table whose
    diagonal and column sums come from the probabilistic confusion matrix
    (``prefix="c"`` names them in warnings)."""
    v.check_average(average)
    b = v.check_beta(beta)
    v.zero_division_value(zero_division)
    if average == "binary":
        labels = _binary_labels(cm, pos_label)
    elif pos_label not in (None, 1):
        warnings.warn(
            f"Note that pos_label (set to {pos_label!r}) is ignored when average != 'binary' (got {average!r}). "
            "You may use labels=[pos_label] to specify a single positive class.",
            UserWarning,
            stacklevel=3,
        )
    _, tp, true_sum, pred_sum = cm._ovr(labels)
    if average == "micro":
        tp, true_sum, pred_sum = np.array([tp.sum()]), np.array([true_sum.sum()]), np.array([pred_sum.sum()])
    p, r, f = (np.asarray(x) for x in cm._be.precision_recall_fbeta(
        np.ascontiguousarray(tp, dtype=np.float64),
        np.ascontiguousarray(true_sum, dtype=np.float64),
        np.ascontiguousarray(pred_sum, dtype=np.float64),
        b,
    ))
    out = []
    for name, values in (("precision", p), ("recall", r), ("f-score", f)):
        what, reason = _PRF_REASONS[name]
        what = prefix + what if prefix else what
        out.append(v.apply_zero_division(values, zero_division, what, reason, warn=name in warn_for))
    p, r, f = out
    if average is None:
        support = true_sum if cm._weighted else true_sum.astype(np.int64)
        return p, r, f, support
    return (
        v.average_values(p, true_sum, average),
        v.average_values(r, true_sum, average),
        v.average_values(f, true_sum, average),
        None,
    )


def accuracy(cm: ConfusionMatrix) -> float:
    """Accuracy."""
    return float(cm._be.accuracy(cm._c))


def balanced_accuracy(cm: ConfusionMatrix, adjusted: bool = False) -> float:
    """Balanced accuracy (docs/definitions.md §2.4)."""
    if ((cm._pred_sum > 0) & (cm._true_sum == 0)).any():
        warnings.warn("y_pred contains classes not in y_true", UserWarning, stacklevel=3)
    score, kept = cm._be.balanced_accuracy(cm._c, bool(adjusted))
    if adjusted and kept < 2:
        v.warn_undefined("Adjusted balanced accuracy is undefined with a single class in y_true; returning NaN")
    return float(score)


def matthews_corrcoef(cm: ConfusionMatrix) -> float:
    """Matthews correlation coefficient (docs/definitions.md §2.5)."""
    return float(cm._be.matthews_corrcoef(cm._c))


def cohen_kappa(cm: ConfusionMatrix, labels: Any = None, weights: Any = None,
                replace_undefined_by: float = float("nan")) -> float:
    """Cohen's kappa; ``labels`` restricts the matrix as scikit-learn does (docs/definitions.md §2.6).
    Undefined (no sample with both labels among ``labels``, or a zero expected disagreement):
    ``replace_undefined_by`` with an ``UndefinedMetricWarning``, as scikit-learn."""
    if weights not in (None, "linear", "quadratic"):
        msg = f"weights={weights!r} is invalid; use None, 'linear' or 'quadratic'"
        raise ValidationError(msg)
    fill = _undefined_value(replace_undefined_by)
    c = cm._c if labels is None else cm.table(labels=labels, _quiet=True).astype(np.float64)
    if not c.sum() > 0:
        v.warn_undefined("`y2` contains no labels that are present in both `y1` and `labels`. `cohen_kappa_score` "
                         f"is undefined and set to the value defined by the `replace_undefined_by` param ({fill}).")
        return fill
    k = float(cm._be.cohen_kappa(np.ascontiguousarray(c, dtype=np.float64), weights))
    if np.isnan(k):
        v.warn_undefined("`y1`, `y2` and `labels` have only one label in common (the expected disagreement is 0). "
                         "`cohen_kappa_score` is undefined and set to the value defined by the `replace_undefined_by` "
                         f"param ({fill}).")
        return fill
    return k


def _undefined_value(value: Any) -> float:
    """``replace_undefined_by``: a number (NaN included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        msg = f"replace_undefined_by={value!r} is invalid; pass a number (float('nan') by default)"
        raise ValidationError(msg)
    return float(value)


def per_class(cm: ConfusionMatrix, which: str, labels: Any, zero_division: Any) -> np.ndarray:
    """Per-class Youden J or markedness (docs/definitions.md §3.1) in ``labels`` order."""
    fn = cm._be.youden_j_per_class if which == "j" else cm._be.markedness_per_class
    values = np.asarray(fn(cm._c))
    if labels is not None:
        pos = cm._positions(labels)
        values = np.where(pos >= 0, values[np.maximum(pos, 0)], np.nan)
    what = "Youden J" if which == "j" else "Markedness"
    reason = "true samples or only true samples" if which == "j" else "predicted samples or only predicted samples"
    return v.apply_zero_division(values, zero_division, what, reason)


def informedness(cm: ConfusionMatrix, labels: Any = None, prior: Any = None) -> float:
    """Powers' bookmaker informedness (docs/definitions.md §3.2, §3.5)."""
    cm._superset(labels)
    c = cm._c
    pi = None
    if prior is not None:
        pi = np.asarray(prior, dtype=np.float64)
        order = cm._labels if labels is None else np.asarray(labels)
        if pi.ndim != 1 or pi.size != order.size:
            msg = f"prior has {pi.size} entries but there are {order.size} labels; give one prior per label"
            raise ValidationError(msg)
        if not np.isfinite(pi).all() or abs(pi.sum() - 1.0) > 1e-9:
            msg = f"prior must be finite and sum to 1 (sums to {pi.sum()!r})"
            raise ValidationError(msg)
        if labels is not None:
            pos = cm._positions(labels)
            c = np.ascontiguousarray(_expand_to(cm._c, pos))
    value = float(cm._be.informedness(c, None if pi is None else np.ascontiguousarray(pi)))
    if np.isnan(value):
        v.warn_undefined("Informedness is undefined with fewer than two classes in y_true; returning NaN")
    return value


def markedness(cm: ConfusionMatrix, labels: Any = None) -> float:
    """Markedness (docs/definitions.md §3.3)."""
    cm._superset(labels)
    value = float(cm._be.markedness(cm._c))
    if np.isnan(value):
        v.warn_undefined("Markedness is undefined with fewer than two predicted classes; returning NaN")
    return value


def nit(cm: ConfusionMatrix, n_classes: Any = None) -> float:
    """Normalized Information Transfer (docs/definitions.md §3.6)."""
    present = int((cm._true_sum > 0).sum())
    if n_classes is not None:
        if not isinstance(n_classes, (int, np.integer)) or isinstance(n_classes, bool) or n_classes < 1:
            msg = f"n_classes={n_classes!r} is invalid; pass a positive integer"
            raise ValidationError(msg)
        if n_classes < present:
            msg = (f"n_classes={n_classes} is below the {present} classes present in y_true (NIT would exceed 1); "
                   f"pass n_classes >= {present}")
            raise LabelError(msg)
    if n_classes is None and present == 1:
        v.warn_undefined("NIT with a single class in y_true is 1.0 by convention (no information to transfer)")
    return float(cm._be.normalized_information_transfer(cm._c, None if n_classes is None else int(n_classes)))


def ema(cm: ConfusionMatrix) -> float:
    """Entropy-modulated accuracy (docs/definitions.md §3.6)."""
    return float(cm._be.entropy_modulated_accuracy(cm._c))


def mutual_information(cm: ConfusionMatrix) -> float:
    """Mutual information of truth and prediction in bits."""
    return float(cm._be.mutual_information_bits(cm._c))


def rates(cm: ConfusionMatrix, which: str, labels: Any) -> np.ndarray:
    """Prevalence ``n_c/N`` or bias ``m_c/N`` in ``labels`` order (absent labels give 0)."""
    _, _, true_sum, pred_sum = cm._ovr(labels)
    return np.asarray(true_sum if which == "prevalence" else pred_sum, dtype=np.float64) / cm._total


def _expand_to(c: np.ndarray, pos: np.ndarray) -> np.ndarray:
    from cmetrics.confusion import _expand

    return _expand(c, pos)


def report(cm: ConfusionMatrix, zero_division: Any = "warn") -> dict[str, Any]:
    """Every hard-label metric from the one counted matrix, as plain Python values."""
    p, r, f, s = prfs(cm, zero_division=zero_division)
    out: dict[str, Any] = {
        "n_samples": cm._total,
        "n_classes": cm.n_classes,
        "accuracy": accuracy(cm),
        "balanced_accuracy": balanced_accuracy(cm),
        "balanced_accuracy_adjusted": balanced_accuracy(cm, adjusted=True),
        "matthews_corrcoef": matthews_corrcoef(cm),
        "cohen_kappa": cohen_kappa(cm),
        "informedness": informedness(cm),
        "markedness": markedness(cm),
        "normalized_information_transfer": nit(cm),
        "entropy_modulated_accuracy": ema(cm),
        "mutual_information_bits": mutual_information(cm),
    }
    for avg in ("macro", "weighted", "micro"):
        ap, ar, af, _ = prfs(cm, average=avg, zero_division=zero_division)
        out[f"precision_{avg}"], out[f"recall_{avg}"], out[f"f1_{avg}"] = ap, ar, af
    j = per_class(cm, "j", None, float("nan"))
    mk = per_class(cm, "mk", None, float("nan"))
    prev = rates(cm, "prevalence", None)
    bias = rates(cm, "bias", None)
    out["per_class"] = {
        str(lab): {
            "precision": float(p[i]),
            "recall": float(r[i]),
            "f1": float(f[i]),
            "support": float(s[i]),
            "prevalence": float(prev[i]),
            "bias": float(bias[i]),
            "youden_j": float(j[i]),
            "markedness": float(mk[i]),
        }
        for i, lab in enumerate(cm._labels.tolist())
    }
    return out

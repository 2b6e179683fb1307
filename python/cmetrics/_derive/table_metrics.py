"""Hard-label derivations on a :class:`~cmetrics._derive.counted_table.CountedTable`, and the
policy every family shares: ``zero_division``, averaging and the undefined values.

The arithmetic comes from the selected backend (``cmetrics._core`` or ``cmetrics._numpy``);
the policy lives only here, so both backends behave identically.
"""

from __future__ import annotations

import math
import warnings
from typing import overload

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._base import validation
from cmetrics._base.aliases import F64, I64, Average, KappaWeights, Label, ZeroDivision
from cmetrics._base.undefined import undefined, warn
from cmetrics._derive.counted_table import CountedTable, expand
from cmetrics.exceptions import LabelError, ValidationError

#: Per-class support: int64 counts, or float64 sums of weights.
Support = F64 | I64
#: ``(precision, recall, fbeta, support)`` per class, or averaged (floats, and no support).
PerClass = tuple[F64, F64, F64, Support]
Averaged = tuple[float, float, float, None]
PRFS = PerClass | Averaged

_PRF_REASONS = {
    "precision": ("Precision", "predicted samples"),
    "recall": ("Recall", "true samples"),
    "f-score": ("F-score", "true nor predicted samples"),
}


def apply_zero_division(
    values: F64, zero_division: ZeroDivision, what: str, reason: str, warn_here: bool = True, unit: str = "labels"
) -> F64:
    """Replace the NaN (0/0) entries by the ``zero_division`` value, warning under
    ``"warn"`` with scikit-learn's wording."""
    out, message = fill_zero_division(values, zero_division, what, reason, unit)
    if warn_here and message is not None:
        warn(message)
    return out


def fill_zero_division(
    values: F64, zero_division: ZeroDivision, what: str, reason: str, unit: str = "labels"
) -> tuple[F64, str | None]:
    """:func:`apply_zero_division` without warning: the values, and the warning it gives
    (None when it gives none)."""
    fill = validation.zero_division_value(zero_division)
    mask = np.isnan(values)
    if not mask.any():
        return values, None
    out: F64 = values.copy()
    out[mask] = fill
    if not isinstance(zero_division, str):
        return out, None
    # "due to" for a single value, "in labels with" per class (scikit-learn's wording).
    where = "due to" if values.size == 1 else f"in {unit} with"
    message = (
        f"{what} is ill-defined and being set to 0.0 {where} no {reason}. "
        "Use `zero_division` parameter to control this behavior."
    )
    return out, message


def average_values(values: F64, weights: F64, average: Average) -> float:
    """Average per-class values, NaN entries dropped with their weights (scikit-learn's
    ``_nanaverage``); all-NaN gives NaN; weights summing to 0 fall back to the plain mean."""
    keep = ~np.isnan(values)
    if not keep.any():
        return float("nan")
    v = values[keep]
    if average == "weighted":
        w = weights[keep]
        total = float(w.sum())
        if total != 0:
            return float(np.sum(v * w) / total)
    return float(np.sum(v) / v.size)


def _binary_labels(cm: CountedTable, pos_label: Label) -> np.ndarray:
    present = cm._labels[(cm._true_sum > 0) | (cm._pred_sum > 0)]
    if present.size > 2:
        msg = (
            "Target is multiclass but average='binary'. Please choose another average setting, "
            "one of [None, 'micro', 'macro', 'weighted']."
        )
        raise ValidationError(msg)
    if isinstance(pos_label, str) != (cm._kind == "str") or (pos_label not in present.tolist() and present.size >= 2):
        msg = f"pos_label={pos_label!r} is not a valid label. It should be one of {present.tolist()}"
        raise LabelError(msg)
    return np.asarray([pos_label])


def _selected_labels(
    cm: CountedTable, labels: ArrayLike | None, pos_label: Label, average: Average | None
) -> ArrayLike | None:
    """The labels a set-wise metric reads: ``pos_label`` alone for ``average="binary"``;
    otherwise ``labels``, with scikit-learn's warning when a ``pos_label`` is given in vain."""
    if average == "binary":
        return _binary_labels(cm, pos_label)
    if pos_label not in (None, 1):
        warn(
            f"Note that pos_label (set to {pos_label!r}) is ignored when average != 'binary' (got {average!r}). "
            "You may use labels=[pos_label] to specify a single positive class.",
            UserWarning,
        )
    return labels


@overload
def prfs(
    cm: CountedTable,
    *,
    beta: float = ...,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: None = ...,
    warn_for: tuple[str, ...] = ...,
    zero_division: ZeroDivision = ...,
    prefix: str = ...,
) -> PerClass: ...
@overload
def prfs(
    cm: CountedTable,
    *,
    beta: float = ...,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average,
    warn_for: tuple[str, ...] = ...,
    zero_division: ZeroDivision = ...,
    prefix: str = ...,
) -> Averaged: ...
@overload
def prfs(
    cm: CountedTable,
    *,
    beta: float = ...,
    labels: ArrayLike | None = ...,
    pos_label: Label = ...,
    average: Average | None = ...,
    warn_for: tuple[str, ...] = ...,
    zero_division: ZeroDivision = ...,
    prefix: str = ...,
) -> PRFS: ...
def prfs(
    cm: CountedTable,
    *,
    beta: float = 1.0,
    labels: ArrayLike | None = None,
    pos_label: Label = 1,
    average: Average | None = None,
    warn_for: tuple[str, ...] = ("precision", "recall", "f-score"),
    zero_division: ZeroDivision = "warn",
    prefix: str = "",
) -> PRFS:
    """Precision, recall, F-beta and support with scikit-learn's semantics (docs/definitions.md §2.3).

    The confidence versions (docs/definitions.md §4) run through here too, on a table whose
    diagonal and column sums come from the probabilistic confusion matrix
    (``prefix="c"`` names them in warnings)."""
    out, messages = _prfs(cm, beta, labels, pos_label, average, zero_division, prefix)
    for name in ("precision", "recall", "f-score"):
        message = messages.get(name)
        if name in warn_for and message is not None:
            warn(message)
    return out


def _prfs(
    cm: CountedTable,
    beta: float,
    labels: ArrayLike | None,
    pos_label: Label,
    average: Average | None,
    zero_division: ZeroDivision,
    prefix: str,
) -> tuple[PRFS, dict[str, str]]:
    """:func:`prfs` without warning: its values, and the warning it gives for each of
    "precision", "recall" and "f-score" that has one."""
    average = validation.check_average(average)
    b = validation.check_beta(beta)
    validation.zero_division_value(zero_division)
    if average == "samples":
        msg = (
            "Sample-based precision, recall, fscore is not meaningful outside multilabel classification. "
            "See the accuracy_score instead."
        )
        raise ValidationError(msg)
    _, tp, true_sum, pred_sum = cm._ovr(_selected_labels(cm, labels, pos_label, average))
    if average == "micro":
        tp, true_sum, pred_sum = np.array([tp.sum()]), np.array([true_sum.sum()]), np.array([pred_sum.sum()])
    prf = cm._be.precision_recall_fbeta(
        np.ascontiguousarray(tp, dtype=np.float64),
        np.ascontiguousarray(true_sum, dtype=np.float64),
        np.ascontiguousarray(pred_sum, dtype=np.float64),
        b,
    )
    out = []
    messages: dict[str, str] = {}
    for name, values in zip(("precision", "recall", "f-score"), prf, strict=True):
        what, reason = _PRF_REASONS[name]
        filled, message = fill_zero_division(values, zero_division, prefix + what, reason)
        out.append(filled)
        if message is not None:
            messages[name] = message
    p, r, f = out
    if average is None:
        return (p, r, f, (true_sum if cm._weighted else true_sum.astype(np.int64))), messages
    averaged = (
        average_values(p, true_sum, average),
        average_values(r, true_sum, average),
        average_values(f, true_sum, average),
        None,
    )
    return averaged, messages


def report_prf(cm: CountedTable, average: Average, zero_division: ZeroDivision, prefix: str, name: str) -> float:
    """One averaged F1-family value of a report (``name``: "precision", "recall" or
    "f-score"), warning only about itself. The three values of each (average,
    zero_division, prefix) are computed once and kept on the table, which a report asks
    for three times."""
    memo: dict[tuple[str, str, str], tuple[PRFS, dict[str, str]]] = vars(cm).setdefault("_report_prf", {})
    key = (average, repr(zero_division), prefix)
    if key not in memo:
        memo[key] = _prfs(cm, 1.0, None, 1, average, zero_division, prefix)
    (p, r, f, _), messages = memo[key]
    message = messages.get(name)
    if message is not None:
        warn(message)
    return float({"precision": p, "recall": r, "f-score": f}[name])


def jaccard(
    cm: CountedTable,
    *,
    labels: ArrayLike | None,
    pos_label: Label,
    average: Average | None,
    zero_division: ZeroDivision,
) -> float | F64:
    """Jaccard index ``tp / (tp + fp + fn)`` per class or averaged, with scikit-learn's
    label, averaging and zero-division semantics (docs/definitions.md §2.3)."""
    average = validation.check_average(average)
    validation.zero_division_value(zero_division)
    if average == "samples":
        raise ValidationError("Samplewise metrics are not available outside of multilabel classification.")
    _, tp, true_sum, pred_sum = cm._ovr(_selected_labels(cm, labels, pos_label, average))
    union = true_sum + pred_sum - tp
    if average == "micro":
        tp, union = np.array([tp.sum()]), np.array([union.sum()])
    with np.errstate(divide="ignore", invalid="ignore"):
        values: F64 = np.where(union > 0, tp / np.where(union > 0, union, 1.0), np.nan)
    values = apply_zero_division(values, zero_division, "Jaccard", "true or predicted samples")
    if average is None:
        return values
    if average == "micro":
        return float(values[0])
    return average_values(values, true_sum, average)


def accuracy(cm: CountedTable) -> float:
    """Fraction of correct predictions, ``trace / N``."""
    return float(cm._be.accuracy(cm._c))


def matthews_corrcoef(cm: CountedTable) -> float:
    """Multi-class Matthews correlation coefficient."""
    return float(cm._be.matthews_corrcoef(cm._c))


def entropy_modulated_accuracy(cm: CountedTable) -> float:
    """``2^-H(true | pred)``."""
    return float(cm._be.entropy_modulated_accuracy(cm._c))


def mutual_information_bits(cm: CountedTable) -> float:
    """Mutual information of truth and prediction, in bits."""
    return float(cm._be.mutual_information_bits(cm._c))


def balanced_accuracy(cm: CountedTable, adjusted: bool = False) -> float:
    """Balanced accuracy (docs/definitions.md §2.4)."""
    if ((cm._pred_sum > 0) & (cm._true_sum == 0)).any():
        warn("y_pred contains classes not in y_true", UserWarning)
    score, kept = cm._be.balanced_accuracy(cm._c, bool(adjusted))
    if adjusted and kept < 2:
        return undefined("Adjusted balanced accuracy is undefined with a single class in y_true; returning NaN")
    return float(score)


def cohen_kappa(
    cm: CountedTable,
    labels: ArrayLike | None = None,
    weights: KappaWeights | None = None,
    replace_undefined_by: float = float("nan"),
) -> float:
    """Cohen's kappa; ``labels`` restricts the matrix as scikit-learn does (docs/definitions.md §2.6).
    Undefined (no sample with both labels among ``labels``, or a zero expected disagreement):
    ``replace_undefined_by`` with an ``UndefinedMetricWarning``, as scikit-learn."""
    weights = validation.check_kappa_weights(weights)
    fill = validation.check_undefined_value(replace_undefined_by)
    c = cm._c if labels is None else cm.table(labels=labels, _quiet=True).astype(np.float64)
    if not c.sum() > 0:
        warn(
            "`y2` contains no labels that are present in both `y1` and `labels`. `cohen_kappa_score` "
            f"is undefined and set to the value defined by the `replace_undefined_by` param ({fill})."
        )
        return fill
    k = float(cm._be.cohen_kappa(np.ascontiguousarray(c, dtype=np.float64), weights))
    if np.isnan(k):
        warn(
            "`y1`, `y2` and `labels` have only one label in common (the expected disagreement is 0). "
            "`cohen_kappa_score` is undefined and set to the value defined by the `replace_undefined_by` "
            f"param ({fill})."
        )
        return fill
    return k


def per_class(cm: CountedTable, which: str, labels: ArrayLike | None, zero_division: ZeroDivision) -> F64:
    """Per-class Youden J (``which="j"``) or markedness (docs/definitions.md §3.1) in ``labels`` order."""
    fn = cm._be.youden_j_per_class if which == "j" else cm._be.markedness_per_class
    values = fn(cm._c)
    if labels is not None:
        pos = cm._positions(labels)
        values = np.where(pos >= 0, values[np.maximum(pos, 0)], np.nan)
    what = "Youden J" if which == "j" else "Markedness"
    reason = "true samples or only true samples" if which == "j" else "predicted samples or only predicted samples"
    return apply_zero_division(values, zero_division, what, reason)


def informedness(cm: CountedTable, labels: ArrayLike | None = None, prior: ArrayLike | None = None) -> float:
    """Powers' bookmaker informedness (docs/definitions.md §3.2, §3.5)."""
    cm._superset(labels)
    c = cm._c
    pi = None
    if prior is not None:
        pi = validation.check_prior(prior, cm.n_classes if labels is None else validation.length_of(labels))
        if labels is not None:
            c = np.ascontiguousarray(expand(cm._c, cm._positions(labels)))
    value = float(cm._be.informedness(c, pi))
    if np.isnan(value):
        return undefined("Informedness is undefined with fewer than two classes in y_true; returning NaN")
    return value


def markedness(cm: CountedTable, labels: ArrayLike | None = None) -> float:
    """Markedness (docs/definitions.md §3.3)."""
    cm._superset(labels)
    value = float(cm._be.markedness(cm._c))
    if np.isnan(value):
        return undefined("Markedness is undefined with fewer than two predicted classes; returning NaN")
    return value


def nit(cm: CountedTable, n_classes: int | None = None) -> float:
    """Normalized Information Transfer (docs/definitions.md §3.6)."""
    present = int((cm._true_sum > 0).sum())
    if n_classes is not None:
        n_classes = validation.check_n_classes(n_classes)
        if n_classes < present:
            msg = (
                f"n_classes={n_classes} is below the {present} classes present in y_true (NIT would exceed 1); "
                f"pass n_classes >= {present}"
            )
            raise LabelError(msg)
    elif present == 1:
        warn("NIT with a single class in y_true is 1.0 by convention (no information to transfer)")
    return float(cm._be.normalized_information_transfer(cm._c, n_classes))


def per_class_table(cm: CountedTable, zero_division: ZeroDivision) -> dict[str, dict[str, float]]:
    """Every per-class value of a confusion matrix, by label (as text): the one per-class
    table of :class:`cmetrics.Report`. Undefined entries follow ``zero_division`` for
    precision, recall and F1 and are NaN otherwise; nothing warns."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, r, f, s = prfs(cm, zero_division=zero_division)
        j = per_class(cm, "j", None, float("nan"))
        mk = per_class(cm, "mk", None, float("nan"))
    prevalence, bias = cm._true_sum / cm._total, cm._pred_sum / cm._total
    columns = {
        "precision": p,
        "recall": r,
        "f1": f,
        "support": s,
        "prevalence": prevalence,
        "bias": bias,
        "youden_j": j,
        "markedness": mk,
    }
    return {str(lab): {name: float(v[i]) for name, v in columns.items()} for i, lab in enumerate(cm._labels.tolist())}


# --------------------------------------------------------------------------------------
# Likelihood ratios


def _undefined_ratios(replace: object) -> tuple[float, float]:
    """``replace_undefined_by`` of ``class_likelihood_ratios`` as the values for (LR+, LR-)."""
    if isinstance(replace, dict):
        lr_pos, lr_neg = replace.get("LR+"), replace.get("LR-")
        ok = (
            set(replace) == {"LR+", "LR-"}
            and isinstance(lr_pos, (int, float))
            and isinstance(lr_neg, (int, float))
            and (math.isnan(lr_pos) or lr_pos >= 1.0)
            and (math.isnan(lr_neg) or 0.0 <= lr_neg <= 1.0)
        )
        if not ok:
            msg = (
                "The dictionary passed as `replace_undefined_by` needs to be in the form "
                "`{'LR+': `value_1`, 'LR-': `value_2`}` where the value for `LR+` ranges from `1.0` to `np.inf` "
                f"or is `np.nan` and the value for `LR-` ranges from `0.0` to `1.0` or is `np.nan`; got `{replace}`."
            )
            raise ValidationError(msg)
        return float(lr_pos), float(lr_neg)  # type: ignore[arg-type]
    if isinstance(replace, float) and math.isnan(replace):
        return math.nan, math.nan
    if isinstance(replace, (int, float)) and not isinstance(replace, bool) and replace == 1.0:
        return 1.0, 1.0
    raise ValidationError(f"replace_undefined_by must be np.nan, 1.0 or {{'LR+': a, 'LR-': b}}, got {replace!r}")


def _rate_ratio(a: float, a_total: float, b: float, b_total: float) -> float:
    """``(a / a_total) / (b / b_total)`` without overflow or a division error (``b > 0``)."""
    with np.errstate(all="ignore"):
        return float(np.float64(a / a_total) / np.float64(b / b_total))


def likelihood_ratios(cm: CountedTable, replace: object) -> tuple[float, float]:
    """(LR+, LR-) of a 2 x 2 table (the second label positive), with scikit-learn's warnings."""
    desired_pos, desired_neg = _undefined_ratios(replace)
    (tn, fp), (fn, tp) = cm.matrix.astype(np.float64).tolist()
    support_pos, support_neg = tp + fn, tn + fp
    lr_pos = lr_neg = math.nan
    if support_pos == 0:
        warn(
            "No samples of the positive class are present in `y_true`. `positive_likelihood_ratio` and "
            "`negative_likelihood_ratio` are both set to `np.nan`. Use the `replace_undefined_by` param to control "
            "this behavior. To suppress this warning or turn it into an error, see Python's `warnings` module and "
            "`warnings.catch_warnings()`."
        )
    if fp == 0:
        start = (
            "No samples were predicted for the positive class and `positive_likelihood_ratio` is "
            if tp == 0
            else "`positive_likelihood_ratio` is ill-defined and "
        )
        warn(start + "set to `np.nan`. Use the `replace_undefined_by` param to control this behavior.")
        lr_pos = desired_pos
    elif support_pos != 0:
        # Ratios of rates (each in [0, 1]): products of tiny weights would underflow.
        lr_pos = _rate_ratio(tp, support_pos, fp, support_neg)
    if tn == 0:
        warn(
            "`negative_likelihood_ratio` is ill-defined and set to `np.nan`. Use the `replace_undefined_by` param "
            "to control this behavior. To suppress this warning or turn it into an error, see Python's `warnings` "
            "module and `warnings.catch_warnings()`."
        )
        lr_neg = desired_neg
    elif support_pos != 0:
        lr_neg = _rate_ratio(fn, support_pos, tn, support_neg)
    return float(lr_pos), float(lr_neg)

"""The metrics of many tables at once: a stack of ``B`` confusion matrices (and probabilistic
confusion matrices) in, one value per table and metric out, with the tables in which the
metric was undefined marked (docs/definitions.md §2, §3, §4 and §11).

The formulas are those of the single-table derivations (the numpy backend's
``classification`` kernels and :mod:`cmetrics._derive.table_metrics`), written over a leading
axis; the tests hold every replicate to them. Conventions: the label set is the stack's
(``K`` columns, as the full data had), an undefined per-class ratio counts as 0 in the averages
(scikit-learn's ``zero_division=0``), and a metric that has no value at all (Cohen's kappa
with no expected disagreement, informedness with one true class) is NaN in its table.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]


class Values(NamedTuple):
    """One metric over the stack: its values and where it was undefined."""

    value: F64
    undefined: Bools


#: The metrics of a confusion matrix, by the name the Report gives them.
TABLE_METRICS = (
    "accuracy",
    "balanced_accuracy",
    "precision_macro",
    "precision_micro",
    "precision_weighted",
    "recall_macro",
    "recall_micro",
    "recall_weighted",
    "f1_macro",
    "f1_micro",
    "f1_weighted",
    "matthews_corrcoef",
    "cohen_kappa",
    "informedness",
    "markedness",
)

#: Per-class metrics of a confusion matrix (``name[label]``).
TABLE_PER_CLASS = ("precision", "recall", "f1")

#: The metrics of the probabilistic confusion matrix and the row sums.
PROB_METRICS = (
    "cprecision_macro",
    "cprecision_micro",
    "cprecision_weighted",
    "crecall_macro",
    "crecall_micro",
    "crecall_weighted",
    "cf1_macro",
    "cf1_micro",
    "cf1_weighted",
    "log_loss",
    "brier_score",
)

PROB_PER_CLASS = ("cprecision", "crecall", "cf1")


def _ratio(num: F64, den: F64) -> tuple[F64, Bools]:
    """``num / den`` with 0 where ``den == 0`` (and those places)."""
    bad = den == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(bad, 0.0, num / np.where(bad, 1.0, den))
    return out, bad


def _averages(
    prefix: str,
    per_class: tuple[F64, Bools],
    support: F64,
    micro: tuple[F64, Bools],
    out: dict[str, Values],
    present: Bools | None,
) -> None:
    value, bad = per_class
    if present is None:
        macro = Values(value.mean(axis=1), np.asarray(bad.any(axis=1), dtype=np.bool_))
    else:  # each table's own label set: the mean over the labels it holds
        held = present.sum(axis=1)
        mean, _ = _ratio(np.where(present, value, 0.0).sum(axis=1), held.astype(np.float64))
        macro = Values(mean, np.asarray((bad & present).any(axis=1), dtype=np.bool_))
    out[f"{prefix}_macro"] = macro
    total = support.sum(axis=1)
    weighted, zero = _ratio((value * support).sum(axis=1), total)
    out[f"{prefix}_weighted"] = Values(weighted, zero | (bad & (support > 0)).any(axis=1))
    out[f"{prefix}_micro"] = Values(*micro)


def _prf(
    names: tuple[str, str, str],
    tp: F64,
    n: F64,
    m: F64,
    out: dict[str, Values],
    per_class: dict[str, Values],
    present: Bools | None = None,
) -> None:
    """Precision, recall and F1 from true positives, true and predicted sums (per class)."""
    p, r, f = names
    precision = _ratio(tp, m)
    recall = _ratio(tp, n)
    f1 = _ratio(2 * tp, n + m)
    micro_tp, micro_n, micro_m = tp.sum(axis=1), n.sum(axis=1), m.sum(axis=1)
    _averages(p, precision, n, _ratio(micro_tp, micro_m), out, present)
    _averages(r, recall, n, _ratio(micro_tp, micro_n), out, present)
    _averages(f, f1, n, _ratio(2 * micro_tp, micro_n + micro_m), out, present)
    per_class[p], per_class[r], per_class[f] = Values(*precision), Values(*recall), Values(*f1)


def _bookmaker(tp: F64, r: F64, q: F64, total: F64) -> Values:
    """Powers' informedness (``r`` the true sums) or markedness (``r`` the predicted ones)."""
    bias, _ = _ratio(q, total[:, None])
    tpr, _ = _ratio(tp, r)
    fpr, _ = _ratio(q - tp, total[:, None] - r)
    value = np.where(q > 0, bias * (tpr - fpr), 0.0).sum(axis=1)
    undefined = (r > 0).sum(axis=1) < 2
    return Values(np.where(undefined, np.nan, value), undefined)


def table_metrics(c: F64, present: Bools | None = None) -> tuple[dict[str, Values], dict[str, Values]]:
    """Every metric of :data:`TABLE_METRICS` over a ``B x K x K`` stack, and the per-class
    ones (``B x K`` each). ``present`` (``B x K``): the labels of each table's own label set
    (the macro averages run over those; default all ``K``)."""
    c = np.asarray(c, dtype=np.float64)
    tp = np.einsum("bii->bi", c)
    return marginal_metrics(tp, c.sum(axis=2), c.sum(axis=1), present)


def off_diagonal(c: F64) -> F64:
    """Each table's weight off its diagonal (``B x K x K`` -> ``B``), summed cell by cell: with
    weights, ``total - trace`` loses the few wrong rows' weight to cancellation when most of
    the weight is on the diagonal."""
    k = c.shape[-1]
    off = 1.0 - np.eye(k)
    return np.asarray(np.einsum("bij,ij->b", c, off), dtype=np.float64)


def marginal_metrics(
    tp: F64,
    n: F64,
    m: F64,
    present: Bools | None = None,
    wanted: frozenset[str] | None = None,
    errors: F64 | None = None,
) -> tuple[dict[str, Values], dict[str, Values]]:
    """:func:`table_metrics` from each table's diagonal ``tp``, true sums ``n`` and predicted
    sums ``m`` (``B x K`` each): all that the metrics of a confusion matrix read. ``wanted``:
    the metrics needed (the others may be left out; default all). ``errors``: each table's
    weight off the diagonal (:func:`off_diagonal`), for weighted tables; default
    ``total - trace``, exact for counts."""

    def needs(*names: str) -> bool:
        return wanted is None or any(name.startswith(names) for name in wanted)

    total = n.sum(axis=1)
    out: dict[str, Values] = {}
    per_class: dict[str, Values] = {}
    acc, empty = _ratio(tp.sum(axis=1), total)
    out["accuracy"] = Values(np.where(empty, np.nan, acc), empty)
    if needs("balanced_accuracy"):
        recall, absent = _ratio(tp, n)
        kept = (~absent).sum(axis=1).astype(np.float64)
        balanced, none = _ratio(np.where(absent, 0.0, recall).sum(axis=1), kept)
        out["balanced_accuracy"] = Values(np.where(none, np.nan, balanced), none)
    if needs("precision", "recall", "f1"):
        _prf(("precision", "recall", "f1"), tp, n, m, out, per_class, present)
    if needs("matthews_corrcoef"):
        # Matthews: Gorodkin's R_K, 0 when a marginal is concentrated on one class.
        cov_tp = tp.sum(axis=1) * total - np.einsum("bi,bi->b", n, m)
        cov_pp = np.einsum("bi,bi->b", m, total[:, None] - m)
        cov_tt = np.einsum("bi,bi->b", n, total[:, None] - n)
        flat = (cov_pp == 0) | (cov_tt == 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            mcc = np.where(flat, 0.0, cov_tp / np.sqrt(np.where(flat, 1.0, cov_tt * cov_pp)))
        out["matthews_corrcoef"] = Values(mcc, flat)
    if needs("cohen_kappa"):
        # Cohen's kappa (unweighted): 1 - observed disagreement / expected disagreement, the
        # expected one summed as scikit-learn sums it (the off-diagonal cells of the outer
        # product of the marginals): 0 up to rounding when one label holds all the true or all
        # the predicted weight, undefined when it holds both. Both disagreements are sums of
        # nonnegative terms, never differences (which cancel when one class or the diagonal
        # holds nearly all the weight): the other classes' true weight is the sum of those
        # before a class and those after it.
        safe = np.where(total > 0, total, 1.0)
        others = np.zeros_like(n)
        others[:, 1:] = np.cumsum(n[:, :-1], axis=1)
        others[:, :-1] += np.cumsum(n[:, :0:-1], axis=1)[:, ::-1]
        den = np.einsum("bi,bi->b", m, others) / safe
        observed = total - tp.sum(axis=1) if errors is None else errors
        no_kappa = (den == 0) | (total == 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            kappa = np.where(no_kappa, np.nan, 1.0 - observed / np.where(no_kappa, 1.0, den))
        out["cohen_kappa"] = Values(kappa, no_kappa)
    if needs("informedness"):
        out["informedness"] = _bookmaker(tp, n, m, total)
    if needs("markedness"):
        out["markedness"] = _bookmaker(tp, m, n, total)
    return out, per_class


def prob_metrics(
    pcm: F64, true_weight: F64, weight: F64, log_loss_sum: F64, brier_sum: F64
) -> tuple[dict[str, Values], dict[str, Values]]:
    """cPrecision, cRecall, cF1 (Yacouby and Axman 2020: ``cTP`` the diagonal of the
    probabilistic confusion matrix, ``cTP + cFP`` its column sums, the recall's denominator the
    hard true weights), log loss and Brier score over a stack of ``B`` replicates."""
    pcm = np.asarray(pcm, dtype=np.float64)
    ctp = np.einsum("bii->bi", pcm)
    predicted = pcm.sum(axis=1)
    out: dict[str, Values] = {}
    per_class: dict[str, Values] = {}
    _prf(("cprecision", "crecall", "cf1"), ctp, true_weight, predicted, out, per_class)
    log_loss, empty = _ratio(log_loss_sum, weight)
    out["log_loss"] = Values(np.where(empty, np.nan, log_loss), empty)
    brier, _ = _ratio(brier_sum, weight)
    out["brier_score"] = Values(np.where(empty, np.nan, brier), empty)
    return out, per_class

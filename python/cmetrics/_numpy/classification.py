"""Metrics from a confusion matrix with numpy (mirror of
``rust/core/src/classification.rs``; NaN marks 0/0 entries).

As in the Rust module, every metric reads the table multiplied by the power of two that
brings its total into [0.5, 1) (:func:`_table`): exact, and no product of sums can overflow."""

from __future__ import annotations

import numpy as np

from cmetrics._base.value_checks import check_2d, check_weights, square_table
from cmetrics._kernels import F64, PRF, BalancedAccuracy, Marginals, MultilabelCounts
from cmetrics.exceptions import ShapeError, ValidationError, WeightError


def _square(c: np.ndarray) -> np.ndarray:
    return square_table(c)


def _table(c: np.ndarray) -> np.ndarray:
    """``c`` scaled by a power of two bringing its total into [0.5, 1)."""
    c = _square(c)
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(c.sum())
    if not np.isfinite(total):
        msg = (
            "the total of the confusion matrix is beyond the float64 range; divide every sample_weight by the "
            "same constant (the metrics do not change)"
        )
        raise WeightError(msg)
    if total <= 0:
        return c
    scaled: F64 = np.ldexp(c, -int(np.frexp(total)[1]))
    return scaled


def _div(num: np.ndarray, den: np.ndarray) -> F64:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def marginals(c: np.ndarray) -> Marginals:
    """Diagonal, row sums, column sums and total."""
    c = _square(c)
    true_sum = c.sum(axis=1)
    return Marginals(np.diag(c).copy(), true_sum, c.sum(axis=0), float(true_sum.sum()))


def precision_recall_fbeta(tp: np.ndarray, true_sum: np.ndarray, pred_sum: np.ndarray, beta: float) -> PRF:
    """Per-class precision, recall and F-beta from counts, NaN where 0/0."""
    precision = _div(tp, pred_sum)
    recall = _div(tp, true_sum)
    if np.isinf(beta):
        return PRF(precision, recall, recall.copy())
    if beta == 0:
        return PRF(precision, recall, precision.copy())
    b2 = beta * beta
    return PRF(precision, recall, _div((1 + b2) * np.asarray(tp), b2 * np.asarray(true_sum) + pred_sum))


def accuracy(c: np.ndarray) -> float:
    """``trace / N``."""
    c = _table(c)
    return float(np.trace(c) / c.sum())


def balanced_accuracy(c: np.ndarray, adjusted: bool) -> BalancedAccuracy:
    """Mean recall over classes present in the truth, and how many there are."""
    tp, n, _, _ = marginals(_table(c))
    keep = n > 0
    kept = int(keep.sum())
    score = float(np.mean(tp[keep] / n[keep]))
    if not adjusted:
        return BalancedAccuracy(score, kept)
    if kept < 2:
        return BalancedAccuracy(float("nan"), kept)
    chance = 1.0 / kept
    return BalancedAccuracy((score - chance) / (1 - chance), kept)


def matthews_corrcoef(c: np.ndarray) -> float:
    """Gorodkin's R_K; 0.0 when the denominator vanishes."""
    c = _table(c)
    t, p = c.sum(axis=1), c.sum(axis=0)
    s = t.sum()
    cov_ytyp = np.trace(c) * s - t @ p
    # s^2 - x.x as sum x (s - x): exact 0 for a single class, never negative
    cov_ypyp = float(np.sum(p * (s - p)))
    cov_ytyt = float(np.sum(t * (s - t)))
    if cov_ypyp == 0 or cov_ytyt == 0:
        return 0.0
    return float(cov_ytyp / np.sqrt(cov_ytyt * cov_ypyp))


def cohen_kappa(c: np.ndarray, weights: str | None = None) -> float:
    """Cohen's kappa as scikit-learn computes it; NaN when expected disagreement is 0."""
    c = _table(c)
    k = c.shape[0]
    expected = np.outer(c.sum(axis=0), c.sum(axis=1)) / c.sum()
    idx = np.arange(k)
    diff = np.abs(idx[:, None] - idx[None, :]).astype(np.float64)
    if weights is None:
        w = (diff != 0).astype(np.float64)
    elif weights == "linear":
        w = diff
    elif weights == "quadratic":
        w = diff**2
    else:
        msg = f"weights={weights!r} is invalid; use None, 'linear' or 'quadratic'"
        raise ValidationError(msg)
    den = float((w * expected).sum())
    if den == 0:
        return float("nan")
    return 1.0 - float((w * c).sum()) / den


def _ovr_j(tp: np.ndarray, r: np.ndarray, q: np.ndarray, total: float) -> F64:
    ok = (r > 0) & (r < total)
    out = np.full(len(tp), np.nan)
    out[ok] = tp[ok] / r[ok] - (q[ok] - tp[ok]) / (total - r[ok])
    return out


def youden_j_per_class(c: np.ndarray) -> F64:
    """Per-class Youden J, NaN unless ``0 < n_c < N``."""
    tp, n, m, total = marginals(_table(c))
    return _ovr_j(tp, n, m, total)


def markedness_per_class(c: np.ndarray) -> F64:
    """Per-class markedness, NaN unless ``0 < m_c < N``."""
    tp, n, m, total = marginals(_table(c))
    return _ovr_j(tp, m, n, total)


def _bookmaker(tp: np.ndarray, r: np.ndarray, q: np.ndarray, total: float, prior: np.ndarray | None) -> float:
    bias = q / total
    bet = q > 0
    if prior is None:
        if int((r > 0).sum()) < 2:
            return float("nan")
        tpr = np.where(r > 0, tp / np.where(r > 0, r, 1), 0.0)
        fpr = (q - tp) / np.where(total - r > 0, total - r, 1)
        return float(np.sum(np.where(bet, bias * (tpr - fpr), 0.0)))
    prior = np.asarray(prior, dtype=np.float64)
    if prior.shape != tp.shape:
        msg = f"prior has the wrong shape: {prior.size} entries for {tp.size} classes"
        raise ShapeError(msg)
    bad = bet & ~((prior > 0) & (prior < 1))
    if bad.any():
        msg = f"prior is invalid: a predicted class has prior {prior[bad][0]}; each must lie strictly between 0 and 1"
        raise ValidationError(msg)
    pi = np.where(bet, prior, 0.5)
    gain = tp / (total * pi) - (q - tp) / (total * (1 - pi))
    return float(np.sum(np.where(bet, bias * gain, 0.0)))


def informedness(c: np.ndarray, prior: np.ndarray | None = None) -> float:
    """Powers' bookmaker informedness; NaN with fewer than two true classes."""
    tp, n, m, total = marginals(_table(c))
    return _bookmaker(tp, n, m, total, prior)


def markedness(c: np.ndarray) -> float:
    """Informedness of the transposed problem; NaN with fewer than two predicted classes."""
    tp, n, m, total = marginals(_table(c))
    return _bookmaker(tp, m, n, total, None)


def mutual_information_bits(c: np.ndarray) -> float:
    """Plug-in mutual information in bits, clamped at 0 (sum of logs of counts: no underflow)."""
    c = _table(c)
    total = c.sum()
    r = np.broadcast_to(c.sum(axis=1)[:, None], c.shape)
    q = np.broadcast_to(c.sum(axis=0)[None, :], c.shape)
    nz = c > 0
    mi = float(np.sum(c[nz] / total * (np.log2(c[nz]) + np.log2(total) - np.log2(r[nz]) - np.log2(q[nz]))))
    return mi if mi > 0 else 0.0


def normalized_information_transfer(c: np.ndarray, n_classes: int | None = None) -> float:
    """``2^MI / k``, k = classes present in the truth unless given."""
    c = _table(c)
    if n_classes is None:
        k = int((c.sum(axis=1) > 0).sum())
    else:
        if n_classes <= 0:
            msg = "n_classes is invalid: must be a positive integer"
            raise ValidationError(msg)
        k = n_classes
    return float(2.0 ** mutual_information_bits(c) / k)


def entropy_modulated_accuracy(c: np.ndarray) -> float:
    """``2^-H(X|Y)``."""
    c = _table(c)
    total = c.sum()
    col = np.broadcast_to(c.sum(axis=0), c.shape)
    nz = c > 0
    h = -float(np.sum(c[nz] / total * (np.log2(c[nz]) - np.log2(col[nz]))))
    return float(2.0 ** -(h if h > 0 else 0.0))


def multilabel_counts(
    y_true: np.ndarray, y_pred: np.ndarray, sample_weight: np.ndarray | None = None, n_threads: int = 0
) -> MultilabelCounts:
    """Per-label sums and per-row counts of two indicator matrices (as the Rust kernel)."""
    check_2d(y_true, "y_true")
    check_2d(y_pred, "y_pred")
    if y_true.shape != y_pred.shape:
        msg = (
            f"y_true has shape {list(y_true.shape)} but y_pred has shape {list(y_pred.shape)}; "
            "pass indicator matrices of one shape"
        )
        raise ValidationError(msg)
    n, k = y_true.shape
    if k == 0:
        raise ShapeError(f"y_true has the wrong shape: {y_true.size} values do not make rows of 0 labels")
    check_weights(sample_weight, n, "y_true")
    both = y_true & y_pred
    w = np.ones(n) if sample_weight is None else sample_weight
    with np.errstate(over="ignore", invalid="ignore"):
        tp, true_sum, pred_sum = w @ both, w @ y_true, w @ y_pred
        tn = w @ ~(y_true | y_pred)
    if sample_weight is not None and not np.isfinite(true_sum.sum() + pred_sum.sum()):
        msg = (
            "a weighted label count is beyond the float64 range; divide every sample_weight by the same "
            "constant (the metrics do not change)"
        )
        raise WeightError(msg)
    rows = [np.count_nonzero(m, axis=1).astype(np.uint32) for m in (both, y_true, y_pred)]
    return MultilabelCounts(
        np.asarray(tp, np.float64),
        np.asarray(true_sum, np.float64),
        np.asarray(pred_sum, np.float64),
        np.asarray(tn, np.float64),
        *rows,
    )

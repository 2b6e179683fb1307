"""Plain-Python reference implementations: loops over rows, no numpy, textbook code.

These are the baseline of ``cmetrics bench`` (what a metric costs written the obvious way in
Python) and independent oracles in the test suite. They take sequences (lists, tuples or
anything iterable once), follow docs/definitions.md exactly, and favour clarity over speed:
use them on thousands of rows, not millions.

- :func:`confusion_matrix` and :func:`hard_report`: the confusion matrix and the hard-label
  report of §2 (accuracy, macro precision/recall/F1 with 0 for 0/0, MCC, Cohen's kappa).
- :func:`probabilistic_confusion_matrix` (§4), :func:`log_loss` (§7.2) and
  :func:`expected_calibration_error` (§7.3) of a probability matrix given as rows.
- :func:`roc_auc` (§5.1, §7.5): the Mann-Whitney statistic from mid-ranks, exact in integers.
- :func:`kendall_tau` (§5.3): tau-b by Knight's algorithm, a merge sort that counts swaps.

Examples
--------
>>> confusion_matrix([0, 1, 1, 2], [0, 1, 2, 2], labels=[0, 1, 2])
[[1, 0, 0], [0, 1, 1], [0, 0, 1]]
>>> roc_auc([True, False, True, False], [0.9, 0.4, 0.4, 0.1])  # one tied pair counts half
0.875
>>> round(kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]), 6)
0.666667
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from itertools import pairwise

__all__ = [
    "confusion_matrix",
    "expected_calibration_error",
    "hard_report",
    "kendall_tau",
    "log_loss",
    "probabilistic_confusion_matrix",
    "roc_auc",
]

#: float64 machine epsilon: the clip of :func:`log_loss`, as scikit-learn's.
EPS = 2.220446049250313e-16


def _index(labels: Sequence[Hashable]) -> dict[Hashable, int]:
    return {label: i for i, label in enumerate(labels)}


def confusion_matrix(
    y_true: Iterable[Hashable], y_pred: Iterable[Hashable], labels: Sequence[Hashable]
) -> list[list[int]]:
    """``C[i][j]``: rows whose truth is ``labels[i]`` and prediction ``labels[j]``.

    >>> confusion_matrix("aab", "abb", labels="ab")
    [[1, 1], [0, 1]]
    """
    at = _index(labels)
    k = len(labels)
    matrix = [[0] * k for _ in range(k)]
    for t, p in zip(y_true, y_pred, strict=True):
        matrix[at[t]][at[p]] += 1
    return matrix


def hard_report(matrix: Sequence[Sequence[int]]) -> dict[str, float]:
    """Accuracy, macro precision / recall / F1 (0 for 0/0), Matthews correlation and Cohen's
    kappa of a confusion matrix.

    >>> r = hard_report([[5, 1], [2, 2]])
    >>> r["accuracy"], round(r["mcc"], 6), round(r["kappa"], 6)
    (0.7, 0.356348, 0.347826)
    """
    k = len(matrix)
    n = sum(sum(row) for row in matrix)
    diag = [matrix[i][i] for i in range(k)]
    true_counts = [sum(matrix[i]) for i in range(k)]
    pred_counts = [sum(matrix[i][j] for i in range(k)) for j in range(k)]

    def ratio(a: float, b: float) -> float:
        return a / b if b else 0.0

    precision = [ratio(diag[c], pred_counts[c]) for c in range(k)]
    recall = [ratio(diag[c], true_counts[c]) for c in range(k)]
    f1 = [ratio(2 * diag[c], true_counts[c] + pred_counts[c]) for c in range(k)]
    correct = sum(diag)
    # MCC and kappa in integers until the last division (Gorodkin's K-class form).
    cov_tp = correct * n - sum(true_counts[c] * pred_counts[c] for c in range(k))
    cov_pp = n * n - sum(p * p for p in pred_counts)
    cov_tt = n * n - sum(t * t for t in true_counts)
    mcc = cov_tp / math.sqrt(cov_pp * cov_tt) if cov_pp and cov_tt else 0.0
    expected = sum(true_counts[c] * pred_counts[c] for c in range(k))
    kappa = (correct * n - expected) / (n * n - expected) if n * n != expected else 0.0
    return {
        "accuracy": ratio(correct, n),
        "macro_precision": sum(precision) / k,
        "macro_recall": sum(recall) / k,
        "macro_f1": sum(f1) / k,
        "mcc": mcc,
        "kappa": kappa,
    }


def probabilistic_confusion_matrix(
    y_true: Iterable[Hashable], proba: Iterable[Sequence[float]], labels: Sequence[Hashable]
) -> list[list[float]]:
    """``pCM[r][h]``: the sum of column ``h`` of the probability rows whose truth is ``labels[r]``.

    >>> probabilistic_confusion_matrix([0, 1], [[0.75, 0.25], [0.5, 0.5]], labels=[0, 1])
    [[0.75, 0.25], [0.5, 0.5]]
    """
    at = _index(labels)
    k = len(labels)
    matrix = [[0.0] * k for _ in range(k)]
    for t, row in zip(y_true, proba, strict=True):
        out = matrix[at[t]]
        for h in range(k):
            out[h] += row[h]
    return matrix


def log_loss(y_true: Iterable[Hashable], proba: Iterable[Sequence[float]], labels: Sequence[Hashable]) -> float:
    """Mean negative natural log of the probability given to the true class, clipped to
    ``[EPS, 1 - EPS]``.

    >>> round(log_loss([0, 1], [[0.5, 0.5], [0.25, 0.75]], labels=[0, 1]), 6)
    0.490415
    """
    at = _index(labels)
    total, n = 0.0, 0
    for t, row in zip(y_true, proba, strict=True):
        p = min(max(float(row[at[t]]), EPS), 1.0 - EPS)
        total -= math.log(p)
        n += 1
    return total / n


def expected_calibration_error(
    y_true: Iterable[Hashable], proba: Iterable[Sequence[float]], labels: Sequence[Hashable], n_bins: int = 15
) -> float:
    """Top-label ECE: the confidence is the row's largest probability (its lowest column on
    ties), bin ``m`` holds confidences in ``((m-1)/M, m/M]`` (bin 1 also 0), and the bins'
    gaps between accuracy and mean confidence are averaged by their row counts.

    >>> round(expected_calibration_error([0, 1], [[0.9, 0.1], [0.8, 0.2]], labels=[0, 1], n_bins=10), 6)
    0.45
    """
    at = _index(labels)
    count = [0] * n_bins
    hits = [0] * n_bins
    conf_sum = [0.0] * n_bins
    n = 0
    for t, row in zip(y_true, proba, strict=True):
        best = 0
        for h in range(1, len(row)):
            if row[h] > row[best]:
                best = h
        conf = float(row[best])
        m = 0  # bin m (from 0) holds (m/M, (m+1)/M]; edges are correctly rounded divisions
        while m < n_bins - 1 and conf > (m + 1) / n_bins:
            m += 1
        count[m] += 1
        hits[m] += best == at[t]
        conf_sum[m] += conf
        n += 1
    return sum(abs(hits[m] - conf_sum[m]) / n for m in range(n_bins) if count[m])


def roc_auc(positive: Iterable[bool], score: Iterable[float]) -> float:
    """Area under the ROC curve: the share of (positive, negative) pairs ordered by the score,
    a tie counting half. Mann-Whitney from mid-ranks, kept in integers (ranks doubled).

    >>> roc_auc([True, True, False], [0.8, 0.3, 0.5])
    0.5
    """
    rows = sorted(zip(score, positive, strict=True), key=lambda r: r[0])
    n_pos = sum(1 for _, p in rows if p)
    n_neg = len(rows) - n_pos
    twice_rank_sum = 0  # sum over positives of 2 * mid-rank (1-based)
    i = 0
    while i < len(rows):
        j = i
        while j < len(rows) and rows[j][0] == rows[i][0]:
            j += 1
        twice_mid = i + 1 + j  # 2 * (mean of the ranks i+1 .. j)
        twice_rank_sum += twice_mid * sum(1 for r in rows[i:j] if r[1])
        i = j
    if n_pos == 0 or n_neg == 0:
        return math.nan
    u_twice = twice_rank_sum - n_pos * (n_pos + 1)
    return u_twice / (2 * n_pos * n_neg)


def _tie_pairs(values: Sequence[object]) -> int:
    """Pairs of equal values in a sorted sequence."""
    pairs, run = 0, 1
    for a, b in pairwise(values):
        if a == b:
            run += 1
        else:
            pairs += run * (run - 1) // 2
            run = 1
    return pairs + run * (run - 1) // 2


def _count_swaps(values: list[float]) -> int:
    """Sort ``values`` in place by a bottom-up merge sort; return the pairs it put in order
    (``i < j`` with ``values[i] > values[j]``)."""
    n = len(values)
    swaps = 0
    width = 1
    src, dst = values[:], values[:]
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if src[j] < src[i]:
                    dst[k] = src[j]
                    swaps += mid - i  # src[j] jumps over the rest of the left run
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            dst[k:hi] = src[i:mid] + src[j:hi]
        src, dst = dst, src
        width *= 2
    values[:] = src
    return swaps


def kendall_tau(x: Iterable[float], y: Iterable[float]) -> float:
    """Kendall's tau-b by Knight's algorithm: sort the pairs by ``(x, y)``, count the ties,
    then count discordant pairs as the swaps of a merge sort of ``y``.

    >>> kendall_tau([1, 2, 2, 3], [1, 2, 3, 3])
    0.8
    """
    pairs = sorted(zip(x, y, strict=True))
    n = len(pairs)
    n0 = n * (n - 1) // 2
    xs = [p[0] for p in pairs]
    ties_x = _tie_pairs(xs)
    ties_xy = _tie_pairs(pairs)
    ys = [p[1] for p in pairs]
    discordant = _count_swaps(ys)  # ys is now sorted
    ties_y = _tie_pairs(ys)
    concordant_minus_discordant = n0 - ties_x - ties_y + ties_xy - 2 * discordant
    denominator = math.sqrt((n0 - ties_x) * (n0 - ties_y))
    return concordant_minus_discordant / denominator if denominator else math.nan

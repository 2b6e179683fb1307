"""McNemar's test of two classifiers on the same rows (McNemar, "Note on the sampling error of
the difference between correlated proportions or percentages", Psychometrika 1947; the mid-p
form of Fagerland, Lydersen and Laake, BMC Medical Research Methodology 2013).

scipy gives the binomial and chi-square tails; it is imported where a p-value is computed.
"""

from __future__ import annotations

from numpy.typing import ArrayLike

from cmetrics._base import validation
from cmetrics._results.intervals import McNemarMethod, McNemarResult
from cmetrics.exceptions import LengthMismatchError, ValidationError

_METHODS = ("exact", "mid-p", "chi2")


def mcnemar(
    y_true: ArrayLike, pred_a: ArrayLike, pred_b: ArrayLike, *, method: McNemarMethod = "exact"
) -> McNemarResult:
    """McNemar's test of whether two classifiers err equally often on the same rows.

    Only the discordant rows count: ``a_only`` (``a`` right, ``b`` wrong) and ``b_only``.
    ``"exact"``: the two-sided binomial test of ``a_only`` among the discordant rows at 1/2;
    ``"mid-p"``: the same less the probability of the observed count; ``"chi2"``: the
    continuity-corrected chi-square with one degree of freedom. ``"exact"`` and ``"chi2"``
    equal ``statsmodels.stats.contingency_tables.mcnemar`` (``exact=True`` and ``exact=False``).

    >>> r = mcnemar([0, 1, 1, 0, 1, 1, 0, 1], [0, 1, 1, 0, 1, 1, 1, 1], [1, 0, 0, 0, 1, 0, 0, 1])
    >>> r.a_only, r.b_only, round(r.p_value, 4)
    (4, 1, 0.375)
    """
    if method not in _METHODS:
        msg = f"method={method!r} is invalid; use one of {', '.join(_METHODS)}"
        raise ValidationError(msg)
    t = validation.as_1d(y_true, "y_true")
    pa = validation.label_pair(t, pred_a, ("y_true", "pred_a"))
    pb = validation.label_pair(t, pred_b, ("y_true", "pred_b"))
    if pa.y_pred.shape != pb.y_pred.shape:
        msg = (
            f"pred_a has {pa.y_pred.shape[0]} rows but pred_b has {pb.y_pred.shape[0]}; pass arrays of the same length"
        )
        raise LengthMismatchError(msg)
    right_a = pa.y_true == pa.y_pred
    right_b = pb.y_true == pb.y_pred
    a_only = int((right_a & ~right_b).sum())
    b_only = int((right_b & ~right_a).sum())
    n = a_only + b_only
    if n == 0:
        return McNemarResult(0.0, 1.0, a_only, b_only, method)
    # scipy is imported where a p-value is computed (see the module docs).
    from scipy.special import bdtr, chdtrc  # a binomial tail: scipy loads on first use

    low = min(a_only, b_only)
    if method == "chi2":
        stat = (abs(a_only - b_only) - 1.0) ** 2 / n
        return McNemarResult(stat, float(chdtrc(1, stat)), a_only, b_only, method)
    tail = float(bdtr(low, n, 0.5))
    p = 2 * tail
    if method == "mid-p":
        below = float(bdtr(low - 1, n, 0.5)) if low > 0 else 0.0
        p -= tail - below
    return McNemarResult(float(low), min(1.0, p), a_only, b_only, method)

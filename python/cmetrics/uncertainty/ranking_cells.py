"""The multinomial scheme of the ranking metrics (docs/definitions.md §11.1): when the scores of
unweighted rows are few, the (tie group, side) cells of one family are drawn from the multinomial
of all the rows, as the confusion matrix's cells are, and each replicate walks its drawn cells;
this module decides when that is cheaper than walking the rows and draws them."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from cmetrics._backend import resolve_backend
from cmetrics._base.aliases import F64, Backend
from cmetrics._base.config import get_num_threads
from cmetrics._derive.probability_pass import ProbInputs
from cmetrics._kernels import Groups, RankingReplicates
from cmetrics._results.intervals import Provenance

#: Row steps of the ranking replicates (a row's Poisson draw and walk step) that cost about as
#: much as one cell's draw in the multinomial scheme: the (group, side) cells are drawn instead
#: of the rows when there are at most ``rows / 20``. Intel Emerald Rapids guest, 10^7 rows,
#: 1000 replicates: 0.47 ns a row and replicate, 9 ns a cell and replicate; at 10^5 distinct
#: scores (2 x 10^5 cells) the rows took 4.6-4.8 s and the cells 1.8-2.3 s.
CELL_DRAW_COST = 20
#: Scores sampled to estimate how many distinct scores there are before grouping the rows.
SAMPLED_SCORES = 4096
#: The most (group, side) cells the multinomial scheme of the ranking metrics draws (a block of
#: 64 replicates holds 64 x cells float64 values: 128 MiB at this bound).
MAX_RANKING_CELLS = 1 << 18


def ranking_cells(positive: npt.NDArray[np.bool_], score: F64, backend: Backend) -> Groups | None:
    """The tie groups of unweighted rows when drawing their (group, side) cells is cheaper than
    walking every row in every replicate, else None. The rows are grouped only when a sample of
    :data:`SAMPLED_SCORES` evenly spaced scores repeats enough values: half of them repeats, or
    with ``r`` repeats among ``m`` about ``m^2 / 2r`` distinct scores (the birthday count) few
    enough; grouping continuous scores would cost a sort for nothing."""
    if not _few_scores(score, positive.size):
        return None
    return _worth_drawing(resolve_backend(backend).score_groups(positive, score, None, get_num_threads()))


def checked_ranking_cells(
    positive: npt.NDArray[np.bool_], rows: ProbInputs, backend: Backend
) -> tuple[Groups | None, bool]:
    """:func:`ranking_cells` of the second column of unchecked probabilities of two classes, the
    rows checked by the pass that counts the groups (one read of the matrix where the probability
    pass and the count took two): the groups or None, and whether the rows passed (False when
    the sample suggests many scores or a row is bad: the caller then checks the rows with the
    probability pass, which reports a bad row, and walks them or groups them as before)."""
    if not _few_scores(rows.y_proba[:, 1], positive.size):
        return None, False
    be = resolve_backend(backend)
    groups = be.binary_proba_groups(positive, rows.y_proba, rows.atol, get_num_threads())
    return (None, False) if groups is None else (_worth_drawing(groups), True)


def _few_scores(score: npt.NDArray[np.floating[Any]], n: int) -> bool:
    """Whether a sample of :data:`SAMPLED_SCORES` evenly spaced scores suggests few enough
    distinct scores to group (:func:`ranking_cells`)."""
    sample = score[:: max(1, n // SAMPLED_SCORES)][:SAMPLED_SCORES]
    m = sample.size
    repeats = m - np.unique(sample).size
    # Two cells (positive, negative) per distinct score, as in _worth_drawing.
    return not (2 * repeats < m and (repeats == 0 or 2 * (m * m / (2 * repeats)) * CELL_DRAW_COST > n))


def _worth_drawing(groups: Groups) -> Groups | None:
    """``groups`` when drawing their (group, side) cells is cheaper than walking the rows."""
    cells = 2 * groups.values.size
    n = int(groups.n_pos.sum() + groups.n_neg.sum())
    return groups if cells * CELL_DRAW_COST <= n and cells <= MAX_RANKING_CELLS else None


def cell_replicates(groups: Groups, prov: Provenance, curves: bool, backend: Backend) -> RankingReplicates:
    """Each replicate's ranking metrics from the (group, side) cells drawn from one multinomial
    of all the rows (the draws of the confusion-matrix cells' multinomial scheme), each
    replicate walked as soon as it is drawn; the rows' own pair counts are left 0 (the walk of
    the groups gives them)."""
    g = groups.values.size
    # Highest score first, positives then negatives; only occupied cells are drawn.
    counts = np.concatenate([groups.n_pos[::-1], groups.n_neg[::-1]]).astype(np.int64)
    occupied = np.flatnonzero(counts)
    return resolve_backend(backend).draw_cell_walks(
        counts[occupied].astype(np.uint64),
        occupied.astype(np.uint64),
        g,
        0,
        prov.n_resamples,
        prov.seed,
        curves,
        n_threads=get_num_threads(),
    )

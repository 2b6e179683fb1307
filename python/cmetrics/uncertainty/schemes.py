"""The two resampling schemes of the bootstrap (docs/definitions.md §11.1): what a replicate
sums for each model (:class:`Layout`, :func:`row_values`), the metrics of a stack of sums
(:func:`derive`), and the designs that draw the replicates: multinomial draws of the occupied
cells of the confusion matrix (:func:`cell_design`) or Poisson row weights from the
counter-based stream (:func:`poisson_design`), each with its exact leave-one-out values for BCa;
the rows of one model encoded (:func:`encode_model`) and the intervals of a design
(:func:`design_intervals`).

This module and :mod:`cmetrics.uncertainty.intervals` sit on a floor below
:mod:`cmetrics.streaming`: an :class:`~cmetrics.Evaluator` with ``bootstrap=`` keeps its
replicate sums with them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from cmetrics._backend import VERSION, resolve_backend
from cmetrics._base import validation
from cmetrics._base.aliases import F64, Backend, Proba
from cmetrics._base.config import get_num_threads
from cmetrics._derive import replicate_metrics as rm
from cmetrics._derive.counted_table import CountedTable, label_codes
from cmetrics._derive.probability_pass import ProbInputs, accumulate, prob_inputs
from cmetrics._results.intervals import BootstrapResult, IntervalMethod, MetricInterval, Provenance, Scheme
from cmetrics.exceptions import LabelError, ValidationError
from cmetrics.uncertainty.intervals import acceleration, replicate_interval, replicate_intervals

#: Rows of leave-one-out sums built at a time.
_JACKKNIFE_ROWS = 1 << 12

Derived = tuple[dict[str, rm.Values], dict[str, rm.Values]]


#: Class codes of rows: int32 from hard labels, int64 from probabilities (a comparison of the two
#: mixes them; the joint-cell pass casts every model's codes to one dtype).
Codes = npt.NDArray[np.signedinteger[Any]]


@dataclass(frozen=True)
class Model:
    """One model's rows, encoded: hard prediction codes and, when given, the probabilities and
    their unweighted probabilistic confusion matrix (``K x K``, counted by the pass that checks
    the rows: the full sums of the probabilities' segment, see :func:`column_sums`)."""

    pred: Codes
    proba: Proba | None  # float32 or float64, as the caller gave it (no float64 copy)
    pcm: F64 | None = None
    #: Probabilities of two classes whose rows are not checked yet (the binary ranking metrics
    #: alone: the pass that counts their tie groups checks them, else :func:`checked` does).
    unchecked: ProbInputs | None = None


def checked(model: Model, backend: Backend) -> Model:
    """``model`` with its probability rows checked by the probability pass (which reports the
    first bad row) and their probabilistic confusion matrix, if they were not yet."""
    if model.unchecked is None:
        return model
    acc = accumulate(model.unchecked, backend=backend, n_bins=0, entropy=False, scores=False, hard=False)
    return Model(model.pred, model.proba, np.asarray(acc.pcm, dtype=np.float64))


@dataclass(frozen=True)
class Encoded:
    """The rows of a call, encoded once."""

    truth: Codes
    models: list[Model]
    labels: np.ndarray
    weight: F64 | None
    strata: npt.NDArray[np.int64]
    n_strata: int

    @property
    def k(self) -> int:
        return int(self.labels.size)


# ---------------------------------------------------------------------------- the metrics of sums


class Layout(NamedTuple):
    """Where one model's sums sit in a replicate row."""

    cells: int  # K*K cells from here
    pcm: int  # K*K probabilistic cells from here (-1: none)
    tail: int  # weight, log-loss sum, Brier sum from here (-1: none)
    width: int


def layout(k: int, proba: bool, start: int = 0) -> Layout:
    if not proba:
        return Layout(start, -1, -1, k * k)
    return Layout(start, start + k * k, start + 2 * k * k, 2 * k * k + 3)


def derive(sums: F64, k: int, lay: Layout) -> Derived:
    """Every metric of a stack of replicate sums (``B x width``)."""
    b = sums.shape[0]
    cells = sums[:, lay.cells : lay.cells + k * k].reshape(b, k, k)
    metrics, per_class = rm.table_metrics(cells)
    if lay.pcm >= 0:
        pcm = sums[:, lay.pcm : lay.pcm + k * k].reshape(b, k, k)
        t = lay.tail
        more, more_pc = rm.prob_metrics(pcm, cells.sum(axis=2), sums[:, t], sums[:, t + 1], sums[:, t + 2])
        metrics.update(more)
        per_class.update(more_pc)
    return metrics, per_class


#: The index of the probabilities' segment among a model's segments from :func:`row_values`
#: (after the confusion matrix's cell, before the weight, log loss and Brier score).
PCM_SEGMENT = 1


def row_values(
    enc: Encoded, model: Model, lay: Layout, backend: Backend
) -> tuple[F64, list[tuple[int, int | npt.NDArray[np.uint32]]]]:
    """Each row's contributions to one model's sums, and where they go: its weight at its cell
    of the confusion matrix and, with probabilities, its weighted probabilities at its row of
    the probabilistic confusion matrix, then its weight, log loss and Brier score (the
    backend's ``proba_row_values``: one pass over the rows, no temporary of the whole width)."""
    k = enc.k
    n = enc.truth.size
    w = enc.weight
    segments: list[tuple[int, int | npt.NDArray[np.uint32]]] = [
        (1, (lay.cells + enc.truth * k + model.pred).astype(np.uint32))
    ]
    if model.proba is None:
        out = np.ones((n, 1)) if w is None else np.array(w, dtype=np.float64).reshape(n, 1)
        return out, segments
    p = model.proba
    # The kernels read whole rows or columns: validation.proba_array gives one layout or the other.
    assert p.flags.c_contiguous or p.flags.f_contiguous
    weight = None if w is None else np.ascontiguousarray(w, dtype=np.float64)
    out = resolve_backend(backend).proba_row_values(enc.truth, p, weight, get_num_threads())
    segments += [(k, (lay.pcm + enc.truth * k).astype(np.uint32)), (3, lay.tail)]
    assert len(segments) == PCM_SEGMENT + 2  # the probabilities' segment where counted_sums looks
    return out, segments


# ---------------------------------------------------------------------------- the two schemes


@dataclass
class Design:
    """A resampling plan: how to draw the replicate sums, and the full sums they vary about."""

    full: F64  # the sums of the data (1 x width)
    replicates: Callable[[], F64]  # B x width
    jackknife: Callable[[Callable[[F64], F64]], tuple[F64, F64 | None]]
    scheme: Scheme


#: The largest joint table counted by the kernel (cells); above it the occupied cells are
#: found by sorting the joint codes.
_KERNEL_CELLS = 1 << 22


def occupied_cells(enc: Encoded, backend: Backend) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The occupied joint cells (stratum, truth, each model's prediction) and their counts:
    one counting pass of the kernel (the last prediction against the rest), no sort."""
    k = enc.k
    rows = enc.n_strata * k ** len(enc.models)
    # The joint code of the rest, built in place (one array written, not one per step), in
    # int32 wherever the joint codes fit it (half the bytes to write and read).
    dtype = np.int32 if rows * k < 2**31 else np.int64
    last = enc.models[-1].pred.astype(dtype, copy=False)
    parts = [enc.strata] if enc.n_strata > 1 else []
    parts += [enc.truth] + [m.pred for m in enc.models[:-1]]
    rest = parts[0].astype(dtype, copy=len(parts) > 1)
    for part in parts[1:]:
        rest *= k
        rest += part
    if rows * k <= _KERNEL_CELLS and rows < 4096:
        side = max(rows, k)
        counted = resolve_backend(backend).confusion_matrix_codes(
            np.ascontiguousarray(rest), np.ascontiguousarray(last), side, None, n_threads=get_num_threads()
        )
        table = np.asarray(counted.counts, dtype=np.int64)[:rows, :k].ravel()
        occupied = np.flatnonzero(table)
        return occupied, table[occupied]
    occupied, counts = np.unique(rest * k + last, return_counts=True)
    return occupied.astype(np.int64), counts.astype(np.int64)


_T = TypeVar("_T")

#: Replicates drawn per block of the multinomial scheme (a block's draws are one
#: ``replicates x cells`` array).
MULTINOMIAL_BLOCK = 64
#: Cell draws (replicates x occupied cells) from which the blocks are drawn on several threads.
PARALLEL_DRAWS = 1 << 18


def multinomial_block(
    counts: npt.NDArray[np.int64],
    strata_cells: Sequence[npt.NDArray[np.intp]],
    n_resamples: int,
    seed: int,
    block: int,
    backend: Backend = "auto",
) -> F64:
    """Replicates ``64 block ..`` of the cell counts (``replicates x cells``): in each stratum
    (its cells listed in ``strata_cells``) a multinomial of the stratum's size. Each replicate
    is the backend's exact draw of ``(seed, replicate)`` (binomial splits of the cells from the
    counter-based stream), the same on both backends and any thread count.

    >>> drawn = multinomial_block(np.array([5, 0, 3]), [np.arange(3)], 3, 7, 0)
    >>> drawn.shape, drawn.sum(axis=1).tolist(), drawn[:, 1].tolist()
    ((3, 3), [8.0, 8.0, 8.0], [0.0, 0.0, 0.0])
    """
    lo, hi = block * MULTINOMIAL_BLOCK, min((block + 1) * MULTINOMIAL_BLOCK, n_resamples)
    be = resolve_backend(backend)
    order = np.concatenate([np.asarray(c, dtype=np.intp) for c in strata_cells]) if strata_cells else np.arange(0)
    ends = np.cumsum([len(c) for c in strata_cells]).astype(np.uint64)
    ordered = np.ascontiguousarray(counts[order], dtype=np.uint64)
    drawn = be.multinomial_draws(ordered, ends, lo, hi - lo, seed, n_threads=1)
    if order.size == counts.size and np.array_equal(order, np.arange(counts.size)):
        return drawn
    out = np.zeros((hi - lo, counts.size))
    out[:, order] = drawn
    return out


def over_blocks(n_resamples: int, cells: int, work: Callable[[int], _T]) -> list[_T]:
    """``work(block)`` for every block of :data:`MULTINOMIAL_BLOCK` replicates, in block order:
    side by side on the threads when the draws are many (the Rust core draws without the GIL;
    each block's draws are its own, so the result is the same on any thread count)."""
    blocks = range(math.ceil(n_resamples / MULTINOMIAL_BLOCK))
    threads = min(get_num_threads(), len(blocks))
    if threads <= 1 or n_resamples * cells < PARALLEL_DRAWS:
        return [work(b) for b in blocks]
    pool = ThreadPoolExecutor(threads)
    try:
        return [done.result() for done in [pool.submit(work, b) for b in blocks]]
    finally:
        pool.shutdown(cancel_futures=True)


def cell_design(
    occupied: npt.NDArray[np.int64],
    counts: npt.NDArray[np.int64],
    k: int,
    n_models: int,
    n_strata: int,
    n_resamples: int,
    seed: int,
    lays: Sequence[Layout],
    backend: Backend = "auto",
) -> Design:
    """Multinomial draws of the occupied joint cells (``stratum, truth, predictions...`` in
    mixed radix ``K``), per stratum: a replicate costs O(cells), whatever the number of rows."""
    width = sum(lay.width for lay in lays)
    rest = occupied.copy()
    digits = []
    for _ in range(n_models):
        digits.append(rest % k)
        rest = rest // k
    truth, stratum = rest % k, rest // k
    # For each model: the joint cells ordered by the model's cell, where each run starts, and
    # the column each run adds to.
    gathers = []
    for lay, pred in zip(lays, reversed(digits), strict=True):
        cell = lay.cells + truth * k + pred
        order = np.argsort(cell, kind="stable")
        ordered = cell[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if ordered.size else ordered
        gathers.append((order, starts, ordered[starts]))

    def joint_to_sums(joint_counts: F64) -> F64:
        """Joint cell counts (``B x cells``) to each model's confusion matrix sums."""
        out = np.zeros((joint_counts.shape[0], width))
        if n_models == 1 and n_strata == 1:
            # The joint cells are the confusion matrix's own.
            out[:, lays[0].cells + occupied] = joint_counts
            return out
        for order, starts, target in gathers:
            if starts.size:
                out[:, target] += np.add.reduceat(joint_counts[:, order], starts, axis=1)
        return out

    full = joint_to_sums(counts[None, :].astype(np.float64))

    strata_cells = [np.flatnonzero(stratum == s) for s in range(n_strata)]

    def replicates() -> F64:
        # One model, no strata: each block's draws go straight to their columns (a slice when
        # every cell is occupied), on the block's own thread.
        direct = n_models == 1 and n_strata == 1
        draws = np.zeros((n_resamples, width if direct else occupied.size))
        columns: slice | npt.NDArray[np.int64] = np.arange(occupied.size)
        if direct:
            start = lays[0].cells
            dense = occupied.size == k * k
            columns = slice(start, start + k * k) if dense else lays[0].cells + occupied

        def fill(block: int) -> None:
            lo = block * MULTINOMIAL_BLOCK
            drawn = multinomial_block(counts, strata_cells, n_resamples, seed, block, backend)
            draws[lo : lo + drawn.shape[0], columns] = drawn

        over_blocks(n_resamples, occupied.size, fill)
        return draws if direct else joint_to_sums(draws)

    def jackknife(metric: Callable[[F64], F64]) -> tuple[F64, F64 | None]:
        # Leaving out one row of joint cell j leaves the counts less one in that cell.
        loo = np.repeat(counts[None, :].astype(np.float64), occupied.size, axis=0) - np.eye(occupied.size)
        return metric(joint_to_sums(loo)), counts.astype(np.float64)

    return Design(full, replicates, jackknife, "multinomial")


def cells_of_rows(enc: Encoded, n_resamples: int, seed: int, lays: Sequence[Layout], backend: Backend) -> Design:
    occupied, counts = occupied_cells(enc, backend)
    return cell_design(occupied, counts, enc.k, len(enc.models), enc.n_strata, n_resamples, seed, lays, backend)


def poisson_design(enc: Encoded, n_resamples: int, seed: int, lays: Sequence[Layout], backend: Backend) -> Design:
    """Poisson(1) weights per row from the counter-based stream; every model's sums in one pass."""
    parts = [row_values(enc, m, lay, backend) for m, lay in zip(enc.models, lays, strict=True)]
    values = parts[0][0] if len(parts) == 1 else np.ascontiguousarray(np.hstack([v for v, _ in parts]))
    segments = [seg for _, segs in parts for seg in segs]
    width = sum(lay.width for lay in lays)
    n = enc.truth.size
    full = column_sums(values, segments, width, counted_sums(enc, lays, [len(segs) for _, segs in parts]))
    be = resolve_backend(backend)
    s_count = enc.n_strata

    def replicates() -> F64:
        if s_count == 1:
            return be.replicate_sums(values, segments, 0, seed, n_resamples, width, get_num_threads())
        # Each stratum's sums in a block of their own, rescaled to the stratum's size.
        shift = (enc.strata * width).astype(np.uint32)
        strat_segments: list[tuple[int, int | npt.NDArray[np.uint32]]] = [
            (length, shift + (np.uint32(cols) if isinstance(cols, int) else cols)) for length, cols in segments
        ]
        sums = be.replicate_sums(values, strat_segments, 0, seed, n_resamples, width * s_count, get_num_threads())
        blocks = sums.reshape(n_resamples, s_count, width)
        size = np.bincount(enc.strata, minlength=s_count).astype(np.float64)
        drawn = blocks[:, :, lays[0].cells : lays[0].cells + enc.k * enc.k].sum(axis=2)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(drawn > 0, size[None, :] / np.where(drawn > 0, drawn, 1.0), 0.0)
        out: F64 = (blocks * scale[:, :, None]).sum(axis=1)
        return out

    def jackknife(metric: Callable[[F64], F64]) -> tuple[F64, F64 | None]:
        out = np.empty(n)
        for lo in range(0, n, _JACKKNIFE_ROWS):
            hi = min(lo + _JACKKNIFE_ROWS, n)
            out[lo:hi] = metric(full - _dense_rows(values, segments, width, lo, hi))
        return out, None

    return Design(full, replicates, jackknife, "poisson")


def counted_sums(enc: Encoded, lays: Sequence[Layout], n_segments: Sequence[int]) -> dict[int, tuple[int, F64]]:
    """The segments of :func:`row_values` whose full sums are known without summing the rows:
    each unweighted model's probabilities (its segment :data:`PCM_SEGMENT`, at ``lay.pcm``),
    whose sums are the probabilistic confusion matrix the check of its rows counted."""
    counted: dict[int, tuple[int, F64]] = {}
    first = 0
    for model, lay, count in zip(enc.models, lays, n_segments, strict=True):
        if enc.weight is None and model.pcm is not None and lay.pcm >= 0:
            counted[first + PCM_SEGMENT] = (lay.pcm, model.pcm.ravel())
        first += count
    return counted


def column_sums(
    values: F64,
    segments: Sequence[tuple[int, int | npt.NDArray[np.uint32]]],
    width: int,
    counted: Mapping[int, tuple[int, F64]] | None = None,
) -> F64:
    """The sums of all rows laid out at their columns (``1 x width``): one bincount per value
    of a segment at a column per row. ``counted``: segments (by their index) whose sums are
    already known, as their first column and the sums laid from it (a probabilistic confusion
    matrix, row-major, at the first column of the segment's class 0)."""
    out = np.zeros((1, width))
    at = 0
    for index, (length, cols) in enumerate(segments):
        if counted is not None and index in counted:
            start, sums = counted[index]
            out[0, start : start + sums.size] += sums
        elif isinstance(cols, int):
            out[0, cols : cols + length] += values[:, at : at + length].sum(axis=0)
        else:
            index_cols = cols.astype(np.intp)
            for j in range(length):
                out[0] += np.bincount(index_cols + j, weights=values[:, at + j], minlength=width)
        at += length
    return out


def _dense_rows(
    values: F64, segments: Sequence[tuple[int, int | npt.NDArray[np.uint32]]], width: int, lo: int, hi: int
) -> F64:
    """Rows ``lo:hi`` of the values laid out at their columns (``(hi - lo) x width``)."""
    out = np.zeros((hi - lo, width))
    r = np.arange(hi - lo)
    at = 0
    for length, cols in segments:
        start = np.full(hi - lo, cols, dtype=np.int64) if isinstance(cols, int) else cols[lo:hi].astype(np.int64)
        for j in range(length):
            out[r, start + j] += values[lo:hi, at + j]
        at += length
    return out


# ---------------------------------------------------------------------------- the inputs and the intervals


#: The most replicates a call (or an Evaluator) may ask for.
MAX_RESAMPLES = 1 << 20


def check_resamples(n_resamples: object, arg: str = "n_resamples") -> int:
    """A number of replicates, checked (the error names ``arg``)."""
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)):
        msg = f"{arg}={n_resamples!r} is invalid; pass the number of replicates, an integer >= 1"
        raise ValidationError(msg)
    if not 1 <= int(n_resamples) <= MAX_RESAMPLES:
        msg = f"{arg}={n_resamples} is invalid; pass an integer between 1 and {MAX_RESAMPLES}"
        raise ValidationError(msg)
    return int(n_resamples)


def check_seed(seed: object) -> int:
    """A seed of the counter-based stream, checked."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) < 1 << 64:
        msg = f"seed={seed!r} is invalid; pass an integer in [0, 2^64)"
        raise ValidationError(msg)
    return int(seed)


def package_version() -> str:
    """The package's version, as the results' provenance records it."""
    return VERSION


def encode_model(
    y_true: np.ndarray,
    pred: ArrayLike | None,
    proba: ArrayLike | None,
    labels: ArrayLike | None,
    backend: Backend,
    top_labels: bool = True,
    truth: Codes | None = None,
    check_rows: bool = True,
) -> tuple[Codes, Model, np.ndarray]:
    """Truth codes, one model and the label set (the Report's rules). Without ``top_labels``
    the hard predictions of probabilities are not made (no confusion matrix will be asked
    for): the model's ``pred`` is then empty. ``truth``: the codes of ``y_true`` under
    ``labels``, already made for another model of the same rows (hard predictions then
    encode only themselves). Without ``check_rows``, probabilities of two classes keep their
    rows unchecked (``Model.unchecked``) for the pass that counts their tie groups; the caller
    runs :func:`checked` before any other kernel reads them."""
    if proba is not None:
        inp = prob_inputs(y_true, proba, labels=labels, y_pred=pred, backend=backend)
        p = inp.y_proba  # float32 stays float32: the row kernels widen each value as they read it
        # The kernels' row checks (entries in [0, 1], rows summing to 1) and the probabilistic
        # confusion matrix (the full sums of unweighted probabilities), nothing else.
        later = not (check_rows or top_labels) and p.shape[1] == 2 and inp.y_pred is None
        acc = None if later else accumulate(inp, backend=backend, n_bins=0, entropy=False, scores=False, hard=False)
        if inp.y_pred is not None:
            codes = np.asarray(inp.y_pred, dtype=np.int64)
        elif top_labels:
            codes = resolve_backend(backend).top_labels(p, get_num_threads())
        else:
            codes = np.zeros(0, dtype=np.int64)
        # Without hard predictions (the ranking metrics alone) int32 codes pass as they are: no
        # copy of 10^7 rows; with them, both int64 (the kernels take one dtype for the pair).
        hard = inp.y_pred is not None or top_labels
        keep = not hard and inp.y_true.dtype in (np.int32, np.int64)
        t = inp.y_true if keep else np.asarray(inp.y_true, dtype=np.int64)
        if acc is None:
            return t, Model(codes, p, None, inp), inp.labels
        return t, Model(codes, p, np.asarray(acc.pcm, dtype=np.float64)), inp.labels
    if pred is None:
        msg = "pass y_pred= (hard predictions) or y_proba= (probabilities): the metrics need one of them"
        raise ValidationError(msg)
    pair = validation.label_pair(y_true, pred)
    if labels is None:
        lab = CountedTable._count(pair.y_true, pair.y_pred, None, None, None, backend).labels
    else:
        lab = validation.check_labels(labels, pair.kind)
    lab_codes = lab.astype(np.str_) if pair.kind == "str" else lab.astype(np.int64)

    def encode(values: np.ndarray, name: str) -> Codes:
        # Checked as they come, then int32 (labels are far fewer than 2^31): int32 codes pass
        # without a copy, and every later pass over them reads half the bytes of int64.
        c = np.asarray(label_codes(values, lab_codes, name, pair.kind))
        if c.size and (c.max() >= lab.size or c.min() < 0):
            msg = f"{name} holds values that are not among labels; pass labels= listing every class"
            raise LabelError(msg)
        return c.astype(np.int32, copy=False)

    t = encode(pair.y_true, "y_true") if truth is None else truth
    return t, Model(encode(pair.y_pred, "y_pred"), None), np.asarray(lab)


def metric_interval(
    name: str,
    estimate: float,
    reps: rm.Values,
    method: IntervalMethod,
    level: float,
    accel: Callable[[], float],
) -> MetricInterval:
    values = reps.value
    defined = values[~np.isnan(values)]
    se = float(np.std(defined, ddof=1)) if defined.size > 1 else math.nan
    a = accel() if method == "bca" else 0.0
    low, high = replicate_interval(estimate, values, method, level, a)
    del name
    return MetricInterval(estimate, se, low, high, int(reps.undefined.sum()), int(values.size))


def design_intervals(
    design: Design,
    k: int,
    lay: Layout,
    names: list[str],
    chosen: Sequence[str],
    prov: Provenance,
    return_distribution: bool,
) -> BootstrapResult:
    """The intervals of the chosen metrics from a design's full sums and replicates."""
    full_m, full_pc = derive(design.full, k, lay)
    reps_m, reps_pc = derive(design.replicates(), k, lay)
    out: dict[str, MetricInterval] = {}
    per_class: dict[str, dict[str, MetricInterval]] = {}
    dist: dict[str, F64] = {}
    method, level = prov.method, prov.confidence_level

    def accel_of(name: str, col: int | None) -> Callable[[], float]:
        def metric(sums: F64) -> F64:
            m, pc = derive(sums, k, lay)
            return m[name].value if col is None else pc[name].value[:, col]

        return lambda: acceleration(*design.jackknife(metric))

    # Every chosen metric's replicates, one row per value (a metric, or a metric of one class), read
    # in one pass (:func:`replicate_intervals`); BCa and rows with an undefined replicate one by one.
    rows: list[tuple[str, str | None, int | None]] = []
    estimates: list[F64] = []
    blocks: list[F64] = []
    flags: list[npt.NDArray[np.bool_]] = []
    for name in chosen:
        if name in full_m:
            rows.append((name, None, None))
            estimates.append(full_m[name].value[:1])
            blocks.append(reps_m[name].value[None, :])
            flags.append(reps_m[name].undefined[None, :])
            continue
        rows.extend((name, label, j) for j, label in enumerate(names))
        estimates.append(full_pc[name].value[0, : len(names)])
        blocks.append(reps_pc[name].value[:, : len(names)].T)
        flags.append(reps_pc[name].undefined[:, : len(names)].T)
    if not rows:
        return BootstrapResult(out, per_class, prov, dist if return_distribution else None)
    values = np.ascontiguousarray(np.concatenate(blocks))
    undefined = np.concatenate(flags)
    n_undefined = undefined.sum(axis=1)
    est = np.concatenate(estimates).astype(np.float64)
    low, high, se, done = replicate_intervals(est, values, method, level)
    for i, (name, label, j) in enumerate(rows):
        if done[i]:
            iv = MetricInterval(
                float(est[i]), float(se[i]), float(low[i]), float(high[i]), int(n_undefined[i]), values.shape[1]
            )
        else:
            reps = rm.Values(values[i], undefined[i])
            iv = metric_interval(name, float(est[i]), reps, method, level, accel_of(name, j))
        if label is None:
            out[name] = iv
            dist[name] = values[i]
        else:
            per_class.setdefault(label, {})[name] = iv
            dist[f"{name}[{label}]"] = values[i]
    return BootstrapResult(out, per_class, prov, dist if return_distribution else None)

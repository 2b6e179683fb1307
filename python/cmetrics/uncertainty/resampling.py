"""Bootstrap intervals and paired comparisons (docs/definitions.md §11).

Two schemes, both exact resamplings of the rows:

- ``"multinomial"``: resampling ``n`` rows with replacement draws the cells of the confusion
  matrix from Multinomial(n, cells / n) (within each stratum when ``strata`` is given), so a
  replicate costs O(K^2) whatever ``n``; used when every metric asked for is one of the
  confusion matrix and rows are unweighted. The cells are drawn by numpy's Philox generator,
  keyed by ``seed``, one stream per block of 64 replicates (counter ``(0, 0, block, 0)``), the
  blocks drawn side by side on the threads: the result is the same on any thread count. One
  family of ranking metrics asked for alone, of unweighted rows with few distinct scores, draws
  its (tie group, side) cells the same way (:mod:`cmetrics.uncertainty.ranking_cells`).
- ``"poisson"``: every row gets a Poisson(1) weight in every replicate, a pure function of
  (seed, row index, replicate) from Philox4x32-10 (:mod:`cmetrics._numpy.random` and its Rust
  twin), and each replicate is the weighted sum of the rows' contributions, computed in one
  pass for all replicates and every metric at once (cells, probabilistic confusion matrix, log
  loss, Brier). The result does not depend on the thread count. With ``strata``, each stratum's
  sums are rescaled to the stratum's size.

Every replicate keeps the label set of the full data. BCa's acceleration comes from exact
leave-one-out values: one per occupied cell (weighted by its count) in the multinomial scheme,
one per row (``sums - row``) in the Poisson scheme, never by refitting ``n`` times.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from cmetrics._backend import resolve_backend
from cmetrics._base import validation
from cmetrics._base.aliases import F64, Backend, Proba
from cmetrics._base.config import get_num_threads
from cmetrics._derive import ranking_jackknife, ranking_walk
from cmetrics._derive import replicate_metrics as rm
from cmetrics._kernels import BinaryRanking, Groups
from cmetrics._results.grouped import GroupedReport, LazyReports
from cmetrics._results.intervals import (
    BootstrapResult,
    Comparison,
    Difference,
    IntervalMethod,
    Provenance,
    Scheme,
)
from cmetrics._results.report import RANKING as SELECTIVE_METRICS
from cmetrics._results.report import Report
from cmetrics.exceptions import (
    LengthMismatchError,
    NotImplementedOptionError,
    ShapeError,
    ValidationError,
    WeightError,
)
from cmetrics.uncertainty.intervals import acceleration, check_level, check_method
from cmetrics.uncertainty.ranking_cells import cell_replicates, checked_ranking_cells, ranking_cells
from cmetrics.uncertainty.schemes import (
    Codes,
    Derived,
    Encoded,
    Layout,
    Model,
    cell_design,
    cells_of_rows,
    check_resamples,
    check_seed,
    checked,
    derive,
    design_intervals,
    encode_model,
    layout,
    metric_interval,
    package_version,
    poisson_design,
)

if TYPE_CHECKING:  # the type of an engine's Evaluator (the streaming package imports this one's schemes)
    from cmetrics.streaming.evaluator import Evaluator

#: The ranking metrics of a binary problem with probabilities (the score of the second class).
RANKING_METRICS = ("roc_auc", "average_precision")
#: The macro one-vs-rest ranking metrics of three or more classes with probabilities.
OVR_METRICS = ("roc_auc_ovr", "average_precision_ovr")
#: Metrics where lower is better.
LOSSES = frozenset({"log_loss", "brier_score"})


# ---------------------------------------------------------------------------- the inputs


def _weights(sample_weight: ArrayLike | None, truth: Codes, pred: Codes, k: int, backend: Backend) -> F64 | None:
    """The weights, checked by the counting kernel (finite, >= 0, some positive: the errors of
    every metric) and divided by their largest: every metric is a ratio of weighted sums, and a
    replicate multiplies weights by up to 12, so huge or subnormal weights stay in range."""
    w = validation.weights(sample_weight, truth.size)
    if w is None:
        return None
    counted = resolve_backend(backend).confusion_matrix_codes(truth, pred, k, w, n_threads=get_num_threads())
    if not float(np.sum(counted.weighted if counted.weighted is not None else w)) > 0:
        msg = "sample_weight sums to 0; at least one sample needs a positive weight"
        raise WeightError(msg)
    top = float(w.max())
    out: F64 = w / top
    return out


def _strata(strata: ArrayLike | None, n: int) -> tuple[npt.NDArray[np.int64], int]:
    if strata is None:
        return np.zeros(n, dtype=np.int64), 1
    s = validation.as_1d(strata, "strata")
    if s.shape[0] != n:
        msg = f"y_true has {n} rows but strata has {s.shape[0]}; pass one stratum per row"
        raise LengthMismatchError(msg)
    _, codes = np.unique(s, return_inverse=True)
    return codes.astype(np.int64), int(codes.max()) + 1 if n else 1


# ---------------------------------------------------------------------------- the intervals


def _select(metrics: Sequence[str] | None, available: Sequence[str], per_class: Sequence[str]) -> list[str]:
    if metrics is None:
        return list(available)
    if isinstance(metrics, str):
        metrics = [metrics]
    unknown = [m for m in metrics if m not in available and m not in per_class]
    if unknown:
        msg = (
            f"metrics={unknown!r}: unknown or not available with these inputs; choose among "
            f"{', '.join(available)} (per class: {', '.join(per_class)})"
        )
        raise ValidationError(msg)
    return list(dict.fromkeys(metrics))


def _labels_text(labels: np.ndarray) -> list[str]:
    return [str(x) for x in labels.tolist()]


def bootstrap(
    y_true: ArrayLike,
    *,
    y_pred: ArrayLike | None = None,
    y_proba: ArrayLike | None = None,
    confidence: ArrayLike | None = None,
    metrics: Sequence[str] | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    method: IntervalMethod = "percentile",
    seed: int = 0,
    sample_weight: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    strata: ArrayLike | None = None,
    return_distribution: bool = False,
    backend: Backend = "auto",
) -> BootstrapResult:
    """Bootstrap intervals of the Report's metrics, from one resample shared by all of them.

    ``metrics``: names of :data:`TABLE_METRICS` (confusion-matrix metrics; with ``y_proba`` the
    matrix of the top label unless ``y_pred`` is given) and, with ``y_proba``, of
    :data:`PROB_METRICS`; the per-class ``precision``, ``recall``, ``f1`` (and ``cprecision``,
    ``crecall``, ``cf1``) give one interval per class; with the probabilities of two classes,
    ``roc_auc`` and ``average_precision`` of the second class's column too (one sort, then a
    weighted walk per replicate); with ``y_proba`` (its top label's probability) or with
    ``y_pred`` and ``confidence``, the selective-prediction metrics of the confidence against
    correctness, :data:`SELECTIVE_METRICS` (``refinement``, ``auroc_confidence``,
    ``reversed_pair_proportion``, ``aurc``: the same sort-once walk); with the probabilities of
    three or more classes, the macro one-vs-rest ``roc_auc_ovr`` and ``average_precision_ovr``
    (each class's column walked so). All of them by default. The scheme is
    ``"multinomial"`` when only confusion-matrix metrics of unweighted rows are asked for, else
    ``"poisson"`` (module docs); the result says which. The same ``seed`` gives the same result
    bit for bit on any thread count.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 3, 2000)
    >>> pred = np.where(rng.random(2000) < 0.8, y, rng.integers(0, 3, 2000))
    >>> r = bootstrap(y, y_pred=pred, metrics=["accuracy", "f1_macro"], n_resamples=500, seed=1)
    >>> r.provenance.scheme, r["accuracy"].estimate, r["accuracy"].low, round(r["accuracy"].high, 4)
    ('multinomial', 0.87, 0.856, 0.8843)
    >>> conf = np.where(pred == y, rng.uniform(0.5, 1.0, 2000), rng.uniform(0.3, 0.9, 2000))
    >>> s = bootstrap(y, y_pred=pred, confidence=conf, metrics=["aurc", "auroc_confidence"], n_resamples=200)
    >>> s.provenance.scheme, round(s["aurc"].estimate, 4), s["aurc"].low < s["aurc"].estimate < s["aurc"].high
    ('poisson', 0.0505, True)
    """
    n_resamples, level, method, seed = check_bootstrap(n_resamples, confidence_level, method, seed)
    if confidence is not None and (y_proba is not None or y_pred is None):
        msg = (
            "confidence= scores hard predictions: pass y_pred with confidence "
            "(y_proba has its own top-label confidence)"
        )
        raise ValidationError(msg)
    t = validation.as_1d(y_true, "y_true")
    # Ranking metrics alone, unweighted: no confusion matrix, so no top labels to make.
    ranking_only = metrics is not None and sample_weight is None and set(metrics) <= set(RANKING_METRICS)
    # Without strata, the rows of two classes ranked alone are checked where their groups are counted.
    check_rows = not ranking_only or strata is not None
    truth, model, labs = encode_model(t, y_pred, y_proba, labels, backend, not ranking_only, check_rows=check_rows)
    n = truth.size
    w = _weights(sample_weight, truth, model.pred, int(labs.size), backend)
    s, s_count = _strata(strata, n)
    enc = Encoded(truth, [model], labs, w, s, s_count)
    proba = model.proba is not None
    ranking = list(RANKING_METRICS) if proba and enc.k == 2 else []
    ranking += list(SELECTIVE_METRICS) if proba or confidence is not None else []
    ranking += list(OVR_METRICS) if proba and enc.k > 2 else []
    available = list(rm.TABLE_METRICS) + (list(rm.PROB_METRICS) if proba else []) + ranking
    per_class_names = list(rm.TABLE_PER_CLASS) + (list(rm.PROB_PER_CLASS) if proba else [])
    chosen = _select(metrics, available + (per_class_names if metrics is None else []), per_class_names)
    chosen, ranked, selective, ovr = _split_ranking(chosen)
    row_level = (
        any(m in rm.PROB_METRICS or m in rm.PROB_PER_CLASS for m in chosen)
        or w is not None
        or bool(ranked or selective or ovr)
    )
    lay = layout(enc.k, proba and row_level)
    model, ranking_input, selective_input, groups = _ranking_inputs(
        truth,
        model,
        confidence,
        bool(ranked),
        bool(selective),
        not (chosen or ovr or w is not None or strata is not None),
        backend,
    )
    if not chosen:  # the ranking metrics alone: no sums to resample
        scheme: Scheme = "multinomial" if groups is not None else "poisson"
        prov = Provenance(method, scheme, n_resamples, seed, level, strata is not None, package_version())
        result = BootstrapResult({}, {}, prov, {} if return_distribution else None)
    else:
        if row_level:
            design = poisson_design(enc, n_resamples, seed, [lay], backend)
        else:
            enc = Encoded(truth, [Model(model.pred, None)], labs, w, s, s_count)
            design = cells_of_rows(enc, n_resamples, seed, [lay], backend)
        prov = Provenance(method, design.scheme, n_resamples, seed, level, strata is not None, package_version())
        result = design_intervals(design, enc.k, lay, _labels_text(labs), chosen, prov, return_distribution)
    if ranking_input is not None:
        _ranking_intervals(result, ranked, *ranking_input, w, prov, backend, groups)
    if selective_input is not None:
        _ranking_intervals(result, selective, *selective_input, w, prov, backend, groups)
    if ovr:
        assert model.proba is not None  # one-vs-rest needs probabilities
        _ovr_intervals(result, ovr, truth, model.proba, w, prov, backend)
    return result


def _split_ranking(chosen: list[str]) -> tuple[list[str], list[str], list[str], list[str]]:
    """The metrics resampled as sums, then the binary ranking, selective and one-vs-rest ones."""
    ranked = [m for m in chosen if m in RANKING_METRICS]
    selective = [m for m in chosen if m in SELECTIVE_METRICS]
    ovr = [m for m in chosen if m in OVR_METRICS]
    walked = ranked + selective + ovr
    return [m for m in chosen if m not in walked], ranked, selective, ovr


def _ranking_inputs(
    truth: Codes,
    model: Model,
    confidence: ArrayLike | None,
    ranked: bool,
    selective: bool,
    cells_allowed: bool,
    backend: Backend,
) -> tuple[Model, _Ranked | None, _Ranked | None, Groups | None]:
    """The model with its probability rows checked, the (positive, score) rows of the binary
    ranking metrics and of the selective ones, and, when one family is asked for alone and
    ``cells_allowed`` (no other metric, unweighted, no strata), its tie groups if drawing their
    cells is cheaper than walking the rows."""
    positive = truth == 1 if ranked else None
    groups: Groups | None = None
    grouped = False  # whether the tie groups were counted by the pass that checked the rows
    if model.unchecked is not None and positive is not None and cells_allowed and not selective:
        groups, grouped = checked_ranking_cells(positive, model.unchecked, backend)
    if not grouped:
        model = checked(model, backend)  # before any other kernel reads the rows
    ranking_input: _Ranked | None = None
    if positive is not None:
        assert model.proba is not None  # ranked needs probabilities
        # The column where it lies: the tie groups read it strided; the row walk copies it.
        ranking_input = (positive, np.asarray(model.proba[:, 1], dtype=np.float64))
    selective_input = _correctness(truth, model, confidence) if selective else None
    alone = ranking_input if selective_input is None else selective_input if ranking_input is None else None
    if cells_allowed and alone is not None and not grouped:
        groups = ranking_cells(*alone, backend)
    return model, ranking_input, selective_input, groups


def _correctness(truth: Codes, model: Model, confidence: ArrayLike | None) -> tuple[npt.NDArray[np.bool_], F64]:
    """Each row's correctness and confidence: the top label's probability with ``y_proba``, the
    caller's confidence (checked: one finite value per row) with ``y_pred``."""
    if confidence is None:
        assert model.proba is not None  # the selective metrics need y_proba or confidence
        top = np.ascontiguousarray(model.proba.max(axis=1), dtype=np.float64)
        return np.ascontiguousarray(model.pred == truth), top
    # The checks evaluate() makes of a caller's confidence, on the encoded labels.
    correct, conf = ranking_walk.user_confidence(truth, model.pred, confidence)
    return correct, np.ascontiguousarray(conf, dtype=np.float64)


#: The rows of one ranking family: (positive, score).
_Ranked = tuple[npt.NDArray[np.bool_], F64]


def _ranking_intervals(
    result: BootstrapResult,
    names: Sequence[str],
    positive: npt.NDArray[np.bool_],
    score: F64,
    weight: F64 | None,
    prov: Provenance,
    backend: Backend,
    groups: Groups | None = None,
) -> None:
    """Add ranking metrics of ``score`` against ``positive`` to ``result``. In the Poisson
    scheme: one sort, then a weighted walk per replicate (the same row weights as the other
    row-level metrics). In the multinomial scheme (``groups``, the tie groups of unweighted
    rows): the (group, side) cells drawn as the confusion matrix's are, each replicate a walk
    over its drawn cells."""
    be, threads = resolve_backend(backend), get_num_threads()
    if groups is None:  # the rows are walked: their scores in one array
        score = np.ascontiguousarray(score, dtype=np.float64)
    curves = "average_precision" in names or "aurc" in names
    if groups is not None:
        full: BinaryRanking | None = be.walk_groups(groups, curves=True)
        reps = cell_replicates(groups, prov, curves, backend)
    else:
        reps = be.replicate_ranking(positive, score, weight, 0, prov.seed, prov.n_resamples, threads, curves)
        # The AUROC of the rows comes with the replicates (the same sort); the curves and the
        # weighted pair shares from the walk of the data.
        walked = weight is not None or curves or "reversed_pair_proportion" in names
        full = be.binary_ranking(positive, score, weight, curves=True, n_threads=threads) if walked else None
    if full is None:
        p, q = reps.n_pos, reps.n_neg
        auc = (2 * reps.ordered + reps.tied) / (2 * p * q) if p * q else math.nan
    elif weight is None:
        auc = (2 * full.ordered + full.tied) / (2 * full.n_pos * full.n_neg) if full.n_pos * full.n_neg else math.nan
    else:
        auc = full.ordered_share + 0.5 * full.tied_share if full.n_pos * full.n_neg else math.nan
    # RPP: the reversed pairs' share of all pairs of rows, 0 without (correct, wrong) pairs.
    total = reps.w_pos + reps.w_neg
    with np.errstate(invalid="ignore", divide="ignore"):
        reversed_share = np.where(reps.w_pos * reps.w_neg > 0, 1.0 - reps.auroc - 0.5 * reps.tied_share, 0.0)
        rpp = np.where(total > 0, np.clip(reversed_share, 0.0, 1.0) * reps.w_pos * reps.w_neg / total**2, np.nan)
    values = {"roc_auc": (auc, reps.auroc), "auroc_confidence": (auc, reps.auroc), "refinement": (auc, reps.auroc)}
    if full is not None:
        scores = ranking_walk.selective_scores(full, "half", weight is not None)
        values["average_precision"] = (full.average_precision, reps.average_precision)
        values["aurc"] = (scores.aurc, reps.aurc)
        values["reversed_pair_proportion"] = (scores.reversed_pair_proportion, rpp)

    @functools.cache
    def tie_groups() -> Groups:
        return groups if groups is not None else be.score_groups(positive, score, weight, threads)

    def accel(name: str) -> float:
        # Exact leave-one-out values from the tie groups (DeLong's placements for the AUROC).
        return acceleration(*ranking_jackknife.binary(name, positive, score, weight, tie_groups()))

    _add_intervals(result, names, values, prov, accel)


def _add_intervals(
    result: BootstrapResult,
    names: Sequence[str],
    values: dict[str, tuple[float, F64]],
    prov: Provenance,
    accel: Callable[[str], float],
) -> None:
    """The interval of each of ``names`` from its ``(estimate, replicates)`` (NaN replicates
    counted as undefined; ``accel(name)``: BCa's acceleration), and the replicates when
    ``result`` keeps the distribution."""
    method, level = prov.method, prov.confidence_level
    for name in names:
        estimate, replicates = values[name]
        reps = rm.Values(replicates, np.isnan(replicates))
        result.metrics[name] = metric_interval(
            name, float(estimate), reps, method, level, functools.partial(accel, name)
        )
        if result.distribution is not None:
            result.distribution[name] = replicates


def _ovr_intervals(
    result: BootstrapResult,
    names: Sequence[str],
    truth: Codes,
    proba: Proba,
    weight: F64 | None,
    prov: Provenance,
    backend: Backend,
) -> None:
    """The macro one-vs-rest AUROC and AP (the Report's ``roc_auc_ovr``,
    ``average_precision_ovr``): each class's column walked as the binary ranking metrics are,
    with the same row weights, then in every replicate the mean over the classes with both
    positive and negative rows (in the data for the estimate, in the replicate for it)."""
    be, threads = resolve_backend(backend), get_num_threads()
    curves = "average_precision_ovr" in names
    estimates: list[tuple[float, float]] = []
    aucs, aps = [], []
    for c in range(proba.shape[1]):
        positive = np.ascontiguousarray(truth == c)
        score = np.ascontiguousarray(proba[:, c], dtype=np.float64)
        full = be.binary_ranking(positive, score, weight, curves=True, n_threads=threads)
        if ranking_walk.no_pairs(full):
            continue
        estimates.append((ranking_walk.refinement(full, "half", weight is not None), full.average_precision))
        reps = be.replicate_ranking(positive, score, weight, 0, prov.seed, prov.n_resamples, threads, curves)
        aucs.append(reps.auroc)
        aps.append(reps.average_precision)
    nan = np.full(prov.n_resamples, math.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a replicate without any ranked class
        auc_reps = np.nanmean(np.vstack(aucs), axis=0) if aucs else nan
        ap_reps = np.nanmean(np.vstack(aps), axis=0) if aps else nan
    est = np.array(estimates).reshape(-1, 2)
    values = {
        "roc_auc_ovr": (float(est[:, 0].mean()) if estimates else math.nan, auc_reps),
        "average_precision_ovr": (float(est[:, 1].mean()) if estimates else math.nan, ap_reps),
    }

    @functools.cache
    def jackknife() -> dict[str, F64]:
        return ranking_jackknife.one_vs_rest(names, truth, proba, weight, ranking_jackknife.groups_of(be, threads))

    def accel(name: str) -> float:
        return acceleration(jackknife()[name])

    _add_intervals(result, names, values, prov, accel)


def check_bootstrap(
    n_resamples: int, confidence_level: float, method: str, seed: int
) -> tuple[int, float, IntervalMethod, int]:
    """The bootstrap's arguments, checked (each error names its argument)."""
    level = check_level(confidence_level)
    count = check_resamples(n_resamples)
    return count, level, check_method(method, count, level), check_seed(seed)


def report_intervals(
    report: Report,
    *,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    method: IntervalMethod = "percentile",
    seed: int = 0,
    metrics: Sequence[str] | None = None,
    return_distribution: bool = False,
    backend: Backend = "auto",
) -> BootstrapResult:
    """Bootstrap intervals of a :class:`~cmetrics.Report`'s confusion-matrix metrics from its
    counts alone (the multinomial scheme): the report of an :class:`~cmetrics.Evaluator`
    merged from any number of batches, Dask partitions or files gets its intervals in
    milliseconds, with no row read again. The same seed gives the same intervals as
    :func:`bootstrap` of the rows.

    >>> import cmetrics
    >>> r = cmetrics.evaluate([0, 1, 1, 0, 1, 1, 0, 1] * 50, y_pred=[0, 1, 0, 0, 1, 1, 1, 1] * 50)
    >>> iv = report_intervals(r, metrics=["accuracy"], n_resamples=400, seed=3)
    >>> iv["accuracy"].estimate, iv["accuracy"].low < 0.75 < iv["accuracy"].high
    (0.75, True)
    """
    n_resamples, level, method, seed = check_bootstrap(n_resamples, confidence_level, method, seed)
    cm = np.asarray(report.confusion_matrix)
    if cm.dtype.kind not in "iu":
        msg = (
            "report has weighted counts: the multinomial resampling of cells needs row counts; bootstrap the rows "
            "with cmetrics.bootstrap(..., sample_weight=...)"
        )
        raise NotImplementedOptionError(msg)
    flat = cm.astype(np.int64).ravel()
    if flat.sum() <= 0:
        msg = "report has no rows to resample"
        raise ValidationError(msg)
    k = cm.shape[0]
    occupied = np.flatnonzero(flat)
    lay = layout(k, False)
    design = cell_design(occupied, flat[occupied], k, 1, 1, n_resamples, seed, [lay], backend)
    chosen = _select(metrics, list(rm.TABLE_METRICS) + list(rm.TABLE_PER_CLASS), list(rm.TABLE_PER_CLASS))
    names = [str(x) for x in report.labels]
    prov = Provenance(method, "multinomial", n_resamples, seed, level, False, package_version())
    return design_intervals(design, k, lay, names, chosen, prov, return_distribution)


def check_count_bootstrap(
    bootstrap: int | None, confidence_level: float, seed: int, weighted: bool, instead: str
) -> None:
    """An engine's ``bootstrap=`` (intervals of its merged counts) checked; weighted rows refused
    (a multinomial of the cells resamples unit rows), ``instead`` saying what to do."""
    if bootstrap is None:
        return
    check_bootstrap(bootstrap, confidence_level, "percentile", seed)
    if weighted:
        msg = f"bootstrap= resamples the counts of unweighted rows; with weight=, {instead}"
        raise NotImplementedOptionError(msg)


def engine_report(
    ev: Evaluator, group_names: list[str], bootstrap: int | None, confidence_level: float, seed: int
) -> Report | GroupedReport:
    """The report of an engine's merged Evaluator (grouped when ``group_names``), with the
    intervals of its counts when ``bootstrap`` is given."""
    report = ev.grouped_report(names=group_names) if group_names else ev.report()
    if bootstrap is not None:
        add_intervals(report, bootstrap, confidence_level, seed)
    return report


def add_intervals(
    report: Report | GroupedReport, n_resamples: int, confidence_level: float = 0.95, seed: int = 0
) -> None:
    """Give ``report`` the intervals of :func:`report_intervals`; a grouped report's groups get
    theirs when each is first read (each group's draws depend on its counts and the seed alone,
    so the order of reading changes nothing, and a report of 10^4 groups is not 10^4 resamplings
    before anything is read); a group without rows gets none."""

    def with_intervals(rep: Report) -> Report:
        if rep.n_samples > 0:
            rep.intervals = report_intervals(rep, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed)
        return rep

    if isinstance(report, Report):
        with_intervals(report)
        return
    with_intervals(report.overall)
    groups = report.groups
    keys = list(groups)
    report.groups = LazyReports(keys, lambda i: with_intervals(groups[keys[i]]))


def _as_model(x: ArrayLike, name: str) -> tuple[ArrayLike | None, ArrayLike | None]:
    """``(y_pred, y_proba)`` of a model given as predictions (1-D) or probabilities (2-D)."""
    a = np.asarray(x) if not hasattr(x, "__array__") else x
    ndim = np.ndim(a)
    if ndim == 2:
        return None, a
    if ndim == 1:
        return a, None
    msg = f"{name} must be predictions (1-D) or probabilities (2-D, one column per class); got {ndim} dimensions"
    raise ShapeError(msg)


def compare(
    y_true: ArrayLike,
    *,
    a: ArrayLike,
    b: ArrayLike,
    metrics: Sequence[str] | None = None,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    method: IntervalMethod = "percentile",
    seed: int = 0,
    sample_weight: ArrayLike | None = None,
    labels: ArrayLike | None = None,
    return_distribution: bool = False,
    backend: Backend = "auto",
) -> Comparison:
    """Paired bootstrap comparison of two models on the same rows: ``a - b`` per metric.

    ``a`` and ``b`` are each hard predictions (1-D) or probabilities (2-D). Both models see the
    same resample: the joint cells (truth, a's prediction, b's prediction) from one multinomial,
    or the same Poisson row weights. Per metric: both values, the difference, its interval, the
    two-sided bootstrap p-value of no difference and the share of replicates in which ``a`` is
    better (Gu and Hopkins 2023's likelihood of beating a baseline).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 3000)
    >>> good = np.where(rng.random(3000) < 0.9, y, 1 - y)
    >>> fair = np.where(rng.random(3000) < 0.8, y, 1 - y)
    >>> c = compare(y, a=good, b=fair, metrics=["accuracy"], n_resamples=500)
    >>> c["accuracy"].p_value < 0.01, c["accuracy"].prob_a_better
    (True, 1.0)
    """
    n_resamples, level, method, seed = check_bootstrap(n_resamples, confidence_level, method, seed)
    t = validation.as_1d(y_true, "y_true")
    pred_a, proba_a = _as_model(a, "a")
    pred_b, proba_b = _as_model(b, "b")
    truth, model_a, labs = encode_model(t, pred_a, proba_a, labels, backend)
    n = truth.size
    if np.shape(b)[0] != n:
        msg = f"y_true has {n} rows but b has {np.shape(b)[0]}; pass both models' outputs for the same rows"
        raise LengthMismatchError(msg)
    # The same labels as model a's, so the same truth codes: b's predictions encode alone.
    _, model_b, _ = encode_model(t, pred_b, proba_b, labs if labels is None else labels, backend, truth=truth)
    w = _weights(sample_weight, truth, model_a.pred, int(labs.size), backend)
    proba = model_a.proba is not None and model_b.proba is not None
    available = list(rm.TABLE_METRICS) + (list(rm.PROB_METRICS) if proba else [])
    chosen = _select(metrics, available, [])
    row_level = any(m in rm.PROB_METRICS for m in chosen) or w is not None
    s, s_count = _strata(None, n)
    k = int(labs.size)
    if row_level:
        lay_a = layout(k, True)
        lay_b = layout(k, True, lay_a.width)
        enc = Encoded(truth, [model_a, model_b], labs, w, s, s_count)
        design = poisson_design(enc, n_resamples, seed, [lay_a, lay_b], backend)
    else:
        lay_a = layout(k, False)
        lay_b = layout(k, False, lay_a.width)
        hard = [Model(model_a.pred, None), Model(model_b.pred, None)]
        enc = Encoded(truth, hard, labs, w, s, s_count)
        design = cells_of_rows(enc, n_resamples, seed, [lay_a, lay_b], backend)

    def both(sums: F64) -> tuple[Derived, Derived]:
        return derive(sums[:, : lay_a.width], k, lay_a), derive(sums[:, lay_a.width :], k, _shifted(lay_b))

    (full_a, _), (full_b, _) = both(design.full)
    (reps_a, _), (reps_b, _) = both(design.replicates())
    out: dict[str, Difference] = {}
    dist: dict[str, F64] = {}
    for name in chosen:
        va, vb = float(full_a[name].value[0]), float(full_b[name].value[0])
        d = reps_a[name].value - reps_b[name].value
        undefined = reps_a[name].undefined | reps_b[name].undefined

        def accel(name: str = name) -> float:
            def metric(sums: F64) -> F64:
                (ma, _), (mb, _) = both(sums)
                diff: F64 = ma[name].value - mb[name].value
                return diff

            return acceleration(*design.jackknife(metric))

        iv = metric_interval(name, va - vb, rm.Values(d, undefined), method, level, accel)
        defined = d[~np.isnan(d)]
        if defined.size:
            p_value = min(1.0, 2 * min(float(np.mean(defined <= 0)), float(np.mean(defined >= 0))))
            better = float(np.mean(defined < 0 if name in LOSSES else defined > 0))
        else:
            p_value = better = math.nan
        out[name] = Difference(va, vb, va - vb, iv.standard_error, iv.low, iv.high, p_value, better, iv.n_undefined)
        dist[name] = d
    prov = Provenance(method, design.scheme, n_resamples, seed, level, False, package_version())
    return Comparison(out, prov, dist if return_distribution else None)


def _shifted(lay: Layout) -> Layout:
    """A layout read from a slice that starts where it does."""
    off = lay.cells
    return Layout(0, lay.pcm - off if lay.pcm >= 0 else -1, lay.tail - off if lay.tail >= 0 else -1, lay.width)


__all__ = ["bootstrap", "compare", "report_intervals"]  # add_intervals: for evaluate, Dask and the CLI

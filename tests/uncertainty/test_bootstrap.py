"""Bootstrap intervals and paired comparisons: every replicate against an independent
evaluation of the same resample, the schemes against explicit row resampling, reproducibility,
coverage on data with a known population value, BCa's acceleration against a row-by-row
jackknife, and the errors."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy.stats import ks_2samp
from sklearn.metrics import average_precision_score, roc_auc_score

import cmetrics
from cmetrics._backend import resolve_backend
from cmetrics._derive import replicate_metrics as rm
from cmetrics.exceptions import LabelError, LengthMismatchError, ProbabilityError, ValidationError
from cmetrics.uncertainty import intervals, resampling, schemes
from cmetrics.uncertainty.schemes import multinomial_block


def _model(n: int, k: int, seed: int, skill: float = 1.5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    logits = rng.normal(0, 1, (n, k))
    logits[np.arange(n), y] += skill
    p = np.exp(logits)
    return y, p / p.sum(axis=1, keepdims=True)


def _report(y, backend, **kw) -> dict[str, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = cmetrics.evaluate(y, backend=backend, **kw)
    out = dict(r.metrics)
    for label, row in r.per_class.items():
        for name in ("precision", "recall", "f1", "cprecision", "crecall", "cf1"):
            if name in row:
                out[f"{name}[{label}]"] = row[name]
    return out


def test_point_estimates_equal_the_report(backend: str) -> None:
    y, p = _model(3000, 4, 1)
    r = cmetrics.bootstrap(y, y_proba=p, n_resamples=20, backend=backend)
    want = _report(y, backend, y_proba=p)
    for name, iv in r.metrics.items():
        assert iv.estimate == pytest.approx(want[name], rel=1e-12, abs=1e-15), name
    for label, rows in r.per_class.items():
        for name, iv in rows.items():
            assert iv.estimate == pytest.approx(want[f"{name}[{label}]"], rel=1e-12, abs=1e-15)


def test_confidence_estimates_are_the_reports_bits(backend: str) -> None:
    """Unweighted, the full sums of the probabilities are the probabilistic confusion matrix
    the rows' check counted: the estimates of cP, cR and cF1 are the Report's values bit for
    bit, at a size the pass splits into many chunks; weighted, the rows are summed (to 1e-12)."""
    y, p = _model(300_000, 4, 5)
    names = ["cprecision_macro", "crecall_weighted", "cf1_micro", "cf1", "log_loss", "accuracy"]
    r = cmetrics.bootstrap(y, y_proba=p, metrics=names, n_resamples=3, backend=backend)
    want = _report(y, backend, y_proba=p)
    for name in ("cprecision_macro", "crecall_weighted", "cf1_micro", "accuracy"):
        assert r[name].estimate == want[name], name
    for label, rows in r.per_class.items():
        assert rows["cf1"].estimate == want[f"cf1[{label}]"], label
    assert r["log_loss"].estimate == pytest.approx(want["log_loss"], rel=1e-12)
    w = np.random.default_rng(6).uniform(0.5, 2.0, y.size)
    weighted = cmetrics.bootstrap(y, y_proba=p, metrics=names, n_resamples=3, sample_weight=w, backend=backend)
    want_w = _report(y, backend, y_proba=p, sample_weight=w)
    for name in ("cprecision_macro", "crecall_weighted", "cf1_micro", "log_loss", "accuracy"):
        assert weighted[name].estimate == pytest.approx(want_w[name], rel=1e-12), name
    # The weights are not those of the check's matrix: the weighted estimates differ.
    assert weighted["cf1_micro"].estimate != r["cf1_micro"].estimate


def test_each_poisson_replicate_is_the_report_of_its_weights(backend: str) -> None:
    """A Poisson replicate is the data weighted by the rows' draws: the Report of those weights."""
    y, p = _model(800, 3, 2, skill=0.7)
    sw = np.random.default_rng(9).uniform(0.5, 2.0, y.size)
    r = cmetrics.bootstrap(
        y, y_proba=p, sample_weight=sw, n_resamples=6, seed=77, return_distribution=True, backend=backend
    )
    assert r.provenance.scheme == "poisson" and r.distribution is not None
    w = resolve_backend(backend).poisson_weights(np.arange(y.size, dtype=np.uint64), 77, 6)
    for b in range(6):
        want = _report(y, backend, y_proba=p, sample_weight=sw * w[b])
        for name, values in r.distribution.items():
            assert values[b] == pytest.approx(want[name], rel=1e-10, abs=1e-13), (b, name)


def test_each_multinomial_replicate_is_the_report_of_its_cells(backend: str) -> None:
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 500)
    pred = np.where(rng.random(500) < 0.6, y, rng.integers(0, 3, 500))
    r = cmetrics.bootstrap(y, y_pred=pred, n_resamples=5, seed=4, return_distribution=True, backend=backend)
    assert r.provenance.scheme == "multinomial" and r.distribution is not None
    # The replicate's cells, read back from its metrics' definitions: rebuild them by the same
    # draws (the backend's multinomial of the occupied cells, keyed by the seed) and evaluate the
    # rows they stand for.
    key = y * 3 + pred
    occupied, counts = np.unique(key, return_counts=True)
    be = resolve_backend(backend)
    draws = be.multinomial_draws(counts.astype(np.uint64), np.array([counts.size], dtype=np.uint64), 0, 5, 4)
    draws = draws.astype(np.int64)
    for b in range(5):
        rows = np.repeat(occupied, draws[b])
        want = _report(rows // 3, backend, y_pred=rows % 3, labels=[0, 1, 2])
        for name, values in r.distribution.items():
            assert values[b] == pytest.approx(want[name], rel=1e-12, abs=1e-15), (b, name)


def test_cells_resample_like_rows() -> None:
    """Multinomial cells and explicit row resampling give one distribution (a fixed-seed
    two-sample Kolmogorov-Smirnov test at the 1e-3 level)."""
    rng = np.random.default_rng(5)
    y = rng.integers(0, 3, 400)
    pred = np.where(rng.random(400) < 0.7, y, rng.integers(0, 3, 400))
    r = cmetrics.bootstrap(y, y_pred=pred, metrics=["f1_macro"], n_resamples=2000, seed=1, return_distribution=True)
    assert r.distribution is not None
    draws = np.random.default_rng(11).integers(0, 400, (2000, 400))
    explicit = np.array(
        [
            rm.table_metrics(np.bincount(y[d] * 3 + pred[d], minlength=9).reshape(1, 3, 3).astype(float))[0][
                "f1_macro"
            ].value[0]
            for d in draws
        ]
    )
    assert ks_2samp(r.distribution["f1_macro"], explicit).pvalue > 1e-3


def test_the_same_seed_gives_the_same_result_everywhere() -> None:
    y, p = _model(5000, 3, 6)
    runs = []
    for threads in (1, 2, 8):
        with cmetrics.thread_limit(threads):
            runs.append(cmetrics.bootstrap(y, y_proba=p, n_resamples=50, seed=3, return_distribution=True))
    for r in runs[1:]:
        assert r.metrics == runs[0].metrics
        assert all(np.array_equal(r.distribution[k], runs[0].distribution[k]) for k in r.distribution)
    other = cmetrics.bootstrap(y, y_proba=p, n_resamples=50, seed=4)
    assert other.metrics != runs[0].metrics
    if cmetrics.rust_available():
        numpy = cmetrics.bootstrap(y, y_proba=p, n_resamples=50, seed=3, backend="numpy")
        for name, iv in numpy.metrics.items():
            assert iv.low == pytest.approx(runs[0].metrics[name].low, rel=1e-9)
            assert iv.high == pytest.approx(runs[0].metrics[name].high, rel=1e-9)
        hard = [cmetrics.bootstrap(y, y_pred=p.argmax(1), n_resamples=50, backend=be) for be in ("rust", "numpy")]
        assert hard[0].metrics == hard[1].metrics


def _coverage(metric: str, proba: bool, population: float, trials: int = 200) -> float:
    hits = 0
    for t in range(trials):
        y, p = _model(400, 3, 1000 + t, skill=1.0)
        kw = {"y_proba": p} if proba else {"y_pred": p.argmax(1)}
        r = cmetrics.bootstrap(y, metrics=[metric], n_resamples=300, seed=t, **kw)
        hits += r[metric].low <= population <= r[metric].high
    return hits / trials


@pytest.mark.parametrize(
    ("metric", "proba"), [("accuracy", False), ("f1_macro", False), ("cf1_macro", True), ("log_loss", True)]
)
def test_intervals_cover_the_population_value(metric: str, proba: bool) -> None:
    """About 95% of 200 intervals cover the value of the population (taken from 2 x 10^6 rows
    of the same model); a correct interval lands in [0.90, 0.99] with probability > 0.99."""
    y, p = _model(2_000_000, 3, 999, skill=1.0)
    kw = {"y_proba": p} if proba else {"y_pred": p.argmax(1)}
    population = cmetrics.evaluate(y, **kw).metrics[metric]
    assert 0.90 <= _coverage(metric, proba, population) <= 0.99


def test_auroc_intervals_cover_the_population_value() -> None:
    """Scores uniform on [0, 1] and a positive with probability equal to the score: positives'
    scores have density 2s, negatives' 2(1 - s), so the population AUROC is
    4 * integral of a (a - a^2 / 2) over [0, 1] = 5/6 exactly. About 95% of 200 percentile
    intervals (1000 rows, 300 Poisson replicates of the sorted walk) cover it (0.93 measured
    over 400 trials)."""
    hits = 0
    for t in range(200):
        rng = np.random.default_rng(5000 + t)
        s = rng.random(1000)
        y = (rng.random(1000) < s).astype(np.int64)
        r = cmetrics.bootstrap(y, y_proba=np.stack([1 - s, s], axis=1), metrics=["roc_auc"], n_resamples=300, seed=t)
        hits += r["roc_auc"].low <= 5 / 6 <= r["roc_auc"].high
    assert 0.90 <= hits / 200 <= 0.99


def _jackknife_acceleration(values: np.ndarray) -> float:
    d = values.mean() - values
    return float((d**3).sum() / (6 * (d**2).sum() ** 1.5))


def _spied_acceleration(module: Any, run: Callable[[], Any]) -> tuple[float, Any]:
    """The first BCa acceleration ``run`` computes (``module.acceleration`` spied on) and what
    ``run`` returns."""
    seen: list[float] = []
    real = intervals.acceleration

    def spy(*args: Any) -> float:
        seen.append(real(*args))
        return seen[-1]

    module.acceleration = spy
    try:
        out = run()
    finally:
        module.acceleration = real
    return seen[0], out


@pytest.mark.parametrize(("metric", "proba"), [("accuracy", False), ("f1_macro", False), ("cf1_macro", True)])
def test_bca_acceleration_equals_a_row_jackknife(metric: str, proba: bool) -> None:
    y, p = _model(150, 3, 8, skill=0.8)
    pred = p.argmax(1)
    loo = []
    for i in range(y.size):
        keep = np.arange(y.size) != i
        kw = {"y_proba": p[keep]} if proba else {"y_pred": pred[keep]}
        loo.append(_report(y[keep], "auto", labels=[0, 1, 2], **kw)[metric])
    want = _jackknife_acceleration(np.array(loo))
    kw = {"y_proba": p} if proba else {"y_pred": pred}
    seen, r = _spied_acceleration(
        schemes, lambda: cmetrics.bootstrap(y, metrics=[metric], method="bca", n_resamples=200, **kw)
    )
    assert seen == pytest.approx(want, rel=1e-8, abs=1e-12)
    assert r[metric].low < r[metric].estimate < r[metric].high


def test_undefined_replicates_are_counted() -> None:
    # Class 2 is predicted once: many replicates lose it, and its precision is undefined there.
    y = np.array([0] * 50 + [1] * 50 + [2] * 5)
    pred = np.array([0] * 50 + [1] * 50 + [2] + [0] * 4)
    r = cmetrics.bootstrap(y, y_pred=pred, metrics=["precision_macro", "precision"], n_resamples=400, seed=2)
    undefined = r["precision_macro"].n_undefined
    assert 400 * math.exp(-1) * 0.8 < undefined < 400 * math.exp(-1) * 1.2
    assert r.per_class["2"]["precision"].n_undefined == undefined
    assert r.per_class["0"]["precision"].n_undefined == 0


@pytest.mark.parametrize("method", ["percentile", "basic", "normal"])
def test_intervals_read_together_equal_each_read_alone(method: str) -> None:
    """The intervals of every metric, read off the replicates in one pass, equal one
    :func:`intervals.replicate_interval` per metric, bit for bit, undefined (NaN) replicates too."""
    rng = np.random.default_rng(8)
    # One row of class 0: the replicates that lose it leave informedness undefined.
    y = np.array([0] + [1] * 29)
    pred = np.where(rng.random(y.size) < 0.7, y, 1 - y)
    r = cmetrics.bootstrap(y, y_pred=pred, n_resamples=300, seed=3, method=method, return_distribution=True)
    assert r.distribution is not None
    assert np.isnan(r.distribution["informedness"]).any()
    seen = 0
    for key, reps in r.distribution.items():
        name, _, label = key.rstrip("]").partition("[")
        iv = r.per_class[label][name] if label else r.metrics[name]
        defined = reps[~np.isnan(reps)]
        low, high = intervals.replicate_interval(iv.estimate, reps, method, 0.95)
        assert (iv.low, iv.high) == (low, high) or (math.isnan(iv.low) and math.isnan(low)), key
        assert iv.standard_error == float(np.std(defined, ddof=1)), key
        assert iv.n_undefined >= int(np.isnan(reps).sum()), key
        seen += 1
    assert seen == len(r.metrics) + sum(len(row) for row in r.per_class.values()) >= 20


def test_stratified_cells_keep_each_stratum_size() -> None:
    y = np.array([0] * 30 + [1] * 70)
    pred = np.where(np.arange(100) % 3 == 0, 1 - y, y)
    r = cmetrics.bootstrap(y, y_pred=pred, metrics=["recall"], strata=y, n_resamples=200, return_distribution=True)
    assert r.provenance.stratified and r.distribution is not None
    # With the truth as strata every replicate has 30 rows of class 0: recall is a multiple of 1/30.
    assert np.allclose(r.distribution["recall[0]"] * 30, np.round(r.distribution["recall[0]"] * 30))


def test_compare_shares_one_resample(backend: str) -> None:
    y, pa = _model(2000, 3, 12, skill=1.6)
    _, pb = _model(2000, 3, 12, skill=1.0)
    c = cmetrics.compare(y, a=pa, b=pb, n_resamples=60, seed=5, return_distribution=True, backend=backend)
    ra = cmetrics.bootstrap(y, y_proba=pa, n_resamples=60, seed=5, return_distribution=True, backend=backend)
    rb = cmetrics.bootstrap(y, y_proba=pb, n_resamples=60, seed=5, return_distribution=True, backend=backend)
    assert c.provenance.scheme == "poisson" and c.distribution is not None
    for name, d in c.metrics.items():
        assert d.difference == pytest.approx(ra[name].estimate - rb[name].estimate, rel=1e-12, abs=1e-15)
        np.testing.assert_allclose(
            c.distribution[name], ra.distribution[name] - rb.distribution[name], rtol=1e-9, atol=1e-12
        )
    assert c["accuracy"].prob_a_better > 0.95 and c["log_loss"].prob_a_better > 0.95
    assert c["accuracy"].p_value < 0.05


def test_compare_hard_predictions_through_joint_cells() -> None:
    y, p = _model(3000, 2, 13, skill=2.0)
    good = p.argmax(1)
    coin = np.random.default_rng(1).integers(0, 2, 3000)
    c = cmetrics.compare(y, a=good, b=coin, metrics=["accuracy", "matthews_corrcoef"], n_resamples=300)
    assert c.provenance.scheme == "multinomial"
    assert c["accuracy"].p_value == 0.0 and c["accuracy"].prob_a_better == 1.0
    same = cmetrics.compare(y, a=good, b=good, metrics=["accuracy"], n_resamples=100)
    assert same["accuracy"].difference == 0.0 and same["accuracy"].p_value == 1.0
    assert "accuracy" in c.to_markdown() and "p-value" in c.to_markdown()


def test_compare_gives_one_answer_for_codes_of_any_dtype(backend: str) -> None:
    """Hard labels as int8, uint16, int32, int64 or huge int64 values, and the two models of
    different dtypes: the same differences (scikit-learn's) and the same replicates. K = 70 with
    two models takes the joint cells past the counting kernel's table (the sorted path)."""
    from sklearn.metrics import accuracy_score, f1_score

    rng = np.random.default_rng(9)
    k, n = 70, 5000
    y = rng.integers(0, k, n)
    a = np.where(rng.random(n) < 0.8, y, rng.integers(0, k, n))
    b = np.where(rng.random(n) < 0.5, y, rng.integers(0, k, n))
    kw = {"metrics": ["accuracy", "f1_macro"], "n_resamples": 40, "return_distribution": True, "backend": backend}
    base = cmetrics.compare(y, a=a, b=b, **kw)
    assert base.provenance.scheme == "multinomial" and base.distribution is not None
    want = accuracy_score(y, a) - accuracy_score(y, b)
    assert base["accuracy"].difference == pytest.approx(want, abs=1e-15)
    f1 = [f1_score(y, m, average="macro", labels=np.arange(k), zero_division=0) for m in (a, b)]
    assert base["f1_macro"].difference == pytest.approx(f1[0] - f1[1], rel=1e-12)
    for cast_y, cast_a, cast_b in [
        (np.int8, np.int8, np.int8),
        (np.uint16, np.int32, np.int64),
        (np.int32, np.int32, np.int32),
        (np.int64, np.int32, np.int8),
    ]:
        c = cmetrics.compare(y.astype(cast_y), a=a.astype(cast_a), b=b.astype(cast_b), **kw)
        assert c.distribution is not None
        for name in kw["metrics"]:
            np.testing.assert_array_equal(c.distribution[name], base.distribution[name])
    huge = 10**12
    c = cmetrics.compare(y * huge, a=a * huge, b=b * huge, **kw)
    assert c.distribution is not None
    np.testing.assert_array_equal(c.distribution["accuracy"], base.distribution["accuracy"])


def test_compare_hard_predictions_with_probabilities(backend: str) -> None:
    """One model's hard labels (int32 codes) against another's probabilities (their top labels):
    the joint cells of both, the difference scikit-learn's."""
    from sklearn.metrics import accuracy_score

    y, p = _model(3000, 3, 14, skill=1.2)
    hard = np.where(np.random.default_rng(2).random(y.size) < 0.7, y, 0).astype(np.int32)
    c = cmetrics.compare(y.astype(np.int32), a=hard, b=p, metrics=["accuracy"], n_resamples=50, backend=backend)
    assert c.provenance.scheme == "multinomial"
    want = accuracy_score(y, hard) - accuracy_score(y, p.argmax(1))
    assert c["accuracy"].difference == pytest.approx(want, abs=1e-15)
    d = cmetrics.compare(y, a=p, b=hard, metrics=["accuracy"], n_resamples=50, backend=backend)
    assert d["accuracy"].difference == pytest.approx(-want, abs=1e-15)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n_resamples": 0}, ValidationError, "n_resamples"),
        ({"n_resamples": 1.5}, ValidationError, "n_resamples"),
        ({"confidence_level": 1.2}, ValidationError, "confidence_level"),
        ({"metrics": ["accuracy", "auroc"]}, ValidationError, "auroc"),
        ({"method": "bca", "n_resamples": 20}, ValidationError, "n_resamples >= 40"),
        ({"method": "studentized"}, ValidationError, "method"),
        ({"seed": -1}, ValidationError, "seed"),
        ({"strata": [0, 1]}, LengthMismatchError, "strata"),
        ({"confidence": [0.5] * 5}, LengthMismatchError, "confidence"),
        ({"confidence": [0.5, 0.1, np.nan, 0.3, 0.2, 0.9]}, ValidationError, "confidence"),
    ],
)
def test_bad_arguments_name_themselves(backend: str, kwargs, error, match: str) -> None:
    y = [0, 1, 1, 0, 1, 0]
    with pytest.raises(error, match=match):
        cmetrics.bootstrap(y, y_pred=[0, 1, 0, 0, 1, 1], backend=backend, **kwargs)


def test_confidence_scores_hard_predictions_only(backend: str) -> None:
    y, p = _model(50, 3, 1)
    with pytest.raises(ValidationError, match="confidence"):
        cmetrics.bootstrap(y, y_proba=p, confidence=p.max(axis=1), backend=backend)
    with pytest.raises(ValidationError, match="aurc"):
        cmetrics.bootstrap(y, y_pred=p.argmax(axis=1), metrics=["aurc"], backend=backend)


def _naive_selective(correct: np.ndarray, conf: np.ndarray, w: np.ndarray) -> dict[str, float]:
    """AURC, AUROC of the confidence and RPP of weighted rows by plain loops: the risk-coverage
    area threshold by threshold, the pairs one by one."""
    total = float(w.sum())
    aurc = 0.0
    for v in np.unique(conf):
        group = w[conf == v].sum()
        accepted = conf >= v
        aurc += group * w[accepted & ~correct].sum() / w[accepted].sum() / total if group > 0 else 0.0
    ordered = tied = reversed_ = 0.0
    for i in np.flatnonzero(correct):
        for j in np.flatnonzero(~correct):
            pair = w[i] * w[j]
            if conf[i] > conf[j]:
                ordered += pair
            elif conf[i] == conf[j]:
                tied += pair
            else:
                reversed_ += pair
    pairs = ordered + tied + reversed_
    return {
        "aurc": aurc,
        "auroc_confidence": (ordered + tied / 2) / pairs,
        "refinement": (ordered + tied / 2) / pairs,
        "reversed_pair_proportion": reversed_ / total**2,
    }


@pytest.mark.parametrize("weighted", [False, True])
def test_selective_replicates_are_the_metrics_of_their_weights(backend: str, weighted: bool) -> None:
    """With a confidence per hard prediction, each replicate of AURC, the confidence's AUROC
    (refinement) and RPP is the plain-loop value under that replicate's row weights, and the
    point estimates are the Report's."""
    rng = np.random.default_rng(8)
    n = 260
    y = rng.integers(0, 3, n)
    pred = np.where(rng.random(n) < 0.7, y, rng.integers(0, 3, n))
    conf = np.round(np.where(pred == y, rng.uniform(0.4, 1.0, n), rng.uniform(0.2, 0.8, n)), 2)
    sw = rng.uniform(0.5, 2.0, n) if weighted else None
    names = ["aurc", "auroc_confidence", "refinement", "reversed_pair_proportion"]
    r = cmetrics.bootstrap(
        y,
        y_pred=pred,
        confidence=conf,
        sample_weight=sw,
        metrics=names,
        n_resamples=5,
        seed=3,
        return_distribution=True,
        backend=backend,
    )
    assert r.distribution is not None and r.provenance.scheme == "poisson"
    report = cmetrics.evaluate(y, y_pred=pred, confidence=conf, sample_weight=sw, backend=backend)
    base = np.ones(n) if sw is None else sw
    want = _naive_selective(pred == y, conf, base)
    for name in names:
        assert r[name].estimate == pytest.approx(getattr(report, name), rel=1e-12), name
        assert r[name].estimate == pytest.approx(want[name], rel=1e-12), name
    w = resolve_backend(backend).poisson_weights(np.arange(n, dtype=np.uint64), 3, 5)
    for b in range(5):
        want = _naive_selective(pred == y, conf, base * w[b])
        for name in names:
            assert r.distribution[name][b] == pytest.approx(want[name], rel=1e-10), (b, name)


@pytest.mark.parametrize("family", ["score", "confidence"])
def test_ranking_cells_are_drawn_when_the_scores_are_few(backend: str, family: str) -> None:
    """A ranking family alone, of unweighted rows with few distinct scores, draws its (group,
    side) cells: each replicate is scikit-learn's metric of the drawn cells (each cell one
    weighted row), and the draws are those of the confusion-matrix cells' blocks."""
    rng = np.random.default_rng(12)
    n = 20_000
    y = rng.integers(0, 2, n)
    s = np.round(np.clip(0.5 + (y - 0.5) * 0.3 + rng.normal(0, 0.25, n), 0, 1), 2)
    if family == "score":
        kw, names, positive, score = (
            {"y_proba": np.stack([1 - s, s], axis=1)},
            ["roc_auc", "average_precision"],
            y == 1,
            s,
        )
    else:
        pred = np.where(rng.random(n) < 0.8, y, 1 - y)
        kw, names, positive, score = {"y_pred": pred, "confidence": s}, ["auroc_confidence", "aurc"], pred == y, s
    r = cmetrics.bootstrap(y, **kw, metrics=names, n_resamples=70, seed=4, return_distribution=True, backend=backend)
    assert r.provenance.scheme == "multinomial" and r.distribution is not None
    values = np.unique(score)[::-1]
    counts = np.concatenate(
        [[np.sum(positive & (score == v)) for v in values], [np.sum(~positive & (score == v)) for v in values]]
    ).astype(np.int64)
    occupied = np.flatnonzero(counts)
    drawn = np.vstack(
        [multinomial_block(counts[occupied], [np.arange(occupied.size)], 70, 4, b, backend) for b in (0, 1)]
    )
    cell_score = np.concatenate([values, values])[occupied]
    cell_truth = np.concatenate([np.ones(values.size), np.zeros(values.size)])[occupied]
    for b in (0, 9, 64, 69):
        auc = roc_auc_score(cell_truth, cell_score, sample_weight=drawn[b])
        assert r.distribution[names[0]][b] == pytest.approx(auc, rel=1e-12)
        if names[1] == "average_precision":
            ap = average_precision_score(cell_truth, cell_score, sample_weight=drawn[b])
            assert r.distribution[names[1]][b] == pytest.approx(ap, rel=1e-12)
        else:
            risk = sum(
                drawn[b][cell_score == v].sum()
                * drawn[b][(cell_score >= v) & (cell_truth == 0)].sum()
                / drawn[b][cell_score >= v].sum()
                for v in values
            )
            assert r.distribution["aurc"][b] == pytest.approx(risk / n, rel=1e-12)
    # Distinct scores, weights, or a row-level metric beside: the rows are walked (one resample).
    distinct = rng.random(n)
    kw_distinct = (
        {"y_proba": np.stack([1 - distinct, distinct], axis=1)} if family == "score" else {**kw, "confidence": distinct}
    )
    assert cmetrics.bootstrap(y, **kw_distinct, metrics=names, n_resamples=5).provenance.scheme == "poisson"
    assert (
        cmetrics.bootstrap(y, **kw, metrics=names, n_resamples=5, sample_weight=np.ones(n)).provenance.scheme
        == "poisson"
    )
    if family == "score":
        both = cmetrics.bootstrap(y, **kw, metrics=[*names, "log_loss"], n_resamples=5)
        assert both.provenance.scheme == "poisson"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_binary_ranking_alone_checks_rows_where_it_groups_them(dtype: type) -> None:
    """The binary ranking metrics alone count their tie groups in the pass that checks the
    probability rows: the same replicates on both backends (the numpy backend groups by its
    sort), the cells' scheme, and for a bad row anywhere the error, class and message, that
    the probability pass gives when another metric is asked for beside."""
    rng = np.random.default_rng(31)
    n = 80_000  # past the rows below which the compiled kernel does not try its hash tables
    y = rng.integers(0, 2, n)
    s = np.round(np.clip(0.5 + (y - 0.5) * 0.3 + rng.normal(0, 0.25, n), 0, 1), 3).astype(dtype)
    p = np.stack([1 - s, s], axis=1)
    names = ["roc_auc", "average_precision"]
    runs = [
        cmetrics.bootstrap(y, y_proba=p, metrics=names, n_resamples=40, seed=6, return_distribution=True, backend=b)
        for b in (["numpy", "rust"] if cmetrics.rust_available() else ["numpy"])
    ]
    for r in runs:
        assert r.provenance.scheme == "multinomial" and r.distribution is not None
        assert r["roc_auc"].estimate == pytest.approx(roc_auc_score(y, s), rel=1e-12)
    # The same draws: the AUROC's replicates to the bit, the AP's to rounding (its divisions).
    for r in runs:
        np.testing.assert_array_equal(r.distribution["roc_auc"], runs[0].distribution["roc_auc"])
        np.testing.assert_allclose(
            r.distribution["average_precision"], runs[0].distribution["average_precision"], 1e-12
        )
    for row, bad in [(5, (0.5, 0.75)), (n - 1, (np.nan, 0.5)), (n // 2, (1.5, -0.5))]:
        wrong = p.copy()
        wrong[row] = bad
        for backend in ("numpy", "rust") if cmetrics.rust_available() else ("numpy",):
            with pytest.raises(ProbabilityError, match=f"{row}") as beside:
                cmetrics.bootstrap(y, y_proba=wrong, metrics=[*names, "brier_score"], n_resamples=5, backend=backend)
            with pytest.raises(type(beside.value)) as alone:
                cmetrics.bootstrap(y, y_proba=wrong, metrics=names, n_resamples=5, backend=backend)
            assert str(alone.value) == str(beside.value), (row, backend)


def test_ranking_cells_resample_like_rows() -> None:
    """The cells of the AUROC and explicit row resampling give one distribution (a fixed-seed
    two-sample Kolmogorov-Smirnov test at the 1e-3 level)."""
    rng = np.random.default_rng(13)
    n = 3000
    y = rng.integers(0, 2, n)
    s = np.round(np.clip(0.5 + (y - 0.5) * 0.3 + rng.normal(0, 0.25, n), 0, 1), 1)
    p = np.stack([1 - s, s], axis=1)
    r = cmetrics.bootstrap(y, y_proba=p, metrics=["roc_auc"], n_resamples=1500, seed=2, return_distribution=True)
    assert r.provenance.scheme == "multinomial" and r.distribution is not None
    draws = np.random.default_rng(3).integers(0, n, (1500, n))
    explicit = np.array([roc_auc_score(y[d], s[d]) for d in draws])
    assert ks_2samp(r.distribution["roc_auc"], explicit).pvalue > 1e-3


@pytest.mark.parametrize("weighted", [False, True])
def test_one_vs_rest_replicates_are_the_macro_of_their_weights(backend: str, weighted: bool) -> None:
    """Each replicate of the macro one-vs-rest AUROC and AP is the mean over the classes of
    scikit-learn's binary metric of the class's column under that replicate's row weights (the
    same draws as every other metric of the call); the estimates are scikit-learn's macro."""
    y, p = _model(600, 4, 21, skill=0.8)
    p[300:400] = p[200:300]  # tied scores in every column
    sw = np.random.default_rng(2).uniform(0.5, 2.0, y.size) if weighted else None
    names = ["roc_auc_ovr", "average_precision_ovr", "accuracy"]
    r = cmetrics.bootstrap(
        y, y_proba=p, sample_weight=sw, metrics=names, n_resamples=6, seed=8, return_distribution=True, backend=backend
    )
    assert r.distribution is not None and r.provenance.scheme == "poisson"
    auc = roc_auc_score(y, p, multi_class="ovr", average="macro", sample_weight=sw)
    assert r["roc_auc_ovr"].estimate == pytest.approx(auc, rel=1e-12)
    base = np.ones(y.size) if sw is None else sw
    w = resolve_backend(backend).poisson_weights(np.arange(y.size, dtype=np.uint64), 8, 6)
    for b in range(6):
        weights = base * w[b]
        want_auc = np.mean([roc_auc_score(y == c, p[:, c], sample_weight=weights) for c in range(4)])
        want_ap = np.mean([average_precision_score(y == c, p[:, c], sample_weight=weights) for c in range(4)])
        assert r.distribution["roc_auc_ovr"][b] == pytest.approx(want_auc, rel=1e-10)
        assert r.distribution["average_precision_ovr"][b] == pytest.approx(want_ap, rel=1e-10)
    bca = cmetrics.bootstrap(
        y, y_proba=p, sample_weight=sw, metrics=names, method="bca", n_resamples=50, backend=backend
    )
    for name in names:  # weighted rows too: first-order leave-one-out values for the AP
        assert bca[name].low <= bca[name].estimate <= bca[name].high


@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_float32_probabilities_give_their_float64_widenings_result(backend: str, k: int, method: str) -> None:
    """A float32 model is read as it is (no float64 copy of the matrix): every metric, its
    replicates and its jackknife equal those of the float64 widening of the same values, in
    either layout, through ``bootstrap`` and ``compare``."""
    y, p = _model(900, k, 31, skill=0.9)
    narrow = p.astype(np.float32)
    narrow[100:200] = narrow[:100]  # tied scores in every column
    names = None if k == 4 else [*resampling.RANKING_METRICS, "aurc", "log_loss", "cf1", "accuracy"]
    for order in ("C", "F"):
        p32 = np.asarray(narrow, order=order)
        runs = [
            cmetrics.bootstrap(
                y, y_proba=q, metrics=names, method=method, n_resamples=40, seed=3, return_distribution=True,
                backend=backend,
            )
            for q in (p32, p32.astype(np.float64))
        ]  # fmt: skip
        assert repr(runs[0].to_dict()) == repr(runs[1].to_dict())  # NaNs print alike
        assert runs[0].distribution is not None and runs[1].distribution is not None
        for name, values in runs[1].distribution.items():
            np.testing.assert_array_equal(runs[0].distribution[name], values, err_msg=name)
    pairs = [
        cmetrics.compare(y, a=a, b=p, n_resamples=30, seed=5, backend=backend)
        for a in (narrow, narrow.astype(np.float64))
    ]
    assert repr(pairs[0].to_dict()) == repr(pairs[1].to_dict())


def test_compare_refuses_a_model_of_another_length(backend: str) -> None:
    with pytest.raises(LengthMismatchError, match="b has 3"):
        cmetrics.compare([0, 1, 1, 0], a=[0, 1, 1, 1], b=[0, 1, 1], backend=backend)
    with pytest.raises(ValidationError, match="log_loss"):
        cmetrics.compare([0, 1, 1, 0], a=[0, 1, 1, 1], b=[0, 1, 0, 1], metrics=["log_loss"], backend=backend)


def test_compare_names_the_model_whose_labels_are_unknown(backend: str) -> None:
    # b is encoded against a's labels (the truth's codes are a's): a class only b predicts is refused.
    y = np.array([0, 1, 2, 1, 0, 2], dtype=np.int32)
    with pytest.raises(LabelError, match="y_pred holds values that are not among labels"):
        cmetrics.compare(y, a=y, b=np.array([0, 1, 3, 1, 0, 2], dtype=np.int32), backend=backend)
    with pytest.raises(LabelError, match="y_true holds values that are not among labels"):
        cmetrics.compare(y, a=y, b=y, labels=[0, 1], backend=backend)
    # The same labels given: b's paired values equal a model compared with itself.
    same = cmetrics.compare(y, a=y, b=y[::-1].copy(), labels=[0, 1, 2], metrics=["accuracy"], n_resamples=20)
    assert same["accuracy"].a == 1.0 and same["accuracy"].b == float(np.mean(y == y[::-1]))


def test_the_result_prints_and_serialises() -> None:
    y, p = _model(500, 2, 14)
    r = cmetrics.bootstrap(y, y_proba=p, metrics=["accuracy", "log_loss", "cf1"], n_resamples=50)
    d = r.to_dict()
    assert set(d["metrics"]) == {"accuracy", "log_loss"} and set(d["per_class"]) == {"0", "1"}
    assert d["provenance"]["scheme"] == "poisson" and d["provenance"]["version"] == cmetrics.__version__
    md = r.to_markdown()
    assert "| log_loss |" in md and "cf1 [1]" in md
    assert repr(r).startswith("BootstrapResult(percentile, poisson")


def _binary(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.clip(0.5 + (y - 0.5) * 0.4 + rng.normal(0, 0.3, n), 0, 1)
    s = np.round(s, 2)  # ties across classes
    return y, np.stack([1 - s, s], axis=1)


@pytest.mark.parametrize("weighted", [False, True])
def test_ranking_replicates_are_the_metrics_of_their_weights(backend: str, weighted: bool) -> None:
    """Each AUROC and AP replicate is scikit-learn's metric with the row weights of that
    replicate (times the sample weights), and the same Poisson draws as the other metrics."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    y, p = _binary(700, 3)
    sw = np.random.default_rng(4).uniform(0.5, 2.0, y.size) if weighted else None
    r = cmetrics.bootstrap(
        y, y_proba=p, sample_weight=sw, n_resamples=9, seed=21, return_distribution=True, backend=backend
    )
    assert r.distribution is not None and r.provenance.scheme == "poisson"
    base = np.ones(y.size) if sw is None else sw
    assert r["roc_auc"].estimate == pytest.approx(roc_auc_score(y, p[:, 1], sample_weight=sw), rel=1e-12)
    ap = average_precision_score(y, p[:, 1], sample_weight=sw)
    assert r["average_precision"].estimate == pytest.approx(ap, rel=1e-12)
    w = resolve_backend(backend).poisson_weights(np.arange(y.size, dtype=np.uint64), 21, 9)
    for b in range(9):
        weights = base * w[b]
        assert r.distribution["roc_auc"][b] == pytest.approx(
            roc_auc_score(y, p[:, 1], sample_weight=weights), rel=1e-10
        )
        want = average_precision_score(y, p[:, 1], sample_weight=weights)
        assert r.distribution["average_precision"][b] == pytest.approx(want, rel=1e-10)
        assert r.distribution["accuracy"][b] == pytest.approx(
            float(np.sum(weights * (p.argmax(1) == y)) / np.sum(weights)), rel=1e-12
        )


def test_ranking_replicates_on_every_thread_count_and_backend() -> None:
    y, p = _binary(30_000, 5)
    runs = []
    for threads in (1, 2, 8):
        with cmetrics.thread_limit(threads):
            runs.append(
                cmetrics.bootstrap(y, y_proba=p, metrics=["roc_auc", "average_precision"], n_resamples=37, seed=2)
            )
    assert all(r.metrics == runs[0].metrics for r in runs[1:])
    if cmetrics.rust_available():
        numpy = cmetrics.bootstrap(
            y, y_proba=p, metrics=["roc_auc", "average_precision"], n_resamples=37, seed=2, backend="numpy"
        )
        for name in ("roc_auc", "average_precision"):
            assert numpy[name].low == pytest.approx(runs[0][name].low, rel=1e-12)
            assert numpy[name].high == pytest.approx(runs[0][name].high, rel=1e-12)


def _aurc(correct: np.ndarray, conf: np.ndarray, w: np.ndarray | None = None) -> float:
    """AURC by a plain loop: tied confidences accepted together, from the highest down."""
    w = np.ones(correct.size) if w is None else w
    total = 0.0
    for c in sorted(set(conf.tolist()), reverse=True):
        accepted = conf >= c
        total += w[conf == c].sum() / w.sum() * w[accepted & ~correct].sum() / w[accepted].sum()
    return total


def _rpp(correct: np.ndarray, conf: np.ndarray, w: np.ndarray) -> float:
    """RPP by counting pairs: a correct row strictly below a wrong one, weights multiplied."""
    reversed_ = sum(w[i] * w[j] for i in np.flatnonzero(correct) for j in np.flatnonzero(~correct) if conf[i] < conf[j])
    return float(reversed_ / w.sum() ** 2)


def _ranking_refit(metric: str, y, p, pred, conf, w) -> float:
    """The metric of the rows given, by scikit-learn or a plain loop (never cmetrics)."""
    if metric in ("roc_auc_ovr", "average_precision_ovr"):
        f = roc_auc_score if metric == "roc_auc_ovr" else average_precision_score
        return float(np.mean([f(y == c, p[:, c], sample_weight=w) for c in range(p.shape[1])]))
    if metric == "roc_auc":
        return float(roc_auc_score(y, p[:, 1], sample_weight=w))
    if metric == "average_precision":
        return float(average_precision_score(y, p[:, 1], sample_weight=w))
    correct = pred == y
    if metric in ("refinement", "auroc_confidence"):
        return float(roc_auc_score(correct, conf, sample_weight=w))
    if metric == "aurc":
        return _aurc(correct, conf, w)
    return _rpp(correct, conf, np.ones(y.size) if w is None else w)


@pytest.mark.parametrize(
    ("metric", "weighted"),
    [
        ("roc_auc", False),
        ("roc_auc", True),
        ("average_precision", False),
        ("refinement", True),
        ("auroc_confidence", False),
        ("aurc", False),
        ("reversed_pair_proportion", False),
        ("reversed_pair_proportion", True),
        ("roc_auc_ovr", False),
        ("roc_auc_ovr", True),
        ("average_precision_ovr", False),
    ],
)
def test_bca_of_the_ranking_metrics_takes_their_exact_jackknife(backend: str, metric: str, weighted: bool) -> None:
    """BCa's acceleration of every ranking metric equals that of the metric refitted without each
    row in turn (scikit-learn or a plain loop), on scores with ties, weighted where cmetrics has
    the leave-one-out values of weighted rows."""
    ovr = metric.endswith("_ovr")
    y, p = _model(90, 3, 31, skill=0.8) if ovr else _binary(90, 7)
    p = np.round(p, 1)  # ties
    p = p / p.sum(axis=1, keepdims=True)
    pred = p.argmax(1)
    conf = np.round(np.random.default_rng(4).random(y.size), 1)
    w = np.random.default_rng(5).uniform(0.2, 3.0, y.size) if weighted else None
    loo = []
    for i in range(y.size):
        keep = np.arange(y.size) != i
        loo.append(_ranking_refit(metric, y[keep], p[keep], pred[keep], conf[keep], None if w is None else w[keep]))
    want = _jackknife_acceleration(np.array(loo))
    kw = {"y_proba": p} if metric in ("roc_auc", "average_precision") or ovr else {"y_pred": pred, "confidence": conf}
    seen, r = _spied_acceleration(
        resampling,
        lambda: cmetrics.bootstrap(
            y, metrics=[metric], method="bca", n_resamples=200, sample_weight=w, backend=backend, **kw
        ),
    )
    assert seen == pytest.approx(want, rel=1e-8, abs=1e-12)
    assert r[metric].low < r[metric].estimate < r[metric].high


@pytest.mark.parametrize("metric", ["roc_auc", "average_precision"])
def test_bca_of_drawn_cells_takes_one_refit_per_cell(metric: str) -> None:
    """Few distinct scores: the (group, side) cells are drawn (multinomial scheme) and BCa's
    acceleration takes one leave-one-out value per cell, equal to scikit-learn refitted without
    one row of that cell, counted once per row of the cell."""
    rng = np.random.default_rng(17)
    y = rng.integers(0, 2, 4000)
    s = np.round(np.clip(0.5 + (y - 0.5) * 0.3 + rng.normal(0, 0.25, y.size), 0, 1), 1)
    f = roc_auc_score if metric == "roc_auc" else average_precision_score
    loo, counts = [], []
    for value in np.unique(s):
        for label in (0, 1):
            rows = np.flatnonzero((s == value) & (y == label))
            if rows.size:
                loo.append(f(np.delete(y, rows[0]), np.delete(s, rows[0])))
                counts.append(rows.size)
    d = np.average(loo, weights=counts) - np.array(loo)
    want = float((counts * d**3).sum() / (6 * (counts * d**2).sum() ** 1.5))
    proba = np.stack([1 - s, s], axis=1)
    seen, r = _spied_acceleration(
        resampling, lambda: cmetrics.bootstrap(y, y_proba=proba, metrics=[metric], method="bca", n_resamples=300)
    )
    assert r.provenance.scheme == "multinomial"
    assert seen == pytest.approx(want, rel=1e-8, abs=1e-12)
    assert r[metric].low < r[metric].estimate < r[metric].high


@pytest.mark.parametrize("metric", ["average_precision", "aurc", "average_precision_ovr"])
def test_bca_of_weighted_curves_takes_their_first_order_jackknife(backend: str, metric: str) -> None:
    """Average precision and AURC of weighted rows: BCa's acceleration equals that of the values
    without each row to first order in its weight, ``θ - w_i ∂θ/∂w_i``, the derivative by central
    differences of scikit-learn's metric (a plain loop for AURC) with the row's weight moved."""
    ovr = metric.endswith("_ovr")
    y, p = _model(90, 3, 31, skill=0.8) if ovr else _binary(90, 6)
    p = np.round(p, 1)  # ties
    p = p / p.sum(axis=1, keepdims=True)
    pred, conf = p.argmax(1), np.round(np.random.default_rng(4).random(y.size), 1)
    w = np.random.default_rng(5).uniform(0.2, 3.0, y.size)
    h = 1e-5

    def first_order(metric_of: Callable[[np.ndarray], float]) -> np.ndarray:
        slopes = []
        for i in range(y.size):
            up, down = w.copy(), w.copy()
            up[i], down[i] = w[i] * (1 + h), w[i] * (1 - h)
            slopes.append((metric_of(up) - metric_of(down)) / (2 * h))
        return metric_of(w) - np.array(slopes)

    if ovr:  # the mean over the classes of each class's first-order value
        classes = [
            first_order(lambda v, c=c: float(average_precision_score(y == c, p[:, c], sample_weight=v)))
            for c in range(p.shape[1])
        ]
        want = _jackknife_acceleration(np.mean(classes, axis=0))
    else:
        want = _jackknife_acceleration(first_order(lambda v: _ranking_refit(metric, y, p, pred, conf, v)))
    kw = {"y_proba": p} if metric != "aurc" else {"y_pred": pred, "confidence": conf}
    seen, r = _spied_acceleration(
        resampling,
        lambda: cmetrics.bootstrap(
            y, metrics=[metric], method="bca", n_resamples=200, sample_weight=w, backend=backend, **kw
        ),
    )
    assert seen == pytest.approx(want, rel=1e-6, abs=1e-9)
    assert r[metric].low < r[metric].estimate < r[metric].high

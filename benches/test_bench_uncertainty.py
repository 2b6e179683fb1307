"""Intervals and comparisons (issue 27), timed in one run against the ways users get them today.

Data: the shared 10^7-row labels (K = 10, 70% right, int32) and K = 100 labels of the same kind;
10^6 x 10 float64 softmax probabilities for the Poisson bootstrap of the probability family;
10^7 float64 binary scores (y ~ Bernoulli(score)) for DeLong and the AUROC replicates. The row count follows
CMETRICS_BENCH_ROWS (the 10^6-row sets are a tenth of it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import cmetrics
from benches.conftest import EXTRA, TIMINGS, N, record

B = 1000


@pytest.fixture(scope="module")
def labels_k100() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    y = rng.integers(0, 100, N, dtype=np.int32)
    p = np.where(rng.random(N) < 0.7, y, rng.integers(0, 100, N, dtype=np.int32)).astype(np.int32)
    return y, p


@pytest.fixture(scope="module")
def proba_1e6() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2)
    n = max(N // 10, 1000)
    y = rng.integers(0, 10, n)
    z = rng.normal(0, 1, (n, 10))
    z[np.arange(n), y] += 1.5
    p = np.exp(z)
    return y, p / p.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def scores_1e7() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    s = rng.random(N)
    return (rng.random(N) < s).astype(np.int8), s


@pytest.mark.benchmark(group="bootstrap: 1000 multinomial replicates of every confusion-matrix metric")
@pytest.mark.parametrize("k", [10, 100])
def test_report_intervals(benchmark: Any, labels_1e7: Any, labels_k100: Any, k: int) -> None:
    y, p = labels_1e7 if k == 10 else labels_k100
    report = cmetrics.evaluate(y, y_pred=p)
    out = benchmark.pedantic(lambda: cmetrics.report_intervals(report, n_resamples=B), rounds=3, iterations=1)
    assert out["accuracy"].low < report.accuracy < out["accuracy"].high
    record(f"report_intervals_k{k}", benchmark)


@pytest.mark.benchmark(group="bootstrap: 1000 multinomial replicates of every confusion-matrix metric")
def test_evaluate_with_and_without_bootstrap(benchmark: Any, labels_1e7: Any) -> None:
    y, p = labels_1e7
    benchmark.pedantic(lambda: cmetrics.evaluate(y, y_pred=p, bootstrap=B), rounds=3, iterations=1)
    record("evaluate_bootstrap", benchmark)


@pytest.mark.benchmark(group="bootstrap: 1000 multinomial replicates of every confusion-matrix metric")
def test_evaluate_hard(benchmark: Any, labels_1e7: Any) -> None:
    y, p = labels_1e7
    benchmark.pedantic(lambda: cmetrics.evaluate(y, y_pred=p), rounds=3, iterations=1)
    record("evaluate_hard", benchmark)


@pytest.mark.benchmark(group="evaluate of the demo's 10^7 x 10 probabilities, with and without bootstrap=1000")
@pytest.mark.parametrize("with_bootstrap", [False, True])
def test_evaluate_proba(benchmark: Any, labels_1e7: Any, proba_1e7: Any, with_bootstrap: bool) -> None:
    y, _ = labels_1e7
    kw = {"bootstrap": B} if with_bootstrap else {}
    benchmark.pedantic(lambda: cmetrics.evaluate(y, y_proba=proba_1e7, **kw), rounds=3, iterations=1)
    record(f"evaluate_proba{'_bootstrap' if with_bootstrap else ''}", benchmark)


@pytest.mark.benchmark(group="bootstrap: 1000 multinomial replicates of every confusion-matrix metric")
def test_compare_two_models(benchmark: Any, labels_1e7: Any) -> None:
    y, p = labels_1e7
    other = np.where(np.random.default_rng(4).random(y.size) < 0.9, p, y).astype(np.int32)
    c = benchmark.pedantic(lambda: cmetrics.compare(y, a=other, b=p, n_resamples=B), rounds=3, iterations=1)
    assert c["accuracy"].prob_a_better == 1.0
    record("compare_cells", benchmark)


@pytest.mark.benchmark(group="bootstrap: 1000 Poisson replicates of the probability family, 10^6 x 10")
def test_poisson_probability_family(benchmark: Any, proba_1e6: Any) -> None:
    y, p = proba_1e6
    metrics = ["cprecision_macro", "crecall_macro", "cf1_macro", "log_loss", "brier_score", "accuracy"]
    r = benchmark.pedantic(
        lambda: cmetrics.bootstrap(y, y_proba=p, metrics=metrics, n_resamples=B), rounds=1, iterations=1
    )
    assert r.provenance.scheme == "poisson"
    record("poisson_probability_family", benchmark)


def _numpy_replicate(y: np.ndarray, p: np.ndarray, rng: np.random.Generator) -> tuple[float, ...]:
    """One replicate as a numpy user writes it: Poisson weights, then the weighted sums."""
    k = p.shape[1]
    w = rng.poisson(1.0, y.size).astype(np.float64)
    pcm = np.zeros((k, k))
    for c in range(k):
        rows = y == c
        pcm[c] = (p[rows] * w[rows, None]).sum(axis=0)
    pt = p[np.arange(y.size), y]
    top = p.argmax(1)
    return (
        float(np.trace(pcm) / w.sum()),
        float(-(w * np.log(np.clip(pt, 1e-15, 1))).sum() / w.sum()),
        float((w * ((p**2).sum(1) - pt**2 + (1 - pt) ** 2)).sum() / w.sum()),
        float((w * (top == y)).sum() / w.sum()),
    )


@pytest.mark.benchmark(group="bootstrap: 1000 Poisson replicates of the probability family, 10^6 x 10")
def test_numpy_poisson_loop(benchmark: Any, proba_1e6: Any) -> None:
    """20 replicates of a numpy loop; the ratio scales them to 1000."""
    y, p = proba_1e6
    rng = np.random.default_rng(0)
    benchmark.pedantic(lambda: [_numpy_replicate(y, p, rng) for _ in range(20)], rounds=1, iterations=1)
    if getattr(benchmark, "stats", None) is not None:
        TIMINGS["numpy_poisson_loop_1000"] = float(benchmark.stats.stats.min) * B / 20


@pytest.fixture(scope="module")
def binary_1e7() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(6)
    s = rng.random(N)
    return rng.random(N) < s, s


@pytest.mark.benchmark(group="bootstrap: 1000 replicates of binary AUROC (and AP), 10^7 rows")
@pytest.mark.parametrize("decimals", [None, 3, 4, 5])
@pytest.mark.parametrize("with_ap", [False, True])
def test_ranking_replicates(benchmark: Any, binary_1e7: Any, decimals: int | None, with_ap: bool) -> None:
    """Scores uniform in [0, 1]: all distinct (the Poisson row walk), or rounded to 3, 4 or 5
    decimals (1001, 10001 or 100001 tie groups: the multinomial on the (group, class) cells)."""
    y, s = binary_1e7
    s = s if decimals is None else np.round(s, decimals)
    p = np.stack([1 - s, s], axis=1)
    metrics = ["roc_auc", "average_precision"] if with_ap else ["roc_auc"]
    # Three rounds where a call takes well under a second, two for the row walks of distinct scores (the
    # first round of each warms the pages: on a guest that hands freed memory back to its host, a process's
    # first call pays a second of page faults that later calls do not).
    rounds = 2 if decimals is None else 3
    r = benchmark.pedantic(
        lambda: cmetrics.bootstrap(y, y_proba=p, metrics=metrics, n_resamples=B), rounds=rounds, iterations=1
    )
    assert r["roc_auc"].low < r["roc_auc"].estimate < r["roc_auc"].high
    shape = "" if decimals is None else "_rounded" if decimals == 3 else f"_rounded{decimals}"
    record(f"ranking_replicates{shape}{'_ap' if with_ap else ''}", benchmark)


@pytest.mark.benchmark(group="DeLong at 10^7")
def test_auroc(benchmark: Any, scores_1e7: Any) -> None:
    y, s = scores_1e7
    benchmark.pedantic(lambda: cmetrics.roc_auc_score(y, s), rounds=3, iterations=1)
    record("auroc_1e7", benchmark)


@pytest.mark.benchmark(group="DeLong at 10^7")
def test_delong(benchmark: Any, scores_1e7: Any) -> None:
    y, s = scores_1e7
    r = benchmark.pedantic(lambda: cmetrics.delong(y, s), rounds=3, iterations=1)
    assert 0 < r.standard_error < 0.01
    record("delong_1e7", benchmark)


def _other_model(s: np.ndarray) -> np.ndarray:
    """A second model's scores on the same rows: the first's plus noise (continuous, distinct)."""
    return s + np.random.default_rng(5).normal(0, 0.2, s.size)


@pytest.mark.benchmark(group="DeLong at 10^7")
def test_auroc_of_both_models(benchmark: Any, scores_1e7: Any) -> None:
    """What the paired test's AUROCs cost on their own: roc_auc_score of each model."""
    y, s = scores_1e7
    other = _other_model(s)
    benchmark.pedantic(lambda: (cmetrics.roc_auc_score(y, s), cmetrics.roc_auc_score(y, other)), rounds=3, iterations=1)
    record("auroc_both_1e7", benchmark)


@pytest.mark.benchmark(group="DeLong at 10^7")
def test_delong_test(benchmark: Any, scores_1e7: Any) -> None:
    y, s = scores_1e7
    other = _other_model(s)
    t = benchmark.pedantic(lambda: cmetrics.delong_test(y, s, other), rounds=3, iterations=1)
    assert t.auc_a == cmetrics.roc_auc_score(y, s)
    record("delong_test_1e7", benchmark)


@pytest.mark.benchmark(group="DeLong at 10^7")
def test_confidenceinterval_delong(benchmark: Any, scores_1e7: Any) -> None:
    ci = pytest.importorskip("confidenceinterval")
    y, s = scores_1e7
    benchmark.pedantic(lambda: ci.roc_auc_score(y, s.astype(np.float32)), rounds=1, iterations=1)
    record("confidenceinterval_delong_1e7", benchmark)


def test_record_the_ratios() -> None:
    def ratio(a: str, b: str) -> float | None:
        return TIMINGS[a] / TIMINGS[b] if a in TIMINGS and b in TIMINGS else None

    EXTRA["uncertainty"] = {
        "evaluate(bootstrap=1000) / evaluate, hard labels": ratio("evaluate_bootstrap", "evaluate_hard"),
        "evaluate(bootstrap=1000) / evaluate, probabilities": ratio("evaluate_proba_bootstrap", "evaluate_proba"),
        "numpy Poisson loop (1000, scaled from 20) / cmetrics": ratio(
            "numpy_poisson_loop_1000", "poisson_probability_family"
        ),
        "delong / roc_auc_score": ratio("delong_1e7", "auroc_1e7"),
        "delong_test / roc_auc_score of both models": ratio("delong_test_1e7", "auroc_both_1e7"),
        "delong_test / roc_auc_score of one model": ratio("delong_test_1e7", "auroc_1e7"),
        "confidenceinterval DeLong (float32) / cmetrics delong": ratio("confidenceinterval_delong_1e7", "delong_1e7"),
    }

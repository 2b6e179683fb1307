"""Figures and pages (issue 28), timed in one run against scikit-learn's Display.

Data: the demo's 10^7 x 10 float32 softmax probabilities (the shared fixtures), scored by an
Evaluator as ``cmetrics score`` scores them (exact confidence ranking, binned class ranking),
its report with curves; and 10^7 binary float64 scores (y ~ Bernoulli(score), all distinct) in
an exact Evaluator (10^7 tie groups per column) against ``RocCurveDisplay.from_predictions``
on the same rows. The row count follows CMETRICS_BENCH_ROWS.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest

import cmetrics
from benches.conftest import EXTRA, TIMINGS, N, record

mpl = pytest.importorskip("matplotlib", reason="matplotlib is part of the test extra")
mpl.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from cmetrics import plot as cp  # noqa: E402

K = 10


@pytest.fixture(scope="module")
def demo_report(labels_1e7: Any, proba_1e7: Any) -> cmetrics.Report:
    y, _ = labels_1e7
    ev = cmetrics.Evaluator(n_classes=K, class_ranking="approximate")
    for lo in range(0, y.size, 1 << 20):
        ev.update(y[lo : lo + (1 << 20)], y_proba=proba_1e7[lo : lo + (1 << 20)])
    return ev.report(curves=True)


@pytest.fixture(scope="module")
def binary_state() -> tuple[np.ndarray, np.ndarray, cmetrics.Evaluator]:
    rng = np.random.default_rng(3)
    s = rng.random(N)
    y = (rng.random(N) < s).astype(np.int8)
    ev = cmetrics.Evaluator(n_classes=2).update(y, y_proba=np.stack([1 - s, s], axis=1))
    return y, s, ev


@pytest.mark.benchmark(group="Report.to_html of the demo's 10^7 x 10 report, every figure")
def test_report_to_html(benchmark: Any, demo_report: cmetrics.Report) -> None:
    page = benchmark.pedantic(demo_report.to_html, rounds=3, iterations=1, warmup_rounds=1)
    assert page.count("<svg") == 6
    EXTRA["plots_page_kib"] = len(page) / 1024
    record("report_to_html", benchmark)


@pytest.mark.benchmark(group="ROC display of 10^7 binary scores")
def test_roc_display_from_an_exact_evaluator(benchmark: Any, binary_state: Any) -> None:
    _, _, ev = binary_state

    def draw() -> Any:
        d = cp.RocCurveDisplay.from_evaluator(ev)
        plt.close(d.figure_)
        return d

    d = benchmark.pedantic(draw, rounds=3, iterations=1, warmup_rounds=1)
    buf = io.StringIO()
    d.figure_.savefig(buf, format="svg")
    EXTRA["roc_display_svg_kib"] = len(buf.getvalue()) / 1024
    assert len(buf.getvalue()) < 100_000
    record("roc_display_evaluator", benchmark)


@pytest.mark.benchmark(group="ROC display of 10^7 binary scores")
def test_roc_display_scikit_learn(benchmark: Any, binary_state: Any) -> None:
    from sklearn.metrics import RocCurveDisplay

    y, s, _ = binary_state

    def draw() -> Any:
        d = RocCurveDisplay.from_predictions(y, s)
        plt.close(d.figure_)
        return d

    benchmark.pedantic(draw, rounds=1, iterations=1)
    record("roc_display_sklearn", benchmark)


def test_record_the_ratios() -> None:
    def ratio(a: str, b: str) -> float | None:
        return TIMINGS[a] / TIMINGS[b] if a in TIMINGS and b in TIMINGS else None

    EXTRA["plots"] = {
        "scikit-learn RocCurveDisplay.from_predictions / RocCurveDisplay.from_evaluator": ratio(
            "roc_display_sklearn", "roc_display_evaluator"
        ),
    }

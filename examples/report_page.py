"""A report page as ``cmetrics score --format html`` writes it, from a simulated 3-class model:
the metrics by family with bootstrap intervals, the confusion matrices, the reliability diagram,
and the ROC, precision-recall and risk-coverage curves read off a merged Evaluator.

Run ``python examples/report_page.py [OUT.html]`` (default ``docs/example_report.html``, the page
the README shows; it needs ``pip install "cmetrics[plot]"``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import cmetrics

LABELS = ["cat", "dog", "<bird>"]  # a label that needs escaping, as real ones sometimes do


def simulated(rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels and a model's softmax probabilities: right about 80% of the time, overconfident."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, len(LABELS), rows)
    z = rng.normal(0, 1.0, (rows, len(LABELS))) + 2.0 * np.eye(len(LABELS))[y]
    p = np.exp(1.6 * z)
    return np.asarray(LABELS)[y], p / p.sum(axis=1, keepdims=True)


def page(rows: int = 20_000, seed: int = 0, out: Path | None = None) -> str:
    """The page of ``rows`` simulated rows scored in two batches merged (``out``: also write it)."""
    y, p = simulated(rows, seed)
    half = rows // 2
    a = cmetrics.Evaluator(LABELS).update(y[:half], y_proba=p[:half])
    b = cmetrics.Evaluator(LABELS).update(y[half:], y_proba=p[half:])
    report = a.merge(b).report(curves=True)
    report.intervals = cmetrics.report_intervals(report, n_resamples=1000, seed=seed)
    return report.to_html(out, title="Example: a simulated 3-class model")


if __name__ == "__main__":
    target = (
        Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "docs" / "example_report.html"
    )
    text = page(out=target)
    print(f"wrote {target} ({len(text) / 1024:.0f} KiB)")

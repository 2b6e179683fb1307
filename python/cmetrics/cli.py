"""The ``cmetrics`` command line.

``cmetrics demo`` generates a synthetic evaluation dump in memory (10^7 rows,
10 classes, float32 probabilities by default), scores it with
:func:`cmetrics.evaluate` (one pass over the probability matrix: every
hard-label and probabilistic metric) and prints the report with the time taken.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import cmetrics


def synthetic_dump(n_rows: int, n_classes: int, seed: int = 0, accuracy: float = 0.7) -> tuple[np.ndarray, np.ndarray]:
    """Uniform int32 truth and predictions right on ``accuracy`` of the rows,
    wrong ones spread over the other classes."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n_rows, dtype=np.int32)
    shift = rng.integers(1, max(n_classes, 2), n_rows, dtype=np.int32)
    wrong = (y + shift) % n_classes
    correct = rng.random(n_rows, dtype=np.float32) < accuracy
    return y, np.where(correct, y, wrong).astype(np.int32)


def synthetic_proba(y_pred: np.ndarray, n_classes: int, seed: int = 0, y_true: np.ndarray | None = None) -> np.ndarray:
    """float32 softmax probabilities whose top label is ``y_pred`` (more confident
    on some rows than others), rows summing to 1. With ``y_true`` the model is
    more confident where it is right, as a useful confidence function is."""
    rng = np.random.default_rng(seed + 1)
    n = len(y_pred)
    logits = rng.standard_normal((n, n_classes), dtype=np.float32)
    rows = np.arange(n)
    margin = rng.exponential(1.0, n).astype(np.float32)
    if y_true is not None:
        margin *= np.where(y_pred == y_true, np.float32(2.0), np.float32(0.6))
    else:
        margin *= np.float32(1.5)
    logits[rows, y_pred] = logits.max(axis=1) + margin
    logits -= logits[rows, y_pred][:, None]
    np.exp(logits, out=logits)
    logits /= logits.sum(axis=1, keepdims=True)
    return logits


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        return f"{x:,.0f}" if x.is_integer() and abs(x) >= 1000 else f"{x:.6f}"
    return str(x)


def _print_report(report: cmetrics.Report, seconds: float, n_rows: int, out: Any) -> None:
    scalars = {"n_samples": report.n_samples, "n_classes": float(report.n_classes), **report.metrics}
    width = max(len(k) for k in scalars)
    backend = "rust" if cmetrics.rust_available() else "numpy"
    kind = "probabilistic + hard-label" if report.has_proba else "hard-label"
    print(f"cmetrics {cmetrics.__version__} {kind} report ({n_rows:,} rows, backend: {backend}, "
          f"{cmetrics.get_num_threads()} threads)", file=out)
    print("-" * (width + 16), file=out)
    for k, v in scalars.items():
        print(f"{k:<{width}}  {_fmt(v):>12}", file=out)
    print("-" * (width + 16), file=out)
    cols = ["precision", "recall", "f1", "support", "youden_j"]
    if report.has_proba:
        cols += ["cprecision", "crecall", "cf1"]
    print(f"{'class':>8} " + " ".join(f"{c:>10}" for c in cols), file=out)
    for label, row in report.per_class.items():
        cells = " ".join(f"{(f'{row[c]:.0f}' if c == 'support' else _fmt(row[c])):>10}" for c in cols)
        print(f"{label:>8} {cells}", file=out)
    how = "one pass over the rows, one sort of the confidences" if report.has_proba else "one pass over the rows"
    print(f"\nscored in {seconds * 1e3:.1f} ms ({n_rows / seconds / 1e6:,.0f} M rows/s; {how})", file=out)


def demo(args: argparse.Namespace) -> int:
    """Generate, score and print."""
    if args.threads:
        cmetrics.set_num_threads(args.threads)
    t0 = time.perf_counter()
    y, p = synthetic_dump(args.rows, args.classes, args.seed)
    proba = None if args.hard_only else synthetic_proba(p, args.classes, args.seed, y_true=y)
    generated = time.perf_counter() - t0
    t0 = time.perf_counter()
    if proba is None:
        report = cmetrics.evaluate(y, y_pred=p, backend=args.backend)
    else:
        report = cmetrics.evaluate(y, y_proba=proba, backend=args.backend)
    seconds = time.perf_counter() - t0
    if args.json:
        payload = {"rows": args.rows, "seconds": seconds, "generated_seconds": generated, "report": report.to_dict()}
        json.dump(payload, sys.stdout, indent=2)
        print()
        return 0
    what = "labels" if proba is None else "labels and float32 probabilities"
    print(f"generated {args.rows:,} synthetic rows ({what}, {args.classes} classes) in {generated:.2f} s\n")
    _print_report(report, seconds, args.rows, sys.stdout)
    return 0


def _json_safe(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _json_safe(v) for k, v in x.items()}
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``cmetrics`` script."""
    parser = argparse.ArgumentParser(prog="cmetrics", description="Classification metrics for large evaluation dumps.")
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="score a synthetic evaluation dump generated in memory")
    d.add_argument("--rows", type=int, default=10_000_000, help="number of rows (default 10^7)")
    d.add_argument("--classes", type=int, default=10, help="number of classes (default 10)")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--threads", type=int, default=0, help="kernel threads (default: CMETRICS_NUM_THREADS or all cores)")
    d.add_argument("--backend", choices=["auto", "rust", "numpy"], default="auto")
    d.add_argument("--json", action="store_true", help="print the report as JSON")
    d.add_argument("--hard-only", action="store_true", help="labels only, no probability matrix")
    args = parser.parse_args(argv)
    if args.command == "demo":
        if args.rows < 1 or args.classes < 2:
            parser.error("--rows must be >= 1 and --classes >= 2")
        return demo(args)
    return 2  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())

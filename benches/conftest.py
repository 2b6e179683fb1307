"""Benchmark fixtures: seeded data, the machine record, and the ratio table.

Every benchmark registers its best time under a name; at the end of the run
the ratios against the reference implementations are computed from timings of this same
run, printed, and written to ``benches/results.json`` with the machine.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pytest

from cmetrics import _core

#: The kinds of keys the sort is chosen for, each recorded with the machine.
KEY_KINDS: tuple[Literal["u32", "u64", "u64_high_bytes"], ...] = ("u32", "u64", "u64_high_bytes")

N = int(os.environ.get("CMETRICS_BENCH_ROWS", 10_000_000))
K = 10
TIMINGS: dict[str, float] = {}
EXTRA: dict[str, Any] = {}
_READERS = ThreadPoolExecutor(os.cpu_count() or 1)


def read_probe(words: np.ndarray) -> int:
    """The memory-bandwidth floor: a sum of u64 words, one slice per core (numpy releases the
    GIL inside the reduction, so the slices are read in parallel as the kernels read theirs)."""
    parts = np.array_split(words, os.cpu_count() or 1)
    return sum(int(s) for s in _READERS.map(lambda a: np.add.reduce(a, dtype=np.uint64), parts))


def record(name: str, benchmark: Any) -> None:
    """Keep the best time of a finished benchmark for the ratio table (nothing
    is timed under ``--benchmark-disable``, the smoke-test mode)."""
    if getattr(benchmark, "stats", None) is not None:
        TIMINGS[name] = float(benchmark.stats.stats.min)


@pytest.fixture(scope="session")
def labels_1e7() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    y = rng.integers(0, K, N, dtype=np.int32)
    wrong = (y + rng.integers(1, K, N, dtype=np.int32)) % K
    p = np.where(rng.random(N) < 0.7, y, wrong).astype(np.int32)
    return y, p


@pytest.fixture(scope="session")
def proba_1e7(labels_1e7: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """float32 softmax probabilities (N x K) whose top label is the prediction."""
    from cmetrics.cli import synthetic_proba

    return synthetic_proba(labels_1e7[1], K, seed=0)


def vector_extensions() -> list[str]:
    """The CPU's SIMD extensions as Linux lists them (SSE4, AVX, AVX2, FMA, AVX-512 ...)."""
    try:
        with open("/proc/cpuinfo") as fh:
            flags = next((line.split(":", 1)[1].split() for line in fh if line.startswith("flags")), [])
    except OSError:
        return []
    return [f for f in flags if f.startswith(("sse4", "avx", "fma"))]


def machine() -> dict[str, Any]:
    cpu = "unknown"
    family = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        fields = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in out.splitlines())}
        cpu = fields.get("Model name", cpu)
        # A guest's model name may be only "AMD EPYC": the family and model tell the core apart.
        family = f"family {fields.get('CPU family', '?')}, model {fields.get('Model', '?')}"
    except OSError:
        pass
    import numpy
    import sklearn

    return {
        "cpu": cpu,
        "cpu_family": family,
        "vector_extensions": vector_extensions(),
        # The sort of plain integer keys this process uses for each kind of key (CMETRICS_SORT, the CPU).
        "sort_algorithm": {keys: _core.sort_algorithm(keys) for keys in KEY_KINDS},
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scikit-learn": sklearn.__version__,
        "date": time.strftime("%Y-%m-%d"),
    }


def _ratio(a: str, b: str) -> float | None:
    if a in TIMINGS and b in TIMINGS:
        return TIMINGS[a] / TIMINGS[b]
    return None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not TIMINGS:
        return
    floor = EXTRA.get("floor_seconds")
    pfloor = EXTRA.get("proba_floor_seconds")
    ratios = {
        "confusion: numpy bincount / cmetrics": _ratio("numpy_bincount", "cmetrics_confusion"),
        "confusion: sklearn / cmetrics": _ratio("sklearn_confusion", "cmetrics_confusion"),
        "confusion: cmetrics / bandwidth floor": (TIMINGS["cmetrics_confusion"] / floor)
        if floor and "cmetrics_confusion" in TIMINGS
        else None,
        "report: sklearn set / cmetrics": _ratio("sklearn_report", "cmetrics_report"),
        "report: numpy backend / cmetrics": _ratio("numpy_backend_report", "cmetrics_report"),
        "pCM: cmetrics / bandwidth floor": (TIMINGS["cmetrics_pcm"] / pfloor)
        if pfloor and "cmetrics_pcm" in TIMINGS
        else None,
        "refinement: sklearn roc_auc / cmetrics": _ratio("sklearn_auc", "cmetrics_refinement"),
        "refinement: numpy sort+searchsorted / cmetrics": _ratio("numpy_auc", "cmetrics_refinement"),
        "kendall: scipy / cmetrics": _ratio("scipy_kendall", "cmetrics_kendall"),
        "kendall, distinct values: scipy / cmetrics": _ratio("scipy_kendall_distinct", "cmetrics_kendall_distinct"),
        "pCM: best numpy / cmetrics": (
            min(TIMINGS[k] for k in ("numpy_pcm_bincount", "numpy_pcm_sparse", "numpy_pcm_onehot") if k in TIMINGS)
            / TIMINGS["cmetrics_pcm"]
        )
        if "cmetrics_pcm" in TIMINGS
        else None,
        "cli score (exact ranking) / pyarrow read": _ratio("cli_score_exact", "pyarrow_read"),
        "cli score (approximate ranking) / pyarrow read": _ratio("cli_score_approximate", "pyarrow_read"),
        "cli score (ranking off) / pyarrow read": _ratio("cli_score_off", "pyarrow_read"),
        "cli score (exact ranking) / pyarrow read, pages warm": _ratio("cli_score_exact_warm", "pyarrow_read_warm"),
        "cli score (approximate ranking) / pyarrow read, pages warm": _ratio(
            "cli_score_approximate_warm", "pyarrow_read_warm"
        ),
        "cli score (ranking off) / pyarrow read, pages warm": _ratio("cli_score_off_warm", "pyarrow_read_warm"),
        "evaluate: sklearn set / cmetrics": _ratio("sklearn_proba_set", "cmetrics_evaluate"),
        "ovr AUROC: sklearn / cmetrics": _ratio("sklearn_ovr_auc", "cmetrics_ovr_auc"),
        "evaluate exact ranking / ranking off": _ratio("evaluate_ranking_exact", "evaluate_ranking_off"),
        "evaluate approximate ranking / ranking off": _ratio("evaluate_ranking_approximate", "evaluate_ranking_off"),
        "ovr AUROC: polars-ds / cmetrics": _ratio("polars_ds_ovr_auc", "cmetrics_ovr_auc"),
        "roc_curve: sklearn / cmetrics": _ratio("sklearn_roc_curve", "cmetrics_roc_curve"),
        "precision_recall_curve: sklearn / cmetrics": _ratio(
            "sklearn_precision_recall_curve", "cmetrics_precision_recall_curve"
        ),
        "evaluate: best numpy / cmetrics": _ratio("numpy_proba_set", "cmetrics_evaluate"),
        "kendall, one-sided ties: scipy / cmetrics": _ratio(
            "scipy_kendall_one_sided_ties", "cmetrics_kendall_one_sided_ties"
        ),
        "kendall, one-sided ties: polars-ds / cmetrics": _ratio(
            "polars_ds_kendall_one_sided_ties", "cmetrics_kendall_one_sided_ties"
        ),
        "kendall, no ties: scipy / cmetrics": _ratio("scipy_kendall_no_ties", "cmetrics_kendall_no_ties"),
        "kendall, no ties: polars-ds / cmetrics": _ratio("polars_ds_kendall_no_ties", "cmetrics_kendall_no_ties"),
        "binary AUROC f64: sklearn / cmetrics": _ratio("sklearn_binary_roc_auc", "cmetrics_binary_roc_auc"),
        "binary AUROC f64: scors / cmetrics": _ratio("scors_binary_roc_auc", "cmetrics_binary_roc_auc"),
        "binary AP f64: sklearn / cmetrics": _ratio(
            "sklearn_binary_average_precision", "cmetrics_binary_average_precision"
        ),
        "binary AP f64: scors / cmetrics": _ratio(
            "scors_binary_average_precision", "cmetrics_binary_average_precision"
        ),
        "refinement f64: sklearn roc_auc / cmetrics": _ratio("sklearn_binary_roc_auc", "cmetrics_binary_refinement"),
        "refinement f64: scors roc_auc / cmetrics": _ratio("scors_binary_roc_auc", "cmetrics_binary_refinement"),
        "evaluate exact confidence ranking / off (class ranking off)": _ratio(
            "evaluate_confidence_exact", "evaluate_confidence_off"
        ),
        "dask 2 workers / single process (exact ranking)": _ratio("dask_score_exact", "single_score_exact"),
        "dask 2 workers / single process (approximate)": _ratio("dask_score_approximate", "single_score_approximate"),
        "score --group-by 100 groups / ungrouped (default modes)": _ratio(
            "score_grouped_exact", "score_ungrouped_exact"
        ),
        "score --group-by 100 groups / ungrouped (ranking off)": _ratio("score_grouped_off", "score_ungrouped_off"),
        "evaluate 10^7 hard labels, 10^4 groups / ungrouped": _ratio("evaluate_slices_10000", "evaluate_slices_0"),
        "evaluate 10^7 hard labels, 10^5 groups / ungrouped": _ratio("evaluate_slices_100000", "evaluate_slices_0"),
    }
    # The sort-bound operations as multiples of numpy's sort of the same keys (same run).
    for key, seconds in TIMINGS.items():
        if key.startswith("sortop:"):
            _, op, data = key.split(":", 2)
            for yardstick, label in (("yardstick", "np.sort"), ("yardstick_avx2", "np.sort avx2")):
                base = TIMINGS.get(f"{yardstick}:{data}")
                ratios[f"{op} {data} / {label}"] = None if base is None else seconds / base
    result = {"rows": N, "classes": K, "machine": machine(), "best_seconds": TIMINGS, "extra": EXTRA, "ratios": ratios}
    path = Path(__file__).with_name("results.json")
    path.write_text(json.dumps(result, indent=2) + "\n")
    lines = ["", f"cmetrics benchmark ratios (n = {N:,}, K = {K}):"]
    for k, v in ratios.items():
        lines.append(f"  {k:<48} {'n/a' if v is None else f'{v:8.2f}x'}")
    lines.append(f"  written to {path}")
    print("\n".join(lines))

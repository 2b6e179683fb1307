"""Calibrate the sequential threshold of the Rust kernels (``SEQUENTIAL_BELOW``).

For each size, times the confusion-matrix kernel on one thread and on the
two-thread pool with the threshold lifted (``min_parallel=0``), and prints
where two threads start to win.

Run: ``python benches/crossover.py``.
"""

from __future__ import annotations

import time
from functools import partial

import numpy as np

from cmetrics import _core


def best(fn, repeat: int = 25) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"SEQUENTIAL_BELOW = {_core.SEQUENTIAL_BELOW:,}")
    print(f"{'rows':>10} {'1 thread (us)':>14} {'2 threads (us)':>15} {'speed-up':>9}")
    for exp in range(12, 24):
        n = 1 << exp
        y = rng.integers(0, 10, n, dtype=np.int32)
        p = rng.integers(0, 10, n, dtype=np.int32)
        one = best(partial(_core.confusion_matrix, y, p, n_threads=1))
        two = best(partial(_core.confusion_matrix, y, p, n_threads=2, min_parallel=0))
        print(f"{n:>10,} {one * 1e6:>14.1f} {two * 1e6:>15.1f} {one / two:>8.2f}x")


if __name__ == "__main__":
    main()

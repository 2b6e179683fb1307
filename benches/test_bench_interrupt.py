"""How fast Ctrl-C stops a long kernel: the time from SIGINT to the KeyboardInterrupt in the
interpreter, for Kendall's tau and the weighted binary AUROC of 10^8 rows and a loop of
``evaluate`` on 10^7 x 10 probabilities (the goal: under half a second). The test suite only
checks that these kernels stop at all on a busy machine (tests/package/test_robustness.py);
the latency is measured here, each kernel in a fresh process, the sizes fixed (a kernel
must still be running when the signal comes)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from typing import Any

import pytest

import cmetrics
from benches.conftest import EXTRA, record

SCRIPT = r"""
import signal, sys, numpy as np, cmetrics
# A process started in the background by a shell without job control inherits SIGINT ignored,
# and Python then installs no KeyboardInterrupt handler: restore it, as a terminal would have it.
signal.signal(signal.SIGINT, signal.default_int_handler)
kind, n = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
x = rng.random(n)
y = rng.random(n)
ok = rng.random(n) < 0.6
if kind == "proba":
    p = rng.random((n, 10)).astype(np.float32)
    p /= p.sum(axis=1, keepdims=True)
    labels = (y * 10).astype(np.int32)
print("ready", flush=True)
try:
    if kind == "kendall":
        cmetrics.kendall_tau(x, y)
    elif kind == "auroc":
        cmetrics.roc_auc_score(ok, x, sample_weight=y)
    else:
        for _ in range(100):
            cmetrics.evaluate(labels, y_proba=p, ranking="off")
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


def _started(kind: str, n: int, after: float) -> tuple[tuple[Any, ...], dict[str, Any]]:
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, kind, str(n)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    time.sleep(after)  # the kernel is running
    return (proc,), {}


def _interrupt(proc: subprocess.Popen[str]) -> str:
    """SIGINT, then the process's next line: what is timed."""
    assert proc.stdout is not None
    try:
        proc.send_signal(signal.SIGINT)
        return proc.stdout.readline().strip()
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


@pytest.mark.skipif(not cmetrics.rust_available(), reason="the compiled kernels' stop flag is measured")
@pytest.mark.parametrize(
    ("kind", "n", "after"), [("kendall", 100_000_000, 2.0), ("auroc", 100_000_000, 1.0), ("proba", 10_000_000, 0.5)]
)
def test_ctrl_c_latency(benchmark: Any, kind: str, n: int, after: float) -> None:
    line = benchmark.pedantic(_interrupt, setup=lambda: _started(kind, n, after), rounds=3, iterations=1)
    assert line == "interrupted"
    record(f"ctrl_c_{kind}", benchmark)
    if getattr(benchmark, "stats", None) is not None:
        EXTRA[f"ctrl_c_{kind}_seconds"] = float(benchmark.stats.stats.max)

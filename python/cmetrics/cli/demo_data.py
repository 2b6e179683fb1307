"""The demo's synthetic evaluation dump: labels of a plausible model, its float32 softmax
probabilities, and the Parquet file ``cmetrics demo`` writes in chunks (memory does not grow
with the rows)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


def synthetic_dump(n_rows: int, n_classes: int, seed: int = 0, accuracy: float = 0.7) -> tuple[np.ndarray, np.ndarray]:
    """int32 truth and predictions of a plausible model: class ``c`` has prevalence
    proportional to ``1 / (c + 1)`` (class 0 the most frequent) and the model is right more
    often on frequent classes (per-class accuracy from ``accuracy + 0.15`` on class 0 down to
    ``accuracy - 0.25`` on the rarest); wrong predictions go to the other classes uniformly."""
    rng = np.random.default_rng(seed)
    k = max(n_classes, 1)
    prevalence = 1.0 / np.arange(1, k + 1)
    prevalence /= prevalence.sum()
    y = np.minimum(np.searchsorted(np.cumsum(prevalence), rng.random(n_rows)), k - 1).astype(np.int32)
    per_class = np.clip(accuracy + 0.15 - 0.4 * np.arange(k) / max(k - 1, 1), 0.05, 0.99)
    shift = rng.integers(1, max(n_classes, 2), n_rows, dtype=np.int32)
    wrong = (y + shift) % n_classes
    correct = rng.random(n_rows, dtype=np.float32) < per_class[y]
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


def write_demo(directory: Path, rows: int, classes: int, seed: int = 0, chunk_rows: int = 1 << 21) -> Path:
    """Write a synthetic dump as Parquet (``label``, ``p_0`` ... ``p_{K-1}`` float32), in
    chunks so that memory does not grow with ``rows``; returns the file."""
    path = directory / f"demo_{rows}x{classes}.parquet"
    schema = pa.schema([("label", pa.int32())] + [(f"p_{j}", pa.float32()) for j in range(classes)])
    with pq.ParquetWriter(path, schema, compression="snappy") as w:
        for i, lo in enumerate(range(0, rows, chunk_rows)):
            n = min(chunk_rows, rows - lo)
            y, p = synthetic_dump(n, classes, seed + 7919 * i)
            proba = synthetic_proba(p, classes, seed + 7919 * i, y_true=y)
            cols = [pa.array(y)] + [pa.array(np.ascontiguousarray(proba[:, j])) for j in range(classes)]
            w.write_table(pa.Table.from_arrays(cols, schema=schema), row_group_size=1 << 20)
    return path

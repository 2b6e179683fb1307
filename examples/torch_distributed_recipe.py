"""Scoring an evaluation loop that runs on several ``torch.distributed`` ranks: every rank feeds
its own rows' batches to one :class:`cmetrics.Evaluator`, the ranks exchange their states' bytes
with ``all_gather_object``, and each merges them in rank order with :func:`cmetrics.merge_all`:
every rank holds the same report, equal to ``cmetrics.evaluate`` on all the rows.

Give each rank its own rows exactly once: ``DistributedSampler`` pads the last shard by
repeating rows (``drop_last=False``) or drops them (``drop_last=True``), and either changes the
counts; split the evaluation set into contiguous shards instead, as below.

Run ``python examples/torch_distributed_recipe.py ROWS.npz OUT_DIR [--world-size 2]``: ``ROWS.npz``
holds ``y_true`` and ``y_proba`` (and ``sample_weight`` if weighted); each rank writes its report
to ``OUT_DIR/rank-<r>.json``. It starts the ranks on this machine with the ``gloo`` backend and
needs ``pip install torch``; ``tests/engines/test_torch_recipe.py`` runs it.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import cmetrics


def gathered_report(ev: cmetrics.Evaluator) -> cmetrics.Report:
    """The Report of every rank's rows: the states gathered to every rank and merged in rank order
    (so every rank gets the same bits)."""
    states: list[bytes | None] = [None] * dist.get_world_size()
    dist.all_gather_object(states, ev.to_bytes())
    return cmetrics.merge_all([s for s in states if s is not None]).report()


def evaluate_shard(rank: int, world_size: int, rows: Path, batch_rows: int) -> cmetrics.Report:
    """An evaluation loop on this rank's contiguous shard of ``rows``, in batches as a model would
    give them, scored across the ranks."""
    data = np.load(rows)
    shard = np.array_split(np.arange(len(data["y_true"])), world_size)[rank]
    y_true = torch.from_numpy(data["y_true"][shard])
    y_proba = torch.from_numpy(data["y_proba"][shard])
    weight = torch.from_numpy(data["sample_weight"][shard]) if "sample_weight" in data else None
    ev = cmetrics.Evaluator(n_classes=y_proba.shape[1])
    for lo in range(0, len(shard), batch_rows):
        part = slice(lo, lo + batch_rows)
        ev.update(
            y_true[part].numpy(),
            y_proba=y_proba[part].numpy(),
            sample_weight=None if weight is None else weight[part].numpy(),
        )
    return gathered_report(ev)


def rank_main(rank: int, world_size: int, rendezvous: str, rows: Path, out: Path, batch_rows: int) -> None:
    dist.init_process_group("gloo", init_method=rendezvous, rank=rank, world_size=world_size)
    try:
        report = evaluate_shard(rank, world_size, rows, batch_rows)
        (out / f"rank-{rank}.json").write_text(json.dumps(report.to_dict()))
    finally:
        dist.destroy_process_group()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Score rows split over torch.distributed ranks with cmetrics.")
    parser.add_argument("rows", type=Path, help="an .npz file with y_true, y_proba (and sample_weight)")
    parser.add_argument("out", type=Path, help="a directory for rank-<r>.json")
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--batch-rows", type=int, default=4096)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rendezvous = f"file://{(args.out / 'rendezvous').resolve()}"  # a file both ranks see: no port to pick
    mp.spawn(
        rank_main,
        args=(args.world_size, rendezvous, args.rows, args.out, args.batch_rows),
        nprocs=args.world_size,
        join=True,
    )


if __name__ == "__main__":
    main()

"""The ``cmetrics`` command line.

``cmetrics score PATH...`` streams evaluation dumps (Parquet files or directories, CSV,
JSON Lines, ``.npz`` / structured ``.npy``) batch by batch into a :class:`cmetrics.Evaluator`
and prints the report as a table, JSON or Markdown. Memory stays bounded by the batch size
(plus the ranking summary, see :mod:`cmetrics.streaming`). A progress bar with rows per second
and an ETA goes to the terminal; on a pipe or with ``--quiet`` only the report is written.
User errors give a one-line message and exit status 2, never a traceback.

``cmetrics demo`` writes a synthetic dump (10^7 rows, 10 classes, float32 probabilities by
default) as Parquet and scores it through ``cmetrics score``; ``cmetrics bench`` times cmetrics
against its peers on one synthetic dump.

The modules: :mod:`~cmetrics.cli.commands` (the click commands and :func:`main`),
:mod:`~cmetrics.cli.scoring` (files in this process or on Dask), :mod:`~cmetrics.cli.render`
(tables, JSON, Markdown, the progress bar, ``--output``), :mod:`~cmetrics.cli.demo_data` (the
synthetic dump) and :mod:`~cmetrics.cli.benchmark` (``cmetrics bench``).
"""

from cmetrics._readers import Columns
from cmetrics.cli.commands import bench, cli, demo, main, score
from cmetrics.cli.demo_data import synthetic_dump, synthetic_proba, write_demo
from cmetrics.cli.scoring import score_files, score_on_dask

__all__ = [
    "Columns",
    "bench",
    "cli",
    "demo",
    "main",
    "score",
    "score_files",
    "score_on_dask",
    "synthetic_dump",
    "synthetic_proba",
    "write_demo",
]

"""The README's tour and every docstring example run, and say what they claim."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
import warnings
from pathlib import Path

import pytest

import cmetrics

README = Path(__file__).resolve().parents[2] / "README.md"


#: Every module of the package (``__main__`` runs the command line when imported).
MODULES = sorted(
    m.name for m in pkgutil.walk_packages(cmetrics.__path__, "cmetrics.") if not m.name.endswith("__main__")
)
#: The public modules: their docstrings carry examples.
WITH_EXAMPLES = {
    "cmetrics.classification",
    "cmetrics.confusion",
    "cmetrics.curves",
    "cmetrics.dask",
    "cmetrics.label_ranking",
    "cmetrics.plot.curve_displays",
    "cmetrics.plot.matrix_displays",
    "cmetrics.plot.model_comparison",
    "cmetrics.probabilistic",
    "cmetrics.ranking",
    "cmetrics.reference",
    "cmetrics.report",
    "cmetrics.sklearn",
    "cmetrics.streaming.evaluator",
    "cmetrics.streaming.settings",
    "cmetrics.uncertainty.delong",
    "cmetrics.uncertainty.intervals",
    "cmetrics.uncertainty.mcnemar",
    "cmetrics.uncertainty.resampling",
}
#: Public modules without examples of their own: a package that re-exports, and the parts of
#: the streaming state whose examples are those of :class:`cmetrics.Evaluator`.
WITHOUT_EXAMPLES = {
    "cmetrics.plot",
    "cmetrics.spark",
    "cmetrics.plot.responses",
    "cmetrics.streaming",
    "cmetrics.streaming.dense_ranking",
    "cmetrics.streaming.group_tables",
    "cmetrics.streaming.group_values",
    "cmetrics.streaming.replicates",
    "cmetrics.streaming.grouping",
    "cmetrics.streaming.rows",
    "cmetrics.streaming.state_curves",
    "cmetrics.streaming.state_format",
    "cmetrics.uncertainty",
    "cmetrics.uncertainty.ranking_cells",
    "cmetrics.uncertainty.schemes",
}


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    if name in WITH_EXAMPLES:
        assert result.attempted > 0


def test_every_public_module_is_listed() -> None:
    public = {
        name
        for name in MODULES
        if not any(part.startswith("_") for part in name.split("."))
        and name not in ("cmetrics.cli", "cmetrics.exceptions")
        and not name.startswith("cmetrics.cli.")
    }
    assert public == WITH_EXAMPLES | WITHOUT_EXAMPLES


def test_readme_tour_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has a Python tour"
    namespace: dict[str, object] = {}  # the tour is read top to bottom: later blocks reuse names
    for block in blocks:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cmetrics.UndefinedMetricWarning)
            exec(compile(block, str(README), "exec"), namespace)


def test_readme_quick_start_is_two_commands() -> None:
    text = README.read_text()
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)```", quick, flags=re.S)
    assert [c.strip() for c in commands] == ["pip install . && cmetrics demo", 'pip install ".[test]" && pytest']

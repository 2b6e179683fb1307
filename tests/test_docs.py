"""The README's tour and every docstring example run, and say what they claim."""

from __future__ import annotations

import doctest
import re
import warnings
from pathlib import Path

import pytest

import cmetrics
import cmetrics.classification
import cmetrics.confusion

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.parametrize("module", [cmetrics.classification, cmetrics.confusion], ids=lambda m: m.__name__)
def test_docstring_examples(module: object) -> None:
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)  # type: ignore[arg-type]
    assert result.attempted > 0
    assert result.failed == 0


def test_readme_tour_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has a Python tour"
    namespace: dict[str, object] = {}  # the tour is read top to bottom: later blocks reuse names
    for block in blocks:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cmetrics.UndefinedMetricWarning)
            exec(compile(block, str(README), "exec"), namespace)  # noqa: S102


def test_readme_quick_start_is_two_commands() -> None:
    text = README.read_text()
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)```", quick, flags=re.S)
    assert [c.strip() for c in commands] == ['pip install . && cmetrics demo', 'pip install ".[test]" && pytest']

"""scikit-learn's own tests of ``sklearn.metrics`` (test_classification.py and test_ranking.py,
installed with scikit-learn) pass with cmetrics swapped in, on both backends, apart from
exception wording and the README's intentional differences (``tests/sklearn_suite/run.py``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import sklearn

RUNNER = Path(__file__).resolve().parents[1] / "sklearn_suite" / "run.py"


def test_scikit_learn_metric_tests_pass_with_cmetrics_swapped_in() -> None:
    done = subprocess.run([sys.executable, str(RUNNER)], capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, f"scikit-learn {sklearn.__version__}:\n{done.stdout}\n{done.stderr[-3000:]}"
    for line in done.stdout.splitlines():
        scope = int(line.split(" in scope")[0].split()[-1])
        assert scope > 400, line  # the run really exercised cmetrics


def test_every_listed_difference_is_a_row_of_the_readme_table() -> None:
    sys.path.insert(0, str(RUNNER.parent))
    try:
        import run  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    table = readme.split("## Intentional differences from scikit-learn")[1].split("\n## ")[0]
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    for test, row in run.DIFFERENCES.items():
        assert any(line.startswith(f"| {row}") for line in rows), (test, row)

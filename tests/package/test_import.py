"""What ``import cmetrics`` loads: the version from the compiled core, equal to the installed
distribution's, without the metadata reader (about 20 ms of every worker's and command's start)."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata

import pytest

import cmetrics
from cmetrics.uncertainty.schemes import package_version


def test_the_version_is_the_installed_distributions() -> None:
    assert cmetrics.__version__ == metadata.version("cmetrics")
    assert package_version() == cmetrics.__version__


@pytest.mark.skipif(not cmetrics.rust_available(), reason="without the core the version comes from the metadata")
def test_import_cmetrics_leaves_the_metadata_reader_alone() -> None:
    code = "import sys, cmetrics; print(sorted(m for m in ('importlib.metadata', 'email') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

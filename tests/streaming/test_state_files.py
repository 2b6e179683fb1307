"""States written by ``Evaluator.to_bytes`` at commit b6afe2c (tests/data/states, base64 text;
the script that wrote them is in its README) load and give the reports stored beside them, and
are written again byte for byte: the byte format does not move when the code does."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from typing import Any

import pytest

from cmetrics import Evaluator
from tests.conftest import BACKENDS

STATES = Path(__file__).resolve().parents[1] / "data" / "states"
NAMES = sorted(p.stem for p in STATES.glob("*.b64"))


def same(got: Any, want: Any, exact: bool, where: str = "") -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), where
        for key in want:
            same(got[key], want[key], exact, f"{where}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            same(g, w, exact, f"{where}[{i}]")
    elif isinstance(want, float) and not exact:
        assert isinstance(got, float) and math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-15), (where, got, want)
    else:
        assert got == want, (where, got, want)


def test_there_are_state_files() -> None:
    assert len(NAMES) == 5


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_state_written_before_loads_the_same_and_writes_the_same_bytes(name: str, backend: str) -> None:
    data = base64.b64decode((STATES / f"{name}.b64").read_text())
    ev = Evaluator.from_bytes(data)
    ev.backend = backend
    assert ev.to_bytes() == data
    report = ev.grouped_report() if ev.group_by else ev.report()
    want = json.loads((STATES / f"{name}.json").read_text())
    # Counts and labels exactly; the float metrics to 1e-12 (another machine's vector paths, or
    # the other backend, may round a logarithm or a sum in another way).
    same(json.loads(report.to_json(sort_keys=True)), want, exact=False)

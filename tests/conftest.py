"""Shared fixtures: the backend parametrization, the test vectors, hypothesis profiles."""

from __future__ import annotations

import json
import os
import warnings
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import settings

import cmetrics

settings.register_profile("fast", max_examples=40, deadline=None)
settings.register_profile("slow", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))

#: The worked cases (provenance in tests/data/vectors/README.md).
VECTORS = Path(__file__).resolve().parent / "data" / "vectors"

BACKENDS = ["rust", "numpy"] if cmetrics.rust_available() else ["numpy"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Every test that takes this fixture runs on both backends."""
    return str(request.param)


def load_vectors(name: str) -> dict[str, Any]:
    with (VECTORS / name).open() as fh:
        return json.load(fh)


def num(x: Any) -> Any:
    """Decode the vectors' number encoding (docs/definitions.md section 1.7)."""
    if isinstance(x, list):
        return [num(v) for v in x]
    if isinstance(x, str):
        specials = {
            "NaN": float("nan"),
            "Infinity": float("inf"),
            "-Infinity": float("-inf"),
            "None": float("nan"),
            "undefined": float("nan"),
        }
        if x in specials:
            return specials[x]
        return float(Fraction(x))
    return x


def assert_close(got: Any, want: Any, what: str = "") -> None:
    """The vectors' tolerance (docs/definitions.md §1.6): |a - b| <= 1e-12 * max(1, |b|); NaN equals NaN."""
    g = np.asarray(got, dtype=np.float64)
    w = np.asarray(num(want), dtype=np.float64)
    assert g.shape == w.shape, f"{what}: shape {g.shape} != {w.shape}"
    both_nan = np.isnan(g) & np.isnan(w)
    ok = both_nan | (np.abs(g - w) <= 1e-12 * np.maximum(1.0, np.abs(w))) | (g == w)
    assert ok.all(), f"{what}: got {g.tolist()}, want {w.tolist()}"


#: The zero_division settings of the vectors, by their key.
ZD = {"zero_division=warn": "warn", "zero_division=0": 0, "zero_division=1": 1, "zero_division=nan": float("nan")}


def quiet(fn: Any, *args: Any, **kw: Any) -> Any:
    """Call ``fn`` with warnings silenced (the value, not the warning, is under test)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)

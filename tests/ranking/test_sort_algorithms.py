"""The two sorts of plain integer keys (the radix sort and Highway's vectorized sort, chosen once
per process by ``CMETRICS_SORT`` or the CPU) give every sort-bound metric the same bits, and the
values scikit-learn and scipy give. Each algorithm runs in a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.stats
import sklearn.metrics as skm

import cmetrics
from cmetrics import _core
from cmetrics.exceptions import ValidationError

N = 600_011

SCRIPT = """
import json, sys
import numpy as np
import cmetrics
from cmetrics import _core

rng = np.random.default_rng(7)
n = int(sys.argv[1])
z = rng.normal(0.0, 1.6, n)
p = 1 / (1 + np.exp(-z))
y = rng.random(n) < p
ties = np.round(p, 2)
k = rng.integers(0, 4, n)
proba = rng.dirichlet(np.ones(4), n).astype(np.float32)
out = {"algorithm": [[k, _core.sort_algorithm(k)] for k in ("u32", "u64", "u64_high_bytes")]}
for name, s in [("f64", p), ("f32", p.astype(np.float32)), ("logits64", z), ("logits32", z.astype(np.float32))]:
    out["auc_" + name] = cmetrics.roc_auc_score(y, s)
    out["ap_" + name] = cmetrics.average_precision_score(y, s)
    out["refinement_" + name] = cmetrics.refinement(y, s)
    fpr, tpr, _ = cmetrics.roc_curve(y, s)
    out["roc_curve_" + name] = [float(fpr.sum()), float(tpr.sum()), int(fpr.size)]
out["kendall_ties"] = cmetrics.kendall_tau(z, ties)
out["kendall"] = cmetrics.kendall_tau(z, z + rng.normal(0.0, 1.0, n))
out["ovr"] = cmetrics.roc_auc_score(k, proba, multi_class="ovr")
exact = {key: v if isinstance(v, (list, str)) else float(v).hex() for key, v in out.items()}
print(json.dumps(exact))
"""


def _run(algorithm: str) -> dict[str, object]:
    env = {**os.environ, "CMETRICS_SORT": algorithm}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(N)], capture_output=True, text=True, timeout=600, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.fixture(scope="module")
def both() -> tuple[dict[str, object], dict[str, object]]:
    return _run("radix"), _run("vectorized")


def test_the_setting_picks_the_sort(both: tuple[dict[str, object], dict[str, object]]) -> None:
    radix, vectorized = both
    kinds = ["u32", "u64", "u64_high_bytes"]
    assert radix["algorithm"] == [[k, "radix"] for k in kinds]
    # Forced for every kind of key where this build has it; a build without Highway keeps the radix sort.
    forced = "vectorized" if _core.VECTORIZED_SORT_BUILT else "radix"
    assert vectorized["algorithm"] == [[k, forced] for k in kinds]
    # Unforced, each kind has the sort measured to win on this CPU; plain u64 keys are the default kind.
    assert {_core.sort_algorithm(k) for k in kinds} <= {"radix", "vectorized"}
    assert _core.sort_algorithm() == _core.sort_algorithm("u64")
    if not _core.VECTORIZED_SORT_BUILT:
        assert {_core.sort_algorithm(k) for k in kinds} == {"radix"}


def test_a_sort_per_kind_of_key(both: tuple[dict[str, object], dict[str, object]]) -> None:
    """``CMETRICS_SORT`` as a list of ``kind=sort`` entries sets each kind named; the kinds it does
    not name keep the sort chosen for the CPU. The bits are those of either sort alone."""
    mixed = _run("u32=radix, u64=vectorized")
    forced = "vectorized" if _core.VECTORIZED_SORT_BUILT else "radix"
    # This process's own choice for the kind not named is the CPU's unless the suite runs under a setting.
    unnamed = _core.sort_algorithm("u64_high_bytes") if "CMETRICS_SORT" not in os.environ else None
    assert mixed["algorithm"] == [
        ["u32", "radix"],
        ["u64", forced],
        ["u64_high_bytes", unnamed or mixed["algorithm"][2][1]],  # type: ignore[index]
    ]
    radix, _ = both
    assert {k: v for k, v in mixed.items() if k != "algorithm"} == {k: v for k, v in radix.items() if k != "algorithm"}


def test_an_unknown_kind_of_key_is_refused() -> None:
    with pytest.raises(ValidationError, match="keys must be"):
        _core.sort_algorithm("u16")  # type: ignore[arg-type]


def test_both_sorts_give_the_same_bits(both: tuple[dict[str, object], dict[str, object]]) -> None:
    radix, vectorized = both
    assert {k: v for k, v in radix.items() if k != "algorithm"} == {
        k: v for k, v in vectorized.items() if k != "algorithm"
    }


def test_the_values_are_the_references(both: tuple[dict[str, object], dict[str, object]]) -> None:
    rng = np.random.default_rng(7)
    z = rng.normal(0.0, 1.6, N)
    p = 1 / (1 + np.exp(-z))
    y = rng.random(N) < p
    ties = np.round(p, 2)
    k = rng.integers(0, 4, N)
    proba = rng.dirichlet(np.ones(4), N).astype(np.float32)
    for result in both:

        def value(key: str, result: dict[str, object] = result) -> float:
            return float.fromhex(str(result[key]))

        assert value("auc_f64") == pytest.approx(skm.roc_auc_score(y, p), abs=1e-12)
        assert value("auc_f32") == pytest.approx(skm.roc_auc_score(y, p.astype(np.float32)), abs=1e-12)
        assert value("auc_logits64") == pytest.approx(skm.roc_auc_score(y, z), abs=1e-12)
        assert value("ap_f64") == pytest.approx(skm.average_precision_score(y, p), abs=1e-12)
        assert value("ap_f32") == pytest.approx(skm.average_precision_score(y, p.astype(np.float32)), abs=1e-12)
        assert value("ap_logits32") == pytest.approx(skm.average_precision_score(y, z.astype(np.float32)), abs=1e-12)
        assert value("kendall_ties") == pytest.approx(scipy.stats.kendalltau(z, ties).statistic, abs=1e-12)
        assert value("ovr") == pytest.approx(skm.roc_auc_score(k, proba, multi_class="ovr"), abs=1e-9)
        assert cmetrics.roc_auc_score(y, p) == value("auc_f64")

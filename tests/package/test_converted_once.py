"""Every entry point converts each array input once, at the top, and passes arrays down.

An input that is not a numpy array (a DataFrame column, a tensor, any object with
``__array__``) may be costly to convert; the tests count the conversions of such an object
on every path: ``evaluate`` and ``Evaluator.update``, plain and grouped, hard labels and
probabilities, on both backends, and the command line's batches.
"""

from __future__ import annotations

import collections
import inspect
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import cmetrics
from cmetrics import _readers
from cmetrics.cli import Columns, score_files

BACKENDS = ["numpy"] + (["rust"] if cmetrics.rust_available() else [])


class Counted:
    """An array-like that counts how often it is converted to a numpy array."""

    def __init__(self, name: str, values: np.ndarray, calls: collections.Counter[str]) -> None:
        self.name, self.values, self.calls = name, values, calls

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        self.calls[self.name] += 1
        return self.values if dtype is None else self.values.astype(dtype)

    def __len__(self) -> int:
        return len(self.values)


def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    n, k = 2_000, 4
    p = rng.dirichlet(np.ones(k), n)
    return {
        "y_true": rng.integers(0, k, n),
        "y_proba": p,
        "y_pred": p.argmax(1),
        "confidence": p.max(1),
        "sample_weight": rng.random(n) + 0.5,
        "groups": rng.integers(0, 5, n),
    }


CASES = {
    "probabilities": ("y_true", "y_proba", "sample_weight"),
    "probabilities and predictions": ("y_true", "y_proba", "y_pred", "sample_weight"),
    "labels and confidences": ("y_true", "y_pred", "confidence", "sample_weight"),
    "labels": ("y_true", "y_pred"),
}


def counted(names: tuple[str, ...], grouped: bool) -> tuple[dict[str, Any], collections.Counter[str]]:
    calls: collections.Counter[str] = collections.Counter()
    data = inputs()
    args = {n: Counted(n, data[n], calls) for n in names + (("groups",) if grouped else ())}
    return args, calls


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("grouped", [False, True], ids=["plain", "grouped"])
@pytest.mark.parametrize("case", list(CASES))
def test_evaluate_converts_each_input_once(backend: str, grouped: bool, case: str) -> None:
    args, calls = counted(CASES[case], grouped)
    got = cmetrics.evaluate(args.pop("y_true"), backend=backend, **args)  # type: ignore[call-overload]
    assert dict(calls) == dict.fromkeys(CASES[case] + (("groups",) if grouped else ()), 1)
    # The arrays give the same report as the objects.
    plain = {n: inputs()[n] for n in CASES[case] + (("groups",) if grouped else ())}
    want = cmetrics.evaluate(plain.pop("y_true"), backend=backend, **plain)  # type: ignore[call-overload]
    assert (got.overall if grouped else got).to_dict() == (want.overall if grouped else want).to_dict()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("grouped", [False, True], ids=["plain", "grouped"])
@pytest.mark.parametrize("case", list(CASES))
def test_evaluator_update_converts_each_input_once(backend: str, grouped: bool, case: str) -> None:
    args, calls = counted(CASES[case], grouped)
    ev = cmetrics.Evaluator(backend=backend, group_by=grouped)  # type: ignore[arg-type]
    ev.update(args.pop("y_true"), **args)
    assert dict(calls) == dict.fromkeys(CASES[case] + (("groups",) if grouped else ()), 1)
    assert ev.n_rows == 2_000


def test_several_grouping_columns_are_converted_once_each() -> None:
    calls: collections.Counter[str] = collections.Counter()
    data = inputs()
    by = (Counted("g0", data["groups"], calls), Counted("g1", data["groups"] % 2, calls))
    cmetrics.evaluate(Counted("y_true", data["y_true"], calls), y_proba=Counted("p", data["y_proba"], calls), groups=by)
    assert dict(calls) == {"y_true": 1, "p": 1, "g0": 1, "g1": 1}


@pytest.mark.parametrize("batch_rows", [300, 1 << 20])
def test_the_command_line_converts_each_column_of_a_batch_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch_rows: int
) -> None:
    """Each column of each batch goes from Arrow to numpy once, and the Evaluator is handed
    numpy arrays (which it reads as they are)."""
    data = inputs()
    n = len(data["y_true"])
    table = pa.table(
        {
            "label": data["y_true"],
            "w": data["sample_weight"],
            "g": data["groups"],
            **{f"p_{j}": data["y_proba"][:, j] for j in range(data["y_proba"].shape[1])},
        }
    )
    path = tmp_path / "dump.parquet"
    pq.write_table(table, path, row_group_size=1_000)
    conversions: collections.Counter[str] = collections.Counter()
    real_convert = _readers.arrow_numpy

    def convert(arr: Any, name: str) -> np.ndarray:
        conversions[name] += 1
        return real_convert(arr, name)

    handed: list[str] = []
    real_update = cmetrics.Evaluator.update

    def update(self: cmetrics.Evaluator, y_true: Any, **kw: Any) -> cmetrics.Evaluator:
        group = kw.get("groups")
        values = [y_true, *(v for v in kw.values() if v is not None and not isinstance(v, tuple))]
        values += list(group) if isinstance(group, tuple) else []
        handed.extend(type(v).__name__ for v in values)
        return real_update(self, y_true, **kw)

    monkeypatch.setattr(_readers, "arrow_numpy", convert)
    monkeypatch.setattr(cmetrics.Evaluator, "update", update)
    columns = Columns(label="label", proba_prefix="p_", weight="w", group_by=("g",))
    report, run = score_files([str(path)], columns, cmetrics.EvaluationSettings.make(), batch_rows=batch_rows)
    batches = -(-n // 1_000) if batch_rows >= 1_000 else sum(-(-1_000 // batch_rows) for _ in range(2))
    assert run["rows"] == n
    names = ["label", "w", "g"] + [f"p_{j}" for j in range(4)]
    assert dict(conversions) == dict.fromkeys(names, batches)
    assert set(handed) == {"ndarray"}
    want = cmetrics.evaluate(data["y_true"], y_proba=data["y_proba"], sample_weight=data["sample_weight"])
    assert isinstance(report, cmetrics.GroupedReport)
    assert report.overall.accuracy == pytest.approx(want.accuracy, rel=1e-12)
    assert report.overall.log_loss == pytest.approx(want.log_loss, rel=1e-12)


#: The modules of the metric functions (the rest of ``__all__`` sets threads and limits).
METRIC_MODULES = {
    f"cmetrics.{m}"
    for m in ("classification", "confusion", "curves", "label_ranking", "probabilistic", "ranking", "report")
}


def _argument_patterns() -> list[tuple[str, dict[str, np.ndarray]]]:
    """Positional arguments a public function may take, tried in order."""
    data = inputs()
    y, p, pred = data["y_true"], data["y_proba"], data["y_pred"]
    positive = (y == 1).astype(int)
    return [
        ("labels", {"a": y, "b": pred}),
        ("binary labels", {"a": positive, "b": (pred == 1).astype(int)}),
        ("probabilities", {"a": y, "b": p}),
        ("binary scores", {"a": positive, "b": p[:, 1]}),
        ("indicator and scores", {"a": np.eye(p.shape[1], dtype=int)[y], "b": p}),
        ("one matrix", {"a": p}),
        ("two score vectors", {"a": p[:, 1], "b": p[:, 0]}),
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_public_function_converts_each_argument_once(backend: str) -> None:
    """Each function of ``cmetrics.__all__`` is called with the first pattern of positional
    arguments it accepts, every argument an object that counts its conversions."""
    covered = []
    for name in cmetrics.__all__:
        fn = getattr(cmetrics, name)
        if not inspect.isfunction(fn) or fn.__module__ not in METRIC_MODULES:
            continue
        takes_backend = "backend" in inspect.signature(fn).parameters
        for label, arrays in _argument_patterns():
            calls: collections.Counter[str] = collections.Counter()
            args = [Counted(k, v, calls) for k, v in arrays.items()]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", cmetrics.UndefinedMetricWarning)
                    fn(*args, **({"backend": backend} if takes_backend else {}))
            except (ValueError, TypeError):
                continue  # not this function's arguments: the next pattern
            assert dict(calls) == dict.fromkeys(arrays, 1), f"{name} ({label}): {dict(calls)}"
            covered.append(name)
            break
    assert len(covered) >= 55, covered

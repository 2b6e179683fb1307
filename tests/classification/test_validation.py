"""Every bad input of the hard-label scope raises the documented exception, on both backends."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import cmetrics
from cmetrics import exceptions as ex

Y = [0, 1, 1, 0]

CASES: list[tuple[str, dict[str, Any], type[Exception], str]] = [
    (
        "length mismatch",
        {"y_true": [0, 1, 1], "y_pred": [0, 1]},
        ex.LengthMismatchError,
        "y_true has 3 rows but y_pred has 2",
    ),
    ("weight length", {"sample_weight": [1.0, 2.0]}, ex.LengthMismatchError, "sample_weight has 2 rows"),
    ("empty", {"y_true": [], "y_pred": []}, ex.ShapeError, "y_true is empty"),
    ("0-d", {"y_true": 3, "y_pred": 3}, ex.ShapeError, "must be 1-D"),
    ("2-D", {"y_true": [[0, 1], [1, 0]], "y_pred": [[0, 1], [1, 0]]}, ex.ShapeError, "must be 1-D"),
    ("row vector", {"y_true": [[0, 1, 1, 0]]}, ex.ShapeError, "must be 1-D"),
    ("NaN label", {"y_true": [0.0, np.nan, 1.0, 0.0]}, ex.NonFiniteError, r"y_true\[1\] = nan"),
    ("inf label", {"y_pred": [0.0, 1.0, np.inf, 0.0]}, ex.NonFiniteError, r"y_pred\[2\]"),
    ("non-integral label", {"y_true": [0.5, 1.0, 1.0, 0.0]}, ex.LabelError, "integral"),
    ("NaN weight", {"sample_weight": [1.0, np.nan, 1.0, 1.0]}, ex.WeightError, r"sample_weight\[1\] = nan is invalid"),
    ("inf weight", {"sample_weight": [1.0, 1.0, np.inf, 1.0]}, ex.WeightError, r"sample_weight\[2\] = inf is invalid"),
    (
        "negative weight",
        {"sample_weight": [1.0, -2.0, 1.0, -1.0]},
        ex.WeightError,
        r"sample_weight\[1\] = -2\.0 is invalid.*2 invalid",
    ),
    ("zero weights", {"sample_weight": [0, 0, 0, 0]}, ex.WeightError, "sums to 0"),
    ("2-D weights", {"sample_weight": [[1.0, 1.0], [1.0, 1.0]]}, ex.ShapeError, "sample_weight must be 1-D"),
    ("string weights", {"sample_weight": ["a", "b", "c", "d"]}, ex.UnsupportedDtypeError, "sample_weight has dtype"),
    ("mixed labels", {"y_true": ["a", "b", "a", "b"]}, ex.LabelError, "mix of string and number labels"),
    (
        "mixed inside",
        {"y_true": np.array(["a", 1, "b", 0], dtype=object), "y_pred": ["a"] * 4},
        ex.LabelError,
        "mixes string and number",
    ),
    (
        "None label",
        {"y_true": np.array(["a", None, "b", "a"], dtype=object), "y_pred": ["a"] * 4},
        ex.LabelError,
        "missing",
    ),
    (
        "bytes labels",
        {"y_true": np.array([b"a", b"b", b"a", b"b"]), "y_pred": np.array([b"a"] * 4)},
        ex.UnsupportedDtypeError,
        "bytes",
    ),
    (
        "complex labels",
        {"y_true": np.array([1j, 0, 1, 0]), "y_pred": np.array([1j, 0, 1, 0])},
        ex.UnsupportedDtypeError,
        "complex",
    ),
    (
        "datetime labels",
        {"y_true": np.array(["2020-01-01"] * 4, dtype="M8[D]"), "y_pred": np.array(["2020-01-01"] * 4, dtype="M8[D]")},
        ex.UnsupportedDtypeError,
        "datetime64",
    ),
]


@pytest.mark.parametrize(("name", "kwargs", "exc", "match"), CASES, ids=[c[0] for c in CASES])
def test_bad_input(name: str, kwargs: dict[str, Any], exc: type[Exception], match: str, backend: str) -> None:
    args: dict[str, Any] = {"y_true": Y, "y_pred": [0, 1, 0, 0], "sample_weight": None}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        cmetrics.confusion_matrix(args["y_true"], args["y_pred"], sample_weight=args["sample_weight"], backend=backend)
    assert issubclass(exc, ValueError)


LABEL_CASES: list[tuple[str, Any, dict[str, Any], type[Exception], str]] = [
    ("empty labels", cmetrics.confusion_matrix, {"labels": []}, ex.LabelError, "at least one label"),
    ("duplicate labels", cmetrics.precision_recall_fscore_support, {"labels": [0, 0, 1]}, ex.LabelError, "duplicates"),
    ("labels none in y_true", cmetrics.confusion_matrix, {"labels": [5, 6]}, ex.LabelError, "must be in y_true"),
    (
        "string labels for int data",
        cmetrics.confusion_matrix,
        {"labels": ["a", "b"]},
        ex.LabelError,
        "str labels but the data holds int",
    ),
    (
        "labels not a superset (informedness)",
        cmetrics.informedness,
        {"labels": [0]},
        ex.LabelError,
        "must include every label",
    ),
    (
        "labels not a superset (markedness)",
        cmetrics.markedness,
        {"labels": [1]},
        ex.LabelError,
        "must include every label",
    ),
    ("bad average", cmetrics.f1_score, {"average": "mean"}, ex.ValidationError, "average='mean' is invalid"),
    (
        "samples average of single-label targets",
        cmetrics.f1_score,
        {"average": "samples"},
        ex.ValidationError,
        "not meaningful outside multilabel",
    ),
    ("bad zero_division", cmetrics.f1_score, {"zero_division": 2}, ex.ValidationError, "zero_division=2 is invalid"),
    ("negative beta", cmetrics.fbeta_score, {"beta": -1.0}, ex.ValidationError, "beta"),
    ("pos_label absent", cmetrics.precision_score, {"pos_label": 7}, ex.LabelError, "pos_label=7 is not a valid label"),
    ("bad kappa weights", cmetrics.cohen_kappa_score, {"weights": "cubic"}, ex.ValidationError, "weights='cubic'"),
    ("prior wrong length", cmetrics.informedness, {"prior": [1.0]}, ex.ValidationError, "prior has 1 entries"),
    ("prior not summing to 1", cmetrics.informedness, {"prior": [0.2, 0.2]}, ex.ValidationError, "sum to 1"),
    (
        "prior of 0 on a predicted class",
        cmetrics.informedness,
        {"prior": [0.0, 1.0]},
        ex.ValidationError,
        "strictly between 0 and 1",
    ),
    ("bad n_classes", cmetrics.normalized_information_transfer, {"n_classes": 0}, ex.ValidationError, "n_classes=0"),
    ("bad normalize", cmetrics.confusion_matrix, {"normalize": "rows"}, ex.ValidationError, "normalize='rows'"),
]


@pytest.mark.parametrize(("name", "fn", "kwargs", "exc", "match"), LABEL_CASES, ids=[c[0] for c in LABEL_CASES])
def test_bad_option(name: str, fn: Any, kwargs: dict[str, Any], exc: type[Exception], match: str, backend: str) -> None:
    if fn is cmetrics.fbeta_score:
        with pytest.raises(exc, match=match):
            fn(Y, [0, 1, 0, 0], backend=backend, **kwargs)
        return
    with pytest.raises(exc, match=match):
        fn(Y, [0, 1, 0, 0], backend=backend, **kwargs)


def test_too_many_classes(backend: str) -> None:
    y = np.arange(50) * 1_000_003
    with pytest.raises(ex.LimitExceededError, match="above the limit of 10"):
        cmetrics.ConfusionMatrix.from_predictions(y, y, max_classes=10, backend=backend)


def test_bad_backend_and_threads() -> None:
    with pytest.raises(ex.ValidationError, match="backend='gpu'"):
        cmetrics.accuracy_score(Y, Y, backend="gpu")  # type: ignore[arg-type]
    with pytest.raises(ex.ValidationError):
        cmetrics.set_num_threads(0)


def test_matrix_constructor_checks() -> None:
    with pytest.raises(ex.ShapeError):
        cmetrics.ConfusionMatrix([[1, 2, 3]])
    with pytest.raises(ex.ValidationError, match="non-negative"):
        cmetrics.ConfusionMatrix([[1, -1], [0, 1]])
    with pytest.raises(ex.LabelError, match="2 entries for a 3x3"):
        cmetrics.ConfusionMatrix(np.eye(3), labels=["a", "b"])


@pytest.mark.skipif(not cmetrics.rust_available(), reason="needs the compiled extension")
def test_panic_becomes_internal_error() -> None:
    from cmetrics import _core

    with pytest.raises(ex.InternalError, match="deliberate test panic"):
        _core._panic_for_tests()
    # The interpreter is still alive and working.
    assert cmetrics.accuracy_score([1, 0], [1, 0]) == 1.0


def test_undefined_values_warn(backend: str) -> None:
    with pytest.warns(cmetrics.UndefinedMetricWarning, match="Precision is ill-defined"):
        cmetrics.precision_score([0, 1, 1], [0, 0, 0], average="macro", backend=backend)
    with pytest.warns(cmetrics.UndefinedMetricWarning, match="Informedness is undefined"):
        assert np.isnan(cmetrics.informedness([1, 1, 1], [0, 1, 1], backend=backend))
    with (
        pytest.warns(cmetrics.UndefinedMetricWarning, match="Adjusted balanced accuracy"),
        pytest.warns(UserWarning, match="y_pred contains classes not in y_true"),
    ):
        assert np.isnan(cmetrics.balanced_accuracy_score([1, 1, 1], [0, 1, 1], adjusted=True, backend=backend))
    with pytest.warns(cmetrics.UndefinedMetricWarning, match="NIT with a single class"):
        assert cmetrics.normalized_information_transfer([1, 1], [0, 1], backend=backend) == 1.0
    with pytest.warns(cmetrics.UndefinedMetricWarning, match="`cohen_kappa_score` is undefined"):
        assert np.isnan(cmetrics.cohen_kappa_score([1, 1], [1, 1], backend=backend))
    # zero_division given: no warning.
    assert cmetrics.precision_score(
        [0, 1, 1], [0, 0, 0], average="macro", zero_division=0, backend=backend
    ) == pytest.approx(1 / 6)


def test_dataframe_inputs(backend: str) -> None:
    pd = pytest.importorskip("pandas")
    t = pd.Series(["x", "y", "x"])
    p = pd.Series(["x", "x", "x"])
    assert cmetrics.accuracy_score(t, p, backend=backend) == pytest.approx(2 / 3)
    with pytest.raises(ex.LabelError, match="missing value"):
        cmetrics.accuracy_score(pd.Series([1, None, 2], dtype="Int64"), [1, 1, 2], backend=backend)


def test_dataframe_probabilities(backend: str) -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(
        {
            "label": ["cat", "dog", "cat", "bird"],
            "p_bird": [0.1, 0.2, 0.1, 0.7],
            "p_cat": [0.8, 0.3, 0.6, 0.2],
            "p_dog": [0.1, 0.5, 0.3, 0.1],
        }
    )
    proba = df[["p_bird", "p_cat", "p_dog"]]
    r = cmetrics.evaluate(df["label"], y_proba=proba, backend=backend)
    assert r.labels == ["bird", "cat", "dog"]
    assert r.log_loss == pytest.approx(cmetrics.log_loss(df["label"].to_numpy(), proba.to_numpy(), backend=backend))
    holes = proba.copy()
    holes.iloc[1, 1] = None
    with pytest.raises(ex.NonFiniteError, match="1 missing value"):
        cmetrics.evaluate(df["label"], y_proba=holes, backend=backend)


@pytest.mark.parametrize("lib", ["pandas", "polars", "pyarrow"])
def test_dataframe_library_columns(lib: str, backend: str) -> None:
    """Series/arrays of the three dataframe libraries give the numpy result; nulls raise."""
    mod = pytest.importorskip(lib)
    make = {
        "pandas": lambda v: mod.Series(v),
        "polars": lambda v: mod.Series(v),
        "pyarrow": lambda v: mod.chunked_array([v[:2], v[2:]]),
    }[lib]
    y, p = ["a", "b", "a", "c"], ["a", "a", "a", "c"]
    assert cmetrics.f1_score(make(y), make(p), average="macro", backend=backend) == pytest.approx(
        cmetrics.f1_score(y, p, average="macro", backend=backend), rel=1e-15
    )
    assert cmetrics.accuracy_score(make([1, 2, 1, 3]), make([1, 1, 1, 3]), backend=backend) == 0.75
    with pytest.raises(ex.LabelError, match="missing value"):
        cmetrics.accuracy_score(make([1, None, 2, 2]), [1, 1, 2, 2], backend=backend)

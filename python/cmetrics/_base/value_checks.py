"""The value checks the numpy backend shares with the validation layer: weights, finite
values, totals and text, each raising the class and wording of the Rust kernels' errors
(both backends raise the same class for the same input)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from cmetrics.exceptions import (
    LabelError,
    LengthMismatchError,
    NonFiniteError,
    ShapeError,
    UnsupportedDtypeError,
    WeightError,
)


def bad_object(a: np.ndarray, i: int, name: str) -> LabelError:
    v = a[i]
    if v is None or (isinstance(v, float) and v != v):
        return LabelError(f"{name}[{i}] is missing ({v!r}); every sample needs a label")
    return LabelError(f"{name} mixes string and number labels ({name}[{i}] = {v!r}); use one label type")


def check_text(a: np.ndarray, name: str) -> None:
    """Labels are Unicode text: a ``<U`` array holding a lone surrogate (a code point
    between U+D800 and U+DFFF, which no UTF-8 text contains) raises :class:`LabelError`."""
    if a.dtype.kind != "U" or a.size == 0 or a.dtype.itemsize == 0:
        return
    v = ucs4_view(a)
    bad = ((v >= 0xD800) & (v <= 0xDFFF)).any(axis=1)
    if bad.any():
        raise surrogate_error(name, int(np.flatnonzero(bad)[0]))


def surrogate_error(name: str, i: int) -> LabelError:
    """The error of a label that is not valid Unicode text (shared by both backends)."""
    return LabelError(
        f"{name}[{i}] is not valid Unicode text (it holds a lone surrogate); labels must be valid strings"
    )


def check_object_strings(a: np.ndarray, name: str) -> None:
    """Every element of an object label array must be a ``str`` (``np.str_`` included):
    the :class:`LabelError` names the first that is not (missing or of another type)."""
    if a.dtype.kind != "O" or a.shape[0] == 0:
        return
    is_str = np.frompyfunc(lambda v: isinstance(v, str), 1, 1)(a).astype(bool)
    if not is_str.all():
        raise bad_object(a, int(np.flatnonzero(~is_str)[0]), name)


def ucs4_view(a: np.ndarray) -> npt.NDArray[np.uint32]:
    """A ``<U`` array as an (n, width) uint32 view of its code points (no copy)."""
    a = np.ascontiguousarray(a)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("="))
    width = max(a.dtype.itemsize // 4, 1)
    if a.dtype.itemsize == 0:
        return np.zeros((a.shape[0], 1), dtype=np.uint32)
    return a.view(np.uint32).reshape(a.shape[0], width)


def check_finite(arg: str, x: np.ndarray) -> None:
    """No NaN or infinity in a float array (integers are finite)."""
    if x.dtype.kind != "f":
        return
    bad = ~np.isfinite(x)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        msg = f"{arg}[{i}] = {float(x[i])!r} is not finite; remove or impute NaN and infinite values"
        raise NonFiniteError(msg)


def check_not_nan(arg: str, x: np.ndarray) -> None:
    """No NaN where values are ordered (infinities order as the extremes)."""
    if x.dtype.kind != "f":
        return
    bad = np.isnan(x)
    if bad.any():
        msg = f"{arg}[{int(np.flatnonzero(bad)[0])}] is NaN; remove or impute NaN values"
        raise NonFiniteError(msg)


def row_atol(atol: float | None, k: int) -> float:
    """The row-sum tolerance of rows of ``k`` probabilities: ``atol``, or when it is None or NaN
    ``1e-6 K`` (``row_rule::row_atol`` of the Rust kernels)."""
    return 1e-6 * k if atol is None or np.isnan(atol) else atol


def row_sums_fit(sums: np.ndarray, atol: float) -> npt.NDArray[np.bool_]:
    """Which rows of probabilities summing to ``sums`` pass the row check: within ``atol`` of 1, a
    NaN sum failing (``row_rule::row_sum_fits``: every kernel that checks rows shares it)."""
    with np.errstate(invalid="ignore"):
        return np.asarray(np.abs(sums - 1.0) <= atol)


def check_same_length(a_name: str, a_len: int | None, b_name: str, b_len: int) -> None:
    """An argument of ``a_len`` rows (``None``: not passed) beside ``b_name``'s ``b_len`` rows,
    refused as the compiled kernels refuse it (``error::same_length`` there)."""
    if a_len is not None and a_len != b_len:
        msg = f"{a_name} has {a_len} rows but {b_name} has {b_len}; pass arrays of the same length"
        raise LengthMismatchError(msg)


def check_weights(sample_weight: np.ndarray | None, n: int, other: str = "y_score") -> None:
    """``sample_weight``: ``n`` finite, non-negative values (the check the kernels fuse with
    their pass; the numpy backend calls it)."""
    if sample_weight is None:
        return
    check_same_length("sample_weight", sample_weight.shape[0], other, n)
    bad = ~((sample_weight >= 0) & np.isfinite(sample_weight))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        msg = (
            f"sample_weight[{i}] = {float(sample_weight[i])!r} is invalid; weights must be finite "
            f"and >= 0 ({int(bad.sum())} invalid in total)"
        )
        raise WeightError(msg)


def check_totals(w_pos: float, w_neg: float, rows: int) -> None:
    """The weight totals must be finite and, when there are rows, positive."""
    if not np.isfinite(w_pos + w_neg):
        msg = (
            "the sum of sample_weight is beyond the float64 range; divide every sample_weight by the same "
            "constant (the metrics do not change)"
        )
        raise WeightError(msg)
    if rows and not w_pos + w_neg > 0:
        msg = "sample_weight sums to 0; at least one sample needs a positive weight"
        raise WeightError(msg)


def check_2d(a: object, name: str) -> None:
    """Refuse an array argument of a kernel that is not a 2-D numpy array (a ``ShapeError``
    for another number of dimensions, an ``UnsupportedDtypeError`` for anything else, as
    the compiled kernels refuse them, before any other check); None passes."""
    if a is None:
        return
    if not isinstance(a, np.ndarray):
        msg = f"{name} must be a numpy array, got {type(a).__name__}"
        raise UnsupportedDtypeError(msg)
    if a.ndim != 2:
        msg = f"{name} must be 2-D, got shape {a.shape}"
        raise ShapeError(msg)


def square_table(c: object) -> np.ndarray:
    """The table argument of the kernels over a confusion matrix, checked as the compiled
    kernels check it: a numpy array, square and non-empty, of float64."""
    name = "confusion matrix"
    if not isinstance(c, np.ndarray):
        msg = f"{name} must be a numpy array of float64, got {type(c).__name__}"
        raise UnsupportedDtypeError(msg)
    if c.ndim != 2 or c.shape[0] != c.shape[1] or c.shape[0] == 0:
        msg = f"{name} has the wrong shape: {c.shape} is not a non-empty square"
        raise ShapeError(msg)
    if c.dtype != np.float64:
        msg = f"{name} has dtype {c.dtype}; pass a float64 table"
        raise UnsupportedDtypeError(msg)
    return c

"""Input coercion shared by both backends: anything array-like becomes a
contiguous 1-D numpy array of a dtype the kernels read.

Labels become ``int32``/``int64`` (zero-copy when they already are) or a
fixed-width unicode array; weights become ``float64``. Every other dtype is
cast once, here. pandas, polars and pyarrow objects are recognised without
importing those libraries and converted with their own ``to_numpy``; nulls
raise instead of turning silently into NaN.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from cmetrics.exceptions import (
    LabelError,
    LengthMismatchError,
    NonFiniteError,
    ShapeError,
    UnsupportedDtypeError,
)

LabelKind = Literal["int", "str"]
_INT32 = np.iinfo(np.int32)
_INT64 = np.iinfo(np.int64)


def _module_of(obj: Any) -> str:
    return type(obj).__module__.split(".", 1)[0]


def _null_count(obj: Any, lib: str) -> int:
    """Missing values in a pandas/polars/pyarrow series or frame."""
    if lib == "pandas":
        return int(np.asarray(obj.isna()).sum())
    nc = getattr(obj, "null_count", 0)
    nc = nc() if callable(nc) else nc  # polars: a method; pyarrow: a property
    if hasattr(nc, "to_numpy"):
        nc = nc.to_numpy()
    return int(np.asarray(nc).sum())


def to_numpy(x: Any, name: str) -> np.ndarray:
    """``x`` as a numpy array; dataframe-library columns are checked for nulls."""
    lib = _module_of(x)
    if lib in ("pandas", "polars", "pyarrow") and hasattr(x, "to_numpy"):
        nulls = _null_count(x, lib)
        if nulls:
            msg = f"{name} has {nulls} missing value(s); drop or fill them before scoring"
            raise LabelError(msg) if name in ("y_true", "y_pred", "y1", "y2") else NonFiniteError(msg)
        if lib == "pyarrow":
            return np.asarray(x.to_numpy(zero_copy_only=False))
        return np.asarray(x.to_numpy())
    if isinstance(x, np.ndarray):
        return x
    try:
        return np.asarray(x)
    except (ValueError, TypeError) as exc:
        msg = f"{name} could not be read as an array ({exc}); pass a 1-D sequence or numpy array"
        raise ShapeError(msg) from None


def as_1d(x: Any, name: str) -> np.ndarray:
    """A 1-D, non-empty array; an (n, 1) column is accepted and flattened."""
    a = to_numpy(x, name)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1:
        msg = f"{name} must be 1-D, got shape {a.shape}; pass one label per sample"
        raise ShapeError(msg)
    if a.shape[0] == 0:
        msg = f"{name} is empty; at least one sample is required"
        raise ShapeError(msg)
    return a


@dataclass(frozen=True)
class Labels:
    """A pair of label arrays ready for a kernel."""

    kind: LabelKind
    y_true: np.ndarray
    y_pred: np.ndarray
    #: dtype of the label values reported back to the user
    out_dtype: np.dtype[Any]


def _numeric(a: np.ndarray, name: str) -> np.ndarray:
    """Integer/bool/integral-float labels as int32 or int64 (no copy for those two)."""
    kind = a.dtype.kind
    if kind == "b":
        return a.astype(np.int32)
    if kind in "iu":
        if a.dtype in (np.dtype(np.int32), np.dtype(np.int64)):
            return a
        if a.dtype.itemsize < 4 or a.dtype == np.dtype(np.int32):
            return a.astype(np.int32)
        if kind == "u" and a.dtype.itemsize == 8 and a.size and int(a.max()) > _INT64.max:
            msg = f"{name} has labels above {_INT64.max}; such uint64 labels are not supported"
            raise LabelError(msg)
        return a.astype(np.int64)
    if kind == "f":
        finite = np.isfinite(a)
        if not finite.all():
            bad = int(np.flatnonzero(~finite)[0])
            msg = f"{name}[{bad}] = {float(a[bad])!r}: labels must be finite ({int((~finite).sum())} non-finite)"
            raise NonFiniteError(msg)
        if not np.array_equal(a, np.floor(a)):
            bad = int(np.flatnonzero(a != np.floor(a))[0])
            msg = f"{name}[{bad}] = {float(a[bad])!r}: float labels must be integral; labels must be integers or strings"
            raise LabelError(msg)
        # The int64 range is [-2^63, 2^63); 2^63 itself is a float but not an int64.
        if a.size and (float(a.min()) < -(2.0**63) or float(a.max()) >= 2.0**63):
            bad = int(np.flatnonzero((a < -(2.0**63)) | (a >= 2.0**63))[0])
            msg = (f"{name}[{bad}] = {float(a[bad])!r} is outside the int64 range; labels must be integers in "
                   "[-2^63, 2^63) or strings")
            raise LabelError(msg)
        return a.astype(np.int64)
    msg = f"{name} has dtype {a.dtype}, which is not a label type"
    raise UnsupportedDtypeError(msg)


def _bad_object(a: np.ndarray, i: int, name: str) -> LabelError:
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
    return LabelError(f"{name}[{i}] is not valid Unicode text (it holds a lone surrogate); labels must be valid "
                      "strings")


def check_object_strings(a: np.ndarray, name: str) -> None:
    """Every element of an object label array must be a ``str`` (``np.str_`` included):
    the :class:`LabelError` names the first that is not (missing or of another type)."""
    if a.dtype.kind != "O" or a.shape[0] == 0:
        return
    is_str = np.frompyfunc(lambda v: isinstance(v, str), 1, 1)(a).astype(bool)
    if not is_str.all():
        raise _bad_object(a, int(np.flatnonzero(~is_str)[0]), name)


def _strings(a: np.ndarray) -> np.ndarray:
    """``<U`` arrays pass through; so do object arrays, whose elements the
    encoding kernel checks (every one must be a ``str``) while it hashes them."""
    return a


def _kind_of(a: np.ndarray, name: str) -> LabelKind:
    k = a.dtype.kind
    if k in "biuf":
        return "int"
    if k == "U":
        return "str"
    if k == "O":
        sample = a[: min(len(a), 1)].tolist()
        return "str" if sample and isinstance(sample[0], str) else "int"
    if k == "S":
        msg = f"{name} holds bytes; labels represented as bytes are not supported, decode them to str"
        raise UnsupportedDtypeError(msg)
    msg = f"{name} has dtype {a.dtype}, which is not a label type; use integers, booleans or strings"
    raise UnsupportedDtypeError(msg)


def _object_numeric(a: np.ndarray, name: str) -> np.ndarray:
    """An object array that should hold numbers only (converted by numpy in C)."""
    try:
        values = np.array(a.tolist())
    except (TypeError, ValueError, OverflowError):
        msg = f"{name} holds objects that are neither numbers nor strings"
        raise UnsupportedDtypeError(msg) from None
    if values.dtype.kind in "biuf" and values.shape == a.shape:
        return values
    is_str = np.frompyfunc(lambda v: isinstance(v, str), 1, 1)(a).astype(bool) if values.dtype.kind == "O" else None
    if values.dtype.kind == "U" or (is_str is not None and is_str.any()):
        first = int(np.flatnonzero(is_str)[0]) if is_str is not None else int(
            np.flatnonzero(np.frompyfunc(lambda v: isinstance(v, str), 1, 1)(a).astype(bool))[0]
        )
        raise _bad_object(a, first, name)
    missing = np.frompyfunc(lambda v: v is None, 1, 1)(a).astype(bool)
    if missing.any():
        raise _bad_object(a, int(np.flatnonzero(missing)[0]), name)
    msg = f"{name} holds objects that are neither numbers nor strings"
    raise UnsupportedDtypeError(msg)


def label_pair(y_true: Any, y_pred: Any, names: tuple[str, str] = ("y_true", "y_pred")) -> Labels:
    """Validate and normalise two label arrays for counting."""
    t = as_1d(y_true, names[0])
    p = as_1d(y_pred, names[1])
    if t.shape[0] != p.shape[0]:
        msg = f"{names[0]} has {t.shape[0]} rows but {names[1]} has {p.shape[0]}; pass arrays of the same length"
        raise LengthMismatchError(msg)
    kt, kp = _kind_of(t, names[0]), _kind_of(p, names[1])
    if kt != kp:
        msg = f"mix of string and number labels: {names[0]} holds {kt} labels, {names[1]} {kp} labels"
        raise LabelError(msg)
    if kt == "str":
        ts, ps = _strings(t), _strings(p)
        if ts.dtype.kind != ps.dtype.kind:  # one <U, one object: share the object path
            ts, ps = ts.astype(object), ps.astype(object)
        ts, ps = np.ascontiguousarray(ts), np.ascontiguousarray(ps)
        for arr, name in ((ts, names[0]), (ps, names[1])):
            if arr.dtype.kind == "U":
                check_text(arr, name)
        return Labels("str", ts, ps, np.dtype(np.str_))
    if t.dtype.kind == "O":
        t = _object_numeric(t, names[0])
    if p.dtype.kind == "O":
        p = _object_numeric(p, names[1])
    out_dtype = np.result_type(t.dtype, p.dtype)
    ti, pi = _numeric(t, names[0]), _numeric(p, names[1])
    if ti.dtype != pi.dtype:
        ti, pi = ti.astype(np.int64), pi.astype(np.int64)
    ti = np.ascontiguousarray(ti).astype(ti.dtype.newbyteorder("="), copy=False)
    pi = np.ascontiguousarray(pi).astype(pi.dtype.newbyteorder("="), copy=False)
    return Labels("int", ti, pi, out_dtype)


def weights(sample_weight: Any, n: int) -> npt.NDArray[np.float64] | None:
    """``sample_weight`` as contiguous native float64 of length ``n`` (values are
    checked inside the kernels, where the check fuses with counting)."""
    if sample_weight is None:
        return None
    w = to_numpy(sample_weight, "sample_weight")
    if w.ndim == 2 and w.shape[1] == 1:
        w = w[:, 0]
    if w.ndim != 1:
        msg = f"sample_weight must be 1-D, got shape {w.shape}"
        raise ShapeError(msg)
    if w.dtype.kind not in "biuf":
        msg = f"sample_weight has dtype {w.dtype}; pass real numbers"
        raise UnsupportedDtypeError(msg)
    if w.shape[0] != n:
        msg = f"sample_weight has {w.shape[0]} rows but y_true has {n}; pass one weight per sample"
        raise LengthMismatchError(msg)
    return np.ascontiguousarray(w, dtype=np.float64)


def integral_weights(sample_weight: Any) -> bool:
    """Whether ``sample_weight`` holds integers or booleans (scikit-learn then returns
    an int64 confusion matrix)."""
    return to_numpy(sample_weight, "sample_weight").dtype.kind in "biu"


def ucs4_view(a: np.ndarray) -> npt.NDArray[np.uint32]:
    """A ``<U`` array as an (n, width) uint32 view of its code points (no copy)."""
    a = np.ascontiguousarray(a)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("="))
    width = max(a.dtype.itemsize // 4, 1)
    if a.dtype.itemsize == 0:
        return np.zeros((a.shape[0], 1), dtype=np.uint32)
    return a.view(np.uint32).reshape(a.shape[0], width)

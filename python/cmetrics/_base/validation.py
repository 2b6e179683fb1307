"""Argument coercion and option checks, once for the package: anything array-like becomes
a contiguous numpy array of a dtype the kernels read, and every closed option (the aliases of
:mod:`cmetrics._base.aliases`) is checked by one function here.

Labels become ``int32``/``int64`` (zero-copy when they already are) or a fixed-width
unicode array; weights and scores become ``float64`` (integer scores ``int64``/``uint64``,
ordered as integers); probabilities ``float32``/``float64`` in either memory order. Every
other dtype is cast once, here. pandas, polars and pyarrow objects are recognised without
importing those libraries and converted with their own ``to_numpy``; nulls raise instead of
turning silently into NaN. Each failure is a :mod:`cmetrics.exceptions` class whose message
names the argument and the fix.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

import numpy as np
from numpy.typing import ArrayLike

from cmetrics._base.aliases import (
    F64,
    Average,
    Bools,
    KappaWeights,
    Label,
    LabelKind,
    Normalize,
    RankingMode,
    Ties,
    Variant,
)
from cmetrics._base.config import check_classes
from cmetrics._base.value_checks import bad_object, check_object_strings, check_same_length, check_text
from cmetrics.exceptions import (
    LabelError,
    LengthMismatchError,
    NonFiniteError,
    ProbabilityError,
    ShapeError,
    UnsupportedDtypeError,
    ValidationError,
)

_INT32 = np.iinfo(np.int32)

_INT64 = np.iinfo(np.int64)


def _module_of(obj: object) -> str:
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


def to_numpy(x: object, name: str) -> np.ndarray:
    """``x`` as a numpy array; dataframe-library columns are checked for nulls, scipy.sparse
    matrices made dense."""
    lib = _module_of(x)
    if lib in ("pandas", "polars", "pyarrow") and hasattr(x, "to_numpy"):
        nulls = _null_count(x, lib)
        if nulls:
            msg = f"{name} has {nulls} missing value(s); drop or fill them before scoring"
            raise LabelError(msg) if name in ("y_true", "y_pred", "y1", "y2") else NonFiniteError(msg)
        if lib == "pyarrow":
            return _aligned(np.asarray(x.to_numpy(zero_copy_only=False)))
        return _aligned(np.asarray(x.to_numpy()))
    if isinstance(x, np.ndarray):
        return _aligned(x)
    if lib == "scipy" and hasattr(x, "toarray") and hasattr(x, "nnz"):
        # A scipy.sparse matrix or array (an indicator matrix, as scikit-learn takes): dense.
        return _aligned(np.asarray(x.toarray()))
    try:
        return _aligned(np.asarray(x))
    except (ValueError, TypeError) as exc:
        msg = f"{name} could not be read as an array ({exc}); pass a 1-D sequence or numpy array"
        raise ShapeError(msg) from None


def optional_array(x: object, name: str) -> np.ndarray | None:
    """``x`` as a numpy array (:func:`to_numpy`), or None: what an entry point does once to each
    input, so that a costly conversion (a DataFrame column, an object with ``__array__``)
    runs once however many passes read the rows."""
    return None if x is None else to_numpy(x, name)


def group_arrays(groups: object) -> np.ndarray | tuple[np.ndarray, ...] | None:
    """``groups`` converted once: an array, a tuple of arrays (one per grouping column), or None."""
    if groups is None:
        return None
    if isinstance(groups, tuple):
        return tuple(to_numpy(g, f"groups[{i}]") for i, g in enumerate(groups))
    return to_numpy(groups, "groups")


class EvaluationInputs(NamedTuple):
    """The arrays of one evaluation (:func:`cmetrics.evaluate`, :meth:`cmetrics.Evaluator.update`),
    each converted once."""

    y_true: np.ndarray
    y_pred: np.ndarray | None
    y_proba: np.ndarray | None
    confidence: np.ndarray | None
    sample_weight: np.ndarray | None
    groups: np.ndarray | tuple[np.ndarray, ...] | None


def evaluation_inputs(
    caller: str,
    y_true: object,
    y_pred: object,
    y_proba: object,
    confidence: object,
    sample_weight: object,
    groups: object,
) -> EvaluationInputs:
    """The arguments of an evaluation checked for their combination (:func:`check_inputs`)
    and converted, once each, at the top of the entry point: the passes below read arrays."""
    check_inputs(caller, y_pred, y_proba, confidence)
    return EvaluationInputs(
        to_numpy(y_true, "y_true"),
        optional_array(y_pred, "y_pred"),
        optional_array(y_proba, "y_proba"),
        optional_array(confidence, "confidence"),
        optional_array(sample_weight, "sample_weight"),
        group_arrays(groups),
    )


def _aligned(a: np.ndarray) -> np.ndarray:
    """``a``, or an aligned copy of it. Arrays unpickled from out-of-band buffers (Dask and
    Ray move them so) or made by ``np.frombuffer`` at an odd offset may start at an address
    that is not a multiple of their item size; the compiled kernels read aligned memory
    only. Aligned arrays, nearly all of them, pass untouched."""
    return a if a.flags.aligned else a.copy(order="K")


def as_1d(x: object, name: str) -> np.ndarray:
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
        # Finite extremes: every value is finite (a NaN or an infinity would be an extreme).
        lo, hi = (float(a.min()), float(a.max())) if a.size else (0.0, 0.0)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            finite = np.isfinite(a)
            bad = int(np.flatnonzero(~finite)[0])
            msg = f"{name}[{bad}] = {float(a[bad])!r}: labels must be finite ({int((~finite).sum())} non-finite)"
            raise NonFiniteError(msg)
        if lo >= -(2.0**63) and hi < 2.0**63:
            # Inside the int64 range the cast is exact for integral values: one copy, compared back.
            ints = a.astype(np.int64)
            if np.array_equal(ints, a):
                return ints
        if not np.array_equal(a, np.floor(a)):
            bad = int(np.flatnonzero(a != np.floor(a))[0])
            msg = (
                f"{name}[{bad}] = {float(a[bad])!r}: float labels must be integral; labels must be integers or strings"
            )
            raise LabelError(msg)
        # The int64 range is [-2^63, 2^63); 2^63 itself is a float but not an int64.
        if lo < -(2.0**63) or hi >= 2.0**63:
            bad = int(np.flatnonzero((a < -(2.0**63)) | (a >= 2.0**63))[0])
            msg = (
                f"{name}[{bad}] = {float(a[bad])!r} is outside the int64 range; labels must be integers in "
                "[-2^63, 2^63) or strings"
            )
            raise LabelError(msg)
        return a.astype(np.int64)
    msg = f"{name} has dtype {a.dtype}, which is not a label type"
    raise UnsupportedDtypeError(msg)


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
        first = (
            int(np.flatnonzero(is_str)[0])
            if is_str is not None
            else int(np.flatnonzero(np.frompyfunc(lambda v: isinstance(v, str), 1, 1)(a).astype(bool))[0])
        )
        raise bad_object(a, first, name)
    missing = np.frompyfunc(lambda v: v is None, 1, 1)(a).astype(bool)
    if missing.any():
        raise bad_object(a, int(np.flatnonzero(missing)[0]), name)
    msg = f"{name} holds objects that are neither numbers nor strings"
    raise UnsupportedDtypeError(msg)


def label_pair(y_true: ArrayLike, y_pred: ArrayLike, names: tuple[str, str] = ("y_true", "y_pred")) -> Labels:
    """Validate and normalise two label arrays for counting (one array passed twice, as
    the label set of ``y_true`` is counted, is converted once)."""
    same = y_pred is y_true
    t = as_1d(y_true, names[0])
    p = t if same else as_1d(y_pred, names[1])
    if t.shape[0] != p.shape[0]:
        msg = f"{names[0]} has {t.shape[0]} rows but {names[1]} has {p.shape[0]}; pass arrays of the same length"
        raise LengthMismatchError(msg)
    kt, kp = _kind_of(t, names[0]), _kind_of(p, names[1])
    if kt != kp:
        msg = f"mix of string and number labels: {names[0]} holds {kt} labels, {names[1]} {kp} labels"
        raise LabelError(msg)
    if kt == "str":
        # Object arrays pass through: the encoding kernel checks that every element is a str.
        ts, ps = t, p
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
        p = t if same else _object_numeric(p, names[1])
    out_dtype = np.result_type(t.dtype, p.dtype)
    ti = _numeric(t, names[0])
    pi = ti if same else _numeric(p, names[1])
    if ti.dtype != pi.dtype:
        ti, pi = ti.astype(np.int64), pi.astype(np.int64)
    ti = np.ascontiguousarray(ti).astype(ti.dtype.newbyteorder("="), copy=False)
    pi = ti if same else np.ascontiguousarray(pi).astype(pi.dtype.newbyteorder("="), copy=False)
    return Labels("int", ti, pi, out_dtype)


def weights(sample_weight: ArrayLike | None, n: int) -> F64 | None:
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
    if w.dtype.kind == "O":  # numbers held as Python objects (scikit-learn takes them)
        w = _object_weights(w)
    if w.dtype.kind not in "biuf":
        msg = f"sample_weight has dtype {w.dtype}; pass real numbers"
        raise UnsupportedDtypeError(msg)
    if w.shape[0] != n:
        msg = f"sample_weight has {w.shape[0]} rows but y_true has {n}; pass one weight per sample"
        raise LengthMismatchError(msg)
    return np.ascontiguousarray(w, dtype=np.float64)


def _object_weights(w: np.ndarray) -> np.ndarray:
    """An object array of real numbers as float64 (as scikit-learn reads it: a weighted
    confusion matrix of float64), or unchanged when it holds anything else."""
    if not all(isinstance(v, (int, float, np.integer, np.floating)) for v in w.tolist()):
        return w
    return np.array(w.tolist(), dtype=np.float64)


def integral_weights(sample_weight: ArrayLike) -> bool:
    """Whether ``sample_weight`` holds integers or booleans (scikit-learn then returns
    an int64 confusion matrix)."""
    w = to_numpy(sample_weight, "sample_weight")
    if w.dtype.kind == "O":
        w = _object_weights(w)
    return w.dtype.kind in "biu"


def scores(x: ArrayLike, name: str, keep_float32: bool = False) -> np.ndarray:
    """Scores as the kernels read them: float64, or int64 / uint64 for integers, which are
    ordered as integers (float64 holds integers exactly only up to 2^53); with
    ``keep_float32``, float32 (and float16) scores as float32, which the tie-group and
    multiclass kernels read in place."""
    a = as_1d(x, name)
    if a.dtype.kind == "O":
        try:
            a = np.array(a.tolist())
        except (TypeError, ValueError, OverflowError):
            a = np.empty(0, dtype=object)
        if a.dtype.kind not in "biuf" or a.ndim != 1:
            msg = f"{name} holds objects that are not numbers; pass real numbers"
            raise UnsupportedDtypeError(msg)
    kind = a.dtype.kind
    if kind == "b" or kind == "i" or (kind == "u" and a.dtype.itemsize < 8):
        return np.ascontiguousarray(a, dtype=np.int64)
    if kind == "u":
        return np.ascontiguousarray(a, dtype=np.uint64)
    if kind == "f":
        small = keep_float32 and a.dtype.itemsize <= 4
        return np.ascontiguousarray(a, dtype=np.float32 if small else np.float64)
    msg = f"{name} has dtype {a.dtype}; pass real numbers"
    raise UnsupportedDtypeError(msg)


def binary(
    y_true: ArrayLike,
    pos_label: Label | None,
    name: str = "y_true",
    any_classes: bool = False,
    greater_positive: bool = False,
) -> Bools:
    """``y_true == pos_label`` for binary labels, with scikit-learn's rules: integer labels
    in {0, 1} or {-1, 1} need no ``pos_label`` (1 is positive), two string labels take the
    greater as positive (one string class alone: none is positive), and a ``pos_label`` that
    is not one of two present labels raises.
    With ``any_classes`` (the curves), more than two classes are allowed when ``pos_label``
    names the positive one. With ``greater_positive`` (scikit-learn's ``roc_auc_score`` and Brier
    scores), two integer labels outside {0, 1} and {-1, 1} take the greater as positive too."""
    a = as_1d(y_true, name)
    if a.dtype == np.bool_:
        if pos_label not in (None, True, False, 0, 1):
            msg = f"pos_label={pos_label!r} is not a valid label. It should be one of [False, True]"
            raise LabelError(msg)
        return np.ascontiguousarray(a) if pos_label in (None, True, 1) else ~a
    if a.dtype.kind in "iu" and a.dtype.itemsize <= 2:
        # Narrow integers compare with pos_label as they are: no widened copy of every label.
        kind: LabelKind = "int"
        values = np.ascontiguousarray(a)
    elif a.dtype.kind in "biuf":  # numbers: checked and normalised once (label_pair checks two arrays)
        kind = "int"
        values = np.ascontiguousarray(_numeric(a, name))
    else:
        pair = label_pair(a, a, names=(name, name))
        kind, values = pair.kind, pair.y_true
    if kind == "str":
        check_object_strings(values, name)
        values = values.astype(np.str_)
    classes = _at_most_two(values) if kind == "int" else None
    classes = np.unique(values) if classes is None else classes
    shown = classes.tolist()[:10]
    if len(classes) > 2 and not (any_classes and pos_label is not None):
        msg = f"{name} has {len(classes)} classes; these metrics are binary (pass a bool array or pos_label=)"
        raise ValidationError(msg)
    if pos_label is None:
        usual = set(classes.tolist()) <= {0, 1} or set(classes.tolist()) <= {-1, 1}
        if kind == "int" and not usual and greater_positive and len(classes) == 2:
            return np.ascontiguousarray(values == classes[-1])
        if kind == "int" and not usual:
            msg = (
                f"{name} takes value in {shown} and pos_label is not specified: either make {name} take "
                "value in {0, 1} or {-1, 1} or pass pos_label explicitly"
            )
            raise LabelError(msg)
        if kind == "str" and len(classes) < 2:
            # One string class and no pos_label: nothing says it is the positive class (a
            # batch of negatives only must not score as all positive), so no row is positive,
            # as scikit-learn's default pos_label=1 finds none.
            return np.zeros(values.shape[0], dtype=np.bool_)
        pos_label = 1 if kind == "int" else classes[-1]
    elif (isinstance(pos_label, str) != (kind == "str")) or (len(classes) == 2 and pos_label not in shown):
        msg = f"pos_label={pos_label!r} is not a valid label. It should be one of {shown}"
        raise LabelError(msg)
    return np.ascontiguousarray(values == pos_label)


def _at_most_two(values: np.ndarray) -> np.ndarray | None:
    """The distinct values of integer labels, increasing, when there are at most two (from the
    extremes, and two comparisons when they are not adjacent integers: no sort or hash of the
    rows), else None."""
    if values.size == 0:
        return values[:0]
    lo, hi = values.min(), values.max()
    if lo == hi:
        one: np.ndarray = values[:1].copy()
        return one
    # Integers between adjacent extremes (the usual {0, 1}) are one or the other: nothing to count.
    # The difference in Python integers: int64 extremes would wrap.
    if int(hi) - int(lo) != 1 and np.count_nonzero(values == lo) + np.count_nonzero(values == hi) != values.size:
        return None
    out: np.ndarray = np.array([lo, hi], dtype=values.dtype)
    return out


def same_length(a_name: str, a: np.ndarray, b_name: str, b: np.ndarray) -> None:
    """Two per-sample arrays of the same length."""
    check_same_length(a_name, a.shape[0], b_name, b.shape[0])


def proba_array(y_proba: ArrayLike, n: int | None = None, max_classes: int | None = None) -> np.ndarray:
    """``y_proba`` as a C- or Fortran-contiguous (n, K) float32/float64 array, borrowed
    when it already is one (the compiled kernel reads both layouts in place: a
    DataFrame's ``to_numpy()`` is often Fortran-ordered); other layouts and dtypes
    are copied once."""
    p = to_numpy(y_proba, "y_proba")
    if p.ndim != 2:
        msg = (
            f"y_proba must be 2-D (n_samples, n_classes), got shape {p.shape}; "
            "for a binary score pass np.column_stack([1 - p, p])"
        )
        raise ProbabilityError(msg)
    if p.shape[1] == 0 or p.shape[0] == 0:
        msg = f"y_proba is empty (shape {p.shape}); at least one sample and one class are required"
        raise ProbabilityError(msg)
    check_classes(p.shape[1], "y_proba", max_classes)
    if n is not None and p.shape[0] != n:
        msg = f"y_proba has {p.shape[0]} rows but y_true has {n}; pass one probability row per sample"
        raise LengthMismatchError(msg)
    kind = p.dtype.kind
    if kind == "f":
        if p.dtype.itemsize < 4:
            p = p.astype(np.float32)
    elif kind in "biu":
        p = p.astype(np.float64)
    else:
        msg = f"y_proba has dtype {p.dtype}; pass float32 or float64 probabilities"
        raise UnsupportedDtypeError(msg)
    if p.dtype.byteorder not in ("=", "|"):
        p = p.astype(p.dtype.newbyteorder("="))
    if p.flags.c_contiguous or p.flags.f_contiguous:
        return p
    return np.ascontiguousarray(p)


def row_sum_tolerance(dtype: np.dtype[Any], k: int) -> float | None:
    """How far a probability row of ``dtype`` may sum from 1 (decision O5): ``1e-6 K`` (None:
    the kernels' default), or, for float16, the rounding of a float16 softmax row (each
    entry within half an ulp, so the sum within 2^-11 of 1), whatever ``K``: one rule for the
    precision of the input, not a rule that refuses small K and accepts large K."""
    if dtype == np.float16:
        return max(1e-6 * k, float(np.finfo(np.float16).eps))
    return None


def check_inputs(caller: str, y_pred: object, y_proba: object, confidence: object) -> None:
    """The combinations of inputs ``evaluate`` and ``Evaluator.update`` accept."""
    if y_pred is None and y_proba is None:
        msg = f"{caller} needs y_pred, y_proba or both"
        raise ValidationError(msg)
    if confidence is not None and y_proba is not None:
        msg = (
            "pass confidence only with y_pred and without y_proba (with y_proba the confidence is its top probability)"
        )
        raise ValidationError(msg)


def length_of(labels: object) -> int:
    """How many entries ``labels`` has, without converting it (0 when it has no length)."""
    if isinstance(labels, (str, bytes)):
        return 0
    try:
        return len(labels)  # type: ignore[arg-type]
    except TypeError:
        return 0


def check_labels(labels: ArrayLike, kind: LabelKind, max_classes: int | None = None) -> np.ndarray:
    """``labels=``: a 1-D list of distinct labels of the data's kind, at most ``max_classes``
    of them (checked before anything else, so that a huge list allocates nothing)."""
    check_classes(length_of(labels), "labels", max_classes)
    arr = to_numpy(labels, "labels")
    if arr.ndim != 1:
        msg = f"labels must be a 1-D list of labels, got shape {arr.shape}"
        raise LabelError(msg)
    if arr.size == 0:
        msg = "'labels' should contain at least one label"
        raise LabelError(msg)
    if arr.dtype.kind in "SV":
        msg = "labels must be numbers or strings"
        raise LabelError(msg)
    akind = "str" if arr.dtype.kind in "UO" and isinstance(arr.tolist()[0], str) else "int"
    if akind != kind:
        msg = f"labels holds {akind} labels but the data holds {kind} labels; use the data's label type"
        raise LabelError(msg)
    values, counts = np.unique(arr, return_counts=True)
    if values.size != arr.size:
        msg = f"labels has duplicates ({values[counts > 1].tolist()}); list each label once"
        raise LabelError(msg)
    return arr


def _one_of(name: str, value: object, allowed: tuple[object, ...]) -> None:
    """``value`` is one of ``allowed``: equal to one of its strings, or identical to None,
    True or False (no ``==`` on arbitrary objects: an array is simply not allowed)."""
    ok = any(value is a if not isinstance(a, str) else (isinstance(value, str) and value == a) for a in allowed)
    if not ok:
        shown = ", ".join(repr(a) for a in allowed)
        msg = f"{name}={value!r} is invalid; use one of {shown}"
        raise ValidationError(msg)


def check_flag(name: str, value: object) -> bool:
    """A switch (``normalize`` of a score, ``samplewise``): True or False (numpy's bools
    too); None or a string is refused rather than read as false."""
    if not isinstance(value, (bool, np.bool_)):
        msg = f"{name} must be True or False, got {value!r}"
        raise ValidationError(msg)
    return bool(value)


def check_normalize(normalize: object) -> Normalize | None:
    """``normalize`` of a confusion matrix: None, "true", "pred" or "all"."""
    _one_of("normalize", normalize, (None, "true", "pred", "all"))
    return None if normalize is None else cast("Normalize", str(normalize))


def check_average(average: object) -> Average | None:
    """``average``: None, "binary", "micro", "macro", "weighted" or "samples" (multilabel)."""
    _one_of("average", average, (None, "binary", "micro", "macro", "weighted", "samples"))
    return None if average is None else cast("Average", str(average))


def check_ties(ties: object) -> Ties:
    """``ties`` of refinement: "half", "strict" or "harsh"."""
    _one_of("ties", ties, ("half", "strict", "harsh"))
    return cast("Ties", str(ties))


def check_variant(variant: object) -> Variant:
    """``variant`` of Kendall's tau: "b" or "c"."""
    _one_of("variant", variant, ("b", "c"))
    return cast("Variant", str(variant))


def check_kappa_weights(weights: object) -> KappaWeights | None:
    """``weights`` of Cohen's kappa: None, "linear" or "quadratic"."""
    _one_of("weights", weights, (None, "linear", "quadratic"))
    return None if weights is None else cast("KappaWeights", str(weights))


def ranking_mode(ranking: object) -> RankingMode:
    """The one set of ``ranking`` values of :func:`cmetrics.evaluate`, :class:`Evaluator` and
    ``cmetrics score --ranking``: "exact", "approximate" or "off" (``True`` and ``False``
    stand for "exact" and "off"); anything else raises."""
    if ranking is True:
        return "exact"
    if ranking is False:
        return "off"
    _one_of("ranking", ranking, ("exact", "approximate", "off", True, False))
    return cast("RankingMode", str(ranking))


def zero_division_value(zero_division: object) -> float:
    """The number a 0/0 entry becomes under ``zero_division`` ("warn" gives 0)."""
    if isinstance(zero_division, str):
        if zero_division == "warn":
            return 0.0
    elif isinstance(zero_division, (int, float, np.integer, np.floating)) and not isinstance(zero_division, bool):
        if math.isnan(zero_division):
            return float("nan")
        if zero_division in (0, 1):
            return float(zero_division)
    msg = f"zero_division={zero_division!r} is invalid; use 'warn', 0, 1 or float('nan')"
    raise ValidationError(msg)


def integer_in(name: str, value: object, lo: int, hi: int, fix: str) -> int:
    """An integer (not a bool) from ``lo`` to ``hi``; ``fix`` says what to pass."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        msg = f"{name}={value!r} is invalid; {fix}"
        raise ValidationError(msg)
    return int(value)


#: The most calibration bins (a bin costs 32 bytes per accumulator set).
MAX_BINS = 1 << 20


def check_n_bins(n_bins: object) -> int:
    """Calibration bins: an integer from 1 to 2^20."""
    return integer_in("n_bins", n_bins, 1, MAX_BINS, "pass an integer from 1 to 2^20")


def check_ranking_bins(ranking_bins: object) -> int:
    """Bins of the approximate ranking mode: an integer from 1 to 2^24."""
    return integer_in("ranking_bins", ranking_bins, 1, 1 << 24, "pass an integer from 1 to 2^24")


def check_top_k(top_k: object) -> int:
    """``top_k``: the largest k of the top-k accuracies a report holds, 1 to 32."""
    return integer_in("top_k", top_k, 1, 32, "pass an integer from 1 to 32")


def check_n_classes(n_classes: object) -> int:
    """A number of classes: a positive integer."""
    return integer_in("n_classes", n_classes, 1, sys.maxsize, "pass a positive integer")


def check_beta(beta: object) -> float:
    """``beta`` must be a number >= 0 (``inf`` allowed). A finite beta so large that
    ``beta**2`` overflows is its limit, ``inf`` (F-beta tends to recall)."""
    if isinstance(beta, (str, bytes)):
        msg = f"beta={beta!r} is invalid; pass a number >= 0"
        raise ValidationError(msg)
    try:
        b = float(beta)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        msg = f"beta={beta!r} is invalid; pass a number >= 0"
        raise ValidationError(msg) from None
    if not b >= 0:
        msg = f"beta={beta!r} is invalid; beta should be >= 0"
        raise ValidationError(msg)
    if not math.isfinite(b * b):
        return math.inf
    return b


def check_undefined_value(value: object) -> float:
    """``replace_undefined_by``: a number (NaN included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        msg = f"replace_undefined_by={value!r} is invalid; pass a number (float('nan') by default)"
        raise ValidationError(msg)
    return float(value)


def check_prior(prior: ArrayLike, n_labels: int) -> F64:
    """Informedness ``prior``: one finite prevalence per label, summing to 1."""
    try:
        pi = np.asarray(prior, dtype=np.float64)
    except (TypeError, ValueError):
        msg = "prior must be a 1-D list of numbers, one per label"
        raise ValidationError(msg) from None
    if pi.ndim != 1 or pi.size != n_labels:
        msg = f"prior has {pi.size} entries but there are {n_labels} labels; give one prior per label"
        raise ValidationError(msg)
    if not np.isfinite(pi).all() or abs(pi.sum() - 1.0) > 1e-9:
        msg = f"prior must be finite and sum to 1 (sums to {pi.sum()!r})"
        raise ValidationError(msg)
    return np.ascontiguousarray(pi)

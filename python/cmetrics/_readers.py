"""Batches of evaluation rows from files: Parquet files and directories, CSV, JSON Lines
(all through the pyarrow dataset scanner, which streams record batches), and ``.npz`` /
structured ``.npy`` arrays (memory-mapped where numpy can). Used by ``cmetrics score``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cmetrics.exceptions import ValidationError


class InputError(ValidationError):
    """A file or column problem: missing, unreadable, of the wrong type or shape."""


@dataclass
class Columns:
    """Which columns hold what."""

    label: str
    pred: str | None = None
    proba: list[str] = field(default_factory=list)
    proba_prefix: str | None = None
    proba_list: str | None = None
    confidence: str | None = None
    weight: str | None = None

    @property
    def has_proba(self) -> bool:
        return bool(self.proba) or self.proba_prefix is not None or self.proba_list is not None


@dataclass
class Batch:
    """One batch of rows, as the arrays ``Evaluator.update`` takes."""

    y_true: np.ndarray
    y_pred: np.ndarray | None
    y_proba: np.ndarray | None
    confidence: np.ndarray | None
    weight: np.ndarray | None

    def __len__(self) -> int:
        return int(self.y_true.shape[0])


_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".tsv": "csv", ".jsonl": "json",
            ".ndjson": "json", ".json": "json", ".npy": "npy", ".npz": "npz"}


def file_format(path: Path) -> str:
    """The format of a path from its suffix (a directory is a Parquet dataset)."""
    if path.is_dir():
        return "parquet"
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in (".gz", ".bz2", ".zst") and len(suffixes) > 1:
        suffixes = suffixes[:-1]
    fmt = _FORMATS.get(suffixes[-1] if suffixes else "")
    if fmt is None:
        known = ", ".join(sorted(_FORMATS))
        raise InputError(f"{path}: unknown file type; use one of {known} (or a directory of Parquet files)")
    return fmt


class Source:
    """Rows of one or more files of one format, read in batches of about ``batch_rows``."""

    def __init__(self, paths: list[str], columns: Columns, batch_rows: int) -> None:
        self.paths = [Path(p) for p in paths]
        for p in self.paths:
            if not p.exists():
                raise InputError(f"{p}: no such file or directory")
        formats = {file_format(p) for p in self.paths}
        if len(formats) > 1:
            raise InputError(f"all inputs must have one format; got {sorted(formats)}")
        self.format = formats.pop()
        self.columns = columns
        self.batch_rows = batch_rows
        self.proba_names: list[str] = []
        self.total_rows: int | None = None
        if self.format in ("npy", "npz"):
            self._arrays = [_open_arrays(p) for p in self.paths]
            names = list(self._arrays[0])
            for p, a in zip(self.paths[1:], self._arrays[1:]):
                if list(a) != names:
                    raise InputError(f"{p}: its arrays {list(a)} differ from those of {self.paths[0]} {names}")
            self.total_rows = sum(len(next(iter(a.values()))) for a in self._arrays if a)
        else:
            self._dataset = _dataset(self.paths, self.format)
            names = list(self._dataset.schema.names)
            if self.format == "parquet":
                self.total_rows = int(self._dataset.count_rows())
        self.proba_names = _proba_names(columns, names)
        needed = [c for c in (columns.label, columns.pred, columns.confidence, columns.weight, columns.proba_list)
                  if c is not None] + self.proba_names
        missing = [c for c in needed if c not in names]
        if missing:
            raise InputError(f"column {missing[0]!r} is not in the input; available columns: {names[:30]}")
        self._needed = list(dict.fromkeys(needed))
        if self.format not in ("npy", "npz"):
            import pyarrow as pa

            schema = self._dataset.schema
            for name in [*self.proba_names, columns.confidence, columns.weight]:
                if name is not None:
                    t = schema.field(name).type
                    if not (pa.types.is_floating(t) or pa.types.is_integer(t)):
                        raise InputError(f"column {name!r} has type {t}; it must hold numbers")

    @property
    def labels_from_names(self) -> list[Any] | None:
        """Class labels read off the probability column names (``p_0``, ``p_1``, ... give
        0, 1, ...; ``p_cat`` gives "cat"), when a prefix selected them."""
        prefix = self.columns.proba_prefix
        if prefix is None:
            return None
        suffixes = [n[len(prefix):] for n in self.proba_names]
        try:
            return [int(s) for s in suffixes]
        except ValueError:
            return suffixes

    def batches(self) -> Iterator[Batch]:
        """The batches; a file that turns out corrupt midway raises :class:`InputError`."""
        with read_errors([str(p) for p in self.paths]):
            yield from self._batches()

    def _batches(self) -> Iterator[Batch]:
        if self.format in ("npy", "npz"):
            yield from self._array_batches()
            return
        scanner = self._dataset.scanner(columns=self._needed, batch_size=self.batch_rows, batch_readahead=2,
                                        fragment_readahead=1, use_threads=True)
        for rb in scanner.to_batches():
            if rb.num_rows:
                yield self._from_arrow(rb)

    def _from_arrow(self, rb: Any) -> Batch:
        c = self.columns

        def col(name: str | None) -> np.ndarray | None:
            if name is None:
                return None
            arr = rb.column(name)
            if arr.null_count:
                raise InputError(f"column {name!r} has {arr.null_count} missing values; drop or fill them first")
            return arr.to_numpy(zero_copy_only=False)

        proba = None
        if c.proba_list is not None:
            proba = _list_matrix(rb.column(c.proba_list), c.proba_list)
        elif self.proba_names:
            first = col(self.proba_names[0])
            assert first is not None
            import pyarrow as pa

            dtype = np.float32 if all(pa.types.is_float32(rb.column(n).type) for n in self.proba_names) \
                else np.float64
            proba = np.empty((rb.num_rows, len(self.proba_names)), dtype=dtype)
            for j, name in enumerate(self.proba_names):
                proba[:, j] = first if j == 0 else col(name)
        return Batch(_labels(col(c.label), c.label), _labels(col(c.pred), c.pred) if c.pred else None, proba,
                     _numbers(col(c.confidence), c.confidence), _numbers(col(c.weight), c.weight))

    def _array_batches(self) -> Iterator[Batch]:
        c = self.columns
        for arrays in self._arrays:
            n = len(arrays[c.label])
            for lo in range(0, n, self.batch_rows):
                hi = min(n, lo + self.batch_rows)

                def get(name: str | None, lo: int = lo, hi: int = hi, arrays: dict[str, Any] = arrays) -> Any:
                    return None if name is None else np.asarray(arrays[name][lo:hi])

                proba = None
                if c.proba_list is not None:
                    proba = np.ascontiguousarray(get(c.proba_list))
                    if proba.ndim != 2:
                        raise InputError(f"array {c.proba_list!r} must be 2-D (rows x classes)")
                elif self.proba_names:
                    proba = np.column_stack([get(nm) for nm in self.proba_names])
                yield Batch(_labels(get(c.label), c.label), _labels(get(c.pred), c.pred) if c.pred else None, proba,
                            _numbers(get(c.confidence), c.confidence), _numbers(get(c.weight), c.weight))


def _labels(a: np.ndarray | None, name: str | None) -> np.ndarray:
    if a is None:
        raise InputError(f"column {name!r} is missing")
    if a.dtype.kind == "f":
        if not np.isfinite(a).all() or not (a == np.round(a)).all():
            raise InputError(f"column {name!r} holds non-integer numbers; labels must be integers or strings")
        return a.astype(np.int64)
    if a.dtype.kind not in "biuUSO":
        raise InputError(f"column {name!r} has type {a.dtype}; labels must be integers or strings")
    return a


def _numbers(a: np.ndarray | None, name: str | None) -> np.ndarray | None:
    if a is None:
        return None
    if a.dtype.kind not in "biuf":
        raise InputError(f"column {name!r} has type {a.dtype}; it must hold numbers")
    return a.astype(np.float64, copy=False)


def _list_matrix(arr: Any, name: str) -> np.ndarray:
    """A list or fixed-size-list column of floats as an (n, K) matrix (zero-copy when possible)."""
    import pyarrow as pa

    t = arr.type
    if arr.null_count:
        raise InputError(f"column {name!r} has {arr.null_count} missing values; drop or fill them first")
    if pa.types.is_fixed_size_list(t):
        k = t.list_size
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        offsets = arr.offsets.to_numpy()
        sizes = np.diff(offsets)
        if len(sizes) and (sizes != sizes[0]).any():
            raise InputError(f"column {name!r} has lists of different lengths; every row needs one probability "
                             "per class")
        k = int(sizes[0]) if len(sizes) else 0
        arr = arr.slice(0)  # values below start at offsets[0]
    else:
        raise InputError(f"column {name!r} has type {t}; --proba-list needs a list column of floats")
    values = arr.flatten()
    if not pa.types.is_floating(values.type):
        raise InputError(f"column {name!r} holds {values.type}; probabilities must be floats")
    return values.to_numpy(zero_copy_only=False).reshape(len(arr), k)


def _proba_names(c: Columns, names: list[str]) -> list[str]:
    if c.proba_prefix is not None:
        found = [n for n in names if n.startswith(c.proba_prefix) and n != c.label]
        if not found:
            raise InputError(f"no column starts with {c.proba_prefix!r}; available columns: {names[:30]}")
        return found
    return list(c.proba)


def _dataset(paths: list[Path], fmt: str) -> Any:
    import pyarrow.dataset as ds

    sources = [str(p) for p in paths]
    if fmt == "csv":
        import pyarrow.csv as pcsv

        tab = any(p.suffix.lower() == ".tsv" or ".tsv" in [s.lower() for s in p.suffixes] for p in paths)
        file_format: Any = ds.CsvFileFormat(parse_options=pcsv.ParseOptions(delimiter="\t" if tab else ","))
    elif fmt == "json":
        file_format = ds.JsonFileFormat()
    else:
        # Without pre-buffering the scanner holds one row group per column at a time.
        file_format = ds.ParquetFileFormat(
            default_fragment_scan_options=ds.ParquetFragmentScanOptions(pre_buffer=False))
    return ds.dataset(sources[0] if len(sources) == 1 else sources, format=file_format)


def _open_arrays(path: Path) -> dict[str, Any]:
    if path.suffix.lower() == ".npz":
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    else:
        a = np.load(path, mmap_mode="r", allow_pickle=False)
        if a.dtype.names is None:
            raise InputError(f"{path}: a .npy input must be a structured array with one field per column "
                             "(or use .npz with one array per column)")
        arrays = {k: a[k] for k in a.dtype.names}
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise InputError(f"{path}: arrays have different lengths {lengths}")
    return arrays


@contextmanager
def read_errors(paths: list[str]) -> Iterator[None]:
    """Turn failures of the file layer (missing, unreadable or corrupt files) into
    :class:`InputError`; the package's own ValidationErrors pass through."""
    try:
        yield
    except ValidationError:
        raise
    except (OSError, ValueError) as e:
        raise InputError(f"cannot read {', '.join(paths)}: {_first_line(e)}") from e
    except Exception as e:  # pyarrow's ArrowInvalid and friends
        if type(e).__module__.startswith("pyarrow"):
            raise InputError(f"cannot read {', '.join(paths)}: {_first_line(e)}") from e
        raise


def open_source(paths: list[str], columns: Columns, batch_rows: int) -> Source:
    """A :class:`Source`, with errors from the file layer turned into :class:`InputError`."""
    with read_errors(paths):
        return Source(paths, columns, batch_rows)


def _first_line(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]


def file_bytes(paths: list[str]) -> int:
    total = 0
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
        else:
            total += os.path.getsize(p)
    return total

"""The byte format of an Evaluator state, version 2: :func:`encode` writes it, :func:`decode`
checks every byte of it before it builds anything.

The byte format (:meth:`Evaluator.to_bytes`, version 2): ``b"CMETRICS"``, a u16 format
version, a u16 0, a u32 header length, a UTF-8 JSON header (settings, labels, input kind,
row count, float sums, and the name, dtype and shape of every array that follows), the
arrays (little-endian, C order, back to back: the confusion tables and accumulators, and
``ranking.values`` / ``ranking.n_pos`` / ``ranking.n_neg`` [/ ``w_pos`` / ``w_neg``], the
tie groups, stored as float32 / uint32 when that loses nothing, so 12 bytes per group for
float32 confidences, else float64 / uint64; with probabilities ``topk.hist`` and
``class_ranking.<column>.values`` / ``n_pos`` / ... likewise; with ``bootstrap=`` the
replicate sums ``bootstrap.sums`` (replicates x width) and ``bootstrap.full``, their options
and row ranges in the header's ``bootstrap``), and a CRC-32 of everything before it. Readers
widen every array back to 64 bits. Nothing in it is pickled.
"""

from __future__ import annotations

import json
import math
import re
import struct
import zlib
from typing import Any, TypeVar, cast

import numpy as np

from cmetrics._backend import resolve_backend
from cmetrics._base import validation
from cmetrics._base.aliases import ZeroDivision
from cmetrics._base.config import check_classes, check_max_classes, get_num_threads
from cmetrics._kernels import Groups, ProbAccumulators
from cmetrics._results.grouped import GroupKey, key_json
from cmetrics.exceptions import LimitExceededError, StateError, ValidationError
from cmetrics.streaming.dense_ranking import DenseClassRanking, dense_fits
from cmetrics.streaming.grouping import GroupedRows
from cmetrics.streaming.replicates import ROW_WEIGHTS_VERSION, ReplicateState, check_options
from cmetrics.streaming.settings import MAX_GROUPS, EvaluationSettings
from cmetrics.uncertainty.schemes import layout

#: First bytes of every serialised state, and the format version this module writes.
MAGIC = b"CMETRICS"
FORMAT_VERSION = 2
_HEAD = struct.Struct("<8sHHI")  # magic, version, reserved (0), header length
#: The float sums of the probability accumulators (the fields named ``*_sum``), stored in the
#: header of a state; the array fields follow the header.
_SUM_FIELDS = tuple(f for f in ProbAccumulators._fields if f.endswith("_sum"))

State = TypeVar("State", bound=GroupedRows)


def encode(state: GroupedRows) -> bytes:
    """``state`` as bytes: ``b"CMETRICS"``, u16 version, u16 0, u32 header length, a UTF-8 JSON
    header, the arrays it lists (little-endian, C order, back to back), and a CRC-32 of all that."""
    arrays: list[tuple[str, np.ndarray]] = []
    sums: dict[str, float] = {}
    if state._acc is not None:
        for key, value in state._acc._asdict().items():
            if isinstance(value, np.ndarray):
                arrays.append((f"acc.{key}", value))
            elif isinstance(value, float):
                sums[key] = value
    if state._hard_counts is not None:
        arrays.append(("hard.counts", state._hard_counts))
    if state._hard_weighted is not None:
        arrays.append(("hard.weighted", state._hard_weighted))
    summary = state.ranking_summary()
    if summary is not None:
        for name in ("values", "n_pos", "n_neg", "w_pos", "w_neg"):
            a = getattr(summary, name)
            if a is not None:
                arrays.append((f"ranking.{name}", _narrow(a)))
    if state._rank_hist is not None:
        arrays.append(("topk.hist", state._rank_hist))
    for col, g in enumerate(state._class_groups()):
        for name in ("values", "n_pos", "n_neg", "w_pos", "w_neg"):
            a = getattr(g, name)
            if a is not None:
                arrays.append((f"class_ranking.{col}.{name}", _narrow(a)))
    boot = state._replicates
    if boot is not None:
        arrays += [("bootstrap.sums", boot.sums), ("bootstrap.full", boot.full)]
    labels = None
    if state._labels is not None:
        labels = {"dtype": state._labels.dtype.str, "values": state._labels.tolist()}
    header = {
        "format": "cmetrics.Evaluator",
        "settings": state.settings.header(),
        "fixed_labels": state._fixed,
        "labels": labels,
        "kind": state._kind,
        "mode": state._mode,
        "weighted": state._weighted,
        "has_confidence": state._has_confidence,
        "n_rows": state.n_rows,
        "sums": sums,
        "arrays": [{"name": n, "dtype": _le(a).dtype.str, "shape": list(a.shape)} for n, a in arrays],
    }
    if state._bootstrap is not None:
        n_resamples, seed, level = state._bootstrap
        header["bootstrap"] = {
            "n_resamples": n_resamples,
            "seed": seed,
            "confidence_level": level,
            "proba": None if boot is None else boot.proba,
            "ranges": [] if boot is None else [list(r) for r in boot.ranges],
            "weights": ROW_WEIGHTS_VERSION if boot is None else boot.weights,
        }
    children: list[bytes] = []
    if state.group_by:
        keys = state.group_keys
        states = state._group_states()
        children = [encode(states[key]) for key in keys]
        header["groups"] = {
            "max_groups": state.max_groups,
            "ranking_bins": state.group_ranking_bins,
            "kinds": None if state._group_kinds is None else list(state._group_kinds),
            "keys": [key_json(key) for key in keys],
            "sizes": [len(c) for c in children],
        }
    head = json.dumps(header, separators=(",", ":"), allow_nan=True).encode()
    body = b"".join(
        [_HEAD.pack(MAGIC, FORMAT_VERSION, 0, len(head)), head]
        + [np.ascontiguousarray(_le(a)).tobytes() for _, a in arrays]
        + children
    )
    return body + struct.pack("<I", zlib.crc32(body))


def decode(cls: type[State], data: bytes, nested: bool = False) -> State:
    """Parse and check a state (see :meth:`cmetrics.Evaluator.from_bytes`); ``nested``: a
    group's state inside a grouped one, which may not itself be grouped. Every check runs
    before anything is built; a failed one is a :class:`~cmetrics.StateError`."""
    header, at = _read_header(data)
    s = header["settings"]
    _want(isinstance(s, dict), "settings must be a mapping")
    inputs = _read_inputs(header)
    mode, weighted, has_confidence, n_rows = inputs
    ranking, class_ranking, bins = _read_modes(s)
    settings = EvaluationSettings(
        n_bins=_int_in(s["n_bins"], 1, validation.MAX_BINS, "n_bins"),
        zero_division=_zd_value(s["zero_division"]),
        ranking=ranking,
        ranking_bins=1 << 16 if bins is None else _int_in(bins, 1, 1 << 24, "ranking_bins"),
        top_k=_int_in(s["top_k"], 1, 32, "top_k"),
        class_ranking=class_ranking,
        max_classes=check_max_classes(None),
    )
    labels, kind = _read_labels(header, mode, settings.max_classes)
    k = 0 if labels is None else labels.shape[0]
    arrays, at = _read_arrays(data, header["arrays"], at, k, settings.n_bins)
    grouping = header.get("groups")
    _want(grouping is None or not nested, "a group's state is itself grouped")
    children, at = _read_children(data, grouping, at)
    _want(at == len(data) - 4, "trailing bytes after the arrays")
    _check_values(arrays, n_rows)
    sums = _read_sums(header)
    _check_inputs(arrays, sums, inputs)
    expect_ranking = mode is not None and ranking != "off" and (mode == "proba" or has_confidence)
    _check_rankings(arrays, inputs, ranking if expect_ranking else None, k, class_ranking)
    if grouping is not None:
        settings = EvaluationSettings(
            **{
                **settings.options(),
                "max_groups": _int_in(grouping["max_groups"], 1, MAX_GROUPS, "max_groups"),
                "group_ranking_bins": _int_in(grouping["ranking_bins"], 1, 1 << 24, "the groups' ranking_bins"),
            }
        )
    # Built only now, from checked parts.
    state = cls._empty(settings, labels, kind, grouping is not None)
    state._fixed = bool(header["fixed_labels"])
    state._mode, state._weighted, state._has_confidence = mode, weighted, has_confidence
    state.n_rows = n_rows
    state._bootstrap, state._replicates = _read_bootstrap(header.get("bootstrap"), arrays, inputs, k, nested)
    state._draws = not nested  # a group's replicates are drawn by its parent
    _fill(state, arrays, sums, expect_ranking, k)
    if grouping is not None:
        _load_groups(state, grouping, children)
    return state


def _read_bootstrap(
    spec: Any, arrays: dict[str, np.ndarray], inputs: Inputs, k: int, nested: bool
) -> tuple[tuple[int, int, float] | None, ReplicateState | None]:
    """The bootstrap options and replicate sums, checked: the options as the constructor checks
    them, the sums finite, >= 0 and of the layout of the labels and inputs, the row ranges
    disjoint, sorted and covering as many rows as the state counts (a group's state inside a
    grouped one: no ranges, its rows lie in its parent's)."""
    has_arrays = "bootstrap.sums" in arrays or "bootstrap.full" in arrays
    if spec is None:
        _want(not has_arrays, "bootstrap arrays without bootstrap options")
        return None, None
    _want(isinstance(spec, dict), "bootstrap must be a mapping")
    try:
        options = check_options(spec["n_resamples"], spec["seed"], spec["confidence_level"])
    except ValidationError as e:
        raise _bad(f"bootstrap options: {e}") from None
    mode, _, _, n_rows = inputs
    if mode is None:
        _want(not has_arrays and not spec.get("ranges"), "bootstrap sums without rows")
        return options, None
    proba = spec.get("proba")
    _want(proba is (mode == "proba"), "bootstrap.proba does not match the inputs")
    width = layout(k, bool(proba)).width
    sums, full = arrays.get("bootstrap.sums"), arrays.get("bootstrap.full")
    _want(sums is not None and full is not None, "bootstrap sums missing")
    assert sums is not None and full is not None
    _want(sums.shape == (options[0], width) and full.shape == (width,), "bootstrap sums of the wrong shape")
    _want(bool(np.isfinite(sums).all() and np.isfinite(full).all()), "bootstrap sums not finite")
    _want(bool((sums >= 0).all() and (full >= 0).all()), "negative bootstrap sums")
    ranges = spec.get("ranges")
    _want(isinstance(ranges, list), "bootstrap.ranges must be a list")
    spans: list[tuple[int, int]] = []
    for r in ranges:
        _want(isinstance(r, list) and len(r) == 2, "a bootstrap range is not a pair")
        start, end = _int_in(r[0], 0, 1 << 63, "a range start"), _int_in(r[1], 0, 1 << 63, "a range end")
        _want(start < end and (not spans or spans[-1][1] < start), "bootstrap ranges not sorted and disjoint")
        spans.append((start, end))
    if nested:
        _want(not spans, "a group's bootstrap state with row ranges")
    else:
        _want(sum(e - s for s, e in spans) == n_rows, "bootstrap ranges do not cover n_rows rows")
    # States written before the field have the first version's weights.
    weights = _int_in(spec.get("weights", 1), 1, ROW_WEIGHTS_VERSION, "bootstrap.weights")
    state = ReplicateState(options[0], options[1], options[2], k, bool(proba), sums, full, spans, weights)
    return options, state


#: The deepest a header's brackets may nest (an Evaluator's nest a few levels), and its strings.
_MAX_NESTING = 64
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


def _nesting(head: bytes) -> int:
    """How deep the brackets of a JSON text nest outside its strings, counted without recursion."""
    step = np.zeros(256, np.int8)
    step[[ord("["), ord("{")]], step[[ord("]"), ord("}")]] = 1, -1
    outside = np.frombuffer(_JSON_STRING.sub(b"", head), np.uint8)
    return int(np.cumsum(step[outside], dtype=np.int64).max(initial=0))


def _read_header(buf: bytes) -> tuple[dict[str, Any], int]:
    """The JSON header, checked to be an Evaluator's, and where the arrays start."""
    if len(buf) < _HEAD.size + 4 or buf[:8] != MAGIC:
        msg = "not a cmetrics Evaluator state (bad magic bytes); pass the output of Evaluator.to_bytes()"
        raise StateError(msg)
    if zlib.crc32(buf[:-4]) != struct.unpack("<I", buf[-4:])[0]:
        msg = "the Evaluator state is corrupt (checksum mismatch); it was truncated or altered"
        raise StateError(msg)
    _, version, _, hlen = _HEAD.unpack_from(buf)
    if version != FORMAT_VERSION:
        msg = (
            f"Evaluator state format version {version} is not supported by this cmetrics (reads version "
            f"{FORMAT_VERSION}); upgrade cmetrics"
        )
        raise StateError(msg)
    _want(_HEAD.size + hlen <= len(buf) - 4, "the header runs past the end")
    head = buf[_HEAD.size : _HEAD.size + hlen]
    # Measured before json.loads recurses: a parser near the stack's end breaks finalizers run meanwhile.
    _want(_nesting(head) <= _MAX_NESTING, "the header nests too deeply")
    try:
        header = json.loads(head)
    except RecursionError:
        raise _bad("the header nests too deeply") from None
    except (ValueError, UnicodeDecodeError):
        raise _bad("the header is not UTF-8 JSON") from None
    _want(isinstance(header, dict) and header.get("format") == "cmetrics.Evaluator", "not an Evaluator header")
    return header, _HEAD.size + hlen


#: What a state was fed: the input mode ("proba", "hard" or None), weights, a confidence
#: column, and the row count.
Inputs = tuple[str | None, bool | None, bool, int]


def _read_inputs(header: dict[str, Any]) -> Inputs:
    mode = header["mode"]
    _want(mode in (None, "proba", "hard"), f"unknown input mode {mode!r}")
    weighted = header["weighted"]
    _want(weighted in (None, True, False) and (weighted is None) == (mode is None), "inconsistent weighting")
    has_confidence = header["has_confidence"]
    _want(isinstance(has_confidence, bool), "has_confidence must be true or false")
    _want(isinstance(header["fixed_labels"], bool), "fixed_labels must be true or false")
    n_rows = _int_in(header["n_rows"], 0, MAX_STATE_ROWS, "n_rows")
    _want((n_rows == 0) == (mode is None), "rows without inputs, or inputs without rows")
    return mode, weighted, has_confidence, n_rows


def _read_modes(s: dict[str, Any]) -> tuple[Any, Any, Any]:
    """The ranking modes and the bins (None unless some mode is approximate)."""
    ranking = s["ranking"]
    _want(ranking in ("exact", "approximate", "off"), f"unknown ranking mode {ranking!r}")
    class_ranking = s["class_ranking"]
    _want(class_ranking in ("exact", "approximate", "off"), f"unknown class ranking mode {class_ranking!r}")
    bins = s["ranking_bins"]
    approximate = "approximate" in (ranking, class_ranking)
    _want((bins is None) == (not approximate), "ranking_bins must be set exactly in approximate mode")
    return ranking, class_ranking, bins


def _read_labels(header: dict[str, Any], mode: str | None, max_classes: int) -> tuple[np.ndarray | None, Any]:
    """The labels: a list of distinct ints or strings, within the class limit."""
    lab = header["labels"]
    labels = None
    kind = header["kind"]
    if lab is not None:
        _want(isinstance(lab, dict) and isinstance(lab["values"], list), "labels must be a list")
        values = lab["values"]
        check_classes(len(values), "the state's labels", max_classes)
        dtype = np.dtype(lab["dtype"])
        if kind == "int":
            _want(
                dtype.kind in "iu" and all(isinstance(v, int) and not isinstance(v, bool) for v in values),
                "integer labels must be integers",
            )
            _want(all(-(2**63) <= v < 2**63 for v in values), "integer labels must fit int64")
            labels = np.array(values, dtype=np.int64) if values else np.zeros(0, np.int64)
        else:
            _want(
                kind == "str" and dtype.kind == "U" and all(isinstance(v, str) for v in values),
                "string labels must be strings",
            )
            labels = np.array(values, dtype=np.str_) if values else np.zeros(0, np.str_)
        _want(labels.shape[0] > 0 and np.unique(labels).shape[0] == labels.shape[0], "labels must be distinct")
    else:
        _want(kind is None and mode is None, "inputs without labels")
    _want(mode is None or labels is not None, "inputs without labels")
    return labels, kind


#: The accumulators of the probability pass and the shape of each (K classes, B bins).
_ACC_SHAPES = {
    "hard_counts": "square",
    "hard_weighted": "square",
    "pcm": "square",
    "true_count": "column",
    "true_weight": "column",
    "bin_weight": "bins",
    "bin_confidence": "bins",
    "bin_correct": "bins",
    "bin_count": "bins",
}


def _read_arrays(buf: bytes, specs: Any, at: int, k: int, n_bins: int) -> tuple[dict[str, np.ndarray], int]:
    """The arrays the header lists: known names, dtypes and shapes, within the buffer; each
    widened to 64 bits."""
    sizes = {"square": (k, k), "column": (k,), "bins": (n_bins,)}
    shapes = {
        "hard.counts": (k, k),
        "hard.weighted": (k, k),
        "topk.hist": (k,),
        **{f"acc.{n}": sizes[s] for n, s in _ACC_SHAPES.items()},
    }
    arrays: dict[str, np.ndarray] = {}
    _want(isinstance(specs, list), "arrays must be a list")
    for spec in specs:
        name, dtype, shape = spec["name"], np.dtype(spec["dtype"]), spec["shape"]
        _want(isinstance(name, str) and name not in arrays, f"array {name!r} repeated or unnamed")
        _want(dtype.str in ("<u8", "<f8", "<u4", "<f4"), f"array {name!r} has dtype {dtype.str}")
        _want(
            isinstance(shape, list) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape),
            f"array {name!r} has a bad shape",
        )
        count = 1
        for d in shape:
            count *= d
        _want(count * dtype.itemsize <= len(buf) - 4 - at, f"array {name!r} runs past the end")
        if name.startswith(("ranking.", "class_ranking.")):
            _want(len(shape) == 1, f"array {name!r} must be 1-D")
        elif name in ("bootstrap.sums", "bootstrap.full"):
            _want(dtype.str == "<f8" and len(shape) == (2 if name == "bootstrap.sums" else 1), f"bad {name!r}")
        else:
            _want(name in shapes and tuple(shape) == shapes[name], f"unexpected array {name!r} of shape {shape}")
        a = np.frombuffer(buf, dtype=dtype, count=count, offset=at).reshape(shape)
        wide = np.float64 if dtype.kind == "f" else np.uint64
        arrays[name] = a.astype(wide)
        at += a.nbytes
    return arrays, at


def _read_children(buf: bytes, grouping: Any, at: int) -> tuple[list[bytes], int]:
    """The groups' states (bytes, decoded later), after the arrays."""
    children: list[bytes] = []
    if grouping is not None:
        _want(isinstance(grouping, dict), "groups must be a mapping")
        sizes = grouping["sizes"]
        _want(isinstance(sizes, list), "group sizes must be a list")
        for size in sizes:
            _int_in(size, _HEAD.size + 4, len(buf), "a group's state size")
            children.append(buf[at : at + size])
            at += size
    return children, at


def _check_values(arrays: dict[str, np.ndarray], n_rows: int) -> None:
    """Sums finite (and non-negative but for tie-group values), counts at most ``n_rows``."""
    for name, a in arrays.items():
        if a.dtype.kind == "f":
            _want(bool(np.isfinite(a).all()), f"array {name!r} holds NaN or infinity")
            if not name.endswith(".values"):
                _want(bool((a >= 0).all()), f"array {name!r} holds negative sums")
        else:
            _want(a.size == 0 or int(a.max()) <= n_rows, f"array {name!r} holds counts above n_rows")


def _read_sums(header: dict[str, Any]) -> dict[str, Any]:
    sums = header["sums"]
    _want(isinstance(sums, dict), "sums must be a mapping")
    for key, value in sums.items():
        _want(
            key in _SUM_FIELDS
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
            and math.isfinite(value)
            and value >= 0,
            f"bad sum {key!r}",
        )
    return cast("dict[str, Any]", sums)


def _check_inputs(arrays: dict[str, np.ndarray], sums: dict[str, Any], inputs: Inputs) -> None:
    """What each input mode must hold, and its counts agreeing with ``n_rows``."""
    mode, weighted, has_confidence, n_rows = inputs
    proba_names = {f"acc.{key}" for key in _ACC_SHAPES if key != "hard_weighted"} | {"topk.hist"}
    # The tie groups and the bootstrap sums are checked on their own.
    grouped = {n for n in arrays if n.startswith(("ranking.", "class_ranking.", "bootstrap."))}
    if mode == "proba":
        want = proba_names | ({"acc.hard_weighted"} if weighted else set())
        _want(set(arrays) - grouped == want, "missing or extra arrays")
        hist = arrays["topk.hist"]
        if not weighted:
            _want(bool((hist == np.round(hist)).all()) and int(hist.sum()) == n_rows, "topk.hist does not add up")
        _want(set(sums) == set(_SUM_FIELDS), "missing sums")
        _want(not has_confidence, "a confidence column with probabilities")
        for name in ("acc.hard_counts", "acc.true_count", "acc.bin_count"):
            _want(_exact_sum(arrays[name]) == n_rows, f"{name} does not add up to n_rows")
    elif mode == "hard":
        want = {"hard.counts"} | ({"hard.weighted"} if weighted else set())
        _want(set(arrays) - grouped == want, "missing or extra arrays")
        _want(not sums, "sums without probabilities")
        _want(_exact_sum(arrays["hard.counts"]) == n_rows, "hard.counts does not add up to n_rows")
    else:
        _want(not arrays and not sums, "arrays without rows")


def _check_rankings(
    arrays: dict[str, np.ndarray], inputs: Inputs, ranking: str | None, k: int, class_ranking: str
) -> None:
    """The tie groups of the confidence (``ranking``: its mode when the state keeps them) and
    of each probability column."""
    mode, weighted, _, n_rows = inputs
    ranked = {n for n in arrays if n.startswith("ranking.")}
    if ranking is not None:
        _check_groups(arrays, "ranking", ranked, bool(weighted), ranking, n_rows)
    else:
        _want(not ranked, "ranking arrays where none belong")
    by_class = {n for n in arrays if n.startswith("class_ranking.")}
    if mode == "proba" and class_ranking != "off":
        positives = 0
        for col in range(k):
            names = {n for n in by_class if n.startswith(f"class_ranking.{col}.")}
            positives += _check_groups(arrays, f"class_ranking.{col}", names, bool(weighted), class_ranking, n_rows)
            by_class -= names
        _want(not by_class, "class ranking arrays of no class")
        _want(positives == n_rows, "class ranking positives do not add up to n_rows")
    else:
        _want(not by_class, "class ranking arrays where none belong")


def _fill(state: GroupedRows, arrays: dict[str, np.ndarray], sums: dict[str, Any], ranked: bool, k: int) -> None:
    """Give a fresh state the checked arrays and sums."""
    weighted = bool(state._weighted)
    if state._mode == "proba":
        fields: dict[str, object] = {"hard_weighted": None, "confidence": None, "correct": None, "ranking": None}
        fields.update({n[4:]: a for n, a in arrays.items() if n.startswith("acc.")})
        fields.update({n: float(value) for n, value in sums.items()})
        state._acc = ProbAccumulators._make(fields[f] for f in ProbAccumulators._fields)
        state._rank_hist = arrays["topk.hist"]
    state._hard_counts = arrays.get("hard.counts")
    state._hard_weighted = arrays.get("hard.weighted")
    if ranked:
        state._state(weighted).absorb(_groups_of(arrays, "ranking"), get_num_threads())
    if state._mode == "proba" and state.class_ranking != "off":
        if state.class_ranking == "approximate" and dense_fits(k, state.ranking_bins):
            groups = [_groups_of(arrays, f"class_ranking.{col}") for col in range(k)]
            state._dense = DenseClassRanking.from_groups(groups, state.ranking_bins)
            return
        be = resolve_backend(state.backend)
        state._class_rank = []
        for col in range(k):
            rank = be.GroupState(weighted)
            rank.absorb(_groups_of(arrays, f"class_ranking.{col}"), get_num_threads())
            state._class_rank.append(rank)


#: The most rows a state may count (counts stay exact in float64 and far from u64 overflow).
MAX_STATE_ROWS = 2**53


def _bad(what: str) -> StateError:
    return StateError(f"the Evaluator state is malformed: {what}; pass the output of Evaluator.to_bytes()")


def _want(cond: bool, what: str) -> None:
    if not cond:
        raise _bad(what)


def _int_in(x: object, lo: int, hi: int, what: str) -> int:
    if not (isinstance(x, int) and not isinstance(x, bool) and lo <= x <= hi):
        raise _bad(f"{what} must be an integer in [{lo}, {hi}]")
    return x


def _exact_sum(a: np.ndarray) -> int:
    """Sum of non-negative uint64 values without wrapping (in 32-bit halves)."""
    low = int(np.sum(a & np.uint64(0xFFFFFFFF), dtype=np.uint64))
    high = int(np.sum(a >> np.uint64(32), dtype=np.uint64))
    return (high << 32) + low


def _group_key(value: object, kinds: list[str]) -> GroupKey:
    """A stored group value, checked against the kinds of the grouping columns."""
    parts = value if len(kinds) > 1 else [value]
    if not (isinstance(parts, list) and len(parts) == len(kinds)):
        raise _bad("a group value of the wrong arity")
    out: list[int | str] = []
    for part, kind in zip(parts, kinds, strict=True):
        if kind == "int":
            _want(isinstance(part, int) and not isinstance(part, bool), "an integer group value that is not one")
            _want(-(2**63) <= part < 2**63, "an integer group value outside int64")
        else:
            _want(isinstance(part, str), "a string group value that is not one")
        out.append(part)
    return tuple(out) if len(kinds) > 1 else out[0]


def _load_groups(ev: GroupedRows, grouping: dict[str, Any], children: list[bytes]) -> None:
    """Rebuild the groups of a grouped state from checked parts: distinct keys of the stored
    kinds, within ``max_groups``, each a state with the parent's settings and inputs, whose
    rows add up to the parent's."""
    kinds, keys = grouping["kinds"], grouping["keys"]
    _want(isinstance(keys, list) and len(keys) == len(children), "group keys and states do not match")
    _want(len(keys) <= ev.max_groups, "more groups than max_groups")
    k = 0 if ev._labels is None else int(ev._labels.shape[0])
    try:
        ev._check_group_cells(len(keys), k, "the state's groups have", proba=ev._mode == "proba")
    except LimitExceededError as e:
        raise _bad(str(e)) from None
    if kinds is None:
        _want(not keys and ev._mode is None, "groups without kinds")
        return
    _want(
        isinstance(kinds, list) and 0 < len(kinds) <= 64 and all(k in ("int", "str") for k in kinds),
        "group kinds must be a list of 'int' and 'str'",
    )
    rows = 0
    for value, blob in zip(keys, children, strict=True):
        key = _group_key(value, kinds)
        _want(key not in ev._groups, "a group value repeated")
        child = decode(type(ev), blob, nested=True)
        _want(
            child.settings.header() == ev.settings.for_groups().header(), "a group's settings differ from the state's"
        )
        child.settings = ev.settings.for_groups()
        _want(
            (child._mode, child._weighted, child._has_confidence) == (ev._mode, ev._weighted, ev._has_confidence),
            "a group's inputs differ from the state's",
        )
        _want(child.n_rows > 0, "an empty group")
        _want(
            child._labels is not None
            and ev._labels is not None
            and child._kind == ev._kind
            and bool(np.isin(child._labels, ev._labels).all()),
            "a group's labels are not among the state's",
        )
        if ev._fixed:
            same = child._labels is not None and ev._labels is not None and np.array_equal(child._labels, ev._labels)
            _want(child._fixed and same, "a group's labels differ")
        _want(child._bootstrap == ev._bootstrap, "a group's bootstrap options differ from the state's")
        _want((child._replicates is None) == (ev._replicates is None), "a group's bootstrap sums missing or extra")
        if child.class_ranking == "approximate":
            if child._dense is None:  # _fill kept tie groups (too many cells): made dense here
                child._dense = DenseClassRanking.from_groups(child._class_groups(), child.ranking_bins)
                child._class_rank = None
            child._binned_by_parent = True
        rows += child.n_rows
        ev._groups[key] = child
    _want(rows == ev.n_rows, "the groups' rows do not add up to n_rows")
    _check_group_sums(ev)
    ev._group_kinds = tuple(kinds)
    ev._tabulate()  # hard labels without a confidence: one table, as updates make it


def _check_group_sums(ev: GroupedRows) -> None:
    """The state of all rows of a grouped state holds what its groups hold together: every
    count exactly, every float sum to rounding (the two were added in different orders)."""
    children = list(ev._groups.values())
    if not children or ev._labels is None:
        return

    def agree(name: str, whole: Any, parts: list[Any]) -> None:
        total = sum(parts[1:], start=np.array(parts[0], dtype=np.float64))
        whole = np.asarray(whole, dtype=np.float64)
        scale = sum((np.abs(np.asarray(p, dtype=np.float64)) for p in parts[1:]), start=np.abs(parts[0]))
        _want(
            whole.shape == total.shape and bool((np.abs(whole - total) <= 1e-9 * scale + 1e-300).all()),
            f"the state's {name} is not the sum of its groups'",
        )

    def exact(name: str, whole: Any, parts: list[Any]) -> None:
        total = [int(v) for v in np.asarray(parts[0]).ravel()]
        for p in parts[1:]:
            total = [a + int(b) for a, b in zip(total, np.asarray(p).ravel(), strict=True)]
        ok = [int(v) for v in np.asarray(whole).ravel()] == total
        _want(ok, f"the state's {name} are not the sum of its groups'")

    if ev._mode == "proba":
        accs = [c._acc for c in children]
        _want(ev._acc is not None and all(a is not None for a in accs), "a group without accumulators")
        assert ev._acc is not None
        for field in ("hard_counts", "true_count", "bin_count"):
            exact(field, getattr(ev._acc, field), [getattr(a, field) for a in accs])
        sums = ("pcm", "true_weight", "bin_weight", "bin_confidence", "bin_correct", "weight_sum", "log_loss_sum")
        for field in sums:
            agree(field, getattr(ev._acc, field), [getattr(a, field) for a in accs])
        if ev._rank_hist is not None:
            agree("top-k histogram", ev._rank_hist, [c._rank_hist for c in children])
        return
    # Hard labels: each group's table placed at its labels' rows and columns of the whole.
    k = ev._labels.shape[0]
    position = {lab: i for i, lab in enumerate(ev._labels.tolist())}
    placed = []
    for c in children:
        assert c._labels is not None and c._hard_counts is not None
        at = np.array([position[lab] for lab in c._labels.tolist()], dtype=np.intp)
        table = np.zeros((k, k), dtype=np.uint64)
        table[np.ix_(at, at)] = c._hard_counts
        placed.append(table)
    exact("counts", ev._hard_counts, placed)


def _groups_of(arrays: dict[str, np.ndarray], prefix: str) -> Groups:
    return Groups(
        arrays[f"{prefix}.values"],
        arrays[f"{prefix}.n_pos"],
        arrays[f"{prefix}.n_neg"],
        arrays.get(f"{prefix}.w_pos"),
        arrays.get(f"{prefix}.w_neg"),
    )


def _check_groups(
    arrays: dict[str, np.ndarray], prefix: str, names: set[str], weighted: bool, ranking: str, n_rows: int
) -> int:
    """Check one set of stored tie groups (exactly the arrays a state of this kind holds,
    strictly increasing values, [0, 1] in approximate mode, counts adding up to ``n_rows``);
    returns their positive rows."""
    want = {f"{prefix}.values", f"{prefix}.n_pos", f"{prefix}.n_neg"} | (
        {f"{prefix}.w_pos", f"{prefix}.w_neg"} if weighted else set()
    )
    _want(names == want, f"missing or extra {prefix} arrays")
    v = arrays[f"{prefix}.values"]
    g = len(v)
    _want(all(len(arrays[n]) == g for n in want), f"{prefix} arrays of different lengths")
    _want(g == 0 or bool((np.diff(v) > 0).all()), f"{prefix} values not strictly increasing")
    if ranking == "approximate":
        _want(g == 0 or (v[0] >= 0 and v[-1] <= 1), f"approximate {prefix} values outside [0, 1]")
    positives = _exact_sum(arrays[f"{prefix}.n_pos"])
    _want(positives + _exact_sum(arrays[f"{prefix}.n_neg"]) == n_rows, f"{prefix} counts do not add up to n_rows")
    return positives


def _narrow(a: np.ndarray) -> np.ndarray:
    """Ranking arrays stored narrow when that loses nothing: float32 values (confidences of
    float32 probabilities) and uint32 counts take half the bytes; readers widen them back."""
    if a.dtype == np.float64:
        f = a.astype(np.float32)
        if np.array_equal(f.astype(np.float64), a):
            return f
    elif a.dtype == np.uint64 and (a.shape[0] == 0 or int(a.max()) < 2**32):
        return a.astype(np.uint32)
    return a


def _le(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    return a.astype(a.dtype.newbyteorder("<")) if a.dtype.byteorder == ">" else a


def _zd_value(zd: object) -> ZeroDivision:
    """``zero_division`` as stored (NaN as the string "nan"), checked."""
    value = float("nan") if zd == "nan" else zd
    validation.zero_division_value(value)
    return cast("ZeroDivision", value)  # checked just above

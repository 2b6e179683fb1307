"""The contract between the layers (cmetrics._kernels): both backends provide every kernel of
the ``Kernels`` protocol with the same signature, return the same named results with the same
field values, and raise the same exception class for the same bad input."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import cmetrics
from cmetrics import _kernels
from cmetrics import _numpy as npb
from cmetrics.exceptions import (
    LabelError,
    LengthMismatchError,
    LimitExceededError,
    NonFiniteError,
    ProbabilityError,
    ShapeError,
    UnsupportedDtypeError,
    ValidationError,
    WeightError,
)

pytestmark = pytest.mark.skipif(not cmetrics.rust_available(), reason="compares the compiled backend with numpy")

#: Names the extension exports besides the kernels (its version, thread helpers, a test hook).
EXTENSION_ONLY = {
    "__version__",
    "SEQUENTIAL_BELOW",
    "VECTORIZED_SORT_BUILT",
    "available_threads",
    "max_threads",
    "sort_algorithm",
    "_panic_for_tests",
    "_allocator_purge_threshold",
}


def core() -> Any:
    from cmetrics import _core

    return _core


def protocol_members(proto: type) -> list[str]:
    return sorted(n for n, v in vars(proto).items() if callable(v) and not n.startswith("_"))


def shape(sig: inspect.Signature, drop_self: bool = False) -> list[tuple[str, Any, Any]]:
    """Names, kinds and defaults of a signature (annotations are the stub's business)."""
    params = list(sig.parameters.values())
    if drop_self and params and params[0].name == "self":
        params = params[1:]
    return [(p.name, p.kind, p.default) for p in params]


def test_both_backends_export_exactly_the_protocol() -> None:
    kernels = set(protocol_members(_kernels.Kernels))
    assert set(npb.__all__) == kernels
    assert set(core().__all__) - EXTENSION_ONLY == kernels


@pytest.mark.parametrize("name", protocol_members(_kernels.Kernels))
def test_kernel_signatures_agree(name: str) -> None:
    want = shape(inspect.signature(getattr(_kernels.Kernels, name)), drop_self=True)
    assert shape(inspect.signature(getattr(npb, name))) == want, "numpy backend"
    assert shape(inspect.signature(getattr(core(), name))) == want, "compiled backend"


@pytest.mark.parametrize("name", protocol_members(_kernels.RankingState))
def test_ranking_state_methods_agree(name: str) -> None:
    want = shape(inspect.signature(getattr(_kernels.RankingState, name)), drop_self=True)
    for cls in (npb.GroupState, core().GroupState):
        assert shape(inspect.signature(getattr(cls, name)), drop_self=True) == want, cls
    for prop in ("weighted", "nbytes"):
        for state in (npb.GroupState(True), core().GroupState(True)):
            assert getattr(state, prop) in (True, 0), (state, prop)


# --------------------------------------------------------------------------------------
# Results: the same named tuple, the same values

rng = np.random.default_rng(12)
Y = rng.integers(0, 4, 300).astype(np.int64)
P = np.where(rng.random(300) < 0.6, Y, rng.integers(0, 4, 300)).astype(np.int64)
W = rng.random(300)
C = np.bincount(Y * 4 + P, minlength=16).reshape(4, 4).astype(np.float64)
PROBA = rng.dirichlet(np.ones(4), 300)
OK = rng.random(300) < 0.7
SCORE = np.round(rng.random(300), 2)


def _walked_state(k: Any) -> Any:
    state = k.GroupState(True)
    state.add(OK[:100], SCORE[:100], W[:100])
    state.add(OK[100:], SCORE[100:], W[100:])
    return state


SEGMENTS = np.array([0, 120, 120, 300])


def _segments(k: Any, weighted: bool = False, bins: int | None = None) -> list[Any]:
    """Three states filled by one add_segments call (one segment empty), as tie groups."""
    states = [k.GroupState(weighted) for _ in range(3)]
    score = np.round(PROBA[:, 0], 2)
    k.add_segments(states, Y == 0, score, SEGMENTS, W if weighted else None, bins)
    return [s.groups() for s in states]


def _walk_states(k: Any) -> list[Any]:
    states = [k.GroupState(False) for _ in range(3)]
    k.add_segments(states, Y == 1, np.round(PROBA[:, 1], 1), SEGMENTS)
    return list(k.walk_states(states, True))


def _walk_union(k: Any) -> Any:
    """The walk of three states' union, one of them empty, ties across states."""
    states = [k.GroupState(False) for _ in range(3)]
    k.add_segments(states, Y == 1, np.round(PROBA[:, 1], 1), SEGMENTS)
    return k.walk_union(states, True)


def _mixed_states(k: Any) -> list[Any]:
    """A weighted and an unweighted state, both with rows."""
    a, b = k.GroupState(True), k.GroupState(False)
    a.add(Y == 0, np.round(PROBA[:, 0], 2), W)
    b.add(Y == 0, np.round(PROBA[:, 0], 2))
    return [a, b]


def _mixed_union(k: Any) -> Any:
    """A union of a weighted and an unweighted state, both with rows."""
    return k.union_states(_mixed_states(k))


def _union_states(k: Any) -> Any:
    states = [k.GroupState(True) for _ in range(3)]
    k.add_segments(states, Y == 2, np.round(PROBA[:, 2], 2), SEGMENTS, W)
    return k.union_states(states).groups()


def test_the_union_walk_adds_counts_past_u32_max() -> None:
    """Counts past u32::MAX spread over adjacent entries of one value (the Rust state's u32
    cells), shared by two states: the walk of their union without making it equals the walk
    of the union made, on both backends, with the exact pair counts of the naive formula."""
    big = 3 << 32
    values = ([0.1, 0.5, 0.9], [0.5, 0.7])
    pos = ([big, 5, 7], [big, 1])
    neg = ([2, big, 1], [3, big])
    walks = []
    for k in (core(), npb):
        groups = type(k.GroupState(False).groups())
        states = []
        for v, p, n in zip(values, pos, neg, strict=True):
            state = k.GroupState(False)
            state.absorb(groups(np.array(v), np.array(p, np.uint64), np.array(n, np.uint64), None, None))
            states.append(state)
        walk = k.walk_union(states, True)
        assert walk == k.union_states(states).walk(True)
        walks.append(walk)
    same(walks[0], walks[1], "walk_union")  # counts bit-identical, curve sums to rounding
    # Pairs by value: 0.1 (p big, n 2), 0.5 (p big + 5, n big + 3), 0.7 (p 1, n big), 0.9 (p 7, n 1).
    table = {0.1: (big, 2), 0.5: (big + 5, big + 3), 0.7: (1, big), 0.9: (7, 1)}
    ordered = sum(p * sum(n for u, (_, n) in table.items() if u < v) for v, (p, _) in table.items())
    tied = sum(p * n for p, n in table.values())
    assert (walks[0].ordered, walks[0].tied, walks[0].n_pos) == (ordered, tied, sum(p for p, _ in table.values()))


@pytest.mark.parametrize("backend", ["rust", "numpy"])
@pytest.mark.parametrize("bad", ["nan", "outside", "weights"])
def test_a_refused_add_segments_changes_no_state(backend: str, bad: str) -> None:
    """Every row is checked before any state changes: a bad row in the last segment leaves
    the states filled by an earlier call as they were."""
    k = core() if backend == "rust" else npb
    states = [k.GroupState(True) for _ in range(3)]
    score = np.round(PROBA[:, 0], 2)
    k.add_segments(states, Y == 0, score, SEGMENTS, W, 16)
    before = [s.groups() for s in states]
    worse, weights = score.copy(), W.copy()
    if bad == "nan":
        worse[-1] = np.nan
    elif bad == "outside":
        worse[-1] = 1.5
    else:
        weights[-1] = -1.0
    with pytest.raises(ValidationError):
        k.add_segments(states, Y == 0, worse, SEGMENTS, weights, 16)
    for got, want in zip([s.groups() for s in states], before, strict=True):
        same(got, want, "groups")


def _dense_tables(weighted: bool, bins: int = 16, k: int = 4) -> list[Any]:
    """Zero dense one-vs-rest tables: rows, positive rows, and with weights their weights."""
    w = [np.zeros((k, bins + 1)), np.zeros((k, bins + 1))] if weighted else [None, None]
    return [np.zeros((k, bins + 1), np.uint64), np.zeros((k, bins + 1), np.uint64), *w]


def _add_binned(k: Any, weighted: bool) -> np.ndarray:
    """Two batches added into dense tables that held counts already: the tables after, stacked
    (the counts are below 2^53: exact in float64)."""
    tables = _dense_tables(weighted)
    tables[0] += np.uint64(3)
    w = W if weighted else None
    k.add_binned_one_vs_rest(np.round(PROBA, 2), Y.astype(np.uint32), 16, *tables, w)
    k.add_binned_one_vs_rest(np.round(PROBA[::-1], 1), Y[::-1].astype(np.uint32), 16, *tables, w)
    return np.stack([t.astype(np.float64) for t in tables if t is not None])


CALLS: dict[str, Callable[[Any], Any]] = {
    "add_binned_one_vs_rest": lambda k: _add_binned(k, False),
    "add_binned_one_vs_rest weighted": lambda k: _add_binned(k, True),
    "union_states": _union_states,
    "add_segments": _segments,
    "add_segments weighted binned": lambda k: _segments(k, True, 16),
    "walk_states": _walk_states,
    "walk_union": _walk_union,
    "confusion_matrix": lambda k: k.confusion_matrix(Y, P, W),
    "confusion_matrix_codes": lambda k: k.confusion_matrix_codes(Y, P, 5, None),
    "encode_strings": lambda k: k.encode_strings(
        np.array(["b", "a", "c"]).view(np.uint32).reshape(3, 1), np.array(["a", "d", "a"]).view(np.uint32).reshape(3, 1)
    ),
    "encode_objects": lambda k: k.encode_objects(
        np.array(["x", "é"], dtype=object), np.array(["y", "x"], dtype=object)
    ),
    "marginals": lambda k: k.marginals(C),
    "precision_recall_fbeta": lambda k: k.precision_recall_fbeta(np.diag(C).copy(), C.sum(1), C.sum(0), 0.5),
    "accuracy": lambda k: k.accuracy(C),
    "balanced_accuracy": lambda k: k.balanced_accuracy(C, True),
    "matthews_corrcoef": lambda k: k.matthews_corrcoef(C),
    "cohen_kappa": lambda k: k.cohen_kappa(C, "quadratic"),
    "youden_j_per_class": lambda k: k.youden_j_per_class(C),
    "markedness_per_class": lambda k: k.markedness_per_class(C),
    "informedness": lambda k: k.informedness(C, np.full(4, 0.25)),
    "markedness": lambda k: k.markedness(C),
    "mutual_information_bits": lambda k: k.mutual_information_bits(C),
    "normalized_information_transfer": lambda k: k.normalized_information_transfer(C, 5),
    "entropy_modulated_accuracy": lambda k: k.entropy_modulated_accuracy(C),
    "evaluate_proba": lambda k: k.evaluate_proba(Y, PROBA, P, W, keep_confidence=True, n_bins=7, rank=True),
    "top_labels": lambda k: k.top_labels(PROBA),
    "top_labels columns": lambda k: k.top_labels(np.asfortranarray(PROBA)),
    "proba_row_values": lambda k: k.proba_row_values(Y, PROBA, W),
    "proba_row_values unweighted": lambda k: k.proba_row_values(Y.astype(np.int32), np.asfortranarray(PROBA)),
    "top_labels float32": lambda k: k.top_labels(PROBA.astype(np.float32)),
    "proba_row_values float32": lambda k: k.proba_row_values(Y, np.asfortranarray(PROBA, dtype=np.float32), W),
    "binary_ranking": lambda k: k.binary_ranking(OK, SCORE, W),
    "binary_ranking precision": lambda k: k.binary_ranking(OK, SCORE.astype(np.float32), None, "precision"),
    "binary_ranking precision weighted": lambda k: k.binary_ranking(OK, SCORE, W, "precision"),
    "binary_ranking placements": lambda k: k.binary_ranking(OK, SCORE, None, "placements"),
    "binary_ranking placements tied float32": lambda k: k.binary_ranking(
        OK, np.round(SCORE, 1).astype(np.float32), None, "placements"
    ),
    "binary_ranking placements weighted": lambda k: k.binary_ranking(OK, SCORE, W, "placements"),
    "score_groups": lambda k: k.score_groups(OK, SCORE, W),
    "score_groups of a strided column": lambda k: k.score_groups(OK, np.round(PROBA, 1)[:, 2]),
    "binary_proba_groups": lambda k: k.binary_proba_groups(OK, np.stack([1 - SCORE, SCORE], axis=1)),
    "binary_proba_groups of a bad row": lambda k: k.binary_proba_groups(OK, np.stack([SCORE, SCORE], axis=1)),
    "merge_groups": lambda k: k.merge_groups(k.score_groups(OK[:50], SCORE[:50]), k.score_groups(OK[50:], SCORE[50:])),
    "walk_groups": lambda k: k.walk_groups(k.score_groups(OK, SCORE)),
    "kendall_counts": lambda k: k.kendall_counts(SCORE, W),
    "GroupState": lambda k: _walked_state(k).walk(),
    "GroupState curve points": lambda k: _walked_state(k).curve_points(1 << 16),
    "GroupState thinned curve points": lambda k: _walked_state(k).curve_points(7),
    "multilabel_counts": lambda k: k.multilabel_counts(
        np.ascontiguousarray(PROBA > 0.25), np.ascontiguousarray(PROBA > 0.2), W
    ),
    "threshold_counts": lambda k: k.threshold_counts(OK, SCORE, W, "collinear"),
    "one_vs_rest": lambda k: k.one_vs_rest(
        np.round(PROBA, 1), [0, 2, 3], codes=Y.astype(np.uint32), sample_weight=W, curves=True
    ),
    "one_vs_rest precision": lambda k: k.one_vs_rest(
        PROBA.astype(np.float32), [0, 2, 3], codes=Y.astype(np.uint32), curves="precision"
    ),
    "one_vs_rest placements": lambda k: k.one_vs_rest(
        PROBA.astype(np.float32), [0, 2, 3], codes=Y.astype(np.uint32), curves="placements"
    ),
    "one_vs_rest_of_probabilities": lambda k: k.one_vs_rest_of_probabilities(
        PROBA.astype(np.float32), [0, 2, 3], Y.astype(np.uint32), curves="precision"
    ),
    "one_vs_rest_of_probabilities by columns": lambda k: k.one_vs_rest_of_probabilities(
        np.asfortranarray(PROBA.astype(np.float32)), [3, 1], Y.astype(np.uint32), curves=False
    ),
    "one_vs_rest_of_probabilities weighted": lambda k: k.one_vs_rest_of_probabilities(
        PROBA, [0, 1, 2, 3], Y.astype(np.uint32), W, curves=True
    ),
    "one_vs_rest_of_probabilities not summing to 1": lambda k: k.one_vs_rest_of_probabilities(
        (PROBA * 1.001).astype(np.float32), [0], Y.astype(np.uint32)
    ),
    "class_ranking": lambda k: k.class_ranking(PROBA.astype(np.float32), Y.astype(np.uint32), None, "precision"),
    "class_ranking tied": lambda k: k.class_ranking(np.round(PROBA, 1).astype(np.float32), Y.astype(np.uint32)),
    "class_ranking by columns": lambda k: k.class_ranking(
        np.asfortranarray(np.round(PROBA, 1)), Y.astype(np.uint32), None, False
    ),
    "class_ranking weighted": lambda k: k.class_ranking(np.round(PROBA, 1), Y.astype(np.uint32), W, True),
    "binned_one_vs_rest": lambda k: k.binned_one_vs_rest(np.round(PROBA, 2), Y.astype(np.uint32), 16, W),
    "rank_histogram": lambda k: k.rank_histogram(np.round(PROBA, 1), Y.astype(np.uint32), W),
    "row_sum_range": lambda k: k.row_sum_range(PROBA),
    "one_vs_one": lambda k: k.one_vs_one(np.round(PROBA, 1).astype(np.float32), Y.astype(np.uint32)),
    "evaluate_proba_groups": lambda k: k.evaluate_proba_groups(
        Y, np.ascontiguousarray(PROBA), np.array([0, 40, 41, 300]), P, W, keep_confidence=True, n_bins=7
    ),
    "rank_histogram_groups": lambda k: k.rank_histogram_groups(
        np.round(PROBA, 1), Y.astype(np.uint32), np.array([0, 40, 40, 300]), W
    ),
    "group_positions": lambda k: k.group_positions((Y * 7 % 5).astype(np.uint32), 6),
    "grouped_confusion": lambda k: k.grouped_confusion(Y * 5 % 7 - 3, Y, P, W, max_cells=1000),
    "scatter_rows": lambda k: k.scatter_rows(PROBA, np.random.default_rng(3).permutation(PROBA.shape[0])),
    "philox4x32_blocks": lambda k: k.philox4x32_blocks(
        np.random.default_rng(4).integers(0, 2**32, (50, 4), dtype=np.uint32), (7, 2**32 - 1)
    ),
    "replicate_ranking": lambda k: k.replicate_ranking(
        Y % 2 == 1, np.round(PROBA[:, 0].astype(np.float64), 2), W, 5, 3, 9
    ),
    "row_placements": lambda k: k.row_placements(Y % 2 == 1, np.round(PROBA[:, 0].astype(np.float64), 2)),
    "paired_placements": lambda k: k.paired_placements(
        Y % 2 == 1, np.round(PROBA[:, 0].astype(np.float64), 2), PROBA[:, 1].astype(np.float32)
    ),
    "poisson_weights": lambda k: k.poisson_weights(np.arange(300, dtype=np.uint64) * np.uint64(2**33 + 1), 9, 13),
    "multinomial_draws": lambda k: k.multinomial_draws(
        np.array([3, 0, 97, 4_000, 12, 10**9], dtype=np.uint64), np.array([3, 6], dtype=np.uint64), 70, 9, 2**35 + 1
    ),
    "walk_cell_weights": lambda k: k.walk_cell_weights(
        np.random.default_rng(5).integers(0, 9, (7, 5)).astype(np.float64), np.array([0, 2, 3, 6, 9], np.uint64), 5
    ),
    "draw_cell_walks": lambda k: k.draw_cell_walks(
        np.array([3, 1, 40, 7, 2], np.uint64), np.array([0, 2, 3, 6, 9], np.uint64), 5, 60, 70, 2**33 + 5
    ),
    "replicate_sums": lambda k: k.replicate_sums(
        np.ascontiguousarray(PROBA[:, :3], dtype=np.float64),
        [(2, (Y % 3 * 2).astype(np.uint32)), (1, 6)],
        np.arange(PROBA.shape[0], dtype=np.uint64) * np.uint64(3),
        5,
        10,
        7,
    ),
    "grouped_binned_histograms": lambda k: k.grouped_binned_histograms(
        np.round(PROBA, 2), Y.astype(np.uint32), np.array([0, 40, 40, 300]), 16, W
    ),
}


def same(a: Any, b: Any, what: str) -> None:
    if isinstance(a, list):  # one result per class or pair
        assert isinstance(b, list) and len(a) == len(b), what
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            pairs = zip(x, y, strict=True) if isinstance(x, tuple) and not hasattr(x, "_fields") else [(x, y)]
            for u, v in pairs:
                assert type(u) is type(v), what
                for field, p, q in zip(u._fields, u, v, strict=True):
                    same(p, q, f"{what}[{i}].{field}")
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert isinstance(a, np.ndarray) and isinstance(b, np.ndarray), what
        assert a.dtype == b.dtype and a.shape == b.shape, what
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-12, atol=1e-15, err_msg=what)
    elif isinstance(a, (bool, int)):
        assert type(a) is type(b) and a == b, what
    elif a is None:
        assert b is None, what
    elif hasattr(a, "_fields"):  # a result inside a result
        assert type(a) is type(b), what
        for field, p, q in zip(a._fields, a, b, strict=True):
            same(p, q, f"{what}.{field}")
    else:
        assert isinstance(a, float) and isinstance(b, float), what
        assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-15), what


def test_every_kernel_is_called_here() -> None:
    assert {name.split()[0] for name in CALLS} == set(protocol_members(_kernels.Kernels))  # name, then a variant


@pytest.mark.parametrize("name", sorted(CALLS))
def test_results_are_the_same_named_tuples(name: str) -> None:
    a, b = CALLS[name](core()), CALLS[name](npb)
    assert type(a) is type(b), name
    if isinstance(a, tuple):
        assert type(a).__module__ == "cmetrics._kernels", "results are the named tuples of cmetrics._kernels"
        for field, x, y in zip(a._fields, a, b, strict=True):
            same(x, y, f"{name}.{field}")
    else:
        same(a, b, name)


# --------------------------------------------------------------------------------------
# Errors: the same class for the same bad input

E = np.zeros(0, np.int64)
BAD: list[tuple[str, Callable[[Any], Any], type[Exception]]] = [
    ("confusion lengths", lambda k: k.confusion_matrix(Y, P[:-1]), LengthMismatchError),
    ("confusion empty", lambda k: k.confusion_matrix(E, E), ShapeError),
    ("proba empty", lambda k: k.evaluate_proba(E, PROBA[:0]), ShapeError),
    ("confusion weight", lambda k: k.confusion_matrix(Y[:2], P[:2], np.array([1.0, -1.0])), WeightError),
    (
        "confusion classes",
        lambda k: k.confusion_matrix(np.arange(10), np.arange(10), max_classes=5),
        LimitExceededError,
    ),
    ("codes range", lambda k: k.confusion_matrix_codes(Y, P, 2), ValidationError),
    ("marginals shape", lambda k: k.marginals(np.zeros((2, 3))), ShapeError),
    ("curves name", lambda k: k.binary_ranking(OK, SCORE, None, "recall"), ValidationError),
    ("ovr curves name", lambda k: k.one_vs_rest(PROBA, [0], codes=Y.astype(np.uint32), curves="all"), ValidationError),
    ("row sums non-finite", lambda k: k.row_sum_range(np.array([[0.5, 0.5], [np.inf, 0.0]])), NonFiniteError),
    ("row sums no columns", lambda k: k.row_sum_range(np.zeros((3, 0))), ShapeError),
    ("accuracy shape", lambda k: k.accuracy(np.zeros((0, 0))), ShapeError),
    ("kappa weights", lambda k: k.cohen_kappa(C, "cubic"), ValidationError),
    ("informedness prior shape", lambda k: k.informedness(C, np.full(3, 0.3)), ShapeError),
    ("informedness prior range", lambda k: k.informedness(C, np.full(4, 1.5)), ValidationError),
    ("nit classes", lambda k: k.normalized_information_transfer(C, 0), ValidationError),
    ("table overflow", lambda k: k.matthews_corrcoef(np.array([[1e308, 1e308], [1e308, 1e308]])), WeightError),
    ("proba shape", lambda k: k.evaluate_proba(Y, PROBA[:-1]), ShapeError),
    ("proba entry", lambda k: k.evaluate_proba(Y[:1], np.array([[1.5, -0.5, 0.0, 0.0]])), ProbabilityError),
    ("proba sum", lambda k: k.evaluate_proba(Y[:1], np.array([[0.5, 0.1, 0.0, 0.0]])), ProbabilityError),
    ("proba label", lambda k: k.evaluate_proba(np.array([7]), PROBA[:1]), LabelError),
    ("proba y_pred lengths", lambda k: k.evaluate_proba(Y, PROBA, P[:-1]), LengthMismatchError),
    ("ranking nan", lambda k: k.binary_ranking(OK[:2], np.array([0.1, np.nan])), NonFiniteError),
    ("ranking lengths", lambda k: k.binary_ranking(OK[:2], SCORE[:3]), LengthMismatchError),
    ("ranking empty", lambda k: k.binary_ranking(OK[:0], SCORE[:0]), ShapeError),
    ("ranking weights", lambda k: k.score_groups(OK[:2], SCORE[:2], np.array([np.inf, 1.0])), WeightError),
    ("binary proba groups columns", lambda k: k.binary_proba_groups(OK, PROBA), ValidationError),
    ("binary proba groups lengths", lambda k: k.binary_proba_groups(OK[1:], PROBA[:, :2]), LengthMismatchError),
    ("binary proba groups empty", lambda k: k.binary_proba_groups(OK[:0], PROBA[:0, :2]), ShapeError),
    (
        "groups order",
        lambda k: k.walk_groups((np.array([2.0, 1.0]), np.ones(2, np.uint64), np.ones(2, np.uint64), None, None)),
        ValidationError,
    ),
    ("kendall nan", lambda k: k.kendall_counts(np.array([1.0, np.nan]), np.array([1.0, 2.0])), NonFiniteError),
    (
        "multinomial total",
        lambda k: k.multinomial_draws(np.array([2**52, 2**52], np.uint64), np.array([2], np.uint64), 0, 1, 0),
        ValidationError,
    ),
    (
        "cell walk columns",
        lambda k: k.walk_cell_weights(np.ones((2, 3)), np.arange(2, dtype=np.uint64), 2),
        ValidationError,
    ),
    ("cell walk empty", lambda k: k.walk_cell_weights(np.ones((2, 0)), np.zeros(0, np.uint64), 2), ValidationError),
    (
        "cell walk order",
        lambda k: k.walk_cell_weights(np.ones((2, 2)), np.array([1, 0], np.uint64), 2),
        ValidationError,
    ),
    (
        "cell walk range",
        lambda k: k.walk_cell_weights(np.ones((2, 2)), np.array([0, 4], np.uint64), 2),
        ValidationError,
    ),
    (
        "cell draws counts",
        lambda k: k.draw_cell_walks(np.ones(3, np.uint64), np.arange(2, dtype=np.uint64), 2, 0, 1, 0),
        ValidationError,
    ),
    (
        "cell draws order",
        lambda k: k.draw_cell_walks(np.ones(2, np.uint64), np.array([1, 0], np.uint64), 2, 0, 1, 0),
        ValidationError,
    ),
    (
        "cell draws replicates",
        lambda k: k.draw_cell_walks(np.ones(2, np.uint64), np.arange(2, dtype=np.uint64), 2, 2**32 - 1, 2, 0),
        ValidationError,
    ),
    (
        "cell draws total",
        lambda k: k.draw_cell_walks(np.full(2, 2**52, np.uint64), np.arange(2, dtype=np.uint64), 2, 0, 1, 0),
        ValidationError,
    ),
    ("row values code", lambda k: k.proba_row_values(np.full(300, 4), PROBA), LabelError),
    ("row values lengths", lambda k: k.proba_row_values(Y[:-1], PROBA), ShapeError),
    ("row values weights", lambda k: k.proba_row_values(Y, PROBA, W[:-1]), LengthMismatchError),
    ("row values dtype", lambda k: k.proba_row_values(Y, PROBA.astype(np.float16)), UnsupportedDtypeError),
    ("top labels columns", lambda k: k.top_labels(PROBA[:, :0]), ShapeError),
    ("top labels dtype", lambda k: k.top_labels(PROBA.astype(np.int64)), UnsupportedDtypeError),
    ("state weights", lambda k: k.GroupState(True).add(OK[:2], SCORE[:2]), ValidationError),
    ("state binned range", lambda k: k.GroupState(False).add(OK[:1], np.array([1.5]), None, 8), ValidationError),
    ("curve drop", lambda k: k.threshold_counts(OK, SCORE, None, "some"), ValidationError),  # type: ignore[arg-type]
    ("curve nan", lambda k: k.threshold_counts(OK[:2], np.array([0.1, np.nan])), NonFiniteError),
    ("ovr code", lambda k: k.one_vs_rest(PROBA, [0], codes=np.full(300, 4, np.uint32)), ShapeError),
    ("ovr column", lambda k: k.one_vs_rest(PROBA, [4], codes=Y.astype(np.uint32)), ShapeError),
    ("ovr lengths", lambda k: k.one_vs_rest(PROBA, [0], codes=Y[:-1].astype(np.uint32)), LengthMismatchError),
    ("ovr empty", lambda k: k.one_vs_rest(PROBA[:0], [0], codes=Y[:0].astype(np.uint32)), ShapeError),
    ("ovr weights", lambda k: k.one_vs_rest(PROBA, [0], codes=Y.astype(np.uint32), sample_weight=-W), WeightError),
    ("ovr truth", lambda k: k.one_vs_rest(PROBA, [0]), ValidationError),
    (
        "class ranking nan",
        lambda k: k.class_ranking(np.full((2, 2), np.nan, np.float32), np.zeros(2, np.uint32)),
        NonFiniteError,
    ),
    ("class ranking code", lambda k: k.class_ranking(PROBA, np.full(300, 4, np.uint32)), ShapeError),
    ("class ranking weights", lambda k: k.class_ranking(PROBA, Y.astype(np.uint32), -W), WeightError),
    (
        "class ranking curves",
        lambda k: k.class_ranking(PROBA, Y.astype(np.uint32), None, "some"),  # type: ignore[arg-type]
        ValidationError,
    ),
    (
        "ovr probabilities nan",
        lambda k: k.one_vs_rest_of_probabilities(np.full((2, 2), np.nan, np.float32), [0], np.zeros(2, np.uint32)),
        NonFiniteError,
    ),
    (
        "ovr probabilities weights",
        lambda k: k.one_vs_rest_of_probabilities(PROBA, [0], Y.astype(np.uint32), -W),
        WeightError,
    ),
    (
        "ovr probabilities lengths",
        lambda k: k.one_vs_rest_of_probabilities(PROBA.astype(np.float32), [0], Y[:-1].astype(np.uint32)),
        LengthMismatchError,
    ),
    (
        "ovr probabilities column",
        lambda k: k.one_vs_rest_of_probabilities(PROBA.astype(np.float32), [4], Y.astype(np.uint32)),
        ShapeError,
    ),
    (
        "ovr nan",
        lambda k: k.one_vs_rest(np.full((2, 2), np.nan), [0], indicator=np.ones((2, 2), np.bool_)),
        NonFiniteError,
    ),
    ("multilabel shapes", lambda k: k.multilabel_counts(OK.reshape(3, 100), OK.reshape(100, 3)), ValidationError),
    (
        "multilabel weights",
        lambda k: k.multilabel_counts(OK.reshape(100, 3), OK.reshape(100, 3), -W[:100]),
        WeightError,
    ),
    ("binned range", lambda k: k.binned_one_vs_rest(PROBA * 2, Y.astype(np.uint32), 8), ValidationError),
    ("binned bins", lambda k: k.binned_one_vs_rest(PROBA, Y.astype(np.uint32), 0), ValidationError),
    ("rank code", lambda k: k.rank_histogram(PROBA, np.full(300, 4, np.uint32)), ShapeError),
    ("rank weights", lambda k: k.rank_histogram(PROBA, Y.astype(np.uint32), -W), WeightError),
    ("ovo code", lambda k: k.one_vs_one(PROBA, np.full(300, 99, np.uint32)), ShapeError),
    (
        "proba groups offsets",
        lambda k: k.evaluate_proba_groups(Y, np.ascontiguousarray(PROBA), np.array([0, 40, 40, 300])),
        ShapeError,
    ),
    (
        "proba groups order",
        lambda k: k.evaluate_proba_groups(Y, np.asfortranarray(PROBA), np.array([0, 300])),
        ShapeError,
    ),
    (
        "proba groups row",
        lambda k: k.evaluate_proba_groups(Y, np.ascontiguousarray(PROBA) * 2, np.array([0, 100, 300])),
        ProbabilityError,
    ),
    (
        "rank groups offsets",
        lambda k: k.rank_histogram_groups(PROBA, Y.astype(np.uint32), np.array([0, 301])),
        ShapeError,
    ),
    ("group code", lambda k: k.group_positions(np.array([0, 3, 1], np.uint32), 3), ValidationError),
    ("grouped weight", lambda k: k.grouped_confusion(Y, Y, P, -W, max_cells=1000), WeightError),
    ("grouped length", lambda k: k.grouped_confusion(Y[:5], Y, P, max_cells=1000), LengthMismatchError),
    ("group count", lambda k: k.group_positions(np.zeros(2, np.uint32), 1 << 40), ValidationError),
    ("scatter position", lambda k: k.scatter_rows(PROBA[:3], np.array([0, 1, 3])), ValidationError),
    ("scatter length", lambda k: k.scatter_rows(PROBA[:3], np.array([0, 1])), ValidationError),
    ("scatter twice", lambda k: k.scatter_rows(PROBA[:3], np.array([0, 2, 0])), ValidationError),
    (
        "segments offsets",
        lambda k: k.add_segments([k.GroupState(False)], Y == 0, np.ascontiguousarray(PROBA[:, 0]), SEGMENTS),
        ShapeError,
    ),
    (
        "segments weights",
        lambda k: k.add_segments(
            [k.GroupState(True) for _ in range(3)], Y == 0, np.ascontiguousarray(PROBA[:, 0]), SEGMENTS
        ),
        ValidationError,
    ),
    (
        "segments lengths",
        lambda k: k.add_segments(
            [k.GroupState(False) for _ in range(3)], Y[:-1] == 0, np.ascontiguousarray(PROBA[:, 0]), SEGMENTS
        ),
        LengthMismatchError,
    ),
    (
        "segments bins",
        lambda k: k.add_segments([k.GroupState(False) for _ in range(3)], Y == 0, PROBA[:, 0] * 2, SEGMENTS, None, 8),
        ValidationError,
    ),
    (
        "union weights",
        _mixed_union,
        ValidationError,
    ),
    (
        "walk union weights",
        lambda k: k.walk_union(_mixed_states(k)),
        ValidationError,
    ),
    (
        "dense range",
        lambda k: k.add_binned_one_vs_rest(PROBA * 2, Y.astype(np.uint32), 8, *_dense_tables(False, 8)),
        ValidationError,
    ),
    (
        "dense shape",
        lambda k: k.add_binned_one_vs_rest(PROBA, Y.astype(np.uint32), 8, *_dense_tables(False, 16)),
        ShapeError,
    ),
    (
        "dense transposed",
        lambda k: k.add_binned_one_vs_rest(
            PROBA, Y.astype(np.uint32), 3, np.zeros((4, 4), np.uint64), np.zeros((4, 4), np.uint64).T
        ),
        ValidationError,
    ),
    (
        "dense weights missing",
        lambda k: k.add_binned_one_vs_rest(PROBA, Y.astype(np.uint32), 8, *_dense_tables(False, 8), W),
        ShapeError,
    ),
    (
        "dense weights extra",
        lambda k: k.add_binned_one_vs_rest(PROBA, Y.astype(np.uint32), 8, *_dense_tables(True, 8)),
        ShapeError,
    ),
    (
        "grouped offsets",
        lambda k: k.grouped_binned_histograms(PROBA, Y.astype(np.uint32), np.array([0, 200, 100, 300]), 8),
        ShapeError,
    ),
    (
        "grouped range",
        lambda k: k.grouped_binned_histograms(PROBA * 2, Y.astype(np.uint32), np.array([0, 300]), 8),
        ValidationError,
    ),
    (
        "grouped cells",
        lambda k: k.grouped_binned_histograms(
            PROBA, Y.astype(np.uint32), np.r_[np.zeros(1 << 16, np.int64), 300], 1 << 10
        ),
        LimitExceededError,
    ),
]


@pytest.mark.parametrize(("what", "call", "error"), BAD, ids=[b[0] for b in BAD])
def test_both_backends_raise_the_same_class(what: str, call: Callable[[Any], Any], error: type[Exception]) -> None:
    raised = []
    for k in (core(), npb):
        with pytest.raises(error) as info:
            call(k)
        raised.append(type(info.value))
    assert raised[0] is raised[1], f"{what}: {raised[0].__name__} (compiled) vs {raised[1].__name__} (numpy)"


def test_zero_weight_batches_are_counted_alike() -> None:
    # A batch whose weights are all zero is a valid count (a streamed batch, a group); the
    # metrics refuse a zero total where they are derived, not the counting kernels.
    for name, call in {
        "confusion_matrix": lambda k: k.confusion_matrix(Y[:9], P[:9], np.zeros(9)),
        "evaluate_proba": lambda k: k.evaluate_proba(Y[:9], np.ascontiguousarray(PROBA[:9]), None, np.zeros(9)),
    }.items():
        got = [call(k) for k in (core(), npb)]
        for a, b in zip(got[0], got[1], strict=True):
            if isinstance(a, np.ndarray):
                np.testing.assert_array_equal(a, b, err_msg=name)
        assert np.sum(got[0][-1] if name == "confusion_matrix" else got[0].weight_sum) == 0


#: The kernels that read a confusion matrix, and how each is called on a table.
TABLE_KERNELS: dict[str, Callable[[Any, Any], Any]] = {
    **{
        name: (lambda k, c, name=name: getattr(k, name)(c))
        for name in (
            "marginals",
            "accuracy",
            "matthews_corrcoef",
            "cohen_kappa",
            "youden_j_per_class",
            "markedness_per_class",
            "informedness",
            "markedness",
            "mutual_information_bits",
            "normalized_information_transfer",
            "entropy_modulated_accuracy",
        )
    },
    "balanced_accuracy": lambda k, c: k.balanced_accuracy(c, False),
}

#: Tables a kernel must refuse, and the class both backends raise. A (2, 8) table holds 16
#: cells, as a 4 x 4 one does: it is refused by its shape, not read as another square.
BAD_TABLES: dict[str, tuple[Any, type[Exception]]] = {
    "1-D": (np.ones(16), ShapeError),
    "3-D": (np.ones((2, 2, 4)), ShapeError),
    "2x8": (np.ones((2, 8)), ShapeError),
    "0x0": (np.ones((0, 0)), ShapeError),
    "3x0": (np.ones((3, 0)), ShapeError),
    "0-D array": (np.array(1.0), ShapeError),
    "int64": (np.ones((4, 4), dtype=np.int64), UnsupportedDtypeError),
    "float32": (np.ones((4, 4), dtype=np.float32), UnsupportedDtypeError),
    "list": ([[1.0, 0.0], [0.0, 1.0]], UnsupportedDtypeError),
    "scalar": (np.float64(1.0), UnsupportedDtypeError),
}


@pytest.mark.parametrize("table", list(BAD_TABLES))
@pytest.mark.parametrize("kernel", list(TABLE_KERNELS))
def test_every_table_kernel_refuses_a_bad_table_alike(kernel: str, table: str) -> None:
    c, error = BAD_TABLES[table]
    messages = []
    for k in (core(), npb):
        with pytest.raises(error) as info:
            TABLE_KERNELS[kernel](k, c)
        assert type(info.value) is error
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("kernel", list(TABLE_KERNELS))
def test_a_fortran_ordered_table_reads_as_its_values(kernel: str) -> None:
    c = np.array([[5.0, 1.0, 0.0], [2.0, 7.0, 1.0], [0.0, 3.0, 9.0]])
    f = np.asfortranarray(c)
    for k in (core(), npb):
        got, want = TABLE_KERNELS[kernel](k, f), TABLE_KERNELS[kernel](k, c)
        fields = zip(got, want, strict=True) if isinstance(want, tuple) else [(got, want)]
        for a, b in fields:
            np.testing.assert_array_equal(a, b)


_CODES = np.array([0, 1, 2, 0, 1, 2], dtype=np.uint32)
_ONE_GROUP = np.array([0, 6], dtype=np.int64)
#: Every other kernel argument that is a matrix, called with a bad one (``m``).
MATRIX_ARGUMENTS: dict[str, Callable[[Any, Any], Any]] = {
    "one_vs_rest y_score": lambda k, m: k.one_vs_rest(m, [0], codes=_CODES),
    "one_vs_rest indicator": lambda k, m: k.one_vs_rest(np.ones((6, 3)), [0], indicator=m),
    "rank_histogram": lambda k, m: k.rank_histogram(m, _CODES),
    "row_sum_range": lambda k, m: k.row_sum_range(m),
    "rank_histogram_groups": lambda k, m: k.rank_histogram_groups(m, _CODES, _ONE_GROUP),
    "binned_one_vs_rest": lambda k, m: k.binned_one_vs_rest(m, _CODES, 4),
    "grouped_binned_histograms": lambda k, m: k.grouped_binned_histograms(m, _CODES, _ONE_GROUP, 4),
    "add_binned_one_vs_rest": lambda k, m: k.add_binned_one_vs_rest(
        m, _CODES, 4, np.zeros((3, 5), np.uint64), np.zeros((3, 5), np.uint64)
    ),
    "one_vs_one": lambda k, m: k.one_vs_one(m, _CODES),
    "evaluate_proba": lambda k, m: k.evaluate_proba(_CODES.astype(np.int64), m),
    "top_labels": lambda k, m: k.top_labels(m),
    "proba_row_values": lambda k, m: k.proba_row_values(_CODES.astype(np.int64), m),
    "evaluate_proba_groups": lambda k, m: k.evaluate_proba_groups(_CODES.astype(np.int64), m, _ONE_GROUP),
    "multilabel_counts y_true": lambda k, m: k.multilabel_counts(m, np.ones((6, 3), dtype=bool)),
    "multilabel_counts y_pred": lambda k, m: k.multilabel_counts(np.ones((6, 3), dtype=bool), m),
    "scatter_rows": lambda k, m: k.scatter_rows(m, np.arange(6, dtype=np.int64)),
    "encode_strings": lambda k, m: k.encode_strings(m, np.ones((6, 2), dtype=np.uint32)),
}

#: Matrices of the wrong number of dimensions (of the dtype each kernel takes), and objects
#: that are not arrays.
BAD_MATRICES: dict[str, tuple[Callable[[np.dtype[Any]], Any], type[Exception]]] = {
    "1-D": (lambda dt: np.ones(6, dtype=dt), ShapeError),
    "3-D": (lambda dt: np.ones((6, 3, 1), dtype=dt), ShapeError),
    "0-D": (lambda dt: np.array(1, dtype=dt), ShapeError),
    "scalar": (lambda dt: np.float64(1.0), UnsupportedDtypeError),
}


def _dtype_of(argument: str) -> np.dtype[Any]:
    if argument.startswith(("multilabel", "one_vs_rest indicator")):
        return np.dtype(bool)
    return np.dtype(np.uint32) if argument == "encode_strings" else np.dtype(np.float64)


@pytest.mark.parametrize("matrix", list(BAD_MATRICES))
@pytest.mark.parametrize("argument", list(MATRIX_ARGUMENTS))
def test_every_matrix_argument_is_refused_alike(argument: str, matrix: str) -> None:
    make, error = BAD_MATRICES[matrix]
    for k in (core(), npb):
        with pytest.raises(error) as info:
            MATRIX_ARGUMENTS[argument](k, make(_dtype_of(argument)))
        assert type(info.value) is error, f"{argument}: {type(info.value).__name__}"


@pytest.mark.skipif(not cmetrics.rust_available(), reason="reads the compiled extension")
def test_no_array_builder_is_called_out_of_line() -> None:
    """A closure passed to ``array::from_fn`` does not inherit its function's ``target_feature``:
    one that builds AVX-512 registers is then compiled without AVX-512, called out of line
    (``core::array::try_from_fn``), and moves every register through the stack (the Philox key
    schedule once ran three times slower so). The extension's symbol table (read from the file:
    release builds keep it) must name the out-of-line kernels and no such builder."""
    data = Path(core().__file__).read_bytes()
    assert b"row_weights16" in data, "the symbol table is missing: the check below would prove nothing"
    assert b"try_from_fn" not in data

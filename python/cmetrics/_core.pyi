"""Stub of the compiled extension ``cmetrics._core`` (rust/py)."""

from typing import Any

import numpy as np
import numpy.typing as npt

__version__: str
SEQUENTIAL_BELOW: int

_Labels = npt.NDArray[np.int32] | npt.NDArray[np.int64]
_F64 = npt.NDArray[np.float64]
_Counted = tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64], _F64 | None]

def confusion_matrix(
    y_true: _Labels,
    y_pred: _Labels,
    sample_weight: _F64 | None = None,
    *,
    max_classes: int = 4096,
    n_threads: int = 0,
    min_parallel: int | None = None,
) -> _Counted:
    """Count the confusion matrix over the labels that occur."""

def confusion_matrix_codes(
    y_true: _Labels, y_pred: _Labels, n_classes: int, sample_weight: _F64 | None = None, *, n_threads: int = 0
) -> _Counted:
    """Count codes in 0..n_classes; every class keeps its row."""

def encode_strings(
    a: npt.NDArray[np.uint32], b: npt.NDArray[np.uint32], *, max_classes: int = 4096
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint64], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    """Encode two (n, width) UCS-4 arrays to shared codes sorted by code point."""

def encode_objects(
    a: npt.NDArray[np.object_], b: npt.NDArray[np.object_], *, max_classes: int = 4096
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint64], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    """Encode two object arrays of str to shared codes sorted by code point (keeps the GIL)."""

def read_probe(words: npt.NDArray[np.uint64], *, n_threads: int = 0) -> int:
    """Sum of u64 words: the read-bandwidth probe."""

def marginals(c: _F64) -> tuple[_F64, _F64, _F64, float]:
    """(tp, true_sum, pred_sum, total)."""

def precision_recall_fbeta(tp: _F64, true_sum: _F64, pred_sum: _F64, beta: float) -> tuple[_F64, _F64, _F64]:
    """Per-class precision, recall and F-beta, NaN where 0/0."""

def accuracy(c: _F64) -> float: ...
def balanced_accuracy(c: _F64, adjusted: bool) -> tuple[float, int]: ...
def matthews_corrcoef(c: _F64) -> float: ...
def cohen_kappa(c: _F64, weights: str | None = None) -> float: ...
def youden_j_per_class(c: _F64) -> _F64: ...
def markedness_per_class(c: _F64) -> _F64: ...
def informedness(c: _F64, prior: _F64 | None = None) -> float: ...
def markedness(c: _F64) -> float: ...
def mutual_information_bits(c: _F64) -> float: ...
def normalized_information_transfer(c: _F64, n_classes: int | None = None) -> float: ...
def entropy_modulated_accuracy(c: _F64) -> float: ...
def available_threads() -> int: ...
def _panic_for_tests() -> None: ...

def evaluate_proba(
    y_true: _Labels,
    y_proba: npt.NDArray[np.float32] | npt.NDArray[np.float64],
    y_pred: _Labels | None = None,
    sample_weight: _F64 | None = None,
    *,
    validate: bool = True,
    atol: float | None = None,
    entropy: bool = True,
    scores: bool = True,
    n_bins: int = 15,
    keep_confidence: bool = False,
    hard: bool = True,
    n_threads: int = 0,
) -> dict[str, object]:
    """One pass over y_proba: every accumulator of the probabilistic metrics."""

def binary_ranking(
    positive: npt.NDArray[np.bool_],
    score: npt.NDArray[np.float64],
    sample_weight: npt.NDArray[np.float64] | None = None,
    curves: bool = True,
    n_threads: int = 0,
) -> dict[str, Any]: ...
Groups = tuple[
    npt.NDArray[np.float64],
    npt.NDArray[np.uint64],
    npt.NDArray[np.uint64],
    npt.NDArray[np.float64] | None,
    npt.NDArray[np.float64] | None,
]

def score_groups(
    positive: npt.NDArray[np.bool_],
    score: npt.NDArray[np.float64],
    sample_weight: npt.NDArray[np.float64] | None = None,
    n_threads: int = 0,
) -> Groups: ...
def merge_groups(a: Groups, b: Groups) -> Groups: ...
def walk_groups(groups: Groups, curves: bool = True) -> dict[str, Any]: ...
def kendall_counts(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], n_threads: int = 0
) -> dict[str, Any]: ...

class GroupState:
    """The exact streaming ranking state (tie groups of every row added)."""

    def __init__(self, weighted: bool, min_buffer: int | None = None) -> None: ...
    @property
    def weighted(self) -> bool: ...
    @property
    def nbytes(self) -> int: ...
    def __len__(self) -> int: ...
    def add(
        self,
        positive: npt.NDArray[np.bool_],
        score: npt.NDArray[np.float64],
        sample_weight: npt.NDArray[np.float64] | None = None,
        bins: int | None = None,
        n_threads: int = 0,
    ) -> None: ...
    def merge(self, other: GroupState, n_threads: int = 0) -> None: ...
    def absorb(self, groups: Groups, n_threads: int = 0) -> None: ...
    def groups(self, n_threads: int = 0) -> Groups: ...
    def walk(self, curves: bool = True, n_threads: int = 0) -> dict[str, Any]: ...

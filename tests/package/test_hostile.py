"""Hostile and careless inputs thrown at every public function, on both backends.

Whatever the input (dtypes, shapes, strides, byte order, NaN and infinities, extreme values,
empty and one-row inputs, lengths that disagree), a call either returns or raises one of the
documented exceptions (``cmetrics.exceptions.ValidationError`` and its subclasses), the same
class on both backends, and no ``RuntimeWarning`` escapes. When both backends return, they
agree. ``test_every_public_name_is_covered`` fails when a public function is added without an
entry here.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cmetrics
from cmetrics.exceptions import InternalError, ValidationError
from tests.conftest import BACKENDS

# -- hostile arrays -----------------------------------------------------------------------------

EXTREMES = [0, 1, -1, 2, 3, 2**31, -(2**31), 2**53 + 1, 2**62, 2**63 - 1, -(2**63)]
FLOATS = [0.0, -0.0, 0.5, 1.0, 1e-300, 1e300, -1e300, float("nan"), float("inf"), float("-inf"), 2.0**63, 1e-320]


@st.composite
def vectors(draw: st.DrawFn, n: int) -> Any:
    """A 1-D array-like of about ``n`` entries, of any dtype, layout and container."""
    kind = draw(
        st.sampled_from(
            [
                "int",
                "bool",
                "float",
                "float32",
                "float16",
                "uint64",
                "str",
                "object",
                "mixed",
                "bytes",
                "complex",
                "list",
                "bigendian",
                "strided",
                "reversed",
                "column",
                "row",
                "scalar",
                "none",
                "wrong-length",
                "empty",
            ]
        )
    )
    m = n + draw(st.sampled_from([0, 0, 0, 1])) if kind == "wrong-length" else n
    if kind == "empty":
        return np.zeros(0)
    if kind == "scalar":
        return draw(st.sampled_from([0, 1.5, "a"]))
    if kind == "none":
        return None
    ints = draw(st.lists(st.sampled_from(EXTREMES[:5] if draw(st.booleans()) else EXTREMES), min_size=m, max_size=m))
    floats = draw(st.lists(st.sampled_from(FLOATS[:4] if draw(st.booleans()) else FLOATS), min_size=m, max_size=m))
    if kind in ("int", "wrong-length"):
        return np.array(ints, dtype=np.int64)
    if kind == "bool":
        return np.array([i % 2 == 0 for i in ints])
    if kind == "float":
        return np.array(floats)
    if kind == "float32":
        with np.errstate(over="ignore"):
            return np.array(floats, dtype=np.float32)
    if kind == "float16":
        with np.errstate(over="ignore"):
            return np.array(floats, dtype=np.float16)
    if kind == "uint64":
        return np.array([abs(i) for i in ints], dtype=np.uint64)
    if kind == "str":
        return np.array([str(i % 3) + draw(st.sampled_from(["", "\x00", "é", "\n"])) for i in ints])
    if kind == "object":
        return np.array([draw(st.sampled_from(["a", "b", "\ud800", None, 1, [1]])) for _ in range(m)], dtype=object)
    if kind == "mixed":
        return [draw(st.sampled_from([0, "a", 1.5, None])) for _ in range(m)]
    if kind == "bytes":
        return np.array([b"a"] * m)
    if kind == "complex":
        return np.array(floats, dtype=complex)
    if kind == "list":
        return [i % 3 for i in ints]
    if kind == "bigendian":
        return np.array([i % 4 for i in ints], dtype=">i4")
    if kind == "strided":
        return np.repeat(np.array([i % 3 for i in ints]), 2)[::2]
    if kind == "reversed":
        return np.array(floats)[::-1]
    if kind == "column":
        return np.array([i % 3 for i in ints]).reshape(-1, 1)
    return np.array([i % 3 for i in ints]).reshape(1, -1)  # row


@st.composite
def matrices(draw: st.DrawFn, n: int) -> Any:
    """A probability-like matrix of ``n`` rows: normalised, or broken in some way."""
    k = draw(st.integers(1, 4))
    kind = draw(
        st.sampled_from(
            [
                "softmax",
                "softmax",
                "fortran",
                "float32",
                "float16",
                "nan",
                "negative",
                "big",
                "unnormalised",
                "int",
                "1-D",
                "3-D",
                "wrong-rows",
                "object",
                "strided",
                "empty",
            ]
        )
    )
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    p = rng.dirichlet(np.ones(k), max(n, 1))[:n]
    if kind == "fortran":
        return np.asfortranarray(p)
    if kind == "float32":
        return p.astype(np.float32)
    if kind == "float16":
        return p.astype(np.float16)
    if kind == "nan":
        q = p.copy()
        if q.size:
            q.flat[0] = np.nan
        return q
    if kind == "negative":
        return p - 0.5
    if kind == "big":
        return p * 1e300
    if kind == "unnormalised":
        return p * 2
    if kind == "int":
        return (p > 0.5).astype(np.int64)
    if kind == "1-D":
        return p[:, 0]
    if kind == "3-D":
        return p[..., None]
    if kind == "wrong-rows":
        return np.vstack([p, p[:1]]) if n else p
    if kind == "object":
        return p.astype(object)
    if kind == "strided":
        return np.repeat(p, 2, axis=1)[:, ::2]
    if kind == "empty":
        return np.zeros((n, 0))
    return p


@st.composite
def weights(draw: st.DrawFn, n: int) -> Any:
    choice = draw(
        st.sampled_from(
            [
                "none",
                "none",
                "ones",
                "ints",
                "tiny",
                "huge",
                "zero",
                "negative",
                "nan",
                "wrong-length",
                "2-D",
                "str",
                "bool",
            ]
        )
    )
    if choice == "none":
        return None
    values = {
        "ones": np.ones(n),
        "ints": np.arange(n) % 3,
        "tiny": np.full(n, 1e-300),
        "huge": np.full(n, 1e300),
        "zero": np.zeros(n),
        "negative": -np.ones(n),
        "nan": np.full(n, np.nan),
        "wrong-length": np.ones(n + 1),
        "2-D": np.ones((n, 2)),
        "str": np.array(["a"] * n),
        "bool": np.ones(n, dtype=bool),
    }
    return values[choice]


# -- the public surface -------------------------------------------------------------------------

Call = Callable[[st.DataObject, str], Any]


def hard(fn: Callable[..., Any], **kw: Any) -> Call:
    def call(data: st.DataObject, backend: str) -> Any:
        n = data.draw(st.integers(0, 6))
        return fn(
            data.draw(vectors(n)), data.draw(vectors(n)), sample_weight=data.draw(weights(n)), **kw, backend=backend
        )

    return call


def proba(fn: Callable[..., Any], **kw: Any) -> Call:
    def call(data: st.DataObject, backend: str) -> Any:
        n = data.draw(st.integers(0, 6))
        p = data.draw(matrices(n))
        k = p.shape[1] if isinstance(p, np.ndarray) and p.ndim == 2 else 2
        labels = data.draw(st.sampled_from([None, list(range(k)), list(range(k + 1)), ["a"] * k]))
        return fn(data.draw(vectors(n)), p, labels=labels, sample_weight=data.draw(weights(n)), **kw, backend=backend)

    return call


def ranking(fn: Callable[..., Any], **kw: Any) -> Call:
    def call(data: st.DataObject, backend: str) -> Any:
        n = data.draw(st.integers(0, 6))
        return fn(
            data.draw(vectors(n)), data.draw(vectors(n)), sample_weight=data.draw(weights(n)), **kw, backend=backend
        )

    return call


def ranking_any(fn: Callable[..., Any], **kw: Any) -> Call:
    """Binary, multiclass (a score matrix) or multilabel (an indicator matrix) ranking input."""

    def call(data: st.DataObject, backend: str) -> Any:
        n = data.draw(st.integers(0, 6))
        y_true = data.draw(st.one_of(vectors(n), matrices(n)))
        y_score = data.draw(st.one_of(vectors(n), matrices(n)))
        extra = {name: data.draw(st.sampled_from(options)) for name, options in kw.items()}
        return fn(y_true, y_score, sample_weight=data.draw(weights(n)), **extra, backend=backend)

    return call


def label_ranks(fn: Callable[..., Any], **kw: Any) -> Call:
    def call(data: st.DataObject, backend: str) -> Any:
        n = data.draw(st.integers(0, 6))
        return fn(
            data.draw(st.one_of(matrices(n), vectors(n))),
            data.draw(matrices(n)),
            sample_weight=data.draw(weights(n)),
            **kw,
            backend=backend,
        )

    return call


def curve_area(data: st.DataObject, backend: str) -> Any:
    n = data.draw(st.integers(0, 6))
    return cmetrics.auc(data.draw(vectors(n)), data.draw(vectors(n)))


def at_thresholds(data: st.DataObject, backend: str) -> Any:
    n = data.draw(st.integers(0, 6))
    return cmetrics.metric_at_thresholds(
        data.draw(vectors(n)), data.draw(vectors(n)), cmetrics.accuracy_score, sample_weight=data.draw(weights(n))
    )


def kendall(data: st.DataObject, backend: str) -> Any:
    n = data.draw(st.integers(0, 6))
    return cmetrics.kendall_tau(
        data.draw(vectors(n)),
        data.draw(vectors(n)),
        variant=data.draw(st.sampled_from(["b", "c", "d"])),
        backend=backend,
    )


def risk_coverage(data: st.DataObject, backend: str) -> Any:
    n = data.draw(st.integers(0, 6))
    return cmetrics.risk_coverage_curve(
        data.draw(vectors(n)), data.draw(vectors(n)), sample_weight=data.draw(weights(n))
    )


def entropy(data: st.DataObject, backend: str) -> Any:
    n = data.draw(st.integers(0, 6))
    return cmetrics.entropy_score(data.draw(matrices(n)), sample_weight=data.draw(weights(n)), backend=backend)


def table(data: st.DataObject, backend: str) -> Any:
    m = data.draw(
        st.sampled_from(
            [
                [[1, 0], [2, 3]],
                [[0, 0], [0, 0]],
                [[1e308, 1e308], [1e308, 1]],
                "abc",
                [[1, 2]],
                [[np.nan]],
                [[-1, 0], [0, 1]],
                [[1, 0], [0]],
                np.eye(3),
            ]
        )
    )
    cm = cmetrics.ConfusionMatrix(m, labels=data.draw(st.sampled_from([None, ["a", "b"], [0, 0]])), backend=backend)
    return cm.report()


def purity_matrix(data: st.DataObject, backend: str) -> Any:
    return cmetrics.purity_from_matrix(
        data.draw(st.sampled_from([[[1, 0], [0, 1]], "abc", [[1, 0], [0]], [[np.inf]], np.zeros((0, 0)), [[0.5, 0.5]]]))
    )


def selective(data: st.DataObject, backend: str) -> Any:
    n = data.draw(st.integers(0, 6))
    if data.draw(st.booleans()):
        return cmetrics.selective_prediction_scores(
            data.draw(vectors(n)), y_proba=data.draw(matrices(n)), backend=backend
        )
    return cmetrics.selective_prediction_scores(
        data.draw(vectors(n)),
        y_pred=data.draw(vectors(n)),
        confidence=data.draw(vectors(n)),
        sample_weight=data.draw(weights(n)),
        backend=backend,
    )


def correctness(data: st.DataObject, backend: str) -> Any:
    n = data.draw(st.integers(0, 6))
    return cmetrics.correctness(data.draw(vectors(n)), y_proba=data.draw(matrices(n)), backend=backend)


def bootstrap(data: st.DataObject, backend: str) -> Any:
    n = data.draw(st.integers(0, 6))
    kw: dict[str, Any] = {}
    if data.draw(st.booleans()):
        kw["y_proba"] = data.draw(matrices(n))
    else:
        kw["y_pred"] = data.draw(vectors(n))
    return cmetrics.bootstrap(
        data.draw(vectors(n)),
        sample_weight=data.draw(weights(n)),
        n_resamples=data.draw(st.sampled_from([1, 7, 0])),
        method=data.draw(st.sampled_from(["percentile", "basic", "normal"])),
        **kw,
        backend=backend,
    )


def compare(data: st.DataObject, backend: str) -> Any:
    n = data.draw(st.integers(0, 6))
    a, b = (data.draw(st.one_of(vectors(n), matrices(n))) for _ in range(2))
    return cmetrics.compare(data.draw(vectors(n)), a=a, b=b, n_resamples=5, backend=backend)


def delong_test(data: st.DataObject, backend: str) -> Any:
    n = data.draw(st.integers(0, 6))
    return cmetrics.delong_test(data.draw(vectors(n)), data.draw(vectors(n)), data.draw(vectors(n)), backend=backend)


def mcnemar(data: st.DataObject, backend: str) -> Any:
    n = data.draw(st.integers(0, 6))
    return cmetrics.mcnemar(data.draw(vectors(n)), data.draw(vectors(n)), data.draw(vectors(n)))


def evaluate(data: st.DataObject, backend: str) -> Any:
    n = data.draw(st.integers(0, 6))
    kw: dict[str, Any] = {}
    if data.draw(st.booleans()):
        kw["y_proba"] = data.draw(matrices(n))
    if data.draw(st.booleans()):
        kw["y_pred"] = data.draw(vectors(n))
    if "y_proba" not in kw and data.draw(st.booleans()):
        kw["confidence"] = data.draw(vectors(n))
    ranking = data.draw(st.sampled_from(["exact", "approximate", "off", "no"]))
    return cmetrics.evaluate(
        data.draw(vectors(n)),
        sample_weight=data.draw(weights(n)),
        ranking=ranking,
        n_bins=data.draw(st.sampled_from([1, 15, 0])),
        **kw,
        backend=backend,
    ).to_dict()


def evaluator(data: st.DataObject, backend: str) -> Any:
    ev = cmetrics.Evaluator(
        n_classes=data.draw(st.sampled_from([None, 2, 3])),
        backend=backend,
        ranking=data.draw(st.sampled_from(["exact", "approximate", "off"])),
    )
    for _ in range(data.draw(st.integers(1, 3))):
        n = data.draw(st.integers(0, 5))
        if data.draw(st.booleans()):
            ev.update(data.draw(vectors(n)), y_proba=data.draw(matrices(n)))
        else:
            ev.update(data.draw(vectors(n)), y_pred=data.draw(vectors(n)), sample_weight=data.draw(weights(n)))
    blob = ev.to_bytes()
    if data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(blob) - 1))
        blob = blob[:i] + bytes([blob[i] ^ 0xFF]) + blob[i + 1 :]
    return cmetrics.Evaluator.from_bytes(blob).report().to_dict()


def merge_all(data: st.DataObject, backend: str) -> Any:
    """States from hostile batches, some as objects and some as bytes (forged ones too), and
    things that are not states at all."""
    states: list[Any] = []
    for _ in range(data.draw(st.integers(0, 3))):
        ev = cmetrics.Evaluator(n_classes=data.draw(st.sampled_from([None, 2])), backend=backend)
        n = data.draw(st.integers(0, 4))
        ev.update(data.draw(vectors(n)), y_pred=data.draw(vectors(n)))
        kind = data.draw(st.sampled_from(["object", "bytes", "forged", "junk"]))
        blob = ev.to_bytes()
        if kind == "forged":
            i = data.draw(st.integers(0, len(blob) - 1))
            blob = blob[:i] + bytes([blob[i] ^ 0xFF]) + blob[i + 1 :]
        states.append(
            ev if kind == "object" else blob if kind != "junk" else data.draw(st.sampled_from([None, 3, "x"]))
        )
    return cmetrics.merge_all(states).report().to_dict()


REGISTRY: dict[str, Call] = {
    "accuracy_score": hard(cmetrics.accuracy_score),
    "balanced_accuracy_score": hard(cmetrics.balanced_accuracy_score, adjusted=True),
    "precision_recall_fscore_support": hard(cmetrics.precision_recall_fscore_support, average="macro"),
    "precision_score": hard(cmetrics.precision_score, average=None),
    "recall_score": hard(cmetrics.recall_score, average="weighted"),
    "fbeta_score": hard(cmetrics.fbeta_score, beta=1e200, average="micro"),
    "f1_score": hard(cmetrics.f1_score),
    "matthews_corrcoef": hard(cmetrics.matthews_corrcoef),
    "cohen_kappa_score": hard(cmetrics.cohen_kappa_score, weights="quadratic"),
    "informedness": hard(cmetrics.informedness),
    "markedness": hard(cmetrics.markedness),
    "youden_j_per_class": hard(cmetrics.youden_j_per_class),
    "markedness_per_class": hard(cmetrics.markedness_per_class),
    "normalized_information_transfer": hard(cmetrics.normalized_information_transfer),
    "entropy_modulated_accuracy": hard(cmetrics.entropy_modulated_accuracy),
    "class_prevalence": hard(cmetrics.class_prevalence),
    "class_bias": hard(cmetrics.class_bias),
    "hard_label_report": hard(cmetrics.hard_label_report),
    "jaccard_score": hard(cmetrics.jaccard_score, average="macro"),
    "classification_report": hard(cmetrics.classification_report, output_dict=True),
    "hamming_loss": hard(cmetrics.hamming_loss),
    "zero_one_loss": hard(cmetrics.zero_one_loss, normalize=False),
    "multilabel_confusion_matrix": hard(cmetrics.multilabel_confusion_matrix),
    "confusion_matrix": hard(cmetrics.confusion_matrix, normalize="true"),
    "ConfusionMatrix": table,
    "prob_confusion_matrix": proba(cmetrics.prob_confusion_matrix),
    "cprecision_recall_fscore_support": proba(cmetrics.cprecision_recall_fscore_support, average="macro"),
    "cprecision_score": proba(cmetrics.cprecision_score, average=None),
    "crecall_score": proba(cmetrics.crecall_score, average="micro"),
    "cfbeta_score": proba(cmetrics.cfbeta_score, beta=2.0, average="weighted"),
    "cf1_score": proba(cmetrics.cf1_score, average="macro"),
    "entropy_score": entropy,
    "purity": proba(cmetrics.purity),
    "purity_from_matrix": purity_matrix,
    "brier_score": proba(cmetrics.brier_score),
    "log_loss": proba(cmetrics.log_loss),
    "calibration_bins": proba(cmetrics.calibration_bins, n_bins=3),
    "expected_calibration_error": proba(cmetrics.expected_calibration_error),
    "max_calibration_error": proba(cmetrics.max_calibration_error),
    "roc_auc_score": ranking_any(
        cmetrics.roc_auc_score,
        multi_class=["raise", "ovr", "ovo"],
        average=[None, "macro", "weighted", "micro", "samples"],
        max_fpr=[None, 0.5, 1.0],
    ),
    "average_precision_score": ranking_any(
        cmetrics.average_precision_score, average=[None, "macro", "weighted", "micro", "samples"]
    ),
    "top_k_accuracy_score": proba(cmetrics.top_k_accuracy_score, k=2),
    "roc_curve": ranking(cmetrics.roc_curve),
    "precision_recall_curve": ranking(cmetrics.precision_recall_curve, drop_intermediate=True),
    "det_curve": ranking(cmetrics.det_curve, drop_intermediate=True),
    "confusion_matrix_at_thresholds": ranking(cmetrics.confusion_matrix_at_thresholds),
    "metric_at_thresholds": at_thresholds,
    "brier_score_loss": proba(cmetrics.brier_score_loss),
    "d2_brier_score": proba(cmetrics.d2_brier_score),
    "d2_log_loss_score": proba(cmetrics.d2_log_loss_score),
    "hinge_loss": proba(cmetrics.hinge_loss),
    "class_likelihood_ratios": hard(cmetrics.class_likelihood_ratios),
    "coverage_error": label_ranks(cmetrics.coverage_error),
    "label_ranking_average_precision_score": label_ranks(cmetrics.label_ranking_average_precision_score),
    "label_ranking_loss": label_ranks(cmetrics.label_ranking_loss),
    "dcg_score": label_ranks(cmetrics.dcg_score, k=2),
    "ndcg_score": label_ranks(cmetrics.ndcg_score),
    "auc": curve_area,
    "aupr_trapezoid": ranking(cmetrics.aupr_trapezoid),
    "refinement": ranking(cmetrics.refinement, ties="strict"),
    "reversed_pair_proportion": ranking(cmetrics.reversed_pair_proportion),
    "kendall_tau_distance": ranking(cmetrics.kendall_tau_distance),
    "aurc": ranking(cmetrics.aurc),
    "risk_coverage_curve": risk_coverage,
    "kendall_tau": kendall,
    "correctness": correctness,
    "selective_prediction_scores": selective,
    "evaluate": evaluate,
    "Evaluator": evaluator,
    "merge_all": merge_all,
    "bootstrap": bootstrap,
    "compare": compare,
    "delong": lambda data, backend: cmetrics.delong(
        data.draw(vectors(n := data.draw(st.integers(0, 6)))), data.draw(vectors(n)), backend=backend
    ),
    "delong_test": delong_test,
    "mcnemar": mcnemar,
}

#: Public names that take no data (settings, classes of results and errors).
NOT_DATA = {
    "BootstrapResult",
    "CalibrationBins",
    "Comparison",
    "DeLongResult",
    "DeLongTest",
    "Difference",
    "Interval",
    "McNemarResult",
    "MetricInterval",
    "Provenance",
    "proportion_interval",
    "report_intervals",
    "EvaluationSettings",
    "GroupedReport",
    "RankingSummary",
    "Report",
    "SelectiveScores",
    "StateError",
    "UndefinedMetricWarning",
    "__version__",
    "get_max_classes",
    "get_num_threads",
    "max_threads",
    "rust_available",
    "set_max_classes",
    "set_num_threads",
    "thread_limit",
}


def test_every_public_name_is_covered() -> None:
    assert set(cmetrics.__all__) == set(REGISTRY) | NOT_DATA


class Replay:
    """Draws from hypothesis on the first backend's run, and hands the same values, in the
    same order, to the second: both backends see identical inputs."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data
        self.values: list[Any] = []
        self.at: int | None = None

    def draw(self, strategy: st.SearchStrategy[Any], label: str | None = None) -> Any:
        if self.at is None:
            value = self.data.draw(strategy)
            self.values.append(value)
            return value
        value = self.values[self.at]
        self.at += 1
        return value

    def rewind(self) -> None:
        self.at = 0


def outcome(call: Call, data: Replay, backend: str) -> tuple[str, Any]:
    """("ok", value) or ("error", class), failing on an undocumented exception or a RuntimeWarning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = call(data, backend)  # type: ignore[arg-type]
        except ValidationError as e:
            result: tuple[str, Any] = ("error", type(e))
        except InternalError as e:  # a caught panic is a bug
            raise AssertionError(f"{backend}: internal error {e}") from e
        else:
            result = ("ok", value)
    leaked = [w for w in caught if issubclass(w.category, (RuntimeWarning, DeprecationWarning))]
    assert not leaked, f"{backend}: {leaked[0].category.__name__}: {leaked[0].message}"
    return result


def agree(a: Any, b: Any) -> bool:
    """Two results of the two backends: equal counts, floats within 1e-9, NaN equal to NaN."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(agree(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(agree(x, y) for x, y in zip(a, b, strict=True))
    if hasattr(a, "__dataclass_fields__"):
        return all(agree(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__)
    if isinstance(a, cmetrics.Report):
        return isinstance(b, cmetrics.Report) and agree(a.to_dict(), b.to_dict())
    if a is None or isinstance(a, (str, bool)):
        return bool(a == b)
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape:
        return False
    both_nan = np.isnan(x) & np.isnan(y)
    close = np.isclose(x, y, rtol=1e-9, atol=1e-12) | both_nan
    return bool(close.all())


@pytest.mark.parametrize("name", sorted(REGISTRY))
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_hostile_inputs_raise_only_documented_errors(name: str, data: st.DataObject) -> None:
    call = REGISTRY[name]
    draws = Replay(data)
    results = []
    for backend in BACKENDS:
        results.append(outcome(call, draws, backend))
        draws.rewind()
    kinds = {r[0] for r in results}
    if kinds == {"error"}:
        assert len({r[1] for r in results}) == 1, f"{name}: the backends raise different classes: {results}"
    else:
        assert kinds == {"ok"}, f"{name}: one backend raised and the other returned: {results}"
        if len(results) == 2:
            assert agree(results[0][1], results[1][1]), f"{name}: backends disagree: {results}"

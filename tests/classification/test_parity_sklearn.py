"""Seeded randomized parity with scikit-learn (the reference users compare against)."""

from __future__ import annotations

import warnings
from functools import partial
from typing import Any

import numpy as np
import pytest
import sklearn.metrics as skm
from sklearn.exceptions import UndefinedMetricWarning as SkUndefinedMetricWarning

import cmetrics
from cmetrics.exceptions import UndefinedMetricWarning

K_VALUES = [2, 3, 10, 1000]
LABEL_KINDS = ["int32", "int64", "str"]
ZERO_DIVISION: list[Any] = ["warn", 0, 1, float("nan")]


def make(k: int, kind: str, weighted: bool, seed: int, n: int = 3000) -> tuple[np.ndarray, np.ndarray, Any]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    # 60% correct, errors spread over other classes; a few classes never predicted.
    wrong = (y + rng.integers(1, k, n)) % k if k > 1 else y
    p = np.where(rng.random(n) < 0.6, y, wrong)
    if k > 2:
        p = np.where(p == k - 1, 0, p)  # class k-1 never predicted: precision 0/0
    w = rng.random(n) * 3 if weighted else None
    if kind == "str":
        names = np.array([f"c{i:04d}" for i in range(k)])
        return names[y], names[p], w
    # sparse, shifted labels exercise the encoding path
    dtype = np.int32 if kind == "int32" else np.int64
    return (y * 7 - 5).astype(dtype), (p * 7 - 5).astype(dtype), w


def both(fn_ours: Any, fn_ref: Any) -> tuple[Any, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn_ours(), fn_ref()


def close(a: Any, b: Any) -> None:
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("k", K_VALUES)
@pytest.mark.parametrize("kind", LABEL_KINDS)
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_whole_table_metrics(k: int, kind: str, weighted: bool, backend: str) -> None:
    y, p, w = make(k, kind, weighted, seed=k)
    kw = {"sample_weight": w}
    ours = cmetrics.confusion_matrix(y, p, backend=backend, **kw)
    ref = skm.confusion_matrix(y, p, **kw)
    assert ours.dtype == ref.dtype
    close(ours, ref)
    close(cmetrics.accuracy_score(y, p, backend=backend, **kw), skm.accuracy_score(y, p, **kw))
    close(
        cmetrics.accuracy_score(y, p, normalize=False, backend=backend, **kw),
        skm.accuracy_score(y, p, normalize=False, **kw),
    )
    for adjusted in (False, True):
        close(
            *both(
                partial(cmetrics.balanced_accuracy_score, y, p, adjusted=adjusted, backend=backend, **kw),
                partial(skm.balanced_accuracy_score, y, p, adjusted=adjusted, **kw),
            )
        )
    close(cmetrics.matthews_corrcoef(y, p, backend=backend, **kw), skm.matthews_corrcoef(y, p, **kw))
    for weights in (None, "linear", "quadratic"):
        close(
            cmetrics.cohen_kappa_score(y, p, weights=weights, backend=backend, **kw),
            skm.cohen_kappa_score(y, p, weights=weights, **kw),
        )
    if k > 2:
        # Balanced accuracy adjusted = binary informedness only for k = 2; NIT = exp(MI_nats)/k for any k.
        mi = skm.mutual_info_score(y, p) if w is None else None
        if mi is not None:
            close(cmetrics.normalized_information_transfer(y, p, backend=backend), np.exp(mi) / len(np.unique(y)))


@pytest.mark.parametrize("k", K_VALUES)
@pytest.mark.parametrize("kind", LABEL_KINDS)
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("zero_division", ZERO_DIVISION, ids=str)
def test_precision_recall_f(k: int, kind: str, weighted: bool, zero_division: Any, backend: str) -> None:
    y, p, w = make(k, kind, weighted, seed=100 + k)
    kw: dict[str, Any] = {"sample_weight": w, "zero_division": zero_division}
    averages: list[Any] = [None, "micro", "macro", "weighted"] + (["binary"] if k == 2 else [])
    pos = {"binary": (np.unique(y)[1] if kind != "str" else "c0001")}
    for average in averages:
        extra = {"pos_label": pos["binary"]} if average == "binary" else {}
        for beta in (1.0, 0.5, 2.0):
            ours, ref = both(
                partial(
                    cmetrics.precision_recall_fscore_support,
                    y,
                    p,
                    beta=beta,
                    average=average,
                    backend=backend,
                    **extra,
                    **kw,
                ),
                partial(skm.precision_recall_fscore_support, y, p, beta=beta, average=average, **extra, **kw),
            )
            for a, b in zip(ours, ref, strict=True):
                if b is None:
                    assert a is None
                else:
                    close(a, b)
        for ours_fn, ref_fn in (
            (cmetrics.precision_score, skm.precision_score),
            (cmetrics.recall_score, skm.recall_score),
            (cmetrics.f1_score, skm.f1_score),
        ):
            close(
                *both(
                    partial(ours_fn, y, p, average=average, backend=backend, **extra, **kw),
                    partial(ref_fn, y, p, average=average, **extra, **kw),
                )
            )
    # labels= selects classes (counted against all samples) and may name absent ones.
    labels = list(np.unique(y)[::-1][: max(1, k // 2)])
    ours, ref = both(
        lambda: cmetrics.precision_recall_fscore_support(y, p, labels=labels, average="macro", backend=backend, **kw),
        lambda: skm.precision_recall_fscore_support(y, p, labels=labels, average="macro", **kw),
    )
    close(ours[:3], ref[:3])


@pytest.mark.parametrize("k", [2, 3, 10])
def test_binary_informedness_identities(k: int, backend: str) -> None:
    """Binary informedness = adjusted balanced accuracy; informedness(y, p) = markedness(p, y)."""
    y, p, w = make(k, "int64", True, seed=7)
    inf = cmetrics.informedness(y, p, sample_weight=w, backend=backend)
    close(inf, cmetrics.markedness(p, y, sample_weight=w, backend=backend))
    if k == 2:
        close(inf, skm.balanced_accuracy_score(y, p, adjusted=True, sample_weight=w))
        mk = cmetrics.markedness(y, p, sample_weight=w, backend=backend)
        mcc = cmetrics.matthews_corrcoef(y, p, sample_weight=w, backend=backend)
        close(mcc, np.sign(inf) * np.sqrt(inf * mk))


def test_label_mix_and_pos_label_errors_match_sklearn(backend: str) -> None:
    with pytest.raises(ValueError, match="average='binary'"):
        skm.precision_score([0, 1, 2], [0, 1, 1])
    with pytest.raises(ValueError, match="average='binary'"):
        cmetrics.precision_score([0, 1, 2], [0, 1, 1], backend=backend)
    with pytest.raises(ValueError, match="pos_label"):
        cmetrics.f1_score(["a", "b"], ["a", "a"], backend=backend)
    close(
        cmetrics.f1_score(["a", "b"], ["a", "b"], pos_label="b", backend=backend),
        skm.f1_score(["a", "b"], ["a", "b"], pos_label="b"),
    )


@pytest.mark.parametrize("k", K_VALUES)
@pytest.mark.parametrize("kind", LABEL_KINDS)
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("zero_division", ["warn", 0, 1], ids=str)  # sklearn's jaccard refuses NaN
def test_jaccard_score(k: int, kind: str, weighted: bool, zero_division: Any, backend: str) -> None:
    y, p, w = make(k, kind, weighted, seed=300 + k)
    kw: dict[str, Any] = {"sample_weight": w, "zero_division": zero_division}
    averages: list[Any] = [None, "micro", "macro", "weighted"] + (["binary"] if k == 2 else [])
    for average in averages:
        extra = {"pos_label": np.unique(y)[1]} if average == "binary" else {}
        close(
            *both(
                partial(cmetrics.jaccard_score, y, p, average=average, backend=backend, **extra, **kw),
                partial(skm.jaccard_score, y, p, average=average, **extra, **kw),
            )
        )
    # labels= selects classes (counted against all samples), absent ones included.
    absent = "zz" if kind == "str" else 10**6
    labels = [*list(np.unique(y)[::-1][: max(1, k // 2)]), absent]
    for average in (None, "macro", "micro", "weighted"):
        close(
            *both(
                partial(cmetrics.jaccard_score, y, p, labels=labels, average=average, backend=backend, **kw),
                partial(skm.jaccard_score, y, p, labels=labels, average=average, **kw),
            )
        )


def test_jaccard_zero_division_nan_leaves_undefined_classes_out(backend: str) -> None:
    y, p = [0, 0, 1, 1], [0, 1, 1, 1]
    kw: dict[str, Any] = {"labels": [0, 1, 2], "zero_division": float("nan"), "backend": backend}
    per_class = cmetrics.jaccard_score(y, p, average=None, **kw)
    assert per_class[:2].tolist() == [0.5, 2 / 3] and np.isnan(per_class[2])
    macro = cmetrics.jaccard_score(y, p, average="macro", **kw)
    assert macro == pytest.approx((0.5 + 2 / 3) / 2, rel=1e-15)


def test_jaccard_warnings_and_errors_match_sklearn(backend: str) -> None:
    y, p = [0, 0, 1], [0, 0, 0]
    for average in ("macro", None):
        with pytest.warns(UndefinedMetricWarning) as ours:
            got = cmetrics.jaccard_score(y, p, labels=[0, 1, 2], average=average, backend=backend)
        with pytest.warns(SkUndefinedMetricWarning) as ref:
            want = skm.jaccard_score(y, p, labels=[0, 1, 2], average=average)
        close(got, want)
        assert [str(m.message) for m in ours] == [str(m.message) for m in ref]
    with pytest.raises(ValueError, match="average='binary'"):
        cmetrics.jaccard_score([0, 1, 2], [0, 1, 1], backend=backend)
    with pytest.raises(ValueError, match="pos_label"):
        cmetrics.jaccard_score([3, 4], [3, 4], backend=backend)


@pytest.mark.parametrize("k", K_VALUES)
@pytest.mark.parametrize("kind", LABEL_KINDS)
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_losses_and_multilabel_confusion_matrix(k: int, kind: str, weighted: bool, backend: str) -> None:
    y, p, w = make(k, kind, weighted, seed=400 + k)
    kw: dict[str, Any] = {"sample_weight": w}
    close(cmetrics.hamming_loss(y, p, backend=backend, **kw), skm.hamming_loss(y, p, **kw))
    for normalize in (True, False):
        close(
            cmetrics.zero_one_loss(y, p, normalize=normalize, backend=backend, **kw),
            skm.zero_one_loss(y, p, normalize=normalize, **kw),
        )
    ours = cmetrics.multilabel_confusion_matrix(y, p, backend=backend, **kw)
    ref = skm.multilabel_confusion_matrix(y, p, **kw)
    assert ours.dtype == ref.dtype and ours.shape == ref.shape
    close(ours, ref)
    absent = "zz" if kind == "str" else 10**6
    labels = [absent, *list(np.unique(y)[::-1][: max(1, k // 2)])]
    ours = cmetrics.multilabel_confusion_matrix(y, p, labels=labels, backend=backend, **kw)
    ref = skm.multilabel_confusion_matrix(y, p, labels=labels, **kw)
    assert ours.dtype == ref.dtype
    close(ours, ref)


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("kind", LABEL_KINDS)
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_classification_report_text_and_dict(k: int, kind: str, weighted: bool, backend: str) -> None:
    y, p, w = make(k, kind, weighted, seed=500 + k, n=500)
    present = list(np.unique(np.concatenate([y, p])))
    calls: list[dict[str, Any]] = [
        {},
        {"digits": 4},
        {"digits": 0, "zero_division": 1},
        {"labels": present[::-1][: max(1, k // 2)]},  # a subset: "micro avg" instead of "accuracy"
        {"labels": present, "target_names": [f"class number {i}" for i in range(len(present))]},
    ]
    for kw in calls:
        ours, ref = both(
            partial(cmetrics.classification_report, y, p, sample_weight=w, backend=backend, **kw),
            partial(skm.classification_report, y, p, sample_weight=w, **kw),
        )
        if w is None:
            assert ours == ref, kw
        else:
            # Weighted supports print in full and may differ in the last digit (summation order).
            ours_lines, ref_lines = ours.splitlines(), ref.splitlines()
            assert len(ours_lines) == len(ref_lines)
            for a, b in zip(ours_lines, ref_lines, strict=True):
                if b.strip() and not b.lstrip().startswith("precision"):
                    assert a[: a.rindex(" ")] == b[: b.rindex(" ")], kw
                    close(float(a.split()[-1]), float(b.split()[-1]))
                else:
                    assert a == b
        ours_d, ref_d = both(
            partial(cmetrics.classification_report, y, p, sample_weight=w, output_dict=True, backend=backend, **kw),
            partial(skm.classification_report, y, p, sample_weight=w, output_dict=True, **kw),
        )
        assert list(ours_d) == list(ref_d)
        for key, value in ref_d.items():
            if isinstance(value, dict):
                assert list(ours_d[key]) == list(value)
                close(list(ours_d[key].values()), list(value.values()))
            else:
                close(ours_d[key], value)


def test_classification_report_argument_errors(backend: str) -> None:
    with pytest.raises(ValueError, match="target_names"):
        cmetrics.classification_report([0, 1, 2], [0, 1, 1], target_names=["a", "b"], backend=backend)
    with pytest.warns(UserWarning, match="does not match size of target_names"):
        cmetrics.classification_report([0, 1, 2], [0, 1, 2], labels=[0, 1], target_names=["a"], backend=backend)
    with pytest.raises(ValueError, match="digits"):
        cmetrics.classification_report([0, 1], [0, 1], digits=-1, backend=backend)

"""Every case of test vectors 01, 02 and 03, on both backends."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import cmetrics
from cmetrics import ConfusionMatrix, UndefinedMetricWarning
from tests.conftest import ZD, assert_close, load_vectors, num, quiet

V01 = load_vectors("01_confusion_seed002.json")["cases"]
V02 = load_vectors("02_confusion_small.json")["cases"]
V03 = load_vectors("03_informedness_markedness_nit.json")["cases"]


def expand(matrix: list[list[float]], labels: list[Any]) -> tuple[list[Any], list[Any], list[float]]:
    """One (true, pred) row per non-zero cell, weighted by the cell count (as the vectors' sklearn runs)."""
    t, p, w = [], [], []
    for i, row in enumerate(matrix):
        for j, v in enumerate(row):
            if v:
                t.append(labels[i])
                p.append(labels[j])
                w.append(float(v))
    return t, p, w


@pytest.mark.parametrize("case", V01, ids=lambda c: c["name"])
def test_seed002_matrices(case: dict[str, Any], backend: str) -> None:
    labels = case["labels"]
    cm = ConfusionMatrix(case["confusion_matrix"], labels=labels, backend=backend)
    t, p, w = expand(case["confusion_matrix"], labels)
    from_rows = ConfusionMatrix.from_predictions(t, p, sample_weight=w, labels=labels, backend=backend)
    assert_close(from_rows.matrix, case["confusion_matrix"], "matrix from rows")
    sk = case["sklearn"]
    for m in (cm, from_rows):
        assert_close(m.accuracy(), sk["accuracy"], "accuracy")
        assert_close(quiet(m.balanced_accuracy), sk["balanced_accuracy"], "balanced accuracy")
        assert_close(quiet(m.balanced_accuracy, adjusted=True), sk["balanced_accuracy_adjusted"], "adjusted")
        assert_close(m.matthews_corrcoef(), sk["matthews_corrcoef"], "mcc")
        assert_close(m.cohen_kappa(), sk["cohen_kappa"], "kappa")
        for key, zd in ZD.items():
            exp = sk[key]
            for fname, beta in (("f1", 1.0), ("f2", 2.0), ("f0.5", 0.5)):
                pr, rc, f, s = quiet(m.precision_recall_fscore_support, beta=beta, labels=labels, zero_division=zd)
                assert_close(f, exp[fname], f"{key} {fname}")
                assert_close(pr, exp["precision"], f"{key} precision")
                assert_close(rc, exp["recall"], f"{key} recall")
                assert_close(s, exp["support"], f"{key} support")
            for avg in ("macro", "weighted", "micro"):
                pr, rc, f, _ = quiet(m.precision_recall_fscore_support, average=avg, zero_division=zd)
                assert_close([pr, rc, f], [exp[avg]["precision"], exp[avg]["recall"], exp[avg]["f1"]], f"{key} {avg}")
        fam = case["informedness_family"]
        assert_close(m.class_prevalence(labels=labels), fam["prevalence"], "prevalence")
        assert_close(m.class_bias(labels=labels), fam["bias"], "bias")
        assert_close(
            m.youden_j_per_class(labels=labels, zero_division=np.nan), fam["youden_j_per_class_zero_division_nan"], "J"
        )
        assert_close(
            m.markedness_per_class(labels=labels, zero_division=np.nan),
            fam["markedness_per_class_zero_division_nan"],
            "MK",
        )
        assert_close(quiet(m.informedness), fam["informedness_powers"], "informedness")
        assert_close(quiet(m.markedness), fam["markedness_powers"], "markedness")
        assert_close(quiet(m.normalized_information_transfer), fam["nit"], "nit")
        assert_close(m.mutual_information_bits(), fam["mutual_information_bits"], "mi")
        assert_close(m.entropy_modulated_accuracy(), fam["ema"], "ema")
        # docs/definitions.md §3.4: the aacl release value is markedness when >= 2 classes are predicted.
        if (m.class_bias() > 0).sum() >= 2 and "aacl_release_informedness" in fam:
            assert abs(quiet(m.markedness) - fam["aacl_release_informedness"]) <= 1.1e-14


def test_seed002_printed_values(backend: str) -> None:
    """The full-precision numbers the notebook prints (docs/definitions.md §2.3)."""
    ex = {c["name"]: c for c in V01}
    cm1 = ConfusionMatrix(ex["ex1"]["confusion_matrix"], backend=backend)
    assert cm1.accuracy() == 0.8110236220472441
    _, _, f, _ = cm1.precision_recall_fscore_support(average="macro")
    assert abs(f - 0.42530030030030036) <= 1e-15
    cm2 = ConfusionMatrix(ex["ex2"]["confusion_matrix"], backend=backend)
    # Always "neutral": sklearn rules give F1(pos) = F1(neg) = 0, macro 0.31092436974789917.
    _, _, f, _ = quiet(cm2.precision_recall_fscore_support, average="macro", zero_division=np.nan)
    assert abs(f - 0.31092436974789917) <= 1e-15
    p, _, _, _ = cm2.precision_recall_fscore_support(average="macro", zero_division=np.nan)
    assert abs(p - 0.8740157480314961) <= 1e-15


def _labels_arg(case: dict[str, Any]) -> Any:
    return case.get("labels")


@pytest.mark.parametrize("case", V02, ids=lambda c: c["name"])
def test_small_cases(case: dict[str, Any], backend: str) -> None:
    exp = case["expected"]
    t, p, w = case["y_true"], case["y_pred"], case.get("sample_weight")
    labels = case.get("labels")
    kw: dict[str, Any] = {"sample_weight": w, "backend": backend}
    used = exp["labels_used"]
    assert_close(cmetrics.confusion_matrix(t, p, labels=labels, **kw), exp["confusion_matrix"], "cm")
    cm = ConfusionMatrix.from_predictions(t, p, labels=labels, sample_weight=w, backend=backend)
    assert cm.labels.tolist() == used
    assert_close(cmetrics.accuracy_score(t, p, **kw), exp["accuracy"], "accuracy")
    assert_close(quiet(cmetrics.balanced_accuracy_score, t, p, **kw), exp["balanced_accuracy"], "ba")
    adj = num(exp["balanced_accuracy_adjusted"])
    want_adj = (
        float("nan") if np.isinf(adj) else adj
    )  # decision O8 (docs/definitions.md §9): NaN where sklearn gives -inf
    assert_close(quiet(cmetrics.balanced_accuracy_score, t, p, adjusted=True, **kw), want_adj, "ba adjusted")
    assert_close(cmetrics.matthews_corrcoef(t, p, **kw), exp["matthews_corrcoef"], "mcc")
    assert_close(quiet(cmetrics.cohen_kappa_score, t, p, **kw), exp["cohen_kappa"], "kappa")
    for key, zd in ZD.items():
        e = exp["prf"][key]
        pr, rc, f, s = quiet(cmetrics.precision_recall_fscore_support, t, p, labels=labels, zero_division=zd, **kw)
        assert_close(pr, e["precision"], f"{key} precision")
        assert_close(rc, e["recall"], f"{key} recall")
        assert_close(f, e["f1"], f"{key} f1")
        assert_close(s, e["support"], f"{key} support")
        for avg in ("macro", "weighted", "micro"):
            got = quiet(
                cmetrics.precision_recall_fscore_support, t, p, labels=labels, average=avg, zero_division=zd, **kw
            )
            assert_close(got[:3], [e[avg]["precision"], e[avg]["recall"], e[avg]["f1"]], f"{key} {avg}")
        for bkey in [k for k in e if k.startswith("binary_pos_label=")]:
            pos = int(bkey.split("=")[1])
            got = quiet(
                cmetrics.precision_recall_fscore_support, t, p, average="binary", pos_label=pos, zero_division=zd, **kw
            )
            assert_close(got[:3], [e[bkey]["precision"], e[bkey]["recall"], e[bkey]["f1"]], f"{key} {bkey}")
    assert_close(cm.class_prevalence(labels=used), exp["prevalence"], "prevalence")
    assert_close(cm.class_bias(labels=used), exp["bias"], "bias")
    assert_close(
        cm.youden_j_per_class(labels=used, zero_division=np.nan), exp["youden_j_per_class_zero_division_nan"], "J"
    )
    assert_close(
        cm.markedness_per_class(labels=used, zero_division=np.nan), exp["markedness_per_class_zero_division_nan"], "MK"
    )
    assert_close(quiet(cmetrics.informedness, t, p, **kw), exp["informedness_powers"], "informedness")
    assert_close(quiet(cmetrics.markedness, t, p, **kw), exp["markedness_powers"], "markedness")
    assert_close(quiet(cmetrics.normalized_information_transfer, t, p, **kw), exp["nit"], "nit")
    assert_close(cmetrics.entropy_modulated_accuracy(t, p, **kw), exp["ema"], "ema")
    # Warnings: whenever sklearn said P/R/F is ill-defined, so do we (default zero_division).
    ill = [m for m in exp["sklearn_warnings"] if "ill-defined" in m]
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        cmetrics.precision_recall_fscore_support(t, p, labels=labels, **kw)
    ours = [str(r.message) for r in rec if issubclass(r.category, UndefinedMetricWarning)]
    for m in ill:
        assert any(o.startswith(m.split(" is ")[0]) for o in ours), (m, ours)
    if not ill:
        assert not ours


@pytest.mark.parametrize("case", V03, ids=lambda c: c["name"])
def test_informedness_family(case: dict[str, Any], backend: str) -> None:
    exp = case["expected"]
    k = len(exp["confusion_matrix"])
    if "y_true" in case:
        t, p, w = case["y_true"], case["y_pred"], None
    else:
        t, p, w = expand(exp["confusion_matrix"], list(range(k)))
    cm = ConfusionMatrix.from_predictions(t, p, labels=list(range(k)), sample_weight=w, backend=backend)
    assert_close(cm.matrix, exp["confusion_matrix"], "cm")
    assert_close(cm.class_prevalence(), exp["prevalence"], "prevalence")
    assert_close(cm.class_bias(), exp["bias"], "bias")
    assert_close(cm.youden_j_per_class(zero_division=np.nan), exp["youden_j_per_class_zero_division_nan"], "J")
    assert_close(cm.markedness_per_class(zero_division=np.nan), exp["markedness_per_class_zero_division_nan"], "MK")
    assert_close(quiet(cm.informedness), exp["informedness_powers_exact"], "informedness exact")
    assert_close(quiet(cm.informedness), exp["informedness_powers"], "informedness")
    assert_close(quiet(cm.markedness), exp["markedness_powers"], "markedness")
    assert_close(quiet(cm.normalized_information_transfer), exp["nit"], "nit")
    assert_close(quiet(cm.normalized_information_transfer), exp["aacl_release_nit"], "nit vs release")
    assert_close(cm.entropy_modulated_accuracy(), exp["ema"], "ema")
    assert_close(cm.mutual_information_bits(), max(exp["mutual_information_bits"], 0.0), "mi")
    adj = num(exp["balanced_accuracy_adjusted_sklearn"])
    want_adj = float("nan") if np.isinf(adj) else adj  # decision O8
    assert_close(quiet(cm.balanced_accuracy, adjusted=True), want_adj, "ba adj")
    assert_close(cm.matthews_corrcoef(), exp["matthews_corrcoef_sklearn"], "mcc")
    # pycm's BM/MK agree wherever pycm defines them.
    for mine, theirs in (
        (cm.youden_j_per_class(zero_division=np.nan), exp["pycm_BM_per_class"]),
        (cm.markedness_per_class(zero_division=np.nan), exp["pycm_MK_per_class"]),
    ):
        theirs = np.asarray(num(theirs), dtype=float)
        defined = ~np.isnan(mine) & ~np.isnan(theirs)
        assert np.allclose(mine[defined], theirs[defined], rtol=0, atol=1e-12)
    # The release's value = informedness with arguments swapped (>= 2 predicted classes).
    if (cm.class_bias() > 0).sum() >= 2:
        swapped = quiet(cmetrics.informedness, p, t, sample_weight=w, backend=backend)
        assert abs(swapped - exp["aacl_compat_unguarded_markedness"]) <= 1e-12
    if "prior" in exp:
        got = cm.informedness(prior=exp["prior"])
        assert_close(got, exp["informedness_with_prior_EXTENSION"], "prior")


def test_constant_predictor_scores_zero_informedness(backend: str) -> None:
    """Potts 2020 ex2 (always 'neutral'): Powers 0, the release 0.7534565069130245."""
    ex2 = next(c for c in V01 if c["name"] == "ex2")
    cm = ConfusionMatrix(ex2["confusion_matrix"], backend=backend)
    assert cm.informedness() == 0.0
    with pytest.warns(UndefinedMetricWarning, match="Markedness is undefined"):
        assert np.isnan(cm.markedness())

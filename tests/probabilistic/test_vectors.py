"""Test vectors 04 (probabilistic confusion, cP/cR/cF), 06 (entropy score, purity)
and the probabilistic cases of 07 (Brier, log loss, ECE/MCE), on both backends."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import cmetrics
from tests.conftest import ZD, assert_close, load_vectors, num, quiet

V04 = load_vectors("04_probabilistic_confusion.json")["cases"]
V06 = load_vectors("06_entropy_purity.json")
V07 = load_vectors("07_probabilistic_and_ranking.json")["probabilistic_cases"]


@pytest.mark.parametrize("case", V04, ids=lambda c: c["name"])
def test_probabilistic_confusion(case: dict[str, Any], backend: str) -> None:
    labels, y = case["labels"], case["y_true"]
    p = np.array(num(case["scores"]), dtype=np.float64)
    w = case.get("sample_weight")
    kw: dict[str, Any] = {"labels": labels, "sample_weight": w, "backend": backend}
    exact = case["expected_exact"]
    pcm = cmetrics.prob_confusion_matrix(y, p, **kw)
    assert_close(pcm, exact["pcm"], "pcm")
    assert_close(pcm.sum(axis=1), exact["pcm_row_sum"], "row sums")
    assert_close(pcm.sum(axis=0), exact["pcm_col_sum"], "col sums")
    assert_close(np.diag(pcm), exact["ctp"], "cTP")
    assert_close(pcm.sum(axis=0) - np.diag(pcm), exact["cfp"], "cFP")
    for key, zd in ZD.items():
        e = exact[key]
        cp, cr, cf, support = quiet(cmetrics.cprecision_recall_fscore_support, y, p, zero_division=zd, **kw)
        assert_close(cp, e["cprecision"], f"{key} cP")
        assert_close(cr, e["crecall"], f"{key} cR")
        assert_close(cf, e["cf1"], f"{key} cF1")
        assert_close(support, exact["true_count"], "support")
        _, _, cf2, _ = quiet(cmetrics.cprecision_recall_fscore_support, y, p, beta=2.0, zero_division=zd, **kw)
        assert_close(cf2, e["cf2"], f"{key} cF2")
        for avg in ("macro", "weighted", "micro"):
            got = quiet(cmetrics.cprecision_recall_fscore_support, y, p, average=avg, zero_division=zd, **kw)
            want = [e[avg]["cprecision"], e[avg]["crecall"], e[avg]["cf1"]]
            assert_close(got[:3], want, f"{key} {avg}")
    if "marvin_probabilistic_confusion_matrix" in case:
        assert_close(
            cmetrics.prob_confusion_matrix(y, p, normalize="true", **kw),
            case["marvin_probabilistic_confusion_matrix"],
            "row-mean pCM (Tornetta 2021, marvin)",
        )
    if "hard_check" in case:
        # One-hot scores: the confidence metrics are exactly the hard ones.
        hard = cmetrics.precision_recall_fscore_support(
            y, np.asarray(labels)[p.argmax(axis=1)], labels=labels, zero_division=np.nan, backend=backend
        )
        soft = cmetrics.cprecision_recall_fscore_support(y, p, zero_division=np.nan, **kw)
        for a, b in zip(hard[:3], soft[:3], strict=True):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(
            cmetrics.confusion_matrix(y, np.asarray(labels)[p.argmax(axis=1)], labels=labels), pcm
        )


def test_benefit_a_documented_example(backend: str) -> None:
    """The "Benefit A" of Yacouby and Axman (2020) on the worked example of docs/definitions.md §4:
    the argmax never predicts 'c', so hard precision(c) is undefined, while cPrecision(c) = 11/23."""
    case = next(c for c in V04 if c["name"] == "three_class_rational")
    p = np.array(num(case["scores"]))
    y = case["y_true"]
    labels = np.asarray(case["labels"])
    hard_p = cmetrics.precision_score(y, labels[p.argmax(axis=1)], average=None, zero_division=np.nan, backend=backend)
    soft_p = cmetrics.cprecision_score(y, p, average=None, zero_division=np.nan, backend=backend)
    assert np.isnan(hard_p).tolist() == [False, False, True]
    assert not np.isnan(soft_p).any()
    assert soft_p[2] == pytest.approx(11 / 23, rel=1e-15)


@pytest.mark.parametrize("case", V06["matrix_cases"], ids=lambda c: c["name"])
def test_purity_of_matrices(case: dict[str, Any]) -> None:
    exp = case["expected"]
    assert_close(cmetrics.purity_from_matrix(case["P"]), exp["purity"], "purity")
    assert_close(cmetrics.purity_from_matrix(case["P"]), exp["marvin_cm_purity"], "marvin")
    if "closed_form_1_minus_sqrt" in exp:
        assert_close(exp["purity"], exp["closed_form_1_minus_sqrt"], "closed form")


@pytest.mark.parametrize("case", V06["sample_cases"], ids=lambda c: c["name"])
def test_entropy_and_purity_from_samples(case: dict[str, Any], backend: str) -> None:
    exp = case["expected"]
    p = np.array(num(case["scores"]), dtype=np.float64)
    kw: dict[str, Any] = {"sample_weight": case.get("sample_weight"), "backend": backend}
    assert_close(cmetrics.entropy_score(p, **kw), exp["entropy_score_b"], "entropy score")
    if "marvin_1_minus_mean_entropy" in exp:
        assert_close(cmetrics.entropy_score(p, **kw), exp["marvin_1_minus_mean_entropy"], "marvin")
    labels = case["labels"]
    got_p = quiet(cmetrics.prob_confusion_matrix, case["y_true"], p, labels=labels, normalize="true", **kw)
    want_p = np.array(num(exp["row_normalised_pcm_P"]), dtype=float)
    assert_close(got_p, np.nan_to_num(want_p), "row-normalised P")
    purity_value = quiet(cmetrics.purity, case["y_true"], p, labels=labels, **kw)
    assert_close(purity_value, exp["purity"], "purity")
    if np.isnan(num(exp["purity"])):
        with pytest.warns(cmetrics.UndefinedMetricWarning, match="Purity is undefined"):
            cmetrics.purity(case["y_true"], p, labels=labels, **kw)


@pytest.mark.parametrize("case", V07, ids=lambda c: c["name"])
def test_brier_log_loss_calibration(case: dict[str, Any], backend: str) -> None:
    exp = case["expected"]
    y, p = case["y_true"], np.array(case["y_proba"], dtype=np.float64)
    kw: dict[str, Any] = {"labels": case["labels"], "sample_weight": case["sample_weight"], "backend": backend}
    assert_close(cmetrics.brier_score(y, p, **kw), exp["brier_seed000_sum_over_classes"], "brier")
    binary = p.shape[1] == 2
    assert_close(cmetrics.brier_score(y, p, scale_by_half=binary, **kw), exp["brier_sklearn_default_auto"], "auto")
    assert_close(cmetrics.log_loss(y, p, **kw), exp["log_loss_sklearn"], "log loss")
    for bins in (10, 5):
        assert_close(
            cmetrics.expected_calibration_error(y, p, n_bins=bins, **kw), exp[f"ece_top_label_{bins}_bins_exact"], "ece"
        )
        assert_close(
            cmetrics.expected_calibration_error(y, p, n_bins=bins, **kw), exp[f"ece_top_label_{bins}_bins"], "ece float"
        )
        assert_close(cmetrics.max_calibration_error(y, p, n_bins=bins, **kw), exp[f"mce_top_label_{bins}_bins"], "mce")
        got = cmetrics.calibration_bins(y, p, n_bins=bins, **kw)
        detail = exp[f"ece_bins_detail_{bins}"]
        nonempty = {str(m + 1) for m in np.flatnonzero(got.weight > 0)}
        assert nonempty == set(detail)
        for m, d in detail.items():
            i = int(m) - 1
            assert_close(got.weight[i], d["weight"], f"bin {m} weight")
            assert_close(got.accuracy[i], d["accuracy"], f"bin {m} accuracy")
            assert_close(got.mean_confidence[i], d["mean_confidence"], f"bin {m} confidence")
        assert got.edges[3] == 3 / bins

"""cmetrics.sklearn: scorers in scikit-learn's model selection. Fold scores equal scikit-learn's
built-in scorers where both exist (binary, multiclass, string labels), the multi-metric scorer
equals the single ones, a fold missing a class scores, sample weights arrive through metadata
routing, and the scorers pickle for ``n_jobs=2``."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import cmetrics
from cmetrics.exceptions import ValidationError

sklearn = pytest.importorskip("sklearn", reason="scikit-learn is part of the test extra")
from sklearn.datasets import make_classification  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.metrics import get_scorer_names as sk_names  # noqa: E402
from sklearn.model_selection import GridSearchCV, PredefinedSplit, cross_validate  # noqa: E402

import cmetrics.sklearn as cs  # noqa: E402

MULTICLASS = [
    "accuracy", "balanced_accuracy", "f1_macro", "f1_micro", "f1_weighted", "precision_macro", "precision_weighted",
    "recall_macro", "recall_micro", "jaccard_macro", "jaccard_weighted", "matthews_corrcoef", "neg_log_loss",
    "neg_brier_score", "roc_auc_ovr", "roc_auc_ovo", "roc_auc_ovr_weighted", "roc_auc_ovo_weighted", "top_k_accuracy",
]  # fmt: skip
BINARY = ["f1", "precision", "recall", "jaccard", "roc_auc", "average_precision", "neg_log_loss", "neg_brier_score"]


def data(k: int = 3, n: int = 600, labels: list[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    x, y = make_classification(n, n_features=6, n_informative=4, n_classes=k, random_state=k)
    return x, (np.asarray(labels)[y] if labels is not None else y)


MODEL = LogisticRegression(max_iter=1000)


@pytest.mark.parametrize("name", MULTICLASS)
def test_multiclass_folds_equal_scikit_learn(name: str) -> None:
    x, y = data(labels=["ant", "bee", "cat"])
    ours = cross_validate(MODEL, x, y, cv=3, scoring=cs.get_scorer(name))["test_score"]
    theirs = cross_validate(MODEL, x, y, cv=3, scoring=name)["test_score"]
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)


@pytest.mark.parametrize("name", BINARY)
def test_binary_folds_equal_scikit_learn(name: str) -> None:
    x, y = data(k=2)
    ours = cross_validate(MODEL, x, y, cv=3, scoring=cs.get_scorer(name))["test_score"]
    theirs = cross_validate(MODEL, x, y, cv=3, scoring=name)["test_score"]
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)


def test_names_and_directions() -> None:
    names = set(cs.get_scorer_names())
    classification = set(MULTICLASS) | set(BINARY)
    assert classification <= names and classification <= set(sk_names())
    assert {"mcc", "informedness", "cf1_macro", "refinement", "neg_expected_calibration_error"} <= names
    x, y = data()
    model = LogisticRegression(max_iter=1000).fit(x, y)
    p = model.predict_proba(x)
    assert cs.get_scorer("neg_expected_calibration_error")(model, x, y) == pytest.approx(
        -cmetrics.expected_calibration_error(y, p)
    )
    assert cs.get_scorer("informedness")(model, x, y) == pytest.approx(cmetrics.informedness(y, model.predict(x)))
    assert cs.make_scorer("top_k_accuracy", k=1)(model, x, y) == pytest.approx(cmetrics.accuracy_score(y, p.argmax(1)))
    with pytest.raises(ValidationError, match="get_scorer_names"):
        cs.get_scorer("f2_macro")
    with pytest.raises(ValidationError, match="nope"):
        cs.make_multi_scorer(["accuracy", "nope"])


def test_multi_scorer_equals_the_single_ones_and_refits() -> None:
    x, y = data()
    names = ["accuracy", "f1_macro", "neg_log_loss", "mcc", "cf1_macro", "refinement", "roc_auc_ovr", "roc_auc_ovo"]
    multi = cross_validate(MODEL, x, y, cv=3, scoring=cs.make_multi_scorer(names))
    for name in names:
        single = cross_validate(MODEL, x, y, cv=3, scoring=cs.get_scorer(name))["test_score"]
        np.testing.assert_allclose(multi[f"test_{name}"], single, rtol=1e-10, err_msg=name)
    grid = {"C": [0.01, 0.1, 1.0]}
    ours = GridSearchCV(MODEL, grid, cv=3, scoring=cs.make_multi_scorer(["accuracy", "f1_macro"]), refit="f1_macro")
    theirs = GridSearchCV(MODEL, grid, cv=3, scoring=["accuracy", "f1_macro"], refit="f1_macro")
    ours.fit(x, y)
    theirs.fit(x, y)
    assert ours.best_params_ == theirs.best_params_
    np.testing.assert_allclose(ours.cv_results_["mean_test_f1_macro"], theirs.cv_results_["mean_test_f1_macro"])


def test_a_fold_missing_a_class_still_scores() -> None:
    x, y = data()
    order = np.argsort(y, kind="stable")
    x, y = x[order], y[order]
    fold = np.where(np.arange(y.size) % 2 == 0, 0, -1)  # the test fold: even rows of classes 0 and 1 only
    fold[y == 2] = -1
    model = LogisticRegression(max_iter=1000)
    got = cross_validate(
        model, x, y, cv=PredefinedSplit(fold), scoring=cs.make_multi_scorer(["neg_log_loss", "cf1_macro"])
    )
    test = fold == 0
    fitted = LogisticRegression(max_iter=1000).fit(x[~test], y[~test])
    want = -cmetrics.log_loss(y[test], fitted.predict_proba(x[test]), labels=[0, 1, 2])
    assert got["test_neg_log_loss"][0] == pytest.approx(want, rel=1e-10)
    single = cross_validate(model, x, y, cv=PredefinedSplit(fold), scoring=cs.get_scorer("neg_log_loss"))
    assert single["test_score"][0] == pytest.approx(want, rel=1e-10)


def test_sample_weight_through_metadata_routing() -> None:
    x, y = data()
    w = np.random.default_rng(0).random(y.size) + 0.1
    with sklearn.config_context(enable_metadata_routing=True):
        model = LogisticRegression(max_iter=1000).set_fit_request(sample_weight=False)
        ours = cs.get_scorer("f1_macro").set_score_request(sample_weight=True)
        theirs = sklearn.metrics.get_scorer("f1_macro").set_score_request(sample_weight=True)
        a = cross_validate(model, x, y, cv=3, scoring=ours, params={"sample_weight": w})["test_score"]
        b = cross_validate(model, x, y, cv=3, scoring=theirs, params={"sample_weight": w})["test_score"]
        multi = cs.make_multi_scorer(["f1_macro", "neg_log_loss"]).set_score_request(sample_weight=True)
        m = cross_validate(model, x, y, cv=3, scoring=multi, params={"sample_weight": w})
    np.testing.assert_allclose(a, b, rtol=1e-10)
    np.testing.assert_allclose(m["test_f1_macro"], b, rtol=1e-10)
    unweighted = cross_validate(MODEL, x, y, cv=3, scoring="f1_macro")["test_score"]
    assert not np.allclose(a, unweighted)


def test_scorers_pickle_and_run_in_two_processes() -> None:
    x, y = data()
    scorer = cs.make_multi_scorer(["accuracy", "neg_log_loss"])
    again = pickle.loads(pickle.dumps(scorer))
    one = cross_validate(MODEL, x, y, cv=3, scoring=again, n_jobs=1)
    two = cross_validate(MODEL, x, y, cv=3, scoring=scorer, n_jobs=2)
    np.testing.assert_allclose(one["test_neg_log_loss"], two["test_neg_log_loss"], rtol=1e-12)
    single = pickle.loads(pickle.dumps(cs.get_scorer("roc_auc_ovr")))
    assert repr(single) == "cmetrics.sklearn.get_scorer('roc_auc_ovr')"

"""One path for each thing: every closed option is checked by one function with one message,
wherever it is passed; the four report entry points give the same report; reversed pairs have
one proportion."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import cmetrics
from cmetrics.exceptions import ValidationError

Y, P = [0, 1, 1, 2, 2, 0], [0, 1, 2, 2, 1, 0]
PROBA = [[0.8, 0.1, 0.1], [0.1, 0.7, 0.2], [0.2, 0.3, 0.5], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3], [0.6, 0.2, 0.2]]
OK, CONF = [1, 0, 1, 1, 0, 1], [0.9, 0.8, 0.4, 0.7, 0.2, 0.6]

# (option, a bad value, the calls that take it)
OPTIONS: list[tuple[str, Any, list[Callable[[Any, str], Any]]]] = [
    (
        "average",
        "mean",
        [
            lambda v, b: cmetrics.f1_score(Y, P, average=v, backend=b),
            lambda v, b: cmetrics.precision_recall_fscore_support(Y, P, average=v, backend=b),
            lambda v, b: cmetrics.cf1_score(Y, PROBA, average=v, backend=b),
        ],
    ),
    (
        "zero_division",
        "skip",
        [
            lambda v, b: cmetrics.recall_score(Y, P, average="macro", zero_division=v, backend=b),
            lambda v, b: cmetrics.youden_j_per_class(Y, P, zero_division=v, backend=b),
            lambda v, b: cmetrics.evaluate(Y, y_pred=P, zero_division=v, backend=b),
            lambda v, b: cmetrics.Evaluator(zero_division=v, backend=b),
        ],
    ),
    (
        "normalize",
        "rows",
        [
            lambda v, b: cmetrics.confusion_matrix(Y, P, normalize=v, backend=b),
            lambda v, b: cmetrics.prob_confusion_matrix(Y, PROBA, normalize=v, backend=b),
        ],
    ),
    (
        "weights",
        "cubic",
        [
            lambda v, b: cmetrics.cohen_kappa_score(Y, P, weights=v, backend=b),
            lambda v, b: cmetrics.ConfusionMatrix.from_predictions(Y, P, backend=b).cohen_kappa(weights=v),
        ],
    ),
    (
        "ties",
        "none",
        [
            lambda v, b: cmetrics.refinement(OK, CONF, ties=v, backend=b),
            lambda v, b: cmetrics.selective_prediction_scores(Y, y_proba=PROBA, ties=v, backend=b),
        ],
    ),
    ("variant", "a", [lambda v, b: cmetrics.kendall_tau(CONF, OK, variant=v, backend=b)]),
    (
        "ranking",
        "fast",
        [
            lambda v, b: cmetrics.evaluate(Y, y_proba=PROBA, ranking=v, backend=b),
            lambda v, b: cmetrics.Evaluator(ranking=v, backend=b),
        ],
    ),
    (
        "n_bins",
        0,
        [
            lambda v, b: cmetrics.calibration_bins(Y, PROBA, n_bins=v, backend=b),
            lambda v, b: cmetrics.evaluate(Y, y_proba=PROBA, n_bins=v, backend=b),
            lambda v, b: cmetrics.Evaluator(n_bins=v, backend=b),
        ],
    ),
    (
        "ranking_bins",
        1.5,
        [
            lambda v, b: cmetrics.evaluate(Y, y_proba=PROBA, ranking="approximate", ranking_bins=v, backend=b),
            lambda v, b: cmetrics.Evaluator(ranking_bins=v, backend=b),
        ],
    ),
    (
        "n_classes",
        0,
        [
            lambda v, b: cmetrics.normalized_information_transfer(Y, P, n_classes=v, backend=b),
            lambda v, b: cmetrics.Evaluator(n_classes=v, backend=b),
        ],
    ),
]
CALLS = [(name, bad, i, call) for name, bad, calls in OPTIONS for i, call in enumerate(calls)]


@pytest.mark.parametrize(("name", "bad", "i", "call"), CALLS, ids=[f"{c[0]}-{c[2]}" for c in CALLS])
def test_every_option_has_one_check_and_one_message(
    name: str, bad: Any, i: int, call: Callable[[Any, str], Any], backend: str
) -> None:
    with pytest.raises(ValidationError) as info:
        call(bad, backend)
    # The message of the one check: the argument, the value, and what to pass instead.
    assert str(info.value).startswith(f"{name}={bad!r} is invalid; "), str(info.value)
    assert type(info.value) is ValidationError


def test_the_four_report_entry_points_give_one_report(backend: str) -> None:
    rng = np.random.default_rng(5)
    y = rng.integers(0, 4, 500)
    p = np.where(rng.random(500) < 0.6, y, rng.integers(0, 4, 500))
    w = rng.random(500)
    for weights in (None, w):
        want = cmetrics.evaluate(y, y_pred=p, sample_weight=weights, backend=backend).to_dict()
        got = [
            cmetrics.hard_label_report(y, p, sample_weight=weights, backend=backend),
            cmetrics.ConfusionMatrix.from_predictions(y, p, sample_weight=weights, backend=backend).report(),
            cmetrics.Evaluator(backend=backend)
            .update(y[:200], y_pred=p[:200], sample_weight=None if weights is None else weights[:200])
            .update(y[200:], y_pred=p[200:], sample_weight=None if weights is None else weights[200:])
            .report(),
        ]
        for report in got:
            assert isinstance(report, cmetrics.Report)
            assert _same(report.to_dict(), want)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        return all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        assert len(a) == len(b)
        return all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        assert b == pytest.approx(a, rel=1e-12, abs=1e-15), (a, b)
        return True
    assert a == b, (a, b)
    return True


def test_reversed_pair_proportion_is_one_exact_fraction(backend: str) -> None:
    """The function and the report agree with the pair count over n^2, done in fractions."""
    rng = np.random.default_rng(3)
    ok = rng.random(300) < 0.7
    conf = np.round(rng.random(300), 1)
    pairs = sum(1 for i, j in itertools.permutations(range(300), 2) if ok[i] and not ok[j] and conf[i] < conf[j])
    want = float(Fraction(pairs, 300 * 300))
    assert cmetrics.reversed_pair_proportion(ok, conf, backend=backend) == want
    y = np.where(ok, 1, 0)
    report = cmetrics.evaluate(y, y_pred=np.ones(300, dtype=int), confidence=conf, backend=backend)
    assert report.reversed_pair_proportion == want
    assert (
        cmetrics.selective_prediction_scores(
            y, y_pred=np.ones(300, dtype=int), confidence=conf, backend=backend
        ).reversed_pair_proportion
        == want
    )

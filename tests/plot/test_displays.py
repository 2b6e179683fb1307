"""cmetrics.plot's Displays: their values equal scikit-learn's Displays on the same rows, the
figures have the expected elements (headless, Agg), the one-vs-rest curves and the curves drawn
from a merged Evaluator equal those of the rows, and a curve is decimated keeping its hull."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import pytest

import cmetrics
from cmetrics.exceptions import ValidationError

mpl = pytest.importorskip("matplotlib", reason="matplotlib is part of the test extra")
mpl.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn import calibration as skcal  # noqa: E402
from sklearn import metrics as skm  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from cmetrics import plot as cp  # noqa: E402
from cmetrics._results.figures import MAX_VERTICES, decimate  # noqa: E402


@pytest.fixture(autouse=True)
def _close() -> Iterator[None]:
    yield
    plt.close("all")


def binary(n: int = 3000, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    score = np.round(np.clip(0.3 * y + rng.normal(0.35, 0.2, n), 0, 1), 2)  # ties
    return y, score, rng.random(n) + 0.2


def multiclass(n: int = 4000, k: int = 4, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    z = rng.normal(size=(n, k)) + 1.2 * np.eye(k)[y]
    p = np.exp(z)
    # Multiples of 1/200: normalised, with tied scores.
    return y, rng.multinomial(200, p / p.sum(axis=1, keepdims=True)) / 200


@pytest.mark.parametrize("weighted", [False, True])
def test_roc_pr_det_equal_scikit_learn(weighted: bool) -> None:
    y, s, w = binary()
    sw = w if weighted else None
    ours = cp.RocCurveDisplay.from_predictions(y, s, sample_weight=sw, name="m", plot_chance_level=True)
    theirs = skm.RocCurveDisplay.from_predictions(y, s, sample_weight=sw, name="m")
    np.testing.assert_allclose(ours.fpr, theirs.fpr, rtol=1e-12)
    np.testing.assert_allclose(ours.tpr, theirs.tpr, rtol=1e-12)
    assert ours.roc_auc == pytest.approx(theirs.roc_auc, rel=1e-12)
    assert ours.line_.get_label() == f"m (AUC = {theirs.roc_auc:0.2f})"
    assert ours.chance_level_ is not None and ours.ax_.get_xlabel().startswith("False Positive Rate")
    pr = cp.PrecisionRecallDisplay.from_predictions(y, s, sample_weight=sw)
    skpr = skm.PrecisionRecallDisplay.from_predictions(y, s, sample_weight=sw)
    np.testing.assert_allclose(pr.precision, skpr.precision, rtol=1e-12)
    np.testing.assert_allclose(pr.recall, skpr.recall, rtol=1e-12)
    assert pr.average_precision == pytest.approx(skpr.average_precision, rel=1e-12)
    assert pr.prevalence_pos_label == pytest.approx(skpr.prevalence_pos_label, rel=1e-12)
    det = cp.DetCurveDisplay.from_predictions(y, s, sample_weight=sw)
    skdet = skm.DetCurveDisplay.from_predictions(y, s, sample_weight=sw)
    np.testing.assert_allclose(det.fpr, skdet.fpr, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(det.fnr, skdet.fnr, rtol=1e-12, atol=1e-12)


def test_string_labels_and_pos_label() -> None:
    y, s, _ = binary(seed=3)
    labels = np.where(y == 1, "spam", "ham")
    ours = cp.RocCurveDisplay.from_predictions(labels, 1 - s, pos_label="ham")
    theirs = skm.RocCurveDisplay.from_predictions(labels, 1 - s, pos_label="ham")
    np.testing.assert_array_equal(ours.fpr, theirs.fpr)
    assert ours.roc_auc == pytest.approx(theirs.roc_auc)


def test_confusion_matrix_counts_and_rates() -> None:
    rng = np.random.default_rng(4)
    y = rng.integers(0, 5, 500)
    p = np.where(rng.random(500) < 0.6, y, rng.integers(0, 5, 500))
    for normalize in (None, "true", "pred", "all"):
        ours = cp.ConfusionMatrixDisplay.from_predictions(y, p, normalize=normalize)  # type: ignore[arg-type]
        theirs = skm.ConfusionMatrixDisplay.from_predictions(y, p, normalize=normalize)
        np.testing.assert_allclose(ours.confusion_matrix, theirs.confusion_matrix, rtol=1e-12)
    d = cp.ConfusionMatrixDisplay.from_predictions(y, p)
    cm = skm.confusion_matrix(y, p)
    assert d.text_ is not None and d.text_.shape == (5, 5)
    assert d.text_[2, 3].get_text() == f"{cm[2, 3]}\n{100 * cm[2, 3] / cm[2].sum():.0f}%"
    np.testing.assert_allclose(d.im_.get_array(), cm / cm.sum(axis=1, keepdims=True))
    assert [t.get_text() for t in d.ax_.get_xticklabels()] == [str(i) for i in range(5)]
    # 40 classes: colour kept, no text, every cell in the image.
    y40 = rng.integers(0, 40, 4000)
    big = cp.ConfusionMatrixDisplay.from_predictions(y40, np.roll(y40, 1))
    assert big.text_ is None and big.im_.get_array().shape == (40, 40)


def test_calibration_equals_scikit_learn() -> None:
    y, s, _ = binary(seed=5)
    for strategy in ("uniform", "quantile"):
        ours = cp.CalibrationDisplay.from_predictions(y, s, n_bins=7, strategy=strategy)  # type: ignore[arg-type]
        theirs = skcal.CalibrationDisplay.from_predictions(y, s, n_bins=7, strategy=strategy)
        np.testing.assert_allclose(ours.prob_true, theirs.prob_true, rtol=1e-12)
        np.testing.assert_allclose(ours.prob_pred, theirs.prob_pred, rtol=1e-12)
        assert ours.hist_ax_ is not None and ours.ax_.get_ylabel() == "Fraction of positives"
    ym, pm = multiclass()
    top = cp.CalibrationDisplay.from_predictions(ym, pm, n_bins=10)
    bins = cmetrics.calibration_bins(ym, pm, n_bins=10)
    keep = bins.weight > 0
    np.testing.assert_allclose(top.prob_true, bins.accuracy[keep])
    assert top.ece == pytest.approx(cmetrics.expected_calibration_error(ym, pm, n_bins=10), rel=1e-12)
    assert f"ECE = {top.ece:0.3f}" in top.line_.get_label()


def test_risk_coverage_against_a_plain_loop() -> None:
    ym, pm = multiclass(n=600)
    d = cp.RiskCoverageDisplay.from_predictions(ym, pm, plot_chance_level=True)
    pred, conf = pm.argmax(axis=1), pm.max(axis=1)
    wrong = pred != ym
    cov, risk = [], []
    for c in sorted(set(conf.tolist()), reverse=True):
        accepted = conf >= c
        cov.append(accepted.mean())
        risk.append(wrong[accepted].mean())
    np.testing.assert_allclose(d.coverage, cov, rtol=1e-12)
    np.testing.assert_allclose(d.risk, risk, rtol=1e-12)
    area = sum((c1 - c0) * r for c0, c1, r in zip([0.0, *cov[:-1]], cov, risk, strict=True))
    assert d.aurc == pytest.approx(area, rel=1e-12)
    assert d.chance_level_ is not None and d.line_.get_label() == f"AURC = {d.aurc:0.2f}"
    with pytest.raises(ValidationError, match="y_pred"):
        cp.RiskCoverageDisplay.from_predictions(ym, conf)


def test_one_vs_rest_curves() -> None:
    y, p = multiclass()
    d = cp.RocCurveDisplay.from_predictions(y, p)
    assert len(d.lines_) == 4 + 2 and isinstance(d.line_, list)
    assert isinstance(d.roc_auc, list)
    for j in range(4):
        assert d.roc_auc[j] == pytest.approx(skm.roc_auc_score(y == j, p[:, j]), rel=1e-12)
    assert d.roc_auc[4] == pytest.approx(skm.roc_auc_score(np.eye(4)[y], p, average="micro"), rel=1e-12)
    assert d.roc_auc[5] == pytest.approx(skm.roc_auc_score(y, p, multi_class="ovr", average="macro"), rel=1e-12)
    legend = [t.get_text() for t in d.ax_.get_legend().get_texts()]
    assert legend[5] == f"macro-average (AUC = {d.roc_auc[5]:0.2f})"
    pr = cp.PrecisionRecallDisplay.from_predictions(y, p)
    assert isinstance(pr.average_precision, list) and len(pr.lines_) == 5
    for j in range(4):
        assert pr.average_precision[j] == pytest.approx(skm.average_precision_score(y == j, p[:, j]), rel=1e-12)
    assert pr.average_precision[4] == pytest.approx(
        skm.average_precision_score(np.eye(4)[y], p, average="micro"), rel=1e-12
    )


@pytest.mark.parametrize("k", [2, 3])
def test_curves_from_an_evaluator_equal_the_rows(k: int) -> None:
    y, p = multiclass(k=k, seed=7)
    halves = [
        cmetrics.Evaluator(n_classes=k).update(y[:1500], y_proba=p[:1500]),
        cmetrics.Evaluator(n_classes=k).update(y[1500:], y_proba=p[1500:]),
    ]
    ev = cmetrics.Evaluator.from_bytes(halves[0].merge(halves[1]).to_bytes())
    got = cp.RocCurveDisplay.from_evaluator(ev)
    want = cp.RocCurveDisplay.from_predictions(y, p if k > 2 else p[:, 1])
    for a, b in zip(np.atleast_1d(got.roc_auc), np.atleast_1d(want.roc_auc), strict=True):
        assert a == pytest.approx(b, rel=1e-12)
    for fa, fb in zip(
        np.atleast_2d(got.fpr) if k == 2 else got.fpr, np.atleast_2d(want.fpr) if k == 2 else want.fpr, strict=True
    ):
        np.testing.assert_allclose(fa, fb, rtol=1e-12)
    pr = cp.PrecisionRecallDisplay.from_evaluator(ev)
    pr_rows = cp.PrecisionRecallDisplay.from_predictions(y, p if k > 2 else p[:, 1])
    for a, b in zip(np.atleast_1d(pr.average_precision), np.atleast_1d(pr_rows.average_precision), strict=True):
        assert a == pytest.approx(b, rel=1e-12)
    if k == 2:
        det = cp.DetCurveDisplay.from_evaluator(ev)
        det_rows = cp.DetCurveDisplay.from_predictions(y, p[:, 1], drop_intermediate=False)
        np.testing.assert_allclose(det.fpr, det_rows.fpr, rtol=1e-12)
        np.testing.assert_allclose(det.fnr, det_rows.fnr, rtol=1e-12)
    rc = cp.RiskCoverageDisplay.from_evaluator(ev)
    rows = cp.RiskCoverageDisplay.from_predictions(y, p)
    np.testing.assert_allclose(rc.coverage, rows.coverage, rtol=1e-12)
    np.testing.assert_allclose(rc.risk, rows.risk, rtol=1e-12)
    assert rc.aurc == pytest.approx(ev.report().aurc, rel=1e-12)
    cm = cp.ConfusionMatrixDisplay.from_evaluator(ev)
    np.testing.assert_array_equal(cm.confusion_matrix, skm.confusion_matrix(y, p.argmax(axis=1)))
    cal = cp.CalibrationDisplay.from_evaluator(ev)
    assert cal.ece == pytest.approx(ev.report().expected_calibration_error, rel=1e-12)
    pcm = cp.ProbConfusionMatrixDisplay.from_evaluator(ev)
    np.testing.assert_allclose(pcm.prob_confusion_matrix, cmetrics.prob_confusion_matrix(y, p), rtol=1e-12)


def test_approximate_states_say_so_and_hard_states_are_refused() -> None:
    y, p = multiclass(k=2, seed=8)
    ev = cmetrics.Evaluator(n_classes=2, ranking="approximate", ranking_bins=64).update(y, y_proba=p)
    d = cp.RocCurveDisplay.from_evaluator(ev, name="model")
    assert "binned: 64 bins" in d.line_.get_label()
    assert "binned" in cp.RiskCoverageDisplay.from_evaluator(ev).line_.get_label()
    hard = cmetrics.Evaluator().update(y, y_pred=p.argmax(axis=1))
    with pytest.raises(ValidationError, match="probabilities"):
        cp.RocCurveDisplay.from_evaluator(hard)


def test_from_estimator_equals_scikit_learn() -> None:
    rng = np.random.default_rng(9)
    x = rng.normal(size=(800, 3))
    y = (x[:, 0] + rng.normal(size=800) > 0).astype(int)
    model = LogisticRegression().fit(x, y)
    ours = cp.RocCurveDisplay.from_estimator(model, x, y)
    theirs = skm.RocCurveDisplay.from_estimator(model, x, y)
    np.testing.assert_array_equal(ours.fpr, theirs.fpr)
    assert ours.roc_auc == pytest.approx(theirs.roc_auc, rel=1e-12)
    assert ours.line_.get_label().startswith("LogisticRegression (AUC")
    pr = cp.PrecisionRecallDisplay.from_estimator(model, x, y, response_method="decision_function")
    skpr = skm.PrecisionRecallDisplay.from_estimator(model, x, y, response_method="decision_function")
    assert pr.average_precision == pytest.approx(skpr.average_precision, rel=1e-12)
    cm = cp.ConfusionMatrixDisplay.from_estimator(model, x, y)
    np.testing.assert_array_equal(cm.confusion_matrix, skm.confusion_matrix(y, model.predict(x)))
    cal = cp.CalibrationDisplay.from_estimator(model, x, y, n_bins=6)
    skcal_d = skcal.CalibrationDisplay.from_estimator(model, x, y, n_bins=6)
    np.testing.assert_allclose(cal.prob_true, skcal_d.prob_true, rtol=1e-12)


def _upper_hull_area(x: np.ndarray, y: np.ndarray) -> tuple[list[int], float]:
    """The upper convex hull (Andrew's monotone chain, plain Python) and the area under it."""
    hull: list[int] = []
    for i in sorted(range(x.size), key=lambda i: (x[i], y[i])):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            if (x[b] - x[a]) * (y[i] - y[a]) - (y[b] - y[a]) * (x[i] - x[a]) < 0:
                break
            hull.pop()
        hull.append(i)
    hx, hy = x[hull], y[hull]
    return hull, float(np.sum(np.diff(hx) * (hy[1:] + hy[:-1]) / 2))


@pytest.mark.parametrize("n", [40_000, 400_000])
def test_decimation_keeps_the_ends_and_the_hull(n: int) -> None:
    """Up to 2^17 points every vertex of the upper hull is kept; past it the hull is looked for
    among the first points of 2^16 steps of the path: the area under the kept points' hull is
    the full hull's to 1e-4 (far below a pixel)."""
    y, s, _ = binary(n=n, seed=10)
    s = s + np.random.default_rng(11).normal(0, 1e-3, s.size)  # distinct scores: a long curve
    fpr, tpr, _ = cmetrics.roc_curve(y, s, drop_intermediate=False)
    keep = decimate(fpr, tpr)
    assert keep[0] == 0 and keep[-1] == fpr.size - 1 and keep.size <= 2 * MAX_VERTICES
    assert np.all(np.diff(keep) > 0)
    hull, area = _upper_hull_area(fpr, tpr)
    kept_area = _upper_hull_area(fpr[keep], tpr[keep])[1]
    if fpr.size <= 1 << 17:
        assert set(hull) <= set(keep.tolist())
    assert area - 1e-4 <= kept_area <= area + 1e-12
    d = cp.RocCurveDisplay.from_predictions(y, s, drop_intermediate=False)
    assert d.line_.get_xdata().size == keep.size


def test_import_cmetrics_leaves_matplotlib_alone_and_its_absence_is_named() -> None:
    code = "import cmetrics, cmetrics.plot, sys; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    code = (
        "import sys; sys.modules['matplotlib'] = None; sys.modules['matplotlib.pyplot'] = None\n"
        "import cmetrics.plot as cp\n"
        "try:\n    cp.RocCurveDisplay.from_predictions([0, 1], [0.2, 0.7])\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == (
        "RocCurveDisplay requires matplotlib. You can install matplotlib with `pip install matplotlib`"
    )


def test_bad_arguments() -> None:
    y, p = multiclass()
    with pytest.raises(cmetrics.exceptions.ShapeError, match="labels"):
        cp.RocCurveDisplay.from_predictions(y, p, labels=[0, 1, 2])
    with pytest.raises(ValidationError, match="normalize"):
        cp.ConfusionMatrixDisplay.from_predictions(y, y, normalize="rows")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="curve"):
        cp.RocCurveDisplay.from_predictions(y, p, curve_kwargs=[{"color": "r"}, {"color": "b"}])
    with pytest.raises(ValidationError, match="n_bins"):
        cp.calibration_curve([0, 1], [0.2, 0.4], n_bins=0)
    with pytest.raises(ValidationError, match="response_method"):
        cp.RocCurveDisplay.from_estimator(object(), [[0]], [0], response_method="predict")  # type: ignore[arg-type]


def test_compare_models_and_per_class_bars() -> None:
    y, p = multiclass(seed=12)
    sharp = p**3 / (p**3).sum(axis=1, keepdims=True)
    reports = {
        "base": [cmetrics.evaluate(y[:n], y_proba=p[:n]) for n in (500, 1000, 4000)],
        "sharp": cmetrics.evaluate(y, y_proba=sharp),
    }
    d = cp.compare_models(reports)
    assert d.accuracy["base"].tolist() == [r.accuracy for r in reports["base"]]  # type: ignore[union-attr]
    assert d.purity["sharp"].tolist() == [reports["sharp"].purity]  # type: ignore[union-attr]
    a, b = d.lines_["base"]
    np.testing.assert_array_equal(a.get_ydata(), d.entropy_score["base"])
    np.testing.assert_array_equal(b.get_xdata(), d.accuracy["base"])
    assert [ax.get_ylabel() for ax in d.axes_] == ["entropy score", "purity"]
    guides = [line for line in d.axes_[0].get_lines() if line.get_linestyle() == ":"]
    assert len(guides) == 2  # accuracy and entropy score split at 0.5
    with pytest.raises(ValidationError, match="probabilities"):
        cp.compare_models({"hard": cmetrics.evaluate(y, y_pred=p.argmax(axis=1))})
    r = cmetrics.evaluate(y, y_proba=p, bootstrap=300, seed=4)
    bars = cp.per_class_bars({"m": r, "n": cmetrics.evaluate(y, y_proba=sharp)}, "f1")
    assert r.intervals is not None
    want = [r.intervals.per_class[lab]["f1"].low for lab in r.per_class]
    np.testing.assert_array_equal(bars.low["m"], want)
    assert np.isnan(bars.low["n"]).all() and len(bars.bars_["m"]) == 4
    with pytest.raises(ValidationError, match="per-class"):
        cp.per_class_bars({"m": r}, "nope")


@pytest.mark.parametrize("weighted", [False, True])
def test_curve_points_of_a_state(weighted: bool) -> None:
    """A ranking state's curve points: every point of the curve up to ``steps`` groups (those of
    :func:`cmetrics.confusion_matrix_at_thresholds`), else a subset of them with both ends, one per
    step of ``(fpr + tpr) / 2``; the Rust state and the numpy one give the same bits."""
    from cmetrics import _numpy as npb
    from tests.conftest import BACKENDS

    rng = np.random.default_rng(13)
    n = 50_000
    ok = rng.random(n) < 0.4
    score = np.round(rng.random(n) + 0.3 * ok, 4)
    w = rng.random(n) + 0.1 if weighted else None
    _, fps, _, tps, thr = cmetrics.confusion_matrix_at_thresholds(ok, score, sample_weight=w)
    states = [npb.GroupState(weighted)]
    if "rust" in BACKENDS:
        from cmetrics import _core

        states.append(_core.GroupState(weighted))
    got = []
    for st in states:
        st.add(ok[: n // 2], score[: n // 2], None if w is None else w[: n // 2])
        st.add(ok[n // 2 :], score[n // 2 :], None if w is None else w[n // 2 :])
        got.append((st.curve_points(1 << 20), st.curve_points(100)))
    full, thin = got[0]
    np.testing.assert_array_equal(full.thresholds, thr)
    np.testing.assert_allclose(full.tps, tps, rtol=1e-12)
    np.testing.assert_allclose(full.fps, fps, rtol=1e-12)
    assert thin.thresholds[0] == thr[0] and thin.thresholds[-1] == thr[-1]
    assert 50 <= thin.thresholds.size <= 102 and set(thin.thresholds) <= set(thr)
    position = (thin.fps / thin.fps[-1] + thin.tps / thin.tps[-1]) / 2
    assert np.all(np.diff(np.floor(position[1:-1] * 100)) > 0)  # one point per step
    for other in got[1:]:
        for a, b in zip(other, got[0], strict=True):
            for x, y in zip(a, b, strict=True):
                np.testing.assert_array_equal(x, y)


def test_curves_from_a_report_with_curves() -> None:
    y, p = multiclass(k=3, seed=14)
    ev = cmetrics.Evaluator(n_classes=3).update(y, y_proba=p)
    report = ev.report(curves=True)
    roc = cp.RocCurveDisplay.from_report(report)
    live = cp.RocCurveDisplay.from_evaluator(ev)
    assert isinstance(roc.roc_auc, list) and isinstance(live.roc_auc, list)
    np.testing.assert_allclose(roc.roc_auc, live.roc_auc, rtol=1e-12)  # classes, micro, macro
    assert len(roc.lines_) == 5
    pr = cp.PrecisionRecallDisplay.from_report(report)
    assert isinstance(pr.average_precision, list)
    assert pr.average_precision[0] == pytest.approx(skm.average_precision_score(y == 0, p[:, 0]), rel=1e-12)
    rc = cp.RiskCoverageDisplay.from_report(report)
    assert rc.aurc == pytest.approx(report.aurc, rel=1e-12)
    with pytest.raises(ValidationError, match="curves=True"):
        cp.RocCurveDisplay.from_report(ev.report())

"""Report pages: ``Report.to_html`` is one self-contained page (tables, inline SVG figures, no
script, nothing fetched), hostile labels are escaped, huge label sets are summarised, the
notebook views are there, and the page opens in a real headless browser (Chromium) with its
tables and figures rendered."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import cmetrics
from cmetrics.cli import cli
from cmetrics.exceptions import ValidationError

mpl = pytest.importorskip("matplotlib", reason="matplotlib is part of the test extra")
mpl.use("Agg")

VOID = {"meta", "br", "img", "input", "link", "hr", "col", "area", "base", "wbr", "source", "path", "use", "rect"}


class Page(HTMLParser):
    """Tags, their nesting (balanced outside SVG) and the text of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.stack: list[str] = []
        self.text: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += attrs
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += attrs

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:])
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(page: str) -> Page:
    p = Page()
    p.feed(page)
    p.close()
    assert p.stack == [], p.stack
    return p


def proba_report(labels: list[str] | None = None, n: int = 20_000, k: int = 4) -> cmetrics.Report:
    rng = np.random.default_rng(0)
    y = rng.integers(0, k, n)
    z = rng.normal(size=(n, k)) + 1.5 * np.eye(k)[y]
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    names = np.array(labels if labels is not None else [f"c{j}" for j in range(k)])
    ev = cmetrics.Evaluator(names).update(names[y], y_proba=p)
    return ev.report(curves=True)


def test_the_page_is_self_contained_with_every_figure() -> None:
    r = proba_report()
    page = r.to_html(title="My model")
    doc = parse(page)
    assert "script" not in doc.tags and "link" not in doc.tags and "img" not in doc.tags
    assert not [v for k, v in doc.attrs if k in ("src", "href") and v and not v.startswith("#")]
    assert doc.tags.count("svg") == 6 and doc.tags.count("figure") == 6  # CM, pCM, reliability, ROC, PR, RC
    text = " ".join(doc.text)
    for family, _ in r.families():
        assert family.capitalize() in text
    assert f"{r.accuracy:.6g}" in text and "My model" in text
    # The curves' legends carry the metrics: the ROC of class c0 and the AURC of the report.
    roc_c0 = next(c for c in r.curves or [] if c.kind == "roc" and c.label == "c0")
    assert f"c0 (AUC = {roc_c0.value:0.3f})" in text
    assert f"(AURC = {r.aurc:0.3f})" in text
    assert len(page) < 400_000


def test_hostile_labels_are_escaped() -> None:
    labels = ["<script>alert(1)</script>", 'say "hi"', "bell\x07tab\t", "&amp;"]
    r = proba_report(labels)
    page = r.to_html()
    assert "<script>" not in page and "alert(1)</script>" not in page
    assert "&lt;script&gt;" in page and "say &quot;hi&quot;" in page and "bell\\x07tab\\t" in page
    assert "&amp;amp;" in page
    assert "\x07" not in page
    parse(page)
    assert "<script>" not in r._repr_html_()
    hostile_title = r.to_html(title="</title><script>x</script>", plots=False)
    assert "<script>" not in hostile_title


def test_ten_thousand_classes_are_summarised() -> None:
    rng = np.random.default_rng(1)
    y = rng.integers(0, 10_000, 200_000)
    pred = np.where(rng.random(y.size) < 0.5, y, rng.integers(0, 10_000, y.size))
    before = cmetrics.get_max_classes()
    cmetrics.set_max_classes(10_000)
    try:
        r = cmetrics.evaluate(y, y_pred=pred)
    finally:
        cmetrics.set_max_classes(before)
    page = r.to_html()
    assert len(page) < 200_000
    assert "10,000 classes" in page and "confusion matrices are not drawn" in page
    assert parse(page).tags.count("tr") <= 200


def test_without_matplotlib_the_page_says_how_to_get_figures(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['matplotlib'] = None; sys.modules['matplotlib.pyplot'] = None\n"
        "import cmetrics\n"
        "r = cmetrics.evaluate([0, 1, 1], y_proba=[[0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])\n"
        f"r.to_html({str(tmp_path / 'p.html')!r})\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    page = (tmp_path / "p.html").read_text()
    assert "<svg" not in page and 'pip install "cmetrics[plot]"' in page.replace("&quot;", '"')
    assert "log_loss" in page


def test_notebook_views() -> None:
    r = proba_report(k=25)
    view = r._repr_html_()
    assert "<details>" in view and "25 classes" in view and "<svg" not in view
    bundle = r._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/markdown", "text/html"}
    assert bundle["text/markdown"] == r.to_markdown()
    small = proba_report(k=3)._repr_html_()
    assert "<details>" not in small


def test_grouped_page_puts_the_worst_group_first() -> None:
    rng = np.random.default_rng(2)
    n = 6000
    g = rng.choice(["de", "en", "fr"], n)
    y = rng.integers(0, 3, n)
    good = {"de": 0.9, "en": 0.6, "fr": 0.75}
    right = rng.random(n) < np.vectorize(good.get)(g)
    p = np.full((n, 3), 0.1)
    p[np.arange(n), np.where(right, y, (y + 1) % 3)] = 0.8
    grouped = cmetrics.evaluate(y, y_proba=p, groups=g)
    page = grouped.to_html(worst_by="accuracy", plots=False)
    order = [page.index(f"<td>{k}</td>", page.index('id="groups"')) for k in ("en", "fr", "de")]
    assert order == sorted(order)
    by_loss = grouped.to_html(worst_by="log_loss", plots=False)
    loss = {k: grouped[k].log_loss for k in good}
    worst = max(loss, key=loss.__getitem__)
    first_row = by_loss.index('<tr class="worst"><td>', by_loss.index('id="groups"'))
    assert by_loss[first_row:].startswith(f'<tr class="worst"><td>{worst}</td>')
    with pytest.raises(ValidationError, match="worst_by"):
        grouped.to_html(worst_by="nope")


def test_the_command_line_writes_the_page_and_the_figures(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    n, k = 5000, 3
    y = rng.integers(0, k, n)
    p = rng.dirichlet(np.ones(k), n) * 0.5 + 0.5 * np.eye(k)[y]
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"label": y, **{f"p_{j}": p[:, j] for j in range(k)}})
    pq.write_table(table, tmp_path / "dump.parquet")
    out = tmp_path / "report.html"
    plots = tmp_path / "figs"
    res = CliRunner().invoke(
        cli,
        [
            "score", str(tmp_path / "dump.parquet"), "--label", "label", "--proba-prefix", "p_",
            "--class-ranking", "exact", "--format", "html", "-o", str(out), "--plots", str(plots), "-q",
        ],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = parse(out.read_text())
    assert doc.tags.count("svg") == 6
    names = sorted(f.name for f in plots.iterdir())
    assert names == [
        "confusion_matrix.svg",
        "precision_recall.svg",
        "prob_confusion_matrix.svg",
        "reliability.svg",
        "risk_coverage.svg",
        "roc.svg",
    ]
    assert all((plots / n).read_text().lstrip().startswith("<?xml") for n in names)


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def test_the_page_opens_in_a_headless_browser(tmp_path: Path) -> None:
    """Chromium (Debian's package; CI installs it) loads the page: the DOM after load has the
    tables and the inline figures, nothing is logged as an error, and the screenshot is a
    picture (not a blank page)."""
    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs Chromium (.ci/run); the browser test must run there")
        pytest.skip("no Chromium here (apt-get install chromium)")
    page = tmp_path / "report.html"
    proba_report().to_html(page)
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1200,2400"]
    env = {**os.environ, "HOME": str(tmp_path)}
    dom = subprocess.run(
        [*flags, "--enable-logging=stderr", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True, env=env,
    )  # fmt: skip
    doc = parse(dom.stdout)
    assert doc.tags.count("table") >= 5 and doc.tags.count("svg") == 6
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert console == []
    shot = tmp_path / "shot.png"
    subprocess.run(
        [*flags, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120, check=True, env=env
    )
    pixels = mpl.image.imread(shot)
    assert pixels.shape[:2] == (2400, 1200)
    assert float(pixels[..., :3].std()) > 0.05  # tables and figures, not a blank page


def test_the_command_line_page_of_groups_and_png_figures(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    n = 4000
    y = rng.integers(0, 3, n)
    p = rng.dirichlet(np.ones(3), n) * 0.4 + 0.6 * np.eye(3)[y]
    lang = rng.choice(["de", "en", "<fr>"], n)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(
        pa.table({"label": y, "lang": lang, **{f"p_{j}": p[:, j] for j in range(3)}}), tmp_path / "d.parquet"
    )
    out, plots = tmp_path / "g.html", tmp_path / "png"
    res = CliRunner().invoke(
        cli,
        [
            "score", str(tmp_path / "d.parquet"), "--label", "label", "--proba-prefix", "p_", "--group-by", "lang",
            "--format", "html", "-o", str(out), "--plots", str(plots), "--plot-format", "png", "-q",
        ],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    page = out.read_text()
    doc = parse(page)
    assert 'id="groups"' in page and "&lt;fr&gt;" in page and "<fr>" not in page
    assert doc.tags.count("svg") >= 4
    pngs = sorted(f.name for f in plots.iterdir())
    assert "confusion_matrix.png" in pngs and all(n.endswith(".png") for n in pngs)
    assert (plots / "confusion_matrix.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_evaluate_keeps_curves_when_asked() -> None:
    """``evaluate(..., curves=True)`` is the same report, with the curves of an Evaluator's
    states: the page then draws every figure."""
    rng = np.random.default_rng(5)
    n, k = 5000, 3
    y = rng.integers(0, k, n)
    p = rng.dirichlet(np.ones(k), n) * 0.5 + 0.5 * np.eye(k)[y]
    plain = cmetrics.evaluate(y, y_proba=p)
    with_curves = cmetrics.evaluate(y, y_proba=p, curves=True)
    assert plain.curves is None and with_curves.curves is not None
    for name, value in plain.metrics.items():
        assert with_curves.metrics[name] == pytest.approx(value, rel=1e-12, nan_ok=True), name
    want = cmetrics.Evaluator(n_classes=k).update(y, y_proba=p).report(curves=True).curves
    assert want is not None
    assert [(c.kind, c.label, c.value) for c in with_curves.curves] == [(c.kind, c.label, c.value) for c in want]
    assert with_curves.to_html().count("<svg") == 6 and plain.to_html().count("<svg") == 3
    grouped = cmetrics.evaluate(y, y_proba=p, groups=y % 2, curves=True, bootstrap=50)
    assert grouped.overall.curves is not None and grouped.overall.intervals is not None
    with pytest.raises(ValidationError, match="keep_confidence"):
        cmetrics.evaluate(y, y_proba=p, curves=True, keep_confidence=True)

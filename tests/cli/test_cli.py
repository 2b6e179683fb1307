"""The command line end to end: ``cmetrics score`` on Parquet (file and directory), CSV,
JSON Lines and NPZ equals the Python API; every user error gives one line and exit status 2;
memory stays bounded by the batch size; ``cmetrics demo`` writes and scores a dump."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

import cmetrics
from cmetrics.cli import main, synthetic_dump, synthetic_proba

K = 4


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cmetrics", *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def dump() -> dict[str, np.ndarray]:
    y, p = synthetic_dump(30_000, K, seed=5)
    proba = synthetic_proba(p, K, seed=5, y_true=y)
    w = np.random.default_rng(5).random(30_000)
    return {"label": y, "proba": proba, "weight": w, "pred": p}


def table(d: dict[str, np.ndarray]) -> pa.Table:
    cols: dict[str, Any] = {"label": d["label"], "weight": d["weight"]}
    for j in range(K):
        cols[f"p_{j}"] = d["proba"][:, j].copy()
    return pa.table(cols)


def written(tmp: Path, d: dict[str, np.ndarray]) -> dict[str, Path]:
    t = table(d)
    paths = {
        "parquet": tmp / "dump.parquet",
        "dir": tmp / "parts",
        "csv": tmp / "dump.csv",
        "jsonl": tmp / "dump.jsonl",
        "npz": tmp / "dump.npz",
    }
    pq.write_table(t, paths["parquet"], row_group_size=7000)
    paths["dir"].mkdir()
    pq.write_table(t.slice(0, 12_000), paths["dir"] / "a.parquet")
    pq.write_table(t.slice(12_000), paths["dir"] / "b.parquet")
    (paths["dir"] / "_SUCCESS").write_text("")  # marker files are skipped, as pyarrow's discovery skips them
    (paths["dir"] / ".hidden").write_text("not parquet")
    pcsv.write_csv(t, paths["csv"])
    with paths["jsonl"].open("w") as fh:
        for row in t.to_pylist():
            fh.write(json.dumps(row) + "\n")
    np.savez(paths["npz"], **{name: t.column(name).to_numpy() for name in t.column_names})
    return paths


def score_json(tmp: Path, *args: str) -> dict[str, Any]:
    out = tmp / "report.json"
    assert main(["score", *args, "--format", "json", "--output", str(out), "--force", "--quiet"]) == 0
    return json.loads(out.read_text())


def close(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and (b is None or (isinstance(b, float) and math.isnan(b)))
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


@pytest.mark.parametrize("fmt", ["parquet", "dir", "csv", "jsonl", "npz"])
def test_score_json_equals_the_python_api(tmp_path: Path, dump: dict[str, np.ndarray], fmt: str) -> None:
    paths = written(tmp_path, dump)
    got = score_json(
        tmp_path,
        str(paths[fmt]),
        "--label",
        "label",
        "--proba-prefix",
        "p_",
        "--weight",
        "weight",
        "--batch-rows",
        "5000",
    )
    # CSV and JSON store decimal text: compare with the values as read back (float64).
    proba = dump["proba"]
    want = cmetrics.evaluate(
        dump["label"], y_proba=proba, labels=list(range(K)), sample_weight=dump["weight"], class_ranking="approximate"
    )
    assert got["run"]["rows"] == 30_000
    assert got["labels"] == list(range(K))
    tol = 1e-9 if fmt not in ("csv", "jsonl") else 1e-6
    for key, value in want.metrics.items():
        g = got["metrics"][key]
        assert (g is None and math.isnan(value)) or abs(g - value) <= tol * max(1.0, abs(value)), (key, g, value)
    np.testing.assert_allclose(np.array(got["confusion_matrix"]), want.confusion_matrix, rtol=1e-9)
    assert got["ranking"] == {"mode": "exact"}
    assert got["class_ranking"] == "approximate"


def test_score_hard_labels_confidence_and_explicit_columns(tmp_path: Path, dump: dict[str, np.ndarray]) -> None:
    conf = dump["proba"].max(axis=1).astype(np.float64)
    t = pa.table(
        {
            "y": dump["label"],
            "yhat": dump["pred"],
            "c": conf,
            "probs": pa.FixedSizeListArray.from_arrays(pa.array(dump["proba"].reshape(-1)), K),
        }
    )
    path = tmp_path / "hard.parquet"
    pq.write_table(t, path)
    got = score_json(tmp_path, str(path), "--label", "y", "--pred", "yhat", "--confidence", "c")
    want = cmetrics.evaluate(dump["label"], y_pred=dump["pred"], confidence=conf)
    for key in ("accuracy", "matthews_corrcoef", "refinement", "aurc"):
        assert close(got["metrics"][key], want.metrics[key]), key
    listed = score_json(tmp_path, str(path), "--label", "y", "--proba-list", "probs", "--labels", "0,1,2,3")
    want_p = cmetrics.evaluate(dump["label"], y_proba=dump["proba"], labels=list(range(K)))
    for key in ("log_loss", "cf1_macro", "refinement", "expected_calibration_error"):
        assert close(listed["metrics"][key], want_p.metrics[key]), key
    named = score_json(
        tmp_path,
        str(path),
        "--label",
        "y",
        "--proba-list",
        "probs",
        "--ranking",
        "approximate",
        "--ranking-bins",
        "256",
    )
    assert named["ranking"] == {"mode": "approximate", "bins": 256}


def test_table_and_markdown_output(tmp_path: Path, dump: dict[str, np.ndarray]) -> None:
    paths = written(tmp_path, dump)
    out = run("score", str(paths["parquet"]), "--label", "label", "--proba-prefix", "p_")
    assert out.returncode == 0, out.stderr
    assert "probabilistic + hard-label report of 30,000 rows" in out.stdout and "log_loss" in out.stdout
    assert out.stderr == ""  # no progress bar on a pipe
    md = run("score", str(paths["parquet"]), "--label", "label", "--proba-prefix", "p_", "--format", "markdown")
    assert md.returncode == 0 and "| metric | value |" in md.stdout


def test_user_errors_give_one_line_and_status_2(tmp_path: Path, dump: dict[str, np.ndarray]) -> None:
    paths = written(tmp_path, dump)
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"PAR1" + b"\x00garbage" * 100)
    strings = tmp_path / "strings.parquet"
    pq.write_table(pa.table({"label": [0, 1], "p_0": ["a", "b"], "p_1": ["c", "d"]}), strings)
    cases = [
        (["score", str(tmp_path / "missing.parquet"), "--label", "label", "--pred", "x"], "no such file"),
        (["score", str(paths["parquet"]), "--label", "nope", "--proba-prefix", "p_"], "column 'nope'"),
        (["score", str(paths["parquet"]), "--label", "label", "--proba-prefix", "zz_"], "no column starts"),
        (
            ["score", str(paths["parquet"]), "--label", "label", "--proba-prefix", "p_", "--labels", "a,b"],
            "--labels lists 2 classes",
        ),
        (["score", str(strings), "--label", "label", "--proba-prefix", "p_"], "p_0"),
        (["score", str(corrupt), "--label", "label", "--pred", "label"], "cannot read"),
        (["score", str(paths["parquet"]), "--label", "label"], "nothing to score"),
        (["score", str(tmp_path / "x.txt"), "--label", "a", "--pred", "b"], "no such file"),
    ]
    (tmp_path / "y.xyz").write_text("1")
    cases.append((["score", str(tmp_path / "y.xyz"), "--label", "a", "--pred", "b"], "unknown file type"))
    for args, message in cases:
        out = run(*args)
        assert out.returncode == 2, (args, out.stderr)
        assert message in out.stderr, (args, out.stderr)
        assert "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    usage = run("score", str(paths["parquet"]))
    assert usage.returncode == 2 and "--label" in usage.stderr and "Traceback" not in usage.stderr


@pytest.mark.parametrize("ranking", ["approximate", "off"])
def test_memory_stays_bounded_by_the_batch_size(tmp_path: Path, ranking: str) -> None:
    """Scoring a file 11x larger than another, with the same batch size, adds little peak memory.
    (The exact ranking state also buffers up to 2^23 rows; its bound is tested below.)"""

    def write(n: int, name: str) -> Path:
        rng = np.random.default_rng(n)
        y = rng.integers(0, K, n).astype(np.int32)
        p = (rng.multinomial(100, [1 / K] * K, size=n) / 100).astype(np.float32)  # 2 decimals, rows sum to 1
        cols = {"label": y, **{f"p_{j}": p[:, j].copy() for j in range(K)}}
        path = tmp_path / name
        pq.write_table(pa.table(cols), path, row_group_size=100_000)
        return path

    def peak_kib(path: Path) -> int:
        # VmHWM: the peak of this process image (ru_maxrss would include the forking parent's).
        code = (
            "from cmetrics.cli import main; "
            f"main(['score', {str(path)!r}, '--label', 'label', '--proba-prefix', 'p_', '--quiet', "
            f"'--batch-rows', '100000', '--format', 'json', '--output', '/dev/null', '--ranking', {ranking!r}]); "
            "print(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return int(out.stdout.split()[-1])

    # The large file is 11x the small one: peaks move by a few MiB from run to run (buffers are
    # backed by 2 MiB pages when the kernel grants them), far less than a quarter of its extra data.
    small, large = write(300_000, "small.parquet"), write(3_300_000, "large.parquet")
    grown = peak_kib(large) - peak_kib(small)
    extra_data = (3_300_000 - 300_000) * (4 + 4 * K) / 1024
    assert grown < 0.25 * extra_data, (grown, extra_data)


def test_exact_ranking_state_memory_is_bounded() -> None:
    """The exact state's row buffer is sorted into the groups once it reaches its threshold:
    with few distinct confidences its memory stops growing, however many rows arrive."""
    if not cmetrics.rust_available():
        pytest.skip("the Rust backend is not built")
    from cmetrics import _core

    rng = np.random.default_rng(2)
    state = _core.GroupState(False, 200_000)
    sizes = []
    for _ in range(40):
        conf = np.round(rng.random(100_000), 2)
        state.add(rng.random(100_000) < 0.5, conf)
        sizes.append(state.nbytes)
    assert max(sizes[10:]) <= 17 * 300_000 + 4096, sizes  # buffer + scratch of at most 300k rows
    assert max(sizes[10:]) == max(sizes[:10]) or max(sizes[10:]) <= 1.1 * max(sizes[:10])
    groups = state.groups()
    assert groups[0].shape[0] == 101 and int(groups[1].sum() + groups[2].sum()) == 4_000_000


def test_demo_writes_parquet_and_scores_it(tmp_path: Path) -> None:
    out = run("demo", "--rows", "200000", "--classes", "7", "--seed", "3", "--dir", str(tmp_path), "--format", "json")
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    files = list(tmp_path.glob("*.parquet"))
    assert len(files) == 1 and pq.read_metadata(files[0]).num_rows == 200_000
    t = pq.read_table(files[0])
    y = t.column("label").to_numpy()
    proba = np.column_stack([t.column(f"p_{j}").to_numpy() for j in range(7)])
    want = cmetrics.evaluate(y, y_proba=proba, labels=list(range(7)))
    assert payload["n_samples"] == 200_000 and payload["run"]["rows"] == 200_000
    # The modes `cmetrics score` has by default (the README's quick start says so).
    scored = json.loads(
        run("score", str(files[0]), "--label", "label", "--proba-prefix", "p_", "--format", "json").stdout
    )
    assert (payload["ranking"], payload["class_ranking"]) == (scored["ranking"], scored["class_ranking"])
    assert payload["class_ranking"] == "approximate"
    for key in ("accuracy", "f1_macro", "cf1_macro", "log_loss", "refinement", "aurc"):
        assert close(payload["metrics"][key], want.metrics[key]), key
    # The synthetic model: prevalence 1 / (c + 1), per-class accuracy from 0.85 down to 0.45.
    prevalence = [1 / (c + 1) for c in range(7)]
    prevalence = [p / sum(prevalence) for p in prevalence]
    per_class = [0.85 - 0.4 * c / 6 for c in range(7)]
    expected = sum(p * a for p, a in zip(prevalence, per_class, strict=True))
    assert abs(payload["metrics"]["accuracy"] - expected) < 0.01
    recall = [payload["per_class"][str(c)]["recall"] for c in range(7)]
    assert all(abs(r - a) < 0.03 for r, a in zip(recall, per_class, strict=True)), recall  # rare classes are harder
    support = [payload["per_class"][str(c)]["support"] for c in range(7)]
    assert support == sorted(support, reverse=True)  # and less frequent
    assert payload["metrics"]["refinement"] > 0.6  # more confident where it is right
    table_out = run("demo", "--rows", "50000")
    assert table_out.returncode == 0, table_out.stderr
    assert "$ cmetrics score" in table_out.stdout and "log_loss" in table_out.stdout and "scored " in table_out.stdout
    bad = run("demo", "--rows", "0")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_reused_probability_buffer_stays_fortran_ordered(tmp_path: Path, dump: dict[str, np.ndarray]) -> None:
    """Batches share one buffer, and a short last batch is still read in place by the kernel."""
    from cmetrics._readers import Columns, open_source

    path = written(tmp_path, dump)["parquet"]  # row groups of 7,000 rows: a short last one
    src = open_source([str(path)], Columns(label="label", proba_prefix="p_"), 7000)
    starts, rows = set(), 0
    for b in src.batches(reuse=True):
        assert b.y_proba is not None and b.y_proba.flags.f_contiguous
        np.testing.assert_array_equal(b.y_proba, dump["proba"][rows : rows + len(b)])
        starts.add(b.y_proba.__array_interface__["data"][0])
        rows += len(b)
    assert rows == 30_000 and len(starts) == 1


# -- files and output: the findings of testing from outside ------------------------------------


def small_npz(path: Path) -> Path:
    np.savez(path, label=np.array([0, 1, 1, 0]), p_0=np.array([0.7, 0.2, 0.4, 0.9]), p_1=np.array([0.3, 0.8, 0.6, 0.1]))
    return path


def test_output_is_never_an_input_and_never_overwritten_without_force(tmp_path: Path) -> None:
    data = small_npz(tmp_path / "data.npz")
    before = data.read_bytes()
    args = (str(data), "--label", "label", "--proba-prefix", "p_", "--quiet")
    out = run("score", *args, "--output", str(data), "--force")
    assert out.returncode == 2 and "is one of the input files" in out.stderr
    assert data.read_bytes() == before
    report = tmp_path / "report.txt"
    assert run("score", *args, "--output", str(report)).returncode == 0
    first = report.read_text()
    assert "accuracy" in first
    again = run("score", *args, "--output", str(report), "--format", "json")
    assert again.returncode == 2 and "exists; pass --force" in again.stderr
    assert report.read_text() == first
    forced = run("score", *args, "--output", str(report), "--format", "json", "--force")
    assert forced.returncode == 0 and json.loads(report.read_text())["n_samples"] == 4
    # Atomic: nothing is left beside the report, and the mode is what open() would give.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.npz", "report.txt"]
    assert report.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_broken_and_empty_archives_are_one_line_errors(tmp_path: Path) -> None:
    good = small_npz(tmp_path / "good.npz").read_bytes()
    (tmp_path / "truncated.npz").write_bytes(good[: len(good) // 2])
    (tmp_path / "zero.npz").write_bytes(b"")
    (tmp_path / "zero.npy").write_bytes(b"")
    np.save(tmp_path / "norows.npy", np.zeros(0, dtype=[("label", "i8"), ("pred", "i8")]))
    for name, cols in [
        ("truncated.npz", ("--proba-prefix", "p_")),
        ("zero.npz", ("--pred", "pred")),
        ("zero.npy", ("--pred", "pred")),
        ("norows.npy", ("--pred", "pred")),
    ]:
        out = run("score", str(tmp_path / name), "--label", "label", *cols)
        assert out.returncode == 2, (name, out.returncode, out.stderr)
        assert "Traceback" not in out.stderr and out.stderr.count("\n") == 1, out.stderr


def test_a_file_given_twice_is_an_error(tmp_path: Path) -> None:
    data = small_npz(tmp_path / "data.npz")
    out = run("score", str(data), str(tmp_path / "." / "data.npz"), "--label", "label", "--proba-prefix", "p_")
    assert out.returncode == 2 and "is given more than once" in out.stderr
    d = tmp_path / "parts"
    d.mkdir()
    pq.write_table(pa.table({"label": [0, 1], "pred": [0, 1]}), d / "a.parquet")
    out = run("score", str(d), str(d / "a.parquet"), "--label", "label", "--pred", "pred")
    assert out.returncode == 2 and "is given more than once" in out.stderr


def test_label_columns_of_other_types_and_bad_text_say_so(tmp_path: Path) -> None:
    pq.write_table(pa.table({"label": pa.array([["a"], ["b"]]), "pred": [1, 2]}), tmp_path / "lists.parquet")
    out = run("score", str(tmp_path / "lists.parquet"), "--label", "label", "--pred", "pred")
    assert out.returncode == 2 and "column 'label' has type list" in out.stderr
    pq.write_table(
        pa.table({"label": pa.array([b"\xff\xfe", b"a"], pa.binary()), "pred": pa.array([b"a", b"a"], pa.binary())}),
        tmp_path / "bytes.parquet",
    )
    out = run("score", str(tmp_path / "bytes.parquet"), "--label", "label", "--pred", "pred")
    assert out.returncode == 2 and "not valid UTF-8 (row 0" in out.stderr
    (tmp_path / "latin1.csv").write_bytes(b"label,pred\n\xe9t\xe9,a\na,a\n")
    out = run("score", str(tmp_path / "latin1.csv"), "--label", "label", "--pred", "pred")
    assert out.returncode == 2 and "not valid UTF-8" in out.stderr
    # Valid UTF-8 in a binary column is text.
    pq.write_table(
        pa.table(
            {"label": pa.array(["é".encode(), b"a"], pa.binary()), "pred": pa.array(["é".encode(), b"b"], pa.binary())}
        ),
        tmp_path / "ok.parquet",
    )
    ok = run("score", str(tmp_path / "ok.parquet"), "--label", "label", "--pred", "pred", "--format", "json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["labels"] == ["a", "b", "é"]


def test_labels_are_escaped_in_every_format(tmp_path: Path) -> None:
    pq.write_table(
        pa.table({"label": ["a|b", "c\nd", "e"], "pred": ["a|b", "x\x1b[31m", "e"]}), tmp_path / "odd.parquet"
    )
    args = (str(tmp_path / "odd.parquet"), "--label", "label", "--pred", "pred")
    md = run("score", *args, "--format", "markdown")
    assert md.returncode == 0
    per_class = md.stdout.split("### Per class", 1)[1].strip().splitlines()
    cells = [line.count("|") - line.count("\\|") for line in per_class if line.startswith("|")]
    assert len(cells) == 2 + 4 and len(set(cells)) == 1, per_class  # header, rule, four classes
    assert "| a\\|b |" in md.stdout and "| c\\nd |" in md.stdout and "| x\\x1b[31m |" in md.stdout
    assert "\x1b" not in md.stdout and "\x1b" not in run("score", *args).stdout
    table = run("score", *args)
    assert "c\\nd" in table.stdout and "x\\x1b[31m" in table.stdout
    report = cmetrics.evaluate(["a|b", "c\nd"], y_pred=["a|b", "x\x1b"])
    assert "\x1b" not in report.to_markdown() and "c\\nd" in report.to_markdown()


def test_the_report_reads_as_families_with_integers_as_integers(tmp_path: Path) -> None:
    out = run("demo", "--rows", "20000", "--classes", "5")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for heading in ("hard-label", "probabilistic", "calibration", "selective prediction", "per class"):
        assert f"\n{heading}" in text, heading
    assert "20,000 samples, 5 classes" in text
    assert "10.000000" not in text and "5.000000" not in text
    support = [line.split("│")[4].strip() for line in text.splitlines() if line.count("│") >= 8]
    assert support and all(s.replace(",", "").isdigit() for s in support)
    md = cmetrics.evaluate([0, 1, 1], y_proba=[[0.7, 0.3], [0.4, 0.6], [0.6, 0.4]]).to_markdown()
    assert "### Hard-label" in md and "### Probabilistic" in md and "### Selective prediction" in md
    assert "**3 samples, 2 classes**" in md


def test_output_to_a_device_is_written_in_place(tmp_path: Path) -> None:
    """/dev/null (or a FIFO) is written to, never renamed over, and needs no --force."""
    data = small_npz(tmp_path / "data.npz")
    out = run("score", str(data), "--label", "label", "--proba-prefix", "p_", "--quiet", "--output", "/dev/null")
    assert out.returncode == 0, out.stderr
    assert Path("/dev/null").is_char_device()


def test_group_by_reports_every_group(tmp_path: Path, dump: dict[str, np.ndarray]) -> None:
    """--group-by with a text column and an integer one: the JSON carries every group's full
    report, equal to the Python API's; the table shows the per-group summary."""
    import warnings

    t = table(dump)
    rng = np.random.default_rng(7)
    lang = rng.choice(np.array(["en", "de", "fr|x"]), t.num_rows)
    shard = rng.integers(0, 3, t.num_rows)
    t = t.append_column("lang", pa.array(lang)).append_column("shard", pa.array(shard))
    path = tmp_path / "g.parquet"
    pq.write_table(t, path, row_group_size=7000)
    got = score_json(
        tmp_path, str(path), "--label", "label", "--proba-prefix", "p_", "--group-by", "lang", "--group-by", "shard"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cmetrics.UndefinedMetricWarning)
        want = cmetrics.evaluate(
            dump["label"],
            y_proba=dump["proba"],
            labels=list(range(K)),
            groups=(lang, shard),
            class_ranking="approximate",
        )
    assert got["run"]["group_by"] == ["lang", "shard"] and got["run"]["groups"] == len(want) == 9
    assert got["group_by"] == ["lang", "shard"]
    assert [tuple(e["group"]) for e in got["groups"]] == list(want)
    for entry in got["groups"]:
        rep = want[tuple(entry["group"])]
        assert entry["report"]["n_samples"] == rep.n_samples
        for key, value in rep.metrics.items():
            assert close(entry["report"]["metrics"][key], value), (entry["group"], key)
    for key, value in want.overall.metrics.items():
        assert close(got["metrics"][key], value), key
    out = run(
        "score", str(path), "--label", "label", "--proba-prefix", "p_", "--group-by", "lang",
        "--group-metrics", "accuracy,log_loss", "--group-metrics", "roc_auc_ovr", "-q",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "per group (3 groups)" in out.stdout and "roc_auc_ovr" in out.stdout and "fr|x" in out.stdout
    md = run(
        "score", str(path), "--label", "label", "--proba-prefix", "p_", "--group-by", "lang", "--format", "markdown"
    )
    assert md.returncode == 0 and "## lang = fr\\|x" in md.stdout and "## Per group (lang)" in md.stdout


def test_group_by_errors_are_one_line(tmp_path: Path, dump: dict[str, np.ndarray]) -> None:
    t = table(dump).append_column("g", pa.array(np.arange(30_000) % 50))
    path = tmp_path / "g.parquet"
    pq.write_table(t, path)
    base = ["score", str(path), "--label", "label", "--proba-prefix", "p_"]
    for args, message in (
        (["--group-by", "nope"], "column 'nope' is not in the input"),
        (["--group-by", "g", "--max-groups", "10"], "above max_groups=10"),
        (["--group-metrics", "accuracy"], "pass --group-by too"),
        (["--group-by", "g", "--group-metrics", "nope"], "no metric 'nope'"),
    ):
        out = run(*base, *args)
        assert out.returncode == 2, (args, out.stderr)
        assert message in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr

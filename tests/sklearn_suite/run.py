"""Run scikit-learn's own metric tests with cmetrics swapped in, on each backend.

    python tests/sklearn_suite/run.py [--backend rust|numpy|all] [--verbose]

scikit-learn installs its tests with the package: ``sklearn/metrics/tests/test_classification.py``
and ``test_ranking.py`` run here unchanged, with every ``sklearn.metrics`` function that cmetrics
also defines replaced by cmetrics' own (``plugin.py`` beside this file). A test is in scope when
it calls one of them. Every in-scope test must pass, except:

- a ``pytest.raises(..., match=...)`` whose message differs (cmetrics words its errors its own way:
  the same exception class, another text);
- a test listed in :data:`DIFFERENCES`, each a row of the README's "Intentional differences
  from scikit-learn" table.

Exit status 0 when that holds on every backend run; 1 with the offending tests listed otherwise
(an unexpected failure, or a listed test that now passes: the list must stay true).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

#: The tests that fail on purpose, by name (without parameters), and the README row of the
#: difference each shows.
DIFFERENCES: dict[str, str] = {
    "test_log_loss_not_probabilities_warning": "`log_loss` / Brier with rows not summing to 1",
    "test_log_loss_y_pred_deprecation": "deprecated argument spellings and positions",
    "test_confusion_matrix_at_thresholds_positional_args_deprecation": "deprecated argument spellings and positions",
    "test_confusion_matrix_at_thresholds_implicit_pos_label": "binary string labels and no `pos_label`",
    "test_det_curve_bad_input": "binary string labels and no `pos_label`",
    "test_confusion_matrix_dtype": "integer `sample_weight` whose sums pass the int64 range",
}

#: Parametrised tests of which only some cases differ: the test id must contain one of these.
_ONLY_CASES: dict[str, tuple[str, ...]] = {
    "test_det_curve_bad_input": ("pos_label is not specified",),
}

_MODULES = ("sklearn.metrics.tests.test_classification", "sklearn.metrics.tests.test_ranking")


def _name(nodeid: str) -> str:
    return nodeid.split("::")[-1].split("[")[0]


def _listed(nodeid: str) -> bool:
    name = _name(nodeid)
    if name not in DIFFERENCES:
        return False
    cases = _ONLY_CASES.get(name)
    return cases is None or any(c in nodeid for c in cases)


def run_backend(backend: str, workdir: Path) -> dict[str, dict[str, object]]:
    """One pytest run of scikit-learn's tests on ``backend``; the plugin's record of each test."""
    out = workdir / f"results-{backend}.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parent), os.environ.get("PYTHONPATH", "")]),
        "CMETRICS_SUITE_BACKEND": backend,
        "CMETRICS_SUITE_OUT": str(out),
    }
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "plugin", "-p", "no:cacheprovider", "-W", "ignore"]
    subprocess.run([*cmd, "--pyargs", *_MODULES], cwd=workdir, env=env, capture_output=True, text=True, check=False)
    if not out.exists():
        msg = f"the scikit-learn test run on the {backend} backend wrote no results"
        raise RuntimeError(msg)
    results: dict[str, dict[str, object]] = json.loads(out.read_text())
    return results


def judge(results: dict[str, dict[str, object]]) -> dict[str, list[str]]:
    """The in-scope tests sorted into passed, wording, listed, unexpected and stale."""
    out: dict[str, list[str]] = {k: [] for k in ("passed", "wording", "listed", "unexpected", "stale")}
    for nodeid, entry in sorted(results.items()):
        if not entry["called"]:
            continue
        failed = entry["outcome"] == "failed"
        message = str(entry["message"])
        if not failed:
            out["stale" if _listed(nodeid) and entry["outcome"] == "passed" else "passed"].append(nodeid)
        elif "Regex pattern did not match" in message:
            out["wording"].append(nodeid)
        elif _listed(nodeid):
            out["listed"].append(nodeid)
        else:
            out["unexpected"].append(f"{nodeid}: {message.splitlines()[0] if message else ''}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("rust", "numpy", "all"), default="all")
    parser.add_argument("--verbose", action="store_true", help="list the tests of every outcome")
    args = parser.parse_args()
    import cmetrics  # the package under test (imported here: the harness's --help needs none of it)

    backends = ["rust", "numpy"] if args.backend == "all" else [args.backend]
    if "rust" in backends and not cmetrics.rust_available():
        backends.remove("rust")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for backend in backends:
            verdict = judge(run_backend(backend, Path(tmp)))
            scope = sum(len(v) for k, v in verdict.items())
            counts = ", ".join(f"{len(v)} {k}" for k, v in verdict.items())
            print(f"{backend}: {scope} in scope: {counts}")
            for kind in ("unexpected", "stale"):
                for line in verdict[kind]:
                    print(f"  {kind}: {line}")
            if args.verbose:
                for kind in ("wording", "listed"):
                    for line in verdict[kind]:
                        print(f"  {kind}: {line}")
            ok = ok and not verdict["unexpected"] and not verdict["stale"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

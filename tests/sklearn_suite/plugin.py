"""A pytest plugin that runs scikit-learn's own metric tests with cmetrics swapped in.

Loaded by ``tests/sklearn_suite/run.py`` (never collected by the project's own suite): every
function of ``sklearn.metrics`` that cmetrics also defines is replaced by cmetrics' function on
the backend named by ``CMETRICS_SUITE_BACKEND``, and each test records whether it called one
of them (the tests that never do exercise scikit-learn's internals and are out of scope).
A warning of cmetrics' ``UndefinedMetricWarning`` class is given again as scikit-learn's, so
that ``pytest.warns(UndefinedMetricWarning)`` in those tests asks for the same thing.
"""

from __future__ import annotations

import functools
import json
import os
import warnings
from collections.abc import Callable, Generator
from typing import Any

import pytest
import sklearn.exceptions
import sklearn.metrics

import cmetrics
import cmetrics.exceptions

_BACKEND = os.environ.get("CMETRICS_SUITE_BACKEND", "auto")
_OUT = os.environ.get("CMETRICS_SUITE_OUT", "")
_called: list[str] = []
_results: dict[str, dict[str, Any]] = {}


def _swap(name: str, ours: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(ours)
    def call(*args: Any, **kwargs: Any) -> Any:
        _called.append(name)
        kwargs.setdefault("backend", _BACKEND)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = ours(*args, **kwargs)
        for w in caught:
            kind = w.category
            if issubclass(kind, cmetrics.exceptions.UndefinedMetricWarning):
                kind = sklearn.exceptions.UndefinedMetricWarning
            warnings.warn(w.message if kind is w.category else str(w.message), kind, stacklevel=2)
        return result

    return call


def pytest_configure(config: pytest.Config) -> None:
    for name in sorted(set(cmetrics.__all__) & set(dir(sklearn.metrics))):
        ours = getattr(cmetrics, name)
        if callable(ours) and not isinstance(ours, type):
            setattr(sklearn.metrics, name, _swap(name, ours))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = outcome.get_result()
    entry = _results.setdefault(item.nodeid, {"outcome": "passed", "called": [], "message": ""})
    if call.when == "setup":
        _called.clear()
    if report.failed:
        entry["outcome"] = "failed"
        crash = getattr(report.longrepr, "reprcrash", None)
        entry["message"] = (crash.message if crash is not None else str(report.longrepr))[:2000]
    elif report.skipped and call.when != "teardown":
        entry["outcome"] = "skipped"
    if call.when == "call":
        entry["called"] = sorted(set(_called))


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _OUT:
        with open(_OUT, "w", encoding="utf-8") as f:
            json.dump(_results, f, indent=0, sort_keys=True)

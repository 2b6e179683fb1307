"""The mergeable streaming state: :class:`Evaluator` accumulates batches of rows, merges with
other Evaluators, reports every metric and travels as bytes.

The package is laid in floors, each module importing only those below it: ``settings`` (the
one validated settings object), ``group_values`` (group values and the per-group layout),
``dense_ranking`` (a group's binned class ranking), ``rows`` (the state of one set of rows),
``grouping`` (one state per group), ``state_format`` (the byte format, version 2) and
``evaluator`` (:class:`Evaluator`, the public face)."""

from cmetrics.exceptions import StateError
from cmetrics.streaming.evaluator import Evaluator, merge_all
from cmetrics.streaming.rows import RankingSummary
from cmetrics.streaming.settings import EvaluationSettings
from cmetrics.streaming.state_format import FORMAT_VERSION as FORMAT_VERSION
from cmetrics.streaming.state_format import MAGIC as MAGIC

__all__ = ["EvaluationSettings", "Evaluator", "RankingSummary", "StateError", "merge_all"]

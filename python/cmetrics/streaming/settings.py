"""The evaluation settings: one frozen, validated object that :class:`cmetrics.Evaluator`,
:func:`cmetrics.evaluate`, :mod:`cmetrics.dask` and ``cmetrics score`` all build once and pass
on. Each option is declared, documented and checked here, and nowhere else."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from cmetrics._base import validation
from cmetrics._base.aliases import Backend, RankingMode, ZeroDivision
from cmetrics._base.config import check_max_classes
from cmetrics.exceptions import ValidationError

#: The default limit on the number of groups (see :attr:`EvaluationSettings.max_groups`).
DEFAULT_MAX_GROUPS = 10_000
#: The largest limit that may be set (every group keeps a state of its own).
MAX_GROUPS = 1 << 20
#: Bins of each group's approximate ranking states, unless told otherwise: a group's
#: approximate class-ranking state then holds at most K x 1,025 entries (16 KiB per class),
#: where the 2^16 bins of the overall state would hold 1 MiB per class and group.
DEFAULT_GROUP_RANKING_BINS = 1 << 10


@dataclass(frozen=True)
class EvaluationSettings:
    """How an evaluation is accumulated and reported. Build one with :meth:`make` (which
    takes the options as :func:`cmetrics.evaluate` does, ``None`` for the defaults) or with the
    constructor; either way every field is checked, and a refused value raises
    :class:`~cmetrics.exceptions.ValidationError` naming the option and the fix.

    >>> s = EvaluationSettings.make(ranking="approximate", ranking_bins=256)
    >>> s.ranking, s.class_ranking, s.ranking_bins
    ('approximate', 'approximate', 256)
    >>> EvaluationSettings.make(top_k=0)
    Traceback (most recent call last):
    ...
    cmetrics.exceptions.ValidationError: top_k=0 is invalid; pass an integer from 1 to 32
    """

    #: Calibration bins of the reliability diagram and the calibration errors (1 to 2^20).
    n_bins: int = 15
    #: The value of a 0/0 per-class ratio: "warn" (0 with a warning), 0, 1 or NaN (NaN entries
    #: are dropped from the averages, as scikit-learn drops them).
    zero_division: ZeroDivision = "warn"
    #: How the selective-prediction ranking metrics are accumulated: "exact" (a summary of one
    #: entry per distinct confidence), "approximate" (``ranking_bins`` bins of [0, 1], fixed
    #: memory) or "off".
    ranking: RankingMode = "exact"
    #: Bins of the approximate mode (1 to 2^24; the default 2^16 is at most 1.5 MiB of state).
    ranking_bins: int = 1 << 16
    #: The report's top-k accuracies run from k = 1 to ``min(top_k, K - 1)`` (1 to 32).
    top_k: int = 5
    #: How the one-vs-rest AUROC and AP of the probability columns are accumulated: "exact" (one
    #: tie-group state per column), "approximate" (``ranking_bins`` bins per column) or "off";
    #: :meth:`make` takes None for "as ``ranking``".
    class_ranking: RankingMode = "exact"
    #: The most classes counted (the label set, ``labels=``, the probability columns); each
    #: costs a row and a column of the K x K tables. :meth:`make` takes None for the process
    #: setting (:func:`cmetrics.get_max_classes`, 4096 by default).
    max_classes: int = 4096
    #: The most distinct group values of a grouped evaluation (1 to 65,536; default 10,000):
    #: a batch or merge that would exceed it raises and changes nothing.
    max_groups: int = DEFAULT_MAX_GROUPS
    #: Bins of each group's approximate ranking states (1 to 2^24; default 1,024); the rows of
    #: all groups keep ``ranking_bins``.
    group_ranking_bins: int = DEFAULT_GROUP_RANKING_BINS
    #: Which kernels run: "auto" (the compiled core, else numpy), "rust" or "numpy".
    backend: Backend = "auto"

    def __post_init__(self) -> None:
        check = object.__setattr__  # the normalised value of a frozen field, set once, here
        check(self, "n_bins", validation.check_n_bins(self.n_bins))
        validation.zero_division_value(self.zero_division)
        check(self, "ranking", validation.ranking_mode(self.ranking))
        check(self, "ranking_bins", validation.check_ranking_bins(self.ranking_bins))
        check(self, "top_k", validation.check_top_k(self.top_k))
        check(self, "class_ranking", validation.ranking_mode(self.class_ranking))
        check(self, "max_classes", check_max_classes(self.max_classes))
        check(self, "max_groups", check_max_groups(self.max_groups))
        check(self, "group_ranking_bins", validation.check_ranking_bins(self.group_ranking_bins))
        if not (isinstance(self.backend, str) and self.backend in ("auto", "rust", "numpy")):
            msg = f"backend={self.backend!r} is invalid; use 'auto', 'rust' or 'numpy'"
            raise ValidationError(msg)

    @classmethod
    def make(
        cls,
        *,
        n_bins: int = 15,
        zero_division: ZeroDivision = "warn",
        ranking: RankingMode | bool = "exact",
        ranking_bins: int = 1 << 16,
        top_k: int = 5,
        class_ranking: RankingMode | bool | None = None,
        max_classes: int | None = None,
        max_groups: int | None = None,
        group_ranking_bins: int = DEFAULT_GROUP_RANKING_BINS,
        backend: Backend = "auto",
    ) -> EvaluationSettings:
        """The settings of these options, as :func:`cmetrics.evaluate` takes them: ``True`` and
        ``False`` for "exact" and "off", ``class_ranking=None`` for "as ``ranking``",
        ``max_classes=None`` and ``max_groups=None`` for the defaults."""
        mode = validation.ranking_mode(ranking)
        return cls(
            n_bins=n_bins,
            zero_division=zero_division,
            ranking=mode,
            ranking_bins=ranking_bins,
            top_k=top_k,
            class_ranking=mode if class_ranking is None else validation.ranking_mode(class_ranking),
            max_classes=check_max_classes(max_classes),
            max_groups=DEFAULT_MAX_GROUPS if max_groups is None else max_groups,
            group_ranking_bins=group_ranking_bins,
            backend=backend,
        )

    def for_groups(self) -> EvaluationSettings:
        """The settings of each group's state: these, with ``group_ranking_bins`` bins."""
        return dataclasses.replace(self, ranking_bins=self.group_ranking_bins)

    def with_backend(self, backend: Backend) -> EvaluationSettings:
        """These settings on another backend."""
        return dataclasses.replace(self, backend=backend)

    @property
    def approximate(self) -> bool:
        """Whether some ranking state is binned (``ranking_bins`` then matters)."""
        return "approximate" in (self.ranking, self.class_ranking)

    def header(self) -> dict[str, int | str | float | None]:
        """The settings a saved state records, and two states must share to merge (the
        ``settings`` of the byte format, version 2)."""
        return {
            "n_bins": self.n_bins,
            "ranking": self.ranking,
            "ranking_bins": self.ranking_bins if self.approximate else None,
            "top_k": self.top_k,
            "class_ranking": self.class_ranking,
            "zero_division": zero_division_text(self.zero_division),
        }

    def options(self) -> dict[str, Any]:
        """The fields as keyword arguments (what :meth:`make` and the constructor take)."""
        return dataclasses.asdict(self)


def check_max_groups(max_groups: object) -> int:
    """``max_groups``: an integer from 1 to 2^20 (None: the default, 10,000)."""
    if max_groups is None:
        return DEFAULT_MAX_GROUPS
    return validation.integer_in(
        "max_groups", max_groups, 1, MAX_GROUPS, f"pass an integer from 1 to {MAX_GROUPS} (default 10,000)"
    )


def zero_division_text(zero_division: ZeroDivision) -> str | float:
    """``zero_division`` as the byte format stores it: as given, NaN as the string "nan"."""
    return "nan" if isinstance(zero_division, float) and math.isnan(zero_division) else zero_division

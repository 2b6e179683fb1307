"""cmetrics: classification metrics for very large evaluation dumps.

A compiled Rust core counts in parallel with the GIL released; this typed API
mirrors ``sklearn.metrics`` and falls back to an equivalent numpy backend when
the extension is unavailable. Every public function takes
``backend="auto" | "rust" | "numpy"``.

The public names come from the family modules (each lists its own in ``__all__``):
:mod:`cmetrics.classification`, :mod:`cmetrics.confusion`, :mod:`cmetrics.curves`,
:mod:`cmetrics.label_ranking`, :mod:`cmetrics.probabilistic`, :mod:`cmetrics.ranking`,
:mod:`cmetrics.report`, :mod:`cmetrics.streaming` and :mod:`cmetrics.uncertainty`.
"""

from cmetrics import (
    classification,
    confusion,
    curves,
    label_ranking,
    probabilistic,
    ranking,
    report,
    streaming,
    uncertainty,
)
from cmetrics._backend import VERSION, rust_available
from cmetrics._base.config import (
    get_max_classes,
    get_num_threads,
    max_threads,
    set_max_classes,
    set_num_threads,
    thread_limit,
)
from cmetrics.classification import *  # noqa: F403
from cmetrics.confusion import *  # noqa: F403
from cmetrics.curves import *  # noqa: F403
from cmetrics.exceptions import UndefinedMetricWarning
from cmetrics.label_ranking import *  # noqa: F403
from cmetrics.probabilistic import *  # noqa: F403
from cmetrics.ranking import *  # noqa: F403
from cmetrics.report import *  # noqa: F403
from cmetrics.streaming import *  # noqa: F403
from cmetrics.uncertainty import *  # noqa: F403

#: The version of the installed package (the one place it is written is Cargo.toml).
__version__ = VERSION

__all__ = [
    "UndefinedMetricWarning",
    "__version__",
    "get_max_classes",
    "get_num_threads",
    "max_threads",
    "rust_available",
    "set_max_classes",
    "set_num_threads",
    "thread_limit",
]
__all__ += classification.__all__
__all__ += confusion.__all__
__all__ += curves.__all__
__all__ += label_ranking.__all__
__all__ += probabilistic.__all__
__all__ += ranking.__all__
__all__ += report.__all__
__all__ += streaming.__all__
__all__ += uncertainty.__all__

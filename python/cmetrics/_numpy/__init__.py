"""The numpy backend: the same kernels, signatures, results and errors as the Rust
extension ``cmetrics._core`` (the contract is :class:`cmetrics._kernels.Kernels`), written
independently with numpy.

It is the fallback when the extension is unavailable and the oracle the Rust
kernels are tested against. Counting uses integer ``bincount`` and float64
weighted ``bincount`` (sequential f64 sums), so it agrees with the Rust
backend exactly on counts and to rounding on weighted sums.
"""

from cmetrics._numpy import classification, confusion, probabilistic, ranking
from cmetrics._numpy.classification import *  # noqa: F403
from cmetrics._numpy.confusion import *  # noqa: F403
from cmetrics._numpy.probabilistic import *  # noqa: F403
from cmetrics._numpy.ranking import *  # noqa: F403

__all__: list[str] = []
__all__ += classification.__all__
__all__ += confusion.__all__
__all__ += probabilistic.__all__
__all__ += ranking.__all__

"""Which kernels run: the compiled extension ``cmetrics._core`` when it imports, else (or on
request) the numpy backend. Both satisfy :class:`cmetrics._kernels.Kernels`.

Also the package's version (:data:`VERSION`), written in one place, the workspace's
``Cargo.toml``: the compiled core carries it (fixed when it is built), so importing the package
does not parse the installed distribution's metadata (the metadata reader and the e-mail parser
it loads took about 20 ms of every ``import cmetrics``: each Dask or Spark worker's and each
command's). Without the core the version comes from that metadata; a source tree never
installed has none."""

from __future__ import annotations

import os
import warnings

from cmetrics import _numpy
from cmetrics._kernels import Kernels
from cmetrics.exceptions import ValidationError

#: "rust" or "numpy": the backend ``backend="auto"`` stands for (unset: the compiled one if present).
_ENV_BACKEND = "CMETRICS_BACKEND"

try:
    from cmetrics import _core

    _CORE: Kernels | None = _core
    _IMPORT_ERROR: ImportError | None = None
    #: The package's version (see the module's docs).
    VERSION: str = _core.__version__
except ImportError as exc:  # pragma: no cover - exercised only without the extension
    _CORE = None
    _IMPORT_ERROR = exc
    from importlib.metadata import PackageNotFoundError, version

    try:
        VERSION = version("cmetrics")
    except PackageNotFoundError:
        VERSION = "0+unknown"

_warned_fallback = False


def rust_available() -> bool:
    """Whether the compiled extension ``cmetrics._core`` could be imported."""
    return _CORE is not None


def resolve_backend(backend: str) -> Kernels:
    """The kernels of ``backend`` (a module satisfying :class:`cmetrics._kernels.Kernels`).

    ``"auto"`` is the Rust extension, or the numpy backend with one warning when
    the extension cannot be imported; ``"rust"`` raises in that case. The environment
    variable ``CMETRICS_BACKEND=numpy`` (or ``rust``) makes ``"auto"`` that backend, in every
    call of the process: the command line and Dask workers too.
    """
    global _warned_fallback
    if backend == "auto":
        forced = os.environ.get(_ENV_BACKEND, "")
        if forced in ("rust", "numpy"):
            return resolve_backend(forced)
        if _CORE is not None:
            return _CORE
        if not _warned_fallback:
            _warned_fallback = True
            warnings.warn(
                f"cmetrics._core could not be imported ({_IMPORT_ERROR}); using the slower numpy backend",
                RuntimeWarning,
                stacklevel=3,
            )
        return _numpy
    if backend == "rust":
        if _CORE is None:
            msg = (
                f"backend='rust' but the compiled extension cmetrics._core is unavailable ({_IMPORT_ERROR}); "
                "reinstall cmetrics from a wheel or with a Rust toolchain, or pass backend='numpy'"
            )
            raise ImportError(msg)
        return _CORE
    if backend == "numpy":
        return _numpy
    msg = f"backend={backend!r} is invalid; use 'auto', 'rust' or 'numpy'"
    raise ValidationError(msg)

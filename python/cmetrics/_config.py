"""Thread count and backend selection."""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator
from types import ModuleType
from typing import Literal

from cmetrics.exceptions import ValidationError

Backend = Literal["auto", "rust", "numpy"]

_ENV_THREADS = "CMETRICS_NUM_THREADS"
_threads: int | None = None

try:
    from cmetrics import _core

    _CORE: ModuleType | None = _core
    _IMPORT_ERROR: ImportError | None = None
except ImportError as exc:  # pragma: no cover - exercised only without the extension
    _CORE = None
    _IMPORT_ERROR = exc

_warned_fallback = False


def rust_available() -> bool:
    """Whether the compiled extension ``cmetrics._core`` could be imported."""
    return _CORE is not None


def get_num_threads() -> int:
    """Threads the Rust kernels use.

    Resolution order: :func:`set_num_threads` (or :func:`thread_limit`), then the
    ``CMETRICS_NUM_THREADS`` environment variable, then every available core.
    The kernels run on a thread pool owned by cmetrics, never on rayon's global
    pool, and stay on one thread below 2^18 rows whatever this says.
    """
    if _threads is not None:
        return _threads
    env = os.environ.get(_ENV_THREADS)
    if env:
        try:
            value = int(env)
        except ValueError:
            msg = f"{_ENV_THREADS}={env!r} is not an integer; set it to a thread count such as 1 or 4"
            raise ValidationError(msg) from None
        if value < 1:
            msg = f"{_ENV_THREADS}={env!r} must be at least 1"
            raise ValidationError(msg)
        return value
    return os.cpu_count() or 1


def set_num_threads(n: int | None) -> None:
    """Set the thread count of the Rust kernels (``None`` restores the default)."""
    global _threads
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
        msg = f"n={n!r} is invalid; pass a positive integer or None"
        raise ValidationError(msg)
    _threads = n


@contextlib.contextmanager
def thread_limit(n: int) -> Iterator[None]:
    """Context manager running the enclosed calls on ``n`` threads."""
    global _threads
    previous = _threads
    set_num_threads(n)
    try:
        yield
    finally:
        _threads = previous


def resolve_backend(backend: str) -> ModuleType:
    """Module implementing the kernels for ``backend``.

    ``"auto"`` is the Rust extension, or the numpy backend with one warning when
    the extension cannot be imported; ``"rust"`` raises in that case.
    """
    global _warned_fallback
    if backend == "auto":
        if _CORE is not None:
            return _CORE
        if not _warned_fallback:
            _warned_fallback = True
            warnings.warn(
                f"cmetrics._core could not be imported ({_IMPORT_ERROR}); using the slower numpy backend",
                RuntimeWarning,
                stacklevel=3,
            )
        from cmetrics import _numpy

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
        from cmetrics import _numpy

        return _numpy
    msg = f"backend={backend!r} is invalid; use 'auto', 'rust' or 'numpy'"
    raise ValidationError(msg)

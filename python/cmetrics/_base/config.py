"""Settings of the process: the kernels' thread count and the class-count limit."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator

import numpy as np

from cmetrics.exceptions import LimitExceededError, ValidationError

_ENV_THREADS = "CMETRICS_NUM_THREADS"
_threads: int | None = None

#: Default of :func:`get_max_classes`: a K x K table of counts and sums is 16 K^2 bytes
#: (256 MiB at this K).
DEFAULT_MAX_CLASSES = 4096
_max_classes = DEFAULT_MAX_CLASSES


@functools.cache
def _cores() -> int:
    """The machine's cores, asked once (each kernel call reads the thread count)."""
    return os.cpu_count() or 1


def max_threads() -> int:
    """The most threads a kernel may use: ``max(16, 4 x cores)``. More threads than cores
    only add the cost of starting and scheduling them."""
    return max(16, 4 * _cores())


def _check_threads(n: int, what: str) -> int:
    limit = max_threads()
    if n > limit:
        msg = f"{what} asks for {n} threads, above the limit of {limit} (4 per core, at least 16); use at most {limit}"
        raise ValidationError(msg)
    return n


def get_num_threads() -> int:
    """Threads the Rust kernels use.

    Resolution order: :func:`set_num_threads` (or :func:`thread_limit`), then the
    ``CMETRICS_NUM_THREADS`` environment variable, then every available core; at most
    :func:`max_threads`. The kernels run on a thread pool owned by cmetrics, never on
    rayon's global pool, and stay on one thread below 2^19 rows whatever this says.
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
        return _check_threads(value, _ENV_THREADS)
    return _cores()


def set_num_threads(n: int | None) -> None:
    """Set the thread count of the Rust kernels (``None`` restores the default); at most
    :func:`max_threads`."""
    global _threads
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
        msg = f"n={n!r} is invalid; pass a positive integer or None"
        raise ValidationError(msg)
    if n is not None:
        _check_threads(n, f"set_num_threads({n})")
    _threads = n


def check_max_classes(value: object, what: str = "max_classes") -> int:
    """A class-count limit: an integer >= 1 (``None`` gives the global setting)."""
    if value is None:
        return _max_classes
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        msg = f"{what}={value!r} is invalid; pass a positive integer"
        raise ValidationError(msg)
    return int(value)


def get_max_classes() -> int:
    """The most classes cmetrics counts unless told otherwise (default 4096: a K x K table of
    counts and sums takes 16 K^2 bytes, 256 MiB there); see :func:`set_max_classes`."""
    return _max_classes


def set_max_classes(n: int | None) -> None:
    """Set the class-count limit of every entry point (``None`` restores 4096). Label sets,
    ``labels=``, probability columns and ``Evaluator(n_classes=...)`` above it raise
    :class:`~cmetrics.exceptions.LimitExceededError` before anything is allocated."""
    global _max_classes
    _max_classes = DEFAULT_MAX_CLASSES if n is None else check_max_classes(n)


def check_classes(k: int, what: str, max_classes: object = None) -> None:
    """Refuse ``k`` classes above the limit, before the K x K tables are allocated."""
    limit = check_max_classes(max_classes)
    if k > limit:
        need = 16 * k * k
        size = f"{need / 2**30:,.1f} GiB" if need >= 2**30 else f"{need / 2**20:,.0f} MiB"
        msg = (
            f"{what} has {k:,} classes, above max_classes={limit:,} (its K x K tables of counts and sums would "
            f"need {size}); raise the limit with max_classes= or cmetrics.set_max_classes({k}) if that is intended"
        )
        raise LimitExceededError(msg)


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

"""Exception and warning classes of cmetrics.

Every data error derives from :class:`ValidationError`, itself a
:class:`ValueError`, so code written for scikit-learn (``except ValueError``)
keeps working. Wrong types derive from :class:`TypeError` as well. Both
backends raise the same class for the same input; the Rust extension imports
these classes from here.
"""

from __future__ import annotations

__all__ = [
    "InputError",
    "InternalError",
    "LabelError",
    "LengthMismatchError",
    "LimitExceededError",
    "NonFiniteError",
    "NotImplementedOptionError",
    "OutOfMemoryError",
    "ProbabilityError",
    "ShapeError",
    "StateError",
    "UndefinedMetricWarning",
    "UnsupportedDtypeError",
    "ValidationError",
    "WeightError",
]


class ValidationError(ValueError):
    """An input cannot be scored; the message names the argument and the fix."""


class LengthMismatchError(ValidationError):
    """Per-sample arguments have different lengths."""


class ShapeError(ValidationError):
    """An argument has the wrong number of dimensions or is empty."""


class NonFiniteError(ValidationError):
    """NaN or infinity where a finite number is required."""


class LabelError(ValidationError):
    """Labels of the wrong kind, a ``labels=`` problem or an unknown ``pos_label``."""


class ProbabilityError(ValidationError):
    """``y_proba`` has an entry outside [0, 1], a NaN/inf, a row not summing to 1, or the wrong shape."""


class WeightError(ValidationError):
    """``sample_weight`` has a NaN, infinite or negative entry, or sums to 0."""


class LimitExceededError(ValidationError):
    """The input needs more memory than a documented limit allows (e.g. too many classes)."""


class NotImplementedOptionError(ValidationError, NotImplementedError):
    """An option scikit-learn names but does not implement for this case either (e.g.
    ``average=None`` with ``multi_class="ovo"``); ``except NotImplementedError`` catches it."""


class OutOfMemoryError(LimitExceededError, MemoryError):
    """A buffer the input needs could not be allocated (``except MemoryError`` catches it too):
    the call stops with this error instead of taking the process down."""


class StateError(ValidationError):
    """An Evaluator state that cannot be used: a corrupt or foreign byte string, a newer
    format version, or a merge of states with different settings."""


class InputError(ValidationError):
    """A file or a column of the command line's inputs, or of :mod:`cmetrics.dask`, cannot be
    read or scored (missing, of the wrong type, not the format it claims)."""


class UnsupportedDtypeError(ValidationError, TypeError):
    """An array dtype cmetrics does not score (bytes, complex, datetime, ...)."""


class InternalError(RuntimeError):
    """A bug inside cmetrics (a caught Rust panic). Please report it."""


class UndefinedMetricWarning(UserWarning):
    """A metric is 0/0 for some class or for the whole table; see ``zero_division``."""

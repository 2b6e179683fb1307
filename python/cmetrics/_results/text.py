"""Values and labels as text for people: numbers, labels safe in a terminal, a Markdown cell
or an HTML page."""

from __future__ import annotations

import html
import math

import numpy as np


def printable(label: object) -> str:
    """A label as text safe to show in a terminal or a table: newlines, tabs, escape sequences
    and other control characters appear as their backslash escapes."""
    text = str(label)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def number(x: object) -> str:
    """A value for people: integers as integers (with thousands separators), other floats to
    six significant digits, NaN as "nan"."""
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    if isinstance(x, (float, np.floating)):
        if math.isnan(x):
            return "nan"
        if float(x).is_integer() and abs(x) < 2**53:
            return f"{int(x):,}"
        return f"{float(x):.6g}"
    return str(x)


def md(label: object) -> str:
    """A label inside a Markdown table cell."""
    return printable(label).replace("|", "\\|")


def html_text(label: object) -> str:
    """A label inside HTML text or an attribute: printable (control characters as escapes),
    then ``&``, ``<``, ``>`` and both quotes escaped."""
    return html.escape(printable(label), quote=True)

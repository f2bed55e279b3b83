"""CSV cells a spreadsheet opens as text (CSV formula injection): the one rule every CSV export of
``crp-inspect`` and the dashboard applies to its cells. A CKF written as CSV is data, not a report,
and keeps its cells as they are."""

from __future__ import annotations

import numbers

#: a text cell starting with one of these is read as a formula (or a formula's start) by spreadsheet programs
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """``value`` as a CSV cell a spreadsheet shows as written: a text starting with ``= + - @``, a tab or
    a CR is prefixed with an apostrophe; a number (a negative one too) stays a number; None is an empty
    cell. Any other value is written as its ``str``."""
    if value is None:
        return ""
    if isinstance(value, numbers.Real):
        return value
    text = str(value)
    return "'" + text if text.startswith(FORMULA_START) else text

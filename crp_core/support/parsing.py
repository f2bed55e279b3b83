"""Parsing structured text without a traceback: the one TOML reader of the library, and what a number
too long for Python says.

Every TOML input (scenarios and suite files, config files and ``--set`` values, SDK source-type
mappings) is parsed by :func:`parse_toml`: :mod:`tomllib` whose every failure is one
:class:`TOMLRefusal` (a line and a reason) the caller turns into its own error naming the file. Besides
invalid TOML that covers what ``tomllib`` lets escape as other exceptions: an integer beyond Python's
int-str conversion limit (a ValueError) and arrays or tables nested deeper than its recursive parser
reaches (a RecursionError, about 2 kB of brackets). Nesting is bounded explicitly as well
(:data:`MAX_TOML_DEPTH`, counted on the parsed document without recursion), so whether a document is
read never depends on the caller's own stack depth and nothing that walks it later can recurse past
the limit. No CRP document nests more than a few levels.

A number too long for ``int()`` is said the same way in TOML and JSON (:func:`long_number_at`,
:func:`long_number_message`).
"""

from __future__ import annotations

import re
import sys
import tomllib
from typing import Any

__all__ = ["MAX_TOML_DEPTH", "TOMLRefusal", "parse_toml", "long_number_at", "long_number_message"]

#: deepest nesting of arrays and tables a TOML input may have (the top-level table is level 0)
MAX_TOML_DEPTH = 64


class TOMLRefusal(ValueError):
    """Why a TOML text was not read: ``line`` (1-based; 0 when unknown), ``reason`` (a sentence that says
    where in the text but does not name the file: the caller's error does) and ``kind``: ``"syntax"``
    (not TOML at all), ``"number"`` (an integer of more digits than Python converts) or ``"nesting"``
    (deeper than :data:`MAX_TOML_DEPTH`)."""

    def __init__(self, line: int, reason: str, kind: str) -> None:
        super().__init__(reason)
        self.line = line
        self.reason = reason
        self.kind = kind


def long_number_at(text: str) -> tuple[int, int]:
    """(line, column) of the first run of digits too long for ``int()`` (0, 0 when there is none)."""
    limit = sys.get_int_max_str_digits() or 4300
    m = re.search(rf"[0-9_]{{{limit + 1},}}", text)
    if m is None:
        return 0, 0
    line = text.count("\n", 0, m.start()) + 1
    return line, m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1


def long_number_message(exc: ValueError, line: int, col: int) -> str:
    """What a ValueError of ``int()`` on a document's number says (at ``line``, ``col`` when known)."""
    where = f" at line {line}, column {col}" if line else ""
    if "integer string conversion" in str(exc):
        limit = sys.get_int_max_str_digits() or 4300
        return f"a number of more than {limit} digits{where} (no setting or label needs one)"
    return f"{str(exc)[:200]}{where}"


def _too_deep(text: str) -> TOMLRefusal:
    """The refusal of a document nested past :data:`MAX_TOML_DEPTH`, at the line where its brackets first
    open deeper than that (0 when the depth comes from dotted keys or table headers)."""
    depth, line = 0, 0
    for m in re.finditer(r"[\[\]{}\n]", text):
        ch = m.group()
        if ch == "\n":
            line += 1
        elif ch in "[{":
            depth += 1
            if depth > MAX_TOML_DEPTH:  # a bracket opens one level (a table header's close at once)
                break
        else:
            depth = max(0, depth - 1)
    else:
        line = -1
    return TOMLRefusal(
        line + 1,
        f"nested too deeply: more than {MAX_TOML_DEPTH} levels of arrays and tables"
        + (f" at line {line + 1}" if line >= 0 else ""),
        "nesting",
    )


def _depth_over(doc: dict[str, Any]) -> bool:
    """Whether ``doc`` nests arrays and tables more than :data:`MAX_TOML_DEPTH` levels deep (walked
    with a stack, not recursion)."""
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_TOML_DEPTH:
            return True
        items = value.values() if isinstance(value, dict) else value
        stack.extend((v, depth + 1) for v in items if isinstance(v, (dict, list)))
    return False


def parse_toml(text: str) -> dict[str, Any]:
    """The TOML document ``text``; every failure is a :class:`TOMLRefusal`: invalid TOML (its line,
    ``syntax``), a number of more than Python's int-str limit of digits (its line and column), arrays
    and tables nested more than :data:`MAX_TOML_DEPTH` levels."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise TOMLRefusal(int(m.group(1)) if m else 0, str(exc), "syntax") from None
    except ValueError as exc:  # an integer beyond Python's int-str conversion limit (4300 digits)
        line, col = long_number_at(text)
        raise TOMLRefusal(line, long_number_message(exc, line, col), "number") from None
    except RecursionError:
        raise _too_deep(text) from None
    if _depth_over(doc):
        raise _too_deep(text)
    return doc

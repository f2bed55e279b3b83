"""Where a problem is in a document: JSON parsed with the position of every value, so a problem
found at a path (``("sub_queries", 3, "text")``) is reported at its line; the path written as text
(``sub_queries[3].text``); a JSON error's message with its position. Used by every reader of a
JSON input whose problems are located (scenarios, suite files, baselines).
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import re
from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from crp_core.support.parsing import long_number_message

__all__ = [
    "DocPath",
    "Locate",
    "no_line",
    "field_locator",
    "json_with_lines",
    "format_path",
    "json_error_message",
]

#: a path into a document: object keys and list positions
DocPath = tuple[str | int, ...]
#: ``locate(path) -> line`` (1-based; 0 when the document has no positions)
Locate = Callable[[DocPath], int]


def no_line(path: DocPath) -> int:
    """The line of every path in a document without positions (TOML, a mapping): 0."""
    return 0


def json_error_message(exc: json.JSONDecodeError) -> str:
    """``exc``'s message with its position: ``Expecting ',' delimiter at line 3, column 7`` (the
    stdlib message alone stops at "... starting at")."""
    msg = exc.msg.rstrip()
    return f"{msg}{'' if msg.endswith(' at') else ' at'} line {exc.lineno}, column {exc.colno}"


def field_locator(data: bytes, name: str) -> Locate:
    """``locate(path) -> line`` for a scenario document's bytes (JSON: the line where the value at
    ``path`` starts, e.g. ``("expect", "must_include", 2)``; TOML or unreadable input: 0)."""
    if name.lower().endswith(".toml"):
        return no_line
    try:
        _, locate = json_with_lines(bytes(data).decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return no_line
    return locate


def format_path(path: DocPath) -> str:
    """``("expect", "conflicts", 1, "winner")`` -> ``"expect.conflicts[1].winner"``."""
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


# ---- JSON with positions ---------------------------------------------------------------------
#: ``scan_once(text, index) -> (value, end)``: the scanner the pure-Python JSON parser calls per value
ScanOnce = Callable[[str, int], tuple[Any, int]]
ObjectHook = Callable[[dict[str, Any]], Any] | None
PairsHook = Callable[[list[tuple[str, Any]]], Any] | None
#: ``parse_object((text, index after "{"), strict, scan_once, object_hook, object_pairs_hook, memo)``
ObjectParser = Callable[
    [tuple[str, int], bool, ScanOnce, ObjectHook, PairsHook, dict[str, str] | None], tuple[Any, int]
]
#: ``parse_array((text, index after "["), scan_once)``
ArrayParser = Callable[[tuple[str, int], ScanOnce], tuple[list[Any], int]]

# the pure-Python pieces of the stdlib json parser (undocumented, left out of typeshed): the object and
# array parsers and the scanner that calls a decoder's parse_object / parse_array (the C one does not)
_json_object: ObjectParser = vars(json.decoder)["JSONObject"]
_json_array: ArrayParser = vars(json.decoder)["JSONArray"]
_py_make_scanner: Callable[[json.JSONDecoder], ScanOnce] = vars(json.scanner)["py_make_scanner"]


class _PositionDecoder(json.JSONDecoder):
    """A :class:`json.JSONDecoder` with the per-instance parser hooks the pure-Python scanner reads
    (set by ``JSONDecoder.__init__``, missing from typeshed) declared."""

    parse_object: ObjectParser
    parse_array: ArrayParser
    scan_once: ScanOnce


def _scan_located(scan_once: ScanOnce, s: str, idx: int) -> tuple[Any, int]:
    """``scan_once(s, idx)``, a ValueError that is not a JSONDecodeError (an integer beyond Python's
    int-str conversion limit) turned into one at ``idx`` (the innermost value: its line and column)."""
    try:
        return scan_once(s, idx)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        raise json.JSONDecodeError(long_number_message(exc, 0, 0), s, idx) from None


def json_with_lines(text: str) -> tuple[Any, Locate]:
    """``(document, locate)``: JSON ``text`` parsed (the pure-Python scanner of the stdlib, recording
    where each object member and array item starts), and ``locate(path) -> line`` where the value at
    ``path`` starts; raises what ``json.loads`` raises."""
    where: dict[int, dict[Any, int]] = {}  # id(container) -> key/index -> offset of its value
    keep: list[Any] = []  # keep containers alive so ids stay unique

    def parse_object(
        s_and_end: tuple[str, int],
        strict: bool,
        scan_once: ScanOnce,
        object_hook: ObjectHook,
        object_pairs_hook: PairsHook,
        memo: dict[str, str] | None = None,
    ) -> tuple[Any, int]:
        starts: list[int] = []

        def scan(s: str, idx: int) -> tuple[Any, int]:
            starts.append(idx)
            return _scan_located(scan_once, s, idx)

        obj, end = _json_object(s_and_end, strict, scan, object_hook, object_pairs_hook, memo)
        pos = s_and_end[1] - 1
        where[id(obj)] = dict(zip(obj, starts)) if len(starts) == len(obj) else {k: pos for k in obj}
        where[id(obj)][None] = pos
        keep.append(obj)
        return obj, end

    def parse_array(s_and_end: tuple[str, int], scan_once: ScanOnce) -> tuple[list[Any], int]:
        starts: list[int] = []

        def scan(s: str, idx: int) -> tuple[Any, int]:
            starts.append(idx)
            return _scan_located(scan_once, s, idx)

        arr, end = _json_array(s_and_end, scan)
        where[id(arr)] = dict(enumerate(starts))
        where[id(arr)][None] = s_and_end[1] - 1
        keep.append(arr)
        return arr, end

    dec = _PositionDecoder()
    dec.parse_object = parse_object
    dec.parse_array = parse_array
    dec.scan_once = _py_make_scanner(dec)
    doc = dec.decode(text)

    newlines: list[int] = []  # offsets of the newlines, found on the first call

    def locate(path: DocPath) -> int:
        node, pos = doc, 0
        for step in path:
            w = where.get(id(node))
            if w is None:
                break
            pos = w.get(step, w[None])
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                break
        if not newlines:
            newlines.extend(m.start() for m in re.finditer("\n", text))
            newlines.append(len(text) + 1)  # a sentinel: never before a position, and the list is not empty
        return bisect_left(newlines, pos) + 1  # the newlines before pos: O(log n) per problem, not O(size)

    return doc, locate


def type_name(v: Any) -> str:
    """A JSON value's kind in words: "an object", "a list", "a string", "a number", "null"..."""
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
        int: "a number",
        float: "a number",
    }.get(type(v), type(v).__name__)

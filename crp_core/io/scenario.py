"""Scenario loading and validation (SPEC_NOTES §1.2).

A scenario is a JSON or TOML document: ``query`` (string or ``{"text", "embedding"}``), ``now``,
``sub_queries``, ``addressed``, ``prior_outputs``, ``fanout_width``, ``config`` (overrides, SPEC_NOTES §5),
``embedding_model``, ``name``, ``description`` and ``expect`` (suite labels, :mod:`crp_core.io.expect`,
docs/decisions/suites.md). Every problem is reported at once
(:class:`ScenarioError`), located by JSON path (``sub_queries[3].text``) and, for JSON, by line.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import math
import os
import re
import sys
import tomllib
from bisect import bisect_left
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, time
from typing import Any

import tomli_w

from crp_core.config import CRPConfig
from crp_core.errors import MAX_PROBLEMS, ConfigError, Problem, ScenarioError, capped
from crp_core.io.expect import expect_to_dict, parse_expect
from crp_core.io.timeparse import format_timestamp, parse_timestamp
from crp_core.model import Addressed, Scenario, SubQuery
from crp_core.support.files import read_regular_file

__all__ = [
    "load_scenario",
    "load_scenario_bytes",
    "scenario_from_dict",
    "scenario_to_dict",
    "dump_scenario",
    "SCENARIO_KEYS",
    "field_locator",
    "format_path",
    "json_with_lines",
    "json_error_message",
]

SCENARIO_KEYS: tuple[str, ...] = (
    "name",
    "description",
    "query",
    "now",
    "sub_queries",
    "addressed",
    "prior_outputs",
    "fanout_width",
    "config",
    "embedding_model",
    "expect",
)
_SUBQ_KEYS = ("id", "text", "label", "embedding")
_ADDR_KEYS = ("id", "depth_weight", "window")
_QUERY_KEYS = ("text", "embedding")
#: largest scenario file read (a scenario is small; this guards the dashboard upload path)
_MAX_SCENARIO_BYTES = 64 * 1024 * 1024

Path = tuple[str | int, ...]


def _no_line(path: Path) -> int:
    """The line of every path in a document without positions (TOML, a mapping): 0."""
    return 0


# ---- public API ------------------------------------------------------------------------------
def load_scenario(path: str | os.PathLike[str], *, expected_model: str | None = None) -> Scenario:
    """Load a ``.json`` or ``.toml`` scenario file (SPEC_NOTES §1.2). Raises :class:`ScenarioError`.

    Only a regular file is read (a FIFO, socket, device, link loop or dangling link is refused at
    once, :func:`crp_core.io.files.read_regular_file`), at most ``_MAX_SCENARIO_BYTES`` of it."""
    path = os.fspath(path)
    data = read_regular_file(path, max_bytes=_MAX_SCENARIO_BYTES, what="scenario", error=ScenarioError)
    return load_scenario_bytes(data, path, expected_model=expected_model)


def load_scenario_bytes(data: bytes, name: str, expected_model: str | None = None) -> Scenario:
    """Load a scenario from bytes; ``.toml`` names are TOML, anything else JSON."""
    what = f"scenario {name} refused"
    if len(data) > _MAX_SCENARIO_BYTES:
        raise ScenarioError(what, [Problem(0, "file", f"{len(data)} bytes; at most {_MAX_SCENARIO_BYTES}")])
    try:
        text = bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = bytes(data)[: exc.start].count(b"\n") + 1
        raise ScenarioError(what, [Problem(0, "file", f"not UTF-8 text (line {line}, offset {exc.start})")]) from None
    if name.lower().endswith(".toml"):
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            m = re.search(r"line (\d+)", str(exc))
            raise ScenarioError(what, [Problem(int(m.group(1)) if m else 0, "toml", f"invalid TOML: {exc}")]) from None
        except ValueError as exc:  # an integer beyond Python's int-str conversion limit (4300 digits)
            line, col = _long_number_at(text)
            raise ScenarioError(
                what, [Problem(line, "toml", f"invalid TOML: {_long_number_message(exc, line, col)}")]
            ) from None
        locate: Callable[[Path], int] = _no_line
    else:
        try:
            doc, locate = _json_with_lines(text)
        except json.JSONDecodeError as exc:
            raise ScenarioError(
                what, [Problem(exc.lineno, "json", f"invalid JSON: {json_error_message(exc)}")]
            ) from None
        except RecursionError:
            raise ScenarioError(
                what, [Problem(0, "json", "invalid JSON: nested too deeply (maximum recursion depth exceeded)")]
            ) from None
        except ValueError as exc:  # a top-level number beyond the int-str conversion limit
            line, col = _long_number_at(text)
            raise ScenarioError(
                what, [Problem(line, "json", f"invalid JSON: {_long_number_message(exc, line, col)}")]
            ) from None
    return _build(doc, name, expected_model, locate)


def json_error_message(exc: json.JSONDecodeError) -> str:
    """``exc``'s message with its position: ``Expecting ',' delimiter at line 3, column 7`` (the
    stdlib message alone stops at "... starting at")."""
    msg = exc.msg.rstrip()
    return f"{msg}{'' if msg.endswith(' at') else ' at'} line {exc.lineno}, column {exc.colno}"


def _long_number_at(text: str) -> tuple[int, int]:
    """(line, column) of the first run of digits too long for ``int()`` (0, 0 when there is none)."""
    limit = sys.get_int_max_str_digits() or 4300
    m = re.search(rf"[0-9_]{{{limit + 1},}}", text)
    if m is None:
        return 0, 0
    line = text.count("\n", 0, m.start()) + 1
    return line, m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1


def _long_number_message(exc: ValueError, line: int, col: int) -> str:
    where = f" at line {line}, column {col}" if line else ""
    if "integer string conversion" in str(exc):
        limit = sys.get_int_max_str_digits() or 4300
        return f"a number of more than {limit} digits{where} (no setting or label needs one)"
    return f"{str(exc)[:200]}{where}"


def scenario_from_dict(d: Mapping[str, Any], source: str = "", expected_model: str | None = None) -> Scenario:
    """Validate a scenario mapping (e.g. edited in the dashboard). Raises :class:`ScenarioError`."""
    return _build(d, source, expected_model, _no_line)


def scenario_to_dict(s: Scenario) -> dict[str, Any]:
    """Plain dict that ``scenario_from_dict`` turns back into an equal Scenario (None values omitted)."""
    d: dict[str, Any] = {}
    if s.name:
        d["name"] = s.name
    if s.description:
        d["description"] = s.description
    d["query"] = s.query if s.query_embedding is None else {"text": s.query, "embedding": list(s.query_embedding)}
    if s.now is not None:
        d["now"] = format_timestamp(s.now)
    sqs = []
    for sq in s.sub_queries:
        item: dict[str, Any] = {"id": sq.id, "text": sq.text}
        if sq.label is not None:
            item["label"] = sq.label
        if sq.embedding is not None:
            item["embedding"] = list(sq.embedding)
        sqs.append(item)
    d["sub_queries"] = sqs
    d["addressed"] = [{"id": a.id, "depth_weight": a.depth_weight, "window": a.window} for a in s.addressed]
    d["prior_outputs"] = list(s.prior_outputs)
    d["fanout_width"] = s.fanout_width
    d["config"] = _plain(s.config)
    if s.embedding_model is not None:
        d["embedding_model"] = s.embedding_model
    if s.expect is not None:
        d["expect"] = expect_to_dict(s.expect)
    return d


def dump_scenario(s: Scenario, fmt: str = "json") -> str:
    """Serialise to JSON or TOML text; loading it back gives an equal Scenario."""
    d = scenario_to_dict(s)
    if fmt == "json":
        return json.dumps(d, ensure_ascii=False, indent=2) + "\n"
    if fmt == "toml":
        d["config"] = _none_to_text(d["config"])  # TOML has no null; a ttl of None is "none"
        return tomli_w.dumps(d)
    raise ValueError(f"fmt must be 'json' or 'toml', got {fmt!r}")


def field_locator(data: bytes, name: str) -> Callable[[Path], int]:
    """``locate(path) -> line`` for a scenario document's bytes (JSON: the line where the value at
    ``path`` starts, e.g. ``("expect", "must_include", 2)``; TOML or unreadable input: 0)."""
    if name.lower().endswith(".toml"):
        return _no_line
    try:
        _, locate = _json_with_lines(bytes(data).decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return _no_line
    return locate


def json_with_lines(text: str) -> tuple[Any, Callable[[Path], int]]:
    """``(document, locate)``: JSON ``text`` parsed, and ``locate(path) -> line`` where the value at
    ``path`` starts (pure-Python scanner: slower than ``json.loads``; raises what it raises)."""
    return _json_with_lines(text)


def format_path(path: Path) -> str:
    """``("expect", "conflicts", 1, "winner")`` -> ``"expect.conflicts[1].winner"``."""
    return _fmt_path(path)


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
        raise json.JSONDecodeError(_long_number_message(exc, 0, 0), s, idx) from None


def _json_with_lines(text: str) -> tuple[Any, Callable[[Path], int]]:
    """Parse JSON recording where each object member and array item starts (pure-Python scanner)."""
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

    def locate(path: Path) -> int:
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


# ---- validation ------------------------------------------------------------------------------
def _fmt_path(path: Path) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


class _Check:
    """The problems of one document: the first :data:`MAX_PROBLEMS` kept (and located), all counted."""

    def __init__(self, locate: Callable[[Path], int]):
        self.locate = locate
        self.problems: list[Problem] = []
        self.total = 0

    def err(self, path: Path, msg: str, field: str | None = None) -> None:
        self.total += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(self.locate(path), field or _fmt_path(path) or "scenario", msg))

    def listed(self) -> list[Problem]:
        """The kept problems by line (stable: check order per line), then the count of the others."""
        return capped(sorted(self.problems, key=lambda pr: pr.line), self.total)


def _tname(v: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
        int: "a number",
        float: "a number",
    }.get(type(v), type(v).__name__)


def _text(c: _Check, v: Any, path: Path, *, required: bool) -> str | None:
    if v is None:
        if required:
            c.err(path, "missing (required)")
        return None
    if not isinstance(v, str):
        c.err(path, f"must be a string, got {_tname(v)}")
        return None
    if required and not v.strip():
        c.err(path, "empty (required, non-empty text)")
        return None
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        c.err(path, "contains an unpaired surrogate (not valid Unicode)")
        return None
    return v


def _vector(c: _Check, v: Any, path: Path) -> tuple[float, ...] | None:
    if v is None:
        return None
    if not isinstance(v, (list, tuple)) or not v:
        c.err(path, f"must be a non-empty list of numbers, got {_tname(v)}")
        return None
    out = []
    for i, x in enumerate(v):
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            c.err(path, f"element {i} is not a number: {json.dumps(x, default=str)[:40]}")
            return None
        try:
            fx = float(x)
        except OverflowError:
            fx = math.inf
        if not math.isfinite(fx):
            c.err(path, f"element {i} is {fx!r} (NaN or infinite)")
            return None
        out.append(fx)
    if not any(out):  # as the CKF loader: validate refuses what run would
        c.err(path, "is all zeros: an embedding needs a direction (cosine is undefined)")
        return None
    return tuple(out)


def _unknown_keys(c: _Check, d: Mapping[str, Any], allowed: tuple[str, ...], path: Path) -> None:
    for k in d:
        if k not in allowed:
            c.err(path + (str(k),), f"unknown key; allowed: {', '.join(allowed)}")


def _now(c: _Check, v: Any) -> datetime | None:
    if v is None:
        return None
    if isinstance(v, datetime):  # TOML datetime
        return (v if v.tzinfo else v.replace(tzinfo=UTC)).astimezone(UTC)
    if isinstance(v, date):  # TOML local date
        return datetime.combine(v, time(), tzinfo=UTC)
    try:
        return parse_timestamp(v)
    except ValueError as exc:
        c.err(("now",), str(exc))
        return None


def _config(c: _Check, v: Any) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        c.err(("config",), f"must be an object of configuration overrides, got {_tname(v)}")
        return {}
    flat: dict[str, tuple[Path, Any]] = {}
    for k, x in v.items():
        if isinstance(x, Mapping):
            for k2, x2 in x.items():
                flat[f"{k}.{k2}"] = (("config", str(k), str(k2)), x2)
        else:
            flat[str(k)] = (("config", str(k)), x)
    ok = True
    base = CRPConfig()
    for key, (path, x) in flat.items():
        try:
            base.with_overrides({key: x})
        except (ConfigError, TypeError, ValueError, OverflowError) as exc:
            ok = False
            c.err(path, str(exc), f"config.{key}")
    if ok:
        try:
            base.with_overrides(v)
        except (ConfigError, TypeError, ValueError, OverflowError) as exc:
            c.err(("config",), str(exc))
    return dict(v)


def _build(doc: Any, source: str, expected_model: str | None, locate: Callable[[Path], int]) -> Scenario:
    c = _Check(locate)
    what = f"scenario {source} refused" if source else "scenario refused"
    if not isinstance(doc, Mapping):
        raise ScenarioError(what, [Problem(0, "scenario", f"a scenario must be an object, got {_tname(doc)}")])
    _unknown_keys(c, doc, SCENARIO_KEYS, ())
    # query
    q = doc.get("query")
    query, q_emb = None, None
    if isinstance(q, Mapping):
        _unknown_keys(c, q, _QUERY_KEYS, ("query",))
        query = _text(c, q.get("text"), ("query", "text"), required=True)
        q_emb = _vector(c, q.get("embedding"), ("query", "embedding"))
    else:
        query = _text(c, q, ("query",), required=True)
    now = _now(c, doc.get("now"))
    # sub-queries
    subs: list[SubQuery] = []
    ids: dict[str, int] = {}
    raw = doc.get("sub_queries")
    subs_ok = True  # False: addressed ids cannot be checked against the sub-queries
    if raw is not None and not isinstance(raw, list):
        c.err(("sub_queries",), f"must be a list of {{id, text, label?, embedding?}}, got {_tname(raw)}")
        raw, subs_ok = None, False
    for i, item in enumerate(raw or []):
        p: Path = ("sub_queries", i)
        if not isinstance(item, Mapping):
            c.err(p, f"must be an object {{id, text, label?, embedding?}}, got {_tname(item)}")
            continue
        _unknown_keys(c, item, _SUBQ_KEYS, p)
        sid = _text(c, item.get("id"), p + ("id",), required=True)
        text = _text(c, item.get("text"), p + ("text",), required=True)
        label = _text(c, item.get("label"), p + ("label",), required=False)
        emb = _vector(c, item.get("embedding"), p + ("embedding",))
        if sid is not None and sid in ids:
            c.err(p + ("id",), f"duplicate sub-query id {sid!r} (first at sub_queries[{ids[sid]}])")
            continue
        if sid is not None:
            ids[sid] = i
        if sid is not None and text is not None:
            subs.append(SubQuery(id=sid, text=text, label=label, embedding=emb))
    # embedding dimensions must agree
    dims = [
        (p, len(e))
        for p, e in [(("query", "embedding"), q_emb)]
        + [(("sub_queries", ids.get(s.id, 0), "embedding"), s.embedding) for s in subs]
        if e is not None
    ]
    if dims:
        d0 = dims[0][1]
        for p, d in dims[1:]:
            if d != d0:
                c.err(p, f"dimension {d}, but {_fmt_path(dims[0][0])} has {d0}; one model, one dimension")
    # addressed
    addressed: list[Addressed] = []
    seen_addr: dict[str, int] = {}
    raw = doc.get("addressed")
    if raw is not None and not isinstance(raw, list):
        c.err(("addressed",), f"must be a list of {{id, depth_weight, window}}, got {_tname(raw)}")
        raw = None
    for i, item in enumerate(raw or []):
        p = ("addressed", i)
        if not isinstance(item, Mapping):
            c.err(p, f"must be an object {{id, depth_weight, window}}, got {_tname(item)}")
            continue
        _unknown_keys(c, item, _ADDR_KEYS, p)
        aid = _text(c, item.get("id"), p + ("id",), required=True)
        if aid is not None and subs_ok:
            if aid not in ids:
                c.err(p + ("id",), f"{aid!r} is not the id of any sub-query")
                aid = None
            elif aid in seen_addr:
                c.err(p + ("id",), f"{aid!r} addressed twice (first at addressed[{seen_addr[aid]}])")
                aid = None
            else:
                seen_addr[aid] = i
        dw = item.get("depth_weight")
        depth = None
        if dw is None:
            c.err(p + ("depth_weight",), "missing (required, 0-1)")
        elif isinstance(dw, bool) or not isinstance(dw, (int, float)):
            c.err(p + ("depth_weight",), f"must be a number between 0 and 1, got {_tname(dw)}")
        elif not (0.0 <= dw <= 1.0):  # NaN fails this too
            c.err(p + ("depth_weight",), f"must be between 0 and 1, got {dw!r}")
        else:
            depth = float(dw)
        w = item.get("window", 1)
        window = None
        if isinstance(w, bool) or not isinstance(w, int) or w < 1:
            c.err(p + ("window",), f"must be a whole number >= 1, got {json.dumps(w, default=str)[:40]}")
        else:
            window = w
        if aid is not None and depth is not None and window is not None:
            addressed.append(Addressed(id=aid, depth_weight=depth, window=window))
    # prior outputs
    prior: list[str] = []
    raw = doc.get("prior_outputs")
    if raw is not None and not isinstance(raw, list):
        c.err(("prior_outputs",), f"must be a list of texts, got {_tname(raw)}")
        raw = None
    for i, t in enumerate(raw or []):
        v = _text(c, t, ("prior_outputs", i), required=False)
        if v is not None:
            prior.append(v)
        elif t is None:
            c.err(("prior_outputs", i), "must be a string, got null")
    # fan-out width
    fw = doc.get("fanout_width", 0)
    fanout = 0
    if isinstance(fw, bool) or not isinstance(fw, int) or fw < 0:
        c.err(
            ("fanout_width",),
            f"must be a whole number >= 0 (0 or 1 = no fan-out), got {json.dumps(fw, default=str)[:40]}",
        )
    else:
        fanout = fw
    config = _config(c, doc.get("config"))
    model = _text(c, doc.get("embedding_model"), ("embedding_model",), required=False)
    if model is not None and not model.strip():
        c.err(("embedding_model",), "empty; omit it or name the model")
        model = None
    if model is not None and expected_model is not None and model != expected_model:
        c.err(
            ("embedding_model",),
            f"scenario embeddings are from {model!r} but the active model is "
            f"{expected_model!r}; embeddings never mix models (SPEC-024 §2.5)",
        )
    name = _text(c, doc.get("name"), ("name",), required=False) or ""
    description = _text(c, doc.get("description"), ("description",), required=False) or ""
    expect = parse_expect(doc.get("expect"), c.err)
    if c.problems:
        raise ScenarioError(what, c.listed())
    assert query is not None
    return Scenario(
        query=query,
        query_embedding=q_emb,
        now=now,
        sub_queries=tuple(subs),
        addressed=tuple(addressed),
        prior_outputs=tuple(prior),
        fanout_width=fanout,
        config=config,
        embedding_model=model,
        name=name,
        description=description,
        expect=expect,
    )


def _plain(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _none_to_text(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {k: _none_to_text(x) for k, x in v.items()}
    return "none" if v is None else v

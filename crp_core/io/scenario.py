"""Scenario loading and validation (docs/reference/scenarios.md).

A scenario is a JSON or TOML document: ``query`` (string or ``{"text", "embedding"}``), ``now``,
``sub_queries``, ``addressed``, ``prior_outputs``, ``fanout_width``, ``config`` (overrides, docs/reference/config.md),
``embedding_model``, ``name``, ``description`` and ``expect`` (suite labels, :mod:`crp_core.io.expect`,
docs/decisions/suites.md). Every problem is reported at once
(:class:`ScenarioError`), located by JSON path (``sub_queries[3].text``) and, for JSON, by line.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from datetime import UTC, date, datetime, time
from typing import Any

import numpy as np
import tomli_w

from crp_core.config import TABLE_KEYS, CRPConfig
from crp_core.errors import MAX_PROBLEMS, ConfigError, Problem, ScenarioError, capped
from crp_core.io.ckf.facts import TINY_FOR_FLOAT32
from crp_core.io.expect import expect_to_dict, parse_expect
from crp_core.io.located import (
    DocPath,
    Locate,
    format_path,
    json_error_message,
    json_with_lines,
    no_line,
    type_name,
)
from crp_core.io.timeparse import format_timestamp, parse_timestamp
from crp_core.model import Addressed, Scenario, SubQuery
from crp_core.support.files import read_regular_file, too_large_reason
from crp_core.support.parsing import TOMLRefusal, long_number_at, long_number_message, parse_toml

__all__ = [
    "load_scenario",
    "load_scenario_bytes",
    "scenario_from_dict",
    "scenario_to_dict",
    "dump_scenario",
    "SCENARIO_KEYS",
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
#: largest scenario file read (a scenario is small: a query, sub-queries and their embeddings, a few
#: hundred kB at most; this also bounds the memory its parse takes on the dashboard's upload path)
MAX_SCENARIO_BYTES = 16 * 1024 * 1024
#: most numbers in one scenario embedding (the largest embedding models give a few thousand)
MAX_EMBEDDING_DIM = 8192


# ---- public API ------------------------------------------------------------------------------
def load_scenario(path: str | os.PathLike[str], *, expected_model: str | None = None) -> Scenario:
    """Load a ``.json`` or ``.toml`` scenario file (docs/reference/scenarios.md). Raises :class:`ScenarioError`.

    Only a regular file is read (a FIFO, socket, device, link loop or dangling link is refused at
    once, :func:`crp_core.support.files.read_regular_file`), at most ``MAX_SCENARIO_BYTES`` of it."""
    path = os.fspath(path)
    data = read_regular_file(path, max_bytes=MAX_SCENARIO_BYTES, what="scenario", error=ScenarioError)
    return load_scenario_bytes(data, path, expected_model=expected_model)


def load_scenario_bytes(data: bytes, name: str, expected_model: str | None = None) -> Scenario:
    """Load a scenario from bytes; ``.toml`` names are TOML, anything else JSON."""
    what = f"scenario {name} refused"
    if len(data) > MAX_SCENARIO_BYTES:
        raise ScenarioError(
            what, [Problem(0, "file", too_large_reason(name, len(data), MAX_SCENARIO_BYTES, "scenario"))]
        )
    try:
        text = bytes(data).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = bytes(data)[: exc.start].count(b"\n") + 1
        raise ScenarioError(what, [Problem(0, "file", f"not UTF-8 text (line {line}, offset {exc.start})")]) from None
    if name.lower().endswith(".toml"):
        try:
            doc = parse_toml(text)
        except TOMLRefusal as exc:
            raise ScenarioError(what, [Problem(exc.line, "toml", f"invalid TOML: {exc.reason}")]) from None
        locate: Locate = no_line
    else:
        try:
            doc, locate = json_with_lines(text)
        except json.JSONDecodeError as exc:
            raise ScenarioError(
                what, [Problem(exc.lineno, "json", f"invalid JSON: {json_error_message(exc)}")]
            ) from None
        except RecursionError:
            raise ScenarioError(
                what, [Problem(0, "json", "invalid JSON: nested too deeply (maximum recursion depth exceeded)")]
            ) from None
        except ValueError as exc:  # a top-level number beyond the int-str conversion limit
            line, col = long_number_at(text)
            raise ScenarioError(
                what, [Problem(line, "json", f"invalid JSON: {long_number_message(exc, line, col)}")]
            ) from None
    return _build(doc, name, expected_model, locate)


def scenario_from_dict(d: Mapping[str, Any], source: str = "", expected_model: str | None = None) -> Scenario:
    """Validate a scenario mapping (e.g. edited in the dashboard). Raises :class:`ScenarioError`."""
    return _build(d, source, expected_model, no_line)


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


# ---- validation ------------------------------------------------------------------------------
class _Check:
    """The problems of one document: the first :data:`MAX_PROBLEMS` kept (and located), all counted."""

    def __init__(self, locate: Locate):
        self.locate = locate
        self.problems: list[Problem] = []
        self.total = 0

    def err(self, path: DocPath, msg: str, field: str | None = None) -> None:
        self.total += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(self.locate(path), field or format_path(path) or "scenario", msg))

    def listed(self) -> list[Problem]:
        """The kept problems by line (stable: check order per line), then the count of the others."""
        return capped(sorted(self.problems, key=lambda pr: pr.line), self.total)


def _text(c: _Check, v: Any, path: DocPath, *, required: bool) -> str | None:
    if v is None:
        if required:
            c.err(path, "missing (required)")
        return None
    if not isinstance(v, str):
        c.err(path, f"must be a string, got {type_name(v)}")
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


def _vector(c: _Check, v: Any, path: DocPath) -> tuple[float, ...] | None:
    if v is None:
        return None
    if not isinstance(v, (list, tuple)) or not v:
        c.err(path, f"must be a non-empty list of numbers, got {type_name(v)}")
        return None
    if len(v) > MAX_EMBEDDING_DIM:
        c.err(path, f"{len(v):,} numbers: an embedding has at most {MAX_EMBEDDING_DIM:,}")
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
    if not np.any(np.asarray(out, dtype=np.float32)):
        c.err(path, f"is all zeros as float32: {TINY_FOR_FLOAT32}")
        return None
    return tuple(out)


def _unknown_keys(c: _Check, d: Mapping[str, Any], allowed: tuple[str, ...], path: DocPath) -> None:
    for k in d:
        if k not in allowed:
            c.err(path + (str(k),), f"unknown key; allowed: {', '.join(allowed)}")


def _now(c: _Check, v: Any) -> datetime | None:
    if v is None:
        return None
    if isinstance(v, datetime):  # TOML datetime
        try:
            return (v if v.tzinfo else v.replace(tzinfo=UTC)).astimezone(UTC)
        except OverflowError:  # before year 1 or after 9999 once in UTC: what parse_timestamp says of the text
            c.err(("now",), f"timestamp out of range once converted to UTC: {v.isoformat()!r}")
            return None
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
        c.err(("config",), f"must be an object of configuration overrides, got {type_name(v)}")
        return {}
    flat: dict[str, tuple[DocPath, Any]] = {}
    for k, x in v.items():
        if isinstance(x, Mapping) and str(k) in TABLE_KEYS:  # a table's cells, each checked on its own
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


def _build(doc: Any, source: str, expected_model: str | None, locate: Locate) -> Scenario:
    c = _Check(locate)
    what = f"scenario {source} refused" if source else "scenario refused"
    if not isinstance(doc, Mapping):
        raise ScenarioError(what, [Problem(0, "scenario", f"a scenario must be an object, got {type_name(doc)}")])
    _unknown_keys(c, doc, SCENARIO_KEYS, ())
    query, q_emb = _query(c, doc.get("query"))
    now = _now(c, doc.get("now"))
    subs, ids, subs_ok = _sub_queries(c, doc.get("sub_queries"))
    _same_dimension(c, q_emb, subs, ids)
    addressed = _addressed(c, doc.get("addressed"), ids if subs_ok else None)
    prior = _prior_outputs(c, doc.get("prior_outputs"))
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
    model = _model(c, doc.get("embedding_model"), expected_model)
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


def _query(c: _Check, q: Any) -> tuple[str | None, tuple[float, ...] | None]:
    """``(text, embedding)`` of ``query``: a string, or ``{"text", "embedding"}``."""
    if isinstance(q, Mapping):
        _unknown_keys(c, q, _QUERY_KEYS, ("query",))
        return _text(c, q.get("text"), ("query", "text"), required=True), _vector(
            c, q.get("embedding"), ("query", "embedding")
        )
    return _text(c, q, ("query",), required=True), None


def _sub_queries(c: _Check, raw: Any) -> tuple[list[SubQuery], dict[str, int], bool]:
    """``(sub-queries, position of each id, ok)``; ``ok`` False when ``sub_queries`` is not a list
    (then addressed ids cannot be checked against the sub-queries)."""
    subs: list[SubQuery] = []
    ids: dict[str, int] = {}
    if raw is not None and not isinstance(raw, list):
        c.err(("sub_queries",), f"must be a list of {{id, text, label?, embedding?}}, got {type_name(raw)}")
        return subs, ids, False
    for i, item in enumerate(raw or []):
        p: DocPath = ("sub_queries", i)
        if not isinstance(item, Mapping):
            c.err(p, f"must be an object {{id, text, label?, embedding?}}, got {type_name(item)}")
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
    return subs, ids, True


def _same_dimension(c: _Check, q_emb: tuple[float, ...] | None, subs: list[SubQuery], ids: dict[str, int]) -> None:
    """The query's and the sub-queries' embeddings have one dimension (one model)."""
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
                c.err(p, f"dimension {d}, but {format_path(dims[0][0])} has {d0}; one model, one dimension")


def _addressed(c: _Check, raw: Any, ids: dict[str, int] | None) -> list[Addressed]:
    """The ``addressed`` list; each id must name a sub-query (``ids``; None: not checked) once."""
    addressed: list[Addressed] = []
    seen: dict[str, int] = {}
    if raw is not None and not isinstance(raw, list):
        c.err(("addressed",), f"must be a list of {{id, depth_weight, window}}, got {type_name(raw)}")
        return addressed
    for i, item in enumerate(raw or []):
        p: DocPath = ("addressed", i)
        if not isinstance(item, Mapping):
            c.err(p, f"must be an object {{id, depth_weight, window}}, got {type_name(item)}")
            continue
        _unknown_keys(c, item, _ADDR_KEYS, p)
        aid = _text(c, item.get("id"), p + ("id",), required=True)
        if aid is not None and ids is not None:
            if aid not in ids:
                c.err(p + ("id",), f"{aid!r} is not the id of any sub-query")
                aid = None
            elif aid in seen:
                c.err(p + ("id",), f"{aid!r} addressed twice (first at addressed[{seen[aid]}])")
                aid = None
            else:
                seen[aid] = i
        depth = _depth_weight(c, item.get("depth_weight"), p + ("depth_weight",))
        w = item.get("window", 1)
        window = None
        if isinstance(w, bool) or not isinstance(w, int) or w < 1:
            c.err(p + ("window",), f"must be a whole number >= 1, got {json.dumps(w, default=str)[:40]}")
        else:
            window = w
        if aid is not None and depth is not None and window is not None:
            addressed.append(Addressed(id=aid, depth_weight=depth, window=window))
    return addressed


def _depth_weight(c: _Check, dw: Any, path: DocPath) -> float | None:
    if dw is None:
        c.err(path, "missing (required, 0-1)")
    elif isinstance(dw, bool) or not isinstance(dw, (int, float)):
        c.err(path, f"must be a number between 0 and 1, got {type_name(dw)}")
    elif not (0.0 <= dw <= 1.0):  # NaN fails this too
        c.err(path, f"must be between 0 and 1, got {dw!r}")
    else:
        return float(dw)
    return None


def _prior_outputs(c: _Check, raw: Any) -> list[str]:
    prior: list[str] = []
    if raw is not None and not isinstance(raw, list):
        c.err(("prior_outputs",), f"must be a list of texts, got {type_name(raw)}")
        return prior
    for i, t in enumerate(raw or []):
        v = _text(c, t, ("prior_outputs", i), required=False)
        if v is not None:
            prior.append(v)
        elif t is None:
            c.err(("prior_outputs", i), "must be a string, got null")
    return prior


def _model(c: _Check, v: Any, expected_model: str | None) -> str | None:
    """The scenario's ``embedding_model``: a non-empty name, the active model's when one is expected."""
    model = _text(c, v, ("embedding_model",), required=False)
    if model is not None and not model.strip():
        c.err(("embedding_model",), "empty; omit it or name the model")
        return None
    if model is not None and expected_model is not None and model != expected_model:
        c.err(
            ("embedding_model",),
            f"scenario embeddings are from {model!r} but the active model is "
            f"{expected_model!r}; embeddings never mix models (SPEC-024 §2.5)",
        )
    return model


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

"""A crprotocol SDK cold-storage snapshot read as a CKF (docs/decisions/sdk-snapshots.md).

``ContextualKnowledgeFabric.persist`` writes one JSON object ``{"header": {...}, "payload":
{"warm_store": {"facts": {id: {...}}, "edges": [...], ...}, "event_log": [...], "community_map":
{...}}}``. Each SDK fact becomes a CKF fact (SPEC-009 §2): ``text`` -> ``content``, ``created_at``
(epoch seconds) -> ``ingested_at`` and ``modified_at`` (UTC), a set ``superseded_by`` -> status
``STALE`` plus ``metadata.superseded_by``, the other SDK fields -> ``metadata``, ``community_map`` ->
``community_label``, ``source_type`` from a :class:`~crp_core.io.ckf.sdk_map.SourceTypeMap`. The
SDK's edges are kept as :class:`~crp_core.model.GivenEdge` records; what was mapped, defaulted and
dropped is the :class:`~crp_core.model.ImportSummary` on the KnowledgeBase.

The header's checksum (SHA-256, or BLAKE3 when the ``blake3`` module is importable, of
``json.dumps(payload, sort_keys=True, default=str)``) and counts are checked (warnings); a
``schema_version`` newer than this reader knows is refused. Every problem names the JSON path and
the fact id, with the fact's 1-based position in ``facts`` as its line (0 for the rest of the file).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import re
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from typing import Any

from crp_core.errors import CKFError, Problem
from crp_core.io.ckf.facts import _FILE, _finish, _json_reason, _parse_fact, _refuse, _State, _tname
from crp_core.io.ckf.sdk_map import SourceTypeMap
from crp_core.model import GivenEdge, ImportSummary, KnowledgeBase

#: the newest ``header.schema_version`` known (the SDK's cold-storage schema)
SNAPSHOT_SCHEMA = 1
#: the ``payload.warm_store.schema_version`` values known (v1: edges without ``source_stage``)
STORE_SCHEMAS = (1, 2)
PRODUCER = "crprotocol SDK snapshot"
FMT = "sdk"
#: SDK fact fields kept in ``metadata`` as given, with the JSON type each must have
META_FIELDS: tuple[tuple[str, str], ...] = (
    ("category", "string"),
    ("confidence", "number"),
    ("source_window_id", "string"),
    ("extraction_stage", "integer"),
    ("age_in_windows", "integer"),
    ("seen_count", "integer"),
    ("consumed_by_windows", "strings"),
    ("graph_edges", "strings"),
    ("supersession_confidence", "number"),
    ("tier", "integer"),
    ("has_embedding", "boolean"),
)
_FACT_KEYS = frozenset({"fact_id", "text", "created_at", "superseded_by", "embedding"} | {k for k, _ in META_FIELDS})
_PAYLOAD_KEYS = frozenset({"warm_store", "event_log", "community_map"})
_STORE_KEYS = frozenset(
    {"schema_version", "facts", "edges", "critical_state", "structural_state", "window_count", "current_window_id"}
)
#: a ``.json`` whose first key is ``header`` or ``payload`` (the SDK writes header first; sorted keys too)
_SNIFF = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"(?:header|payload)"')
_FACTS = "payload.warm_store.facts"


def looks_like_snapshot(data: bytes) -> bool:
    """Is this ``.json`` an SDK snapshot (a top-level object starting with ``header`` or ``payload``)?"""
    return _SNIFF.match(bytes(data[:4096])) is not None


def load_sdk_snapshot(
    path: str | os.PathLike[str],
    *,
    lenient: bool = False,
    max_bytes: int | None = None,
    source_map: SourceTypeMap | None = None,
) -> KnowledgeBase:
    """Read an SDK snapshot file (module docstring). Raises :class:`CKFError`."""
    from crp_core.io.ckf.read import _check_resolves, _limit, _read_limited

    p = os.fspath(path)
    _check_resolves(p, _FILE)
    return read_snapshot(_read_limited(p, _limit(max_bytes), _FILE), p, lenient=lenient, source_map=source_map)


def load_sdk_snapshot_bytes(
    data: bytes,
    name: str,
    *,
    lenient: bool = False,
    max_bytes: int | None = None,
    source_map: SourceTypeMap | None = None,
) -> KnowledgeBase:
    """Read an uploaded SDK snapshot. Raises :class:`CKFError`."""
    from crp_core.io.ckf.read import _limit, _too_large

    limit = _limit(max_bytes)
    if len(data) > limit:
        _refuse(name, [Problem(0, _FILE, _too_large(len(data), limit))])
    return read_snapshot(bytes(data), name, lenient=lenient, source_map=source_map)


def fact_path(fid: str, field: str | None = None) -> str:
    """``payload.warm_store.facts["f-1"].text`` (a long id is cut: the problem's fact_id has it whole)."""
    key = json.dumps(fid)
    if len(key) > 64:
        key = key[:60] + '..."'
    return f"{_FACTS}[{key}]" + (f".{field}" if field else "")


def _type_error(value: Any, kind: str) -> str | None:
    """Why ``value`` is not of the JSON ``kind``, or None."""
    if kind == "string":
        ok = isinstance(value, str)
    elif kind == "boolean":
        ok = isinstance(value, bool)
    elif kind == "integer":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind == "number":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    else:  # a list of strings
        ok = isinstance(value, list) and all(isinstance(x, str) for x in value)
        if not ok:
            return f"must be a list of strings, got {_shown(value)}"
    if ok:
        return None
    article = "an" if kind[0] in "aeiou" else "a"
    return f"must be {article} {kind}{' (finite)' if kind == 'number' else ''}, got {_shown(value)}"


def _shown(v: Any) -> str:
    if isinstance(v, (dict, list)):
        return _tname(v)
    return f"{_tname(v)} {json.dumps(v)[:40]}"


def _epoch_iso(v: Any) -> str | None:
    """Epoch seconds as ISO 8601 UTC, None when not a finite number in datetime's range."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    try:
        return datetime.fromtimestamp(v, UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


def _pairs(pairs: list[tuple[str, Any]], dupes: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            dupes.append(k)
        out[k] = v
    return out


def _checksum(payload: Any, given: Any, warnings: list[Problem]) -> tuple[str, str]:
    """(integrity, algorithm) of ``header.checksum`` against the payload (module docstring)."""
    if given is None or given == "":
        warnings.append(
            Problem(0, "header.checksum", "no checksum in the header: the payload's integrity is not checked")
        )
        return "absent", ""
    if not isinstance(given, str):
        warnings.append(
            Problem(
                0,
                "header.checksum",
                f"must be a hex string, got {_shown(given)}; the payload's integrity is not checked",
            )
        )
        return "absent", ""
    try:
        text = json.dumps(payload, sort_keys=True, default=str).encode("utf-8", "surrogatepass")
    except (ValueError, RecursionError):
        warnings.append(
            Problem(
                0,
                "header.checksum",
                "the payload cannot be re-serialised (nested too deeply): the checksum cannot be verified",
            )
        )
        return "unverifiable", ""
    want = given.strip().lower()
    if hashlib.sha256(text).hexdigest() == want:
        return "ok", "sha256"
    try:
        b3 = importlib.import_module("blake3")
    except ImportError:
        warnings.append(
            Problem(
                0,
                "header.checksum",
                "does not match the SHA-256 of the payload and the blake3 "
                "module is not installed: the checksum cannot be verified "
                "(the SDK writes BLAKE3 when blake3 is installed; otherwise "
                "the file was changed after it was written)",
            )
        )
        return "unverifiable", ""
    if b3.blake3(text).hexdigest() == want:
        return "ok", "blake3"
    warnings.append(
        Problem(
            0,
            "header.checksum",
            "does not match the payload (neither its SHA-256 nor its BLAKE3): "
            "the snapshot was changed or damaged after it was written; loaded "
            "anyway, check it",
        )
    )
    return "mismatch", ""


def _schema(value: Any, field: str, known: tuple[int, ...], fp: list[Problem], warnings: list[Problem]) -> int:
    if value is None:
        warnings.append(Problem(0, field, f"missing; read as schema {known[0]} (the SDK's default)"))
        return known[0]
    if isinstance(value, bool) or not isinstance(value, int):
        fp.append(Problem(0, field, f"must be a whole number, got {_shown(value)}"))
        return known[0]
    if value > known[-1]:
        fp.append(
            Problem(
                0,
                field,
                f"schema version {value} is newer than this reader knows ({known[-1]}); "
                "refusing to guess at a newer format: upgrade crp-inspect",
            )
        )
    elif value not in known:
        fp.append(Problem(0, field, f"unknown schema version {value}; known: {', '.join(map(str, known))}"))
    return value


class _Tally:
    """Counts for the summary, in first-seen order."""

    def __init__(self) -> None:
        self.mapped: Counter[str] = Counter()
        self.defaulted: Counter[str] = Counter()
        self.dropped: Counter[str] = Counter()


def read_snapshot(
    data: bytes, source: str, *, lenient: bool = False, source_map: SourceTypeMap | None = None
) -> KnowledgeBase:
    """Parse and check the bytes of a snapshot (module docstring). Raises :class:`CKFError`."""
    from crp_core.io.ckf.read import _decode

    smap = source_map or SourceTypeMap()
    text, bad = _decode(data)
    if bad is not None:
        _refuse(source, [bad])
    assert text is not None
    dupes: list[str] = []
    try:
        doc = json.loads(text, object_pairs_hook=partial(_pairs, dupes=dupes))
    except (ValueError, RecursionError) as exc:
        line = exc.lineno if isinstance(exc, json.JSONDecodeError) else 0
        cut = isinstance(exc, json.JSONDecodeError) and exc.pos >= len(text.rstrip()) - 1
        hint = "; the file ends in the middle of the snapshot (cut short?)" if cut else ""
        _refuse(source, [Problem(line, "json", f"invalid JSON: {_json_reason(exc)}{hint}")])
    fp: list[Problem] = []
    header_given = isinstance(doc, dict) and isinstance(doc.get("header"), dict)
    warnings: list[Problem] = [
        Problem(0, "json", f"key {k!r} given more than once in an object; the last value is used")
        for k in dict.fromkeys(dupes)
    ]
    if not isinstance(doc, dict):
        _refuse(source, [Problem(0, _FILE, f"an SDK snapshot is a JSON object, got {_tname(doc)}")])
    header, payload = doc.get("header"), doc.get("payload")
    for k in doc:
        if k not in ("header", "payload"):
            warnings.append(Problem(0, str(k), "unknown top-level key, ignored (expected header, payload)"))
    if not isinstance(header, dict):
        fp.append(
            Problem(
                0,
                "header",
                "missing: an SDK snapshot starts with a header object (schema_version, checksum, counts)"
                if header is None
                else f"must be an object, got {_tname(header)}",
            )
        )
        header = {}
    if not isinstance(payload, dict):
        _refuse(
            source,
            fp
            + [
                Problem(
                    0,
                    "payload",
                    "missing (required)" if payload is None else f"must be an object, got {_tname(payload)}",
                )
            ],
        )
    version = SNAPSHOT_SCHEMA
    if header_given:
        version = _schema(header.get("schema_version"), "header.schema_version", (SNAPSHOT_SCHEMA,), fp, warnings)
    store = payload.get("warm_store")
    if not isinstance(store, dict):
        _refuse(
            source,
            fp
            + [
                Problem(
                    0,
                    "payload.warm_store",
                    "missing (required)" if store is None else f"must be an object, got {_tname(store)}",
                )
            ],
        )
    _schema(store.get("schema_version"), "payload.warm_store.schema_version", STORE_SCHEMAS, fp, warnings)
    facts = store.get("facts")
    if not isinstance(facts, dict):
        fp.append(
            Problem(
                0,
                _FACTS,
                "missing (required)" if facts is None else f"must be an object of facts by id, got {_tname(facts)}",
            )
        )
        facts = {}
    elif not facts:
        fp.append(Problem(0, _FACTS, "the snapshot holds no facts"))
    raw_edges = store.get("edges", [])
    if not isinstance(raw_edges, list):
        fp.append(Problem(0, "payload.warm_store.edges", f"must be a list of edges, got {_tname(raw_edges)}"))
        raw_edges = []
    if fp and any(p.field.endswith("schema_version") for p in fp):
        _refuse(source, fp)  # a newer format: nothing below can be trusted
    tally = _Tally()
    integrity, algorithm = _checksum(payload, header.get("checksum"), warnings) if header_given else ("absent", "")
    _header_checks(header, len(facts), len(raw_edges), warnings, tally)
    for k in payload:
        if k not in _PAYLOAD_KEYS:
            tally.dropped[f"payload.{k} (unknown)"] += 1
    for k in store:
        if k not in _STORE_KEYS:
            tally.dropped[f"payload.warm_store.{k} (unknown)"] += 1
    events = payload.get("event_log")
    if isinstance(events, list) and events:
        tally.dropped["event_log events (the SDK's audit trail; the facts carry its outcome)"] += len(events)
    for k in ("critical_state", "structural_state"):
        if store.get(k):
            tally.dropped[f"warm_store.{k} (session state, not facts)"] += 1
    communities = _communities(payload.get("community_map"), warnings)
    st = _State(file_problems=fp, warnings=warnings)
    ids: dict[int, str] = {}
    for line, (key, obj) in enumerate(facts.items(), start=1):
        ids[line] = key
        st.recs.append(_fact_rec(key, obj, line, st, smap, communities, tally))
    edges, edge_problems = _edges(raw_edges, facts, tally)
    if not lenient:
        fp.extend(edge_problems)
    try:
        kb = _finish(st, source=source, fmt=FMT, lenient=lenient, expected_model=None)
    except CKFError as exc:
        raise CKFError(exc.what, [_sdk_problem(p, ids) for p in exc.problems]) from None
    kept = tuple(e for e in edges if kb.get(e.source_id) is not None and kb.get(e.target_id) is not None)
    if len(kept) < len(edges):
        tally.dropped["edges to a fact not loaded (lenient)"] += len(edges) - len(kept)
    if kept:
        tally.mapped["edges -> given edges (relation_type, confidence)"] += len(kept)
    edges = kept
    superseded = sum(1 for f in kb.facts if f.status == "STALE")
    warnings_out: list[Problem] = []
    _successors(kb, facts, warnings_out)
    if len(kb) < len(facts):
        tally.dropped["facts skipped (lenient: see the skipped problems)"] += len(facts) - len(kb)
    summary = ImportSummary(
        producer=PRODUCER,
        schema_version=version,
        facts_in=len(facts),
        facts_loaded=len(kb),
        edges_in=len(raw_edges),
        edges_kept=len(edges),
        superseded=superseded,
        integrity=integrity,
        algorithm=algorithm,
        session_id=sid if isinstance(sid := header.get("session_id"), str) else "",
        created_at=_epoch_iso(header.get("created_at")) or "",
        mapped=tuple(tally.mapped.items()),
        defaulted=tuple(tally.defaulted.items()),
        dropped=tuple(tally.dropped.items()),
    )
    return replace(
        kb,
        edges=edges,
        imported=summary,
        warnings=tuple(_sdk_problem(p, ids) for p in kb.warnings) + tuple(warnings_out),
        skipped=tuple(_sdk_problem(p, ids) for p in kb.skipped) + (tuple(edge_problems) if lenient else ()),
    )


def _header_checks(header: dict[str, Any], n_facts: int, n_edges: int, warnings: list[Problem], tally: _Tally) -> None:
    for field, actual, what in (("fact_count", n_facts, "facts"), ("edge_count", n_edges, "edges")):
        v = header.get(field)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int):
            warnings.append(Problem(0, f"header.{field}", f"must be a whole number, got {_shown(v)}; not checked"))
        elif v != actual:
            warnings.append(
                Problem(
                    0,
                    f"header.{field}",
                    f"says {v} but the payload holds {actual} {what}: the header and the payload disagree",
                )
            )
    created = header.get("created_at")
    if created is not None and _epoch_iso(created) is None:
        warnings.append(Problem(0, "header.created_at", f"must be epoch seconds, got {_shown(created)}; ignored"))
    sig = header.get("hmac_signature")
    if isinstance(sig, str) and sig:
        tally.dropped["header.hmac_signature (not verified: it needs the deployment's key)"] += 1
        warnings.append(
            Problem(
                0,
                "header.hmac_signature",
                "present but not verified: checking it needs the "
                "deployment's HMAC key, which crp-inspect never asks for",
            )
        )


def _communities(cmap: Any, warnings: list[Problem]) -> dict[str, str]:
    """``payload.community_map`` (fact id -> community number) as community labels."""
    if cmap is None:
        return {}
    if not isinstance(cmap, dict):
        warnings.append(Problem(0, "payload.community_map", f"must be an object, got {_tname(cmap)}; ignored"))
        return {}
    out: dict[str, str] = {}
    for fid, v in cmap.items():
        if isinstance(v, int) and not isinstance(v, bool):
            out[fid] = f"sdk-community-{v}"
        elif isinstance(v, str) and v.strip() and v.isprintable():
            out[fid] = v
        else:
            warnings.append(
                Problem(
                    0,
                    f"payload.community_map[{json.dumps(fid)[:60]}]",
                    f"must be a community number, got {_shown(v)}; ignored",
                    fid,
                )
            )
    return out


def _fact_rec(
    key: str, obj: Any, line: int, st: _State, smap: SourceTypeMap, communities: dict[str, str], tally: _Tally
) -> Any:
    """One SDK fact as a CKF record: its CKF fields built, checked by the CKF fact checks, plus the SDK
    field checks (every problem located by :func:`fact_path`)."""
    if not isinstance(obj, dict):
        rec = _parse_fact(None, line, st, cells=False)
        rec.errors = [Problem(line, fact_path(key), f"a fact must be a JSON object, got {_tname(obj)}", key)]
        return rec
    errors: list[Problem] = []

    def err(field: str, msg: str) -> None:
        errors.append(Problem(line, fact_path(key, field), msg, key))

    fid = obj.get("fact_id", key)
    if fid != key:
        err("fact_id", f"{_shown(fid)} differs from its key in facts; the SDK keys facts by their id")
    ckf: dict[str, Any] = {"fact_id": key}
    body = obj.get("text")
    if body is None:
        err("text", "missing (required)")
    elif (why := _type_error(body, "string")) is not None:
        err("text", why)
    else:
        ckf["content"] = body
    if "content" not in ckf:
        ckf["content"] = "(invalid)"  # the fact is in error already: no second "content missing"
    created = obj.get("created_at")
    if created is None:
        tally.defaulted["created_at missing: age unknown (recency factor 1.0)"] += 1
    elif (iso := _epoch_iso(created)) is None:
        err("created_at", f"must be epoch seconds (a finite number in the calendar's range), got {_shown(created)}")
    else:
        ckf["ingested_at"] = ckf["modified_at"] = iso
    meta: dict[str, Any] = {}
    for name, kind in META_FIELDS:
        if name not in obj or obj[name] is None:
            continue
        why = _type_error(obj[name], kind)
        if why is not None:
            err(name, why)
        else:
            meta[name] = obj[name]
    sup = obj.get("superseded_by")
    if sup is not None:
        if not isinstance(sup, str):
            err("superseded_by", f"must be a fact id (a string) or null, got {_shown(sup)}")
        else:
            meta["superseded_by"] = sup
            ckf["status"] = "STALE"
    if "embedding" in obj:
        tally.dropped["embedding (the SDK's own vectors; the active model embeds the text)"] += 1
    for k in obj:
        if k not in _FACT_KEYS:
            tally.dropped[f"fact field {str(k)[:40]!r} (unknown)"] += 1
    if meta:
        ckf["metadata"] = meta
    cat, win, stage = meta.get("category"), meta.get("source_window_id"), meta.get("extraction_stage")
    stype, rule = smap.source_type_for(cat, win, stage)
    ckf["source_type"] = stype
    if key in communities:
        ckf["community_label"] = communities[key]
    rec = _parse_fact(ckf, line, st, cells=False)
    rec.errors.extend(errors)
    if not rec.errors:
        _tally_fact(ckf, meta, stype, rule, smap, key in communities, tally)
    return rec


def _tally_fact(
    ckf: dict[str, Any],
    meta: dict[str, Any],
    stype: str,
    rule: int | None,
    smap: SourceTypeMap,
    community: bool,
    tally: _Tally,
) -> None:
    tally.mapped["text -> content"] += 1
    if "ingested_at" in ckf:
        tally.mapped["created_at -> ingested_at, modified_at (epoch seconds -> UTC)"] += 1
    if "superseded_by" in meta:
        tally.mapped["superseded_by -> status STALE + metadata.superseded_by"] += 1
    kept = [k for k, _ in META_FIELDS if k in meta]
    if kept:
        tally.mapped["SDK fields -> metadata (" + ", ".join(kept) + ")"] += 1
    if community:
        tally.mapped["community_map -> community_label"] += 1
    if rule is None:
        tally.defaulted[f"source_type -> {stype} (no mapping rule matched)"] += 1
    else:
        tally.mapped[f"source_type -> {stype} (rule {rule}: {smap.rules[rule - 1].describe()})"] += 1


#: CKF field -> SDK field, to locate the CKF fact checks' problems in the snapshot
_SDK_FIELD = {
    "content": "text",
    "ingested_at": "created_at",
    "modified_at": "created_at",
    "status": "superseded_by",
    "fact_id": "fact_id",
    "metadata": None,
}


def _sdk_problem(p: Problem, ids: dict[int, str]) -> Problem:
    """A problem of the CKF checks named by its place in the snapshot."""
    key = ids.get(p.line)
    if key is None or p.field.startswith("payload"):
        return p
    if p.field == "community_label":
        return replace(p, field=f"payload.community_map[{json.dumps(key)[:60]}]")
    if p.field not in _SDK_FIELD:
        return p
    msg = p.message
    if p.field == "modified_at" and msg.startswith("neither ingested_at nor modified_at"):
        msg = "created_at missing: age unknown, recency factor 1.0"
    return replace(p, field=fact_path(key, _SDK_FIELD[p.field]), message=msg)


def _successors(kb: KnowledgeBase, facts: dict[str, Any], warnings: list[Problem]) -> None:
    """A ``superseded_by`` naming no fact of the snapshot, or the fact itself, is said."""
    for f in kb.facts:
        succ = f.metadata.get("superseded_by")
        if not isinstance(succ, str):
            continue
        if succ == f.fact_id:
            warnings.append(Problem(f.line, fact_path(f.fact_id, "superseded_by"), "names the fact itself", f.fact_id))
        elif kb.get(succ) is None:
            what = (
                "an empty id"
                if not succ
                else f"{succ[:60]!r}, which was skipped (lenient)"
                if succ in facts
                else f"{succ[:60]!r}, which is not a fact of the snapshot"
            )
            warnings.append(
                Problem(
                    f.line,
                    fact_path(f.fact_id, "superseded_by"),
                    f"names {what}: status STALE kept, no successor to show",
                    f.fact_id,
                )
            )


def _edges(raw: list[Any], facts: dict[str, Any], tally: _Tally) -> tuple[tuple[GivenEdge, ...], list[Problem]]:
    """The SDK's edges between facts of the snapshot; bad ones are problems (refused, or skipped when
    lenient). Whether both ends were loaded is checked by the caller."""
    out: list[GivenEdge] = []
    problems: list[Problem] = []
    for i, e in enumerate(raw):
        at = f"payload.warm_store.edges[{i}]"
        if not isinstance(e, dict):
            problems.append(Problem(0, at, f"an edge must be a JSON object, got {_tname(e)}"))
            continue
        n = len(problems)
        ends: list[str] = []
        for name in ("source_id", "target_id"):
            v = e.get(name)
            if not isinstance(v, str):
                problems.append(
                    Problem(
                        0, f"{at}.{name}", "missing (required)" if v is None else f"must be a string, got {_shown(v)}"
                    )
                )
            elif v not in facts:
                problems.append(Problem(0, f"{at}.{name}", f"names {v[:60]!r}, which is not a fact of the snapshot"))
            else:
                ends.append(v)
        eid, rel = e.get("id", ""), e.get("relation_type")
        conf, stage = e.get("confidence"), e.get("source_stage")
        for name, v, kind in (
            ("id", eid, "string"),
            ("relation_type", rel, "string"),
            ("confidence", conf, "number"),
            ("source_stage", stage, "integer"),
        ):
            if v is not None and (why := _type_error(v, kind)) is not None:
                problems.append(Problem(0, f"{at}.{name}", why))
        if len(problems) > n:
            continue
        if rel is None:
            tally.defaulted["edge relation_type -> RELATED (the SDK's default)"] += 1
        out.append(
            GivenEdge(
                edge_id=eid or f"edge-{i}",
                source_id=ends[0],
                target_id=ends[1],
                relation_type=rel or "RELATED",
                confidence=None if conf is None else float(conf),
                source_stage=stage,
            )
        )
    return tuple(out), problems


# ---- edges in a CKF export ---------------------------------------------------------------------
#: the metadata key that carries an SDK fact's outgoing edges in a CKF written by ``import-sdk``
EDGES_KEY = "sdk_edges"


def with_edges_in_metadata(kb: KnowledgeBase) -> KnowledgeBase:
    """``kb`` with each given edge also in ``metadata.sdk_edges`` of its source fact (a CKF file has no
    place for edges; :func:`given_edges` reads them back)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for e in kb.edges:
        out.setdefault(e.source_id, []).append(
            {
                "id": e.edge_id,
                "target_id": e.target_id,
                "relation_type": e.relation_type,
                "confidence": e.confidence,
                "source_stage": e.source_stage,
            }
        )
    if not out:
        return kb
    facts = tuple(
        replace(f, metadata={**f.metadata, EDGES_KEY: out[f.fact_id]}) if f.fact_id in out else f for f in kb.facts
    )
    return replace(kb, facts=facts)


def given_edges(kb: KnowledgeBase) -> tuple[GivenEdge, ...]:
    """The producer's edges of ``kb``: ``kb.edges``, else those a CKF export carries in
    ``metadata.sdk_edges`` (entries that are not well-formed, or name a fact not in ``kb``, are ignored)."""
    if kb.edges:
        return kb.edges
    out: list[GivenEdge] = []
    for f in kb.facts:
        items = f.metadata.get(EDGES_KEY)
        if not isinstance(items, list):
            continue
        for i, d in enumerate(items):
            if not isinstance(d, dict):
                continue
            tgt, rel = d.get("target_id"), d.get("relation_type")
            conf, stage = d.get("confidence"), d.get("source_stage")
            if not isinstance(tgt, str) or kb.get(tgt) is None or not isinstance(rel, str):
                continue
            ok_conf = conf is None or _type_error(conf, "number") is None
            ok_stage = stage is None or _type_error(stage, "integer") is None
            eid = d.get("id")
            out.append(
                GivenEdge(
                    edge_id=eid if isinstance(eid, str) and eid else f"{f.fact_id}-edge-{i}",
                    source_id=f.fact_id,
                    target_id=tgt,
                    relation_type=rel,
                    confidence=float(conf) if ok_conf and conf is not None else None,
                    source_stage=stage if ok_stage else None,
                )
            )
    return tuple(out)

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
Each fact, the communities and the edges are mapped by :mod:`crp_core.io.ckf.sdk_facts`.
"""

from __future__ import annotations

import importlib
import json
import os
import re
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from crp_core.errors import CKFError, Problem
from crp_core.io.ckf.assemble import finish_load
from crp_core.io.ckf.facts import LoadState
from crp_core.io.ckf.sdk_facts import (
    FACTS_PATH,
    Tally,
    check_successors,
    communities_of,
    epoch_iso,
    fact_record,
    located_problem,
    parse_edges,
    shown,
    type_error,
)
from crp_core.io.ckf.sdk_map import SourceTypeMap
from crp_core.io.ckf.source import (
    FILE_FIELD,
    byte_limit,
    check_resolves,
    check_size,
    decode,
    json_reason,
    read_ckf_file,
    refuse,
)
from crp_core.io.located import type_name
from crp_core.model import GivenEdge, ImportSummary, KnowledgeBase
from crp_core.support.digest import content_digest

#: the newest ``header.schema_version`` known (the SDK's cold-storage schema)
SNAPSHOT_SCHEMA = 1
#: the ``payload.warm_store.schema_version`` values known (v1: edges without ``source_stage``)
STORE_SCHEMAS = (1, 2)
PRODUCER = "crprotocol SDK snapshot"
FMT = "sdk"
_PAYLOAD_KEYS = frozenset({"warm_store", "event_log", "community_map"})
_STORE_KEYS = frozenset(
    {"schema_version", "facts", "edges", "critical_state", "structural_state", "window_count", "current_window_id"}
)
#: a ``.json`` whose first key is ``header`` or ``payload`` (the SDK writes header first; sorted keys too)
_SNIFF = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"(?:header|payload)"')


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
    p = os.fspath(path)
    check_resolves(p)
    return read_snapshot(read_ckf_file(p, byte_limit(max_bytes)), p, lenient=lenient, source_map=source_map)


def load_sdk_snapshot_bytes(
    data: bytes,
    name: str,
    *,
    lenient: bool = False,
    max_bytes: int | None = None,
    source_map: SourceTypeMap | None = None,
) -> KnowledgeBase:
    """Read an uploaded SDK snapshot. Raises :class:`CKFError`."""
    check_size(name, len(data), byte_limit(max_bytes))
    return read_snapshot(bytes(data), name, lenient=lenient, source_map=source_map)


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
                f"must be a hex string, got {shown(given)}; the payload's integrity is not checked",
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
    if content_digest(text) == want:
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
        fp.append(Problem(0, field, f"must be a whole number, got {shown(value)}"))
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


@dataclass
class _Parts:
    """The parts of a snapshot the reader uses, each checked for its JSON type."""

    header: dict[str, Any]
    header_given: bool
    payload: dict[str, Any]
    store: dict[str, Any]
    version: int
    facts: dict[str, Any]
    raw_edges: list[Any]


def read_snapshot(
    data: bytes, source: str, *, lenient: bool = False, source_map: SourceTypeMap | None = None
) -> KnowledgeBase:
    """Parse and check the bytes of a snapshot (module docstring). Raises :class:`CKFError`."""
    smap = source_map or SourceTypeMap()
    doc, warnings = _document(data, source)
    fp: list[Problem] = []
    parts = _parts(doc, source, fp, warnings)
    tally = Tally()
    integrity, algorithm = (
        _checksum(parts.payload, parts.header.get("checksum"), warnings) if parts.header_given else ("absent", "")
    )
    _header_checks(parts.header, len(parts.facts), len(parts.raw_edges), warnings, tally)
    _tally_dropped_parts(parts, tally)
    communities = communities_of(parts.payload.get("community_map"), warnings)
    st = LoadState(file_problems=fp, warnings=warnings)
    ids: dict[int, str] = {}
    for line, (key, obj) in enumerate(parts.facts.items(), start=1):
        ids[line] = key
        st.recs.append(fact_record(key, obj, line, st, smap, communities, tally))
    edges, edge_problems = parse_edges(parts.raw_edges, parts.facts, tally)
    if not lenient:
        fp.extend(edge_problems)
    try:
        kb = finish_load(st, source=source, fmt=FMT, lenient=lenient, expected_model=None)
    except CKFError as exc:
        raise CKFError(exc.what, [located_problem(p, ids) for p in exc.problems]) from None
    kept = tuple(e for e in edges if kb.get(e.source_id) is not None and kb.get(e.target_id) is not None)
    if len(kept) < len(edges):
        tally.dropped["edges to a fact not loaded (lenient)"] += len(edges) - len(kept)
    if kept:
        tally.mapped["edges -> given edges (relation_type, confidence)"] += len(kept)
    warnings_out: list[Problem] = []
    check_successors(kb, parts.facts, warnings_out)
    if len(kb) < len(parts.facts):
        tally.dropped["facts skipped (lenient: see the skipped problems)"] += len(parts.facts) - len(kb)
    summary = _summary(kb, parts, kept, tally, integrity, algorithm)
    return replace(
        kb,
        edges=kept,
        imported=summary,
        warnings=tuple(located_problem(p, ids) for p in kb.warnings) + tuple(warnings_out),
        skipped=tuple(located_problem(p, ids) for p in kb.skipped) + (tuple(edge_problems) if lenient else ()),
    )


def _document(data: bytes, source: str) -> tuple[dict[str, Any], list[Problem]]:
    """The snapshot's top-level JSON object and the warnings about it (keys given twice, unknown
    top-level keys); refused when it is not UTF-8 JSON or not an object."""
    text, bad = decode(data)
    if bad is not None:
        refuse(source, [bad])
    assert text is not None
    dupes: list[str] = []
    try:
        doc = json.loads(text, object_pairs_hook=partial(_pairs, dupes=dupes))
    except (ValueError, RecursionError) as exc:
        line = exc.lineno if isinstance(exc, json.JSONDecodeError) else 0
        cut = isinstance(exc, json.JSONDecodeError) and exc.pos >= len(text.rstrip()) - 1
        hint = "; the file ends in the middle of the snapshot (cut short?)" if cut else ""
        refuse(source, [Problem(line, "json", f"invalid JSON: {json_reason(exc)}{hint}")])
    warnings: list[Problem] = [
        Problem(0, "json", f"key {k!r} given more than once in an object; the last value is used")
        for k in dict.fromkeys(dupes)
    ]
    if not isinstance(doc, dict):
        refuse(source, [Problem(0, FILE_FIELD, f"an SDK snapshot is a JSON object, got {type_name(doc)}")])
    for k in doc:
        if k not in ("header", "payload"):
            warnings.append(Problem(0, str(k), "unknown top-level key, ignored (expected header, payload)"))
    return doc, warnings


def _object(value: Any, field: str, fp: list[Problem], source: str) -> dict[str, Any]:
    """``value`` when it is a JSON object, else the snapshot is refused (``fp`` and this problem)."""
    if not isinstance(value, dict):
        why = "missing (required)" if value is None else f"must be an object, got {type_name(value)}"
        refuse(source, fp + [Problem(0, field, why)])
    return value


def _parts(doc: dict[str, Any], source: str, fp: list[Problem], warnings: list[Problem]) -> _Parts:
    """The header, payload, warm store, facts and edges of ``doc``, their problems in ``fp``; refused
    when the payload or the warm store is missing, or a schema version is not one this reader knows."""
    header = doc.get("header")
    header_given = isinstance(header, dict)
    if not isinstance(header, dict):
        fp.append(
            Problem(
                0,
                "header",
                "missing: an SDK snapshot starts with a header object (schema_version, checksum, counts)"
                if header is None
                else f"must be an object, got {type_name(header)}",
            )
        )
        header = {}
    payload = _object(doc.get("payload"), "payload", fp, source)
    version = SNAPSHOT_SCHEMA
    if header_given:
        version = _schema(header.get("schema_version"), "header.schema_version", (SNAPSHOT_SCHEMA,), fp, warnings)
    store = _object(payload.get("warm_store"), "payload.warm_store", fp, source)
    _schema(store.get("schema_version"), "payload.warm_store.schema_version", STORE_SCHEMAS, fp, warnings)
    facts = store.get("facts")
    if not isinstance(facts, dict):
        fp.append(
            Problem(
                0,
                FACTS_PATH,
                "missing (required)" if facts is None else f"must be an object of facts by id, got {type_name(facts)}",
            )
        )
        facts = {}
    elif not facts:
        fp.append(Problem(0, FACTS_PATH, "the snapshot holds no facts"))
    raw_edges = store.get("edges", [])
    if not isinstance(raw_edges, list):
        fp.append(Problem(0, "payload.warm_store.edges", f"must be a list of edges, got {type_name(raw_edges)}"))
        raw_edges = []
    if fp and any(p.field.endswith("schema_version") for p in fp):
        refuse(source, fp)  # a newer format: nothing below can be trusted
    return _Parts(header, header_given, payload, store, version, facts, raw_edges)


def _tally_dropped_parts(parts: _Parts, tally: Tally) -> None:
    """The parts of the snapshot that are not facts or edges, counted as dropped."""
    for k in parts.payload:
        if k not in _PAYLOAD_KEYS:
            tally.dropped[f"payload.{k} (unknown)"] += 1
    for k in parts.store:
        if k not in _STORE_KEYS:
            tally.dropped[f"payload.warm_store.{k} (unknown)"] += 1
    events = parts.payload.get("event_log")
    if isinstance(events, list) and events:
        tally.dropped["event_log events (the SDK's audit trail; the facts carry its outcome)"] += len(events)
    for k in ("critical_state", "structural_state"):
        if parts.store.get(k):
            tally.dropped[f"warm_store.{k} (session state, not facts)"] += 1


def _summary(
    kb: KnowledgeBase, parts: _Parts, edges: tuple[GivenEdge, ...], tally: Tally, integrity: str, algorithm: str
) -> ImportSummary:
    """What the import mapped, defaulted and dropped (the KnowledgeBase's ``imported``)."""
    sid = parts.header.get("session_id")
    return ImportSummary(
        producer=PRODUCER,
        schema_version=parts.version,
        facts_in=len(parts.facts),
        facts_loaded=len(kb),
        edges_in=len(parts.raw_edges),
        edges_kept=len(edges),
        superseded=sum(1 for f in kb.facts if f.status == "STALE"),
        integrity=integrity,
        algorithm=algorithm,
        session_id=sid if isinstance(sid, str) else "",
        created_at=epoch_iso(parts.header.get("created_at")) or "",
        mapped=tuple(tally.mapped.items()),
        defaulted=tuple(tally.defaulted.items()),
        dropped=tuple(tally.dropped.items()),
    )


def _header_checks(header: dict[str, Any], n_facts: int, n_edges: int, warnings: list[Problem], tally: Tally) -> None:
    for field, actual, what in (("fact_count", n_facts, "facts"), ("edge_count", n_edges, "edges")):
        v = header.get(field)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int):
            warnings.append(Problem(0, f"header.{field}", f"must be a whole number, got {shown(v)}; not checked"))
        elif v != actual:
            warnings.append(
                Problem(
                    0,
                    f"header.{field}",
                    f"says {v} but the payload holds {actual} {what}: the header and the payload disagree",
                )
            )
    created = header.get("created_at")
    if created is not None and epoch_iso(created) is None:
        warnings.append(Problem(0, "header.created_at", f"must be epoch seconds, got {shown(created)}; ignored"))
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
            ok_conf = conf is None or type_error(conf, "number") is None
            ok_stage = stage is None or type_error(stage, "integer") is None
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

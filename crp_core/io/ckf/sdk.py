"""A crprotocol SDK cold-storage snapshot read as a CKF (docs/decisions/sdk-snapshots.md).

``ContextualKnowledgeFabric.persist`` writes one JSON object ``{"header": {...}, "payload":
{"warm_store": {"facts": {id: {...}}, "edges": [...], ...}, "event_log": [...], "community_map":
{...}}}``. Each SDK fact becomes a CKF fact (SPEC-009 §2): ``text`` -> ``content``, ``created_at``
(epoch seconds) -> ``ingested_at`` and ``modified_at`` (UTC), a set ``superseded_by`` -> status
``STALE`` plus ``metadata.superseded_by``, the other SDK fields -> ``metadata``, ``community_map`` ->
``community_label``, ``source_type`` from a :class:`~crp_core.io.ckf.sdk_map.SourceTypeMap`. The
SDK's edges are kept as :class:`~crp_core.model.GivenEdge` records. Everything else the snapshot
holds (the header, the event log, the session state, unknown keys, each fact's and edge's SDK
object) is kept unchanged on ``KnowledgeBase.sdk_state`` (:class:`~crp_core.model.SdkState`), which
the SDK export writes back (:mod:`crp_core.io.ckf.sdk_write`); what was mapped, kept, defaulted and
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
import math
import os
import re
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

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
    operator_origins,
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
from crp_core.model import (
    SDK_PAYLOAD_KEYS,
    SDK_STORE_KEYS,
    FrozenObject,
    GivenEdge,
    ImportSummary,
    KnowledgeBase,
    SdkState,
    frozen_json,
)
from crp_core.support.digest import content_digest

#: the newest ``header.schema_version`` known (the SDK's cold-storage schema)
SNAPSHOT_SCHEMA = 1
#: the ``payload.warm_store.schema_version`` values known (v1: edges without ``source_stage``)
STORE_SCHEMAS = (1, 2)
PRODUCER = "crprotocol SDK snapshot"
FMT = "sdk"
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


def canonical_payload(payload: Any) -> bytes | None:
    """The text the SDK's checksum is taken of: ``json.dumps(payload, sort_keys=True, default=str)``
    (ASCII: non-ASCII characters escaped), as bytes; None when the payload is nested too deeply to
    serialise."""
    try:
        return json.dumps(payload, sort_keys=True, default=str).encode("ascii")
    except (ValueError, RecursionError):
        return None


#: the algorithms of ``header.checksum`` the SDK writes (BLAKE3 when ``blake3`` is importable where it
#: writes, else SHA-256)
CHECKSUM_ALGORITHMS = ("sha256", "blake3")


def payload_checksum(canonical: bytes, algorithm: str) -> str:
    """The hex digest the SDK writes in ``header.checksum`` for a payload whose canonical text
    (:func:`canonical_payload`) is ``canonical``. ``blake3`` needs the ``blake3`` module (ImportError)."""
    if algorithm == "sha256":
        return content_digest(canonical)
    if algorithm != "blake3":
        raise ValueError(f"unknown checksum algorithm {algorithm!r} (expected one of {', '.join(CHECKSUM_ALGORITHMS)})")
    b3 = importlib.import_module("blake3")
    return str(b3.blake3(canonical).hexdigest())


def _checksum(canonical: bytes | None, given: Any, warnings: list[Problem]) -> tuple[str, str]:
    """(integrity, algorithm) of ``header.checksum`` against the payload's canonical text (module docstring)."""
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
                f"must be a hex string, got {shown(given)}: the SDK never writes that, so the header was "
                "changed or damaged (MISMATCH)",
            )
        )
        return "mismatch", ""
    if canonical is None:
        warnings.append(
            Problem(
                0,
                "header.checksum",
                "the payload cannot be re-serialised (nested too deeply): the checksum cannot be verified",
            )
        )
        return "unverifiable", ""
    want = given.strip().lower()
    if payload_checksum(canonical, "sha256") == want:
        return "ok", "sha256"
    try:
        got = payload_checksum(canonical, "blake3")
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
    if got == want:
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
    canonical = canonical_payload(parts.payload)
    integrity, algorithm = (
        _checksum(canonical, parts.header.get("checksum"), warnings) if parts.header_given else ("absent", "")
    )
    _header_checks(parts.header, len(parts.facts), len(parts.raw_edges), warnings, tally)
    _tally_kept_parts(parts, tally, warnings)
    communities = communities_of(parts.payload.get("community_map"), warnings)
    st = LoadState(file_problems=fp, warnings=warnings)
    ids: dict[int, str] = {}
    for line, (key, obj) in enumerate(parts.facts.items(), start=1):
        ids[line] = key
        st.recs.append(fact_record(key, obj, line, st, smap, communities, tally))
    edges, edge_problems, positions = parse_edges(parts.raw_edges, parts.facts, tally)
    if not lenient:
        fp.extend(edge_problems)
    try:
        kb = finish_load(st, source=source, fmt=FMT, lenient=lenient, expected_model=None)
    except CKFError as exc:
        raise CKFError(exc.what, [located_problem(p, ids) for p in exc.problems]) from None
    kept_at = [i for i, e in enumerate(edges) if kb.get(e.source_id) is not None and kb.get(e.target_id) is not None]
    kept = tuple(edges[i] for i in kept_at)
    if len(kept) < len(edges):
        tally.dropped["edges to a fact not loaded (lenient)"] += len(edges) - len(kept)
    if kept:
        tally.mapped["edges -> given edges (relation_type, confidence)"] += len(kept)
    kb = operator_origins(kb, parts.payload.get("event_log"), tally)
    warnings_out: list[Problem] = []
    check_successors(kb, parts.facts, warnings_out)
    if len(kb) < len(parts.facts):
        tally.dropped["facts skipped (lenient: see the skipped problems)"] += len(parts.facts) - len(kb)
    summary = _summary(kb, parts, kept, tally, integrity, algorithm)
    digest = (
        content_digest(canonical_payload(parts.header) or b"", b"\x00", canonical)
        if canonical is not None
        else content_digest(data)
    )
    state = _sdk_state(parts, kb, tuple(parts.raw_edges[positions[i]] for i in kept_at), digest)
    return replace(
        kb,
        edges=kept,
        imported=summary,
        sdk_state=state,
        warnings=tuple(located_problem(p, ids) for p in kb.warnings) + tuple(warnings_out),
        skipped=tuple(located_problem(p, ids) for p in kb.skipped) + (tuple(edge_problems) if lenient else ()),
    )


def _frozen_fact(obj: dict[str, Any]) -> Any:
    """An SDK fact object kept as given (:func:`frozen_json`); its ``embedding``, when a list of floats,
    as a read-only float64 array (the same numbers, in a fraction of the memory)."""
    emb = obj.get("embedding")
    if isinstance(emb, list) and emb and all(type(x) is float and math.isfinite(x) for x in emb):
        arr = np.array(emb, dtype=np.float64)
        arr.setflags(write=False)
        rest = frozen_json({k: v for k, v in obj.items() if k != "embedding"})
        return FrozenObject((k, arr if k == "embedding" else rest[k]) for k in obj)
    return frozen_json(obj)


def _sdk_state(parts: _Parts, kb: KnowledgeBase, edge_objects: tuple[Any, ...], digest: str) -> SdkState:
    """What the snapshot holds beyond the CKF fields of its loaded facts and edges, kept as given."""
    store = {k: v for k, v in parts.store.items() if k not in ("facts", "edges")}
    payload = {k: (store if k == "warm_store" else v) for k, v in parts.payload.items()}
    return SdkState(
        header=frozen_json(parts.header),
        payload=frozen_json(payload),
        facts=FrozenObject((f.fact_id, _frozen_fact(parts.facts[f.fact_id])) for f in kb.facts),
        edges=tuple(frozen_json(e) for e in edge_objects),
        digest=digest,
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


def _tally_kept_parts(parts: _Parts, tally: Tally, warnings: list[Problem]) -> None:
    """The parts of the snapshot that are not facts or edges: kept as given (``KnowledgeBase.sdk_state``)."""
    for k in parts.payload:
        if k not in SDK_PAYLOAD_KEYS:
            tally.kept[f"payload.{k} (unknown, kept as given)"] += 1
    for k in parts.store:
        if k not in SDK_STORE_KEYS:
            tally.kept[f"payload.warm_store.{k} (unknown, kept as given)"] += 1
    _check_event_log(parts.payload.get("event_log"), tally, warnings)
    for k in ("critical_state", "structural_state"):
        if parts.store.get(k):
            tally.kept[f"warm_store.{k} (session state, kept as given)"] += 1
    if any(parts.store.get(k) is not None for k in ("window_count", "current_window_id")):
        tally.kept["warm_store.window_count, current_window_id (session state, kept as given)"] += 1


def _check_event_log(events: Any, tally: Tally, warnings: list[Problem]) -> None:
    """``payload.event_log`` is a list of event objects (kept as given either way; warnings otherwise)."""
    if isinstance(events, list):
        if events:
            tally.kept["event_log events (the SDK's fact lifecycle log, kept as given)"] += len(events)
        for i, e in enumerate(events):
            if not isinstance(e, dict):
                warnings.append(Problem(0, f"payload.event_log[{i}]", f"an event is a JSON object, got {shown(e)}"))
    elif events is not None:
        warnings.append(Problem(0, "payload.event_log", f"must be a list of events, got {shown(events)}"))


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
        kept=tuple(tally.kept.items()),
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
        tally.kept["header.hmac_signature (not verified: it needs the deployment's key)"] += 1
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

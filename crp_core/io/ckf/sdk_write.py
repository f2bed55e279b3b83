"""A knowledge base written as a crprotocol SDK cold-storage snapshot (docs/decisions/sdk-snapshots.md,
"The SDK export"): the inverse of :mod:`crp_core.io.ckf.sdk`, a file ``ContextualKnowledgeFabric.restore``
loads and whose checksum it accepts.

:func:`sdk_document` builds the snapshot (no I/O); :func:`write_sdk_snapshot` writes it whole or not at
all (:func:`crp_core.support.files.write_atomic`). What is written:

* **facts**: every fact whose status is retrievable (DELETED and QUARANTINED facts are left out: the
  SDK retrieves every fact of its store that is not superseded). A fact read from a snapshot is its
  SDK object as read (``KnowledgeBase.sdk_state``), any other fact is built from its CKF fields
  (:func:`sdk_fact`). ``superseded_by`` is the fact's ``metadata.superseded_by`` (a string) or null;
  when that differs from the object's, ``supersession_confidence`` becomes 1.0 (set) or 0.0 (cleared);
* **edges**: the snapshot's edge objects as read, else the CKF's given edges
  (``metadata.sdk_edges``), without those touching a fact left out (the SDK skips those on load);
* **event log**: as read, then ``events`` (:class:`SdkEvent`) numbered on from the largest
  ``event_id``; **session state**, community map and unknown keys as read (the community map without
  the facts left out; for a CKF not read from a snapshot, from its community labels);
* **header**: the SDK's keys, the counts of what is written, ``created_at`` the time of writing and
  ``checksum`` the hex digest (SHA-256, or BLAKE3 when asked) of
  ``json.dumps(payload, sort_keys=True, default=str)``, exactly as the SDK computes it on load. The
  ``hmac_signature`` read is kept only while the payload is the one it signed (crp-inspect holds no
  key to sign anew).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from crp_core.config import NEVER_RETRIEVED
from crp_core.errors import CKFError, Problem
from crp_core.io.ckf.sdk import SNAPSHOT_SCHEMA, canonical_payload, given_edges, payload_checksum
from crp_core.io.ckf.sdk_facts import META_FIELDS, type_error
from crp_core.io.ckf.source import FILE_FIELD
from crp_core.model import META_SUPERSEDED_BY_ORIGIN, Fact, FrozenObject, KnowledgeBase, SdkState, thawed_json
from crp_core.support.files import write_atomic

#: the warm store schema written for a knowledge base not read from a snapshot (crprotocol 6.2.5's)
STORE_SCHEMA = 2
#: the SDK's header keys, in the order it writes them
HEADER_KEYS = (
    "schema_version",
    "created_at",
    "session_id",
    "fact_count",
    "edge_count",
    "window_count",
    "checksum",
    "hmac_signature",
)
_COMMUNITY_PREFIX = "sdk-community-"
#: metadata keys that travel in an SDK export: the SDK's own fields, the supersession and the edges, and
#: the operators' triage records (the export's events carry those)
_CARRIED_META = frozenset(
    {k for k, _ in META_FIELDS} | {"superseded_by", "sdk_edges", META_SUPERSEDED_BY_ORIGIN, "triage", "triage_history"}
)
#: what a CKF fact not read from a snapshot can hold that an SDK fact has no place for
_LOST_FIELDS: tuple[tuple[str, Callable[[Fact], bool]], ...] = (
    ("source_type (no SDK field: an import maps it again from category / window / stage)", lambda f: True),
    ("importance_weight", lambda f: f.importance_weight is not None),
    ("ttl", lambda f: f.ttl_kind != "default"),
    ("source_id / source_location", lambda f: f.source_id is not None or f.source_location is not None),
    (
        "ingested_at (created_at is the last modification)",
        lambda f: None not in (f.ingested_at, f.modified_at) and f.ingested_at != f.modified_at,
    ),
    ("metadata keys with no SDK field", lambda f: any(k not in _CARRIED_META for k in f.metadata)),
)


def _stale_without_successor(f: Fact) -> bool:
    return f.status == "STALE" and not isinstance(f.metadata.get("superseded_by"), str)


def _lost(keep: Sequence[Fact], state: SdkState | None) -> tuple[tuple[str, int], ...]:
    """(what, facts) the SDK format cannot carry among the facts written."""
    built = [f for f in keep if state is None or f.fact_id not in state.facts]
    out = [(w, n) for w, has in _LOST_FIELDS if (n := sum(1 for f in built if has(f))) > 0]
    if n := sum(1 for f in keep if _stale_without_successor(f)):
        out.append(("status STALE without a successor (the SDK has no such state: written not superseded)", n))
    return tuple(out)


@dataclass(frozen=True)
class SdkEvent:
    """One event appended to the snapshot's event log, in the SDK's ``FactEvent`` shape (its
    ``event_id`` is given when written)."""

    event_type: str  # the SDK's vocabulary: "superseded", "restored", "archived", ...
    fact_id: str
    timestamp: float  # epoch seconds
    payload: Mapping[str, Any] = field(default_factory=FrozenObject)
    window_id: str = ""  # "" for an event outside any session window (as the SDK's edge events)

    def to_dict(self, event_id: int) -> dict[str, Any]:
        return {
            "event_id": event_id,
            "timestamp": self.timestamp,
            "window_id": self.window_id,
            "event_type": self.event_type,
            "fact_id": self.fact_id,
            "payload": thawed_json(self.payload),
        }


@dataclass(frozen=True)
class SdkWritten:
    """What :func:`sdk_document` / :func:`write_sdk_snapshot` wrote."""

    header: Mapping[str, Any]  # the header written (counts, checksum, ...)
    algorithm: str  # of the checksum: "sha256" | "blake3"
    facts: int
    edges: int
    events_added: int
    left_out: tuple[str, ...]  # facts not written (DELETED / QUARANTINED), in CKF order
    edges_left_out: int  # edges touching a fact left out
    from_snapshot: bool  # the knowledge base was read from an SDK snapshot (its objects written back)
    signature_kept: bool  # the snapshot's hmac_signature was written back (the payload is the one it signed)
    lost: tuple[tuple[str, int], ...]  # CKF fields the SDK format has no place for: (what, facts carrying one)
    path: str | None = None


def _epoch(f: Fact) -> float | None:
    t = f.effective_modified_at
    return None if t is None else t.timestamp()


def _meta(f: Fact, key: str, kind: str, default: Any) -> Any:
    v = f.metadata.get(key)
    return thawed_json(v) if v is not None and type_error(v, kind) is None else default


def sdk_fact(f: Fact) -> dict[str, Any]:
    """The SDK fact object of a CKF fact not read from a snapshot: ``text`` its content, ``created_at``
    its last modification (epoch seconds; left out when its age is unknown, and the SDK stamps the load
    time), the SDK fields from ``metadata`` where a CKF written by ``import-sdk`` keeps them, else the
    SDK's defaults, but ``confidence`` 1.0 (a fact of a knowledge base is asserted, not extracted with a
    doubt) and ``has_embedding`` false (vectors of another model are never handed over)."""
    out: dict[str, Any] = {
        "fact_id": f.fact_id,
        "text": f.content,
        "category": _meta(f, "category", "string", ""),
        "confidence": _meta(f, "confidence", "number", 1.0),
        "source_window_id": _meta(f, "source_window_id", "string", ""),
    }
    created = _epoch(f)
    if created is not None:
        out["created_at"] = created
    out.update(
        {
            "extraction_stage": _meta(f, "extraction_stage", "integer", 0),
            "age_in_windows": _meta(f, "age_in_windows", "integer", 0),
            "seen_count": _meta(f, "seen_count", "integer", 0),
            "consumed_by_windows": _meta(f, "consumed_by_windows", "strings", []),
            "graph_edges": _meta(f, "graph_edges", "strings", []),
            "superseded_by": None,
            "supersession_confidence": _meta(f, "supersession_confidence", "number", 0.0),
            "tier": _meta(f, "tier", "integer", 2),
            "has_embedding": False,
        }
    )
    return out


def _fact_object(f: Fact, state: SdkState | None) -> dict[str, Any]:
    """The SDK object written for ``f``: as read (or built), with its ``superseded_by`` from the CKF."""
    raw = state.facts.get(f.fact_id) if state is not None else None
    obj = thawed_json(raw) if isinstance(raw, Mapping) else sdk_fact(f)
    obj["text"] = f.content
    succ = f.metadata.get("superseded_by")
    new = succ if isinstance(succ, str) else None
    if obj.get("superseded_by") != new:
        obj["superseded_by"] = new
        if raw is not None or "supersession_confidence" not in f.metadata:
            obj["supersession_confidence"] = 0.0 if new is None else 1.0
    return obj


def _edge_objects(kb: KnowledgeBase, written: set[str]) -> tuple[list[dict[str, Any]], int]:
    """The edges written (both ends written) and the number left out."""
    state = kb.sdk_state
    if state is not None and len(state.edges) == len(kb.edges) and kb.edges:
        objs = [thawed_json(o) for o in state.edges]
    else:
        objs = [
            {
                "id": e.edge_id,
                "source_id": e.source_id,
                "target_id": e.target_id,
                "relation_type": e.relation_type,
                "confidence": 0.0 if e.confidence is None else e.confidence,
                "source_stage": 0 if e.source_stage is None else e.source_stage,
            }
            for e in given_edges(kb)
        ]
    kept = [o for o in objs if o.get("source_id") in written and o.get("target_id") in written]
    return kept, len(objs) - len(kept)


def _event_log(state: SdkState | None, events: Sequence[SdkEvent], source: str) -> list[Any]:
    """The event log as read, then ``events`` numbered on from the largest ``event_id``."""
    given = state.payload.get("event_log", ()) if state is not None else ()
    if not isinstance(given, tuple):
        raise CKFError(
            f"cannot write {source} as an SDK snapshot",
            [Problem(0, "payload.event_log", "is not a list of events in the snapshot read: nothing can be appended")],
        )
    log = thawed_json(given)
    ids = [e["event_id"] for e in log if isinstance(e, dict) and type_error(e.get("event_id"), "integer") is None]
    start = max(ids, default=0) + 1
    return log + [ev.to_dict(start + i) for i, ev in enumerate(events)]


def _community_map(kb: KnowledgeBase, written: set[str]) -> Any:
    """The community map as read (without the facts left out), else one from the community labels
    (``sdk-community-N`` back to N); None when there is none."""
    state = kb.sdk_state
    if state is not None:
        given = state.community_map
        if not isinstance(given, Mapping):
            return thawed_json(given)
        return {k: thawed_json(v) for k, v in given.items() if k in written or kb.get(k) is None}
    out: dict[str, Any] = {}
    for f in kb.facts:
        label = f.community_label
        if label is None or f.fact_id not in written:
            continue
        num = label[len(_COMMUNITY_PREFIX) :] if label.startswith(_COMMUNITY_PREFIX) else ""
        out[f.fact_id] = int(num) if num.isdigit() else label
    return out or None


def _payload(kb: KnowledgeBase, events: Sequence[SdkEvent]) -> tuple[dict[str, Any], SdkWritten]:
    """The payload and what it holds (the header aside)."""
    state = kb.sdk_state
    keep = [f for f in kb.facts if f.status not in NEVER_RETRIEVED]
    written = {f.fact_id for f in keep}
    edges, edges_out = _edge_objects(kb, written)
    store: dict[str, Any] = {
        "schema_version": state.store_schema_version if state and "schema_version" in state.store else STORE_SCHEMA,
        "facts": {f.fact_id: _fact_object(f, state) for f in keep},
        "edges": edges,
    }
    if state is not None:
        store.update({k: thawed_json(v) for k, v in state.store.items() if k != "schema_version"})
        if "schema_version" not in state.store:
            del store["schema_version"]
    given: Mapping[str, Any] = state.payload if state is not None else {}
    cmap = _community_map(kb, written)
    keys = list(dict.fromkeys(["warm_store", "event_log", *given]))
    if cmap is not None and "community_map" not in keys:
        keys.insert(2, "community_map")
    payload: dict[str, Any] = {}
    for k in keys:
        if k == "warm_store":
            payload[k] = store
        elif k == "event_log":
            payload[k] = _event_log(state, events, kb.source)
        elif k == "community_map":
            payload[k] = cmap
        else:
            payload[k] = thawed_json(given[k])
    info = SdkWritten(
        header=FrozenObject(),
        algorithm="",
        facts=len(keep),
        edges=len(edges),
        events_added=len(events),
        left_out=tuple(f.fact_id for f in kb.facts if f.fact_id not in written),
        edges_left_out=edges_out,
        from_snapshot=state is not None,
        signature_kept=False,
        lost=_lost(keep, state),
    )
    return payload, info


def _window_count(state: SdkState | None) -> Any:
    for v in (state.window_count if state else None, state.header.get("window_count") if state else None):
        if type_error(v, "integer") is None:
            return v
    return 0


def _unchanged(kb: KnowledgeBase, canonical: bytes) -> bool:
    """Is the payload the one the snapshot read carried (its verified checksum, recomputed, matches)?"""
    imp, state = kb.imported, kb.sdk_state
    if state is None or imp is None or imp.integrity != "ok":
        return False
    try:
        again = payload_checksum(canonical, imp.algorithm)
    except ImportError:  # read where blake3 was importable, written where it is not
        return False
    return again == str(state.header.get("checksum", "")).strip().lower()


def sdk_document(
    kb: KnowledgeBase,
    events: Sequence[SdkEvent] = (),
    *,
    algorithm: str = "sha256",
    created_at: float | None = None,
) -> tuple[dict[str, Any], SdkWritten]:
    """``({"header": ..., "payload": ...}, what it holds)`` of ``kb`` as an SDK snapshot with ``events``
    appended to its event log (module docstring); ``created_at`` defaults to now. Raises
    :class:`CKFError` when it cannot be written (an event log that is not a list, a payload nested too
    deeply) and ImportError for ``algorithm="blake3"`` without the ``blake3`` module."""
    when = time.time() if created_at is None else float(created_at)
    if not math.isfinite(when):
        raise ValueError(f"created_at must be a finite time, got {created_at!r}")
    payload, info = _payload(kb, events)
    canonical = canonical_payload(payload)
    if canonical is None:
        raise CKFError(
            f"cannot write {kb.source} as an SDK snapshot",
            [Problem(0, "payload", "nested too deeply to serialise")],
        )
    checksum = payload_checksum(canonical, algorithm)
    state = kb.sdk_state
    given = dict(thawed_json(state.header)) if state is not None else {}
    signed = (
        _unchanged(kb, canonical) and isinstance(given.get("hmac_signature"), str) and bool(given["hmac_signature"])
    )
    header: dict[str, Any] = {
        "schema_version": SNAPSHOT_SCHEMA,
        "created_at": when,
        "session_id": given.get("session_id", "") if isinstance(given.get("session_id", ""), str) else "",
        "fact_count": info.facts,
        "edge_count": info.edges,
        "window_count": _window_count(state),
        "checksum": checksum,
        "hmac_signature": given["hmac_signature"] if signed else "",
    }
    header.update({k: v for k, v in given.items() if k not in HEADER_KEYS})
    done = replace(info, header=FrozenObject(header), algorithm=algorithm, signature_kept=signed)
    return {"header": header, "payload": payload}, done


def write_sdk_snapshot(
    kb: KnowledgeBase,
    path: str | os.PathLike[str],
    events: Sequence[SdkEvent] = (),
    *,
    algorithm: str = "sha256",
    created_at: float | None = None,
) -> SdkWritten:
    """Write :func:`sdk_document` of ``kb`` to ``path`` (a ``.json`` file), as the SDK writes one (ASCII
    JSON, its key order), whole or not at all."""
    out = os.fspath(path)
    if os.path.splitext(out)[1].lower() != ".json":
        raise CKFError(
            f"cannot write {out} as an SDK snapshot", [Problem(0, FILE_FIELD, "an SDK snapshot is a .json file")]
        )
    doc, done = sdk_document(kb, events, algorithm=algorithm, created_at=created_at)
    write_atomic(out, json.dumps(doc, default=str).encode("ascii"))
    return replace(done, path=out)

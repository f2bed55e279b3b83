"""A crprotocol SDK snapshot's facts, communities and edges as CKF records (docs/decisions/sdk-snapshots.md).

Each SDK fact becomes a CKF fact object (SPEC-009 §2) checked by the CKF fact checks
(:func:`crp_core.io.ckf.facts.parse_fact`) plus the SDK's own field checks; every problem is located
by its JSON path in the snapshot (:func:`fact_path`). A :class:`Tally` counts what was mapped,
defaulted and dropped, for the KnowledgeBase's :class:`~crp_core.model.ImportSummary`.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from crp_core.errors import Problem
from crp_core.io.ckf.facts import ErrFn, FactRecord, LoadState, parse_fact
from crp_core.io.ckf.sdk_map import SourceTypeMap
from crp_core.io.located import type_name
from crp_core.model import (
    META_SUPERSEDED_BY,
    META_SUPERSEDED_BY_ORIGIN,
    META_TRIAGE,
    ORIGIN_OPERATOR,
    GivenEdge,
    KnowledgeBase,
)

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
#: the JSON path of the snapshot's facts
FACTS_PATH = "payload.warm_store.facts"
#: the event payload key an event appended by crp-inspect's SDK export carries, with
#: :data:`crp_core.model.ORIGIN_OPERATOR` (the SDK's own events have none): docs/decisions/sdk-snapshots.md
EVENT_ORIGIN = "origin"


def fact_path(fid: str, field: str | None = None) -> str:
    """``payload.warm_store.facts["f-1"].text`` (a long id is cut: the problem's fact_id has it whole)."""
    key = json.dumps(fid)
    if len(key) > 64:
        key = key[:60] + '..."'
    return f"{FACTS_PATH}[{key}]" + (f".{field}" if field else "")


def is_finite_number(v: Any) -> bool:
    """A JSON number a float holds: not a boolean, not NaN or infinite, and an integer within float's range
    (JSON integers have no bound: ``10**400`` is valid JSON and overflows a float)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


def type_error(value: Any, kind: str) -> str | None:
    """Why ``value`` is not of the JSON ``kind``, or None."""
    if kind == "string":
        ok = isinstance(value, str)
    elif kind == "boolean":
        ok = isinstance(value, bool)
    elif kind == "integer":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind == "number":
        ok = is_finite_number(value)
    else:  # a list of strings
        ok = isinstance(value, list) and all(isinstance(x, str) for x in value)
        if not ok:
            return f"must be a list of strings, got {shown(value)}"
    if ok:
        return None
    article = "an" if kind[0] in "aeiou" else "a"
    bound = " (finite, within a float's range)" if kind == "number" else ""
    return f"must be {article} {kind}{bound}, got {shown(value)}"


def shown(v: Any) -> str:
    if isinstance(v, (dict, list)):
        return type_name(v)
    return f"{type_name(v)} {json.dumps(v)[:40]}"


def epoch_iso(v: Any) -> str | None:
    """Epoch seconds as ISO 8601 UTC, None when not a finite number in datetime's range."""
    if not is_finite_number(v):
        return None
    try:
        return datetime.fromtimestamp(v, UTC).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


class Tally:
    """Counts for the summary, in first-seen order."""

    def __init__(self) -> None:
        self.mapped: Counter[str] = Counter()
        self.kept: Counter[str] = Counter()
        self.defaulted: Counter[str] = Counter()
        self.dropped: Counter[str] = Counter()


def communities_of(cmap: Any, warnings: list[Problem]) -> dict[str, str]:
    """``payload.community_map`` (fact id -> community number) as community labels."""
    if cmap is None:
        return {}
    if not isinstance(cmap, dict):
        warnings.append(Problem(0, "payload.community_map", f"must be an object, got {type_name(cmap)}; ignored"))
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
                    f"must be a community number, got {shown(v)}; ignored",
                    fid,
                )
            )
    return out


def fact_record(
    key: str, obj: Any, line: int, st: LoadState, smap: SourceTypeMap, communities: dict[str, str], tally: Tally
) -> FactRecord:
    """One SDK fact as a CKF record: its CKF fields built, checked by the CKF fact checks, plus the SDK
    field checks (every problem located by :func:`fact_path`)."""
    if not isinstance(obj, dict):
        rec = parse_fact(None, line, st, cells=False)
        rec.errors = [Problem(line, fact_path(key), f"a fact must be a JSON object, got {type_name(obj)}", key)]
        return rec
    errors: list[Problem] = []

    def err(field: str, msg: str) -> None:
        errors.append(Problem(line, fact_path(key, field), msg, key))

    ckf, meta = _ckf_fields(key, obj, err, tally)
    cat, win, stage = meta.get("category"), meta.get("source_window_id"), meta.get("extraction_stage")
    stype, rule = smap.source_type_for(cat, win, stage)
    ckf["source_type"] = stype
    if key in communities:
        ckf["community_label"] = communities[key]
    rec = parse_fact(ckf, line, st, cells=False)
    rec.errors.extend(errors)
    if not rec.errors:
        _tally_fact(ckf, meta, stype, rule, smap, key in communities, tally)
    return rec


def _ckf_fields(key: str, obj: dict[str, Any], err: ErrFn, tally: Tally) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(the CKF fact object, its metadata)`` of the SDK fact ``obj`` keyed ``key`` (its source type
    and community aside); an SDK field of the wrong type is said through ``err`` and left out."""
    fid = obj.get("fact_id", key)
    if fid != key:
        err("fact_id", f"{shown(fid)} differs from its key in facts; the SDK keys facts by their id")
    ckf: dict[str, Any] = {"fact_id": key, "content": _text(obj.get("text"), err)}
    created = obj.get("created_at")
    if created is None:
        tally.defaulted["created_at missing: age unknown (recency factor 1.0)"] += 1
    elif (iso := epoch_iso(created)) is None:
        err("created_at", f"must be epoch seconds (a finite number in the calendar's range), got {shown(created)}")
    else:
        ckf["ingested_at"] = ckf["modified_at"] = iso
    meta = _meta_fields(obj, err)
    sup = obj.get("superseded_by")
    if sup is not None and not isinstance(sup, str):
        err("superseded_by", f"must be a fact id (a string) or null, got {shown(sup)}")
    elif sup is not None:
        meta["superseded_by"] = sup
        ckf["status"] = "STALE"
    if "embedding" in obj:
        tally.kept["embedding (the SDK's own vectors: kept for the SDK export, never scored)"] += 1
    for k in obj:
        if k not in _FACT_KEYS:
            tally.kept[f"fact field {str(k)[:40]!r} (unknown, kept as given)"] += 1
    if meta:
        ckf["metadata"] = meta
    return ckf, meta


def _text(body: Any, err: ErrFn) -> str:
    """The SDK fact's ``text`` as the CKF content; a placeholder when it is missing or not a string
    (the fact is in error already: no second "content missing")."""
    if body is None:
        err("text", "missing (required)")
    elif (why := type_error(body, "string")) is not None:
        err("text", why)
    else:
        return str(body)
    return "(invalid)"


def _meta_fields(obj: dict[str, Any], err: ErrFn) -> dict[str, Any]:
    """The :data:`META_FIELDS` of ``obj`` that have their JSON type."""
    meta: dict[str, Any] = {}
    for name, kind in META_FIELDS:
        if name not in obj or obj[name] is None:
            continue
        why = type_error(obj[name], kind)
        if why is not None:
            err(name, why)
        else:
            meta[name] = obj[name]
    return meta


def _tally_fact(
    ckf: dict[str, Any],
    meta: dict[str, Any],
    stype: str,
    rule: int | None,
    smap: SourceTypeMap,
    community: bool,
    tally: Tally,
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


def located_problem(p: Problem, ids: dict[int, str]) -> Problem:
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


def check_successors(kb: KnowledgeBase, facts: dict[str, Any], warnings: list[Problem]) -> None:
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


def operator_origins(kb: KnowledgeBase, events: Any, tally: Tally) -> KnowledgeBase:
    """``kb`` with each supersession an operator made marked so (a re-scan never credits the SDK with
    it): a fact whose ``superseded_by`` a ``superseded`` event of crp-inspect's SDK export names
    (``payload.origin`` = ``"operator"``) and no event of the SDK's own does gets
    ``metadata.superseded_by_origin`` = ``"operator"`` and ``metadata.triage`` = the newest such
    event's ``{operator, decided_at, kind, note}`` (what a cleaned CKF carries)."""
    if not isinstance(events, list):
        return kb
    sdk_made: set[tuple[str, str]] = set()
    operator: dict[tuple[str, str], dict[str, Any]] = {}
    for e in events:
        p = e.get("payload") if isinstance(e, dict) and e.get("event_type") == "superseded" else None
        if isinstance(p, dict) and isinstance(e.get("fact_id"), str) and isinstance(p.get("superseded_by"), str):
            key = (e["fact_id"], p["superseded_by"])
            if p.get(EVENT_ORIGIN) == ORIGIN_OPERATOR:
                operator[key] = p
            else:
                sdk_made.add(key)
    facts = list(kb.facts)
    for i, f in enumerate(facts):
        key = (f.fact_id, f.metadata.get(META_SUPERSEDED_BY))
        p = operator.get(key) if key not in sdk_made else None
        if p is None:
            continue
        record = {
            "operator": _text_or(p.get("operator"), "?"),
            "decided_at": p.get("decided_at") if isinstance(p.get("decided_at"), str) else None,
            "kind": _text_or(p.get("decision"), "override"),
            "note": _text_or(p.get("note"), ""),
        }
        meta = {**f.metadata, META_SUPERSEDED_BY_ORIGIN: ORIGIN_OPERATOR, META_TRIAGE: record}
        facts[i] = replace(f, metadata=meta)
        tally.mapped["superseded_by set by an operator ('superseded' event of origin operator) -> metadata"] += 1
    return replace(kb, facts=tuple(facts))


def _text_or(v: Any, default: str) -> str:
    return v if isinstance(v, str) else default


def parse_edges(
    raw: list[Any], facts: dict[str, Any], tally: Tally
) -> tuple[tuple[GivenEdge, ...], list[Problem], tuple[int, ...]]:
    """The SDK's edges between facts of the snapshot, the problems of the bad ones (refused, or skipped
    when lenient) and the position in ``raw`` of each edge. Whether both ends were loaded is checked by
    the caller."""
    out: list[GivenEdge] = []
    problems: list[Problem] = []
    positions: list[int] = []
    for i, e in enumerate(raw):
        at = f"payload.warm_store.edges[{i}]"
        if not isinstance(e, dict):
            problems.append(Problem(0, at, f"an edge must be a JSON object, got {type_name(e)}"))
            continue
        n = len(problems)
        ends: list[str] = []
        for name in ("source_id", "target_id"):
            v = e.get(name)
            if not isinstance(v, str):
                problems.append(
                    Problem(
                        0, f"{at}.{name}", "missing (required)" if v is None else f"must be a string, got {shown(v)}"
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
            if v is not None and (why := type_error(v, kind)) is not None:
                problems.append(Problem(0, f"{at}.{name}", why))
        if len(problems) > n:
            continue
        if rel is None:
            tally.defaulted["edge relation_type -> RELATED (the SDK's default)"] += 1
        positions.append(i)
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
    return tuple(out), problems, tuple(positions)

"""The JSON shape of a session audit (``crp-inspect session --json``; every key in
docs/reference/sessions.md#the-json-report). Keys are added, never renamed; their order is fixed here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crp_core.io.timeparse import format_timestamp
from crp_core.report import pair_dict, plain

if TYPE_CHECKING:
    from crp_core.analysis.session import SessionReport, WindowVerdict, WritebackFact
    from crp_core.analysis.session_envelope import EnvelopeSide
    from crp_core.io.session import AnchorCheck, AuditTrail, ChainBreak, ChainReport, SdkFinding
    from crp_core.records import ConflictPair

__all__ = ["SESSION_REPORT_VERSION", "session_report_dict", "chain_dict"]

#: the report's shape; raised when a key changes meaning (keys are only ever added)
SESSION_REPORT_VERSION = 1


def _break(b: ChainBreak) -> dict[str, Any]:
    return {
        "line": b.line,
        "sequence": b.sequence,
        "kind": b.kind,
        "message": b.message,
        "stored": b.stored,
        "expected": b.expected,
    }


def chain_dict(c: ChainReport) -> dict[str, Any]:
    """The ``chain`` object."""
    return {
        "verdict": c.verdict,
        "session_id": c.session_id,
        "entries": c.entries,
        "first_sequence": c.first_sequence,
        "last_sequence": c.last_sequence,
        "first_break": _break(c.first_break) if c.first_break is not None else None,
        "breaks": [_break(b) for b in c.breaks],
        "breaks_total": c.breaks_total,
        "gaps": [
            {"line": g.line, "after": g.after, "found": g.found, "kind": g.kind, "missing": g.missing} for g in c.gaps
        ],
        "gaps_total": c.gaps_total,
        "missing_entries": c.missing_entries,
        "foreign": [
            {"line": f.line, "sequence": f.sequence, "session_id": f.session_id, "event_type": f.event_type}
            for f in c.foreign
        ],
        "foreign_total": c.foreign_total,
        "signatures": {"hmac": c.signed, "receipts": c.receipts, "verified": False},
        "reformatted": list(c.reformatted),
        "reformatted_total": c.reformatted_total,
        "closed": c.closed,
        "truncated": c.truncated,
    }


def _anchor(a: AnchorCheck | None) -> dict[str, Any] | None:
    if a is None:
        return None
    return {
        "path": a.path,
        "verdict": a.verdict,
        "message": a.message,
        "entry_count": a.entry_count,
        "root_hash": a.root_hash,
        "anchored_at": a.anchored_at,
        "signed": a.signed,
        "entries_read": a.entries_read,
        "root_read": a.root_read,
    }


def _pair(p: ConflictPair, texts: dict[str, str]) -> dict[str, Any]:
    d = pair_dict(p)
    d["content_a"] = texts.get(p.fact_a, "")
    d["content_b"] = texts.get(p.fact_b, "")
    return d


def _finding(f: SdkFinding) -> dict[str, Any]:
    return {
        "kind": f.kind,
        "event_type": f.event_type,
        "line": f.line,
        "sequence": f.sequence,
        "fact_id": f.fact_id,
        "claim_index": f.claim_index,
        "severity": f.severity,
        "detail": f.detail,
        "values": list(f.values),
    }


def _envelope(e: EnvelopeSide | None) -> dict[str, Any] | None:
    if e is None:
        return None
    return {
        "query": e.query,
        "query_source": e.query_source,
        "envelope": list(e.envelope),
        "tokens_used": e.tokens_used,
        "token_budget": e.token_budget,
        "both": list(e.both),
        "sdk_only": list(e.sdk_only),
        "spec027_only": list(e.spec027_only),
        "facts": [
            {
                "fact_id": f.fact_id,
                "side": f.side,
                "sdk_position": f.sdk_position,
                "spec027_position": f.spec027_position,
                "explain": f.explain,
            }
            for f in e.facts
        ],
    }


def _window(v: WindowVerdict, texts: dict[str, str]) -> dict[str, Any]:
    w = v.window
    return {
        "index": w.index,
        "window_id": w.window_id,
        "line": w.line,
        "sequence": w.sequence,
        "has_envelope": w.has_envelope,
        "query": w.query,
        "task_input_hash": w.task_input_hash,
        "envelope_counts": dict(w.envelope),
        "packed_listed": w.packed_total,
        "packed": [
            {
                "fact_id": p.fact_id,
                "position": p.position,
                "listed": p.listed,
                "relevance": p.relevance,
                "tokens": p.tokens,
                "bookend": p.bookend,
                "compressed": p.compressed,
                "in_kb": p.in_kb,
                "source_type": p.source_type,
                "status": p.status,
                "superseded_by": p.superseded_by,
                "recency_factor": p.recency_factor,
                "recency_state": p.recency_state,
                "recency_rule": p.recency_rule,
                "age_days": p.age_days,
                "ttl_days": p.ttl_days,
                "written_by": p.written_by,
            }
            for p in v.packed
        ],
        "missing": list(v.missing),
        "contradictory_pairs": [_pair(p, texts) for p in v.pairs],
        "superseded": list(v.superseded),
        "expired": list(v.expired),
        "ageing": list(v.ageing),
        "near_duplicates": [
            {"fact_id": d.fact_id, "duplicate_of": d.duplicate_of, "cosine": d.cosine} for d in v.near_duplicates
        ],
        "writeback_packed": list(v.writeback_packed),
        "writeback": list(v.writeback),
        "ours": [
            {"key": o.key, "kind": o.kind, "fact_ids": list(o.fact_ids), "sdk": list(o.sdk_kinds)} for o in v.ours
        ],
        "sdk_findings": [
            {**_finding(c.finding), "fact_ids": list(c.fact_ids), "ours": list(c.ours), "agrees": c.agrees}
            for c in v.findings
        ],
        "spec027": _envelope(v.envelope),
        "spec027_note": v.envelope_note,
    }


def _writeback(wb: WritebackFact, texts: dict[str, str]) -> dict[str, Any]:
    r = wb.restates
    return {
        "fact_id": wb.fact_id,
        "content": wb.content,
        "window_id": wb.window_id,
        "window_index": wb.window_index,
        "confidence": wb.confidence,
        "extraction_stage": wb.extraction_stage,
        "category": wb.category,
        "created_at": format_timestamp(wb.created_at) if wb.created_at is not None else None,
        "found_by": list(wb.found_by),
        "contradicts": [_pair(p, texts) for p in wb.contradicts],
        "restates": (
            {"fact_id": r.duplicate_of, "cosine": r.cosine, "status": wb.restates_status} if r is not None else None
        ),
        "packed_in": list(wb.packed_in),
    }


def _trail(t: AuditTrail) -> dict[str, Any]:
    return {
        "audit": t.path,
        "session_id": t.chain.session_id,
        "model": t.model,
        "protocol_version": t.protocol_version,
        "lines": t.lines,
        "chain": chain_dict(t.chain),
        "anchor": _anchor(t.anchor),
        "transcripts": t.transcripts,
        "event_counts": dict(t.event_counts),
        "unknown_events": [
            {"line": u.line, "sequence": u.sequence, "event_type": u.event_type} for u in t.unknown_events
        ],
        "unknown_total": t.unknown_total,
        "problems": [{"line": p.line, "field": p.field, "message": p.message} for p in t.problems],
        "problems_total": t.problems_total,
    }


def session_report_dict(r: SessionReport, *, kb_path: str = "") -> dict[str, Any]:
    """The whole report, JSON-plain (NaN / inf as null), keys in the documented order."""
    texts = {f.fact_id: f.content for p in r.scan.pairs for f in (r.kb.get(p.fact_a), r.kb.get(p.fact_b)) if f}
    out: dict[str, Any] = {"report_version": SESSION_REPORT_VERSION}
    out.update(_trail(r.trail))
    out["knowledge_base"] = {"path": kb_path, "format": r.kb.fmt, "facts": len(r.kb)}
    out["now"] = format_timestamp(r.now)
    out["now_source"] = r.now_source
    out["windows"] = [_window(v, texts) for v in r.windows]
    out["windows_total"] = r.trail.windows_total
    out["writeback"] = [_writeback(wb, texts) for wb in r.writeback]
    out["merged_extractions"] = [
        {
            "window_index": m.window_index,
            "fact_id": m.fact_id,
            "text_preview": m.text_preview,
            "confidence": m.confidence,
            "same_text_as": list(m.same_text_as),
        }
        for m in r.merged
    ]
    out["messages"] = list(r.messages)
    return plain(out)

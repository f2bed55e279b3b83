"""The audit data of stage 4 (SPEC-027 §2.4): one event per arbitrated pair, its data built from the
:class:`~crp_core.records.ConflictPair` when first read; the authority and value-difference dicts
it holds are the ones the JSON report shows (``crp_core.report.pair_dict``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from crp_core.records import AuditEvent, Authority, ConflictPair, ValueDiff
from crp_core.support.frozen import DeferredData

EVENT_RESOLVED = "CONTRADICTION_RESOLVED"
EVENT_DISMISSED = "CONTRADICTION_DISMISSED"


def authority_dict(a: Authority) -> dict[str, Any]:
    """One fact's authority components (SPEC-027 §2.3; docs/reference/reports.md ``authority``)."""
    return {
        "source_authority": a.source_authority,
        "recency_factor": a.recency_factor,
        "importance_weight": a.importance_weight,
        "authority": a.authority,
        "source_type": a.source_type,
    }


def diff_dict(d: ValueDiff) -> dict[str, Any]:
    """One aligned value difference; ``*_a`` refer to ``fact_a``'s text."""
    return {
        "pattern": d.pattern,
        "tokens_a": list(d.tokens_a),
        "tokens_b": list(d.tokens_b),
        "span_a": list(d.span_a),
        "span_b": list(d.span_b),
    }


def conflict_event_data(
    pair: ConflictPair, *, diffs: bool = True, roles: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The data of a ``CONTRADICTION_RESOLVED`` / ``CONTRADICTION_DISMISSED`` audit event (SPEC-027 §2.4)."""
    winner = pair.kept[0] if (pair.suppressed is not None and pair.kept) else None
    data: dict[str, Any] = {
        "fact_a": pair.fact_a,
        "fact_b": pair.fact_b,
        "similarity": pair.similarity,
        "patterns": list(pair.patterns),
        "authority": {fid: authority_dict(a) for fid, a in pair.authority.items()},
        "winner": winner,
        "suppressed": pair.suppressed,
        "kept": list(pair.kept),
        "tied": pair.tied,
        "margin": pair.margin,
        "decision": pair.decision,
    }
    if pair.conflict.learned:
        data["learned"] = True  # found by the learned comparison where the rules found nothing
    if roles:
        data["roles"] = dict(roles)
    if diffs:
        data["diffs"] = [diff_dict(d) for d in pair.conflict.diffs]
    return data


def conflict_event(pair: ConflictPair, diffs: bool = True, roles: Mapping[str, str] | None = None) -> AuditEvent:
    """The audit event that logs one arbitrated pair (SPEC-027 §2.4)."""
    event = EVENT_DISMISSED if pair.decision == "dismiss" else EVENT_RESOLVED
    return AuditEvent(event, DeferredData(lambda: conflict_event_data(pair, diffs=diffs, roles=roles)))

"""A crprotocol session's windows, gathered from its audit entries as they stream by
(docs/reference/sessions.md#windows).

The SDK records one ``compliance.envelope_context_selected`` per dispatch, before the window has its
id (its ``data.window_id`` is ``"primary"``): the packed facts in order, each with its relevance,
tokens and bookend / compressed / neighbour flags. The entries after it name the window's id
(``transcript_recorded``, ``llm_call_completed``, ``facts_extracted``, the provenance findings), so the
first id named after an envelope is that envelope's window. ``facts_extracted`` lists the facts the
SDK drew from the model's answer (the ones it writes back); ``omission_detected``,
``distortion_detected``, ``fabrication_detected``, ``contradiction_detected``,
``entailment_contradiction``, ``parametric_detected``, ``attribution_uncertain`` and the
hallucination-risk events are the SDK's own findings. A transcript line (``record_type``
``transcript``, appended by ``export_jsonl(include_transcripts=True)``) gives a window's question
(``task_input``) and answer (``output``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "KNOWN_EVENT_TYPES",
    "FINDING_KINDS",
    "MAX_WINDOWS",
    "MAX_PER_WINDOW",
    "PackedEntry",
    "ExtractedEntry",
    "SdkFinding",
    "AuditWindow",
    "WindowCollector",
]

#: every event type crprotocol 6.2.5 records (its compliance event catalogue, and the resume check's
#: own); any other is kept and listed as unknown
KNOWN_EVENT_TYPES: frozenset[str] = frozenset(
    "compliance." + name
    for name in (
        "data_ingested data_processed data_accessed data_exported data_deleted data_classified data_reclassified "
        "consent_granted consent_denied consent_withdrawn pii_detected erasure_requested erasure_completed "
        "retention_expired retention_purged security_threat injection_detected auth_failure rate_limit_hit "
        "rbac_denied oversight_requested oversight_approved oversight_denied oversight_halt session_created "
        "session_closed risk_assessment risk_level_changed envelope_context_selected llm_call_completed "
        "facts_extracted continuation_decided quality_tier_assigned claim_attributed attribution_report "
        "parametric_detected attribution_uncertain distortion_detected omission_detected fabrication_detected "
        "contradiction_detected entailment_contradiction entailment_verified hallucination_risk_high "
        "hallucination_risk_critical risk_assessment_completed provenance_engine_failure provenance_disabled "
        "entailment_model_status repetition_detected completeness_continuation flow_degraded "
        "quality_score_assigned re_dispatch mode_transition activation_stage_changed onboarding_completed "
        "window_hmac_generated chain_integrity_verified chain_integrity_broken fan_in_merged transcript_recorded "
        "incident_captured incident_diagnosed incident_remediated incident_verified quarantine_validated "
        "audit_anchor_mismatch"
    ).split()
)
#: the SDK's own findings about a window's answer: event type -> our kind
FINDING_KINDS: Mapping[str, str] = {
    "compliance.omission_detected": "omission",
    "compliance.distortion_detected": "distortion",
    "compliance.fabrication_detected": "fabrication",
    "compliance.contradiction_detected": "contradiction",
    "compliance.entailment_contradiction": "entailment_contradiction",
    "compliance.parametric_detected": "parametric",
    "compliance.attribution_uncertain": "uncertain",
    "compliance.hallucination_risk_high": "hallucination_risk",
    "compliance.hallucination_risk_critical": "hallucination_risk",
}
#: windows kept in full; later ones are counted (the trail's memory stays bounded)
MAX_WINDOWS = 1000
#: packed facts, extracted facts and findings kept per window; the rest are counted
MAX_PER_WINDOW = 500
ENVELOPE = "compliance.envelope_context_selected"
EXTRACTED = "compliance.facts_extracted"
_QUOTED = re.compile(r"'([^']*)'")


@dataclass(frozen=True)
class PackedEntry:
    """One fact of the SDK's packed envelope, as its audit lists it (a fact can be listed more than once:
    the SDK repeats facts as bookends and reinforcement)."""

    position: int  # 1-based, in the SDK's order
    fact_id: str
    relevance: float | None  # the SDK's relevance_score
    tokens: int | None
    bookend: bool
    compressed: bool
    neighbour: bool


@dataclass(frozen=True)
class ExtractedEntry:
    """A fact the SDK extracted from the window's answer (its first 120 characters as the audit keeps them)."""

    fact_id: str
    confidence: float | None
    extraction_stage: int | None
    text_preview: str
    flagged: bool


@dataclass(frozen=True)
class SdkFinding:
    """One of the SDK's own findings about the window's answer."""

    kind: str  # a value of FINDING_KINDS
    event_type: str
    line: int
    sequence: int
    fact_id: str | None  # the fact it names (omissions, entailment contradictions)
    claim_index: int | None
    severity: str  # as recorded: a label ("CRITICAL") or a number
    detail: str  # what it says in words
    values: tuple[str, ...]  # values it quotes (a distortion's two, a fabricated entity)


@dataclass(frozen=True)
class AuditWindow:
    """One dispatched window of the session."""

    index: int  # 1-based order in the trail
    window_id: str  # the SDK's window id ("" when no entry after the envelope named one)
    line: int  # the line of its envelope entry (of its first entry when it has no envelope)
    sequence: int
    timestamp: float
    has_envelope: bool
    packed: tuple[PackedEntry, ...]
    packed_total: int  # entries of packed_facts (packed keeps the first MAX_PER_WINDOW)
    envelope: Mapping[str, Any]  # the envelope entry's counts: facts_available, facts_included,
    #                              facts_considered, budget_tokens, envelope_tokens, saturation
    task_input_hash: str  # llm_call_completed's (16 hex digits), "" when absent
    query: str | None  # the transcript's task_input, when the trail carries the transcript
    output: str | None  # the transcript's output
    extracted: tuple[ExtractedEntry, ...]
    findings: tuple[SdkFinding, ...]
    dropped: int  # extracted facts and findings beyond MAX_PER_WINDOW, counted only

    @property
    def packed_ids(self) -> tuple[str, ...]:
        """The distinct fact ids packed, in order of first appearance."""
        return tuple(dict.fromkeys(p.fact_id for p in self.packed))


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _packed(items: Any) -> tuple[list[PackedEntry], int]:
    out: list[PackedEntry] = []
    if not isinstance(items, list):
        return out, 0
    for pos, p in enumerate(items[:MAX_PER_WINDOW], start=1):
        if isinstance(p, dict) and isinstance(p.get("fact_id"), str):
            out.append(
                PackedEntry(
                    pos,
                    p["fact_id"],
                    _num(p.get("relevance_score")),
                    _int(p.get("tokens")),
                    p.get("is_bookend") is True,
                    p.get("is_compressed") is True,
                    p.get("is_neighbour") is True,
                )
            )
    return out, len(items)


def _finding(kind: str, event: str, line: int, seq: int, d: Mapping[str, Any]) -> SdkFinding:
    claim = _int(d.get("claim_index"))
    if claim is None:
        claim = _int(d.get("claim_a_index"))
    sev = d.get("severity", d.get("risk_level", ""))
    if kind == "distortion":
        detail = _str(d.get("detail"))
        values = tuple(_QUOTED.findall(detail))
        detail = f"{_str(d.get('distortion_type'))}: {detail}".strip(": ")
    elif kind == "fabrication":
        ent = _str(d.get("fabricated_entity"))
        detail, values = f"{_str(d.get('entity_type'))} {ent!r} in no packed fact".strip(), (ent,) if ent else ()
    elif kind == "contradiction":
        detail, values = f"{_str(d.get('contradiction_type'))}: claims {claim} and {d.get('claim_b_index')}", ()
    elif kind == "entailment_contradiction":
        detail, values = f"contradiction score {d.get('contradiction_score')}", ()
    elif kind == "omission":
        detail, values = f"relevance {d.get('relevance_score')}", ()
    else:
        detail, values = _str(d.get("claim_preview")) or _str(d.get("detail")), ()
    fid = d.get("fact_id")
    return SdkFinding(kind, event, line, seq, fid if isinstance(fid, str) else None, claim, str(sev), detail, values)


@dataclass
class _Builder:
    index: int
    line: int
    sequence: int
    timestamp: float
    has_envelope: bool
    window_id: str = ""
    packed: list[PackedEntry] = field(default_factory=list)
    packed_total: int = 0
    envelope: dict[str, Any] = field(default_factory=dict)
    task_input_hash: str = ""
    query: str | None = None
    output: str | None = None
    extracted: list[ExtractedEntry] = field(default_factory=list)
    findings: list[SdkFinding] = field(default_factory=list)
    dropped: int = 0

    def freeze(self) -> AuditWindow:
        return AuditWindow(
            self.index,
            self.window_id,
            self.line,
            self.sequence,
            self.timestamp,
            self.has_envelope,
            tuple(self.packed),
            self.packed_total,
            dict(self.envelope),
            self.task_input_hash,
            self.query,
            self.output,
            tuple(self.extracted),
            tuple(self.findings),
            self.dropped,
        )


_ENVELOPE_COUNTS = (
    "facts_available",
    "facts_included",
    "facts_considered",
    "budget_tokens",
    "envelope_tokens",
    "saturation",
)


@dataclass
class WindowCollector:
    """Feed it the session's own entries in order (:meth:`entry`) and the transcript lines
    (:meth:`transcript`); :meth:`windows` gives them frozen. At most :data:`MAX_WINDOWS` are kept."""

    built: list[_Builder] = field(default_factory=list)
    by_id: dict[str, _Builder] = field(default_factory=dict)
    pending: _Builder | None = None  # the envelope awaiting its window's id (None: one past MAX_WINDOWS)
    awaiting: bool = False  # an envelope was read and no window id named since
    total: int = 0
    transcripts_unmatched: int = 0

    def _new(self, line: int, seq: int, ts: float, envelope: bool) -> _Builder | None:
        self.total += 1
        if len(self.built) >= MAX_WINDOWS:
            return None
        b = _Builder(self.total, line, seq, ts, envelope)
        self.built.append(b)
        return b

    def entry(self, line: int, entry: Mapping[str, Any]) -> None:
        event, data = entry["event_type"], entry["data"]
        seq, ts = int(entry["sequence"]), float(entry["timestamp"])
        if event == ENVELOPE:
            b = self._new(line, seq, ts, True)
            self.pending, self.awaiting = b, True
            if b is not None:
                b.packed, b.packed_total = _packed(data.get("packed_facts"))
                b.envelope = {k: data[k] for k in _ENVELOPE_COUNTS if _num(data.get(k)) is not None}
            return
        wid = data.get("window_id")
        if not isinstance(wid, str) or wid in ("", "primary"):
            return
        b = self.by_id.get(wid)
        if b is None and wid not in self.by_id:
            if self.awaiting:
                b = self.pending
            elif event in ("compliance.llm_call_completed", EXTRACTED):
                b = self._new(line, seq, ts, False)  # a window whose dispatch recorded no envelope
            else:
                return
            self.pending, self.awaiting = None, False
            if b is not None:
                b.window_id = wid
            self.by_id[wid] = b  # type: ignore[assignment]  # None: a window beyond MAX_WINDOWS
        if b is not None:
            self._attach(b, event, line, seq, data)

    def _attach(self, b: _Builder, event: str, line: int, seq: int, data: Mapping[str, Any]) -> None:
        if event == "compliance.llm_call_completed":
            b.task_input_hash = _str(data.get("task_input_hash"))
        elif event == EXTRACTED and isinstance(data.get("facts"), list):
            for f in data["facts"]:
                if not (isinstance(f, dict) and isinstance(f.get("fact_id"), str)):
                    continue
                if len(b.extracted) >= MAX_PER_WINDOW:
                    b.dropped += 1
                    continue
                b.extracted.append(
                    ExtractedEntry(
                        f["fact_id"],
                        _num(f.get("confidence")),
                        _int(f.get("extraction_stage")),
                        _str(f.get("text_preview")),
                        f.get("flagged") is True,
                    )
                )
        elif event in FINDING_KINDS:
            if len(b.findings) >= MAX_PER_WINDOW:
                b.dropped += 1
            else:
                b.findings.append(_finding(FINDING_KINDS[event], event, line, seq, data))

    def transcript(self, record: Mapping[str, Any]) -> None:
        """A transcript line: the question and answer of the window it names."""
        b = self.by_id.get(_str(record.get("window_id")))
        if b is None:
            self.transcripts_unmatched += 1
            return
        if isinstance(record.get("task_input"), str):
            b.query = record["task_input"]
        if isinstance(record.get("output"), str):
            b.output = record["output"]

    def windows(self) -> tuple[AuditWindow, ...]:
        return tuple(b.freeze() for b in self.built)

"""What a crprotocol session handed its model, judged by SPEC-027 (docs/reference/sessions.md).

:func:`analyse_session` takes a trail read by :func:`crp_core.io.session.read_audit` and the knowledge
base the session ran on (prepared as a :class:`~crp_core.corpus.prepared.Corpus`), and gives a frozen
:class:`SessionReport`:

- per window, the SDK's packed facts in its order and SPEC-027's verdict on that same set, from the
  pipeline's own pieces: the contradictory pairs packed together with their stage-4 arbitration (the
  whole-KB scan, :func:`crp_core.analysis.scan.scan_ckf`), the superseded / STALE facts, the expired
  and ageing facts with their recency factor (:func:`crp_core.factors.recency.compute_recency`), the
  SPEC-003 §6.6 near-duplicates (:func:`crp_core.stages.near_duplicates.connector_near_duplicates`);
  with the window's question, SPEC-027's envelope beside the SDK's (:mod:`.session_envelope`);
- the write-back: the facts the session created from its model's answers, each against the rest of
  the knowledge base (the contradictions it takes part in, the fact it restates);
- the SDK's own findings per window beside ours, and where the two name the same facts;
- the operator decisions that quarantine what the session wrote (:meth:`SessionReport.quarantine_decisions`).

A packed fact id the knowledge base does not hold is a message naming it; the rest is analysed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from crp_core.analysis.session_envelope import EnvelopeSide, spec027_beside
from crp_core.decisions import Decision
from crp_core.factors.recency import recency_state

if TYPE_CHECKING:
    from crp_core.analysis.scan import ConflictScan
    from crp_core.config import CRPConfig
    from crp_core.corpus.embedding import Embedder
    from crp_core.corpus.prepared import Corpus
    from crp_core.factors.recency import RecencyTable
    from crp_core.io.session import AuditTrail, AuditWindow, SdkFinding
    from crp_core.model import KnowledgeBase
    from crp_core.records import ConflictPair

__all__ = [
    "PackedFactVerdict",
    "NearDuplicate",
    "OurFinding",
    "FindingCheck",
    "WindowVerdict",
    "WritebackFact",
    "MergedExtraction",
    "SessionReport",
    "analyse_session",
    "QUARANTINE_STATUS",
    "quarantine_partner",
]

#: the status :meth:`SessionReport.quarantine_decisions` gives what a session wrote (never retrieved, kept)
QUARANTINE_STATUS = "QUARANTINED"


@dataclass(frozen=True)
class PackedFactVerdict:
    """One distinct fact of the SDK's packed envelope, with SPEC-027's reading of it."""

    fact_id: str
    position: int  # its first position in the SDK's list (1-based)
    listed: int  # how many times the SDK's list holds it (bookends and reinforcement repeat facts)
    relevance: float | None  # the SDK's relevance_score at its first position
    tokens: int | None
    bookend: bool  # listed as a bookend at least once
    compressed: bool
    in_kb: bool  # False: the knowledge base given does not hold this id
    content: str
    source_type: str
    status: str
    superseded_by: str | None  # the SDK's superseded_by
    recency_factor: float | None  # SPEC-027 §3.2 at the report's time
    recency_state: str  # "expired", "ageing", "fresh" ("" when not in the knowledge base)
    recency_rule: str
    age_days: float | None
    ttl_days: float | None  # inf: no expiry
    written_by: int | None  # the window of this session that wrote the fact back, when it did


@dataclass(frozen=True)
class NearDuplicate:
    """``fact_id`` is a SPEC-003 §6.6 near-duplicate of ``duplicate_of`` (cosine > dedup_similarity, no
    value conflict)."""

    fact_id: str
    duplicate_of: str
    cosine: float


@dataclass(frozen=True)
class OurFinding:
    """One of SPEC-027's findings on a window, keyed for the comparison with the SDK's."""

    key: str  # "pair:a|b", "superseded:id", "expired:id", "near_duplicate:id", "writeback:id"
    kind: str  # contradictory_pair, superseded, expired, near_duplicate, writeback_contradiction, writeback_restatement
    fact_ids: tuple[str, ...]
    sdk_kinds: tuple[str, ...]  # kinds of the SDK's findings naming one of these facts ((): the SDK is silent)


@dataclass(frozen=True)
class FindingCheck:
    """One of the SDK's findings, with the facts it concerns and ours that name them."""

    finding: SdkFinding
    fact_ids: tuple[str, ...]  # the fact it names, or the window's write-back facts holding the values it quotes
    ours: tuple[str, ...]  # keys of our findings naming one of these facts

    @property
    def agrees(self) -> bool:
        return bool(self.ours)


@dataclass(frozen=True)
class WindowVerdict:
    """One window: what the SDK packed and what SPEC-027 says of it."""

    window: AuditWindow
    packed: tuple[PackedFactVerdict, ...]  # distinct facts, SDK order
    missing: tuple[str, ...]  # packed ids the knowledge base does not hold
    pairs: tuple[ConflictPair, ...]  # contradictory pairs whose two facts were packed, arbitrated
    superseded: tuple[str, ...]  # packed facts whose status is STALE
    expired: tuple[str, ...]  # packed, recency at the floor (age >= TTL, or STALE)
    ageing: tuple[str, ...]  # packed, recency in the decay
    near_duplicates: tuple[NearDuplicate, ...]  # a packed fact near-duplicating one packed before it
    writeback_packed: tuple[str, ...]  # facts an earlier window of this session wrote back, packed here
    writeback: tuple[str, ...]  # facts this window wrote back
    ours: tuple[OurFinding, ...]
    findings: tuple[FindingCheck, ...]  # the SDK's, in trail order
    envelope: EnvelopeSide | None  # SPEC-027's envelope for the window's question
    envelope_note: str  # why there is none, when there is none


@dataclass(frozen=True)
class WritebackFact:
    """A fact the session created from its model's answer, against the rest of the knowledge base."""

    fact_id: str
    content: str
    window_id: str  # its source_window_id ("" when it has none)
    window_index: int | None  # the trail's window that wrote it (None: not a window of the trail)
    confidence: float | None  # the SDK's
    extraction_stage: int | None
    category: str
    created_at: datetime | None
    found_by: tuple[str, ...]  # "source_window_id", "facts_extracted", "absent_before"
    contradicts: tuple[ConflictPair, ...]  # pairs with a fact the session did not write, arbitrated
    restates: NearDuplicate | None  # the closest fact it near-duplicates
    restates_status: str  # that fact's status ("STALE": the answer revived a superseded value)
    packed_in: tuple[int, ...]  # later windows that packed it


@dataclass(frozen=True)
class MergedExtraction:
    """A fact the SDK extracted from an answer and did not keep under its id: the knowledge base holds
    a fact with the same text (the SDK's deduplication kept the older one) or none at all."""

    window_index: int
    fact_id: str
    text_preview: str
    confidence: float | None
    same_text_as: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class SessionReport:
    """Everything :func:`analyse_session` found (docs/reference/sessions.md#the-json-report)."""

    trail: AuditTrail
    kb: KnowledgeBase  # the knowledge base the session was judged against
    now: datetime
    now_source: str  # "--now", "the trail's last entry" or "the wall clock"
    windows: tuple[WindowVerdict, ...]
    writeback: tuple[WritebackFact, ...]
    merged: tuple[MergedExtraction, ...]
    messages: tuple[str, ...]  # one line per packed id the knowledge base does not hold
    scan: ConflictScan

    def quarantine_decisions(
        self,
        operator: str,
        *,
        note: str = "",
        ckf_fingerprint: str | None = None,
        fact_ids: Iterable[str] | None = None,
        **team: Any,
    ) -> tuple[Decision, ...]:
        """The operator decisions that take what the session wrote out of retrieval: one ``mark_status``
        :data:`QUARANTINE_STATUS` per write-back fact (``fact_ids``: only those of them), in write-back
        order, on the pair :func:`quarantine_partner` names; the note is ``note`` and a line saying which
        session and window wrote the fact; their origin is ``session`` and ``team`` carries the rest of who
        decided (``role``, ``os_user``, ``kb_name``: :class:`Decision`'s team fields). Not validated here: the
        store refuses a bad field."""
        wanted = None if fact_ids is None else set(fact_ids)
        return tuple(
            Decision.mark_status(
                wb.fact_id,
                quarantine_partner(wb, self.trail.chain.session_id),
                fact=wb.fact_id,
                status=QUARANTINE_STATUS,
                operator=operator,
                note="\n".join(x for x in (note.strip(), _writeback_line(wb, self.trail.chain.session_id)) if x),
                ckf_fingerprint=ckf_fingerprint,
                **{"origin": "session", **team},
            )
            for wb in self.writeback
            if wanted is None or wb.fact_id in wanted
        )


def quarantine_partner(wb: WritebackFact, session_id: str | None) -> str:
    """The other side of the pair a quarantine of ``wb`` is recorded on (the triage store keeps every
    decision on a pair of ids): the fact it contradicts (its first pair), else the fact it restates,
    else its window, ``window:<source_window_id>`` (``session:<id>`` when it names none)."""
    for p in wb.contradicts:
        return p.fact_b if p.fact_a == wb.fact_id else p.fact_a
    if wb.restates is not None:
        return wb.restates.duplicate_of
    return f"window:{wb.window_id}" if wb.window_id else f"session:{session_id or 'unknown'}"


def _writeback_line(wb: WritebackFact, session_id: str | None) -> str:
    where = f"window {wb.window_index}" if wb.window_index is not None else f"window {wb.window_id or '?'}"
    conf = f", confidence {wb.confidence:.2f}" if wb.confidence is not None else ""
    return f"written back by crprotocol session {session_id or '?'}, {where}{conf} (crp-inspect session)"


# ---- helpers ------------------------------------------------------------------------------------
def _float(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _recency_rows(corpus: Corpus, now: datetime, config: CRPConfig) -> tuple[RecencyTable, dict[int, int]]:
    from crp_core.factors.recency import compute_recency

    idx = np.arange(len(corpus.kb), dtype=np.int64)
    table = compute_recency(corpus.kb, idx, now, config)
    return table, {int(r): i for i, r in enumerate(table.idx.tolist())}


def _near_duplicates(corpus: Corpus, rows: Sequence[int], others: Sequence[int], config: CRPConfig) -> list:
    """(row, closest row of ``others``, cosine) for each of ``rows`` near-duplicating one of ``others``."""
    from crp_core.stages.contradictions.values import conflict_check
    from crp_core.stages.near_duplicates import connector_near_duplicates

    if not rows or not others:
        return []
    cands = np.asarray(rows, dtype=np.int64)
    return connector_near_duplicates(
        corpus,
        np.asarray(others, dtype=np.int64),
        cands,
        np.arange(cands.size),
        config=config,
        values_conflict=conflict_check(config.detector_learned),
    )


def _value_in(value: str, text: str) -> bool:
    return bool(value) and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE) is not None


# ---- write-back ---------------------------------------------------------------------------------
def _writeback_ids(trail: AuditTrail, kb: KnowledgeBase, before: KnowledgeBase | None) -> dict[str, list[str]]:
    """fact id -> how it was found to be the session's, in knowledge-base order."""
    windows = {w.window_id for w in trail.windows if w.window_id}
    extracted = {e.fact_id for w in trail.windows for e in w.extracted}
    before_ids = {f.fact_id for f in before.facts} if before is not None else None
    out: dict[str, list[str]] = {}
    for f in kb.facts:
        how = []
        if str(f.metadata.get("source_window_id", "")) in windows:
            how.append("source_window_id")
        if f.fact_id in extracted:
            how.append("facts_extracted")
        if before_ids is not None and f.fact_id not in before_ids:
            how.append("absent_before")
        if how:
            out[f.fact_id] = how
    return out


def _writer(trail: AuditTrail, fid: str, window_id: str) -> int | None:
    for w in trail.windows:
        if (window_id and w.window_id == window_id) or any(e.fact_id == fid for e in w.extracted):
            return w.index
    return None


def _writeback_facts(
    trail: AuditTrail, corpus: Corpus, config: CRPConfig, scan: ConflictScan, before: KnowledgeBase | None
) -> tuple[WritebackFact, ...]:
    kb = corpus.kb
    found = _writeback_ids(trail, kb, before)
    rows = [kb.index_of(fid) for fid in found]
    others = [r for r in range(len(kb)) if kb.facts[r].fact_id not in found and bool(corpus.retrievable[r])]
    dups = {row: (other, cos) for row, other, cos in _near_duplicates(corpus, rows, others, config)}
    extracted = {e.fact_id: e for w in trail.windows for e in w.extracted}
    out = []
    for fid, how in found.items():
        f = kb.facts[kb.index_of(fid)]
        wid = str(f.metadata.get("source_window_id", ""))
        dup = dups.get(kb.index_of(fid))
        restates = NearDuplicate(fid, kb.facts[dup[0]].fact_id, float(dup[1])) if dup else None
        ex = extracted.get(fid)
        conf = _float(f.metadata.get("confidence"))
        stage = f.metadata.get("extraction_stage")
        index = _writer(trail, fid, wid)
        out.append(
            WritebackFact(
                fact_id=fid,
                content=f.content,
                window_id=wid,
                window_index=index,
                confidence=conf if conf is not None else (ex.confidence if ex else None),
                extraction_stage=stage if isinstance(stage, int) and not isinstance(stage, bool) else None,
                category=str(f.metadata.get("category", "")),
                created_at=f.modified_at,
                found_by=tuple(how),
                contradicts=tuple(
                    p for p in scan.pairs if fid in (p.fact_a, p.fact_b) and not ({p.fact_a, p.fact_b} <= set(found))
                ),
                restates=restates,
                restates_status=kb.facts[dup[0]].status if dup else "",
                packed_in=tuple(
                    w.index for w in trail.windows if fid in w.packed_ids and (index is None or w.index > index)
                ),
            )
        )
    return tuple(out)


def _merged(trail: AuditTrail, kb: KnowledgeBase) -> tuple[MergedExtraction, ...]:
    by_text: dict[str, list[str]] = {}
    for f in kb.facts:
        by_text.setdefault(f.content, []).append(f.fact_id)
    out = []
    for w in trail.windows:
        for e in w.extracted:
            if kb.get(e.fact_id) is None:
                out.append(
                    MergedExtraction(
                        w.index, e.fact_id, e.text_preview, e.confidence, tuple(by_text.get(e.text_preview, ()))
                    )
                )
    return tuple(out)


# ---- a window -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Context:
    corpus: Corpus
    config: CRPConfig
    now: datetime
    scan: ConflictScan
    recency: RecencyTable
    rec_pos: Mapping[int, int]
    writeback: Mapping[str, WritebackFact]
    query: str | None
    embedder: Embedder | None


def _packed_verdicts(w: AuditWindow, ctx: _Context) -> tuple[PackedFactVerdict, ...]:
    kb = ctx.corpus.kb
    first: dict[str, int] = {}
    for i, p in enumerate(w.packed):
        first.setdefault(p.fact_id, i)
    out = []
    for fid, i in first.items():
        p = w.packed[i]
        listed = [q for q in w.packed if q.fact_id == fid]
        f = kb.get(fid)
        k = ctx.rec_pos.get(kb.index_of(fid)) if f is not None else None
        rec = ctx.recency
        wb = ctx.writeback.get(fid)
        sup = f.metadata.get("superseded_by") if f is not None else None
        out.append(
            PackedFactVerdict(
                fact_id=fid,
                position=p.position,
                listed=len(listed),
                relevance=p.relevance,
                tokens=p.tokens,
                bookend=any(q.bookend for q in listed),
                compressed=any(q.compressed for q in listed),
                in_kb=f is not None,
                content=f.content if f is not None else "",
                source_type=f.source_type if f is not None else "",
                status=f.status if f is not None else "",
                superseded_by=sup if isinstance(sup, str) else None,
                recency_factor=float(rec.factor[k]) if k is not None else None,
                recency_state=recency_state(rec.rule[k]) if k is not None else "",
                recency_rule=rec.rule[k] if k is not None else "",
                age_days=None if k is None or math.isnan(rec.age_days[k]) else float(rec.age_days[k]),
                ttl_days=float(rec.ttl_days[k]) if k is not None else None,
                written_by=wb.window_index if wb is not None else None,
            )
        )
    return tuple(out)


def _ours(
    pairs: Sequence[ConflictPair],
    packed: Sequence[PackedFactVerdict],
    dups: Sequence[NearDuplicate],
    written: Sequence[WritebackFact],
) -> list[tuple[str, str, tuple[str, ...]]]:
    ours: list[tuple[str, str, tuple[str, ...]]] = [
        (f"pair:{p.fact_a}|{p.fact_b}", "contradictory_pair", (p.fact_a, p.fact_b)) for p in pairs
    ]
    ours += [(f"superseded:{v.fact_id}", "superseded", (v.fact_id,)) for v in packed if v.status == "STALE"]
    ours += [(f"expired:{v.fact_id}", "expired", (v.fact_id,)) for v in packed if v.recency_state == "expired"]
    ours += [(f"near_duplicate:{d.fact_id}", "near_duplicate", (d.fact_id, d.duplicate_of)) for d in dups]
    for wb in written:
        if wb.contradicts:
            others = tuple(x for p in wb.contradicts for x in (p.fact_a, p.fact_b) if x != wb.fact_id)
            ours.append((f"writeback:{wb.fact_id}", "writeback_contradiction", (wb.fact_id, *others)))
        elif wb.restates is not None:
            ours.append((f"writeback:{wb.fact_id}", "writeback_restatement", (wb.fact_id, wb.restates.duplicate_of)))
    return ours


def _finding_facts(f: SdkFinding, written: Sequence[WritebackFact]) -> tuple[str, ...]:
    if f.fact_id:
        return (f.fact_id,)
    hits = [wb for wb in written if any(_value_in(v, wb.content) for v in f.values)]
    ids = [wb.fact_id for wb in hits]
    ids += [x for wb in hits for p in wb.contradicts for x in (p.fact_a, p.fact_b) if x != wb.fact_id]
    return tuple(dict.fromkeys(ids))


def _compare(
    w: AuditWindow, ours: list[tuple[str, str, tuple[str, ...]]], written: Sequence[WritebackFact]
) -> tuple[tuple[OurFinding, ...], tuple[FindingCheck, ...]]:
    checks = []
    for f in w.findings:
        ids = set(_finding_facts(f, written))
        checks.append(
            FindingCheck(f, tuple(_finding_facts(f, written)), tuple(k for k, _, fs in ours if ids & set(fs)))
        )
    mine = tuple(
        OurFinding(
            key,
            kind,
            fs,
            tuple(dict.fromkeys(c.finding.kind for c in checks if set(c.fact_ids) & set(fs))),
        )
        for key, kind, fs in ours
    )
    return mine, tuple(checks)


def _envelope(w: AuditWindow, ctx: _Context, packed_in_kb: Sequence[str]) -> tuple[EnvelopeSide | None, str]:
    from crp_core.analysis.known import known_conflicts

    if w.query is not None:
        query, source = w.query, "transcript"
    elif ctx.query is not None:
        query, source = ctx.query, "--query"
    else:
        return None, "no question: the trail carries no transcript for this window and no --query was given"
    if not query.strip():
        return None, "the question is empty"
    # the knowledge base as the window saw it: what this window and later ones wrote back did not exist yet
    later = {
        fid: "DELETED" for fid, wb in ctx.writeback.items() if wb.window_index is None or wb.window_index >= w.index
    }
    corpus = ctx.corpus.with_statuses(later) if later else ctx.corpus
    side = spec027_beside(
        corpus,
        packed_in_kb,
        query,
        source,
        ctx.config,
        ctx.now,
        embedder=ctx.embedder,
        known_conflicts=known_conflicts(ctx.scan, None),
    )
    return side, ""


def _window(w: AuditWindow, ctx: _Context) -> WindowVerdict:
    kb = ctx.corpus.kb
    packed = _packed_verdicts(w, ctx)
    in_kb = [v.fact_id for v in packed if v.in_kb]
    packed_set = set(in_kb)
    pairs = tuple(p for p in ctx.scan.pairs if p.fact_a in packed_set and p.fact_b in packed_set)
    dups: list[NearDuplicate] = []
    rows = [kb.index_of(f) for f in in_kb]
    for i in range(1, len(rows)):
        for row, other, cos in _near_duplicates(ctx.corpus, rows[i : i + 1], rows[:i], ctx.config):
            dups.append(NearDuplicate(kb.facts[row].fact_id, kb.facts[other].fact_id, float(cos)))
    written = [wb for wb in ctx.writeback.values() if wb.window_index == w.index]
    ours, checks = _compare(w, _ours(pairs, packed, dups, written), written)
    envelope, note = _envelope(w, ctx, in_kb)
    return WindowVerdict(
        window=w,
        packed=packed,
        missing=tuple(v.fact_id for v in packed if not v.in_kb),
        pairs=pairs,
        superseded=tuple(v.fact_id for v in packed if v.status == "STALE"),
        expired=tuple(v.fact_id for v in packed if v.recency_state == "expired"),
        ageing=tuple(v.fact_id for v in packed if v.recency_state == "ageing"),
        near_duplicates=tuple(dups),
        writeback_packed=tuple(v.fact_id for v in packed if v.written_by is not None and v.written_by < w.index),
        writeback=tuple(wb.fact_id for wb in written),
        ours=ours,
        findings=checks,
        envelope=envelope,
        envelope_note=note,
    )


def _report_time(trail: AuditTrail, now: datetime | None) -> tuple[datetime, str]:
    if now is not None:
        return now, "--now"
    ts = trail.last_timestamp
    if ts is not None:
        try:
            return datetime.fromtimestamp(ts, UTC), "the trail's last entry"
        except (OverflowError, OSError, ValueError):
            pass
    return datetime.now(UTC), "the wall clock"


def analyse_session(
    trail: AuditTrail,
    corpus: Corpus,
    config: CRPConfig,
    *,
    now: datetime | None = None,
    query: str | None = None,
    before: KnowledgeBase | None = None,
    embedder: Embedder | None = None,
) -> SessionReport:
    """Judge the session's windows and write-back by SPEC-027 (see the module docstring).

    ``now``: the time recency is computed at (default: the trail's last entry, when the session closed);
    ``query``: the question of the windows whose trail carries no transcript; ``before``: the knowledge
    base the session started from (its ids absent from ``corpus`` mark the session's facts too);
    ``embedder``: for the questions (default: the corpus's model).
    """
    from crp_core.analysis.scan import scan_ckf

    when, source = _report_time(trail, now)
    scan = scan_ckf(corpus, config, when)
    recency, rec_pos = _recency_rows(corpus, when, config)
    writeback = _writeback_facts(trail, corpus, config, scan, before)
    ctx = _Context(corpus, config, when, scan, recency, rec_pos, {wb.fact_id: wb for wb in writeback}, query, embedder)
    windows = tuple(_window(w, ctx) for w in trail.windows)
    messages = tuple(
        f"window {v.window.index} (line {v.window.line}): packed fact {fid!r} is not in the knowledge base given; "
        "the rest of the window is analysed"
        for v in windows
        for fid in v.missing
    )
    return SessionReport(
        trail=trail,
        kb=corpus.kb,
        now=when,
        now_source=source,
        windows=windows,
        writeback=writeback,
        merged=_merged(trail, corpus.kb),
        messages=messages,
        scan=scan,
    )

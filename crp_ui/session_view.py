"""The Session page's tables and sentences for the windows and the write-back, read off what
:func:`crp_core.analyse_session` found (:class:`crp_core.SessionReport`; no Streamlit; the chain's
are :mod:`crp_ui.session_chain`). Nothing is recomputed:
every number is a field of those records (docs/reference/sessions.md). A window or a write-back fact
is named by its position in the report (its record types are not public names of crp_core)."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from crp_core import ConflictPair, SessionReport


def _num(v: float | None) -> float | None:
    """A finite number, else None (an empty cell)."""
    return None if v is None or not math.isfinite(v) else float(v)


# ---- a window ----------------------------------------------------------------------------------
def window_label(report: SessionReport, i: int) -> str:
    v = report.windows[i]
    w = v.window
    wid = w.window_id[:8] + "…" if len(w.window_id) > 8 else w.window_id or "(no id)"
    return f"window {w.index} · {wid} · {len(v.packed)} facts packed · {len(v.pairs)} contradictory pair(s)"


def envelope_caption(report: SessionReport, i: int) -> str:
    """The window's id, where its envelope is in the trail, and the SDK's own counts."""
    w = report.windows[i].window
    counts = ", ".join(f"{k} {v}" for k, v in w.envelope.items())
    head = f"Window id {w.window_id or '(none)'} · envelope at line {w.line} (sequence {w.sequence})"
    if not w.has_envelope:
        return head + " · the dispatch recorded no envelope"
    return f"{head} · {w.packed_total} entries listed · {counts}"


PACKED_COLUMNS = [
    "position",
    "fact_id",
    "content",
    "relevance",
    "tokens",
    "bookend",
    "compressed",
    "listed",
    "recency",
    "recency_factor",
    "age_days",
    "ttl_days",
    "status",
    "source_type",
    "written_by",
]


def packed_frame(report: SessionReport, i: int) -> pd.DataFrame:
    """The SDK's packed facts in its order (each distinct fact once, at its first position) with
    SPEC-027's reading of each."""
    rows = [
        {
            "position": p.position,
            "fact_id": p.fact_id,
            "content": p.content if p.in_kb else "(not in the knowledge base given)",
            "relevance": _num(p.relevance),
            "tokens": p.tokens,
            "listed": p.listed,
            "bookend": p.bookend,
            "compressed": p.compressed,
            "source_type": p.source_type,
            "status": p.status,
            "recency_factor": _num(p.recency_factor),
            "recency": p.recency_state,
            "age_days": _num(p.age_days),
            "ttl_days": _num(p.ttl_days),
            "written_by": f"window {p.written_by}" if p.written_by is not None else "",
        }
        for p in report.windows[i].packed
    ]
    return pd.DataFrame(rows, columns=PACKED_COLUMNS)


def flagged_frame(report: SessionReport, i: int) -> pd.DataFrame:
    """The packed facts SPEC-027 would not hand over as they are: STALE (superseded), expired (recency
    at the floor), ageing (in the decay)."""
    v = report.windows[i]
    why = {fid: "superseded (STALE)" for fid in v.superseded}
    for fid in v.expired:
        why.setdefault(fid, "expired")
    for fid in v.ageing:
        why.setdefault(fid, "ageing")
    rows = [
        {
            "fact_id": p.fact_id,
            "state": why[p.fact_id],
            "recency_factor": _num(p.recency_factor),
            "age_days": _num(p.age_days),
            "ttl_days": _num(p.ttl_days),
            "superseded_by": p.superseded_by or "",
            "content": p.content,
        }
        for p in v.packed
        if p.fact_id in why
    ]
    return pd.DataFrame(
        rows, columns=["fact_id", "state", "recency_factor", "age_days", "ttl_days", "superseded_by", "content"]
    )


def near_duplicates_frame(report: SessionReport, i: int) -> pd.DataFrame:
    kb = report.kb
    rows = []
    for d in report.windows[i].near_duplicates:
        a, b = kb.get(d.fact_id), kb.get(d.duplicate_of)
        rows.append(
            {
                "fact_id": d.fact_id,
                "duplicate_of": d.duplicate_of,
                "cosine": d.cosine,
                "content": a.content if a else "",
                "content of the other": b.content if b else "",
            }
        )
    return pd.DataFrame(rows, columns=["fact_id", "duplicate_of", "cosine", "content", "content of the other"])


def pair_heading(pair: ConflictPair) -> str:
    """``a ↔ b · NEGATION_FLIP · SPEC-027 keeps a (authority 0.640 vs 0.135)`` (plain text)."""
    pats = pair.patterns_text("+")
    if pair.tied:
        verdict = f"a tie (authority {pair.authority[pair.fact_a].authority:.3f} each)"
    elif pair.decision == "dismiss" or not pair.kept:
        verdict = "both kept"
    else:
        win = pair.kept[0]
        lose = pair.fact_b if win == pair.fact_a else pair.fact_a
        auth = pair.authority
        verdict = f"SPEC-027 keeps {win} (authority {auth[win].authority:.3f} vs {auth[lose].authority:.3f})"
    return f"{pair.fact_a} ↔ {pair.fact_b} · {pats} · cosine {pair.similarity:.3f} · {verdict}"


def sdk_findings_frame(report: SessionReport, i: int) -> pd.DataFrame:
    """The SDK's own findings on the window's answer, each with the facts it concerns and ours naming them."""
    rows = [
        {
            "line": c.finding.line,
            "kind": c.finding.kind,
            "severity": c.finding.severity,
            "facts": ", ".join(c.fact_ids),
            "detail": c.finding.detail,
            "agrees": c.agrees,
            "ours naming them": ", ".join(c.ours),
        }
        for c in report.windows[i].findings
    ]
    return pd.DataFrame(rows, columns=["line", "kind", "severity", "facts", "detail", "agrees", "ours naming them"])


def ours_frame(report: SessionReport, i: int) -> pd.DataFrame:
    """SPEC-027's findings on the window, with the kinds of the SDK's findings naming their facts."""
    rows = [
        {
            "kind": o.kind,
            "facts": ", ".join(o.fact_ids),
            "the SDK": ", ".join(o.sdk_kinds) if o.sdk_kinds else "silent",
        }
        for o in report.windows[i].ours
    ]
    return pd.DataFrame(rows, columns=["kind", "facts", "the SDK"])


def agreement_text(report: SessionReport, i: int) -> str:
    v = report.windows[i]
    agree = sum(1 for c in v.findings if c.agrees)
    silent = sum(1 for o in v.ours if not o.sdk_kinds)
    return (
        f"{agree} of the SDK's {len(v.findings)} finding(s) name a fact one of ours names; "
        f"the SDK was silent on {silent} of our {len(v.ours)}."
    )


def spec027_frame(report: SessionReport, i: int) -> pd.DataFrame:
    """Every fact of either envelope and where each put it (empty positions: not packed there), with the
    sentence that says why (:func:`spec027_reasons` lists the ones packed by one side only)."""
    e = report.windows[i].envelope
    label = {"both": "both", "sdk_only": "SDK only", "spec027_only": "SPEC-027 only"}
    facts = e.facts if e is not None else ()
    return pd.DataFrame(
        {
            "fact_id": [f.fact_id for f in facts],
            "packed by": [label[f.side] for f in facts],
            "SDK position": pd.array([f.sdk_position for f in facts], dtype="Int64"),
            "SPEC-027 position": pd.array([f.spec027_position for f in facts], dtype="Int64"),
            "why": [f.explain for f in facts],
        }
    )


def spec027_reasons(report: SessionReport, i: int) -> list[str]:
    """The explain-diff: one sentence per fact one envelope holds and the other does not (SPEC-027's own
    reason first for the SDK's, then SPEC-027's extras), as the run's records give it."""
    e = report.windows[i].envelope
    return [f.explain for f in (e.facts if e is not None else ()) if f.side != "both"]


# ---- the write-back --------------------------------------------------------------------------------
def _other(pair: ConflictPair, fact_id: str) -> str:
    return pair.fact_b if pair.fact_a == fact_id else pair.fact_a


def _contradicts(pair: ConflictPair, fact_id: str) -> str:
    """``kb-tel-off (SPEC-027 keeps kb-tel-off: authority 0.640 vs 0.350)``: the other fact and the arbitration."""
    other = _other(pair, fact_id)
    if pair.tied or not pair.kept:
        return f"{other} (a tie)"
    win = pair.kept[0]
    lose = fact_id if win == other else other
    auth = pair.authority
    return f"{other} (SPEC-027 keeps {win}: authority {auth[win].authority:.3f} vs {auth[lose].authority:.3f})"


WRITEBACK_COLUMNS = [
    "content",
    "status in force",
    "contradicts",
    "restates",
    "window",
    "confidence",
    "packed again in",
    "fact_id",
    "category",
    "found by",
]


def writeback_frame(report: SessionReport, statuses: Mapping[str, str]) -> pd.DataFrame:
    """One row per fact the session wrote: who wrote it, what it contradicts or restates, where it was
    packed again, and its status (``statuses``: the operators' marks in force, over the CKF's own)."""
    rows = []
    for wb in report.writeback:
        f = report.kb.get(wb.fact_id)
        r = wb.restates
        rows.append(
            {
                "fact_id": wb.fact_id,
                "content": wb.content,
                "window": f"window {wb.window_index}" if wb.window_index is not None else wb.window_id,
                "confidence": _num(wb.confidence),
                "contradicts": ", ".join(_other(p, wb.fact_id) for p in wb.contradicts),
                "restates": f"{r.duplicate_of} ({wb.restates_status})" if r else "",
                "packed again in": ", ".join(f"window {n}" for n in wb.packed_in),
                "status in force": statuses.get(wb.fact_id, f.status if f is not None else ""),
                "category": wb.category,
                "found by": ", ".join(wb.found_by),
            }
        )
    return pd.DataFrame(rows, columns=WRITEBACK_COLUMNS)


def writeback_case(report: SessionReport, j: int) -> list[tuple[str, str]]:
    """The ``j``-th write-back fact's case as (label, plain text) lines: who wrote it and what it says,
    each knowledge-base fact it contradicts with SPEC-027's arbitration, the fact it restates, where it
    was packed again."""
    wb = report.writeback[j]
    where = f"window {wb.window_index}" if wb.window_index is not None else f"window {wb.window_id or '?'}"
    conf = f", SDK confidence {wb.confidence:.2f}" if wb.confidence is not None else ""
    lines = [(f"{where} wrote", f"{wb.fact_id}{conf}: {wb.content}")]
    for p in wb.contradicts:
        other = _other(p, wb.fact_id)
        f = report.kb.get(other)
        what = f"{other} ({f.source_type}, {f.status}): {f.content}" if f is not None else other
        lines.append(("contradicts", what))
        lines.append(("arbitration", f"{p.patterns_text('+')}: {_contradicts(p, wb.fact_id)}"))
    if wb.restates is not None:
        r = wb.restates
        revived = ": a superseded value revived" if wb.restates_status == "STALE" else ""
        lines.append(("restates", f"{r.duplicate_of} ({wb.restates_status}, cosine {r.cosine:.3f}){revived}"))
    if wb.packed_in:
        lines.append(("packed again in", ", ".join(f"window {n}" for n in wb.packed_in)))
    return lines


def merged_frame(report: SessionReport) -> pd.DataFrame:
    """Facts the SDK extracted and did not keep under their own id (merged into a fact of the same text)."""
    rows = [
        {
            "window": f"window {m.window_index}",
            "fact_id": m.fact_id,
            "text": m.text_preview,
            "confidence": _num(m.confidence),
            "same text as": ", ".join(m.same_text_as) or "(no fact)",
        }
        for m in report.merged
    ]
    return pd.DataFrame(rows, columns=["window", "fact_id", "text", "confidence", "same text as"])


def writeback_summary(report: SessionReport) -> str:
    wb = report.writeback
    bad = sum(1 for w in wb if w.contradicts)
    same = sum(1 for w in wb if w.restates is not None)
    again = sum(1 for w in wb if w.packed_in)
    return (
        f"{len(wb)} fact(s) written from the model's answers · contradicting the knowledge base: {bad} · "
        f"restating one of its facts: {same} · packed again in a later window: {again}"
    )


def writeback_mismatch(report: SessionReport) -> str | None:
    """A warning when facts of the knowledge base name, as the window that wrote them, a window this
    trail does not record (the closing snapshot of another session, or a trail cut short), else None."""
    strays = [wb for wb in report.writeback if wb.window_index is None and wb.window_id]
    if not strays:
        return None
    windows = sorted({wb.window_id for wb in strays})
    return (
        f"{len(strays)} fact(s) were written by window(s) this trail does not record ({', '.join(windows[:3])}"
        f"{', ...' if len(windows) > 3 else ''}): the knowledge base is the closing snapshot of another session, "
        "or the trail lacks those windows."
    )


def kb_mismatch(report: SessionReport) -> str | None:
    """A warning when the knowledge base holds none of the facts the session packed (it is not the one
    the session ran on), else None."""
    packed = {p.fact_id: p.in_kb for v in report.windows for p in v.packed}
    if packed and not any(packed.values()):
        return (
            f"The knowledge base given ({len(report.kb):,} facts) holds none of the {len(packed):,} facts the session "
            "packed: it is not the one this session ran on. Load that knowledge base in the sidebar, or upload the "
            "session's closing snapshot."
        )
    return None

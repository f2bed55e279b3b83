"""The Session page's chain verdict: a crprotocol audit trail's hash chain as :func:`crp_core.read_audit`
re-checked it (docs/reference/sessions.md#the-chain): intact or broken, the entries checked, the first
break and what differs there, sequence gaps, another session's entries, truncation, the anchor, the
signatures counted and never verified. The sentences and tables are pure functions of the
:class:`crp_core.AuditTrail`; :func:`chain_block` draws them."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from crp_core import AuditTrail

from . import glossary, render

#: the chain block's widget keys start with this
K = "crp.page.session.chain."

#: the chain break kinds in words (docs/reference/sessions.md#the-chain)
BREAK_KINDS = {
    "sequence": "sequence gap (entries deleted, cut or reordered)",
    "content": "content changed (does not hash to its entry_hash)",
    "link": "link broken (previous_hash is not the entry before's)",
    "unreadable": "unreadable line",
}


def _short(h: str) -> str:
    return h[:16] + "…" if len(h) > 16 else h


# ---- the chain ---------------------------------------------------------------------------------
def chain_headline(trail: AuditTrail) -> tuple[str, str]:
    """(tone, sentence): ``success`` for an intact chain, ``error`` for a broken one, ``warning`` when
    the trail holds no entry at all."""
    c = trail.chain
    if c.verdict == "empty":
        return "warning", f"No audit entry could be read in {trail.lines:,} line(s): the chain is empty."
    seqs = f" (sequences {c.first_sequence}–{c.last_sequence})" if c.entries else ""
    if c.verdict == "intact":
        return "success", f"Chain intact: {c.entries:,} entries checked{seqs}, every hash and link recomputed."
    first = c.first_break
    where = f" First break: {first.message}" if first is not None else ""
    return "error", f"Chain broken: {c.breaks_total:,} break(s) in {c.entries:,} entries checked{seqs}.{where}"


def chain_numbers(trail: AuditTrail) -> list[tuple[str, str]]:
    """(label, value) pairs of the chain's counts, for a row of metrics."""
    c = trail.chain
    return [
        ("entries checked", f"{c.entries:,}"),
        ("lines read", f"{trail.lines:,}"),
        ("breaks", f"{c.breaks_total:,}"),
        ("entries missing", f"{c.missing_entries:,}"),
        ("foreign entries", f"{c.foreign_total:,}"),
        ("closed", "yes" if c.closed else "no"),
    ]


#: what a break's two values are, by kind: (the value written, the value it should be)
DIFFERS = {
    "content": ("entry_hash written", "entry_hash recomputed"),
    "link": ("previous_hash written", "the entry before's entry_hash"),
}


def first_break_lines(trail: AuditTrail) -> tuple[str, str]:
    """The first break as (where: line, sequence, kind; what differs: the value written beside the value
    expected, one per line, full length; "" when the kind has none)."""
    b = trail.chain.first_break
    if b is None:
        return "", ""
    seq = f", sequence {b.sequence}" if b.sequence is not None else ""
    where = f"Line {b.line}{seq}: {BREAK_KINDS.get(b.kind, b.kind)}"
    labels = DIFFERS.get(b.kind)
    if labels is None or not (b.stored or b.expected):
        return where, ""
    width = max(len(x) for x in labels)
    return where, f"{labels[0]:<{width}}  {b.stored}\n{labels[1]:<{width}}  {b.expected}"


def breaks_frame(trail: AuditTrail) -> pd.DataFrame:
    """Every break listed (the first 100), in file order."""
    rows = [
        {
            "line": b.line,
            "sequence": b.sequence,
            "kind": BREAK_KINDS.get(b.kind, b.kind),
            "message": b.message,
            "written": _short(b.stored),
            "expected": _short(b.expected),
        }
        for b in trail.chain.breaks
    ]
    return pd.DataFrame(rows, columns=["line", "sequence", "kind", "message", "written", "expected"])


def gaps_frame(trail: AuditTrail) -> pd.DataFrame:
    """Sequence gaps: where, after which sequence, how many entries are missing."""
    rows = [
        {"line": g.line, "after sequence": g.after, "found": g.found, "kind": g.kind, "missing": g.missing}
        for g in trail.chain.gaps
    ]
    return pd.DataFrame(rows, columns=["line", "after sequence", "found", "kind", "missing"])


def foreign_frame(trail: AuditTrail) -> pd.DataFrame:
    """Entries recorded for another session id."""
    rows = [
        {"line": f.line, "sequence": f.sequence, "session_id": f.session_id, "event_type": f.event_type}
        for f in trail.chain.foreign
    ]
    return pd.DataFrame(rows, columns=["line", "sequence", "session_id", "event_type"])


def unknown_frame(trail: AuditTrail) -> pd.DataFrame:
    """Entries of event types crprotocol 6.2.5 does not record (kept in the chain)."""
    rows = [{"line": u.line, "sequence": u.sequence, "event_type": u.event_type} for u in trail.unknown_events]
    return pd.DataFrame(rows, columns=["line", "sequence", "event_type"])


def signatures_text(trail: AuditTrail) -> str:
    c = trail.chain
    return (
        f"Signatures: {c.signed:,} HMAC present, not verifiable without the session key (the SDK never "
        f"exports it); {c.receipts:,} Ed25519 receipt(s), not checked (the trail carries no public key)."
    )


def ending_text(trail: AuditTrail) -> str:
    c = trail.chain
    if c.truncated:
        return "Truncated: the file ends in the middle of an entry, and no compliance.session_closed follows."
    if c.closed:
        return "Closed: the last entry is compliance.session_closed."
    return "Not closed: the last entry is not compliance.session_closed (the session is open, or the tail was cut)."


def anchor_headline(trail: AuditTrail) -> tuple[str, str]:
    """(tone, sentence) of the anchor check."""
    a = trail.anchor
    if a is None:
        return "info", (
            "No anchor checked: upload the trail's .anchor.json with it to compare the entry count and Merkle root."
        )
    tone = {"matches": "success", "differs": "error"}.get(a.verdict, "warning")
    signed = " The anchor is signed (not verified)." if a.signed else ""
    return tone, f"Anchor {a.verdict}: {a.message}.{signed}"


# ---- drawing -------------------------------------------------------------------------------------
def box(tone: str, text: str) -> None:
    """``text`` (plain, escaped here) in a success / error / warning / info box."""
    show = {"success": st.success, "error": st.error, "warning": st.warning}.get(tone, st.info)
    show(render.md_escape(text))


HASH_COLUMNS = {
    "written": st.column_config.TextColumn("written", width=140),
    "expected": st.column_config.TextColumn("expected", width=140),
    "message": st.column_config.TextColumn("message", width="large"),
}


def _breaks(trail: AuditTrail) -> None:
    c = trail.chain
    if c.first_break is None:
        return
    where, differs = first_break_lines(trail)
    st.markdown(f"**First break**: {render.md_escape(where)}")
    if differs:
        render.code(differs)
    if c.breaks_total > 1:
        more = f" (the first {len(c.breaks)} listed)" if c.breaks_total > len(c.breaks) else ""
        with st.expander(f"All {c.breaks_total:,} breaks{more}"):
            render.dataframe(
                breaks_frame(trail), hide_index=True, width="stretch", column_config=HASH_COLUMNS, key=K + "breaks"
            )
    if c.gaps:
        st.markdown(f"**Sequence gaps** ({c.gaps_total:,}; {c.missing_entries:,} entries missing in all)")
        render.dataframe(gaps_frame(trail), hide_index=True, width="stretch", key=K + "gaps")


def _other_lines(trail: AuditTrail) -> None:
    c = trail.chain
    if c.foreign_total:
        box("warning", f"{c.foreign_total:,} entries were recorded for another session than {c.session_id}.")
        render.dataframe(foreign_frame(trail), hide_index=True, width="stretch", key=K + "foreign")
    if trail.problems_total:
        render.show_problems(
            f"{trail.problems_total:,} line(s) could not be read as audit entries; the rest of the trail is shown",
            trail.problems,
            kind="warning",
        )
    if c.reformatted_total:
        lines = ", ".join(str(n) for n in c.reformatted[:20])
        st.caption(
            f"{c.reformatted_total:,} line(s) not written the way the SDK writes them (their hashed values are "
            f"unchanged, another hand wrote them): line(s) {render.md_escape(lines)}"
        )
    if trail.unknown_total:
        with st.expander(f"{trail.unknown_total:,} entries of event types crprotocol 6.2.5 does not record (kept)"):
            render.dataframe(unknown_frame(trail), hide_index=True, width="stretch", key=K + "unknown")


def chain_block(trail: AuditTrail, name: str) -> None:
    """The chain verdict of the trail uploaded as ``name``, in a bordered block."""
    with st.container(border=True):
        st.subheader("Chain verdict", help=glossary.help("audit chain"))
        c = trail.chain
        who = [f"session {c.session_id or '(none)'}"]
        if trail.model:
            who.append(f"model {trail.model}")
        if trail.protocol_version:
            who.append(f"crprotocol {trail.protocol_version}")
        st.caption(render.md_escape(f"{name} · " + " · ".join(who)))
        tone, text = chain_headline(trail)
        box(tone, text)
        for col, (label, value) in zip(st.columns(6), chain_numbers(trail)):
            col.metric(label, value)
        _breaks(trail)
        box("warning" if c.truncated else "info" if not c.closed else "success", ending_text(trail))
        tone, text = anchor_headline(trail)
        box(tone, text)
        _other_lines(trail)
        st.caption(render.md_escape(signatures_text(trail)), help=glossary.help("session signatures"))

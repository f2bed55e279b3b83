"""The Session page's windows block: per window of a crprotocol session, the SDK's packed facts in its
order, SPEC-027's verdict on that same set (contradictory pairs with their authority arbitration,
superseded / expired / ageing facts, near-duplicates), the SDK's own findings beside ours, and the
envelope SPEC-027 would pack for the window's question (docs/reference/sessions.md#the-analysis).
Tables come from :mod:`crp_ui.session_view`; every text from data is shown through :mod:`crp_ui.render`."""

from __future__ import annotations

from typing import Any

import streamlit as st

from crp_core import ConflictPair, SessionReport, format_timestamp

from . import glossary, render, session_input, state
from . import session_view as sv
from .conflict_case import authority_frame
from .session_input import K_QUERY

#: the windows block's widget keys start with this
K = "crp.page.session.windows."
NUMBER = st.column_config.NumberColumn
TEXT = st.column_config.TextColumn
CHECK = st.column_config.CheckboxColumn
PACKED_CONFIG: dict[str, Any] = {
    "position": NUMBER("SDK pos.", width=60, help="Its first position in the SDK's packed list (1-based)."),
    "fact_id": TEXT("fact_id", width=130),
    "content": TEXT("content", width=300),
    "relevance": NUMBER(
        "SDK relevance", format="%.3f", width=90, help="The SDK's relevance_score at its first position."
    ),
    "tokens": NUMBER("tokens", width=60, help="The SDK's token count for the fact."),
    "bookend": CHECK("bookend", width=70, help="Listed as a bookend (repeated at the end) at least once."),
    "compressed": CHECK("compressed", width="small", help="The SDK packed a compressed form of it."),
    "listed": NUMBER("listed", width="small", help="How often the SDK's list holds it (bookends repeat facts)."),
    "recency": TEXT("recency", width="small"),
    "recency_factor": NUMBER("recency_factor", format="%.2f", width="small"),
    "age_days": NUMBER("age_days", format="%.0f", width="small"),
    "ttl_days": NUMBER("ttl_days", format="%.0f", width="small", help="Its TTL in days; empty: no expiry."),
    "status": TEXT("status", width="small"),
    "state": TEXT("state", width="small"),
    "superseded_by": TEXT("superseded_by", width="small"),
    "written_by": TEXT("written back by", help="The window of this session that wrote the fact, when one did."),
}
#: the authority table of a pair: SPEC-027 §2.3's components and the fact's role (the arithmetic is their product)
AUTHORITY_SHOWN = (
    "fact_id",
    "source_type",
    "source_authority",
    "recency_factor",
    "importance_weight",
    "authority",
    "role",
)
AUTHORITY_CONFIG: dict[str, Any] = {
    "source_authority": NUMBER("source authority", format="%.4f"),
    "recency_factor": NUMBER("recency factor", format="%.4f"),
    "importance_weight": NUMBER("importance", format="%.4f"),
    "authority": NUMBER("authority", format="%.4f"),
}


def _pair(report: SessionReport, pair: ConflictPair, key: str) -> None:
    """One contradictory pair the SDK packed together: both texts, the arbitration, the authorities."""
    with st.container(border=True):
        st.markdown(render.md_escape(sv.pair_heading(pair)))
        for side, fid in (("A", pair.fact_a), ("B", pair.fact_b)):
            f = report.kb.get(fid)
            st.markdown(f"**{side}** {render.md_code(fid)}: {render.md_escape(f.content if f else '')}")
        frame = authority_frame(pair)
        render.dataframe(
            frame,
            hide_index=True,
            width="stretch",
            key=key,
            column_order=AUTHORITY_SHOWN,
            column_config=glossary.with_help(frame.columns, AUTHORITY_CONFIG),
        )


def _verdict(report: SessionReport, i: int) -> None:
    v = report.windows[i]
    with st.container(border=True):
        st.markdown("**SPEC-027's verdict on the same set**")
        if not (v.pairs or v.superseded or v.expired or v.ageing or v.near_duplicates):
            st.success("Nothing to flag: no contradictory pair, superseded, expired, ageing or near-duplicate fact.")
        if v.pairs:
            st.markdown(
                f"{len(v.pairs)} contradictory pair(s) packed together, with the fact SPEC-027 keeps "
                "(SPEC-027 §2.3: authority = source authority × recency factor × importance)"
            )
            for n, pair in enumerate(v.pairs):
                _pair(report, pair, f"{K}pair.{i}.{n}")
        flagged = sv.flagged_frame(report, i)
        if len(flagged):
            st.markdown("Superseded (STALE), expired and ageing facts packed, with their recency factor")
            render.dataframe(
                flagged,
                hide_index=True,
                width="stretch",
                key=f"{K}flagged.{i}",
                column_config=glossary.with_help(flagged.columns, PACKED_CONFIG),
            )
        dups = sv.near_duplicates_frame(report, i)
        if len(dups):
            st.markdown("Near-duplicates packed (SPEC-003 §6.6: a fact nearly repeating one packed before it)")
            render.dataframe(
                dups,
                hide_index=True,
                width="stretch",
                key=f"{K}dups.{i}",
                column_config={
                    "cosine": NUMBER("cosine", format="%.3f"),
                    "content": TEXT("content", width="large"),
                    "content of the other": TEXT("content of the other", width="large"),
                },
            )


def _findings(report: SessionReport, i: int) -> None:
    with st.container(border=True):
        st.markdown("**The SDK's own findings beside SPEC-027's**", help=glossary.help("SDK finding agreement"))
        st.caption(render.md_escape(sv.agreement_text(report, i)))
        sdk = sv.sdk_findings_frame(report, i)
        st.markdown("The SDK's findings on the answer, and ours naming the same facts")
        if len(sdk):
            render.dataframe(
                sdk,
                hide_index=True,
                width="stretch",
                key=f"{K}sdk.{i}",
                column_config={
                    "line": NUMBER("line", width=50),
                    "kind": TEXT("kind", width=90),
                    "severity": TEXT("severity", width=80),
                    "facts": TEXT("facts", width=130),
                    "detail": TEXT("detail", width=140),
                    "agrees": CHECK("agrees", width=60),
                    "ours naming them": TEXT("ours naming them", width="large"),
                },
            )
        else:
            st.caption("The SDK recorded no finding on this window.")
        ours = sv.ours_frame(report, i)
        st.markdown("SPEC-027's findings, and what the SDK said of their facts")
        if len(ours):
            render.dataframe(
                ours,
                hide_index=True,
                width="stretch",
                key=f"{K}ours.{i}",
                column_config={"facts": TEXT("facts", width="large")},
            )
        else:
            st.caption("SPEC-027 flags nothing in this window.")


def _envelope(report: SessionReport, i: int) -> None:
    v = report.windows[i]
    e = v.envelope
    with st.container(border=True):
        st.markdown("**The envelope SPEC-027 would pack for the window's question, beside the SDK's**")
        if e is None:
            st.info(
                render.md_escape(
                    f"No SPEC-027 envelope: {v.envelope_note}. Type the question above to run SPEC-027 for it."
                )
            )
            return
        source = "the trail's transcript" if e.query_source == "transcript" else "the question typed above"
        st.markdown(f"Question ({source}): {render.md_escape(e.query)}")
        m = st.columns(4)
        m[0].metric("SPEC-027 packs", len(e.envelope), help=f"facts, {e.tokens_used} of {e.token_budget} tokens")
        m[1].metric("packed by both", len(e.both))
        m[2].metric("SDK only", len(e.sdk_only))
        m[3].metric("SPEC-027 only", len(e.spec027_only))
        render.dataframe(
            sv.spec027_frame(report, i),
            hide_index=True,
            width="stretch",
            key=f"{K}spec027.{i}",
            column_order=("fact_id", "packed by", "SDK position", "SPEC-027 position", "why"),
            column_config={"fact_id": TEXT("fact_id", width="medium"), "why": TEXT("why", width="large")},
        )
        reasons = sv.spec027_reasons(report, i)
        if reasons:
            with st.expander(f"Why each fact is in one envelope only ({len(reasons)})", expanded=False):
                st.markdown("\n".join(f"- {render.md_escape(r)}" for r in reasons))


def _window(report: SessionReport, i: int) -> None:
    v = report.windows[i]
    st.caption(render.md_escape(sv.envelope_caption(report, i)))
    if v.window.query is not None:
        st.markdown(f"**Question** (the trail's transcript): {render.md_escape(v.window.query)}")
    counts = (
        ("packed", len(v.packed), "Distinct facts the SDK packed (each once, at its first position)."),
        ("listed", v.window.packed_total, "Entries of the SDK's packed list (bookends repeat facts)."),
        ("pairs", len(v.pairs), "Contradictory pairs whose two facts were both packed."),
        ("STALE", len(v.superseded), "Packed facts the knowledge base marks superseded."),
        ("expired", len(v.expired), "Packed facts whose recency factor is at the floor (age >= TTL)."),
        (
            "ageing",
            len(v.ageing),
            "Packed facts that are ageing: past half their TTL, recency factor between the floor and 1.",
        ),
        ("near-dups", len(v.near_duplicates), "Packed facts nearly repeating one packed before them."),
    )
    for col, (label, n, what) in zip(st.columns(len(counts)), counts):
        col.metric(label, n, help=what)
    if v.writeback_packed:
        ids = ", ".join(v.writeback_packed)
        st.warning(render.md_escape(f"Packed here after an earlier window of this session wrote it back: {ids}"))
    st.markdown("**The SDK's packed facts, in its order**")
    frame = sv.packed_frame(report, i)
    render.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        key=f"{K}packed.{i}",
        column_config=glossary.with_help(frame.columns, PACKED_CONFIG),
    )
    _verdict(report, i)
    _findings(report, i)
    _envelope(report, i)


def declare_uploads() -> None:
    """The uploads of this page are not in its link (the notice names them; a snapshot does not carry them)."""
    trail = session_input.loaded_trail()
    if trail is not None:
        state.declare_unlinked(f"the uploaded audit trail ({trail.name})")
    closing = session_input.closing_snapshot()
    if closing is not None:
        judged = state.recall(session_input.K_JUDGE, session_input.JUDGE_CLOSING)
        state.declare_unlinked(f"the uploaded closing snapshot ({closing.name}; judged against {judged})")


def windows_block(report: SessionReport, kb_label: str) -> None:
    """Every window of the session, one at a time (a select box), in a bordered block; ``kb_label`` names
    the knowledge base it is judged against."""
    with st.container(border=True):
        st.subheader("Windows", help=glossary.help("session window"))
        st.caption(
            render.md_escape(
                f"Judged against {kb_label} ({len(report.kb):,} facts) · recency "
                f"at {format_timestamp(report.now)} ({report.now_source})"
            )
        )
        mismatch = sv.kb_mismatch(report)
        if mismatch:
            st.error(render.md_escape(mismatch))
        elif report.messages:
            shown = "\n".join(f"- {render.md_escape(m)}" for m in report.messages[:10])
            more = f"\n- … and {len(report.messages) - 10} more" if len(report.messages) > 10 else ""
            st.warning(f"Packed facts the knowledge base does not hold:\n\n{shown}{more}")
        if not report.windows:
            st.info("The trail holds no window: the session dispatched nothing, or its entries were not read.")
            return
        c = st.columns([3, 2])
        i = c[0].selectbox(
            "Window",
            range(len(report.windows)),
            format_func=lambda n: render.plain(sv.window_label(report, n)),
            key=K + "pick",
        )
        c[1].text_input(
            "Question for the windows without a transcript (optional)",
            key=K_QUERY,
            help="SPEC-027 packs an envelope for it over the knowledge base as the window saw it (what this "
            "window and later ones wrote back left out), beside the SDK's (as crp-inspect session --query).",
        )
        state.declare_settings(
            "the session's window view",
            {"window": sv.window_label(report, int(i or 0)), "question": str(state.recall(K_QUERY, "") or "")},
            {"window": sv.window_label(report, 0), "question": ""},
        )
        if report.trail.windows_total > len(report.windows):
            st.caption(f"{report.trail.windows_total - len(report.windows):,} more window(s) counted, not analysed.")
        _window(report, int(i or 0))

"""The Session page's write-back block: the facts a crprotocol session wrote into its knowledge base from
its model's answers (which window, its confidence, the knowledge-base fact it contradicts or restates,
where it was packed again), and the action that quarantines them.

The action records operator decisions in the triage database every page reads, through the same path
as the Conflicts page's decision form (:func:`crp_ui.decisions.record`): one ``mark_status``
QUARANTINED decision per fact, built by :meth:`crp_core.SessionReport.quarantine_decisions`, with the
operator's name from the sidebar and an optional note. A quarantined fact is never retrieved and stays
in the knowledge base; every page's run applies the mark. The analysis itself runs on the knowledge
base as loaded, so the facts stay listed here, with their status in force."""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from crp_core import MAX_NOTE_CHARS, CRPError, DecisionError, SessionReport

from . import cache, decisions, glossary, render, state, team
from . import session_view as sv

#: the write-back block's widget and session keys start with this
K = "crp.page.session.writeback."
K_NOTE = K + "note"
K_FLASH = K + "flash"  # the outcome of the last quarantine click (shown once)
K_ERROR = K + "error"  # why the last quarantine click recorded nothing, or not everything
QUARANTINED = "QUARANTINED"
#: write-back facts contradicting the knowledge base drawn as a case each (the table lists them all)
MAX_CASES = 10
TEXT = st.column_config.TextColumn


def to_quarantine(report: SessionReport, statuses: Mapping[str, str]) -> list[str]:
    """The session's facts not yet QUARANTINED (by an operator, or in the knowledge base itself)."""
    out = []
    for wb in report.writeback:
        f = report.kb.get(wb.fact_id)
        if statuses.get(wb.fact_id, f.status if f is not None else "") != QUARANTINED:
            out.append(wb.fact_id)
    return out


def _on_quarantine(report: SessionReport, fact_ids: tuple[str, ...], fingerprint: str) -> None:
    """Record the decisions (a callback: the first run after the click already reads them)."""
    state.forget(K_ERROR)
    note = str(state.recall(K_NOTE) or "")
    recorded = []
    try:
        for d in report.quarantine_decisions(
            state.get_operator(), note=note, ckf_fingerprint=fingerprint, fact_ids=fact_ids
        ):
            recorded.append(decisions.record(d))
    except DecisionError as exc:
        lines = "\n".join(f"- field `{f}`: {render.md_escape(m)}" for f, m in exc.problems)
        state.remember(K_ERROR, f"Decision refused after {len(recorded)} recorded:\n\n{lines}")
    except CRPError as exc:
        state.remember(K_ERROR, f"Decision not recorded after {len(recorded)}: {render.md_escape(exc)}")
    if recorded:
        first, last = recorded[0], recorded[-1]
        span = f"#{first.id}" if first is last else f"#{first.id}–#{last.id}"
        state.remember(
            K_FLASH,
            f"Recorded decision(s) {span}: {len(recorded)} fact(s) the session wrote marked QUARANTINED "
            f"(by {first.operator}). They are never retrieved from now on, on every page.",
        )
        state.forget(K_NOTE)


def _quarantine(report: SessionReport, statuses: Mapping[str, str]) -> None:
    todo = to_quarantine(report, statuses)
    with st.container(border=True):
        st.markdown("**Quarantine what the session wrote**", help=glossary.help("quarantine"))
        flash, error = state.forget(K_FLASH), state.forget(K_ERROR)
        if flash:
            st.success(render.md_escape(flash))
        if error:
            st.error(str(error))
        database = render.md_code(decisions.shown_target(state.db_path()))
        st.caption(
            "One decision per fact, status QUARANTINED (never retrieved, kept in the CKF), recorded in the triage "
            f"database {database} as the Conflicts page records them; the decision names the fact it contradicts, "
            "else the one it restates, else its window."
        )
        operator, refusal = state.get_operator(), team.record_refusal()
        if refusal or not operator:
            st.warning(refusal or team.NO_NAME)
        else:
            st.caption(team.recording_as())
        st.text_input("Note (optional)", key=K_NOTE, max_chars=MAX_NOTE_CHARS)
        label = (
            f"Quarantine what the session wrote ({len(todo)} fact(s))"
            if todo
            else "Everything the session wrote is quarantined"
        )
        st.button(
            label,
            key=K + "quarantine",
            type="primary",
            disabled=not operator or not todo,
            on_click=_on_quarantine,
            args=(report, tuple(todo), cache.by_identity("kb_fingerprint", report.kb, state.get_ckf_fingerprint)),
        )


def _cases(report: SessionReport) -> None:
    """The write-back facts that contradict the knowledge base, each with both texts and the arbitration."""
    bad = [j for j, wb in enumerate(report.writeback) if wb.contradicts]
    for j in bad[:MAX_CASES]:
        with st.container(border=True):
            st.markdown(
                "  \n".join(
                    f"**{render.md_escape(label)}** {render.md_escape(text)}"
                    for label, text in sv.writeback_case(report, j)
                )
            )
    if len(bad) > MAX_CASES:
        st.caption(f"{len(bad) - MAX_CASES} more write-back fact(s) contradict the knowledge base (in the table).")


def _statuses() -> Mapping[str, str]:
    """The operators' status marks in force (empty, with the reason shown, when the database is unusable)."""
    try:
        return decisions.decision_set().statuses
    except CRPError as exc:
        st.error(render.md_escape(exc))
        return {}


def writeback_block(report: SessionReport) -> None:
    """The write-back table, the facts the SDK merged, and the quarantine action, in a bordered block."""
    with st.container(border=True):
        st.subheader("Write-back contamination", help=glossary.help("write-back"))
        statuses = _statuses()
        if not report.writeback:
            st.info(
                "The knowledge base holds no fact this session wrote from its model's answers. Judged against the "
                "knowledge base the session started from, that is expected: upload the session's closing snapshot "
                "to see what it wrote back."
            )
        else:
            stray = sv.writeback_mismatch(report)
            if stray:
                st.warning(render.md_escape(stray))
            st.caption(render.md_escape(sv.writeback_summary(report)))
            frame = sv.writeback_frame(report, statuses)
            render.dataframe(
                frame,
                hide_index=True,
                width="stretch",
                key=K + "table",
                column_config=glossary.with_help(
                    frame.columns,
                    {
                        "content": TEXT("content", width=180),
                        "status in force": TEXT("status in force", width=110),
                        "contradicts": TEXT("contradicts", width=100),
                        "restates": TEXT("restates", width=140),
                        "window": TEXT("window", width=70),
                        "confidence": st.column_config.NumberColumn("confidence", format="%.2f", width=80),
                        "packed again in": TEXT("packed again", width=90),
                        "fact_id": TEXT("fact_id", width="medium"),
                    },
                ),
            )
            _cases(report)
        if report.merged:
            with st.expander(f"{len(report.merged)} extracted fact(s) the SDK did not keep under their own id"):
                st.caption("The SDK merged each into a fact of the same text (its deduplication keeps the older one).")
                render.dataframe(sv.merged_frame(report), hide_index=True, width="stretch", key=K + "merged")
        if report.writeback:
            _quarantine(report, statuses)

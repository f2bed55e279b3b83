"""The Conflicts page's audit log: the decisions of the knowledge base loaded (or every KB's), each row
naming its pair, its knowledge base, the operator with the role held and the origin; the verdict of the
log's hash chain (``DecisionStore.verify``: the first entry whose recorded hashes do not match, if any, or
the head hash to keep elsewhere, since removing the newest entries leaves a valid chain);
the log as JSON Lines, one entry per line with its hashes."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from crp_core import CRPError, Decision, KnowledgeBase

from . import conflicts_view as cv
from . import decisions, render, state
from .triage_record import K


def chain_verdict() -> None:
    """Whether every entry still carries the hash of the one before it (recomputed over the whole log)."""
    store = decisions.open_store()
    if store is None:
        return
    try:
        v = store.verify()
    except CRPError as exc:
        st.warning(f"The hash chain could not be checked: {render.md_escape(exc)}")
        return
    if v.ok and v.head is not None:  # a verified chain always has its head
        _verified(v.entries, v.head)
        return
    before = v.entries - 1  # the entries checked include the broken one
    st.error(
        render.md_escape(
            f"Hash chain broken at entry #{v.first_broken_id} ({before} entr{'y' if before == 1 else 'ies'} before "
            f"it verified): {v.reason}. The log was changed outside crp-inspect from that entry on."
        )
        + " `crp-inspect triage verify` names it too."
    )


def _verified(entries: int, head: str) -> None:
    """The green verdict, what it does not prove (the newest entries removed leave a valid chain), and the
    head hash to keep elsewhere so that such a removal shows."""
    st.success(
        f"Hash chain verified: {entries} entr{'y' if entries == 1 else 'ies'}, each one holding the hash of the one "
        "before (an entry changed or inserted, or one removed from before the newest, would break the chain there; "
        "removing the newest entries leaves a valid chain: keep the head hash below somewhere else and check that "
        "the log still reaches it with `crp-inspect triage verify --head HASH`)."
    )
    if entries:
        st.caption(render.md_escape(f"Head hash (the newest entry's): {head[:12]}… (full value below, to copy)"))
        st.code(render.plain(head), language=None)


NOTE_HELP = "The operator's reason. Double-click a cell to read a long note whole."


def history_columns(columns: list[str]) -> dict[str, Any]:
    """The ``column_config`` of decision log rows (:func:`crp_ui.conflicts_view.history_frame`, or a part of its
    columns): each column its width (``HISTORY_WIDTHS``), the id and pair pinned while the table scrolls."""
    return {
        c: st.column_config.Column(
            width=cv.HISTORY_WIDTHS[c],
            pinned=True if c in cv.HISTORY_PINNED else None,
            help=NOTE_HELP if c == "note" else None,
        )
        for c in columns
        if c in cv.HISTORY_WIDTHS
    }


def history_table(frame: pd.DataFrame, key: str) -> None:
    """Decision log rows as a table, each column at its width (:func:`history_columns`)."""
    render.dataframe(
        frame, hide_index=True, width="stretch", key=key, column_config=history_columns(list(frame.columns))
    )


def _jsonl() -> bytes:
    store = decisions.open_store()
    return b"" if store is None else store.export_jsonl().encode("utf-8")


def audit_section(log: list[Decision], kb: KnowledgeBase) -> None:
    """The audit log: this knowledge base's decisions (and those recorded without a fingerprint, which
    apply to every KB) unless "every knowledge base" is on; the chain verdict; the JSONL download."""
    linked, refused = state.view_choice("log", ("all",), "")  # ?log=all
    if refused:
        st.warning(f"Link parameter ignored: {render.md_escape(refused)}")
    every = st.toggle(
        "every knowledge base",
        value=linked == "all",
        key=K + "log.all_kbs",
        help="Off: the decisions recorded on the CKF loaded (and those recorded without a fingerprint, which "
        "apply to every CKF). On: the whole log, every knowledge base's decisions.",
    )
    state.set_view_choice("log", "all" if every else "", "")
    shown = log if every else cv.log_for_kb(log, state.get_ckf_fingerprint(kb))
    st.markdown(
        f"**Audit log** (oldest first): {len(shown)} of {len(log)} decision(s)"
        + ("" if every else ", this knowledge base's")
    )
    chain_verdict()
    if shown:
        history_table(cv.history_frame(shown), K + "log")
    else:
        st.caption("No decision recorded yet." if not log else "No decision recorded on this knowledge base yet.")
    st.download_button(
        "Audit log as JSONL",
        _jsonl,
        file_name="crp-triage-log.jsonl",
        mime="application/jsonl",
        key=K + "dl.jsonl",
        on_click="ignore",
        disabled=not log,
        help="Every entry of the log (every knowledge base), one JSON object per line, with the hash of the entry "
        "before it and its own: what `crp-inspect triage verify` recomputes.",
    )

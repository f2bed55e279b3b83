"""The pairs an operator's QUARANTINED / DELETED mark took out of the triage queue (docs/decisions/triage.md, "Out of
retrieval"): listed apart from the queue and not counted with it, each one openable in the queue pair's place (its
case, the decision form and its history) with the mark that took it out; an ACTIVE mark brings it back.

A pair out of retrieval is open while :data:`K_ASIDE` names it: picked in the list, named by a link (``?pair=``), or
the queue's selected pair taken out by the decision just recorded. Picking a pair of the queue (its select box, a
table row, "Record and next", the "Back to the queue" button) closes it; a pair brought back opens in the queue.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import streamlit as st

from crp_core import ConflictPair, DecisionSet

from . import conflicts_view as cv
from . import render, state
from .triage_record import K_ASIDE, K_PAIR, K


def close() -> None:
    """Back to the queue's selected pair (a callback)."""
    state.forget(K_ASIDE)
    state.select_pair(state.recall(K_PAIR))


def _on_pick() -> None:
    picked = state.recall(K_ASIDE)
    state.select_pair(picked if picked else state.recall(K_PAIR))


def settle(apart: Mapping[str, ConflictPair], queued: Collection[str]) -> str | None:
    """The pair out of retrieval open on this run, or None. One whose fact is retrievable again (``queued``: the
    queue holds it) is selected in the queue instead; the selected pair (a link, or the queue's pair a decision just
    took out of retrieval) opens when it is out of retrieval (``apart``: pair key -> pair); a pair of the queue
    selected meanwhile ("Claim next", "Record and next") closes it."""
    got = state.recall(K_ASIDE)
    cur = str(got) if got else None
    want = state.selected_pair()
    if cur is not None and cur not in apart:
        state.forget(K_ASIDE)
        if cur in queued:
            state.remember(K_PAIR, cur)
            state.select_pair(cur)
        return None
    if want is not None and want in apart:
        if want != cur:
            state.remember(K_ASIDE, want)
        return want
    if cur is not None and want is not None:
        state.forget(K_ASIDE)
        return None
    return cur


def section(aside: Sequence[ConflictPair], ds: DecisionSet, opened: str | None) -> None:
    """The list of the pairs out of retrieval (nothing when there is none) and the choice of one to open."""
    if not aside:
        return
    n = len(aside)
    with st.expander(
        f"Out of retrieval: {n} pair{'' if n == 1 else 's'} whose fact an operator marked QUARANTINED or DELETED "
        "(not in the queue, not counted above)",
        expanded=opened is not None,
    ):
        st.caption(
            "A fact out of retrieval reaches no envelope: no run pairs it, and the whole-CKF scan (these counts, "
            "`crp-inspect conflicts`) leaves its pairs out. They stay here with the mark that took them out; open "
            "one to read it or to mark the fact ACTIVE again, which brings the pair back into the queue."
        )
        render.dataframe(
            render.inert_frame(cv.aside_frame(aside, ds).drop(columns=["pair"])),
            hide_index=True,
            width="stretch",
            key=K + "aside.table",
        )
        labels = {
            cv.p_key(p): cv.pair_label({"fact_a": p.fact_a, "fact_b": p.fact_b, "patterns": ", ".join(p.patterns)})
            for p in aside
        }
        st.selectbox(
            "Open a pair out of retrieval",
            list(labels),
            index=None,
            placeholder="choose a pair",
            format_func=lambda k: render.plain(labels.get(k)),
            key=K_ASIDE,
            on_change=_on_pick,
        )


def heading(pair: ConflictPair, ds: DecisionSet) -> None:
    """Why the open pair is out of the queue, and the way back to the queue's pair."""
    st.info(render.md_escape(cv.aside_text(pair, ds)), icon=":material/block:")
    st.button("Back to the queue's pair", key=K + "aside.back", on_click=close, icon=":material/undo:")


__all__ = ["K_ASIDE", "close", "heading", "section", "settle"]

"""Revert a decision on any pair of the CKF, from the Conflicts page's audit log: the decisions whose pair the
triage queue does not hold (a near conflict dismissed, an override on a pair the detector no longer flags, a
pair out of retrieval) are reverted here as the queue's pair's are under its form (:mod:`crp_ui.triage_revert`:
nothing preselected, a required reason, based on the pair's latest entry, the store's checks).

Offered: every decision of the log this session may revert (``Identity.revert_refusal``: an admin any, an operator
of single mode their own), newest first, on pairs of the CKF loaded (a revert is stamped with its fingerprint; the
others wait for their own CKF, as ``crp-inspect triage record --kind revert`` requires both facts in ``--ckf``).
"""

from __future__ import annotations

from collections.abc import Collection

import streamlit as st

from crp_core import Decision, Identity, KnowledgeBase, Role

from . import conflicts_view as cv
from . import decisions, render, team
from .triage_audit import history_table
from .triage_record import K
from .triage_revert import ANY, choice, drawn_with, flash, option_label, reason_and_button, revertible

#: where a decision's pair is, as the options and the caption say it
IN_QUEUE = "in the queue"
OUT_OF_RETRIEVAL = "out of retrieval"
NOT_IN_QUEUE = "not in the queue"
#: what "not in the queue" means, under the choice
NOT_IN_QUEUE_WHY = (
    "The detector does not flag its two texts above contradiction_similarity under this configuration: a near "
    "conflict, or a pair that left the queue."
)


def pair_place(d: Decision, queued: Collection[str], apart: Collection[str]) -> str:
    """Where ``d``'s pair is: in the triage queue (``queued``: its pair keys), out of retrieval (``apart``: the pairs
    a QUARANTINED / DELETED mark took out of it), or in neither."""
    if d.pair_key in queued:
        return IN_QUEUE
    return OUT_OF_RETRIEVAL if d.pair_key in apart else NOT_IN_QUEUE


def on_this_ckf(d: Decision, kb: KnowledgeBase) -> bool:
    """Both facts of ``d``'s pair are in the CKF loaded."""
    return kb.get(d.fact_a) is not None and kb.get(d.fact_b) is not None


def offered(log: list[Decision], kb: KnowledgeBase, who: Identity) -> tuple[list[Decision], int]:
    """The decisions the session ``who`` may revert on the CKF loaded, newest first, and how many more it may revert
    on pairs whose facts this CKF lacks."""
    mine = [d for d in revertible(log) if who.revert_refusal(d) is None] if who.can_revert else []
    here = [d for d in reversed(mine) if on_this_ckf(d, kb)]
    return here, len(mine) - len(here)


def _title(role: Role, can_revert: bool) -> str:
    if not can_revert:
        return "Revert a decision on any pair (admin)"
    return "Revert a decision on any pair" if role is Role.ADMIN else "Revert a decision of yours, on any pair"


def revert_any_section(log: list[Decision], kb: KnowledgeBase, queued: Collection[str], apart: Collection[str]) -> None:
    """The section over the whole log (``queued`` / ``apart``: the queue's pair keys and those out of retrieval)."""
    flash(ANY)
    who = team.identity()
    targets, elsewhere = offered(log, kb, who)
    with st.expander(_title(who.role, who.can_revert), expanded=False):
        st.caption(
            "Every decision you may take back, whether or not its pair is in the triage queue (a near conflict "
            "dismissed, a pair the detector no longer flags, a pair out of retrieval), newest first. A revert is a "
            "new entry with your reason; the pair returns to what its other decisions say."
        )
        if not who.can_revert:
            st.caption(
                render.md_escape(
                    f"Only an admin reverts a decision; {who.operator or 'this session'} is {who.role.value}."
                )
            )
            return
        if elsewhere:
            st.caption(f"{elsewhere:,} more on facts this CKF lacks: load their CKF to revert them.")
        if not targets:
            mine = "of yours " if who.role is not Role.ADMIN else ""
            st.caption(f"No decision {mine}on this CKF to revert.")
            return
        by_id = {int(d.id or 0): d for d in targets}
        labels = {i: option_label(d, pair_place(d, queued, apart)) for i, d in by_id.items()}
        target = choice(ANY, by_id, labels, disabled=False)
        drawn = None
        if target is not None:  # its pair's history: what the pair returns to, and what the revert is based on
            hist = decisions.pair_history(target.fact_a, target.fact_b)
            _pair_of(target, pair_place(target, queued, apart), hist)
            drawn = drawn_with(ANY, target, kb, hist)
        reason_and_button(ANY, drawn, disabled=False)


def _pair_of(target: Decision, place: str, hist: list[Decision]) -> None:
    """The chosen decision's pair, where it is, and its history (what the pair returns to)."""
    why = f" {NOT_IN_QUEUE_WHY}" if place == NOT_IN_QUEUE else ""
    st.caption(render.md_escape(f"#{target.id} is on {target.fact_a} ↔ {target.fact_b}: {place}.{why}"))
    history_table(cv.history_frame(hist).drop(columns=["pair", "kb"]), K + "revert.history.any")


__all__ = ["IN_QUEUE", "NOT_IN_QUEUE", "OUT_OF_RETRIEVAL", "offered", "on_this_ckf", "pair_place", "revert_any_section"]

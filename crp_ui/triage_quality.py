"""The Conflicts page's Detector quality tab: the operators' decisions as labels for the value-conflict detector
(``crp-inspect triage stats``), and how the operators agree with each other."""

from __future__ import annotations

import streamlit as st

from crp_core import Decision, DecisionSet, KnowledgeBase, detector_quality, operator_agreement

from . import conflicts_view as cv
from . import render, state
from .triage_form import K


def _agreement(log: list[Decision]) -> None:
    """Agreement per pair of operators over the pairs both decided (the log of this knowledge base)."""
    st.markdown("**Agreement between operators** (the pairs both decided; each one's latest position)")
    frame = cv.agreement_frame(operator_agreement(log))
    if frame.empty:
        st.caption("No two operators have decided the same pair yet.")
        return
    render.dataframe(frame, hide_index=True, width="stretch", key=K + "quality.agreement")
    st.caption(
        "A position is the winner an accept or an override gives, a dismissal, or a status mark. Cohen's "
        "kappa corrects the agreement for chance: 1 = always agree, 0 = as often as chance would, below 0 = "
        "less; '-' when both used one and the same position on every shared pair."
    )


def quality_tab(ds: DecisionSet, kb: KnowledgeBase, log: list[Decision]) -> None:
    """The operators' decisions as labels for the value-conflict detector (crp-inspect triage stats), and
    how the operators agree with each other."""
    _agreement(log)
    config = state.get_config()
    quality = detector_quality(ds, kb, config)
    if not quality.pairs:
        st.info(
            "No pair decided yet. Every accepted or overridden pair counts as a true conflict, every "
            "dismissed pair as a false positive of the detector; precision per pattern appears here."
        )
        return
    total = quality.precision
    m = st.columns(4)
    m[0].metric(
        "decided pairs flagged",
        len(quality.flagged),
        help="pair decisions in force whose texts the detector flags today, in the queue or not",
    )
    m[1].metric("confirmed conflicts", quality.confirmed, help="accepted or overridden")
    m[2].metric("dismissed (false positives)", quality.dismissed)
    m[3].metric("precision so far", "-" if total is None else f"{total:.2f}")
    if quality.unflagged:
        st.caption(
            f"{quality.unflagged} more decided pair(s) whose texts the detector does not flag today (named by "
            "hand, or flagged by an earlier detector): listed below, not counted as labels."
        )
    render.dataframe(cv.quality_frame(quality), hide_index=True, width="stretch", key=K + "quality.patterns")
    st.markdown("**Pairs the operators overruled** (dismissed as not a conflict, or a different winner)")
    over = cv.overruled_frame(quality, kb)
    if over.empty:
        st.caption("None: every decision so far agrees with the detector and the arbitration.")
    else:
        render.dataframe(
            over,
            hide_index=True,
            width="stretch",
            key=K + "quality.overruled",
            column_config={
                "text_a": st.column_config.TextColumn("text a", width="large"),
                "text_b": st.column_config.TextColumn("text b", width="large"),
            },
        )

"""The pair under the Conflicts page's triage queue: its case (heading, figures, both sides, the evidence, the
outcome, the authority table and bars; the SDK's verdict for a snapshot), then the decision form, the admin's
revert and the pair's decision history. The pair is the queue's selected one, or a pair out of retrieval opened
in its place (:mod:`crp_ui.queue_aside`, with the line saying why it is out of the queue)."""

from __future__ import annotations

from datetime import datetime

import streamlit as st

from crp_core import ConflictPair, CRPConfig, DecisionSet, KnowledgeBase, SdkAgreement

from . import conflicts_view as cv
from . import decisions, queue_aside
from .triage_audit import history_table
from .triage_form import K, decision_form
from .triage_revert import revert_section


def case(
    pair: ConflictPair,
    ds: DecisionSet,
    kb: KnowledgeBase,
    config: CRPConfig,
    now: datetime,
    agreement: SdkAgreement | None = None,
) -> None:
    """The pair's heading, figures and arbitration in one element, the SDK's verdict on it (``agreement``: a
    snapshot's), its case in another."""
    cv.pair_head(pair)
    rec = agreement.of(pair.fact_a, pair.fact_b) if agreement is not None else None
    if rec is not None:
        cv.sdk_block(rec, K + "sdk")
    cv.queue_case(pair, kb, dict(ds.statuses), now=now, config=config, key=K + "authority")


def decide(pair: ConflictPair, kb: KnowledgeBase, config: CRPConfig, queue_keys: list[str]) -> None:
    """The decision form of ``pair`` (``queue_keys``: the queue as shown, for "Record and next"), the admin's
    revert and the pair's decision history."""
    decision_form(pair, kb, config, queue_keys)
    hist = decisions.pair_history(pair.fact_a, pair.fact_b)
    revert_section(pair, hist, kb)
    st.markdown(f"**Decision history of this pair** ({len(hist)})")
    if hist:
        history_table(cv.history_frame(hist).drop(columns=["pair", "kb"]), K + "history")
    else:
        st.caption("No decision yet.")


def out_of_retrieval(
    pair: ConflictPair, ds: DecisionSet, kb: KnowledgeBase, config: CRPConfig, now: datetime, queue_keys: list[str]
) -> None:
    """A pair out of retrieval in the queue pair's place: why it is out of the queue, its case and its form."""
    queue_aside.heading(pair, ds)
    case(pair, ds, kb, config, now)
    decide(pair, kb, config, queue_keys)


__all__ = ["case", "decide", "out_of_retrieval"]

"""One conflict pair as the triage queue shows it (SPEC-027 §2.3): the patterns, both sides with the
differing tokens marked, every field that decides the case, the outcome and the authority components,
and, for a CKF read from a crprotocol SDK snapshot, the SDK's own verdict beside SPEC-027's. The parts
are drawn by :mod:`crp_ui.conflicts_view`; this module puts them in the queue's order."""

from __future__ import annotations

from datetime import datetime

import streamlit as st

from crp_core import ConflictPair, CRPConfig, KnowledgeBase, PairAgreement

from . import conflicts_view as cv
from . import render


def queue_case(
    pair: ConflictPair,
    kb: KnowledgeBase,
    statuses: dict[str, str],
    *,
    now: datetime,
    config: CRPConfig,
    key: str,
) -> None:
    """The pair's case in the queue: patterns, both sides and the evidence, the outcome, then the
    authority components (``key`` names the table's element)."""
    cv.patterns_line(pair)
    cv.pair_case(pair, kb, statuses, now=now, config=config)
    cv.outcome_line(pair)
    cv.authority_table(pair, key=key)


def sdk_block(rec: PairAgreement, key: str) -> None:
    """The SDK's supersession against SPEC-027: on its own (the fair comparison) and as loaded."""
    own, loaded = cv.sdk_verdict_lines(rec)
    st.markdown(f"**{cv.SDK_LABELS[rec.independent.verdict]}** · {render.md_escape(own)}")
    st.caption(render.md_escape(loaded))
    with st.expander("Authority on its own (the SDK had not decided)"):
        render.dataframe(
            cv.sdk_authority_frame(rec),
            hide_index=True,
            width="stretch",
            key=key + ".table",
            column_config={
                c: st.column_config.NumberColumn(format="%.4f")
                for c in ("source_authority", "recency_factor", "importance_weight", "authority")
            },
        )

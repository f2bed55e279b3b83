"""One conflict pair as the Conflicts page shows it (SPEC-027 §2.3): both texts side by side with the
differing tokens highlighted, every field that decides the case, the authority arithmetic as numbers
and bars, and, for a CKF read from a crprotocol SDK snapshot, the SDK's own verdict beside SPEC-027's.

The HTML comes from :mod:`crp_ui.conflicts_view`, every text in it escaped; it is built once per pair
object.
"""

from __future__ import annotations

from datetime import datetime

import streamlit as st

from crp_core import ConflictPair, CRPConfig, KnowledgeBase, PairAgreement, fact_attributes

from . import cache, render
from . import conflicts_view as cv


def pair_case(
    pair: ConflictPair,
    kb: KnowledgeBase,
    statuses: dict[str, str],
    *,
    now: datetime,
    config: CRPConfig,
    lead: str = "",
    tail: str = "",
) -> None:
    """Both texts side by side, differing tokens highlighted, with role and authority arithmetic;
    below them every field that decides the case, the fields that differ highlighted: one HTML
    element (``lead`` / ``tail``: more escaped HTML before / after it in the same element). ``kb`` is
    the CKF as loaded, ``statuses`` the operators' statuses in force."""
    body = cv.pair_case_html(pair, kb, fact_attributes(kb, now, config), statuses)
    st.markdown(lead + body + tail, unsafe_allow_html=True)


def authority_html(pair: ConflictPair) -> str:
    """The SPEC-027 §2.3 components as numbers (a table) and as bars, HTML built once per pair object.
    Neither is interactive, so both are one Markdown element rather than a data grid and a chart."""
    return str(cache.by_identity("authority_html", pair, cv.authority_html))


def authority_block(pair: ConflictPair) -> None:
    """The authority table and bars of ``pair`` (one element)."""
    st.markdown(authority_html(pair), unsafe_allow_html=True)


def pair_head(pair: ConflictPair) -> None:
    """The pair's heading, figures and arbitration (one element)."""
    st.markdown(cache.by_identity("pair_head", pair, cv.pair_head_html), unsafe_allow_html=True)


def queue_case(
    pair: ConflictPair, kb: KnowledgeBase, statuses: dict[str, str], *, now: datetime, config: CRPConfig
) -> None:
    """The pair's case as the triage queue shows it: the patterns, both sides, the evidence, the
    outcome and the authority table and bars, in one element."""
    lead = f'<div class="crp-patterns"><b>Pattern(s):</b> {render.html_text(", ".join(pair.patterns))}</div>'
    tail = f'<div class="crp-outcome"><b>Outcome:</b> {render.html_text(cv.outcome_text(pair))}</div>' + authority_html(
        pair
    )
    pair_case(pair, kb, statuses, now=now, config=config, lead=lead, tail=tail)


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

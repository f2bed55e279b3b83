"""A conflict pair drawn with Streamlit's own elements (SPEC-027 §2.3-2.5): its heading and figures
(``st.metric``), both facts side by side in bordered containers with the differing tokens marked, the
fields the case is decided on (a table, the differing rows highlighted) and the authority components
(a dataframe whose progress bars draw each component in [0, 1]).

Fact texts are the one piece of HTML here (:func:`crp_ui.conflict_text.fact_text_html`, escaped, classes
only); every other text goes through :func:`crp_ui.render.md_escape` / ``md_code`` or is a table cell.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import pandas as pd
import streamlit as st

from crp_core import ConflictPair, CRPConfig, Fact, KnowledgeBase, PairAgreement, relative_margin

from . import charts, render, time_strip
from .conflict_case import (
    AUTHORITY_PARTS,
    arbitration_label,
    arbitration_short,
    authority_arithmetic,
    authority_frame,
    differing_fields,
    outcome_text,
    pair_evidence,
    role_of,
)
from .conflict_sdk import SDK_LABELS, sdk_authority_frame, sdk_verdict_lines
from .conflict_text import fact_text_html, side_spans
from .provenance import provenance_caption
from .theme import DIFFERS_BACKGROUND, ROLE_TONES


def pair_head(pair: ConflictPair) -> None:
    """The pair's heading: both ids (which is A, which B), the cosine similarity, the authority margin and
    the arbitration as metrics, then the arbitration in full."""
    st.subheader(f"{render.md_escape(pair.fact_a)} ↔ {render.md_escape(pair.fact_b)}", anchor=False)
    st.caption(f"A = {render.md_code(pair.fact_a)} · B = {render.md_code(pair.fact_b)}")
    figures = st.columns(3)
    figures[0].metric("cosine similarity", f"{pair.similarity:.4f}")
    a, b = pair.authority.get(pair.fact_a), pair.authority.get(pair.fact_b)
    share = None if a is None or b is None else relative_margin(a.authority, b.authority)
    figures[1].metric(
        "authority margin",
        f"{pair.margin:.4f}",
        delta=None if share is None else f"{share:.2%} of the larger authority",
        delta_color="off",
        delta_arrow="off",
    )
    short, full = arbitration_short(pair), arbitration_label(pair)
    figures[2].metric("arbitration", short)
    if full != short:  # the metric holds the short form: say the rest once
        st.caption(f"Arbitration: {render.md_escape(full)}")


def patterns_line(pair: ConflictPair) -> None:
    """The value-conflict pattern(s) the detector found in the pair (SPEC-005 §5.3 names), and whether its
    learned comparison found them where the rules found none."""
    found_by = " (learned comparison: the rules found none)" if pair.conflict.learned else ""
    st.markdown(f"**Pattern(s):** {render.md_escape(pair.patterns_text())}{found_by}")


def outcome_line(pair: ConflictPair) -> None:
    """The arbitration's outcome in one line (:func:`crp_ui.conflict_case.outcome_text`)."""
    st.markdown(f"**Outcome:** {render.md_escape(outcome_text(pair))}")


def _side(pair: ConflictPair, fact: Fact, side: str, status: str) -> None:
    """One fact of the pair in a bordered container: heading with badges, marked text, the SDK provenance
    of a fact from a crprotocol snapshot, authority."""
    role = role_of(pair, fact.fact_id)
    with st.container(border=True):
        st.markdown(render.fact_head_md(fact, (role, ROLE_TONES.get(role, "gray")), status=status))
        render.html_block(fact_text_html(fact.content, side_spans(pair, side)))
        provenance_caption(fact)
        auth = pair.authority.get(fact.fact_id)
        if auth is not None:
            st.caption(f"authority = {render.md_escape(authority_arithmetic(auth))}")


def _row_style(differs: bool, width: int) -> list[str]:
    """The Styler properties of one evidence row: a background when the two facts differ in it."""
    return [f"background-color: {DIFFERS_BACKGROUND}" if differs else ""] * width


def evidence_table(frame: pd.DataFrame) -> None:
    """The evidence (:func:`crp_ui.conflict_case.pair_evidence`) as a table: field | A | B | ≠, the rows
    whose values differ highlighted and flagged (cells Markdown-escaped: ``st.table`` renders Markdown)."""
    flags = [bool(d) for d in frame["differs"]]
    shown = render.table_frame(frame.assign(differs=["≠" if d else "" for d in flags]))
    shown.columns = pd.Index(["field", "A", "B", "differs"])
    styled = shown.style.apply(lambda row: _row_style(flags[int(row.name)], len(row)), axis=1)
    st.table(styled, border="horizontal", hide_index=True)


def pair_case(
    pair: ConflictPair,
    kb: KnowledgeBase,
    statuses: Mapping[str, str],
    *,
    now: datetime,
    config: CRPConfig,
    key: str = "timestrip",
) -> None:
    """Both facts side by side (texts with the differing tokens marked, role, authority arithmetic), then
    every field that decides the case, the fields that differ highlighted. ``kb`` is the CKF as loaded,
    read at ``now`` under ``config``; ``statuses`` the operators' statuses in force. The winner's flags (a close
    call, both facts expired) come first, the winner over time last (:mod:`crp_ui.time_strip`; ``key`` prefixes
    its elements' keys, so the same pair can be drawn in two places of a page)."""
    if kb.get(pair.fact_a) is not None and kb.get(pair.fact_b) is not None:
        time_strip.flag_notes(pair, kb, statuses, now=now, config=config)
    for column, fid, side in zip(st.columns(2), (pair.fact_a, pair.fact_b), ("a", "b")):
        with column:
            fact = kb.get(fid)
            if fact is None:
                st.markdown(f"{render.md_code(fid)}: not in this CKF")
            else:
                _side(pair, fact, side, statuses.get(fid, fact.status))
    evidence = pair_evidence(pair, kb, statuses, now=now, config=config)
    evidence_table(evidence)
    differ = differing_fields(evidence)
    st.caption(
        f"Fields that differ (highlighted): {render.md_escape(', '.join(differ))}"
        if differ
        else "No deciding field differs: only the texts do."
    )
    if kb.get(pair.fact_a) is not None and kb.get(pair.fact_b) is not None:
        time_strip.pair_time_section(pair, kb, statuses, now=now, config=config, key=key)


def authority_table(pair: ConflictPair, *, key: str) -> None:
    """The SPEC-027 §2.3 components of both facts, one row per fact: each component (all in [0, 1]) as a
    number and a bar, the product, the arithmetic and the role."""
    frame = authority_frame(pair)
    config: dict[str, object] = {
        part: st.column_config.ProgressColumn(label, format="%.4f", min_value=0.0, max_value=1.0)
        for part, label in AUTHORITY_PARTS
    }
    config["arithmetic"] = st.column_config.TextColumn("arithmetic", width="medium")
    st.caption("authority = source authority × recency factor × importance")
    render.dataframe(frame, hide_index=True, width="stretch", key=key, column_config=config)
    # the two authorities as bars coloured by each fact's role (winner / loser / tie), never by side
    st.plotly_chart(charts.authority_bars(pair), width="stretch", key=key + ".bars")


def queue_case(
    pair: ConflictPair,
    kb: KnowledgeBase,
    statuses: dict[str, str],
    *,
    now: datetime,
    config: CRPConfig,
    key: str,
) -> None:
    """The pair's case as the triage queue shows it: patterns, both sides and the evidence, the outcome,
    then the authority components (``key`` names the table's element)."""
    patterns_line(pair)
    pair_case(pair, kb, statuses, now=now, config=config, key=key + ".time")
    outcome_line(pair)
    authority_table(pair, key=key)


def sdk_block(rec: PairAgreement, key: str) -> None:
    """For a CKF read from a crprotocol SDK snapshot, the SDK's supersession against SPEC-027: on its own
    (the fair comparison) and as loaded."""
    own, loaded = sdk_verdict_lines(rec)
    st.markdown(f"**{SDK_LABELS[rec.independent.verdict]}** · {render.md_escape(own)}")
    st.caption(render.md_escape(loaded))
    with st.expander("Authority on its own (the SDK had not decided)"):
        render.dataframe(
            sdk_authority_frame(rec),
            hide_index=True,
            width="stretch",
            key=key + ".table",
            column_config={
                c: st.column_config.NumberColumn(format="%.4f")
                for c in ("source_authority", "recency_factor", "importance_weight", "authority")
            },
        )

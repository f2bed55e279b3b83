"""The Story page: what SPEC-027 changes for the current scenario, told for a product manager or a
compliance officer. The question in words; the three fixes as cards with the before and after numbers
(bad in red, good in green); the facts SPEC-027 left out, as their text (the fact id and the reason on
hover); the details behind toggles; and the same before / after over every scenario of the chosen suite
as one chart and one table. Every figure comes from ``crp_core.before_after`` /
``crp_core.suite_before_after``: the page explains, it never recomputes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from crp_core import (
    FANOUT_REACHING,
    BeforeAfter,
    Corpus,
    CRPError,
    DecisionSet,
    EnvelopeChange,
    LabelMarks,
    suite_before_after,
)

from . import before_after_view, labels_view, render, suite_source
from .before_after_view import SIDE_COLOURS

K = "crp.story."
#: the three SPEC-027 fixes: card title, the figure (index into SideNumbers.reaching_model) it is judged by
FIXES: tuple[tuple[str, int, str], ...] = (
    ("Expired facts", 0, "expired facts handed to the model"),
    ("Contradictions", 2, "contradictory pairs handed to the model"),
    ("Fan-out race", 3, FANOUT_REACHING),
)
#: what a card's figure is counted on, where another page counts something close to it
_COUNTED_ON = {
    "Fan-out race": "; each side races its own run's candidates, so the Fan-out page's naive race (of the "
    "SPEC-027 run's candidates) can count otherwise",
    "Contradictions": "; a pair counts when both its facts are packed. The Overview's 'conflict pairs' also count "
    "those stage 4 resolved",
}
#: the headline sentence of each card (BeforeAfter.headlines order: fan-out, contradictions, stale)
_HEADLINE_OF = {"Fan-out race": 0, "Contradictions": 1, "Expired facts": 2}


def coloured(before: int, after: int) -> str:
    """``before → after`` as Markdown: the worse side red, the better green, equal numbers plain (numbers
    only, no data text)."""
    if after < before:
        return f":red[**{before}**] → :green[**{after}**]"
    if after > before:
        return f":green[**{before}**] → :red[**{after}**]"
    return f"**{before}** → **{after}**"


def fix_cards(ba: BeforeAfter) -> None:
    """One bordered card per SPEC-027 fix: its number before → after and the one-sentence headline."""
    headlines = ba.headlines()
    cols = st.columns(len(FIXES))
    for col, (title, idx, what) in zip(cols, FIXES):
        b, a = ba.before.reaching_model[idx], ba.after.reaching_model[idx]
        with col.container(border=True):
            st.markdown(f"#### {title}")
            if idx == 3 and ba.before.fanout_duplicates is None:
                st.markdown("This scenario does not fan out.")
            else:
                st.markdown(f"### {coloured(int(b), int(a))}")
            st.caption(what + " (without SPEC-027 → with SPEC-027)" + _COUNTED_ON.get(title, ""))
            st.markdown(render.md_escape(headlines[_HEADLINE_OF[title]][1]))


#: badge tone of a packed fact's SPEC-027 recency state (a fresh fact carries none)
_RECENCY_TONES = {"expired": "orange", "ageing": "gray"}


#: under "What it packed in their place" when an expired fact is among them
EXPIRED_ENTERED = (
    "An expired fact here is packed at the stale floor's weight: SPEC-027 ranks an expired fact down and never "
    "excludes it (§3.2: it may be the only fact on a topic), so it is packed when the envelope has room after the "
    "fresher candidates. A smaller envelope_fact_budget or a higher cdr_min_relevance keeps such facts out; each "
    "fact's reason is on hover."
)


def recency_badge(ba: BeforeAfter | None, fact_id: str) -> str:
    """`` :orange-badge[expired · recency 0.30]`` for an expired fact (past its TTL or STALE), a gray one for an
    ageing fact, "" for a fresh one: the SPEC-027 factor the run gave it (numbers only, no data text)."""
    state = ba.recency_state(fact_id) if ba is not None else "fresh"
    if state not in _RECENCY_TONES:
        return ""
    factor = ba.spec027_recency.get(fact_id) if ba is not None else None
    weight = f" · recency {factor:.2f}" if factor is not None else ""
    return f" :{_RECENCY_TONES[state]}-badge[{state}{weight}]"


def change_lines(
    changes: Sequence[EnvelopeChange], limit: int = 12, marks: LabelMarks | None = None, ba: BeforeAfter | None = None
) -> None:
    """Each fact as its text, the id, kind and reason on hover (``help=``); inert Markdown. A near-copy of a
    packed fact says so where it is read: the two lists would otherwise show the same sentence twice. A fact the
    scenario labels carries its mark as a badge (a must_include fact SPEC-027 left out reads MISSING, in red:
    "kept away" is no success there); an expired or ageing fact its SPEC-027 recency (an expired fact packed in
    a freed slot is the backfill's: SPEC-027 weights it down, it never excludes it)."""
    for c in changes[:limit]:
        copy = " :gray[(a near-copy of a fact packed in its place)]" if c.kind == "duplicate" else ""
        mark = marks.get(c.fact_id) if marks is not None else None
        badge = f" :{labels_view.MARK_TONES.get(mark.kind, 'gray')}-badge[label: {mark.kind}]" if mark else ""
        badge += recency_badge(ba, c.fact_id)
        st.markdown(
            f"- {render.md_escape(c.content)}{copy}{badge}",
            help=render.md_escape(f"{c.fact_id} · {c.kind}: {c.reason}" + (f" · label: {mark.reason}" if mark else "")),
        )
    if len(changes) > limit:
        st.caption(f"…and {len(changes) - limit} more (the Tuning page's Before / after tab lists every one).")


def scenario_story(ba: BeforeAfter, marks: LabelMarks | None = None) -> None:
    """The current scenario: its question, the three cards, the facts left out and added (with the scenario's
    label marks, when it has labels), the details."""
    query = ba.full.scenario.query if ba.full.scenario is not None else ""
    st.markdown(f"#### “{render.md_escape(query)}”")
    st.caption(
        "The same question answered twice from the same knowledge base: with the older retrieval "
        "(SPEC-024 only) and with the three SPEC-027 fixes."
    )
    fix_cards(ba)
    left, right = st.columns(2)
    with left.container(border=True):
        st.markdown("**What SPEC-027 kept away from the model**")
        if ba.removed:
            change_lines(ba.removed, marks=marks, ba=ba)
        else:
            st.markdown("Nothing: every fact the older retrieval packed is still packed.")
    with right.container(border=True):
        st.markdown("**What it packed in their place**")
        if ba.entered:
            change_lines(ba.entered, marks=marks, ba=ba)
            if any(ba.recency_state(c.fact_id) == "expired" for c in ba.entered):
                st.caption(EXPIRED_ENTERED)
        else:
            st.markdown("Nothing new.")
    with st.expander("Details: the numbers side by side"):
        render.dataframe(before_after_view.before_after_frame(ba), hide_index=True, width="stretch")
        st.plotly_chart(before_after_view.before_after_bars(ba), width="stretch", key=K + "bars")


def suite_figure(totals: Mapping[str, Sequence[int]]) -> go.Figure:
    """Grouped bars of what reaches the model over the whole suite, bad / good colours."""
    measures = ["expired facts", "ageing facts", "contradictory pairs", "fan-out duplicates"]
    fig = go.Figure()
    for side, ys in totals.items():
        fig.add_trace(
            go.Bar(
                x=measures,
                y=list(ys),
                name=side,
                marker_color=SIDE_COLOURS[side],
                text=list(ys),
                textposition="outside",
            )
        )
    top = max([1, *(v for ys in totals.values() for v in ys)])
    fig.update_yaxes(range=[0, top * 1.25 + 0.5], title_text="count over the suite", tickformat="d")
    fig.update_layout(barmode="group", height=360, margin=dict(l=60, r=10, t=40, b=10), legend=dict(orientation="h"))
    return fig


def suite_frame(entries: Sequence[tuple[str, BeforeAfter]]) -> pd.DataFrame:
    """One row per scenario: its question and each figure before → after."""
    rows = []
    for name, ba in entries:
        b, a = ba.before, ba.after
        dup = (
            "no fan-out"
            if b.fanout_duplicates is None
            else f"{b.duplicates_reaching_model} → {a.duplicates_reaching_model}"
        )
        rows.append(
            {
                "scenario": name,
                "question": ba.full.scenario.query if ba.full.scenario is not None else "",
                "expired": f"{len(b.expired_in_envelope)} → {len(a.expired_in_envelope)}",
                "contradictory pairs": f"{len(b.contradictory_pairs)} → {len(a.contradictory_pairs)}",
                FANOUT_REACHING: dup,
                "tokens": f"{b.tokens_used} → {a.tokens_used}",
                "left out by operators": sum(1 for c in ba.removed if c.kind == "operator decision"),
            }
        )
    return pd.DataFrame(rows)


def suite_story(corpus: Corpus, decisions: DecisionSet | None, dkey: str) -> None:
    """The before / after over every scenario of the chosen suite (the Tuning page's suite choice)."""
    st.subheader("Every scenario of the suite")
    suite = suite_source.choose_suite("story")
    if suite is None:
        return
    store = st.session_state.setdefault(K + "suite", {})
    asked = st.button("Run every scenario both ways", key=K + "run", type="primary")
    if not asked and not store:
        st.caption(f"{len(suite)} scenario(s): each runs twice (SPEC-024 only and SPEC-027).")
        return
    got = suite_source.ready(corpus, suite, decisions, dkey)  # embeds the suite once (on demand)
    if got is None:
        return
    prepared, config, key = got
    if key not in store:
        if not asked:
            st.caption("The suite or the configuration changed: run it again to see its numbers.")
            return
        try:
            with st.spinner(f"Running {len(prepared)} scenarios both ways…"):
                store.clear()
                store[key] = suite_before_after(prepared, config, decisions=decisions)
        except CRPError as exc:
            st.error(f"Refused: {render.md_escape(exc)}")
            return
    result = store[key]
    st.plotly_chart(suite_figure(result.totals()), width="stretch", key=K + "suite_bars")
    render.dataframe(
        suite_frame(result.entries),
        hide_index=True,
        width="stretch",
        column_config={
            "question": st.column_config.TextColumn(width="large"),
            "left out by operators": st.column_config.NumberColumn(
                help="facts an operator's triage decision left out (not Fact Authority Resolution)"
            ),
        },
    )

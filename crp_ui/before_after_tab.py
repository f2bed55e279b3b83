"""The Tuning page's Before / after tab: the same scenario through SPEC-024-only retrieval (no recency
factor, no contradiction resolution, naive fan-out) and through the full SPEC-027 pipeline
(``crp_core.before_after``), shown as one sentence per fix, the numbers, what SPEC-027 removed and
added and why, the token change, the contradictory pairs and fan-out duplicates of each side and both
envelopes; downloadable as a self-contained HTML report (``crp_core.build_html_report``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sized
from typing import Any, cast

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from crp_core import (
    FANOUT_DUPLICATES,
    BeforeAfter,
    Corpus,
    CRPConfig,
    CRPError,
    DecisionSet,
    PipelineResult,
    ReportInputs,
    Scenario,
    ScenarioInput,
    before_after,
    build_html_report,
    config_changes,
    decision_lines,
    format_timestamp,
    reproduce_command,
    set_args_for,
)

from . import cache, glossary, render, state
from . import tuning_view as tv
from .fanout_steps import REACHING_MODEL
from .tuning_widgets import inputs_key, scenario_vectors

K = "crp.tuning."
K_BA = K + "before_after"  # {inputs key: BeforeAfter}


def before_after_tab(
    corpus: Corpus,
    scenario: Scenario,
    config: CRPConfig,
    result: PipelineResult,
    decisions: Mapping[str, Any] | None,
    dkey: str,
    ds: DecisionSet,
) -> None:
    """The tab: a fan-out width for this view, both runs (kept for the last inputs), the report. ``decisions``:
    the pair decisions as the runs take them; ``ds``: the decisions in force, which the report lists."""
    st.caption(
        "The same scenario through SPEC-024-only retrieval (no recency factor, no contradiction "
        "resolution, naive fan-out) and through the full SPEC-027 pipeline."
    )
    default = int(scenario.fanout_width or 0)
    linked, refused = state.view_number("ba_width", default)  # the link's width (?ba_width=), else the scenario's
    if refused:
        st.warning(f"Link parameter ignored: {render.md_escape(refused)}")
    width = int(
        st.number_input(
            "Fan-out width for this view",
            min_value=0,
            max_value=12,
            value=int(linked),
            step=1,
            key=f"{K}ba_width.{state.gen('scenario')}",
            help="The scenario's width by default; 0 or 1 = no fan-out.",
        )
    )
    state.set_view_number("ba_width", width, default)
    ba = kept_before_after(corpus, scenario, config, result, decisions, dkey, width)
    if ba is None:
        return
    before_after_view(ba)
    _report_button(ba, ds if ds.count else None)


def kept_before_after(
    corpus: Corpus,
    scenario: Scenario,
    config: CRPConfig,
    result: PipelineResult,
    decisions: Mapping[str, Any] | None,
    dkey: str,
    width: int,
) -> BeforeAfter | None:
    """Both runs of these inputs, kept for the last inputs of the session (the tab and the story page
    share them); None, with the refusal shown, when the input is refused."""
    key = inputs_key(corpus, scenario, config, dkey) + f"|w{width}"
    store = state.kept_dict(K_BA)
    ba = store.get(key)
    if ba is None:
        try:
            with st.spinner("Running both pipelines…"):
                ba = before_after(
                    corpus,
                    scenario,
                    config,
                    vectors=scenario_vectors(corpus, scenario),
                    decisions=decisions,
                    fanout_width=width,
                    embedder=cache.embedder_for(corpus),
                    full=result if width == int(scenario.fanout_width or 0) else None,
                )
        except CRPError as exc:
            st.error(f"Refused: {render.md_escape(exc)}")
            return None
        store.clear()
        store[key] = ba
    return cast(BeforeAfter, ba)


def report_inputs(ba: BeforeAfter, decisions: DecisionSet | None, name: str, label: str) -> ReportInputs:
    """What the dashboard's report ran on; its command names the CKF and scenario by the names shown
    here (the reader runs it on their copies of those files)."""
    full = ba.full
    kb = full.corpus.kb
    lines, in_force = decision_lines(decisions)
    query = full.scenario.query if full.scenario is not None else ""
    command = reproduce_command(
        label,
        scenario=name,
        set_args=set_args_for(full.config),
        now=format_timestamp(full.now),
        fanout_width=ba.fanout_width,
        out=f"crp-before-after-{name.rsplit('.', 1)[0] or 'scenario'}.html",
        no_triage_db=not in_force,
    )
    return ReportInputs(
        ckf_label=label,
        ckf_fingerprint=kb.fingerprint,
        ckf_facts=len(kb),
        scenarios=(ScenarioInput(name, query, format_timestamp(full.now), ba.fanout_width),),
        config_changes=config_changes(full.config),
        decisions=lines,
        decisions_in_force=in_force,
        decisions_source="this dashboard's triage database (the command reads it from $CRP_INSPECT_TRIAGE_DB)"
        if in_force
        else "",
        command=command,
    )


def _report_button(ba: BeforeAfter, decisions: DecisionSet | None) -> None:
    name = state.get_scenario_name() or "scenario"
    label = state.get_ckf_label()

    def report() -> str:
        return build_html_report(
            ba,
            ckf_label=label,
            scenario_name=name,
            terms=glossary.report_terms(),
            inputs=report_inputs(ba, decisions, name, label),
        )

    stem = name.rsplit(".", 1)[0] or "scenario"
    st.download_button(
        "Download the HTML report",
        data=report,
        file_name=f"crp-before-after-{stem}.html",
        mime="text/html",
        key=K + "ba_report",
        type="primary",
        on_click="ignore",
        help="One self-contained file for stakeholders: the headline per fix, what was removed and "
        "why, the token change, the numbers and both envelopes; its charts are inline SVG, it "
        "fetches nothing and stays under 1 MB.",
    )


def _wrapped(frame: pd.DataFrame) -> None:
    """A short list shown whole: ``st.table`` wraps long cells and sizes to its content; it renders
    cells as Markdown, so the text goes through ``render.table`` (escaped)."""
    render.table(frame, hide_index=True)


def _metrics(ba: BeforeAfter) -> None:
    """The three fixes' figures in the cards' order (fan-out, contradictions, stale facts), each in a column
    wide enough for its whole name; the context figures (ageing facts, overlap) in a row below."""
    b, a = ba.before, ba.after
    fixes, context = st.columns(3), st.columns(3)
    if a.fanout_duplicates is None:
        fixes[0].metric(REACHING_MODEL, "no fan-out", help=glossary.help("fan-out duplicates"))
    else:
        reaching, before = a.duplicates_reaching_model or 0, b.duplicates_reaching_model or 0
        fixes[0].metric(
            REACHING_MODEL,
            reaching,
            delta=reaching - before,
            delta_color="inverse",
            help=f"SPEC-027: {a.fanout_duplicates} {FANOUT_DUPLICATES} found at fan-in, {a.removed_at_fan_in or 0} "
            f"removed there; SPEC-024 only: {before} (the naive race removes none). "
            + glossary.help("fan-out duplicates"),
        )
    _count(
        fixes[1],
        "contradictory pairs",
        b.contradictory_pairs,
        a.contradictory_pairs,
        glossary.help("contradictory pair"),
    )
    _count(
        fixes[2],
        "expired in envelope",
        b.expired_in_envelope,
        a.expired_in_envelope,
        glossary.help("expired vs ageing"),
    )
    ageing = "Within their TTL, partly weighted down: not a defect."
    _count(context[0], "ageing in envelope", b.ageing_in_envelope, a.ageing_in_envelope, ageing, better=False)
    context[1].metric("overlap (Jaccard)", f"{ba.overlap:.2f}", help=glossary.help("Jaccard / overlap"))


def _count(
    column: DeltaGenerator, label: str, before: Sized, after: Sized, explained: str, *, better: bool = True
) -> None:
    """One figure counted on both sides: SPEC-027's count, its difference from SPEC-024-only's (fewer is
    better, coloured, when ``better``), both in the help with ``explained``."""
    column.metric(
        label,
        len(after),
        delta=len(after) - len(before),
        delta_color="inverse" if better else "off",
        help=f"SPEC-027; SPEC-024 only: {len(before)}. {explained}",
    )


def _numbers(ba: BeforeAfter) -> None:
    render.dataframe(
        tv.before_after_frame(ba),
        hide_index=True,
        key=K + "ba_numbers",
        column_config=glossary.with_help(
            ["measure"],
            {
                "measure": st.column_config.TextColumn(
                    "measure",
                    help="expired / ageing: SPEC-027 recency state (see the Glossary); the rest "
                    "counted in the envelope handed to the model",
                )
            },
        ),
    )
    figs = cache.by_identity("before_after_figures", ba, tv.before_after_figures)
    c = st.columns(2)
    for i, fig in enumerate(figs):
        c[i % 2].plotly_chart(fig, width="stretch", key=f"{K}ba_fig{i}")


def _changes(ba: BeforeAfter) -> None:
    """What SPEC-027 removed and added (with why), and why the token count changed."""
    st.subheader(f"What SPEC-027 removed, and why ({len(ba.removed)})")
    if ba.removed:
        _wrapped(tv.changes_frame(ba.removed))
        st.caption(
            render.md_escape(
                "kind: conflict loser = "
                + glossary.help("Fact Authority Resolution")
                + " · operator decision = left out by a triage decision (a person's, not the algorithm's)"
                + " · expired / ageing = "
                + glossary.help("expired vs ageing")
            )
        )
    else:
        st.caption("Nothing: every fact the SPEC-024-only run packed is still packed.")
    st.subheader(f"What SPEC-027 added ({len(ba.entered)})")
    if ba.entered:
        _wrapped(tv.changes_frame(ba.entered))
    else:
        st.caption("Nothing new.")
    if ba.tokens is not None:
        st.subheader("Why the token count changed")
        st.markdown(render.md_escape(ba.tokens.sentence()))


def _pairs_and_duplicates(ba: BeforeAfter) -> None:
    b, a = ba.before, ba.after
    st.subheader("Contradictory pairs handed to the model")
    for col, side in zip(st.columns(2), (b, a)):
        with col:
            st.markdown(f"**{render.md_escape(side.label)}** ({len(side.contradictory_pairs)})")
            if side.contradictory_pairs:
                _wrapped(tv.pairs_frame(ba, side))
            else:
                st.caption("None.")
    if b.fanout_duplicates is None:
        return
    st.subheader(f"{FANOUT_DUPLICATES.capitalize()} (one count everywhere: cross-branch duplicates at fan-in)")
    st.caption(render.md_escape(glossary.help("fan-out duplicates")))
    for col, side in zip(st.columns(2), (b, a)):
        with col:
            packed = len(side.packed_duplicate_facts)
            st.markdown(
                f"**{render.md_escape(side.label)}**: {side.fanout_duplicates} "
                f"({packed} of their facts in the envelope)"
            )
            if side.duplicates:
                _wrapped(tv.duplicates_frame(ba, side))


def _envelopes(ba: BeforeAfter) -> None:
    b, a = ba.before, ba.after
    st.subheader("The two envelopes")
    cc = glossary.with_help(
        tv.SIDE_COLUMNS,
        {
            "content": st.column_config.TextColumn("content", width="large"),
            "SPEC-027 recency": st.column_config.NumberColumn("SPEC-027 recency", format="%.3f"),
        },
    )
    sides = (("SPEC-024 only", b, a, "ba_before"), ("SPEC-027", a, b, "ba_after"))
    for col, (title, side, other, key) in zip(st.columns(2), sides):
        with col:
            st.markdown(f"**{title}** ({len(side.envelope)} facts, {side.tokens_used} tokens)")
            render.dataframe(
                tv.side_envelope_frame(ba, side, other.envelope),
                hide_index=True,
                width="stretch",
                key=K + key,
                column_config=cc,
            )


def before_after_view(ba: BeforeAfter) -> None:
    """The before / after numbers, headline, removed facts, token change and both envelopes."""
    st.subheader("In one sentence per fix")
    for col, (fix, text) in zip(st.columns(3), ba.headlines()):
        with col.container(border=True):
            st.markdown(f"**{render.md_escape(fix)}**")
            st.markdown(render.md_escape(text))
    _metrics(ba)
    _numbers(ba)
    _changes(ba)
    _pairs_and_duplicates(ba)
    _envelopes(ba)

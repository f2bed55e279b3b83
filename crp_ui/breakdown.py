"""Streamlit pieces shared by the run pages (Overview, Score breakdown, Graph, Envelope, Fan-out, Tuning).

Pages read state only through :mod:`crp_ui.state`; this module adds the run guard
(:func:`require_result`), the fact picker kept in sync with ``state.select_fact`` and the fact
detail (card + CDR product). Fact text is rendered escaped (``render.fact_card`` /
``render.md_escape`` / dataframes), never with ``unsafe_allow_html`` on raw content.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pandas as pd
import streamlit as st

from crp_core import (
    Corpus,
    CRPError,
    DecisionSet,
    Fact,
    GateCounts,
    PipelineResult,
    Scenario,
    changed_by_decision,
    gate_note,
)

from . import charts, decisions, render, state, tables
from .chart_style import rule_words
from .provenance import provenance_caption

#: number formats of the breakdown columns shown in dataframes
NUMBER_FORMATS = {
    "cdr_score": "%.4f",
    "importance_weight": "%.3f",
    "relevance": "%.4f",
    "residual_pull": "%.4f",
    "effective_relevance": "%.4f",
    "coverage_score": "%.4f",
    "coverage_penalty": "%.4f",
    "novelty": "%.4f",
    "recency_factor": "%.4f",
    "age_days": "%.1f",
    "ttl_days": "%.1f",
    "ngram_penalty": "%.2f",
    "bridge_value": "%.4f",
    "connector_score": "%.4f",
    "score": "%.4f",
    "factor": "%.4f",
    "multiplier": "%.4f",
    "running_product": "%.6f",
    "mean_path_weight": "%.4f",
    "weight": "%.4f",
    "time_ms": "%.2f",
}


def step_table(steps: pd.DataFrame) -> None:
    """The CDR product step by step as a static table: its labels carry their formulas and wrap whole (a
    data grid would cut them in this half-width column). The cells hold the stored factors' values, shown
    rounded; the stored score's row multiplies nothing (an empty cell)."""
    shown = pd.DataFrame(
        {"× multiplier": steps["multiplier"].to_numpy(), "running product": steps["running_product"].to_numpy()},
        index=pd.Index(steps["step"].tolist(), name="step"),
    )
    st.table(shown.style.format({"× multiplier": "{:.4f}", "running product": "{:.6f}"}, na_rep=""))


def column_config(df: pd.DataFrame) -> dict[str, Any]:
    """NumberColumn formats for the known numeric columns of ``df``; ``content`` as a wide text column."""
    cfg: dict[str, Any] = {}
    for col in df.columns:
        if col in NUMBER_FORMATS:
            cfg[col] = st.column_config.NumberColumn(col, format=NUMBER_FORMATS[col])
    if "content" in df.columns:
        cfg["content"] = st.column_config.TextColumn("content", width="large")
    if "reason" in df.columns:
        cfg["reason"] = st.column_config.TextColumn("reason", width="medium")
    return cfg


#: the key of the inspected fact's card (its container has the class ``st-key-crp-fact-card``)
FACT_CARD = "crp-fact-card"


def require_result() -> PipelineResult:
    """The pipeline result of the current CKF / scenario / config, or stop the page with a message."""
    state.init_state()
    if state.get_ckf() is None:
        st.info("No CKF loaded: pick a bundled sample or upload a CKF in the sidebar.")
        st.stop()
    if state.get_scenario() is None:
        st.info("No scenario: pick or upload one in the sidebar (Scenario).")
        st.stop()
    try:
        result: PipelineResult | None = state.get_result()
    except CRPError as exc:
        st.error(f"The pipeline refused this input: {render.md_escape(exc)}")
        st.stop()
    if result is None:
        st.info("Nothing to show yet.")
        st.stop()
    return result


def require_run_inputs() -> tuple[Corpus, Scenario, DecisionSet]:
    """The prepared corpus, the scenario and the operator decisions in force of the current run (after
    :func:`require_result`), or stop the page with the refusal shown."""
    try:
        corpus = state.get_corpus()
        ds = decisions.decision_set()
    except CRPError as exc:
        st.error(render.md_escape(exc))
        st.stop()
    scenario = state.get_scenario()
    if corpus is None or scenario is None:
        st.stop()
    return corpus, scenario, ds


def run_caption(result: PipelineResult) -> None:
    """One line: CKF, scenario, now, config changes."""
    name = state.get_scenario_name() or "uploaded / edited scenario"
    diff = len(result.config.diff(type(result.config)()))
    st.caption(
        f"CKF **{render.md_escape(state.get_ckf_label())}** · scenario **{render.md_escape(name)}**"
        f"{' (edited)' if state.scenario_edited() else ''} · now {result.now.isoformat()} · "
        f"{diff} config value(s) changed from the defaults"
    )
    clamps_notice(result)
    decisions_banner(result)


#: facts named one by one in the decisions banner (the rest are counted)
BANNER_NAMED = 6


def decisions_banner(result: PipelineResult) -> None:
    """The banner "N operator decisions applied; M facts suppressed or re-marked" on every page that shows a run,
    when the triage database holds decisions on facts of this CKF (they shape the run: statuses reach
    the corpus, pair decisions stage 4). Nothing when there are none."""
    from . import decisions

    kb = state.get_ckf()
    if kb is None:
        return
    try:
        summary = decisions.applied_summary(decisions.decision_set(), kb)
    except CRPError:  # the page's run has already said the database cannot be read
        return
    if not summary:
        return
    bits = [f"{fid} loses to {winner} where a run pairs them" for fid, winner in summary.suppressed.items()]
    bits += [f"{fid} {new} (was {old})" for fid, (old, new) in summary.remarked.items()]
    # the losers a decision chose: not those of an accept, which authority chose (crp_core.changed_by_decision)
    here = sorted(
        p.suppressed
        for p in result.resolution.pairs
        if p.suppressed and not p.skipped and changed_by_decision(p, result.config)
    )
    named = "; ".join(bits[:BANNER_NAMED]) + (
        f"; and {len(bits) - BANNER_NAMED} more" if len(bits) > BANNER_NAMED else ""
    )
    st.info(
        f"**{render.md_escape(decisions.applied_sentence(summary))}** (Conflicts page)"
        + (f": {render.md_escape(named)}." if named else ".")
        + (f" In this run: {render.md_escape(', '.join(here))} suppressed by a decision." if here else ""),
        icon=":material/gavel:",
    )


def clamps_notice(result: PipelineResult) -> None:
    """The settings this run used at another value than asked because the data holds less (or a search
    needs more): said on every page that shows a run (docs/decisions/hardening.md, clamping)."""
    clamps = result.clamps
    if not clamps:
        return
    asked = result.asked_clamps
    text = "; ".join(render.md_escape(c.message) for c in clamps)
    if asked:  # a value the user set was brought to the data: a visible warning
        st.warning(f"Settings adjusted to the data for this run: {text}")
    else:  # only defaults met a small CKF: a quiet line
        st.caption(f"Adjusted to the data: {text}")


def gate_caption(counts: GateCounts, threshold: float) -> tuple[str, str]:
    """The relevance gate in one short sentence with its figures (``counts``: :func:`crp_core.gate_counts`, the one
    count the CLI's summary gives too), and what they mean (the caption's help)."""
    n = counts.connectors
    chosen = "" if not n else " (1 chosen as a connector)" if n == 1 else f" ({n:,} chosen as connectors)"
    text = (
        f"Relevance gate {threshold:g}: {counts.passed:,} of {counts.retrieved:,} candidates passed, "
        f"{counts.below:,} below it{chosen}."
    )
    why = (
        f"cdr_min_relevance = {threshold:g}: a stage-1 candidate whose relevance is below it cannot be an anchor. "
        "The graph walk may still choose one as a connector, which is not gated (SPEC-025 §2.5); the others "
        f"({counts.gated_out:,} here) stay out of the envelope: their role is `gated` on the Score breakdown. "
        "The same count as `crp-inspect run`'s summary."
    )
    return text, why


def gate_notice(result: PipelineResult, *, key: str) -> None:
    """The relevance gate's note (:func:`crp_core.gate_note`: the envelope has room and the gate kept retrieved
    facts out) in a bordered box, with a button that sets the ``cdr_min_relevance`` it names as a sidebar
    edit; nothing when the gate is not why the envelope has room (docs/decisions/gate-note.md)."""
    note = gate_note(result)
    if note is None:
        return
    with st.container(border=True):
        st.caption(f":material/filter_alt: {render.md_escape(note.message)}")
        if st.button(
            f"Try cdr_min_relevance {note.suggested:.2f}",
            key=key,
            help="Sets it as a sidebar edit (Stage 1 · candidates): every page then runs with it; the sidebar "
            "resets it.",
        ):
            err = state.apply_config_edits({"cdr_min_relevance": note.suggested})
            if err:
                st.error(f"Not applied: {render.md_escape(err)}")
            else:
                st.rerun()


def known_conflict_banner(result: PipelineResult) -> None:
    """A data-quality warning when the envelope holds a fact that loses a known conflict (from the
    whole-CKF scan or an operator decision) to a fact outside it: beyond SPEC-027."""
    flags = result.known_conflicts
    if not flags:
        return
    lines = [
        f"{len(flags)} fact(s) of this run lose a known conflict to a fact the run did not select "
        f"(known_conflict_action = {render.md_escape(result.config.known_conflict_action)}):"
    ]
    lines += [f"- {render.md_escape(f.message)}" for f in flags]
    if result.config.known_conflict_action == "flag":
        lines.append(
            "\nTo act on them, set known_conflict_action in the sidebar's configuration: pull_winner (the winner "
            "takes the loser's slot) or drop_loser (the loser leaves the envelope); the Conflicts page holds "
            "each pair to triage."
        )
    st.warning("\n".join(lines), icon=":material/report:")


def _on_pick(key: str) -> None:
    state.select_fact(st.session_state.get(key))


def fact_picker(
    ids: Sequence[str], *, label: str = "Inspect fact", key: str = "crp.page.pick", help: str | None = None
) -> str | None:
    """A selectbox over ``ids`` showing (and setting) the selected fact of :mod:`crp_ui.state`.

    The widget key carries the current selection, so a selection made elsewhere (table click,
    deep link, another page) is always what the box shows.
    """
    current = state.selected_fact()
    options = list(ids)
    if current is not None and current not in options:
        options = [current] + options
    wkey = f"{key}.{current}"
    st.selectbox(
        label,
        options,
        index=options.index(current) if current in options else None,
        key=wkey,
        on_change=_on_pick,
        args=(wkey,),
        placeholder="choose a fact",
        help=help,
        format_func=render.plain,
    )
    return current


def fact_meta(fact: Fact) -> dict[str, str | float]:
    """Source and dates of a fact, for its card."""

    def ts(v: datetime | None) -> str:
        return v.isoformat() if v is not None else "unknown"

    ttl = fact.ttl_text if fact.ttl_text else ("none (timeless)" if fact.ttl_kind == "timeless" else "default")
    meta: dict[str, str | float] = {
        "source_id": fact.source_id or "-",
        "source_location": fact.source_location or "-",
        "ingested_at": ts(fact.ingested_at),
        "modified_at": ts(fact.modified_at),
        "ttl": ttl,
    }
    if fact.importance_weight is not None:
        meta["importance (explicit)"] = fact.importance_weight
    return meta


def fact_card(fact: Fact, *, key: str | None = None) -> None:
    """The selected fact's card: id, badges, source and dates (:func:`fact_meta`), the text, and the SDK
    provenance of a fact from a crprotocol snapshot (:mod:`crp_ui.provenance`)."""
    with render.fact_card(fact, extra=fact_meta(fact), key=key):
        provenance_caption(fact)


def fact_detail(result: PipelineResult, fact_id: str, frame: pd.DataFrame) -> None:
    """Card (escaped text, source, dates, SDK provenance), where it ended and why, and the CDR product step
    by step."""
    kb = result.corpus.kb
    fact = kb.get(fact_id)
    if fact is None:
        st.warning(f"Fact {render.md_escape(fact_id)} is not in the loaded CKF.")
        return
    hit = frame[frame["fact_id"] == fact_id]
    left, right = st.columns([5, 6])
    with left:
        fact_card(fact, key=FACT_CARD)
        if not len(hit):
            st.info("This fact was not scored in this run (not among the candidates nor the connector candidates).")
            return
        row = hit.iloc[0]
        st.markdown(
            f"**{render.md_escape(row['outcome'])}** · role **{render.md_escape(row['role'])}** — "
            f"{render.md_escape(row['reason'])}"
        )
        age = "unknown" if pd.isna(row["age_days"]) else f"{row['age_days']:.1f} d"
        ttl = "no expiry" if pd.isna(row["ttl_days"]) or row["ttl_days"] == float("inf") else f"{row['ttl_days']:.1f} d"
        st.caption(
            f"relevance {row['relevance']:.4f} · residual pull {row['residual_pull']:.4f} · "
            f"coverage score {row['coverage_score']:.4f} (penalty {row['coverage_penalty']:.4f}) · "
            f"age {age}, TTL {ttl} ({render.md_escape(row['ttl_source'])}), "
            f"{render.md_escape(rule_words(str(row['recency_rule'])))} · n-gram overlap {int(row['ngram_overlap'])}"
        )
        steps = tables.cdr_steps(row)
        step_table(steps)
    with right:
        st.plotly_chart(
            tables.memo(result, ("waterfall", fact_id), lambda: charts.cdr_waterfall(steps, fact_id)),
            width="stretch",
            key=f"crp.page.waterfall.{fact_id}",
        )

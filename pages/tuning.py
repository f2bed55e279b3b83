"""Tuning and demo: what-if sweeps, comparing two configs, before / after SPEC-027.

Every run goes through the shell's state: the corpus with the operators' statuses
(``state.get_corpus``), their pair decisions (``crp_ui.decisions.pipeline_decisions``), the scenario and
the sidebar config. The scenario is embedded once per (corpus, scenario) for the sweeps; single runs use
the shell's result cache. Numbers come from ``crp_core.analysis.sweep`` / ``compare`` / ``baseline`` records,
frames and figures from ``crp_ui.tuning_view``.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import streamlit as st

from crp_core.config import CRPConfig, describe
from crp_core.corpus.prepared import Corpus
from crp_core.errors import ConfigError, CRPError
from crp_ui import breakdown, cache, glossary, render, shell, state, suite_tabs
from crp_ui import decisions as triage_decisions
from crp_ui import tuning_view as tv
from crp_ui.progress import Bar

K = "crp.tuning."
K_SWEEP = K + "sweep"  # (inputs key, SweepResult)
K_POINT = K + "point"  # selected sweep point index
K_CHART_POINT = K + "chart_point"  # last point picked on the chart
K_VECTORS = K + "vectors"  # (key, ScenarioVectors)
K_BA = K + "before_after"  # {key: BeforeAfter}
#: the tabs, in order; the selected one is the URL parameter TAB_PARAM (its label verbatim)
TABS = ("Sweep", "Suite", "Auto-tune", "Compare", "Before / after")
TAB_PARAM = "tab"


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()[:24]


def _embedder(corpus: Corpus) -> Any:
    return cache.embedder_for(corpus)


def _vectors(corpus: Corpus, scenario: Any) -> Any:
    """The scenario's vectors, embedded once per (corpus, scenario) in this session."""
    from crp_core.corpus.prepared import embed_scenario
    from crp_core.io.scenario import dump_scenario

    key = _digest(cache.corpus_digest(corpus), dump_scenario(scenario, "json"))
    got = st.session_state.get(K_VECTORS)
    if got is not None and got[0] == key:
        return got[1]
    v = embed_scenario(scenario, corpus, _embedder(corpus))
    st.session_state[K_VECTORS] = (key, v)
    return v


def _inputs_key(corpus: Corpus, scenario: Any, config: CRPConfig, dkey: str) -> str:
    from crp_core.io.scenario import dump_scenario

    # the scenario JSON (with its embeddings) and the TOML once per object, not on every rerun
    return _digest(
        cache.corpus_digest(corpus),
        str(cache.by_identity("scenario", scenario, lambda sc: dump_scenario(sc, "json"))),
        str(cache.by_identity("config", config, CRPConfig.to_toml)),
        scenario.now.isoformat() if scenario.now else "",
        dkey,
    )


# ---- Sweep ---------------------------------------------------------------------------------------
def sweep_tab(corpus: Corpus, scenario: Any, config: CRPConfig, decisions: Any, dkey: str) -> None:
    from crp_core.analysis.compare import compare_runs
    from crp_core.analysis.sweep import (
        check_key,
        current_value,
        sweep,
        sweepable_keys,
    )

    st.caption(
        "Pick one parameter and a range: the pipeline runs at each value (corpus, index, graph and the "
        "scenario's embeddings reused; only re-scored) and every measure is plotted against the value. "
        "The baseline is the run at the current sidebar config. Click a point (or pick a value below) "
        "to see that run's envelope diff."
    )
    keys = sweepable_keys()
    c1, c2, c3, c4 = st.columns([3, 2, 2, 2])
    key = c1.selectbox(
        "Parameter",
        keys,
        key=K + "key",
        help="Any configuration key (tables by source type "
        "as ttl_days.<type>), or the scenario's fanout_width. hnsw_m / hnsw_ef_construction "
        "are not offered: each value would rebuild the HNSW index.",
    )
    try:
        check_key(key)
        current = current_value(scenario, config, key)
    except ConfigError as exc:
        st.error(render.md_escape(exc))
        return
    doc = (
        "scenario field: fan-out width (0 or 1 = no fan-out)" if key == "fanout_width" else describe(key.split(".")[0])
    )
    c1.caption(f"{render.md_escape(doc)} · current value **{render.md_escape(tv.value_label(current))}**")
    got = suite_tabs.sweep_values(
        key, current, (c2, c3, c4), prefix=K, count=20, max_count=60, count_key=f"{K}count.{key}"
    )
    if got is None:
        return
    values = got
    inputs = _inputs_key(corpus, scenario, config, dkey)
    run = st.button(f"Run sweep ({len(values)} values)", type="primary", key=K + "run")
    if run:
        bar = Bar(f"Sweep of {key}", unit="runs")
        vectors = _vectors(corpus, scenario)

        def progress(done: int, total: int, value: Any) -> None:
            bar.step(done, total, f"{key} = {tv.value_label(value)}")

        try:
            res = sweep(
                corpus,
                scenario,
                config,
                key,
                values,
                vectors=vectors,
                decisions=decisions,
                progress=progress,
                embedder=_embedder(corpus),
            )
        except CRPError as exc:
            bar.empty()
            st.error(f"Sweep refused: {render.md_escape(exc)}")
            return
        bar.empty()
        st.session_state[K_SWEEP] = (inputs, res)
        st.session_state[K_POINT] = 0
        st.session_state.pop(K_CHART_POINT, None)
    res = suite_tabs.kept_result(
        K_SWEEP,
        inputs,
        empty="No sweep yet: choose a parameter and a range, then **Run sweep**.",
        stale="The CKF, scenario, sidebar config or operator decisions "
        "changed since this sweep was run: it shows the earlier inputs. Run the sweep again "
        "to update it.",
    )
    if res is None:
        return
    st.caption(
        f"{len(res.points)} values of **{render.md_escape(res.key)}** + the baseline run in "
        f"{res.total_ms / 1000:.2f} s (embedding {res.embed_ms:.0f} ms)"
        + (" · each value built its own similarity graph" if res.rebuilds_graph else "")
    )
    labels = [f"{i + 1}: {res.key} = {tv.value_label(p.value)}" for i, p in enumerate(res.points)]
    point = suite_tabs.pick_point(
        lambda sel: tv.sweep_figure(res, selected=sel), labels, prefix=K, label="Envelope diff of"
    )
    p = res.points[point]
    m = st.columns(5)
    m[0].metric("Jaccard vs baseline", f"{p.jaccard:.2f}")
    m[1].metric("facts entering", len(p.entering))
    m[2].metric("facts leaving", len(p.leaving))
    m[3].metric("conflicts resolved / tied", f"{p.conflicts_resolved} / {p.conflicts_unresolved}")
    m[4].metric("mean recency", "n/a" if math.isnan(p.mean_recency) else f"{p.mean_recency:.3f}")
    kb = corpus.kb
    diff = tv.envelope_diff_frame(res.baseline.envelope, p.envelope, kb)
    if p.result is not None and res.baseline.result is not None and (p.entering or p.leaving):
        cmp = compare_runs(res.baseline.result, p.result)
        diff.insert(
            2, "why", [cmp.explain(f) if ch != "kept" else "" for f, ch in zip(diff["fact_id"], diff["change"])]
        )
    st.dataframe(
        diff,
        hide_index=True,
        width="stretch",
        key=K + "diff",
        column_config={
            "content": st.column_config.TextColumn("content", width="large"),
            "why": st.column_config.TextColumn("why", width="large"),
        },
    )
    with st.expander("All points (table)"):
        frame = tv.sweep_frame(res).drop(columns=["x"])
        st.dataframe(
            frame, hide_index=True, width="stretch", key=K + "table", column_config=breakdown.column_config(frame)
        )


# ---- Compare -------------------------------------------------------------------------------------
def compare_tab(corpus: Corpus, scenario: Any, config: CRPConfig, result: Any, decisions: Any, dkey: str) -> None:
    from crp_core.analysis.compare import compare_runs

    st.caption(
        "Baseline: the defaults or a saved TOML (the scenario's own `config` table applies on top, as in "
        "the sidebar). Candidate: the current sidebar config. Ranks are CDR ranks among the gated-in "
        "candidates; the explain-diff names the factor whose change moved the fact's CDR score the most."
    )
    picked = suite_tabs.baseline_picker(K)
    if picked is None:
        return
    base = picked[1]
    try:
        if scenario.config:
            base = base.with_overrides(dict(scenario.config))
        base_result = cache.pipeline_result(
            corpus, scenario, base, state.get_now(), decisions=decisions, decisions_key=dkey
        )
    except CRPError as exc:
        st.error(f"The baseline run was refused: {render.md_escape(exc)}")
        return
    cmp = compare_runs(base_result, result)
    m = st.columns(5)
    m[0].metric("config keys changed", len(cmp.config_diff))
    m[1].metric("envelope overlap (Jaccard)", f"{cmp.jaccard:.2f}")
    m[2].metric("entering", len(cmp.entering))
    m[3].metric("leaving", len(cmp.leaving))
    m[4].metric("winner flips", len(cmp.flips))
    if cmp.config_diff:
        st.dataframe(tv.config_diff_frame(cmp.config_diff), hide_index=True, key=K + "cfgdiff")
    else:
        st.info("The two configs are equal: change a value in the sidebar (or upload another baseline).")
    st.subheader("Envelopes side by side")
    st.dataframe(tv.envelopes_side_by_side(cmp), hide_index=True, width="stretch", key=K + "sidebyside")
    st.subheader("Per-fact rank and score deltas")
    deltas = tv.fact_delta_frame(cmp)
    st.dataframe(
        deltas,
        hide_index=True,
        width="stretch",
        key=K + "deltas",
        column_config={
            c: st.column_config.NumberColumn(c, format="%.4f")
            for c in ("base score", "cand score", "score delta", "base recency", "cand recency")
        },
    )
    ids = list(deltas["fact_id"]) if len(deltas) else []
    if ids:
        fid = st.selectbox("Explain a fact", ids, key=f"{K}explain.{_digest(*ids[:50])}")
        st.info(render.md_escape(cmp.explain(fid)))
    st.subheader("Conflicts whose winner flips")
    if cmp.flips:
        st.dataframe(tv.flips_frame(cmp), hide_index=True, width="stretch", key=K + "flips")
    else:
        st.caption("No contradiction pair arbitrated in both runs changes its winner.")
    st.download_button(
        "Download the candidate config (TOML)",
        data=config.to_toml(),
        file_name="crp-config-candidate.toml",
        mime="application/toml",
        key=K + "toml",
        on_click="ignore",
    )


# ---- Before / after ------------------------------------------------------------------------------
def before_after_tab(corpus: Corpus, scenario: Any, config: CRPConfig, result: Any, decisions: Any, dkey: str) -> None:
    from crp_core.analysis.baseline import before_after
    from crp_core.analysis.html_report import build_html_report

    st.caption(
        "The same scenario through SPEC-024-only retrieval (no recency factor, no contradiction "
        "resolution, naive fan-out) and through the full SPEC-027 pipeline."
    )
    width = st.number_input(
        "Fan-out width for this view",
        min_value=0,
        max_value=12,
        value=int(scenario.fanout_width or 0),
        step=1,
        key=f"{K}ba_width.{state.gen('scenario')}",
        help="The scenario's width by default; 0 or 1 = no fan-out.",
    )
    key = _inputs_key(corpus, scenario, config, dkey) + f"|w{int(width)}"
    store = st.session_state.setdefault(K_BA, {})
    ba = store.get(key)
    if ba is None:
        try:
            with st.spinner("Running both pipelines…"):
                full = result if int(width) == int(scenario.fanout_width or 0) else None
                ba = before_after(
                    corpus,
                    scenario,
                    config,
                    vectors=_vectors(corpus, scenario),
                    decisions=decisions,
                    fanout_width=int(width),
                    embedder=_embedder(corpus),
                    full=full,
                )
        except CRPError as exc:
            st.error(f"Refused: {render.md_escape(exc)}")
            return
        store.clear()
        store[key] = ba
    _before_after_view(ba)
    name = state.get_scenario_name() or "scenario"
    label = state.get_ckf_label()

    def report() -> str:
        return build_html_report(ba, ckf_label=label, scenario_name=name, terms=glossary.report_terms())

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


def _wrapped(frame: Any) -> None:
    """A short list shown whole: ``st.table`` wraps long cells and sizes to its content (a dataframe cuts
    a long "why" at 1400 px); ``st.table`` renders cells as Markdown, so the text goes through
    ``render.table`` (escaped)."""
    render.table(frame, hide_index=True)


def _before_after_view(ba: Any) -> None:
    """The before / after numbers, headline, removed facts, token change and both envelopes."""
    from crp_core.records import FANOUT_DUPLICATES

    b, a = ba.before, ba.after
    st.subheader("In one sentence per fix")
    cols = st.columns(3)
    for col, (fix, text) in zip(cols, ba.headlines()):
        with col.container(border=True):
            st.markdown(f"**{render.md_escape(fix)}**")
            st.markdown(render.md_escape(text))
    m = st.columns(5)
    m[0].metric(
        "expired in envelope",
        len(a.expired_in_envelope),
        delta=len(a.expired_in_envelope) - len(b.expired_in_envelope),
        delta_color="inverse",
        help=f"SPEC-027; SPEC-024 only: {len(b.expired_in_envelope)}. " + glossary.help("expired vs ageing"),
    )
    m[1].metric(
        "ageing in envelope",
        len(a.ageing_in_envelope),
        delta=len(a.ageing_in_envelope) - len(b.ageing_in_envelope),
        delta_color="off",
        help=f"SPEC-027; SPEC-024 only: {len(b.ageing_in_envelope)}. Within their TTL, partly weighted "
        "down: not a defect.",
    )
    m[2].metric(
        "contradictory pairs",
        len(a.contradictory_pairs),
        delta=len(a.contradictory_pairs) - len(b.contradictory_pairs),
        delta_color="inverse",
        help=f"SPEC-027; SPEC-024 only: {len(b.contradictory_pairs)}. " + glossary.help("contradictory pair"),
    )
    if a.fanout_duplicates is None:
        m[3].metric(FANOUT_DUPLICATES, "no fan-out", help=glossary.help("fan-out duplicates"))
    else:
        m[3].metric(
            FANOUT_DUPLICATES,
            a.fanout_duplicates,
            delta=a.fanout_duplicates - (b.fanout_duplicates or 0),
            delta_color="inverse",
            help=f"SPEC-027; SPEC-024 only: {b.fanout_duplicates}. " + glossary.help("fan-out duplicates"),
        )
    m[4].metric("overlap (Jaccard)", f"{ba.overlap:.2f}", help=glossary.help("Jaccard / overlap"))
    st.dataframe(
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

    # the lists whose "why" and texts must be read whole: static tables, wrapped and sized to content
    st.subheader(f"What SPEC-027 removed, and why ({len(ba.removed)})")
    if ba.removed:
        _wrapped(tv.changes_frame(ba.removed))
        st.caption(
            render.md_escape(
                "kind: conflict loser = "
                + glossary.help("Fact Authority Resolution")
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

    st.subheader("Contradictory pairs handed to the model")
    left, right = st.columns(2)
    for col, side in ((left, b), (right, a)):
        with col:
            st.markdown(f"**{render.md_escape(side.label)}** ({len(side.contradictory_pairs)})")
            if side.contradictory_pairs:
                _wrapped(tv.pairs_frame(ba, side))
            else:
                st.caption("None.")
    if b.fanout_duplicates is not None:
        st.subheader(f"{FANOUT_DUPLICATES.capitalize()} (one count everywhere: cross-branch duplicates at fan-in)")
        st.caption(render.md_escape(glossary.help("fan-out duplicates")))
        left, right = st.columns(2)
        for col, side in ((left, b), (right, a)):
            with col:
                packed = len(side.packed_duplicate_facts)
                st.markdown(
                    f"**{render.md_escape(side.label)}**: {side.fanout_duplicates} "
                    f"({packed} of their facts in the envelope)"
                )
                if side.duplicates:
                    _wrapped(tv.duplicates_frame(ba, side))
    st.subheader("The two envelopes")
    cc = glossary.with_help(
        tv.SIDE_COLUMNS,
        {
            "content": st.column_config.TextColumn("content", width="large"),
            "SPEC-027 recency": st.column_config.NumberColumn("SPEC-027 recency", format="%.3f"),
        },
    )
    left, right = st.columns(2)
    with left:
        st.markdown(f"**SPEC-024 only** ({len(b.envelope)} facts, {b.tokens_used} tokens)")
        render.dataframe(
            tv.side_envelope_frame(ba, b, a.envelope),
            hide_index=True,
            width="stretch",
            key=K + "ba_before",
            column_config=cc,
        )
    with right:
        st.markdown(f"**SPEC-027** ({len(a.envelope)} facts, {a.tokens_used} tokens)")
        render.dataframe(
            tv.side_envelope_frame(ba, a, b.envelope),
            hide_index=True,
            width="stretch",
            key=K + "ba_after",
            column_config=cc,
        )


def main() -> None:
    st.title("Tuning")
    result = breakdown.require_result()
    breakdown.run_caption(result)
    try:
        corpus = state.get_corpus()
        decisions, dkey = triage_decisions.pipeline_decisions()
    except CRPError as exc:
        st.error(render.md_escape(exc))
        st.stop()
    scenario = state.get_scenario()
    config = state.get_config()
    # the selected tab lives in the URL (?tab=<label>): Streamlit's own binding (st.tabs bind="query-params",
    # docs/decisions/ui.md). A bound tab set knows which tab is open (``.open``) and a click on another tab
    # reruns the app, so only the open tab is drawn: the others cost nothing on a rerun or a page switch
    draws = (
        lambda: sweep_tab(corpus, scenario, config, decisions, dkey),
        lambda: suite_tabs.suite_tab(corpus, decisions, dkey),
        lambda: suite_tabs.autotune_tab(corpus, decisions, dkey),
        lambda: compare_tab(corpus, scenario, config, result, decisions, dkey),
        lambda: before_after_tab(corpus, scenario, config, result, decisions, dkey),
    )
    for tab, draw in zip(st.tabs(list(TABS), key=TAB_PARAM, bind="query-params"), draws):
        if tab.open is not False:  # None: a Streamlit that does not track tabs draws them all
            with tab:
                draw()


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)

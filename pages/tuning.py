"""Tuning and demo: what-if sweeps, comparing two configs, a suite of scenarios, auto-tuning, before /
after SPEC-027.

Every run goes through the shell's state: the corpus with the operators' statuses
(``state.get_corpus``), their pair decisions (``crp_ui.decisions.pipeline_decisions``), the scenario and
the sidebar config. The scenario is embedded once per (corpus, scenario) for the sweeps; single runs use
the shell's result cache. Numbers come from ``crp_core``'s sweep / compare / before-after records,
frames and figures from ``crp_ui.tuning_view``; the Suite, Auto-tune and Before / after tabs are
``crp_ui`` modules of their own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from crp_core import (
    ConfigError,
    Corpus,
    CRPConfig,
    CRPError,
    PipelineResult,
    Scenario,
    SweepPoint,
    SweepResult,
    check_key,
    compare_runs,
    current_value,
    describe,
    sweep,
    sweepable_keys,
)
from crp_ui import autotune_tab, before_after_tab, breakdown, cache, history_tab, render, shell, state, suite_tabs
from crp_ui import decisions as triage_decisions
from crp_ui import tuning_view as tv
from crp_ui.progress import Bar
from crp_ui.tuning_widgets import (
    baseline_picker,
    digest,
    inputs_key,
    keep,
    kept_result,
    pick_point,
    scenario_vectors,
    sticky_index,
    sweep_values,
)

K = "crp.tuning."
K_SWEEP = K + "sweep"  # (inputs key, SweepResult)
K_POINT = K + "point"  # selected sweep point index
K_CHART_POINT = K + "chart_point"  # last point picked on the chart
#: the tabs, in order; the selected one is the URL parameter TAB_PARAM (its label verbatim)
TABS = ("Sweep", "Suite", "Auto-tune", "Compare", "Before / after", "History")
TAB_PARAM = "tab"


# ---- Sweep ---------------------------------------------------------------------------------------
def keys_default() -> str:
    """The parameter the Sweep tab offers first."""
    return sweepable_keys()[0]


def _sweep_key(c1: DeltaGenerator, scenario: Scenario, config: CRPConfig) -> tuple[str, Any] | None:
    """The parameter picked in column ``c1`` and its current value (None, with the reason shown, when
    refused)."""
    keys = sweepable_keys()
    key = c1.selectbox(
        "Parameter",
        keys,
        index=sticky_index(K + "key", keys),
        key=K + "key",
        help="Any configuration key (tables by source type "
        "as ttl_days.<type>), or the scenario's fanout_width. hnsw_m / hnsw_ef_construction "
        "are not offered: each value would rebuild the HNSW index.",
    )
    keep(K + "key", key)
    try:
        check_key(key)
        current = current_value(scenario, config, key)
    except ConfigError as exc:
        st.error(render.md_escape(exc))
        return None
    doc = (
        "scenario field: fan-out width (0 or 1 = no fan-out)" if key == "fanout_width" else describe(key.split(".")[0])
    )
    c1.caption(f"{render.md_escape(doc)} · current value **{render.md_escape(tv.value_label(current))}**")
    return key, current


def _run_sweep(
    corpus: Corpus,
    scenario: Scenario,
    config: CRPConfig,
    key: str,
    values: tuple[Any, ...],
    decisions: Mapping[str, Any] | None,
) -> SweepResult | None:
    bar = Bar(f"Sweep of {key}", unit="runs")

    def progress(done: int, total: int, value: Any) -> None:
        bar.step(done, total, f"{key} = {tv.value_label(value)}")

    try:
        return sweep(
            corpus,
            scenario,
            config,
            key,
            values,
            vectors=scenario_vectors(corpus, scenario),
            decisions=decisions,
            progress=progress,
            embedder=cache.embedder_for(corpus),
        )
    except CRPError as exc:
        st.error(f"Sweep refused: {render.md_escape(exc)}")
        return None
    finally:
        bar.empty()


def sweep_tab(
    corpus: Corpus, scenario: Scenario, config: CRPConfig, decisions: Mapping[str, Any] | None, dkey: str
) -> None:
    st.caption(
        "Pick one parameter and a range: the pipeline runs at about N round values of it and at its current "
        "value (the grid of `crp-inspect sweep`; corpus, index, graph and the scenario's embeddings reused; only "
        "re-scored) and every measure is plotted against the value. "
        "The baseline is the run at the current sidebar config. Click a point (or pick a value below) "
        "to see that run's envelope diff."
    )
    c1, *cols = st.columns([3, 2, 2, 2])
    picked = _sweep_key(c1, scenario, config)
    if picked is None:
        return
    key, current = picked
    values = sweep_values(
        key,
        current,
        cols,
        prefix=K,
        count=20,
        max_count=60,
        count_key=f"{K}count.{key}",
        named=("the sweep's settings", keys_default()),
    )
    if values is None:
        return
    inputs = inputs_key(corpus, scenario, config, dkey)
    if st.button(f"Run sweep ({len(values)} values)", type="primary", key=K + "run"):
        res = _run_sweep(corpus, scenario, config, key, values, decisions)
        if res is None:
            return
        state.remember(K_SWEEP, (inputs, res))
        state.remember(K_POINT, 0)
        state.forget(K_CHART_POINT)
    res = kept_result(
        K_SWEEP,
        inputs,
        empty="No sweep yet: choose a parameter and a range, then **Run sweep**.",
        stale="The CKF, scenario, sidebar config or operator decisions "
        "changed since this sweep was run: it shows the earlier inputs. Run the sweep again "
        "to update it.",
    )
    if res is not None:
        _sweep_result(res, corpus)


def _point_metrics(p: SweepPoint) -> None:
    m = st.columns(5)
    m[0].metric("Jaccard vs baseline", f"{p.jaccard:.2f}")
    m[1].metric("facts entering", len(p.entering))
    m[2].metric("facts leaving", len(p.leaving))
    m[3].metric("conflicts resolved / tied", f"{p.conflicts_resolved} / {p.conflicts_unresolved}")
    m[4].metric("mean recency", "n/a" if math.isnan(p.mean_recency) else f"{p.mean_recency:.3f}")


def _sweep_result(res: SweepResult, corpus: Corpus) -> None:
    st.caption(
        f"{len(res.points)} values of **{render.md_escape(res.key)}** + the baseline run in "
        f"{res.total_ms / 1000:.2f} s (embedding {res.embed_ms:.0f} ms)"
        + (" · each value built its own similarity graph" if res.rebuilds_graph else "")
    )
    labels = [f"{i + 1}: {res.key} = {tv.value_label(p.value)}" for i, p in enumerate(res.points)]
    point = pick_point(lambda sel: tv.sweep_figure(res, selected=sel), labels, prefix=K, label="Envelope diff of")
    p = res.points[point]
    _point_metrics(p)
    diff = tv.envelope_diff_frame(res.baseline.envelope, p.envelope, corpus.kb)
    if p.result is not None and res.baseline.result is not None and (p.entering or p.leaving):
        cmp = compare_runs(res.baseline.result, p.result)
        diff.insert(
            2, "why", [cmp.explain(f) if ch != "kept" else "" for f, ch in zip(diff["fact_id"], diff["change"])]
        )
    render.dataframe(
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
        render.dataframe(
            frame, hide_index=True, width="stretch", key=K + "table", column_config=breakdown.column_config(frame)
        )


# ---- Compare -------------------------------------------------------------------------------------
def compare_tab(
    corpus: Corpus,
    scenario: Scenario,
    config: CRPConfig,
    result: PipelineResult,
    decisions: Mapping[str, Any] | None,
    dkey: str,
) -> None:
    st.caption(
        "Baseline: the defaults or a saved TOML (the scenario's own `config` table applies on top, as in "
        "the sidebar). Candidate: the current sidebar config. Ranks are CDR ranks among the gated-in "
        "candidates; the explain-diff names the factor whose change moved the fact's CDR score the most."
    )
    picked = baseline_picker(K)
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
        render.dataframe(tv.config_diff_frame(cmp.config_diff), hide_index=True, key=K + "cfgdiff")
    else:
        st.info("The two configs are equal: change a value in the sidebar (or upload another baseline).")
    st.subheader("Envelopes side by side")
    render.dataframe(tv.envelopes_side_by_side(cmp), hide_index=True, width="stretch", key=K + "sidebyside")
    st.subheader("Per-fact rank and score deltas")
    deltas = tv.fact_delta_frame(cmp)
    render.dataframe(
        deltas,
        hide_index=True,
        width="stretch",
        key=K + "deltas",
        column_config={
            c: st.column_config.NumberColumn(c, format="%.4f")
            for c in ("base score", "cand score", "score delta", "base recency", "cand recency")
        },
    )
    ids = [str(f) for f in deltas["fact_id"]] if len(deltas) else []
    if ids:
        linked, refused = state.view_choice("explain", ids, ids[0])  # ?explain=<fact id>
        if refused:
            st.warning(f"Link parameter ignored: {render.md_escape(refused)}")
        fid = st.selectbox(
            "Explain a fact",
            ids,
            index=ids.index(linked),
            key=f"{K}explain.{digest(*ids[:50])}",
            format_func=render.plain,
        )
        state.set_view_choice("explain", str(fid), ids[0])
        st.info(render.md_escape(cmp.explain(fid)))
    st.subheader("Conflicts whose winner flips")
    if cmp.flips:
        render.dataframe(tv.flips_frame(cmp), hide_index=True, width="stretch", key=K + "flips")
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


def main() -> None:
    st.title("Tuning")
    result = breakdown.require_result()
    breakdown.run_caption(result)
    corpus, scenario, ds = breakdown.require_run_inputs()
    config = state.get_config()
    # the pair decisions in force: as run_pipeline's mapping for the single runs, as the decision set for
    # the suite (its known-conflict guard reads the set)
    decisions, dkey = triage_decisions.pipeline_decisions(ds)
    suite_decisions = ds if ds.pair_decisions else None
    # the selected tab lives in the URL (?tab=<label>): Streamlit's own binding (st.tabs bind="query-params").
    # A bound tab set knows which tab is open (``.open``) and a click on another tab reruns the app, so
    # only the open tab is drawn
    draws: tuple[Callable[[], None], ...] = (
        lambda: sweep_tab(corpus, scenario, config, decisions, dkey),
        lambda: suite_tabs.suite_tab(corpus, suite_decisions, dkey),
        lambda: autotune_tab.autotune_tab(corpus, suite_decisions, dkey),
        lambda: compare_tab(corpus, scenario, config, result, decisions, dkey),
        lambda: before_after_tab.before_after_tab(corpus, scenario, config, result, decisions, dkey, ds),
        lambda: history_tab.history_tab(corpus),  # the experiment history (crp_ui/history_tab.py)
    )
    refused = state.tab_refusal(TAB_PARAM, TABS)  # Streamlit drops a label no tab has, without a word
    if refused:
        st.warning(f"Link parameter ignored: {render.md_escape(refused)}")
    for tab, draw in zip(st.tabs(list(TABS), key=TAB_PARAM, bind="query-params"), draws):
        if tab.open is not False:  # None: a Streamlit that does not track tabs draws them all
            with tab:
                draw()


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)

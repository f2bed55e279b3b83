"""The Tuning page's Suite tab: a suite of labelled scenarios evaluated at the sidebar config, compared
with a baseline config, and a sweep of one key over the whole suite.

The suite and its config come from :mod:`crp_ui.suite_source`; every run reuses one
``crp_core.PreparedSuite`` (each scenario embedded once per corpus). Numbers come from ``crp_core``'s
suite records, frames and figures from :mod:`crp_ui.suite_view`. Auto-tuning over the same suite is
:mod:`crp_ui.autotune_tab`.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from crp_core import (
    RANKING_METRICS,
    ConfigError,
    Corpus,
    CRPConfig,
    CRPError,
    DecisionSet,
    PreparedSuite,
    SuiteRun,
    SuiteSweep,
    check_key,
    current_value,
    run_suite,
    sweep_suite,
    sweepable_keys,
)

from . import cache, history_tab, render, state
from . import suite_view as sv
from . import tuning_view as tv
from .suite_common import METRIC_INFO
from .suite_grid import grid_section
from .suite_source import K, choose_suite, ready
from .tuning_widgets import (
    baseline_picker,
    diff_view,
    digest,
    frame,
    keep,
    kept_result,
    pick_point,
    progress_bar,
    sticky_index,
    sweep_values,
)

K_EVAL = K + "eval"  # (inputs key, SuiteRun at the suite config, SuiteRun at the defaults)
K_SWEEP = K + "sweep"  # (inputs key, (SuiteSweep, the key's value at the suite config))
K_POINT = K + "point"
K_CHART_POINT = K + "chart_point"
K_DRILL = K + "drill"  # {(inputs key, point): SuiteRun at the point; point -1: at the sweep's baseline}
K_CMP_RUNS = K + "cmp_runs"  # {(inputs key, baseline TOML): SuiteRun at the baseline}


def suite_tab(corpus: Corpus, decisions: DecisionSet | None, dkey: str) -> None:
    """The Suite tab over ``corpus`` with the pair ``decisions`` in force (``dkey``: their digest)."""
    st.caption(
        "Every scenario of a labelled suite through the pipeline at the sidebar config (its base and "
        "your edits; each scenario's own config table on top), measured against its `expect` table: "
        "must_include recall, must_exclude leaks, wrong winners, expired and ageing facts packed, "
        "contradictory pairs handed to the model, fan-out duplicates, tokens, and the overlap with the "
        "defaults' envelopes. The definitions are in docs/decisions/suites.md."
    )
    got = ready(corpus, choose_suite("suite"), decisions, dkey)
    if got is None:
        return
    p, config, inputs = got
    run = _evaluate(p, config, inputs)
    if run is not None:
        st.divider()
        _compare(p, config, inputs, run)
    st.divider()
    _sweep(p, config, inputs)
    st.divider()
    grid_section(p, config, inputs)


def _runs(p: PreparedSuite, config: CRPConfig) -> tuple[SuiteRun, SuiteRun] | None:
    """(the suite at ``config``, at the defaults), with a progress bar; None when refused."""
    bar, progress = progress_bar("Running the suite:")
    try:
        run = run_suite(p, config, keep_results=True, progress=progress, embedder=cache.embedder_for(p.corpus))
        defaults = (
            run
            if config == CRPConfig()
            else run_suite(p, CRPConfig(), keep_results=False, embedder=cache.embedder_for(p.corpus))
        )
    except CRPError as exc:
        st.error(f"The suite run was refused: {render.md_escape(exc)}")
        return None
    finally:
        bar.empty()
    return run, defaults


def _ranking_columns() -> dict[str, Any]:
    """The ranking metrics as numbers of 3 decimals with their definition as help, and the graded facts
    the first 10 envelope facts leave out (tables without graded relevance have none of these columns)."""
    cols: dict[str, Any] = {
        name: st.column_config.NumberColumn(name, format="%.3f", help=METRIC_INFO[name].description)
        for name in RANKING_METRICS
    }
    cols[sv.RELEVANT_MISSING] = st.column_config.TextColumn(
        sv.RELEVANT_MISSING, width="medium", help="facts graded 1 or more outside the first 10 (their grade)"
    )
    return cols


def _summary_columns() -> dict[str, Any]:
    """The summary table's columns: figures to 4 significant digits (a mean of 125.3333 tokens no longer
    overflows its column), the definition wide."""
    figures = ("mean", "worst", "total", "baseline mean", "baseline worst")
    cols: dict[str, Any] = {c: st.column_config.NumberColumn(c, format="%.4g") for c in figures}
    return cols | {"definition": st.column_config.TextColumn("definition", width="large")}


def _headline(run: SuiteRun) -> None:
    summary = run.metrics.summary
    graded = sv.ranked(run.metrics)
    m = st.columns(6 if graded else 5)
    rec = summary["recall"]
    m[0].metric(
        "recall (mean)",
        "n/a" if rec.mean is None else f"{rec.mean:.2f}",
        help=f"worst {rec.worst if rec.worst is not None else 'n/a'} ({rec.worst_scenario or '-'})",
    )
    m[1].metric("leaks", int(summary["leaks"].total or 0), help="expect.must_exclude facts packed, over the suite")
    m[2].metric(
        "wrong winners",
        int(summary["wrong_winners"].total or 0),
        help="packed facts that lose an expected conflict, whether or not the winner was retrieved",
    )
    m[3].metric(
        "expired packed",
        int(summary["expired"].total or 0),
        help=f"ageing (past the fresh part of the TTL, not expired): {int(summary['ageing'].total or 0)}",
    )
    m[4].metric(
        "contradictions",
        int(summary["contradictions"].total or 0),
        help="pairs handed to the model with both facts packed (expected or detected conflicts)",
    )
    if graded:
        nd = summary["ndcg@10"]
        m[5].metric(
            "nDCG@10 (mean)",
            "n/a" if nd.mean is None else f"{nd.mean:.2f}",
            help=f"over {nd.count} scenario(s) with graded relevance; worst "
            f"{'n/a' if nd.worst is None else f'{nd.worst:.3f}'} ({nd.worst_scenario or '-'}); "
            f"mean MRR {_two(summary['mrr'].mean)}, precision@10 {_two(summary['precision@10'].mean)}, "
            f"recall@10 {_two(summary['recall@10'].mean)}",
        )


def _two(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def _evaluate(p: PreparedSuite, config: CRPConfig, inputs: str) -> SuiteRun | None:
    st.subheader("The suite at the sidebar config")
    got = state.recall(K_EVAL)
    if got is None or got[0] != inputs:
        runs = _runs(p, config)
        if runs is None:
            return None
        got = (inputs, *runs)
        state.remember(K_EVAL, got)
        history_tab.record_suite_run(p, config, runs[0])  # kept in the experiment history (History tab)
    _, run, defaults = got
    n = len(run.metrics.scenarios)
    changed = len(config.diff(CRPConfig()))
    st.caption(
        f"{n} scenario(s) in {run.elapsed_ms:.0f} ms · {changed} config value(s) differ from the defaults"
        + (" (the verdict compares with the defaults)" if changed else "")
    )
    _headline(run)
    frame(
        sv.summary_frame(run.metrics, None if defaults is run else defaults.metrics),
        K + "summary",
        column_config=_summary_columns(),
    )
    st.markdown("**Per scenario**")
    frame(
        sv.scenario_frame(run.metrics),
        K + "per_scenario",
        column_config={
            c: st.column_config.TextColumn(c, width="medium")
            for c in ("missing", "leaked", "wrong winners", "expired packed", "contradictory pairs")
        }
        | _ranking_columns(),
    )
    names = sv.scenario_names(run.metrics)
    pick = st.selectbox("Envelope of scenario", names, key=f"{K}eval_pick.{digest(*names)}", format_func=render.plain)
    if names:
        state.declare_settings("the suite run's envelope view", {"scenario": pick}, {"scenario": names[0]})
    if pick:
        frame(
            sv.scenario_detail(run.metrics.scenario(pick)),
            K + "eval_detail",
            column_config={
                "recency": st.column_config.NumberColumn("recency", format="%.3f"),
                "grade": st.column_config.NumberColumn("grade", help="expect.relevance (0: not graded)"),
                "labels": st.column_config.TextColumn("labels", width="large"),
            },
        )
    return run if isinstance(run, SuiteRun) else None


def _baseline_run(p: PreparedSuite, base: CRPConfig, inputs: str) -> SuiteRun | None:
    """The suite at ``base``, kept for the last (inputs, baseline) asked for; None when refused."""
    store = state.kept_dict(K_CMP_RUNS)
    key = (inputs, base.to_toml())
    base_run = store.get(key)
    if isinstance(base_run, SuiteRun):
        return base_run
    try:
        base_run = run_suite(p, base, keep_results=True, embedder=cache.embedder_for(p.corpus))
    except CRPError as exc:
        st.error(f"The baseline run was refused: {render.md_escape(exc)}")
        return None
    store.clear()
    store[key] = base_run
    return base_run


def _compare(p: PreparedSuite, config: CRPConfig, inputs: str, run: SuiteRun) -> None:
    """The suite at a baseline config against the sidebar config: verdicts, per-scenario rows, and one
    scenario's envelope diff with the explain-diff."""
    st.subheader("Compare with a baseline config over the suite")
    got = baseline_picker(K + "cmp_")
    if got is None:
        return
    label, base = got
    diff = config.diff(base)
    if not diff:
        st.info(
            f"The sidebar config equals {render.md_escape(label)}: change a value in the sidebar (or "
            "upload another baseline) to compare."
        )
        return
    base_run = _baseline_run(p, base, inputs)
    if base_run is None:
        return
    st.caption(
        f"Baseline: **{render.md_escape(label)}** · candidate: the sidebar config · {len(diff)} key(s) "
        "differ: " + render.md_escape(", ".join(sorted(diff)))
    )
    frame(
        sv.summary_frame(run.metrics, base_run.metrics),
        K + "cmp_summary",
        column_config=_summary_columns(),
    )
    frame(sv.scenario_delta_frame(run, base_run), K + "cmp_rows", column_config=_ranking_columns())
    names = sv.scenario_names(run.metrics)
    name = st.selectbox(
        "Envelope diff of scenario", names, key=f"{K}cmp_pick.{digest(*names)}", format_func=render.plain
    )
    if name:
        state.declare_settings("the suite comparison's envelope diff", {"scenario": name}, {"scenario": names[0]})
        diff_view(base_run.result(name), run.result(name), p.corpus, K + "cmp_diff")


def _run_sweep(p: PreparedSuite, config: CRPConfig, key: str, values: tuple[Any, ...]) -> SuiteSweep | None:
    bar, progress = progress_bar("Suite sweep:")
    try:
        return sweep_suite(p, config, key, values, progress=progress, embedder=cache.embedder_for(p.corpus))
    except CRPError as exc:
        st.error(f"Sweep refused: {render.md_escape(exc)}")
        return None
    finally:
        bar.empty()


def _sweep(p: PreparedSuite, config: CRPConfig, inputs: str) -> None:
    st.subheader("Sweep one parameter over the suite")
    keys = [k for k in sweepable_keys() if k != "fanout_width"]
    c1, c2, c3, c4 = st.columns([3, 2, 2, 2])
    key = keep(K + "key", c1.selectbox("Parameter", keys, index=sticky_index(K + "key", keys), key=K + "key"))
    try:
        check_key(key)
        current = current_value(p.suite.scenarios[0].scenario, config, key)
    except ConfigError as exc:
        st.error(render.md_escape(exc))
        return
    values = sweep_values(
        key,
        current,
        (c2, c3, c4),
        prefix=K,
        count=10,
        max_count=40,
        count_key=f"{K}count",
        named=("the suite sweep's settings", keys[0]),
    )
    if values is None:
        return
    if st.button(f"Run suite sweep ({len(values)} values x {len(p.suite)} scenarios)", type="primary", key=K + "run"):
        res = _run_sweep(p, config, key, values)
        if res is None:
            return
        state.remember(K_SWEEP, (inputs, (res, current)))
        state.remember(K_POINT, 0)
        state.forget(K_CHART_POINT)
        state.forget(K_DRILL)
    kept = kept_result(
        K_SWEEP,
        inputs,
        empty="No suite sweep yet: choose a parameter and a range, then **Run suite sweep**.",
        stale="The suite, the CKF or the sidebar config changed since this "
        "sweep was run: it shows the earlier inputs. Run it again to update it.",
    )
    if kept is not None:
        _sweep_result(p, inputs, *kept)


def _sweep_result(p: PreparedSuite, inputs: str, res: SuiteSweep, base_value: object) -> None:
    st.caption(
        f"{len(res.points)} values of **{render.md_escape(res.key)}** x {len(res.baseline.metrics.scenarios)} "
        f"scenarios + the baseline in {res.total_ms / 1000:.2f} s"
    )
    labels = [f"{i + 1}: {res.key} = {tv.value_label(pt.value)}" for i, pt in enumerate(res.points)]
    point = pick_point(
        lambda sel: sv.suite_sweep_figure(res, selected=sel, baseline_value=base_value),
        labels,
        prefix=K,
        label="Per-scenario rows at",
    )
    pt = res.points[point]
    frame(
        sv.summary_frame(pt.run.metrics, res.baseline.metrics),
        K + "pt_summary",
        column_config=_summary_columns(),
    )
    frame(sv.scenario_delta_frame(pt.run, res.baseline), K + "pt_rows")
    with st.expander("All values (table)"):
        frame(sv.suite_sweep_frame(res).drop(columns=["x"]), K + "sweep_table")
    _drill(p, res, point, inputs)


def _drill(p: PreparedSuite, res: SuiteSweep, point: int, inputs: str) -> None:
    """One scenario at the chosen value against the sweep's baseline: the envelope diff and explain-diff."""
    names = sv.scenario_names(res.baseline.metrics)
    name = st.selectbox("Drill into scenario", names, key=f"{K}drill_pick.{digest(*names)}", format_func=render.plain)
    if not name:
        return
    state.declare_settings("the suite sweep's drill-down", {"scenario": name}, {"scenario": names[0]})
    store = state.kept_dict(K_DRILL)
    emb = cache.embedder_for(p.corpus)
    try:
        base = store.get((inputs, -1))
        if base is None:
            base = store[(inputs, -1)] = run_suite(p, res.baseline.config, keep_results=True, embedder=emb)
        run = store.get((inputs, point))
        if run is None:
            run = store[(inputs, point)] = run_suite(
                p,
                res.baseline.config,
                keep_results=True,
                embedder=emb,
                scenario_overrides={res.key: res.points[point].value},
            )
    except CRPError as exc:
        st.error(f"Refused: {render.md_escape(exc)}")
        return
    diff_view(base.result(name), run.result(name), p.corpus, K + "drill_diff")

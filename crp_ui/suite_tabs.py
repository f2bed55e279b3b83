"""The Tuning page's workload views: a suite of labelled scenarios evaluated at the sidebar config, a
sweep of one key over the whole suite, and Optuna auto-tuning (docs/decisions/suites.md).

The suite is the bundled one (``sample_ckf/scenarios/``, sub-folders included) or uploaded scenario
files. It runs at the **suite config**: the sidebar's base config (defaults or a loaded TOML) with the
sidebar edits; each scenario's own ``config`` table applies on top, as ``crp-inspect check --config``
does. Every run reuses one :class:`~crp_core.analysis.evaluate.PreparedSuite` (each scenario embedded
once per corpus). Numbers come from ``crp_core.analysis`` records, frames and figures from
:mod:`crp_ui.suite_view`. The widget groups both sweeps and both comparisons of the Tuning page share
(:func:`sweep_values`, :func:`pick_point`, :func:`baseline_picker`) live here too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from crp_core.analysis.evaluate import PreparedSuite, SuiteRun, SuiteSweep, prepare_suite, run_suite, sweep_suite
from crp_core.analysis.suite import Suite, load_suite, suite_from_files
from crp_core.analysis.tune import OBJECTIVES, TrialRecord, TuneResult, default_space, tune
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.errors import ConfigError, CRPError, ValidationError

from . import cache, render, state
from . import suite_view as sv
from . import tuning_view as tv
from .progress import Bar

K = "crp.tuning.suite."
K_UPLOADED = K + "uploaded"  # Suite from uploaded files (or None)
K_PREPARED = K + "prepared"  # (key, PreparedSuite)
K_EVAL = K + "eval"  # (inputs key, SuiteRun at the suite config, SuiteRun at the defaults)
K_SWEEP = K + "sweep"  # (inputs key, SuiteSweep)
K_POINT = K + "point"
K_CHART_POINT = K + "chart_point"
K_DRILL = K + "drill"  # {(inputs key, point): (SuiteRun at the point, kept results)}
K_TUNE = K + "tune"  # (inputs key, TuneResult)
#: most trials one auto-tune run may ask for from the page
MAX_TRIALS = 200


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()[:24]


def suite_config() -> CRPConfig:
    """The config a suite runs at: the sidebar base with the sidebar edits (no scenario's table)."""
    return state.base_with_edits()


# ---- the suite ---------------------------------------------------------------------------------
def _bundled() -> Suite | None:
    """The bundled suite, loaded again only when one of its files changed (a refusal is not kept)."""
    d = state.scenarios_dir()
    if not d.is_dir():
        return None
    stamp = tuple(
        sorted(
            (str(p.relative_to(d)), p.stat().st_mtime_ns, p.stat().st_size)
            for p in d.rglob("*")
            if p.is_file() and p.suffix.lower() in (".json", ".toml")
        )
    )
    return _load_bundled(str(d), stamp)


@st.cache_resource(show_spinner=False, max_entries=4)
def _load_bundled(folder: str, stamp: tuple[tuple[str, int, int], ...]) -> Suite:
    """Keyed by the folder and its files' (path, mtime, size): an edited scenario is read again."""
    return load_suite(folder)


def _source_suite(source: str) -> Suite | None:
    """The bundled suite or the uploaded one (None, with a message, when there is none)."""
    if source != "bundled suite":
        suite = st.session_state.get(K_UPLOADED)
        if suite is None or not len(suite):
            st.info("No uploaded suite: upload scenario files in the Suite tab.")
            return None
        return suite
    try:
        suite = _bundled()
    except ValidationError as exc:
        render.show_problems(f"The bundled suite was refused: {exc.what}", exc.problems)
        return None
    if suite is None or not len(suite):
        st.info("No bundled scenarios found.")
        return None
    return suite


def choose_suite(corpus: Corpus) -> Suite | None:
    """The suite picker: bundled or uploaded, then the scenarios to run. None when there is none."""
    c1, c2 = st.columns([1, 2])
    source = c1.radio(
        "Suite",
        ["bundled suite", "uploaded scenario files"],
        key=K + "source",
        help="The bundled suite is every scenario under sample_ckf/scenarios/ (sub-folders "
        "included), labelled for the bundled sample CKF. Upload your own labelled "
        "scenarios (JSON / TOML with an `expect` table) for another CKF.",
    )
    if source == "bundled suite":
        suite = _source_suite(source)
        if suite is None:
            return None
    else:
        ups = c2.file_uploader("Scenario files", type=["json", "toml"], accept_multiple_files=True, key=K + "upload")
        if ups:
            items = [(u.name, u.getvalue()) for u in ups]
            try:
                st.session_state[K_UPLOADED] = suite_from_files(items)
            except ValidationError as exc:
                render.show_problems(f"The uploaded suite was refused: {exc.what}", exc.problems)
                return None
        suite = st.session_state.get(K_UPLOADED)
        if suite is None:
            st.info("Upload one or more labelled scenario files (docs/decisions/suites.md gives the format).")
            return None
    names = list(suite.names)
    pick_key = f"{K}pick.{_digest(*names)}"
    chosen = st.multiselect(
        "Scenarios",
        names,
        default=names,
        key=pick_key,
        format_func=render.plain,
        help="Run all of the suite or a selection.",
    )
    if not chosen:
        st.info("Pick at least one scenario.")
        return None
    return suite.select(chosen) if len(chosen) != len(names) else suite


def prepared(corpus: Corpus, suite: Suite, decisions: Any, dkey: str) -> PreparedSuite | None:
    """The suite embedded once per (corpus, suite, decisions) in this session; problems shown."""
    from crp_core.io.scenario import dump_scenario

    key = _digest(
        cache.corpus_digest(corpus), dkey, *(f"{s.name}\x01{dump_scenario(s.scenario, 'json')}" for s in suite)
    )
    got = st.session_state.get(K_PREPARED)
    if got is not None and got[0] == key:
        return got[1]
    try:
        with st.spinner(f"Embedding {len(suite)} scenario(s)…"):
            p = prepare_suite(corpus, suite, embedder=cache.embedder_for(corpus), decisions=decisions)
    except ValidationError as exc:
        render.show_problems(f"This suite does not fit the loaded CKF: {exc.what}", exc.problems)
        return None
    except CRPError as exc:
        st.error(f"The suite was refused: {render.md_escape(exc)}")
        return None
    st.session_state[K_PREPARED] = (key, p)
    return p


def _ready(
    corpus: Corpus, suite: Suite | None, decisions: Any, dkey: str
) -> tuple[PreparedSuite, CRPConfig, str] | None:
    """The prepared suite, the suite config and the key of those inputs (None: nothing to run)."""
    if suite is None:
        return None
    p = prepared(corpus, suite, decisions, dkey)
    if p is None:
        return None
    config = suite_config()
    return p, config, _digest(st.session_state[K_PREPARED][0], config.to_toml())


def kept_result(key: str, inputs: str, *, empty: str, stale: str) -> Any:
    """The result a run stored under ``key`` as ``(inputs, result)``: None (``empty`` shown) when there
    is none; ``stale`` is shown when it was made for other inputs (it is shown, never silently dropped)."""
    got = st.session_state.get(key)
    if got is None:
        st.info(empty)
        return None
    made_for, result = got
    if made_for != inputs:
        st.warning(stale)
    return result


def _progress_bar(label: str) -> Any:
    """A bar counting scenario runs (with rate and time left) and the callback that feeds it."""
    bar = Bar(label.rstrip("…. "), unit="runs")

    def progress(done: int, total: int, what: str) -> None:
        bar.step(done, total, what)

    return bar, progress


def _frame(df: Any, key: str, **kw: Any) -> None:
    render.dataframe(df, hide_index=True, width="stretch", key=key, **kw)


# ---- Suite: evaluate and sweep ------------------------------------------------------------------
def suite_tab(corpus: Corpus, decisions: Any, dkey: str) -> None:
    st.caption(
        "Every scenario of a labelled suite through the pipeline at the sidebar config (its base and "
        "your edits; each scenario's own config table on top), measured against its `expect` table: "
        "must_include recall, must_exclude leaks, wrong winners, expired and ageing facts packed, "
        "contradictory pairs handed to the model, fan-out duplicates, tokens, and the overlap with the "
        "defaults' envelopes. The definitions are in docs/decisions/suites.md."
    )
    got = _ready(corpus, choose_suite(corpus), decisions, dkey)
    if got is None:
        return
    p, config, inputs = got
    run = _evaluate(p, config, inputs)
    if run is not None:
        st.divider()
        _compare(p, config, inputs, run)
    st.divider()
    _sweep(p, config, inputs)


def _evaluate(p: PreparedSuite, config: CRPConfig, inputs: str) -> SuiteRun | None:
    st.subheader("The suite at the sidebar config")
    got = st.session_state.get(K_EVAL)
    if got is None or got[0] != inputs:
        bar, progress = _progress_bar("Running the suite:")
        try:
            run = run_suite(p, config, keep_results=True, progress=progress, embedder=cache.embedder_for(p.corpus))
            defaults = (
                run
                if config == CRPConfig()
                else run_suite(p, CRPConfig(), keep_results=False, embedder=cache.embedder_for(p.corpus))
            )
        except CRPError as exc:
            bar.empty()
            st.error(f"The suite run was refused: {render.md_escape(exc)}")
            return None
        bar.empty()
        got = (inputs, run, defaults)
        st.session_state[K_EVAL] = got
    _, run, defaults = got
    n = len(run.metrics.scenarios)
    changed = len(config.diff(CRPConfig()))
    st.caption(
        f"{n} scenario(s) in {run.elapsed_ms:.0f} ms · {changed} config value(s) differ from the defaults"
        + (" (the verdict compares with the defaults)" if changed else "")
    )
    summary = run.metrics.summary
    m = st.columns(5)
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
        help=f"ageing (in the decay, not expired): {int(summary['ageing'].total or 0)}",
    )
    m[4].metric(
        "contradictions",
        int(summary["contradictions"].total or 0),
        help="pairs handed to the model with both facts packed (expected or detected conflicts)",
    )
    _frame(
        sv.summary_frame(run.metrics, None if defaults is run else defaults.metrics),
        K + "summary",
        column_config={"definition": st.column_config.TextColumn("definition", width="large")},
    )
    st.markdown("**Per scenario**")
    _frame(
        sv.scenario_frame(run.metrics),
        K + "per_scenario",
        column_config={
            c: st.column_config.TextColumn(c, width="medium")
            for c in ("missing", "leaked", "wrong winners", "expired packed", "contradictory pairs")
        },
    )
    names = sv.scenario_names(run.metrics)
    pick = st.selectbox("Envelope of scenario", names, key=f"{K}eval_pick.{_digest(*names)}", format_func=render.plain)
    if pick:
        _frame(
            sv.scenario_detail(run.metrics.scenario(pick)),
            K + "eval_detail",
            column_config={
                "recency": st.column_config.NumberColumn("recency", format="%.3f"),
                "labels": st.column_config.TextColumn("labels", width="large"),
            },
        )
    return run


def baseline_picker(prefix: str, *, label: str = "Baseline config") -> tuple[str, CRPConfig] | None:
    """A baseline config: the defaults or an uploaded TOML, kept in the session under ``prefix``
    (None, with a message, while none is uploaded or the TOML is refused)."""
    c1, c2 = st.columns([1, 2])
    source = c1.radio(label, ["defaults", "uploaded TOML"], key=prefix + "base_source", horizontal=True)
    if source == "defaults":
        return "the defaults", CRPConfig()
    up = c2.file_uploader("Baseline TOML", type=["toml"], key=prefix + "base_upload")
    if up is not None:
        st.session_state[prefix + "base_toml"] = (up.name, up.getvalue().decode("utf-8", errors="replace"))
    saved = st.session_state.get(prefix + "base_toml")
    if saved is None:
        st.info("Upload a config TOML (e.g. one saved from the sidebar or from Auto-tune) to compare against.")
        return None
    try:
        base = CRPConfig.from_toml(saved[1])
    except ConfigError as exc:
        st.error(f"{render.md_escape(saved[0])} refused: {render.md_escape(exc)}")
        return None
    c2.caption(f"baseline: **{render.md_escape(saved[0])}**")
    return saved[0], base


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
    store: dict[tuple[str, str], SuiteRun] = st.session_state.setdefault(K + "cmp_runs", {})
    key = (inputs, base.to_toml())
    base_run = store.get(key)
    if base_run is None:
        try:
            base_run = run_suite(p, base, keep_results=True, embedder=cache.embedder_for(p.corpus))
        except CRPError as exc:
            st.error(f"The baseline run was refused: {render.md_escape(exc)}")
            return
        store.clear()
        store[key] = base_run
    st.caption(
        f"Baseline: **{render.md_escape(label)}** · candidate: the sidebar config · {len(diff)} key(s) "
        "differ: " + render.md_escape(", ".join(sorted(diff)))
    )
    _frame(
        sv.summary_frame(run.metrics, base_run.metrics),
        K + "cmp_summary",
        column_config={"definition": st.column_config.TextColumn("definition", width="large")},
    )
    _frame(sv.scenario_delta_frame(run, base_run), K + "cmp_rows")
    names = sv.scenario_names(run.metrics)
    name = st.selectbox(
        "Envelope diff of scenario", names, key=f"{K}cmp_pick.{_digest(*names)}", format_func=render.plain
    )
    if name:
        _diff_view(base_run.result(name), run.result(name), p.corpus, K + "cmp_diff")


def _diff_view(base: Any, cand: Any, corpus: Corpus, key: str) -> None:
    """One scenario's envelope diff (baseline -> candidate) with the explain-diff of each change and the
    conflicts whose winner flips."""
    from crp_core.analysis.compare import compare_runs

    diff = tv.envelope_diff_frame(
        [x.fact_id for x in base.envelope.order], [x.fact_id for x in cand.envelope.order], corpus.kb
    )
    cmp = compare_runs(base, cand)
    diff.insert(2, "why", [cmp.explain(f) if ch != "kept" else "" for f, ch in zip(diff["fact_id"], diff["change"])])
    _frame(
        diff,
        key,
        column_config={
            "content": st.column_config.TextColumn("content", width="large"),
            "why": st.column_config.TextColumn("why", width="large"),
        },
    )
    if cmp.flips:
        st.markdown("**Conflicts whose winner flips**")
        _frame(tv.flips_frame(cmp), key + ".flips")


def _sweep(p: PreparedSuite, config: CRPConfig, inputs: str) -> None:
    from crp_core.analysis.sweep import (
        check_key,
        current_value,
        sweepable_keys,
    )

    st.subheader("Sweep one parameter over the suite")
    keys = [k for k in sweepable_keys() if k != "fanout_width"]
    c1, c2, c3, c4 = st.columns([3, 2, 2, 2])
    key = c1.selectbox("Parameter", keys, key=K + "key")
    try:
        check_key(key)
        current = current_value(p.suite.scenarios[0].scenario, config, key)
    except ConfigError as exc:
        st.error(render.md_escape(exc))
        return
    got = sweep_values(key, current, (c2, c3, c4), prefix=K, count=10, max_count=40, count_key=f"{K}count")
    if got is None:
        return
    values = got
    n = len(p.suite)
    if st.button(f"Run suite sweep ({len(values)} values x {n} scenarios)", type="primary", key=K + "run"):
        bar, progress = _progress_bar("Suite sweep:")
        try:
            res = sweep_suite(p, config, key, values, progress=progress, embedder=cache.embedder_for(p.corpus))
        except CRPError as exc:
            bar.empty()
            st.error(f"Sweep refused: {render.md_escape(exc)}")
            return
        bar.empty()
        st.session_state[K_SWEEP] = (inputs, (res, current))
        st.session_state[K_POINT] = 0
        st.session_state.pop(K_CHART_POINT, None)
        st.session_state.pop(K_DRILL, None)
    kept = kept_result(
        K_SWEEP,
        inputs,
        empty="No suite sweep yet: choose a parameter and a range, then **Run suite sweep**.",
        stale="The suite, the CKF or the sidebar config changed since this "
        "sweep was run: it shows the earlier inputs. Run it again to update it.",
    )
    if kept is None:
        return
    res, base_value = kept
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
    _frame(
        sv.summary_frame(pt.run.metrics, res.baseline.metrics),
        K + "pt_summary",
        column_config={"definition": st.column_config.TextColumn("definition", width="large")},
    )
    _frame(sv.scenario_delta_frame(pt.run, res.baseline), K + "pt_rows")
    with st.expander("All values (table)"):
        _frame(sv.suite_sweep_frame(res).drop(columns=["x"]), K + "sweep_table")
    _drill(p, res, point, inputs)


def sweep_values(
    key: str, current: Any, cols: Sequence[Any], *, prefix: str, count: int, max_count: int, count_key: str
) -> tuple[Any, ...] | None:
    """The values a sweep of ``key`` runs: false / true for a flag, else a range (from, to, how many) in
    the three columns ``cols``, first offered around ``current``. The range widgets are keyed by the
    parameter only, so a range is kept when the scenario or the config changes. None (with the
    reason shown) when the range is refused."""
    from crp_core.analysis.sweep import is_bool_key, is_integer_key, linspace_values

    if is_bool_key(key):
        cols[0].write("values: false, true")
        return (False, True)
    lo, hi = tv.default_range(key, current)
    integer = is_integer_key(key)
    step = 1.0 if integer or key.startswith("ttl_days.") else 0.01
    fmt = "%d" if integer else ("%.1f" if key.startswith("ttl_days.") else "%.3f")
    start = cols[0].number_input("from", value=float(lo), step=step, format=fmt, key=f"{prefix}start.{key}")
    stop = cols[1].number_input("to", value=float(hi), step=step, format=fmt, key=f"{prefix}stop.{key}")
    n = cols[2].number_input("values", min_value=2, max_value=max_count, value=count, step=1, key=count_key)
    try:
        return linspace_values(key, start, stop, int(n))
    except ConfigError as exc:
        st.error(render.md_escape(exc))
        return None


def pick_point(figure: Callable[[int], Any], labels: Sequence[str], *, prefix: str, label: str) -> int:
    """A sweep's chosen point: clicked on the chart (``figure(selected)``, markers carrying their point
    index) or picked in a select box of ``labels``; kept in the session under ``prefix``."""
    k_point, k_chart, k_pick = prefix + "point", prefix + "chart_point", prefix + "pick"
    point = min(max(int(st.session_state.get(k_point, 0) or 0), 0), len(labels) - 1)
    event = st.plotly_chart(
        figure(point), key=prefix + "chart", on_select="rerun", selection_mode="points", width="stretch"
    )
    picked = tv.selected_point(event)
    if picked is not None and picked != st.session_state.get(k_chart):
        st.session_state[k_chart] = picked
        st.session_state[k_point] = picked
        st.rerun()

    def on_pick() -> None:
        st.session_state[k_point] = list(labels).index(st.session_state[k_pick])

    st.session_state[k_pick] = labels[point]
    st.selectbox(label, labels, key=k_pick, on_change=on_pick)
    return point


def _drill(p: PreparedSuite, res: SuiteSweep, point: int, inputs: str) -> None:
    """One scenario at the chosen value against the sweep's baseline: the envelope diff and explain-diff."""
    names = sv.scenario_names(res.baseline.metrics)
    name = st.selectbox("Drill into scenario", names, key=f"{K}drill_pick.{_digest(*names)}", format_func=render.plain)
    if not name:
        return
    store: dict[tuple[str, int], SuiteRun] = st.session_state.setdefault(K_DRILL, {})
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
    _diff_view(base.result(name), run.result(name), p.corpus, K + "drill_diff")


# ---- Auto-tune ---------------------------------------------------------------------------------
def autotune_tab(corpus: Corpus, decisions: Any, dkey: str) -> None:
    st.caption(
        "Optuna (TPE sampler, fixed seed, a bounded number of trials) searches the TTL of every source "
        "type the CKF uses, the relevance gate, the contradiction similarity and the stale floor, running "
        "the whole suite at each trial. Trial 0 is the sidebar config, so the best is never worse than "
        "where you start. The suite is the one chosen in the Suite tab."
    )
    got = _ready(corpus, choose_suite_for_tune(corpus), decisions, dkey)
    if got is None:
        return
    p, config, inputs = got
    c1, c2, c3 = st.columns([3, 1, 1])
    names = list(OBJECTIVES)
    obj = c1.selectbox(
        "Objective", names, key=K + "objective", format_func=lambda n: f"{n}: {OBJECTIVES[n].description}"
    )
    trials = int(c2.number_input("trials", min_value=1, max_value=MAX_TRIALS, value=20, step=1, key=K + "trials"))
    seed = int(c3.number_input("seed", min_value=0, max_value=2**31 - 1, value=0, step=1, key=K + "seed"))
    try:
        space = default_space(p.corpus, config)
    except ConfigError as exc:
        st.error(render.md_escape(exc))
        return
    with st.expander(f"Search space ({len(space)} keys)"):
        _frame(sv.params_space_frame(space), K + "space")
    if st.button(f"Run auto-tune ({trials} trials)", type="primary", key=K + "tune_run"):
        res = _run_tune(p, config, obj, trials, seed, space)
        if res is not None:
            st.session_state[K_TUNE] = (inputs, res)
    res = kept_result(
        K_TUNE,
        inputs,
        empty="No study yet: pick an objective and the number of trials, then **Run auto-tune**.",
        stale="The suite, the CKF or the sidebar config changed since this study "
        "ran: it shows the earlier inputs. Run it again to update it.",
    )
    if res is not None:
        _show_tune(res)


def choose_suite_for_tune(corpus: Corpus) -> Suite | None:
    """The suite of the Suite tab (its widgets' state), without drawing the picker twice."""
    suite = _source_suite(st.session_state.get(K + "source", "bundled suite"))
    if suite is None:
        return None
    chosen = st.session_state.get(f"{K}pick.{_digest(*suite.names)}")
    if chosen is not None:
        chosen = [n for n in chosen if n in suite.names]
        if not chosen:
            st.info("No scenario picked: choose at least one in the Suite tab.")
            return None
        suite = suite.select(chosen) if len(chosen) != len(suite) else suite
    st.caption(f"Suite: {len(suite)} scenario(s) · " + render.md_escape(", ".join(suite.names)))
    return suite


def _run_tune(
    p: PreparedSuite, config: CRPConfig, obj: str, trials: int, seed: int, space: Sequence[Any]
) -> TuneResult | None:
    bar = Bar(f"Auto-tune, {trials} trials", unit="trials")
    table = st.empty()
    chart = st.empty()
    done: list[TrialRecord] = []
    keys = [s.key for s in space]
    maximize = OBJECTIVES[obj].directions[0] == "maximize"

    def callback(t: TrialRecord, n: int, total: int) -> None:
        done.append(t)
        bar.step(n, total, f"objective {t.values[0]:.4g}")
        with table.container():
            render.dataframe(sv.trials_frame(done, keys), hide_index=True, width="stretch")
        chart.plotly_chart(sv.trials_figure(done, maximize=maximize, title="Trials so far"), width="stretch")

    try:
        res = tune(
            p.corpus,
            p,
            config,
            obj,
            trials,
            seed,
            callback=callback,
            space=space,
            embedder=cache.embedder_for(p.corpus),
        )
    except CRPError as exc:
        st.error(f"Auto-tune refused: {render.md_escape(exc)}")
        return None
    finally:
        bar.empty()
        table.empty()
        chart.empty()
    return res


def _show_tune(res: TuneResult) -> None:
    best = res.best
    keys = [s.key for s in res.space]
    st.success(
        f"Best: trial {best.number} of {len(res.trials)} ({'feasible' if best.feasible else 'INFEASIBLE'}), "
        f"objective {', '.join(f'{v:.4g}' for v in best.values)} (trial 0: "
        f"{', '.join(f'{v:.4g}' for v in res.baseline.values)}) · {res.elapsed_ms / 1000:.1f} s, "
        f"seed {res.seed}, {render.md_escape(res.sampler)}"
    )
    left, right = st.columns(2)
    with left:
        st.markdown("**Best against trial 0 (the sidebar config)**")
        _frame(sv.best_vs_base_frame(res), K + "best_vs_base")
    with right:
        st.markdown("**Searched values**")
        _frame(sv.params_frame(res), K + "params")
    regs = best.regressions
    if regs:
        st.warning(
            f"Trial {best.number} is worse than trial 0 in {len(regs)} (scenario, metric) pair(s): "
            "`crp-inspect check --baseline` with a baseline recorded at the sidebar config would fail on "
            "them. The no_regression objective counts them as violations."
        )
        render.dataframe(sv.regressions_frame(regs), hide_index=True, width="stretch", key=K + "regressions")
    elif best.number != 0:
        st.caption(f"Trial {best.number} is no worse than trial 0 in any scenario and metric.")
    toml = res.best_config.to_toml()
    b1, b2 = st.columns(2)
    b1.download_button(
        "Download the best config (TOML)",
        data=toml,
        file_name="crp-config-tuned.toml",
        mime="application/toml",
        key=K + "best_toml",
        on_click="ignore",
    )
    if b2.button(
        "Apply the best config to the sidebar",
        key=K + "apply",
        type="primary",
        help="Sets the searched keys as sidebar edits (every page then runs with them).",
    ):
        err = state.set_config_values(dict(best.params))
        if err:
            st.error(f"Not applied: {render.md_escape(err)}")
        else:
            state.bump("config")  # the sidebar's widgets are rebuilt showing the applied values
            st.session_state[K + "applied"] = best.number
            st.rerun()
    if st.session_state.get(K + "applied") == best.number:
        st.caption(f"Trial {best.number}'s values are applied in the sidebar.")
    maximize = res.objective.directions[0] == "maximize"
    st.plotly_chart(
        sv.trials_figure(
            res.trials, maximize=maximize, best=best.number, title=f"Objective {res.objective.name} by trial"
        ),
        width="stretch",
        key=K + "trials_fig",
    )
    st.markdown("**Pareto front of two suite metrics**")
    flat = sv.flat_metric_keys(best.metrics)
    c1, c2 = st.columns(2)
    x = c1.selectbox("x", flat, index=flat.index("recall.mean"), key=K + "pareto_x")
    y = c2.selectbox("y", flat, index=flat.index("tokens.mean"), key=K + "pareto_y")
    fig, front = sv.pareto_figure(res, x, y)
    st.plotly_chart(fig, width="stretch", key=K + "pareto_fig")
    st.caption(
        "On the front: trials " + ", ".join(str(t.number) for t in front)
        if front
        else "No feasible trial has both metrics defined."
    )
    with st.expander(f"All {len(res.trials)} trials (table)"):
        _frame(sv.trials_frame(res.trials, keys), K + "trials_table")

"""Fan-out simulator (SPEC-027 §1): partitions, the partitioned fan-out step by step, and the
naive shared-Coverage-Set race beside it.

Page controls (width, ResidualSet, branch depth weight) override the scenario and config for this page
only; the run is ``crp_core.pipeline.run_pipeline`` through the shell's result cache (keyed by the
corpus digest, scenario JSON, config TOML and now), so stepping never recomputes. Every number shown is
read from the :class:`~crp_core.records.FanoutResult` records. The step index lives in the session
state and in the URL (``?step=<1-based>``).
"""

from __future__ import annotations

import hashlib
from typing import Any

import streamlit as st

from crp_core.corpus.prepared import Corpus
from crp_core.errors import CRPError
from crp_ui import breakdown, cache, render, shell, state
from crp_ui import decisions as triage_decisions
from crp_ui import fanout_view as fv

K = "crp.fanout."
K_STEP = K + "step"  # 0-based index of the partitioned step shown
K_URL_NOTE = K + "url_note"
URL_STEP = "step"  # URL parameter (1-based); listed in state.PAGE_PARAMS so the shell keeps it

KIND_NAMES = {
    "parent": "parent state",
    "partition": "partitioning",
    "snapshot": "snapshot",
    "retrieval": "retrieval",
    "additions": "local additions",
    "merge": "fan-in union",
    "dedup": "dedup report",
}

EXPLAIN_LOCK = (
    "**Why not a lock? (SPEC-027 §1.2)** A lock on the shared Coverage Set would stop the race, but each "
    "branch would wait for the others' updates: the branches would run one after another, and fan-out exists "
    "to run them in parallel. Instead the remaining sub-queries are split into disjoint partitions, one per "
    "branch, so there is nothing shared to write."
)
EXPLAIN_SNAPSHOT = (
    "**What the snapshot guarantees (SPEC-027 §1.5)** Each branch reads a read-only copy of the Coverage Set "
    "as it was at dispatch (a write raises an error) and keeps its additions locally until fan-in. No branch "
    "sees another branch's half-finished updates, so the outcome does not depend on which branch runs first."
)


# ---- cached pieces ------------------------------------------------------------------------------------
# Kept per live object (``cache.by_identity``) rather than in ``st.cache_data``: the corpus, the scenario and
# the cached run are immutable, and a cached function would hash its arguments and unpickle a copy of its
# value on every rerun.
def _sub_query_vectors(corpus: Corpus, scenario: Any, key: tuple[str, str]) -> dict[str, list[float]]:
    """Sub-query embeddings of the scenario (the vectors the pipeline partitions), once per key
    (corpus digest, scenario JSON). Callers must not mutate the mapping."""
    from crp_core.corpus.prepared import embed_scenario

    def build(c: Corpus) -> dict[str, list[float]]:
        v = embed_scenario(scenario, c, cache.embedder_for(c))
        return {sid: [float(x) for x in v.sub_queries[i]] for i, sid in enumerate(v.ids)}

    return cache.by_identity("fanout_vectors", corpus, build, extra=key)


def _projection(
    corpus: Corpus,
    partitions: tuple[tuple[str, ...], ...],
    addressed: tuple[str, ...],
    vectors: dict[str, list[float]],
    scenario: Any,
    key: tuple[str, str],
) -> fv.Projection:
    return cache.by_identity(
        "fanout_projection",
        corpus,
        lambda _c: fv.project_partitions(partitions, vectors, scenario=scenario, addressed_ids=addressed),
        extra=(key, partitions, addressed),
    )


def _page_inputs(scenario: Any, config: Any, width: int, residual: list[str], depth: float) -> tuple[Any, Any]:
    """(scenario, config) with the page's controls applied, the same objects while the controls and the
    sidebar's scenario and config stay: the run cache's key (scenario JSON, config TOML) is then not
    rebuilt on every rerun."""
    page_scen = cache.by_identity(
        "fanout_scenario",
        scenario,
        lambda sc: fv.page_scenario(sc, width=width, residual_ids=residual, branch_depth_weight=depth),
        extra=(width, tuple(residual), depth),
    )
    page_cfg = cache.by_identity("fanout_config", config, lambda c: fv.page_config(c, depth), extra=depth)
    return page_scen, page_cfg


def _coverage_tips(fan: Any, mode: str, step: Any, scenario: Any, config: Any) -> dict[str, str]:
    """The Coverage Set chips' hover text at ``step``, once per run (``fan``) and step."""
    return cache.by_identity(
        "fanout_tips",
        fan,
        lambda _f: fv.coverage_tips(fv.coverage_frame(step, scenario, config)),
        extra=(mode, step.index),
    )


def _scenario_key(scenario: Any) -> str:
    from crp_core.io.scenario import dump_scenario

    return str(cache.by_identity("scenario", scenario, lambda sc: dump_scenario(sc, "json")))


def _signature(*parts: Any) -> str:
    return hashlib.sha1(repr(parts).encode("utf-8")).hexdigest()[:12]


# ---- step state -----------------------------------------------------------------------------------
def _current_step(n_steps: int) -> int:
    """The step index: session state, else the URL's ``step`` (first visit), clamped to the steps."""
    if K_STEP not in st.session_state:
        idx, note = fv.parse_step_param(st.query_params.get(URL_STEP), n_steps)
        st.session_state[K_STEP] = idx
        st.session_state[K_URL_NOTE] = note
    idx = int(st.session_state[K_STEP])
    idx = min(max(idx, 0), max(n_steps - 1, 0))
    st.session_state[K_STEP] = idx
    return idx


def _set_step(idx: int, radio_key: str) -> None:
    st.session_state[K_STEP] = idx
    st.session_state[radio_key] = idx


def _on_pick(radio_key: str) -> None:
    st.session_state[K_STEP] = int(st.session_state[radio_key])


def _write_url(idx: int) -> None:
    want = str(idx + 1)
    if st.query_params.get(URL_STEP) != want:
        st.query_params[URL_STEP] = want


# ---- sections -------------------------------------------------------------------------------------
def _controls(scenario: Any, config: Any) -> tuple[int, list[str], float]:
    sig = _signature(
        state.gen("scenario"),
        scenario.name,
        [sq.id for sq in scenario.sub_queries],
        [a.id for a in scenario.addressed],
        scenario.fanout_width,
        config.branch_depth_weight,
    )
    subs = {sq.id: sq for sq in scenario.sub_queries}
    c1, c3 = st.columns(2)
    width = c1.slider(
        "fan-out width",
        fv.MIN_WIDTH,
        fv.MAX_WIDTH,
        fv.clamp_width(scenario.fanout_width),
        key=f"{K}w.width.{sig}",
        help="Branches to run in parallel (1 = no fan-out). Starts at the scenario's fanout_width.",
    )
    residual = st.multiselect(
        "ResidualSet (sub-queries still to cover)",
        list(subs),
        default=[sq.id for sq in scenario.residual_set],
        format_func=lambda s: render.plain(f"{s} ({subs[s].label})" if subs[s].label else s),
        key=f"{K}w.residual.{sig}",
        help="Remove a sub-query to mark it addressed (it joins the Coverage Set); add one back to make it "
        "remaining work. Starts at the scenario's sub_queries minus addressed.",
    )
    depth = c3.slider(
        "branch depth weight",
        0.0,
        1.0,
        float(config.branch_depth_weight),
        0.05,
        key=f"{K}w.depth.{sig}",
        help="depth_weight of the Coverage Set entry a branch writes for each sub-query of its "
        "partition (branch_depth_weight).",
    )
    return int(width), list(residual), float(depth)


def _comparison(fan: Any) -> None:
    fv.comparison_strip(fv.comparison_frame(fan))
    st.caption(
        "Fan-out duplicates: cross-branch duplicates found at fan-in (the same fact, or two facts with "
        "cosine > fanin_dedup_similarity, chosen by different branches); the same count as the Tuning "
        "page's before / after view and its report. Distinct facts covered: facts "
        "kept after the fan-in dedup. Coverage entries: the parent Coverage Set after the merge."
    )


def _partition_view(fan: Any, scenario: Any, page_scen: Any, corpus: Corpus) -> None:
    st.subheader("Partition view")
    residual = [sq.id for sq in page_scen.residual_set]
    st.markdown(f"**Rule used:** {render.md_escape(fv.rule_text(fan.rule, len(residual), fan.width))}")
    left, right = st.columns([3, 2])
    key = (cache.corpus_digest(corpus), _scenario_key(page_scen))
    with left:
        try:
            vectors = _sub_query_vectors(corpus, page_scen, key)
        except CRPError as exc:
            st.warning(f"No projection: {render.md_escape(exc)}")
            vectors = None
        if vectors is not None:
            parts = tuple(tuple(p) for p in fan.partitioned.partitions)
            proj = _projection(corpus, parts, tuple(a.id for a in page_scen.addressed), vectors, page_scen, key)
            st.plotly_chart(
                cache.by_identity("partition_figure", proj, fv.partition_figure), width="stretch", key=f"{K}pca"
            )
            st.caption(
                render.md_escape(proj.note) + " Crosses: partition centroids (mean of the members); "
                "grey rings: addressed sub-queries, projected for context (not fitted)."
            )
    with right:
        frame = fv.partitions_frame(fan, page_scen)
        render.dataframe(
            frame,
            hide_index=True,
            width="stretch",
            key=f"{K}partitions",
            column_config={"text": st.column_config.TextColumn("text", width="large")},
        )
        st.caption(
            f"{len(fan.partitioned.partitions)} disjoint partitions covering the "
            f"{len(residual)} ResidualSet sub-queries; partition k is branch k's scope."
        )


def _coverage_block(fan: Any, step: Any, mode: str, caption: str, scenario: Any, config: Any) -> None:
    tips = _coverage_tips(fan, mode, step, scenario, config)
    render.html_block(fv.coverage_html(step, mode, tips))
    since = step.detail.get("since_step")
    added = f"{len(step.added)} entr{'y' if len(step.added) == 1 else 'ies'} added" if step.added else "nothing added"
    ref = f" since {'naive ' if mode == 'naive' else ''}step {since + 1}" if isinstance(since, int) else ""
    st.caption(f"{render.md_escape(caption)} · {added}{ref} (highlighted).")


def _facts_table(step: Any, corpus: Corpus, several: dict, key: str) -> None:
    frame = fv.step_facts_frame(step, corpus, duplicates=several)
    cfg = breakdown.column_config(frame)
    cfg["content"] = st.column_config.TextColumn("content", width="medium")
    render.dataframe(frame, hide_index=True, width="stretch", key=key, column_config=cfg)


def _partitioned_detail(fan: Any, step: Any, corpus: Corpus, page_scen: Any, config: Any) -> None:
    run = fan.partitioned
    st.markdown(f"**{render.md_escape(fv.step_label(step))}**")
    d = step.detail
    who = "the parent" if step.branch is None else f"branch {step.branch}"
    view = {
        "snapshot": "read-only snapshot",
        "retrieval": "read-only snapshot scored against",
        "additions": "snapshot + this branch's local additions (invisible to other branches)",
        "merge": "parent set after the fan-in union",
        "dedup": "parent set after fan-in",
    }.get(step.kind, "parent set")
    _coverage_block(fan, step, "partitioned", f"what {who} sees: {view}", page_scen, config)
    if step.kind == "parent":
        render.html_block("ResidualSet: " + fv.chips_html(d.get("residual_set", []), kind="sq"))
    elif step.kind == "partition":
        render.dataframe(fv.partitions_frame(fan, page_scen), hide_index=True, width="stretch", key=f"{K}step.parts")
        st.caption(
            f"Each branch may choose up to {d.get('branch_fact_budget')} facts "
            "(max(3, envelope_fact_budget // branches))."
        )
    elif step.kind == "snapshot":
        render.html_block("Partition: " + fv.chips_html(d.get("partition", []), kind="sq"))
        st.caption(
            f"{render.md_escape(d.get('snapshot_type', ''))}: a write attempt raises "
            "SnapshotMutationError (SPEC-027 §1.5)."
        )
    elif step.kind == "retrieval":
        st.caption(
            f"Relevance and residual pull over partition {render.md_escape(', '.join(d.get('partition', [])))} "
            f"only; novelty against the snapshot. Pool {d.get('pool')}, gated out {d.get('gated_out')}, "
            f"scored {d.get('scored')}, chose {len(step.facts)} (budget {d.get('budget')})."
        )
        _facts_table(step, corpus, fv.chosen_by_several(run), f"{K}step.facts.p")
    elif step.kind == "additions":
        added = d.get("additions", [])
        render.html_block(
            f"Local additions (depth {config.branch_depth_weight:g}): " + fv.chips_html(added, highlight=added)
        )
    elif step.kind == "merge":
        render.html_block(
            "Union of the branches' facts: "
            + fv.chips_html(step.facts, kind="fact", highlight=fv.duplicate_fact_ids(run))
        )
        st.caption(f"Coverage depth after the merge: {d.get('coverage_depth')}.")
    elif step.kind == "dedup":
        _dedup_report(run, "partitioned")


def _dedup_report(run: Any, mode: str) -> None:
    frame = fv.dedup_frame(run)
    if len(frame) == 0:
        st.success(f"Cross-branch dedup report: 0 duplicates ({len(run.merged)} facts kept).")
    else:
        st.error(
            f"Cross-branch dedup report: {len(frame)} duplicate(s); each kept once ({len(run.merged)} facts kept)."
        )
        render.dataframe(
            frame,
            hide_index=True,
            width="stretch",
            key=f"{K}dedup.{mode}",
            column_config={"similarity": st.column_config.NumberColumn("similarity", format="%.4f")},
        )


def _naive_detail(fan: Any, nstep: Any, corpus: Corpus, page_scen: Any, config: Any) -> None:
    run = fan.naive
    st.markdown(f"**{render.md_escape(fv.step_label(nstep))}**")
    _coverage_block(fan, nstep, "naive", "the one shared Coverage Set (every branch read it at T0)", page_scen, config)
    if nstep.kind == "parent":
        st.caption(
            "Round-robin assignment: "
            + render.md_escape(
                "; ".join(f"branch {i}: {', '.join(p)}" for i, p in enumerate(nstep.detail.get("assignment", [])))
            )
        )
    elif nstep.kind == "retrieval":
        st.caption(
            "Relevance over its round-robin sub-queries, but residual pull over the whole ResidualSet "
            "and novelty against the shared set as read at T0."
        )
        _facts_table(nstep, corpus, fv.chosen_by_several(run), f"{K}step.facts.n")
    elif nstep.kind == "dedup":
        _dedup_report(run, "naive")


def _stepper(fan: Any, corpus: Corpus, page_scen: Any, config: Any, result_sig: str) -> None:
    st.subheader("Step through the fan-out")
    steps, nsteps = fan.steps, fan.naive_steps
    n = len(steps)
    idx = _current_step(n)
    radio_key = f"{K}w.steps.{result_sig}"
    note = st.session_state.get(K_URL_NOTE)
    if note:
        st.caption(f"Link parameter adjusted: {render.md_escape(note)}")
    b1, b2, b3 = st.columns([1, 1, 6])
    b1.button(
        "◀ Previous", key=f"{K}prev", disabled=idx <= 0, on_click=_set_step, args=(idx - 1, radio_key), width="stretch"
    )
    b2.button(
        "Next ▶", key=f"{K}next", disabled=idx >= n - 1, on_click=_set_step, args=(idx + 1, radio_key), width="stretch"
    )
    b3.markdown(f"Step **{idx + 1}** of {n}: {render.md_escape(fv.step_label(steps[idx]))}")
    _write_url(idx)

    nidx = fv.naive_step_for(steps[idx], nsteps)
    c_list, c_part, c_naive = st.columns([1.15, 2.5, 2.5], gap="medium")
    with c_list:
        st.session_state[radio_key] = idx
        st.radio(
            "Steps",
            list(range(n)),
            key=radio_key,
            on_change=_on_pick,
            args=(radio_key,),
            format_func=lambda i: render.md_escape(  # radio options are Markdown
                f"{i + 1}. {fv.step_time(steps[i])} · {fv.actor(steps[i])} · "
                f"{KIND_NAMES.get(steps[i].kind, steps[i].kind)}"
            ),
        )
    with c_part:
        st.markdown("##### Partitioned (SPEC-027 §1.3)")
        _partitioned_detail(fan, steps[idx], corpus, page_scen, config)
        render.html_block(
            fv.timeline_html(
                steps, idx, duplicates=fv.duplicate_fact_ids(fan.partitioned), title="Timeline (partitioned)"
            )
        )
    with c_naive:
        st.markdown("##### Naive: shared Coverage Set (SPEC-027 §1.1)")
        _naive_detail(fan, nsteps[nidx], corpus, page_scen, config)
        render.html_block(
            fv.timeline_html(
                nsteps, nidx, duplicates=fv.chosen_by_several(fan.naive).keys(), title="Race timeline (naive)"
            )
        )
        st.caption("Red chips: facts chosen by more than one branch (duplicate content).")


def main() -> None:
    st.title("Fan-out simulator")
    base = breakdown.require_result()
    breakdown.run_caption(base)
    scenario, config, corpus = state.get_scenario(), state.get_config(), state.get_corpus()
    st.caption(
        "How SPEC-027 §1 keeps parallel branches from retrieving the same facts: partitioned fan-out "
        "(left) next to the naive shared-Coverage-Set fan-out (right). The controls below change this "
        "page only."
    )
    width, residual, depth = _controls(scenario, config)
    page_scen, page_cfg = _page_inputs(scenario, config, width, residual, depth)
    try:
        # operator decisions apply here as on every page (statuses come with the corpus)
        decisions, decisions_key = triage_decisions.pipeline_decisions()
        result = cache.pipeline_result(
            corpus, page_scen, page_cfg, state.get_now(), decisions=decisions, decisions_key=decisions_key
        )
    except CRPError as exc:
        st.error(f"The pipeline refused this input: {render.md_escape(exc)}")
        st.stop()
    fan = result.fanout
    header = {k: v for k, v in result.headers.items() if k == fv.PARTITIONS_HEADER}
    if fan is None:
        st.info(render.md_escape(fv.inactive_reason(width, len(page_scen.residual_set))))
        st.markdown(EXPLAIN_LOCK)
        st.markdown(EXPLAIN_SNAPSHOT)
        return
    render.headers_block(header)
    _comparison(fan)
    e1, e2 = st.columns(2)
    e1.markdown(EXPLAIN_LOCK)
    e2.markdown(EXPLAIN_SNAPSHOT)
    _partition_view(fan, scenario, page_scen, corpus)
    sig = _signature(cache.result_key(corpus, page_scen, page_cfg, state.get_now()))
    _stepper(fan, corpus, page_scen, page_cfg, sig)


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)

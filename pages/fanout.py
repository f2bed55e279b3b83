"""Fan-out simulator (SPEC-027 §1): partitions, the partitioned fan-out step by step, and the
naive shared-Coverage-Set race beside it.

Page controls (width, ResidualSet, branch depth weight) override the scenario and config for this page
only; the run is ``crp_core.run_pipeline`` through the shell's result cache (keyed by the corpus
digest, scenario JSON, config TOML and now), so stepping never recomputes. Every number shown is read
from the run's ``crp_core.FanoutResult``. The stepper is :mod:`crp_ui.fanout_stepper`.
"""

from __future__ import annotations

import streamlit as st

from crp_core import (
    FANOUT_DUPLICATES,
    Corpus,
    CRPConfig,
    CRPError,
    FanoutResult,
    Scenario,
    content_digest,
    dump_scenario,
    embed_scenario,
    headers,
)
from crp_ui import breakdown, cache, render, shell, state
from crp_ui import decisions as triage_decisions
from crp_ui import fanout_view as fv
from crp_ui.fanout_stepper import K, link_warning, stepper

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
# the cached run are immutable, and a cached function would hash its arguments and copy its value on every
# rerun.
def _sub_query_vectors(corpus: Corpus, scenario: Scenario, key: tuple[str, str]) -> dict[str, list[float]]:
    """Sub-query embeddings of the scenario (the vectors the pipeline partitions), once per key
    (corpus digest, scenario JSON). Callers must not mutate the mapping."""

    def build(c: Corpus) -> dict[str, list[float]]:
        v = embed_scenario(scenario, c, cache.embedder_for(c))
        return {sid: [float(x) for x in v.sub_queries[i]] for i, sid in enumerate(v.ids)}

    return cache.by_identity("fanout_vectors", corpus, build, extra=key)


def _projection(
    corpus: Corpus,
    partitions: tuple[tuple[str, ...], ...],
    addressed: tuple[str, ...],
    vectors: dict[str, list[float]],
    scenario: Scenario,
    key: tuple[str, str],
) -> fv.Projection:
    return cache.by_identity(
        "fanout_projection",
        corpus,
        lambda _c: fv.project_partitions(partitions, vectors, scenario=scenario, addressed_ids=addressed),
        extra=(key, partitions, addressed),
    )


def _page_inputs(
    scenario: Scenario, config: CRPConfig, width: int, residual: list[str], depth: float
) -> tuple[Scenario, CRPConfig]:
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


def _scenario_key(scenario: Scenario) -> str:
    return str(cache.by_identity("scenario", scenario, lambda sc: dump_scenario(sc, "json")))


def _signature(*parts: object) -> str:
    """A short digest of ``parts``: a widget key part (the controls restart when the scenario changes), never
    stored."""
    return content_digest(repr(parts), length=12)


# ---- sections -------------------------------------------------------------------------------------
def _controls(scenario: Scenario, config: CRPConfig) -> tuple[int, list[str], float]:
    sig = _signature(
        state.gen("scenario"),
        scenario.name,
        [sq.id for sq in scenario.sub_queries],
        [a.id for a in scenario.addressed],
        scenario.fanout_width,
        config.branch_depth_weight,
    )
    subs = {sq.id: sq for sq in scenario.sub_queries}
    # the width, depth weight and ResidualSet live in the link (?fo_width=, ?fo_depth=, ?residual=a,b)
    w_default, d_default = fv.clamp_width(scenario.fanout_width), float(config.branch_depth_weight)
    r_default = [sq.id for sq in scenario.residual_set]
    w_linked, w_refused = state.view_number("fo_width", w_default)
    d_linked, d_refused = state.view_number("fo_depth", d_default)
    r_linked, r_refused = state.view_subset("residual", list(subs), r_default)
    for refused in (w_refused, d_refused, r_refused):
        if refused:
            st.warning(f"Link parameter ignored: {render.md_escape(refused)}")
    c1, c3 = st.columns(2)
    width = c1.slider(
        "fan-out width",
        fv.MIN_WIDTH,
        fv.MAX_WIDTH,
        fv.clamp_width(int(w_linked)),
        key=f"{K}w.width.{sig}",
        help="Branches to run in parallel (1 = no fan-out). Starts at the scenario's fanout_width.",
    )
    residual = st.multiselect(
        "ResidualSet (sub-queries still to cover)",
        list(subs),
        default=r_linked,
        format_func=lambda s: render.plain(f"{s} ({subs[s].label})" if subs[s].label else s),
        key=f"{K}w.residual.{sig}",
        help="Remove a sub-query to mark it addressed (it joins the Coverage Set); add one back to make it "
        "remaining work. Starts at the scenario's sub_queries minus addressed.",
    )
    depth = c3.slider(
        "branch depth weight",
        0.0,
        1.0,
        float(d_linked),
        0.05,
        key=f"{K}w.depth.{sig}",
        help="depth_weight of the Coverage Set entry a branch writes for each sub-query of its "
        "partition (branch_depth_weight).",
    )
    state.set_view_number("fo_width", int(width), w_default)
    state.set_view_number("fo_depth", float(depth), d_default)
    state.set_view_subset("residual", list(residual), r_default)
    if list(residual) != r_default and not state.subset_linkable(list(residual)):
        state.declare_unlinked("the Fan-out page's ResidualSet edit")
    return int(width), list(residual), float(depth)


def _comparison(fan: FanoutResult) -> None:
    part, naive = fan.partitioned, fan.naive
    st.markdown(
        f"**Partitioned (SPEC-027):** {render.md_escape(fv.duplicates_sentence(part))}. "
        f"**Naive race:** {render.md_escape(fv.duplicates_sentence(naive))}."
    )
    fv.comparison_strip(fv.comparison_frame(fan))
    st.caption(
        f"{FANOUT_DUPLICATES.capitalize()} (naive {naive.duplicate_count}, partitioned {part.duplicate_count}; "
        "the partitioned count is the Tuning page's before / after view's, whose naive side races the SPEC-024-only "
        "run, so its naive count and facts can differ) are cross-branch duplicates found at fan-in: the same "
        "fact, or two facts with cosine > fanin_dedup_similarity, chosen by different branches. The partitioned "
        "run's fan-in dedup (SPEC-027 §1.6) removes the extra copies, so they do "
        "not reach the model; the naive race has no fan-in dedup, so its duplicates do. Distinct facts "
        "covered: the facts with each duplicate counted once. Coverage entries: the parent Coverage Set "
        "after the merge."
    )


def _partition_view(fan: FanoutResult, page_scen: Scenario, corpus: Corpus) -> None:
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
        render.table(fv.partitions_table(fv.partitions_frame(fan, page_scen)), hide_index=True)
        st.caption(
            f"{len(fan.partitioned.partitions)} disjoint partitions covering the "
            f"{len(residual)} ResidualSet sub-queries; partition k is branch k's scope."
        )


def main() -> None:
    st.title("Fan-out simulator")
    base = breakdown.require_result()
    breakdown.run_caption(base)
    scenario, config, corpus = state.get_scenario(), state.get_config(), state.get_corpus()
    if scenario is None or corpus is None:
        st.stop()
    st.caption(
        "How SPEC-027 §1 keeps parallel branches from retrieving the same facts: partitioned fan-out "
        "(left) next to the naive shared-Coverage-Set fan-out (right). The controls below change this "
        "page only."
    )
    # the link's warnings sit above the controls; the stepper's (its step needs the run) joins them later
    link_notes = st.empty()
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
    header = {k: v for k, v in result.headers.items() if k == headers.PARTITIONS}
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
    _partition_view(fan, page_scen, corpus)
    sig = _signature(cache.result_key(corpus, page_scen, page_cfg, state.get_now()))
    stepper(fan, corpus, page_scen, page_cfg, sig)
    if link_warning():
        link_notes.warning(f"Link parameter ignored: {render.md_escape(link_warning())}")


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)

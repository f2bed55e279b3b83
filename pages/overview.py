"""Overview of one run: the CRP headers as a copyable block, the stage funnel with each
stage's measured time, and the data-quality warnings (future timestamps, unknown ages). When the scenario
carries labels, every labelled fact with its mark (LEAK, MISSING, ...) and a count line."""

from __future__ import annotations

import streamlit as st

from crp_core import gate_counts
from crp_ui import breakdown, charts, labels_view, render, shell, state, tables


def main() -> None:
    st.title("Overview")
    result = breakdown.require_result()
    breakdown.run_caption(result)
    breakdown.known_conflict_banner(result)
    kb = result.corpus.kb
    env = result.envelope
    funnel = tables.memo(result, "funnel", lambda: tables.funnel_frame(result))
    warn = tables.memo(result, "warnings", lambda: tables.warnings_frame(result))

    c = st.columns(6)
    c[0].metric("facts in the CKF", render.count_text(len(kb)), help=render.count_help(len(kb)))
    n_cand = int(funnel.loc[funnel["stage"] == "candidates", "count"].iloc[0])
    c[1].metric(
        "candidates",
        render.count_text(n_cand),
        help=render.count_help(
            n_cand,
            "stage-1 candidates; the facts scored also count stage 3's connector candidates (the second figure of "
            "the CRP-Context-Facts-Used header and the Score breakdown's rows)",
        ),
    )
    c[2].metric("packed facts", len(env.order))
    c[3].metric("tokens used", env.tokens_used, help=f"of a token budget of {env.token_budget}")
    res = result.resolution
    c[4].metric(
        "conflict pairs",
        res.detected,
        help=f"stage 4's pairs among the selected facts (cosine above contradiction_similarity and a value "
        f"conflict): {res.detected - res.unresolved} resolved by authority, {res.unresolved} tied (unresolved). "
        "The Story counts only the pairs whose two facts both reach the model.",
    )
    c[5].metric("warnings", len(warn), help="data-quality warnings (future timestamps, unknown ages)")
    breakdown.gate_notice(result, key="crp.page.overview.gate_try")
    labels_view.section(result, key="crp.page.overview.labels")

    st.subheader("CRP headers")
    st.caption(
        "The response headers of this run (the CRP-Context-* headers, docs/reference/reports.md). Copy with the "
        "icon at the top right."
    )
    render.headers_block(result.headers)

    st.subheader("Stages")
    left, right = st.columns([3, 2])
    with left:
        st.plotly_chart(
            tables.memo(result, "funnel_fig", lambda: charts.stage_funnel(funnel)),
            width="stretch",
            key="crp.page.overview.funnel",
        )
    with right:
        render.dataframe(
            funnel,
            hide_index=True,
            width="stretch",
            column_config=breakdown.column_config(funnel),
            key="crp.page.overview.funnel_table",
        )
        st.caption(
            "Measured wall time of each pipeline stage (ms); the similarity graph is corpus "
            "preparation and is not timed here."
        )
        timings = tables.memo(result, "timings", lambda: tables.timings_frame(result))
        render.dataframe(
            timings,
            hide_index=True,
            width="stretch",
            column_config=breakdown.column_config(timings),
            key="crp.page.overview.timings",
        )
        gate, why = breakdown.gate_caption(gate_counts(result), result.config.cdr_min_relevance)
        st.caption(gate, help=why)

    st.subheader("Data-quality warnings")
    if len(warn) == 0:
        st.success("No data-quality warnings: every scored fact has a known, past timestamp.")
    else:
        st.warning(
            f"{len(warn)} data-quality warning(s): future timestamps count as age 0, unknown ages get "
            "recency factor 1.0 (SPEC-027 §3.2)."
        )
        render.dataframe(warn, hide_index=True, width="stretch", key="crp.page.overview.warnings")
    if state.url_warnings():
        st.caption("Some link parameters were ignored (see the sidebar).")


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)

"""The packed envelope of one run (SPEC-003 §7): facts in packed order with their
primacy / middle / recency band, connectors beside the anchor they follow, NOTE blocks for tied
conflicts, token use vs budget; downloads of the full JSON report (the CLI's format) and of the
breakdown table as CSV."""
from __future__ import annotations

import streamlit as st

from crp_core.report import dumps
from crp_core.stages.packing import fact_line
from crp_ui import breakdown, charts, render, shell, state, tables

K = "crp.page.envelope."
BAND_TITLES = {"primacy": "Primacy band (start)", "middle": "Middle band", "recency": "Recency band (end)"}


def notes_after(result) -> dict[str, list[str]]:
    """NOTE blocks keyed by the fact they follow in the envelope text (the later fact of the tied pair)."""
    env = result.envelope
    kb = result.corpus.kb
    starts = sorted((env.text.find(fact_line(p.fact_id, kb.get(p.fact_id).content)), p.fact_id) for p in env.order)
    out: dict[str, list[str]] = {}
    for note in env.notes:
        at = env.text.find(note)
        before = [fid for pos, fid in starts if 0 <= pos < at]
        out.setdefault(before[-1] if before else "", []).append(note)
    return out


def main() -> None:
    st.title("Envelope")
    result = breakdown.require_result()
    breakdown.run_caption(result)
    breakdown.known_conflict_banner(result)
    env = result.envelope
    frame = tables.memo(result, "envelope", lambda: tables.envelope_frame(result))

    c = st.columns(5)
    c[0].metric("facts packed", len(env.order))
    c[1].metric(f"tokens (budget {env.token_budget})", env.tokens_used)
    c[2].metric("connectors", int((frame["role"] == "connector").sum()) if len(frame) else 0)
    c[3].metric("NOTE blocks (ties)", len(env.notes))
    c[4].metric("dropped (budget)", len(env.dropped_for_budget),
                help="selected facts that did not fit the token budget")
    st.plotly_chart(tables.memo(result, "tokens", lambda: charts.token_budget_bar(frame, env.token_budget,
                                                                                 env.tokens_used)), width="stretch",
                    key=K + "tokens")

    d = st.columns([1, 1, 2])
    stem = (state.get_scenario_name().rsplit(".", 1)[0] or "run")
    d[0].download_button("Download JSON report", tables.memo(result, "json", lambda: dumps(tables.report_of(result))),
                         file_name=f"crp-report-{stem}.json", mime="application/json", key=K + "json", width="stretch",
                         help="The same object as `crp-inspect run --json`.")
    d[1].download_button("Download breakdown CSV", tables.memo(result, "csv", lambda: tables.breakdown_csv(result)),
                         file_name=f"crp-breakdown-{stem}.csv", mime="text/csv", key=K + "csv", width="stretch",
                         help="Every scored fact with every factor.")

    if not len(frame):
        st.info("The envelope is empty.")
        st.stop()
    notes = notes_after(result)
    band = None
    for r in frame.itertuples(index=False):
        if r.band != band:
            band = r.band
            st.subheader(BAND_TITLES.get(band, band))
        extra = {"#": r.position, "role": r.role, "tier": r.tier, "score": r.score, "tokens": r.tokens}
        fact = result.corpus.kb.get(r.fact_id)
        if r.role == "connector":
            pad, body = st.columns([1, 14])
            pad.markdown("↳")
            with body:
                st.caption(f"connector bridging anchor {render.md_escape(r.bridges_anchor or '-')} "
                           "(placed next to it, outside positions 1-2 and the recency block)")
                render.fact_card(fact, extra=extra)
        else:
            render.fact_card(fact, extra=extra)
        for note in notes.get(r.fact_id, []):
            st.caption("NOTE block (tied conflict, SPEC-027 §2.5), exact envelope text:")
            render.code(note, wrap_lines=True)
    for note in notes.get("", []):
        render.code(note, wrap_lines=True)

    if env.dropped_for_budget:
        st.subheader("Dropped for the token budget")
        st.markdown(render.md_escape(", ".join(env.dropped_for_budget)))
    if env.dropped_pairs:
        st.caption("Tied pairs left out whole (a tied pair is packed as a unit: both facts and its NOTE, or neither): "
                   + render.md_escape(", ".join(f"{p.fact_a} / {p.fact_b} ({p.reason})" for p in env.dropped_pairs)))
    if env.dropped_unbridged:
        st.subheader("Dropped: fewer than two bridged anchors packed")
        st.markdown(render.md_escape(", ".join(env.dropped_unbridged)))
    with st.expander("Envelope text"):
        hidden = render.controls_in(env.text)
        if hidden:
            st.caption(f"Exact text, except its {', '.join(hidden)} characters (bidi or invisible), shown as "
                       "⟨U+XXXX⟩ so they cannot reorder what is displayed; the JSON report holds them as they are.")
        render.code(env.text, wrap_lines=True)
    with st.expander("Packed order as a table"):
        render.dataframe(frame, hide_index=True, width="stretch", column_config=breakdown.column_config(frame),
                         key=K + "table")


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)

"""The packed envelope of one run (SPEC-003 §7): facts in packed order with their
primacy / middle / recency band, connectors beside the anchor they follow, NOTE blocks for tied
conflicts, token use vs budget; downloads of the full JSON report (the CLI's format) and of the
breakdown table as CSV.

Nothing here needs one of the frontend's large lazily loaded components (the plotly chart, ~4.7 MB of
JavaScript, and the code block's syntax highlighter, ~1.5 MB): on a first visit straight to this page
their download and parse kept the whole page as skeletons for seconds after the run had finished. The
token bar is plain HTML drawn here, NOTE blocks and the envelope text are ``st.text``, and the
downloads build their data only when clicked."""

from __future__ import annotations

from typing import Any

import streamlit as st

from crp_core.report import dumps
from crp_core.stages.packing import fact_line
from crp_ui import breakdown, glossary, render, shell, state, tables
from crp_ui.charts import BAND_COLOURS

K = "crp.page.envelope."
#: key of the packed-order table expander (closed at first, kept for the session; tests open it)
TABLE_OPEN = K + "table_open"
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


NOTE_COLOUR = "#d9b44a"


def token_bar_html(frame: Any, token_budget: int, tokens_used: int) -> str:
    """One stacked bar of the envelope's tokens: a segment per packed fact (in packed order, coloured by
    band, its id and tokens as hover text), one for the NOTE blocks, against the budget (a red mark).
    Widths are percentages of max(budget, used); every text is escaped."""
    scale = max(int(token_budget), int(tokens_used), 1)
    segs = []
    for r in frame.itertuples(index=False):
        tip = render.html_text(f"#{r.position} {r.fact_id} · {r.band} · {r.tokens} tokens")
        segs.append(
            f'<div class="crp-tok" data-band="{render.html_text(r.band)}" title="{tip}" style="width:'
            f"{100 * int(r.tokens) / scale:.3f}%;background:{BAND_COLOURS.get(str(r.band), '#888')};"
            'border-right:1px solid #fff"></div>'
        )
    notes = int(tokens_used) - (int(frame["tokens"].sum()) if len(frame) else 0)
    if notes > 0:
        segs.append(
            f'<div class="crp-tok" data-band="note" title="NOTE blocks · {notes} tokens" '
            f'style="width:{100 * notes / scale:.3f}%;background:{NOTE_COLOUR}"></div>'
        )
    mark = 100 * int(token_budget) / scale
    legend = " ".join(
        f'<span style="display:inline-block;width:10px;height:10px;background:{c};margin:0 3px 0 10px">'
        f"</span>{render.html_text(b)}"
        for b, c in (*BAND_COLOURS.items(), ("NOTE blocks", NOTE_COLOUR))
    )
    return (
        f'<div class="crp-token-bar" data-used="{int(tokens_used)}" data-budget="{int(token_budget)}" '
        'style="margin:4px 0 12px 0"><div style="font-weight:600;font-size:0.95em;margin-bottom:4px">'
        f"Token use: {int(tokens_used)} / {int(token_budget)}</div>"
        '<div style="position:relative;height:26px;background:#f1f3f5;border-radius:4px;display:flex;'
        f'overflow:hidden">{"".join(segs)}</div>'
        f'<div style="position:relative;height:14px"><div style="position:absolute;left:calc({mark:.3f}% - 1px);'
        'top:-30px;height:34px;border-left:2px dashed #b00020"></div>'
        f'<div style="position:absolute;left:calc({min(mark, 88):.3f}%);top:2px;font-size:0.75em;color:#b00020">'
        f"&nbsp;budget {int(token_budget)}</div></div>"
        f'<div style="font-size:0.8em;color:#555">{legend}</div></div>'
    )


def connector_card_html(fact: Any, anchor: str | None, extra: dict[str, Any]) -> str:
    """A connector's card, indented under an arrow with the anchor it bridges above it: one HTML block
    (escaped ids and text, static styles), so it joins the Markdown element of the cards around it
    instead of costing a row of columns, an arrow, a caption and a card element of its own."""
    return (
        '<div class="crp-connector" style="display:flex;gap:0.6em;margin-left:0.8em">'
        '<div style="font-size:1.2em;line-height:1.6">↳</div><div style="flex:1;min-width:0">'
        '<div style="font-size:0.85em;color:#6b6b6b;margin-bottom:2px">connector bridging anchor '
        f"{render.html_text(anchor or '-')} (placed next to it, outside positions 1-2 and the recency "
        f"block)</div>{render.fact_card_html(fact, extra=extra)}</div></div>"
    )


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
    c[4].metric(
        "dropped (budget)", len(env.dropped_for_budget), help="selected facts that did not fit the token budget"
    )
    st.markdown(token_bar_html(frame, env.token_budget, env.tokens_used), unsafe_allow_html=True)

    d = st.columns([1, 1, 2])
    stem = state.get_scenario_name().rsplit(".", 1)[0] or "run"

    def report_json() -> str:
        return str(tables.memo(result, "json", lambda: dumps(tables.report_of(result))))

    def breakdown_csv() -> str:
        return str(tables.memo(result, "csv", lambda: tables.breakdown_csv(result)))

    d[0].download_button(
        "Download JSON report",
        report_json,
        file_name=f"crp-report-{stem}.json",
        mime="application/json",
        key=K + "json",
        width="stretch",
        on_click="ignore",
        help="The same object as `crp-inspect run --json`.",
    )
    d[1].download_button(
        "Download breakdown CSV",
        breakdown_csv,
        file_name=f"crp-breakdown-{stem}.csv",
        mime="text/csv",
        key=K + "csv",
        width="stretch",
        on_click="ignore",
        help="Every scored fact with every factor.",
    )

    if not len(frame):
        st.info("The envelope is empty.")
        st.stop()
    notes = notes_after(result)
    band = None
    cards: list[str] = []  # consecutive plain cards, drawn as one Markdown element (each element costs a render)

    def flush() -> None:
        if cards:
            st.markdown("\n\n".join(cards), unsafe_allow_html=True)  # escaped HTML blocks (render.fact_card_html)
            cards.clear()

    for r in frame.itertuples(index=False):
        if r.band != band:
            flush()
            band = r.band
            st.subheader(BAND_TITLES.get(band, band))
        extra = {"#": r.position, "role": r.role, "tier": r.tier, "score": r.score, "tokens": r.tokens}
        fact = result.corpus.kb.get(r.fact_id)
        if r.role == "connector":  # indented under its arrow, in the same element as the cards around it
            cards.append(connector_card_html(fact, r.bridges_anchor, extra))
        else:
            cards.append(render.fact_card_html(fact, extra=extra))
        for note in notes.get(r.fact_id, []):
            flush()
            st.caption("NOTE block (tied conflict, SPEC-027 §2.5), exact envelope text:")
            st.text(render.plain(note))
    flush()
    for note in notes.get("", []):
        st.text(render.plain(note))

    if env.dropped_for_budget:
        st.subheader("Dropped for the token budget")
        st.markdown(render.md_escape(", ".join(env.dropped_for_budget)))
    if env.dropped_pairs:
        st.caption(
            "Tied pairs left out whole (a tied pair is packed as a unit: both facts and its NOTE, or neither): "
            + render.md_escape(", ".join(f"{p.fact_a} / {p.fact_b} ({p.reason})" for p in env.dropped_pairs))
        )
    if env.dropped_unbridged:
        st.subheader("Dropped: fewer than two bridged anchors packed")
        st.markdown(render.md_escape(", ".join(env.dropped_unbridged)))
    with st.expander("Envelope text"):
        hidden = render.controls_in(env.text)
        if hidden:
            st.caption(
                f"Exact text, except its {', '.join(hidden)} characters (bidi or invisible), shown as "
                "⟨U+XXXX⟩ so they cannot reorder what is displayed; the JSON report holds them as they are."
            )
        st.text(render.plain(env.text))
    packed = render.remembered_expander("Packed order as a table", TABLE_OPEN)
    if packed.open:  # a table the browser builds only while it is open
        with packed:
            render.dataframe(
                frame,
                hide_index=True,
                width="stretch",
                column_config=glossary.with_help(frame.columns, breakdown.column_config(frame)),
                key=K + "table",
            )


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)

"""The packed envelope of one run (SPEC-003 §7): facts in packed order with their
primacy / middle / recency band, connectors beside the anchor they follow, NOTE blocks for tied
conflicts and the tie groups behind them (or why the envelope is empty), token use vs budget;
downloads of the full JSON report (the CLI's format) and of the breakdown table as CSV.

Nothing here needs one of the frontend's large lazily loaded components (the plotly chart, the code
block's syntax highlighter): the token use is drawn with progress bars, NOTE blocks and the envelope
text are ``st.text``, and the downloads build their data only when clicked.

When the scenario carries labels, each labelled packed fact shows its mark (LEAK, WRONG WINNER, EXPECTED
WINNER, OK) on its card and in the table, and the labelled facts left out are listed with where they
were lost (docs/decisions/labels.md)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from crp_core import Envelope, Fact, LabelMarks, PipelineResult, dumps, fact_line
from crp_ui import breakdown, glossary, labels_view, render, shell, state, tables

K = "crp.page.envelope."
#: key of the packed-order table expander (closed at first, kept for the session; tests open it)
TABLE_OPEN = K + "table_open"
#: key of the container of the token-use bars (Streamlit gives it the CSS class ``st-key-<key>``)
TOKEN_BOX = "crp-token-bar"
BAND_TITLES = {"primacy": "Primacy band (start)", "middle": "Middle band", "recency": "Recency band (end)"}
BANDS = ("primacy", "middle", "recency")


def notes_after(result: PipelineResult) -> dict[str, list[str]]:
    """NOTE blocks keyed by the fact they follow in the envelope text (the last packed fact of its tie group)."""
    env = result.envelope
    kb = result.corpus.kb
    starts = sorted(
        (env.text.find(fact_line(p.fact_id, getattr(kb.get(p.fact_id), "content", ""))), p.fact_id) for p in env.order
    )
    out: dict[str, list[str]] = {}
    for note in env.notes:
        at = env.text.find(note)
        before = [fid for pos, fid in starts if 0 <= pos < at]
        out.setdefault(before[-1] if before else "", []).append(note)
    return out


def band_tokens(frame: pd.DataFrame, tokens_used: int) -> list[tuple[str, int, int]]:
    """(what, facts, tokens) of each band present in packed order, then of the NOTE blocks (the tokens
    the envelope uses beyond its facts) when there are any."""
    out = []
    for band in BANDS:
        rows = frame[frame["band"] == band] if len(frame) else frame
        if len(rows):
            out.append((f"{band} band", len(rows), int(rows["tokens"].sum())))
    notes = int(tokens_used) - (int(frame["tokens"].sum()) if len(frame) else 0)
    if notes > 0:
        out.append(("NOTE blocks", 0, notes))
    return out


def token_use(frame: pd.DataFrame, token_budget: int, tokens_used: int) -> None:
    """Token use against the budget (a progress bar; over the budget it is full and says so), then the
    tokens of each band and of the NOTE blocks as a share of the budget."""
    budget = max(int(token_budget), 1)
    used = int(tokens_used)
    with st.container(key=TOKEN_BOX):
        over = f" (over the budget by {used - budget})" if used > budget else ""
        st.progress(min(used / budget, 1.0), text=f"Token use: {used} / {int(token_budget)}{over}")
        for what, facts, tokens in band_tokens(frame, used):
            count = f", {facts} fact{'' if facts == 1 else 's'}" if facts else ""
            st.progress(min(tokens / budget, 1.0), text=f"{what}: {tokens} tokens{count}")


def connector_card_html(
    fact: Fact, anchor: str | None, extra: dict[str, Any], badges: tuple[tuple[str, str], ...] = ()
) -> str:
    """A connector's card, indented under an arrow with the anchor it bridges above it: one HTML block
    (escaped ids and text; its look from the stylesheet's ``crp-connector`` classes), so it joins the
    Markdown element of the cards around it."""
    return (
        '<div class="crp-connector"><div class="crp-connector-note">↳ connector bridging anchor '
        f"{render.html_text(anchor or '-')} (placed next to it, outside positions 1-2 and the recency "
        f"block)</div>{render.fact_card_html(fact, extra=extra, badges=badges)}</div>"
    )


def _metrics(env: Envelope, frame: pd.DataFrame) -> None:
    c = st.columns(5)
    c[0].metric("facts packed", len(env.order))
    c[1].metric(f"tokens (budget {env.token_budget})", env.tokens_used)
    c[2].metric("connectors", int((frame["role"] == "connector").sum()) if len(frame) else 0)
    c[3].metric(
        "NOTE blocks (ties)", len(env.notes), help="one per tie group with a packed fact (facts of equal authority)"
    )
    c[4].metric(
        "dropped (budget)", len(env.dropped_for_budget), help="selected facts that did not fit the token budget"
    )


def _downloads(result: PipelineResult) -> None:
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


def _cards(result: PipelineResult, frame: pd.DataFrame, marks: LabelMarks | None) -> None:
    """The facts in packed order under their band's heading (a labelled fact with its mark), a tie group's
    NOTE block after its last packed fact; consecutive cards are drawn as one Markdown element (escaped
    HTML blocks)."""
    notes = notes_after(result)
    kinds = marks.kinds() if marks is not None else {}
    band = None
    cards: list[str] = []

    def flush() -> None:
        if cards:
            st.markdown("\n\n".join(cards), unsafe_allow_html=True)
            cards.clear()

    for r in frame.itertuples(index=False):
        if r.band != band:
            flush()
            band = r.band
            st.subheader(BAND_TITLES.get(str(band), str(band)))
        # an anchor's score is its CDR (0-1); a connector's is its connector score (SPEC-027 §3.3), on another
        # scale: its bridge value counts the pairs of anchors it joins
        score = "connector score" if r.role == "connector" else "CDR"
        extra = {"#": r.position, "role": r.role, "tier": r.tier, score: r.score, "tokens": r.tokens}
        badges = labels_view.mark_badges(kinds.get(str(r.fact_id)))
        fact = result.corpus.kb.get(str(r.fact_id))
        assert fact is not None  # a packed fact of this run's corpus
        if r.role == "connector":  # indented under its arrow, in the same element as the cards around it
            anchor = None if r.bridges_anchor is None else str(r.bridges_anchor)
            cards.append(connector_card_html(fact, anchor, extra, badges))
        else:
            cards.append(render.fact_card_html(fact, extra=extra, badges=badges))
        for note in notes.get(str(r.fact_id), []):
            flush()
            st.caption("NOTE block (tied conflict, SPEC-027 §2.5), exact envelope text:")
            st.text(render.plain(note))
    flush()
    for note in notes.get("", []):
        st.text(render.plain(note))


def _dropped(env: Envelope) -> None:
    if env.dropped_for_budget:
        st.subheader("Dropped for the token budget")
        st.markdown(render.md_escape(", ".join(env.dropped_for_budget)))
    if env.dropped_unbridged:
        st.subheader("Dropped: fewer than two bridged anchors packed")
        st.markdown(render.md_escape(", ".join(env.dropped_unbridged)))


def _labelled_left_out(marks: LabelMarks | None) -> None:
    """The labelled facts the envelope does not hold, each with where it was lost (MISSING first)."""
    if marks is None or all(m.packed for m in marks.marks):
        return
    st.subheader("Labelled facts not packed")
    st.caption("Where each was lost in this run: not retrieved, gated, scored but not selected, suppressed, dropped.")
    labels_view.marks_table(marks, key=K + "labels_left_out", packed=False)


def _tie_groups(result: PipelineResult) -> None:
    """The run's tie groups (docs/reference/pipeline.md §6): one NOTE block each, naming its facts left out."""
    groups = tables.memo(result, "tie groups", lambda: tables.tie_groups_frame(result))
    if not len(groups):
        return
    st.subheader("Tie groups")
    st.caption(
        "Facts connected by tied conflicts (equal authority, SPEC-027 §2.5). The packed facts of a group "
        "share one NOTE block, which names the members left out; the Conflicts-Resolved header counts as "
        "unresolved the tied pairs whose two facts are packed (the pairs covered)."
    )
    render.dataframe(groups, hide_index=True, width="stretch", key=K + "tie_groups")


def _text_and_table(env: Envelope, frame: pd.DataFrame, marks: LabelMarks | None) -> None:
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
            shown = labels_view.with_label(frame, marks)
            cfg = breakdown.column_config(shown)
            if marks is not None:
                cfg = labels_view.label_config(cfg)
            render.dataframe(
                shown,
                hide_index=True,
                width="stretch",
                column_config=glossary.with_help(shown.columns, cfg),
                key=K + "table",
            )


def main() -> None:
    st.title("Envelope")
    result = breakdown.require_result()
    breakdown.run_caption(result)
    breakdown.known_conflict_banner(result)
    env = result.envelope
    frame = tables.memo(result, "envelope", lambda: tables.envelope_frame(result))
    marks = labels_view.marks_of(result)
    _metrics(env, frame)
    if marks is not None:
        labels_view.summary(marks)
    token_use(frame, env.token_budget, env.tokens_used)
    _downloads(result)
    if not len(frame):
        reason = env.empty_reason or "the envelope is empty."
        st.info(render.md_escape(reason[:1].upper() + reason[1:]))
        _labelled_left_out(marks)
        _tie_groups(result)
        st.stop()
    _cards(result, frame, marks)
    _dropped(env)
    _labelled_left_out(marks)
    _tie_groups(result)
    _text_and_table(env, frame, marks)


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)

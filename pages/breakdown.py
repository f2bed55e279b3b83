"""CDR score breakdown: every scored fact with every factor, filterable and sortable over
all rows (the table shows one page at a time); the selected fact's CDR product step by step; the
recency curves with the scored facts on them; histograms of relevance (gate) and CDR score. When the
scenario carries labels, a ``label`` column marks each labelled fact (LEAK, MISSING, ...), with a count line
and the labelled facts that were never scored (docs/decisions/labels.md)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from crp_core import LabelMarks, PipelineResult, content_digest
from crp_ui import breakdown, cache, charts, glossary, labels_view, paging, render, shell, state, tables

PAGE_SIZES = (50, 100, 200, 500)
#: columns shown in the table (the CSV download on the Envelope page has them all); the CDR score, the
#: default sort, before the wide reason (after it, it was scrolled out of sight); the reason sits next to the
#: outcome, so a gated or suppressed row says why where it is read (a gated fact can top a sort by CDR score:
#: the gate is on relevance)
SHOWN = (
    "fact_id",
    "cdr_score",
    "role",
    "outcome",
    "reason",
    "importance_weight",
    "relevance",
    "residual_pull",
    "effective_relevance",
    "novelty",
    "coverage_score",
    "recency_factor",
    "age_days",
    "ttl_days",
    "ngram_penalty",
    "bridge_value",
    "source_type",
    "content",
)
SORTABLE = (
    "cdr_score",
    "relevance",
    "residual_pull",
    "effective_relevance",
    "novelty",
    "coverage_score",
    "recency_factor",
    "age_days",
    "importance_weight",
    "ngram_penalty",
    "bridge_value",
    "fact_id",
)
K = "crp.page.breakdown."
#: keys of the histograms' and the recency curves' expanders (render.remembered_expander), and the
#: session's memory of their open state (tests open them through these)
DIST_OPEN = K + "dist_open"
DIST_KEEP = DIST_OPEN + ".keep"
RECENCY_OPEN = K + "recency_open"
RECENCY_KEEP = RECENCY_OPEN + ".keep"


def _filters(result: PipelineResult, frame: pd.DataFrame, marks: LabelMarks | None) -> tuple[pd.DataFrame, str]:
    """Filter + sort widgets; returns the filtered, sorted frame (all rows) and a view digest. With labels, a
    toggle keeps only the labelled facts."""
    c = st.columns([2, 2, 2, 3])
    roles = c[0].multiselect("role", sorted(frame["role"].dropna().unique()), key=K + "roles")
    outcomes = c[1].multiselect(
        "outcome", [o for o in tables.OUTCOMES if o in set(frame["outcome"].tolist())], key=K + "outcomes"
    )
    types = c[2].multiselect("source type", sorted(frame["source_type"].dropna().unique()), key=K + "types")
    text = c[3].text_input("search id / text", key=K + "text", placeholder="substring, case-insensitive")
    c = st.columns([2, 2, 5], vertical_alignment="bottom")
    sort = c[0].selectbox("sort by (all rows)", SORTABLE, key=K + "sort")
    desc = c[1].toggle("descending", value=True, key=K + "desc")
    labelled = marks is not None and c[2].toggle(
        "labelled facts only", key=K + "labelled", help="Only the facts the scenario's expect table names."
    )
    keep = tuple(sorted(marks.by_id)) if labelled and marks is not None else None
    state.declare_settings(
        "the fact table's filters and sort",
        {"role": roles, "outcome": outcomes, "source type": types, "search": text, "sort by": sort}
        | {"descending": desc, "labelled facts only": labelled},
        {"role": [], "outcome": [], "source type": [], "search": "", "sort by": SORTABLE[0], "descending": True}
        | {"labelled facts only": False},
    )

    def build() -> pd.DataFrame:
        got = tables.sort_breakdown(
            tables.filter_breakdown(frame, roles=roles, outcomes=outcomes, source_types=types, text=text), sort, desc
        )
        return got if keep is None else got[got["fact_id"].isin(keep)]

    view = tables.memo(result, ("view", tuple(roles), tuple(outcomes), tuple(types), text, sort, desc, keep), build)
    # a widget key part (the page number restarts when the view changes), never stored
    digest = content_digest(repr((roles, outcomes, types, text, sort, desc, labelled)), length=10)
    return view, digest


def _table(view: pd.DataFrame, digest: str, total: int, marks: LabelMarks | None) -> None:
    """One page of the filtered rows; a clicked row becomes the selected fact."""
    c = st.columns([1, 1, 4])
    size = paging.size_picker(c[0], K + "page_size", PAGE_SIZES, PAGE_SIZES[1])
    page = paging.page_picker(c[1], paging.page_key(K, digest, size), len(view), size)
    state.declare_settings(
        "the fact table's page", {"rows per page": size, "page": page}, {"rows per page": PAGE_SIZES[1], "page": 1}
    )
    shown = paging.page_of(view, page, size)
    current = state.selected_fact()
    table = labels_view.with_label(shown[list(SHOWN)].copy(), marks)
    ids = table["fact_id"].tolist()  # one conversion of the column, not a scalar per cell
    table.insert(0, "sel", ["▶" if f == current else "" for f in ids])
    c[2].caption(
        f"{len(view)} of {total} scored facts match; {paging.rows_text(len(view), page, size)} shown. "
        "Click a row to inspect it."
    )
    cfg = breakdown.column_config(table)
    cfg["fact_id"] = st.column_config.TextColumn("fact_id", pinned=True)
    cfg["reason"] = st.column_config.TextColumn("reason", width="large")
    if marks is not None:
        cfg = labels_view.label_config(cfg)
    cfg = glossary.with_help(table.columns, cfg)
    cfg["sel"] = st.column_config.TextColumn("", width="small", pinned=True)
    pos = [i for i, f in enumerate(ids) if f == current]
    event = render.dataframe(
        table,
        hide_index=True,
        width="stretch",
        height=420,
        column_config=cfg,
        on_select="rerun",
        selection_mode="single-row",
        selection_default={"selection": {"rows": pos[:1]}} if pos else None,
        key=f"{K}table.{digest}.{size}.{page}.{current}",
    )
    rows = list(event.selection.rows) if event is not None and hasattr(event, "selection") else []
    if rows and 0 <= rows[0] < len(table):
        fid = str(table["fact_id"].iloc[rows[0]])
        if fid != current:
            state.select_fact(fid)
            st.rerun()


@st.fragment
def _recency(result: PipelineResult, frame: pd.DataFrame, current: str | None) -> None:
    """The recency curves with their axis toggle: a fragment, so the toggle redraws only this chart."""
    linked, refused = state.view_number("logx", 0)  # ?logx=1
    if refused:
        st.warning(f"Link parameter ignored: {render.md_escape(refused)}")
    log_x = st.toggle(
        "log age axis",
        value=bool(linked),
        key=K + "logx",
        help="Spreads short TTLs (news: 30 days) and long ones (regulatory: 5 years).",
    )
    state.set_view_number("logx", int(log_x), 0)
    st.plotly_chart(
        cache.memo_shared(
            ("recency", _recency_inputs(result, frame), current, log_x),
            lambda: charts.recency_chart(frame, result.config, selected=current, log_x=log_x),
        ),
        width="stretch",
        key=K + "recency",
    )


def _recency_inputs(result: PipelineResult, frame: pd.DataFrame) -> tuple[object, ...]:
    """What the recency chart is drawn from: the scored facts' recency columns and the recency settings.
    A config change that leaves them alone (the relevance gate, packing) reuses the figure."""
    return tuple(
        tables.memo(
            result,
            "recency_inputs",
            lambda: (tables.frame_digest(frame, charts.RECENCY_COLUMNS), charts.recency_settings(result.config)),
        )
    )


def _histograms(result: PipelineResult, frame: pd.DataFrame) -> None:
    """Relevance (the gate applies to it) and CDR score, stacked by outcome."""
    left, right = st.columns(2)
    with left:
        gate = float(result.config.cdr_min_relevance)
        st.plotly_chart(
            tables.memo(
                result,
                "hist_rel",
                lambda: charts.score_histogram(
                    frame,
                    "relevance",
                    threshold=gate,
                    threshold_label=f"gate cdr_min_relevance {gate:g}",
                    title="Relevance (the gate applies to it)",
                ),
            ),
            width="stretch",
            key=K + "hist_rel",
        )
    with right:
        anchors = frame.loc[frame["role"] == "anchor", "cdr_score"]
        low = float(anchors.min()) if len(anchors) else None
        st.plotly_chart(
            tables.memo(
                result,
                "hist_cdr",
                lambda: charts.score_histogram(
                    frame,
                    "cdr_score",
                    threshold=low,
                    threshold_label=f"lowest anchor CDR {low:.3f}" if low is not None else "",
                    title="CDR score",
                ),
            ),
            width="stretch",
            key=K + "hist_cdr",
        )


def _labels(marks: LabelMarks, frame: pd.DataFrame) -> None:
    """The count line and legend, and the labelled facts the table cannot list (never scored)."""
    labels_view.summary(marks)
    scored = set(frame["fact_id"].tolist())
    unscored = [m for m in marks.marks if m.fact_id not in scored]
    if unscored:
        st.caption(
            "Labelled facts not among the scored facts: "
            + render.md_escape(
                "; ".join(f"{m.fact_id} {m.kind} ({labels_view.STATE_WORDS[m.state]})" for m in unscored)
            )
        )


def main() -> None:
    st.title("Score breakdown")
    result = breakdown.require_result()
    breakdown.run_caption(result)
    frame = tables.breakdown_frame(result)
    marks = labels_view.marks_of(result)
    if marks is not None:
        _labels(marks, frame)
    st.caption(
        "Every scored fact (stage-1 candidates, gated ones included, then the stage-3 connector "
        "candidates) with every factor of CDR = importance × max(relevance, residual pull) × novelty × "
        "recency × (1 − n-gram penalty) (SPEC-024 §2.2 with SPEC-027 §3.3). Values are the pipeline's, never "
        "recomputed."
    )
    view, digest = _filters(result, frame, marks)
    current = state.selected_fact()
    view_ids = view["fact_id"].tolist()
    shown = set(view_ids)
    if current is not None and current not in shown and (current in set(frame["fact_id"].tolist()) or not shown):
        # the filters hide the selected fact (or match nothing): the selection is cleared, so the detail
        # below never shows a fact the table does not list (an unscored deep-linked fact keeps its note)
        state.select_fact(None)
        current = None
    if not len(view):
        st.info(
            "No scored fact matches these filters: change or clear the search (and the role, outcome and "
            "source type filters) to see facts again."
        )
    else:
        _table(view, digest, len(frame), marks)

    st.subheader("Selected fact")
    if not len(view):
        st.caption("No fact selected: the filters match no scored fact.")
    else:
        current = breakdown.fact_picker(
            view_ids, key=K + "pick", help="Also set by clicking a table row, or by ?fact=<id> in the URL."
        )
        if current is None:
            st.info("Click a row of the table (or pick a fact above) to see how its score is built.")
        else:
            breakdown.fact_detail(result, current, frame)
            mark = marks.get(current) if marks is not None else None
            if mark is not None:
                st.markdown(f"Label **{render.md_escape(mark.kind)}**: {render.md_escape(mark.reason)}")

    st.subheader("Recency curves")
    # the recency chart is the page's one plotly chart: it is drawn only while its expander is open; the
    # choice is kept for the session (like the histograms below), so a user tuning TTLs opens it once
    rec = render.remembered_expander(
        "Recency factor vs age per TTL, the scored facts on their curves (the "
        "selected fact starred, the stale floor dotted)",
        RECENCY_OPEN,
    )
    if rec.open:
        with rec:
            _recency(result, frame, current)
    unknown = int(frame["age_days"].isna().sum())
    if unknown:
        st.caption(f"{unknown} scored fact(s) of unknown age are not drawn (recency factor 1.0).")

    st.subheader("Score distributions")
    # the two histograms are built only while their expander is open; the choice is remembered in the
    # session (Streamlit drops a widget's own state on a page that does not draw it), so it is still open
    # after a visit elsewhere
    dist = render.remembered_expander(
        "Histograms of relevance (with the gate) and of CDR score (with the lowest anchor)", DIST_OPEN
    )
    if dist.open:
        with dist:
            _histograms(result, frame)
    st.caption(render.md_escape(f"{len(frame)} scored facts; gate threshold {result.config.cdr_min_relevance:g}."))
    breakdown.gate_notice(result, key="crp.page.breakdown.gate_try")


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)

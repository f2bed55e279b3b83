"""The Conflicts page's triage queue over the whole CKF (the ``crp-inspect conflicts`` scan): ties
first, then the smallest authority margin; filters by pattern, source type, status, decided /
undecided; a pair picked in the table (or the select box, or the URL's ``pair``) is shown as its case
with the decision form and its decision history.
"""

from __future__ import annotations

from datetime import datetime

import pandas as pd
import streamlit as st

from crp_core import (
    PATTERNS,
    STATUSES,
    ConflictScan,
    CRPConfig,
    CRPError,
    DecisionSet,
    KnowledgeBase,
    SdkAgreement,
    pair_key,
)

from . import cache, decisions, render, state, triage_live
from . import conflicts_view as cv
from .triage_form import K_PAIR, K, decision_form
from .triage_revert import revert_section

K_TABLE = K + "table"  # the queue table's selection event
K_SHOWN = K + "shown"  # the pair keys of the rows the table shows, in order
#: queue columns shown by default: both facts with their text, then what decides the row's place
QUEUE_ORDER = ("A", "B", "pattern(s)", "arbitration", "margin", "state")
#: every column, for "all columns"
QUEUE_ALL = (
    "A",
    "B",
    "pattern(s)",
    "arbitration",
    "margin",
    "state",
    "status_a",
    "status_b",
    "source_a",
    "source_b",
    "similarity",
    "authority_a",
    "authority_b",
    "decided_by",
    "decided_at",
    "review",
)
#: row height of the queue: five lines, so the texts wrap instead of being cut (Streamlit wraps text
#: cells when rows are taller than one line)
QUEUE_ROW_PX = 108
QUEUE_COLUMNS = {
    "A": st.column_config.TextColumn("A: fact and text", width=205),
    "B": st.column_config.TextColumn("B: fact and text", width=205),
    "pattern(s)": st.column_config.TextColumn(width=100, help="the value-conflict pattern(s) the detector found"),
    "arbitration": st.column_config.TextColumn(width=95),
    "sdk": st.column_config.TextColumn(
        "SDK",
        width=150,
        help="SPEC-027 on its own (the SDK's STALE read as "
        "ACTIVE) against the SDK snapshot's superseded_by: agrees, disagrees, or "
        "SDK silent; the as-loaded verdict in brackets when it differs",
    ),
    "state": st.column_config.TextColumn(
        width=100, help="The decision in force and what it did: a suppressed side, a status an operator set"
    ),
    "similarity": st.column_config.NumberColumn(format="%.4f"),
    "authority_a": st.column_config.NumberColumn(format="%.4f"),
    "authority_b": st.column_config.NumberColumn(format="%.4f"),
    "margin": st.column_config.NumberColumn(format="%.3f", width=55, help="authority difference of the two facts"),
}


def _on_table_select() -> None:
    ev = state.recall(K_TABLE)
    rows = list(getattr(getattr(ev, "selection", None), "rows", []) or []) if ev is not None else []
    shown = state.recall(K_SHOWN, [])
    if rows and 0 <= rows[0] < len(shown):
        state.remember(K_PAIR, shown[rows[0]])


def display_queue(shown: pd.DataFrame) -> pd.DataFrame:
    """The queue as shown: each side's id and text in one wrapping cell, the state in one column."""
    out = shown.copy()
    out["A"] = [f"{a}: {t}" for a, t in zip(shown["fact_a"], shown["text_a"])]
    out["B"] = [f"{b}: {t}" for b, t in zip(shown["fact_b"], shown["text_b"])]
    out["state"] = [
        " · ".join(x for x in (d, m) if x) or "undecided" for d, m in zip(shown["decision"], shown["marks"])
    ]
    # "number changed" wraps between words in a narrow column; NUMBER_CHANGED would be cut mid-word
    out["pattern(s)"] = [p.lower().replace("_", " ") for p in shown["patterns"]]
    return out.drop(columns=["pair"])


def _with_sdk(order: tuple[str, ...], has_sdk: bool) -> tuple[str, ...]:
    """The queue's columns with the SDK verdict next to the arbitration (a CKF from an SDK snapshot)."""
    if not has_sdk:
        return order
    i = order.index("arbitration") + 1
    return order[:i] + ("sdk",) + order[i:]


def _queue_view(
    frame: pd.DataFrame, view: tuple[tuple[str, ...], ...], decided: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the filtered queue, its display frame with text made inert): built once per filter choice."""
    pats, srcs, stats = view
    shown = cv.filter_queue(frame, patterns=list(pats), source_types=list(srcs), statuses=list(stats), decided=decided)
    return shown, render.inert_frame(display_queue(shown))


def _url_pair(all_keys: list[str]) -> str | None:
    """The pair the URL (or an earlier visit) selected, if the queue holds it; a warning otherwise."""
    want = state.selected_pair()
    if want is None or want in all_keys:
        return want
    st.warning(
        f"pair={render.md_escape(want if len(want) <= 80 else want[:79] + '…')}: not a conflict pair "
        "of this CKF's triage queue; showing the first pair instead."
    )
    state.select_pair(None)
    return None


def _filtered(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The filter widgets and what they leave of the queue (its frame, its display frame)."""
    c = st.columns([2, 2, 2, 3])
    pats = c[0].multiselect("Pattern", PATTERNS, key=K + "f.patterns")
    sources = sorted(set(frame["source_a"].tolist()) | set(frame["source_b"].tolist()))
    srcs = c[1].multiselect("Source type", sources, key=K + "f.sources")
    stats = c[2].multiselect("Status", STATUSES, key=K + "f.statuses")
    decided = str(c[3].radio("Decided", cv.DECIDED_CHOICES, horizontal=True, key=K + "f.decided"))
    view = (tuple(pats), tuple(srcs), tuple(stats))
    state.declare_settings(
        "the triage queue's filters",
        {"pattern": pats, "source type": srcs, "status": stats, "decided": decided},
        {"pattern": [], "source type": [], "status": [], "decided": cv.DECIDED_CHOICES[0]},
    )
    return cache.by_identity("queue_view", frame, lambda fr: _queue_view(fr, view, decided), extra=(*view, decided))


def _table(shown: pd.DataFrame, display: pd.DataFrame, claims: dict[str, str]) -> None:
    linked, refused = state.view_choice("cols", ("all",), "")  # ?cols=all
    if refused:
        st.warning(f"Link parameter ignored: {render.md_escape(refused)}")
    every = st.toggle(
        "all columns",
        value=linked == "all",
        key=K + "all_columns",
        help="Also the statuses, source types, similarity, both authorities and who decided.",
    )
    state.set_view_choice("cols", "all" if every else "", "")
    st.dataframe(
        cv.with_claims(display, shown["pair"].tolist(), claims),
        hide_index=True,
        width="stretch",
        row_height=QUEUE_ROW_PX,
        height=min(5 * QUEUE_ROW_PX, QUEUE_ROW_PX * len(shown)) + 40,
        key=K_TABLE,
        on_select=_on_table_select,
        selection_mode="single-row",
        column_order=_with_sdk(QUEUE_ALL if every else QUEUE_ORDER, "sdk" in shown),
        column_config=QUEUE_COLUMNS,
    )


def _first_of_run(keys: list[str]) -> str:
    """The queue's first pair that the current run arbitrated (the page opens on the scenario's conflicts,
    not on an unrelated whole-CKF tie); the queue's first pair when the run has none of them."""
    try:
        result = state.get_result()
    except CRPError:
        result = None
    run = {pair_key(p.fact_a, p.fact_b) for p in result.resolution.pairs} if result is not None else set()
    return next((k for k in keys if k in run), keys[0])


def _pick_pair(shown: pd.DataFrame, keys: list[str], wanted: str | None) -> str:
    """The pair select box (a table row picks it too); the choice is the page's selected pair."""
    if state.recall(K_PAIR) not in keys:
        state.remember(K_PAIR, wanted if wanted in keys else _first_of_run(keys))
    # the four columns a label reads, once per shown frame
    labels = cache.by_identity(
        "queue_labels",
        shown,
        lambda fr: {
            k: cv.pair_label({"fact_a": a, "fact_b": b, "patterns": p})
            for k, a, b, p in zip(
                fr["pair"].tolist(), fr["fact_a"].tolist(), fr["fact_b"].tolist(), fr["patterns"].tolist()
            )
        },
    )
    pk = str(
        st.selectbox(
            "Pair to triage (or select a table row)",
            keys,
            format_func=lambda k: render.plain(labels.get(k)),
            key=K_PAIR,
        )
    )
    state.select_pair(pk)
    return pk


def queue_tab(
    scan: ConflictScan,
    frame: pd.DataFrame,
    ds: DecisionSet,
    kb: KnowledgeBase,
    config: CRPConfig,
    now: datetime,
    agreement: SdkAgreement | None = None,
) -> None:
    """The triage queue, then the selected pair: its case, the decision form and its history."""
    shown, display = _filtered(frame)
    wanted = _url_pair(frame["pair"].tolist())
    st.caption(
        f"{len(shown)} of {len(frame)} pairs shown · ties first, then the smallest authority margin · "
        f"scan over {scan.n_facts} retrievable facts, {scan.n_candidates} pairs with cosine > "
        f"{scan.threshold:.2f} text-checked, {scan.timings_ms['total']:.0f} ms"
    )
    keys = shown["pair"].tolist()
    state.remember(K_SHOWN, keys)
    me = state.get_operator()
    claims = triage_live.live_claims()
    held = triage_live.claimed_by_others(claims, me)
    _table(shown, display, {k: triage_live.claim_cell(c, me) for k, c in claims.items()})
    if not keys:
        st.info("No pair matches the filters.")
        return
    triage_live.claim_button([k for k in keys if k not in held], state.get_ckf_fingerprint(kb))
    pk = _pick_pair(shown, keys, wanted)
    pair = next(p for p in scan.pairs if cv.p_key(p) == pk)
    # the pair's heading, figures and arbitration in one element, its case (patterns, both sides, the
    # evidence, the outcome, the authority table and bars) in another
    cv.pair_head(pair)
    rec = agreement.of(pair.fact_a, pair.fact_b) if agreement is not None else None
    if rec is not None:
        cv.sdk_block(rec, K + "sdk")
    cv.queue_case(pair, kb, dict(ds.statuses), now=now, config=config, key=K + "authority")
    if pk in held:
        st.info(render.md_escape(f"This pair is {triage_live.claim_cell(held[pk], me)}; you may still decide it."))
    decision_form(pair, kb, config, [k for k in keys if k not in held or k == pk])
    hist = decisions.pair_history(pair.fact_a, pair.fact_b)
    revert_section(pair, hist, kb)
    st.markdown(f"**Decision history of this pair** ({len(hist)})")
    if hist:
        render.dataframe(
            cv.history_frame(hist).drop(columns=["pair", "kb"]), hide_index=True, width="stretch", key=K + "history"
        )
    else:
        st.caption("No decision yet.")

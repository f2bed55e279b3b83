"""The Conflicts page's triage queue over the whole CKF (the ``crp-inspect conflicts`` scan): ties
first, then the smallest authority margin (or another order, ``?qsort=``); filters by pattern, source
type, status, decided / undecided; a pair picked in the table (or the select box, or the URL's ``pair``)
is shown as its case with the decision form and its decision history.

The queue is filtered and sorted on the server over every pair, once per (frame, filters, order); the
table and the select box hold one page of it (:mod:`crp_ui.paging`). A pair selected elsewhere (the
URL, "Record and next", "Claim next") opens the page that holds it; a new filter, order or page size
opens page 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import partial

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from crp_core import (
    PATTERNS,
    STATUSES,
    ConflictPair,
    ConflictScan,
    CRPConfig,
    DecisionSet,
    KnowledgeBase,
    SdkAgreement,
    content_digest,
    format_timestamp,
    pair_index,
)

from . import cache, paging, queue_aside, queue_pair, render, state, tables, triage_live
from . import conflicts_view as cv
from .progress_text import format_duration
from .queue_view import QueueView, queue_view
from .queue_view import held_keys as queue_keys
from .triage_form import K_PAIR, K

K_TABLE = K + "table"  # the queue table's key (+ the view, page size and page: a new page starts unselected)
K_SHOWN = K + "shown"  # the pair keys of the rows the table shows (the page), in order
K_SORT = K + "sort"  # the queue's order (the URL's qsort)
K_SIZE = K + "page_size"  # rows per page
K_TURNED = K + "turned"  # set when the operator turned the page (the page's first pair is then selected)
K_VIEW = K + "view"  # the digest of the last view's filters and order (a change opens page 1)
#: [the linked pair the queue does not hold, the pair shown instead (None until the page chose it)]
K_LINK_MISS = K + "link_miss"
#: rows per page of the queue (the table and the select box hold one page)
PAGE_SIZES = (10, 25, 50, 100, 200)
PAGE_SIZE = 50
#: the order picker's labels (crp_ui.conflict_queue.QUEUE_SORTS)
SORT_LABELS = {
    "triage": "triage order (ties, then smallest margin)",
    "similarity": "similarity (highest first)",
    "margin": "margin (smallest first)",
    "decided": "decided (latest first)",
}
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


def _took(ms: float) -> str:
    """A scan's time: ``840 ms`` under a minute and a half, else ``11 min``."""
    return f"{ms:,.0f} ms" if ms < 90_000 else format_duration(ms / 1e3)


def _on_table_select(key: str) -> None:
    ev = state.recall(key)
    rows = list(getattr(getattr(ev, "selection", None), "rows", []) or []) if ev is not None else []
    shown = state.recall(K_SHOWN, [])
    if rows and 0 <= rows[0] < len(shown):
        state.remember(K_PAIR, shown[rows[0]])
        queue_aside.close()


def pattern_label(name: str) -> str:
    """A pattern as the queue shows it, in its column and on its filter's chips: "number changed" wraps between
    words in a narrow column and fits a chip; NUMBER_CHANGED would be cut mid-word (SPEC-005 §5.3 names)."""
    return name.lower().replace("_", " ")


def display_queue(shown: pd.DataFrame) -> pd.DataFrame:
    """The queue as shown: each side's id and text in one wrapping cell, the state in one column."""
    out = shown.copy()
    out["A"] = [f"{a}: {t}" for a, t in zip(shown["fact_a"], shown["text_a"])]
    out["B"] = [f"{b}: {t}" for b, t in zip(shown["fact_b"], shown["text_b"])]
    out["state"] = [
        " · ".join(x for x in (d, m) if x) or "undecided" for d, m in zip(shown["decision"], shown["marks"])
    ]
    out["pattern(s)"] = [pattern_label(p) for p in shown["patterns"]]
    return out.drop(columns=["pair"])


def page_display(shown: pd.DataFrame, claims: dict[str, str]) -> pd.DataFrame:
    """What the browser receives of the queue: the page ``shown`` as displayed, its text made inert, each
    claimed pair's claim after its state."""
    return cv.with_claims(render.inert_frame(display_queue(shown)), shown["pair"].tolist(), claims)


def _with_sdk(order: tuple[str, ...], has_sdk: bool) -> tuple[str, ...]:
    """The queue's columns with the SDK verdict next to the arbitration (a CKF from an SDK snapshot)."""
    if not has_sdk:
        return order
    i = order.index("arbitration") + 1
    return order[:i] + ("sdk",) + order[i:]


def _link_miss_warning(want: str) -> None:
    shown = render.md_escape(want if len(want) <= 80 else want[:79] + "…")
    st.warning(
        f"pair={shown}: not a conflict pair of this CKF's triage queue (pairs above contradiction_similarity the "
        "detector flags; a near conflict of the current run is decided in its Envelope conflicts tab); showing the "
        "first pair instead."
    )


def _url_pair(held: frozenset[str], apart: Mapping[str, ConflictPair]) -> str | None:
    """The pair the URL (or an earlier visit) selected, if the queue holds it (``held``: its pair keys); a warning
    otherwise (unless it is a pair out of retrieval, ``apart``, which opens apart: :mod:`crp_ui.queue_aside`),
    repeated on every rerun until the operator picks a pair (it vanished at the next rerun, typing one's name,
    and the first pair then looked like the one the link opened)."""
    want = state.selected_pair()
    miss = state.recall(K_LINK_MISS)
    if want is not None and want not in held and want in apart:
        return None
    if want is not None and want not in held:
        _link_miss_warning(want)
        state.remember(K_LINK_MISS, [want, None])
        state.select_pair(None)
        return None
    if miss is not None:
        picked = state.recall(K_PAIR)  # the pair select box: the operator's pick reaches it before the selection
        if miss[1] is None:  # the first rerun after the miss: the pair shown instead is the current one
            miss[1] = want
        if picked not in (None, miss[1]) or want not in (None, miss[1]):
            state.forget(K_LINK_MISS)
        else:
            _link_miss_warning(miss[0])
    return want


def _order() -> str:
    """The order picker (linked as ``?qsort=``)."""
    options = tuple(cv.QUEUE_SORTS)
    linked, refused = state.view_choice("qsort", options, options[0])
    if refused:
        st.warning(f"Link parameter ignored: {render.md_escape(refused)}")
    if state.recall(K_SORT) not in options:
        state.remember(K_SORT, linked)
    order = str(st.selectbox("Sort (all pairs)", options, format_func=lambda o: SORT_LABELS[o], key=K_SORT))
    state.set_view_choice("qsort", order, options[0])
    return order


def _filtered(frame: pd.DataFrame) -> tuple[QueueView, str, list[DeltaGenerator]]:
    """The filter and order widgets and what they leave of the queue, in that order (every page); the
    digest of the filters and order (a widget key part: a new view opens page 1); the places of the
    paging widgets beside the order picker."""
    c = st.columns([3, 2, 2, 3])
    pats = c[0].multiselect("Pattern", PATTERNS, format_func=pattern_label, key=K + "f.patterns")
    sources = cache.by_identity(
        "queue_sources", frame, lambda fr: sorted(set(fr["source_a"].tolist()) | set(fr["source_b"].tolist()))
    )
    srcs = c[1].multiselect("Source type", sources, key=K + "f.sources")
    stats = c[2].multiselect("Status", STATUSES, key=K + "f.statuses")
    decided = str(c[3].radio("Decided", cv.DECIDED_CHOICES, horizontal=True, key=K + "f.decided"))
    view = (tuple(pats), tuple(srcs), tuple(stats))
    state.declare_settings(
        "the triage queue's filters",
        {"pattern": pats, "source type": srcs, "status": stats, "decided": decided},
        {"pattern": [], "source type": [], "status": [], "decided": cv.DECIDED_CHOICES[0]},
    )
    c = st.columns([3, 1, 1, 3], vertical_alignment="bottom")
    with c[0]:
        order = _order()
    got = cache.by_identity(
        "queue_view", frame, lambda fr: queue_view(fr, view, decided, order), extra=(*view, decided, order)
    )  # positions and keys: a view holds no copy of the frame
    return got, content_digest(repr((view, decided, order)), length=10), list(c[1:])


def _on_turn() -> None:
    state.remember(K_TURNED, True)


def _target(view: QueueView, wanted: str | None) -> str | None:
    """The pair whose page opens: the one selected (select box, table, "Record and next", "Claim next"),
    else the linked one, else (on a first visit) the first undecided pair of the queue in its order (the
    first pair when every pair is decided): the queue is the whole CKF's, in triage order (the current
    run's own pairs are the "Envelope conflicts" tab's); None when the selected pair left the view (a
    decision under the "undecided" filter: the page shown stays) or the view is empty."""
    cur = state.recall(K_PAIR)
    if isinstance(cur, str) and cur in view.index:
        return cur
    if wanted is not None and wanted in view.index:
        return wanted
    return view.first_undecided() if not isinstance(cur, str) else None


def _paged(
    view: QueueView, digest: str, where: list[DeltaGenerator], wanted: str | None
) -> tuple[pd.DataFrame, str | None]:
    """The page widgets; the page of the view shown and the pair to select on it (None: an empty view).

    The page holding the selected pair opens (a new page size included), unless the operator turned the
    page or changed the filters or the order, which opens page 1: the page's first pair is then selected
    (the selected pair stays when that page holds it)."""
    keys, index = view.keys, view.index
    size = paging.size_picker(where[0], K_SIZE, PAGE_SIZES, PAGE_SIZE)
    state.declare_settings("the triage queue's page size", {"rows per page": size}, {"rows per page": PAGE_SIZE})
    turned = bool(state.forget(K_TURNED))
    last = state.recall(K_VIEW)
    state.remember(K_VIEW, digest)
    moved = turned or (last is not None and last != digest)
    target = None if moved else _target(view, wanted)
    goto = index[target] // size + 1 if target is not None else None
    page = paging.page_picker(
        where[1], paging.page_key(K, digest, size), len(keys), size, goto=goto, on_change=_on_turn
    )
    where[2].caption(paging.rows_text(len(keys), page, size))
    shown = view.page(page, size)
    page_keys = keys[(page - 1) * size : (page - 1) * size + len(shown)]
    if not page_keys:
        return shown, None
    cur = state.recall(K_PAIR)
    return shown, cur if cur in page_keys else target if target in page_keys else page_keys[0]


def _table(shown: pd.DataFrame, claims: dict[str, str], key: str, pick: str | None) -> None:
    """The page of the queue shown (its texts made inert), the selected pair's row selected; a row selected
    there selects its pair."""
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
    pos = [i for i, k in enumerate(shown["pair"].tolist()) if k == pick][:1]
    render.dataframe(
        page_display(shown, claims),
        hide_index=True,
        width="stretch",
        row_height=QUEUE_ROW_PX,
        height=min(5 * QUEUE_ROW_PX, QUEUE_ROW_PX * len(shown)) + 40,
        key=key,
        on_select=partial(_on_table_select, key),
        selection_mode="single-row",
        selection_default={"selection": {"rows": pos}} if pos else None,
        column_order=_with_sdk(QUEUE_ALL if every else QUEUE_ORDER, "sdk" in shown),
        column_config=QUEUE_COLUMNS,
    )


def _download(view: QueueView) -> None:
    """Every pair the filters leave, in the order chosen, as CSV (the table shows one page; its own download
    holds that page): built when clicked."""
    if not len(view):
        return
    st.download_button(
        f"Download the {len(view):,} pairs shown by the filters (CSV)",
        data=lambda: tables.safe_csv(view.whole()),
        file_name="triage-queue.csv",
        mime="text/csv",
        on_click="ignore",
        key=K + "download",
        icon=":material/download:",
    )


def _pick_pair(shown: pd.DataFrame, keys: list[str], pick: str, apart: str | None) -> str | None:
    """The pair select box over the page shown (a table row picks it too); the choice is the page's
    selected pair. While a pair out of retrieval is open (``apart``: the link names that one) it shows no
    pair, so that picking any pair of the queue goes back to the queue; None then."""
    want = pick if apart is None else None
    if state.recall(K_PAIR) != want:
        state.remember(K_PAIR, want)
    labels = {
        k: cv.pair_label({"fact_a": a, "fact_b": b, "patterns": p})
        for k, a, b, p in zip(keys, shown["fact_a"].tolist(), shown["fact_b"].tolist(), shown["patterns"].tolist())
    }
    got = st.selectbox(
        "Pair to triage (or select a table row)",
        keys,
        index=None if apart is not None else 0,
        placeholder="choose a pair of the queue",
        format_func=lambda k: render.plain(labels.get(k)),
        key=K_PAIR,
        on_change=queue_aside.close,
    )
    pk = None if got is None else str(got)
    state.select_pair(apart if apart is not None else pk)
    return pk


def queue_tab(
    scan: ConflictScan,
    frame: pd.DataFrame,
    ds: DecisionSet,
    kb: KnowledgeBase,
    config: CRPConfig,
    now: datetime,
    agreement: SdkAgreement | None = None,
    aside: Sequence[ConflictPair] = (),
) -> None:
    """The triage queue (one page of it), then the selected pair: its case, the decision form and its history.
    ``aside``: the pairs an operator's QUARANTINED / DELETED mark took out of the scan, listed apart
    (:mod:`crp_ui.queue_aside`); one of them open takes the selected pair's place."""
    view, digest, where = _filtered(frame)
    apart = {cv.p_key(p): p for p in aside}
    held_keys = queue_keys(frame)
    opened = queue_aside.settle(apart, held_keys)
    wanted = _url_pair(held_keys, apart)
    shown, pick = _paged(view, digest, where, wanted)
    st.caption(
        f"{len(view):,} of {len(frame):,} pairs match · {SORT_LABELS[str(state.recall(K_SORT))]} · "
        f"scan over {scan.n_facts:,} retrievable facts, {scan.n_candidates:,} pairs with cosine > "
        f"{scan.threshold:.2f} text-checked, ages at {format_timestamp(scan.now)} (the session's now: recency, "
        f"hence authority and ties, move with it), {_took(scan.timings_ms['total'])}"
        + (" (by an earlier server: read from the cache)" if scan.from_cache else "")
        + (f" · {len(aside):,} pair(s) out of retrieval, listed apart below" if aside else "")
    )
    keys = shown["pair"].tolist()
    state.remember(K_SHOWN, keys)
    me = state.get_operator()
    claims = triage_live.live_claims()
    held = triage_live.claimed_by_others(claims, me)
    # a new page, view or selected pair draws a new table element, its selection on the selected pair's row
    table_key = f"{K_TABLE}.{digest}.{keys[0] if keys else ''}.{pick}"
    _table(shown, {k: triage_live.claim_cell(c, me) for k, c in claims.items()}, table_key, None if opened else pick)
    _download(view)
    queue_aside.section(aside, ds, opened)
    every = view.keys
    # "Claim next" and "Record and next" walk the whole queue in its order, across pages
    free = every if not held else [k for k in every if k not in held]
    pk = None
    if pick is not None:
        triage_live.claim_button(free, state.get_ckf_fingerprint(kb))
        pk = _pick_pair(shown, keys, pick, opened)
    if opened is not None:
        queue_pair.out_of_retrieval(apart[opened], ds, kb, config, now, free)
        return
    if pk is None:
        st.info("No pair matches the filters.")
        return
    pair = pair_index(scan)[pk]  # built once per scan; a re-arbitrated scan's comes patched
    queue_pair.case(pair, ds, kb, config, now, agreement)
    if pk in held:
        st.info(render.md_escape(f"This pair is {triage_live.claim_cell(held[pk], me)}; you may still decide it."))
    queue_pair.decide(pair, kb, config, every if not held else [k for k in every if k not in held or k == pk])

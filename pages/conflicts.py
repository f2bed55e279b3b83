"""Conflict triage (SPEC-027 §2, §2.4 "conflicts are logged, not hidden").

* **Triage queue** over the whole CKF (the ``crp-inspect conflicts`` scan): ties first, then the
  smallest authority margin; filters by pattern, source type, status, decided / undecided; counts.
* **Operator decisions** on the selected pair (accept, override the winner, mark a fact STALE /
  QUARANTINED / DELETED / ACTIVE, dismiss), with a note and the operator's name (sidebar), stored
  in the SQLite triage database shared by every session; they apply to every page's run.
* **Envelope conflicts** of the current run: both texts with the differing tokens highlighted,
  similarity, patterns, authority arithmetic (numbers and grouped bars), winner / suppressed / tie
  with the NOTE block as the envelope carries it, the ``CONTRADICTION_RESOLVED`` audit event.
* **Export**: decisions as JSON / CSV, the cleaned CKF (statuses applied, format as loaded), the
  audit log.
"""

from __future__ import annotations

import streamlit as st

from crp_core import headers
from crp_core.config import STATUSES
from crp_core.errors import CRPError
from crp_core.stages.contradictions import PATTERNS, authority_winner
from crp_core.triage import MARKABLE_STATUSES, MAX_NOTE_CHARS, Decision, DecisionError, export_csv, export_json
from crp_core.triage.quality import detector_quality
from crp_ui import cache, decisions, render, shell, state
from crp_ui import conflicts_view as cv

K = "crp.page.conflicts."
KIND_LABELS = {
    "accept": "Accept the arbitration",
    "override": "Override the winner",
    "mark_status": "Mark a fact's status",
    "dismiss": "Dismiss: not a conflict",
}
KINDS = tuple(KIND_LABELS)
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
)
#: row height of the queue: five lines, so the texts wrap instead of being cut (Streamlit wraps text
#: cells when rows are taller than one line)
QUEUE_ROW_PX = 108
#: what each markable status does, shown beside the choice (no status is preselected)
STATUS_EFFECTS = {
    "ACTIVE": "retrievable again (undoes an earlier mark)",
    "STALE": "kept, retrievable, recency factor = stale_floor (least destructive)",
    "QUARANTINED": "never retrieved, kept in the CKF",
    "DELETED": "never retrieved",
}


# ---- decision database ---------------------------------------------------------------------------
def _on_db_path(wkey: str) -> None:
    err = decisions.set_db_path(st.session_state.get(wkey, ""))
    st.session_state[K + "db_error"] = err


def db_section() -> None:
    """Where the decisions live (path field: this session only; empty = the default)."""
    with st.expander(
        f"Decision database: {render.md_escape(decisions.db_path())} ({decisions.db_path_origin()})", expanded=False
    ):
        wkey = K + "db_path"
        st.text_input(
            f"Database file for this session (empty: $CRP_INSPECT_TRIAGE_DB or ./{decisions.DEFAULT_DB_FILE})",
            value=st.session_state.get(decisions.K_DB_PATH, ""),
            key=wkey,
            on_change=_on_db_path,
            args=(wkey,),
            help="Every session using the same file sees the same decisions. The file is created "
            "with the first decision; a file that is not a crp-inspect triage database is refused.",
        )
        err = st.session_state.get(K + "db_error")
        if err:
            st.error(render.md_escape(err))
        st.caption(
            "Decisions are appended (the log is the audit trail) and survive restarts; the latest "
            "decision on a pair is in force."
        )


# ---- helpers -------------------------------------------------------------------------------------
def sdk_block(rec, key: str) -> None:
    """The SDK's supersession against SPEC-027: on its own (the fair comparison) and as loaded."""
    own, loaded = cv.sdk_verdict_lines(rec)
    st.markdown(f"**{cv.SDK_LABELS[rec.independent.verdict]}** · {render.md_escape(own)}")
    st.caption(render.md_escape(loaded))
    with st.expander("Authority on its own (the SDK had not decided)"):
        render.dataframe(
            cv.sdk_authority_frame(rec),
            hide_index=True,
            width="stretch",
            key=key + ".table",
            column_config={
                c: st.column_config.NumberColumn(format="%.4f")
                for c in ("source_authority", "recency_factor", "importance_weight", "authority")
            },
        )


def _build_decision(
    kind: str,
    pair,
    *,
    operator: str,
    winner: str | None,
    target: str | None,
    status: str | None,
    note: str,
    fingerprint: str,
    config,
) -> Decision:
    a, b = pair.fact_a, pair.fact_b
    if kind == "accept":
        return Decision.accept(
            a, b, operator=operator, winner=authority_winner(pair, config), note=note, ckf_fingerprint=fingerprint
        )
    if kind == "override":
        return Decision.override(a, b, winner=str(winner), operator=operator, note=note, ckf_fingerprint=fingerprint)
    if kind == "dismiss":
        return Decision.dismiss(a, b, operator=operator, note=note, ckf_fingerprint=fingerprint)
    return Decision.mark_status(
        a, b, fact=str(target), status=str(status), operator=operator, note=note, ckf_fingerprint=fingerprint
    )


def _field_keys(pk: str) -> dict[str, str]:
    return {name: f"{K}{name}.{pk}" for name in ("winner", "target", "status", "note")}


def _on_record(kind: str, pair, fingerprint: str, config) -> None:
    """Record the submitted decision. A callback: Streamlit runs it before the script, so the very
    first run after the click already reads the new decision set (counts, queue, every view)."""
    pk = cv.p_key(pair)
    keys = _field_keys(pk)
    ss = st.session_state
    ss.pop(K + "form_error", None)
    operator = state.get_operator()
    winner = ss.get(keys["winner"]) if kind == "override" else None
    target = ss.get(keys["target"]) if kind == "mark_status" else None
    status = ss.get(keys["status"]) if kind == "mark_status" else None
    if kind == "mark_status" and not status:
        ss[K + "form_error"] = "Choose the new status: none is preselected."
        return
    d = _build_decision(
        kind,
        pair,
        operator=operator,
        winner=winner,
        target=target,
        status=status,
        note=str(ss.get(keys["note"]) or ""),
        fingerprint=fingerprint,
        config=config,
    )
    try:
        rec = decisions.record(d)
    except DecisionError as exc:
        ss[K + "form_error"] = "Decision refused:\n\n" + "\n".join(
            f"- field `{f}`: {render.md_escape(m)}" for f, m in exc.problems
        )
        return
    except CRPError as exc:
        ss[K + "form_error"] = f"Decision not recorded: {render.md_escape(exc)}"
        return
    for name in ("note", "status"):  # a recorded decision clears the form (the kind stays)
        ss.pop(keys[name], None)
    ss[K + "flash"] = (
        f"Recorded decision #{rec.id} on {rec.fact_a} ↔ {rec.fact_b}: "
        f"{cv.decision_summary(rec)} (by {rec.operator}, {rec.decided_at})."
    )


def decision_form(pair, kb, config) -> None:
    """Record a decision on ``pair`` (operator from the sidebar). The kind is chosen first; the form
    then holds only that kind's fields."""
    pk = cv.p_key(pair)
    keys = _field_keys(pk)
    operator = state.get_operator()
    # one element in this slot either way: the form below keeps its place when the name is entered
    if not operator:
        st.warning("Enter your name under **Operator name** in the sidebar to record decisions.")
    else:
        st.caption(f"Recording as **{render.md_escape(operator)}** (Operator name, in the sidebar).")
    ids = [pair.fact_a, pair.fact_b]
    loser = pair.suppressed if pair.suppressed in ids else pair.fact_b
    current_winner = pair.kept[0] if (pair.suppressed is not None and pair.kept) else pair.fact_a
    other = pair.fact_b if current_winner == pair.fact_a else pair.fact_a
    kind = st.radio("Decision", KINDS, format_func=KIND_LABELS.get, horizontal=True, key=K + "kind." + pk)
    side = {pair.fact_a: "A", pair.fact_b: "B"}

    def label(fid: str) -> str:
        return render.plain(f"{side[fid]} · {fid}")

    with st.form(K + "form." + pk, clear_on_submit=False, border=True):
        if kind == "accept":
            st.caption(
                "Accepts the arbitration as shown: "
                + render.md_escape(cv.outcome_text(pair))
                + ". Only a note is needed."
            )
        elif kind == "override":
            st.selectbox(
                "Winner",
                ids,
                index=ids.index(other),
                key=keys["winner"],
                format_func=label,
                help="The fact that must win this pair whatever its authority; the other is suppressed.",
            )
        elif kind == "mark_status":
            c = st.columns(2)
            c[0].selectbox(
                "Fact",
                ids,
                index=ids.index(loser),
                key=keys["target"],
                format_func=label,
                help="Preselected: the fact the arbitration suppressed (B for a tie).",
            )
            c[1].selectbox(
                "New status",
                MARKABLE_STATUSES,
                index=None,
                key=keys["status"],
                placeholder="choose a status",
                format_func=lambda s: f"{s}: {STATUS_EFFECTS.get(s, '')}",
                help="No status is preselected. STALE is the least destructive (the fact stays "
                "retrievable with recency factor = stale_floor); QUARANTINED / DELETED take it "
                "out of retrieval.",
            )
        else:
            st.caption("Not a conflict: the pair is no longer arbitrated and both facts stay. Only a note is needed.")
        st.text_area("Note (optional)", key=keys["note"], max_chars=MAX_NOTE_CHARS, height=68)
        st.form_submit_button(
            "Record decision",
            type="primary",
            disabled=not operator,
            key=K + "submit." + pk,
            on_click=_on_record,
            args=(kind, pair, state.get_ckf_fingerprint(kb), config),
        )
    err = st.session_state.pop(K + "form_error", None)
    if err:
        st.error(err)


# ---- the queue -----------------------------------------------------------------------------------
def _on_table_select() -> None:
    ev = st.session_state.get(K + "table")
    rows = list(getattr(getattr(ev, "selection", None), "rows", []) or []) if ev is not None else []
    shown = st.session_state.get(K + "shown", [])
    if rows and 0 <= rows[0] < len(shown):
        st.session_state[K + "pair"] = shown[rows[0]]


def _display_queue(shown):
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


def _queue_view(frame, pats, srcs, stats, decided):
    """(the filtered queue, its display frame with text made inert): built once per filter choice."""
    shown = cv.filter_queue(frame, patterns=list(pats), source_types=list(srcs), statuses=list(stats), decided=decided)
    return shown, render.inert_frame(_display_queue(shown))


def _url_pair(all_keys: list[str]) -> str | None:
    """The pair the URL (or an earlier visit) selected, if the queue holds it; a warning otherwise."""
    want = decisions.selected_pair()
    if want is None or want in all_keys:
        return want
    st.warning(
        f"pair={render.md_escape(want if len(want) <= 80 else want[:79] + '…')}: not a conflict pair "
        "of this CKF's triage queue; showing the first pair instead."
    )
    decisions.select_pair(None)
    return None


def queue_tab(scan, frame, ds, kb, config, now, agreement=None) -> None:
    c = st.columns([2, 2, 2, 3])
    pats = c[0].multiselect("Pattern", PATTERNS, key=K + "f.patterns")
    sources = sorted(set(frame["source_a"].tolist()) | set(frame["source_b"].tolist()))
    srcs = c[1].multiselect("Source type", sources, key=K + "f.sources")
    stats = c[2].multiselect("Status", STATUSES, key=K + "f.statuses")
    decided = c[3].radio("Decided", cv.DECIDED_CHOICES, horizontal=True, key=K + "f.decided")
    view = (tuple(pats), tuple(srcs), tuple(stats), decided)
    shown, display = cache.by_identity("queue_view", frame, lambda fr: _queue_view(fr, *view), extra=view)
    wanted = _url_pair(frame["pair"].tolist())
    st.caption(
        f"{len(shown)} of {len(frame)} pairs shown · ties first, then the smallest authority margin · "
        f"scan over {scan.n_facts} retrievable facts, {scan.n_candidates} pairs with cosine > "
        f"{scan.threshold:.2f} text-checked, {scan.timings_ms['total']:.0f} ms"
    )
    keys = shown["pair"].tolist()
    st.session_state[K + "shown"] = keys
    every = st.toggle(
        "all columns",
        key=K + "all_columns",
        help="Also the statuses, source types, similarity, both authorities and who decided.",
    )
    st.dataframe(
        display,
        hide_index=True,
        width="stretch",
        row_height=QUEUE_ROW_PX,
        height=min(5 * QUEUE_ROW_PX, QUEUE_ROW_PX * len(shown)) + 40,
        key=K + "table",
        on_select=_on_table_select,
        selection_mode="single-row",
        column_order=_with_sdk(QUEUE_ALL if every else QUEUE_ORDER, "sdk" in shown),
        column_config={
            "A": st.column_config.TextColumn("A: fact and text", width=205),
            "B": st.column_config.TextColumn("B: fact and text", width=205),
            "pattern(s)": st.column_config.TextColumn(
                width=100, help="the value-conflict pattern(s) the detector found"
            ),
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
            "margin": st.column_config.NumberColumn(
                format="%.3f", width=55, help="authority difference of the two facts"
            ),
        },
    )
    if not keys:
        st.info("No pair matches the filters.")
        return
    if st.session_state.get(K + "pair") not in keys:
        st.session_state[K + "pair"] = wanted if wanted in keys else keys[0]
    # the four columns a label reads, once per shown frame (a records dict of every column cost ~10 ms at 10k)
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
    pk = st.selectbox(
        "Pair to triage (or select a table row)",
        keys,
        format_func=lambda k: render.plain(labels.get(k)),
        key=K + "pair",
    )
    decisions.select_pair(pk)
    pair = next(p for p in scan.pairs if cv.p_key(p) == pk)
    statuses = dict(ds.statuses)

    cv.pair_head(pair)
    rec = agreement.of(pair.fact_a, pair.fact_b) if agreement is not None else None
    if rec is not None:
        sdk_block(rec, K + "sdk")
    cv.patterns_line(pair)
    cv.pair_case(pair, kb, statuses, now=now, config=config)
    cv.outcome_line(pair)
    cv.authority_table(pair, key=K + "authority")
    decision_form(pair, kb, config)
    hist = decisions.pair_history(pair.fact_a, pair.fact_b)
    st.markdown(f"**Decision history of this pair** ({len(hist)})")
    if hist:
        render.dataframe(
            cv.history_frame(hist).drop(columns=["pair"]), hide_index=True, width="stretch", key=K + "history"
        )
    else:
        st.caption("No decision yet.")


# ---- the envelope --------------------------------------------------------------------------------
def run_without_decisions():
    """The same run on the CKF as loaded, without operator decisions (cached like every run)."""
    from crp_ui import cache

    try:
        corpus = state.get_corpus(decisions=False)
        return cache.pipeline_result(corpus, state.get_scenario(), state.get_config(), state.get_now())
    except CRPError:
        return None


def envelope_tab(ds, base_kb) -> None:
    try:
        result = state.get_result()
    except CRPError as exc:
        st.error(f"The pipeline refused this input: {render.md_escape(exc)}")
        return
    if result is None:
        st.info("No scenario: pick or upload one in the sidebar to see this run's conflicts.")
        return
    res = result.resolution
    st.caption(
        f"Run at now = {result.now.isoformat()} · "
        f"`{headers.CONFLICTS}: {result.headers.get(headers.CONFLICTS, '-')}` · "
        f"{len(res.pairs)} pair(s), {res.detected} arbitrated, {res.unresolved} tied, "
        f"{len(res.suppressed)} suppressed, {len(res.backfilled)} backfilled"
    )
    effects = cv.operator_effects_frame(result, ds, base_kb)
    if len(effects) or ds.pair_decisions:
        with st.expander(
            f"Operator decisions applied to this run ({len(effects)} status mark(s), "
            f"{len(ds.pair_decisions)} pair decision(s) in force)",
            expanded=True,
        ):
            if len(effects):
                render.dataframe(effects, hide_index=True, width="stretch", key=K + "effects")
            in_run = [p for p in res.pairs if p.decision]
            if in_run:
                st.markdown(
                    "Pair decisions that changed this run: "
                    + render.md_escape("; ".join(f"{p.fact_a} ↔ {p.fact_b}: {p.decision}" for p in in_run))
                )
            before = run_without_decisions()
            if before is not None:
                left, entered = cv.envelope_change(before, result)
                render.dataframe(cv.effect_frame(before, result), hide_index=True, width="stretch", key=K + "before")
                st.markdown(
                    "**Left the envelope:** "
                    + render.md_escape(", ".join(left) or "none")
                    + " · **entered it:** "
                    + render.md_escape(", ".join(entered) or "none")
                )
    if not res.pairs:
        st.info("No contradiction among this run's selected facts.")
        return
    render.dataframe(
        cv.envelope_pairs_frame(result),
        hide_index=True,
        width="stretch",
        key=K + "env.table",
        column_config={
            c: st.column_config.NumberColumn(format="%.4f") for c in ("similarity", "authority_a", "authority_b")
        },
    )
    for i, pair in enumerate(res.pairs):
        with st.container(border=True):
            st.markdown(
                f"**{render.md_escape(pair.fact_a)} ↔ {render.md_escape(pair.fact_b)}** · cosine "
                f"{pair.similarity:.4f} · {render.md_escape(', '.join(pair.patterns))}"
            )
            cv.pair_case(pair, base_kb, dict(ds.statuses), now=result.now, config=result.config)
            outcome = cv.outcome_text(pair)
            if pair.tied:
                st.warning(render.md_escape(outcome))
                note = cv.note_in_envelope(result, pair)
                if note is not None:
                    st.caption("NOTE block (SPEC-027 §2.5), exactly as the envelope carries it:")
                    render.code(note, wrap_lines=True)
                else:
                    st.caption("The NOTE block is not in the envelope text (a fact of the pair was not packed).")
            elif pair.skipped or pair.decision == "dismiss":
                st.info(render.md_escape(outcome))
            else:
                st.success(render.md_escape(outcome))
            cv.authority_table(pair, key=f"{K}env.authority.{i}")
            ev = cv.audit_event_for(result, pair)
            if ev is not None:
                with st.expander(f"{ev.event} audit event"):
                    st.json(dict(ev.data), expanded=True)


# ---- export --------------------------------------------------------------------------------------
def quality_tab(ds, kb) -> None:
    """The operators' decisions as labels for the value-conflict detector (crp-inspect triage stats)."""
    quality = detector_quality(ds, kb)
    if not quality.pairs:
        st.info(
            "No pair decided yet. Every accepted or overridden pair counts as a true conflict, every "
            "dismissed pair as a false positive of the detector; precision per pattern appears here."
        )
        return
    total = quality.precision
    m = st.columns(4)
    m[0].metric("decided pairs", len(quality.pairs))
    m[1].metric("confirmed conflicts", quality.confirmed, help="accepted or overridden")
    m[2].metric("dismissed (false positives)", quality.dismissed)
    m[3].metric("precision so far", "-" if total is None else f"{total:.2f}")
    render.dataframe(cv.quality_frame(quality), hide_index=True, width="stretch", key=K + "quality.patterns")
    st.markdown("**Pairs the operators overruled** (dismissed as not a conflict, or a different winner)")
    over = cv.overruled_frame(quality, kb)
    if over.empty:
        st.caption("None: every decision so far agrees with the detector and the arbitration.")
    else:
        render.dataframe(
            over,
            hide_index=True,
            width="stretch",
            key=K + "quality.overruled",
            column_config={
                "text_a": st.column_config.TextColumn("text a", width="large"),
                "text_b": st.column_config.TextColumn("text b", width="large"),
            },
        )


def export_tab(ds, kb) -> None:
    log = decisions.audit_log()
    c = st.columns(3)
    c[0].download_button(
        "Decisions as JSON",
        export_json(log),
        file_name="crp-triage-decisions.json",
        mime="application/json",
        key=K + "dl.json",
        on_click="ignore",
        help="The audit log and the decisions in force (as `crp-inspect triage decisions --json`).",
    )
    c[1].download_button(
        "Decisions as CSV",
        export_csv(log),
        file_name="crp-triage-decisions.csv",
        mime="text/csv",
        key=K + "dl.csv",
        on_click="ignore",
        help="The audit log, one decision per row.",
    )
    name, _fmt = decisions.ckf_download_name(kb.source, kb.fmt)
    c[2].download_button(
        "Cleaned CKF",
        lambda: decisions.cleaned_ckf_bytes(kb, ds)[0],
        file_name=name,
        mime="application/octet-stream",
        key=K + "dl.ckf",
        on_click="ignore",
        help="The CKF as loaded with the operators' statuses applied (same format; a CKF "
        "directory comes as a zip). Written when clicked.",
    )
    unknown = ds.unknown_facts(kb)
    applied = sum(1 for f in ds.statuses if kb.get(f) is not None)
    st.caption(
        f"{len(log)} decision(s) in the log · {applied} status mark(s) apply to this CKF"
        + (f" · {len(unknown)} decision(s) name facts this CKF lacks (ignored)" if unknown else "")
    )
    st.markdown("**Audit log** (every decision, oldest first)")
    if log:
        render.dataframe(cv.history_frame(log), hide_index=True, width="stretch", key=K + "log")
    else:
        st.caption("No decision recorded yet.")


#: the page's tabs, in order; the first is open by default
TABS = ("Triage queue (whole CKF)", "Envelope conflicts (current run)", "Detector quality", "Export & audit log")
#: the URL parameter naming the open tab (a page parameter, like the Tuning page's)
TAB_PARAM = "tab"


# ---- page ----------------------------------------------------------------------------------------
def main() -> None:
    st.title("Conflict triage")
    state.init_state()
    db_section()
    kb_loaded = state.get_ckf()
    if kb_loaded is None:
        st.info("No CKF loaded: pick a bundled sample or upload a CKF in the sidebar.")
        st.stop()
    try:
        ds = decisions.decision_set()
        base = state.get_corpus(decisions=False)
    except CRPError as exc:
        st.error(render.md_escape(exc))
        st.stop()
    flash = st.session_state.pop(K + "flash", None)
    if flash:
        st.success(render.md_escape(flash))
    config = state.get_config()
    scan = decisions.conflict_scan(base, config, state.get_now(), ds)
    kb = base.kb
    ds_key = decisions.set_fingerprint(ds)
    # the scan object stands for its config and time: the agreement and the frame are built once per scan
    agreement = cache.by_identity("sdk_agreement", scan, lambda sc: cv.sdk_agreement_of(sc, kb, config))
    frame = cache.by_identity(
        "queue", scan, lambda sc: cv.with_sdk_column(cv.queue_frame(sc, kb, ds), agreement), extra=ds_key
    )
    counts = cache.by_identity("queue_counts", frame, cv.queue_counts)
    m = st.columns(6)
    m[0].metric("conflict pairs", counts["pairs"], help="Whole CKF (crp-inspect conflicts)")
    m[1].metric("ties", counts["ties"])
    m[2].metric("undecided", counts["undecided"])
    m[3].metric("decided", counts["decided"])
    m[4].metric("dismissed", counts["dismissed"])
    m[5].metric("decisions in the log", ds.count)
    st.caption(
        " · ".join(f"{p}: {counts[p]}" for p in PATTERNS) + f" · operator: "
        f"{render.md_escape(state.get_operator() or '(none: set it in the sidebar)')}"
    )
    if agreement is not None:
        st.caption(render.md_escape(cv.sdk_summary(agreement)))
    # the selected tab lives in the URL (?tab=<label>, st.tabs bind="query-params", as on the Tuning page):
    # a bound tab set knows which tab is open (``.open``) and a click on another tab reruns the app, so
    # only the open tab is built; the other three cost nothing on a rerun or a page switch
    draws = (
        lambda: queue_tab(scan, frame, ds, kb, config, state.get_now(), agreement),
        lambda: envelope_tab(ds, kb),
        lambda: quality_tab(ds, kb),
        lambda: export_tab(ds, kb),
    )
    for tab, draw in zip(st.tabs(list(TABS), key=TAB_PARAM, bind="query-params"), draws):
        if tab.open is not False:  # None: a Streamlit that does not track tabs draws them all
            with tab:
                draw()


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)

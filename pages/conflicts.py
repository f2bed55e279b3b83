"""Conflict triage (SPEC-027 §2, §2.4 "conflicts are logged, not hidden").

* **Triage queue** over the whole CKF (the ``crp-inspect conflicts`` scan of the same decision store): ties
  first, then the smallest authority margin; filters by pattern, source type, status, decided / undecided;
  counts; opened on the first undecided pair (:mod:`crp_ui.triage_queue`). The pairs an operator's
  QUARANTINED / DELETED mark took out of it are listed apart (:mod:`crp_ui.queue_aside`).
* **Operator decisions** on the selected pair (accept, override the winner, mark a fact STALE /
  QUARANTINED / DELETED / ACTIVE, dismiss), with a note and the operator's name (sidebar), stored
  in the SQLite triage database shared by every session; they apply to every page's run
  (:mod:`crp_ui.triage_form`).
* **Envelope conflicts** of the current run: both texts with the differing tokens highlighted,
  similarity, patterns, authority arithmetic (numbers and grouped bars), winner / suppressed / tie
  with the NOTE block as the envelope carries it, the ``CONTRADICTION_RESOLVED`` audit event; its near
  conflicts, each with a form to dismiss, accept or override it (:mod:`crp_ui.near_form`).
* **Export**: decisions as JSON / CSV, the cleaned CKF (statuses applied, format as loaded), the
  audit log.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from crp_core import (
    PATTERNS,
    SDK_CHECKSUMS,
    ConflictPair,
    CRPError,
    Decision,
    DecisionSet,
    KnowledgeBase,
    PipelineResult,
    SdkAgreement,
    changed_by_decision,
    export_csv,
    export_json,
    headers,
    language_profile,
    review_statuses,
)
from crp_ui import (
    cache,
    decisions,
    near_form,
    render,
    revert_any,
    shell,
    state,
    team,
    triage_audit,
    triage_form,
    triage_live,
    triage_quality,
    triage_queue,
)
from crp_ui import conflicts_view as cv
from crp_ui.queue_patch import QueueInputs, queue_frame_of
from crp_ui.queue_view import held_keys
from crp_ui.session_input import session_writeback

K = triage_form.K
K_DB_ERROR = K + "db_error"  # why the path entered for the decision database was refused
K_DB_PATH = K + "db_path"  # the path field


# ---- decision database ---------------------------------------------------------------------------
def _on_db_path() -> None:
    state.remember(K_DB_ERROR, state.set_db_path(state.recall(K_DB_PATH, "")))


def db_section() -> None:
    """Where the decisions live (path field: this session only, single mode only; empty = the default)."""
    with st.expander(
        f"Decision database: {render.md_escape(decisions.shown_target(state.db_path()))} ({state.db_path_origin()})",
        expanded=False,
    ):
        if team.identity().mode != "single" or team.team_refusal() is not None:
            st.caption(
                "The team's database ($CRP_INSPECT_TRIAGE_DB): with a team file a session cannot choose another "
                "one, so every operator's decisions go to the one log."
            )
            return
        st.text_input(
            f"Database file for this session (empty: $CRP_INSPECT_TRIAGE_DB or ./{state.DEFAULT_DB_FILE})",
            value=state.db_choice(),
            key=K_DB_PATH,
            on_change=_on_db_path,
            help="Every session using the same file sees the same decisions. The file is created "
            "with the first decision; a file that is not a crp-inspect triage database is refused.",
        )
        err = state.recall(K_DB_ERROR)
        if err:
            st.error(render.md_escape(err))
        st.caption(
            "Decisions are appended (the log is the audit trail) and survive restarts; the latest "
            "decision on a pair is in force."
        )


# ---- the envelope --------------------------------------------------------------------------------
def run_without_decisions() -> PipelineResult | None:
    """The same run on the CKF as loaded, without operator decisions (cached like every run)."""
    try:
        corpus = state.get_corpus(decisions=False)
        scenario = state.get_scenario()
        if corpus is None or scenario is None:
            return None
        return cache.pipeline_result(corpus, scenario, state.get_config(), state.get_now())
    except CRPError:
        return None


def _operator_effects(result: PipelineResult, ds: DecisionSet, base_kb: KnowledgeBase) -> None:
    """The operators' status marks and pair decisions in force, and what they changed in this run."""
    res = result.resolution
    effects = cv.operator_effects_frame(result, ds, base_kb)
    if not len(effects) and not ds.pair_decisions:
        return
    with st.expander(
        f"Operator decisions applied to this run ({len(effects)} status mark(s), "
        f"{len(ds.pair_decisions)} pair decision(s) in force)",
        expanded=True,
    ):
        if len(effects):
            render.dataframe(effects, hide_index=True, width="stretch", key=K + "effects")
        in_run = [p for p in res.pairs if changed_by_decision(p, result.config)]  # an accept changes nothing
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


def _envelope_pair(
    pair: ConflictPair, result: PipelineResult, ds: DecisionSet, base_kb: KnowledgeBase, *, key: str
) -> None:
    """One contradiction pair of the run: its case, its outcome (with the NOTE block of a tie), the
    authority arithmetic and its audit event."""
    with st.container(border=True):
        st.markdown(
            f"**{render.md_escape(pair.fact_a)} ↔ {render.md_escape(pair.fact_b)}** · cosine "
            f"{pair.similarity:.4f} · {render.md_escape(pair.patterns_text())}"
        )
        asserted = cv.asserted_text(pair, result.config)
        if asserted:
            st.caption(asserted)
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
        cv.authority_table(pair, key=key)
        ev = cv.audit_event_for(result, pair)
        if ev is not None:
            with st.expander(f"{ev.event} audit event"):
                st.json(dict(ev.data), expanded=True)


def envelope_tab(ds: DecisionSet, base_kb: KnowledgeBase) -> None:
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
    _operator_effects(result, ds, base_kb)
    near_form.near_section(result, base_kb)  # the pairs just below the threshold, each with its form
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
        _envelope_pair(pair, result, ds, base_kb, key=f"{K}env.authority.{i}")


# ---- export --------------------------------------------------------------------------------------
def _sdk_download(ds: DecisionSet, kb: KnowledgeBase, where: DeltaGenerator) -> None:
    """The crprotocol snapshot download and its checksum choice (``crp-inspect triage export --format sdk``)."""
    checksum = where.selectbox(
        "SDK checksum",
        SDK_CHECKSUMS,
        key=K + "sdk.checksum",
        help="auto: the checksum of the snapshot loaded (the SDK checks BLAKE3 where the blake3 module is "
        "installed, else SHA-256), SHA-256 for any other CKF.",
    )
    refusal = decisions.sdk_checksum_refusal(kb, checksum)
    where.download_button(
        "crprotocol snapshot",
        lambda: decisions.sdk_snapshot_bytes(kb, ds, checksum)[0],
        file_name=decisions.sdk_download_name(state.session_kb(kb).source),
        mime="application/json",
        key=K + "dl.sdk",
        on_click="ignore",
        disabled=refusal is not None,
        help="The CKF as a crprotocol SDK snapshot that ContextualKnowledgeFabric.restore loads: the "
        "operators' decisions as supersessions, each with an event naming the operator; the SDK's edges, "
        "event log and session state as loaded. Written when clicked.",
    )
    if refusal is not None:
        where.caption(render.md_escape(refusal))


def export_tab(
    ds: DecisionSet, kb: KnowledgeBase, log: list[Decision], queued: frozenset[str], apart: frozenset[str]
) -> None:
    """The downloads, the audit log, and the revert of a decision on any pair (``queued`` / ``apart``: the queue's
    pair keys and those out of retrieval, which the revert's options name)."""
    c = st.columns(4)
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
    name, _fmt = decisions.ckf_download_name(state.session_kb(kb).source, kb.fmt)
    c[2].download_button(
        "Cleaned CKF",
        lambda: decisions.cleaned_ckf_bytes(kb, ds)[0],
        file_name=name,
        mime="application/octet-stream",
        key=K + "dl.ckf",
        on_click="ignore",
        help="The CKF as loaded with the operators' statuses applied (same format; a CKF "
        "directory comes as a zip; an SDK snapshot's edges in metadata.sdk_edges). Written when clicked.",
    )
    _sdk_download(ds, kb, c[3])
    unknown = ds.unknown_facts(kb)
    applied = sum(1 for f in ds.statuses if kb.get(f) is not None)
    st.caption(
        f"{len(log)} decision(s) in the log · {applied} status mark(s) apply to this CKF"
        + (f" · {len(unknown)} decision(s) name facts this CKF lacks (ignored)" if unknown else "")
    )
    triage_audit.audit_section(log, kb)
    revert_any.revert_any_section(log, kb, queued, apart)


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
        triage_live.page_built()
        base = state.get_corpus(decisions=False)
    except CRPError as exc:
        st.error(render.md_escape(exc))
        st.stop()
    triage_live.watch()
    triage_live.away_banner()
    if base is None:
        st.stop()
    triage_form.flash()
    config = state.get_config()
    split = decisions.conflict_scan(base, config, state.get_now(), ds)  # crp-inspect conflicts on this store
    scan = split.scan
    kb = base.kb
    languages = cache.by_identity("languages", kb, lambda k: language_profile(k.facts).note)
    if languages is not None:  # the detector reads English (docs/decisions/languages.md)
        st.warning(render.md_escape(languages), icon=":material/translate:")
    log = decisions.audit_log()
    reviews = review_statuses(cv.log_for_kb(log, state.get_ckf_fingerprint(kb)), team.review_quorum())
    # the log's length and the review states: who decided and the two-person policy's verdicts
    ds_key = (decisions.set_fingerprint(ds), ds.count, tuple(sorted(reviews.items())))
    # the scan object stands for its config and time: the agreement and the frame are built once per scan
    agreement = cache.by_identity("sdk_agreement", scan, lambda sc: cv.sdk_agreement_of(sc, kb, config))
    # after a decision the CKF's latest frame is patched: only rows whose inputs changed are built again
    kb_id = decisions.kb_digest(kb)
    frame = cache.by_identity(
        "queue", scan, lambda sc: queue_frame_of(kb, kb_id, QueueInputs(sc, ds, reviews, agreement)), extra=ds_key
    )
    _counts(cache.by_identity("queue_counts", frame, cv.queue_counts), ds, agreement)  # kept with the frame
    frame = cv.with_writeback_marks(frame, session_writeback())  # the SDK session page's finding, if any
    # the selected tab lives in the URL (?tab=<label>, st.tabs bind="query-params", as on the Tuning page):
    # a bound tab set knows which tab is open (``.open``) and a click on another tab reruns the app, so
    # only the open tab is built
    draws: tuple[Callable[[], None], ...] = (
        lambda: triage_queue.queue_tab(scan, frame, ds, kb, config, state.get_now(), agreement, split.aside),
        lambda: envelope_tab(ds, kb),
        lambda: triage_quality.quality_tab(ds, kb, cv.log_for_kb(log, state.get_ckf_fingerprint(kb))),
        lambda: export_tab(ds, kb, log, held_keys(frame), frozenset(cv.p_key(p) for p in split.aside)),
    )
    refused = state.tab_refusal(TAB_PARAM, TABS)  # Streamlit drops a label no tab has, without a word
    if refused:
        st.warning(f"Link parameter ignored: {render.md_escape(refused)}")
    for tab, draw in zip(st.tabs(list(TABS), key=TAB_PARAM, bind="query-params"), draws):
        if tab.open is not False:  # None: a Streamlit that does not track tabs draws them all
            with tab:
                draw()


def _counts(counts: dict[str, int], ds: DecisionSet, agreement: SdkAgreement | None) -> None:
    """The queue's counts, by pattern, and the operator (and the SDK's agreement, for a snapshot)."""
    m = st.columns(6)
    figures = (
        ("conflict pairs", counts["pairs"], "Whole CKF (crp-inspect conflicts)"),
        ("ties", counts["ties"], None),
        ("undecided", counts["undecided"], None),
        ("decided", counts["decided"], None),
        ("dismissed", counts["dismissed"], None),
        ("decisions in the log", ds.count, None),
    )
    for col, (label, n, tip) in zip(m, figures, strict=True):
        col.metric(label, render.count_text(n), help=render.count_help(n, tip))
    who = team.identity()
    st.caption(
        " · ".join(f"{p}: {counts[p]:,}" for p in PATTERNS)
        + " · operator: "
        + (
            f"{render.md_escape(who.operator)} ({who.role.value})"
            if who.operator
            else "(none: " + ("set it in the sidebar)" if who.mode == "single" else "read-only)")
        )
    )
    if agreement is not None:
        st.caption(render.md_escape(cv.sdk_summary(agreement)))


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)

"""Knowledge-base summary: the loaded CKF by source type and status (the statuses in force: the
file's, then the operators' marks), the facts operators re-marked or suppressed, the import summary of a
crprotocol SDK snapshot (mapped, defaulted, dropped, checksum, HMAC), its embedding state, the scenario."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from crp_core import (
    SOURCE_TYPES,
    STATUSES,
    Corpus,
    CRPError,
    DecisionSet,
    ImportSummary,
    KnowledgeBase,
    apply_to_kb,
    pair_key,
)
from crp_ui import cache, decisions, render, shell, state
from crp_ui.decisions import AppliedSummary


def facts_by_type_and_status(kb: KnowledgeBase) -> pd.DataFrame:
    """Counts: one row per source type present, one column per status, plus totals."""
    df = pd.DataFrame({"source_type": [f.source_type for f in kb.facts], "status": [f.status for f in kb.facts]})
    table = pd.crosstab(df["source_type"], df["status"]).reindex(columns=list(STATUSES), fill_value=0)
    order = [s for s in SOURCE_TYPES if s in table.index]
    table = table.reindex(order)
    table["total"] = table.sum(axis=1)
    table.loc["total"] = table.sum(axis=0)
    return table.astype(int)


def status_counts(kb: KnowledgeBase) -> tuple[pd.DataFrame, int]:
    """(:func:`facts_by_type_and_status`, the number of retrievable facts) of ``kb``."""
    return facts_by_type_and_status(kb), sum(1 for f in kb.facts if f.retrievable)


def marked_facts(kb: KnowledgeBase, ds: DecisionSet, summary: AppliedSummary) -> pd.DataFrame:
    """The facts the operators' decisions touch: re-marked (status in the CKF -> in force) or
    suppressed as the loser of an accepted / overridden pair; with who decided and the text."""
    rows = []
    for fid in summary.affected:
        f = kb.get(fid)
        if f is None:
            continue
        marks, who = [], []
        if fid in summary.remarked:
            old, new = summary.remarked[fid]
            marks.append(f"re-marked {new} (was {old})")
            d = ds.status_decisions.get(fid)
            who.append(d.operator if d is not None else "")
        if fid in summary.suppressed:
            winner = summary.suppressed[fid]
            marks.append(f"suppressed: loses to {winner}")
            d = ds.latest.get(pair_key(fid, winner))
            who.append(d.operator if d is not None else "")
        in_force = ds.statuses.get(fid, f.status)
        rows.append(
            {
                "fact_id": fid,
                "mark": "; ".join(marks),
                "status": f.status if in_force == f.status else f"{f.status} → {in_force}",
                "by": ", ".join(sorted(set(filter(None, who)))),
                "content": f.content,
            }
        )
    return pd.DataFrame(rows, columns=["fact_id", "mark", "status", "by", "content"])


HMAC_FIELD = "header.hmac_signature"


def import_frame(summary: ImportSummary) -> pd.DataFrame:
    """An SDK snapshot's ``crp_core.ImportSummary`` items: one row per (kind, what, count), kinds
    ``mapped`` / ``kept`` / ``defaulted`` / ``dropped`` in that order (docs/decisions/sdk-snapshots.md)."""
    kinds = (
        ("mapped", summary.mapped),
        ("kept", summary.kept),
        ("defaulted", summary.defaulted),
        ("dropped", summary.dropped),
    )
    rows = [{"kind": kind, "what": what, "count": n} for kind, items in kinds for what, n in items]
    return pd.DataFrame(rows, columns=["kind", "what", "count"])


def import_verdicts(kb: KnowledgeBase) -> list[str]:
    """The snapshot's provenance, counts, checksum verdict and HMAC state, one plain sentence each."""
    summary = kb.imported
    if summary is None:
        return []
    head, counts, checksum = summary.lines()[:3]
    hmac = (
        "HMAC signature: present, NOT verified (it needs the deployment's key, which crp-inspect never asks for)"
        if any(p.field == HMAC_FIELD for p in kb.warnings)
        else "HMAC signature: none in the header (nothing to verify)"
    )
    return [head, counts, checksum, hmac]


def import_section(kb: KnowledgeBase, summary: ImportSummary) -> None:
    """The import summary of a CKF read from a crprotocol SDK snapshot, every text from the file escaped."""
    st.subheader("Import summary (crprotocol SDK snapshot)")
    for line in import_verdicts(kb):
        st.markdown("- " + render.md_escape(line))
    smap = state.get_sdk_map()
    st.caption(
        "Source types: "
        + (
            f"the uploaded mapping {render.md_code(smap[0])}"
            if smap is not None
            else "the default mapping (every fact unverified; upload a mapping TOML in the sidebar)"
        )
    )
    frame = import_frame(summary)
    render.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        key="crp.page.home.import",
        column_config={
            "kind": st.column_config.TextColumn(width=80),
            "what": st.column_config.TextColumn(width=520),
            "count": st.column_config.NumberColumn(width=60),
        },
    )


def _decisions_in_force() -> DecisionSet:
    """The decisions in force (none, with the error shown, when the database cannot be read)."""
    try:
        return decisions.decision_set()
    except CRPError as exc:
        st.error(render.md_escape(exc))
        return DecisionSet.empty()


def _counts(kb: KnowledgeBase, ds: DecisionSet, summary: AppliedSummary) -> None:
    """The CKF's counts, its import summary (an SDK snapshot), and its facts by source type and status."""
    # the counts change with the CKF and the statuses in force only: built once per (CKF, decision set)
    table, retrievable = cache.by_identity(
        "kb_status_counts", kb, lambda k: status_counts(apply_to_kb(k, ds)), extra=decisions.set_fingerprint(ds)
    )
    c = st.columns(5)
    c[0].metric("facts", render.count_text(len(kb)), help=render.count_help(len(kb)))
    retr_help = "status in force not DELETED / QUARANTINED"
    c[1].metric("retrievable", render.count_text(retrievable), help=render.count_help(retrievable, retr_help))
    c[2].metric(
        "re-marked",
        len(summary.remarked),
        help="facts whose status an operator changed (Conflicts page); counted below under the new status",
    )
    c[3].metric("skipped (lenient)", render.count_text(len(kb.skipped)))
    c[4].metric("data-quality warnings", render.count_text(len(kb.warnings)))
    if kb.imported is not None:
        import_section(kb, kb.imported)
    st.subheader("Facts by source type and status")
    render.dataframe(
        table,
        width="content",
        height=35 * (len(table) + 1) + 3,
        # the longest source type (official_documentation) whole: the content width cut it
        column_config={"_index": st.column_config.TextColumn("source_type", width=SOURCE_TYPE_PX)},
    )


#: the width of the source-type column of the counts table, pixels
SOURCE_TYPE_PX = 190

#: the height of a row of the touched facts' table (its content wraps), and the rows shown without scrolling
MARKED_ROW_PX, MARKED_ROWS = 92, 12


def _marked(kb: KnowledgeBase, ds: DecisionSet, summary: AppliedSummary) -> None:
    """Which statuses are in force, and the facts the operators' decisions touch."""
    if not summary:
        st.caption("Statuses as in the CKF: no operator decision applies to it.")
        return
    st.caption(
        f"Statuses in force: the CKF's, then the operators' marks. "
        f"{render.md_escape(decisions.applied_sentence(summary))}; "
        f"{len(summary.remarked)} fact(s) re-marked by operators are counted under their new status."
    )
    marked = marked_facts(kb, ds, summary)
    if not len(marked):
        return
    st.markdown("**Facts the operators' decisions touch**")
    render.dataframe(
        marked,
        hide_index=True,
        width="stretch",
        key="crp.page.home.marked",
        row_height=MARKED_ROW_PX,
        # every fact shown without scrolling up to MARKED_ROWS (a fifth row hidden below four read as missing)
        height=MARKED_ROW_PX * min(len(marked), MARKED_ROWS) + 38,
        column_config={
            "fact_id": st.column_config.TextColumn(width=90),
            "mark": st.column_config.TextColumn(width=200),
            "status": st.column_config.TextColumn(width=110, help="in the CKF → in force"),
            "by": st.column_config.TextColumn(width=80),
            "content": st.column_config.TextColumn(width=300),
        },
    )


def _embeddings(kb: KnowledgeBase) -> Corpus | None:
    """The embedding state: the CKF's own embeddings, then the prepared corpus (None when refused)."""
    st.subheader("Embeddings")
    if kb.embeddings is not None:
        st.write(
            f"The CKF carries its own embeddings ({kb.embeddings.shape[1]} dimensions, model "
            f"{render.md_code(kb.embedding_model or 'unknown')}): no model needs to run."
        )
    try:
        corpus = state.get_corpus()
    except CRPError as exc:
        st.error(f"The CKF cannot be embedded / indexed: {render.md_escape(exc)}")
        return None
    if corpus is not None:
        st.success(
            f"Embedding state: ready. {corpus.n} vectors of dimension {corpus.dim}, model "
            f"{render.md_code(corpus.model_id)}; HNSW index built (M={corpus.index.m})."
        )
    return corpus


def _scenario(corpus: Corpus | None) -> None:
    """The scenario, and the headers of its run."""
    st.subheader("Scenario")
    s = state.get_scenario()
    if s is None:
        st.info("No scenario: pick or upload one in the sidebar.")
        return
    st.markdown(f"**Query:** {render.md_escape(s.query)}")
    now = s.now.isoformat() if s.now is not None else "-"
    st.write(
        f"{len(s.sub_queries)} sub-queries, {len(s.addressed)} addressed, "
        f"{len(s.residual_set)} in the residual set · now = {now} · "
        f"fan-out width {s.fanout_width}"
    )
    if corpus is None:
        return
    try:
        result = state.get_result()
    except CRPError as exc:
        st.error(f"The pipeline refused this input: {render.md_escape(exc)}")
        return
    if result is not None:
        st.subheader("Headers")
        render.headers_block(result.headers)


def main() -> None:
    st.title("crp-inspect")
    st.caption(
        "Retrieval inspection for the Context Relay Protocol (CRP-SPEC-027): why each fact "
        "was retrieved, penalised, suppressed or packed."
    )
    state.init_state()
    kb = state.get_ckf()
    if kb is None:
        st.info("No CKF loaded: pick a bundled sample or upload a CKF in the sidebar.")
        return
    st.header(f"Knowledge base: {render.md_escape(state.get_ckf_label())}")
    ds = _decisions_in_force()
    summary = decisions.applied_summary(ds, kb)
    _counts(kb, ds, summary)
    _marked(kb, ds, summary)
    corpus = _embeddings(kb)
    if kb.warnings:
        with st.expander(f"{len(kb.warnings)} data-quality warnings"):
            st.markdown(render.problems_list(kb.warnings))
    _scenario(corpus)


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)

"""Glossary: every term the dashboard uses, one paragraph each with the spec section it comes from
(the entries of ``crp_ui.glossary``, the same text the column and widget help shows elsewhere).
Needs no data: it opens before any CKF is loaded."""

from __future__ import annotations

import streamlit as st

from crp_ui import glossary, render, shell, state

K = "crp.page.glossary."


def main() -> None:
    st.title("Glossary")
    st.caption(
        "The words of the dashboard and of the before / after report, each defined once with the spec "
        "section it comes from. Table columns and controls show the same one-line definitions as help (?)."
    )
    query = st.text_input("Search the terms", key=K + "search", placeholder="a word: novelty, TTL, fan-out…")
    found = glossary.search(query)
    if query.strip():
        state.declare_unlinked(f"the glossary search ({query.strip()[:40]})")
    if not found:
        st.info(
            f"No term matches **{render.md_escape(query.strip())}**. Clear the search to see all "
            f"{len(glossary.TERMS)} terms."
        )
        return
    if query.strip():
        st.caption(f"{len(found)} of {len(glossary.TERMS)} terms match.")
    for t in found:
        term_card(t)


def term_card(t: glossary.Term) -> None:
    """One term in its bordered card: the name (bold) and the one-line form, the paragraph, then the
    source (and other names) as a caption; every text escaped (:func:`render.md_escape`)."""
    also = f" · also: {', '.join(t.aliases)}" if t.aliases else ""
    with st.container(border=True):
        st.markdown(f"**{render.md_escape(t.name)}** — {render.md_escape(t.short)}\n\n{render.md_escape(t.definition)}")
        st.caption(f"Source: {render.md_escape(t.cite + also)}")


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)

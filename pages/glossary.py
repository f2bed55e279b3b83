"""Glossary: every term the dashboard uses, one paragraph each with the spec section it comes from
(the entries of ``crp_ui.glossary``, the same text the column and widget help shows elsewhere).
Needs no data: it opens before any CKF is loaded."""
from __future__ import annotations

import streamlit as st

from crp_ui import glossary, render, shell

K = "crp.page.glossary."


def main() -> None:
    st.title("Glossary")
    st.caption("The words of the dashboard and of the before / after report, each defined once with the spec "
               "section it comes from. Table columns and controls show the same one-line definitions as help (?).")
    query = st.text_input("Search the terms", key=K + "search", placeholder="a word: novelty, TTL, fan-out…")
    found = glossary.search(query)
    if not found:
        st.info(f"No term matches **{render.md_escape(query.strip())}**. Clear the search to see all "
                f"{len(glossary.TERMS)} terms.")
        return
    if query.strip():
        st.caption(f"{len(found)} of {len(glossary.TERMS)} terms match.")
    for t in found:
        with st.container(border=True, key=f"{K}term.{t.anchor}"):
            # one Markdown element per term (name, definition and source, the source small and grey like a
            # caption): each element costs the browser a render, and the page lists every term
            also = f" · also: {', '.join(t.aliases)}" if t.aliases else ""
            st.markdown(f"**{t.name}** — {t.short}\n\n{t.definition}\n\n{source_line(t.cite + also)}")


def source_line(text: str) -> str:
    """``text`` as a small grey line (static glossary text holding no square brackets)."""
    return f":small[:gray[Source: {text}]]"


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)

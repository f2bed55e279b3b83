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
    # every term in ONE Markdown element: each element costs the browser a render (a card and a Markdown
    # element per term made a switch to this page ~0.2 s slower); the cards are static HTML around the
    # glossary's own static text (no user input reaches it: the search only filters)
    st.markdown("\n\n".join(term_card(t) for t in found), unsafe_allow_html=True)


#: a term's card: the look of a bordered st.container (static CSS, no user content)
CARD_OPEN = ('<div class="crp-term" style="border:1px solid rgba(49,51,63,0.2);border-radius:0.5rem;'
             'padding:0.25rem 1rem 0.5rem 1rem;margin-bottom:0.75rem">')


def term_card(t: glossary.Term) -> str:
    """One term as Markdown inside its card: the name, the one-line form, the paragraph, then the source
    (and other names) as a small grey line. Blank lines around the Markdown keep it Markdown."""
    also = f" · also: {', '.join(t.aliases)}" if t.aliases else ""
    return (f'{CARD_OPEN}\n\n**{t.name}** — {t.short}\n\n{t.definition}\n\n{source_line(t.cite + also)}\n\n'
            '</div>')


def source_line(text: str) -> str:
    """``text`` as a small grey line (static glossary text holding no square brackets)."""
    return f":small[:gray[Source: {text}]]"


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)

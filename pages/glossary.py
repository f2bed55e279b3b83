"""Glossary: every term the dashboard uses, one paragraph each with the spec section it comes from
(the entries of ``crp_ui.glossary``, the same text the column and widget help shows elsewhere).
Needs no data: it opens before any CKF is loaded."""

from __future__ import annotations

import streamlit as st

from crp_ui import glossary, render, shell

K = "crp.page.glossary."


def main() -> None:
    st.title("Glossary")
    st.caption(
        "The words of the dashboard and of the before / after report, each defined once with the spec "
        "section it comes from. Table columns and controls show the same one-line definitions as help (?)."
    )
    query = st.text_input("Search the terms", key=K + "search", placeholder="a word: novelty, TTL, fan-out…")
    found = glossary.search(query)
    if not found:
        st.info(
            f"No term matches **{render.md_escape(query.strip())}**. Clear the search to see all "
            f"{len(glossary.TERMS)} terms."
        )
        return
    if query.strip():
        st.caption(f"{len(found)} of {len(glossary.TERMS)} terms match.")
    # every term in ONE HTML element: each element costs the browser a render (a card and a Markdown
    # element per term made a switch to this page ~0.2 s slower), and HTML is not re-parsed as Markdown
    # (one Markdown element of these cards cost the switch ~25-60 ms more); the glossary's own static text,
    # escaped (no user input reaches it: the search only filters)
    render.html_block("".join(term_card(t) for t in found))


#: a term's card: the look of a bordered st.container (static CSS, no user content)
CARD_OPEN = (
    '<div class="crp-term" style="border:1px solid rgba(49,51,63,0.2);border-radius:0.5rem;'
    'padding:0.25rem 1rem 0.5rem 1rem;margin-bottom:0.75rem">'
)


#: a paragraph of a card, spaced like Streamlit's Markdown paragraphs
PARA = '<p style="margin:0.5rem 0;line-height:1.6">'


def term_card(t: glossary.Term) -> str:
    """One term as HTML inside its card: the name (bold) and the one-line form, the paragraph, then the
    source (and other names) as a small grey line; every text escaped (:func:`render.html_text`)."""
    also = f" · also: {', '.join(t.aliases)}" if t.aliases else ""
    return (
        f"{CARD_OPEN}{PARA}<b>{render.html_text(t.name)}</b> — {render.html_text(t.short)}</p>"
        f"{PARA}{render.html_text(t.definition)}</p>{source_line(t.cite + also)}</div>"
    )


def source_line(text: str) -> str:
    """``text`` as a small grey line, like a caption (escaped)."""
    return (
        f'<p class="crp-source" style="margin:0.25rem 0;font-size:0.875rem;color:rgba(49,51,63,0.6)">'
        f"Source: {render.html_text(text)}</p>"
    )


if __name__ == "__main__":  # Streamlit executes page files as scripts
    shell.run_page(main)

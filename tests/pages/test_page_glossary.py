"""Glossary page and the shared glossary accessor: every term with a definition and its spec section,
a search with an empty state, and the one-line help other views put on their columns."""

from __future__ import annotations

import re

import pytest

from crp_ui import glossary, render
from tests.support.pages import run_page, widget

K = "crp.page.glossary."
#: the terms the dashboard must explain (the demo's and the tables' vocabulary)
REQUIRED = (
    "CDR",
    "relevance gate",
    "residual pull",
    "ResidualSet",
    "novelty",
    "coverage penalty",
    "n-gram penalty",
    "recency factor",
    "TTL",
    "stale floor",
    "anchor",
    "connector",
    "bridge value",
    "CDGR",
    "Fact Authority Resolution",
    "source authority",
    "importance",
    "tie / NOTE block",
    "fan-out",
    "partition",
    "snapshot",
    "fan-in dedup",
    "Jaccard / overlap",
    "envelope",
    "primacy/recency bands",
    "must_include/must_exclude",
    "leak",
    "wrong winner",
    "expired vs ageing",
    "fan-out duplicates",
    "near conflict",
    "gap mark (∅)",
)


def test_every_required_term_is_defined_with_its_spec_section():
    names = [t.name for t in glossary.TERMS]
    assert len(names) == len(set(names))
    for name in REQUIRED:
        t = glossary.term(name)
        assert t is not None, name
        assert len(t.definition) > 60 and t.short and ("SPEC" in t.cite or "docs/decisions" in t.cite), name


def test_the_marks_a_pair_card_draws_are_in_the_glossary():
    """The ∅ a conflict pair's text shows where the other text has a word ("Glass jars are ∅accepted") is
    explained, under the mark itself too (a reader searches for what they see)."""
    from crp_ui.conflict_text import GAP_MARK

    mark = glossary.term(GAP_MARK)
    assert mark is not None and GAP_MARK in mark.name and GAP_MARK in mark.short
    assert [t.name for t in glossary.search(GAP_MARK)] == [mark.name]
    assert glossary.term("near conflicts") is glossary.term("near conflict")


def test_help_accessor_and_column_help():
    assert glossary.help("residual pull") == glossary.help("Residual_Pull")  # alias, any case
    assert glossary.help("residual pull").endswith(
        "(SPEC-024 §2.2, §2.7; docs/reference/pipeline.md §2; see the Glossary page)"
    )
    with pytest.raises(KeyError):
        glossary.help("no such term")
    for column, name in glossary.COLUMN_TERMS.items():
        assert glossary.column_help(column) == glossary.help(name), column
    assert glossary.column_help("content") == "The fact's text, as in the CKF."
    assert glossary.column_help("zz unknown") is None


def test_with_help_keeps_the_column_config():
    import streamlit as st

    cfg = glossary.with_help(
        ["relevance", "content", "zz"],
        {
            "relevance": st.column_config.NumberColumn("relevance", format="%.4f"),
            "content": st.column_config.TextColumn("content", width="large", help="mine"),
        },
    )
    assert cfg["relevance"]["help"] == glossary.help("relevance")
    assert cfg["relevance"]["type_config"]["format"] == "%.4f"
    assert cfg["content"]["help"] == "mine" and cfg["content"]["width"] == "large"
    assert "zz" not in cfg


def _unmd(text: str) -> str:
    """Markdown-escaped text as shown (backslash escapes removed)."""
    return re.sub(r"\\(.)", r"\1", text)


def cards(at) -> list[str]:
    """The Markdown of the term cards on the page (name line and paragraph), in order."""
    return [m.value for m in at.main.markdown if re.match(r"\*\*.+?\*\* — ", m.value)]


def shown_terms(at) -> list[str]:
    """The names of the terms the page lists, unescaped."""
    return [_unmd(re.match(r"\*\*(.+?)\*\* — ", v).group(1)) for v in cards(at)]


def test_glossary_page_lists_every_term(ui_env):
    at = run_page("glossary")
    assert [t.value for t in at.title] == ["Glossary"]
    # each term in its own bordered card (Streamlit's container): the name in bold and the one-line form,
    # the paragraph, then the source as a caption; every text Markdown-escaped, no HTML
    assert not at.main.html
    values = cards(at)
    assert len(values) == len(glossary.TERMS) == len(shown_terms(at))
    for t, v in zip(glossary.TERMS, values):
        assert v == f"**{render.md_escape(t.name)}** — {render.md_escape(t.short)}\n\n{render.md_escape(t.definition)}"
    bridge = glossary.term("bridge value")
    sources = [c.value for c in at.caption if c.value.startswith("Source:")]
    assert len(sources) == len(glossary.TERMS)
    assert any(_unmd(c).startswith("Source: SPEC-025 §2.4") for c in sources)
    i = [t.name for t in glossary.TERMS].index(bridge.name)
    assert _unmd(sources[i]).startswith(f"Source: {bridge.cite}")


def test_glossary_text_holds_no_markup():
    # the glossary's static text must not open a tag or an entity (the cards escape it anyway), and its
    # sources and other names hold no square brackets (``help`` puts the source into widgets' Markdown help)
    for t in glossary.TERMS:
        for text in (t.name, t.short, t.definition, t.cite, *t.aliases):
            assert not re.search(r"<[A-Za-z/!?]|&[#A-Za-z]", text), (t.name, text)
        assert "[" not in t.cite + "".join(t.aliases) and "]" not in t.cite + "".join(t.aliases), t.name


def test_glossary_search_and_its_empty_state(ui_env):
    at = run_page("glossary")
    widget(at, "text_input", K + "search").set_value("bridge").run()
    names = shown_terms(at)
    assert "bridge value" in names and "connector" in names and "TTL" not in names
    assert any("terms match" in c.value for c in at.caption)
    widget(at, "text_input", K + "search").set_value("<b>zzq</b>").run()
    assert not at.exception
    info = [i.value for i in at.info]
    assert len(info) == 1 and "No term matches" in info[0] and "<b>" not in info[0]
    assert shown_terms(at) == []

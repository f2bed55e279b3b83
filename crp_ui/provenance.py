"""A fact's crprotocol SDK provenance on screen (:func:`crp_core.sdk_provenance`): one compact caption
under the fact, where an operator judges it (a conflict pair's two sides, the Score breakdown's and the
Graph's selected fact). Nothing for a fact that is not an SDK fact.

The values come from the CKF, so they are data: ids (the window, the successor) as code spans, every
other value Markdown-escaped (:mod:`crp_ui.render`), each cut to :data:`SHOWN_CHARS`; the numbers as
:meth:`crp_core.SdkProvenance.labelled` writes them. What each field means is in the glossary.
"""

from __future__ import annotations

import streamlit as st

from crp_core import Fact, SdkProvenance, sdk_provenance

from . import glossary, render

#: the longest value shown whole (a longer one is cut, with an ellipsis)
SHOWN_CHARS = 60
#: the fields that hold a fact or window id: shown as code
ID_FIELDS = frozenset({"source_window_id", "superseded_by"})
#: the fields shown on a line of their own, with what follows their label
LINE_FIELDS = {"superseded_by": "", "invalid": ":"}
#: what the caption starts with (tests find it by this)
PREFIX = "SDK ·"


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def provenance_md(prov: SdkProvenance) -> str:
    """``SDK · window `win-1` · category config · confidence 0.72 · tier 2 (warm) · ...`` as inert
    Markdown: where the fact came from on the first line; its successor, then the fields of the wrong
    type, each on a line of its own (statements of another kind, and ids wrap badly mid-line)."""
    head = [PREFIX.removesuffix(" ·")]
    tail: list[str] = []
    for name, label, text in prov.labelled():
        shown = render.md_code(_cut(text)) if name in ID_FIELDS else render.md_escape(_cut(text))
        if name in LINE_FIELDS:
            tail.append(f"{render.md_escape(label + LINE_FIELDS[name])} {shown}")
        else:
            head.append(f"{render.md_escape(label)} {shown}")
    if len(head) == 1 and not tail:
        head.append("no field set")
    return "  \n".join([" · ".join(head), *tail])


def provenance_caption(fact: Fact) -> None:
    """The SDK provenance of ``fact`` as one caption (its help: the glossary's), nothing when it has none."""
    prov = sdk_provenance(fact)
    if prov is not None:
        st.caption(provenance_md(prov), help=glossary.help("SDK provenance"))

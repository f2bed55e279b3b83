"""The texts of a conflict pair with their differing tokens marked (SPEC-027 §2.2, the ``ValueDiff`` spans).

HTML is built only from escaped pieces: a text is cut at the ``ValueDiff`` character spans, every piece
goes through :func:`crp_ui.render.html_text` (``html.escape`` + Markdown markers as entities), and only
the differing slices are wrapped in ``<mark>``. A mark carries its pattern as ``data-pattern``; its
colour is the stylesheet's (:mod:`crp_ui.theme`). Raw fact text never reaches the browser as HTML.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from crp_core import ConflictPair

from .render import html_text

GAP_MARK = "∅"  # shown where the other text has a token this one lacks (e.g. the negation)


def merge_spans(spans: Iterable[tuple[int, int, str]], length: int) -> list[tuple[int, int, tuple[str, ...]]]:
    """Clamp spans to ``[0, length]``, sort them and merge overlapping ones (their patterns united).

    A zero-width span (a token the other text has and this one lacks) is kept as an insertion
    point; one that falls strictly inside a highlighted slice is absorbed by it.
    """
    items = []
    for s, e, pat in spans:
        s = max(0, min(length, int(s)))
        e = max(s, min(length, int(e)))
        items.append((s, e, str(pat)))
    items.sort(key=lambda t: (t[0], t[1], t[2]))
    merged: list[tuple[int, int, set[str]]] = []
    for s, e, pat in items:
        if merged:
            ps, pe, pats = merged[-1]
            if (pe > ps and s < pe) or (s, e) == (ps, pe):  # overlaps a highlighted slice / same point
                merged[-1] = (ps, max(pe, e), pats | {pat})
                continue
        merged.append((s, e, {pat}))
    return [(s, e, tuple(sorted(p))) for s, e, p in merged]


def highlight_html(text: str | None, spans: Iterable[tuple[int, int, str]]) -> str:
    """``text`` as safe HTML with each differing slice in ``<mark>`` (title = pattern names).

    Every piece of ``text`` is escaped separately (:func:`html_text`); a zero-width span shows
    :data:`GAP_MARK` where the other text holds the differing token.
    """
    text = "" if text is None else str(text)
    out: list[str] = []
    pos = 0
    for s, e, pats in merge_spans(spans, len(text)):
        out.append(html_text(text[pos:s]))
        title = html.escape(", ".join(pats), quote=True)
        pattern = html.escape(pats[0], quote=True)
        if e > s:
            out.append(f'<mark class="crp-diff" title="{title}" data-pattern="{pattern}">{html_text(text[s:e])}</mark>')
        else:
            out.append(
                f'<mark class="crp-gap" title="{title}: the other fact has a token here" '
                f'data-pattern="{pattern}">{GAP_MARK}</mark>'
            )
        pos = e
    out.append(html_text(text[pos:]))
    return "".join(out)


def side_spans(pair: ConflictPair, side: str) -> list[tuple[int, int, str]]:
    """The character spans of ``pair``'s diffs in fact ``side`` ("a" or "b"), with their pattern."""
    if side not in ("a", "b"):
        raise ValueError(f"side must be 'a' or 'b', got {side!r}")
    return [(*(d.span_a if side == "a" else d.span_b), d.pattern) for d in pair.conflict.diffs]


def fact_text_html(text: str | None, spans: Iterable[tuple[int, int, str]]) -> str:
    """One side's text, marked (:func:`highlight_html`), in the block the stylesheet spaces as a fact text."""
    return f'<div class="crp-fact-text">{highlight_html(text, spans)}</div>'

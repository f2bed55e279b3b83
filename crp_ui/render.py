"""Rendering helpers for untrusted text (fact contents, ids, file names, loader messages).

Fact content comes from user files. It is never passed to ``unsafe_allow_html`` unless it went
through :func:`html_text` (``html.escape`` + line breaks as ``<br>``, so the HTML block has no blank
line and no Markdown is interpreted inside it), never to ``st.markdown`` unless it went
through :func:`md_escape` (every ASCII punctuation character backslash-escaped, so no link, image,
HTML tag, emphasis, LaTeX or colour directive can form), and never to a plotly label or hover text
unless it went through :func:`esc` (plotly interprets a subset of HTML there).
"""
from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from typing import Any

import streamlit as st

from crp_core.errors import Problem

_MD_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character (CommonMark escapable)

STATUS_COLOURS = {"ACTIVE": "#1b7f3b", "STALE": "#a15c00", "DELETED": "#6b6b6b", "QUARANTINED": "#b00020"}


def md_escape(text: Any) -> str:
    """Text safe to embed in ``st.markdown``: punctuation escaped, newlines kept as hard breaks."""
    s = "" if text is None else str(text)
    s = s.replace("\r\n", "\n").replace("\r", "\n")
    s = _MD_SPECIAL.sub(r"\\\1", s)
    return "  \n".join(s.split("\n"))


def md_code(text: Any) -> str:
    """Text as an inline code span: shown literally (no escapes inside a code span), the fence one
    backtick longer than any run of backticks in the text, newlines folded to spaces."""
    t = ("" if text is None else str(text)).replace("\r", " ").replace("\n", " ")
    longest = max((len(m) for m in re.findall(r"`+", t)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if t.startswith("`") or t.endswith("`") else ""
    return f"{fence}{pad}{t}{pad}{fence}"


def html_text(text: Any) -> str:
    """Text safe to embed in HTML given to ``st.markdown(unsafe_allow_html=True)`` / ``st.html``.

    ``html.escape`` (quotes too), newlines as ``<br>`` so the HTML block never ends early (a blank
    line would hand the rest to the Markdown parser), and Markdown/LaTeX markers as entities.
    """
    s = html.escape("" if text is None else str(text), quote=True)
    s = s.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>")
    for ch, ent in (("$", "&#36;"), ("*", "&#42;"), ("_", "&#95;"), ("[", "&#91;"), ("]", "&#93;"),
                    ("`", "&#96;"), ("~", "&#126;"), (":", "&#58;"), ("\\", "&#92;")):
        s = s.replace(ch, ent)
    return s


def esc(text: Any, limit: int | None = None) -> str:
    """Text for plotly labels and hover text: HTML-escaped, optionally shortened to ``limit`` characters."""
    s = "" if text is None else str(text)
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "…"
    return html.escape(s, quote=True)


def badge(text: str, colour: str = "#444") -> str:
    """A small coloured label (HTML; ``text`` is escaped)."""
    return (f'<span style="background:{html.escape(colour)};color:#fff;border-radius:4px;'
            f'padding:1px 6px;font-size:0.8em;margin-right:4px">{html_text(text)}</span>')


def fact_card_html(fact: Any, *, extra: Mapping[str, Any] | None = None) -> str:
    """HTML of a fact card: id, source type, status, optional key/values, and the escaped content."""
    status = getattr(fact, "status", "ACTIVE")
    head = (f'<code>{html_text(fact.fact_id)}</code> '
            + badge(getattr(fact, "source_type", ""), "#3b5b92")
            + badge(status, STATUS_COLOURS.get(status, "#444")))
    bits = []
    for k, v in (extra or {}).items():
        if isinstance(v, float):
            v = f"{v:.4f}"
        bits.append(f"<b>{html_text(k)}</b>&nbsp;{html_text(v)}")
    meta = f'<div style="font-size:0.85em;color:#555;margin-top:2px">{" · ".join(bits)}</div>' if bits else ""
    body = f'<div style="margin-top:6px;white-space:normal">{html_text(fact.content)}</div>'
    return (f'<div class="crp-fact" style="border:1px solid #ddd;border-radius:6px;padding:8px 10px;'
            f'margin-bottom:8px">{head}{meta}{body}</div>')


def fact_card(fact: Any, *, extra: Mapping[str, Any] | None = None) -> None:
    """Render one fact (its content escaped)."""
    st.markdown(fact_card_html(fact, extra=extra), unsafe_allow_html=True)


def headers_block(headers: Mapping[str, str]) -> None:
    """The CRP-Context-* headers as a copyable code block (``Name: value`` per line)."""
    st.code(headers_text(headers), language=None)


def headers_text(headers: Mapping[str, str]) -> str:
    return "\n".join(f"{k}: {v}" for k, v in headers.items())


def problems_list(problems: Iterable[Problem], *, limit: int = 50) -> str:
    """Markdown bullet list of loader problems (line, field, message), escaped."""
    problems = list(problems)
    lines = []
    for p in problems[:limit]:
        where = f"line {p.line}" if p.line else "file"
        fid = f" (fact {md_escape(p.fact_id)})" if p.fact_id else ""
        lines.append(f"- **{where}**, field `{p.field.replace('`', '')}`{fid}: {md_escape(p.message)}")
    if len(problems) > limit:
        lines.append(f"- … and {len(problems) - limit} more")
    return "\n".join(lines)


def show_problems(title: str, problems: Iterable[Problem], *, kind: str = "error") -> None:
    """An error (or warning) box: the title, then one bullet per problem."""
    body = f"{md_escape(title)}\n\n{problems_list(problems)}"
    (st.error if kind == "error" else st.warning)(body)

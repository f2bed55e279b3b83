"""Rendering helpers for untrusted text (fact contents, ids, file names, loader messages).

Fact content comes from user files. It is never passed to ``unsafe_allow_html`` unless it went
through :func:`html_text` (``html.escape`` + line breaks as ``<br>``, so the HTML block has no blank
line and no Markdown is interpreted inside it), never to ``st.markdown`` unless it went
through :func:`md_escape` (every ASCII punctuation character backslash-escaped, so no link, image,
HTML tag, emphasis, LaTeX or colour directive can form), and never to a plotly label or hover text
unless it went through :func:`esc` (plotly interprets a subset of HTML there).

All of them first pass the text through :func:`visible`: bidirectional controls (U+202A-U+202E,
U+2066-U+2069, U+200E/U+200F, U+061C) and invisible characters (U+200B, U+2060, U+FEFF) are shown
as a visible escape such as ``⟨U+202E⟩`` instead of being applied, so an id or a text can never
reverse the text around it, nor hide a character (docs/decisions/ui.md). Text shown outside
Markdown (table cells, select-box options, code blocks) goes through :func:`plain` /
:func:`inert_frame`, which do the same.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.typing import DataframeState

from crp_core import Fact, Problem

from .theme import CSS, SOURCE_TONE, STATUS_TONES

_MD_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character (CommonMark escapable)


#: bidirectional formatting controls (embeddings, overrides, isolates, marks) and invisible characters
#: that would hide themselves in an id; ZWJ / ZWNJ are left alone (emoji and several scripts need them)
_CONTROLS = re.compile("[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")


def visible(text: object) -> str:
    """``text`` with every bidi control and invisible character shown as ``⟨U+XXXX⟩`` (plain text)."""
    s = "" if text is None else str(text)
    return _CONTROLS.sub(lambda m: f"⟨U+{ord(m.group(0)):04X}⟩", s)


def controls_in(text: object) -> list[str]:
    """The bidi controls and invisible characters ``text`` holds, as ``U+XXXX`` (sorted, once each)."""
    return sorted({f"U+{ord(c):04X}" for c in _CONTROLS.findall("" if text is None else str(text))})


def plain(text: object) -> str:
    """Text for places that show it literally (table cells, select-box options, code blocks)."""
    return visible(text)


def inert_frame(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every text cell, column name and index label through :func:`visible`: a new frame when
    one of them holds a control character, else ``df`` itself (the common case; it is only read).

    A text column is read once as a Python list (``tolist``: one conversion, where iterating an
    Arrow-backed column costs a scalar object per cell) and screened with one regex pass over its joined
    strings; only a column with a hit is rebuilt."""
    fixed: dict[int, pd.Series[Any]] = {}
    by_name = df.columns.is_unique  # a column by its label when labels are unique, else by position
    for j, (name, dtype) in enumerate(df.dtypes.items()):
        if not _text_dtype(dtype):
            continue
        column = df[name] if by_name else df.iloc[:, j]
        values = column.tolist()
        if not _any_control(values):
            continue  # most columns hold no control at all
        # a categorical column comes back as object (its categories would not hold the shown texts)
        fixed[j] = pd.Series(
            _visible_all(values),
            index=df.index,
            dtype=object if isinstance(dtype, pd.CategoricalDtype) else dtype,
            name=column.name,
        )
    names = df.columns.tolist()
    labels = [] if isinstance(df.index, pd.RangeIndex) else df.index.tolist()  # any other index may hold text
    renamed, index_text = _any_control(names), _any_control(labels)
    if not (fixed or renamed or index_text):
        return df
    out = df.copy()
    for j, series in fixed.items():
        out.isetitem(j, series)
    if renamed:
        out.columns = _visible_all(names)
    if index_text:
        out.index = pd.Index(_visible_all(labels), name=df.index.name)
    return out


def _any_control(values: list[object]) -> bool:
    """Whether a string among ``values`` holds a control character (one regex pass over them joined)."""
    return bool(_CONTROLS.search("\n".join([v for v in values if isinstance(v, str)])))


def _visible_all(values: list[object]) -> list[object]:
    """``values`` with each string through :func:`visible`, anything else as it is."""
    return [visible(v) if isinstance(v, str) else v for v in values]


def _text_dtype(dtype: object) -> bool:
    """Whether a column of ``dtype`` can hold text (object, a string dtype, or categorical)."""
    return bool(
        pd.api.types.is_object_dtype(dtype)
        or pd.api.types.is_string_dtype(dtype)
        or isinstance(dtype, pd.CategoricalDtype)
    )


def table_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` with every text cell Markdown-escaped (:func:`md_escape`), for ``st.table``, which
    renders its cells as Markdown where a dataframe shows them literally. Column names are the caller's
    own (not data) and kept as they are."""
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col].dtype):
            out[col] = pd.Series(
                [md_escape(v).replace("  \n", " ") if isinstance(v, str) else v for v in out[col]],
                index=out.index,
                dtype=object,
                name=col,
            )
    return out


def table(df: pd.DataFrame, **kwargs: Any) -> DeltaGenerator:
    """``st.table`` of :func:`table_frame` (every text cell Markdown-escaped)."""
    return st.table(table_frame(df), **kwargs)


def html_block(body: str) -> None:
    """A block of HTML built by the dashboard (every value drawn from data through :func:`html_text`, or
    an attribute escaper built on it) as one ``st.html`` element: Streamlit's frontend sanitises it
    (DOMPurify) and the browser parses it as HTML, never as Markdown. The block carries classes only;
    its look is the dashboard's stylesheet (:func:`apply_stylesheet`)."""
    st.html(body)


def apply_stylesheet() -> None:
    """Give the browser the dashboard's one stylesheet (:data:`crp_ui.theme.CSS`): once per run, before
    the page draws. A ``st.html`` element holding only a ``<style>`` takes no room on the page."""
    st.html(f"<style>{CSS}</style>")


#: what a table shows in a cell with no value (an undefined metric, a total a fraction does not have)
MISSING_CELL = "–"


def dataframe(df: pd.DataFrame, **kwargs: Any) -> DeltaGenerator | DataframeState:
    """``st.dataframe`` of :func:`inert_frame` (row positions, and so selections, are unchanged); a cell with no
    value shows :data:`MISSING_CELL`, never "None". Every table of the dashboard is drawn here."""
    kwargs.setdefault("placeholder", MISSING_CELL)
    shown: DeltaGenerator | DataframeState = st.dataframe(inert_frame(df), **kwargs)
    return shown


#: the unit the dashboard states upload limits in: MiB (2**20 bytes), with the exact byte count
MIB = 2**20


def limit_text(limit: int) -> str:
    """``200 MiB = 209,715,200 bytes``: a size limit in the one unit the dashboard uses."""
    mib = limit / MIB
    if limit < MIB:
        return f"{limit:,} bytes"
    return f"{mib:,.0f} MiB = {limit:,} bytes" if mib == int(mib) else f"{mib:,.2f} MiB = {limit:,} bytes"


#: counts from this many on are shown short in a metric (a narrow column cuts a long figure off)
SHORT_COUNT_FROM = 100_000


def count_text(n: int) -> str:
    """A count for a metric: ``4,636`` below :data:`SHORT_COUNT_FROM`, else three figures and a unit (``155k``,
    ``1.00M``); the exact count belongs in the metric's help (:func:`count_help`)."""
    n = int(n)
    if abs(n) < SHORT_COUNT_FROM:
        return f"{n:,}"
    for size, unit in ((10**3, "k"), (10**6, "M"), (10**9, "G")):
        v = float(f"{n / size:.3g}")  # three significant figures; 999,999 rounds up to the next unit
        if abs(v) < 1000:
            return f"{v:#.3g}".rstrip(".") + unit
    return f"{n:,}"


def count_help(n: int, help_text: str | None = None) -> str | None:
    """``help_text``, with the exact count first when :func:`count_text` shortened it."""
    if abs(int(n)) < SHORT_COUNT_FROM:
        return help_text
    return f"{int(n):,}" + (f" · {help_text}" if help_text else "")


#: what GitHub-flavoured Markdown turns into a link by itself, escapes or not (its "autolink literals":
#: URLs, www. names, e-mail addresses): shown as code spans instead, which are never linked. An address
#: is tried only where a run of its characters starts (the lookbehind), so a long word is scanned once
AUTOLINK = re.compile(r"(?i)(?:\b(?:https?|ftp|mailto|xmpp):|\bwww\.)\S*|(?<![\w.+-])[\w.+-]+@[\w-]+\.\w[\w.-]*")
#: an address that starts right where the previous link ended, inside a run of its characters
#: (``1@1.1+@1.1``: GFM links ``+@1.1`` too; the lookbehind above would not try there)
_ADDRESS = re.compile(r"(?i)[\w.+-]+@[\w-]+\.\w[\w.-]*")


def autolink_spans(line: str) -> Iterator[tuple[int, int]]:
    """The spans Markdown would link by itself in ``line``, left to right; each character is scanned a
    bounded number of times (a long word once)."""
    pos = 0
    while (m := AUTOLINK.search(line, pos)) is not None:
        yield m.span()
        end = m.end()
        while (n := _ADDRESS.match(line, end)) is not None:
            yield n.span()
            end = n.end()
        pos = end


def md_escape(text: object) -> str:
    """Text safe to embed in ``st.markdown``: punctuation escaped, newlines kept as hard breaks, and
    anything Markdown would link by itself (a URL, ``www.``, an e-mail address) as a code span."""
    s = visible(text)
    s = s.replace("\r\n", "\n").replace("\r", "\n")
    return "  \n".join(_escape_line(line) for line in s.split("\n"))


def _escape_line(line: str) -> str:
    spans: list[list[int]] = []
    for start, end in autolink_spans(line):
        if spans and spans[-1][1] == start:  # links that touch: one code span (two would run their fences together)
            spans[-1][1] = end
        else:
            spans.append([start, end])
    out, pos = [], 0
    for start, end in spans:
        out.append(_MD_SPECIAL.sub(r"\\\1", line[pos:start]))
        out.append(md_code(line[start:end]))
        pos = end
    out.append(_MD_SPECIAL.sub(r"\\\1", line[pos:]))
    return "".join(out)


def md_code(text: object) -> str:
    """Text as an inline code span: shown literally (no escapes inside a code span), the fence one
    backtick longer than any run of backticks in the text, newlines folded to spaces."""
    t = visible(text).replace("\r", " ").replace("\n", " ")
    longest = max((len(m) for m in re.findall(r"`+", t)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if t.startswith("`") or t.endswith("`") else ""
    return f"{fence}{pad}{t}{pad}{fence}"


def html_text(text: object) -> str:
    """Text safe to embed in HTML given to ``st.markdown(unsafe_allow_html=True)`` / ``st.html``.

    ``html.escape`` (quotes too), newlines as ``<br>`` so the HTML block never ends early (a blank
    line would hand the rest to the Markdown parser), and Markdown/LaTeX markers as entities.
    """
    s = html.escape(visible(text), quote=True)
    s = s.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>")
    for ch, ent in (
        ("$", "&#36;"),
        ("*", "&#42;"),
        ("_", "&#95;"),
        ("[", "&#91;"),
        ("]", "&#93;"),
        ("`", "&#96;"),
        ("~", "&#126;"),
        (":", "&#58;"),
        ("\\", "&#92;"),
    ):
        s = s.replace(ch, ent)
    return s


def esc(text: object, limit: int | None = None) -> str:
    """Text for plotly labels and hover text: HTML-escaped, optionally shortened to ``limit`` characters."""
    s = visible(text)
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "…"
    return html.escape(s, quote=True)


def badge(text: str, tone: str = "gray") -> str:
    """A small coloured label (HTML; ``text`` is escaped, ``tone`` one of :data:`crp_ui.theme.TONES`)."""
    return f'<span class="crp-badge crp-badge-{html.escape(tone, quote=True)}">{html_text(text)}</span>'


def badge_md(text: str, tone: str = "gray") -> str:
    """The same label as Streamlit Markdown (``:green-badge[...]``); ``text`` is Markdown-escaped."""
    return f":{tone}-badge[{md_escape(text)}]"


def _meta_items(extra: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``extra`` as (key, shown value): a missing value (None, NaN) as a dash, floats to four places."""
    out = []
    for k, v in extra.items():
        if v is None or (isinstance(v, float) and v != v):  # no value (a connector has no tier): a dash, not "nan"
            v = "—"
        elif isinstance(v, float):
            v = f"{v:.4f}"
        out.append((str(k), str(v)))
    return out


def fact_card_html(
    fact: Fact, *, extra: Mapping[str, Any] | None = None, badges: Sequence[tuple[str, str]] = ()
) -> str:
    """HTML of a fact card (for a larger HTML block): id, source type, status, optional more (text, tone)
    badges, optional key/values, and the escaped content; its look is the stylesheet's ``div.crp-fact``."""
    head = (
        f"<code>{html_text(fact.fact_id)}</code> "
        + badge(fact.source_type, SOURCE_TONE)
        + badge(fact.status, STATUS_TONES.get(fact.status, "gray"))
        + "".join(badge(text, tone) for text, tone in badges)
    )
    bits = [f"<b>{html_text(k)}</b>&nbsp;{html_text(v)}" for k, v in _meta_items(extra or {})]
    meta = f'<div class="crp-fact-meta">{" · ".join(bits)}</div>' if bits else ""
    return f'<div class="crp-fact">{head}{meta}<div class="crp-fact-body">{html_text(fact.content)}</div></div>'


def fact_head_md(fact: Fact, *more: tuple[str, str], status: str | None = None) -> str:
    """A fact's heading as Markdown: its id as code, its source type and status (``status``: the one in force,
    by default the fact's own) as badges, then ``more`` (text, tone) badges."""
    shown = status or fact.status
    badges = [(fact.source_type, SOURCE_TONE), (shown, STATUS_TONES.get(shown, "gray")), *more]
    return md_code(fact.fact_id) + " " + " ".join(badge_md(t, tone) for t, tone in badges if t)


def fact_card(fact: Fact, *, extra: Mapping[str, Any] | None = None, key: str | None = None) -> DeltaGenerator:
    """One fact in a bordered container: heading, optional key/values, the content (all escaped). ``key``
    names the container (the browser sees it as the class ``st-key-<key>``); it is returned, for a
    caller to add to the card."""
    card = st.container(border=True, key=key)
    with card:
        st.markdown(fact_head_md(fact))
        items = _meta_items(extra or {})
        if items:
            st.caption(" · ".join(f"**{md_escape(k)}** {md_escape(v)}" for k, v in items))
        st.markdown(md_escape(fact.content))
    return card


def headers_block(headers: Mapping[str, str]) -> None:
    """The CRP-Context-* headers as a copyable code block (``Name: value`` per line)."""
    st.code(plain(headers_text(headers)), language=None)


def code(text: object, **kwargs: Any) -> None:
    """``st.code`` of :func:`plain` text (a code block shows text literally, but applies bidi controls)."""
    st.code(plain(text), language=None, **kwargs)


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


def remembered_expander(label: str, key: str) -> Any:  # Streamlit's expander type (with ``.open``) is not public
    """``st.expander`` closed at first whose open state is kept for the session under ``key + ".keep"``
    (Streamlit drops an expander's own state on a page that does not draw it). The caller builds the
    contents only while it is open (``.open``), so a closed one costs the browser nothing on a visit;
    tests open it by setting ``st.session_state[key + ".keep"] = True``."""
    keep = key + ".keep"

    def remember() -> None:
        st.session_state[keep] = bool(st.session_state.get(key))

    return st.expander(label, expanded=bool(st.session_state.get(keep, False)), key=key, on_change=remember)

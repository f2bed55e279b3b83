"""Paged tables: the dashboard's one home for showing a long table a page at a time.

The rows are filtered and sorted on the server over the whole table; the browser receives one page
(:func:`crp_ui.tables.page_of`), never the table whole. The widgets: a "rows per page" picker, a page
number whose widget key carries the view's digest and the page size (a new filter, sort or size opens
page 1), and the "rows X-Y of Z" line. A page may also be opened from code (:func:`page_picker`'s
``goto``: the page that holds a row selected elsewhere).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from .tables import n_pages, page_of


def size_picker(where: DeltaGenerator, key: str, sizes: Sequence[int], default: int) -> int:
    """The "rows per page" picker (one of ``sizes``, ``default`` at first)."""
    return int(where.selectbox("rows per page", list(sizes), index=list(sizes).index(default), key=key))


def page_key(prefix: str, digest: str, size: int) -> str:
    """The page number's widget key: a new view (``digest``) or page size starts on page 1."""
    return f"{prefix}page.{digest}.{size}"


def page_picker(
    where: DeltaGenerator,
    key: str,
    n_rows: int,
    size: int,
    *,
    goto: int | None = None,
    on_change: Callable[[], None] | None = None,
) -> int:
    """The 1-based page number, "page (of N)", kept within 1..N (a table that shrank keeps its last page);
    ``goto`` opens that page (clamped) instead of the one the widget holds."""
    pages = n_pages(n_rows, size)
    held = st.session_state.get(key, 1)
    want = goto if goto is not None else held if isinstance(held, int) else 1
    want = min(max(1, int(want)), pages)
    if held != want:
        st.session_state[key] = want  # before the widget is drawn: the widget shows this page
    return int(
        where.number_input(f"page (of {pages})", min_value=1, max_value=pages, step=1, key=key, on_change=on_change)
    )


def page_rows(n_rows: int, page: int, size: int) -> tuple[int, int]:
    """The 1-based first and last row numbers of ``page`` ((0, 0) for an empty table)."""
    if n_rows <= 0:
        return 0, 0
    page = min(max(1, page), n_pages(n_rows, size))
    return (page - 1) * size + 1, min(page * size, n_rows)


def rows_text(n_rows: int, page: int, size: int) -> str:
    """ "rows 51-100 of 145,000" (the page shown of the whole filtered table); "no rows" for an empty one."""
    if n_rows <= 0:
        return "no rows"
    first, last = page_rows(n_rows, page, size)
    return f"rows {first:,}-{last:,} of {n_rows:,}"


__all__ = ["n_pages", "page_key", "page_of", "page_picker", "page_rows", "rows_text", "size_picker"]

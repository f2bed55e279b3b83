"""The labels table's reason column (crp_ui.labels_view): rows tall enough to wrap the longest reason, every row in
view; one-line reasons keep Streamlit's default rows."""

from __future__ import annotations

from crp_ui.labels_view import (
    HEADER_PX,
    REASON_LINE_CHARS,
    REASON_LINES,
    SHOWN_ROWS,
    WRAP_MIN_ROW_PX,
    reason_row_height,
    table_height,
)


def test_one_line_reasons_keep_the_default_rows():
    assert reason_row_height([]) is None
    assert reason_row_height(["must_exclude · packed at position 3", "x" * REASON_LINE_CHARS]) is None


def test_a_long_reason_gets_rows_that_wrap_it():
    two = reason_row_height(["short", "x" * (REASON_LINE_CHARS + 1)])
    four = reason_row_height(["x" * (3 * REASON_LINE_CHARS + 1)])
    assert two is not None and four is not None
    assert 64 < WRAP_MIN_ROW_PX <= two < four  # Streamlit wraps a cell only in a row taller than 4rem
    most = reason_row_height(["x" * (REASON_LINES * REASON_LINE_CHARS)])
    assert reason_row_height(["x" * (10 * REASON_LINE_CHARS)]) == most  # a longer one: double-click its cell


def test_the_table_shows_its_rows_without_scrolling_up_to_a_dozen():
    assert table_height(6, None) == "auto"
    assert table_height(6, 68) == HEADER_PX + 6 * 68
    assert table_height(50, 68) == HEADER_PX + SHOWN_ROWS * 68

"""The triage queue's order (crp_ui.queue_view.sort_queue) and the paging arithmetic every paged table
uses (crp_ui.paging): the pages of a view partition its rows in order, "rows X-Y of Z" names them."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as hs

from crp_ui import conflicts_view as cv
from crp_ui import paging


def _frame() -> pd.DataFrame:
    # in triage order: the tie t first, then by margin; d1 / d2 decided (d2 later), u undecided
    return pd.DataFrame(
        {
            "pair": ["t", "d1", "u", "d2", "n"],
            "similarity": [0.90, 0.97, 0.97, 0.88, float("nan")],
            "margin": [0.0, 0.2, 0.1, 0.4, 0.3],
            "decided_at": ["", "2026-11-02T10:00:00Z", "", "2026-11-03T09:00:00Z", ""],
        }
    )


@pytest.mark.parametrize(
    ("order", "want"),
    [
        ("triage", ["t", "d1", "u", "d2", "n"]),
        ("similarity", ["d1", "u", "t", "d2", "n"]),  # equal values keep the triage order; NaN last
        ("margin", ["t", "u", "d1", "n", "d2"]),
        ("decided", ["d2", "d1", "t", "u", "n"]),  # latest first, the undecided after in triage order
    ],
)
def test_sort_queue_orders_every_row_stably(order, want):
    assert cv.sort_queue(_frame(), order)["pair"].tolist() == want


def test_sort_queue_refuses_an_unknown_order():
    with pytest.raises(ValueError, match="order must be one of"):
        cv.sort_queue(_frame(), "authority")


def test_rows_text_names_the_page_of_the_whole_view():
    assert paging.rows_text(145_000, 3, 50) == "rows 101-150 of 145,000"
    assert paging.rows_text(25, 3, 10) == "rows 21-25 of 25"
    assert paging.rows_text(25, 9, 10) == "rows 21-25 of 25"  # a page past the end: the last page
    assert paging.rows_text(0, 1, 50) == "no rows"  # an empty view: not "rows 0-0 of 0"


@given(hs.integers(0, 500), hs.sampled_from((10, 25, 50, 100, 200)))
def test_the_pages_partition_the_rows_in_order(n, size):
    frame = pd.DataFrame({"pair": [f"p{i}" for i in range(n)]})
    pages = paging.n_pages(n, size)
    got = []
    for page in range(1, pages + 1):
        part = paging.page_of(frame, page, size)["pair"].tolist()
        first, last = paging.page_rows(n, page, size)
        if n:
            assert 0 < len(part) <= size and len(part) == last - first + 1
            assert part[0] == f"p{first - 1}" and part[-1] == f"p{last - 1}"
        else:
            assert part == [] and (first, last) == (0, 0)
        got += part
    assert got == frame["pair"].tolist()


def test_next_pair_walks_the_whole_queue_across_pages():
    keys = [f"p{i}" for i in range(25)]
    assert cv.next_pair(keys, "p9") == "p10"  # the last pair of page 1 (10 rows) -> the first of page 2
    assert cv.next_pair(keys, "p24") is None


def test_the_queue_csv_keeps_every_row_and_neutralises_formulas():
    from crp_ui.tables import safe_csv

    frame = pd.DataFrame({"pair": ["a|b", "c|d"], "text_a": ["=cmd|' /C calc'!A0", "plain"], "margin": [-0.25, 0.5]})
    rows = list(csv.reader(io.StringIO(safe_csv(frame))))
    assert rows == [["pair", "text_a", "margin"], ["a|b", "'=cmd|' /C calc'!A0", "-0.25"], ["c|d", "plain", "0.5"]]

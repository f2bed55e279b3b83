"""The run pages in a real browser (streamlit run app.py + headless Chromium, 1400x900): every page
loads without an exception, the headers block and the breakdown table are visible, selecting a fact
writes ?fact= into the URL and that link reproduces the same selected fact in a new session."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest

from tests.support.browser import assert_no_exception, main_text, open_page, screenshot, session_page, wait_idle

PAGES = {"overview": "Overview", "breakdown": "Score breakdown", "graph": "Graph (CDGR)", "envelope": "Envelope"}


def _selected_fact(page) -> str:
    """The ``fact`` URL parameter, once the page wrote it."""
    page.wait_for_url(re.compile(r".*[?&]fact=.*"), timeout=20_000)
    return parse_qs(urlparse(page.url).query)["fact"][0]


@pytest.mark.parametrize("path", list(PAGES))
def test_page_loads_without_exception(page, path):
    open_page(page, f"/{path}")
    page.get_by_role("heading", name=PAGES[path], exact=True, level=1).wait_for(state="visible")
    assert_no_exception(page)
    screenshot(page, f"page_{path}")


def test_overview_headers_block_is_visible(page):
    open_page(page, "/overview")
    code = page.get_by_test_id("stMain").get_by_test_id("stCode").first
    code.wait_for(state="visible")
    text = code.inner_text()
    for name in ("CRP-Context-Coverage-Score", "CRP-Context-Facts-Used", "CRP-Context-Tokens-Used"):
        assert name in text
    assert "Stage funnel" in main_text(page)


def test_breakdown_table_visible_and_row_selection_selects(page):
    """Select a row of the breakdown table the way a keyboard user does (the grid is drawn on a
    canvas: its rows are no DOM elements): focus the grid, move down to the third row, Shift+Space."""
    open_page(page, "/breakdown")
    grid = page.get_by_test_id("stMain").get_by_test_id("stDataFrame").first
    grid.wait_for(state="visible")
    canvas = grid.get_by_test_id("data-grid-canvas")
    canvas.focus()
    for _ in range(3):  # the first key press puts the cell cursor on the first row
        page.keyboard.press("ArrowDown")
    page.keyboard.press("Shift+Space")
    wait_idle(page)
    assert_no_exception(page)
    fid = _selected_fact(page)
    card = page.locator(".st-key-crp-fact-card").first
    card.wait_for(state="visible")
    assert fid in card.inner_text()
    assert page.get_by_role("combobox", name="Inspect fact").input_value() == fid
    screenshot(page, "page_breakdown_selected")


def test_deep_link_reproduces_the_selected_fact(page, browser, streamlit_server):
    open_page(page, "/breakdown")
    picker = page.get_by_role("combobox", name="Inspect fact")
    picker.wait_for(state="visible")
    current = picker.input_value()
    listbox = page.get_by_role("listbox")
    for _ in range(4):  # a rerun may redraw the box between the click and the list opening
        wait_idle(page)
        picker.click()
        try:
            listbox.wait_for(state="visible", timeout=15_000)
            break
        except Exception:  # noqa: BLE001 - playwright TimeoutError: open it again
            page.keyboard.press("Escape")
    listbox.wait_for(state="visible", timeout=15_000)
    chosen = next(t.strip() for t in listbox.get_by_role("option").all_inner_texts() if t.strip() != current)
    listbox.get_by_role("option", name=chosen, exact=True).click()
    wait_idle(page)
    assert_no_exception(page)
    assert _selected_fact(page) == chosen
    link = "/breakdown?" + urlparse(page.url).query
    first_card = page.locator(".st-key-crp-fact-card").first.inner_text()

    with session_page(browser, streamlit_server) as other:
        open_page(other, link)
        card = other.locator(".st-key-crp-fact-card").first
        card.wait_for(state="visible")
        assert card.inner_text() == first_card  # same fact, same text, source and dates
        assert chosen in card.inner_text()
        assert other.get_by_role("combobox", name="Inspect fact").input_value() == chosen

"""The app shell in a real browser: deep links as a fresh server's very first request, the shared
sidebar on every page, the CKF summary, the config and scenario editors."""

from __future__ import annotations

import re

import pytest

from tests.support.browser import (
    assert_no_exception,
    main_text,
    open_page,
    screenshot,
    session_page,
    sidebar_text,
    wait_idle,
)

#: first requests to a fresh server: URL -> (the page's heading, a text of the page's content)
FIRST_REQUESTS = {
    "/home": ("crp-inspect", "Knowledge base:"),
    "/graph?cfg.max_hops=3": ("Graph (CDGR)", "bridge score"),
    "/overview?cfg.token_budget=1000": ("Overview", "CRP headers"),
}


@pytest.mark.parametrize("url", list(FIRST_REQUESTS))
def test_first_request_deep_link_gets_the_shell(browser, fresh_server, url):
    """A fresh server whose first request is a deep link runs the page inside the shell (navigation of
    crp-inspect's pages, shared sidebar, the link's parameters), never Streamlit's legacy pages/-folder
    listing (which would show the entry script "app" as a page) nor "Page not found"."""
    path = url.split("?")[0]
    with session_page(browser, fresh_server) as page:
        open_page(page, url)
        heading, content = FIRST_REQUESTS[url]
        page.get_by_role("heading", name=heading, exact=True, level=1).wait_for()
        assert content in main_text(page)
        nav = page.get_by_test_id("stSidebarNav")
        for title in ("Overview", "Graph", "Knowledge base"):
            assert nav.get_by_role("link", name=title).count() == 1, title
        assert "app" not in nav.inner_text().split()
        assert "Knowledge base (CKF)" in sidebar_text(page) and "Operator name" in sidebar_text(page)
        assert page.get_by_text("Page not found").count() == 0
        param = url.split("?")[1] if "?" in url else ""
        page.wait_for_url(re.compile(rf".*{re.escape(path)}(\?|$).*"))
        if param:
            assert param in page.url
        screenshot(page, "first_request_" + path.strip("/"), full_page=False)


def test_home_shows_ckf_summary(page):
    open_page(page, "/home")
    screenshot(page, "shell_home")
    main = main_text(page)
    assert "Knowledge base:" in main
    assert "Facts by source type and status" in main
    assert "Embedding state: ready" in main
    assert "Knowledge base (CKF)" in sidebar_text(page)
    assert "Operator name" in sidebar_text(page)


def test_story_opens_at_root_and_under_its_own_path(page):
    """``/`` and ``/story`` both show the Story page with the link's parameters, no "Page not found"."""
    for url in ("/", "/story?cfg.token_budget=900"):
        open_page(page, url)
        page.get_by_role("heading", name="What SPEC-027 changes", exact=True, level=1).wait_for()
        assert page.get_by_text("Page not found").count() == 0
        assert "Knowledge base (CKF)" in sidebar_text(page)
    page.wait_for_url(re.compile(r".*/story\?.*cfg\.token_budget=900.*"))
    assert "1 config value(s) changed" in main_text(page)


def test_deep_link_restores_config_and_writes_url(page):
    open_page(page, "/home?cfg.token_budget=1000")
    assert "token_budget=1000" in page.url or "cfg.token_budget=1000" in page.url
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Configuration", exact=True).click()
    wait_idle(page)
    # the stage groups are expanders drawn only while open: stage 1 is open, stage 6 (packing) is not
    assert page.get_by_role("spinbutton", name="cdr_min_relevance").count() == 1
    assert page.get_by_role("spinbutton", name="token_budget *").count() == 0
    sidebar.get_by_text("Stage 6 · packing (SPEC-003 §7)", exact=True).click()
    wait_idle(page)
    box = page.get_by_role("spinbutton", name="token_budget *")
    assert box.input_value() == "1000"
    box.fill("1500")
    box.press("Enter")
    wait_idle(page)
    assert_no_exception(page)
    page.wait_for_url(re.compile(r".*cfg\.token_budget=1500.*"), timeout=10_000)
    screenshot(page, "shell_config", full_page=False)
    # Configuration closed and opened again: stage 6 is still open, with the edit
    sidebar.get_by_text("Configuration", exact=True).click()
    wait_idle(page)
    assert page.get_by_role("spinbutton", name="token_budget *").count() == 0
    sidebar.get_by_text("Configuration", exact=True).click()
    wait_idle(page)
    assert page.get_by_role("spinbutton", name="token_budget *").input_value() == "1500"


def test_scenario_editor_opens_and_edits_query(page):
    open_page(page, "/home")
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Scenario", exact=True).click()
    query = page.get_by_label("Query")
    query.wait_for()
    assert sidebar.get_by_test_id("stDataFrame").count() >= 2
    screenshot(page, "shell_scenario")
    query.fill("Which ports does etcd use?")
    query.press("Control+Enter")
    wait_idle(page)
    assert_no_exception(page)
    assert "Which ports does etcd use?" in main_text(page)

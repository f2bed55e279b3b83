"""The app shell in a real browser: it starts, shows the CKF summary, the sidebar and no exception."""
from __future__ import annotations

import re


def test_first_request_deep_link_still_gets_the_shell(browser, fresh_server, open_page, screenshot):
    """A fresh server whose first request is /home must run app.py (sidebar + navigation), not
    Streamlit's legacy pages/-folder mode (which would list app.py itself as a page)."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 900}, base_url=fresh_server)
    try:
        page = ctx.new_page()
        page.set_default_timeout(240_000)
        open_page(page, "/home")
        sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
        assert "Knowledge base (CKF)" in sidebar
        nav = page.locator('[data-testid="stSidebarNav"]').inner_text()
        assert "Knowledge base" in nav and "app" not in nav.split()
        assert "Knowledge base:" in page.locator('[data-testid="stMain"]').inner_text()
    finally:
        ctx.close()


def test_home_shows_ckf_summary(page, open_page, screenshot):
    open_page(page, "/home")
    screenshot(page, "shell_home")
    main = page.locator('[data-testid="stMain"]')
    assert "Knowledge base:" in main.inner_text()
    assert "Facts by source type and status" in main.inner_text()
    assert "Embedding state: ready" in main.inner_text()
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert "Knowledge base (CKF)" in sidebar.inner_text()
    assert "Operator name" in sidebar.inner_text()


def test_deep_link_restores_config_and_writes_url(page, open_page, wait_idle, assert_no_exception, screenshot):
    open_page(page, "/home?cfg.token_budget=1000")
    assert "token_budget=1000" in page.url or "cfg.token_budget=1000" in page.url
    page.locator('[data-testid="stSidebar"]').get_by_text("Configuration", exact=True).click()
    wait_idle(page)
    box = page.get_by_role("spinbutton", name="token_budget *")
    assert box.input_value() == "1000"
    box.fill("1500")
    box.press("Enter")
    wait_idle(page)
    assert_no_exception(page)
    page.wait_for_url(re.compile(r".*cfg\.token_budget=1500.*"), timeout=10_000)
    screenshot(page, "shell_config", full_page=False)


def test_scenario_editor_opens_and_edits_query(page, open_page, wait_idle, assert_no_exception, screenshot):
    open_page(page, "/home")
    page.locator('[data-testid="stSidebar"]').get_by_text("Scenario", exact=True).click()
    query = page.get_by_label("Query")
    query.wait_for()
    assert page.locator('[data-testid="stSidebar"] [data-testid="stDataFrame"]').count() >= 2
    screenshot(page, "shell_scenario")
    query.fill("Which ports does etcd use?")
    query.press("Control+Enter")
    wait_idle(page)
    assert_no_exception(page)
    assert "Which ports does etcd use?" in page.locator('[data-testid="stMain"]').inner_text()

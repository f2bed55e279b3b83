"""Operator triage in a real browser on the bundled sample: a ``?pair=`` link opens the Conflicts page
on k8s-0026 / k8s-0027, whose pair card shows the one deciding field that differs (their source); an
override recorded through the form (only the winner field shown) is counted on the very first run
after it; the decisions banner on the Overview, the Graph's contradiction edges and marks, the
Knowledge base counts after decisions; a hostile ``?pair=`` value is ignored with a warning.
Screenshots at 1400x900 in ``$CRP_E2E_SCREENSHOTS``."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest

from tests.support.browser import assert_no_exception, main_text, open_page, screenshot, session_page, wait_idle
from tests.support.e2e_conflicts import metric, set_operator, until, use_database

PAIR = "k8s-0026|k8s-0027"


def _needs_bundled_sample(text: str) -> None:
    if "k8s-0026" not in text:
        pytest.skip("the server does not serve the bundled sample_ckf/ (k8s-0026 / k8s-0027)")


def _go(page, title: str) -> None:
    """Open a page through the sidebar navigation (the same session keeps its database and decisions)."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=title).click()
    wait_idle(page)
    assert_no_exception(page)


def test_pair_link_card_decision_banner_graph_and_kb(page, tmp_path):
    open_page(page, f"/conflicts?scenario=etcd_upgrade.json&pair={quote(PAIR)}")
    use_database(page, str(tmp_path / "triage-e2e.sqlite"))
    main = page.get_by_test_id("stMain")
    text = main.inner_text()
    _needs_bundled_sample(text)
    assert "k8s-0026 ↔ k8s-0027" in text
    assert "pair=" + PAIR in page.url.replace("%7C", "|")
    # the pair card: every deciding field, the only differing one (the source) highlighted
    table = page.get_by_test_id("stTable").filter(has_text="status in force").first
    for field in (
        "source_id",
        "source_location",
        "modified_at",
        "ingested_at",
        "TTL",
        "status in force",
        "source authority",
        "recency factor",
        "importance",
        "authority",
    ):
        assert table.get_by_text(field, exact=True).count() >= 1, field
    differs = table.locator("tr").filter(has_text="≠")
    assert differs.count() == 1 and "source_id" in differs.inner_text()
    assert "wiki/platform/atlas-prod/backups-old" in differs.inner_text()
    assert "P1Y = 365.0 d (the fact's own ttl)" in table.inner_text()
    table.scroll_into_view_if_needed()
    screenshot(page, "triage_pair_card", full_page=False)

    # the form: a status mark asks for the status (none preselected); an override shows only the winner
    set_operator(page, "e2e-triage")
    page.get_by_text("Mark a fact's status", exact=True).click()
    wait_idle(page)
    form = page.get_by_test_id("stForm")
    assert "New status" in form.inner_text()
    placeholder = form.get_by_text("choose a status").count() + form.locator('[placeholder="choose a status"]').count()
    assert placeholder >= 1, "the status is not preselected: its box shows the placeholder"
    page.get_by_text("Override the winner", exact=True).click()
    wait_idle(page)
    form_text = form.inner_text()
    assert "Winner" in form_text and "New status" not in form_text and "Fact" not in form_text.split()
    form.get_by_test_id("stSelectbox").click()
    page.get_by_role("option", name=re.compile(r"^A · k8s-0026$")).click()
    screenshot(page, "triage_form_override", full_page=False)
    page.get_by_role("button", name="Record decision").click()
    page.get_by_text(re.compile(r"^Recorded decision #1 on k8s-0026 ↔ k8s-0027: override: k8s-0026 wins")).wait_for()
    # the run that shows the confirmation already counts the decision
    assert metric(page, "decisions in the log") == "1"
    wait_idle(page)
    assert_no_exception(page)
    assert metric(page, "decisions in the log") == "1"
    assert "override: k8s-0026 wins" in main.inner_text()
    screenshot(page, "triage_recorded")

    # another page of the same session says the decision applies
    _go(page, "Overview")
    banner = "1 operator decision applied; 1 fact suppressed or re-marked"
    until(page, lambda: banner in main_text(page), "the decisions banner on the Overview")
    assert "k8s-0027 loses to k8s-0026 where a run pairs them" in main_text(page)
    screenshot(page, "triage_overview_banner", full_page=False)

    _go(page, "Graph")
    assert banner in main_text(page)
    assert "contradiction pair(s) drawn" in main_text(page)
    screenshot(page, "triage_graph")

    _go(page, "Knowledge base")
    assert "Statuses in force: the CKF's, then the operators' marks" in main_text(page)
    screenshot(page, "triage_kb")


def test_a_hostile_pair_link_is_ignored_with_a_warning(browser, streamlit_server):
    with session_page(browser, streamlit_server) as pg:
        open_page(pg, "/conflicts?pair=" + quote("<img src=x onerror=alert(1)>|a|b"))
        assert_no_exception(pg)
        side = pg.get_by_test_id("stSidebar").inner_text()
        assert "not two fact ids separated by '|'; ignored" in side
        assert pg.locator("img[src=x]").count() == 0
        assert "Conflict triage" in main_text(pg)

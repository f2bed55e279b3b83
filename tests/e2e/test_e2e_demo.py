"""The stakeholder demo and the reading aids in a real browser (1400x900): the Tuning page's Before /
after tab reached and kept through ``?tab=``, its headline, removed facts with their text and the token
sentence; the HTML report downloaded and opened offline (small, no script, its SVG charts drawn, nothing
fetched); the Glossary page and its search; a first visit straight to the Envelope page painting as soon
as its run ends."""

from __future__ import annotations

import re
import time
from urllib.parse import parse_qs, urlparse

from tests.support.browser import (
    IDLE,
    SCREENSHOTS,
    SKELETONS,
    assert_no_exception,
    main_text,
    open_page,
    screenshot,
    session_page,
    wait_idle,
)

SCENARIO = "etcd_upgrade.json"


def _scenario(e2e_sample_dir) -> str:
    return f"scenario={SCENARIO}" if (e2e_sample_dir / "scenarios" / SCENARIO).is_file() else ""


def _tab(page) -> str | None:
    got = parse_qs(urlparse(page.url).query).get("tab")
    return got[0] if got else None


def test_before_after_tab_in_the_url_and_the_report_offline(page, browser, e2e_sample_dir, tmp_path):
    scen = _scenario(e2e_sample_dir)
    open_page(page, "/tuning?" + "&".join(p for p in (scen, "tab=Before+%2F+after") if p))
    main = page.get_by_test_id("stMain")
    selected = main.get_by_role("tab", selected=True)
    assert selected.inner_text().strip() == "Before / after"
    text = main_text(page)
    assert "In one sentence per fix" in text and "Fan-out race → duplicates" in text
    assert "What SPEC-027 removed, and why" in text and "Why the token count changed" in text
    assert re.search(r"SPEC-027 uses \d+ (more|fewer) tokens? \(\d+ → \d+\)", text)
    screenshot(page, "demo_before_after")

    # a click on another tab writes it into the URL; a reload keeps it
    main.get_by_role("tab", name="Compare").click()
    wait_idle(page)
    assert _tab(page) == "Compare"
    page.reload()
    wait_idle(page)
    assert main.get_by_role("tab", selected=True).inner_text().strip() == "Compare"
    main.get_by_role("tab", name="Before / after").click()
    wait_idle(page)
    assert _tab(page) == "Before / after"

    with page.expect_download(timeout=120_000) as dl:
        main.get_by_role("button", name="Download the HTML report").click()
    path = tmp_path / "report.html"
    dl.value.save_as(str(path))
    size = path.stat().st_size
    assert size < 1_000_000, size
    ctx = browser.new_context(viewport={"width": 1400, "height": 900}, offline=True)
    try:
        rp = ctx.new_page()
        requests: list[str] = []
        rp.on("request", lambda r: requests.append(r.url))
        rp.goto(path.as_uri())
        rp.wait_for_selector("svg rect.bar", timeout=30_000)
        assert rp.locator("svg").count() == 2
        assert rp.locator(".fix").count() == 3  # a headline per SPEC-027 fix
        assert rp.get_by_role("heading", name="What SPEC-027 removed from the context, and why").count() == 1
        assert rp.get_by_role("heading", name="Why the token count changed").count() == 1
        assert all(u.startswith(("file:", "data:", "about:")) for u in requests), requests
        rp.screenshot(path=str(SCREENSHOTS / "demo_report_full.png"), full_page=True)
        rp.screenshot(path=str(SCREENSHOTS / "demo_report.png"))
    finally:
        ctx.close()


def test_glossary_page_and_search(page):
    open_page(page, "/glossary")
    page.get_by_role("heading", name="Glossary", level=1).wait_for()
    text = main_text(page)
    for term in ("residual pull", "ResidualSet", "novelty", "bridge value", "Jaccard / overlap", "expired vs ageing"):
        assert term in text, term
    screenshot(page, "demo_glossary", full_page=False)
    box = page.get_by_test_id("stMain").get_by_label("Search the terms")
    box.fill("zzq-nothing")
    box.press("Enter")
    wait_idle(page)
    assert "No term matches" in main_text(page)
    box.fill("TTL")
    box.press("Enter")
    wait_idle(page)
    assert "terms match" in main_text(page) and "stale floor" in main_text(page)
    assert_no_exception(page)


def test_a_first_visit_to_the_envelope_paints_when_its_run_ends(browser, streamlit_server, e2e_sample_dir):
    """A fresh browser context (nothing of the frontend cached) straight on /envelope: once the script has
    stopped running, the page's elements are drawn within moments, not left as skeletons for seconds."""
    scen = _scenario(e2e_sample_dir)
    with session_page(browser, streamlit_server) as pg:
        pg.goto("/envelope" + (f"?{scen}" if scen else ""))
        pg.get_by_role("heading", name="Envelope", level=1).wait_for()
        pg.wait_for_selector(IDLE, state="attached")
        t0 = time.monotonic()
        pg.wait_for_function(
            f"() => document.querySelectorAll({SKELETONS!r}).length === 0 && "
            "document.querySelectorAll('[data-testid=\"stMetric\"]').length >= 5"
        )
        waited = time.monotonic() - t0
        assert waited < 3.0, f"the page stayed unpainted {waited:.1f} s after the run ended"
        assert pg.locator(".st-key-crp-token-bar").count() == 1  # the token-use bars' container
        assert pg.locator('[data-testid="stPlotlyChart"]').count() == 0
        screenshot(pg, "demo_envelope_first_visit", full_page=False)

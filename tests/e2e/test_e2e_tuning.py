"""The Tuning page in a real browser (1400x900): run a sweep, click a point of the plot, look at Compare,
download the before / after HTML report and open it offline (file://) with its plots rendered."""
from __future__ import annotations

import re
from pathlib import Path

SHOTS = Path(__file__).resolve().parents[2] / "screenshots"
SCENARIO = "ai_act_compliance.json"


def _main(page):
    return page.locator('[data-testid="stMain"]')


def _query(e2e_sample_dir) -> str:
    """The sample scenario when bundled, and a sidebar change (via the URL) for Compare to show."""
    scen = f"scenario={SCENARIO}&" if (e2e_sample_dir / "scenarios" / SCENARIO).is_file() else ""
    return f"?{scen}cfg.ttl_days.official_documentation=120"


def _pick_value(page) -> str:
    """The 'Envelope diff of' select box's current value."""
    return _main(page).get_by_role("combobox", name="Envelope diff of").input_value()


def test_sweep_compare_and_html_report(page, browser, open_page, wait_idle, assert_no_exception, screenshot,
                                       e2e_sample_dir, tmp_path):
    open_page(page, "/tuning" + _query(e2e_sample_dir))
    main = _main(page)
    assert "Tuning" in main.inner_text()
    assert "No sweep yet" in main.inner_text()

    # --- sweep: 20 values of the default parameter (ttl_days.official_documentation)
    page.get_by_role("button", name=re.compile(r"Run sweep \(20 values\)")).click()
    wait_idle(page)
    assert_no_exception(page)
    text = main.inner_text()
    assert "20 values of" in text and "Envelope diff of" in text
    plot = main.locator(".js-plotly-plot").first
    plot.wait_for(state="visible")
    assert plot.locator(".main-svg").count() >= 1
    assert "1: ttl_days.official_documentation" in _pick_value(page)
    assert "current value 120" in text
    screenshot(page, "tuning_sweep", full_page=False)

    # click a marker of the first trace (a later point): the diff below follows it
    points = plot.locator("g.trace.scatter").first.locator("path.point")
    assert points.count() == 20
    points.nth(15).click(force=True)
    for _ in range(40):
        wait_idle(page)
        if "16: ttl_days.official_documentation" in _pick_value(page):
            break
        page.wait_for_timeout(250)
    assert "16: ttl_days.official_documentation" in _pick_value(page)
    assert_no_exception(page)
    screenshot(page, "tuning_sweep_point")

    # --- compare: defaults vs the sidebar (ttl_days.official_documentation 365 -> 120 from the URL)
    page.get_by_role("tab", name="Compare").click()
    wait_idle(page)
    text = main.inner_text()
    assert "Per-fact rank and score deltas" in text
    assert re.search(r"config keys changed\s+1\b", text)
    assert "ttl_days.official_documentation" in text
    assert main.get_by_text("Download the candidate config (TOML)").count() >= 1
    screenshot(page, "tuning_compare", full_page=False)

    # --- before / after, and the HTML report
    page.get_by_role("tab", name="Before / after").click()
    wait_idle(page)
    assert_no_exception(page)
    text = main.inner_text()
    assert "stale facts in the envelope" in text and "contradictory pairs" in text and "duplicate fan-out facts" in text
    screenshot(page, "tuning_before_after")
    with page.expect_download(timeout=120_000) as dl:
        page.get_by_role("button", name="Download the HTML report").click()
    path = tmp_path / "report.html"
    dl.value.save_as(str(path))
    html = path.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.count("Plotly.newPlot") == 2

    ctx = browser.new_context(viewport={"width": 1400, "height": 900}, offline=True)
    try:
        rp = ctx.new_page()
        rp.goto(path.as_uri())
        rp.wait_for_selector(".plotly .main-svg", timeout=30_000)
        assert rp.locator(".js-plotly-plot").count() == 2
        assert "Before / after SPEC-027" in rp.locator("h1").inner_text()
        screenshot(rp, "tuning_report_sample", full_page=False)
        rp.screenshot(path=str(SHOTS / "tuning_report_sample_full.png"), full_page=True)
    finally:
        ctx.close()

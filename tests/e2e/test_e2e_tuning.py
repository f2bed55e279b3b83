"""The Tuning page in a real browser (1400x900): run a sweep, click a point of the plot, look at Compare,
download the before / after HTML report and open it offline (file://) with its charts drawn."""

from __future__ import annotations

import re

from tests.support.browser import SCREENSHOTS, assert_no_exception, open_page, screenshot, wait_idle

SCENARIO = "ai_act_compliance.json"
#: the first trace of the sweep figure (its markers carry their point index as customdata)
JACCARD_TRACE = "envelope overlap with the baseline (Jaccard)"


def _main(page):
    return page.get_by_test_id("stMain")


def _query(e2e_sample_dir) -> str:
    """The sample scenario when bundled, and a sidebar change (via the URL) for Compare to show."""
    scen = f"scenario={SCENARIO}&" if (e2e_sample_dir / "scenarios" / SCENARIO).is_file() else ""
    return f"?{scen}cfg.ttl_days.official_documentation=120"


def _sweep_marker(plot, trace_name: str, point: int):
    """The marker of sweep point ``point`` (0-based) on the trace named ``trace_name``.

    Plotly draws markers as unlabelled SVG paths; each one is found by the data plotly bound to it
    (its trace's name and its point's customdata), never by its position on screen.
    """
    handle = plot.evaluate_handle(
        """(gd, [name, point]) => {
        for (const g of gd.querySelectorAll('g.trace.scatter')) {
            const cd = g.__data__;
            if (!cd || !cd[0] || !cd[0].trace || cd[0].trace.name !== name) continue;
            for (const p of g.querySelectorAll('path.point')) {
                if (p.__data__ && p.__data__.data === point) return p;
            }
        }
        return null;
    }""",
        [trace_name, point],
    )
    marker = handle.as_element()
    assert marker is not None, f"no marker of point {point} on the trace {trace_name!r}"
    return marker


def _pick_value(page) -> str:
    """The 'Envelope diff of' select box's current value."""
    return _main(page).get_by_role("combobox", name="Envelope diff of").input_value()


def test_sweep_compare_and_html_report(page, browser, e2e_sample_dir, tmp_path):
    open_page(page, "/tuning" + _query(e2e_sample_dir))
    main = _main(page)
    assert "Tuning" in main.inner_text()
    assert "No sweep yet" in main.inner_text()

    # --- sweep of the default parameter (ttl_days.official_documentation) from 12 to 240, about 20 values: the
    # round grid (multiples of 10: 23 of them, the current 120 among them)
    page.get_by_role("button", name=re.compile(r"Run sweep \(23 values\)")).click()
    wait_idle(page)
    assert_no_exception(page)
    text = main.inner_text()
    assert "23 values of" in text and "Envelope diff of" in text
    plot = main.locator(".js-plotly-plot").first
    plot.wait_for(state="visible")
    assert plot.locator(".main-svg").count() >= 1
    assert "1: ttl_days.official_documentation" in _pick_value(page)
    assert "current value 120" in text
    screenshot(page, "tuning_sweep", full_page=False)

    # click the marker of a later point (point 16 of 23) on the Jaccard trace: the diff below follows it
    assert plot.locator("g.trace.scatter").first.locator("path.point").count() == 23
    _sweep_marker(plot, JACCARD_TRACE, 15).click(force=True)
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
    assert "expired in envelope" in text and "ageing in envelope" in text
    assert "contradictory pairs" in text and "duplicates reaching the model" in text
    screenshot(page, "tuning_before_after")
    with page.expect_download(timeout=120_000) as dl:
        page.get_by_role("button", name="Download the HTML report").click()
    path = tmp_path / "report.html"
    dl.value.save_as(str(path))
    html = path.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and html.count("<svg ") == 2 and "<script" not in html
    assert len(html.encode("utf-8")) < 1_000_000

    ctx = browser.new_context(viewport={"width": 1400, "height": 900}, offline=True)
    try:
        rp = ctx.new_page()
        rp.goto(path.as_uri())
        rp.wait_for_selector("svg rect.bar", timeout=30_000)
        assert rp.locator("svg").count() >= 2
        assert "Before / after SPEC-027" in rp.locator("h1").inner_text()
        screenshot(rp, "tuning_report_sample", full_page=False)
        rp.screenshot(path=str(SCREENSHOTS / "tuning_report_sample_full.png"), full_page=True)
    finally:
        ctx.close()

"""The self-contained before / after HTML report: no external resource, plotly.js inline once,
every CKF text escaped, the numbers of the BeforeAfter record; and (marked e2e-free but needing
/usr/bin/chromium) it opens from a file:// URL with its plots rendered."""
from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from factories import fact, make_corpus, make_scenario
from test_sweep import tiny_case

from crp_core.analysis.baseline import before_after
from crp_core.analysis.html_report import build_html_report
from crp_core.config import CRPConfig
from crp_ui.tuning_view import before_after_figures

CHROMIUM = "/usr/bin/chromium"
WHEN = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def _report(ba, **kw):
    return build_html_report(ba, before_after_figures(ba), generated_at=WHEN, ckf_label="tiny", **kw)


def test_report_is_self_contained_and_carries_the_numbers():
    corpus, scen, config = tiny_case()
    ba = before_after(corpus, scen, config)
    html = _report(ba, scenario_name="tiny.json")
    assert html.startswith("<!DOCTYPE html>")
    # no external resource: no <script src>, no <link>, no http(s) src/href outside the inline scripts
    assert not re.search(r"<script[^>]*\ssrc=", html) and "<link" not in html
    markup = re.sub(r"<script\b.*?</script>", "", html, flags=re.S)
    assert not re.search(r"""(src|href)\s*=\s*["']https?://""", markup)
    assert "cdn.plot.ly" not in markup
    # plotly.js embedded once, two figures
    assert html.count("Plotly.newPlot") == 2
    assert html.count("plotly.js v") == 1 or html.count("* plotly.js") == 1
    # the numbers: stale 1 -> 0, pairs 1 -> 0
    assert "<td>stale facts in the envelope</td><td class='num'>1</td><td class='num better'>0</td>" in html
    assert ("<td>contradictory pairs handed to the model</td><td class='num'>1</td>"
            "<td class='num better'>0</td>") in html
    assert "envelope overlap (Jaccard)</td><td class='num' colspan='2'>0.20</td>" in html
    assert "generated 2026-06-01 12:00 UTC" in html and "tiny.json" in html
    # both envelopes, with the stale flag on S (SPEC-027 recency .30) and the pair flag on P1 / P2
    assert "<span class='flag stale'>stale 0.30</span>" in html
    assert html.count("<span class='flag pair'>contradiction</span>") == 2


def test_ckf_text_is_escaped():
    facts = [fact("<x>", "<script>alert(1)</script> & the port is 2379", modified_at="2026-05-01"),
             fact("y", "plain text", modified_at="2026-05-01")]
    config = CRPConfig(graph_retrieval=False, envelope_fact_budget=2)
    corpus = make_corpus(facts, [[1, 0], [0.8, 0.6]], config)
    ba = before_after(corpus, make_scenario([1, 0], query_text="<b>q</b>"), config)
    html = _report(ba)
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; the port is 2379" in html
    assert "<code>&lt;x&gt;</code>" in html and "&lt;b&gt;q&lt;/b&gt;" in html


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} missing")
def test_report_renders_its_plots_in_chromium_offline(tmp_path):
    from playwright.sync_api import sync_playwright

    corpus, scen, config = tiny_case()
    ba = before_after(corpus, scen, config)
    path = tmp_path / "report.html"
    path.write_text(_report(ba), encoding="utf-8")
    shots = Path(__file__).resolve().parent.parent / "screenshots"
    shots.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            ctx = browser.new_context(viewport={"width": 1400, "height": 900}, offline=True)
            page = ctx.new_page()
            requests = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto(path.as_uri())
            page.wait_for_selector(".plotly .main-svg", timeout=30_000)
            assert page.locator(".js-plotly-plot").count() == 2
            assert page.locator(".main-svg").count() >= 2
            # bars drawn: one path per bar, 2 sides x 3 measures in the first figure
            assert page.locator(".js-plotly-plot").first.locator("g.point").count() >= 4
            assert all(u.startswith(("file:", "data:", "about:")) for u in requests), requests
            page.screenshot(path=str(shots / "tuning_html_report.png"), full_page=True)
        finally:
            browser.close()

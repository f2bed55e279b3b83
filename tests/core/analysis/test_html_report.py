"""The self-contained before / after HTML report: no external resource and no script (inline SVG
charts), under 1 MB, every CKF text escaped; what it tells (a headline per fix, what was removed and
why, the token change) and the numbers of the BeforeAfter record; the relevance gate's note when the gate left
anchor places empty, in the one-scenario and the suite report; and (needing /usr/bin/chromium) it opens from a
file:// URL offline with its charts drawn."""

from __future__ import annotations

import html as html_lib
import os
import re
from datetime import UTC, datetime

import numpy as np
import pytest

from crp_core.analysis.baseline import before_after
from crp_core.analysis.html_report import MAX_REPORT_BYTES, bar_chart_svg, build_html_report, build_suite_html_report
from crp_core.config import CRPConfig
from crp_core.relevance_gate import gate_note
from crp_ui.glossary import report_terms
from tests.support.factories import at_cos, fact, make_corpus, make_scenario
from tests.support.paths import REPO_ROOT
from tests.support.sweep_case import tiny_case

CHROMIUM = "/usr/bin/chromium"
WHEN = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def _report(ba, **kw):
    return build_html_report(ba, generated_at=WHEN, ckf_label="tiny", **kw)


def test_report_is_self_contained_and_carries_the_numbers():
    corpus, scen, config = tiny_case()
    ba = before_after(corpus, scen, config)
    html = _report(ba, scenario_name="tiny.json")
    assert html.startswith("<!DOCTYPE html>")
    # no external resource and no script at all: the charts are inline SVG
    assert "<script" not in html and "<link" not in html
    assert not re.search(r"""(src|href)\s*=\s*["']https?://""", html)
    assert "plotly" not in html.lower()
    assert html.count("<svg ") == 2
    assert len(html.encode("utf-8")) < MAX_REPORT_BYTES
    # the numbers: expired 1 -> 0, ageing 0 -> 0, pairs 1 -> 0
    assert "<td>expired facts in the envelope</td><td class='num'>1</td><td class='num better'>0</td>" in html
    assert "<td>ageing facts in the envelope</td><td class='num'>0</td><td class='num '>0</td>" in html
    assert (
        "<td>contradictory pairs handed to the model</td><td class='num'>1</td><td class='num better'>0</td>"
    ) in html
    assert "envelope overlap (Jaccard)</td><td class='num' colspan='2'>0.20</td>" in html
    assert "generated 2026-06-01 12:00 UTC" in html and "tiny.json" in html
    # both envelopes, with the expired flag on S (SPEC-027 recency .30) and the pair flag on P1 / P2
    assert "<span class='flag expired'>expired 0.30</span>" in html
    assert html.count("<span class='flag pair'>contradiction</span>") == 2


def test_report_tells_the_story():
    corpus, scen, config = tiny_case()
    ba = before_after(corpus, scen, config)
    html = _report(ba, terms=report_terms())
    # a headline per fix, before any table
    for fix, sentence in ba.headlines():
        assert f"<h3>{fix.replace('>', '&gt;')}</h3><p>{sentence.replace('>', '&gt;')}</p>" in html
    assert html.index("class='headline'") < html.index("<table")
    # what SPEC-027 removed, with the text and the reason
    removed = html[html.index("What SPEC-027 removed") : html.index("What SPEC-027 added")]
    assert "<code>S</code></td><td>The scheduler runs with the legacy queue mode enabled.</td>" in removed
    assert "<span class='kind'>expired</span><br>expired (882 days old, TTL 365 days)" in removed
    assert (
        "<span class='kind'>conflict loser</span><br>suppressed as the conflict loser to P1 (authority "
        "0.6000 &lt; 0.6400 (NUMBER_CHANGED))"
    ) in removed
    added = html[html.index("What SPEC-027 added") : html.index("Why the token count changed")]
    assert "backfill: took the slot of P2" in added and "Snapshots are taken every six hours on atlas." in added
    # the token change, explained from the records (38 -> 37: removed 26, added 25)
    tokens = html[html.index("Why the token count changed") : html.index("<h2>The numbers")]
    assert "SPEC-027 uses 1 fewer token (38 → 37) with the same number of facts (3 → 3)" in tokens
    assert "<td class='num'>2</td><td class='num'>-26</td>" in tokens
    assert "<td class='num'>2</td><td class='num'>+25" in tokens
    assert "-1 (38 -&gt; 37)" in tokens
    # a short glossary for a non-engineer
    assert "<dt>TTL</dt>" in html and "<dt>tie / NOTE block</dt>" in html


def test_report_stays_small_on_a_large_envelope():
    """200 facts in each envelope: still far under 1 MB (no embedded library)."""
    n = 200
    rng = np.random.default_rng(7)
    names = [chr(97 + i % 26) + chr(97 + i // 26) for i in range(n)]  # no digits: no NUMBER_CHANGED pairs
    facts = [fact(f"f{i:03d}", f"Fact {names[i]}: " + "word " * 60, modified_at="2026-05-01") for i in range(n)]
    other = rng.normal(size=(n, 15))
    other /= np.linalg.norm(other, axis=1, keepdims=True)
    vecs = np.hstack([np.full((n, 1), 0.8), 0.6 * other])  # relevance .8, pairwise cosine well below .85
    config = CRPConfig(graph_retrieval=False, envelope_fact_budget=n, token_budget=100_000, candidate_k=n)
    corpus = make_corpus(facts, vecs, config)
    ba = before_after(corpus, make_scenario([1] + [0] * 15), config)
    assert len(ba.after.envelope) > 100
    assert len(_report(ba).encode("utf-8")) < MAX_REPORT_BYTES


def test_bar_chart_svg_draws_one_rect_per_value_and_escapes_labels():
    svg = bar_chart_svg("a <b> chart", ["x", "y\nz"], [("one", "#111", [1, 0]), ("<two>", "#222", [3, 2])])
    assert svg.startswith("<svg ") and svg.endswith("</svg>")
    assert svg.count('<rect class="bar"') == 4
    assert 'data-series="&lt;two&gt;" data-category="x" data-value="3"' in svg
    assert "<b>" not in svg and "&lt;two&gt;" in svg
    written = re.findall(r'text-anchor="middle" fill="#222">([^<]*)</text>', svg)
    assert written == ["1", "3", "0", "2"]  # the zero bar is labelled too: 0, not a bar left out
    stacked = bar_chart_svg("s", ["a"], [("p", "#111", [2]), ("q", "#222", [3])], stacked=True)
    assert stacked.count('<rect class="bar"') == 2


def test_ckf_text_is_escaped():
    facts = [
        fact("<x>", "<script>alert(1)</script> & the port is 2379", modified_at="2026-05-01"),
        fact("y", "plain text", modified_at="2026-05-01"),
    ]
    config = CRPConfig(graph_retrieval=False, envelope_fact_budget=2)
    corpus = make_corpus(facts, [[1, 0], [0.8, 0.6]], config)
    ba = before_after(corpus, make_scenario([1, 0], query_text="<b>q</b>"), config)
    html = _report(ba)
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; the port is 2379" in html
    assert "<code>&lt;x&gt;</code>" in html and "&lt;b&gt;q&lt;/b&gt;" in html


def _gated_before_after(relevances):
    """Before / after on facts ``Fi`` at cosine ``relevances[i]`` to the query, each towards its own axis (no two
    alike), no graph walk: every one of the 20 places is an anchor place."""
    dim = len(relevances) + 1
    query = np.eye(dim)[0]
    facts = [fact(f"F{i}", f"fact number {i} about topic {i}", modified_at="2026-05-01") for i in range(dim - 1)]
    vecs = [at_cos(query, np.eye(dim)[i + 1], r) for i, r in enumerate(relevances)]
    config = CRPConfig(graph_retrieval=False)
    return before_after(make_corpus(facts, vecs, config), make_scenario(query), config)


GATED = [0.9, 0.8, 0.7, 0.5057, 0.4553, 0.3051]  # the default gate 0.55 passes 3 of 6; 20 places, 3 packed


def test_report_carries_the_gate_note_when_the_gate_left_places_empty():
    ba = _gated_before_after(GATED)
    note = gate_note(ba.full)
    assert note is not None and (note.passed, note.packed, note.budget) == (3, 3, 20)
    html = _report(ba)
    box = html[html.index("<div class='gate'>") : html.index("What SPEC-027 removed")]
    assert "<h3>The relevance gate held facts back</h3>" in box
    assert f"<p>{html_lib.escape(note.message)}</p>" in box  # escaped like every text drawn from data
    assert "the envelope&#x27;s 20 anchor places" in box
    assert "passed 3 of 6 retrieved facts" in box and "holds 3 of its 20 facts" in box
    assert html.index("class='headline'") < html.index("<div class='gate'>")  # in the summary, before the tables
    suite = build_suite_html_report([("gated", ba)], generated_at=WHEN, ckf_label="tiny")
    assert suite.count(f"<p>{html_lib.escape(note.message)}</p>") == 1
    assert "gated</b>: test query <span class='small'>(the relevance gate held facts back)</span>" in suite


def test_report_has_no_gate_note_when_the_gate_kept_no_fact_out():
    ba = _gated_before_after([0.9, 0.8, 0.7, 0.6])
    assert gate_note(ba.full) is None  # the gate keeps no retrieved fact out
    html = _report(ba)
    assert "class='gate'" not in html and "relevance gate" not in html
    suite = build_suite_html_report([("ungated", ba)], generated_at=WHEN, ckf_label="tiny")
    assert "class='gate'" not in suite and "relevance gate" not in suite


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} missing")
def test_report_renders_its_plots_in_chromium_offline(tmp_path):
    from playwright.sync_api import sync_playwright

    corpus, scen, config = tiny_case()
    ba = before_after(corpus, scen, config)
    path = tmp_path / "report.html"
    path.write_text(_report(ba), encoding="utf-8")
    shots = REPO_ROOT / "screenshots"
    shots.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        )
        try:
            ctx = browser.new_context(viewport={"width": 1400, "height": 900}, offline=True)
            page = ctx.new_page()
            requests = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto(path.as_uri())
            page.wait_for_selector("svg rect.bar", timeout=30_000)
            assert page.locator("svg").count() >= 2
            # bars drawn: 2 sides x 4 measures in the first chart (a zero is a zero-height bar)
            assert page.locator("svg").first.locator("rect.bar").count() == 8
            assert page.get_by_role("heading", name="What SPEC-027 removed from the context, and why").count() == 1
            assert all(u.startswith(("file:", "data:", "about:")) for u in requests), requests
            page.screenshot(path=str(shots / "tuning_html_report.png"), full_page=True)
        finally:
            browser.close()


@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} missing")
def test_the_command_that_writes_the_report_again_wraps_inside_its_box(tmp_path):
    """A walk-through found "Written again, from the same files, by:" cut off at the right edge of the page (one
    unbroken line): the command wraps inside its box, every character of it visible, a long path too."""
    from playwright.sync_api import sync_playwright

    from crp_core.analysis.report_inputs import ReportInputs, ScenarioInput

    corpus, scen, config = tiny_case()
    long_path = "/srv/knowledge-bases/" + "municipal_waste_collection_rules_" * 4 + "2026.jsonl"
    command = (
        f"crp-inspect report --ckf {long_path} --scenario scenarios/bulky_and_kerb.json "
        "--set cdr_min_relevance=0.45 --now 2026-10-01T09:00:00Z --width 2 --no-triage-db --out crp-before-after.html"
    )
    inputs = ReportInputs(
        ckf_label="tiny",
        ckf_fingerprint="0" * 64,
        ckf_facts=len(corpus.kb),
        scenarios=(ScenarioInput("tiny.json", "q", "2026-06-01T00:00:00Z", 0),),
        config_changes=(),
        decisions=(),
        decisions_in_force=0,
        decisions_source="",
        command=command,
    )
    path = tmp_path / "report.html"
    path.write_text(_report(before_after(corpus, scen, config), inputs=inputs), encoding="utf-8")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
        )
        try:
            page = browser.new_context(viewport={"width": 800, "height": 900}, offline=True).new_page()
            page.goto(path.as_uri())
            box = page.evaluate(
                """() => { const pre = document.querySelector('pre'); const b = pre.getBoundingClientRect();
                  const body = document.body.getBoundingClientRect();
                  const line = parseFloat(getComputedStyle(pre).lineHeight);
                  return {right: b.right, bodyRight: body.right, scroll: pre.scrollWidth, client: pre.clientWidth,
                          text: pre.innerText, lines: Math.round(b.height / line)}; }"""
            )
        finally:
            browser.close()
    assert box["text"].strip() == command
    assert box["right"] <= box["bodyRight"] + 0.5, box  # inside the page's column
    assert box["scroll"] <= box["client"], box  # nothing hidden past the box's edge
    assert box["lines"] > 1, box  # wrapped, not shrunk

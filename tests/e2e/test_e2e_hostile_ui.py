"""Hostile ids and texts render inert on every page, in a real browser.

The server runs on the samples of tests/data/hostile_ui/hostile_samples.py: ids and contents with
Markdown (``**x**``, links to http://evil.example, ``:red[x]``, ``$x^2$``), HTML (``<script>``,
``<img onerror>``), bidi controls, zero-width characters and a 300-character id. On every page
(each opened with ``?fact=`` selecting a hostile fact) the test asserts: no dialog fired, no script or
``onerror`` element came from the data, no link to evil.example, no KaTeX element, no bidi control or
zero-width character left in the DOM outside the editors (they show as ``⟨U+XXXX⟩``; a text box
keeps the raw value so an edit round-trips, and the sidebar then names the controls it holds), the
hostile text shown literally
where the page shows it, and no request left localhost. Screenshots go to ``$CRP_E2E_SCREENSHOTS``
(``hostile_<page>.png``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlparse

import pytest

from tests.support.browser import assert_no_exception, screenshot, session_page, wait_idle

#: url path -> the page's heading
PAGES = {
    "/": "What SPEC-027 changes",
    "/overview": "Overview",
    "/breakdown": "Score breakdown",
    "/envelope": "Envelope",
    "/conflicts": "Conflict triage",
    "/fanout": "Fan-out simulator",
    "/graph": "Graph (CDGR)",
    "/tuning": "Tuning",
    "/home": "crp-inspect",
}
CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\u2060\ufeff"

#: what the page shows from the data, in the DOM: scripts, handlers, links, KaTeX, and its text
DOM_PROBE = """() => ({
  dataScripts: [...document.querySelectorAll('script')].filter(s => s.textContent.includes('alert(')).length,
  handlers: document.querySelectorAll('[onerror], [onload]:not(body):not(iframe), [onclick]').length,
  dataImgs: [...document.querySelectorAll('img')].filter(i => (i.getAttribute('src') || '') === 'x').length,
  evilLinks: [...document.querySelectorAll('a[href], [href], [src], [srcset]')]
      .filter(a => /evil\\.example/.test(a.getAttribute('href') || a.getAttribute('src') || '')).length,
  katex: document.querySelectorAll('.katex, .katex-display, .katex-html, math').length,
  text: document.body.innerText,
  ...(() => {  // without the editors: a text box holds the raw value, so an edit round-trips
    const c = document.body.cloneNode(true);
    c.querySelectorAll('textarea, input').forEach(e => e.remove());
    return {all: c.textContent, html: c.innerHTML};
  })(),
})"""


def _visible(text: str) -> str:
    from crp_ui import render

    return render.visible(text)


def _literal_expectations(h: Any) -> dict[str, list[str]]:
    """Hostile strings each page must show literally (visible escapes for the controls)."""
    return {
        "/breakdown": [h.MD_ID, h.SCRIPT],  # the selected fact's card
        "/conflicts": [h.MD_ID, h.HTML_ID, h.SCRIPT, h.IMG],  # the first pair, its contents
        "/envelope": [h.SCRIPT, _visible(h.BIDI_ID)],  # the envelope text
        "/home": ["etcd ports? **q** [q](http://evil.example/q) $q^2$ ⟨U+202E⟩q"],  # the query
        "/fanout": ["sq1 (**lbl**:red[r]⟨U+202E⟩)"],  # a sub-query label in the ResidualSet box
    }


@pytest.mark.e2e
def test_hostile_ids_render_inert_on_every_page(browser, hostile_server, hostile_samples):
    h = hostile_samples
    expect = _literal_expectations(h)
    host = urlparse(hostile_server).netloc
    with session_page(browser, hostile_server) as page:
        dialogs: list[str] = []
        outside: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on(
            "request",
            lambda r: (
                None
                if urlparse(r.url).scheme in ("data", "blob") or urlparse(r.url).netloc == host
                else outside.append(r.url)
            ),
        )
        for path, heading in PAGES.items():
            page.goto(f"{path}?fact={quote(h.MD_ID, safe='')}")
            wait_idle(page)
            assert_no_exception(page)
            page.get_by_role("heading", name=heading, exact=True, level=1).wait_for(state="visible")
            wait_idle(page)
            page.wait_for_timeout(800)  # plotly and the grids draw after the run
            name = path.strip("/") or "overview"
            screenshot(page, f"hostile_{name}")
            dom = page.evaluate(DOM_PROBE)
            where = f"page {path}"
            assert dom["dataScripts"] == 0, where
            assert dom["handlers"] == 0 and dom["dataImgs"] == 0, where
            assert dom["evilLinks"] == 0, where
            assert dom["katex"] == 0, where
            left = sorted({f"U+{ord(c):04X}" for c in dom["html"] + dom["all"] if c in CONTROLS})
            assert not left, f"{where}: raw controls in the DOM: {left}"
            for literal in expect.get(path, []):
                assert literal in dom["text"] or literal in dom["all"], f"{where}: {literal!r} not shown literally"
            # the sidebar's expanders are closed: their contents are not drawn at all (checked below, opened)
            assert "hostile scenario **desc**" not in (page.get_by_test_id("stSidebar").text_content() or ""), where
        # the sidebar's scenario editor: the description and the query's named controls, opened
        page.get_by_test_id("stSidebar").get_by_text("Scenario", exact=True).click()
        wait_idle(page)
        sidebar = page.get_by_test_id("stSidebar").inner_text()
        assert (
            "hostile scenario **desc** <script>alert('c1')</script> [d](http://evil.example/d) ⟨U+202E⟩RTL" in sidebar
        )
        assert "The query holds U+202E" in sidebar  # the raw query in its text box, named
        assert page.evaluate(DOM_PROBE)["evilLinks"] == 0
        screenshot(page, "hostile_sidebar_scenario")
        assert not dialogs, dialogs
        assert not outside, f"requests left the server: {outside}"

"""No overlapping axis labels on a projector: every plotly chart of every page, at 1280, 1400, 1600 and 1920
px wide, with the sidebar open and closed (streamlit run app.py + headless Chromium).

The check is geometric: in each drawn chart's SVG, the bounding boxes of the tick labels of one axis must not
intersect (more than :data:`TOLERANCE_PX`). Charts hidden in a closed tab or expander have no box and are not
measured; each page entry below opens what it needs (a tab through the URL, its expanders) and says how many
charts it must at least measure, so a page whose charts stopped drawing fails instead of passing empty.
A screenshot at 1400x900 with the sidebar open is kept per entry (``$CRP_E2E_SCREENSHOTS``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.browser import open_page, screenshot, wait_idle

WIDTHS = (1280, 1400, 1600, 1920)
HEIGHT = 900
TOLERANCE_PX = 1.0
#: time for plotly to redraw a chart after the viewport changes width
RELAYOUT_MS = 900

#: tick labels of each axis of each drawn chart in the main area, and the pairs of one axis that intersect
MEASURE = """(tol) => {
  const out = {charts: [], overlaps: []};
  const plots = [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')];
  plots.forEach((plot, ci) => {
    const r = plot.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) return;
    const title = ((plot.querySelector('.gtitle') || {}).textContent || `chart ${ci}`).slice(0, 80);
    let ticks = 0;
    plot.querySelectorAll('.xaxislayer-above, .yaxislayer-above').forEach((layer, li) => {
      const axes = {};
      layer.querySelectorAll('g[class*="tick"] > text').forEach((t) => {
        const b = t.getBoundingClientRect();
        if (!t.textContent.trim() || b.width === 0 || b.height === 0) return;
        const k = li + ':' + t.parentNode.getAttribute('class');
        (axes[k] = axes[k] || []).push({text: t.textContent, l: b.left, r: b.right, t: b.top, b: b.bottom});
        ticks += 1;
      });
      Object.entries(axes).forEach(([k, boxes]) => {
        for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
          const a = boxes[i], b = boxes[j];
          if (a.l < b.r - tol && b.l < a.r - tol && a.t < b.b - tol && b.t < a.b - tol)
            out.overlaps.push({chart: title, axis: k.split(':')[1], a: a.text.slice(0, 50), b: b.text.slice(0, 50)});
        }
      });
    });
    out.charts.push({title: title, width: Math.round(r.width), ticks: ticks});
  });
  return out;
}"""

#: a closed expander of the main area
CLOSED_EXPANDER = '[data-testid="stMain"] [data-testid="stExpander"] details:not([open]) > summary'


@dataclass(frozen=True)
class Entry:
    """A view to measure: its URL, whether its expanders are opened, the button that draws its charts (if
    any), how many charts it must draw."""

    name: str
    url: str
    min_charts: int
    expand: bool = False
    click: str | None = None


ENTRIES = (
    Entry("story", "/?scenario=payments_api_migration.json", 1, expand=True),
    Entry("overview", "/overview", 1),
    Entry("breakdown", "/breakdown?scenario=ai_act_compliance.json&fact=gov-0005", 4, expand=True),
    Entry("graph", "/graph", 1),
    Entry("conflicts_queue", "/conflicts", 1),
    Entry("conflicts_run", "/conflicts?scenario=etcd_upgrade.json&tab=Envelope+conflicts+%28current+run%29", 1),
    Entry("fanout", "/fanout?scenario=payments_api_migration.json", 1),
    Entry("tuning_sweep", "/tuning?tab=Sweep", 1, click="Run sweep"),
    Entry("tuning_suite", "/tuning?tab=Suite", 1, click="Run suite sweep"),
    Entry("tuning_compare", "/tuning?tab=Compare", 0),
    Entry("tuning_before_after", "/tuning?scenario=payments_api_migration.json&tab=Before+%2F+after", 2),
)


def _open_expanders(page: Any, rounds: int = 6) -> None:
    """Open every closed expander of the main area (an opened one may hold more)."""
    for _ in range(rounds):
        closed = page.locator(CLOSED_EXPANDER)
        if closed.count() == 0:
            return
        closed.first.click()
        wait_idle(page)


SIDEBAR_OPEN = (
    "(open) => { const s = document.querySelector('[data-testid=\"stSidebar\"]');"
    " const w = s ? s.getBoundingClientRect().right : 0; return open ? w > 200 : w < 5; }"
)


def _set_sidebar(page: Any, *, open_: bool) -> None:
    """Open or close the sidebar with its own buttons (a page may start with it closed), and wait until it is so."""
    if page.evaluate(SIDEBAR_OPEN, open_):
        return
    sidebar = page.get_by_test_id("stSidebar")
    if open_:
        page.locator('[data-testid="stExpandSidebarButton"]').first.click()
    else:
        sidebar.hover()
        page.locator('[data-testid="stSidebarCollapseButton"] button').click(force=True)
    page.wait_for_function(SIDEBAR_OPEN, arg=open_)
    page.wait_for_timeout(RELAYOUT_MS)


def _measure(page: Any, width: int) -> dict[str, Any]:
    page.set_viewport_size({"width": width, "height": HEIGHT})
    page.wait_for_timeout(RELAYOUT_MS)
    result: dict[str, Any] = page.evaluate(MEASURE, TOLERANCE_PX)
    return result


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_no_axis_labels_overlap_at_projector_widths(page, entry):
    open_page(page, entry.url)
    if entry.click:
        page.get_by_role("button", name=entry.click).click()
        wait_idle(page)
    if entry.expand:
        _open_expanders(page)
    problems: list[str] = []
    drawn: dict[str, int] = {}
    for sidebar_open in (True, False):
        _set_sidebar(page, open_=sidebar_open)
        for width in WIDTHS:
            got = _measure(page, width)
            where = f"{width} px, sidebar {'open' if sidebar_open else 'closed'}"
            drawn[where] = len(got["charts"])
            problems += [f"{where}: {o['chart']!r} {o['axis']}: {o['a']!r} over {o['b']!r}" for o in got["overlaps"]]
        if sidebar_open:
            page.set_viewport_size({"width": 1400, "height": HEIGHT})
            charts = page.locator('[data-testid="stMain"] .js-plotly-plot')
            if charts.count():
                charts.first.scroll_into_view_if_needed()
            page.wait_for_timeout(RELAYOUT_MS)
            screenshot(page, f"layout_{entry.name}", full_page=False)
    _set_sidebar(page, open_=True)
    short = {w: n for w, n in drawn.items() if n < entry.min_charts}
    assert not short, f"{entry.url}: fewer than {entry.min_charts} chart(s) drawn: {short}"
    assert not problems, f"{entry.url}: overlapping tick labels:\n" + "\n".join(problems[:40])


#: the sidebar's width and, in the main area, the metrics whose value or label the browser cut (an ellipsis:
#: the text of the element, or of one inside it, wider than its box)
NARROW = """() => {
  const s = document.querySelector('[data-testid="stSidebar"]').getBoundingClientRect();
  const parts = ['stMetricValue', 'stMetricLabel'].map((t) => `[data-testid="stMain"] [data-testid="${t}"]`);
  const cut = [...document.querySelectorAll(parts.flatMap((p) => [p, p + ' *']).join(','))]
    .filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent);
  return {sidebar: Math.round(s.width), cut: [...new Set(cut)]};
}"""


#: the dashboard's stylesheet is on the page (render.apply_stylesheet)
STYLED = "() => [...document.querySelectorAll('style')].some((s) => s.textContent.includes('stMetricLabel'))"


@pytest.mark.parametrize(
    "path",
    [
        "/conflicts",
        "/overview",
        "/envelope",
        "/fanout",
        "/graph",
        "/tuning?tab=Before+%2F+after",
        "/tuning?tab=Compare",
    ],
)
def test_a_narrow_window_keeps_room_for_the_page(page, path):
    """At 1000 and 1280 px the open sidebar takes at most 30 % of the window and no metric's value or label is
    cut (a label wraps: theme._LAYOUT); at 1400 px the sidebar keeps its full width (theme.SIDEBAR_WIDTH,
    440 px) and still no metric is cut."""
    from crp_ui.theme import SIDEBAR_WIDTH

    page.set_viewport_size({"width": 1000, "height": 800})
    open_page(page, path)
    _set_sidebar(page, open_=True)
    wait_idle(page)
    page.wait_for_function(STYLED)  # a rerun draws the page again, its stylesheet with it
    page.wait_for_timeout(RELAYOUT_MS)
    got = page.evaluate(NARROW)
    assert got["sidebar"] <= 300 and not got["cut"], got
    screenshot(page, f"narrow_{path.strip('/').split('?')[0]}", full_page=False)
    page.set_viewport_size({"width": 1280, "height": HEIGHT})  # a common laptop: still under the narrow width
    page.wait_for_timeout(RELAYOUT_MS)
    got = page.evaluate(NARROW)
    assert got["sidebar"] <= 384 and not got["cut"], got
    page.set_viewport_size({"width": 1400, "height": HEIGHT})
    page.wait_for_timeout(RELAYOUT_MS)
    got = page.evaluate(NARROW)
    assert got["sidebar"] >= SIDEBAR_WIDTH and not got["cut"], got

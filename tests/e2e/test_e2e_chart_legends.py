"""A chart's legend never lies over its axes: every figure drawn with the shared layout
(crp_ui.chart_style.LAYOUT), each drawn by plotly.js in headless Chromium, at a narrow column, a half page and
a full page.

The check is geometric, on the drawn SVG: no legend entry intersects a tick label or an axis title, and a legend
under the plot lies wholly below the lowest x-axis tick label and title. A walk-through found the authority
bars' legend ("winner (override)", "suppressed") over the x ticks "0", "0.05", "0.1": the shared legend sat at
a fraction of the plot's height under the axis, which a short chart's ticks and title fill. Standalone pages
(the plotly.js the plotly package ships, no server) keep the test cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import plotly
import pytest
from plotly.graph_objects import Figure

from crp_core import pair_timeline
from crp_core.config import CRPConfig
from crp_core.pipeline import run_pipeline
from crp_core.records import Authority, ConflictPair
from crp_core.stages.contradictions import values_conflict
from crp_ui import charts, tables
from crp_ui import time_strip as ts
from tests.support.factories import fact, make_corpus, make_scenario
from tests.support.timeline_worlds import KB, NOW, small_envelope_timeline

WIDTHS = (360, 700, 1100)
TOLERANCE_PX = 1.0
PLOTLY_JS = f"{plotly.__path__[0]}/package_data/plotly.min.js"

#: per drawn chart: its legend entries, the tick labels and axis titles, and the lowest x-axis label
MEASURE = """(tol) => {
  const box = (e) => { const b = e.getBoundingClientRect(); return {l: b.left, r: b.right, t: b.top, b: b.bottom,
      text: e.textContent.slice(0, 40)}; };
  const seen = (b) => b.r - b.l > 0 && b.b - b.t > 0;
  const meet = (a, b) => a.l < b.r - tol && b.l < a.r - tol && a.t < b.b - tol && b.t < a.b - tol;
  return [...document.querySelectorAll('.js-plotly-plot')].map((plot) => {
    const all = (sel) => [...plot.querySelectorAll(sel)].map(box).filter(seen);
    const legend = all('.legend .traces');
    const xLabels = all('.xaxislayer-above g[class*="tick"] > text, [class^="g-x"][class$="title"] text');
    const labels = [...xLabels, ...all('.yaxislayer-above g[class*="tick"] > text, .g-ytitle text')];
    const plotArea = (plot.querySelector('.bglayer rect, .nsewdrag') || plot).getBoundingClientRect();
    const under = legend.filter((l) => l.t >= plotArea.bottom - tol);
    const lowest = Math.max(...xLabels.map((b) => b.b), -Infinity);
    return {
      id: plot.id,
      legend: legend.length,
      overlaps: legend.flatMap((l) => labels.filter((t) => meet(l, t)).map((t) => `${l.text} over ${t.text}`)),
      above_axis: under.filter((l) => l.t < lowest - tol).map((l) => l.text),
    };
  });
}"""


def _authority(a: str, b: str, *, suppressed: str | None) -> Figure:
    """A pair of authorities 0.64 and 0.135 (official documentation against a community post), arbitrated or
    tied."""
    auth = {
        a: Authority(a, "official_documentation", 0.8, 1.0, 0.8, 0.64),
        b: Authority(b, "community", 0.75, 0.3, 0.6, 0.135),
    }
    vc = values_conflict("port 2379", "port 4001")
    assert vc is not None
    kept = (a,) if suppressed else (a, b)
    return charts.authority_bars(ConflictPair(a, b, 0.97, vc.patterns, vc, auth, kept, suppressed, suppressed is None))


def _histogram() -> Figure:
    frame = pd.DataFrame(
        {
            "cdr_score": [0.1, 0.2, 0.3, 0.5, 0.55, 0.6],
            "outcome": ["in envelope", "suppressed", "gated", "not selected", "dropped (budget)", "in envelope"],
        }
    )
    return charts.score_histogram(frame, "cdr_score", threshold=0.3, threshold_label="cdr_min_relevance 0.3")


def _token_bar() -> Figure:
    bands = ["primacy", "middle", "recency"]
    env = pd.DataFrame({"position": [1, 2, 3], "fact_id": ["a", "b", "c"], "band": bands, "tokens": [40, 60, 30]})
    return charts.token_budget_bar(env, 200, 140)


def _envelope_over_time() -> Figure:
    return ts.envelope_figure(small_envelope_timeline(), ("A", "B"), now=NOW)


def _recency() -> Figure:
    """Facts of four source types and ages around a query, one STALE (the markers' legend rows)."""
    facts = [
        fact("F1", "etcd client port 2379", modified_at="2026-05-22"),
        fact("F2", "etcd peers use port 2380", source_type="news", modified_at="2026-05-12"),
        fact("F3", "etcd 3.5 supports learners", source_type="version_specific", modified_at="2025-09-01"),
        fact("F4", "old etcd note", source_type="community", status="STALE", modified_at="2026-05-01"),
        fact("F5", "etcd fact with a 90 day ttl", ttl="P90D", modified_at="2026-03-01"),
    ]
    vecs = [[1, 0.1, 0], [1, 0.2, 0.1], [1, -0.1, 0.2], [1, 0.3, -0.1], [1, 0.1, 0.3]]
    result = run_pipeline(make_corpus(facts, vecs), make_scenario([1, 0, 0], now="2026-06-01"))
    return charts.recency_chart(tables.breakdown_frame(result), result.config, selected="F1")


def _network() -> Figure:
    nodes = pd.DataFrame(
        [
            {
                "row": i,
                "fact_id": f"F{i}",
                "kind": "anchor" if i < 3 else "connector",
                "cdr_score": 0.5,
                "bridge_value": np.nan if i < 3 else 1.0,
                "connector_score": np.nan if i < 3 else 0.4,
                "in_envelope": True,
                "suppressed": i == 4,
                "content": "x",
            }
            for i in range(6)
        ]
    )
    edges = pd.DataFrame([{"a": "F0", "b": "F3", "weight": 0.8}, {"a": "F3", "b": "F1", "weight": 0.7}])
    return charts.cdgr_network(nodes, edges)


#: every figure builder of crp_ui.charts with a legend, and the other users of the shared layout
FIGURES: dict[str, Callable[[], Figure]] = {
    "authority bars (winner, suppressed)": lambda: _authority("wst-010", "wst-011", suppressed="wst-011"),
    "authority bars (tie)": lambda: _authority("E1", "E2", suppressed=None),
    "score histogram": _histogram,
    "token budget bar": _token_bar,
    "winner over time": lambda: ts.strip_figure(pair_timeline(KB, "A", "B", CRPConfig(), now=NOW)),
    "envelope over time": _envelope_over_time,
    "recency curves": _recency,
    "CDGR network": _network,
}


def _page(figures: dict[str, Figure]) -> str:
    with open(PLOTLY_JS, encoding="utf-8") as fh:
        script = fh.read()
    body = "".join(
        fig.to_html(full_html=False, include_plotlyjs=False, div_id=f"chart-{i}", config={"responsive": True})
        for i, fig in enumerate(figures.values())
    )
    return f"<!DOCTYPE html><html><head><script>{script}</script></head><body style='margin:0'>{body}</body></html>"


@pytest.fixture(scope="module")
def html() -> Iterator[tuple[list[str], str]]:
    built = {name: make() for name, make in FIGURES.items()}
    yield list(built), _page(built)


@pytest.mark.parametrize("width", WIDTHS)
def test_no_legend_lies_over_an_axis(browser: Any, html: tuple[list[str], str], width: int) -> None:
    names, page_html = html
    ctx = browser.new_context(viewport={"width": width, "height": 900}, offline=True)
    try:
        page = ctx.new_page()
        page.set_content(page_html)
        page.wait_for_function(f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {len(names)}")
        page.wait_for_timeout(300)
        got = page.evaluate(MEASURE, TOLERANCE_PX)
    finally:
        ctx.close()
    assert [g["id"] for g in got] == [f"chart-{i}" for i in range(len(names))]
    assert all(g["legend"] for g in got if "over time" not in names[int(g["id"][6:])]), got  # legends were drawn
    bad = {
        names[int(g["id"][6:])]: g["overlaps"] + [f"{t} above the x axis's labels" for t in g["above_axis"]]
        for g in got
        if g["overlaps"] or g["above_axis"]
    }
    assert not bad, f"at {width} px: {bad}"

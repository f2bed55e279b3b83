"""The Fan-out page's partition view in a real browser (1400x900): the chart holds drawn marks, one per
ResidualSet sub-query and one per partition centroid, at the scenario's width and after the width control
changes; the duplicate cards say how many duplicates reach the model at each width."""

from __future__ import annotations

import re

from tests.support.browser import main_text, open_page, screenshot, wait_idle

SCENARIO = "payments_api_migration.json"

#: the marks drawn inside an element: plotly / vega SVG marks with a shape, and canvases with a painted pixel
DRAWN_MARKS_JS = """(el) => {
    const svgMarks = [...el.querySelectorAll('svg path.point, svg .mark-symbol path, svg .mark-rect path')]
        .filter(p => (p.getAttribute('d') || '').length > 2)
        .filter(p => { const b = p.getBoundingClientRect(); return b.width > 0 && b.height > 0; }).length;
    let painted = 0;
    for (const c of el.querySelectorAll('canvas')) {
        if (!c.width || !c.height) continue;
        try {
            const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            for (let i = 3; i < data.length; i += 4) { if (data[i]) { painted += 1; break; } }
        } catch (e) { /* a WebGL canvas: not counted */ }
    }
    return {svgMarks, painted};
}"""


def _scenario_query(e2e_sample_dir) -> str:
    return f"?scenario={SCENARIO}" if (e2e_sample_dir / "scenarios" / SCENARIO).is_file() else ""


def _partition_chart(page):
    """The chart of the Partition view (the element right after its rule line)."""
    chart = page.locator('[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"]')
    assert chart.count() == 1, f"{chart.count()} charts on the Fan-out page"
    return chart.first


def _sizes(page) -> tuple[int, int]:
    """(partitions, ResidualSet sub-queries) as the Partition view's caption states them."""
    m = re.search(r"(\d+) disjoint partitions covering the (\d+) ResidualSet sub-queries", main_text(page))
    assert m, "no partitions caption"
    return int(m.group(1)), int(m.group(2))


def _assert_drawn(page) -> int:
    """The partition chart has at least one mark per sub-query and per centroid; returns the marks."""
    chart = _partition_chart(page)
    chart.scroll_into_view_if_needed()
    partitions, residual = _sizes(page)
    box = chart.bounding_box()
    assert box and box["width"] > 200 and box["height"] > 200, box
    got = {"svgMarks": 0, "painted": 0}
    for _ in range(40):  # the chart's code loads on first use
        got = chart.evaluate(DRAWN_MARKS_JS)
        if got["svgMarks"] >= residual + partitions or got["painted"]:
            break
        page.wait_for_timeout(250)
    assert got["svgMarks"] >= residual + partitions or got["painted"], (
        f"the partition view draws nothing: {got}, expected at least {residual} points and {partitions} centroids"
    )
    return int(got["svgMarks"])


def _set_width(page, width: int) -> None:
    slider = page.get_by_role("slider", name="fan-out width")
    now = int(slider.input_value())
    slider.focus()
    for _ in range(abs(width - now)):
        page.keyboard.press("ArrowRight" if width > now else "ArrowLeft")
    wait_idle(page)
    assert int(page.get_by_role("slider", name="fan-out width").input_value()) == width


def test_partition_view_draws_its_marks_at_every_width(page, e2e_sample_dir):
    open_page(page, "/fanout" + _scenario_query(e2e_sample_dir))
    _set_width(page, 3)
    assert "Partition view" in main_text(page)
    marks3 = _assert_drawn(page)
    text = main_text(page)
    assert "Partitioned (SPEC-027): 0 duplicate(s) reach the model" in text
    assert re.search(r"Naive race: (\d+) of \1 duplicate\(s\) reach the model", text)
    screenshot(page, "fanout_partition_view_w3", full_page=False)

    _set_width(page, 5)
    marks5 = _assert_drawn(page)
    assert marks5 == marks3 + 2  # two more partitions: two more centroid crosses, the same sub-queries
    text = main_text(page)
    # at width 5 the partitioned branches may overlap; whatever they share is removed at fan-in
    assert "Partitioned (SPEC-027): 0 duplicate(s) reach the model;" in text
    screenshot(page, "fanout_partition_view_w5", full_page=False)

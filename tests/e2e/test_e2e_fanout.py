"""The Fan-out simulator page in a real browser (1400x900): step to the end, see the dedup report."""

from __future__ import annotations

import re

from tests.support.browser import assert_no_exception, main_text, open_page, screenshot, wait_idle

SCENARIO = "etcd_upgrade.json"


def _scenario_query(e2e_sample_dir) -> str:
    """``?scenario=...`` when the bundled sample scenario exists (else the default scenario is used)."""
    return f"?scenario={SCENARIO}" if (e2e_sample_dir / "scenarios" / SCENARIO).is_file() else ""


def _step_of(page) -> tuple[int, int]:
    m = re.search(r"Step (\d+) of (\d+)", main_text(page))
    assert m, "no step caption on the page"
    return int(m.group(1)), int(m.group(2))


def _wait_step(page, k: int, timeout_s: float = 60.0) -> None:
    """Wait until the page shows step ``k`` (a click is applied by a rerun, not at once)."""
    for _ in range(int(timeout_s * 4)):
        wait_idle(page)
        if _step_of(page)[0] == k:
            return
        page.wait_for_timeout(250)
    raise AssertionError(f"the page never showed step {k}; it shows {_step_of(page)}")


def test_step_to_the_end_and_see_the_dedup_report(page, e2e_sample_dir):
    open_page(page, "/fanout" + _scenario_query(e2e_sample_dir))
    text = main_text(page)
    if "no fan-out" in text:  # the synthetic fallback sample has fanout_width 0: widen it
        page.get_by_role("slider", name="fan-out width").focus()
        page.keyboard.press("ArrowRight")
        wait_idle(page)
        text = main_text(page)
    assert "Fan-out simulator" in text
    assert "CRP-Context-Coverage-Partitions" in text
    assert "Partition view" in text and "Rule used" in text
    assert "Why not a lock?" in text and "What the snapshot guarantees" in text
    screenshot(page, "fanout_top", full_page=False)

    n = _step_of(page)[1]
    nxt = page.get_by_role("button", name="Next ▶")
    steps = 0
    while nxt.is_enabled():
        k = _step_of(page)[0]
        nxt.click()
        _wait_step(page, k + 1)
        assert_no_exception(page)
        steps += 1
        assert steps < 60, "Next never got disabled"
        if steps == 5:
            screenshot(page, "fanout_retrieval_step")
    assert _step_of(page) == (n, n)
    assert steps >= 4
    text = main_text(page)
    assert "Cross-branch dedup report: 0 duplicates" in text  # partitioned
    assert re.search(r"Cross-branch dedup report: [1-9]\d* duplicate", text)  # naive
    page.wait_for_url(re.compile(rf".*[?&]step={n}(&|$).*"), timeout=10_000)
    screenshot(page, "fanout_dedup_report")

    # back one step, then the URL reproduces the view in a fresh session
    page.get_by_role("button", name="◀ Previous").click()
    _wait_step(page, n - 1)
    page.wait_for_url(re.compile(rf".*[?&]step={n - 1}(&|$).*"), timeout=10_000)
    url = page.url
    page.goto(url)
    wait_idle(page)
    assert_no_exception(page)
    assert _step_of(page) == (n - 1, n)

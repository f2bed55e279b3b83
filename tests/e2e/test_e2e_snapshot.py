"""Snapshots and links in a real browser (1400x900).

(a) "Share snapshot" on one ``streamlit run`` server, "Open a snapshot" on a second one (another
triage log): the same page opens with the same numbers; a screenshot of it is saved.
(b) The controls of the audit (docs/reference/snapshot.md, "What a link carries"): each is changed and
the test fails when the view changed but neither the URL nor the sidebar's "This link does not carry"
notice says so.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.support.browser import SCREENSHOTS, assert_no_exception, open_page, screenshot, wait_idle

SCENARIO = "payments_api_migration.json"
BA_TAB = "Before / after"
SNAPSHOT_UPLOADER = (
    '[data-testid="stSidebar"] [data-testid="stFileUploader"]:has-text("Snapshot file") input[type=file]'
)
#: where the screenshot of the opened snapshot is copied for the report
SHOTS = Path("/tmp/snapshot_shots")


def _scenario_q(e2e_sample_dir: Path) -> str:
    return f"scenario={SCENARIO}&" if (e2e_sample_dir / "scenarios" / SCENARIO).is_file() else ""


def _metrics(page: Any) -> list[str]:
    """Every metric of the main area (label and value), in order: the numbers a viewer reads."""
    return [m.inner_text() for m in page.get_by_test_id("stMain").get_by_test_id("stMetric").all()]


def _query(page: Any) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(page.url).query))


def _notice(page: Any) -> str:
    box = page.get_by_test_id("stSidebar").get_by_test_id("stAlert").filter(has_text="This link does not carry")
    return box.first.inner_text() if box.count() else ""


def _set_number(page: Any, label: str, value: int, *, sidebar: bool = False) -> None:
    root = page.get_by_test_id("stSidebar" if sidebar else "stMain")
    box = root.get_by_label(label, exact=True)
    box.fill(str(value))
    box.press("Enter")
    wait_idle(page)
    assert_no_exception(page)


def _open_ba(page: Any, e2e_sample_dir: Path) -> None:
    open_page(page, f"/tuning?{_scenario_q(e2e_sample_dir)}tab={BA_TAB.replace(' ', '+').replace('/', '%2F')}")


def test_a_snapshot_opens_the_same_view_on_a_second_server(page, browser, fresh_server, e2e_sample_dir, tmp_path):
    _open_ba(page, e2e_sample_dir)
    _set_number(page, "Fan-out width for this view", 4)
    assert _query(page).get("ba_width") == "4"
    shown = _metrics(page)
    assert shown and any("duplicates reaching the model" in m for m in shown), shown
    with page.expect_download() as dl:
        page.get_by_test_id("stSidebar").get_by_role("button", name="Share snapshot").click()
    snap = tmp_path / dl.value.suggested_filename
    dl.value.save_as(str(snap))
    assert snap.name.startswith("crp-snapshot-") and snap.stat().st_size > 0

    ctx = browser.new_context(viewport={"width": 1400, "height": 900}, base_url=fresh_server)
    try:
        other = ctx.new_page()
        other.set_default_timeout(240_000)
        open_page(other, "/")
        other.locator(SNAPSHOT_UPLOADER).set_input_files(str(snap))
        wait_idle(other)
        other.wait_for_url("**/tuning?**", timeout=240_000)
        wait_idle(other)
        assert_no_exception(other)
        assert _query(other).get("ba_width") == "4" and _query(other).get("tab") == BA_TAB
        assert "Snapshot refused" not in other.get_by_test_id("stSidebar").inner_text()
        assert _metrics(other) == shown
        path = screenshot(other, "snapshot_opened_second_server", full_page=False)
        SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, SHOTS / path.name)
    finally:
        ctx.close()


#: where the report's screenshots go (1400x900)
REPORT_SHOTS = Path("/tmp/snap-shots")


def _open_snapshot(browser: Any, server: str, snap: Path, path_glob: str) -> Any:
    """A fresh session on ``server`` that opens the snapshot file ``snap`` (its context stays open)."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 900}, base_url=server)
    other = ctx.new_page()
    other.set_default_timeout(240_000)
    open_page(other, "/overview")
    other.locator(SNAPSHOT_UPLOADER).set_input_files(str(snap))
    wait_idle(other)
    other.wait_for_url(path_glob, timeout=240_000)
    wait_idle(other)
    assert_no_exception(other)
    return other


def _fanout_numbers(page: Any) -> str:
    """The Fan-out page's numbers: the sentence of the two runs and the comparison under it."""
    text = page.get_by_test_id("stMain").inner_text()
    start = text.index("Partitioned (SPEC-027)")
    return re.sub(r"\d[\d,.]* ?(ms|s)\b", "<t>", text[start : text.index("Why not a lock?", start)])


def test_a_fanout_snapshot_with_width_and_depth_shows_the_same_numbers_on_a_second_server(
    page, browser, fresh_server, e2e_sample_dir, tmp_path
):
    """The Fan-out page at a width and depth weight that are not the scenario's, opened from its link,
    shared as a snapshot and opened on a second ``streamlit run`` (another port, another triage log)."""
    q = _scenario_q(e2e_sample_dir)
    open_page(page, f"/fanout?{q}fo_width=4&fo_depth=0.3")
    assert _query(page).get("fo_width") == "4" and _query(page).get("fo_depth") == "0.3"
    thumb = page.get_by_test_id("stMain").get_by_test_id("stSlider").first.get_by_test_id("stSliderThumbValue")
    assert thumb.inner_text().strip() == "4"
    shown = _fanout_numbers(page)
    assert "Partitioned" in shown and "Naive" in shown
    REPORT_SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(REPORT_SHOTS / "fanout_from_link_width4_depth0.3.png"))
    with page.expect_download() as dl:
        page.get_by_test_id("stSidebar").get_by_role("button", name="Share snapshot").click()
    snap = tmp_path / dl.value.suggested_filename
    dl.value.save_as(str(snap))
    other = _open_snapshot(browser, fresh_server, snap, "**/fanout?**")
    try:
        assert _query(other).get("fo_width") == "4" and _query(other).get("fo_depth") == "0.3"
        assert "Snapshot refused" not in other.get_by_test_id("stSidebar").inner_text()
        assert _fanout_numbers(other) == shown
        other.screenshot(path=str(REPORT_SHOTS / "fanout_snapshot_second_server.png"))
    finally:
        other.context.close()


def test_the_notice_names_the_tuning_state_a_link_does_not_carry(page, e2e_sample_dir):
    """A sweep's settings that differ from their defaults are named in the sidebar's notice."""
    q = _scenario_q(e2e_sample_dir).rstrip("&")
    open_page(page, "/tuning?tab=Sweep" + (f"&{q}" if q else ""))
    assert "sweep" not in _notice(page)
    _set_number(page, "values", 12)
    got = _notice(page)
    assert "the sweep's settings (parameter " in got and "; values 12)" in got, got
    REPORT_SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(REPORT_SHOTS / "tuning_notice_sweep_settings.png"))


# ---- (b) every control of the audit: its change reaches the URL or the notice --------------------------
def _shown(page: Any) -> list[str]:
    """What the main area shows: its metrics and its text, timings left out (they differ run to run)."""
    text = re.sub(r"\d[\d,.]* ?(ms|s)\b", "<t>", page.get_by_test_id("stMain").inner_text())
    return [*_metrics(page), text]


def _view(page: Any) -> tuple[list[str], dict[str, str], str]:
    return _shown(page), _query(page), _notice(page)


def _ba_width(page: Any) -> None:
    _set_number(page, "Fan-out width for this view", 3)


def _sidebar_fanout_width(page: Any) -> None:
    sidebar = page.get_by_test_id("stSidebar")
    summary = sidebar.locator('[data-testid="stExpander"] summary:has-text("Scenario")')
    summary.first.click()
    wait_idle(page)
    _set_number(page, "fan-out width", 5, sidebar=True)


def _toggle(label: str) -> Callable[[Any], None]:
    def change(page: Any) -> None:
        page.get_by_test_id("stMain").get_by_text(label, exact=True).click()
        wait_idle(page)

    return change


def _glossary_search(page: Any) -> None:
    box = page.get_by_test_id("stMain").get_by_label("Search the terms")
    box.fill("TTL")
    box.press("Enter")
    wait_idle(page)


def _queue_undecided(page: Any) -> None:
    page.get_by_role("radiogroup", name="Decided").get_by_text("undecided", exact=True).click()
    wait_idle(page)


def _log_axis(page: Any) -> None:
    page.get_by_test_id("stMain").locator(
        '[data-testid="stExpander"] summary:has-text("Recency factor vs age")'
    ).click()
    wait_idle(page)
    _toggle("log age axis")(page)


def _fanout_page_width(page: Any) -> None:
    thumb = page.get_by_test_id("stMain").get_by_role("slider").first
    thumb.focus()
    thumb.press("ArrowRight")
    wait_idle(page)


CONTROLS: list[Any] = [
    pytest.param("/tuning?tab=Before+%2F+after", _ba_width, id="tuning-before-after-width"),
    pytest.param("/tuning?tab=Before+%2F+after", _sidebar_fanout_width, id="sidebar-scenario-fanout-width"),
    pytest.param("/graph", _toggle("also draw connector candidates with bridge value > 0 (not selected)"), id="graph"),
    pytest.param("/breakdown", _log_axis, id="breakdown-log-axis"),
    pytest.param("/glossary", _glossary_search, id="glossary-search"),
    pytest.param("/conflicts", _queue_undecided, id="conflicts-queue-filter"),
    pytest.param("/fanout", _fanout_page_width, id="fanout-page-width"),
]


@pytest.mark.parametrize(("path", "change"), CONTROLS)
def test_a_control_that_changes_the_view_reaches_the_url_or_the_notice(
    page, e2e_sample_dir, path: str, change: Callable[[Any], None]
):
    sep = "&" if "?" in path else "?"
    open_page(page, path + sep + _scenario_q(e2e_sample_dir).rstrip("&") if _scenario_q(e2e_sample_dir) else path)
    before = _view(page)
    change(page)
    after = _view(page)
    if after[0] != before[0]:
        assert after[1] != before[1] or after[2] != before[2], (
            f"{path}: the view changed ({before[0]} -> {after[0]}) but neither the URL ({after[1]}) nor the "
            f"notice ({after[2]!r}) says so"
        )
    if SCREENSHOTS:
        screenshot(page, f"snapshot_walk_{path.strip('/').split('?')[0]}", full_page=False)

"""Browser helpers of the Conflict triage page's e2e tests: a metric's value, polling, the operator
name and the session's decision database."""

from __future__ import annotations

import re

from tests.support.browser import assert_no_exception, wait_idle


def metric(page, label: str) -> str:
    """The value of the metric labelled ``label``."""
    box = page.get_by_test_id("stMetric").filter(
        has=page.get_by_test_id("stMetricLabel").filter(has_text=re.compile(rf"^{re.escape(label)}$"))
    )
    return box.first.get_by_test_id("stMetricValue").inner_text().strip()


def until(page, cond, what: str, timeout_ms: int = 60_000) -> None:
    """Poll ``cond()`` (a rerun starts a moment after the click that queued it)."""
    for _ in range(timeout_ms // 250):
        if cond():
            return
        page.wait_for_timeout(250)
    raise AssertionError(f"timed out waiting for {what}")


def set_operator(page, name: str) -> None:
    """Type the operator name into the sidebar and wait until the page accepts decisions."""
    op = page.get_by_role("textbox", name="Operator name")
    op.fill(name)
    op.press("Enter")
    btn = page.get_by_role("button", name="Record decision")
    until(page, btn.is_enabled, "the Record decision button to be enabled")
    wait_idle(page)


def use_database(page, path: str) -> None:
    """Point this session at the decision database ``path``."""
    page.get_by_text("Decision database:", exact=False).first.click()
    box = page.get_by_role("textbox", name=re.compile(r"^Database file for this session"))
    box.fill(path)
    box.press("Enter")
    wait_idle(page)
    assert_no_exception(page)
    page.get_by_text(f"Decision database: {path} (this session)").wait_for(timeout=30_000)

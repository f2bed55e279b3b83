"""The Conflict triage page in a real browser: the queue with its counts, a decision
recorded through the form (to a temporary database chosen in the page, so no shared database is
touched), the queue and the envelope conflicts view after it, the exports; screenshots at 1400x900."""

from __future__ import annotations

import json
import os
import re

from tests.support.browser import assert_no_exception, open_page, screenshot, session_page, wait_idle
from tests.support.e2e_conflicts import metric, set_operator, until, use_database


def _record(page, kind_label: str) -> None:
    """Pick a decision kind by its label and record it."""
    page.get_by_text(kind_label, exact=True).click()
    page.get_by_role("button", name="Record decision").click()
    page.get_by_text(re.compile(r"^Recorded decision #\d+")).wait_for(timeout=60_000)
    wait_idle(page)
    assert_no_exception(page)


def test_conflicts_queue_decide_and_views(page, tmp_path):
    open_page(page, "/conflicts")
    db = str(tmp_path / "e2e-triage.sqlite")
    use_database(page, db)
    main = page.get_by_test_id("stMain")
    assert "Conflict triage" in main.inner_text()
    pairs, ties = int(metric(page, "conflict pairs")), int(metric(page, "ties"))
    assert pairs >= 1 and ties >= 1
    assert (metric(page, "decided"), metric(page, "decisions in the log")) == ("0", "0")
    assert metric(page, "undecided") == str(pairs)
    # the first pair of the queue is a tie (ties first) and is selected
    assert "Outcome: tie: neither fact suppressed" in main.inner_text()
    screenshot(page, "conflicts_queue")

    # record a decision: operator in the sidebar, then dismiss the selected (tied) pair
    set_operator(page, "e2e-operator")
    _record(page, "Dismiss: not a conflict")
    text = main.inner_text()
    assert "Recorded decision #1" in text and "dismissed (not a conflict)" in text and "e2e-operator" in text
    assert (metric(page, "decided"), metric(page, "dismissed"), metric(page, "decisions in the log")) == (
        "1",
        "1",
        "1",
    )
    assert metric(page, "ties") == str(ties - 1)
    assert metric(page, "undecided") == str(pairs - 1)
    screenshot(page, "conflicts_decided")

    # this run's envelope conflicts: both texts highlighted, authority arithmetic, the audit event
    page.get_by_role("tab", name="Envelope conflicts (current run)").click()
    wait_idle(page)
    assert_no_exception(page)
    env_text = main.inner_text()
    assert "Run at now =" in env_text
    if "No contradiction among this run's selected facts" not in env_text:
        assert "authority = " in env_text and "audit event" in env_text
        assert page.locator("mark.crp-diff, mark.crp-gap").count() >= 2
    screenshot(page, "conflicts_envelope")

    # exports
    page.get_by_role("tab", name="Export & audit log").click()
    wait_idle(page)
    for label in ("Decisions as JSON", "Decisions as CSV", "Cleaned CKF"):
        assert page.get_by_role("button", name=label).is_visible()
    with page.expect_download() as dl:
        page.get_by_role("button", name="Decisions as JSON").click()
    body = open(dl.value.path(), encoding="utf-8").read()
    assert '"kind": "dismiss"' in body and '"operator": "e2e-operator"' in body
    with page.expect_download() as dl:
        page.get_by_role("button", name="Cleaned CKF").click()
    assert dl.value.suggested_filename.endswith((".cleaned.jsonl", ".cleaned.json", ".cleaned.csv", ".cleaned.zip"))
    assert os.path.getsize(dl.value.path()) > 0
    if dl.value.suggested_filename.endswith(".jsonl"):
        rows = [json.loads(line) for line in open(dl.value.path(), encoding="utf-8") if line.strip()]
        assert rows and all("fact_id" in r and "content" in r for r in rows)
    assert "e2e-operator" in main.inner_text()
    assert_no_exception(page)
    screenshot(page, "conflicts_export", full_page=False)


def test_decisions_reach_a_second_session(browser, streamlit_server, tmp_path):
    """Two browser contexts (two sessions) on the same database file: a decision made in one
    shows in the other after its next run."""
    db = str(tmp_path / "shared.sqlite")
    with session_page(browser, streamlit_server) as a, session_page(browser, streamlit_server) as b:
        for p in (a, b):
            open_page(p, "/conflicts")
            use_database(p, db)
        set_operator(a, "first")
        _record(a, "Accept the arbitration")
        assert metric(a, "decisions in the log") == "1"
        assert metric(b, "decisions in the log") == "0"
        b.get_by_test_id("stRadio").get_by_text("undecided", exact=True).click()  # a rerun of b
        until(b, lambda: metric(b, "decisions in the log") == "1", "session b to see the decision")
        wait_idle(b)
        assert_no_exception(b)
        assert metric(b, "decisions in the log") == "1"
        assert metric(b, "decided") == "1"

"""The engineer's path on their own data in a real browser (1400x900): upload a CKF of another domain,
upload 4 labelled scenario files on Tuning -> Suite, change trials and run Auto-tune, switch tabs and
pages and come back: the uploaded suite stays the suite of every tab, trials keep their value, and the
bundled suite never runs against the uploaded CKF."""

from __future__ import annotations

import re

from tests.support.browser import assert_no_exception, main_text, open_page, screenshot, wait_idle
from tests.support.own_suite import write_own_data

CKF_UPLOADER = '[data-testid="stSidebar"] [data-testid="stFileUploader"]:has-text("upload a CKF") input[type=file]'
SUITE_UPLOADER = '[data-testid="stMain"] [data-testid="stFileUploader"]:has-text("Scenario files") input[type=file]'


def _tab(page, name: str) -> None:
    page.get_by_role("tab", name=name).click()
    wait_idle(page)
    assert_no_exception(page)


def _no_bundled_errors(page) -> None:
    text = main_text(page)
    assert "no fact with id" not in text, text[:3000]
    assert "bundled suite was" not in text and "12 scenario(s)" not in text


def test_an_uploaded_suite_stays_the_suite_of_every_tab(page, tmp_path):
    ckf, scenarios = write_own_data(tmp_path / "own", embedded=False)
    open_page(page, "/tuning")
    page.locator(CKF_UPLOADER).set_input_files(str(ckf))
    wait_idle(page)
    assert_no_exception(page)
    screenshot(page, "own_suite_0_ckf_uploaded", full_page=False)
    sidebar = page.get_by_test_id("stSidebar").inner_text()
    assert "gov.jsonl (uploaded)" in sidebar, sidebar

    _tab(page, "Suite")
    assert "No suite yet: upload scenario files" in main_text(page)
    _no_bundled_errors(page)
    page.locator(SUITE_UPLOADER).set_input_files([str(p) for p in scenarios])
    wait_idle(page)
    assert_no_exception(page)
    text = main_text(page)
    assert "Suite: 4 scenario(s) from the uploaded scenario files" in text, text[:3000]
    assert re.search(r"4 scenario\(s\) in \d+ ms", text)
    screenshot(page, "own_suite_1_suite_tab", full_page=False)

    _tab(page, "Auto-tune")
    main = page.get_by_test_id("stMain")
    assert "Suite: 4 uploaded scenario file(s)" in main_text(page)
    trials = main.get_by_role("spinbutton", name="trials")
    trials.fill("3")
    trials.press("Enter")
    wait_idle(page)
    _no_bundled_errors(page)
    page.get_by_role("button", name="Run auto-tune (3 trials)").click()
    wait_idle(page)
    assert_no_exception(page)
    _no_bundled_errors(page)
    assert re.search(r"Best: trial \d+ of 3", main_text(page)), main_text(page)[:3000]
    screenshot(page, "own_suite_2_autotune", full_page=False)

    _tab(page, "Suite")
    assert "Suite: 4 scenario(s) from the uploaded scenario files" in main_text(page)
    assert main.get_by_role("radio", name="uploaded scenario files").is_checked()

    page.get_by_role("link", name="Overview").first.click()
    wait_idle(page)
    assert_no_exception(page)
    page.get_by_role("link", name="Tuning").first.click()
    wait_idle(page)
    _tab(page, "Auto-tune")
    assert main.get_by_role("spinbutton", name="trials").input_value() == "3"
    assert "Suite: 4 uploaded scenario file(s)" in main_text(page)
    assert re.search(r"Best: trial \d+ of 3", main_text(page))
    _no_bundled_errors(page)
    page.get_by_text("Suite: 4 uploaded scenario file(s)").click()  # open the shared picker
    wait_idle(page)
    screenshot(page, "own_suite_3_autotune_after_page_switch", full_page=False)
    _tab(page, "Suite")
    assert "Suite: 4 scenario(s) from the uploaded scenario files" in main_text(page)
    screenshot(page, "own_suite_4_suite_after_page_switch", full_page=True)

"""The Tuning page's workload views in a real browser on the bundled sample (1400x900): the Suite tab
measures the 12 labelled scenarios, a suite sweep draws every metric with its worst-case band, Auto-tune
runs an Optuna study with its trials plot and Pareto front, and "Apply" puts the best config in the
sidebar, which every page then runs with."""

from __future__ import annotations

import re

import pytest

from tests.support.browser import assert_no_exception, open_page, screenshot, wait_idle


def _main(page):
    return page.get_by_test_id("stMain")


def _bundled(e2e_sample_dir) -> None:
    if not (e2e_sample_dir / "scenarios" / "workload").is_dir():
        pytest.skip("needs the bundled sample suite (sample_ckf/scenarios/ with workload/)")


def test_suite_sweep_autotune_and_apply(page, e2e_sample_dir):
    _bundled(e2e_sample_dir)
    open_page(page, "/tuning")
    main = _main(page)
    page.get_by_role("tab", name="Suite").click()
    wait_idle(page)
    assert_no_exception(page)
    text = main.inner_text()
    assert "The suite at the sidebar config" in text
    assert re.search(r"12 scenario\(s\) in \d+ ms", text), text[:2000]
    assert "Per scenario" in text and "Envelope of scenario" in text
    screenshot(page, "tuning_suite", full_page=False)

    # a suite sweep of about 5 values from 36.5 to 730: the round grid (200, 400, 600: 3 multiples of 200 and 7 of
    # 100 are as close to 5, the larger step wins) and the current 365; one panel per metric, each with the mean
    # line and its worst-case band
    count = main.get_by_role("spinbutton", name="values", exact=True).last  # not the heatmap's "about N values"
    count.fill("5")
    count.press("Enter")
    wait_idle(page)
    page.get_by_role("button", name=re.compile(r"Run suite sweep \(4 values x 12 scenarios\)")).click()
    wait_idle(page)
    assert_no_exception(page)
    assert re.search(r"4 values of ttl_days\.official_documentation x 12 scenarios", main.inner_text())
    plot = main.locator(".js-plotly-plot").filter(has_text="Suite sweep of")
    plot.wait_for(state="visible")
    assert plot.locator("g.trace.scatter").count() == 20  # 10 metrics x (band edge + mean)
    plot.scroll_into_view_if_needed()
    screenshot(page, "tuning_suite_sweep", full_page=False)

    # auto-tune: 8 trials, the study's plots, then apply the best to the sidebar
    page.get_by_role("tab", name="Auto-tune").click()
    wait_idle(page)
    trials = main.get_by_role("spinbutton", name="trials")
    trials.fill("8")
    trials.press("Enter")
    wait_idle(page)
    page.get_by_role("button", name="Run auto-tune (8 trials)").click()
    wait_idle(page)
    assert_no_exception(page)
    text = main.inner_text()
    m = re.search(r"Best: trial (\d+) of 8 \(feasible\)", text)
    assert m, text[:3000]
    assert "Objective recall by trial" in text and "Pareto front" in text
    main.locator(".js-plotly-plot").filter(has_text="by trial").scroll_into_view_if_needed()
    screenshot(page, "tuning_autotune_trials", full_page=False)
    main.locator(".js-plotly-plot").filter(has_text="Pareto front").scroll_into_view_if_needed()
    screenshot(page, "tuning_autotune_pareto", full_page=False)
    if m.group(1) != "0":  # trial 0 is the sidebar config: applying it would change nothing
        page.get_by_role("button", name="Apply the best config to the sidebar").click()
        wait_idle(page)
        assert_no_exception(page)
        assert f"Trial {m.group(1)}'s values are applied in the sidebar" in main.inner_text()
        page.get_by_role("link", name="Overview").first.click()
        wait_idle(page)
        caption = re.search(r"(\d+) config value\(s\) changed from the defaults", _main(page).inner_text())
        assert caption and int(caption.group(1)) >= 1

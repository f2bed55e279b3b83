"""The Conflicts page's Detector quality tab (the operators' decisions as labels for the
value-conflict detector) and the known-conflict banner on Overview and Envelope, with AppTest on
the hand-computed sample of test_page_conflicts."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.support.conflicts_page import QUALITY, decide, open_page, set_operator, show_tab, unmd
from tests.support.paths import APP


def _frames(at: AppTest, column: str):
    return [d.value for d in at.dataframe if column in d.value.columns]


@pytest.mark.usefixtures("triage_env")
def test_quality_tab_counts_operator_labels_per_pattern():
    at = show_tab(open_page(), QUALITY)
    assert any("No pair decided yet" in i.value for i in at.info)
    set_operator(at, "alice")
    decide(at, "E1|E2", "accept")  # an accept takes the arbitration's winner (E1): the form has no winner field
    decide(at, "X1|X2", "dismiss", note="different endpoints")
    decide(at, "T1|T2", "override", winner="T2")
    (per_pattern,) = _frames(show_tab(at, QUALITY), "labelled")
    row = per_pattern.set_index("pattern").loc["NUMBER_CHANGED"]
    # E1/E2 accepted and T1/T2 overridden: true conflicts; X1/X2 dismissed: a false positive
    assert (row.confirmed, row.dismissed, row.labelled) == (2, 1, 3)
    assert row.precision == "0.67"  # 2 / 3
    assert per_pattern.set_index("pattern").loc["DATE_SHIFTED"].precision == "-"  # nothing labelled yet
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["decided pairs flagged"] == "3" and metrics["dismissed (false positives)"] == "1"
    (over,) = [f for f in _frames(at, "text_a") if "operator" in f.columns]
    assert set(zip(over.fact_a, over.decision)) == {("X1", "dismissed"), ("T1", "override: T2 wins")}
    assert (over[over.fact_a == "X1"].note == "different endpoints").all()


@pytest.mark.usefixtures("triage_env")
def test_known_conflict_banner_when_the_winner_is_not_selected():
    at = open_page()
    set_operator(at, "alice")
    decide(at, "E1|E2", "override", winner="E2")  # the operator says E2 wins over E1
    # one anchor: E1 has the best CDR and is selected alone; E2, its known winner, is not
    at2 = AppTest.from_file(APP, default_timeout=120)
    at2.query_params["cfg.envelope_fact_budget"] = "1"
    at2.run()
    for page in ("overview", "envelope"):
        at2.switch_page(f"pages/{page}.py")
        at2.run()
        assert not at2.exception, [e.value for e in at2.exception]
        texts = [unmd(w.value) for w in at2.warning]
        assert any(
            "lose a known conflict" in t
            and "fact 'E1' loses a known conflict" in t
            and "'E2'" in t
            and "operator decision" in t
            and "set known_conflict_action in the sidebar's configuration: pull_winner" in t
            for t in texts
        ), texts

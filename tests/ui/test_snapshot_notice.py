"""The sidebar notice's words: what a snapshot carries (the scenario, decisions), what it only names (an
uploaded CKF: the receiver loads the same file first) and what it does not carry (a page's own view state)."""

from __future__ import annotations

from crp_ui.snapshot import notice_text, uploaded_item

SCEN = "the edited scenario (fanout_width)"
OWN = "the fact table's filters and sort (descending off)"
UPLOAD = uploaded_item("kb.jsonl")


def test_an_uploaded_ckf_is_named_by_a_snapshot_not_carried():
    text = notice_text([UPLOAD, SCEN], [])
    assert text == (
        f"This link does not carry: {UPLOAD}, {SCEN}. A snapshot carries {SCEN}: share one instead of the link. "
        "A snapshot names the uploaded CKF without holding it: whoever opens it loads the same file first."
    )
    assert "carries your uploaded CKF" not in notice_text([UPLOAD], [])


def test_the_pages_own_state_is_set_again_by_hand():
    assert notice_text([OWN], [OWN]).endswith(
        "A snapshot does not carry it either: set it again after opening the link."
    )
    two = notice_text([OWN, "the sweep's settings (values 12)"], [OWN, "the sweep's settings (values 12)"])
    assert two.endswith("A snapshot does not carry them either: set them again after opening the link.")
    assert notice_text([SCEN, OWN], [OWN]).endswith(f"A snapshot carries {SCEN}; set the rest again after opening it.")

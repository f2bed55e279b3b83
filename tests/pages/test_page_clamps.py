"""Settings the run brought to the data are said on the pages (docs/decisions/hardening.md, clamping):
a value the user set (here from a shared link) as a warning naming asked and used values, a default
that meets a small CKF as a quiet caption."""

from __future__ import annotations

from tests.support.pages import run_page

PAGES = ("overview", "envelope", "breakdown", "graph")


def test_a_user_value_clamped_to_the_data_is_a_warning_on_every_run_page(ui_env):
    for page in PAGES:
        at = run_page(page, params={"cfg.candidate_k": "500"})
        warn = [w.value for w in at.warning if "adjusted to the data" in w.value]
        assert len(warn) == 1, (page, [w.value for w in at.warning])
        # 24 synthetic facts, 4 of them DELETED: 20 retrievable
        assert "candidate\\_k 500 clamped to 20" in warn[0], warn[0]


def test_defaults_meeting_a_small_ckf_are_a_caption_not_a_warning(ui_env):
    at = run_page("overview")
    assert not [w for w in at.warning if "adjusted to the data" in w.value]
    assert any("Adjusted to the data" in c.value and "candidate\\_k 50 clamped to 20" in c.value for c in at.caption)

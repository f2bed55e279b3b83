"""A dashboard link with a huge number (``?cfg.cdr_min_relevance=1000...0``): the config layer raises
ConfigError for it (``float(10**400)`` raised OverflowError, which the URL codec did not catch), so the
app opens on the defaults with a warning naming the key (docs/decisions/hardening.md, "Huge inputs")."""

from __future__ import annotations

from crp_core.config import CRPConfig
from tests.support.pages import run_page


def test_a_link_with_a_400_digit_number_warns_and_keeps_the_defaults(ui_env):
    at = run_page("overview", params={"cfg.cdr_min_relevance": "1" + "0" * 400, "cfg.ttl_days.news": "1" + "0" * 5000})
    assert not at.exception
    warnings = " ".join(w.value for w in at.sidebar.warning)
    assert "cdr\\_min\\_relevance" in warnings and "401 digits" in warnings
    assert "ttl\\_days\\.news" in warnings and "more than 4300 digits" in warnings
    assert at.session_state["crp.config"] == CRPConfig()

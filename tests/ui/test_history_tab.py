"""Who a dashboard suite run is kept as (crp_ui.history_tab.operator): the operator the team's identity mode
gives (the same logic as triage), the server's OS user in single mode without a typed name, ``anonymous``
in a team mode without one."""

from __future__ import annotations

import pytest

from crp_core import Identity, Role
from crp_ui import history_tab


@pytest.mark.parametrize(
    ("who", "expected"),
    [
        (
            Identity(mode="proxy", operator="alice@example.org", source="the X-Forwarded-Email header"),
            "alice@example.org",
        ),
        (
            Identity(mode="oidc", operator="bob@example.org", source="the login's email", role=Role.VIEWER),
            "bob@example.org",
        ),
        (Identity(mode="single", operator="cy", source="the name typed"), "cy"),
        (Identity(mode="oidc", operator=None, source="the login", missing="not logged in: read-only"), "anonymous"),
        (Identity(mode="proxy", operator=None, source="the header", missing="no header"), "anonymous"),
        (
            Identity(mode="single", operator=None, source="the name typed", missing="no operator name entered yet"),
            "os-user",
        ),
    ],
)
def test_the_run_is_kept_as_the_sessions_operator(monkeypatch, who, expected):
    monkeypatch.setattr(history_tab.team, "identity", lambda: who)
    monkeypatch.setattr(history_tab.getpass, "getuser", lambda: "os-user")
    assert history_tab.operator() == expected

"""AppTest of who records on the Conflicts page under each identity mode of the team file
($CRP_INSPECT_TEAM): single (the typed name, normalised), proxy (the configured header of the request;
without it the session is read-only), oidc (st.user); the roles (a viewer sees every record control
disabled with the reason, an admin reverts); a refused team file makes every session read-only.

AppTest cannot send request headers, so the proxy tests replace crp_ui.team.header_values, the one
function that reads ``st.context.headers``."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from crp_core.triage import DecisionStore
from crp_ui import team
from tests.support.conflicts_page import K, decide, open_page, set_operator, unmd
from tests.support.paths import APP

PK = "T1|T2"
ROLES = """
[roles]
default = "viewer"
admin = ["root@example.org"]
operator = ["bob@example.org", "ann@example.org"]
"""


def write_team(tmp: Path, monkeypatch: pytest.MonkeyPatch, identity: str, extra: str = ROLES) -> Path:
    p = tmp / f"team-{identity}.toml"
    p.write_text(f'identity = "{identity}"\nproxy_header = "X-Forwarded-Email"\n{extra}', encoding="utf-8")
    monkeypatch.setenv("CRP_INSPECT_TEAM", str(p))
    return p


def as_proxy_user(monkeypatch: pytest.MonkeyPatch, *values: str) -> None:
    """The request carries these values of X-Forwarded-Email (none: the header is absent)."""
    monkeypatch.setattr(team, "header_values", lambda name: list(values) if name == "X-Forwarded-Email" else [])


def record_controls(at: AppTest, pk: str = PK) -> dict[str, bool]:
    """key -> disabled, for every control of the form that records."""
    keys = [f"{K}submit.{pk}", f"{K}submit_next.{pk}"] + [
        f"{K}key.{k}.{pk}" for k in ("accept", "override", "mark_status", "dismiss")
    ]
    return {k: at.button(key=k).disabled for k in keys}


def warnings(at: AppTest) -> list[str]:
    return [unmd(w.value) for w in (*at.warning, *at.sidebar.warning)]


def test_single_mode_records_the_normalised_typed_name(triage_env):
    at = open_page()
    assert all(record_controls(at).values())
    assert at.radio(key=f"{K}kind.{PK}").disabled and at.text_area(key=f"{K}note.{PK}").disabled
    set_operator(at, "  ALICE   Smith ")
    assert not any(record_controls(at).values())
    assert not at.radio(key=f"{K}kind.{PK}").disabled and not at.text_area(key=f"{K}note.{PK}").disabled
    assert any(unmd(c.value) == "Recorded as **alice smith** · operator" for c in at.sidebar.caption)
    decide(at, PK, "dismiss")
    with DecisionStore(str(triage_env), create=False) as store:
        assert [d.operator for d in store.all()] == ["alice smith"]


def test_proxy_mode_takes_the_operator_from_the_header(triage_env, tmp_path, monkeypatch):
    write_team(tmp_path, monkeypatch, "proxy")
    as_proxy_user(monkeypatch, "Bob@Example.org")
    at = open_page()
    assert not [w for w in at.sidebar.text_input if w.key == "crp.w.operator"]  # no name to type
    assert any(
        unmd(c.value) == "Operator **`bob@example.org`** (the X-Forwarded-Email header) · role **operator**"
        for c in at.sidebar.caption
    )
    assert not any(record_controls(at).values())
    decide(at, PK, "dismiss", note="same cache, two runners")
    with DecisionStore(str(triage_env), create=False) as store:
        assert [(d.operator, d.note) for d in store.all()] == [("bob@example.org", "same cache, two runners")]


def test_proxy_mode_without_the_header_is_read_only(triage_env, tmp_path, monkeypatch):
    write_team(tmp_path, monkeypatch, "proxy")
    as_proxy_user(monkeypatch)
    at = open_page()
    assert all(record_controls(at).values())
    want = "the request carries no X-Forwarded-Email header (not through the authenticating proxy): read-only"
    assert f"Read-only: {want}" in warnings(at)  # the sidebar
    assert f"Read-only: {want}" in [unmd(w.value) for w in at.warning]  # beside the form
    # a typed name is no identity in proxy mode, and a header sent twice is refused
    as_proxy_user(monkeypatch, "mallory@example.org", "bob@example.org")
    at.run()
    assert all(record_controls(at).values())
    assert any("header 2 times: read-only" in w for w in warnings(at))


def test_a_viewer_sees_every_record_control_disabled_with_the_reason(triage_env, tmp_path, monkeypatch):
    write_team(tmp_path, monkeypatch, "proxy")
    as_proxy_user(monkeypatch, "vic@example.org")  # not listed: the default role, viewer
    at = open_page()
    assert all(record_controls(at).values())
    reason = "Read-only: `vic@example.org` is a viewer: a viewer sees everything and records nothing"
    assert reason in [unmd(w.value) for w in at.warning]
    # the page is all there: the queue, the pair, the form's fields, none of them editable
    assert at.selectbox(key=K + "pair").value == PK
    assert at.radio(key=f"{K}kind.{PK}").disabled
    assert at.text_area(key=f"{K}note.{PK}").disabled
    at.session_state[f"{K}kind.{PK}"] = "mark_status"  # the kind's fields are drawn disabled too
    at.run()
    assert at.selectbox(key=f"{K}target.{PK}").disabled and at.selectbox(key=f"{K}status.{PK}").disabled
    assert not at.exception


def test_oidc_mode_takes_the_login_and_is_read_only_logged_out(triage_env, tmp_path, monkeypatch):
    write_team(tmp_path, monkeypatch, "oidc")
    at = AppTest.from_file(APP, default_timeout=120)
    at.user = {"is_logged_in": True, "email": "Ann@Example.org", "name": "Ann"}
    at.run()
    at.switch_page("pages/conflicts.py")
    at.run()
    assert not at.exception
    assert any(
        unmd(c.value) == "Operator **`ann@example.org`** (the login's email) · role **operator**"
        for c in at.sidebar.caption
    )
    assert at.sidebar.button(key="crp.w.logout")
    assert not any(record_controls(at).values())
    out = AppTest.from_file(APP, default_timeout=120)
    out.user = {"is_logged_in": False}
    out.run()
    out.switch_page("pages/conflicts.py")
    out.run()
    assert all(record_controls(out).values())
    assert "Read-only: not logged in: read-only" in warnings(out)
    assert out.sidebar.button(key="crp.w.login")


def test_a_refused_team_file_makes_every_session_read_only(triage_env, tmp_path, monkeypatch):
    write_team(tmp_path, monkeypatch, "proxy", "review_quorum = 0\n")
    as_proxy_user(monkeypatch, "root@example.org")
    at = open_page()
    assert all(record_controls(at).values())
    side = [unmd(e.value) for e in at.sidebar.error]
    assert len(side) == 1 and side[0].startswith("Team file refused, every session is read-only: team file")
    assert "review_quorum" in side[0]

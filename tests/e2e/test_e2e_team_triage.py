"""Two operators on one shared queue, in a real browser against a real ``streamlit run`` in ``proxy`` mode:
each browser context reaches it through a local stand-in for an authenticating proxy that sets the header
(``X-Forwarded-Email``) on every request (tests/support/header_proxy.py), as a context of its own (its own
session). Alice dismisses k8s-0026 / k8s-0027 while Bob has the pair open:
Bob's override is refused with who decided what and when, and one click on "review and confirm" records
it; Alice's open page learns of it without a reload (the polling fragment); the audit log shows the pair,
the KB, both operators with their roles and a verified hash chain; "Claim next" hands the two operators
different pairs; a viewer and a request without the header are read-only with the reason shown.
Screenshots at 1400x900 in ``$CRP_E2E_SCREENSHOTS``."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.e2e.conftest import serve
from tests.support.browser import (
    assert_no_exception,
    main_text,
    open_page,
    screenshot,
    session_page,
    sidebar_text,
    wait_idle,
)
from tests.support.e2e_conflicts import metric, until
from tests.support.header_proxy import header_proxy

PAIR = "k8s-0026|k8s-0027"
HEADER = "X-Forwarded-Email"
TEAM = f"""identity = "proxy"
proxy_header = "{HEADER}"
refresh_seconds = 2.0
lease_seconds = 300

[roles]
default = "operator"
admin = ["alice@example.org"]
viewer = ["vic@example.org"]
"""


@pytest.fixture(scope="module")
def team_server(tmp_path_factory: pytest.TempPathFactory, e2e_sample_dir: Path) -> Iterator[str]:
    """A server of its own in proxy mode (the team file above) with a fresh decision database."""
    d = tmp_path_factory.mktemp("team")
    (d / "team.toml").write_text(TEAM, encoding="utf-8")
    mp = pytest.MonkeyPatch()
    mp.setenv("CRP_INSPECT_TEAM", str(d / "team.toml"))
    try:
        with serve(e2e_sample_dir, d / "streamlit.log") as url:
            yield url
    finally:
        mp.undo()


@contextlib.contextmanager
def as_user(browser: Any, base_url: str, email: str | None) -> Iterator[Any]:
    """A page in a context of its own whose requests carry ``X-Forwarded-Email: email`` (None: no header), set by a
    local stand-in for the authenticating proxy on every request, the WebSocket handshake included."""
    with header_proxy(base_url, HEADER, email) as url, session_page(browser, url) as pg:
        yield pg


def _open_pair(pg: Any) -> None:
    open_page(pg, f"/conflicts?scenario=etcd_upgrade.json&pair={quote(PAIR)}")
    if "k8s-0026" not in main_text(pg):
        pytest.skip("the server does not serve the bundled sample_ckf/ (k8s-0026 / k8s-0027)")


def _choose(pg: Any, label: str) -> None:
    pg.get_by_text(label, exact=True).click()
    wait_idle(pg)


def test_two_operators_the_refusal_the_confirm_the_polling_and_the_audit_log(browser, team_server):
    with (
        as_user(browser, team_server, "alice@example.org") as alice,
        as_user(browser, team_server, "Bob@Example.org") as bob,
    ):
        _open_pair(alice)
        _open_pair(bob)
        assert "Recording as alice@example.org (the X-Forwarded-Email header) · role admin." in main_text(alice)
        assert "Recording as bob@example.org (the X-Forwarded-Email header) · role operator." in main_text(bob)
        assert "Operator name" not in sidebar_text(bob)  # nothing to type in proxy mode
        # both have the pair open; Alice dismisses it, Bob overrides it with k8s-0026 as the winner
        _choose(alice, "Dismiss: not a conflict")
        _choose(bob, "Override the winner")
        form = bob.get_by_test_id("stForm")
        form.get_by_test_id("stSelectbox").click()
        bob.get_by_role("option", name=re.compile(r"^A · k8s-0026$")).click()
        alice.get_by_role("button", name="Record decision").click()
        alice.get_by_text(re.compile(r"^Recorded decision #1 on k8s-0026 ↔ k8s-0027: dismissed")).wait_for()
        bob.get_by_role("button", name="Record decision").click()
        refusal = bob.get_by_text(re.compile(r"^Not recorded: this pair changed after the form was drawn"))
        refusal.wait_for()
        wait_idle(bob)
        text = main_text(bob)
        assert re.search(
            r"alice@example\.org \(admin, dashboard\) recorded decision #1 at \S+: dismissed \(not a conflict\)", text
        ), text
        assert "Yours was: override: k8s-0026 wins." in text
        assert metric(bob, "decisions in the log") == "1"  # nothing of Bob's was written
        refusal.scroll_into_view_if_needed()
        screenshot(bob, "team_refusal", full_page=False)
        # one click records Bob's decision over Alice's
        bob.get_by_role("button", name="Review and confirm: record mine over #1").click()
        bob.get_by_text(re.compile(r"^Recorded decision #2 on k8s-0026 ↔ k8s-0027: override: k8s-0026 wins")).wait_for()
        assert_no_exception(bob)
        # Alice's page learns of it without a reload (polling every 2 s)
        until(alice, lambda: "This pair changed since you opened it" in main_text(alice), "Alice's page to poll")
        wait_idle(alice)
        assert metric(alice, "decisions in the log") == "2"
        assert "the latest #2 by bob@example.org" in main_text(alice)
        alice.get_by_text("This pair changed since you opened it", exact=False).scroll_into_view_if_needed()
        screenshot(alice, "team_changed_since_opened", full_page=False)
        # the audit log: pair, KB, operator, role, origin; the chain verifies
        alice.get_by_role("tab", name="Export & audit log").click()
        wait_idle(alice)
        alice.get_by_text("Hash chain verified: 2 entries").wait_for()
        log_text = main_text(alice)
        assert "Audit log (oldest first): 2 of 2 decision(s), this knowledge base's" in log_text
        grid = alice.get_by_test_id("stDataFrame").last
        grid.scroll_into_view_if_needed()
        screenshot(alice, "team_audit_log", full_page=False)
        assert_no_exception(alice)


def test_claim_next_gives_two_operators_different_pairs(browser, team_server):
    with (
        as_user(browser, team_server, "carol@example.org") as carol,
        as_user(browser, team_server, "dan@example.org") as dan,
    ):
        for pg in (carol, dan):
            open_page(pg, "/conflicts?scenario=etcd_upgrade.json")
        carol.get_by_role("button", name="Claim next").click()
        got = carol.get_by_text(re.compile(r"^Claimed (.+) until .*: the others skip it until then\."))
        got.wait_for()
        carol_pair = re.match(r"^Claimed (\S+) until", got.inner_text()).group(1)
        dan.get_by_role("button", name="Claim next").click()
        got = dan.get_by_text(re.compile(r"^Claimed (.+) until .*: the others skip it until then\."))
        got.wait_for()
        dan_pair = re.match(r"^Claimed (\S+) until", got.inner_text()).group(1)
        assert carol_pair != dan_pair
        # Carol's pair, opened by Dan: marked as hers (the queue's state column says the same)
        open_page(dan, f"/conflicts?scenario=etcd_upgrade.json&pair={quote(carol_pair)}")
        held = dan.get_by_text(re.compile(r"^This pair is held by carol@example\.org \(\d+ s left\); you may still"))
        held.wait_for()
        held.scroll_into_view_if_needed()
        screenshot(dan, "team_claims", full_page=False)


@pytest.mark.parametrize(
    ("email", "reason"),
    [
        ("vic@example.org", "Read-only: vic@example.org is a viewer: a viewer sees everything and records nothing"),
        (None, "Read-only: the request carries no X-Forwarded-Email header (not through the authenticating proxy)"),
    ],
)
def test_a_viewer_and_a_request_without_the_header_are_read_only(browser, team_server, email, reason):
    with as_user(browser, team_server, email) as pg:
        _open_pair(pg)
        pg.get_by_text(reason, exact=False).first.scroll_into_view_if_needed()
        assert reason in main_text(pg)
        for name in ("Record decision", "Record and next", "Claim next"):
            assert pg.get_by_role("button", name=name).is_disabled(), name
        assert "Conflict triage" in main_text(pg)
        if email:
            screenshot(pg, "team_viewer", full_page=False)
        assert_no_exception(pg)


def test_keyboard_d_then_n_dismisses_and_opens_the_next_pair(browser, team_server):
    with as_user(browser, team_server, "erin@example.org") as pg:
        _open_pair(pg)
        pg.get_by_role("heading", name="Conflict triage").click()  # focus on the page, not in a text field
        pg.keyboard.press("d")
        wait_idle(pg)
        assert pg.get_by_role("radio", name="Dismiss: not a conflict").is_checked()
        pg.keyboard.press("n")
        pg.get_by_text(re.compile(r"^Recorded decision #\d+ on k8s-0026 ↔ k8s-0027: dismissed")).wait_for()
        wait_idle(pg)
        assert "pair=k8s-0026" not in pg.url.replace("%7C", "|")  # the next pair of the queue is open
        assert_no_exception(pg)

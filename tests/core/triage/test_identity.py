"""The operator of a dashboard session under each identity mode, and its role (crp_core.triage.identity)."""

from __future__ import annotations

from dataclasses import replace

from crp_core.triage.identity import Identity, from_headers, from_oidc_user, from_typed_name, resolve_identity
from crp_core.triage.roles import Role, role_book
from crp_core.triage.team import SINGLE

TEAM = replace(
    SINGLE,
    identity="proxy",
    proxy_header="X-Forwarded-Email",
    roles=role_book([("root@example.org", "admin"), ("vic@example.org", "viewer")], default="operator"),
)


def headers(values: dict[str, list[str]]):
    return lambda name: values.get(name.lower(), [])


def test_single_mode_normalises_the_typed_name():
    assert from_typed_name("  ALICE   Smith ") == Identity("single", "alice smith", "the name typed")
    empty = from_typed_name("   ")
    assert (empty.operator, empty.missing) == (None, "no operator name entered yet")
    bad = from_typed_name("eve\x1b[2J")
    assert bad.operator is None and bad.missing.startswith("the name typed refused: must be a single line")
    who = resolve_identity(SINGLE, typed="Bob", header_values=headers({"x-forwarded-email": ["root@example.org"]}))
    # single mode: an operator, who may revert their own decisions (test_team.py)
    assert (who.operator, who.role, who.can_record, who.can_revert) == ("bob", Role.OPERATOR, True, True)
    assert who.refusal() is None


def test_proxy_mode_reads_the_configured_header_only():
    who = resolve_identity(
        TEAM, typed="root@example.org", header_values=headers({"x-forwarded-email": ["Bob@Example.org"]})
    )
    assert (who.mode, who.operator, who.source, who.role) == (
        "proxy",
        "bob@example.org",
        "the X-Forwarded-Email header",
        Role.OPERATOR,
    )
    admin = resolve_identity(TEAM, header_values=headers({"x-forwarded-email": ["root@example.org"]}))
    assert (admin.role, admin.can_revert) == (Role.ADMIN, True)
    viewer = resolve_identity(TEAM, header_values=headers({"x-forwarded-email": ["VIC@example.org"]}))
    assert (viewer.role, viewer.can_record) == (Role.VIEWER, False)
    assert viewer.refusal() == "vic@example.org is a viewer: a viewer sees everything and records nothing"
    # the typed name is never read in proxy mode: without the header there is no operator
    none = resolve_identity(TEAM, typed="root@example.org")
    assert none.operator is None and not none.can_record
    assert none.refusal() == (
        "the request carries no X-Forwarded-Email header (not through the authenticating proxy): read-only"
    )


def test_proxy_mode_refuses_a_repeated_or_empty_header():
    twice = from_headers(["mallory@example.org", "bob@example.org"], "X-Forwarded-Email")
    assert twice.operator is None
    assert twice.missing == "the request carries the X-Forwarded-Email header 2 times: read-only"
    assert from_headers(["  "], "X-Forwarded-Email").missing == "the X-Forwarded-Email header is empty: read-only"
    assert from_headers(["a\nb"], "X-Forwarded-Email").operator is None


def test_oidc_mode_takes_the_email_of_the_login():
    team = replace(TEAM, identity="oidc")
    who = resolve_identity(team, user={"is_logged_in": True, "email": "Root@Example.org", "sub": "123"})
    assert (who.operator, who.source, who.role) == ("root@example.org", "the login's email", Role.ADMIN)
    sub = from_oidc_user({"is_logged_in": True, "sub": "u-42"})
    assert (sub.operator, sub.source) == ("u-42", "the login's sub")
    out = resolve_identity(team, typed="bob", user={"is_logged_in": False, "email": "bob@example.org"})
    assert (out.operator, out.refusal()) == (None, "not logged in: read-only")
    assert from_oidc_user({"is_logged_in": True}).missing == "the login gave neither an email nor a subject"
    assert resolve_identity(team).operator is None

"""Operators' names, roles and the team file (crp_core.decisions.normalise_operator, crp_core.triage.roles,
crp_core.triage.team)."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crp_core.decisions import Decision, DecisionError, DecisionSet, normalise_operator, validate_decision
from crp_core.errors import ConfigError
from crp_core.triage.roles import (
    PermissionRefused,
    Role,
    RoleBook,
    TeamConfigError,
    check_role,
    load_roles,
    role_book,
)
from crp_core.triage.team import SINGLE, TEAM_ENV, TeamConfig, load_team_config


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("alice", "alice"),
        ("ALICE", "alice"),
        ("  Alice   Smith ", "alice smith"),
        ("Ali\u0301ce", "ali\u0301ce".replace("i\u0301", "\u00ed")),  # NFC: i + combining acute = í
        ("STRASSE", "strasse"),
        ("Straße", "strasse"),  # casefold, not lower
        ("bob@Example.ORG", "bob@example.org"),
    ],
)
def test_normalise_operator(raw, want):
    assert normalise_operator(raw) == want


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("", "required"),
        ("   ", "required"),
        ("a\tb", "U+0009"),
        ("a\x1b[2Jb", "U+001B"),
        ("a\u202eb", "U+202E"),
        ("x" * 201, "longer than 200"),
        (3, "must be a string"),
    ],
)
def test_normalise_operator_refuses(raw, said):
    with pytest.raises(DecisionError, match="field 'operator'") as e:
        normalise_operator(raw)
    assert said in str(e.value)


@given(st.text(min_size=1, max_size=40))
def test_normalise_is_idempotent(name):
    try:
        once = normalise_operator(name)
    except DecisionError:
        return
    assert normalise_operator(once) == once


def test_a_new_decision_has_its_operator_normalised_and_read_back_kept():
    d = validate_decision(Decision.dismiss("A", "B", operator="  ALICE  Smith"))
    assert d.operator == "alice smith"
    assert (d.role, d.origin, d.os_user, d.based_on, d.reverts) == ("operator", "cli", None, None, None)
    old = validate_decision(Decision.dismiss("A", "B", operator="ALICE", origin="migrated"), new=False)
    assert old.operator == "ALICE"


@pytest.mark.parametrize(
    ("decision", "field", "said"),
    [
        (Decision.dismiss("A", "B", operator="a", role="boss"), "role", "unknown role 'boss'"),
        (Decision.dismiss("A", "B", operator="a", origin="migrated"), "origin", "unknown origin 'migrated'"),
        (Decision.dismiss("A", "B", operator="a", based_on=-1), "based_on", ">= 0"),
        (Decision.dismiss("A", "B", operator="a", based_on=True), "based_on", ">= 0"),
        (Decision.dismiss("A", "B", operator="a", reverts=3), "reverts", "only a revert entry"),
        (Decision.revert("A", "B", reverts=3, operator="a", reason="  "), "note", "says why"),
        (Decision.revert("A", "B", reverts=0, operator="a", reason="typo"), "reverts", ">= 1"),
        (Decision.dismiss("A", "B", operator="a", os_user="x\ny"), "os_user", "U+000A"),
        (Decision.dismiss("A", "B", operator="a", entry_hash="ab"), "entry_hash", "stamped by the store"),
    ],
)
def test_team_fields_are_validated(decision, field, said):
    with pytest.raises(DecisionError) as e:
        validate_decision(decision)
    assert [f for f, _ in e.value.problems] == [field]
    assert said in str(e.value)


def test_a_revert_takes_the_decision_back_in_force():
    log = [
        Decision.override("A", "B", winner="A", operator="ann", id=1, decided_at="t1"),
        Decision.dismiss("A", "B", operator="bob", id=2, decided_at="t2"),
        Decision.mark_status("C", "D", fact="C", status="STALE", operator="bob", id=3, decided_at="t3"),
        Decision.revert("A", "B", reverts=2, operator="root", reason="wrong pair", id=4, decided_at="t4"),
        Decision.revert("C", "D", reverts=3, operator="root", reason="typo", id=5, decided_at="t5"),
    ]
    ds = DecisionSet.from_decisions(log)
    assert {k: dict(v) for k, v in ds.pair_decisions.items()} == {"A|B": {"kind": "override", "winner": "A"}}
    assert dict(ds.statuses) == {}
    assert ds.latest["A|B"].id == 1 and "C|D" not in ds.latest
    assert sorted(ds.reverted) == [2, 3] and ds.reverted[2].id == 4
    assert ds.count == 5


ROLES_TOML = """\
# the team's roles
default = "viewer"
admin = ["Alice@Example.org"]
operator = ["bob", "Carol  Jones"]
"""


def test_load_roles(tmp_path):
    p = tmp_path / "roles.toml"
    p.write_text(ROLES_TOML)
    book = load_roles(p)
    assert dict(book.members) == {"alice@example.org": Role.ADMIN, "bob": Role.OPERATOR, "carol jones": Role.OPERATOR}
    assert book.default is Role.VIEWER
    assert book.role_of("ALICE@example.org") is Role.ADMIN
    assert book.role_of("carol   JONES") is Role.OPERATOR
    assert book.role_of("mallory") is Role.VIEWER


@pytest.mark.parametrize(
    ("text", "problems"),
    [
        (
            'default = "boss"\n',
            ["line 1, field 'default': unknown role 'boss' (expected one of viewer, operator, admin)"],
        ),
        ('admin = "alice"\n', ["line 1, field 'admin': must be a list of operator names, got str"]),
        (
            'admin = ["alice"]\noperator = ["ALICE"]\n',
            ["line 2, field 'operator': 'alice' is listed as admin already"],
        ),
        ('\n\nadmins = ["a"]\n', ["line 3, field 'admins': unknown key (expected default, admin, operator, viewer)"]),
        ('viewer = ["ok", ""]\n', ["line 1, field 'viewer[1]': the operator's name is required (got an empty value)"]),
        ("a = 1\nb = =\n", None),
    ],
)
def test_bad_roles_files_name_the_line_and_key(tmp_path, text, problems):
    p = tmp_path / "roles.toml"
    p.write_text(text)
    with pytest.raises(TeamConfigError) as e:
        load_roles(p)
    assert isinstance(e.value, ConfigError)
    if problems is None:
        assert [(q.line, q.field) for q in e.value.problems] == [(2, "toml")]
    else:
        assert [str(q) for q in e.value.problems] == problems


def test_permissions():
    book = role_book([("root", "admin"), ("vic", "viewer")])
    dismiss = Decision.dismiss("A", "B", operator="Vic")
    with pytest.raises(PermissionRefused) as e:
        book.check(dismiss)
    assert str(e.value) == (
        "permission refused: field 'role': 'Vic' is viewer: a viewer sees the decisions but records none"
    )
    assert book.check(Decision.dismiss("A", "B", operator="ann")) is Role.OPERATOR
    revert = Decision.revert("A", "B", reverts=1, operator="ann", reason="x")
    with pytest.raises(PermissionRefused, match="only an admin reverts"):
        book.check(revert)
    assert check_role(revert, "admin") is Role.ADMIN
    assert RoleBook().role_of("anyone") is Role.OPERATOR


def test_team_config_defaults_and_env(tmp_path, monkeypatch):
    monkeypatch.delenv(TEAM_ENV, raising=False)
    assert load_team_config() is SINGLE
    assert (SINGLE.identity, SINGLE.proxy_header, SINGLE.review_quorum, SINGLE.lease_seconds) == (
        "single",
        "X-Forwarded-Email",
        1,
        600,
    )
    (tmp_path / "roles.toml").write_text(ROLES_TOML)
    team = tmp_path / "team.toml"
    team.write_text(
        'identity = "proxy"\nproxy_header = "X-Auth-User"\nreview_quorum = 2\nlease_seconds = 120\n'
        'refresh_seconds = 2\nroles_file = "roles.toml"\n'
    )
    monkeypatch.setenv(TEAM_ENV, str(team))
    cfg = load_team_config()
    assert cfg == TeamConfig(
        identity="proxy",
        proxy_header="X-Auth-User",
        roles=load_roles(tmp_path / "roles.toml"),
        review_quorum=2,
        lease_seconds=120,
        refresh_seconds=2.0,
        source=str(team),
    )
    inline = tmp_path / "inline.toml"
    inline.write_text('identity = "oidc"\n[roles]\ndefault = "viewer"\nadmin = ["root"]\n')
    cfg = load_team_config(inline)
    assert cfg.identity == "oidc" and cfg.roles.role_of("ROOT") is Role.ADMIN and cfg.roles.default is Role.VIEWER


@pytest.mark.parametrize(
    ("text", "problems"),
    [
        ('identity = "ldap"\n', ["line 1, field 'identity': must be one of single, proxy, oidc, got 'ldap'"]),
        (
            "review_quorum = 0\nlease_seconds = 1.5\n",
            [
                "line 1, field 'review_quorum': must be a whole number from 1 to 100, got 0",
                "line 2, field 'lease_seconds': must be a whole number of seconds, 1 to 604800, got 1.5",
            ],
        ),
        (
            'proxy_header = "X Bad"\n',
            ["line 1, field 'proxy_header': must be an HTTP header name (letters, digits, '-'), got 'X Bad'"],
        ),
        (
            "refresh = 3\n",
            [
                "line 1, field 'refresh': unknown key (expected identity, proxy_header, review_quorum, "
                "lease_seconds, refresh_seconds, roles_file, roles)"
            ],
        ),
        ("[roles]\nadmin = [1]\n", ["line 2, field 'roles.admin[0]': must be a string, got int"]),
    ],
)
def test_bad_team_files_name_the_line_and_key(tmp_path, text, problems):
    p = tmp_path / "team.toml"
    p.write_text(text)
    with pytest.raises(TeamConfigError) as e:
        load_team_config(p)
    assert [str(q) for q in e.value.problems] == problems
    assert str(p) in str(e.value)


def test_a_missing_team_file_is_refused(tmp_path):
    with pytest.raises(TeamConfigError, match="cannot read it: No such file or directory"):
        load_team_config(tmp_path / "nope.toml")


def test_single_mode_identity_reverts_its_own_decisions_only():
    from crp_core.triage.identity import resolve_identity

    mine = Decision.accept("A", "B", winner="A", operator="Dana")
    mine = dataclasses.replace(mine, id=4)
    theirs = dataclasses.replace(Decision.dismiss("A", "B", operator="tom"), id=5)
    who = resolve_identity(SINGLE, typed="dana")
    assert (who.role, who.can_revert) == (Role.OPERATOR, True)
    assert who.revert_refusal(mine) is None
    assert who.revert_refusal(theirs) == "only an admin reverts another operator's decision (#5 is tom's)"
    # a team file without roles: everybody an operator, and only an admin reverts (nobody, here)
    team = resolve_identity(TeamConfig(), typed="dana")
    assert (team.can_revert, team.revert_refusal(mine)) == (False, "only an admin reverts a decision")
    assert resolve_identity(SINGLE).can_revert is False  # no name typed: read-only

"""``crp-inspect triage`` as a team: record's CKF, OS user and origin; --based-on; roles from --roles or
$CRP_INSPECT_TEAM; an admin's revert; verify and the JSONL log; PostgreSQL URLs as --db."""

from __future__ import annotations

import getpass
import json

import pytest

from crp_core.triage import DecisionStore
from tests.core.triage.conftest import raw_sql
from tests.support.postgres import postgres_server, postgres_url  # noqa: F401  fixtures
from tests.support.triage_cli import cli, record

ROLES = 'default = "viewer"\nadmin = ["Root"]\noperator = ["ann", "bob"]\n'


@pytest.fixture(params=("sqlite", "postgresql"))
def db(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "d.sqlite")
    return str(request.getfixturevalue("postgres_url"))


def test_record_stamps_the_kb_the_os_user_and_the_origin(capsys, db, ckf):
    d = record(capsys, db, "--pair", "F2", "F1", "--kind", "dismiss", "--operator", " ANN ", "--ckf", ckf)
    assert {k: d[k] for k in ("id", "operator", "role", "origin", "os_user", "kb_name", "based_on", "reverts")} == {
        "id": 1,
        "operator": "ann",
        "role": "operator",
        "origin": "cli",
        "os_user": getpass.getuser(),
        "kb_name": "kb.jsonl",
        "based_on": None,
        "reverts": None,
    }
    assert d["prev_hash"] == "0" * 64 and len(d["entry_hash"]) == 64


def test_based_on_refuses_a_stale_decision(capsys, db, ckf):
    base = ("--pair", "F1", "F2", "--ckf", ckf)
    record(capsys, db, *base, "--kind", "override", "--winner", "F2", "--operator", "ann", "--based-on", "0")
    code, out, err = cli(
        capsys, "record", "--db", db, *base, "--kind", "dismiss", "--operator", "bob", "--based-on", "0"
    )
    assert code == 2 and out == ""
    assert err.startswith(
        "crp-inspect: error: pair [F1 | F2] changed since it was shown (none): ann (operator, cli) recorded #1 "
        "override (winner F2) at "
    )
    assert err.endswith("; review it and confirm again (to record yours over it: --based-on 1)\n")
    d = record(capsys, db, *base, "--kind", "dismiss", "--operator", "bob", "--based-on", "1")
    assert (d["id"], d["based_on"]) == (2, 1)


def test_roles_from_a_file_or_the_team_file(capsys, db, ckf, tmp_path, monkeypatch):
    roles = tmp_path / "roles.toml"
    roles.write_text(ROLES)
    base = ("--pair", "F1", "F2", "--ckf", ckf)
    code, _, err = cli(
        capsys, "record", "--db", db, *base, "--kind", "dismiss", "--operator", "eve", "--roles", str(roles)
    )
    assert code == 2 and err == (
        "crp-inspect: error: permission refused: field 'role': 'eve' is viewer: a viewer sees the decisions but "
        "records none\n"
    )
    d = record(capsys, db, *base, "--kind", "dismiss", "--operator", "ann", "--roles", str(roles))
    code, _, err = cli(
        capsys, "record", "--db", db, *base, "--kind", "revert", "--reverts", "1", "--operator", "ann",
        "--note", "wrong", "--roles", str(roles),
    )  # fmt: skip
    assert code == 2 and "only an admin reverts" in err
    team = tmp_path / "team.toml"
    team.write_text('identity = "proxy"\nroles_file = "roles.toml"\n')
    monkeypatch.setenv("CRP_INSPECT_TEAM", str(team))
    r = record(
        capsys, db, *base, "--kind", "revert", "--reverts", str(d["id"]), "--operator", "ROOT", "--note", "wrong"
    )
    assert (r["kind"], r["role"], r["reverts"], r["note"]) == ("revert", "admin", 1, "wrong")
    code, out, _ = cli(capsys, "decisions", "--db", db)
    assert out.splitlines()[-1].startswith("#2 ") and out.splitlines()[-1].endswith(
        "root: [F1 | F2] revert #1  note: wrong"
    )
    with DecisionStore(db, create=False, readonly=True) as s:
        assert s.current().pair_decisions == {}
    team.write_text('identity = "ldap"\n')
    code, _, err = cli(capsys, "record", "--db", db, *base, "--kind", "dismiss", "--operator", "ann")
    assert code == 2 and "field 'identity': must be one of single, proxy, oidc" in err


def test_verify_and_the_jsonl_log(capsys, db, ckf):
    for op in ("ann", "bob", "cy"):
        record(capsys, db, "--pair", "F1", "F3", "--kind", "dismiss", "--operator", op, "--ckf", ckf)
    code, out, _ = cli(capsys, "decisions", "--db", db, "--jsonl")
    entries = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and [e["operator"] for e in entries] == ["ann", "bob", "cy"]
    assert [e["prev_hash"] for e in entries[1:]] == [e["entry_hash"] for e in entries[:-1]]
    code, out, _ = cli(capsys, "verify", "--db", db)
    head = entries[-1]["entry_hash"]
    assert code == 0 and out == f"chain ok: 3 entries; head {head} (keep it elsewhere: verify --head checks it)\n"
    code, out, _ = cli(capsys, "verify", "--db", db, "--json")
    assert code == 0 and json.loads(out) == {
        "ok": True,
        "entries": 3,
        "total": 3,
        "first_broken_id": None,
        "reason": None,
        "head": entries[-1]["entry_hash"],
    }
    assert cli(capsys, "verify", "--db", db, "--head", entries[0]["entry_hash"])[0] == 0  # appended since: fine
    if db.startswith("postgresql://"):
        raw_sql(db, "ALTER TABLE decisions DISABLE TRIGGER USER")
    else:
        raw_sql(db, "DROP TRIGGER decisions_append_only_update")
        raw_sql(db, "DROP TRIGGER decisions_append_only_delete")
    raw_sql(db, "DELETE FROM decisions WHERE id = 3")  # the newest entry: no link breaks
    assert cli(capsys, "verify", "--db", db)[0] == 0
    code, out, _ = cli(capsys, "verify", "--db", db, "--head", head)
    assert code == 1 and out.startswith(f"chain BROKEN: the kept head {head[:16]}... is not an entry of this log")
    raw_sql(db, "UPDATE decisions SET operator = 'mallory' WHERE id = 1")
    code, out, _ = cli(capsys, "verify", "--db", db)
    assert code == 1
    assert out.startswith("chain BROKEN at entry #1 (entry 1 of 2 in id order; the 0 before it verify): entry_hash ")
    code, out, _ = cli(capsys, "verify", "--db", db, "--json")
    got = json.loads(out)
    assert code == 1 and (got["first_broken_id"], got["entries"], got["total"], got["head"]) == (1, 1, 2, None)


def test_verify_never_creates_a_database(capsys, tmp_path):
    code, _, err = cli(capsys, "verify", "--db", str(tmp_path / "none.sqlite"))
    assert code == 2 and "no such decision database" in err and not (tmp_path / "none.sqlite").exists()


def test_stats_gives_the_operators_agreement_and_the_review_states(capsys, db, ckf, tmp_path, monkeypatch):
    """ann and bob on four pairs: three equal positions (two dismissals, one override for F1), one not.
    p_o = 3/4; ann's labels are half dismissals, bob's three quarters, so p_e = 1/2 * 3/4 + 1/2 * 1/4 = 1/2
    and kappa = (3/4 - 1/2) / (1 - 1/2) = 1/2. Under a quorum of 2 the pair they disagree on is a
    disagreement and the other three are settled."""
    said = {
        ("F1", "F2"): ("dismiss", "dismiss"),
        ("F1", "F3"): ("F1", "F1"),
        ("F1", "F4"): ("F1", "dismiss"),
        ("F2", "F3"): ("dismiss", "dismiss"),
    }
    for (a, b), positions in said.items():
        for operator, position in zip(("ann", "bob"), positions):
            kind = ("--kind", "dismiss") if position == "dismiss" else ("--kind", "override", "--winner", position)
            record(capsys, db, "--pair", a, b, *kind, "--operator", operator, "--ckf", ckf)
    code, out, _ = cli(capsys, "stats", "--db", db, "--ckf", ckf, "--json")
    got = json.loads(out)
    assert code == 0
    assert got["agreement"] == [
        {"operator_a": "ann", "operator_b": "bob", "shared_pairs": 4, "agreed": 3, "percent": 0.75, "kappa": 0.5}
    ]
    assert got["review"] == {"quorum": 1, "settled": 4, "disagreement": 0, "open": 0}
    team = tmp_path / "team.toml"
    team.write_text("review_quorum = 2\n")
    monkeypatch.setenv("CRP_INSPECT_TEAM", str(team))
    code, out, _ = cli(capsys, "stats", "--db", db, "--ckf", ckf)
    assert code == 0
    assert "review (quorum 2): 3 settled, 1 disagreement, 0 open\n" in out
    assert "  ann / bob: 3 of 4 shared pairs agree (75%), kappa 0.500\n" in out


def test_export_of_a_log_with_a_broken_chain_warns_and_fails_under_strict(capsys, db, ckf, tmp_path):
    record(capsys, db, "--pair", "F1", "F2", "--kind", "dismiss", "--operator", "ann", "--ckf", ckf)
    out = str(tmp_path / "clean.jsonl")
    code, _, err = cli(capsys, "export", "--db", db, "--ckf", ckf, "--out", out, "--strict")
    assert code == 0 and "hash chain" not in err
    if db.startswith("postgresql://"):
        raw_sql(db, "ALTER TABLE decisions DISABLE TRIGGER USER")
    else:
        raw_sql(db, "DROP TRIGGER decisions_append_only_update")
    raw_sql(db, "UPDATE decisions SET note = 'edited' WHERE id = 1")
    code, _, err = cli(capsys, "export", "--db", db, "--ckf", ckf, "--out", out)
    assert code == 0 and "warning: the decision log's hash chain is broken at entry #1 (entry_hash " in err
    code, _, err = cli(capsys, "export", "--db", db, "--ckf", ckf, "--out", out, "--strict")
    assert code == 1 and "hash chain is broken at entry #1" in err


def test_a_repeated_record_command_records_nothing_twice(capsys, db, ckf):
    """A command retried after its answer was lost: the same decision as the pair's latest prints that
    one and writes nothing; any difference (another note, another operator) is a new entry."""
    args = ("--pair", "F2", "F1", "--kind", "mark_status", "--fact", "F2", "--status", "STALE", "--ckf", ckf)
    first = record(capsys, db, *args, "--operator", "bob", "--note", "old figure")
    code, out, err = cli(capsys, "record", "--db", db, *args, "--operator", " BOB ", "--note", "old figure")
    assert code == 0 and json.loads(out)["id"] == first["id"] == 1
    assert err == "note: the same as the pair's latest decision #1; nothing recorded\n"
    assert record(capsys, db, *args, "--operator", "bob", "--note", "older figure")["id"] == 2
    assert record(capsys, db, *args, "--operator", "ann", "--note", "older figure")["id"] == 3
    code, out, _ = cli(capsys, "decisions", "--db", db, "--jsonl")
    assert [json.loads(x)["id"] for x in out.splitlines()] == [1, 2, 3]

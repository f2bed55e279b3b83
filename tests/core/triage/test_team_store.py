"""Triage as a team, on both stores (conftest.target: SQLite and PostgreSQL): who decided and where,
optimistic concurrency (based_on), roles, reverts, claims, polling, the hash chain and its verification,
the JSONL log; the schema-1 SQLite migration."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from crp_core.decisions import Decision, DecisionError, StaleDecisionError, TriageStoreError
from crp_core.model import Fact, KnowledgeBase
from crp_core.triage import DecisionStore, PermissionRefused, Role, open_store
from crp_core.triage.chain import GENESIS, canonical_json, entry_hash
from crp_core.triage.roles import role_book
from tests.core.triage.conftest import raw_sql
from tests.support.triage_cli import V1_ROWS, make_v1_db


class Clock:
    """2026-01-01T00:00:00Z, one second per call."""

    def __init__(self) -> None:
        self.t = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        now = self.t
        self.t += timedelta(seconds=1)
        return now


BOOK = role_book([("Root", "admin"), ("vic", "viewer")])


@pytest.fixture
def store(target):
    clock = Clock()
    s = DecisionStore(target, clock=clock, roles=BOOK)
    clock.t = datetime(2026, 1, 1, tzinfo=UTC)
    yield s
    s.close()


KB = KnowledgeBase(facts=(Fact("F1", "a"), Fact("F2", "b"), Fact("F3", "c")), source="/data/kb.jsonl", fmt="jsonl")


def test_who_decided_where_is_stored_and_read_back(store):
    d = store.record(
        Decision.dismiss("F2", "F1", operator="  ALICE  Smith ", origin="dashboard", os_user="alice", note="n"),
        kb=KB,
    )
    (back,) = store.all()
    assert back == d
    assert (d.id, d.operator, d.role, d.origin, d.os_user, d.kb_name, d.ckf_fingerprint) == (
        1,
        "alice smith",
        "operator",
        "dashboard",
        "alice",
        "kb.jsonl",
        KB.fingerprint,
    )
    assert d.prev_hash == GENESIS and d.entry_hash == entry_hash(d.to_dict())


def test_a_fact_absent_from_the_kb_is_refused(store):
    with pytest.raises(DecisionError) as e:
        store.record(Decision.dismiss("F1", "F9", operator="ann"), kb=KB)
    assert e.value.problems == (("fact_b", "'F9' is not in the knowledge base /data/kb.jsonl"),)
    with pytest.raises(DecisionError, match="not the knowledge base's"):
        store.record(Decision.dismiss("F1", "F2", operator="ann", ckf_fingerprint="other"), kb=KB)
    assert len(store) == 0


def test_based_on_refuses_a_lost_update_naming_the_decision_made_meanwhile(store):
    first = store.record(Decision.override("F1", "F2", winner="F2", operator="ann", based_on=0))
    assert store.latest_id(("F1", "F2")) == first.id == 1
    with pytest.raises(StaleDecisionError) as e:  # bob's form showed no decision
        store.record(Decision.dismiss("F1", "F2", operator="bob", based_on=0))
    assert e.value.latest == first
    assert str(e.value) == (
        "pair [F1 | F2] changed since it was shown (none): ann (operator, cli) recorded #1 override (winner F2) at "
        "2026-01-01T00:00:00Z; review it and confirm again"
    )
    again = store.record(Decision.dismiss("F1", "F2", operator="bob", based_on=1))  # reviewed and confirmed
    assert again.id == 2 and again.based_on == 1
    with pytest.raises(StaleDecisionError, match=r"\(decision #1\): bob \(operator, cli\) recorded #2 dismiss at"):
        store.record(Decision.accept("F1", "F2", operator="ann", based_on=1))
    with pytest.raises(DecisionError, match="the pair has no decision, so #5 is not its latest"):
        store.record(Decision.dismiss("F1", "F3", operator="ann", based_on=5))
    store.record(Decision.dismiss("F1", "F3", operator="ann"))  # None: no check
    assert [d.id for d in store.all()] == [1, 2, 3] and store.latest_id() == 3 and store.latest_id("X|Y") == 0


def test_roles_are_enforced_when_recording(store):
    with pytest.raises(PermissionRefused) as e:
        store.record(Decision.dismiss("F1", "F2", operator="VIC"))
    assert (
        str(e.value)
        == "permission refused: field 'role': 'vic' is viewer: a viewer sees the decisions but records none"
    )
    d = store.record(Decision.override("F1", "F2", winner="F1", operator="ann"))
    with pytest.raises(PermissionRefused, match="only an admin reverts"):
        store.record(Decision.revert("F1", "F2", reverts=d.id, operator="ann", reason="mine"))
    r = store.record(Decision.revert("F1", "F2", reverts=d.id, operator="root", reason="wrong winner"))
    assert (r.kind, r.role, r.reverts, r.note) == ("revert", "admin", 1, "wrong winner")
    assert store.current().pair_decisions == {}
    assert dict(store.current().reverted) == {1: r}
    with pytest.raises(DecisionError, match=r"decision #1 was reverted already \(by #2\)"):
        store.record(Decision.revert("F1", "F2", reverts=1, operator="root", reason="again"))
    with pytest.raises(DecisionError, match="#2 is a revert itself"):
        store.record(Decision.revert("F1", "F2", reverts=2, operator="root", reason="undo"))
    with pytest.raises(DecisionError, match=r"is on the pair \[F1 \| F2\], not this one"):
        store.record(Decision.revert("F1", "F3", reverts=1, operator="root", reason="x"))
    with pytest.raises(DecisionError, match="there is no decision #9"):
        store.record(Decision.revert("F1", "F2", reverts=9, operator="root", reason="x"))
    assert len(store) == 2


def test_without_a_role_book_the_decisions_role_is_checked(target):
    with DecisionStore(target) as s:
        with pytest.raises(PermissionRefused, match="viewer"):
            s.record(Decision.dismiss("A", "B", operator="x", role="viewer"))
        with pytest.raises(PermissionRefused, match="only an admin"):
            s.record(Decision.revert("A", "B", reverts=1, operator="x", reason="r"))
        assert s.roles is None and len(s) == 0


def test_since_returns_what_a_polling_view_has_not_seen(store):
    ids = [store.record(Decision.dismiss("F1", f"G{i}", operator="ann")).id for i in range(4)]
    assert ids == [1, 2, 3, 4]
    assert [d.id for d in store.since(0)] == [1, 2, 3, 4]
    assert [d.id for d in store.since(2)] == [3, 4]
    assert store.since(4) == []


T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def test_claims_hand_out_each_pair_once_and_end_with_the_lease(store):
    queue = ["A|B", "C|D", "E|F"]
    a = store.claim_next(queue, "Ann", kb_fingerprint="fp", lease_seconds=60, now=T0)
    assert a is not None and (a.pair_key, a.operator, a.expires_at, a.kb_fingerprint) == (
        "A|B",
        "ann",
        T0 + timedelta(seconds=60),
        "fp",
    )
    b = store.claim_next(queue, "bob", lease_seconds=60, now=T0)
    assert b is not None and b.pair_key == "C|D"
    assert store.claim_next(queue, "ann", lease_seconds=60, now=T0).pair_key == "A|B"  # her own, renewed
    assert sorted(store.claims(now=T0)) == ["A|B", "C|D"]
    # a decision ends the claim; the decided pair is skipped
    store.record(Decision.dismiss("A", "B", operator="ann"))
    assert sorted(store.claims(now=T0)) == ["C|D"]
    c = store.claim_next(queue, "ann", lease_seconds=60, now=T0)
    assert c is not None and c.pair_key == "E|F"
    assert store.claim_next(queue, "cy", lease_seconds=60, now=T0) is None  # everything taken or decided
    # bob's lease ends: cy gets his pair; one lease per operator
    late = T0 + timedelta(seconds=61)
    assert store.claims(now=late) == {}
    assert store.claim_next(queue, "cy", lease_seconds=60, now=late).pair_key == "C|D"
    assert store.release("C|D", "bob") is False and store.release("C|D", "CY") is True
    assert store.claims(now=late) == {}
    with pytest.raises(PermissionRefused, match="claims no pair"):
        store.claim_next(queue, "vic", now=T0)


def test_verify_names_the_first_broken_entry(store, target):
    for i in range(4):
        store.record(Decision.dismiss("F1", f"G{i}", operator="ann", note=f"n{i}"))
    ok = store.verify()
    assert (ok.ok, ok.entries, ok.first_broken_id, ok.head) == (True, 4, None, store.all()[-1].entry_hash)
    # someone with the database's keys disables the append-only trigger and rewrites a note
    if target.startswith("postgresql://"):
        raw_sql(target, "ALTER TABLE decisions DISABLE TRIGGER USER")
    else:
        raw_sql(target, "DROP TRIGGER decisions_append_only_update")
        raw_sql(target, "DROP TRIGGER decisions_append_only_delete")
    raw_sql(target, "UPDATE decisions SET note = 'quietly changed' WHERE id = 2")
    bad = store.verify()
    assert (bad.ok, bad.first_broken_id, bad.entries) == (False, 2, 2)
    assert (
        bad.reason.startswith("entry_hash ") and "a field of this entry was changed after it was written" in bad.reason
    )
    raw_sql(target, "UPDATE decisions SET note = 'n1' WHERE id = 2")  # put back
    assert store.verify().ok
    raw_sql(target, "DELETE FROM decisions WHERE id = 3")  # an entry removed
    gone = store.verify()
    assert (gone.ok, gone.first_broken_id) == (False, 4)
    assert "differs from entry #2's entry_hash" in gone.reason and "changed, removed or inserted" in gone.reason


def test_the_chain_hash_is_sha256_of_the_canonical_json():
    row = {
        "pair_key": "F1|F2",
        "fact_a": "F1",
        "fact_b": "F2",
        "kind": "override",
        "winner": "F2",
        "target_fact": None,
        "new_status": None,
        "note": 'newer, "v2" doc',
        "operator": "ann",
        "decided_at": "2026-01-01T00:00:00Z",
        "ckf_fingerprint": None,
        "kb_name": None,
        "role": "operator",
        "origin": "cli",
        "os_user": None,
        "based_on": None,
        "reverts": None,
        "prev_hash": "0" * 64,
        "id": 99,  # not hashed
    }
    text = (
        '{"based_on":null,"ckf_fingerprint":null,"decided_at":"2026-01-01T00:00:00Z","fact_a":"F1","fact_b":"F2",'
        '"kb_name":null,"kind":"override","new_status":null,"note":"newer, \\"v2\\" doc","operator":"ann",'
        '"origin":"cli","os_user":null,"pair_key":"F1|F2","prev_hash":"' + "0" * 64 + '","reverts":null,'
        '"role":"operator","target_fact":null,"winner":"F2"}'
    )
    assert canonical_json(row) == text.encode()
    assert (
        entry_hash(row)
        == hashlib.sha256(text.encode()).hexdigest()
        == ("af01a4615adf07495f720b862ad5c4c09c5839d5a37d7ea525a11b9b448b5c41")
    )


def test_export_jsonl_is_the_log_with_its_hashes(store):
    a = store.record(Decision.override("F1", "F2", winner="F2", operator="ann"))
    b = store.record(Decision.dismiss("F1", "F3", operator="bob", based_on=0))
    lines = store.export_jsonl().splitlines()
    assert [json.loads(x) for x in lines] == [a.to_dict(), b.to_dict()]
    assert json.loads(lines[1])["prev_hash"] == a.entry_hash and list(json.loads(lines[0]))[:3] == [
        "id",
        "pair_key",
        "fact_a",
    ]


def test_a_newer_schema_is_refused(target):
    DecisionStore(target).close()
    if target.startswith("postgresql://"):
        raw_sql(target, "INSERT INTO crp_triage_schema VALUES (3, 'later', 'crp-inspect triage decisions v3')")
    else:
        raw_sql(target, "PRAGMA user_version = 3")
    with pytest.raises(TriageStoreError, match=r"schema 3 is newer than this crp-inspect supports \(2\); upgrade"):
        DecisionStore(target)


def test_open_store_selects_the_backend(target):
    with open_store(target) as s:
        assert s.dialect == ("postgresql" if target.startswith("postgresql") else "sqlite")
        assert s.record(Decision.dismiss("A", "B", operator="x")).id == 1
    with open_store(target, create=False, readonly=True) as s:
        assert len(s) == 1 and s.readonly
        with pytest.raises(TriageStoreError, match="read-only"):
            s.record(Decision.dismiss("A", "C", operator="x"))


# ---- the schema-1 SQLite migration ------------------------------------------------------------
def _sha(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def test_a_schema_1_file_is_migrated_without_losing_a_row(tmp_path):
    db = make_v1_db(tmp_path / "v1.sqlite")
    before = _sha(db)
    with DecisionStore(db, create=False, readonly=True) as ro:  # read-only: read as migrated, file untouched
        seen = ro.all()
        assert ro.verify().ok and ro.claims() == {} and ro.latest_id("F1|F2") == 2 and len(ro) == 3
    assert _sha(db) == before
    with DecisionStore(db, create=False) as s:
        rows = s.all()
        assert rows == seen
        assert [(d.id, d.pair_key, d.kind, d.operator, d.origin, d.role, d.decided_at) for d in rows] == [
            (r[0], r[1], r[4], r[9], "migrated", "operator", r[10]) for r in V1_ROWS
        ]
        assert [d.ckf_fingerprint for d in rows] == [None, None, "fp1"]
        assert rows[0].prev_hash == GENESIS and rows[1].prev_hash == rows[0].entry_hash
        assert s.verify().ok and s.verify().entries == 3
        new = s.record(Decision.dismiss("F1", "F2", operator="cy", based_on=2))
        assert new.id == 4 and new.prev_hash == rows[2].entry_hash and s.verify().ok
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA user_version").fetchone()[0] == 2
    assert [r[0] for r in con.execute("SELECT version FROM crp_triage_schema ORDER BY version")] == [1, 2]
    assert con.execute("SELECT note FROM crp_triage_schema WHERE version = 2").fetchone()[0] == (
        "crp-inspect triage decisions: migrated from schema 1 (3 decisions chained)"
    )
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("DELETE FROM decisions")
    con.close()


def test_a_forged_schema_1_file_is_not_migrated(tmp_path):
    from tests.support.triage_cli import NULL_FACT_ROW, forge_db

    db = forge_db(tmp_path / "forged.sqlite", [NULL_FACT_ROW])
    before = _sha(db)
    with pytest.raises(TriageStoreError, match=r"decision #1 cannot be read \(field 'fact_a'"):
        DecisionStore(db, create=False)
    assert _sha(db) == before and not os.path.exists(db + "-journal")


def test_role_enum_values():
    assert [r.value for r in Role] == ["viewer", "operator", "admin"]


def test_a_forked_child_uses_a_connection_of_its_own(target):
    with DecisionStore(target) as s:
        s.record(Decision.dismiss("A", "B", operator="parent"))
        pid = os.fork()
        if pid == 0:  # the child: writes through the store it inherited, then leaves without cleanup
            code = 1
            try:
                code = 0 if s.record(Decision.dismiss("A", "C", operator="child")).id == 2 else 1
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert [d.operator for d in s.all()] == ["parent", "child"]  # the parent's connection still works
        assert s.record(Decision.dismiss("A", "D", operator="parent")).id == 3 and s.verify().ok


def test_single_mode_lets_an_operator_revert_their_own_decisions_only(target):
    """No roles nor team file (SINGLE_PERSON): the one person on a laptop takes back their own mistake; another
    operator's decision still needs an admin (a store shared without a team file)."""
    from crp_core.triage.roles import SINGLE_PERSON

    with open_store(target, create=True, roles=SINGLE_PERSON) as s:
        mine = s.record(Decision.accept("F1", "F2", winner="F1", operator="Dana"))
        theirs = s.record(Decision.dismiss("F1", "F3", operator="tom"))
        r = s.record(Decision.revert("F1", "F2", reverts=mine.id, operator="DANA", reason="not a conflict"))
        assert (r.kind, r.role, r.reverts) == ("revert", "operator", mine.id)
        assert "F1|F2" not in s.current().pair_decisions
        with pytest.raises(PermissionRefused) as e:
            s.record(Decision.revert("F1", "F3", reverts=theirs.id, operator="dana", reason="disagree"))
        assert str(e.value) == (
            "permission refused: field 'role': 'dana' is operator: only an admin reverts another operator's "
            f"decision (#{theirs.id} is tom's)"
        )

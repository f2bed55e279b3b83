"""Decision store: schema, validation, audit log, decisions in force, exports, refusal of
corrupt and foreign files. Multi-process guarantees are in test_triage_processes.py."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import random
import sqlite3
import threading
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.errors import CRPError
from crp_core.model import Fact, KnowledgeBase
from crp_core.triage import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    Decision,
    DecisionError,
    DecisionSet,
    DecisionStore,
    TriageStoreError,
    apply_to_kb,
    pair_key,
    split_pair_key,
    validate_decision,
)
from tests.core.triage.conftest import raw_sql


class FixedClock:
    """2026-01-01T00:00:00Z, advancing one second per call (deterministic decided_at)."""

    def __init__(self) -> None:
        self.t = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        now = self.t
        self.t += timedelta(seconds=1)
        return now


def sha256(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.fixture
def store(target):
    """A new store on each backend (conftest.target), its clock at 2026-01-01T00:00:00Z."""
    clock = FixedClock()
    s = DecisionStore(target, clock=clock)
    clock.t = datetime(2026, 1, 1, tzinfo=UTC)  # creating the schema took one tick
    yield s
    s.close()


# ---- pair keys -------------------------------------------------------------------------------
def test_pair_key_is_sorted_and_plain_for_plain_ids():
    assert pair_key("F2", "F1") == "F1|F2"
    assert pair_key("F1", "F2") == "F1|F2"
    assert split_pair_key("F1|F2") == ("F1", "F2")


def test_pair_key_escapes_separator_so_pairs_never_collide():
    assert pair_key("x|y", "z") != pair_key("x", "y|z")
    assert pair_key("x|y", "z") == "x\\|y|z"
    assert split_pair_key(pair_key("x|y", "z")) == ("x|y", "z")
    with pytest.raises(ValueError):
        split_pair_key("a|b|c")
    with pytest.raises(ValueError):
        split_pair_key("a\\")


@given(st.text(min_size=1), st.text(min_size=1), st.text(min_size=1), st.text(min_size=1))
@settings(max_examples=300)
def test_pair_key_roundtrip_symmetry_and_injectivity(a, b, c, d):
    assert pair_key(a, b) == pair_key(b, a)
    assert split_pair_key(pair_key(a, b)) == tuple(sorted((a, b)))
    same_pair = {a, b} == {c, d}
    assert (pair_key(a, b) == pair_key(c, d)) == same_pair


# ---- schema and identity ---------------------------------------------------------------------
def test_new_database_has_wal_app_id_schema_and_full_sync(tmp_path):
    path = tmp_path / "new.sqlite"
    with DecisionStore(path):
        pass
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID == 0x43525054
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
    assert con.execute("SELECT version FROM crp_triage_schema").fetchall() == [(2,)]
    con.close()
    s = DecisionStore(path)
    assert s.backend._conn().execute("PRAGMA synchronous").fetchone()[0] == 2  # 2 = FULL
    assert s.backend._conn().execute("PRAGMA busy_timeout").fetchone()[0] == 10000
    s.close()


def test_reopen_keeps_decisions_and_does_not_reinitialise(tmp_path):
    path = tmp_path / "d.sqlite"
    with DecisionStore(path) as s:
        s.record(Decision.dismiss("A", "B", operator="ann"))
    with DecisionStore(path) as s:
        assert [d.kind for d in s.all()] == ["dismiss"]
        assert s.backend._conn().execute("SELECT count(*) FROM crp_triage_schema").fetchone()[0] == 1


def test_decisions_table_is_append_only(store, target):
    store.record(Decision.dismiss("A", "B", operator="ann"))
    for sql in ("UPDATE decisions SET operator = 'mallory'", "DELETE FROM decisions"):
        with pytest.raises(Exception, match="append-only"):
            raw_sql(target, sql)
    if target.startswith("postgresql://"):
        with pytest.raises(Exception, match="append-only"):
            raw_sql(target, "TRUNCATE decisions")
    assert store.all()[0].operator == "ann" and len(store) == 1


ROW = (
    "INSERT INTO decisions (pair_key, fact_a, fact_b, kind, winner, operator, decided_at, role, origin, prev_hash, "
    "entry_hash) VALUES ('A|B', 'A', 'B', ?, ?, 'x', 't', ?, 'cli', ?, ?)"
)


@pytest.mark.parametrize(
    ("kind", "winner", "role", "prev"),
    [
        ("delete_everything", None, "operator", "0" * 64),
        ("override", "C", "operator", "0" * 64),
        ("dismiss", None, "root", "0" * 64),
        ("dismiss", None, "operator", "short"),
    ],
)
def test_schema_checks_refuse_bad_rows_written_by_other_tools(store, target, kind, winner, role, prev):
    with pytest.raises(Exception, match="(?i)constraint"):
        raw_sql(target, ROW, (kind, winner, role, prev, "0" * 64))
    assert len(store) == 0


def test_in_memory_store_works(tmp_path):
    with DecisionStore(":memory:") as s:
        s.record(Decision.dismiss("A", "B", operator="ann"))
        assert len(s) == 1


# ---- corrupt / foreign files: clear error, bytes never changed --------------------------------
def _refused(path, match, **kw):
    before_hash, before_dir = sha256(path), sorted(os.listdir(os.path.dirname(path)))
    for create in (True, False):
        with pytest.raises(TriageStoreError, match=match):
            DecisionStore(path, create=create, **kw)
    assert sha256(path) == before_hash
    assert sorted(os.listdir(os.path.dirname(path))) == before_dir  # not even a -wal/-shm sidecar


def test_random_bytes_file_is_refused_and_untouched(tmp_path):
    path = tmp_path / "random.sqlite"
    path.write_bytes(random.Random(5).randbytes(8192))
    _refused(str(path), "not an SQLite database")
    assert issubclass(TriageStoreError, CRPError)


def test_text_file_and_short_file_are_refused(tmp_path):
    path = tmp_path / "facts.jsonl"
    path.write_text('{"fact_id": "a", "content": "x"}\n')
    _refused(str(path), "not an SQLite database")
    short = tmp_path / "short.sqlite"
    short.write_bytes(b"SQLite format 3\x00" + b"\x00" * 20)  # right magic, truncated header
    _refused(str(short), "not an SQLite database")


def test_foreign_sqlite_database_is_refused_and_untouched(tmp_path):
    path = tmp_path / "other_app.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    con.execute("INSERT INTO users (name) VALUES ('alice')")
    con.commit()
    con.close()
    _refused(str(path), r"not a crp-inspect triage database .*holds: users")


def test_foreign_wal_database_with_other_app_id_is_refused(tmp_path):
    path = tmp_path / "other.sqlite"
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA application_id = 1234")
    con.execute("CREATE TABLE decisions (x)")  # even a same-named table does not make it ours
    con.commit()
    con.close()
    _refused(str(path), r"application_id 0x000004d2")


def test_newer_schema_is_refused(tmp_path):
    path = tmp_path / "d.sqlite"
    DecisionStore(path).close()
    con = sqlite3.connect(path)
    con.execute("PRAGMA user_version = 7")
    con.commit()
    con.close()
    _refused(str(path), "schema 7 is newer")


def test_damaged_pages_of_our_database_are_refused_and_untouched(tmp_path):
    path = tmp_path / "d.sqlite"
    with DecisionStore(path) as s:
        for i in range(300):
            s.record(Decision.accept(f"A{i}", "B", operator="ann", note="n" * 200))
    data = bytearray(path.read_bytes())
    assert len(data) > 12 * 4096
    for page in (3, 7, 12):  # smash the b-tree page headers
        data[4096 * (page - 1) : 4096 * (page - 1) + 12] = b"\xff" * 12
    path.write_bytes(bytes(data))
    _refused(str(path), "malformed|integrity")


def test_a_forged_row_is_refused_naming_the_row_and_field(tmp_path):
    """A database with our identity whose rows the schema would refuse (written by another tool): every
    read refuses it with the decision's id and field, never a TypeError later (issue 32)."""
    from tests.support.triage_cli import NULL_FACT_ROW, forge_db

    good = (2, "F1|F2", "F1", "F2", "dismiss", None, None, None, "", "ann", "2026-01-01T00:00:01Z", None)
    path = forge_db(tmp_path / "forged.sqlite", [good, NULL_FACT_ROW])
    with DecisionStore(path, create=False, readonly=True) as s:
        for read in (s.all, s.current, lambda: s.fact_history("F2"), s.export_json, s.export_csv):
            with pytest.raises(TriageStoreError) as ei:
                read()
            msg = str(ei.value)
            assert path in msg and "decision #1" in msg and "field 'fact_a'" in msg and "None" in msg, msg
        assert len(s) == 2
    numeric_kind = (3, "A|B", "A", "B", 7, None, None, None, "", "ann", "2026-01-01T00:00:00Z", None)
    no_time = (4, "A|B", "A", "B", "dismiss", None, None, None, "", "ann", None, None)
    blob_winner = (5, "A|B", "A", "B", "accept", b"A", None, None, "", "ann", "2026-01-01T00:00:00Z", None)
    for row, field in ((numeric_kind, "kind"), (no_time, "decided_at"), (blob_winner, "winner")):
        path = forge_db(tmp_path / f"{field}.sqlite", [row])
        with DecisionStore(path, create=False, readonly=True) as s, pytest.raises(TriageStoreError) as ei:
            s.all()
        assert f"decision #{row[0]}" in str(ei.value) and f"field '{field}'" in str(ei.value)


def test_empty_files_are_initialised(tmp_path):
    zero = tmp_path / "zero.sqlite"
    zero.write_bytes(b"")
    with DecisionStore(zero) as s:
        s.record(Decision.dismiss("A", "B", operator="ann"))
    blank = tmp_path / "blank.sqlite"  # an SQLite file with no tables and no application id
    con = sqlite3.connect(blank)
    con.execute("PRAGMA user_version = 0")
    con.execute("VACUUM")
    con.close()
    with DecisionStore(blank) as s:
        assert len(s) == 0


def test_missing_file_directory_and_missing_parent(tmp_path):
    with pytest.raises(TriageStoreError, match="no such decision database"):
        DecisionStore(tmp_path / "nope.sqlite", create=False)
    assert not (tmp_path / "nope.sqlite").exists()
    with pytest.raises(TriageStoreError, match="is a directory"):
        DecisionStore(tmp_path)
    with pytest.raises(TriageStoreError, match="does not exist"):
        DecisionStore(tmp_path / "no" / "such" / "dir.sqlite")


def test_readonly_store_reads_but_never_writes(tmp_path):
    path = tmp_path / "d.sqlite"
    with DecisionStore(path) as s:
        s.record(Decision.dismiss("A", "B", operator="ann"))
    with DecisionStore(path, readonly=True) as ro:
        assert len(ro) == 1
        with pytest.raises(TriageStoreError, match="read-only"):
            ro.record(Decision.dismiss("A", "C", operator="ann"))


def test_closed_store_raises(store):
    store.close()
    with pytest.raises(TriageStoreError, match="closed"):
        store.all()
    store.close()  # idempotent


# ---- validation ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "decision, field, message",
    [
        (Decision.new("A", "B", "approve", "ann"), "kind", "unknown kind 'approve'"),
        (
            Decision.mark_status("A", "B", fact="A", status="ARCHIVED", operator="ann"),
            "new_status",
            "unknown status 'ARCHIVED'",
        ),
        (
            Decision.mark_status("A", "B", fact="C", status="STALE", operator="ann"),
            "target_fact",
            "'C' is not in the pair",
        ),
        (Decision.new("A", "B", "mark_status", "ann", target_fact="A"), "new_status", "needs a status"),
        (Decision.new("A", "B", "mark_status", "ann", new_status="STALE"), "target_fact", "names the fact"),
        (Decision.override("A", "B", winner="C", operator="ann"), "winner", "'C' is not in the pair"),
        (Decision.accept("A", "B", winner="Z", operator="ann"), "winner", "'Z' is not in the pair"),
        (Decision.new("A", "B", "override", "ann"), "winner", "names the fact that must win"),
        (Decision.new("A", "B", "dismiss", "ann", winner="A"), "winner", "takes no winner"),
        (Decision.new("A", "B", "accept", "ann", new_status="STALE"), "new_status", "only a mark_status"),
        (Decision.dismiss("A", "B", operator=""), "operator", "required"),
        (Decision.dismiss("A", "B", operator="   "), "operator", "required"),
        (Decision.dismiss("A", "B", operator="ann\nbob"), "operator", "single line"),
        (Decision.dismiss("A", "B", operator="x" * 201), "operator", "longer than 200"),
        (Decision.dismiss("A", "B", operator="ann", note="n" * 10_001), "note", "longer than 10000"),
        (Decision.dismiss("A", "A", operator="ann"), "fact_b", "two different facts"),
        (Decision.dismiss("", "B", operator="ann"), "fact_a", "non-empty string"),
    ],
)
def test_invalid_decisions_are_refused_naming_the_field(store, decision, field, message):
    with pytest.raises(DecisionError) as exc:
        store.record(decision)
    assert field in [f for f, _ in exc.value.problems]
    assert message in str(exc.value)
    assert f"field '{field}'" in str(exc.value)
    assert len(store) == 0  # nothing half-written


def test_all_problems_are_reported_at_once():
    with pytest.raises(DecisionError) as exc:
        validate_decision(Decision.new("A", "A", "nope", ""))
    assert [f for f, _ in exc.value.problems] == ["fact_b", "kind", "operator"]


def test_a_recorded_decision_cannot_be_recorded_again(store):
    d = store.record(Decision.dismiss("A", "B", operator="ann"))
    with pytest.raises(DecisionError, match="already recorded"):
        store.record(d)


# ---- recording, history, decisions in force --------------------------------------------------
def test_record_stamps_id_time_and_normalises(store):
    d = store.record(
        Decision.override("B", "A", winner="B", operator="  ann ", note="vendor doc is newer", ckf_fingerprint="abc")
    )
    assert (d.id, d.decided_at) == (1, "2026-01-01T00:00:00Z")
    assert (d.fact_a, d.fact_b, d.pair_key, d.operator) == ("A", "B", "A|B", "ann")
    assert store.all() == [d]


def test_history_is_per_pair_oldest_first(store):
    d1 = store.record(Decision.accept("A", "B", winner="A", operator="ann"))
    store.record(Decision.dismiss("A", "C", operator="bob"))
    d3 = store.record(Decision.override("B", "A", winner="B", operator="cid"))
    d4 = store.record(Decision.mark_status("A", "B", fact="A", status="STALE", operator="ann"))
    assert store.history("A|B") == [d1, d3, d4]
    assert store.history(("B", "A")) == [d1, d3, d4]
    assert [d.id for d in store.fact_history("C")] == [2]
    assert [d.decided_at for d in store.history("A|B")] == [
        "2026-01-01T00:00:00Z",
        "2026-01-01T00:00:02Z",
        "2026-01-01T00:00:03Z",
    ]


def test_current_latest_decision_per_pair_and_latest_status_per_fact(store):
    store.record(Decision.override("A", "B", winner="A", operator="ann"))
    store.record(Decision.mark_status("A", "B", fact="B", status="QUARANTINED", operator="ann"))
    store.record(Decision.override("A", "B", winner="B", operator="bob"))  # changes mind: B wins
    store.record(Decision.dismiss("C", "D", operator="ann"))
    store.record(Decision.mark_status("C", "D", fact="C", status="STALE", operator="ann"))
    store.record(Decision.mark_status("B", "E", fact="B", status="ACTIVE", operator="cid"))  # restores B
    store.record(Decision.accept("E", "F", operator="ann"))
    cur = store.current()
    assert dict(cur.statuses) == {"B": "ACTIVE", "C": "STALE"}
    assert {k: dict(v) for k, v in cur.pair_decisions.items()} == {
        "A|B": {"kind": "override", "winner": "B"},
        "C|D": {"kind": "dismiss", "winner": None},
        "E|F": {"kind": "accept", "winner": None},
    }
    assert cur.latest["C|D"].kind == "mark_status"
    assert cur.status_decisions["B"].operator == "cid"
    assert cur.count == 7
    assert cur.for_pair("B", "A") == {"kind": "override", "winner": "B"}
    with pytest.raises(TypeError):
        cur.statuses["X"] = "DELETED"  # type: ignore[index]
    with pytest.raises(TypeError):
        cur.pair_decisions["A|B"]["winner"] = "A"  # type: ignore[index]


def test_current_filtered_by_fingerprint(store):
    store.record(Decision.mark_status("A", "B", fact="A", status="STALE", operator="ann", ckf_fingerprint="kb1"))
    store.record(Decision.mark_status("A", "B", fact="B", status="DELETED", operator="ann", ckf_fingerprint="kb2"))
    store.record(Decision.mark_status("C", "D", fact="C", status="STALE", operator="ann"))
    assert dict(store.current(ckf_fingerprint="kb1").statuses) == {"A": "STALE", "C": "STALE"}
    assert dict(store.current().statuses) == {"A": "STALE", "B": "DELETED", "C": "STALE"}


_kinds = st.sampled_from(["accept", "override", "dismiss", "mark_status"])


@given(
    st.lists(
        st.tuples(
            st.sampled_from("ABCD"),
            st.sampled_from("ABCD"),
            _kinds,
            st.booleans(),
            st.sampled_from(["STALE", "QUARANTINED", "DELETED", "ACTIVE"]),
        ),
        max_size=40,
    )
)
def test_decision_set_is_the_last_write_per_pair_and_per_fact(ops):
    log = []
    for i, (a, b, kind, first, status) in enumerate(ops):
        if a == b:
            continue
        pick = a if first else b
        d = Decision.new(
            a,
            b,
            kind,
            "op",
            winner=pick if kind in ("override", "accept") else None,
            target_fact=pick if kind == "mark_status" else None,
            new_status=status if kind == "mark_status" else None,
        )
        log.append(replace_id(validate_decision(d), i))
    cur = DecisionSet.from_decisions(log)
    for key, pd in cur.pair_decisions.items():  # a naive reverse scan agrees
        last = next(d for d in reversed(log) if d.pair_key == key and d.kind != "mark_status")
        assert dict(pd) == {"kind": last.kind, "winner": last.winner}
    for fact, status in cur.statuses.items():
        last = next(d for d in reversed(log) if d.kind == "mark_status" and d.target_fact == fact)
        assert status == last.new_status
    assert set(cur.statuses) == {d.target_fact for d in log if d.kind == "mark_status"}
    assert set(cur.pair_decisions) == {d.pair_key for d in log if d.kind != "mark_status"}


def replace_id(d: Decision, i: int) -> Decision:
    from dataclasses import replace

    return replace(d, id=i + 1, decided_at="2026-01-01T00:00:00Z")


def test_threads_sharing_one_store_lose_nothing(store):
    def worker(t):
        for i in range(50):
            store.record(Decision.dismiss(f"T{t}", f"N{i}", operator=f"thread{t}"))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows = store.all()
    assert len(rows) == 200 and len({d.id for d in rows}) == 200
    assert {(d.fact_a, d.fact_b) for d in rows} == {(f"N{i}", f"T{t}") for t in range(4) for i in range(50)}


# ---- exports ---------------------------------------------------------------------------------
def _two_decisions(store):
    store.record(Decision.override("F2", "F1", winner="F2", operator="ann", note='newer, "v2" doc'))
    store.record(Decision.mark_status("F1", "F2", fact="F1", status="QUARANTINED", operator="bob"))


def test_export_json_contents(store):
    _two_decisions(store)
    doc = json.loads(store.export_json())
    assert doc == {
        "application": "crp-inspect triage",
        "schema_version": 2,
        "decisions": [
            {
                "id": 1,
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
                "entry_hash": "af01a4615adf07495f720b862ad5c4c09c5839d5a37d7ea525a11b9b448b5c41",
            },
            {
                "id": 2,
                "pair_key": "F1|F2",
                "fact_a": "F1",
                "fact_b": "F2",
                "kind": "mark_status",
                "winner": None,
                "target_fact": "F1",
                "new_status": "QUARANTINED",
                "note": "",
                "operator": "bob",
                "decided_at": "2026-01-01T00:00:01Z",
                "ckf_fingerprint": None,
                "kb_name": None,
                "role": "operator",
                "origin": "cli",
                "os_user": None,
                "based_on": None,
                "reverts": None,
                "prev_hash": "af01a4615adf07495f720b862ad5c4c09c5839d5a37d7ea525a11b9b448b5c41",
                "entry_hash": "8f325be61f3f44b29ee8a408bfcdcc4094d8fe8e33a924f0e7df39612e99dbf3",
            },
        ],
        "current": {
            "statuses": {"F1": "QUARANTINED"},
            "pair_decisions": {"F1|F2": {"kind": "override", "winner": "F2"}},
        },
    }
    assert store.export_json() == store.export_json()  # deterministic


def test_export_csv_contents(store):
    _two_decisions(store)
    text = store.export_csv()
    assert text.splitlines()[0] == (
        "id,pair_key,fact_a,fact_b,kind,winner,target_fact,new_status,note,operator,decided_at,ckf_fingerprint,"
        "kb_name,role,origin,os_user,based_on,reverts,prev_hash,entry_hash"
    )
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows == [
        {
            "id": "1",
            "pair_key": "F1|F2",
            "fact_a": "F1",
            "fact_b": "F2",
            "kind": "override",
            "winner": "F2",
            "target_fact": "",
            "new_status": "",
            "note": 'newer, "v2" doc',
            "operator": "ann",
            "decided_at": "2026-01-01T00:00:00Z",
            "ckf_fingerprint": "",
            "kb_name": "",
            "role": "operator",
            "origin": "cli",
            "os_user": "",
            "based_on": "",
            "reverts": "",
            "prev_hash": "0" * 64,
            "entry_hash": "af01a4615adf07495f720b862ad5c4c09c5839d5a37d7ea525a11b9b448b5c41",
        },
        {
            "id": "2",
            "pair_key": "F1|F2",
            "fact_a": "F1",
            "fact_b": "F2",
            "kind": "mark_status",
            "winner": "",
            "target_fact": "F1",
            "new_status": "QUARANTINED",
            "note": "",
            "operator": "bob",
            "decided_at": "2026-01-01T00:00:01Z",
            "ckf_fingerprint": "",
            "kb_name": "",
            "role": "operator",
            "origin": "cli",
            "os_user": "",
            "based_on": "",
            "reverts": "",
            "prev_hash": "af01a4615adf07495f720b862ad5c4c09c5839d5a37d7ea525a11b9b448b5c41",
            "entry_hash": "8f325be61f3f44b29ee8a408bfcdcc4094d8fe8e33a924f0e7df39612e99dbf3",
        },
    ]


def test_empty_exports(store):
    assert json.loads(store.export_json())["decisions"] == []
    assert store.export_csv().count("\n") == 1


# ---- applying decisions to a knowledge base ---------------------------------------------------
def test_apply_to_kb_sets_statuses_and_leaves_the_rest(store):
    kb = KnowledgeBase(
        facts=(Fact("F1", "port 2379", status="ACTIVE"), Fact("F2", "port 2380", status="STALE"), Fact("F3", "other")),
        source="mem",
        fmt="jsonl",
    )
    store.record(Decision.mark_status("F1", "F2", fact="F1", status="QUARANTINED", operator="ann"))
    store.record(Decision.mark_status("F1", "F2", fact="F2", status="ACTIVE", operator="ann"))
    store.record(Decision.mark_status("F3", "GONE", fact="GONE", status="DELETED", operator="ann"))
    cur = store.current()
    out = apply_to_kb(kb, cur)
    assert [f.status for f in out.facts] == ["QUARANTINED", "ACTIVE", "ACTIVE"]
    assert [f.status for f in kb.facts] == ["ACTIVE", "STALE", "ACTIVE"]  # input untouched
    assert [f.content for f in out.facts] == [f.content for f in kb.facts]
    assert out.fingerprint == kb.fingerprint
    assert not out.get("F1").retrievable
    assert cur.unknown_facts(kb) == ("GONE",)
    assert apply_to_kb(kb, DecisionSet.empty()) is kb


def test_a_writer_blocked_past_busy_timeout_gets_a_clear_error_and_nothing_is_written(tmp_path):
    path = tmp_path / "d.sqlite"
    DecisionStore(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
    try:
        with DecisionStore(path, busy_timeout=0.05) as waiting:  # opening needs no lock
            assert len(waiting) == 0  # WAL: reading is not blocked by the writer
            with pytest.raises(TriageStoreError, match="locked by another writer for more than 0.05 s"):
                waiting.record(Decision.dismiss("A", "B", operator="ann"))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with DecisionStore(path) as s:
        assert len(s) == 0
        s.record(Decision.dismiss("A", "B", operator="ann"))  # the lock is free again
        assert len(s) == 1


def test_export_cleaned_ckf_summary(tmp_path):
    from crp_core.io.ckf import load_ckf
    from crp_core.triage import export_cleaned_ckf

    kb = KnowledgeBase(facts=(Fact("F1", "a"), Fact("F2", "b", status="STALE"), Fact("F3", "c")), fmt="jsonl")
    ds = DecisionSet.from_decisions(
        [
            Decision.mark_status("F1", "F2", fact="F1", status="QUARANTINED", operator="x"),
            Decision.mark_status("F1", "F2", fact="F2", status="STALE", operator="x"),  # already STALE: no change
            Decision.mark_status("F3", "NOPE", fact="NOPE", status="DELETED", operator="x"),
        ]
    )
    done = export_cleaned_ckf(kb, ds, tmp_path / "out.jsonl")
    assert (done.n_facts, done.applied, dict(done.changed), done.unknown_facts) == (3, 2, {"QUARANTINED": 1}, ("NOPE",))
    assert [f.status for f in load_ckf(done.path).facts] == ["QUARANTINED", "STALE", "ACTIVE"]


def test_decision_set_from_a_hand_built_log_validates_it():
    with pytest.raises(DecisionError, match="field 'new_status'"):
        DecisionSet.from_decisions([Decision.new("A", "B", "mark_status", "x", target_fact="A")])

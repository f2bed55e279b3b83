"""Decision store across real OS processes: persistence, two concurrent writers, a writer
killed with SIGKILL mid-run. Each child is a fresh ``python -c`` process using the public API."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from crp_core.triage import Decision, DecisionStore
from tests.core.triage.conftest import raw_sql
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

#: writer: waits for GO file (unless "-"), records N decisions (N < 0: forever; pair <writer>-<i>|zz,
#: note "<writer>:<i>") and prints "<id> <i>" after each commit. PACE k > 0: before its decision i
#: it waits until the database holds k * i decisions, so k writers advance in lockstep and really
#: compete for the write lock at every step (no reliance on scheduling luck).
WRITER = r"""
import os, sys, time
from crp_core.triage import Decision, DecisionStore
db, name, n, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
pace = int(sys.argv[5]) if len(sys.argv) > 5 else 0
store = DecisionStore(db)
print("ready", flush=True)
def wait_for(cond, what):
    deadline = time.monotonic() + 120
    while not cond():
        if time.monotonic() > deadline:
            sys.exit(f"{name}: timed out waiting for {what}")
        time.sleep(0.0005)
wait_for(lambda: go == "-" or os.path.exists(go), "the GO file")
i = 0
while n < 0 or i < n:
    if pace:
        wait_for(lambda: len(store) >= pace * i, f"{pace * i} decisions")
    d = store.record(Decision.dismiss(f"{name}-{i}", "zz", operator=name, note=f"{name}:{i}"))
    print(d.id, i, flush=True)
    i += 1
store.close()
"""

READER = r"""
import json, sys
from crp_core.triage import DecisionStore
with DecisionStore(sys.argv[1], create=False, readonly=True) as s:
    print(json.dumps([d.to_dict() for d in s.all()]))
"""


def _spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT
    )


def test_decisions_persist_across_processes(target):
    db = target
    w = _spawn(WRITER, db, "ann", "3", "-")
    out, err = w.communicate(timeout=120)
    assert w.returncode == 0, err
    acked = [int(line.split()[0]) for line in out.splitlines()[1:]]
    assert acked == [1, 2, 3]
    r = _spawn(READER, db)  # a second, unrelated process
    out, err = r.communicate(timeout=120)
    assert r.returncode == 0, err
    rows = json.loads(out)
    assert [(d["id"], d["fact_a"], d["kind"], d["operator"], d["note"]) for d in rows] == [
        (1, "ann-0", "dismiss", "ann", "ann:0"),
        (2, "ann-1", "dismiss", "ann", "ann:1"),
        (3, "ann-2", "dismiss", "ann", "ann:2"),
    ]
    with DecisionStore(db) as s:  # and this process sees the same thing
        assert [d.to_dict() for d in s.all()] == rows


@pytest.mark.parametrize("pace", ["2", "0"], ids=["lockstep", "free-running"])
def test_two_processes_writing_200_each_at_once_lose_nothing(tmp_path, target, pace):
    db = target
    DecisionStore(db).close()  # both children open an existing database
    go = str(tmp_path / "GO")
    writers = [_spawn(WRITER, db, name, "200", go, pace) for name in ("ann", "bob")]
    for w in writers:  # both connected and waiting
        assert w.stdout.readline().strip() == "ready", w.stderr.read()
    Path(go).touch()
    acked: dict[str, list[int]] = {}
    for name, w in zip(("ann", "bob"), writers):
        out, err = w.communicate(timeout=300)
        assert w.returncode == 0, err
        acked[name] = [int(line.split()[0]) for line in out.splitlines()]
        assert len(acked[name]) == 200
    with DecisionStore(db, create=False) as s:
        rows = s.all()
        assert s.integrity_check() == "ok"
    assert len(rows) == 400
    assert len({d.id for d in rows}) == 400
    assert sorted(d.id for d in rows) == sorted(acked["ann"] + acked["bob"]) == list(range(1, 401))
    assert {d.note for d in rows} == {f"{n}:{i}" for n in ("ann", "bob") for i in range(200)}
    by_id = {d.id: d for d in rows}
    for name in ("ann", "bob"):
        assert [by_id[i].note for i in acked[name]] == [f"{name}:{i}" for i in range(200)]
    if pace == "0":
        return  # free-running: the interleaving is up to the scheduler
    # lockstep: the writers really ran at the same time; each step i took ids 2i+1 and 2i+2
    for i in range(200):
        assert {acked["ann"][i], acked["bob"][i]} == {2 * i + 1, 2 * i + 2}


@pytest.mark.parametrize("kill_after", [1, 37, 150])
def test_writer_killed_with_sigkill_leaves_every_acknowledged_decision(target, kill_after):
    db = target
    with DecisionStore(db) as s:  # decisions committed before the writer starts must survive too
        s.record(Decision.override("P", "Q", winner="Q", operator="pre"))
    w = _spawn(WRITER, db, "kid", "-1", "-")  # writes forever
    assert w.stdout.readline().strip() == "ready"
    acked: list[tuple[int, int]] = []
    while len(acked) < kill_after:
        line = w.stdout.readline()
        assert line, w.stderr.read()
        rid, i = map(int, line.split())
        acked.append((rid, i))
    os.kill(w.pid, signal.SIGKILL)  # mid-run: the next transaction is likely open
    w.wait(timeout=30)
    assert w.returncode == -signal.SIGKILL
    with DecisionStore(db, create=False) as s:
        assert s.integrity_check() == "ok"
        rows = {d.id: d for d in s.all()}
        assert rows[1].operator == "pre" and rows[1].winner == "Q"
        for rid, i in acked:
            assert rows[rid].note == f"kid:{i}" and rows[rid].fact_a == f"kid-{i}"
        # at most the decisions committed after the last acknowledgement was read are extra
        extra = sorted(set(rows) - {1} - {rid for rid, _ in acked})
        assert all(rows[r].note.startswith("kid:") for r in extra)
        assert s.verify().ok  # nothing half-committed: the chain links every entry to the one before
        if s.dialect == "sqlite":  # a PostgreSQL sequence may skip the id of the killed transaction
            assert sorted(rows) == list(range(1, len(rows) + 1))
        later = s.record(Decision.dismiss("after", "crash", operator="ann"))  # still writable
        assert later.id > max(rows) and s.verify().ok


def test_reader_process_sees_commits_of_a_live_writer(target):
    db = target
    reader_store = DecisionStore(db)
    w = _spawn(WRITER, db, "live", "-1", "-")
    try:
        assert w.stdout.readline().strip() == "ready"
        for _ in range(5):
            rid = int(w.stdout.readline().split()[0])
            assert rid in {d.id for d in reader_store.all()}  # acknowledged => visible to others
    finally:
        w.kill()
        w.wait(timeout=30)
        reader_store.close()


OPENER = r"""
import os, sys, time
from crp_core.triage import Decision, DecisionStore
db, name, go = sys.argv[1], sys.argv[2], sys.argv[3]
print("ready", flush=True)
deadline = time.monotonic() + 120
while not os.path.exists(go):
    if time.monotonic() > deadline:
        sys.exit("GO file never appeared")
    time.sleep(0.0005)
with DecisionStore(db) as s:
    print(s.record(Decision.dismiss(name, "zz", operator=name)).id, flush=True)
"""


def test_processes_creating_the_same_new_database_at_once_initialise_it_once(tmp_path, target):
    db = target
    go = str(tmp_path / "GO")
    procs = [_spawn(OPENER, db, f"p{i}", go) for i in range(4)]
    for p in procs:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
    Path(go).touch()
    ids = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        ids.append(int(out.strip()))
    assert sorted(ids) == [1, 2, 3, 4]
    with DecisionStore(db, create=False) as s:
        assert raw_sql(db, "SELECT count(*) FROM crp_triage_schema") == [(1,)]
        assert sorted(d.operator for d in s.all()) == ["p0", "p1", "p2", "p3"]


#: records 5 decisions, then is stopped inside a transaction: either inside ``record`` (its clock,
#: called after BEGIN IMMEDIATE, blocks) or after an uncommitted INSERT; prints "in-txn" and waits
STUCK = r"""
import sys, time
from datetime import datetime, timezone
from crp_core.triage import Decision, DecisionStore
db, where = sys.argv[1], sys.argv[2]
calls = []
def clock():
    calls.append(1)
    if where == "clock" and len(calls) > 5:
        print("in-txn", flush=True)
        time.sleep(600)
    return datetime.now(timezone.utc)
s = DecisionStore(db, clock=clock)
for i in range(5):
    print(s.record(Decision.dismiss(f"ok-{i}", "zz", operator="stuck")).id, flush=True)
if where == "insert":
    con = s.backend._conn()
    con.execute("BEGIN IMMEDIATE")
    con.execute("INSERT INTO decisions (pair_key, fact_a, fact_b, kind, operator, decided_at, role, origin, "
                "prev_hash, entry_hash) VALUES ('lost|zz', 'lost', 'zz', 'dismiss', 'stuck', 'now', 'operator', "
                "'cli', printf('%064d', 0), printf('%064d', 0))")
    print("in-txn", flush=True)
    time.sleep(600)
s.record(Decision.dismiss("lost", "zz", operator="stuck"))
"""


@pytest.mark.parametrize("where", ["clock", "insert"])
def test_writer_killed_inside_an_open_transaction(tmp_path, where):
    db = str(tmp_path / "d.sqlite")
    DecisionStore(db).close()
    w = _spawn(STUCK, db, where)
    lines = [w.stdout.readline().strip() for _ in range(6)]
    assert lines == ["1", "2", "3", "4", "5", "in-txn"], w.stderr.read() if w.poll() is not None else lines
    os.kill(w.pid, signal.SIGKILL)  # holding the write lock, transaction open
    w.wait(timeout=30)
    with DecisionStore(db, create=False, busy_timeout=5.0) as s:
        assert s.integrity_check() == "ok"
        assert [(d.id, d.fact_a) for d in s.all()] == [(i + 1, f"ok-{i}") for i in range(5)]  # 'lost' is gone
        assert s.record(Decision.dismiss("after", "zz", operator="ann")).id == 6  # the lock died with it

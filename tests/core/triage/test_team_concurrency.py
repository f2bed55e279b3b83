"""No lost update and a linear chain under concurrent writers, on both stores; on PostgreSQL, writers
killed with SIGKILL and a server restart in the middle lose no acknowledged decision and apply none twice.

Each writer is a fresh ``python -c`` process using the public API."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from crp_core.triage import DecisionStore
from tests.support.paths import REPO_ROOT
from tests.support.postgres import PostgresServer, pg_bin, unavailable

ENV = {**os.environ, "PYTHONPATH": str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

#: races on ONE pair: read the pair's latest id, decide on it (based_on), until the pair holds TOTAL
#: decisions; prints "won <id> <based_on>" or "stale <based_on>" per attempt
RACER = r"""
import os, sys, time
from crp_core.triage import Decision, DecisionStore, StaleDecisionError
db, name, total, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
s = DecisionStore(db)
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.0005)
kinds = ("dismiss", "override")
while True:
    seen = s.latest_id("F1|F2")
    if len(s.history("F1|F2")) >= total:
        break
    k = kinds[seen % 2]
    d = (Decision.override("F1", "F2", winner="F2", operator=name, based_on=seen) if k == "override"
         else Decision.dismiss("F1", "F2", operator=name, based_on=seen))
    try:
        got = s.record(d)
        print("won", got.id, seen, flush=True)
    except StaleDecisionError as exc:
        assert exc.latest.id != seen
        print("stale", seen, flush=True)
s.close()
"""


def _spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=REPO_ROOT
    )


def test_racing_writers_on_one_pair_one_wins_per_state(tmp_path, target):
    total, n = 40, 4
    DecisionStore(target).close()
    go = str(tmp_path / "GO")
    procs = [_spawn(RACER, target, f"op{i}", str(total), go) for i in range(n)]
    for p in procs:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
    Path(go).touch()
    won: list[tuple[int, int]] = []
    stale = 0
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        for line in out.splitlines():
            parts = line.split()
            if parts[0] == "won":
                won.append((int(parts[1]), int(parts[2])))
            else:
                stale += 1
    with DecisionStore(target, create=False) as s:
        log = s.history("F1|F2")
        verdict = s.verify()
    # every write was made on the state it read: entry k is based on entry k-1 (the first on none)
    assert [d.based_on for d in log] == [0] + [d.id for d in log[:-1]]
    assert len(log) >= total and sorted(won) == sorted((d.id, d.based_on) for d in log)
    assert Counter(b for _, b in won).most_common(1)[0][1] == 1  # exactly one winner per based_on value
    assert verdict.ok and verdict.entries == len(log)
    backend = "postgresql" if target.startswith("postgresql") else "sqlite"
    print(f"\n[{backend}] {n} racing writers: {len(log)} decisions won, {stale} stale refusals, chain ok")


# ---- PostgreSQL under faults --------------------------------------------------------------------
#: writes decisions on its own pairs forever; prints "ack <token> <id>" once record() returned. When the
#: server is away it waits and, before writing a token again, looks whether it was committed already
FAULTY = r"""
import sys, time
from crp_core.triage import Decision, DecisionStore, TriageStoreUnavailable
db, name = sys.argv[1], sys.argv[2]
s = DecisionStore(db, busy_timeout=5)
print("ready", flush=True)
i = 0
while True:
    token = f"{name}-{i}"
    try:
        if any(d.note == token for d in s.history((token, "zz"))):
            print("found", token, flush=True)  # committed before the connection was lost
        else:
            d = s.record(Decision.dismiss(token, "zz", operator=name, note=token, based_on=0))
            print("ack", token, d.id, flush=True)
        i += 1
    except TriageStoreUnavailable:
        print("away", token, flush=True)
        time.sleep(0.2)
"""


@pytest.fixture(scope="module")
def own_server():
    """A PostgreSQL server of this module's own: the fault test restarts it."""
    bindir = pg_bin()
    if bindir is None:
        unavailable("no initdb")
    server = PostgresServer(bindir).start()
    yield server
    server.remove()


def _drain(p: subprocess.Popen, acked: dict[str, int], stats: Counter) -> None:
    """Read the lines a (dead or stopped) writer printed. Only whole lines count: a writer killed while it
    printed leaves its last line cut ("ack w3-7" without the id), and an acknowledgement the test never read
    whole is one it does not hold the store to (the store may still keep it)."""
    out = p.stdout.read() if p.stdout else ""
    for line in out.splitlines(keepends=True):
        parts = line.split()
        if not line.endswith("\n") or not parts:
            continue
        if parts[0] == "ack":
            if len(parts) != 3 or not parts[2].isdigit():
                continue
            acked[parts[1]] = int(parts[2])
        stats[parts[0]] += 1


def test_a_writer_line_cut_by_its_kill_is_not_read_as_an_acknowledgement():
    import io
    import types

    acked: dict[str, int] = {}
    stats: Counter = Counter()
    dead = types.SimpleNamespace(stdout=io.StringIO("ready\nack w1-0 12\naway\nack w1-1 13\nack w1-2"))
    _drain(dead, acked, stats)  # type: ignore[arg-type]
    assert acked == {"w1-0": 12, "w1-1": 13} and stats == Counter({"ack": 2, "ready": 1, "away": 1})


def test_sigkilled_writers_and_a_server_restart_lose_no_acknowledged_decision(own_server):
    url = own_server.new_database()
    DecisionStore(url).close()
    rng = random.Random(33)
    acked: dict[str, int] = {}
    stats: Counter = Counter()
    gen = 0

    def start() -> subprocess.Popen:
        nonlocal gen
        gen += 1
        p = _spawn(FAULTY, url, f"w{gen}")
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
        return p

    writers = [start() for _ in range(4)]
    kills = 0
    while kills < 20:
        time.sleep(rng.uniform(0.05, 0.4))
        victim = rng.randrange(len(writers))
        os.kill(writers[victim].pid, signal.SIGKILL)
        writers[victim].wait(timeout=30)
        _drain(writers[victim], acked, stats)
        kills += 1
        if kills == 10:
            own_server.restart()  # in the middle: every writer loses its connection
        writers[victim] = start()
    time.sleep(1.0)
    for p in writers:
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        _drain(p, acked, stats)
    with DecisionStore(url, create=False) as s:
        rows = s.all()
        verdict = s.verify()
    notes = Counter(d.note for d in rows)
    assert [n for n, c in notes.items() if c > 1] == []  # no decision applied twice
    by_note = {d.note: d.id for d in rows}
    assert {t: by_note.get(t) for t in acked} == acked  # every acknowledged decision, with its id
    assert verdict.ok and verdict.entries == len(rows)
    assert len(acked) > 20 and stats["away"] > 0  # the restart was felt, and work went on after it
    print(
        f"\n[postgresql] 20 SIGKILLs of 4 writers, 1 server restart: {len(rows)} decisions stored, {len(acked)} "
        f"acknowledged (all present, none twice), {stats['away']} 'server away' retries, "
        f"{stats['found']} found committed after a lost connection, chain ok"
    )


def test_a_server_gone_away_is_unavailable_and_the_store_resumes(own_server):
    from crp_core.triage import Decision, TriageStoreUnavailable

    url = own_server.new_database()
    with DecisionStore(url, busy_timeout=2) as s:
        s.record(Decision.dismiss("A", "B", operator="ann"))
        own_server.stop()
        try:
            with pytest.raises(TriageStoreUnavailable) as e:
                s.record(Decision.dismiss("A", "C", operator="ann"))
            assert str(e.value).startswith(
                f"{url}: cannot record the decision: the database server cannot be reached ("
            )
            assert str(e.value).endswith("); nothing was written; retry when it is back")
            with pytest.raises(TriageStoreUnavailable, match="cannot read decisions"):
                s.all()
            with pytest.raises(TriageStoreUnavailable, match="cannot open the decision database"):
                DecisionStore(url, busy_timeout=2)
        finally:
            own_server.start()
        assert s.record(Decision.dismiss("A", "C", operator="ann")).id == 2  # the same store, once it is back
        assert s.verify().ok

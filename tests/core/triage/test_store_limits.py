"""The decision store where the disk says no (issue 12 item 8; docs/decisions/triage.md, "Read-only
locations and full disks"): reads work from a location that cannot be written, writes are refused
saying why, and a full disk is reported as a full disk, never as a corrupt file."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from crp_core.triage import Decision, DecisionStore, TriageStoreError
from crp_core.triage.sqlite_store import SqliteBackend
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT


def _decision(b: str = "b", note: str = "") -> Decision:
    return Decision(fact_a="a", fact_b=b, kind="dismiss", operator="ann", note=note)


def _db_with(path: Path, n: int) -> Path:
    with DecisionStore(path) as s:
        for i in range(n):
            s.record(_decision(f"b{i}"))
    return path


def test_a_location_that_cannot_be_written_is_read_and_writes_are_refused(tmp_path, monkeypatch):
    db = _db_with(tmp_path / "t.sqlite", 2)
    real_access = os.access
    # simulated: tests may run as root, for whom chmod blocks nothing (the real case is the next test)
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if mode == os.W_OK else real_access(p, mode))
    for readonly in (False, True):
        with DecisionStore(db, create=False, readonly=readonly) as s:
            assert s.readonly
            assert s.readonly_reason == "the location is read-only (the file is not writable)"
            assert [d.fact_b for d in s.all()] == ["b0", "b1"] and len(s) == 2
            assert s.integrity_check() == "ok"
            with pytest.raises(TriageStoreError) as got:
                s.record(_decision("c"))
            assert str(got.value) == (
                f"{db}: writes refused: the location is read-only (the file is not "
                "writable); decisions can be read but not recorded"
            )
    assert not os.path.exists(f"{db}-wal") and not os.path.exists(f"{db}-shm")  # read as immutable
    with pytest.raises(TriageStoreError, match="cannot create the decision database: the location is read-only"):
        DecisionStore(tmp_path / "new.sqlite")
    assert not (tmp_path / "new.sqlite").exists()
    monkeypatch.setattr(os, "access", real_access)
    with DecisionStore(db, create=False) as s:  # writable again: a normal store
        assert not s.readonly and s.readonly_reason is None
        s.record(_decision("c"))
        assert len(s) == 3


_CHILD = """
import sys
from crp_core.triage import Decision, DecisionStore, TriageStoreError
with DecisionStore(sys.argv[1], create=False) as s:
    print(len(s.all()), s.readonly_reason)
    try:
        s.record(Decision(fact_a="a", fact_b="z", kind="dismiss", operator="ann"))
    except TriageStoreError as exc:
        print(exc)
"""


def test_a_really_read_only_folder_is_read(tmp_path):
    """chmod 555 on the folder and 444 on the file; as root the reader is run as user nobody."""
    base = Path(tempfile.mkdtemp(prefix="crp-ro-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        folder = base / "ro"
        folder.mkdir()
        db = _db_with(folder / "t.sqlite", 1)
        os.chmod(db, 0o444)
        os.chmod(folder, 0o555)
        cmd = [sys.executable, "-c", _CHILD, str(db)]
        if os.geteuid() == 0:
            if shutil.which("setpriv") is None:
                pytest.skip("running as root without setpriv: cannot drop the right to write")
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env, cwd=base)
        if done.returncode != 0 and "Permission denied" in done.stderr and "t.sqlite" not in done.stderr:
            pytest.skip(f"user nobody cannot run this checkout: {done.stderr[-200:]}")
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == [
            "1 the location is read-only (the file is not writable)",
            f"{db}: writes refused: the location is read-only (the file is not writable); decisions can be "
            "read but not recorded",
        ]
        assert sorted(os.listdir(folder)) == ["t.sqlite"]
    finally:
        os.chmod(base / "ro", 0o755) if (base / "ro").exists() else None
        shutil.rmtree(base)


def test_a_full_disk_is_reported_as_a_full_disk_and_loses_nothing(tmp_path):
    db = tmp_path / "t.sqlite"
    acknowledged = []
    with DecisionStore(db) as s:
        acknowledged.append(s.record(_decision("b0")).id)
        con = s.backend._conn()
        pages = con.execute("PRAGMA page_count").fetchone()[0]
        con.execute(f"PRAGMA max_page_count = {pages + 1}")  # SQLite answers SQLITE_FULL beyond it
        with pytest.raises(TriageStoreError) as got:
            for i in range(1, 200):
                acknowledged.append(s.record(_decision(f"b{i}", note="n" * 3000)).id)
    msg = str(got.value)
    assert msg.startswith(
        f"{db}: cannot record the decision: disk full (SQLite: database or disk is full); "
        "nothing was written and the database file is not damaged"
    )
    assert "corrupt" not in msg and "unreadable" not in msg
    with DecisionStore(db, create=False) as s:  # the file is intact: every acknowledged decision is there
        assert [d.id for d in s.all()] == acknowledged and len(acknowledged) >= 2
        assert s.integrity_check() == "ok"


def test_a_full_disk_while_opening_is_not_called_corrupt(tmp_path, monkeypatch):
    db = _db_with(tmp_path / "t.sqlite", 1)

    def full(self, *, immutable=False):
        exc = sqlite3.OperationalError("database or disk is full")
        exc.sqlite_errorcode, exc.sqlite_errorname = 13, "SQLITE_FULL"
        raise exc

    monkeypatch.setattr(SqliteBackend, "_connect_ro", full)
    with pytest.raises(TriageStoreError) as got:
        DecisionStore(db, create=False)
    assert str(got.value) == (
        f"{db}: cannot read the decision database: disk full (SQLite: database or disk is "
        "full); nothing was written and the database file is not damaged; free some "
        "space and retry"
    )


def test_a_damaged_file_is_still_called_corrupt(tmp_path):
    db = _db_with(tmp_path / "t.sqlite", 1)
    data = bytearray(db.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the schema page, header kept
    db.write_bytes(bytes(data))
    with pytest.raises(TriageStoreError, match="corrupt"):
        DecisionStore(db, create=False)

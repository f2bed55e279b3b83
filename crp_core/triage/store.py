"""The SQLite store of operator decisions (SPEC-027 §2, SPEC-009 §8).

This module does I/O, explicitly, behind :class:`DecisionStore`; the decision model it stores is
the pure :mod:`crp_core.decisions`.

Store guarantees (decisions: ``docs/decisions/triage.md``):

* WAL journal, ``synchronous=FULL`` (a committed decision survives a process kill *and* a power
  loss), ``busy_timeout`` so concurrent writers wait instead of failing;
* one ``BEGIN IMMEDIATE`` ... ``COMMIT`` transaction per decision; the decisions table is
  append-only (triggers refuse UPDATE and DELETE), so it is the audit log;
* an existing file is checked **read-only** first (SQLite header, ``PRAGMA application_id``,
  schema version, tables, ``PRAGMA quick_check``); a corrupt file or another application's
  database raises :class:`TriageStoreError` and is never written to. Only a missing, zero-byte or
  table-less SQLite file is initialised.
"""

from __future__ import annotations

import errno
import os
import pathlib
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from crp_core.decisions import (
    COLUMNS,
    KINDS,
    MARKABLE_STATUSES,
    Decision,
    DecisionError,
    DecisionSet,
    TriageStoreError,
    pair_key,
    validate_decision,
)
from crp_core.io.timeparse import format_timestamp
from crp_core.support.files import regular_or_absent
from crp_core.triage.log import SCHEMA_VERSION, export_csv, export_json

#: ``PRAGMA application_id`` of a crp-inspect triage database: the bytes "CRPT" (0x43525054)
APPLICATION_ID = 0x43525054
#: how long a writer waits for another writer's transaction before giving up (seconds)
DEFAULT_BUSY_TIMEOUT_S = 10.0
#: environment variable naming the default database file (the dashboard and the CLI read it)
DB_PATH_ENV = "CRP_INSPECT_TRIAGE_DB"

_SQLITE_MAGIC = b"SQLite format 3\x00"
_TABLES = ("crp_triage_schema", "decisions")
_SCHEMA_SQL = f"""
CREATE TABLE crp_triage_schema (
    version    INTEGER PRIMARY KEY,
    applied_at TEXT NOT NULL,
    note       TEXT NOT NULL
);
CREATE TABLE decisions (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    pair_key        TEXT NOT NULL,
    fact_a          TEXT NOT NULL CHECK (length(fact_a) > 0),
    fact_b          TEXT NOT NULL CHECK (length(fact_b) > 0 AND fact_b <> fact_a),
    kind            TEXT NOT NULL CHECK (kind IN ({", ".join(repr(k) for k in KINDS)})),
    winner          TEXT CHECK (winner IS NULL OR winner IN (fact_a, fact_b)),
    target_fact     TEXT CHECK (target_fact IS NULL OR target_fact IN (fact_a, fact_b)),
    new_status      TEXT CHECK (new_status IS NULL OR new_status IN ({", ".join(repr(s) for s in MARKABLE_STATUSES)})),
    note            TEXT NOT NULL DEFAULT '',
    operator        TEXT NOT NULL CHECK (length(operator) > 0),
    decided_at      TEXT NOT NULL,
    ckf_fingerprint TEXT,
    CHECK ((kind = 'mark_status') = (target_fact IS NOT NULL AND new_status IS NOT NULL)),
    CHECK (kind <> 'override' OR winner IS NOT NULL),
    CHECK (kind IN ('accept', 'override') OR winner IS NULL)
);
CREATE INDEX decisions_by_pair ON decisions (pair_key, id);
CREATE INDEX decisions_by_target ON decisions (target_fact, id) WHERE target_fact IS NOT NULL;
CREATE TRIGGER decisions_append_only_update BEFORE UPDATE ON decisions
    BEGIN SELECT RAISE(ABORT, 'triage decisions are append-only'); END;
CREATE TRIGGER decisions_append_only_delete BEFORE DELETE ON decisions
    BEGIN SELECT RAISE(ABORT, 'triage decisions are append-only'); END;
"""


#: SQLite result codes that mean the file itself is damaged or not a database
_DAMAGED = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})


def sqlite_error_name(exc: sqlite3.Error) -> str:
    """The SQLite result code name of ``exc`` (``SQLITE_FULL``, ``SQLITE_READONLY_DBMOVED``, ...), or ""."""
    return str(getattr(exc, "sqlite_errorname", "") or "")


def sqlite_reason(exc: sqlite3.Error) -> str:
    """A sentence for an SQLite error that says what happened: a full disk is "disk full" (the file
    is not damaged: SQLite wrote nothing of the failed transaction), a read-only location is said as
    such; anything else is SQLite's own message with its result code."""
    name = sqlite_error_name(exc)
    if name == "SQLITE_FULL" or getattr(exc, "errno", None) == errno.ENOSPC:
        return (
            "disk full (SQLite: database or disk is full); nothing was written and the database file is "
            "not damaged; free some space and retry"
        )
    if name.startswith("SQLITE_READONLY"):
        return f"the location is read-only ({exc}; {name})"
    return f"{exc} ({name})" if name else str(exc)


def default_db_path() -> str | None:
    """The database file named by ``$CRP_INSPECT_TRIAGE_DB``, or None."""
    v = os.environ.get(DB_PATH_ENV, "").strip()
    return v or None


# ---- the store -------------------------------------------------------------------------------
def _utcnow() -> datetime:
    return datetime.now(UTC)


#: the columns of a decision row that hold text (the schema: NOT NULL), and those that may be NULL
_TEXT_COLUMNS = ("pair_key", "fact_a", "fact_b", "kind", "note", "operator", "decided_at")
_NULLABLE_TEXT_COLUMNS = ("winner", "target_fact", "new_status", "ckf_fingerprint")


#: the columns of a schema-1 decision row
_V1_COLUMNS = COLUMNS[:12]


def _column_problems(d: dict[str, Any]) -> list[str]:
    """What in one decision row has a type the schema does not allow (a NULL fact id, a number for a
    kind, a blob): each "field 'f': ..."."""
    said = [f"field 'id': must be a whole number, got {d['id']!r:.60}"] if type(d["id"]) is not int else []
    for c in _TEXT_COLUMNS + _NULLABLE_TEXT_COLUMNS:
        v = d[c]
        if not isinstance(v, str) and (v is not None or c in _TEXT_COLUMNS):
            said.append(f"field '{c}': must be text{'' if c in _TEXT_COLUMNS else ' or NULL'}, got {v!r:.60}")
    return said


def _row_to_decision(row: tuple[Any, ...], path: str) -> Decision:
    """The decision of one row of ``path``'s decisions table, as stored. A row whose values the schema
    refuses (written by another tool: a NULL fact id, a number for a kind) raises
    :class:`TriageStoreError` naming the decision and the fields, so no reader meets it as a TypeError."""
    d = dict(zip(_V1_COLUMNS, row))
    said = _column_problems(d)
    if said:
        raise TriageStoreError(
            f"{path}: decision #{d['id']!r:.30} cannot be read ({'; '.join(said)}); the schema refuses such a "
            "row: the database was written or altered by another tool; refusing to read it"
        )
    d.pop("pair_key")
    return Decision(**d)


class DecisionStore:
    """SQLite store of operator decisions. Use as a context manager or call :meth:`close`.

    One connection per store object (``check_same_thread=False``, calls serialised by a lock),
    autocommit mode, explicit ``BEGIN IMMEDIATE`` per decision. Reads run in their own implicit
    transaction, so they always see every decision committed by any process before the call.
    Each dashboard session opens its own store; a store is also safe to share between threads,
    and after ``fork()`` the child transparently opens its own connection.

    ``create=False``: the file must already be a decision database (read commands use this, so a
    typo in a path does not create an empty database). ``readonly=True``: never writes (the
    connection is opened ``mode=ro``); :meth:`record` raises.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        create: bool = True,
        readonly: bool = False,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT_S,
        clock: Callable[[], datetime] = _utcnow,
    ):
        self.path = os.fspath(path)
        self.readonly = readonly
        self.busy_timeout = float(busy_timeout)
        if not self.busy_timeout > 0:
            raise TriageStoreError(f"busy_timeout must be > 0 seconds, got {busy_timeout!r}")
        self._clock = clock
        self._lock = threading.RLock()
        self._con: sqlite3.Connection | None = None
        self._pid = os.getpid()
        self._closed = False
        self._memory = self.path == ":memory:"
        #: why this store reads only although it was not asked to: the file or its folder cannot be
        #: written (None when writable, or when ``readonly=True`` was asked for in a writable place)
        self.readonly_reason: str | None = None
        if self._memory:
            if readonly:
                raise TriageStoreError("an in-memory decision store cannot be read-only")
            self._con = self._open_rw(new=True)
            return
        state = self._inspect(create=create)
        self.readonly_reason = self._readonly_location()
        if state == "new" and self.readonly_reason is not None and not readonly:
            raise TriageStoreError(f"{self.path}: cannot create the decision database: {self.readonly_reason}")
        if readonly or self.readonly_reason is not None:
            if state == "new":
                raise TriageStoreError(f"{self.path}: empty file, not a decision database yet")
            self.readonly = True
            self._con = self._open_ro()
        else:
            self._con = self._open_rw(new=state == "new")

    # -- opening -------------------------------------------------------------------------------
    def _inspect(self, *, create: bool) -> str:
        """Classify the file read-only: "new" (may be initialised) or "ours". Raises otherwise."""
        if self._inspect_file(create=create) == "new":
            return "new"
        immutable, (app_id, version, names, check) = self._identity_read_only()
        if immutable and check is not None and check != "ok" and os.path.exists(self.path + "-wal"):
            return self._inspect(create=create)  # same race, seen by the integrity check
        return self._classify(app_id, version, names, check, create=create)

    def _inspect_file(self, *, create: bool) -> str:
        """ "new" for a missing or empty file that may be initialised, "sqlite" for an SQLite file to read;
        raises for anything else."""
        p = self.path
        if os.path.isdir(p):
            raise TriageStoreError(f"{p}: is a directory, not a decision database file")
        # a FIFO, socket or device would block the header read (or SQLite) forever; a link loop or a
        # dangling link (SQLite would create its target) is refused too: a regular file or nothing
        why = regular_or_absent(p)
        if why is not None:
            raise TriageStoreError(f"{p}: not usable as a decision database: {why}")
        if not os.path.exists(p):
            if not create:
                raise TriageStoreError(f"{p}: no such decision database")
            parent = os.path.dirname(os.path.abspath(p))
            if not os.path.isdir(parent):
                raise TriageStoreError(f"{p}: directory {parent} does not exist")
            return "new"
        try:
            with open(p, "rb") as fh:
                head = fh.read(100)
        except OSError as exc:
            raise TriageStoreError(f"{p}: cannot read: {exc.strerror or exc}") from None
        if head == b"":
            if not create:
                raise TriageStoreError(f"{p}: empty file, not a decision database yet")
            return "new"
        if len(head) < 100 or not head.startswith(_SQLITE_MAGIC):
            raise TriageStoreError(
                f"{p}: not an SQLite database (bad file header): corrupt, or some other kind of file; "
                "refusing to open or overwrite it"
            )
        return "sqlite"

    def _identity_read_only(self) -> tuple[bool, tuple[int, int, list[str], str | None]]:
        """(read as immutable, the database's identity and quick check), read without writing anything."""
        p = self.path
        # no WAL file: nothing to recover, read the main file as immutable (creates no -shm/-wal).
        # If that read fails while a WAL file has appeared meanwhile (another process is creating
        # the database right now), read it again through the WAL.
        immutable = not os.path.exists(p + "-wal")
        while True:
            try:
                con = self._connect_ro(immutable=immutable)
                try:
                    return immutable, self._read_identity(con, quick_check=True)
                finally:
                    con.close()
            except sqlite3.DatabaseError as exc:
                if immutable and os.path.exists(p + "-wal"):
                    immutable = False
                    continue
                if sqlite_error_name(exc) in _DAMAGED:
                    raise TriageStoreError(
                        f"{p}: unreadable SQLite database ({exc}); corrupt? refusing to modify it"
                    ) from None
                # a full disk, an I/O error or a location we may not write is not a damaged file
                raise TriageStoreError(f"{p}: cannot read the decision database: {sqlite_reason(exc)}") from None

    def _classify(self, app_id: int, version: int, names: list[str], check: str | None, *, create: bool) -> str:
        p = self.path
        if check is not None and check != "ok":
            raise TriageStoreError(f"{p}: database integrity check failed ({check}); refusing to use it")
        if app_id != APPLICATION_ID:
            if app_id == 0 and not names:
                if not create:
                    raise TriageStoreError(f"{p}: empty SQLite database, not a decision database yet")
                return "new"
            shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
            raise TriageStoreError(
                f"{p}: not a crp-inspect triage database (application_id {app_id:#010x}, expected "
                f"{APPLICATION_ID:#010x}; holds: {shown or 'nothing'}); refusing to modify it"
            )
        if version > SCHEMA_VERSION:
            raise TriageStoreError(
                f"{p}: decision database schema {version} is newer than this "
                f"crp-inspect supports ({SCHEMA_VERSION}); upgrade crp-inspect"
            )
        missing = [t for t in _TABLES if t not in names]
        if version < 1 or missing:
            raise TriageStoreError(
                f"{p}: damaged decision database (schema version {version}, missing "
                f"tables: {', '.join(missing) or 'none'}); refusing to modify it"
            )
        return "ours"

    @staticmethod
    def _read_identity(con: sqlite3.Connection, *, quick_check: bool) -> tuple[int, int, list[str], str | None]:
        app_id = int(con.execute("PRAGMA application_id").fetchone()[0])
        version = int(con.execute("PRAGMA user_version").fetchone()[0])
        names = [
            r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name")
        ]
        check = None
        if quick_check:
            rows = [r[0] for r in con.execute("PRAGMA quick_check")]
            check = "ok" if rows == ["ok"] else "; ".join(str(r) for r in rows[:5])
        return app_id, version, names, check

    def _uri(self, mode: str, *, immutable: bool = False) -> str:
        uri = pathlib.Path(os.path.abspath(self.path)).as_uri() + f"?mode={mode}"
        return uri + "&immutable=1" if immutable else uri

    def _connect_ro(self, *, immutable: bool = False) -> sqlite3.Connection:
        con = sqlite3.connect(
            self._uri("ro", immutable=immutable),
            uri=True,
            timeout=self.busy_timeout,
            isolation_level=None,
            check_same_thread=False,
        )
        con.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        return con

    def _readonly_location(self) -> str | None:
        """Why the database cannot be written here (None when it can): the file is not writable, or
        its folder is not (WAL mode creates ``-wal`` and ``-shm`` files next to it)."""
        if self._memory or not os.path.exists(self.path):
            folder = os.path.dirname(os.path.abspath(self.path))
            return (
                None
                if self._memory or os.access(folder, os.W_OK)
                else f"the location is read-only (folder {folder} is not writable)"
            )
        if not os.access(self.path, os.W_OK):
            return "the location is read-only (the file is not writable)"
        folder = os.path.dirname(os.path.abspath(self.path))
        if not os.access(folder, os.W_OK):
            return f"the location is read-only (folder {folder} is not writable)"
        return None

    def _immutable_reads(self) -> bool:
        """In a read-only location without a ``-wal`` file SQLite cannot create the ``-shm`` file a WAL
        reader needs, so the main file (complete: no WAL to replay) is read as immutable, through a
        fresh connection per read so a decision committed meanwhile by someone who may write is seen."""
        return self.readonly_reason is not None and not os.path.exists(self.path + "-wal")

    def _open_ro(self) -> sqlite3.Connection:
        try:
            con = self._connect_ro(immutable=self._immutable_reads())
            con.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:
            raise TriageStoreError(f"{self.path}: cannot open for reading: {sqlite_reason(exc)}") from None
        return con

    def _open_rw(self, *, new: bool) -> sqlite3.Connection:
        target = ":memory:" if self._memory else self._uri("rwc" if new else "rw")
        try:
            con = sqlite3.connect(
                target, uri=not self._memory, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise TriageStoreError(f"{self.path}: cannot open for writing: {sqlite_reason(exc)}") from None
        try:
            con.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            if not self._memory:
                mode = self._while_busy(lambda: con.execute("PRAGMA journal_mode = WAL").fetchone()[0])
                if str(mode).lower() != "wal":
                    raise TriageStoreError(
                        f"{self.path}: cannot switch to WAL journal mode (got {mode!r}); "
                        "is the file on a network file system?"
                    )
            con.execute("PRAGMA synchronous = FULL")
            if not new:
                return con  # classified read-only as ours: no write lock needed to open it
            con.execute("BEGIN IMMEDIATE")
            try:
                # re-check under the write lock: another process may have initialised it meanwhile
                app_id, version, names, _ = self._read_identity(con, quick_check=False)
                state = self._classify(app_id, version, names, None, create=True)
                if state == "new":
                    self._initialise(con)
                con.execute("COMMIT")
            except BaseException:
                if con.in_transaction:
                    con.execute("ROLLBACK")
                raise
        except TriageStoreError:
            con.close()
            raise
        except sqlite3.Error as exc:
            con.close()
            raise TriageStoreError(
                f"{self.path}: cannot open the decision database for writing: {sqlite_reason(exc)}"
            ) from None
        return con

    def _while_busy(self, step: Callable[[], Any]) -> Any:
        """``step()``, retried while another process holds the lock, up to ``busy_timeout``: switching
        to WAL while another process creates the same new file answers "database is locked" at once
        (SQLite's busy handler is not called for it)."""
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                return step()
            except sqlite3.OperationalError as exc:
                busy = "locked" in str(exc) or "busy" in str(exc)
                if not busy or time.monotonic() >= deadline:
                    raise
                time.sleep(0.02)

    def _initialise(self, con: sqlite3.Connection) -> None:
        for stmt in _SCHEMA_SQL.split(";\n"):
            if stmt.strip():
                con.execute(stmt)
        con.execute(
            "INSERT INTO crp_triage_schema (version, applied_at, note) VALUES (?, ?, ?)",
            (SCHEMA_VERSION, format_timestamp(self._clock()), "crp-inspect triage decisions"),
        )
        con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _conn(self) -> sqlite3.Connection:
        if self._closed:
            raise TriageStoreError(f"{self.path}: decision store is closed")
        if os.getpid() != self._pid:
            # a connection must not cross fork(): abandon the parent's, open our own
            self._pid = os.getpid()
            if self._memory:
                raise TriageStoreError("an in-memory decision store cannot be used after fork()")
            self._con = self._open_ro() if self.readonly else self._open_rw(new=False)
        assert self._con is not None
        return self._con

    # -- writing -------------------------------------------------------------------------------
    def record(self, decision: Decision) -> Decision:
        """Validate and append ``decision`` in its own transaction; returns it with id and decided_at."""
        if not isinstance(decision, Decision):
            raise DecisionError([("decision", f"expected a Decision, got {type(decision).__name__}")])
        if decision.id is not None or decision.decided_at is not None:
            raise DecisionError([("id", f"decision already recorded (id {decision.id}, {decision.decided_at})")])
        d = validate_decision(decision)
        if self.readonly:
            if self.readonly_reason is not None:
                raise TriageStoreError(
                    f"{self.path}: writes refused: {self.readonly_reason}; decisions can be read but not recorded"
                )
            raise TriageStoreError(f"{self.path}: decision store opened read-only")
        with self._lock:
            con = self._conn()
            try:
                con.execute("BEGIN IMMEDIATE")
                try:
                    stamped = replace(d, decided_at=format_timestamp(self._clock().astimezone(UTC)))
                    cur = con.execute(
                        f"INSERT INTO decisions ({', '.join(_V1_COLUMNS[1:])}) VALUES ({', '.join('?' * 11)})",
                        (
                            stamped.pair_key,
                            stamped.fact_a,
                            stamped.fact_b,
                            stamped.kind,
                            stamped.winner,
                            stamped.target_fact,
                            stamped.new_status,
                            stamped.note,
                            stamped.operator,
                            stamped.decided_at,
                            stamped.ckf_fingerprint,
                        ),
                    )
                    rid = cur.lastrowid  # set by every INSERT
                    assert rid is not None
                    con.execute("COMMIT")
                except BaseException:
                    if con.in_transaction:
                        con.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as exc:
                raise TriageStoreError(self._explain(exc, "record the decision")) from None
            except sqlite3.Error as exc:
                raise TriageStoreError(f"{self.path}: cannot record the decision: {exc}") from None
        return replace(stamped, id=rid)

    def _explain(self, exc: sqlite3.Error, what: str) -> str:
        msg = str(exc)
        if "locked" in msg or "busy" in msg:
            return (
                f"{self.path}: cannot {what}: the database stayed locked by another writer for more "
                f"than {self.busy_timeout:g} s"
            )
        return f"{self.path}: cannot {what}: {sqlite_reason(exc)}"

    # -- reading -------------------------------------------------------------------------------
    def _select(self, where: str = "", params: tuple[Any, ...] = ()) -> list[Decision]:
        sql = f"SELECT {', '.join(_V1_COLUMNS)} FROM decisions {where} ORDER BY id"
        return [_row_to_decision(r, self.path) for r in self._read(sql, params, "read decisions")]

    def _read(self, sql: str, params: tuple[Any, ...], what: str) -> list[tuple[Any, ...]]:
        """Rows of one query, through the store's connection, or through a fresh immutable one in a
        read-only location without a WAL file (:meth:`_immutable_reads`)."""
        with self._lock:
            con = self._conn()
            try:
                if not self._immutable_reads():
                    return con.execute(sql, params).fetchall()
                fresh = self._connect_ro(immutable=True)
                try:
                    return fresh.execute(sql, params).fetchall()
                finally:
                    fresh.close()
            except sqlite3.Error as exc:
                raise TriageStoreError(self._explain(exc, what)) from None

    def all(self) -> list[Decision]:
        """Every decision (the whole audit log), oldest first."""
        return self._select()

    def history(self, key: str | tuple[str, str]) -> list[Decision]:
        """The audit log of one pair (a :func:`pair_key` or a pair of ids), oldest first."""
        if isinstance(key, tuple):
            key = pair_key(*key)
        return self._select("WHERE pair_key = ?", (key,))

    def fact_history(self, fact_id: str) -> list[Decision]:
        """Every decision on a pair that holds ``fact_id``, oldest first."""
        return self._select("WHERE fact_a = ? OR fact_b = ?", (fact_id, fact_id))

    def current(self, *, ckf_fingerprint: str | None = None) -> DecisionSet:
        """The decisions in force. With ``ckf_fingerprint``: only decisions recorded for that CKF
        or without a fingerprint."""
        if ckf_fingerprint is None:
            return DecisionSet.from_decisions(self._select())
        return DecisionSet.from_decisions(
            self._select("WHERE ckf_fingerprint IS NULL OR ckf_fingerprint = ?", (ckf_fingerprint,))
        )

    def __len__(self) -> int:
        return int(self._read("SELECT count(*) FROM decisions", (), "count decisions")[0][0])

    def integrity_check(self) -> str:
        """``PRAGMA integrity_check``: "ok" or the problems found."""
        rows = [r[0] for r in self._read("PRAGMA integrity_check", (), "check the database")]
        return "ok" if rows == ["ok"] else "; ".join(map(str, rows))

    # -- export --------------------------------------------------------------------------------
    def export_json(self) -> str:
        """The audit log and the decisions in force, as one JSON document (deterministic)."""
        return export_json(self.all())

    def export_csv(self) -> str:
        """The audit log as CSV, one decision per row (RFC 4180, header row, empty cell = null)."""
        return export_csv(self.all())

    # -- lifecycle -----------------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            if self._con is not None and os.getpid() == self._pid:
                self._con.close()
            self._con = None
            self._closed = True

    def __enter__(self) -> DecisionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"DecisionStore({self.path!r}{', readonly' if self.readonly else ''}{', closed' if self._closed else ''})"
        )

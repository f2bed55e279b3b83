"""The SQLite side of the decision store (docs/decisions/triage.md "Storage"): the file checks made
read-only before anything is written, the connection (WAL, ``synchronous=FULL``, busy timeout), the
schema-1 migration and the serialised write transaction (``BEGIN IMMEDIATE``). Statements are built
with SQLAlchemy Core (:mod:`crp_core.triage.schema`) and run on the standard library's ``sqlite3``,
which keeps SQLite's own result codes (a full disk, a read-only location) for the messages.

Guarantees:

* WAL journal, ``synchronous=FULL`` (a committed decision survives a process kill *and* a power
  loss), ``busy_timeout`` so concurrent writers wait instead of failing;
* one ``BEGIN IMMEDIATE`` ... ``COMMIT`` transaction per write, so writers are serialised (the hash
  chain stays linear, the ``based_on`` check and the insert are atomic); the decisions table is
  append-only (triggers refuse UPDATE and DELETE);
* an existing file is checked **read-only** first (SQLite header, ``PRAGMA application_id``,
  schema version, tables, ``PRAGMA quick_check``); a corrupt file or another application's
  database raises :class:`TriageStoreError` and is never written to. Only a missing, zero-byte or
  table-less SQLite file is initialised; a schema-1 file is migrated in one transaction.
"""

from __future__ import annotations

import errno
import os
import pathlib
import sqlite3
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.sql import ClauseElement, Executable

from crp_core.decisions import TriageStoreError
from crp_core.io.timeparse import format_timestamp
from crp_core.support.files import regular_or_absent
from crp_core.triage.migrations import V1_COLUMNS, migrate_sqlite_v1, v1_rows_as_v2
from crp_core.triage.schema import APPLICATION_ID, SCHEMA_NOTE, SCHEMA_VERSION, create_statements

T = TypeVar("T")

#: how long a writer waits for another writer's transaction before giving up (seconds)
DEFAULT_BUSY_TIMEOUT_S = 10.0
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: the tables of each schema version
_TABLES = {1: ("crp_triage_schema", "decisions"), 2: ("claims", "crp_triage_schema", "decisions")}
_DIALECT = sqlite_dialect.dialect(paramstyle="qmark")


def compiled(stmt: Executable) -> tuple[str, tuple[Any, ...]]:
    """``stmt`` as SQLite SQL text with ``?`` parameters, and the parameters in order."""
    assert isinstance(stmt, ClauseElement)
    c: Any = stmt.compile(dialect=_DIALECT, compile_kwargs={"render_postcompile": True})
    params = c.construct_params()
    return str(c), tuple(params[k] for k in (c.positiontup or ()))


class SqliteTx:
    """The statements of one write transaction on an SQLite connection."""

    def __init__(self, con: sqlite3.Connection):
        self.con = con

    def rows(self, stmt: Executable) -> list[tuple[Any, ...]]:
        sql, params = compiled(stmt)
        return self.con.execute(sql, params).fetchall()

    def insert(self, stmt: Executable) -> int:
        """Run an INSERT; the new row's id."""
        sql, params = compiled(stmt)
        rid = self.con.execute(sql, params).lastrowid
        assert rid is not None  # set by every INSERT
        return int(rid)

    def run(self, stmt: Executable) -> int:
        """Run a statement; the number of rows it changed."""
        sql, params = compiled(stmt)
        return int(self.con.execute(sql, params).rowcount)


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


class SqliteBackend:
    """One SQLite decision database (see the module docstring). One connection per backend object
    (``check_same_thread=False``, calls serialised by a lock), autocommit mode, explicit ``BEGIN
    IMMEDIATE`` per write. Reads run in their own implicit transaction, so they always see every
    decision committed by any process before the call. After ``fork()`` the child transparently opens
    its own connection. ``version``: the file's schema version (1 only for a schema-1 file opened
    read-only: it cannot be migrated then, and is read as the migration would write it).
    """

    dialect = "sqlite"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        create: bool = True,
        readonly: bool = False,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT_S,
        clock: Callable[[], datetime],
    ):
        self.path = os.fspath(path)
        self.where = self.path
        self.version = SCHEMA_VERSION
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
        if state == "v1":
            self.version = 1
        self.readonly_reason = self._readonly_location()
        if state == "new" and self.readonly_reason is not None and not readonly:
            raise TriageStoreError(f"{self.path}: cannot create the decision database: {self.readonly_reason}")
        if readonly or self.readonly_reason is not None:
            if state == "new":
                raise TriageStoreError(f"{self.path}: empty file, not a decision database yet")
            self.readonly = True
            self._con = self._open_ro()
        else:
            if state == "v1":
                self._check_v1_rows()  # a row the migration would refuse: refuse before writing anything
            self._con = self._open_rw(new=state != "ours")
            self.version = SCHEMA_VERSION

    # -- opening -------------------------------------------------------------------------------
    def _inspect(self, *, create: bool) -> str:
        """Classify the file read-only: "new" (may be initialised), "v1" (schema 1, to migrate) or "ours".
        Raises otherwise."""
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

    def _check_v1_rows(self) -> None:
        """Read a schema-1 file's rows read-only and check them as the migration will."""
        con = self._connect_ro(immutable=not os.path.exists(self.path + "-wal"))
        try:
            rows = con.execute(f"SELECT {', '.join(V1_COLUMNS)} FROM decisions ORDER BY id").fetchall()
        except sqlite3.Error as exc:
            raise TriageStoreError(f"{self.path}: cannot read the decision database: {sqlite_reason(exc)}") from None
        finally:
            con.close()
        v1_rows_as_v2(rows, self.path)

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
        missing = [t for t in _TABLES.get(version, _TABLES[SCHEMA_VERSION]) if t not in names]
        if version < 1 or missing:
            raise TriageStoreError(
                f"{p}: damaged decision database (schema version {version}, missing "
                f"tables: {', '.join(missing) or 'none'}); refusing to modify it"
            )
        return "ours" if version == SCHEMA_VERSION else "v1"

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
                elif state == "v1":  # another process may have migrated it meanwhile: then "ours"
                    migrate_sqlite_v1(con, self.path, format_timestamp(self._clock()))
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
        for stmt in create_statements(_DIALECT):
            con.execute(stmt)
        con.execute(
            "INSERT INTO crp_triage_schema (version, applied_at, note) VALUES (?, ?, ?)",
            (SCHEMA_VERSION, format_timestamp(self._clock()), SCHEMA_NOTE),
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

    def _explain(self, exc: sqlite3.Error, what: str) -> str:
        msg = str(exc)
        if "locked" in msg or "busy" in msg:
            return (
                f"{self.path}: cannot {what}: the database stayed locked by another writer for more "
                f"than {self.busy_timeout:g} s"
            )
        return f"{self.path}: cannot {what}: {sqlite_reason(exc)}"

    def read(self, stmt: Executable, what: str) -> list[tuple[Any, ...]]:
        """The rows of one SQLAlchemy Core query (:meth:`_read`)."""
        sql, params = compiled(stmt)
        return self._read(sql, params, what)

    def write(self, step: Callable[[SqliteTx], T], what: str) -> T:
        """``step(tx)`` inside one ``BEGIN IMMEDIATE`` ... ``COMMIT`` transaction: writers are serialised,
        so what ``step`` reads is still true when it writes. A refusal raised by ``step`` rolls back."""
        with self._lock:
            con = self._conn()
            try:
                con.execute("BEGIN IMMEDIATE")
                try:
                    done = step(SqliteTx(con))
                    con.execute("COMMIT")
                except BaseException:
                    if con.in_transaction:
                        con.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as exc:
                raise TriageStoreError(self._explain(exc, what)) from None
            except sqlite3.Error as exc:
                raise TriageStoreError(f"{self.path}: cannot {what}: {exc}") from None
        return done

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

    def integrity_check(self) -> str:
        """``PRAGMA integrity_check``: "ok" or the problems found."""
        rows = [r[0] for r in self._read("PRAGMA integrity_check", (), "check the database")]
        return "ok" if rows == ["ok"] else "; ".join(map(str, rows))

    # -- lifecycle -----------------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            if self._con is not None and os.getpid() == self._pid:
                self._con.close()
            self._con = None
            self._closed = True

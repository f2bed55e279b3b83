"""The PostgreSQL side of the decision store (docs/decisions/triage.md "Storage"), selected by a
``postgresql://`` URL (``$CRP_INSPECT_TRIAGE_DB``). SQLAlchemy Core on the psycopg (3) driver; the
schema is the SQLite one (:mod:`crp_core.triage.schema`) with a plpgsql trigger that refuses UPDATE,
DELETE and TRUNCATE of the decisions.

Writers are serialised by a transaction-scoped advisory lock (``pg_advisory_xact_lock`` on the
store's application id), taken first in every write transaction: the ``based_on`` check, the chain's
previous hash and the insert see one state, so there is no lost update and the chain stays linear,
whatever the number of dashboard servers and CLI writers. A writer waits at most the busy timeout
(``lock_timeout``). A server that cannot be reached is :class:`TriageStoreUnavailable` (nothing
written; retry later); stale pooled connections are replaced (``pool_pre_ping``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import create_engine, func, select, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError
from sqlalchemy.sql import Executable

from crp_core.decisions import TriageStoreError, TriageStoreUnavailable
from crp_core.io.timeparse import format_timestamp
from crp_core.triage.schema import APPLICATION_ID, SCHEMA_NOTE, SCHEMA_VERSION, create_statements, schema_table

T = TypeVar("T")
#: the advisory lock every write transaction takes (one per database)
WRITE_LOCK_KEY = APPLICATION_ID
_OURS = ("claims", "crp_triage_schema", "decisions")


def is_postgres_url(target: str) -> bool:
    return target.startswith(("postgresql://", "postgresql+psycopg://", "postgres://"))


class PgTx:
    """The statements of one write transaction on a PostgreSQL connection."""

    def __init__(self, con: Connection):
        self.con = con

    def rows(self, stmt: Executable) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self.con.execute(stmt)]

    def insert(self, stmt: Any) -> int:
        """Run an INSERT into decisions; the new row's id."""
        return int(self.con.execute(stmt.returning(stmt.table.c.id)).scalar_one())

    def run(self, stmt: Executable) -> int:
        return int(self.con.execute(stmt).rowcount)


class PostgresBackend:
    """One PostgreSQL decision database (module docstring)."""

    dialect = "postgresql"

    def __init__(
        self,
        url: str,
        *,
        create: bool = True,
        readonly: bool = False,
        busy_timeout: float = 10.0,
        clock: Callable[[], datetime],
    ):
        try:
            parsed = make_url(url)
        except ArgumentError as exc:
            raise TriageStoreError(f"not a database URL: {exc}") from None
        self.where = parsed.render_as_string(hide_password=True)
        self.path = self.where
        self.readonly = readonly
        self.readonly_reason: str | None = None
        self.version = SCHEMA_VERSION
        self.busy_timeout = float(busy_timeout)
        if not self.busy_timeout > 0:
            raise TriageStoreError(f"busy_timeout must be > 0 seconds, got {busy_timeout!r}")
        self._clock = clock
        self._lock = threading.RLock()
        self._closed = False
        self._pid = os.getpid()
        options = "-c default_transaction_read_only=on" if readonly else ""
        try:
            self._engine: Engine = create_engine(
                parsed.set(drivername="postgresql+psycopg"),
                pool_pre_ping=True,
                pool_size=2,
                max_overflow=4,
                connect_args={"connect_timeout": max(1, round(self.busy_timeout)), "options": options},
            )
        except NoSuchModuleError as exc:
            raise TriageStoreError(f"{self.where}: the PostgreSQL driver (psycopg) is not installed: {exc}") from None
        self._open(create=create)

    # -- opening -------------------------------------------------------------------------------
    def _open(self, *, create: bool) -> None:
        """Check what the database holds; create the schema in an empty one (``create``)."""
        try:
            with self._engine.begin() as con:
                if not self.readonly:
                    con.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": WRITE_LOCK_KEY})
                names = set(
                    con.execute(
                        text("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")
                    ).scalars()
                )
                if "crp_triage_schema" in names:
                    self._check_ours(con, names)
                    return
                if names & set(_OURS):
                    raise TriageStoreError(
                        f"{self.where}: holds tables named {', '.join(sorted(names & set(_OURS)))} but no "
                        "crp_triage_schema: not a crp-inspect triage database; refusing to modify it"
                    )
                if not create:
                    raise TriageStoreError(f"{self.where}: no decision database here yet (no crp_triage_schema table)")
                if self.readonly:
                    raise TriageStoreError(f"{self.where}: empty, not a decision database yet")
                for stmt in create_statements(con.dialect):
                    con.execute(text(stmt))
                con.execute(
                    schema_table.insert().values(
                        version=SCHEMA_VERSION, applied_at=format_timestamp(self._clock()), note=SCHEMA_NOTE
                    )
                )
        except DBAPIError as exc:
            raise self._error(exc, "open the decision database") from None

    def _check_ours(self, con: Connection, names: set[str]) -> None:
        row = con.execute(select(func.max(schema_table.c.version), func.min(schema_table.c.note))).one()
        version, note = row
        if not isinstance(note, str) or not note.startswith(SCHEMA_NOTE):
            raise TriageStoreError(
                f"{self.where}: crp_triage_schema does not name crp-inspect ({note!r:.60}); refusing to modify it"
            )
        if version > SCHEMA_VERSION:
            raise TriageStoreError(
                f"{self.where}: decision database schema {version} is newer than this crp-inspect supports "
                f"({SCHEMA_VERSION}); upgrade crp-inspect"
            )
        missing = [t for t in _OURS if t not in names]
        if version < SCHEMA_VERSION or missing:
            raise TriageStoreError(
                f"{self.where}: damaged decision database (schema version {version}, missing tables: "
                f"{', '.join(missing) or 'none'}); refusing to modify it"
            )

    # -- statements ----------------------------------------------------------------------------
    def _error(self, exc: DBAPIError, what: str) -> TriageStoreError:
        """The store error of a driver error: :class:`TriageStoreUnavailable` when the server cannot be
        reached or the connection was lost (SQLSTATE class 08, 57P: shutdown), else what it said."""
        state = str(getattr(exc.orig, "sqlstate", "") or "")
        first = str(exc.orig).strip().splitlines()[0] if str(exc.orig).strip() else type(exc.orig).__name__
        if exc.connection_invalidated or state.startswith(("08", "57P")) or (not state and "connect" in first.lower()):
            return TriageStoreUnavailable(
                f"{self.where}: cannot {what}: the database server cannot be reached ({first}); nothing was "
                "written; retry when it is back"
            )
        if state == "55P03":
            return TriageStoreError(
                f"{self.where}: cannot {what}: the database stayed locked by another writer for more than "
                f"{self.busy_timeout:g} s"
            )
        return TriageStoreError(f"{self.where}: cannot {what}: {first}" + (f" (SQLSTATE {state})" if state else ""))

    def read(self, stmt: Executable, what: str) -> list[tuple[Any, ...]]:
        self._check_open()
        try:
            with self._engine.connect() as con:
                return [tuple(r) for r in con.execute(stmt)]
        except DBAPIError as exc:
            raise self._error(exc, what) from None

    def write(self, step: Callable[[PgTx], T], what: str) -> T:
        """``step(tx)`` in one transaction holding the write lock (module docstring)."""
        self._check_open()
        try:
            with self._engine.begin() as con:
                con.execute(text(f"SET LOCAL lock_timeout = '{int(self.busy_timeout * 1000)}ms'"))
                con.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": WRITE_LOCK_KEY})
                return step(PgTx(con))
        except DBAPIError as exc:
            raise self._error(exc, what) from None

    def _check_open(self) -> None:
        if self._closed:
            raise TriageStoreError(f"{self.where}: decision store is closed")
        if os.getpid() != self._pid:  # a pooled connection must not cross fork(): the child opens its own
            self._engine.dispose(close=False)
            self._pid = os.getpid()

    def integrity_check(self) -> str:
        """PostgreSQL checks its pages itself (checksums, WAL): "ok" once the server answers."""
        self.read(select(func.count()).select_from(schema_table), "check the database")
        return "ok"

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._engine.dispose()
            self._closed = True

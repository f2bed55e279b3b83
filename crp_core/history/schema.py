"""The experiment history's tables (docs/decisions/history.md), kept in the decision database beside the
triage log but in a MetaData of their own: ``experiments`` (one row per experiment; the JSON columns hold
text) and ``crp_history_schema`` (one row per history schema version applied).

The history has its own version, so the triage schema (:mod:`crp_core.triage.schema`) and its chain are
untouched: a triage database of schema 2 gains these tables in one transaction the first time a history
store writes to it (:func:`ensure_tables`); the triage store ignores tables it does not own.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import CheckConstraint, Column, Index, Integer, MetaData, Table, Text, func, select, text
from sqlalchemy.dialects import postgresql as postgresql_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.schema import CreateIndex, CreateTable
from sqlalchemy.sql.elements import TextClause

from crp_core.decisions import TriageStoreError
from crp_core.history.records import KINDS, ORIGINS

#: ``crp_history_schema.version`` this code writes and reads
HISTORY_SCHEMA_VERSION = 1
#: the note of the history schema rows
HISTORY_SCHEMA_NOTE = "crp-inspect experiment history"


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


metadata = MetaData()

history_schema = Table(
    "crp_history_schema",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("applied_at", Text, nullable=False),
    Column("note", Text, nullable=False),
)

experiments = Table(
    "experiments",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", Text, nullable=False),
    Column("recorded_at", Text, nullable=False),
    Column("recorded_by", Text, nullable=False),
    Column("origin", Text, nullable=False),
    Column("kb_name", Text),
    Column("kb_fingerprint", Text),
    Column("suite_name", Text),
    Column("suite_fingerprint", Text),
    Column("config_diff", Text, nullable=False),
    Column("metrics", Text, nullable=False),
    Column("summary", Text),
    Column("note", Text, nullable=False, server_default=""),
    CheckConstraint(_in("kind", KINDS), name="experiment_kind_known"),
    CheckConstraint(_in("origin", ORIGINS), name="experiment_origin_known"),
    CheckConstraint("length(recorded_by) > 0", name="experiment_by_given"),
    sqlite_autoincrement=True,  # ids are never reused: id order is recording order
)
Index("experiments_by_kb", experiments.c.kb_name, experiments.c.id)
Index("experiments_by_suite", experiments.c.suite_name, experiments.c.id)

#: the columns of an experiment row, in the table's order
EXPERIMENT_COLUMNS = tuple(c.name for c in experiments.columns)
_TABLES = ("crp_history_schema", "experiments")


def _present(tx: Any, dialect: str) -> set[str]:
    """Which of the history's tables the database holds."""
    if dialect == "sqlite":
        q = text(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('crp_history_schema', 'experiments')"
        )
    else:
        q = text(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_name IN ('crp_history_schema', 'experiments')"
        )
    return {str(r[0]) for r in tx.rows(q)}


def check_version(where: str, present: set[str], version: object) -> None:
    """Refuse a history of a newer schema, or one with a table missing."""
    if isinstance(version, int) and version > HISTORY_SCHEMA_VERSION:
        raise TriageStoreError(
            f"{where}: experiment history schema {version} is newer than this crp-inspect supports "
            f"({HISTORY_SCHEMA_VERSION}); upgrade crp-inspect"
        )
    missing = [t for t in _TABLES if t not in present]
    if missing or not isinstance(version, int) or version < 1:
        raise TriageStoreError(
            f"{where}: damaged experiment history (schema version {version!r}, missing tables: "
            f"{', '.join(missing) or 'none'}); refusing to modify it"
        )


def _ddl(element: CreateTable | CreateIndex, dialect: str) -> TextClause:
    """A DDL element as SQL text of ``dialect`` (run as text: the store's statement runner binds parameters)."""
    d = sqlite_dialect.dialect() if dialect == "sqlite" else postgresql_dialect.dialect()
    return text(str(element.compile(dialect=d)).strip())


def ensure_tables(tx: Any, dialect: str, where: str, now: str) -> bool:
    """Inside a write transaction: create the history's tables when the database has none of them (a
    new database, or a triage database of schema 2), recording the version; check them otherwise.
    Whether they were created."""
    present = _present(tx, dialect)
    if not present:
        for t in (history_schema, experiments):
            tx.run(_ddl(CreateTable(t), dialect))
            for i in sorted(t.indexes, key=lambda i: str(i.name)):
                tx.run(_ddl(CreateIndex(i), dialect))
        tx.run(
            history_schema.insert().values(
                version=HISTORY_SCHEMA_VERSION, applied_at=now, note=f"{HISTORY_SCHEMA_NOTE}: tables added"
            )
        )
        return True
    version = tx.rows(select(func.max(history_schema.c.version))) if "crp_history_schema" in present else [(None,)]
    check_version(where, present, version[0][0])
    return False


def read_state(read: Any, dialect: str, where: str) -> bool:
    """Read-only: whether the history's tables are there (checked as :func:`ensure_tables` does)."""

    class _Reader:
        def rows(self, stmt: Any) -> list[tuple[Any, ...]]:
            return list(read(stmt))

    present = _present(_Reader(), dialect)
    if not present:
        return False
    version = read(select(func.max(history_schema.c.version))) if "crp_history_schema" in present else [(None,)]
    check_version(where, present, version[0][0])
    return True

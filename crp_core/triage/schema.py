"""The decision database's schema, one SQLAlchemy Core :class:`~sqlalchemy.MetaData` for SQLite and
PostgreSQL (docs/decisions/triage.md "Storage"), and the statements each dialect needs besides it (the
append-only triggers).

Schema version 2: ``decisions`` (the audit log, every entry chained by ``prev_hash`` / ``entry_hash``,
:mod:`crp_core.triage.chain`), ``claims`` (the leases of a shared queue) and ``crp_triage_schema``
(one row per version applied). Version 1 (SQLite only) is migrated by :mod:`crp_core.triage.migrations`.
"""

from __future__ import annotations

from sqlalchemy import (
    CheckConstraint,
    Column,
    Float,
    Index,
    Integer,
    MetaData,
    Table,
    Text,
    text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.schema import CreateIndex, CreateTable

from crp_core.decisions import ALL_KINDS, MARKABLE_STATUSES, ORIGINS, ROLES

#: ``crp_triage_schema.version`` (and SQLite's ``PRAGMA user_version``) this code writes and reads
SCHEMA_VERSION = 2
#: the note of the schema rows: what tells our tables from another application's on PostgreSQL
SCHEMA_NOTE = "crp-inspect triage decisions"
#: ``PRAGMA application_id`` of a crp-inspect triage SQLite database: the bytes "CRPT" (0x43525054)
APPLICATION_ID = 0x43525054


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


metadata = MetaData()

schema_table = Table(
    "crp_triage_schema",
    metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("applied_at", Text, nullable=False),
    Column("note", Text, nullable=False),
)

decisions = Table(
    "decisions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("pair_key", Text, nullable=False),
    Column("fact_a", Text, nullable=False),
    Column("fact_b", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("winner", Text),
    Column("target_fact", Text),
    Column("new_status", Text),
    Column("note", Text, nullable=False, server_default=""),
    Column("operator", Text, nullable=False),
    Column("decided_at", Text, nullable=False),
    Column("ckf_fingerprint", Text),
    Column("kb_name", Text),
    Column("role", Text, nullable=False),
    Column("origin", Text, nullable=False),
    Column("os_user", Text),
    Column("based_on", Integer),
    Column("reverts", Integer),
    Column("prev_hash", Text, nullable=False),
    Column("entry_hash", Text, nullable=False),
    CheckConstraint("length(fact_a) > 0", name="fact_a_given"),
    CheckConstraint("length(fact_b) > 0 AND fact_b <> fact_a", name="fact_b_other"),
    CheckConstraint(_in("kind", ALL_KINDS), name="kind_known"),
    CheckConstraint("winner IS NULL OR winner IN (fact_a, fact_b)", name="winner_in_pair"),
    CheckConstraint("target_fact IS NULL OR target_fact IN (fact_a, fact_b)", name="target_in_pair"),
    CheckConstraint("new_status IS NULL OR " + _in("new_status", MARKABLE_STATUSES), name="status_known"),
    CheckConstraint("length(operator) > 0", name="operator_given"),
    CheckConstraint(_in("role", ROLES), name="role_known"),
    CheckConstraint(_in("origin", ORIGINS), name="origin_known"),
    CheckConstraint("(kind = 'mark_status') = (target_fact IS NOT NULL AND new_status IS NOT NULL)", name="mark"),
    CheckConstraint("kind <> 'override' OR winner IS NOT NULL", name="override_winner"),
    CheckConstraint("kind IN ('accept', 'override') OR winner IS NULL", name="winner_kinds"),
    CheckConstraint("(kind = 'revert') = (reverts IS NOT NULL)", name="revert_names"),
    CheckConstraint("based_on IS NULL OR based_on >= 0", name="based_on_id"),
    CheckConstraint("length(prev_hash) = 64 AND length(entry_hash) = 64", name="hashes"),
    sqlite_autoincrement=True,  # ids are never reused, so id order is the log's order
)
Index("decisions_by_pair", decisions.c.pair_key, decisions.c.id)
Index(
    "decisions_by_target",
    decisions.c.target_fact,
    decisions.c.id,
    sqlite_where=text("target_fact IS NOT NULL"),
    postgresql_where=text("target_fact IS NOT NULL"),
)

claims = Table(
    "claims",
    metadata,
    Column("pair_key", Text, primary_key=True),
    Column("operator", Text, nullable=False),
    Column("kb_fingerprint", Text),
    Column("claimed_at", Text, nullable=False),
    Column("expires_at", Float, nullable=False),  # seconds since the epoch (UTC)
    CheckConstraint("length(operator) > 0", name="claim_operator_given"),
)

#: the columns of a decision row, in the table's order (crp_core.decisions.COLUMNS)
DECISION_COLUMNS = tuple(c.name for c in decisions.columns)

_APPEND_ONLY = "triage decisions are append-only"

SQLITE_TRIGGERS = (
    f"CREATE TRIGGER decisions_append_only_update BEFORE UPDATE ON decisions "
    f"BEGIN SELECT RAISE(ABORT, '{_APPEND_ONLY}'); END",
    f"CREATE TRIGGER decisions_append_only_delete BEFORE DELETE ON decisions "
    f"BEGIN SELECT RAISE(ABORT, '{_APPEND_ONLY}'); END",
)

POSTGRESQL_TRIGGERS = (
    "CREATE OR REPLACE FUNCTION crp_triage_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
    f"BEGIN RAISE EXCEPTION '{_APPEND_ONLY}'; END $$",
    "CREATE TRIGGER decisions_append_only BEFORE UPDATE OR DELETE ON decisions "
    "FOR EACH ROW EXECUTE FUNCTION crp_triage_append_only()",
    "CREATE TRIGGER decisions_no_truncate BEFORE TRUNCATE ON decisions "
    "FOR EACH STATEMENT EXECUTE FUNCTION crp_triage_append_only()",
)


def create_statements(dialect: Dialect, *, tables: tuple[Table, ...] = (schema_table, decisions, claims)) -> list[str]:
    """The DDL that creates ``tables`` (with their indexes) and, with ``decisions``, its append-only
    triggers, as SQL text of ``dialect``."""
    out: list[str] = []
    for t in tables:
        out.append(str(CreateTable(t).compile(dialect=dialect)).strip())
        out += [
            str(CreateIndex(i).compile(dialect=dialect)).strip() for i in sorted(t.indexes, key=lambda i: str(i.name))
        ]
    if decisions in tables:
        out += list(SQLITE_TRIGGERS if dialect.name == "sqlite" else POSTGRESQL_TRIGGERS)
    return out

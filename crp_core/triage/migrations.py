"""Versioned migrations of the decision database (docs/decisions/triage.md "Migrations").

One step per version, run inside the opening transaction (all or nothing), after the file was checked
read-only. Schema 1 (SQLite only: the decisions table without team fields or chain) -> 2: every row kept
with its id, ``role`` "operator" (schema 1 had no roles), ``origin`` "migrated", the team fields empty,
and chained in id order (:mod:`crp_core.triage.chain`) at migration time; the ``claims`` table added.
A row whose values schema 1 refuses (another tool wrote it) stops the migration and nothing is changed.

The DDL comes from the shared SQLAlchemy MetaData (:mod:`crp_core.triage.schema`); the version is kept
in ``crp_triage_schema`` (one row per version applied) and, on SQLite, in ``PRAGMA user_version``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy.dialects import sqlite as sqlite_dialect

from crp_core.decisions import COLUMNS, TriageStoreError
from crp_core.triage.chain import GENESIS, entry_hash
from crp_core.triage.schema import SCHEMA_NOTE, SCHEMA_VERSION, claims, create_statements, decisions

#: the columns of a schema-1 decision row, in its table's order
V1_COLUMNS: tuple[str, ...] = COLUMNS[:12]
#: the columns of a decision row that hold text (the schema: NOT NULL), and those that may be NULL
_TEXT_COLUMNS = ("pair_key", "fact_a", "fact_b", "kind", "note", "operator", "decided_at")
_NULLABLE_TEXT_COLUMNS = ("winner", "target_fact", "new_status", "ckf_fingerprint")
_V2_TEXT = ("role", "origin", "prev_hash", "entry_hash")
_V2_NULLABLE_TEXT = ("kb_name", "os_user")
_V2_INTS = ("based_on", "reverts")


def column_problems(d: dict[str, Any]) -> list[str]:
    """What in one decision row has a type the schema does not allow (a NULL fact id, a number for a
    kind, a blob): each "field 'f': ..."."""
    said = [f"field 'id': must be a whole number, got {d['id']!r:.60}"] if type(d["id"]) is not int else []
    texts = _TEXT_COLUMNS + tuple(c for c in _V2_TEXT if c in d)
    nullable = _NULLABLE_TEXT_COLUMNS + tuple(c for c in _V2_NULLABLE_TEXT if c in d)
    for c in texts + nullable:
        v = d[c]
        if not isinstance(v, str) and (v is not None or c in texts):
            said.append(f"field '{c}': must be text{'' if c in texts else ' or NULL'}, got {v!r:.60}")
    for c in _V2_INTS:
        if c in d and d[c] is not None and type(d[c]) is not int:
            said.append(f"field '{c}': must be a whole number or NULL, got {d[c]!r:.60}")
    return said


def checked_row(row: Sequence[Any], columns: Sequence[str], where: str) -> dict[str, Any]:
    """One decision row as a dict, its types checked (:func:`column_problems`): a row the schema
    refuses raises :class:`TriageStoreError` naming the decision and the fields."""
    d = dict(zip(columns, row))
    said = column_problems(d)
    if said:
        raise TriageStoreError(
            f"{where}: decision #{d['id']!r:.30} cannot be read ({'; '.join(said)}); the schema refuses such a "
            "row: the database was written or altered by another tool; refusing to read it"
        )
    return d


def v1_rows_as_v2(rows: Iterable[Sequence[Any]], where: str) -> list[dict[str, Any]]:
    """Schema-1 rows (:data:`V1_COLUMNS`, in id order) as the migration writes them: team fields
    empty, origin "migrated", role "operator", chained in id order."""
    out: list[dict[str, Any]] = []
    prev = GENESIS
    for row in rows:
        d = checked_row(row, V1_COLUMNS, where)
        d.update(kb_name=None, role="operator", origin="migrated", os_user=None, based_on=None, reverts=None)
        d["prev_hash"] = prev
        d["entry_hash"] = prev = entry_hash(d)
        out.append({c: d[c] for c in COLUMNS})
    return out


def migrate_sqlite_v1(con: sqlite3.Connection, where: str, now: str) -> None:
    """Schema 1 -> 2 on ``con``, inside the caller's ``BEGIN IMMEDIATE`` transaction (module docstring)."""
    dialect = sqlite_dialect.dialect()
    rows = con.execute(f"SELECT {', '.join(V1_COLUMNS)} FROM decisions ORDER BY id").fetchall()
    migrated = v1_rows_as_v2(rows, where)
    con.execute("DROP TRIGGER IF EXISTS decisions_append_only_update")
    con.execute("DROP TRIGGER IF EXISTS decisions_append_only_delete")
    con.execute("DROP INDEX IF EXISTS decisions_by_pair")
    con.execute("DROP INDEX IF EXISTS decisions_by_target")
    con.execute("ALTER TABLE decisions RENAME TO decisions_v1")
    for stmt in create_statements(dialect, tables=(decisions, claims)):
        con.execute(stmt)
    con.executemany(
        f"INSERT INTO decisions ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
        [tuple(r[c] for c in COLUMNS) for r in migrated],
    )
    (kept,) = con.execute("SELECT count(*) FROM decisions").fetchone()
    if kept != len(rows):  # cannot happen: one insert per row, in one transaction
        raise TriageStoreError(f"{where}: migration to schema {SCHEMA_VERSION} kept {kept} of {len(rows)} decisions")
    con.execute("DROP TABLE decisions_v1")
    con.execute(
        "INSERT INTO crp_triage_schema (version, applied_at, note) VALUES (?, ?, ?)",
        (SCHEMA_VERSION, now, f"{SCHEMA_NOTE}: migrated from schema 1 ({len(rows)} decisions chained)"),
    )
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

"""The triage store's tests run against both backends: ``target`` is an SQLite file or a database on
the session's throw-away PostgreSQL server (tests/support/postgres.py)."""

from __future__ import annotations

import sqlite3

import pytest

from tests.support.postgres import postgres_server, postgres_url  # noqa: F401  fixtures

BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(params=BACKENDS)
def target(request, tmp_path) -> str:
    """Where a decision store lives: a new SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "d.sqlite")
    return str(request.getfixturevalue("postgres_url"))


def raw_sql(where: str, sql: str, params: tuple = ()) -> list[tuple]:
    """Run ``sql`` on the database behind a store, bypassing the store (as another tool would);
    committed. Raises what the database raises."""
    if where.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(where, autocommit=True) as con:
            cur = con.execute(sql.replace("?", "%s"), params)
            return cur.fetchall() if cur.description else []
    con = sqlite3.connect(where)
    try:
        with con:
            cur = con.execute(sql, params)
            return cur.fetchall()
    finally:
        con.close()

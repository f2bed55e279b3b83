"""The experiment history's tests run against both backends of the decision database: ``target`` is an
SQLite file or a database on the session's throw-away PostgreSQL server (tests/support/postgres.py)."""

from __future__ import annotations

import pytest

from tests.support.postgres import postgres_server, postgres_url  # noqa: F401  fixtures

BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(params=BACKENDS)
def target(request, tmp_path) -> str:
    """Where the history lives: a new SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "h.sqlite")
    return str(request.getfixturevalue("postgres_url"))

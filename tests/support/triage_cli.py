"""The triage CLI's test CKF (``FACTS``) and the calls of ``crp-inspect triage`` the triage tests make.
The ``ckf`` fixture that writes ``FACTS`` is in ``tests/core/conftest.py``."""

from __future__ import annotations

import json

from crp_core.cli import main

FACTS = [
    {
        "fact_id": "F1",
        "content": "The etcd default client port is 2379.",
        "source_type": "official_documentation",
        "importance_weight": 0.9,
        "ingested_at": "2026-01-01T00:00:00Z",
        "modified_at": "2026-02-01T10:30:00+02:00",
        "ttl": "P6M",
        "source_id": "etcd-docs",
        "source_location": "ch. 3",
        "community_label": "etcd",
        "metadata": {"url": "https://example.invalid/etcd", "tags": ["ports"]},
        "embedding": [1.0, 0.5, 0.0],
    },
    {
        "fact_id": "F2",
        "content": "The etcd default client port is 2380.",
        "source_type": "community",
        "status": "STALE",
        "ttl": "none",
        "embedding": [1.0, 0.5, 0.1],
    },
    {"fact_id": "F3", "content": 'Pods run on nodes, "quoted", with commas.', "embedding": [0.0, 1.0, 0.0]},
    {
        "fact_id": "F4",
        "content": "Rollbacks need an explicit revision.",
        "source_type": "web",
        "embedding": [0.0, 0.0, 1.0],
    },
]


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["triage", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def record(capsys, db, *argv: str) -> dict:
    code, out, err = cli(capsys, "record", "--db", db, *argv)
    assert code == 0, err
    return json.loads(out)


def forge_db(path, rows: list[tuple]) -> str:
    """A decision database another tool wrote: the store's identity (application_id, schema version,
    tables) but a ``decisions`` table without its constraints, holding ``rows`` (the columns of
    schema-1 columns, the first twelve of ``crp_core.decisions.COLUMNS``, in order) as given: NULL ids, a
    kind no version wrote, ..."""
    import sqlite3

    from crp_core.decisions import COLUMNS
    from crp_core.triage import APPLICATION_ID

    COLUMNS = COLUMNS[:12]  # the schema-1 decision row
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    con.execute("PRAGMA user_version = 1")
    con.execute("CREATE TABLE crp_triage_schema (version INTEGER PRIMARY KEY, applied_at TEXT, note TEXT)")
    con.execute(f"CREATE TABLE decisions ({', '.join(COLUMNS)})")
    con.executemany(f"INSERT INTO decisions VALUES ({', '.join('?' * len(COLUMNS))})", rows)
    con.commit()
    con.close()
    return str(path)


#: a decision row with a NULL fact id (``fact_a``), otherwise a plain dismissal
NULL_FACT_ROW = (1, "|F2", None, "F2", "dismiss", None, None, None, "", "ann", "2026-01-01T00:00:00Z", None)

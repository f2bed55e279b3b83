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


def auto_ckf(argv: tuple[str, ...]) -> str:
    """A CKF for a ``record`` call that names none (``record`` requires ``--ckf``): ``FACTS`` plus a fact
    for each id of ``--pair`` that FACTS lacks (ids a CKF may hold), written beside ``--db``."""
    import os
    import tempfile
    import unicodedata

    from crp_core.decisions import BIDI_CONTROLS

    def plain(i: str) -> bool:  # what the CKF loader takes as a fact id
        return all(unicodedata.category(c) not in ("Cc", "Cs") and c not in BIDI_CONTROLS for c in i)

    pair = list(argv[argv.index("--pair") + 1 : argv.index("--pair") + 3]) if "--pair" in argv else []
    known = {f["fact_id"] for f in FACTS}
    extra = [
        {"fact_id": i, "content": f"fact {i}", "embedding": [0.5, 0.5, 0.5]}
        for i in dict.fromkeys(pair)
        if i and i not in known and plain(i) and i.strip() == i
    ]
    folder = os.path.dirname(argv[argv.index("--db") + 1]) if "--db" in argv else tempfile.mkdtemp()
    fd, path = tempfile.mkstemp(suffix=".jsonl", prefix="auto_kb_", dir=folder or ".")
    with os.fdopen(fd, "w") as fh:
        fh.write("".join(json.dumps({**f, "embedding_model": "test-model"}) + "\n" for f in [*FACTS, *extra]))
    return path


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    """``crp-inspect triage *argv``; a ``record`` without ``--ckf`` gets one (:func:`auto_ckf`)."""
    if argv and argv[0] == "record" and "--ckf" not in argv:
        argv = (*argv, "--ckf", auto_ckf(argv))
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


#: the schema-1 database as crp-inspect wrote it before team triage (what the migration starts from)
V1_SCHEMA = """
CREATE TABLE crp_triage_schema (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL, note TEXT NOT NULL);
CREATE TABLE decisions (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    pair_key        TEXT NOT NULL,
    fact_a          TEXT NOT NULL CHECK (length(fact_a) > 0),
    fact_b          TEXT NOT NULL CHECK (length(fact_b) > 0 AND fact_b <> fact_a),
    kind            TEXT NOT NULL CHECK (kind IN ('accept', 'override', 'mark_status', 'dismiss')),
    winner          TEXT CHECK (winner IS NULL OR winner IN (fact_a, fact_b)),
    target_fact     TEXT CHECK (target_fact IS NULL OR target_fact IN (fact_a, fact_b)),
    new_status      TEXT CHECK (new_status IS NULL OR new_status IN ('ACTIVE', 'STALE', 'DELETED', 'QUARANTINED')),
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

#: schema-1 rows (the first twelve columns of crp_core.decisions.COLUMNS): an override, a status mark, a
#: dismissal of another pair with a CKF fingerprint
V1_ROWS = [
    (1, "F1|F2", "F1", "F2", "override", "F2", None, None, "newer", "Ann", "2026-01-01T00:00:00Z", None),
    (2, "F1|F2", "F1", "F2", "mark_status", None, "F1", "QUARANTINED", "", "bob", "2026-01-01T00:00:01Z", None),
    (3, "F3|F4", "F3", "F4", "dismiss", None, None, None, "", "bob", "2026-01-01T00:00:02.5Z", "fp1"),
]


def make_v1_db(path, rows=V1_ROWS) -> str:
    """A schema-1 decision database (WAL, application id, user_version 1) holding ``rows``."""
    import sqlite3

    from crp_core.triage import APPLICATION_ID

    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = WAL")
    con.executescript(V1_SCHEMA)
    con.execute("INSERT INTO crp_triage_schema VALUES (1, '2025-12-01T00:00:00Z', 'crp-inspect triage decisions')")
    con.executemany(f"INSERT INTO decisions VALUES ({', '.join('?' * 12)})", rows)
    con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    con.execute("PRAGMA user_version = 1")
    con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return str(path)

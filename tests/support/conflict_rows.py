"""A small CKF for the ``crp-inspect conflicts`` tests: two conflicting pairs (one arbitrated, one tied), a
paraphrase, an unrelated fact and a deleted one, with hand-made 8-d vectors; and the command's runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crp_core.cli import main

NOW = "2026-06-01T00:00:00Z"


def fact(fid, content, vec, **kw):
    row = {
        "fact_id": fid,
        "content": content,
        "embedding": vec,
        "embedding_model": "test-model",
        "modified_at": "2026-05-01T00:00:00Z",
    }
    row.update(kw)
    return row


ROWS = [
    # etcd ports: official docs (fresh) vs community legacy post (old): F1 wins
    fact(
        "F1", "The etcd default client port is 2379", [1, 0.33, 0, 0, 0, 0, 0, 0], source_type="official_documentation"
    ),
    fact(
        "F2",
        "The etcd default client port is 4001",
        [1, 0, 0.33, 0, 0, 0, 0, 0],
        source_type="community",
        modified_at="2024-01-01T00:00:00Z",
    ),
    # the same source, importance and age: a tie
    fact("G1", "The backup job runs every 30 minutes", [0, 0, 0, 1, 0.33, 0, 0, 0], source_type="internal"),
    fact("G2", "The backup job runs every 60 minutes", [0, 0, 0, 1, 0, 0.33, 0, 0], source_type="internal"),
    # a paraphrase (no conflict) and an unrelated fact
    fact(
        "F3",
        "etcd uses 2379 as its default client port",
        [1, 0, 0, 0, 0, 0, 0.33, 0],
        source_type="official_documentation",
    ),
    fact("Z", "Pods are scheduled onto nodes by the scheduler", [0, 0, 0, 0, 0, 0, 0, 1]),
    # a deleted fact is never scanned
    fact("D", "The etcd default client port is 5000", [1, 0, 0, 0, 0, 0, 0, 0.2], status="DELETED"),
]


def write_rows(path: Path) -> str:
    """:data:`ROWS` as a JSONL CKF at ``path``; its path as a string."""
    path.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n", encoding="utf-8")
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``crp-inspect conflicts ARGV``: (exit status, stdout, stderr)."""
    status = main(["conflicts", *argv])
    out, err = capsys.readouterr()
    return status, out, err

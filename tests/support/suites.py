"""A tiny labelled suite over a hand-built corpus (no model): the corpus, two scenarios with
``expect`` tables, and their files, shared by the suite / metrics / gate / tune tests.

Vectors (4-d, the query of ``s1`` is e1):

====  ==========================================  ===========================  ======================
fact  text                                        source, modified (now 06-01)  cos to e1 / recency
====  ==========================================  ===========================  ======================
A     etcd default client port is 2379            official, 2026-05-01          1.00 / fresh
B     etcd default client port is 4001            version_specific, 2021-01-01  0.97 / expired (0.30)
C     etcd peer port is 2380                      official, 2025-10-01          0.62 / decay (0.768)
D     the data directory is /var/lib/etcd         official, 2026-05-01          0.00 (e3 side of C)
E     project of the Apache Software Foundation   unverified, 2026-05-20        0.70 / fresh
F     project of the Cloud Native ... Foundation  official, 2026-05-01          0.00 (e2)
G     etcd defragmentation runs one member ...    official, 2024-01-01          0.75 / expired
H1/H2 checkout retries 3 / 5 times                internal, 2026-01-01 (tie)    0.70, 0.69 / fresh
====  ==========================================  ===========================  ======================
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.support.factories import at_cos, fact, make_corpus

NOW = "2026-06-01T00:00:00Z"
E = np.eye(4)


def vectors() -> dict[str, np.ndarray]:
    h1 = 0.7 * E[0] - np.sqrt(1 - 0.49) * E[3]
    return {
        "A": E[0],
        "B": at_cos(E[0], E[1], 0.97),
        "C": at_cos(E[0], E[2], 0.62),
        "D": E[2],
        "E": 0.7 * E[0] + np.sqrt(1 - 0.49) * E[3],
        "F": E[1],
        "G": at_cos(E[0], -E[2], 0.75),
        "H1": h1,
        "H2": at_cos(h1, E[1], 0.98),
    }


def facts() -> list:
    return [
        fact(
            "A",
            "The etcd default client port is 2379.",
            source_type="official_documentation",
            modified_at="2026-05-01T00:00:00Z",
        ),
        fact(
            "B",
            "The etcd default client port is 4001.",
            source_type="version_specific",
            modified_at="2021-01-01T00:00:00Z",
        ),
        fact(
            "C",
            "etcd members talk to each other over peer port 2380.",
            source_type="official_documentation",
            modified_at="2025-10-01T00:00:00Z",
        ),
        fact(
            "D",
            "The etcd data directory is /var/lib/etcd.",
            source_type="official_documentation",
            modified_at="2026-05-01T00:00:00Z",
        ),
        fact(
            "E",
            "etcd is a graduated project of the Apache Software Foundation.",
            source_type="unverified",
            modified_at="2026-05-20T00:00:00Z",
        ),
        fact(
            "F",
            "etcd is a graduated project of the Cloud Native Computing Foundation.",
            source_type="official_documentation",
            modified_at="2026-05-01T00:00:00Z",
        ),
        fact(
            "G",
            "etcd defragmentation should run on one member at a time.",
            source_type="official_documentation",
            modified_at="2024-01-01T00:00:00Z",
        ),
        fact(
            "H1",
            "The checkout service retries failed calls 3 times.",
            source_type="internal",
            modified_at="2026-01-01T00:00:00Z",
        ),
        fact(
            "H2",
            "The checkout service retries failed calls 5 times.",
            source_type="internal",
            modified_at="2026-01-01T00:00:00Z",
        ),
    ]


def corpus():
    v = vectors()
    fs = facts()
    return make_corpus(fs, [v[f.fact_id] for f in fs])


def scenario_docs() -> dict[str, dict]:
    """``s1`` (query e1) and ``s2`` (query e3, no must_include), as scenario documents."""
    return {
        "s1": {
            "name": "s1",
            "query": {"text": "etcd ports and foundation", "embedding": [1.0, 0.0, 0.0, 0.0]},
            "now": NOW,
            "embedding_model": "test-model",
            "expect": {
                "must_include": ["A", "C", "D"],
                "must_exclude": ["B", "E"],
                "conflicts": [
                    {"fact_a": "A", "fact_b": "B", "winner": "A"},
                    {"fact_a": "E", "fact_b": "F", "winner": "F"},
                    {"fact_a": "H1", "fact_b": "H2", "winner": "tie"},
                ],
                "max_leaks": 1,
                "max_wrong_winners": 1,
            },
        },
        "s2": {
            "name": "s2",
            "query": {"text": "etcd peer traffic and data", "embedding": [0.0, 0.0, 1.0, 0.0]},
            "now": NOW,
            "embedding_model": "test-model",
            "expect": {"must_exclude": ["B"], "max_leaks": 0},
        },
    }


def write_suite(d: Path, docs: dict[str, dict] | None = None) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for name, doc in (docs or scenario_docs()).items():
        (d / f"{name}.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return d


def write_ckf(path: Path) -> Path:
    """The corpus as a JSONL CKF with embeddings (for the CLI tests)."""
    v = vectors()
    rows = []
    for f in facts():
        rows.append(
            {
                "fact_id": f.fact_id,
                "content": f.content,
                "source_type": f.source_type,
                "modified_at": f.modified_at.isoformat().replace("+00:00", "Z"),
                "embedding": [float(x) for x in v[f.fact_id]],
                "embedding_model": "test-model",
            }
        )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path

"""Issue #34's dishonest-feasibility case as files: a tie "solved" by dropping facts (no model loads).

Two scenarios at now = 2026-06-01 over 10 facts with 8-d embeddings of the test model:

- ``tie``: the expected conflict T1 (web, 200 days old, winner) against T2 (news, 12 days old). At the
  default news TTL of 30 days T2 is fresh and wins stage 4 (authority x recency x importance
  0.75 x 1 x 0.5 = 0.375 against T1's 0.70 x 0.933 x 0.5 = 0.327): one wrong winner. At 15 days T2 is in
  its decay and loses: no wrong winner.
- ``upgrade``: must_include U0..U3 (news, 5, 16, 17 and 18 days old) against four fresh news digests D0..D3
  a little less similar to the query, with ``envelope_fact_budget = 4`` and graph retrieval off. At 30
  days every U fact is packed (recall 1); at 15 days U1..U3 have expired and three digests take their
  places (recall 0.25).

So shortening ``ttl_days.news`` trades the wrong winner of ``tie`` for three must_include facts of
``upgrade``: the ``recall`` objective scores it 0.25 against trial 0's 1 - 1 = 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.support.samples import TEST_MODEL

NOW = "2026-06-01T00:00:00Z"


def _rows() -> list[dict[str, object]]:
    e = np.eye(8)
    rows: list[dict[str, object]] = []

    def row(fid: str, text: str, source: str, modified: str, vec: np.ndarray) -> None:
        v = vec / np.linalg.norm(vec)
        rows.append(
            {
                "fact_id": fid,
                "content": text,
                "source_type": source,
                "modified_at": f"{modified}T00:00:00Z",
                "embedding": [round(float(x), 6) for x in v],
                "embedding_model": TEST_MODEL,
            }
        )

    for i in range(4):
        text = f"Release digest {i}: the admin console theme changed in build {40 + i}."
        row(f"D{i}", text, "news", "2026-05-31", e[0] + 0.9 * e[2 + i] + 0.3 * e[7])
    for i, day in enumerate(("2026-05-27", "2026-05-16", "2026-05-15", "2026-05-14")):
        text = f"Upgrade note {i}: release {i + 2}.0 moves the admin console to another port."
        row(f"U{i}", text, "news", day, e[0] + 0.6 * e[2 + i])
    row("T1", "The checkout service retries failed calls 3 times.", "web", "2025-11-13", e[1])
    row("T2", "The checkout service retries failed calls 5 times.", "news", "2026-05-20", e[1] + 0.05 * e[6])
    return rows


def _scenario(name: str, query: np.ndarray, expect: dict[str, object], config: dict[str, object]) -> dict[str, object]:
    return {
        "name": name,
        "query": {"text": f"{name} question", "embedding": [float(x) for x in query]},
        "now": NOW,
        "embedding_model": TEST_MODEL,
        "config": config,
        "expect": expect,
    }


def write_tie_drop_world(d: Path) -> tuple[Path, Path]:
    """``d/kb.jsonl`` and ``d/suite/{tie,upgrade}.json``; returns (CKF path, suite directory)."""
    d.mkdir(parents=True, exist_ok=True)
    ckf = d / "kb.jsonl"
    ckf.write_text("".join(json.dumps(r) + "\n" for r in _rows()), encoding="utf-8")
    suite = d / "suite"
    suite.mkdir(exist_ok=True)
    e = np.eye(8)
    docs = {
        "upgrade": _scenario(
            "upgrade",
            e[0],
            {"must_include": ["U0", "U1", "U2", "U3"]},
            {"envelope_fact_budget": 4, "graph_retrieval": False},
        ),
        "tie": _scenario("tie", e[1], {"conflicts": [{"fact_a": "T1", "fact_b": "T2", "winner": "T1"}]}, {}),
    }
    for name, doc in docs.items():
        (suite / f"{name}.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return ckf, suite

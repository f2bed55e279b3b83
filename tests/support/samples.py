"""Synthetic samples (no model loads: every fact and query carries its own embedding, model
``test-model``):

* :func:`synthetic_ckf_rows` - plain fact dicts with deterministic 8-d embeddings around 3 topics;
* :func:`synthetic_scenario` - the matching scenario ``demo``;
* :func:`write_sample_dir` - a bundled-samples folder (``knowledge_base.jsonl``, ``second.jsonl``,
  ``scenarios/demo.json``).

The fixtures over them (``sample_dir``, ``synthetic_sample_dir``, ``ui_env``) are in ``tests/conftest.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

TEST_MODEL = "test-model"
SOURCE_CYCLE = ("official_documentation", "community", "news", "regulatory", "web", "internal")
STATUS_CYCLE = ("ACTIVE", "ACTIVE", "ACTIVE", "STALE", "ACTIVE", "DELETED")


# ---- synthetic samples ------------------------------------------------------------------------------
def write_bare_scenario(path: Path, name: str, text: str, embedding: list[float]) -> None:
    """A scenario of one query (its text and vector, now 2026-11-01) and nothing else, in the test model."""
    doc = {
        "name": name,
        "query": {"text": text, "embedding": embedding},
        "now": "2026-11-01T00:00:00Z",
        "sub_queries": [],
        "addressed": [],
        "prior_outputs": [],
        "fanout_width": 0,
        "embedding_model": TEST_MODEL,
    }
    path.write_text(json.dumps(doc), encoding="utf-8")


def synthetic_ckf_rows(n: int = 24, dim: int = 8, seed: int = 0) -> list[dict]:
    """``n`` facts cycling through source types and statuses, embeddings drawn around 3 topics."""
    rng = np.random.default_rng(seed)
    topics = rng.normal(size=(3, dim))
    rows = []
    for i in range(n):
        vec = topics[i % 3] + 0.3 * rng.normal(size=dim)
        rows.append(
            {
                "fact_id": f"f{i:03d}",
                "content": f"Fact {i} about topic {i % 3}: port {2379 + i} is used by service {i % 5}.",
                "source_type": SOURCE_CYCLE[i % len(SOURCE_CYCLE)],
                "status": STATUS_CYCLE[i % len(STATUS_CYCLE)],
                "ingested_at": f"2025-0{1 + i % 9}-15T00:00:00Z",
                "embedding": [round(float(x), 6) for x in vec],
                "embedding_model": TEST_MODEL,
            }
        )
    return rows


def synthetic_scenario(dim: int = 8, seed: int = 0) -> dict:
    """The scenario ``demo``: its query and sub-queries point at the topics of :func:`synthetic_ckf_rows`."""
    topics = np.random.default_rng(seed).normal(size=(3, dim))
    return {
        "name": "demo",
        "description": "synthetic scenario for the UI tests",
        "query": {"text": "Which ports are used?", "embedding": [float(x) for x in topics[0]]},
        "now": "2025-10-01T00:00:00Z",
        "sub_queries": [
            {"id": "sq1", "text": "client ports", "label": "clients", "embedding": [float(x) for x in topics[0]]},
            {"id": "sq2", "text": "peer ports", "embedding": [float(x) for x in topics[1]]},
            {"id": "sq3", "text": "metrics ports", "embedding": [float(x) for x in topics[2]]},
        ],
        "addressed": [{"id": "sq1", "depth_weight": 0.7, "window": 1}],
        "prior_outputs": ["Fact 0 about topic 0: port 2379 is used by service 0."],
        "fanout_width": 0,
        "embedding_model": TEST_MODEL,
    }


def write_sample_dir(d: Path) -> Path:
    """Write the synthetic bundled-samples folder into ``d`` (created)."""
    (d / "scenarios").mkdir(parents=True)
    with open(d / "knowledge_base.jsonl", "w", encoding="utf-8") as fh:
        for r in synthetic_ckf_rows():
            fh.write(json.dumps(r) + "\n")
    with open(d / "second.jsonl", "w", encoding="utf-8") as fh:
        for r in synthetic_ckf_rows(n=9, seed=1):
            fh.write(json.dumps(r) + "\n")
    (d / "scenarios" / "demo.json").write_text(json.dumps(synthetic_scenario(), indent=1), encoding="utf-8")
    return d

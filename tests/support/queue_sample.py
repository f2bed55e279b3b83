"""A CKF whose triage queue spans several pages: ``n`` value-conflict pairs ``Qkka`` / ``Qkkb`` (port
``1000 + k`` against ``2000 + k``), every pair in its own direction.

Vectors (``n + 2`` dimensions, c = the common direction e_n, d = e_(n+1)): ``Qkka`` = e_k + c, ``Qkkb`` =
e_k + c + 0.2 d: cos = 2 / sqrt(2 x 2.04) = 0.9901 within a pair, at most 0.51 across pairs. Both facts
internal, modified the same day, importance 0.9 and 0.9 - s (k + 1) with s = min(0.01, 0.8 / n): authority
0.675 against 0.75 x (0.9 - s (k + 1)), a margin of 0.75 s (k + 1), so the queue's triage order is Q00, Q01, ...
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.samples import TEST_MODEL, write_bare_scenario


def pair_of(k: int) -> str:
    """The queue's key of pair ``k``."""
    return f"Q{k:02d}a|Q{k:02d}b"


def _vec(k: int, n: int, second: bool) -> list[float]:
    v = [0.0] * (n + 2)
    v[k] = 1.0
    v[n] = 1.0
    if second:
        v[n + 1] = 0.2
    return v


def write_queue_sample(d: Path, n: int = 25) -> Path:
    """The sample folder (``knowledge_base.jsonl`` and one scenario) with ``n`` conflict pairs."""
    (d / "scenarios").mkdir(parents=True)
    step = min(0.01, 0.8 / n)
    with open(d / "knowledge_base.jsonl", "w", encoding="utf-8") as fh:
        for k in range(n):
            for side, port, weight in (("a", 1000 + k, 0.9), ("b", 2000 + k, round(0.9 - step * (k + 1), 6))):
                row = {
                    "fact_id": f"Q{k:02d}{side}",
                    "content": f"Service {k:02d} listens on port {port}.",
                    "source_type": "internal",
                    "source_id": f"wiki/service-{k:02d}",
                    "importance_weight": weight,
                    "modified_at": "2026-10-01T00:00:00Z",
                    "ingested_at": "2026-10-01T00:00:00Z",
                    "embedding": _vec(k, n, side == "b"),
                    "embedding_model": TEST_MODEL,
                }
                fh.write(json.dumps(row) + "\n")
    query = [0.0] * (n + 2)
    query[n] = 1.0
    write_bare_scenario(d / "scenarios" / "queue.json", "queue", "service ports", query)
    return d


__all__ = ["pair_of", "write_queue_sample"]

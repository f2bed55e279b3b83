"""Random fan-out worlds (a KnowledgeBase, its vectors, sub-queries and addressed ones around three
topics) shared by the stage 5 and stage 3 tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from crp_core.model import Addressed, Fact, KnowledgeBase, SubQuery

NOW = datetime(2026, 6, 1, tzinfo=UTC)


SOURCES = ("official_documentation", "news", "community", "regulatory", "user_provided")


def fanout_world(seed: int, n: int, m: int, n_addressed: int, dim: int = 8):
    rng = np.random.default_rng(seed)
    topics = rng.normal(size=(3, dim))
    fvec = topics[rng.integers(0, 3, n)] + 0.4 * rng.normal(size=(n, dim))
    if n > 3:  # a few exact and near copies so that duplicates can occur
        fvec[1] = fvec[0]
        fvec[3] = fvec[2] + 0.01 * rng.normal(size=dim)
    svec = topics[rng.integers(0, 3, m)] + 0.3 * rng.normal(size=(m, dim))
    facts = tuple(
        Fact(
            fact_id=f"f{i}",
            content=f"statement {i} of topic",
            source_type=SOURCES[i % 5],
            status="DELETED" if i % 11 == 10 else "ACTIVE",
            ingested_at=NOW - timedelta(days=int(rng.integers(0, 500))),
        )
        for i in range(n)
    )
    kb = KnowledgeBase(facts=facts)
    subs = tuple(SubQuery(id=f"s{j}", text=f"sub {j}", embedding=tuple(map(float, svec[j]))) for j in range(m))
    addressed = tuple(Addressed(id=f"s{j}", depth_weight=0.5 + 0.1 * j, window=1) for j in range(n_addressed))
    return kb, fvec.astype(np.float32), subs, addressed, topics

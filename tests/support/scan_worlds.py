"""Topic-cluster corpora for the whole-CKF conflict scan (``cluster_corpus``), shared by the scan tests
and the dashboard speed tests."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.model import Fact, KnowledgeBase
from crp_core.records import ValueConflict
from crp_core.stages.contradictions.values import values_conflict

NOW = datetime(2026, 6, 1, tzinfo=UTC)


SERVICES = ("etcd", "the kubelet", "the API server", "CoreDNS", "the scheduler")


VALUES = (2379, 4001, 2379, 10250, 4001, 2380, 2379)


SOURCES = ("official_documentation", "community", "regulatory", "web", "internal")


def cluster_corpus(seed: int, n_topics: int = 5, per_topic: int = 7, config: CRPConfig = CRPConfig()) -> Corpus:
    """Topic clusters: cosine ~0.90 inside a topic for most facts (some tilted further away, below
    the threshold), 0 across topics; texts state a port value that some facts of a topic disagree on."""
    rng = np.random.default_rng(seed)
    n = n_topics * per_topic
    dim = n_topics + n
    vecs = np.zeros((n, dim))
    facts = []
    for t in range(n_topics):
        for i in range(per_topic):
            r = t * per_topic + i
            vecs[r, t] = 1.0
            vecs[r, n_topics + r] = rng.choice([0.2, 0.33, 0.33, 0.45, 0.8])
            value = VALUES[int(rng.integers(len(VALUES)))]
            facts.append(
                Fact(
                    fact_id=f"t{t}-f{i}",
                    content=f"The default port of {SERVICES[t]} is {value}",
                    source_type=SOURCES[int(rng.integers(len(SOURCES)))],
                    status="DELETED" if rng.random() < 0.1 else "ACTIVE",
                    modified_at=datetime(2025, int(rng.integers(1, 13)), 1, tzinfo=UTC),
                    line=r + 1,
                )
            )
    return Corpus.from_vectors(KnowledgeBase(facts=tuple(facts)), vecs.astype(np.float32), "test", config)


def plain_conflicts(pairs: np.ndarray, facts: list[Fact]) -> list[tuple[int, int, ValueConflict]]:
    """The text check's reference: every candidate pair (rows of ``facts``) oriented by fact id and checked on its
    own, in candidate order (what any chunking, order or number of workers must give)."""
    out = []
    for i, j in pairs.tolist():
        if facts[j].fact_id < facts[i].fact_id:
            i, j = j, i
        vc = values_conflict(facts[i].content, facts[j].content)
        if vc is not None:
            out.append((i, j, vc))
    return out

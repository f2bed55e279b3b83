"""Shared test helpers: tiny KnowledgeBases, Corpora and Scenarios from explicit small vectors.

No model is loaded: every fact and every query / sub-query carries its own embedding. Keep the
signatures stable - other test modules import these.

    facts = [fact("F1", "etcd default client port is 2379", source_type="official_documentation",
                  modified_at="2026-01-01")]
    corpus = make_corpus(facts, [[1, 0, 0]])
    scen = make_scenario([1, 0, 0], sub_queries=[("s1", [0, 1, 0])], addressed=[("s1", 0.9)],
                         now="2026-06-01")
    result = run_pipeline(corpus, scen)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from crp_core.config import CRPConfig
from crp_core.io.timeparse import parse_duration_seconds, parse_timestamp
from crp_core.model import Addressed, Fact, KnowledgeBase, Scenario, SubQuery

MODEL_ID = "test-model"


def unit(v: Sequence[float]) -> np.ndarray:
    """L2-normalised float64 copy."""
    a = np.asarray(v, dtype=np.float64)
    return a / np.linalg.norm(a)


def at_cos(base: Sequence[float], other: Sequence[float], cos: float) -> np.ndarray:
    """A unit vector with cosine ``cos`` to unit(base), in the plane of base and other."""
    b = unit(base)
    o = np.asarray(other, dtype=np.float64)
    o = o - (o @ b) * b
    o = o / np.linalg.norm(o)
    return cos * b + np.sqrt(max(0.0, 1.0 - cos * cos)) * o


def _ts(v: Any) -> datetime | None:
    if v is None or isinstance(v, datetime):
        return v
    return parse_timestamp(v)


def fact(
    fact_id: str,
    content: str | None = None,
    *,
    source_type: str = "official_documentation",
    status: str = "ACTIVE",
    importance_weight: float | None = None,
    modified_at: Any = None,
    ingested_at: Any = None,
    ttl: str | None = None,
    line: int = 0,
    **extra: Any,
) -> Fact:
    """A Fact; ``ttl`` is an ISO 8601 duration or "none"; timestamps may be ISO strings."""
    kind, secs = "default", None
    if ttl is not None:
        secs = parse_duration_seconds(ttl)
        kind = "timeless" if secs is None else "explicit"
    return Fact(
        fact_id=fact_id,
        content=content if content is not None else f"fact {fact_id}",
        source_type=source_type,
        status=status,
        importance_weight=importance_weight,
        ingested_at=_ts(ingested_at),
        modified_at=_ts(modified_at),
        ttl_kind=kind,  # type: ignore[arg-type]
        ttl_seconds=secs,
        ttl_text=ttl,
        line=line,
        **extra,
    )


def make_kb(
    facts: Iterable[Fact], vectors: Sequence[Sequence[float]] | np.ndarray | None = None, model_id: str = MODEL_ID
) -> KnowledgeBase:
    facts = tuple(facts)
    emb = None if vectors is None else np.asarray(vectors, dtype=np.float32).reshape(len(facts), -1)
    return KnowledgeBase(
        facts=facts, embeddings=emb, embedding_model=model_id if emb is not None else None, source="<test>", fmt="json"
    )


def make_corpus(
    facts: Iterable[Fact],
    vectors: Sequence[Sequence[float]] | np.ndarray,
    config: CRPConfig | None = None,
    model_id: str = MODEL_ID,
    token_counts: Sequence[int] | None = None,
) -> Any:
    """A Corpus from explicit vectors (normalised by Corpus.from_vectors); index built in memory."""
    from crp_core.corpus.prepared import Corpus

    kb = make_kb(facts, vectors, model_id)
    tc = None if token_counts is None else np.asarray(token_counts, dtype=np.int64)
    return Corpus.from_vectors(kb, kb.embeddings, model_id, config or CRPConfig(), token_counts=tc)


def make_scenario(
    query: Sequence[float],
    *,
    sub_queries: Sequence[tuple[str, Sequence[float]]] = (),
    addressed: Sequence[tuple[str, float]] = (),
    prior_outputs: Sequence[str] = (),
    now: Any = "2026-06-01T00:00:00Z",
    fanout_width: int = 0,
    config: dict[str, Any] | None = None,
    query_text: str = "test query",
    model_id: str | None = MODEL_ID,
) -> Scenario:
    """A Scenario whose query and sub-queries all carry embeddings (no model needed)."""
    subs = tuple(
        SubQuery(id=sid, text=f"sub-query {sid}", label=sid, embedding=tuple(float(x) for x in vec))
        for sid, vec in sub_queries
    )
    adds = tuple(Addressed(id=sid, depth_weight=float(w), window=1) for sid, w in addressed)
    return Scenario(
        query=query_text,
        query_embedding=tuple(float(x) for x in query),
        now=_ts(now),
        sub_queries=subs,
        addressed=adds,
        prior_outputs=tuple(prior_outputs),
        fanout_width=fanout_width,
        config=dict(config or {}),
        embedding_model=model_id,
        name="test",
    )


def vectors_for(scenario: Scenario, corpus: Any) -> Any:
    """The scenario's ScenarioVectors (normalised, from its own embeddings)."""
    from crp_core.corpus.prepared import embed_scenario

    return embed_scenario(scenario, corpus)

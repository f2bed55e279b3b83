"""Random small pipeline worlds (Hypothesis strategy ``worlds``) and ``run_world``, shared by the
pipeline invariants and the outcome tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from hypothesis import strategies as st

from crp_core.config import SOURCE_TYPES, CRPConfig
from crp_core.pipeline import run_pipeline
from tests.support.factories import fact, make_corpus, make_scenario

NOW = datetime(2026, 6, 1, tzinfo=UTC)


WORDS = "etcd port client peer cluster state default is the uses on kubernetes api server".split()


STATUSES = ["ACTIVE"] * 6 + ["STALE", "DELETED", "QUARANTINED"]


@st.composite
def worlds(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(2, 24))
    dim = 6
    centre = rng.normal(size=dim)
    vecs = centre + draw(st.floats(0.2, 1.5)) * rng.normal(size=(n, dim))
    facts = []
    for i in range(n):
        k = int(rng.integers(4, 12))
        words = " ".join(rng.choice(WORDS, size=k))
        content = f"{words} value {int(rng.integers(1, 4))}"
        age = rng.uniform(-30, 3000) if rng.random() > 0.1 else None
        facts.append(
            fact(
                f"f{i}",
                content,
                source_type=str(rng.choice(SOURCE_TYPES)),
                status=str(rng.choice(STATUSES)),
                importance_weight=None if rng.random() < 0.5 else float(rng.uniform(0, 1)),
                modified_at=None if age is None else NOW - timedelta(days=float(age)),
                ttl=str(rng.choice(["P30D", "P1Y", "none"])) if rng.random() < 0.3 else None,
            )
        )
    m = int(rng.integers(0, 4))
    subs = [(f"s{j}", centre + rng.normal(size=dim)) for j in range(m)]
    addressed = [(s, float(rng.uniform(0, 1))) for s, _ in subs if rng.random() < 0.5]
    prior = [" ".join(rng.choice(WORDS, size=12)) for _ in range(int(rng.integers(0, 3)))]
    cfg = CRPConfig(
        envelope_fact_budget=int(rng.integers(1, 10)),
        token_budget=int(rng.integers(10, 120)),
        graph_retrieval=bool(rng.random() < 0.8),
        max_hops=int(rng.integers(1, 4)),
        cdr_min_relevance=float(rng.uniform(0.0, 0.8)),
    )
    return facts, vecs, centre, subs, addressed, prior, cfg


def run_world(world):
    """(corpus, config, result) of one drawn world run through the pipeline (the result keeps its
    scenario)."""
    facts, vecs, centre, subs, addressed, prior, cfg = world
    corpus = make_corpus(facts, vecs, cfg)
    scen = make_scenario(centre, sub_queries=subs, addressed=addressed, prior_outputs=prior, now=NOW)
    return corpus, cfg, run_pipeline(corpus, scen, cfg)

"""Invariants of the pipeline under random small corpora (Hypothesis)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crp_core.config import SOURCE_TYPES, CRPConfig
from crp_core.factors.recency import recency_factor
from crp_core.pipeline import run_pipeline
from crp_core.report import dumps, run_report
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


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds())
def test_pipeline_invariants(world):
    corpus, cfg, r = run_world(world)
    for t in (r.cdr, r.cdgr.connector_cdr):
        assert np.all(t.novelty >= cfg.min_novelty_floor - 1e-12) and np.all(t.novelty <= 1.0)
        assert np.all(t.recency_factor >= cfg.stale_floor - 1e-12) and np.all(t.recency_factor <= 1.0)
        assert np.all((t.ngram_penalty >= 0) & (t.ngram_penalty <= cfg.ngram_penalty_cap))
    gate = r.cdr.passed_gate
    assert np.all(r.cdr.cdr_score[gate] >= 0)
    assert np.all(r.cdgr.connectors.connector_score >= 0) and np.all(r.cdgr.connectors.bridge_value >= 0)
    env = r.envelope
    assert env.tokens_used <= cfg.token_budget
    assert len(env.order) <= cfg.envelope_fact_budget
    assert all(p.score >= 0 for p in env.order)
    kb = corpus.kb
    for p in env.order:
        assert kb.get(p.fact_id).status not in ("DELETED", "QUARANTINED")
    for r_ in r.cdgr.connectors.idx.tolist():
        assert kb.facts[r_].status not in ("DELETED", "QUARANTINED")
    suppressed = {kb.facts[x].fact_id for x in np.asarray(r.resolution.suppressed).tolist()}
    assert suppressed.isdisjoint(p.fact_id for p in env.order)
    # one outcome per scored fact, envelope facts flagged
    assert {o.fact_id for o in r.outcomes if o.in_envelope} == {p.fact_id for p in env.order}
    # determinism, down to the bytes of the JSON report
    again = run_pipeline(corpus, r.scenario, cfg)
    assert dumps(run_report(again)) == dumps(run_report(r))


@given(
    age=st.one_of(st.none(), st.floats(-1e4, 1e5)),
    ttl=st.one_of(st.none(), st.floats(0.01, 1e4)),
    floor=st.floats(0.0, 1.0),
    fresh=st.floats(0.0, 0.99),
    status=st.sampled_from(["ACTIVE", "STALE"]),
)
def test_recency_factor_bounds(age, ttl, floor, fresh, status):
    f = recency_factor(age, ttl, status=status, stale_floor=floor, fresh_fraction=fresh)
    assert floor - 1e-12 <= f <= 1.0


@given(a=st.floats(0, 1e4), b=st.floats(0, 1e4), ttl=st.floats(1, 1e4))
def test_recency_is_non_increasing_in_age(a, b, ttl):
    lo, hi = sorted((a, b))
    assert recency_factor(hi, ttl) <= recency_factor(lo, ttl) + 1e-12

"""Invariants of the pipeline under random small corpora (Hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crp_core.factors.recency import recency_factor
from crp_core.pipeline import run_pipeline
from crp_core.report import dumps, run_report
from tests.support.pipeline_worlds import run_world, worlds


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

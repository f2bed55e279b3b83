"""Stage 3 scores its connector candidates with stage 2's values where stage 2 scored the fact (one value
per fact across the breakdown), and with the same formulas from the fact's vector where it did not
(docs/reference/pipeline.md §2, §2.5): relevance = cos(fact, query), the coverage score and residual pull as stage 2."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus, embed_scenario
from crp_core.model import Scenario
from crp_core.pipeline import run_pipeline
from tests.support.fanout_worlds import NOW, fanout_world


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(12, 40),
    m=st.integers(1, 6),
    n_addressed=st.integers(0, 3),
    k=st.integers(1, 6),
    gate=st.sampled_from([-1.0, 0.0, 0.55]),
)
def test_connector_candidates_carry_stage2_values_or_their_own(seed, n, m, n_addressed, k, gate):
    n_addressed = min(n_addressed, m - 1)
    kb, fvec, subs, addressed, topics = fanout_world(seed, n, m, n_addressed)
    config = CRPConfig().replace(
        candidate_k=k, cdr_min_relevance=gate, graph_edge_min=0.0, graph_k=6, envelope_fact_budget=6
    )
    corpus = Corpus.from_vectors(kb, fvec, "test", config)
    scenario = Scenario(
        query="q", query_embedding=tuple(map(float, topics[0])), now=NOW, sub_queries=subs, addressed=addressed
    )
    vectors = embed_scenario(scenario, corpus)
    result = run_pipeline(corpus, scenario, config, vectors=vectors)
    stage2 = {int(r): i for i, r in reversed(list(enumerate(result.cdr.idx.tolist())))}
    conn, ccdr = result.cdgr.connectors, result.cdgr.connector_cdr
    unit = corpus.vectors.astype(np.float64)
    query = np.asarray(vectors.query, dtype=np.float64)
    residual = [vectors.sub_queries[vectors.ids.index(sq.id)] for sq in scenario.residual_set]
    covered = len(addressed) > 0
    for i, row in enumerate(conn.idx.tolist()):
        p = stage2.get(row)
        if p is not None:  # the very floats stage 2 recorded for this fact
            assert conn.relevance[i] == result.cdr.relevance[p]
            assert ccdr.coverage_score[i] == result.cdr.coverage_score[p]
            assert ccdr.residual_pull[i] == result.cdr.residual_pull[p]
            assert ccdr.novelty[i] == result.cdr.novelty[p]
            continue
        assert abs(conn.relevance[i] - unit[row] @ query) < 1e-5
        if covered:
            w = np.array([a.depth_weight for a in addressed])
            entries = np.array([vectors.sub_queries[vectors.ids.index(a.id)] for a in addressed], dtype=np.float64)
            assert abs(ccdr.coverage_score[i] - (w @ (entries @ unit[row])) / w.sum()) < 1e-5
            pull = max((float(np.asarray(r, dtype=np.float64) @ unit[row]) for r in residual), default=0.0)
            assert abs(ccdr.residual_pull[i] - pull) < 1e-5
        else:
            assert ccdr.coverage_score[i] == 0.0 and ccdr.residual_pull[i] == 0.0

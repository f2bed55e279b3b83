"""run_fanout invariants on random corpora (SPEC-027 §1, docs/reference/pipeline.md §5), checked against numpy
recomputations of the branch-scoped relevance and residual pull."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus, embed_scenario
from crp_core.factors.recency import compute_recency
from crp_core.model import Scenario
from crp_core.report import fanout_report
from crp_core.stages.branches import branch_fact_budget
from crp_core.stages.fanout import round_robin_partitions, run_fanout
from tests.support.fanout_worlds import NOW, fanout_world


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(4, 30),
    m=st.integers(1, 8),
    n_addressed=st.integers(0, 3),
    width=st.integers(2, 5),
    budget=st.integers(1, 12),
    gate=st.sampled_from([0.0, 0.3, 0.55]),
)
def test_run_fanout_invariants(seed, n, m, n_addressed, width, budget, gate):
    n_addressed = min(n_addressed, m - 1)
    kb, fvec, subs, addressed, topics = fanout_world(seed, n, m, n_addressed)
    config = CRPConfig().replace(envelope_fact_budget=budget, cdr_min_relevance=gate)
    corpus = Corpus.from_vectors(kb, fvec, "test", config)
    scenario = Scenario(
        query="q",
        query_embedding=tuple(map(float, topics[0])),
        now=NOW,
        sub_queries=subs,
        addressed=addressed,
        fanout_width=width,
    )
    vectors = embed_scenario(scenario, corpus)
    pool = np.arange(n)
    res = run_fanout(corpus, scenario, vectors, pool, compute_recency(kb, pool, NOW, config), frozenset(), config)
    residual = [sq.id for sq in scenario.residual_set]
    assert res is not None
    parts = res.partitioned.partitions
    assert sorted(s for p in parts for s in p) == sorted(residual) and len(parts) == min(width, len(residual))
    assert res.naive.partitions == round_robin_partitions(residual, len(parts))
    k = branch_fact_budget(config, len(parts))
    sub_vec = {sid: vectors.sub_queries[i] for i, sid in enumerate(vectors.ids)}
    res_vecs = np.stack([sub_vec[s] for s in residual])
    covered = len(addressed) > 0
    for run in (res.partitioned, res.naive):
        assert run.coverage_depth == len(addressed) + len(residual)
        union: dict[str, set[int]] = {}
        for b in run.branches:
            rows = np.asarray(b.cdr.idx)
            assert all(corpus.kb.facts[r].retrievable for r in rows.tolist())
            own = np.stack([sub_vec[s] for s in b.sub_queries])
            rel = (
                (corpus.vectors[rows].astype(np.float64) @ own.T.astype(np.float64)).max(axis=1)
                if rows.size
                else np.zeros(0)
            )
            np.testing.assert_allclose(b.cdr.relevance, rel, atol=1e-5)
            assert np.all(np.asarray(b.cdr.relevance) >= gate - 1e-6)  # the gate, per branch
            pull_vecs = own if run.mode == "partitioned" else res_vecs
            pull = (
                (corpus.vectors[rows].astype(np.float64) @ pull_vecs.T.astype(np.float64)).max(axis=1)
                if (rows.size and covered)
                else np.zeros(rows.size)
            )
            np.testing.assert_allclose(b.cdr.residual_pull, pull, atol=1e-5)
            assert len(b.selected) == min(k, rows.size)
            scores = [float(b.cdr.cdr_score[b.cdr.position(corpus.kb.index_of(f))]) for f in b.selected]
            assert scores == sorted(scores, reverse=True)
            chosen_rows = {corpus.kb.index_of(f) for f in b.selected}
            rest = [float(s) for r, s in zip(rows.tolist(), b.cdr.cdr_score) if r not in chosen_rows]
            assert not rest or min(scores) >= max(rest)  # the best `k` by CDR
            assert b.coverage_additions == b.sub_queries
            for f in b.selected:
                union.setdefault(f, set()).add(b.branch)
        assert len(run.merged) == len(set(run.merged)) and set(run.merged) <= set(union)
        same = {d.fact_ids[0] for d in run.duplicates if len(d.fact_ids) == 1}
        assert same == {f for f, bs in union.items() if len(bs) > 1}
        linked = {frozenset(d.fact_ids) for d in run.duplicates if len(d.fact_ids) == 2}
        for pair in linked:
            a, c = tuple(pair)
            assert not (union[a] == union[c] and len(union[a]) == 1)  # chosen by different branches
            assert not (a in run.merged and c in run.merged)  # kept once
        for f in set(union) - set(run.merged):  # a dropped fact is a duplicate of a kept one
            assert any(f in pair and (pair - {f}) <= set(run.merged) for pair in linked)
    for steps, lanes in ((res.steps, True), (res.naive_steps, False)):
        for s in steps:
            since = s.detail["since_step"]
            base = set(steps[since].coverage) if since is not None else set()
            assert set(s.added) == set(s.coverage) - base
            if not lanes:
                assert since == (s.index - 1 if s.index else None)
    again = run_fanout(corpus, scenario, vectors, pool, compute_recency(kb, pool, NOW, config), frozenset(), config)
    assert json.dumps(fanout_report(again, {})) == json.dumps(fanout_report(res, {}))

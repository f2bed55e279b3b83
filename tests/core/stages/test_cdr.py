"""Stage 2 CDR score (SPEC-024 §2.2 + SPEC-027 §3.3; docs/reference/pipeline.md §2): hand-computed products."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from crp_core.config import CRPConfig
from crp_core.factors.coverage import CoverageEntry, CoverageSet
from crp_core.factors.ngram import build_blacklist
from crp_core.factors.recency import compute_recency
from crp_core.pipeline import run_pipeline
from crp_core.stages.cdr import cdr_ranking, coverage_scores, score_cdr
from tests.support.factories import fact, make_corpus, make_scenario

D = 6
E = np.eye(D)


def combo(c0: float, axis: int) -> np.ndarray:
    """A unit vector with cosine c0 to e0, the rest along ``axis``."""
    return c0 * E[0] + np.sqrt(1 - c0 * c0) * E[axis]


def test_full_cdr_product_by_hand():
    """One fact, two Coverage Set entries, one residual sub-query and two blacklisted 6-grams.

    fact f = e0;  entries: cos(f, s1) = 0.6 (depth 0.9), cos(f, s2) = 0.3 (depth 0.4);
    residual s3: cos(f, s3) = 0.7;  query: cos(f, q) = 0.62;  importance 0.9 (explicit);
    official_documentation, age 300 d (ttl 365): recency = 1 - 0.7 * 117.5 / 182.5 = 0.5493150685
    coverage_score = (0.9 * 0.6 + 0.4 * 0.3) / (0.9 + 0.4) = 0.66 / 1.3 = 0.5076923077
    coverage_penalty = 0.5076923077 (< cap 0.80);  novelty = 1 - 0.5076923077 = 0.4923076923
    residual_pull = 0.7;  effective relevance = max(0.62, 0.7) = 0.7
    n-gram: "a b c d e f g" has 2 distinct 6-grams, both in the prior output -> penalty 2 * 0.15 = 0.30
    CDR = 0.9 * 0.7 * 0.4923076923 * 0.5493150685 * (1 - 0.30) = 0.1192605269
    """
    f = fact("F", "a b c d e f g", importance_weight=0.9, modified_at="2025-08-05T00:00:00Z")
    other = fact("G", "unrelated words only here", modified_at="2026-05-01T00:00:00Z")
    corpus = make_corpus([f, other], [E[0], E[5]])
    now = f.modified_at + timedelta(days=300)
    scen = make_scenario(
        combo(0.62, 4),
        sub_queries=[("s1", combo(0.6, 1)), ("s2", combo(0.3, 2)), ("s3", combo(0.7, 3))],
        addressed=[("s1", 0.9), ("s2", 0.4)],
        prior_outputs=["a b c d e f g h"],
        now=now,
    )
    result = run_pipeline(corpus, scen)
    t = result.cdr
    i = t.position(0)
    assert t.relevance[i] == pytest.approx(0.62, abs=1e-6)
    assert t.coverage_score[i] == pytest.approx(0.66 / 1.3, abs=1e-6)
    assert t.coverage_penalty[i] == pytest.approx(0.5076923077, abs=1e-6)
    assert t.novelty[i] == pytest.approx(0.4923076923, abs=1e-6)
    assert t.residual_pull[i] == pytest.approx(0.7, abs=1e-6)
    assert t.effective_relevance[i] == pytest.approx(0.7, abs=1e-6)
    assert t.recency_factor[i] == pytest.approx(0.5493150685, abs=1e-9)
    assert t.importance_weight[i] == 0.9
    assert t.ngram_overlap[i] == 2 and t.ngram_penalty[i] == pytest.approx(0.30)
    assert t.cdr_score[i] == pytest.approx(0.1192605269, abs=1e-6)
    assert bool(t.passed_gate[i])


def _table(vecs, coverage, residual, config=CRPConfig(), facts=None, rel=None, prior=()):
    facts = facts or [fact(f"f{i}", f"text {i}", modified_at="2026-05-01") for i in range(len(vecs))]
    corpus = make_corpus(facts, vecs)
    idx = np.arange(len(vecs))
    rec = compute_recency(corpus.kb, idx, facts[0].modified_at + timedelta(days=1), config)
    rel = np.ones(len(vecs)) * 0.8 if rel is None else np.asarray(rel)
    return score_cdr(
        corpus,
        idx,
        rel,
        coverage=coverage,
        residual_vectors=residual,
        blacklist=build_blacklist(prior, config.ngram_n),
        recency=rec,
        config=config,
    )


def test_empty_coverage_window_one_behaviour():
    # SPEC-024 §2.7: coverage 0, residual pull 0 (even with a ResidualSet), novelty 1,
    # CDR = importance * relevance (official_documentation default importance 0.80)
    t = _table([E[0], E[1]], CoverageSet(dim=D), np.array([E[0]]), rel=[0.8, 0.6])
    assert list(t.coverage_score) == [0.0, 0.0] and list(t.residual_pull) == [0.0, 0.0]
    assert list(t.novelty) == [1.0, 1.0]
    assert t.cdr_score.tolist() == pytest.approx([0.8 * 0.8, 0.8 * 0.6])


def test_penalty_cap_and_novelty_floor():
    cov = CoverageSet([CoverageEntry("s", None, E[0], 1.0)])
    # fact == entry: coverage_score 1.0 -> penalty capped at 0.80 -> novelty 0.20
    t = _table([E[0]], cov, np.zeros((0, D)))
    assert t.coverage_score[0] == pytest.approx(1.0) and t.coverage_penalty[0] == pytest.approx(0.80)
    assert t.novelty[0] == pytest.approx(0.20)
    # cap 0.90 -> 1 - 0.90 = 0.10, but the floor 0.20 binds
    t = _table([E[0]], cov, np.zeros((0, D)), config=CRPConfig(coverage_penalty_cap=0.9))
    assert t.coverage_penalty[0] == pytest.approx(0.90) and t.novelty[0] == pytest.approx(0.20)
    # a fact opposite to the entry: coverage_score -1 -> clamped to 0 -> novelty 1
    t = _table([-E[0]], cov, np.zeros((0, D)))
    assert t.coverage_penalty[0] == 0.0 and t.novelty[0] == 1.0


def test_ngram_penalty_cap():
    # 7 distinct blacklisted 6-grams: min(0.80, 7 * 0.15 = 1.05) = 0.80
    text = "a b c d e f g h i j k l"
    facts = [fact("f0", text, modified_at="2026-05-01")]
    t = _table([E[0]], CoverageSet(dim=D), None, facts=facts, prior=[text])
    assert t.ngram_overlap[0] == 7 and t.ngram_penalty[0] == pytest.approx(0.80)


def test_coverage_score_is_weighted_mean_not_max():
    cov = CoverageSet([CoverageEntry("a", None, E[0], 0.9), CoverageEntry("b", None, E[1], 0.1)])
    s = coverage_scores(np.array([E[0], E[1]], dtype=np.float32), cov)
    assert s.tolist() == pytest.approx([0.9, 0.1])  # (0.9*1 + 0.1*0)/1.0 and (0.9*0 + 0.1*1)/1.0


def test_cdr_ranking_ties_by_row():
    t = _table([E[0], E[1], E[2]], CoverageSet(dim=D), None, rel=[0.7, 0.9, 0.7])
    assert t.idx[cdr_ranking(t)].tolist() == [1, 0, 2]
    assert t.idx[cdr_ranking(t, np.array([True, False, True]))].tolist() == [0, 2]

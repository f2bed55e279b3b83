"""scan_ckf: the whole-CKF conflict scan equals a brute-force check (SPEC-027 §2)."""
from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from crp_core.analysis.scan import candidate_pairs, scan_ckf, triage_order
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.factors.recency import compute_recency
from crp_core.model import Fact, KnowledgeBase
from crp_core.stages.contradictions import PATTERNS, authority_of, values_conflict
from crp_core.triage import pair_key

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
            facts.append(Fact(
                fact_id=f"t{t}-f{i}", content=f"The default port of {SERVICES[t]} is {value}",
                source_type=SOURCES[int(rng.integers(len(SOURCES)))],
                status="DELETED" if rng.random() < 0.1 else "ACTIVE",
                modified_at=datetime(2025, int(rng.integers(1, 13)), 1, tzinfo=UTC), line=r + 1))
    return Corpus.from_vectors(KnowledgeBase(facts=tuple(facts)), vecs.astype(np.float32), "test", config)


def brute_force(corpus: Corpus, config: CRPConfig) -> dict[tuple[str, str], tuple[str, ...]]:
    v = corpus.vectors
    gram = v @ v.T
    ok = corpus.retrievable
    out = {}
    n = corpus.n
    for i in range(n):
        for j in range(i + 1, n):
            if ok[i] and ok[j] and gram[i, j] > config.contradiction_similarity:
                vc = values_conflict(corpus.kb.facts[i].content, corpus.kb.facts[j].content)
                if vc is not None:
                    a, b = sorted((corpus.kb.facts[i].fact_id, corpus.kb.facts[j].fact_id))
                    out[(a, b)] = vc.patterns
    return out


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("graph_k", [2, 20])
def test_scan_equals_brute_force(seed, graph_k):
    # graph_k = 2 is smaller than a topic: rows still above the threshold at k are re-queried deeper
    config = CRPConfig(graph_k=graph_k)
    corpus = cluster_corpus(seed, config=config)
    scan = scan_ckf(corpus, config, NOW)
    expected = brute_force(corpus, config)
    assert expected, "the fixture must contain conflicts"
    assert {(p.fact_a, p.fact_b): p.patterns for p in scan.pairs} == expected
    assert scan.n_facts == int(corpus.retrievable.sum())
    deleted = {f.fact_id for f in corpus.kb.facts if f.status == "DELETED"}
    assert not any({p.fact_a, p.fact_b} & deleted for p in scan.pairs)


def test_candidate_pairs_equal_brute_force_pairs_above_threshold():
    config = CRPConfig(graph_k=1)
    corpus = cluster_corpus(7, config=config)
    pairs, k = candidate_pairs(corpus, config)
    v = corpus.vectors
    gram = v @ v.T
    ok = corpus.retrievable
    expected = {(i, j) for i in range(corpus.n) for j in range(i + 1, corpus.n)
                if ok[i] and ok[j] and gram[i, j] > config.contradiction_similarity}
    assert {tuple(p) for p in pairs.tolist()} == expected
    assert k > 1  # the table was deepened


def test_each_pair_is_arbitrated_independently_by_authority():
    config = CRPConfig()
    corpus = cluster_corpus(1, config=config)
    scan = scan_ckf(corpus, config, NOW)
    rec = compute_recency(corpus.kb, np.arange(corpus.n), NOW, config)
    factor = dict(zip(rec.idx.tolist(), rec.factor.tolist()))
    kb = corpus.kb
    for p in scan.pairs:
        a = authority_of(kb.get(p.fact_a), factor[kb.index_of(p.fact_a)], config)
        b = authority_of(kb.get(p.fact_b), factor[kb.index_of(p.fact_b)], config)
        assert p.authority[p.fact_a] == a and p.authority[p.fact_b] == b
        assert p.margin == abs(a.authority - b.authority)
        assert not p.skipped
        if p.margin <= config.authority_tie_tolerance:
            assert p.tied and p.suppressed is None and set(p.kept) == {p.fact_a, p.fact_b}
        else:
            win, lose = (a, b) if a.authority > b.authority else (b, a)
            assert p.kept == (win.fact_id,) and p.suppressed == lose.fact_id
    # no suppression chain: a fact can lose in one pair and still win another
    losers = {p.suppressed for p in scan.pairs if p.suppressed}
    winners = {p.kept[0] for p in scan.pairs if p.suppressed}
    assert losers & winners


def test_triage_order_and_counts():
    config = CRPConfig()
    corpus = cluster_corpus(2, config=config)
    scan = scan_ckf(corpus, config, NOW)
    keys = [triage_order(p) for p in scan.pairs]
    assert keys == sorted(keys)
    ties = [p.tied for p in scan.pairs]
    assert ties == sorted(ties, reverse=True)  # ties first
    margins = [p.margin for p in scan.pairs if not p.tied]
    assert margins == sorted(margins)
    assert set(scan.counts) == set(PATTERNS)
    for pat in PATTERNS:
        assert scan.counts[pat] == sum(1 for p in scan.pairs if pat in p.patterns)
    assert set(scan.timings_ms) == {"neighbours", "text_check", "arbitration", "total"}


def test_scan_decisions_dismiss_and_override():
    config = CRPConfig()
    corpus = cluster_corpus(0, config=config)
    base = scan_ckf(corpus, config, NOW)
    decided = [p for p in base.pairs if not p.tied][:2]
    first, second = decided
    loser = second.suppressed
    decisions = {pair_key(first.fact_a, first.fact_b): {"kind": "dismiss", "winner": None},
                 pair_key(second.fact_a, second.fact_b): {"kind": "override", "winner": loser}}
    scan = scan_ckf(corpus, config, NOW, decisions)
    by = {(p.fact_a, p.fact_b): p for p in scan.pairs}
    d = by[(first.fact_a, first.fact_b)]
    assert d.decision == "dismiss" and d.suppressed is None
    assert scan.pairs[-1] is d  # dismissed pairs go last in triage order
    o = by[(second.fact_a, second.fact_b)]
    assert o.decision == "override" and o.kept == (loser,)
    assert scan.dismissed == 1
    assert sum(scan.counts.values()) == sum(base.counts.values()) - len(first.patterns)


def test_scan_of_tiny_or_conflict_free_ckf():
    config = CRPConfig()
    one = Corpus.from_vectors(KnowledgeBase(facts=(Fact("a", "The etcd port is 2379"),)),
                              np.ones((1, 4), dtype=np.float32), "test", config)
    scan = scan_ckf(one, config, NOW)
    assert scan.pairs == () and scan.n_candidates == 0 and scan.recency is None
    same = Corpus.from_vectors(
        KnowledgeBase(facts=(Fact("a", "The etcd port is 2379"), Fact("b", "etcd uses port 2379"))),
        np.array([[1, 0.1, 0], [1, 0, 0.1]], dtype=np.float32), "test", config)
    scan2 = scan_ckf(same, config, NOW)
    assert scan2.n_candidates == 1 and scan2.pairs == ()

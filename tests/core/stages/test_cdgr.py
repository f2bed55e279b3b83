"""Stage 3 CDGR (SPEC-025 §2; docs/reference/pipeline.md §3): bridge values by hand on a tiny graph."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from crp_core.config import CRPConfig
from crp_core.factors.coverage import CoverageSet
from crp_core.factors.recency import compute_recency
from crp_core.stages.cdgr import expand_graph
from crp_core.stages.cdr import score_cdr
from tests.support.factories import fact, make_corpus

NOW = datetime(2026, 6, 1, tzinfo=UTC)
NAMES = ["A", "D", "B", "C", "E"]
# Pairwise cosines. Edges (cos >= graph_edge_min 0.60): A-B .70, B-D .75, B-C .80, C-E .65, E-A .62.
# No edge: A-D .50, A-C .55, C-D .30, E-B .35, E-D -.20.
COS = {
    ("A", "D"): 0.50,
    ("A", "B"): 0.70,
    ("B", "D"): 0.75,
    ("B", "C"): 0.80,
    ("C", "E"): 0.65,
    ("E", "A"): 0.62,
    ("C", "D"): 0.30,
    ("E", "B"): 0.35,
    ("E", "D"): -0.20,
    ("A", "C"): 0.55,
}


def gram_vectors() -> np.ndarray:
    g = np.eye(5)
    for (a, b), v in COS.items():
        i, j = NAMES.index(a), NAMES.index(b)
        g[i, j] = g[j, i] = v
    lower = np.linalg.cholesky(g)  # rows have exactly these dot products
    return np.hstack([lower, np.zeros((5, 1))])  # 6th dimension: the query's (relevance 0 for all)


QUERY = np.eye(6)[5]


def build(config: CRPConfig, statuses=None, extra=None):
    statuses = statuses or {}
    facts = [fact(n, f"fact {n}", status=statuses.get(n, "ACTIVE"), modified_at="2026-05-01") for n in NAMES]
    vecs = list(gram_vectors())
    if extra:
        for f, v in extra:
            facts.append(f)
            vecs.append(v)
    corpus = make_corpus(facts, np.array(vecs), config)
    return corpus


def anchors_cdr(corpus, rows, relevance, config):
    idx = np.asarray(rows)
    rec = compute_recency(corpus.kb, idx, NOW, config)
    return score_cdr(
        corpus,
        idx,
        np.asarray(relevance, dtype=float),
        coverage=CoverageSet(dim=6),
        residual_vectors=None,
        blacklist=frozenset(),
        recency=rec,
        config=config,
        passed_gate=np.ones(idx.size, dtype=bool),
    )


def run(config, statuses=None, rows=(0, 1), relevance=(0.9, 0.8), extra=None):
    corpus = build(config, statuses, extra)
    cdr = anchors_cdr(corpus, list(rows), list(relevance), config)
    res = expand_graph(
        corpus,
        cdr,
        query_vector=QUERY,
        coverage=CoverageSet(dim=6),
        residual_vectors=None,
        blacklist=frozenset(),
        now=NOW,
        config=config,
    )
    return corpus, res


def test_bridge_values_by_hand():
    """Anchors A, D (budget 3 -> floor(0.7 * 3) = 2 anchors, 1 connector slot).

    B: touches A (1 hop, .70) and D (1 hop, .75); A-D has no edge -> 1 bridged pair;
       mean weight (.70 + .75) / 2 = .725 -> bridge .725
    C: A at 2 hops: C-B-A (.80 + .70 = 1.50) beats C-E-A (.65 + .62 = 1.27); D at 2 hops: C-B-D (.80 + .75);
       pooled edges (.80 + .70 + .80 + .75) / 4 = .7625 -> bridge 1 * .7625
    E: touches only A (D is 3 hops away) -> bridge 0, dropped.
    connector score = bridge * novelty 1 * recency 1 * max(relevance 0, 0.30):
       B .725 * .3 = .2175; C .7625 * .3 = .22875 -> C takes the one slot.
    """
    config = CRPConfig(envelope_fact_budget=3)
    corpus, res = run(config)
    row = {n: i for i, n in enumerate(NAMES)}
    assert res.anchors.tolist() == [row["A"], row["D"]]
    conn = res.connectors
    pos = {int(r): i for i, r in enumerate(conn.idx.tolist())}
    assert set(pos) == {row["B"], row["C"], row["E"]}
    b, c, e = pos[row["B"]], pos[row["C"]], pos[row["E"]]
    assert conn.hop_distance[b] == 1 and conn.hop_distance[c] == 2 and conn.hop_distance[e] == 1
    assert conn.bridge_value[b] == pytest.approx(0.725, abs=1e-6)
    assert conn.mean_path_weight[c] == pytest.approx(0.7625, abs=1e-6)
    assert conn.bridge_value[c] == pytest.approx(0.7625, abs=1e-6)
    assert conn.bridge_value[e] == 0.0
    assert conn.touched_anchors[e] == (row["A"],)
    assert conn.bridged_pairs[b] == ((row["A"], row["D"]),)
    assert conn.connector_score[b] == pytest.approx(0.2175, abs=1e-6)
    assert conn.connector_score[c] == pytest.approx(0.22875, abs=1e-6)
    assert res.selected_connectors.tolist() == [row["C"]]
    assert conn.selected.tolist() == [r == row["C"] for r in conn.idx.tolist()]
    assert res.extra_anchors.tolist() == []
    assert res.hops == 2
    # edges drawn among anchors + selected connectors: only C's neighbours among {A, D, C}: none
    assert res.graph_edges == ()


def test_two_connector_slots_take_both():
    config = CRPConfig(envelope_fact_budget=4)  # floor(2.8) = 2 anchors, 2 slots
    _, res = run(config)
    assert res.selected_connectors.tolist() == [3, 2]  # C (.22875) then B (.2175)
    assert (2, 3, pytest.approx(0.8, abs=1e-6)) in [(a, b, w) for a, b, w in res.graph_edges]


def test_deleted_fact_is_never_a_connector():
    config = CRPConfig(envelope_fact_budget=3)
    _, res = run(config, statuses={"B": "DELETED"})
    assert 2 not in res.connectors.idx.tolist()
    # without B, C reaches A only via E (2 hops) and D not at all: bridge 0
    c = res.connectors.idx.tolist().index(3)
    assert res.connectors.bridge_value[c] == 0.0
    assert res.selected_connectors.size == 0


def test_quarantined_fact_is_never_a_connector():
    config = CRPConfig(envelope_fact_budget=3)
    _, res = run(config, statuses={"C": "QUARANTINED"})
    assert 3 not in res.connectors.idx.tolist()
    assert res.selected_connectors.tolist() == [2]


def test_unused_connector_slots_go_to_extra_anchors():
    config = CRPConfig(envelope_fact_budget=3, graph_edge_min=0.99)  # no edges at all
    extra = [(fact("F", "fact F", modified_at="2026-05-01"), np.eye(6)[4] * 0 + np.array([0, 0, 0, 0, 0.6, 0.8]))]
    _, res = run(config, rows=(0, 1, 5), relevance=(0.9, 0.8, 0.7), extra=extra)
    assert res.anchors.tolist() == [0, 1]
    assert res.selected_connectors.size == 0
    assert res.extra_anchors.tolist() == [5]


def test_graph_off_anchors_take_the_whole_budget():
    config = CRPConfig(envelope_fact_budget=3, graph_retrieval=False)
    extra = [(fact("F", "fact F", modified_at="2026-05-01"), np.array([0, 0, 0, 0, 0.6, 0.8]))]
    _, res = run(config, rows=(0, 1, 5), relevance=(0.9, 0.8, 0.7), extra=extra)
    assert res.anchors.tolist() == [0, 1, 5]
    assert res.connectors.idx.size == 0 and res.extra_anchors.size == 0 and res.hops == 0


def test_near_duplicate_anchor_skipped_unless_values_conflict():
    base = np.array([1.0, 0, 0, 0])
    facts = [
        fact("P1", "The etcd default client port is 2379.", modified_at="2026-05-01"),
        fact("P2", "etcd's default client port is 2379", modified_at="2026-05-01"),  # paraphrase
        fact("P3", "The etcd default client port is 4001.", modified_at="2026-05-01"),  # value conflict
        fact("P4", "Something else entirely about etcd.", modified_at="2026-05-01"),
    ]
    vecs = np.array([base, base + [0, 0.2, 0, 0], base + [0, 0, 0.2, 0], [0.7, 0, 0, 0.7]])
    config = CRPConfig(envelope_fact_budget=3, graph_retrieval=False)
    corpus = make_corpus(facts, vecs, config)
    rel = corpus.vectors @ corpus.vectors[0]
    cdr = anchors_cdr(corpus, [0, 1, 2, 3], rel, config)
    res = expand_graph(
        corpus,
        cdr,
        query_vector=corpus.vectors[0],
        coverage=CoverageSet(dim=4),
        residual_vectors=None,
        blacklist=frozenset(),
        now=NOW,
        config=config,
    )
    # cos(P1, P2) = cos(P1, P3) = 1 / sqrt(1.04) = 0.9806 > 0.95
    assert res.anchors.tolist() == [0, 2, 3]
    assert [(r, a) for r, a, _ in res.near_duplicates] == [(1, 0)]
    assert res.near_duplicates[0][2] == pytest.approx(1 / np.sqrt(1.04), abs=1e-6)

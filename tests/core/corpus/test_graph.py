"""Similarity graph (SPEC-009 §5.2) and the walks CDGR uses (SPEC-025 §2.3-2.4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.config import CRPConfig
from crp_core.corpus.graph import NeighbourTable
from crp_core.corpus.prepared import Corpus
from crp_core.model import Fact, KnowledgeBase


def kb_of(n, statuses=None):
    statuses = statuses or {}
    return KnowledgeBase(tuple(Fact(f"f{i}", f"fact {i}", status=statuses.get(i, "ACTIVE")) for i in range(n)))


def on_circle(degrees):
    r = np.radians(degrees)
    return np.stack([np.cos(r), np.sin(r)], axis=1).astype(np.float32)


def clustered(n, d=32, clusters=8, spread=0.25, seed=0):
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(clusters, d))
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    x = c[rng.integers(0, clusters, n)] + rng.normal(size=(n, d)) * spread / math.sqrt(d) * 4
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def test_edges_thresholded_and_weighted_by_cosine():
    # points on a circle at 0, 40, 80, 120 degrees: neighbours 40 deg apart have cos 40 = 0.7660 >= 0.60,
    # 80 deg apart cos 80 = 0.1736 < 0.60, so the graph is the path 0-1-2-3
    c = Corpus.from_vectors(kb_of(4), on_circle([0, 40, 80, 120]))
    g = c.graph(CRPConfig(graph_k=3))
    assert g.n_edges == 3
    assert [g.has_edge(0, 1), g.has_edge(1, 2), g.has_edge(2, 3)] == [True] * 3
    assert not g.has_edge(0, 2) and not g.has_edge(1, 3) and not g.has_edge(0, 3)
    assert g.weight(0, 1) == pytest.approx(math.cos(math.radians(40)), abs=1e-6)
    assert g.weight(0, 2) is None
    ids, w = g.neighbours(1)
    assert ids.tolist() == [0, 2]
    np.testing.assert_allclose(w, [0.76604444] * 2, atol=1e-6)
    # lowering the threshold below cos 80 = 0.1736 adds 0-2 and 1-3 (cos 120 = -0.5 stays out)
    g2 = c.graph(CRPConfig(graph_k=3, graph_edge_min=0.17))
    assert g2.n_edges == 5 and not g2.has_edge(0, 3)


def test_symmetrised_when_only_one_side_lists_the_other():
    # A=0, B=30, C=40 deg; graph_k=1: A lists B (cos 30 = 0.866), B and C list each other (cos 10),
    # nobody lists A, yet A-B is an edge because A lists B
    c = Corpus.from_vectors(kb_of(3), on_circle([0, 30, 40]))
    table = c.neighbours(1)
    assert table.ids[:, 0].tolist() == [1, 2, 1]
    g = c.graph(CRPConfig(graph_k=1))
    assert g.has_edge(0, 1) and g.has_edge(1, 0) and g.has_edge(1, 2)
    assert g.weight(1, 0) == pytest.approx(math.cos(math.radians(30)), abs=1e-6)
    assert g.n_edges == 2


def test_graph_of_a_hand_written_table():
    # five facts, graph_k 3, edge_min 0.5, fact 4 DELETED. Listings: 0 -> 1 (0.80), 1 -> 0 (0.81: the two
    # endpoints' cosines differ in the last place), 2 -> 0 (0.70, 0 does not list 2 back), 2 -> 2 (itself),
    # 3 -> 1 (0.40, under edge_min), 3 -> 4 (0.90, not retrievable), padding (-1).
    # Edges: {0, 1} weighing 0.80 (the lower row's listing, the first in table order) and {0, 2} weighing 0.70
    # (placed in row 0 too); rows' columns ascending.
    from crp_core.corpus.graph import SimilarityGraph

    nan = np.nan
    ids = np.array([[1, -1, -1], [0, -1, -1], [0, 2, -1], [1, 4, -1], [-1, -1, -1]], dtype=np.int64)
    sims = np.array(
        [[0.80, nan, nan], [0.81, nan, nan], [0.70, 1.0, nan], [0.40, 0.90, nan], [nan, nan, nan]], dtype=np.float32
    )
    retrievable = np.array([True, True, True, True, False])
    g = SimilarityGraph.build(
        NeighbourTable(ids, sims), np.zeros((5, 2), np.float32), retrievable, CRPConfig(graph_k=3, graph_edge_min=0.5)
    )
    m = g.matrix
    assert m.indptr.tolist() == [0, 2, 3, 4, 4, 4]
    assert m.indices.tolist() == [1, 2, 0, 0]
    assert m.data.tolist() == [np.float32(0.80), np.float32(0.70), np.float32(0.80), np.float32(0.70)]
    assert g.n_edges == 2 and g.has_edges(np.array([2, 3, 0]), np.array([0, 1, 4])).tolist() == [True, False, False]
    assert g.hop_distances([1], 2).tolist() == [1, 0, 2, -1, -1]


def test_graph_is_symmetric_thresholded_no_self_loops():
    x = clustered(400)
    c = Corpus.from_vectors(kb_of(400), x)
    cfg = CRPConfig(graph_k=10, graph_edge_min=0.5)
    g = c.graph(cfg)
    m = g.matrix
    assert (m != m.T).nnz == 0
    assert m.diagonal().sum() == 0 and (g.degree() > 0).any()
    assert (m.data >= 0.5).all()
    i, j, w = g.edges()
    np.testing.assert_allclose(w, np.einsum("ij,ij->i", x[i], x[j]), atol=1e-6)
    # every listed neighbour at or above the threshold is an edge
    t = c.neighbours(10)
    rows = np.repeat(np.arange(400), 10)
    sel = t.sims.reshape(-1) >= 0.5
    assert g.has_edges(rows[sel], t.ids.reshape(-1)[sel]).all()
    assert g is c.graph(cfg)  # cached


def test_neighbour_table_matches_brute_force_and_drops_self():
    x = clustered(300, seed=2)
    c = Corpus.from_vectors(kb_of(300), x)
    t = c.neighbours(5)
    assert t.ids.shape == (300, 5) and t.k == 5
    assert not (t.ids == np.arange(300)[:, None]).any()
    sims = x @ x.T
    np.fill_diagonal(sims, -np.inf)
    want = np.argsort(-sims, axis=1)[:, :5]
    hit = np.mean([len(set(a) & set(b)) / 5 for a, b in zip(t.ids, want)])
    assert hit >= 0.99
    assert np.all(np.diff(t.sims, axis=1) <= 0)
    with pytest.raises(ValueError):
        t.ids[0, 0] = 3


def test_neighbour_table_is_the_same_for_any_query_cut_and_beside_the_memo(monkeypatch):
    """The table is queried NEIGHBOUR_ROWS rows at a time, and a batch larger than the index's search memo
    bypasses it: each row's search is its own, so the table is the one of a single whole batch."""
    from crp_core.corpus import graph, index

    x = clustered(1500, seed=5)
    c = Corpus.from_vectors(kb_of(1500, {7: "DELETED", 900: "QUARANTINED"}), x)
    keep = c.retrievable
    monkeypatch.setattr(index, "QUERY_CACHE_SIZE", 0)  # the reference: one batch, no memo
    whole = NeighbourTable.from_index(c.index, c.vectors, 6, keep)
    monkeypatch.setattr(index, "QUERY_CACHE_SIZE", 1024)
    for rows in (37, 1024, 65536):  # cuts under the memo's size (memoised), and one batch over it (not)
        monkeypatch.setattr(graph, "NEIGHBOUR_ROWS", rows)
        t = NeighbourTable.from_index(c.index, c.vectors, 6, keep)
        assert t.ids.tolist() == whole.ids.tolist() and np.array_equal(t.sims, whole.sims, equal_nan=True)
    assert (whole.ids[[7, 900]] == -1).all() and not np.isin(whole.ids, [7, 900]).any()


def test_the_table_s_queries_report_their_progress_cut_by_cut(monkeypatch, tmp_path):
    """1,500 facts, two never retrieved: 1,498 to query, 600 at a time: (0, 1498), then 600, 1200, 1498. A
    corpus's graph reports them when it builds its table, and nothing when it reads a persisted one."""
    import dataclasses

    from crp_core.corpus import graph

    monkeypatch.setattr(graph, "NEIGHBOUR_ROWS", 600)
    x = clustered(1500, seed=5)
    c = Corpus.from_vectors(kb_of(1500, {7: "DELETED", 900: "QUARANTINED"}), x)
    heard: list[tuple[int, int]] = []
    t = NeighbourTable.from_index(c.index, c.vectors, 6, c.retrievable, progress=lambda d, n: heard.append((d, n)))
    assert heard == [(0, 1498), (600, 1498), (1200, 1498), (1498, 1498)]
    assert t.ids.tolist() == NeighbourTable.from_index(c.index, c.vectors, 6, c.retrievable).ids.tolist()
    cached = dataclasses.replace(c, cache_dir=tmp_path)
    heard.clear()
    cached.graph(progress=lambda d, n: heard.append((d, n)))
    assert heard[0] == (0, 1498) and heard[-1] == (1498, 1498)
    again = dataclasses.replace(c, cache_dir=tmp_path)  # a new process: the table and the graph on disk
    heard.clear()
    again.graph(progress=lambda d, n: heard.append((d, n)))
    assert heard == []


def test_duplicates_drop_exactly_one_entry():
    # three identical vectors: ties at cos 1.0, so self need not come first, but the top 3 of each
    # of them is exactly {0, 1, 2} and self is dropped wherever it stands
    x = on_circle([0, 0, 0, 10])
    t = NeighbourTable.from_index(Corpus.from_vectors(kb_of(4), x).index, x, 2, np.ones(4, bool))
    assert t.ids.shape == (4, 2) and (t.ids >= 0).all()
    assert not (t.ids == np.arange(4)[:, None]).any()
    assert [sorted(r) for r in t.ids[:3].tolist()] == [[1, 2], [0, 2], [0, 1]]
    np.testing.assert_allclose(t.sims[:3], 1.0, atol=1e-6)
    assert set(t.ids[3].tolist()) <= {0, 1, 2}


def test_non_retrievable_facts_have_no_edges_and_are_not_neighbours():
    x = on_circle([0, 20, 40, 60])
    c = Corpus.from_vectors(kb_of(4, {1: "DELETED"}), x)
    g = c.graph(CRPConfig(graph_k=3))
    assert g.neighbours(1)[0].size == 0
    assert not g.has_edge(0, 1)
    assert g.has_edge(0, 2)  # cos 40 = 0.766
    assert (c.neighbours(3).ids[1] == -1).all()
    assert 1 not in c.neighbours(3).ids
    # QUARANTINED via operator decision: same corpus vectors, new graph
    c2 = c.with_statuses({"f2": "QUARANTINED"})
    g2 = c2.graph(CRPConfig(graph_k=3))
    assert g2.neighbours(2)[0].size == 0 and not g2.has_edge(0, 2)
    assert g.has_edge(0, 2)  # the original corpus is untouched
    assert g2.has_edge(0, 3) is False  # cos 60 = 0.5 < 0.6


def test_hop_distances_on_a_path():
    # path 0-1-2-3-4 (40 degrees apart)
    c = Corpus.from_vectors(kb_of(5), on_circle([0, 40, 80, 120, 160]))
    g = c.graph(CRPConfig(graph_k=4))
    assert g.hop_distances([0], 2).tolist() == [0, 1, 2, -1, -1]
    assert g.hop_distances([0, 4], 1).tolist() == [0, 1, -1, 1, 0]
    assert g.within_hops([2], 1).tolist() == [1, 3]
    assert g.hop_distances([], 2).tolist() == [-1] * 5


def test_strongest_shortest_path_hand_computed():
    # S=0deg, M1=30, M2=45, T=80. S-T: cos 80 = 0.174 (no edge) so T is 2 hops from S.
    # via M1: cos30 + cos50 = 0.8660 + 0.6428 = 1.5088; via M2: cos45 + cos35 = 0.7071 + 0.8192 = 1.5263
    # -> strongest path S-M2-T, mean weight 1.5263 / 2 = 0.7632
    c = Corpus.from_vectors(kb_of(4), on_circle([0, 30, 45, 80]))
    g = c.graph(CRPConfig(graph_k=3))
    assert not g.has_edge(0, 3)
    hp = g.hop_paths([0, 3], 2)
    assert hp.dist[0].tolist() == [0, 1, 1, 2]
    want = math.cos(math.radians(45)) + math.cos(math.radians(35))
    assert hp.weight_sum[0, 3] == pytest.approx(want, abs=1e-5)
    assert hp.mean_weight[0, 3] == pytest.approx(want / 2, abs=1e-5)
    assert hp.path(0, 3) == [0, 2, 3]
    assert hp.mean_weight[0, 1] == pytest.approx(math.cos(math.radians(30)), abs=1e-6)
    assert np.isnan(hp.mean_weight[0, 0])
    assert hp.dist[1].tolist() == [2, 1, 1, 0]


def _reference_paths(g, s, max_hops):
    n = g.n
    dist = [-1] * n
    best = [float("nan")] * n
    dist[s], best[s] = 0, 0.0
    layer = [s]
    for h in range(1, max_hops + 1):
        cand = {}
        for u in layer:
            ids, w = g.neighbours(u)
            for v, wt in zip(ids.tolist(), w.tolist()):
                if dist[v] < 0:
                    cand[v] = max(cand.get(v, -np.inf), best[u] + wt)
        for v, b in cand.items():
            dist[v], best[v] = h, b
        layer = list(cand)
    return dist, best


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 1000), hops=st.integers(1, 4), edge_min=st.floats(0.2, 0.8))
def test_hop_paths_match_reference_bfs(seed, hops, edge_min):
    x = clustered(120, d=8, clusters=4, seed=seed)
    c = Corpus.from_vectors(kb_of(120), x)
    g = c.graph(CRPConfig(graph_k=6, graph_edge_min=edge_min))
    srcs = [seed % 120, (seed * 7 + 3) % 120]
    hp = g.hop_paths(srcs, hops)
    nearest = g.hop_distances(srcs, hops)
    for a, s in enumerate(srcs):
        dist, best = _reference_paths(g, s, hops)
        assert hp.dist[a].tolist() == dist
        np.testing.assert_allclose(hp.weight_sum[a], best, atol=1e-5)
        # the recorded path has the recorded length and weight
        for v in np.flatnonzero(hp.dist[a] > 0)[:5]:
            p = hp.path(a, v)
            assert len(p) == hp.dist[a, v] + 1 and p[0] == s and p[-1] == v
            assert sum(g.weight(p[i], p[i + 1]) for i in range(len(p) - 1)) == pytest.approx(
                hp.weight_sum[a, v], abs=1e-5
            )
    d = np.where(hp.dist >= 0, hp.dist, 99).min(axis=0)
    assert np.array_equal(np.where(d == 99, -1, d), nearest)


def test_edges_among_rows():
    c = Corpus.from_vectors(kb_of(5), on_circle([0, 40, 80, 120, 160]))
    g = c.graph(CRPConfig(graph_k=4))
    i, j, w = g.edges(np.array([1, 2, 4]))
    assert list(zip(i.tolist(), j.tolist())) == [(1, 2)]
    assert g.has_edges(np.array([0, 0]), np.array([1, 2])).tolist() == [True, False]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 12), edge_min=st.floats(-0.2, 0.95), dead=st.floats(0.0, 0.6))
def test_graph_invariants(seed, k, edge_min, dead):
    rng = np.random.default_rng(seed)
    n = 80
    statuses = {i: ("DELETED" if i % 2 else "QUARANTINED") for i in np.flatnonzero(rng.random(n) < dead)}
    c = Corpus.from_vectors(kb_of(n, statuses), clustered(n, d=8, clusters=3, seed=seed))
    g = c.graph(CRPConfig(graph_k=k, graph_edge_min=edge_min))
    m = g.matrix
    assert (m != m.T).nnz == 0 and m.diagonal().sum() == 0
    i, j, w = g.edges()
    assert (w >= np.float32(edge_min)).all()
    assert c.retrievable[i].all() and c.retrievable[j].all()
    # exactly the listed pairs at or above the threshold, symmetrised
    t = c.neighbours(k)
    want = set()
    for a in range(n):
        for b, s in zip(t.ids[a].tolist(), t.sims[a].tolist()):
            if b >= 0 and s >= np.float32(edge_min):
                want.add((min(a, b), max(a, b)))
    assert set(zip(i.tolist(), j.tolist())) == want
    assert g.n_edges == len(want)
    # CSR rows in order, each row's columns strictly ascending; a pair's weight is the cosine of its first
    # listing in table order (the two endpoints' float32 cosines may differ in the last place)
    assert all((np.diff(m.indices[m.indptr[r] : m.indptr[r + 1]]) > 0).all() for r in range(n))
    first: dict[tuple[int, int], float] = {}
    for a in range(n):
        for b, s in zip(t.ids[a].tolist(), t.sims[a].tolist()):
            if (min(a, b), max(a, b)) in want:
                first.setdefault((min(a, b), max(a, b)), s)
    assert all(g.weight(a, b) == g.weight(b, a) == np.float32(s) for (a, b), s in first.items())

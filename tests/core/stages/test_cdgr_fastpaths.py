"""Stage 3 fast paths (docs/decisions/pipeline.md, performance notes): the fused walk + 2-hop paths,
the bridged-pair index and the edge listing give exactly what the straightforward versions give.

The references below are written independently of the module (plain Python over an adjacency dict),
on random symmetric CSR graphs with DELETED-like non-retrievable rows, for every ``max_hops`` 0-4.
"""

from __future__ import annotations

import contextlib
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.stages.bridges import connector_rows
from crp_core.stages.graph_walk import anchor_paths, bridge_values, edges_among, walk, walk_with_paths


def random_graph(seed: int, n: int, p: float) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < p, k=1)
    w = np.round(rng.uniform(0.6, 1.0, (n, n)), 3).astype(np.float32)
    dense = np.where(upper | upper.T, np.maximum(w, w.T), 0).astype(np.float32)
    return sp.csr_matrix(dense)


def adjacency(m: sp.csr_matrix) -> dict[int, dict[int, float]]:
    out: dict[int, dict[int, float]] = {i: {} for i in range(m.shape[0])}
    coo = m.tocoo()
    for i, j, w in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()):
        out[i][j] = w
    return out


def ref_walk(adj, anchors, max_hops, retrievable):
    dist = {a: 0 for a in anchors}
    frontier = set(anchors)
    for h in range(1, max_hops + 1):
        nxt = {v for u in frontier for v in adj[u] if v not in dist}
        for v in nxt:
            dist[v] = h
        frontier = nxt
    rows = sorted(r for r, d in dist.items() if d > 0 and retrievable[r])
    return rows, [dist[r] for r in rows]


def ref_paths(adj, anchors, cands):
    """(hops, weight_sum) per (candidate, anchor): 1 hop = the edge; else the best 2-hop total."""
    hops = np.zeros((len(cands), len(anchors)), dtype=np.int8)
    wsum = np.zeros((len(cands), len(anchors)))
    for i, c in enumerate(cands):
        for k, a in enumerate(anchors):
            if c in adj[a]:
                hops[i, k], wsum[i, k] = 1, float(adj[a][c])
                continue
            two = [np.float64(adj[a][x]) + np.float32(adj[x][c]) for x in adj[a] if c in adj[x]]
            if two:
                hops[i, k], wsum[i, k] = 2, max(two)
    return hops, wsum


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 40),
    p=st.floats(0.02, 0.4),
    n_anchors=st.integers(1, 6),
    max_hops=st.integers(0, 4),
)
def test_walk_with_paths_matches_the_separate_walk_and_paths(seed, n, p, n_anchors, max_hops):
    m = random_graph(seed, n, p)
    rng = np.random.default_rng(seed + 1)
    anchors = rng.choice(n, size=min(n_anchors, n), replace=False).astype(np.int64)
    retrievable = rng.random(n) > 0.15
    retrievable[anchors] = True
    cands, dist, hops, wsum, aa = walk_with_paths(m, anchors, max_hops, retrievable)
    # the module's own separate functions
    c2, d2 = walk(m, anchors, max_hops)
    ok = retrievable[c2]
    c2, d2 = c2[ok], d2[ok]
    h2, w2, aa2 = anchor_paths(m, anchors, c2)
    assert cands.tolist() == c2.tolist() and dist.tolist() == d2.tolist()
    assert np.array_equal(hops, h2) and np.array_equal(wsum, w2) and np.array_equal(aa, aa2)
    # an independent reference
    adj = adjacency(m)
    rows, dists = ref_walk(adj, anchors.tolist(), max_hops, retrievable)
    assert cands.tolist() == rows and dist.tolist() == dists
    rh, rw = ref_paths(adj, anchors.tolist(), rows)
    assert np.array_equal(hops, rh)
    assert np.allclose(wsum, rw, rtol=0, atol=1e-12)
    for i, j in itertools.product(range(anchors.size), repeat=2):
        assert aa[i, j] == (int(anchors[j]) in adj[int(anchors[i])])


@pytest.mark.parametrize("seed", range(8))
def test_bridged_pairs_are_the_non_adjacent_touched_pairs_in_row_major_order(seed):
    m = random_graph(seed, 30, 0.15)
    anchors = np.arange(0, 30, 5, dtype=np.int64)
    cands, _, hops, wsum, aa = walk_with_paths(m, anchors, 2, np.ones(30, dtype=bool))
    count, _, _, non_adj = bridge_values(aa, hops, wsum)
    touched, pairs = connector_rows(anchors, hops, count, non_adj)
    adj = adjacency(m)
    for i in range(cands.size):
        t = [k for k in range(anchors.size) if hops[i, k] > 0]
        assert touched[i] == tuple(int(anchors[k]) for k in t)
        expect = tuple(
            (int(anchors[a]), int(anchors[b]))
            for a, b in itertools.combinations(t, 2)
            if int(anchors[b]) not in adj[int(anchors[a])]
        )
        assert pairs[i] == expect
        assert len(expect) == count[i]


@pytest.mark.parametrize("seed", range(5))
def test_edges_among_lists_each_edge_once_sorted_with_its_weight(seed):
    m = random_graph(seed, 25, 0.3)
    rows = np.array([3, 17, 5, 0, 22, 9], dtype=np.int64)
    adj = adjacency(m)
    expect = sorted(
        (min(a, b), max(a, b), float(adj[a][b])) for a, b in itertools.combinations(rows.tolist(), 2) if b in adj[a]
    )
    got = edges_among(m, rows)
    assert list(got) == expect
    assert all(type(a) is int and type(b) is int and type(w) is float for a, b, w in got)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "bit masks"])
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), density=st.floats(0.05, 0.6), step=st.integers(1, 6))
def test_bridged_anchors_are_the_anchors_of_the_bridged_pairs_in_first_appearance_order(seed, density, step, compiled):
    """Both listings: the compiled one (up to 62 anchors, where the extension is built) and the Python
    bit-mask one (no extension, more anchors)."""
    from crp_core.stages import graph_walk

    if compiled and not graph_walk.compiled():
        pytest.skip("the compiled walk is not built here")
    m = random_graph(seed, 30, density)
    anchors = np.arange(0, 30, step, dtype=np.int64)
    cands, _, hops, wsum, aa = walk_with_paths(m, anchors, 2, np.ones(30, dtype=bool))
    count, _, _, non_adj = bridge_values(aa, hops, wsum)
    with contextlib.nullcontext() if compiled else graph_walk.numpy_paths():
        _, pairs = connector_rows(anchors, hops, count, non_adj)
        rows = [pairs.anchors(i) for i in range(cands.size)]  # computed while the kernel is (not) there
    adj = adjacency(m)
    for i in range(cands.size):
        # plain reference: walk the touched anchors' pairs in order, note each anchor the first time
        t = [int(anchors[k]) for k in range(anchors.size) if hops[i, k] > 0]
        seen: list[int] = []
        for a, b in itertools.combinations(t, 2):
            if b not in adj[a]:
                seen += [x for x in (a, b) if x not in seen]
        assert rows[i] == pairs.anchors(i) == tuple(seen)
        assert pairs.anchors(i) == tuple(dict.fromkeys(itertools.chain.from_iterable(pairs[i])))
        assert pairs.anchors(i - cands.size) == pairs.anchors(i)  # negative rows count from the end, as pairs[i]
    with pytest.raises(IndexError):
        pairs.anchors(cands.size)
    with pytest.raises(IndexError):
        pairs.anchors(-cands.size - 1)


def test_the_compiled_walk_is_built_where_a_compiler_is():
    """pyproject.toml builds ``_graph_walk`` (optional: a machine without a C compiler installs without it)."""
    import shutil

    from crp_core.stages import graph_walk as cdgr

    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler here: the extension is optional")
    assert cdgr.compiled()


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 120),
    p=st.floats(0.01, 0.5),
    n_anchors=st.integers(1, 14),
    hidden=st.floats(0.0, 0.5),
)
def test_the_compiled_walk_equals_the_numpy_walk_to_the_bit(seed, n, p, n_anchors, hidden):
    """Unrounded weights (no ties to hide a wrong maximum), non-retrievable rows on the paths: the five
    arrays of the compiled walk and of the numpy path are identical, dtypes included."""
    from crp_core.stages import graph_walk as cdgr

    if not cdgr.compiled():
        pytest.skip("the compiled walk is not built here")
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < p, k=1)
    w = rng.uniform(0.6, 1.0, (n, n)).astype(np.float32)
    m = sp.csr_matrix(np.where(upper | upper.T, np.maximum(w, w.T), 0).astype(np.float32))
    anchors = rng.choice(n, size=min(n_anchors, n), replace=False).astype(np.int64)
    retrievable = rng.random(n) >= hidden
    retrievable[anchors] = True
    compiled = cdgr.walk_with_paths(m, anchors, 2, retrievable)
    with cdgr.numpy_paths():
        plain = cdgr.walk_with_paths(m, anchors, 2, retrievable)
    for a, b in zip(compiled, plain, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(2, 80),
    p=st.floats(0.02, 0.6),
    k=st.integers(0, 30),
    repeat=st.booleans(),
)
def test_the_compiled_edge_listing_equals_the_numpy_one(seed, n, p, k, repeat):
    """Distinct rows take the compiled listing, rows given twice the numpy one; both list the same
    (a < b, weight) triples, sorted, as plain ints and floats."""
    from crp_core.stages import graph_walk

    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < p, k=1)
    w = rng.uniform(0.6, 1.0, (n, n)).astype(np.float32)
    m = sp.csr_matrix(np.where(upper | upper.T, np.maximum(w, w.T), 0).astype(np.float32))
    rows = rng.choice(n, size=min(k, n), replace=False).astype(np.int64)
    if repeat and rows.size:
        rows = np.concatenate([rows, rows[:1]])
    got = graph_walk.edges_among(m, rows)
    with graph_walk.numpy_paths():
        plain = graph_walk.edges_among(m, rows)
    adj = adjacency(m)
    expect = sorted(
        {
            (min(a, b), max(a, b), float(adj[a][b]))
            for a, b in itertools.combinations(set(rows.tolist()), 2)
            if b in adj[a]
        }
    )
    if not repeat:
        assert list(got) == list(plain) == expect
    assert sorted(set(got)) == expect
    assert all(type(a) is int and type(b) is int and type(x) is float for a, b, x in got)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10_000), s=st.integers(1, 70), m=st.integers(0, 60), density=st.floats(0.0, 1.0))
def test_the_compiled_bridge_counts_equal_the_numpy_ones_to_the_bit(seed, s, m, density):
    """Up to 62 anchors the compiled counts run (beyond, numpy alone): the same count, mean path weight
    and bridge value arrays, dtypes and NaNs included, and the count is the number of touched anchor
    pairs with no direct edge, the mean the summed weights over the path edges (a plain loop here)."""
    from crp_core.stages import graph_walk

    rng = np.random.default_rng(seed)
    aa = np.triu(rng.random((s, s)) < density, k=1)
    aa = aa | aa.T
    hops = np.where(rng.random((m, s)) < 0.4, rng.integers(1, 3, (m, s)), 0).astype(np.int8)
    wsum = np.where(hops > 0, rng.uniform(0.6, 1.0, (m, s)) * hops, 0.0)
    got = graph_walk.bridge_values(aa, hops, wsum)
    with graph_walk.numpy_paths():
        plain = graph_walk.bridge_values(aa, hops, wsum)
    for a, b in zip(got, plain, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    count, mean_w, bridge, _ = got
    for i in range(m):
        touched = [k for k in range(s) if hops[i, k] > 0]
        want = sum(1 for a, b in itertools.combinations(touched, 2) if not aa[a, b])
        assert count[i] == want
        edges = sum(int(hops[i, k]) for k in touched)
        total = 0.0
        for k in range(s):
            total += float(wsum[i, k])
        if edges:
            assert mean_w[i] == total / edges and bridge[i] == (want * (total / edges) if want else 0.0)
        else:
            assert np.isnan(mean_w[i]) and bridge[i] == 0.0


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 40), p=st.floats(0.1, 0.7))
def test_the_edge_listing_is_sorted_when_a_graph_stores_its_columns_out_of_order(seed, n, p):
    """The compiled listing is in (a, b) order only when each row's columns ascend (as the similarity graph
    stores them); a CSR with the columns of each row shuffled lists the same sorted triples (the kernel
    says it cannot, and the triples are sorted instead)."""
    from crp_core.stages import graph_walk

    if not graph_walk.compiled():
        pytest.skip("the compiled walk was not built here")
    _graph_walk = pytest.importorskip("crp_core.stages._graph_walk")  # the kernel's own answer, read directly
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < p, k=1)
    w = rng.uniform(0.6, 1.0, (n, n)).astype(np.float32)
    m = sp.csr_matrix(np.where(upper | upper.T, np.maximum(w, w.T), 0).astype(np.float32))
    rows = np.arange(n, dtype=np.int64)
    expect = graph_walk.edges_among(m, rows)
    indices, data = m.indices.copy(), m.data.copy()
    for i in range(n):  # reverse each row's entries: the same graph, columns descending
        s, e = m.indptr[i], m.indptr[i + 1]
        indices[s:e], data[s:e] = indices[s:e][::-1].copy(), data[s:e][::-1].copy()
    shuffled = sp.csr_matrix((data, indices, m.indptr.copy()), shape=m.shape)
    got = graph_walk.edges_among(shuffled, rows)
    assert list(got) == list(expect) == sorted(expect)
    # reversed columns are out of order exactly where a row has two partners above it
    upper_partners = [sum(1 for a, _, _ in expect if a == i) for i in range(n)]
    kernel = _graph_walk.edge_triples(shuffled.indptr, shuffled.indices, shuffled.data, rows)
    assert (kernel is None) == (max(upper_partners) >= 2)
    assert kernel is None or list(kernel) == list(expect)


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_cands=st.integers(0, 40),
    n_anchors=st.integers(0, 6),
    slots=st.integers(0, 12),
    spread=st.floats(0.0, 0.4),
)
def test_connectors_screened_lazily_are_the_ones_a_full_screen_chooses(seed, n_cands, n_anchors, slots, spread):
    """``choose_connectors`` screens only as far down the ranking as the slots need: its selection is the
    first ``slots`` ranked candidates that are not near-duplicates of an anchor (as when every candidate is
    screened first), and its listing, built when first read, is every near-duplicate among the ranked
    candidates (``connector_near_duplicates`` over all of them), the conflicting ones kept out."""
    from crp_core.config import CRPConfig
    from crp_core.stages.near_duplicates import choose_connectors, connector_near_duplicates
    from crp_core.support.frozen import DeferredTuple
    from tests.support.factories import fact, make_corpus

    rng = np.random.default_rng(seed)
    n = n_anchors + n_cands
    if n == 0:
        return
    base = rng.normal(size=(3, 16))
    # rows around three centres: many pairs above the 0.95 near-duplicate cosine when the spread is small
    vecs = base[rng.integers(0, 3, n)] + spread * rng.normal(size=(n, 16))
    texts = [f"the service listens on port {int(rng.integers(0, 3))}" for _ in range(n)]
    corpus = make_corpus([fact(f"F{i}", texts[i]) for i in range(n)], vecs)
    anchors = np.arange(n_anchors, dtype=np.int64)
    cands = np.arange(n_anchors, n, dtype=np.int64)
    order = rng.permutation(n_cands).astype(np.int64)  # a ranking of the candidate positions
    from crp_core.stages.contradictions.values import values_conflict

    config = CRPConfig()
    taken, near = choose_connectors(
        corpus, anchors, cands, order, slots, config=config, values_conflict=values_conflict
    )
    full = connector_near_duplicates(corpus, anchors, cands, order, config=config, values_conflict=values_conflict)
    dropped = {r for r, _, _ in full}
    expected = [p for p in order.tolist() if int(cands[p]) not in dropped][:slots]
    assert taken.tolist() == expected
    assert tuple(near) == tuple(full)
    if isinstance(near, DeferredTuple):
        assert len(near) == len(full)

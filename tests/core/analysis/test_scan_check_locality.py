"""The text check's locality (crp_core.analysis.scan_check): a component of the text-pair graph longer than a
chunk is cut in the order of a breadth-first walk of its texts, so a text's analysis is rarely made twice;
the conflicts stay those of the plain loop whatever the order, the chunk size or the number of workers."""

from __future__ import annotations

import gc
from unittest import mock

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.analysis import scan_check
from crp_core.analysis.scan_check import check_pool, chunk_order, conflicting_pairs, locality_ranks
from crp_core.model import Fact
from crp_core.stages.contradictions import clauses
from crp_core.stages.contradictions.memos import forget_texts, memo_sizes
from tests.support.scan_worlds import plain_conflicts


def _graph(n: int, edges: list[tuple[int, int]]) -> sp.coo_matrix:
    a = np.array(edges, dtype=np.int64).reshape(-1, 2)
    return sp.coo_matrix((np.ones(a.shape[0], dtype=np.int8), (a[:, 0], a[:, 1])), shape=(n, n))


def _components(n: int, edges: list[tuple[int, int]]) -> list[int]:
    parent = list(range(n))

    def root(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x

    for a, b in edges:
        parent[root(a)] = root(b)
    return [root(x) for x in range(n)]


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 30))
    raw = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=80))
    return n, [(a, b) for a, b in raw if a != b]


@settings(max_examples=150, deadline=None)
@given(g=graphs())
def test_locality_ranks_walk_each_component_breadth_first(g):
    n, edges = g
    rank = locality_ranks(_graph(n, edges))
    assert sorted(rank.tolist()) == list(range(n))
    comp = _components(n, edges)
    neighbours: dict[int, set[int]] = {x: set() for x in range(n)}
    for a, b in edges:
        neighbours[a].add(b)
        neighbours[b].add(a)
    for c in set(comp):
        members = sorted((x for x in range(n) if comp[x] == c), key=lambda x: rank[x])
        ranks = [int(rank[x]) for x in members]
        assert ranks == list(range(ranks[0], ranks[0] + len(ranks)))  # a component's ranks are contiguous
        # the walk starts at a node of least degree and reaches every other node from an earlier one
        assert len(neighbours[members[0]]) == min(len(neighbours[x]) for x in members)
        assert all(any(rank[y] < rank[x] for y in neighbours[x]) for x in members[1:])
        # breadth first: the nodes first reached from an earlier node come in the order of that node
        parents = [min(int(rank[y]) for y in neighbours[x]) for x in members[1:]]
        assert parents == sorted(parents)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(2, 60), size=st.integers(1, 12), data=st.data())
def test_a_chain_cut_in_pieces_shares_only_one_text_per_seam(n, size, data):
    """Texts 0..n-1 paired along a chain, the pairs in any candidate order: each piece of ``size`` pairs is a
    stretch of the chain (``size`` + 1 texts or fewer), so the texts analysed over all pieces are the n texts
    plus one per seam. In candidate order the pieces would be scattered over the chain."""
    chain = [(i, i + 1) for i in range(n - 1)]
    perm = data.draw(st.permutations(chain))
    flips = data.draw(st.lists(st.booleans(), min_size=n - 1, max_size=n - 1))
    pairs = np.array([(b, a) if f else (a, b) for (a, b), f in zip(perm, flips)], dtype=np.int64)
    chunks = chunk_order(pairs, size)
    assert sorted(np.concatenate(chunks).tolist()) == list(range(n - 1))
    texts = [np.unique(pairs[c].reshape(-1)) for c in chunks]
    assert all(t.size == c.size + 1 for t, c in zip(texts, chunks))  # a connected stretch of the chain
    assert sum(t.size for t in texts) == n + len(chunks) - 1


def test_a_long_component_is_cut_by_locality_and_a_short_one_stays_whole():
    # a star around text 0 (4 pairs, scattered in candidate order), a chain 5-6-7-8 (3 pairs) and (9, 10)
    pairs = np.array([[0, 1], [5, 6], [0, 2], [9, 10], [6, 7], [0, 3], [7, 8], [0, 4]], dtype=np.int64)
    got = [c.tolist() for c in chunk_order(pairs, 3)]
    assert [len(c) for c in got] == [3, 1, 3, 1]
    assert sorted(got[0] + got[1]) == [0, 2, 5, 7]  # the star, longer than a chunk: cut in two pieces
    assert got[2:] == [[1, 4, 6], [3]]  # a component no longer than a chunk: whole, in candidate order


TEXTS = [f"The service port of gateway {k} is {2000 + k}" for k in range(12)]


def _chain_world(n: int) -> tuple[list[Fact], np.ndarray]:
    facts = [Fact(f"F{k:03d}", TEXTS[k % len(TEXTS)] + f" in zone {k}") for k in range(n)]
    rng = np.random.default_rng(n)
    chain = np.array([(i, i + 1) for i in range(n - 1)], dtype=np.int64)
    return facts, chain[rng.permutation(n - 1)]


def test_each_text_of_a_long_component_is_analysed_once_per_seam():
    """40 facts of distinct texts paired along a chain, in scrambled candidate order, chunks of 5 pairs: the
    analyses made are the 40 texts and one per seam between two pieces (7 seams), not one per piece a text
    is scattered over."""
    facts, pairs = _chain_world(40)
    per_chunk: list[int] = []
    real = scan_check.check_texts

    def counted(texts, learned=True):
        forget_texts()  # as a worker between chunks
        got = real(texts, learned)
        per_chunk.append(clauses.analyse.cache_info().misses)
        return got

    with mock.patch.object(scan_check, "check_texts", side_effect=counted):
        got = conflicting_pairs(pairs, facts, chunk_pairs=5)
    assert len(per_chunk) == 8 and sum(per_chunk) == 40 + 7
    assert got == plain_conflicts(pairs, facts) and got


def test_workers_give_the_plain_loops_conflicts_in_candidate_order_and_collect_after_each_chunk():
    facts, pairs = _chain_world(60)
    facts = facts[::-1]  # fact ids against the rows: every pair is turned round
    want = plain_conflicts(pairs, facts)
    assert want
    with mock.patch.object(scan_check, "PARALLEL_MIN_PAIRS", 1), check_pool(2) as pool:
        assert pool is not None
        for size in (1, 4, 7, 10**9):
            assert conflicting_pairs(pairs, facts, pool=pool, chunk_pairs=size) == want
        # a worker's collector is on again after its chunk, and every memo of texts is forgotten
        state = pool.submit(_worker_state, [(TEXTS[0], TEXTS[1])]).result()
    assert state[0] is True and state[1] >= 9 and state[2] > 0 and state[3] == 0


def _worker_state(texts):
    """(collector on, memos registered, entries during the chunk, entries after it) in a worker."""
    during = []
    real = scan_check.check_texts

    def counted(t, learned=True):
        got = real(t, learned)
        during.append(sum(memo_sizes()))
        return got

    with mock.patch.object(scan_check, "check_texts", side_effect=counted):
        scan_check.check_chunk(texts, True)
    return gc.isenabled(), len(memo_sizes()), during[0], sum(memo_sizes())

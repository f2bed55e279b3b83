"""scan_ckf: the whole-CKF conflict scan equals a brute-force check (SPEC-027 §2)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.analysis import scan as scan_module
from crp_core.analysis import scan_search
from crp_core.analysis.scan import (
    SearchMethod,
    candidate_pairs,
    clear_search_cache,
    exact_pairs,
    scan_ckf,
    triage_order,
)
from crp_core.analysis.scan_search import guest_cutoffs
from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus
from crp_core.factors.recency import compute_recency
from crp_core.model import Fact, KnowledgeBase
from crp_core.stages.contradictions import PATTERNS, authority_of, values_conflict
from crp_core.triage import pair_key
from tests.support.scan_worlds import NOW, cluster_corpus


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
    expected = {
        (i, j)
        for i in range(corpus.n)
        for j in range(i + 1, corpus.n)
        if ok[i] and ok[j] and gram[i, j] > config.contradiction_similarity
    }
    assert {tuple(p) for p in pairs.tolist()} == expected
    # k: the most partners of one fact, the depth a neighbour search would have needed
    assert k == max(np.bincount(np.array(sorted(expected)).reshape(-1)))
    assert k > config.graph_k


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
    decisions = {
        pair_key(first.fact_a, first.fact_b): {"kind": "dismiss", "winner": None},
        pair_key(second.fact_a, second.fact_b): {"kind": "override", "winner": loser},
    }
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
    one = Corpus.from_vectors(
        KnowledgeBase(facts=(Fact("a", "The etcd port is 2379"),)), np.ones((1, 4), dtype=np.float32), "test", config
    )
    scan = scan_ckf(one, config, NOW)
    assert scan.pairs == () and scan.n_candidates == 0 and scan.recency is None
    same = Corpus.from_vectors(
        KnowledgeBase(facts=(Fact("a", "The etcd port is 2379"), Fact("b", "etcd uses port 2379"))),
        np.array([[1, 0.1, 0], [1, 0, 0.1]], dtype=np.float32),
        "test",
        config,
    )
    scan2 = scan_ckf(same, config, NOW)
    assert scan2.n_candidates == 1 and scan2.pairs == ()


# ---- the exact pair search (SPEC-027 §2.2 candidates) ------------------------------------------------
#: a pair this close to the threshold may fall either side through float32 rounding
ROUNDING = 1e-5


def clustered(seed: int, n: int, dim: int, n_clusters: int, spread: float, duplicates: int = 0) -> np.ndarray:
    """Unit vectors around random centres (``spread`` = noise norm relative to the centre), with
    ``duplicates`` exact copies of earlier rows."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_clusters, dim))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    v = centres[rng.integers(0, n_clusters, n)] + spread * rng.normal(size=(n, dim)) / np.sqrt(dim)
    if duplicates and n > 1:
        src = rng.integers(0, n - 1, duplicates)
        v[src + 1] = v[src]
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def brute_force_bounds(v: np.ndarray, threshold: float) -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
    """(pairs certainly above the threshold, pairs possibly above it), from a float64 Gram matrix."""
    gram = v.astype(np.float64) @ v.astype(np.float64).T
    i, j = np.triu_indices(v.shape[0], k=1)
    sure = gram[i, j] > threshold + ROUNDING
    maybe = gram[i, j] > threshold - ROUNDING
    return set(zip(i[sure].tolist(), j[sure].tolist())), set(zip(i[maybe].tolist(), j[maybe].tolist()))


@contextmanager
def small_blocks(facts_per_centroid: int = 3, shell_rows: int = 2, tile: int = 64) -> Iterator[None]:
    """Many centroid blocks, several shells per block and tiny product tiles on a small input, so
    every loop of the pruned search (and every tile of the Gram bands) runs more than once. The
    cached searches are dropped on entry and exit (they were made with other constants)."""
    clear_search_cache()
    try:
        with (
            mock.patch.multiple(scan_module, TILE_ELEMENTS=tile, GRAM_BAND_ROWS=3),
            mock.patch.multiple(
                scan_search,
                FACTS_PER_CENTROID=facts_per_centroid,
                SHELL_ROWS=shell_rows,
                TILE_ELEMENTS=tile,
                GROUP_BLOCKS=3,
            ),
        ):
            yield
    finally:
        clear_search_cache()


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 90),
    dim=st.integers(2, 24),
    n_clusters=st.integers(1, 6),
    spread=st.sampled_from([0.05, 0.3, 1.0, 3.0]),
    duplicates=st.integers(0, 4),
    threshold=st.floats(-0.95, 0.995),
    method=st.sampled_from(["gram", "centroid-pruned"]),
    tiny=st.booleans(),
)
def test_exact_pairs_equal_brute_force(
    seed: int,
    n: int,
    dim: int,
    n_clusters: int,
    spread: float,
    duplicates: int,
    threshold: float,
    method: SearchMethod,
    tiny: bool,
) -> None:
    v = clustered(seed, n, dim, n_clusters, spread, duplicates)
    if tiny:
        with small_blocks():
            got = exact_pairs(v, threshold, method)
    else:
        got = exact_pairs(v, threshold, method)
    pairs = {tuple(p) for p in got.pairs.tolist()}
    sure, maybe = brute_force_bounds(v, threshold)
    assert sure <= pairs <= maybe
    assert got.pairs.dtype == np.int64 and got.pairs.shape == (len(pairs), 2)
    assert (got.pairs[:, 0] < got.pairs[:, 1]).all()
    assert got.pairs.tolist() == sorted(got.pairs.tolist())
    assert got.method == method


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 60),
    spread=st.sampled_from([0.1, 0.4, 1.5]),
    threshold=st.floats(0.3, 0.99),
    deleted=st.floats(0.0, 0.5),
    pruned=st.booleans(),
)
def test_scan_candidates_equal_brute_force_pairs_above_threshold(
    seed: int, n: int, spread: float, threshold: float, deleted: float, pruned: bool
) -> None:
    """The scan's candidate pairs are exactly the retrievable pairs above the threshold, on either path."""
    rng = np.random.default_rng(seed)
    v = clustered(seed, n, 12, 4, spread)
    statuses = np.where(rng.random(n) < deleted, "DELETED", "ACTIVE")
    kb = KnowledgeBase(facts=tuple(Fact(f"f{i:03d}", f"fact {i}", status=str(statuses[i])) for i in range(n)))
    config = CRPConfig(contradiction_similarity=threshold)
    corpus = Corpus.from_vectors(kb, v, "test", config)
    if pruned:  # the automatic rule on a small CKF: pruned search, never overruled by its cost estimate
        with small_blocks(), mock.patch.multiple(scan_module, GRAM_MAX_FACTS=1, PRUNED_MAX_SHARE=float("inf")):
            pairs, k = candidate_pairs(corpus, config)
            assert scan_ckf(corpus, config, NOW).method == "centroid-pruned"
    else:
        pairs, k = candidate_pairs(corpus, config)
    ok = np.flatnonzero(corpus.retrievable)
    sure, maybe = brute_force_bounds(corpus.vectors[ok], threshold)
    as_rows = {tuple(p) for p in pairs.tolist()}
    assert {(ok[i], ok[j]) for i, j in sure} <= as_rows <= {(ok[i], ok[j]) for i, j in maybe}
    assert k == (int(np.bincount(pairs.reshape(-1)).max()) if pairs.size else 0)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), dim=st.integers(2, 64), cut=st.floats(-0.99, 0.999), spread=st.floats(0.0, 4.0))
def test_guest_cutoff_is_a_valid_bound(seed: int, dim: int, cut: float, spread: float) -> None:
    """If cos(x, y) > cut then cos(x, c) exceeds the cutoff of any shell whose farthest row is at
    least as far from c as y: the triangle inequality of angles that makes the pruning exact."""
    rng = np.random.default_rng(seed)
    c, y = rng.normal(size=(2, dim))
    c /= np.linalg.norm(c)
    y = y / np.linalg.norm(y)
    x = y + spread * rng.normal(size=dim) / np.sqrt(dim)
    x /= np.linalg.norm(x)
    if float(x @ y) <= cut:
        return
    farthest = float(y @ c) - rng.uniform(0.0, 0.3)  # the shell's farthest row: at or beyond y
    assert float(x @ c) > guest_cutoffs(np.array([farthest]), cut, 1e-4)[0]


def test_pruned_search_is_exact_and_prunes_on_clustered_vectors() -> None:
    v = clustered(11, 3000, 48, 15, 0.6, duplicates=20)  # ~200 vectors per cluster, as per centroid
    gram = exact_pairs(v, 0.85, "gram")
    pruned = exact_pairs(v, 0.85, "centroid-pruned")
    assert gram.pairs.shape[0] > 100
    assert np.array_equal(gram.pairs, pruned.pairs)
    n = v.shape[0]
    assert gram.products >= n * (n - 1) // 2
    assert pruned.products < 0.4 * n * (n - 1) / 2  # most products were proved below the threshold
    again = exact_pairs(v, 0.85, "centroid-pruned")
    assert np.array_equal(again.pairs, pruned.pairs) and again.products == pruned.products  # deterministic


def test_automatic_rule_prunes_clusters_and_falls_back_to_the_gram_triangle() -> None:
    with mock.patch.object(scan_module, "GRAM_MAX_FACTS", 500):
        small = exact_pairs(clustered(3, 400, 32, 20, 0.3), 0.85)
        clusters = exact_pairs(clustered(3, 3000, 48, 15, 0.6), 0.85)
        # no cluster structure and a low threshold: every block's guests are nearly everything
        spread = exact_pairs(clustered(3, 3000, 32, 1, 50.0), 0.1)
    assert small.method == "gram"
    assert clusters.method == "centroid-pruned"
    assert spread.method == "gram"


def test_scan_reports_the_search_method() -> None:
    config = CRPConfig()
    corpus = cluster_corpus(0, config=config)
    clear_search_cache()
    scan = scan_ckf(corpus, config, NOW)
    assert scan.method == "gram"
    assert scan.products >= scan.n_facts * (scan.n_facts - 1) // 2
    with mock.patch.multiple(scan_module, GRAM_MAX_FACTS=1, PRUNED_MAX_SHARE=float("inf")), small_blocks():
        pruned = scan_ckf(corpus, config, NOW)
    assert pruned.method == "centroid-pruned"
    assert [(p.fact_a, p.fact_b, p.patterns) for p in pruned.pairs] == [
        (p.fact_a, p.fact_b, p.patterns) for p in scan.pairs
    ]


def test_a_rescan_with_other_statuses_reuses_the_search_and_filters_it() -> None:
    config = CRPConfig(graph_k=2)
    corpus = cluster_corpus(3, config=config)
    clear_search_cache()
    first, _ = candidate_pairs(corpus, config)
    gone = corpus.kb.facts[int(first[0, 0])].fact_id
    changed = corpus.with_statuses({gone: "DELETED"})
    with mock.patch.object(scan_module, "exact_pairs", side_effect=AssertionError("searched again")):
        pairs, _ = candidate_pairs(changed, config)
        scan = scan_ckf(changed, config, NOW)
    ok = changed.retrievable
    assert {tuple(p) for p in pairs.tolist()} == {(i, j) for i, j in first.tolist() if ok[i] and ok[j]}
    assert not any(gone in (p.fact_a, p.fact_b) for p in scan.pairs)
    assert {(p.fact_a, p.fact_b): p.patterns for p in scan.pairs} == brute_force(changed, config)


def test_the_blas_thread_limit_is_restored_after_concurrent_searches() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_info

    def blas_threads() -> list[int]:
        return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]

    before = blas_threads()
    vs = [clustered(s, 1500, 32, 8, 0.6) for s in range(4)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda v: exact_pairs(v, 0.85, "centroid-pruned"), vs))
    assert blas_threads() == before
    assert all(np.array_equal(g.pairs, exact_pairs(v, 0.85, "gram").pairs) for g, v in zip(got, vs))


def test_pair_cosines_tiled_are_the_per_pair_dots_bit_for_bit():
    rng = np.random.default_rng(7)
    v = rng.standard_normal((40, 24)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    pairs = np.array([(i, j) for i in range(40) for j in range(i + 1, 40)], dtype=np.int64)
    whole = np.einsum("ij,ij->i", v[pairs[:, 0]], v[pairs[:, 1]])
    with mock.patch.object(scan_module, "TILE_ELEMENTS", 100):  # two pairs' worth of floats per tile
        tiled = scan_module.pair_cosines(v, pairs)
    assert tiled.dtype == np.float32 and np.array_equal(tiled, whole)
    assert scan_module.pair_cosines(v, np.zeros((0, 2), dtype=np.int64)).shape == (0,)


def test_identical_facts_give_every_pair_once():
    v = np.tile(np.eye(1, 16, 3, dtype=np.float32), (60, 1))
    with small_blocks():
        got = exact_pairs(v, 0.85)
    assert len(got.pairs) == 60 * 59 // 2 and (got.pairs[:, 0] < got.pairs[:, 1]).all()

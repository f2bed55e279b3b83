"""Stage 1's fast union (one sort, per-row bit masks of the finders) and the index's one-pass deletion
marks give exactly what the plain computations give: same rows, same relevance bits, same order, same
``found_by``; the same index answers as a fresh index queried with the mask once."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import crp_core.corpus.index as index_mod
from crp_core.config import CRPConfig
from crp_core.corpus.index import FactIndex
from crp_core.corpus.prepared import ScenarioVectors
from crp_core.stages.candidates import MASK_SEARCHES, found_by_masks, gather_candidates, union_masks
from tests.support.factories import fact, make_corpus

STATUSES = ("ACTIVE", "ACTIVE", "ACTIVE", "DELETED", "QUARANTINED", "SUPERSEDED")


def gather_reference(corpus, vectors, config):
    """The plain computation: every search's facts from the sorted index answer, a dict union,
    relevance from the query's product with the sorted distinct rows, a Python sort."""
    queries = np.vstack([vectors.query[None, :], vectors.sub_queries.reshape(-1, corpus.dim)])
    labels = ("query",) + tuple(vectors.ids)
    ids, _ = corpus.index_for(config).query(
        queries, config.candidate_k, corpus.retrievable, ef_search=config.hnsw_ef_search
    )
    finders: dict[int, list[str]] = {}
    for j, found in enumerate(ids.tolist()):
        for r in found:
            if r >= 0 and corpus.retrievable[r] and labels[j] not in finders.setdefault(r, []):
                finders[r].append(labels[j])
    rows = np.array(sorted(finders), dtype=np.int64)
    rel = (corpus.vectors[rows] @ np.asarray(vectors.query, dtype=np.float32)).astype(np.float64)
    order = sorted(range(rows.size), key=lambda i: (-rel[i], rows[i]))
    return (
        [int(rows[i]) for i in order],
        [float(rel[i]) for i in order],
        [bool(rel[i] >= config.cdr_min_relevance) for i in order],
        [tuple(finders[int(rows[i])]) for i in order],
    )


def random_case(seed, n, d, n_subs, dup_frac):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    dups = rng.random(n) < dup_frac  # exact copies of another fact: relevance ties, broken by row
    x[dups] = x[rng.integers(0, n, int(dups.sum()))]
    facts = [fact(f"F{i:04d}", status=STATUSES[int(rng.integers(0, len(STATUSES)))]) for i in range(n)]
    corpus = make_corpus(facts, x)
    q = x[rng.integers(0, n)] + 0.3 * rng.normal(size=d)
    subs = x[rng.integers(0, n, n_subs)] + 0.3 * rng.normal(size=(n_subs, d))
    unit = lambda a: (a / np.linalg.norm(a, axis=-1, keepdims=True)).astype(np.float32)  # noqa: E731
    vectors = ScenarioVectors(
        unit(q), unit(subs).reshape(n_subs, d), tuple(f"sq{i}" for i in range(n_subs)), "test-model"
    )
    return corpus, vectors


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 10_000),
    st.integers(5, 300),
    st.sampled_from([4, 16]),
    st.integers(0, 70),
    st.integers(1, 60),
    st.sampled_from([0.0, 0.2]),
    st.sampled_from([-1.0, 0.0, 0.3]),
)
def test_gather_candidates_equals_the_plain_computation(seed, n, d, n_subs, k, dup_frac, gate):
    corpus, vectors = random_case(seed, n, d, n_subs, dup_frac)
    config = CRPConfig(candidate_k=k, cdr_min_relevance=gate, hnsw_ef_search=40)
    got = gather_candidates(corpus, vectors, config)
    rows, rel, passed, finders = gather_reference(corpus, vectors, config)
    assert got.idx.tolist() == rows and got.idx.dtype == np.int64
    assert got.relevance.tolist() == rel  # the very same float64 values, bit for bit
    assert got.passed_gate.tolist() == passed
    assert got.found_by == tuple(finders)
    assert got.gate_threshold == gate
    assert not got.idx.flags.writeable and not got.relevance.flags.writeable
    # each candidate's cosine with each sub-query (ScenarioVectors.ids order), for stage 2
    cos = got.sub_query_cosines
    assert cos is not None and cos.shape == (len(rows), n_subs) and not cos.flags.writeable
    unit = corpus.vectors.astype(np.float64)
    expect = unit[rows] @ vectors.sub_queries.reshape(-1, corpus.dim).astype(np.float64).T
    np.testing.assert_allclose(cos, expect.reshape(len(rows), n_subs), rtol=0, atol=2e-6)


def test_gather_candidates_hnsw_path_with_exclusions(monkeypatch):
    """Above the brute-force threshold: the HNSW answer with deletion marks, many sub-queries."""
    monkeypatch.setattr(index_mod, "BRUTE_FORCE_MAX_ALLOWED", 10)
    for seed, n_subs in ((1, 3), (2, 61), (3, 62), (4, 63)):
        corpus, vectors = random_case(seed, 400, 16, n_subs, 0.1)
        config = CRPConfig(candidate_k=25, cdr_min_relevance=0.2)
        got = gather_candidates(corpus, vectors, config)
        rows, rel, passed, finders = gather_reference(corpus, vectors, config)
        assert (got.idx.tolist(), got.relevance.tolist(), got.passed_gate.tolist(), got.found_by) == (
            rows,
            rel,
            passed,
            tuple(finders),
        )


def test_union_masks_by_hand():
    flat = np.array([7, 3, 7, 9, 3, 3], dtype=np.int64)
    owner = np.array([0, 0, 1, 1, 2, 61], dtype=np.int64)
    rows, masks = union_masks(flat, owner)
    assert rows.tolist() == [3, 7, 9]
    assert masks.tolist() == [1 | 4 | (1 << 61), 1 | 2, 2]
    rows, masks = union_masks(np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert rows.size == 0 and masks.size == 0
    assert found_by_masks(np.array([5, 2, 5]), ("query", "a", "b")) == (("query", "b"), ("a",), ("query", "b"))
    assert found_by_masks(np.zeros(0, np.int64), ("query",)) == ()
    assert MASK_SEARCHES == 62


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 62), st.integers(0, 200), st.sampled_from([50, 10_000, 2**40]))
def test_union_masks_equals_a_dict_union(seed, n_searches, hits, n_rows):
    rng = np.random.default_rng(seed)
    flat = rng.integers(0, n_rows, hits).astype(np.int64)
    owner = rng.integers(0, n_searches, hits).astype(np.int64)
    want: dict[int, int] = {}
    for r, o in zip(flat.tolist(), owner.tolist()):
        want[r] = want.get(r, 0) | (1 << o)
    rows, masks = union_masks(flat, owner)
    assert rows.tolist() == sorted(want)
    assert masks.tolist() == [want[r] for r in sorted(want)]


@pytest.fixture(scope="module")
def unit_vectors():
    rng = np.random.default_rng(11)
    x = rng.normal(size=(300, 16)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 10_000),
    st.lists(st.sampled_from(["none", "all", "few", "half", "most", "same"]), min_size=1, max_size=6),
)
def test_deletion_marks_follow_every_mask(unit_vectors, seed, kinds):
    """A sequence of masks on one index (the HNSW path forced, no search kept): after each query its
    marks are exactly ~allowed, and it answers as a fresh index (same deterministic graph) queried with
    that mask alone."""
    x = unit_vectors
    rng = np.random.default_rng(seed)
    config = CRPConfig(hnsw_m=8, hnsw_ef_construction=40)
    index = FactIndex.build(x, config)
    q = x[rng.integers(0, 300, 4)] + 0.1 * rng.normal(size=(4, 16)).astype(np.float32)
    mask: np.ndarray | None = None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(index_mod, "BRUTE_FORCE_MAX_ALLOWED", 0)
        mp.setattr(index_mod, "QUERY_CACHE_SIZE", 0)
        for kind in kinds:
            if kind == "none":
                mask = None
            elif kind == "all":
                mask = np.ones(300, dtype=bool)
            elif kind != "same" or mask is None:
                mask = rng.random(300) >= {"few": 0.05, "half": 0.5, "most": 0.8, "same": 0.3}[kind]
                mask[:12] = True  # at least k allowed
            got = index.query_ids(q, 10, mask, ef_search=30, num_threads=1)
            want = FactIndex.build(x, config).query_ids(q, 10, mask, ef_search=30, num_threads=1)
            assert [sorted(r) for r in got.tolist()] == [sorted(r) for r in want.tolist()]
            if mask is None or mask.all():
                assert index.marked is None or not index.marked.any()
            else:
                assert np.array_equal(index.marked, ~mask)
                assert mask[got].all()


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 10_000),
    st.lists(
        st.tuples(
            st.sampled_from(["none", "a", "b"]), st.integers(0, 5), st.sampled_from([5, 10]), st.sampled_from([20, 40])
        ),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from([0, 1, 3, 1024]),
)
def test_kept_searches_answer_as_fresh_searches(unit_vectors, seed, asks, cache_size):
    """Searches kept by the index (query vector, k, ef and mask all equal; some rows of a batch kept,
    others not; a small cache evicting) give exactly the ids a fresh index returns for that search."""
    x = unit_vectors
    rng = np.random.default_rng(seed)
    config = CRPConfig(hnsw_m=8, hnsw_ef_construction=40)
    index = FactIndex.build(x, config)
    pool = x[rng.integers(0, 300, 6)] + 0.1 * rng.normal(size=(6, 16)).astype(np.float32)
    masks = {"none": None, "a": rng.random(300) >= 0.3, "b": rng.random(300) >= 0.6}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(index_mod, "BRUTE_FORCE_MAX_ALLOWED", 0)
        mp.setattr(index_mod, "QUERY_CACHE_SIZE", cache_size)
        for mask_name, first, k, ef in asks:
            q = pool[[first, (first + 2) % 6, 5]]
            mask = masks[mask_name]
            got = index.query_ids(q, k, mask, ef_search=ef, num_threads=1)
            with pytest.MonkeyPatch.context() as fresh:
                fresh.setattr(index_mod, "QUERY_CACHE_SIZE", 0)
                want = FactIndex.build(x, config).query_ids(q, k, mask, ef_search=ef, num_threads=1)
            assert got.tolist() == want.tolist()
            assert index.kept_searches <= cache_size


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 62), st.integers(0, 120))
def test_found_by_masks_equals_the_plain_loop(seed, n_labels, n):
    """Every candidate's labels are those of its mask's set bits, in search order (bit 61 included)."""
    rng = np.random.default_rng(seed)
    labels = ("query",) + tuple(f"sq{j}" for j in range(1, n_labels))
    pool = rng.integers(1, 1 << n_labels, 5, dtype=np.int64) if n_labels < 63 else None
    masks = pool[rng.integers(0, 5, n)] if pool is not None else np.zeros(0, np.int64)
    got = found_by_masks(masks, labels)
    assert got == tuple(tuple(labels[j] for j in range(n_labels) if (int(m) >> j) & 1) for m in masks)
    assert all(a is b for a, b in zip(got, got[1:]) if a == b)  # candidates with one mask share its tuple

"""The latency work on the pipeline stages keeps every answer: each fast path is checked against the
plain computation it replaces (candidate ``found_by``, the unsorted index answer, anchor screening,
backfill screening, packing ranks, the per-corpus ``[id]`` prefix counts, BLAS on one thread)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.config import CRPConfig
from crp_core.corpus.index import FactIndex
from crp_core.stages import packing
from crp_core.stages.bits import bits_of, row_bits
from crp_core.stages.candidates import found_by
from crp_core.stages.contradictions.backfill import BackfillScreen, backfill_obstacle
from crp_core.stages.near_duplicates import COSINE_SLACK, AnchorPicker, DuplicateScreen
from crp_core.support.blas import blas_libraries, one_blas_thread
from tests.support.factories import fact, make_corpus


# ---- stage 1 --------------------------------------------------------------------------------------
def found_by_reference(at, owner, n, labels, order):
    """The plain loop: each candidate's searches, in search order, each once."""
    out = [[] for _ in range(n)]
    for c, o in sorted(set(zip(at.tolist(), owner.tolist()))):
        out[c].append(labels[o])
    return tuple(tuple(out[i]) for i in order.tolist())


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 80), st.integers(1, 40))
def test_found_by_equals_the_plain_loop(seed, n_labels, n):
    rng = np.random.default_rng(seed)
    labels = ("query",) + tuple(f"sq{i}" for i in range(1, n_labels))
    hits = rng.integers(n, 4 * n + 1)
    at = np.concatenate([np.arange(n), rng.integers(0, n, hits)])  # every candidate found at least once
    owner = rng.integers(0, n_labels, at.size)
    order = rng.permutation(n)
    assert found_by(at, owner, n, labels, order) == found_by_reference(at, owner, n, labels, order)


def test_found_by_by_hand():
    at = np.array([0, 1, 1, 2, 0, 2])
    owner = np.array([2, 0, 2, 1, 0, 1])
    got = found_by(at, owner, 3, ("query", "a", "b"), np.array([2, 0, 1]))
    assert got == (("a",), ("query", "b"), ("query", "b"))
    assert found_by(np.zeros(0, np.int64), np.zeros(0, np.int64), 0, ("query",), np.zeros(0, np.int64)) == ()


def test_query_ids_holds_the_facts_query_returns():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3000, 32)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    index = FactIndex.build(x, CRPConfig(hnsw_m=8, hnsw_ef_construction=60))
    allowed = rng.random(3000) > 0.1
    q = x[:5] + 0.1 * rng.normal(size=(5, 32)).astype(np.float32)
    for k in (1, 10, 150):
        ids, _ = index.query(q, k, allowed, ef_search=80)
        got = index.query_ids(q, k, allowed, ef_search=80)
        assert got.shape == (5, k)
        assert [sorted(r) for r in got.tolist()] == [sorted(r) for r in ids.tolist()]
        assert allowed[got].all()
    # few allowed facts: the brute-force path, padding as query() pads
    few = np.zeros(3000, dtype=bool)
    few[[4, 9, 11]] = True
    assert sorted(index.query_ids(q[:1], 5, few)[0].tolist()) == [4, 9, 11]


# ---- stage 3: anchors ------------------------------------------------------------------------------
def pick_anchors_reference(world, ranked, count, chosen, start, exclude, near):
    """The per-row check the screening replaces; ``world`` = (vectors, texts, dedup_similarity, conflict)."""
    vecs, texts, dedup, conflict = world
    picked, p = [], start
    while len(picked) < count and p < ranked.size:
        row = int(ranked[p])
        p += 1
        if row in exclude:
            continue
        if chosen:
            sims = vecs[chosen] @ vecs[row]
            close = np.flatnonzero(sims > dedup)
            dup_of = None
            for c in close[np.argsort(-sims[close], kind="stable")]:
                if not conflict(texts[chosen[int(c)]], texts[row]):
                    dup_of = (chosen[int(c)], float(sims[c]))
                    break
            if dup_of is not None:
                near.append((row, dup_of[0], dup_of[1]))
                continue
        picked.append(row)
        chosen.append(row)
    return picked, p


def near_duplicate_corpus(seed, n=60, d=16):
    """Vectors with planted pairs at cosines just around 0.95 (and exactly on it)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    for i in range(0, n - 1, 3):
        cos = rng.choice([0.95, 0.95 + 1e-6, 0.95 - 1e-6, 0.97, 0.93, 0.9501])
        o = rng.normal(size=d)
        o -= (o @ x[i]) * x[i]
        o /= np.linalg.norm(o)
        x[i + 1] = cos * x[i] + np.sqrt(1 - cos * cos) * o
    facts = [fact(f"F{i:03d}", f"value {i % 4}") for i in range(n)]
    return make_corpus(facts, x)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 20), st.integers(0, 5))
def test_anchor_screening_decides_as_the_per_row_check(seed, count, n_chosen):
    corpus = near_duplicate_corpus(seed)
    rng = np.random.default_rng(seed + 1)
    ranked = rng.permutation(corpus.n)
    chosen0 = [int(r) for r in ranked[:n_chosen]]
    exclude = {int(r) for r in rng.choice(corpus.n, 4, replace=False)} - set(chosen0)
    texts = [f.content for f in corpus.kb.facts]

    def conflict(a, b):
        return a != b  # a different "value" text conflicts

    cfg = CRPConfig()
    near_ref: list = []
    world = (corpus.vectors, texts, cfg.dedup_similarity, conflict)
    want = pick_anchors_reference(world, ranked, count, list(chosen0), n_chosen, exclude, near_ref)
    picker = AnchorPicker(
        corpus, ranked, config=cfg, values_conflict=lambda a, b: conflict(a, b) or None, chosen=list(chosen0)
    )
    got = picker.take(count, start=n_chosen, exclude=exclude)
    assert got == want
    assert picker.near_duplicates == near_ref
    assert picker.chosen == chosen0 + want[0]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 8))
def test_connector_screening_decides_as_the_exact_check(seed, n_anchors):
    """A connector candidate's screening mask decides its near-duplicate as the exact check does: the
    same anchor and cosine, or None, whatever the value conflicts."""
    corpus = near_duplicate_corpus(seed)
    rng = np.random.default_rng(seed + 2)
    anchors = rng.choice(corpus.n, n_anchors, replace=False).astype(np.int64)
    rows = np.array([r for r in range(corpus.n) if r not in set(anchors.tolist())], dtype=np.int64)

    def conflict(a, b):
        return (a != b) or None  # a different "value" text conflicts

    screen = DuplicateScreen(corpus, anchors, CRPConfig(), conflict)
    for row, mask in zip(rows.tolist(), screen.near_bits(rows)):
        assert screen.duplicate_of_near(row, mask) == screen.duplicate_of(row)


def test_cosine_slack_bounds_float32_rounding():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 384)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    exact = x.astype(np.float64) @ x.astype(np.float64).T
    assert np.abs((x @ x.T) - exact).max() < COSINE_SLACK / 10
    assert np.abs(np.stack([x @ v for v in x[:20]], axis=1) - exact[:, :20]).max() < COSINE_SLACK / 10


# ---- stage 4: backfill ------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 8), st.floats(0.0, 1.0))
def test_backfill_screening_decides_as_the_exact_check(seed, n_kept, p_keep):
    """The block screen (bit masks over the kept columns) decides every pool row as the exact check on
    the kept rows of that moment, while fitting rows join the kept rows in between (within a block and
    across blocks)."""
    corpus = near_duplicate_corpus(seed)
    cfg = CRPConfig(contradiction_similarity=0.85, dedup_similarity=0.95)
    rng = np.random.default_rng(seed)
    kept = [int(r) for r in rng.choice(corpus.n, n_kept, replace=False)]
    pool = np.array([r for r in rng.permutation(corpus.n).tolist() if r not in kept], dtype=np.int64)
    vecs = corpus.vectors
    screen = BackfillScreen(vecs, pool, kept, cfg)
    for i, c in enumerate(pool.tolist()):
        want = backfill_obstacle(c, kept, vecs, corpus.kb, cfg)
        assert screen.obstacle(i, corpus.kb, cfg) == want
        if want is None and rng.random() < p_keep:
            kept.append(c)
            screen.kept(i)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 6), st.integers(0, 200))
def test_row_bits_are_the_rows_as_integers(seed, m, n):
    mask = np.random.default_rng(seed).random((m, n)) < 0.4
    assert row_bits(mask) == [sum(1 << j for j in range(n) if row[j]) for row in mask.tolist()]
    assert [bits_of(row) for row in mask] == row_bits(mask)  # one row at a time, the same ints


# ---- stage 6 ------------------------------------------------------------------------------------------
def rank_reference(rows, score):
    r = np.asarray(rows, dtype=np.int64)
    s = np.array([score[x] for x in r.tolist()], dtype=np.float64)
    return r[np.lexsort((r, -s))].tolist()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 50), st.sampled_from([0.5, 0.25, 0.0, -0.0, 1.0, 0.7, float("nan")])),
        max_size=12,
        unique_by=lambda t: t[0],
    )
)
def test_rank_equals_the_numpy_order(items):
    score = dict(items)
    rows = [r for r, _ in items]
    assert packing.rank_by_score(rows, score) == rank_reference(rows, score)


def test_rank_by_hand():
    assert packing.rank_by_score([5, 2, 9, 7], {5: 0.5, 2: 0.9, 9: 0.5, 7: 0.1}) == [2, 5, 9, 7]
    assert packing.rank_by_score([], {}) == []
    assert packing.rank_by_score([4], {4: 0.0}) == [4]


def test_cached_prefix_counts_equal_the_per_call_counts_and_are_counted_once():
    facts = [fact(f"F-{i}" + " x" * (i % 3), f"text {i}") for i in range(30)]
    corpus = make_corpus(facts, np.eye(30, 8, dtype=np.float32) + 0.01)
    calls: list[int] = []

    def counter(texts):
        calls.append(len(texts))
        return packing.word_counter(texts)

    cached = packing.cached_prefix_counter(corpus, counter, ("words",))
    rows = [3, 7, 3, 29, 0]
    want = packing.prefix_counts(corpus.kb, rows, packing.word_counter)
    # ceil(words * 1.3): "[F-3]" 1 word -> 2, "[F-7 x]" 2 -> 3, "[F-29 x x]" 3 -> 4, "[F-0]" -> 2
    assert want.tolist() == [2, 3, 2, 4, 2]
    assert cached(rows).tolist() == want.tolist()
    assert calls == [4]  # the four distinct rows, once
    assert cached([7, 29, 12]).tolist() == packing.prefix_counts(corpus.kb, [7, 29, 12], packing.word_counter).tolist()
    assert calls == [4, 1]  # only row 12 was new
    # the same corpus and counter key share the array; another key counts on its own
    assert packing.cached_prefix_counter(corpus, counter, ("words",))([3]).tolist() == [want[0]]
    assert calls == [4, 1]
    packing.cached_prefix_counter(corpus, counter, ("other",))([3])
    assert calls == [4, 1, 1]


def test_corpus_derived_builds_once_per_key():
    corpus = make_corpus([fact("A"), fact("B")], np.eye(2, 4, dtype=np.float32))
    built: list[str] = []
    assert corpus.derived("k", lambda: built.append("k") or 41) == 41
    assert corpus.derived("k", lambda: built.append("again") or 0) == 41
    assert corpus.derived(("k", 2), lambda: 7) == 7
    assert built == ["k"]


# ---- BLAS threads -------------------------------------------------------------------------------------
def test_one_blas_thread_is_reference_counted_and_restores():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    libs = blas_libraries()  # the BLAS libraries loaded with numpy (numpy's own among them)
    if not libs:
        pytest.skip("no BLAS library visible to threadpoolctl")

    def threads():
        return [lib.get_num_threads() for lib in libs]

    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = threads()
        with one_blas_thread():
            assert threads() == [1] * len(before)
            with one_blas_thread():
                assert threads() == [1] * len(before)
            assert threads() == [1] * len(before)  # still inside the outer run
        assert threads() == before

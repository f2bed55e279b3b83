"""The per-run shortcuts of stages 2 and 3 (docs/decisions/pipeline.md, performance notes) give exactly
what the plain formulas give: the CDR factors a run leaves neutral (empty Coverage Set, empty
blacklist), the n-gram overlap counts kept per blacklist, the identity hits for the resolved
importance column and the run's fact attributes, and the recency tables joined by gathers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from crp_core.config import CRPConfig
from crp_core.factors.coverage import CoverageEntry, CoverageSet
from crp_core.factors.ngram import build_blacklist, count_overlap, fact_overlaps
from crp_core.factors.recency import RecencyTable, concat_recency, fact_attributes, resolved_importance
from crp_core.stages.cdr import coverage_scores, residual_pulls, score_cdr
from crp_core.support.frozen import DeferredTuple
from tests.support.factories import fact, make_corpus

NOW = datetime(2026, 6, 1, tzinfo=UTC)
WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta"]
SOURCES = ["official_documentation", "internal", "user_provided", "web"]


def corpus_for(seed: int, n: int, d: int = 8):
    rng = np.random.default_rng(seed)
    facts = [
        fact(
            f"F{i:02d}",
            " ".join(rng.choice(WORDS, int(rng.integers(3, 12))).tolist()),
            source_type=SOURCES[i % len(SOURCES)],
            importance_weight=None if i % 3 else float(rng.uniform(0.1, 1.0)),
            modified_at=(NOW - timedelta(days=float(rng.uniform(0, 900)))).isoformat(),
        )
        for i in range(n)
    ]
    return make_corpus(facts, rng.normal(size=(n, d))), rng


def plain_cdr(corpus, idx, relevance, coverage, residual, blacklist, recency, config):
    """The docs/reference/pipeline.md §2 product term by term, each factor by its general formula."""
    v = corpus.vectors[idx]
    cov = coverage_scores(v, coverage)
    pull = residual_pulls(v, coverage, residual)
    eff = np.maximum(relevance, pull)
    penalty = np.clip(cov, 0.0, config.coverage_penalty_cap)
    novelty = np.maximum(1.0 - penalty, config.min_novelty_floor)
    rec = recency.factor
    imp = resolved_importance(corpus.kb, idx, config)
    overlap = np.array(
        [count_overlap(corpus.kb.facts[r].content, blacklist, config.ngram_n) for r in idx.tolist()], dtype=np.int64
    )
    ngram_penalty = np.minimum(config.ngram_penalty_cap, config.ngram_step_penalty * overlap)
    score = imp * eff * novelty * rec * (1.0 - ngram_penalty)
    return dict(
        residual_pull=pull,
        effective_relevance=eff,
        coverage_score=cov,
        coverage_penalty=penalty,
        novelty=novelty,
        recency_factor=rec,
        importance_weight=imp,
        ngram_overlap=overlap,
        ngram_penalty=ngram_penalty,
        cdr_score=score,
    )


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 25),
    n_cov=st.integers(0, 3),
    n_res=st.integers(0, 3),
    prior=st.sampled_from(["", "alpha beta gamma delta eps zeta", "beta gamma delta eps zeta eta alpha beta"]),
    floor=st.sampled_from([0.0, 0.2, 1.0]),
)
def test_score_cdr_matches_the_plain_formulas_bit_for_bit(seed, n, n_cov, n_res, prior, floor):
    corpus, rng = corpus_for(seed, n)
    config = CRPConfig(min_novelty_floor=floor)
    idx = rng.permutation(n)[: max(1, n // 2 + 1)].astype(np.int64)
    relevance = corpus.vectors[idx] @ corpus.vectors[0]
    entries = [
        CoverageEntry(f"s{k}", None, corpus.vectors[int(rng.integers(n))], float(rng.uniform(0.1, 1.0)))
        for k in range(n_cov)
    ]
    coverage = CoverageSet(entries, dim=corpus.dim) if n_cov else None
    residual = corpus.vectors[rng.integers(0, n, n_res)] if n_res else None
    blacklist = build_blacklist([prior] if prior else [], config.ngram_n)
    recency = fact_attributes(corpus.kb, NOW, config).recency(idx)
    gate = relevance >= config.cdr_min_relevance
    got = score_cdr(
        corpus,
        idx,
        relevance,
        coverage=coverage,
        residual_vectors=residual,
        blacklist=blacklist,
        recency=recency,
        config=config,
        passed_gate=gate,
    )
    want = plain_cdr(corpus, idx, relevance.astype(np.float64), coverage, residual, blacklist, recency, config)
    for name, value in want.items():
        col = getattr(got, name)
        assert col.dtype == value.dtype and np.array_equal(col, value), name
        assert not col.flags.writeable, name
    assert np.array_equal(got.idx, idx) and np.array_equal(got.relevance, relevance.astype(np.float64))
    assert np.array_equal(got.passed_gate, gate) and not got.passed_gate.flags.writeable
    # the record owns its inputs: changing the caller's arrays afterwards changes nothing
    kept = (idx.tolist(), relevance.astype(np.float64).tolist(), gate.tolist())
    idx[:] = -1
    relevance[:] = 9.0
    gate[:] = ~gate
    assert (got.idx.tolist(), got.relevance.tolist(), got.passed_gate.tolist()) == kept


def test_fact_overlaps_are_counted_once_per_blacklist_and_returned_as_fresh_arrays():
    corpus, _ = corpus_for(3, 12)
    texts = [f.content for f in corpus.kb.facts]
    blacklist = build_blacklist([texts[0], texts[5]], 6)
    idx = np.array([5, 0, 3, 5, 11], dtype=np.int64)
    want = [count_overlap(texts[r], blacklist, 6) for r in idx.tolist()]
    first = fact_overlaps(corpus.kb, idx, blacklist, 6)
    again = fact_overlaps(corpus.kb, idx, set(blacklist), 6)  # a set with the same n-grams: the same counts
    assert first.tolist() == want and again.tolist() == want
    first[:] = -7  # the caller owns what it got: the cache is untouched
    assert fact_overlaps(corpus.kb, idx, blacklist, 6).tolist() == want
    assert fact_overlaps(corpus.kb, idx, frozenset(), 6).tolist() == [0] * idx.size


def test_resolved_importance_and_attributes_follow_the_config_not_a_stale_hit():
    corpus, _ = corpus_for(4, 9)
    base = CRPConfig()
    other = base.replace(importance=base.importance.replace(web=0.05, internal=0.9))
    rows = np.arange(9, dtype=np.int64)
    a = resolved_importance(corpus.kb, rows, base)
    b = resolved_importance(corpus.kb, rows, other)
    explicit = [f.importance_weight for f in corpus.kb.facts]
    for r in range(9):
        st_ = corpus.kb.facts[r].source_type
        assert a[r] == (explicit[r] if explicit[r] is not None else base.importance[st_])
        assert b[r] == (explicit[r] if explicit[r] is not None else other.importance[st_])
    assert np.array_equal(resolved_importance(corpus.kb, rows, base), a)  # back to the first table
    first = fact_attributes(corpus.kb, NOW, base)
    assert fact_attributes(corpus.kb, NOW, base) is first  # the same objects: the same attributes
    later = fact_attributes(corpus.kb, NOW + timedelta(days=400), base)
    assert later is not first and not np.array_equal(later.age_days, first.age_days)
    assert fact_attributes(corpus.kb, datetime(2026, 6, 1, tzinfo=UTC), base) is first  # an equal now: cached
    assert np.array_equal(fact_attributes(corpus.kb, NOW, other).importance, b)


def plain_concat(*tables: RecencyTable) -> dict[str, list]:
    seen: set[int] = set()
    out: dict[str, list] = {
        k: [] for k in ("idx", "age_days", "ttl_days", "ttl_source", "fresh_days", "factor", "rule")
    }
    for t in tables:
        for i, r in enumerate(t.idx.tolist()):
            if r in seen:
                continue
            seen.add(r)
            for k in out:
                out[k].append(getattr(t, k)[i])
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), parts=st.lists(st.lists(st.integers(0, 14), max_size=10), min_size=1, max_size=3))
def test_concat_recency_matches_the_plain_first_occurrence_join(seed, parts):
    corpus, _ = corpus_for(seed, 15)
    attrs = fact_attributes(corpus.kb, NOW, CRPConfig())
    tables = [attrs.recency(np.array(p, dtype=np.int64)) for p in parts]
    got = concat_recency(*tables)
    want = plain_concat(*tables)
    for k, v in want.items():
        col = getattr(got, k)
        if not isinstance(col, np.ndarray):  # the name columns: tuples built on first read
            assert isinstance(col, DeferredTuple) and col == tuple(v), k
        else:
            assert col.tolist() == np.asarray(v, dtype=col.dtype).tolist() or np.array_equal(
                col, np.asarray(v, dtype=col.dtype), equal_nan=True
            ), k
            assert not col.flags.writeable


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 40), n_res=st.integers(1, 24), d=st.sampled_from([8, 384]))
def test_residual_pull_is_the_max_cosine_on_both_product_paths(seed, n, n_res, d):
    """A few sub-queries take matrix-vector products, more take one matrix product (SMALL_GEMM): both
    give max(cos(fact, r) for r in ResidualSet) to float32 rounding, and 0 with an empty Coverage Set."""
    rng = np.random.default_rng(seed)
    unit = rng.normal(size=(n, d))
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    res = rng.normal(size=(n_res, d))
    res /= np.linalg.norm(res, axis=1, keepdims=True)
    coverage = CoverageSet([CoverageEntry("c0", None, res[0].astype(np.float32), 1.0)])
    got = residual_pulls(unit.astype(np.float32), coverage, res.astype(np.float32))
    assert got.dtype == np.float64 and got.shape == (n,)
    np.testing.assert_allclose(got, (unit @ res.T).max(axis=1), rtol=0, atol=2e-6)
    assert not residual_pulls(unit.astype(np.float32), CoverageSet([]), res.astype(np.float32)).any()


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 40), k=st.integers(1, 6), d=st.sampled_from([8, 384]))
def test_coverage_score_is_the_depth_weighted_mean_cosine(seed, n, k, d):
    """float32 cosines, float64 weighted mean: the SPEC-024 §2.2 coverage score to float32 rounding."""
    rng = np.random.default_rng(seed)
    unit = rng.normal(size=(n, d))
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    ent = rng.normal(size=(k, d))
    ent /= np.linalg.norm(ent, axis=1, keepdims=True)
    depth = rng.uniform(0.1, 1.0, k)
    coverage = CoverageSet([CoverageEntry(f"c{j}", None, ent[j].astype(np.float32), float(depth[j])) for j in range(k)])
    got = coverage_scores(unit.astype(np.float32), coverage)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, (unit @ ent.T) @ depth / depth.sum(), rtol=0, atol=2e-6)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 40),
    m=st.integers(1, 12),
    n_cov=st.integers(0, 4),
    n_res=st.integers(0, 12),
    d=st.sampled_from([8, 384]),
)
def test_factors_read_off_the_sub_query_cosines_match_the_vector_formulas(seed, n, m, n_cov, n_res, d):
    """Stage 2 reads the coverage score and residual pull off stage 1's (fact, sub-query) cosines: the
    values of coverage_scores / residual_pulls to float32 rounding; None for an empty Coverage Set or a
    sub-query without a column (the caller then computes them from the vectors)."""
    from crp_core.stages.cdr import factors_from_cosines

    rng = np.random.default_rng(seed)
    unit = rng.normal(size=(n, d))
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    subs = rng.normal(size=(m, d))
    subs /= np.linalg.norm(subs, axis=1, keepdims=True)
    ids = [f"s{j}" for j in range(m)]
    covered = rng.choice(m, size=min(n_cov, m), replace=False).tolist()
    residual = [ids[j] for j in rng.choice(m, size=min(n_res, m), replace=False).tolist()]
    coverage = CoverageSet(
        [CoverageEntry(ids[j], None, subs[j].astype(np.float32), float(rng.uniform(0.1, 1.0))) for j in covered]
    )
    v32 = unit.astype(np.float32)
    cosines = v32 @ subs.astype(np.float32).T
    got = factors_from_cosines(cosines, ids, coverage, residual)
    if not covered:
        assert got is None
        return
    assert got is not None
    cov, pull = got
    res_vecs = np.array([subs[ids.index(r)] for r in residual], dtype=np.float32).reshape(-1, d)
    np.testing.assert_allclose(cov, coverage_scores(v32, coverage), rtol=0, atol=2e-6)
    np.testing.assert_allclose(pull, residual_pulls(v32, coverage, res_vecs), rtol=0, atol=2e-6)
    assert cov.dtype == pull.dtype == np.float64
    assert factors_from_cosines(cosines, ids[:-1], coverage, residual + [ids[-1]]) is None  # no column for one


def test_recency_name_columns_are_built_on_first_read_and_pickle_as_tuples():
    import pickle

    from crp_core.factors.recency import RULES, TTL_SOURCES

    corpus, _ = corpus_for(5, 12)
    attrs = fact_attributes(corpus.kb, NOW, CRPConfig())
    rows = np.array([3, 0, 7], dtype=np.int64)
    table = attrs.recency(rows)
    assert isinstance(table.rule, DeferredTuple) and isinstance(table.ttl_source, DeferredTuple)
    assert table.rule == tuple(RULES[int(c)] for c in attrs.rule[rows])
    assert table.ttl_source == tuple(TTL_SOURCES[int(c)] for c in attrs.ttl_kind[rows])
    clone = pickle.loads(pickle.dumps(table))
    assert type(clone.rule) is tuple and clone.rule == table.rule and clone.ttl_source == table.ttl_source

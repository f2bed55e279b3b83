"""Stage 5's shared work gives what the plain computations give: each branch of ``run_fanout`` (pool
vectors gathered once, relevance shared between branches with the same sub-queries, the recency table
checked once) equals the public ``run_branch`` called on its own; the fan-in dedup equals a plain pairwise
loop; coverage ids equal ``CoverageSet.extend``'s; the stepper's scores equal a lookup by fact id."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus, embed_scenario, prepare_corpus
from crp_core.factors.coverage import CoverageEntry, CoverageSet, CoverageSnapshot
from crp_core.factors.ngram import build_blacklist
from crp_core.factors.recency import compute_recency
from crp_core.io.ckf import load_ckf
from crp_core.io.scenario import load_scenario
from crp_core.model import Scenario
from crp_core.pipeline import run_pipeline
from crp_core.records import BranchResult
from crp_core.stages.branches import run_branch
from crp_core.stages.cdr import score_cdr
from crp_core.stages.fanout import cross_branch_dedup, run_fanout
from tests.support.fanout_worlds import NOW, fanout_world
from tests.support.paths import REPO_ROOT


def dedup_reference(corpus, branches, config):
    """The pairwise loop: choosers and best score per chosen fact by scanning each branch's table."""
    order, chose, best = [], {}, {}
    for b in branches:
        for fid in b.selected:
            if fid not in chose:
                order.append(fid)
                chose[fid], best[fid] = set(), float("-inf")
            chose[fid].add(b.branch)
            rows = [int(r) for r in b.cdr.idx]
            row = corpus.kb.index_of(fid)
            score = float(b.cdr.cdr_score[len(rows) - 1 - rows[::-1].index(row)]) if row in rows else float("-inf")
            best[fid] = max(best[fid], score)
    dups = [((f,), tuple(sorted(chose[f])), 1.0) for f in order if len(chose[f]) > 1]
    if not order:
        return [], ()
    vecs = np.asarray(corpus.vectors[[corpus.kb.index_of(f) for f in order]], dtype=np.float64)
    sims = vecs @ vecs.T
    linked = set()
    for i in range(len(order)):
        for j in range(i + 1, len(order)):
            bi, bj = chose[order[i]], chose[order[j]]
            if sims[i, j] > config.fanin_dedup_similarity and not (bi == bj and len(bi) == 1):
                linked |= {(i, j), (j, i)}
                dups.append(((order[i], order[j]), tuple(sorted(bi | bj)), float(sims[i, j])))
    kept: list[int] = []
    for i in sorted(range(len(order)), key=lambda k: (-best[order[k]], k)):
        if not any((i, k) in linked for k in kept):
            kept.append(i)
    return dups, tuple(order[i] for i in sorted(kept))


def as_tuples(dups):
    return [(d.fact_ids, d.branches, d.similarity) for d in dups]


def branch_fields(b: BranchResult):
    cdr = b.cdr
    cols = (
        "idx",
        "relevance",
        "residual_pull",
        "effective_relevance",
        "coverage_score",
        "coverage_penalty",
        "novelty",
        "recency_factor",
        "importance_weight",
        "ngram_overlap",
        "ngram_penalty",
        "cdr_score",
    )
    return (
        b.branch,
        b.sub_queries,
        b.selected,
        b.coverage_additions,
        tuple((np.asarray(getattr(cdr, c)).dtype.str, np.asarray(getattr(cdr, c)).tobytes()) for c in cols),
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(4, 40),
    m=st.integers(1, 9),
    n_addressed=st.integers(0, 3),
    width=st.integers(2, 6),
    budget=st.integers(1, 12),
    gate=st.sampled_from([-1.0, 0.0, 0.3, 0.55]),
    dedup=st.sampled_from([0.5, 0.9, 0.97]),
    partial=st.booleans(),
    prior=st.booleans(),
)
def test_run_fanout_equals_its_branches_run_alone(seed, n, m, n_addressed, width, budget, gate, dedup, partial, prior):
    n_addressed = min(n_addressed, m - 1)
    kb, fvec, subs, addressed, topics = fanout_world(seed, n, m, n_addressed)
    config = CRPConfig().replace(envelope_fact_budget=budget, cdr_min_relevance=gate, fanin_dedup_similarity=dedup)
    corpus = Corpus.from_vectors(kb, fvec, "test", config)
    scenario = Scenario(
        query="q",
        query_embedding=tuple(map(float, topics[0])),
        now=NOW,
        sub_queries=subs,
        addressed=addressed,
        fanout_width=width,
    )
    vectors = embed_scenario(scenario, corpus)
    pool_rows = np.random.default_rng(seed).permutation(np.concatenate([np.arange(n), np.arange(0, n, 3)]))
    full = compute_recency(kb, np.arange(n), NOW, config)
    # a recency table lacking some pool rows: run_fanout computes them, as the full table has them
    recency = compute_recency(kb, np.arange(0, n, 2), NOW, config) if partial else full
    # a prior output repeating two facts' texts: their n-gram overlaps are counted (else the blacklist is empty)
    blacklist = (
        build_blacklist([kb.facts[0].content, kb.facts[n // 2].content], config.ngram_n) if prior else frozenset()
    )
    res = run_fanout(corpus, scenario, vectors, pool_rows, recency, blacklist, config)
    assert res is not None
    pool = np.array(sorted({int(r) for r in pool_rows if kb.facts[int(r)].retrievable}), dtype=np.int64)
    vec = {sid: vectors.sub_queries[i] for i, sid in enumerate(vectors.ids)}
    residual = [sq.id for sq in scenario.residual_set]
    parent = CoverageSet.from_scenario(scenario, vectors.sub_queries, vectors.ids, dim=corpus.dim)
    k = max(3, budget // len(res.partitioned.partitions))
    for run in (res.partitioned, res.naive):
        for b, subs_b in zip(run.branches, run.partitions):
            own = np.stack([vec[s] for s in subs_b])
            pull_vecs = own if run.mode == "partitioned" else np.stack([vec[s] for s in residual])
            alone = run_branch(
                corpus,
                branch=b.branch,
                sub_queries=subs_b,
                relevance_vectors=own,
                residual_vectors=pull_vecs,
                coverage=CoverageSnapshot(parent) if run.mode == "partitioned" else parent,
                pool_rows=pool,
                recency=full,
                blacklist=blacklist,
                budget=k,
                config=config,
            )
            assert branch_fields(b) == branch_fields(alone)
        dups, merged = dedup_reference(corpus, run.branches, config)
        assert as_tuples(run.duplicates) == dups and run.merged == merged
        depth = parent
        for subs_b in run.partitions:  # the coverage set extended branch by branch, ids already present skipped
            depth = depth.extend(CoverageEntry(s, None, vec[s], 1.0) for s in subs_b if s not in depth.ids)
        assert run.coverage_depth == len(depth)
    for steps, run in ((res.steps, res.partitioned), (res.naive_steps, res.naive)):
        for step in (s for s in steps if s.kind == "retrieval"):
            b = run.branches[step.branch]
            pos = {kb.facts[int(r)].fact_id: p for p, r in enumerate(b.cdr.idx)}
            want = [
                {
                    "fact_id": f,
                    "relevance": float(b.cdr.relevance[pos[f]]),
                    "residual_pull": float(b.cdr.residual_pull[pos[f]]),
                    "novelty": float(b.cdr.novelty[pos[f]]),
                    "recency_factor": float(b.cdr.recency_factor[pos[f]]),
                    "cdr_score": float(b.cdr.cdr_score[pos[f]]),
                }
                for f in b.selected
            ]
            assert step.detail["scores"] == want
    for step in (s for s in res.steps if s.kind == "additions"):
        assert step.coverage == parent.ids + res.partitioned.partitions[step.branch]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_branches=st.integers(1, 5), dedup=st.sampled_from([0.0, 0.6, 0.95]))
def test_cross_branch_dedup_equals_the_pairwise_loop(seed, n_branches, dedup):
    rng = np.random.default_rng(seed)
    kb, fvec, _, _, _ = fanout_world(seed, 30, 1, 0)
    config = CRPConfig().replace(fanin_dedup_similarity=dedup)
    corpus = Corpus.from_vectors(kb, fvec, "test", config)
    rec = compute_recency(kb, np.arange(30), NOW, config)
    branches = []
    for b in range(n_branches):
        rows = rng.choice(30, int(rng.integers(0, 10)), replace=False)
        rel = rng.choice([0.2, 0.5, 0.5, 0.9], rows.size)  # ties in the CDR score
        cdr = score_cdr(
            corpus, rows, rel, coverage=None, residual_vectors=None, blacklist=frozenset(), recency=rec, config=config
        )
        chosen = [kb.facts[int(r)].fact_id for r in rows[: int(rng.integers(0, rows.size + 1))]]
        if rng.random() < 0.3:  # a chosen fact absent from the branch's table scores -inf
            chosen.append(kb.facts[int(rng.integers(0, 30))].fact_id)
        branches.append(
            BranchResult(
                branch=b,
                sub_queries=(f"s{b}",),
                cdr=cdr,
                selected=tuple(dict.fromkeys(chosen)),
                coverage_additions=(f"s{b}",),
            )
        )
    dups, merged = cross_branch_dedup(corpus, branches, config)
    want_dups, want_merged = dedup_reference(corpus, branches, config)
    assert as_tuples(dups) == want_dups
    assert merged == want_merged


def test_missing_recency_needs_a_time():
    kb, fvec, subs, addressed, topics = fanout_world(1, 12, 4, 1)
    config = CRPConfig()
    corpus = Corpus.from_vectors(kb, fvec, "test", config)
    scenario = Scenario(
        query="q", query_embedding=tuple(map(float, topics[0])), sub_queries=subs, addressed=addressed, fanout_width=2
    )
    vectors = embed_scenario(scenario, corpus)
    partial = compute_recency(kb, np.arange(0, 12, 2), NOW, config)
    with pytest.raises(ValueError, match="lacks some pool rows"):
        run_fanout(corpus, scenario, vectors, np.arange(12), partial, frozenset(), config)
    got = run_fanout(corpus, scenario, vectors, np.arange(12), partial, frozenset(), config, now=NOW)
    want = run_fanout(
        corpus,
        scenario,
        vectors,
        np.arange(12),
        compute_recency(kb, np.arange(12), NOW, config),
        frozenset(),
        config,
        now=NOW + timedelta(days=400),
    )  # now only fills the missing rows
    assert got is not None and want is not None
    assert [branch_fields(b) for b in got.partitioned.branches] == [branch_fields(b) for b in want.partitioned.branches]


SAMPLE = REPO_ROOT / "sample_ckf"


@pytest.mark.parametrize("name", ["etcd_upgrade", "payments_api_migration", "gdpr_breach_response"])
def test_pipeline_fanout_reads_stages_1_and_2(name, tmp_path):
    """In a run, stage 5's pool values are stage 1-2's: a fact's coverage score, recency factor, importance
    and n-gram overlap in every branch are bit for bit its stage-2 values, and its relevance is the max of
    stage 1's cosines with the branch's sub-queries; the branches agree with ``run_fanout`` computing its
    own products to float32 rounding, with the same selections and merges."""
    config = CRPConfig()
    corpus = prepare_corpus(load_ckf(SAMPLE / "knowledge_base.jsonl"), config=config, cache_dir=tmp_path)
    scenario = load_scenario(SAMPLE / "scenarios" / f"{name}.json")
    vectors = embed_scenario(scenario, corpus)
    result = run_pipeline(corpus, scenario, config, vectors=vectors)
    assert result.fanout is not None
    cand, stage2 = result.candidates, result.cdr
    at = {int(r): p for p, r in enumerate(stage2.idx.tolist())}
    col = {sid: j for j, sid in enumerate(vectors.ids)}
    pool_rows = cand.idx[~np.isin(cand.idx, result.resolution.suppressed)]
    own = run_fanout(
        corpus,
        scenario,
        vectors,
        pool_rows,
        result.recency,
        build_blacklist(scenario.prior_outputs, config.ngram_n),
        config,
        now=result.now,
    )
    assert own is not None
    checked = 0
    for run, alone in ((result.fanout.partitioned, own.partitioned), (result.fanout.naive, own.naive)):
        assert run.merged == alone.merged and run.partitions == alone.partitions
        for b, other in zip(run.branches, alone.branches, strict=True):
            assert b.selected == other.selected
            pos = [at[int(r)] for r in b.cdr.idx.tolist()]
            for c in ("coverage_score", "recency_factor", "importance_weight", "ngram_overlap"):
                assert np.array_equal(np.asarray(getattr(b.cdr, c)), np.asarray(getattr(stage2, c))[pos]), c
            subs = [col[s] for s in b.sub_queries]
            want = np.asarray(cand.sub_query_cosines)[pos][:, subs].max(axis=1).astype(np.float64)
            assert np.array_equal(b.cdr.relevance, want)
            for c in ("relevance", "residual_pull", "coverage_score", "cdr_score"):
                np.testing.assert_allclose(getattr(b.cdr, c), getattr(other.cdr, c), rtol=0, atol=2e-6)
            checked += len(pos)
    assert checked > 0

"""Stage 5: parallel coverage isolation for fan-out (SPEC-027 §1, docs/reference/pipeline.md §5).

Two runs over the same branches, so the dashboard can put the race next to its fix:

* **partitioned** (SPEC-027 §1.3): the ResidualSet is split into disjoint partitions
  (:func:`partition_residual_for_fanout`, §1.4); each branch gets a read-only
  :class:`~crp_core.factors.coverage.CoverageSnapshot` of the parent Coverage Set (§1.5) and retrieves facts
  relevant to *its own* partition only; branch coverage additions are merged at fan-in and one
  cross-branch dedup pass runs (§1.6, SPEC-005 §9.2: cosine > ``fanin_dedup_similarity``).
* **naive** (the race of SPEC-027 §1.1): the same number of branches, sub-queries dealt round-robin
  for relevance, but residual pull over the whole ResidualSet and novelty against the one shared
  Coverage Set read at dispatch (T0); duplicates are counted the same way.

Branch scoring reuses stage 2 (:mod:`crp_core.stages.branches`): only the relevance vector (max cosine
over the branch's sub-queries), the residual vectors and the coverage object change; the partitions are
:mod:`crp_core.stages.partitions`, the stepper's timelines :mod:`crp_core.stages.fanout_steps`.
Decisions where the spec is silent: ``docs/decisions/fanout.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from crp_core.config import CRPConfig
from crp_core.corpus.prepared import Corpus, ScenarioVectors
from crp_core.factors.coverage import CoverageSet, CoverageSnapshot
from crp_core.factors.recency import RecencyTable, compute_recency, concat_recency
from crp_core.records import BranchResult, CandidateSet, CDRTable, Duplicate, FanoutResult, FanoutRun, FanoutStep
from crp_core.stages.branches import BranchPool, BranchScorer, BranchTrace, branch_fact_budget
from crp_core.stages.cdr import FactColumns, fact_columns_of
from crp_core.stages.fanout_steps import RunLayout, naive_steps, partitioned_steps
from crp_core.stages.partitions import fanout_active, partition_residual_for_fanout, partition_rule
from crp_core.support.frozen import frozen_array

if TYPE_CHECKING:
    from crp_core.factors.ngram import NGram
    from crp_core.model import Scenario

#: ``branch_probe(branch, snapshot)``: sees the Coverage Set snapshot a partitioned branch scores against
BranchProbe = Callable[[int, CoverageSnapshot], None]


# ---- the naive run's assignment ---------------------------------------------------------------
def round_robin_partitions(residual_ids: Sequence[str], branches: int) -> tuple[tuple[str, ...], ...]:
    """The naive run's assignment: branch i gets sub-queries i, i+N, i+2N, ... (docs/reference/pipeline.md §5)."""
    ids = tuple(residual_ids)
    n = max(int(branches), 1)
    return tuple(ids[i::n] for i in range(min(n, len(ids))))


# ---- fan-in dedup (SPEC-027 §1.6, SPEC-005 §9.2) -----------------------------------------------
def cross_branch_dedup(
    corpus: Corpus, branches: Sequence[BranchResult], config: CRPConfig, *, fan_in_dedup: bool = True
) -> tuple[tuple[Duplicate, ...], tuple[str, ...]]:
    """Cross-branch duplicates and the fan-in union with each duplicate kept once.

    A duplicate is the same fact chosen by two or more branches (``similarity`` 1.0), or two distinct
    chosen facts, chosen by different branches, with cosine > ``fanin_dedup_similarity``. The union
    keeps, among facts linked by a cross-branch duplicate, the one with the best branch CDR score
    (ties: first chosen, in branch then rank order); ``merged`` lists the kept facts in branch then
    rank order. Each duplicate names the fact the union keeps (``kept``) and whether the fan-in dedup
    removed its extra copies (``removed_at_fan_in``: ``fan_in_dedup``, SPEC-027 §1.6, and at most one of
    its facts kept); a run without fan-in dedup hands every copy to the model.
    """
    facts = corpus.kb.facts
    scores = []
    for b in branches:  # a chosen fact missing from the branch's table scores -inf
        score_of = {facts[int(r)].fact_id: float(s) for r, s in zip(b.cdr.idx, b.cdr.cdr_score)}
        scores.append([score_of.get(fid, float("-inf")) for fid in b.selected])
    dups, merged = _dedup(corpus, branches, scores, config)
    return _fates(dups, merged, fan_in_dedup), merged


def _fates(duplicates: Sequence[Duplicate], merged: Sequence[str], fan_in_dedup: bool) -> tuple[Duplicate, ...]:
    """``duplicates`` with what became of each at fan-in: the fact of it the union keeps, and whether the
    fan-in dedup removed the extra copies (a run with ``fan_in_dedup`` and at most one of its facts kept)."""
    kept_ids = set(merged)
    out = []
    for d in duplicates:
        kept = [f for f in d.fact_ids if f in kept_ids]
        out.append(replace(d, kept=kept[0] if kept else None, removed_at_fan_in=bool(fan_in_dedup) and len(kept) <= 1))
    return tuple(out)


def _dedup(
    corpus: Corpus, branches: Sequence[BranchResult], scores: Sequence[Sequence[float]], config: CRPConfig
) -> tuple[tuple[Duplicate, ...], tuple[str, ...]]:
    """The duplicates and the union of :func:`cross_branch_dedup` given each branch's CDR score per chosen
    fact (``scores[b][i]`` for ``branches[b].selected[i]``); the duplicates' fates are :func:`_fates`'."""
    chose: dict[str, set[int]] = {}  # insertion order: branch then rank order
    best: dict[str, float] = {}
    for b, b_scores in zip(branches, scores):
        for fid, s in zip(b.selected, b_scores):
            if fid not in chose:
                chose[fid] = set()
                best[fid] = float("-inf")
            chose[fid].add(b.branch)
            best[fid] = max(best[fid], s)
    order_ids = list(chose)
    u = len(order_ids)
    duplicates: list[Duplicate] = [
        Duplicate(fact_ids=(fid,), branches=tuple(sorted(chose[fid])), similarity=1.0)
        for fid in order_ids
        if len(chose[fid]) > 1
    ]
    if u == 0:
        return (), ()
    rows = np.array([corpus.kb.index_of(f) for f in order_ids], dtype=np.int64)
    vecs = np.asarray(corpus.vectors[rows], dtype=np.float64)
    sims = vecs @ vecs.T
    ii, jj = np.nonzero(sims > config.fanin_dedup_similarity)  # row-major: the upper triangle's order
    upper = ii < jj
    linked = np.zeros((u, u), dtype=bool)
    for i, j in zip(ii[upper].tolist(), jj[upper].tolist()):
        bi, bj = chose[order_ids[i]], chose[order_ids[j]]
        if bi == bj and len(bi) == 1:
            continue  # both chosen by the same single branch: not a cross-branch duplicate
        linked[i, j] = linked[j, i] = True
        duplicates.append(
            Duplicate(
                fact_ids=(order_ids[i], order_ids[j]), branches=tuple(sorted(bi | bj)), similarity=float(sims[i, j])
            )
        )
    if not linked.any():  # nothing linked: every chosen fact is kept
        return tuple(duplicates), tuple(order_ids)
    kept = np.zeros(u, dtype=bool)
    for i in sorted(range(u), key=lambda k: (-best[order_ids[k]], k)):
        if not (linked[i] & kept).any():
            kept[i] = True
    merged = tuple(order_ids[i] for i in range(u) if kept[i])
    return tuple(duplicates), merged


# ---- the two runs ---------------------------------------------------------------------------------
def run_fanout(  # noqa: PLR0913  stage 5's signature: the run's inputs and, keyword-only, its stage records
    corpus: Corpus,
    scenario: Scenario,
    vectors: ScenarioVectors,
    pool_rows: npt.ArrayLike,
    recency: RecencyTable,
    blacklist: frozenset[NGram],
    config: CRPConfig,
    width: int | None = None,
    *,
    now: datetime | None = None,
    branch_probe: BranchProbe | None = None,
    candidates: CandidateSet | None = None,
    cdr: CDRTable | None = None,
) -> FanoutResult | None:
    """Stage 5 (SPEC-027 §1, docs/reference/pipeline.md §5): partitioned and naive fan-out plus their timelines.

    ``pool_rows``: stage-1 candidate rows (before the gate) minus suppressed contradiction losers;
    non-retrievable rows are dropped here as well. ``recency`` should cover the pool; rows it lacks are
    computed with ``now`` (default ``scenario.now``). ``width`` defaults to ``scenario.fanout_width``.
    Returns ``None`` when fan-out is inactive (width <= 1 or empty ResidualSet).
    ``branch_probe(branch, coverage)`` is called inside each partitioned branch with exactly the
    coverage object the branch scores against (the read-only snapshot) - an instrumentation hook.
    ``candidates`` and ``cdr`` (stage 1's CandidateSet and stage 2's table of the same run, the pool among
    their rows): the pool's cosines, coverage scores and per-fact columns are read off them
    (:meth:`BranchPool.from_stages`) instead of computed again; the same formulas, float32 products
    rounded as stage 1's one product rounds them.
    """
    w = int(scenario.fanout_width if width is None else width)
    residual_ids = tuple(sq.id for sq in scenario.residual_set)
    if not fanout_active(w, len(residual_ids)):
        return None
    vec_of = _sub_query_vectors(vectors)
    residual_vecs = np.stack([vec_of[s] for s in residual_ids]).astype(np.float32)
    pool = _clean_pool(corpus, pool_rows)
    parent = _parent_coverage(scenario, vectors)
    partitions = partition_residual_for_fanout(residual_ids, residual_vecs, w, config, cache_dir=corpus.cache_dir)
    rule = partition_rule(len(residual_ids), w)
    layout = RunLayout(tuple(parent.ids), residual_ids, rule, w, branch_fact_budget(config, len(partitions)))
    # shared by the 2 x branches scorings: the pool's cosines to every residual sub-query, its coverage
    # score against the parent's entries and its per-fact columns
    shared = (
        None
        if candidates is None or cdr is None
        else BranchPool.from_stages(pool, candidates, cdr, residual_ids, vectors.ids, parent, blacklist)
    )
    if shared is None:
        recency, columns = _pool_columns(
            corpus, recency, pool, blacklist, now if now is not None else scenario.now, config
        )
        shared = BranchPool.of(corpus, pool, residual_vecs, parent, columns)
    scorer = BranchScorer(corpus, shared, recency=recency, blacklist=blacklist, budget=layout.budget, config=config)
    partitioned, steps = _partitioned_run(scorer, layout, partitions, parent, branch_probe)
    naive, n_steps = _naive_run(scorer, layout, len(partitions), parent)
    return FanoutResult(width=w, rule=rule, partitioned=partitioned, naive=naive, steps=steps, naive_steps=n_steps)


def _partitioned_run(
    scorer: BranchScorer,
    layout: RunLayout,
    partitions: tuple[tuple[str, ...], ...],
    parent: CoverageSet,
    branch_probe: BranchProbe | None,
) -> tuple[FanoutRun, tuple[FanoutStep, ...]]:
    """The partitioned run (SPEC-027 §1.3): each branch scores its own partition against a read-only
    snapshot of the parent Coverage Set; fan-in merges the additions and dedups across branches."""
    position = {sid: j for j, sid in enumerate(layout.residual_ids)}
    traces: list[BranchTrace] = []
    snapshots: list[CoverageSnapshot] = []
    for b, part in enumerate(partitions):
        snapshot = CoverageSnapshot(parent)
        snapshots.append(snapshot)
        if branch_probe is not None:
            branch_probe(b, snapshot)
        own = tuple(position[s] for s in part)
        trace = scorer.score(b, part, relevance_cols=own, residual_cols=own, coverage=snapshot, coverage_additions=part)
        # local additions (one entry per partition sub-query) extend the snapshot's set for this branch
        # alone: its view is the snapshot's ids followed by its partition's
        traces.append(replace(trace, local_coverage=layout.parent_ids + part))
    merged_ids = _merged_ids(layout.parent_ids, partitions)  # fan-in: union of the branch additions (§1.6)
    branches = tuple(t.result for t in traces)
    scores = [t.result.cdr.cdr_score[t.chosen].tolist() for t in traces]
    dups, merged = _dedup(scorer.corpus, branches, scores, scorer.config)
    run = FanoutRun(
        mode="partitioned",
        partitions=partitions,
        branches=branches,
        duplicates=_fates(dups, merged, fan_in_dedup=True),
        merged=merged,
        coverage_depth=len(merged_ids),
        fan_in_dedup=True,
    )
    return run, partitioned_steps(layout, traces, run, merged_ids, snapshots)


def _naive_run(
    scorer: BranchScorer, layout: RunLayout, n_branches: int, parent: CoverageSet
) -> tuple[FanoutRun, tuple[FanoutStep, ...]]:
    """The naive race (SPEC-027 §1.1): round-robin relevance, residual pull over the whole ResidualSet,
    novelty against the one shared Coverage Set read at dispatch (T0), every branch writing into it (T2)."""
    rr = round_robin_partitions(layout.residual_ids, n_branches)
    position = {sid: j for j, sid in enumerate(layout.residual_ids)}
    every = tuple(range(len(layout.residual_ids)))
    traces = [
        scorer.score(
            b,
            subs,
            relevance_cols=tuple(position[s] for s in subs),
            residual_cols=every,
            coverage=parent,
            coverage_additions=subs,
        )
        for b, subs in enumerate(rr)
    ]
    shared_ids = _merged_ids(layout.parent_ids, [t.result.coverage_additions for t in traces])
    branches = tuple(t.result for t in traces)
    scores = [t.result.cdr.cdr_score[t.chosen].tolist() for t in traces]
    dups, merged = _dedup(scorer.corpus, branches, scores, scorer.config)
    # the race has no fan-in dedup (SPEC-027 §1.6 is part of the fix): every duplicate reaches the model;
    # ``merged`` still counts the distinct facts the branches brought
    run = FanoutRun(
        mode="naive",
        partitions=rr,
        branches=branches,
        duplicates=_fates(dups, merged, fan_in_dedup=False),
        merged=merged,
        coverage_depth=len(shared_ids),
        fan_in_dedup=False,
    )
    return run, naive_steps(layout, traces, run)


# ---- helpers: coverage and inputs ------------------------------------------------------------------
def _sub_query_vectors(vectors: ScenarioVectors) -> dict[str, np.ndarray]:
    subs = np.asarray(vectors.sub_queries, dtype=np.float32)
    return {sid: subs[i] for i, sid in enumerate(vectors.ids)}


def _clean_pool(corpus: Corpus, pool_rows: npt.ArrayLike) -> np.ndarray:
    """Unique, sorted, retrievable rows (DELETED/QUARANTINED never retrieved, SPEC-009 §2.2)."""
    pool = np.sort(np.asarray(pool_rows, dtype=np.int64).ravel())
    if pool.size > 1:
        pool = pool[np.concatenate(([True], pool[1:] != pool[:-1]))]
    return pool[corpus.retrievable[pool]] if pool.size else pool


def _parent_coverage(scenario: Scenario, vectors: ScenarioVectors) -> CoverageSet:
    """The parent Coverage Set: one entry per addressed sub-query (docs/reference/scenarios.md)."""
    subs = np.asarray(vectors.sub_queries, dtype=np.float32)
    dim = subs.shape[1] if subs.ndim == 2 else int(np.asarray(vectors.query).shape[0])
    return CoverageSet.from_scenario(scenario, subs, tuple(vectors.ids), dim=dim)


def _merged_ids(parent_ids: tuple[str, ...], additions: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """The parent Coverage Set's ids extended by each branch's additions in turn, an id already present
    not added again (the entries are depth ``branch_depth_weight``; only the ids are reported)."""
    ids = list(parent_ids)
    for batch in additions:
        seen = set(ids)
        ids.extend(s for s in batch if s not in seen)
    return tuple(ids)


def _pool_columns(
    corpus: Corpus,
    recency: RecencyTable,
    pool: np.ndarray,
    blacklist: frozenset[NGram],
    now: datetime | None,
    config: CRPConfig,
) -> tuple[RecencyTable, FactColumns]:
    """The pool's :func:`~crp_core.stages.cdr.fact_columns_of` (recency factor, importance, n-gram overlap),
    taken once for every branch, and ``recency`` extended with the pool rows it lacks (computed by
    stage 2's recency, SPEC-027 §3.2)."""
    try:  # the lookup raises when a pool row is missing from the table
        return recency, fact_columns_of(corpus, pool, recency, blacklist, config)
    except KeyError:
        if now is None:
            raise ValueError("run_fanout: the recency table lacks some pool rows and no 'now' was given") from None
    missing = np.setdiff1d(pool, np.asarray(recency.idx, dtype=np.int64))
    recency = concat_recency(recency, compute_recency(corpus.kb, frozen_array(missing), now, config))
    return recency, fact_columns_of(corpus, pool, recency, blacklist, config)
